"""Evidence beside every explanation (tfrclab.reproduce.evidence).

A failing claim's reason cites registered runs, or says that its cause is not established.
"""

from __future__ import annotations

import json
import pickle
from typing import Any

import pytest

from tfrclab.reproduce.claims import Claim, Measurement, judge
from tfrclab.reproduce.evidence import NOT_ESTABLISHED, because, not_established, problems
from tfrclab.reproduce.registry import Experiment, Plan, experiments

RERUN = ("floyd2000", "yang2001", "rhee2005", "hassan", "berumen")
"""The papers whose reasons follow the rule (rerun under it): all five."""


def _claim(name: str, reason: str | None = None) -> Claim:
    return Claim(
        id=name,
        statement="s",
        paper_value="p",
        how="h",
        tolerance="in [0, 1]",
        accept=(0.0, 1.0),
        measure=lambda _a: Measurement(2.0, float("nan"), 1),
        known_deviation=reason,
    )


def _experiment(identifier: str, *claims: Claim) -> Experiment:
    def nothing(*_args: Any) -> Any:
        return {}

    return Experiment(
        id=identifier,
        title="t",
        setup="s",
        kind="channel",
        scenarios=(),
        cells=(),
        full=Plan(seeds=(0,)),
        quick=Plan(seeds=(0,)),
        metrics=(),
        claims=claims,
        analyze=nothing,
        plot=nothing,
    )


def test_every_reason_of_the_rerun_papers_cites_registered_evidence_or_says_it_has_none() -> None:
    chosen = experiments(list(RERUN))
    assert problems(chosen) == []
    reasons = [c.known_deviation for e in chosen for c in e.claims if c.known_deviation]
    cited = [r for r in reasons if getattr(r, "evidence", ())]
    # Most explanations carry evidence; the rest say that they do not.
    assert len(cited) >= 20
    assert all(r in cited or r.endswith(NOT_ESTABLISHED) for r in reasons)


def test_the_rule_finds_each_kind_of_unsupported_reason() -> None:
    fine = _experiment(
        "a/x",
        _claim("variant"),
        _claim("shown", because("the cause", "a/x variant")),
        _claim("open", not_established("what the data show")),
    )
    assert problems([fine]) == []
    broken = _experiment(
        "a/y",
        _claim("plain", "a cause asserted in plain text"),
        _claim("unknown", because("the cause", "a/x no-such-claim")),
        _claim("self", because("the cause", "a/y self")),
        _claim("elsewhere", because("the cause", "b/z other")),
    )
    other = _experiment("b/z", _claim("other"))
    found = problems([fine, broken, other])
    assert len(found) == 4
    for name, words in (
        ("plain", "plain text"),
        ("unknown", "not a registered claim"),
        ("self", "cites itself"),
        ("elsewhere", "another paper"),
    ):
        assert any(line.startswith(f"a/y {name}:") and words in line for line in found), found


def test_a_cause_without_evidence_or_with_a_malformed_reference_is_refused() -> None:
    with pytest.raises(ValueError, match="needs a registered run"):
        because("a cause")
    with pytest.raises(ValueError, match="is not '<experiment id> <claim id>'"):
        because("a cause", "fig06 cov1")


def test_a_failing_claim_reports_its_cause_with_the_evidence_it_cites() -> None:
    reason = because("the cause", "a/x variant", "a/x other")
    result = judge(_claim("c", reason), Measurement(2.0, 0.1, 3))
    assert result.verdict == "fails"
    assert result.reason == "the cause (evidence: a/x variant; a/x other)"
    # The reason travels as the text it is, in the claims JSON and between processes.
    assert json.loads(json.dumps({"reason": result.reason})) == {"reason": result.reason}
    copy = pickle.loads(pickle.dumps(reason))
    assert (copy, copy.evidence) == (reason, reason.evidence)
    # A claim that holds shows its interval, never the known deviation.
    holds = judge(_claim("c", reason), Measurement(0.5, 0.1, 3))
    assert (holds.verdict, "evidence" in holds.reason) == ("holds", False)
