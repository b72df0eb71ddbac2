"""Notebook views of ``Scenario``, ``Summary`` and ``SweepResult``.

Each shows itself in a few lines, with units and values as the command line prints them.
"""

from __future__ import annotations

import re
import tempfile
from html import unescape
from pathlib import Path

import pytest

import tfrclab
from conftest import REPO_ROOT
from tfrclab import Scenario, sweep
from tfrclab.cli import main


def _shown(html: str) -> str:
    """The text an HTML view shows (tags dropped, entities read)."""
    return unescape(re.sub(r"<[^>]+>", "", html))


DUMBBELL = REPO_ROOT / "scenarios" / "examples" / "dumbbell.toml"
SMALL = REPO_ROOT / "scenarios" / "crosscheck" / "sack-tfrc-2-droptail.toml"


def test_a_scenario_is_one_line_not_its_tables() -> None:
    scenario = Scenario.load(DUMBBELL)
    text = repr(scenario)
    assert "\n" not in text
    assert len(text) < 300
    assert "{" not in text  # no nested dicts
    assert text == (
        f"<Scenario 'dumbbell' ({DUMBBELL}): 60s, seed 1, window 20s-60s; dumbbell of 16 "
        "hosts, bottleneck 15Mbps 20ms red; 16 flows: 8 tcp/sack (ns2_2000), 8 tfrc (floyd2000)>"
    )
    html = scenario._repr_html_()
    assert "<b>dumbbell</b>" in html
    assert "8 TFRC and 8 TCP SACK flows" in html  # the description
    assert html.count("<tr>") == 1 + 2  # a row per [[flows]] table
    assert "<details><summary>TOML</summary>" in html


def test_a_summary_shows_the_tables_the_cli_prints(capsys: pytest.CaptureFixture[str]) -> None:
    scenario = Scenario.load(SMALL).with_(duration="6s", **{"measure.from": "2s"})
    result = tfrclab.run(scenario)
    summary = result.summary()
    text = repr(summary)
    assert text.startswith("<Summary, window 2s-6s: 4 flow(s), 2 binned link(s); tcp/sack: ")
    assert "; tfrc/floyd2000: " in text
    assert " at 0x" not in text
    shown = _shown(summary._repr_html_())
    out = tmp_run_summary(result, capsys)
    # Every line summary prints is in the view.
    for line in out.splitlines():
        assert line.rstrip() in shown, line
    assert "Mb/s" in shown
    assert "flows (seed 1, window 2s-6s of 6 s)" in shown


def tmp_run_summary(result: tfrclab.Result, capsys: pytest.CaptureFixture[str]) -> str:
    """What ``tfrclab summary`` prints for ``result`` (written to a temporary directory)."""
    with tempfile.TemporaryDirectory() as directory:
        result.to_parquet(Path(directory) / "run")
        capsys.readouterr()
        assert main(["summary", str(Path(directory) / "run")]) == 0
        return capsys.readouterr().out


def test_a_sweep_shows_values_as_written(tmp_path: Path) -> None:
    scenario = Scenario.from_dict(
        {
            "duration": "1s",
            "topology": {
                "kind": "dumbbell",
                "hosts": 1,
                "bottleneck": {"rate": "2Mbps", "delay": "10ms"},
            },
            "flows": [{"kind": "cbr", "rate": "1Mbps"}],
        }
    )
    grid = sweep.Grid(scenario=scenario, vary=(("bottleneck.delay", ("4ms", "8ms")),), seeds=(1,))
    sweep.run_sweep(grid, tmp_path)
    opened = sweep.SweepResult.open(tmp_path)
    assert repr(opened) == f"<SweepResult {tmp_path}: 2 of 2 runs; delay = 4ms, 8ms; seeds 1>"
    html = opened._repr_html_()
    rows = [line.split()[0] for line in html.splitlines() if " cbr " in line]
    assert rows == ["4ms", "8ms"]  # not 0.004 and 0.008 (seconds)
    assert "0.004" not in html
    assert "delay: bottleneck.delay" in " ".join(_shown(html).split())
