"""An unknown ``[measure] reference_group`` is refused before the run, naming the groups.

The scenario parser knows every flow's group (its ``group``, else its protocol class), so a
misspelt reference costs no simulation: ``tfrclab run``, ``sweep`` and the Python API all stop
at reading the file with one line naming the key, the value and the groups that exist.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tfrclab.cli import main
from tfrclab.scenario import Scenario, ScenarioError
from tfrclab.simulate import run

FLOWS: list[dict[str, Any]] = [
    {"kind": "tcp", "variant": "sack", "count": 2},
    {"kind": "tcp", "variant": "reno", "group": "long path"},
    {"kind": "tfrc"},
    {"kind": "cbr", "rate": "100kbps"},
    {"kind": "gaimd"},
    {"kind": "ping"},
]


def _tables(reference: str) -> dict[str, Any]:
    return {
        "duration": "2s",
        "measure": {"reference_group": reference},
        "topology": {
            "kind": "dumbbell",
            "hosts": 6,
            "bottleneck": {"rate": "10Mbps", "delay": "10ms"},
        },
        "flows": FLOWS,
    }


def _groups_in(message: str) -> list[str]:
    listed = message.split("one of ", 1)[1].rsplit(", found", 1)[0]
    return re.findall(r'"([^"]*)"', listed)


def test_the_error_names_key_value_and_groups() -> None:
    with pytest.raises(ScenarioError) as caught:
        Scenario.from_dict(_tables("tcp"))
    message = str(caught.value)
    assert message.startswith("measure.reference_group: expected the group of a flow, one of ")
    assert message.endswith('found "tcp"')
    assert "\n" not in message


def test_the_listed_groups_are_the_summarys_groups() -> None:
    """The parser's labels (Rust) and the summary's (Python) are the same names."""
    with pytest.raises(ScenarioError) as caught:
        Scenario.from_dict(_tables("nope"))
    listed = _groups_in(str(caught.value))
    tables = _tables("nope")
    del tables["measure"]
    summary = run(Scenario.from_dict(tables), seed=1).summary()
    assert listed == list(summary.classes["class"])
    assert "long path" in listed
    # Each listed name is accepted as the reference.
    for group in listed:
        assert Scenario.from_dict(_tables(group)).tables["measure"]["reference_group"] == group


def test_cli_run_refuses_before_running(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "study.toml"
    path.write_text(Scenario.from_dict(_tables("tcp/sack")).toml, encoding="utf-8")
    out = tmp_path / "out"
    args = ["run", str(path), "--out", str(out), "--set", "measure.reference_group=tcp"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert 'measure.reference_group: expected the group of a flow, one of "tcp/sack"' in err
    assert not out.exists()
