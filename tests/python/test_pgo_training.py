"""The training set of the profile-guided build (scripts/install.sh, scripts/pgo/).

It must stay valid and cover every flow kind and TCP variant netsim accepts, so that no agent's
hot path is left for the optimizer to treat as cold.
"""

from __future__ import annotations

import os
import re
import runpy
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import tfrclab
from tfrclab import _native

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
TRAIN = ROOT / "scripts" / "pgo" / "train.py"


def train_module() -> dict[str, Any]:
    return runpy.run_path(str(TRAIN))


def training_scenarios() -> list[Path]:
    paths: list[Path] = train_module()["training_scenarios"]()
    return paths


def accepted(field: str, flow: dict[str, str]) -> set[str]:
    """The choices netsim names when ``field`` of a flow is given a value it does not know."""
    tables = {
        "duration": "1s",
        "topology": {
            "kind": "dumbbell",
            "hosts": 1,
            "bottleneck": {"rate": "10Mbps", "delay": "10ms"},
        },
        "flows": [{**flow, field: "no-such-choice"}],
    }
    with pytest.raises(tfrclab.ScenarioError) as refused:
        tfrclab.Scenario.from_dict(tables)
    assert refused.value.path == f"flows[0].{field}"
    return set(re.findall(r'"([a-z0-9_]+)"', refused.value.expected))


def test_training_covers_every_flow_kind_and_tcp_variant() -> None:
    kinds: set[str] = set()
    variants: set[str] = set()
    for path in training_scenarios():
        for flow in tfrclab.Scenario.load(path).to_dict().get("flows", []):
            kinds.add(flow["kind"])
            if flow["kind"] == "tcp":
                variants.add(flow.get("variant", "sack"))
    all_kinds = accepted("kind", {})
    all_variants = accepted("variant", {"kind": "tcp"})
    assert len(all_kinds) >= 11
    assert len(all_variants) >= 5
    assert all_kinds - kinds == set(), "flow kinds no training scenario runs"
    assert all_variants - variants == set(), "TCP variants no training scenario runs"


def test_every_training_scenario_is_valid_after_the_cut() -> None:
    # train.py cuts long runs to CAP_S and drops their measurement window; what it would run
    # must still be a valid scenario, or the install would lose its profile.
    module = train_module()
    for path in training_scenarios():
        scenario = module["training_scenario"](path)
        assert scenario.duration_s <= module["CAP_S"], path


def test_training_includes_a_network_large_enough_to_prefetch() -> None:
    # The loop prefetches the next events' state only on networks of 1024 links plus agents
    # and more (netsim's PREFETCH_MIN_STATES): on a dumbbell of h host pairs and n flows,
    # 4h + 2 links and 2n agents.
    states = []
    for path in training_scenarios():
        tables = tfrclab.Scenario.load(path).to_dict()
        if tables["topology"]["kind"] != "dumbbell":
            continue
        flows = sum(flow.get("count", 1) for flow in tables["flows"])
        states.append(4 * tables["topology"]["hosts"] + 2 + 2 * flows)
    assert max(states) >= 1024


@pytest.mark.skipif(
    os.environ.get("TFRCLAB_PGO") != "require",
    reason="only where the install had to be profile-guided (scripts/test.sh with llvm-profdata)",
)
def test_the_installed_module_is_profile_guided() -> None:
    assert _native.build() == "profile-guided"


def test_requirements_script_reads_pyproject_as_a_toml_parser_does() -> None:
    # scripts/install.sh installs these before the training imports the package.
    listed = subprocess.run(
        ["bash", str(ROOT / "scripts" / "pgo" / "requirements.sh")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    with (ROOT / "pyproject.toml").open("rb") as file:
        project = tomllib.load(file)["project"]
    assert listed == project["dependencies"]
