"""floyd2000 Figs. 5-8 and 11-13 in ``tfrclab reproduce``.

Registry checks, the cells' setups, and a --quick run asserting the verdicts of the claims
robust to the reduction.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from conftest import robust_claim_keys
from tfrclab import models
from tfrclab.reproduce import floyd2000_fairness as fairness
from tfrclab.reproduce.registry import experiments, registry, scenario_path
from tfrclab.reproduce.runner import Outcome, run_experiment
from tfrclab.scenario import Scenario
from tfrclab.units import parse_duration

IDS = (
    "floyd2000/fig05",
    "floyd2000/fig06",
    "floyd2000/fig07",
    "floyd2000/fig08",
    "floyd2000/fig11",
)

# The verdicts a --quick run gives for the claims marked robust to the reduction: the model's
# behaviour, measured, not the paper's (the reasons are in the claims' known deviations).
EXPECTED_QUICK = {
    "floyd2000/fig05/paper-formula": "fails",
    "floyd2000/fig06/utilization-often-99": "holds",
    "floyd2000/fig07/spread-grows-with-flows": "holds",
    "floyd2000/fig08/red-tfrc-smoother": "holds",
    "floyd2000/fig08/droptail-tfrc-smoother": "holds",
    "floyd2000/fig08/droptail-half-buffer-tfrc-smoother": "holds",
    "floyd2000/fig08/red-needs-more-loss": "holds",
    "floyd2000/fig11/loss-low-at-50": "holds",
    "floyd2000/fig11/loss-40-at-150": "holds",
}


def test_every_id_is_registered_once() -> None:
    # Uniqueness over the whole registry is checked in test_reproduce.py.
    assert set(IDS) <= {e.id for e in registry()}
    assert tuple(e.id for e in fairness.EXPERIMENTS) == IDS


def test_claims_robust_to_quick_are_expected() -> None:
    # Paper values, tolerances and finite bounds: test_reproduce.py, for every registered claim.
    assert robust_claim_keys(fairness.EXPERIMENTS) <= set(EXPECTED_QUICK)


def test_plans_and_scenario_files() -> None:
    for e in fairness.EXPERIMENTS:
        assert e.kind == "sweep"
        assert not e.full.changes, e.id  # the full plan is the scenario files as they are
        assert len(e.quick.seeds) <= len(e.full.seeds)
        for relative in e.scenarios:
            assert scenario_path(relative).is_file(), relative
        labels = [label for label, _relative, _changes in e.cells]
        assert len(labels) == len(set(labels)), e.id
        for _label, relative, changes in e.cells:
            assert relative in e.scenarios
            Scenario.load(scenario_path(relative)).with_(**changes)  # netsim accepts it


def test_fig05_cells_send_at_the_equation_rate_twice_and_half() -> None:
    (e,) = experiments(["floyd2000/fig05"])
    assert len(e.cells) == len(fairness.FIG05_P)
    for (_label, _relative, changes), p in zip(e.cells, fairness.FIG05_P, strict=True):
        rtt_s = parse_duration(changes["topology.access.rtt"])
        window = float(models.response_window(p))
        for k, factor in enumerate((1.0, 2.0, 0.5)):
            bits = float(changes[f"flows.{k}.rate"].removesuffix("bps"))
            assert bits * rtt_s / 8000 == pytest.approx(factor * window, rel=1e-3)
            assert changes[f"losses.{k}.p"] == p
        # about two loss events per second for the equation-rate flow
        assert window / rtt_s * p == pytest.approx(2.0, rel=1e-3)


def test_fig06_queue_at_15_mbps_is_the_papers() -> None:
    (e,) = experiments(["floyd2000/fig06"])
    cells = {label: changes for label, _relative, changes in e.cells}
    assert len(cells) == 3 * len(fairness.FIG06_RATES_MBPS) * len(fairness.FIG06_FLOWS)
    red = cells["red-15M-32"]["topology.bottleneck.queue"]
    assert (red["min_th"], red["max_th"], red["max_p"], red["gentle"]) == (25, 125, 0.1, True)
    # the queue scales with the rate
    low = cells["red-1.5M-32"]["topology.bottleneck.queue"]
    assert low["min_th"] == pytest.approx(2.5)
    assert low["limit"] == 25
    assert cells["droptail-30M-8"]["topology.bottleneck.queue"] == {
        "kind": "droptail",
        "limit": 500,
    }
    assert cells["droptail-half-15M-2"]["topology.bottleneck.queue"]["limit"] == 125
    assert cells["red-15M-8"]["flows.0.count"] == 4 == cells["red-15M-8"]["flows.1.count"]
    # fig07's cells are fig06's 15 Mb/s RED cells, so the shared points are the same runs
    (fig07,) = experiments(["floyd2000/fig07"])
    for label, relative, changes in fig07.cells:
        if label in cells:
            assert relative == "floyd2000/fig06.toml"
            assert changes == cells[label]


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcome]:
    out = tmp_path_factory.mktemp("repro-fairness")
    return {e.id: run_experiment(e, out, quick=True, jobs=2) for e in fairness.EXPERIMENTS}


@pytest.mark.parametrize("key", [f"{e.id}/{c.id}" for e in fairness.EXPERIMENTS for c in e.claims])
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
            assert r.verdict in ("holds", "fails", "inconclusive", "not comparable")
            key = f"{experiment_id}/{r.claim.id}"
            if r.claim.robust_to_quick:
                assert r.verdict == EXPECTED_QUICK[key], (key, r.measured, r.reason)


def test_quick_fig05_matches_the_sliding_loss_event_rule(quick: dict[str, Outcome]) -> None:
    # An evenly paced flow at W packets per RTT: an event covers the k = ceil(W) - 1 packets
    # after its first loss, so p_event = 1 / (1/p + k) (the fig05 claims' known deviation).
    analysis = quick["floyd2000/fig05"].analysis
    p = np.asarray(fairness.FIG05_P)
    for name, factor in (("rate1x", 1.0), ("rate2x", 2.0), ("rate05x", 0.5)):
        k = np.ceil(np.asarray(models.response_window(p)) * factor) - 1
        expected = 1 - 1 / (1 + k * p)
        measured = np.nanmean(analysis[f"{name}/difference"], axis=0)
        assert np.abs(measured - expected).max() < 0.05, (name, measured, expected)


def test_quick_fig11_loss_rises_with_the_sources(quick: dict[str, Outcome]) -> None:
    analysis = quick["floyd2000/fig11"].analysis
    losses = [float(np.mean(analysis[f"{n}/drop_rate"])) for n in fairness.FIG11_SOURCES]
    assert losses == sorted(losses)


def test_outputs_are_reused(quick: dict[str, Outcome], tmp_path: Path) -> None:
    # Same seeds, same cells: a second analysis of the quick runs gives the same numbers.
    outcome = quick["floyd2000/fig08"]
    out = outcome.figure.parent.parent.parent
    again = run_experiment(outcome.experiment, out, quick=True, jobs=1)
    for a, b in zip(outcome.results, again.results, strict=True):
        assert a.measured == b.measured
