"""rhee2005 §5-§6 in ``tfrclab reproduce`` (Figs. 6-15).

Registry checks, the analytic RTO and equation figures, the E[1/theta_hat] trace fields, and a
--quick run of the simulated figures asserting the claims robust to the reduction.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import robust_claim_keys
from tfrclab.reproduce import rhee2005_theory as theory
from tfrclab.reproduce.registry import experiments, registry, scenario_path
from tfrclab.reproduce.runner import experiment_dir, run_experiment
from tfrclab.scenario import Scenario
from tfrclab.simulate import run

OWNED = (
    "rhee2005/fig06-07",
    "rhee2005/fig08",
    "rhee2005/fig09-11",
    "rhee2005/fig12",
    "rhee2005/fig13",
    "rhee2005/fig14-15",
)

# The verdicts a --quick run gives for the claims marked robust to the reduction: the model's
# behaviour, measured (the full plan gives the same), not the paper's.
EXPECTED_QUICK = {
    "rhee2005/fig06-07/tracks-at-low-loss": "holds",
    "rhee2005/fig08/tcp-gap-larger-than-equation-gap": "holds",
    "rhee2005/fig09-11/fig09-equation-above-tcp-at-high-loss": "fails",
    "rhee2005/fig12/tfrc-10ms": "holds",
    "rhee2005/fig12/standard-10ms": "holds",
    "rhee2005/fig12/tfrc-500ms": "holds",
    "rhee2005/fig12/standard-500ms": "holds",
    "rhee2005/fig12/tfrc-above-linux-at-long-delay": "holds",
    "rhee2005/fig13/ratio-10ms-at-15pct": "holds",
    "rhee2005/fig13/dr-10ms-at-5pct": "holds",
    "rhee2005/fig13/ratio-500ms": "holds",
    "rhee2005/fig13/small-at-low-loss": "holds",
    "rhee2005/fig14-15/10ms-above-20x": "fails",
    "rhee2005/fig14-15/10ms-lower-loss-event-rate": "fails",
}


def test_every_owned_id_is_registered() -> None:
    # Uniqueness over the whole registry is checked in test_reproduce.py.
    assert set(OWNED) <= {e.id for e in registry()}
    assert [e.id for e in theory.EXPERIMENTS] == list(OWNED)


def test_claims_robust_to_quick_are_the_expected_ones() -> None:
    robust = robust_claim_keys(theory.EXPERIMENTS)
    assert robust == set(EXPECTED_QUICK), robust ^ set(EXPECTED_QUICK)


def test_shared_runs_use_the_owners_cells_and_plans() -> None:
    """Figs. 8-11 read Figs. 6-7's sweeps: same cells, same plans, or they would rerun."""
    for e in experiments(["rhee2005/fig08", "rhee2005/fig09-11"]):
        assert e.runs_of == theory.FIG06_07.id
        assert all(cell in theory.FIG06_07.cells for cell in e.cells)
        assert (e.full, e.quick) == (theory.FIG06_07.full, theory.FIG06_07.quick)
    for e in theory.EXPERIMENTS:
        for _label, relative, _changes in e.cells:
            assert relative in e.scenarios
            assert scenario_path(relative).is_file(), relative
            assert relative.startswith(("rhee2005/theta-", "rhee2005/rto-"))


def test_cells_build_valid_scenarios() -> None:
    """Every cell's changes are accepted by the scenario checker (a bad key fails here)."""
    for e in (theory.FIG06_07, theory.FIG14_15):
        for label, relative, changes in e.cells:
            scenario = Scenario.load(scenario_path(relative)).with_(**changes)
            assert scenario.toml, label


def test_buffer_is_twice_the_bandwidth_delay_product() -> None:
    cells = {label: changes for label, _s, changes in theory.FIG14_15.cells}
    # RTT = 2 x (delay + 4 ms); 15 Mb/s; 1000-byte packets.
    assert cells["10ms-bg5"]["topology.bottleneck.queue.limit"] == 105
    assert cells["50ms-bg5"]["topology.bottleneck.queue.limit"] == 405
    assert cells["500ms-bg5"]["topology.bottleneck.queue.limit"] == 3780
    assert cells["10ms-bg5-buffer-400"]["topology.bottleneck.queue.limit"] == 400


def test_rto_models() -> None:
    assert theory.rto_tfrc_s(0.01) == pytest.approx(0.04)
    assert theory.rto_standard_s(0.01, 0.001) == pytest.approx(1.0)
    assert theory.rto_standard_s(0.8, 0.1) == pytest.approx(1.2)
    # Linux: the 200 ms minimum bounds the variance term, so the RTO follows the RTT.
    assert theory.rto_linux_s(0.5, 0.0) == pytest.approx(0.7)
    assert theory.rto_linux_s(0.5, 0.1) == pytest.approx(0.9)


def test_inverse_theta_hat_trace_under_periodic_loss() -> None:
    """The receiver samples 1/theta_hat once per loss event: 1/50 under 1-in-50 loss."""
    text = """
duration = "20s"
[monitor]
bin = "1s"
[topology]
kind = "dumbbell"
hosts = 1
bottleneck = { rate = "10Mbps", delay = "20ms", queue = { kind = "droptail", limit = 100 } }
access = { rate = "100Mbps", delay = "1ms" }
[[flows]]
kind = "tfrc"
name = "f"
preset = "floyd2000"
[[losses]]
link = "bottleneck"
kind = "periodic"
every = 50
phase = 49
"""
    trace = run(Scenario.from_toml(text), seed=1).trace("f")
    total = trace["rx_inv_theta_hat_sum"].to_numpy()
    samples = trace["rx_inv_theta_hat_samples"].to_numpy()
    assert samples[-1] == trace["rx_loss_events"].to_numpy()[-1]
    n = samples[-1] - samples[9]
    assert n > 10
    assert (total[-1] - total[9]) / n == pytest.approx(0.02, abs=1e-9)


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, dict[str, object]]]:
    """The --quick plan of every owned experiment (the sweeps on two worker processes)."""
    out = tmp_path_factory.mktemp("rhee2005_theory")
    outcomes = [run_experiment(e, out, quick=True, jobs=2) for e in experiments(list(OWNED))]
    verdicts: dict[str, dict[str, object]] = {}
    for o in outcomes:
        for r in o.results:
            verdicts[f"{o.experiment.id}/{r.claim.id}"] = r.as_dict()
    return out, verdicts


def test_quick_robust_claims(quick: tuple[Path, dict[str, dict[str, object]]]) -> None:
    _out, verdicts = quick
    for key, expected in EXPECTED_QUICK.items():
        assert verdicts[key]["verdict"] == expected, (key, verdicts[key])
    for key, record in verdicts.items():
        assert record["verdict"] in ("holds", "fails", "inconclusive", "not comparable"), key
    assert verdicts["rhee2005/fig12/planetlab-measurement"]["verdict"] == "not comparable"


def test_quick_run_files_and_shared_sweeps(
    quick: tuple[Path, dict[str, dict[str, object]]],
) -> None:
    out, _verdicts = quick
    for e in experiments(list(OWNED)):
        assert (experiment_dir(out, e) / "figure.png").is_file(), e.id
    shared = out / "rhee2005" / "fig06-07" / "sweep-quick"
    assert sorted(p.name for p in shared.iterdir()) == sorted(
        label for label, _s, _c in theory.FIG06_07.cells
    )
    assert not (out / "rhee2005" / "fig08" / "sweep-quick").exists()
