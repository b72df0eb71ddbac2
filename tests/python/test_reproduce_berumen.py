"""The berumen reproduction: registry entries, claims, and the quick plan's robust claims."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from tfrclab.reproduce import berumen
from tfrclab.reproduce.registry import experiments, registry
from tfrclab.reproduce.runner import run_experiment


def test_every_berumen_experiment_is_registered() -> None:
    ids = {e.id for e in registry()}
    assert {e.id for e in berumen.EXPERIMENTS} <= ids
    assert [e.id for e in experiments(["berumen"])] == [e.id for e in berumen.EXPERIMENTS]


@pytest.mark.parametrize("experiment", berumen.EXPERIMENTS, ids=lambda e: e.id)
def test_quick_plan_robust_claims_hold(experiment: object, tmp_path: Path) -> None:
    outcome = run_experiment(experiment, tmp_path, quick=True)  # type: ignore[arg-type]
    assert outcome.figure.is_file()
    for k, result in enumerate(outcome.results):
        if result.claim.robust_to_quick:
            assert result.verdict == "holds", (result.claim.id, result.reason)
        # Every decided claim's verdict moves under contrary data.
        found = outcome.contrary_of(k)
        assert found is None or found.can_fail, (result.claim.id, found.describe())


def test_packet_connections_are_the_fluid_connections() -> None:
    # The packet runs of Figs. 12-23 replay the fluid solver's exponential draws.
    from tfrclab.fluid import FluidFlow, FluidModel, solve

    flows = (
        FluidFlow("vegas", 0.05, restart_mean_s=4.0),
        FluidFlow("tfrc", 0.05, restart_mean_s=7.0),
    )
    run = solve(FluidModel(5e6, 100.0, flows, duration_s=60.0, seed=1))
    for k, mean in enumerate((4.0, 7.0)):
        spans = berumen._connections(1, k, mean, 60.0)
        assert run.connections[k] == len(spans)
        assert spans[0][0] == 0.0
        assert all(a[1] == b[0] for a, b in itertools.pairwise(spans))
