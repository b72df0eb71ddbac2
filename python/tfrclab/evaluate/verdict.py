"""Verdicts decided on a confidence interval against a threshold.

Every criterion of the battery ends in a :class:`Value` (a mean over seeds and its 95%
interval) and a :class:`Threshold` written beside the sentence it comes from. :func:`decide`
gives one of four verdicts:

- ``meets``: the whole interval lies on the acceptable side of the threshold;
- ``flag``: the whole interval lies on the other side (the criterion needs the community's
  attention: RFC 9743 §5 asks that a criterion not met be documented, not that it forbid);
- ``inconclusive``: the interval crosses the threshold (more seeds, or longer runs, decide);
- ``not evaluated``: nothing could be measured (no value), or the criterion has no scenario in
  this battery.

One seed has no interval (its half-width is NaN): the mean alone decides, as
:func:`tfrclab.twin.decide` does, and the row says so.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from tfrclab.metrics import mean_ci

__all__ = [
    "Threshold",
    "Value",
    "Verdict",
    "decide",
    "ratio_of_means",
    "seed_mean",
]

Verdict = Literal["meets", "flag", "inconclusive", "not evaluated"]
VERDICTS: tuple[Verdict, ...] = ("meets", "flag", "inconclusive", "not evaluated")


@dataclass(frozen=True)
class Threshold:
    """The acceptable side of a criterion: ``at most`` high, ``at least`` low, or ``within``."""

    rule: Literal["at most", "at least", "within"]
    low: float = math.nan
    high: float = math.nan

    def describe(self, unit: str = "") -> str:
        """``at most 1.25``, ``at least 0.9``, ``within [0.5, 2]``, with ``unit`` after."""
        tail = f" {unit}" if unit else ""
        if self.rule == "at most":
            return f"at most {self.high:g}{tail}"
        if self.rule == "at least":
            return f"at least {self.low:g}{tail}"
        return f"within [{self.low:g}, {self.high:g}]{tail}"

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready (bounds that do not apply are None)."""
        return {
            "rule": self.rule,
            "low": None if math.isnan(self.low) else self.low,
            "high": None if math.isnan(self.high) else self.high,
        }


@dataclass(frozen=True)
class Value:
    """A measured value: the mean over seeds and its 95% interval [low, high]."""

    mean: float
    low: float
    high: float
    seeds: int
    note: str = ""

    @classmethod
    def missing(cls, note: str) -> Value:
        """Nothing measured, and why."""
        return cls(math.nan, math.nan, math.nan, 0, note)

    @property
    def has_interval(self) -> bool:
        """Whether the interval is known (two or more seeds)."""
        return not (math.isnan(self.low) or math.isnan(self.high))

    def format(self, digits: int = 3) -> str:
        """``mean [low, high]``; the mean alone without an interval; ``n/a`` without a mean."""
        if math.isnan(self.mean):
            return "n/a"
        if not self.has_interval:
            return f"{self.mean:.{digits}g}"
        return f"{self.mean:.{digits}g} [{self.low:.{digits}g}, {self.high:.{digits}g}]"

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready (NaN as None)."""

        def plain(x: float) -> float | None:
            return None if math.isnan(x) else float(x)

        return {
            "mean": plain(self.mean),
            "ci95": [plain(self.low), plain(self.high)],
            "seeds": self.seeds,
            "note": self.note,
        }


def seed_mean(values: Sequence[float] | np.ndarray, note: str = "", log: bool = False) -> Value:
    """The mean of per-seed values with its Student t 95% interval (:func:`mean_ci`).

    With ``log``, for per-seed ratios: the interval of the mean of their logarithms, taken
    back (the geometric mean; a ratio's spread is multiplicative, and a band like [0.5, 2] is
    symmetric there). NaN values (seeds where nothing could be measured) are left out and
    counted in the note.
    An infinite value (a ratio over a competitor that got nothing) makes the mean and the
    interval's top infinite, the bottom the smallest value: the interval is then only bounded
    below.
    """
    x = np.asarray(values, dtype=float)
    infinite = int(np.count_nonzero(np.isposinf(x)))
    if infinite:
        kept = x[~np.isnan(x)]
        extra = f"infinite in {infinite} seed(s)"
        return Value(math.inf, float(kept.min()), math.inf, int(kept.size), _join(note, extra))
    finite = x[np.isfinite(x)]
    skipped = int(x.size - finite.size)
    if skipped:
        note = _join(note, f"{skipped} seed(s) without a value")
    if finite.size == 0:
        return Value.missing(note or "nothing measured")
    if log:
        if (finite <= 0).any():
            return Value.missing(_join(note, "a ratio at or below 0: no logarithm"))
        mean, half = mean_ci(np.log(finite))
        return Value(
            math.exp(mean), math.exp(mean - half), math.exp(mean + half), int(finite.size), note
        )
    mean, half = mean_ci(finite)
    return Value(mean, mean - half, mean + half, int(finite.size), note)


def _join(*notes: str) -> str:
    return "; ".join(n for n in notes if n)


def ratio_of_means(
    values: Sequence[float] | np.ndarray, reference: Sequence[float] | np.ndarray
) -> Value:
    """mean(values) / mean(reference), with the interval from Welch's difference.

    The 95% interval of the difference of the two means (Welch's t, the cross-check's
    :func:`tfrclab.ns2.crosscheck.compare`) divided by the reference mean, plus 1: the ratio's
    interval with the reference's own spread included. NaN when the reference mean is not
    positive (a ratio would mean nothing).
    """
    from tfrclab.ns2.crosscheck import compare

    a = [float(v) for v in values if math.isfinite(v)]
    b = [float(v) for v in reference if math.isfinite(v)]
    if not a or not b:
        return Value.missing("no value" if not a else "no reference value")
    comparison = compare("ratio", a, b, tolerance=0.0)
    base = comparison.mean_ns2
    if not base > 0:
        return Value.missing(f"the reference is {base:.3g}: no ratio")
    mean = comparison.mean_tfrclab / base
    if len(a) < 2 or len(b) < 2:
        return Value(mean, math.nan, math.nan, min(len(a), len(b)), "one seed: no interval")
    return Value(
        mean,
        1.0 + comparison.ci_low / base,
        1.0 + comparison.ci_high / base,
        min(len(a), len(b)),
    )


def decide(value: Value, threshold: Threshold) -> Verdict:
    """The verdict of ``value`` against ``threshold`` (module documentation).

    >>> at_most = Threshold("at most", high=1.25)
    >>> decide(Value(1.0, 0.9, 1.1, 5), at_most), decide(Value(1.5, 1.3, 1.7, 5), at_most)
    ('meets', 'flag')
    >>> decide(Value(1.2, 1.1, 1.3, 5), at_most)
    'inconclusive'
    """
    if math.isnan(value.mean):
        return "not evaluated"
    low, high = (value.low, value.high) if value.has_interval else (value.mean, value.mean)
    if threshold.rule == "at most":
        if high <= threshold.high:
            return "meets"
        return "flag" if low > threshold.high else "inconclusive"
    if threshold.rule == "at least":
        if low >= threshold.low:
            return "meets"
        return "flag" if high < threshold.low else "inconclusive"
    if threshold.low <= low and high <= threshold.high:
        return "meets"
    if high < threshold.low or low > threshold.high:
        return "flag"
    return "inconclusive"
