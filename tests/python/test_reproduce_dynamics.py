"""floyd2000's dynamics experiments in ``tfrclab reproduce``.

Registry checks, their measures on series of known shape, and a --quick run asserting the claims
robust to the reduction.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import robust_claim_keys, run_cli
from tfrclab.reproduce import floyd2000_dynamics as dynamics
from tfrclab.reproduce.floyd2000 import TABLE25_EXPERIMENT
from tfrclab.reproduce.registry import experiments, registry, scenario_path
from tfrclab.reproduce.report import write_report
from tfrclab.reproduce.runner import experiment_dir, run_experiment

OWNED = (
    "floyd2000/fig14",
    "floyd2000/fig19",
    "floyd2000/fig20",
    "floyd2000/fig21",
    "floyd2000/fig22",
    "floyd2000/fig23",
    "floyd2000/fig24-26-27",
    "floyd2000/fig28",
)

# The verdicts a --quick run gives for the claims marked robust to the reduction: the model's
# behaviour, measured (the full plan gives the same), not the paper's. Claims whose 95% interval
# on the quick plan's 2 seeds crosses their tolerance (inconclusive there) are not marked.
EXPECTED_QUICK = {
    "floyd2000/fig14/queue-nearly-full-tcp": "holds",
    "floyd2000/fig19/increase-starts": "holds",
    "floyd2000/fig19/increase-per-rtt": "holds",
    "floyd2000/fig19/discounting-starts": "holds",
    "floyd2000/fig19/discounted-increase-per-rtt": "holds",
    "floyd2000/fig20/halves-after-5-rtts": "fails",
    "floyd2000/fig21/fewest-rtts": "holds",
    "floyd2000/fig21/most-rtts": "fails",
    "floyd2000/fig21/at-least-5-at-lower-rates": "holds",
    "floyd2000/fig22/rtt50-peak-per-0.1s": "holds",
    "floyd2000/fig22/rtt100-peak-per-0.1s": "holds",
    "floyd2000/fig23/rtt50-peak-per-0.1s": "holds",
    "floyd2000/fig23/rtt100-peak-per-0.1s": "holds",
    "floyd2000/fig23/rtt50-queue-onset": "holds",
    "floyd2000/fig23/rtt50-rate-flattens": "holds",
    "floyd2000/fig24-26-27/droptail-delay-above-red-tcp-4": "holds",
    "floyd2000/fig24-26-27/droptail-delay-above-red-tfrc-4": "holds",
    "floyd2000/fig24-26-27/droptail-delay-above-red-tcp-40": "holds",
    "floyd2000/fig24-26-27/droptail-delay-above-red-tfrc-40": "holds",
    "floyd2000/fig28/droptail-tcp-oscillates": "holds",
    "floyd2000/fig28/droptail-tcp-amplitude": "holds",
    "floyd2000/fig28/tfrc-less-pronounced": "holds",
    "floyd2000/fig28/red-tfrc-no-oscillation": "holds",
    "floyd2000/fig28/droptail-tfrc-buffer100-oscillates": "fails",
}


def test_every_owned_id_is_registered() -> None:
    # Uniqueness over the whole registry is checked in test_reproduce.py.
    assert set(OWNED) <= {e.id for e in registry()}
    assert [e.id for e in dynamics.EXPERIMENTS] == list(OWNED)


def test_claims_robust_to_quick_are_the_expected_ones() -> None:
    # Paper values, tolerances and finite bounds: test_reproduce.py, for every registered claim.
    robust = robust_claim_keys(dynamics.EXPERIMENTS)
    assert robust == set(EXPECTED_QUICK), robust ^ set(EXPECTED_QUICK)


def test_shared_runs_use_table25s_cells_and_plans() -> None:
    """Figs. 14, 24, 26, 27 read Table 25's sweeps: same cells, same plans, or they would rerun."""
    for e in experiments(["floyd2000/fig14", "floyd2000/fig24-26-27"]):
        assert e.runs_of == TABLE25_EXPERIMENT.id
        assert all(cell in TABLE25_EXPERIMENT.cells for cell in e.cells)
        assert (e.full, e.quick) == (TABLE25_EXPERIMENT.full, TABLE25_EXPERIMENT.quick)
    for e in dynamics.EXPERIMENTS:
        for _label, relative, _changes in e.cells:
            assert relative in e.scenarios, relative
            assert scenario_path(relative).is_file(), relative


def test_autocorrelation_peak_tells_oscillation_from_noise() -> None:
    t = np.arange(0, 10, 0.01)
    wave = 20 + 15 * np.sin(2 * np.pi * t / 0.8)
    assert dynamics.autocorrelation_peak(wave, 0.01, 5.0) > 0.8
    noise = np.random.default_rng(1).normal(20, 5, t.size)
    assert dynamics.autocorrelation_peak(noise, 0.01, 5.0) < 0.2
    assert dynamics.autocorrelation_peak(np.full(t.size, 7.0), 0.01, 5.0) == 0.0
    ramp = np.linspace(0, 40, t.size)  # no zero crossing within 5 s: no oscillation
    assert dynamics.autocorrelation_peak(ramp, 0.01, 0.5) == 0.0


def test_mean_crossing_rate() -> None:
    square = np.tile([0.0] * 5 + [10.0] * 5, 10)  # period 1 s at 0.1 s bins, 10 s
    assert dynamics.mean_crossing_rate(square, 0.1) == pytest.approx(1.9)
    assert math.isnan(dynamics.mean_crossing_rate([1.0], 0.1))


def test_halving_rtts_is_time_not_reports() -> None:
    from tfrclab.channel import LossStep, run_channel

    run = run_channel(
        preset="floyd2000",
        schedule=(LossStep.periodic(0.0, 0.01), LossStep.periodic(10.0, 0.5)),
        duration_s=13.0,
    )
    rtts = dynamics.halving_rtts(run, 10.0, 0.1)
    i = run.index_at(10.0)
    assert i is not None
    first = np.flatnonzero((run.time_s > 10.0) & (run.x_bytes_per_s <= run.x_bytes_per_s[i] / 2))
    assert rtts == pytest.approx((run.time_s[first[0]] - 10.0) / 0.1)
    assert math.isnan(dynamics.halving_rtts(run, 20.0, 0.1))  # no report after the end


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, dict[str, object]]]:
    """The --quick plan of every owned experiment, run in process (one import of everything)."""
    out = tmp_path_factory.mktemp("dynamics")
    # One process: with a sweep per cell, worker pools would cost more than they save.
    outcomes = [run_experiment(e, out, quick=True, jobs=1) for e in experiments(list(OWNED))]
    write_report(outcomes, out)
    verdicts: dict[str, dict[str, object]] = {}
    for o in outcomes:
        for record in o.as_dict()["claims"]:
            verdicts[f"{o.experiment.id}/{record['id']}"] = record
    return out, verdicts


def test_quick_robust_claims(quick: tuple[Path, dict[str, dict[str, object]]]) -> None:
    _out, verdicts = quick
    for key, expected in EXPECTED_QUICK.items():
        assert verdicts[key]["verdict"] == expected, (key, verdicts[key])
    for key, record in verdicts.items():
        assert record["verdict"] in ("holds", "fails", "inconclusive", "not comparable"), key


@pytest.mark.parametrize(
    "key", [f"{e.id}/{c.id}" for e in experiments(list(OWNED)) for c in e.claims]
)
def test_contrary_data_moves_the_verdict(
    quick: tuple[Path, dict[str, dict[str, Any]]], key: str
) -> None:
    found = quick[1][key]["contrary"]
    if found is None:
        pytest.skip("not comparable in the quick run: nothing to move")
    assert found["can_fail"], found["summary"]


def test_quick_run_files_and_shared_sweeps(
    quick: tuple[Path, dict[str, dict[str, object]]],
) -> None:
    out, _verdicts = quick
    for e in experiments(list(OWNED)):
        assert (experiment_dir(out, e) / "figure.png").is_file(), e.id
        assert (experiment_dir(out, e) / "claims.json").is_file(), e.id
    # Figs. 14, 24, 26, 27 made no runs of their own: Table 25's directory holds them.
    table25 = out / "floyd2000" / "table25" / "sweep-quick"
    assert sorted(p.name for p in table25.iterdir()) == sorted(
        label for label, _s, _c in TABLE25_EXPERIMENT.cells
    )
    assert not (out / "floyd2000" / "fig14" / "sweep-quick").exists()
    page = (out / "report.html").read_text()
    assert 'data-claim="floyd2000/fig28/droptail-tcp-oscillates"' in page


def test_json_prints_the_claims(tmp_path: Path) -> None:
    done = run_cli(
        "reproduce", "floyd2000/fig20", "--quick", "--quiet", "--json", "--out", str(tmp_path)
    )
    assert done.returncode == 0, done.stderr
    records = json.loads(done.stdout)
    assert [r["id"] for r in records] == ["floyd2000/fig20"]
    claim = records[0]["claims"][0]
    assert claim["id"] == "halves-after-5-rtts"
    assert claim["paper_value"] == "5 RTTs"
    assert claim["accept"] == [4.0, 6.0]
    assert claim["verdict"] in ("holds", "fails")
    assert isinstance(claim["mean"], float)
    assert claim["ci_half"] is None  # deterministic: no interval
    assert records == json.loads((tmp_path / "claims.json").read_text())


def test_list_json() -> None:
    done = run_cli("reproduce", "floyd2000/fig28", "--list", "--json")
    assert done.returncode == 0, done.stderr
    (record,) = json.loads(done.stdout)
    assert record["id"] == "floyd2000/fig28"
    assert {c["id"] for c in record["claims"]} >= {
        "droptail-tcp-oscillates",
        "red-tcp-no-oscillation",
    }
    assert all("verdict" not in c for c in record["claims"])
