"""Sensitivity rows: claims across the plausible range of a parameter the paper leaves unstated."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import run_cli
from tfrclab.reproduce.claims import Analysis, Claim, Measurement, measure_seeds
from tfrclab.reproduce.registry import Experiment, Plan, registry, scenario_path
from tfrclab.reproduce.report import count_unstated, write_report
from tfrclab.reproduce.runner import run_experiment
from tfrclab.reproduce.sensitivity import Cell, Unstated, varied

_RATE_KEY = "topology.bottleneck.rate"


def _rate_of_a(value: str, cell: Cell) -> dict[str, Any] | None:
    """The bottleneck rate, applied to cell ``a`` only (``b`` keeps its own runs)."""
    label, _relative, changes = cell
    return {**changes, _RATE_KEY: value} if label == "a" else None


RATE = Unstated(
    name="rate",
    what="the bottleneck's rate (test)",
    chosen="1.5Mbps",
    why="fig22.toml's own",
    values=("0.5Mbps", "1.5Mbps", "10Mbps"),
    apply=_rate_of_a,
)


def _claim(id: str, accept: tuple[float, float], key: str) -> Claim:
    def measure(analysis: Analysis) -> Measurement:
        return measure_seeds(analysis[key])

    return Claim(
        id=id,
        statement=id,
        paper_value="-",
        how="-",
        tolerance="-",
        accept=accept,
        measure=measure,
    )


def _analyze(data: dict[str, Any], _plan: Plan) -> dict[str, np.ndarray]:
    out = {}
    for label, cell in data.items():
        links = cell.links[cell.links["name"] == "bottleneck"].sort_values("seed")
        out[f"{label}/mbps"] = links["rate_bps"].to_numpy(float) / 1e6
        out[f"{label}/utilization"] = links["utilization"].to_numpy(float)
    return out


def _experiment(unstated: tuple[Unstated, ...] = (RATE,)) -> Experiment:
    """Two cells of fig22.toml (2 s, two seeds); the rate varies cell ``a`` only."""

    def plot(_analysis: object, path: Path) -> Path:
        path.write_bytes(b"png")
        return path

    plan = Plan(seeds=(1, 2), changes={"duration": "2s"})
    return Experiment(
        id="test/unstated",
        title="unstated",
        setup="two TCP flows, 2 s",
        kind="sweep",
        scenarios=("floyd2000/fig22.toml",),
        cells=(
            ("a", "floyd2000/fig22.toml", {}),
            ("b", "floyd2000/fig22.toml", {"topology.bottleneck.delay": "20ms"}),
        ),
        full=plan,
        quick=plan,
        metrics=(),
        claims=(
            # Reads the rate that reached cell a: fails at 0.5 Mb/s, holds at 1.5 and 10.
            _claim("a-at-least-1mbps", (1.0, 100.0), "a/mbps"),
            # Holds whatever the rate: a band wider than any utilization's interval on 2 seeds.
            _claim("a-utilization-anything", (-100.0, 100.0), "a/utilization"),
            # Cell b is never changed: the same at every value.
            _claim("b-at-1.5mbps", (1.4, 1.6), "b/mbps"),
        ),
        analyze=_analyze,
        plot=plot,
        unstated=unstated,
    )


def test_a_claim_a_range_decides_is_flagged_and_one_it_does_not_is_not(tmp_path: Path) -> None:
    lines: list[str] = []
    outcome = run_experiment(
        _experiment(), tmp_path, quick=True, sensitivity=True, progress=lines.append
    )
    assert [r.verdict for r in outcome.results] == ["holds", "holds", "holds"]
    (s,) = outcome.sensitivity
    decided, share, untouched = s.rows
    assert decided.verdicts == ("fails", "holds", "holds")
    assert decided.decided
    assert decided.moves
    assert decided.summary() == (
        "decided by the unstated rate: fails at 0.5Mbps, holds at 1.5Mbps, 10Mbps"
    )
    # The measured values are those of runs at each rate, not the chosen value's again.
    assert [r.measured.mean for _v, r in decided.values] == pytest.approx([0.5, 1.5, 10.0])
    assert not share.decided
    assert not share.moves
    assert share.summary() == "holds at every rate (0.5Mbps, 1.5Mbps, 10Mbps)"
    assert not untouched.moves
    # Cell b is never changed: its claim has the same value throughout, and says so.
    assert decided.reached
    assert share.reached
    assert not untouched.reached
    assert untouched.summary() == ("holds, the same value at every rate (0.5Mbps, 1.5Mbps, 10Mbps)")
    # The chosen value's row is the verdict itself.
    assert decided.values[1][1] is outcome.results[0]
    # Only the changed cell runs again (2 values x 2 seeds); cell b's runs are the verdict's.
    assert s.runs == 4
    assert s.changed == (("0.5Mbps", ("a",)), ("10Mbps", ("a",)))
    root = tmp_path / "test" / "unstated" / "sensitivity-quick"
    assert sorted(p.name for p in root.iterdir()) == ["rate-0.5Mbps", "rate-10Mbps"]
    assert [p.name for p in (root / "rate-10Mbps").iterdir()] == ["a"]
    assert "test/unstated: unstated rate = 10Mbps: 1 cell(s) x 2 seed(s)" in lines
    assert any("a-at-least-1mbps: decided by the unstated rate" in line for line in lines)
    assert count_unstated([outcome]) == {
        "test": {"claims": 3, "reached": 2, "decided": 1, "moved": 1},
        "all": {"claims": 3, "reached": 2, "decided": 1, "moved": 1},
    }


def test_the_rows_are_in_the_json_and_the_reports_and_survive_a_resumed_run(
    tmp_path: Path,
) -> None:
    first = run_experiment(_experiment(), tmp_path, quick=True, sensitivity=True)
    record = json.loads((tmp_path / "test" / "unstated" / "claims.json").read_text())
    (declared,) = record["unstated"]
    assert declared["name"] == "rate"
    assert declared["chosen"] == "1.5Mbps"
    assert declared["extra_runs"] == 4
    assert declared["changed_cells"] == {"0.5Mbps": ["a"], "10Mbps": ["a"]}
    (row,) = record["claims"][0]["sensitivity"]
    assert row["decided"] is True
    assert [v["verdict"] for v in row["values"]] == ["fails", "holds", "holds"]
    assert [v["chosen"] for v in row["values"]] == [False, True, False]
    assert row["values"][0]["mean"] == pytest.approx(0.5)
    assert row["values"][0]["ci_half"] == pytest.approx(0.0)
    assert record["claims"][1]["sensitivity"][0]["decided"] is False

    # A second run makes no run again, at any value, and gives the same rows.
    lines: list[str] = []
    again = run_experiment(
        _experiment(), tmp_path, quick=True, sensitivity=True, progress=lines.append
    )
    todo = [line for line in lines if "runs to do" in line]
    assert len(todo) == 2 + 2 * 2  # the verdict's two cells, and a and b at each other value
    assert all(": 0 of 2 runs to do" in line for line in todo), todo
    assert [s.as_dict() for s in again.sensitivity] == [s.as_dict() for s in first.sensitivity]
    resumed = json.loads((tmp_path / "test" / "unstated" / "claims.json").read_text())
    assert {**resumed, "wall_s": 0} == {**record, "wall_s": 0}

    write_report([again], tmp_path)
    md = (tmp_path / "report.md").read_text()
    assert "| test | 3 | 2 | 1 | 1 |" in md
    assert "| claim | 0.5Mbps | 1.5Mbps (chosen) | 10Mbps | across the range |" in md
    assert (
        "| a-at-least-1mbps | 0.5 ± 0: fails | 1.5 ± 0: holds | 10 ± 0: holds | **decided by "
        "the unstated rate: fails at 0.5Mbps, holds at 1.5Mbps, 10Mbps** |" in md
    )
    assert "rate: the bottleneck's rate (test); chosen 1.5Mbps: fig22.toml's own" in md
    page = (tmp_path / "report.html").read_text()
    assert '<tr class="decided" data-claim="test/unstated/a-at-least-1mbps">' in page
    assert '<td class="fails">0.5 ± 0: fails</td>' in page
    counts = json.loads((tmp_path / "counts.json").read_text())
    assert counts["unstated"]["test"] == {"claims": 3, "reached": 2, "decided": 1, "moved": 1}


def test_quick_skips_the_ranges_unless_asked(tmp_path: Path) -> None:
    outcome = run_experiment(_experiment(), tmp_path, quick=True)
    assert outcome.sensitivity == ()
    record = json.loads((tmp_path / "test" / "unstated" / "claims.json").read_text())
    assert "unstated" not in record
    assert "sensitivity" not in record["claims"][0]
    write_report([outcome], tmp_path)
    assert "decided by an unstated parameter" not in (tmp_path / "report.md").read_text()
    assert "unstated" not in json.loads((tmp_path / "counts.json").read_text())


def test_bad_declarations_are_refused() -> None:
    with pytest.raises(ValueError, match="chosen value '2Mbps' is not among"):
        Unstated("rate", "-", "2Mbps", "-", ("1Mbps", "3Mbps"), _rate_of_a)
    with pytest.raises(ValueError, match="at least two values"):
        Unstated("rate", "-", "1Mbps", "-", ("1Mbps",), _rate_of_a)
    with pytest.raises(ValueError, match="values repeat"):
        Unstated("rate", "-", 1.0, "-", (1.0, 1.0), _rate_of_a)
    with pytest.raises(ValueError, match="names a directory"):
        Unstated("rate", "-", "a", "-", ("a", "b/c"), _rate_of_a)
    with pytest.raises(ValueError, match="use a-z"):
        Unstated("Rate", "-", "a", "-", ("a", "b"), _rate_of_a)
    from dataclasses import replace

    with pytest.raises(ValueError, match="need a sweep experiment"):
        replace(_experiment(), kind="channel")
    with pytest.raises(ValueError, match="repeat a name"):
        _experiment((RATE, RATE))


def test_a_value_that_changes_no_cell_is_an_error(tmp_path: Path) -> None:
    idle = Unstated("idle", "-", "x", "-", ("x", "y"), lambda _v, _cell: None)
    with pytest.raises(ValueError, match="unstated parameter idle = y changes none of its cells"):
        run_experiment(_experiment((idle,)), tmp_path, quick=True, sensitivity=True)


def _scenario(relative: str, changes: Any) -> dict[str, Any]:
    from tfrclab.scenario import Scenario

    scenario = Scenario.load(scenario_path(relative))
    return (scenario.with_(**changes) if changes else scenario).to_dict()


def test_every_declared_chosen_value_is_what_the_scenarios_run() -> None:
    # At its chosen value a declaration must describe the runs the verdict was decided on, and
    # every other value must change some cell.
    declared = [e for e in registry() if e.unstated]
    assert {e.id for e in declared} >= {"floyd2000/table25", "floyd2000/fig24-26-27"}
    for e in declared:
        cells = e.cells or (("", e.scenarios[0], {}),)
        for p in e.unstated:
            for label, relative, changes in cells:
                at_chosen = p.apply(p.chosen, (label, relative, changes))
                if at_chosen is not None:
                    assert _scenario(relative, at_chosen) == _scenario(relative, changes), (
                        e.id,
                        p.name,
                        label,
                    )
            for value in p.others:
                _variant, _plan, changed = varied(e, p, value, e.full)
                assert changed, (e.id, p.name, value)
                for label, relative, changes in _variant.cells:
                    if label in changed:
                        _scenario(relative, changes)  # netsim accepts the changed scenario
        if e.runs_of is not None:
            owner = next(x for x in registry() if x.id == e.runs_of)
            for p in e.unstated:
                # Shared runs: the owner declares the same parameter, so the runs are one set.
                assert p in owner.unstated, (e.id, p.name)


def test_quick_sensitivity_of_table25(tmp_path: Path) -> None:
    out = tmp_path / "repro"
    done = run_cli("reproduce", "floyd2000/table25", "--quick", "--sensitivity", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "floyd2000/table25: unstated buffer = 100: 8 cell(s) x 2 seed(s)" in done.stderr
    (record,) = json.loads((out / "claims.json").read_text())
    (declared,) = record["unstated"]
    assert (declared["name"], declared["chosen"], declared["values"]) == (
        "buffer",
        50,
        [25, 50, 100],
    )
    assert declared["extra_runs"] == 2 * 8 * 2
    for claim in record["claims"]:
        (row,) = claim["sensitivity"]
        assert [v["value"] for v in row["values"]] == [25, 50, 100]
        chosen = row["values"][1]
        assert (chosen["mean"], chosen["verdict"]) == (claim["mean"], claim["verdict"])
    # The buffer reaches the runs: the 40-flow DropTail queue's mean grows with it.
    sweeps = out / "floyd2000" / "table25"
    from tfrclab.sweep import load

    queue = [
        load(where / "droptail-tcp-40", "links")
        .query("name == 'bottleneck'")["mean_queue_packets"]
        .mean()
        for where in (
            sweeps / "sensitivity-quick" / "buffer-25",
            sweeps / "sweep-quick",
            sweeps / "sensitivity-quick" / "buffer-100",
        )
    ]
    assert queue[0] < queue[1] < queue[2]
    listed = run_cli("reproduce", "floyd2000/table25", "--list")
    assert "unstated buffer: the bottleneck queue's limit" in listed.stdout
    assert "range 25, 50, 100" in listed.stdout


def test_a_measure_that_breaks_at_a_value_is_not_comparable_there(tmp_path: Path) -> None:
    def picky(analysis: Analysis) -> Measurement:
        if float(np.mean(analysis["a/mbps"])) < 1.0:
            raise ValueError("no rate below 1 Mb/s")
        return measure_seeds(analysis["a/mbps"])

    base = _experiment()
    claim = Claim(
        id="picky", statement="-", paper_value="-", how="-", tolerance="-", accept=(0, 100),
        measure=picky,
    )  # fmt: skip
    from dataclasses import replace

    outcome = run_experiment(replace(base, claims=(claim,)), tmp_path, quick=True, sensitivity=True)
    (row,) = outcome.sensitivity[0].rows
    assert row.verdicts == ("not comparable", "holds", "holds")
    assert row.values[0][1].reason == "ValueError: no rate below 1 Mb/s"
    assert row.moves
    assert not row.decided
    assert row.summary().startswith("moves with the unstated rate: not comparable at 0.5Mbps")
