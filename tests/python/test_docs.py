"""The documentation.

The generated API reference is current, the getting-started code runs, and the example sweep
script runs (small).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO_ROOT, load_script

DOCS = REPO_ROOT / "docs"


def test_api_reference_is_up_to_date() -> None:
    module = load_script("api_reference")
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


LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def test_every_link_in_readme_and_docs_resolves_inside_the_repository() -> None:
    pages = [REPO_ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
    checked = 0
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert "../shared" not in text, f"{page.name} points outside the repository"
        assert not re.search(r"\b[Ii]ssue \d", text), f"{page.name} names an internal ticket"
        for target in LINK.findall(text):
            if target.startswith(("http://", "https://", "mailto:", "#")):
                continue
            path = (page.parent / target.split("#", 1)[0]).resolve()
            assert path.exists(), f"{page.name}: broken link {target}"
            assert path.is_relative_to(REPO_ROOT.resolve()), f"{page.name}: {target} leaves"
            checked += 1
    assert checked > 20


def test_examples_command_copies_every_shipped_scenario(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tfrclab import Scenario
    from tfrclab.cli import main

    assert main(["examples", str(tmp_path / "s")]) == 0
    copied = sorted(str(p.relative_to(tmp_path / "s")) for p in (tmp_path / "s").rglob("*.toml"))
    shipped = sorted(
        str(p.relative_to(REPO_ROOT / "scenarios"))
        for p in (REPO_ROOT / "scenarios").rglob("*.toml")
    )
    assert copied == shipped
    assert "papers/floyd2000/fig09.toml" in copied
    for name in copied:
        Scenario.load(tmp_path / "s" / name)
    capsys.readouterr()
    assert main(["examples", str(tmp_path / "s")]) == 2
    assert "pass --force" in capsys.readouterr().err
