"""The berumen reproduction: registry entries, claims, and the quick plan's robust claims."""

from __future__ import annotations

from pathlib import Path

import pytest

from tfrclab.reproduce import berumen
from tfrclab.reproduce.registry import experiments, registry, scenario_path
from tfrclab.reproduce.runner import run_experiment


def test_every_berumen_experiment_is_registered() -> None:
    ids = {e.id for e in registry()}
    assert {e.id for e in berumen.EXPERIMENTS} <= ids
    assert [e.id for e in experiments(["berumen"])] == [e.id for e in berumen.EXPERIMENTS]


def test_every_claim_has_a_paper_value_and_a_tolerance() -> None:
    for e in berumen.EXPERIMENTS:
        assert e.claims
        assert len({c.id for c in e.claims}) == len(e.claims)
        for c in e.claims:
            assert c.paper_value
            assert c.tolerance
            assert c.how
            assert c.accept[0] <= c.accept[1]
        for name in e.scenarios:
            assert scenario_path(name).is_file()


@pytest.mark.parametrize("experiment", berumen.EXPERIMENTS, ids=lambda e: e.id)
def test_quick_plan_robust_claims_hold(experiment: object, tmp_path: Path) -> None:
    outcome = run_experiment(experiment, tmp_path, quick=True)  # type: ignore[arg-type]
    assert outcome.figure.is_file()
    for result in outcome.results:
        if result.claim.robust_to_quick:
            assert result.verdict == "holds", (result.claim.id, result.reason)
