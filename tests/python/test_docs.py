"""The documentation.

The generated API reference is current, the getting-started code runs, and the example sweep
script runs (small).
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO_ROOT

DOCS = REPO_ROOT / "docs"


def test_api_reference_is_up_to_date() -> None:
    spec = importlib.util.spec_from_file_location(
        "api_reference", REPO_ROOT / "scripts" / "api_reference.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    committed = (DOCS / "api.md").read_text(encoding="utf-8")
    assert module.render() == committed, "run .venv/bin/python scripts/api_reference.py"
    # Every metric of the reference is documented with a source.
    for name in ("send_rate", "equivalence_ratio", "fairness_index", "friendliness_rating"):
        assert f"tfrclab.metrics.{name}(" in committed


def test_getting_started_python_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    text = (DOCS / "getting-started.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    assert blocks
    monkeypatch.chdir(REPO_ROOT)
    for block in blocks:
        exec(compile(block, "getting-started.md", "exec"), {"__name__": "getting_started"})


def test_example_sweep_script_runs(tmp_path: Path) -> None:
    script = DOCS / "examples" / "sweep_fairness.py"
    env = {**os.environ, "MPLBACKEND": "Agg"}
    result = subprocess.run(
        [sys.executable, str(script), "--quick", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    assert f"figure: {tmp_path / 'fairness_and_cov.png'}" in result.stdout
    assert (tmp_path / "fairness_and_cov.png").read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "sweep" / "sweep.json").exists()
