"""hassan (Hassan and Kara) Tables 3-7 in ``tfrclab reproduce``.

Registry checks, the cells' setups, and a --quick run asserting the verdicts of the claims
robust to the reduction.
"""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from conftest import REPO_ROOT, robust_claim_keys
from tfrclab.reproduce import hassan
from tfrclab.reproduce.registry import experiments, registry, scenario_path
from tfrclab.reproduce.runner import Outcome, run_experiment
from tfrclab.scenario import Scenario
from tfrclab.simulate import run

IDS = ("hassan/table3", "hassan/table4", "hassan/table5", "hassan/table6", "hassan/table7")

# The verdicts a --quick run gives for the claims marked robust to the reduction: the model's
# behaviour, measured (the full run's verdicts are in docs/reproduction/hassan.md).
EXPECTED_QUICK: dict[str, str] = {
    "hassan/table3/fgrap-reno-f": "holds",
    "hassan/table3/tfrc-sack-f": "fails",
    "hassan/table3/tfrc-friendlier-than-rap-reno": "holds",
    "hassan/table3/tfrc-friendlier-than-rap-sack": "holds",
    "hassan/table3/all-unfriendly": "holds",
    "hassan/table4/tfrc-reno-f": "fails",
    "hassan/table4/cgrap-reno-f": "holds",
    "hassan/table4/fgrap-reno-f": "holds",
    "hassan/table4/tfrc-sack-f": "fails",
    "hassan/table4/cgrap-sack-f": "holds",
    "hassan/table4/fgrap-sack-f": "fails",
    "hassan/table4/tfrc-friendlier-than-rap-reno": "holds",
    "hassan/table4/tfrc-friendlier-than-rap-sack": "holds",
    "hassan/table5/cgrap-20ms-f": "fails",
    "hassan/table5/cgrap-10ms-f": "fails",
    "hassan/table5/tfrc-20ms-f": "fails",
    "hassan/table5/tfrc-10ms-f": "fails",
    "hassan/table5/rap-worse-at-10ms": "holds",
    "hassan/table5/tfrc-lower-at-10ms": "holds",
    "hassan/table6/cgrap-1.5M-f": "fails",
    "hassan/table6/cgrap-3M-f": "fails",
    "hassan/table6/tfrc-1.5M-f": "fails",
    "hassan/table6/tfrc-3M-f": "fails",
    "hassan/table6/tfrc-friendlier-at-3M": "fails",
    "hassan/table7/cgrap-1pc-f": "fails",
    "hassan/table7/cgrap-5pc-f": "fails",
    "hassan/table7/cgrap-15pc-f": "holds",
    "hassan/table7/tfrc-1pc-f": "holds",
    "hassan/table7/tfrc-5pc-f": "holds",
    "hassan/table7/tfrc-15pc-f": "fails",
    "hassan/table7/rap-worse-with-loss": "holds",
    "hassan/table7/tfrc-loses-at-15pc": "holds",
}


def test_every_table_is_registered_once() -> None:
    # Uniqueness over the whole registry is checked in test_reproduce.py.
    assert set(IDS) <= {e.id for e in registry()}
    assert tuple(e.id for e in hassan.EXPERIMENTS) == IDS
    assert [e.id for e in experiments(["hassan"])] == list(IDS)


def test_claims_robust_to_quick_are_the_expected_ones() -> None:
    # Paper values, tolerances and finite bounds: test_reproduce.py, for every registered claim.
    assert robust_claim_keys(hassan.EXPERIMENTS) == set(EXPECTED_QUICK)


def test_every_paper_row_has_a_value_claim_at_the_papers_number() -> None:
    for e in hassan.EXPERIMENTS:
        table = e.id.split("/")[1]
        claims = {c.id: c for c in e.claims}
        for row in hassan.table_rows(table):
            claim = claims[f"{row.key}-f"]
            assert f"F = {row.paper:g}" == claim.paper_value
            low, high = claim.accept
            assert low == pytest.approx(row.paper / 1.5)
            assert high == pytest.approx(row.paper * 1.5)


def test_cells_cover_every_row_count_and_configuration() -> None:
    scenario = Scenario.load(scenario_path(hassan.SCENARIO))
    for e in hassan.EXPERIMENTS:
        assert e.kind == "sweep"
        assert not e.full.changes, e.id  # the full plan runs the paper's 100 s as the file has
        assert scenario.duration_s == 100.0
        assert len(e.quick.seeds) <= len(e.full.seeds)
        assert scenario_path(hassan.SCENARIO).is_file()
        labels = [label for label, _relative, _changes in e.cells]
        assert len(labels) == len(set(labels)), e.id
        rows = hassan.table_rows(e.id.split("/")[1])
        configs = 3 if e.id in ("hassan/table3", "hassan/table4") else 2
        variants = len(hassan.EVIDENCE_RUNS.get(e.id.split("/")[1], ()))
        assert len(labels) == (len(rows) * configs + variants) * len(hassan.FLOW_TOTALS)
        for _label, relative, changes in e.cells:
            assert relative == hassan.SCENARIO
            # equal numbers of TF and TCP flows, 100 in total at most
            assert changes["flows.0.count"] == changes["flows.1.count"]
            assert 2 * changes["flows.0.count"] <= 100
            scenario.with_(**changes)  # netsim's scenario checks accept it


def test_cell_changes_set_the_protocols_and_the_network() -> None:
    (table3,) = experiments(["hassan/table3"])
    cells = {label: changes for label, _relative, changes in table3.cells}
    fine = cells["fgrap-sack-w20-100B-n100"]
    assert (fine["flows.0.kind"], fine["flows.0.fine_grain"]) == ("rap", True)
    assert fine["flows.1.variant"] == "sack"
    assert fine["topology.bottleneck.queue"] == {"kind": "droptail", "limit": 50}
    assert cells["tfrc-reno-wunl-100B-n2"]["flows.1.window"] == 100000
    assert cells["tfrc-reno-w20-1000B-n2"]["flows.0.size"] == "1000B"
    (table7,) = experiments(["hassan/table7"])
    cells = {label: changes for label, _relative, changes in table7.cells}
    assert cells["tfrc-15pc-w20-100B-n10"]["losses"] == [
        {"link": "bottleneck", "kind": "bernoulli", "p": 0.15}
    ]
    # The evidence variants: the same loss on both directions; TCP headers on the RAP rows.
    both = cells["tfrc-15pc-both-ways-w20-100B-n10"]
    assert [loss["link"] for loss in both["losses"]] == ["bottleneck", "bottleneck_reverse"]
    assert {loss["p"] for loss in both["losses"]} == {0.15}
    (table3,) = experiments(["hassan/table3"])
    cells = {label: changes for label, _relative, changes in table3.cells}
    assert cells["cgrap-sack-w20-100B-headers-n40"]["flows.1.use_headers"] is True
    assert "tfrc-reno-w20-100B-headers-n40" not in cells  # only the RAP rows


def test_side_by_side_table_has_every_row() -> None:
    analysis: dict[str, object] = {}
    for row in hassan.table_rows("table5"):
        for config in ("w20-100B", "wunl-100B"):
            analysis[f"{row.key}/{config}/f_avg"] = np.array([1.0, 2.0, 3.0])
    text = hassan.side_by_side("table5", analysis)
    for row in hassan.table_rows("table5"):
        assert f"| {row.label} | {row.paper:g} " in text
    assert "2 ± " in text


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcome]:
    out = tmp_path_factory.mktemp("repro-hassan")
    return {e.id: run_experiment(e, out, quick=True, jobs=2) for e in hassan.EXPERIMENTS}


@pytest.mark.parametrize("key", [f"{e.id}/{c.id}" for e in hassan.EXPERIMENTS for c in e.claims])
def test_contrary_data_moves_the_verdict(quick: dict[str, Outcome], key: str) -> None:
    experiment_id, claim_id = key.rsplit("/", 1)
    found = quick[experiment_id].contrary_for(claim_id)
    if found is None:
        pytest.skip("not comparable in the quick run: nothing to move")
    assert found.can_fail, found.describe()


def test_quick_run_gives_the_robust_verdicts(quick: dict[str, Outcome]) -> None:
    for experiment_id, outcome in quick.items():
        assert outcome.figure.is_file()
        assert outcome.figure.stat().st_size < 400_000  # small PNGs
        assert (outcome.figure.parent / "claims.json").is_file()
        for r in outcome.results:
            assert r.verdict in ("holds", "fails", "inconclusive"), (
                experiment_id,
                r.claim.id,
                r.reason,
            )
            key = f"{experiment_id}/{r.claim.id}"
            if r.claim.robust_to_quick:
                assert r.verdict == EXPECTED_QUICK[key], (key, r.measured, r.reason)


def test_quick_shares_add_up(quick: dict[str, Outcome]) -> None:
    # F and the TF share are two readings of the same two throughputs (equal flow counts):
    # share = F / (F + 1).
    analysis = quick["hassan/table3"].analysis
    f = analysis[f"tfrc-reno/{hassan.MAIN}/f"]
    share = analysis[f"tfrc-reno/{hassan.MAIN}/share"]
    assert np.all(np.isfinite(f))
    assert share == pytest.approx(100 * f / (f + 1), rel=1e-9)


@pytest.mark.skipif(shutil.which("ns") is None, reason="ns-2 (`ns`) is not installed")
def test_rap_cell_agrees_with_ns2_agent_rap() -> None:
    # The referee of the RAP rows (docs/reproduction/hassan.md): one CG RAP and one Reno flow
    # on the DropTail dumbbell, 100 B packets, window 20. The window caps Reno near 250 kb/s
    # and RAP takes the rest: F is about 6 in both simulators (6.03 and 6.08 on seed 1).
    script = REPO_ROOT / "scripts" / "hassan_rap_ns2.tcl"
    done = subprocess.run(
        ["ns", str(script), "1", "DropTail", "0", "1", "100", "Reno"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    words = done.stdout.split()
    ns2_f = float(words[words.index("F") + 1])
    (table3,) = experiments(["hassan/table3"])
    cells = {label: changes for label, _relative, changes in table3.cells}
    scenario = Scenario.load(scenario_path(hassan.SCENARIO))
    result = run(scenario.with_(**cells["cgrap-reno-w20-100B-n2"]), seed=1)
    classes = result.summary().classes
    ours = float(classes[classes["kind"] == "rap"]["friendliness_ratio"].iloc[0])
    assert ours == pytest.approx(ns2_f, rel=0.15)
    assert ns2_f > 4.0  # RAP well ahead of the window-limited Reno flow
