"""Can a claim fail? Its verdict under contrary data, made by perturbing the runs' analysis.

A claim that holds whatever the simulation does says nothing about the simulation: it may be
computed from the scenario's own constants, or its band may cover every value its measure can
take. :func:`contrary` looks for data that would have given another verdict: it perturbs the
numbers of the experiment's analysis (what its runs produced, :data:`Analysis`: arrays,
numbers, numeric DataFrame columns, dataclass fields, at any depth) and re-decides the claim on
each perturbed analysis with :func:`tfrclab.reproduce.claims.judge`: first every value the
claim reads moved together, then each alone, then the values pushed apart (some up, the rest
down: a measure that sets quantities against one another moves only so). The first
perturbation whose verdict differs (other than "not comparable": a measure that breaks on
contrary data is no evidence that it can fail) is the claim's contrary run.

Only what the claim's measure reads is perturbed: the measure is first run on a recording view
of the analysis, and a claim that reads nothing of it is reported as computed without the runs.

The perturbations keep a value in its own domain, so that a band covering a quantity's whole
range is found, not masked by an impossible value. The domain is read from the values:

- a leaf whose finite values all lie in [0, 1] is taken for a share, a probability or a ratio
  of like quantities: it is moved part of the way (1% to 100%) toward 0 or toward 1, or
  mirrored (``1 - x``); unless the claim's own band reaches outside [0, 1], when its quantity
  is not a share and the leaf is taken as non-negative;
- a non-negative leaf is scaled by factors from 0 to 1000 (several near 1, for narrow bands)
  and shifted up by 0.01 to 100 (a zero does not scale);
- a leaf with negative values is also scaled by -100 to -0.5 and shifted down;
- any array is also reversed along its last axis (a trend over loads or time turned round);
- booleans are negated, or all set true or false.

NaN stays NaN. Every value of an array moves together, so a measure over seeds or timescales
sees a contrary run, not one odd seed.

The domain read from the values is a guess, wrong both ways at times: a claim reported unmoved
may still be able to fail (a quantity that happened to lie in [0, 1], under a band inside
[0, 1]), so an unmoved claim is a finding to read, not a verdict; and a claim reported moved
may have moved only on values no run can give (a share scaled past 1 because the claim's band
reaches past 1; a perturbation that breaks a relation between values, such as a share and its
complement). The check finds claims that cannot fail at all; it does not prove that a real run
could have failed one.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from tfrclab.reproduce.claims import Analysis, Claim, ClaimResult, Measurement, judge

__all__ = ["Contrary", "contrary", "perturbations"]

Path = tuple[Any, ...]
"""Where a value is in the analysis: the keys, indexes and attribute names leading to it."""

_DOWN = (0.99, 0.98, 0.95, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.15, 0.1, 0.07, 0.05)
_DOWN_FAR = (0.03, 0.02, 0.01, 0.005, 0.002, 0.001, 0.0)
_UP = (1.01, 1.02, 1.05, 1.1, 1.2, 1.3, 1.5, 2.0, 3.0, 5.0, 10.0, 30.0, 100.0, 300.0, 1000.0)
"""The factors of the perturbations: down toward 0 (or 1), and up (unbounded values only)."""

_SHIFTS = (0.01, 0.1, 1.0, 10.0, 100.0)
"""What the shifts add to unbounded values."""


@dataclass(frozen=True)
class _Move:
    """One perturbation, applied to every value of a leaf whose domain it keeps."""

    kind: str
    """``scale`` (``x * factor``), ``shift`` (``x + factor``), ``toward 1``
    (``1 - (1 - x) * factor``), ``mirror`` (``1 - x``), ``reverse`` (the values in reverse
    order along the last axis: a trend over loads or time turned round), and for booleans
    ``not`` and ``all`` (every one ``factor != 0``)."""
    factor: float
    domains: frozenset[str]

    @property
    def name(self) -> str:
        """The perturbation as a formula."""
        if self.kind == "scale":
            return f"x * {self.factor:g}"
        if self.kind == "toward 1":
            return f"1 - (1 - x) * {self.factor:g}"
        if self.kind == "shift":
            return f"x + {self.factor:g}" if self.factor >= 0 else f"x - {-self.factor:g}"
        if self.kind == "reverse":
            return "reversed"
        if self.kind == "all":
            return f"all {bool(self.factor)}"
        return "1 - x" if self.kind == "mirror" else "not x"

    def apply(self, x: np.ndarray) -> np.ndarray:
        """The perturbed values."""
        if self.kind == "scale":
            return x * self.factor
        if self.kind == "toward 1":
            return 1 - (1 - x) * self.factor
        if self.kind == "shift":
            return x + self.factor
        if self.kind == "reverse":
            return np.flip(x, axis=-1) if x.ndim else x
        if self.kind == "all":
            return np.full_like(x, bool(self.factor))
        return 1 - x if self.kind == "mirror" else np.logical_not(x)


def _moves() -> tuple[_Move, ...]:
    every = frozenset(("unit", "non-negative", "signed"))
    unit = frozenset(("unit",))
    truth = frozenset(("bool",))
    found = [_Move("not", 0.0, truth), _Move("all", 1.0, truth), _Move("all", 0.0, truth)]
    for f in (*_DOWN, *_DOWN_FAR):
        found += [_Move("scale", f, every), _Move("toward 1", f, unit)]
    found.append(_Move("mirror", 0.0, unit))
    found += [_Move("scale", f, frozenset(("non-negative", "signed"))) for f in _UP]
    found += [_Move("scale", -f, frozenset(("signed",))) for f in (1.0, 0.5, 2.0, 10.0, 100.0)]
    # A value of 0 does not scale: shifts by decades (their quantity's unit is not known).
    found += [_Move("shift", c, frozenset(("non-negative", "signed"))) for c in _SHIFTS]
    found += [_Move("shift", -c, frozenset(("signed",))) for c in _SHIFTS]
    found.append(_Move("reverse", 0.0, every))
    return tuple(found)


_MOVES = _moves()
"""Every perturbation, in the order they are tried."""


def _domain(values: np.ndarray, beyond_unit: bool = False) -> str | None:
    """``bool``, ``unit`` ([0, 1]), ``non-negative`` or ``signed``; None without a number.

    ``beyond_unit``: values in [0, 1] are taken as non-negative (their quantity is not a
    share).
    """
    if values.dtype == bool:
        return "bool"
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return None
    if finite.min() >= 0.0:
        return "unit" if finite.max() <= 1.0 and not beyond_unit else "non-negative"
    return "signed"


def _numeric(value: Any) -> np.ndarray | None:
    """``value`` as a numeric (or boolean) array when it is a number or an array of them."""
    if isinstance(value, bool | np.bool_):
        return np.asarray(value)
    if isinstance(value, int | float | np.integer | np.floating):
        return np.asarray(value, dtype=float)
    if isinstance(value, np.ndarray) and (value.dtype == bool or value.dtype.kind in "iuf"):
        return value if value.dtype == bool else value.astype(float)
    return None


def _is_frame(value: Any) -> bool:
    """Whether ``value`` is a pandas DataFrame (without importing pandas)."""
    return type(value).__name__ == "DataFrame" and hasattr(value, "select_dtypes")


def _leaves(value: Any, path: Path = ()) -> Iterator[tuple[Path, np.ndarray]]:
    """Every numeric value inside ``value`` with its path, depth first."""
    array = _numeric(value)
    if array is not None:
        yield path, array
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _leaves(item, (*path, key))
    elif isinstance(value, list | tuple):
        numbers = [_numeric(item) for item in value]
        if value and all(n is not None and n.ndim == 0 and n.dtype != bool for n in numbers):
            yield path, np.asarray(value, dtype=float)
        else:
            for index, item in enumerate(value):
                yield from _leaves(item, (*path, index))
    elif _is_frame(value):
        for column in value.select_dtypes(include="number").columns:
            yield (*path, column), value[column].to_numpy(dtype=float)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            if f.init:
                yield from _leaves(getattr(value, f.name), (*path, f.name))


def _replaced(value: Any, path: Path, new: np.ndarray) -> Any:
    """A copy of ``value`` with the value at ``path`` replaced by ``new`` (shallow elsewhere)."""
    if not path:
        if isinstance(value, list | tuple | np.ndarray) or new.ndim > 0:
            return new
        return bool(new) if new.dtype == bool else float(new)
    head, rest = path[0], path[1:]
    if isinstance(value, Mapping):
        copy = dict(value)
        copy[head] = _replaced(value[head], rest, new)
        return copy
    if isinstance(value, list | tuple):
        items = list(value)
        items[head] = _replaced(value[head], rest, new)
        return type(value)(items) if isinstance(value, tuple) else items
    if _is_frame(value):
        frame = value.copy()
        frame[head] = new
        return frame
    return dataclasses.replace(value, **{head: _replaced(getattr(value, head), rest, new)})


_Leaf = tuple[Path, np.ndarray, str]


def _leaf_list(analysis: Analysis, keys: tuple[str, ...] | None, beyond_unit: bool) -> list[_Leaf]:
    """The numeric values under ``keys`` (all when None), with their paths and domains."""
    found = []
    for key in analysis if keys is None else keys:
        for path, values in _leaves(analysis[key], (key,)):
            domain = _domain(values, beyond_unit)
            if domain is not None:
                found.append((path, values, domain))
    return found


def perturbations(
    analysis: Analysis, keys: tuple[str, ...] | None = None, beyond_unit: bool = False
) -> Iterator[tuple[str, Analysis]]:
    """Perturbed copies of ``analysis``, each described in words.

    First every value under ``keys`` (all top-level keys when None) moved together by each
    perturbation (a leaf outside its domain is left as it is), then each value alone.
    ``beyond_unit``: values in [0, 1] may also be scaled up, as non-negative ones are.
    """
    leaves = _leaf_list(analysis, keys, beyond_unit)
    if len(leaves) > 1:
        for move in _MOVES:
            changed = analysis
            for path, values, domain in leaves:
                if domain in move.domains:
                    changed = _replaced(changed, path, _apply(move, values))
            if changed is not analysis:
                yield f"every value it reads -> {move.name}", changed
    for path, values, domain in leaves:
        for move in _MOVES:
            if domain in move.domains:
                yield (
                    f"{_where(path)} -> {move.name}",
                    _replaced(analysis, path, _apply(move, values)),
                )


_PUSH_STEPS = (0.1, 0.5, 0.9, 0.99)
"""How hard :func:`_pushes` pushes: from a tenth of the way to nearly all of it."""

_PATTERNS = 256
"""The most up/down patterns :func:`_pushes` tries (all of them up to 8 values)."""


def _push(values: np.ndarray, domain: str, up: bool, step: float) -> np.ndarray:
    """``values`` pushed up or down by ``step`` (0 to 1) within their domain.

    Down scales toward 0 (``step`` 1: to 0); up moves a share toward 1 and scales anything else
    by up to 1000; signed values are shifted by up to 1000 times their largest magnitude.
    """
    with np.errstate(all="ignore"):
        gain = min(1.0 / (1.0 - step), 1000.0) if step < 1.0 else 1000.0
        if domain == "signed":
            size = float(np.nanmax(np.abs(values))) or 1.0
            return values + (1.0 if up else -1.0) * (gain - 1.0) * size
        if not up:
            return values * (1.0 - step)
        if domain == "unit":
            return 1 - (1 - values) * (1.0 - step)
        return values * gain


def _pushes(analysis: Analysis, leaves: list[_Leaf]) -> Iterator[tuple[str, Analysis]]:
    """The values pushed apart: some up and the others down, at growing steps.

    For a measure that sets its values against one another (TFRC's CoV minus the larger of
    TCP's and GAIMD's, at two loss rates), moving every value alike or one alone cannot move
    it. Every pattern of up and down is tried for up to 8 values (in a fixed pseudo-random
    sample of :data:`_PATTERNS` beyond), each at the steps of :data:`_PUSH_STEPS`.
    """
    leaves = [leaf for leaf in leaves if leaf[2] != "bool"]
    n = len(leaves)
    if n < 2:
        return
    if 2**n <= _PATTERNS:
        patterns = [tuple(p) for p in itertools.product((True, False), repeat=n)]
    else:
        draws = np.random.default_rng(0).integers(0, 2, size=(_PATTERNS, n)).astype(bool)
        patterns = [tuple(bool(u) for u in row) for row in draws]
    patterns = [p for p in patterns if any(p) and not all(p)]  # alike: tried before
    for step in _PUSH_STEPS:
        for pattern in patterns:
            changed = analysis
            for (path, values, domain), up in zip(leaves, pattern, strict=True):
                changed = _replaced(changed, path, _push(values, domain, up, step))
            ups = [_where(path) for (path, _v, _d), up in zip(leaves, pattern, strict=True) if up]
            yield f"{', '.join(ups)} pushed up and the rest down (step {step:g})", changed


def _where(path: Path) -> str:
    """``analysis['a'][0]`` for the path ``('a', 0)``."""
    return "analysis" + "".join(f"[{part!r}]" for part in path)


def _measure(claim: Claim, analysis: Analysis) -> Measurement | None:
    """``claim``'s measurement of ``analysis``; None when contrary data breaks the measure."""
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            # Contrary data may leave a measure an empty or all-NaN slice: said, not news.
            warnings.simplefilter("ignore", RuntimeWarning)
            return claim.measure(analysis)
    except (ArithmeticError, ValueError, TypeError, KeyError, IndexError):
        return None


def _apply(move: _Move, values: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return move.apply(values)


class _Recording(Mapping[str, Any]):
    """A read-only view of an analysis that records which top-level keys were read."""

    def __init__(self, analysis: Analysis) -> None:
        self._analysis = analysis
        self.read: list[str] = []

    def __getitem__(self, key: str) -> Any:
        value = self._analysis[key]
        if key not in self.read:
            self.read.append(key)
        return value

    def __iter__(self) -> Iterator[str]:
        self.read.extend(k for k in self._analysis if k not in self.read)
        return iter(self._analysis)

    def __len__(self) -> int:
        return len(self._analysis)


@dataclass(frozen=True)
class Contrary:
    """What contrary data does to a claim's verdict."""

    reads: tuple[str, ...]
    """The top-level keys of the analysis the claim's measure read."""
    by: str | None
    """The perturbation that moved the verdict; None when none did."""
    verdict: str | None
    """The verdict under that perturbation; None when none moved it."""
    tried: int
    """How many perturbations were tried."""

    @property
    def can_fail(self) -> bool:
        """Whether some contrary data gives the claim another verdict."""
        return self.by is not None

    def as_dict(self) -> dict[str, Any]:
        """The check as JSON-ready values (``claims.json``'s ``contrary``)."""
        return {
            "can_fail": self.can_fail,
            "by": self.by,
            "verdict": self.verdict,
            "reads": list(self.reads),
            "tried": self.tried,
            "summary": self.describe(),
        }

    def describe(self) -> str:
        """One line for the reports."""
        if self.by is not None:
            return f"{self.verdict} with {self.by}"
        if not self.reads:
            return "reads nothing of the runs: computed without them"
        return f"no verdict moved by {self.tried} perturbations of {', '.join(self.reads)}"


def contrary(claim: Claim, analysis: Analysis, result: ClaimResult | None = None) -> Contrary:
    """The first perturbation of ``analysis`` that gives ``claim`` another verdict.

    ``result``: the claim's verdict on ``analysis`` when already decided (else it is).
    """
    recording = _Recording(analysis)
    measured = claim.measure(recording)
    verdict = (result if result is not None else judge(claim, measured)).verdict
    reads = tuple(recording.read)
    low, high = claim.accept
    beyond_unit = low < 0.0 or high > 1.0
    candidates = itertools.chain(
        perturbations(analysis, reads, beyond_unit),
        _pushes(analysis, _leaf_list(analysis, reads, beyond_unit)),
    )
    tried = 0
    for name, perturbed in candidates:
        tried += 1
        m = _measure(claim, perturbed)
        if m is None or math.isnan(m.mean):
            continue
        moved = judge(claim, m)
        if moved.verdict not in (verdict, "not comparable"):
            return Contrary(reads, name, moved.verdict, tried)
    return Contrary(reads, None, None, tried)
