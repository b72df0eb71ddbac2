"""Claims: a paper's statement, how it is measured, and its tolerance, fixed before running.

A :class:`Claim` names the paper's value (as the paper gives it), how tfrclab measures the same
thing, and the interval ``accept`` the measured value must fall in for the claim to hold. The
tolerance is part of the claim, written down before any run, never tuned to a result.

Evaluating a claim on an experiment's analysis gives a :class:`Measurement` (a mean over seeds
with the half-width of its 95% Student t confidence interval, :func:`tfrclab.metrics.mean_ci`)
and a :class:`ClaimResult` with one of four verdicts, decided on the whole interval:

- ``holds``: the whole 95% interval ``[mean - half, mean + half]`` lies in ``accept``;
- ``fails``: the whole interval lies outside ``accept``; the reason is the claim's
  ``known_deviation`` when one is recorded (a difference explained elsewhere), else the
  interval against the tolerance;
- ``inconclusive``: the interval crosses an edge of ``accept``: the seeds run do not decide.
  The runner (:func:`tfrclab.reproduce.runner.run_experiment`) then adds seeds, up to its cap,
  and the verdict is ``inconclusive`` only if the interval still crosses on all of them;
- ``not comparable``: nothing could be measured (a NaN mean), with the measurement's note.

``accept`` is closed unless the claim marks an edge ``strict``: a paper's "above N" is not met
by N itself, so a tie does not hold (nor does an interval reaching N), where "at least N" is.

A measurement without an interval (a deterministic run, a single seed, or a measure that is one
number over all seeds such as a maximum) is decided on its value alone, as a point: it holds
or fails, never inconclusive.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from tfrclab.metrics import mean_ci

__all__ = [
    "VERDICTS",
    "Band",
    "Claim",
    "ClaimResult",
    "Measurement",
    "Verdict",
    "band_conflicts",
    "evaluate",
    "judge",
    "measure_seeds",
    "worst_of",
]

Verdict = Literal["holds", "fails", "inconclusive", "not comparable"]
"""A claim's verdict (see the module documentation)."""

VERDICTS: tuple[Verdict, ...] = ("holds", "fails", "inconclusive", "not comparable")
"""Every verdict, in the order the reports count them."""

Analysis = Mapping[str, Any]
"""What an experiment's analysis step produced: named arrays (one value per seed, or per seed
and timescale), read by the claims' ``measure`` functions."""


@dataclass(frozen=True)
class Measurement:
    """A measured value: the mean over seeds, the 95% CI half-width, and what was averaged."""

    mean: float
    half: float
    """Half-width of the 95% confidence interval (NaN with a single seed or a deterministic
    run)."""
    seeds: int
    note: str = ""
    """Where the value comes from when it is a pick among several (e.g. the worst timescale)."""

    def format(self, digits: int = 3) -> str:
        """``mean ± half`` with ``digits`` significant digits (``mean`` alone without a CI)."""
        if math.isnan(self.mean):
            return "n/a"
        if math.isnan(self.half):
            return f"{self.mean:.{digits}g}"
        return f"{self.mean:.{digits}g} ± {self.half:.2g}"

    @property
    def interval(self) -> tuple[float, float] | None:
        """The 95% confidence interval ``(mean - half, mean + half)``; None without one."""
        if math.isnan(self.mean) or math.isnan(self.half):
            return None
        return (self.mean - self.half, self.mean + self.half)

    def as_dict(self) -> dict[str, Any]:
        """``mean``, ``ci_half``, ``ci`` and ``seeds`` as JSON-ready values (None for NaN)."""
        interval = self.interval
        return {
            "mean": None if math.isnan(self.mean) else self.mean,
            "ci_half": None if math.isnan(self.half) else self.half,
            "ci": None if interval is None else list(interval),
            "seeds": self.seeds,
        }


@dataclass(frozen=True)
class Band:
    """The tolerance of one quantity under one paper statement, defined once for every claim.

    Where several claims (in one experiment or several) check the same quantity against the
    same statement of a paper, they take their ``accept`` and ``tolerance`` from one band, so
    the statement cannot be judged with two different tolerances (:func:`band_conflicts`).
    """

    quantity: str
    """What is measured, in words (e.g. ``RTTs for TFRC's rate to halve``)."""
    statement: str
    """The paper's statement and where it is (e.g. ``floyd2000 App. A.2: three to eight``)."""
    accept: tuple[float, float]
    """The interval the claims' measured values must fall in (closed unless ``strict``)."""
    tolerance: str
    """The acceptance rule in words (matching ``accept``)."""
    strict: tuple[bool, bool] = (False, False)
    """Whether the low and the high edge of ``accept`` are excluded (see :attr:`Claim.strict`)."""

    @property
    def key(self) -> tuple[str, str]:
        """``(quantity, statement)``: claims with the same key must share one band."""
        return (self.quantity, self.statement)


@dataclass(frozen=True)
class Claim:
    """One check of a paper's statement, with its tolerance fixed before running."""

    id: str
    """Short name, unique within its experiment (e.g. ``cov-below-tcp``)."""
    statement: str
    """What the paper says, in a sentence."""
    paper_value: str
    """The paper's value or shape, as it gives it."""
    how: str
    """How tfrclab measures it, in a sentence."""
    tolerance: str
    """The acceptance rule in words (matching ``accept``)."""
    accept: tuple[float, float]
    """The interval the measured value (its whole 95% interval) must fall in: closed, unless
    ``strict`` excludes an edge."""
    measure: Callable[[Analysis], Measurement] = field(repr=False, compare=False)
    unit: str = ""
    robust_to_quick: bool = False
    """Whether the ``--quick`` reduction (fewer seeds, shorter runs) is expected to keep the
    verdict (the tests assert these)."""
    known_deviation: str | None = None
    """Why the claim is expected to fail, when that is understood and documented."""
    band: Band | None = None
    """The shared band its ``accept`` and ``tolerance`` come from, when other claims check the
    same quantity under the same paper statement (they must then equal the band's)."""
    strict: tuple[bool, bool] = (False, False)
    """Whether the low and the high edge of ``accept`` are excluded: a paper's "above N" or
    "more than N" is not met by N itself (a tie), where its "at least N" is."""

    def __post_init__(self) -> None:
        if self.band is not None and (self.accept, self.tolerance, self.strict) != (
            self.band.accept,
            self.band.tolerance,
            self.band.strict,
        ):
            raise ValueError(
                f"claim {self.id}: accept {self.accept} and tolerance {self.tolerance!r} differ "
                f"from its band's {self.band.accept} and {self.band.tolerance!r}"
            )

    @classmethod
    def in_band(cls, band: Band, **fields: Any) -> Claim:
        """A claim whose ``accept``, ``tolerance`` and ``strict`` are ``band``'s."""
        return cls(
            accept=band.accept, tolerance=band.tolerance, strict=band.strict, band=band, **fields
        )

    def band_text(self) -> str:
        """``accept`` in interval notation: ``[a, b]``, with ``(`` or ``)`` at a strict edge."""
        low, high = self.accept
        return f"{'(' if self.strict[0] else '['}{low:g}, {high:g}{')' if self.strict[1] else ']'}"

    def admits(self, low: float, high: float) -> bool:
        """Whether ``[low, high]`` (a value: ``low == high``) lies wholly inside ``accept``."""
        a, b = self.accept
        above = a < low if self.strict[0] else a <= low
        below = high < b if self.strict[1] else high <= b
        return above and below

    def excludes(self, low: float, high: float) -> bool:
        """Whether ``[low, high]`` lies wholly outside ``accept``."""
        a, b = self.accept
        under = high <= a if self.strict[0] else high < a
        over = low >= b if self.strict[1] else low > b
        return under or over

    def as_dict(self) -> dict[str, Any]:
        """The claim as written in the registry, as plain JSON-ready values."""
        return {
            "id": self.id,
            "statement": self.statement,
            "paper_value": self.paper_value,
            "how": self.how,
            "tolerance": self.tolerance,
            "accept": list(self.accept),
            "strict": list(self.strict),
            "unit": self.unit,
        }


@dataclass(frozen=True)
class ClaimResult:
    """A claim, what was measured, and the verdict with its reason."""

    claim: Claim
    measured: Measurement
    verdict: Verdict
    reason: str

    def as_dict(self) -> dict[str, Any]:
        """The result as plain JSON-ready values."""
        m = self.measured
        return {
            **self.claim.as_dict(),
            **m.as_dict(),
            "note": m.note,
            "verdict": self.verdict,
            "reason": self.reason,
        }


def evaluate(claim: Claim, analysis: Analysis) -> ClaimResult:
    """Measure ``claim`` on ``analysis`` and decide its verdict (see the module docs)."""
    return judge(claim, claim.measure(analysis))


def judge(claim: Claim, measured: Measurement) -> ClaimResult:
    """The verdict of ``claim`` on ``measured``: its whole 95% interval against ``accept``."""
    band = claim.band_text()
    if math.isnan(measured.mean):
        return ClaimResult(claim, measured, "not comparable", measured.note or "nothing measured")
    interval = measured.interval
    if interval is None:
        # No interval (deterministic, one seed, or one number over the seeds): the value decides.
        shown = f"{measured.mean:.3g}"
        if claim.admits(measured.mean, measured.mean):
            return ClaimResult(claim, measured, "holds", f"{shown} is in {band}")
        if claim.known_deviation is not None:
            return ClaimResult(claim, measured, "fails", claim.known_deviation)
        return ClaimResult(claim, measured, "fails", f"{shown} is outside {band}")
    lo, hi = interval
    shown = f"the 95% interval [{lo:.3g}, {hi:.3g}]"
    if claim.admits(lo, hi):
        return ClaimResult(claim, measured, "holds", f"{shown} is in {band}")
    if claim.excludes(lo, hi):
        if claim.known_deviation is not None:
            return ClaimResult(claim, measured, "fails", claim.known_deviation)
        return ClaimResult(claim, measured, "fails", f"{shown} is outside {band}")
    low, high = claim.accept
    edge = low if not claim.admits(lo, max(lo, low)) else high
    return ClaimResult(
        claim,
        measured,
        "inconclusive",
        f"{shown} crosses the tolerance's edge {edge:g} of {band} on {measured.seeds} seeds",
    )


def band_conflicts(claims: Iterable[tuple[str, Claim]]) -> list[str]:
    """The paper statements judged with more than one tolerance among ``claims`` (named).

    Claims are grouped by their band's :attr:`Band.key`, or without a band by their statement,
    paper value and measure together (a claim written out twice); a group whose claims do not
    all have the same ``accept`` (and strict edges) is a conflict. One line per conflict,
    naming the claims and their intervals; empty when every statement has one band.
    """
    groups: dict[tuple[str, ...], list[tuple[str, Claim]]] = {}
    for name, claim in claims:
        key: tuple[str, ...] = (
            ("band", *claim.band.key)
            if claim.band is not None
            else ("text", claim.statement, claim.paper_value, claim.how)
        )
        groups.setdefault(key, []).append((name, claim))
    found = []
    for key, members in groups.items():
        if len({(claim.accept, claim.strict) for _name, claim in members}) > 1:
            shown = ", ".join(f"{name} {list(claim.accept)}" for name, claim in members)
            found.append(f"{' / '.join(key[1:])}: {shown}")
    return found


def measure_seeds(values: Sequence[float] | np.ndarray, note: str = "") -> Measurement:
    """A :class:`Measurement` of per-seed values: their mean and 95% CI half-width."""
    x = np.asarray(values, dtype=float)
    mean, half = mean_ci(x) if x.size else (float("nan"), float("nan"))
    return Measurement(mean, half, int(np.count_nonzero(~np.isnan(x))), note)


def worst_of(
    per_seed: np.ndarray,
    labels: Sequence[str],
    badness: Callable[[float], float],
) -> Measurement:
    """The column of ``per_seed`` (seeds x columns) whose seed mean is worst by ``badness``.

    For claims over several timescales: the claim holds at every timescale exactly when it
    holds at the worst one, so that one is reported (its label in the note).
    """
    measurements = [measure_seeds(per_seed[:, k]) for k in range(per_seed.shape[1])]
    finite = [k for k, m in enumerate(measurements) if not math.isnan(m.mean)]
    if not finite:
        return Measurement(float("nan"), float("nan"), 0, "no timescale had a defined value")
    k = max(finite, key=lambda j: badness(measurements[j].mean))
    m = measurements[k]
    return Measurement(m.mean, m.half, m.seeds, f"worst at {labels[k]}")
