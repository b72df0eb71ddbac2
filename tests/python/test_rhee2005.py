"""rhee2005 Figs. 1-5 (loss event rates as each protocol sees them) in ``tfrclab reproduce``.

Registry checks, the scenario files' setup, and a --quick run asserting the verdicts of the
claims robust to the reduction.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import robust_claim_keys
from tfrclab.reproduce import rhee2005
from tfrclab.reproduce.registry import experiments, registry, scenario_path
from tfrclab.reproduce.runner import Outcome, run_experiment
from tfrclab.scenario import Scenario

IDS = ("rhee2005/fig01-03", "rhee2005/fig04", "rhee2005/fig05", "rhee2005/tfrc-vs-tcp")

# The verdicts a --quick run gives for the claims marked robust to the reduction (the full
# run's verdicts are in docs/reproduction/rhee2005.md).
EXPECTED_QUICK: dict[str, str] = {
    "rhee2005/fig01-03/same-packet-loss": "holds",
    "rhee2005/fig01-03/fast-cbr-below-tcp": "holds",
    "rhee2005/fig01-03/tfrc-ler-above-tcp": "fails",
    "rhee2005/fig01-03/tfrc-ler-above-tcp-uniform": "fails",
    "rhee2005/fig01-03/tfrc-sends-slower": "fails",
    "rhee2005/fig04/m1-order": "fails",
    "rhee2005/fig05/x4-below-tcp": "holds",
    "rhee2005/fig05/x2-below-tcp": "holds",
    "rhee2005/fig05/x4-sends-faster": "fails",
}


def test_every_experiment_is_registered_once() -> None:
    # Uniqueness over the whole registry is checked in test_reproduce.py.
    assert set(IDS) <= {e.id for e in registry()}
    assert tuple(e.id for e in rhee2005.EXPERIMENTS) == IDS
    assert [e.id for e in experiments(["rhee2005/fig04"])] == ["rhee2005/fig04"]


def test_claims_robust_to_quick_are_the_expected_ones() -> None:
    # Paper values, tolerances and finite bounds: test_reproduce.py, for every registered claim.
    assert robust_claim_keys(rhee2005.EXPERIMENTS) == set(EXPECTED_QUICK)


def test_quick_plans_are_reductions() -> None:
    for e in rhee2005.EXPERIMENTS:
        assert len(e.quick.seeds) <= len(e.full.seeds)
        assert set(e.quick.changes) == {"duration", "measure.from"}
        assert not e.full.changes
    assert set(rhee2005.LOADS_QUICK) <= set(rhee2005.LOADS_FULL)


def test_cbr_scenario_is_the_papers_setup() -> None:
    scenario = Scenario.load(scenario_path("rhee2005/cbr-loads.toml"))
    table = scenario.to_dict()
    assert table["topology"]["bottleneck"]["rate"] == "20Mbps"
    cbr = [f for f in table["flows"] if f["kind"] == "cbr"]
    assert len(cbr) == 14
    assert [f["name"] for f in cbr] == [f"cbr{r}k" for r in rhee2005.CBR_RATES_KBPS]
    assert all(f["random"] for f in cbr)
    total_kbps = sum(rhee2005.CBR_RATES_KBPS)
    assert 1800 <= total_kbps <= 2500  # "about 2Mbps"
    assert max(rhee2005.CBR_RATES_KBPS) == 1000
    assert min(rhee2005.CBR_RATES_KBPS) == 16
    # The load knob is the background flows.
    assert table["flows"][2]["name"] == "bg"
    scaled = Scenario.load(scenario_path("rhee2005/cbr-scaled.toml")).to_dict()
    scales = {f["name"]: f.get("rate_scale", 1) for f in scaled["flows"] if f["kind"] == "tfrc"}
    assert scales == {"tfrc": 1, "tfrc_x2": 2, "tfrc_x4": 4}
    assert scaled["flows"][: len(table["flows"])] == table["flows"]
    # The one-scaled-flow-each cell of Fig. 5 changes these two entries.
    assert [f["name"] for f in scaled["flows"][23:]] == ["tfrc_x2", "tfrc_x4"]
    assert set(rhee2005._SCALED_ONE) == {"flows.23.count", "flows.24.count"}


def test_variants_are_valid_scenarios() -> None:
    base = Scenario.load(scenario_path("rhee2005/cbr-loads.toml"))
    for label, _what, changes in rhee2005.VARIANTS:
        assert base.with_(**dict(changes)) is not None, label


def test_interpolated_cbr_rate() -> None:
    rates = np.array([1e6, 5e5, 1e5, np.nan])
    lers = np.array([0.01, 0.02, 0.08, 0.5])
    assert rhee2005._at_rate(rates, lers, 5e5) == pytest.approx(0.02)
    between = rhee2005._at_rate(rates, lers, math.sqrt(5e5 * 1e5))
    assert between == pytest.approx(math.sqrt(0.02 * 0.08))
    assert math.isnan(rhee2005._at_rate(rates, lers, 2e6))  # no extrapolation


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcome]:
    out = tmp_path_factory.mktemp("repro-rhee2005")
    return {e.id: run_experiment(e, out, quick=True, jobs=2) for e in rhee2005.EXPERIMENTS}


def test_quick_run_gives_the_robust_verdicts(quick: dict[str, Outcome]) -> None:
    for experiment_id, outcome in quick.items():
        assert outcome.figure.is_file()
        assert outcome.figure.stat().st_size < 400_000  # small PNGs
        assert (outcome.figure.parent / "claims.json").is_file()
        for r in outcome.results:
            key = f"{experiment_id}/{r.claim.id}"
            if r.claim.robust_to_quick:
                assert r.verdict == EXPECTED_QUICK[key], (key, r.measured, r.reason)


def test_quick_definitions_side_by_side(quick: dict[str, Outcome]) -> None:
    a = quick["rhee2005/fig01-03"].analysis
    for kind in ("tfrc", "tcp"):
        for field in ("ler_base", "ler_own", "plr", "rate_bps"):
            values = a[f"{kind}_{field}"]
            assert values.shape == (1, len(rhee2005.LOADS_QUICK))
            assert np.all(np.isfinite(values)), (kind, field)
    # A loss event holds at least one loss: no definition counts more events than losses.
    for kind in ("tfrc", "tcp", "cbr"):
        assert np.all(a[f"{kind}_ler_base"] <= a[f"{kind}_plr"] + 1e-12)
    assert np.all(a["tfrc_ler_own"] <= a["tfrc_plr"] * 1.05)
    # TFRC's time-averaged p is defined and of the order of its event count.
    assert np.all(
        (a["tfrc_p_avg"] > 0.3 * a["tfrc_ler_own"]) & (a["tfrc_p_avg"] < 3 * a["tfrc_ler_own"])
    )
    # The load knob works: more background flows, more loss.
    assert a["ping_plr"][0, 1] > a["ping_plr"][0, 0]


def test_quick_measured_rtt_count(quick: dict[str, Outcome]) -> None:
    # The uniform count with each flow's measured RTT, from the monitor's drop log: defined,
    # positive and near the base-RTT count (the measured RTT is within tens of percent of the
    # base RTT under adaptive RED), for every measured TFRC and TCP flow of every quick run.
    a = quick["rhee2005/fig01-03"].analysis
    for kind in ("tfrc", "tcp"):
        measured, base = a[f"{kind}_ler_measured"], a[f"{kind}_ler_base"]
        assert np.all(np.isfinite(measured) & (measured > 0)), kind
        assert np.all((measured > 0.5 * base) & (measured < 1.5 * base)), kind
        assert np.all(measured <= a[f"{kind}_plr"] + 1e-12), kind
    flows = [f for run in rhee2005._RUNS.values() for f in run["flows"]]
    measured_flows = [f for f in flows if f["type"] in ("tfrc", "tcp")]
    assert len(measured_flows) >= 20
    for f in measured_flows:
        assert 0.5 * f["ler_base"] < f["ler_measured"] < 1.5 * f["ler_base"], f
    # The other flows are not logged.
    assert all(np.isnan(f["ler_measured"]) for f in flows if f["type"] in ("cbr", "ping"))
