"""Why a claim fails, and the registered runs that show it.

A failing claim's ``known_deviation`` is the reason the report prints for it. A reader who doubts
the result accepts a cause only beside the numbers that show it, so a reason is made in one of
two ways:

- :func:`because`: a cause, with the registered claims whose measured values show it (a variant
  run beside the experiment, such as GAIMD with SACK recovery, or an ns-2.35 referee run of the
  rhee2005 ns-2 experiments). Each is named ``<experiment id> <claim id>``; its value is in the
  same paper's report and claims JSON.
- :func:`not_established`: what the data show, without a cause: the reason says the cause is
  not established by a registered run.

:func:`problems` checks a registry's reasons against this rule (the test suite runs it on the
papers it covers).
"""

from __future__ import annotations

from collections.abc import Iterable

from tfrclab.reproduce.registry import Experiment

__all__ = ["NOT_ESTABLISHED", "Reason", "because", "not_established", "problems"]

NOT_ESTABLISHED = "the cause is not established by a registered run"
"""The words every :func:`not_established` reason ends with."""


class Reason(str):
    """A failing claim's reason: its text, and the registered claims it cites as evidence."""

    evidence: tuple[str, ...]
    """``<experiment id> <claim id>`` of each claim whose values show the cause (empty for a
    reason without an established cause)."""

    def __new__(cls, text: str, evidence: tuple[str, ...] = ()) -> Reason:
        """The reason ``text`` citing ``evidence``."""
        made = super().__new__(cls, text)
        made.evidence = evidence
        return made


def because(cause: str, *evidence: str) -> Reason:
    """A reason asserting ``cause``, shown by the claims ``evidence`` (at least one).

    The text names them after the cause, so the report's reader finds their values.

    Raises:
        ValueError: without evidence, or with a reference not of the form ``paper/figure id``.
    """
    if not evidence:
        raise ValueError(f"a cause needs a registered run as evidence: {cause!r}")
    for ref in evidence:
        experiment, _, claim = ref.partition(" ")
        if "/" not in experiment or not claim:
            raise ValueError(f"evidence {ref!r} is not '<experiment id> <claim id>'")
    return Reason(f"{cause} (evidence: {'; '.join(evidence)})", tuple(evidence))


def not_established(observation: str) -> Reason:
    """A reason stating what the data show, with no cause asserted."""
    return Reason(f"{observation}; {NOT_ESTABLISHED}")


def problems(experiments: Iterable[Experiment]) -> list[str]:
    """Every known deviation among ``experiments`` that breaks the rule, one line each.

    A known deviation must be a :class:`Reason`; one citing evidence must cite claims that are
    registered among ``experiments``, of the same paper (so their values are in its report),
    other than the claim itself; one without evidence must say the cause is not established.
    """
    chosen = list(experiments)
    registered = {f"{e.id} {c.id}" for e in chosen for c in e.claims}
    papers = {f"{e.id} {c.id}": e.paper for e in chosen for c in e.claims}
    found: list[str] = []
    for experiment in chosen:
        for claim in experiment.claims:
            reason = claim.known_deviation
            if reason is None:
                continue
            name = f"{experiment.id} {claim.id}"
            if not isinstance(reason, Reason):
                found.append(f"{name}: its reason is plain text, not because() or "
                             "not_established()")  # fmt: skip
                continue
            if not reason.evidence and not reason.endswith(NOT_ESTABLISHED):
                found.append(f"{name}: no evidence, and it does not say so")
            for ref in reason.evidence:
                if ref == name:
                    found.append(f"{name}: cites itself")
                elif ref not in registered:
                    found.append(f"{name}: cites {ref!r}, not a registered claim")
                elif papers[ref] != experiment.paper:
                    found.append(f"{name}: cites {ref!r} of another paper")
    return found
