"""Sensitivity rows: each claim across the plausible range of a parameter its paper leaves unstated.

A paper rarely gives every value its simulations used (a buffer, a link rate, a random delay);
a reproduction has to choose them, and a chosen value can decide a verdict. An experiment
declares each such parameter as an :class:`Unstated`: its name, the value chosen and why, a few
values spanning the plausible range (the chosen one among them), and how a value is applied to
the experiment's cells (scenario changes, ``path = value`` as ``--set`` takes them).

The runner (:func:`tfrclab.reproduce.runner.run_experiment`) then runs the experiment's cells
again at every other value, on the plan and seeds the verdict was decided on (no seeds are added
here), and measures every claim there with its own ``measure``, judged against its own tolerance
(:func:`tfrclab.reproduce.claims.judge`, as the main verdict; an analysis or a measure that
cannot be taken on a value's runs gives "not comparable", as for the ns-2.35 referee). A cell the
parameter leaves unchanged is not run again: its runs are the verdict's own. The chosen value's
row is the main verdict itself.

A claim is **decided** by the parameter when it holds at some value of the range and fails at
another; its verdict **moves** when the verdicts differ in any way (one holds, another is
inconclusive). The reports show, per claim, each value with the claim's value and verdict, and
count per paper how many claims an unstated parameter decides.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from tfrclab.reproduce.claims import Analysis, ClaimResult, Measurement, Verdict, judge

if TYPE_CHECKING:
    from tfrclab.reproduce.registry import Experiment, Plan

__all__ = [
    "Sensitivity",
    "SensitivityRow",
    "Unstated",
    "varied",
    "vary",
]

Cell = tuple[str, str, Mapping[str, Any]]
"""A cell of an experiment: its label, its scenario file and its scenario changes."""

Apply = Callable[[Any, Cell], Mapping[str, Any] | None]
"""How a value reaches a cell: the cell's complete scenario changes at that value, or None when
the parameter does not touch the cell (its runs are then the verdict's own)."""

_VALUE_TEXT = re.compile(r"^[A-Za-z0-9._+-]+$")
_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")


@dataclass(frozen=True)
class Unstated:
    """A parameter the paper leaves unstated: the value chosen, why, and its plausible range."""

    name: str
    """A short name (lower case, digits and ``-``): the parameter's directory names and JSON key,
    e.g. ``buffer``."""
    what: str
    """What it is, in words (e.g. ``the bottleneck queue's limit, packets``)."""
    chosen: Any
    """The value the reproduction uses (its scenarios' own)."""
    why: str
    """Why that value was chosen."""
    values: tuple[Any, ...]
    """A few values spanning the plausible range, in order, the chosen one among them."""
    apply: Apply = field(repr=False, compare=False)
    """The cell's scenario changes at a value (:data:`Apply`). The chosen value is never run
    again; ``apply`` at it must give the scenario the cell already runs (the tests check every
    registered declaration against the scenario files)."""

    def __post_init__(self) -> None:
        if not _NAME.match(self.name):
            raise ValueError(f"unstated parameter name {self.name!r}: use a-z, 0-9 and -")
        if self.chosen not in self.values:
            raise ValueError(
                f"unstated parameter {self.name}: the chosen value {self.chosen!r} is not among "
                f"its values {list(self.values)}"
            )
        if len(self.values) < 2:
            raise ValueError(f"unstated parameter {self.name}: give at least two values")
        shown = [self.text(v) for v in self.values]
        if len(set(shown)) != len(shown):
            raise ValueError(f"unstated parameter {self.name}: values repeat: {shown}")
        for text in shown:
            if not _VALUE_TEXT.match(text):
                raise ValueError(
                    f"unstated parameter {self.name}: value {text!r} must be written with "
                    "letters, digits and . _ + - (it names a directory)"
                )

    @staticmethod
    def text(value: Any) -> str:
        """A value as the reports and directory names write it (``50``, ``1.5Mbps``)."""
        return f"{value:g}" if isinstance(value, float) else str(value)

    @property
    def others(self) -> tuple[Any, ...]:
        """The values other than the chosen one: those run again."""
        return tuple(v for v in self.values if v != self.chosen)

    def changes(self, value: Any, cell: Cell) -> Mapping[str, Any] | None:
        """The cell's scenario changes at ``value``; None when the cell is left as it is.

        None at the chosen value, and where ``apply`` gives None or the cell's own changes.
        """
        if value == self.chosen:
            return None
        changed = self.apply(value, cell)
        if changed is None or dict(changed) == dict(cell[2]):
            return None
        return changed

    def directory(self, value: Any) -> str:
        """The directory name of a value's runs: ``<name>-<value>``."""
        return f"{self.name}-{self.text(value)}"

    def as_dict(self) -> dict[str, Any]:
        """The declaration as JSON-ready values."""
        return {
            "name": self.name,
            "what": self.what,
            "chosen": self.chosen,
            "why": self.why,
            "values": list(self.values),
        }


def varied(
    experiment: Experiment, parameter: Unstated, value: Any, plan: Plan
) -> tuple[Experiment, Plan, frozenset[str]]:
    """``experiment`` and ``plan`` at ``value`` of ``parameter``, and the labels it changes.

    With cells, the experiment's changed cells carry the value's changes; without, the plan's
    changes do (the one scenario's label is ``""``). The labels are those of the cells whose
    changes differ from their own; none for the chosen value.
    """
    if experiment.cells:
        cells: list[Cell] = []
        changed: set[str] = set()
        for cell in experiment.cells:
            new = parameter.changes(value, cell)
            if new is not None:
                changed.add(cell[0])
            cells.append(cell if new is None else (cell[0], cell[1], dict(new)))
        return replace(experiment, cells=tuple(cells)), plan, frozenset(changed)
    new = parameter.changes(value, ("", experiment.scenarios[0], {}))
    if new is None:
        return experiment, plan, frozenset()
    return experiment, replace(plan, changes={**new, **plan.changes}), frozenset({""})


@dataclass(frozen=True)
class SensitivityRow:
    """One claim at every value of one unstated parameter's range."""

    parameter: Unstated
    values: tuple[tuple[Any, ClaimResult], ...]
    """Per value of the range, in order, the claim's result there (the chosen value's is the
    main verdict)."""

    @property
    def verdicts(self) -> tuple[Verdict, ...]:
        """The verdict at each value, in order."""
        return tuple(r.verdict for _v, r in self.values)

    @property
    def decided(self) -> bool:
        """Whether the parameter decides the claim: it holds at one value and fails at another."""
        return "holds" in self.verdicts and "fails" in self.verdicts

    @property
    def reached(self) -> bool:
        """Whether the claim's value differs somewhere in the range.

        Not when it has the very same value at every value: it reads only cells the parameter
        leaves as they are, or a number the changes did not move (a count of signs).
        """
        first = self.values[0][1].measured
        return any(
            not _same(r.measured.mean, first.mean) or not _same(r.measured.half, first.half)
            for _v, r in self.values[1:]
        )

    @property
    def moves(self) -> bool:
        """Whether the verdict differs anywhere in the range (decided, or through inconclusive)."""
        return len(set(self.verdicts)) > 1

    def summary(self) -> str:
        """One line: the verdict at each value, and whether the parameter decides the claim.

        E.g. ``decided by the unstated buffer: holds at 50, fails at 100``.
        """
        p = self.parameter
        by_verdict: dict[Verdict, list[str]] = {}
        for value, r in self.values:
            by_verdict.setdefault(r.verdict, []).append(p.text(value))
        where = ", ".join(f"{v} at {', '.join(at)}" for v, at in by_verdict.items())
        if self.decided:
            return f"decided by the unstated {p.name}: {where}"
        if self.moves:
            return f"moves with the unstated {p.name}: {where}"
        every = ", ".join(p.text(v) for v, _ in self.values)
        if not self.reached:
            return f"{self.verdicts[0]}, the same value at every {p.name} ({every})"
        return f"{self.verdicts[0]} at every {p.name} ({every})"

    def as_dict(self) -> dict[str, Any]:
        """The row as JSON-ready values (a claim's ``sensitivity`` entry in claims.json)."""
        return {
            "parameter": self.parameter.name,
            "chosen": self.parameter.chosen,
            "decided": self.decided,
            "moves": self.moves,
            "reached": self.reached,
            "summary": self.summary(),
            "values": [
                {
                    "value": value,
                    "chosen": value == self.parameter.chosen,
                    **r.measured.as_dict(),
                    "verdict": r.verdict,
                    "reason": r.reason,
                }
                for value, r in self.values
            ],
        }


@dataclass(frozen=True)
class Sensitivity:
    """An experiment's claims across one unstated parameter's range, and what it cost."""

    parameter: Unstated
    rows: tuple[SensitivityRow, ...]
    """Per claim, in the order of the experiment's claims."""
    runs: int
    """The runs the range adds: per other value, the cells it changes times the seeds."""
    changed: tuple[tuple[Any, tuple[str, ...]], ...]
    """Per other value, the labels of the cells it changes."""
    shared_with: str | None = None
    """The experiment whose runs these are (``runs_of``), when they are shared."""

    def describe(self) -> str:
        """One line for the reports: the parameter, the choice, the range and the runs."""
        p = self.parameter
        shown = ", ".join(p.text(v) + (" (chosen)" if v == p.chosen else "") for v in p.values)
        runs = f"{self.runs} extra runs"
        if self.shared_with:
            runs += f", shared with {self.shared_with}"
        return f"{p.name}: {p.what}; chosen {p.text(p.chosen)}: {p.why}; range {shown} ({runs})"

    def as_dict(self) -> dict[str, Any]:
        """The parameter, its range and its cost as JSON-ready values.

        An experiment's ``unstated`` entry in claims.json.
        """
        return {
            **self.parameter.as_dict(),
            "extra_runs": self.runs,
            "changed_cells": {self.parameter.text(v): list(c) for v, c in self.changed},
            "shared_with": self.shared_with,
        }


RunValue = Callable[["Experiment", "Plan", Any, frozenset[str]], Any]
"""Runs (or reads back) the sweeps of an experiment at a value and returns their data, given the
experiment and plan at the value, the value and the labels of the cells it changes (the
runner's, with its caching and progress)."""


def vary(
    experiment: Experiment,
    parameter: Unstated,
    plan: Plan,
    results: Sequence[ClaimResult],
    run_value: RunValue,
) -> Sensitivity:
    """Every claim of ``experiment`` at every value of ``parameter``'s range.

    ``results`` are the verdict's results (the chosen value's row), ``plan`` the plan they were
    decided on; ``run_value`` makes the runs at another value and returns their data, which the
    experiment's own ``analyze`` reads. See the module documentation.
    """
    from tfrclab.reproduce.referee import analyze_or_error, measure_or_nan

    per_value: dict[Any, tuple[ClaimResult, ...]] = {}
    changed: list[tuple[Any, tuple[str, ...]]] = []
    runs = 0
    for value in parameter.others:
        variant, variant_plan, labels = varied(experiment, parameter, value, plan)
        if not labels:
            raise ValueError(
                f"{experiment.id}: unstated parameter {parameter.name} = "
                f"{parameter.text(value)} changes none of its cells"
            )
        changed.append((value, tuple(sorted(labels))))
        runs += len(labels) * len(plan.seeds)
        data = run_value(variant, variant_plan, value, labels)
        analysis, error = analyze_or_error(variant, data, variant_plan)
        per_value[value] = tuple(_judged(r, analysis, error, measure_or_nan) for r in results)
    rows = tuple(
        SensitivityRow(
            parameter,
            tuple(
                (value, r if value == parameter.chosen else per_value[value][k])
                for value in parameter.values
            ),
        )
        for k, r in enumerate(results)
    )
    return Sensitivity(parameter, rows, runs, tuple(changed), experiment.runs_of)


def _same(a: float, b: float) -> bool:
    """Whether two numbers are the same (NaN the same as NaN)."""
    return a == b or (math.isnan(a) and math.isnan(b))


def _judged(
    main: ClaimResult,
    analysis: Analysis | None,
    error: str,
    measure: Callable[[Any, Any], Measurement],
) -> ClaimResult:
    """A claim's result on a value's analysis (not comparable when there is none)."""
    if analysis is None:
        nothing = Measurement(math.nan, math.nan, 0, f"analysis failed: {error}")
        return judge(main.claim, nothing)
    return judge(main.claim, measure(main.claim, analysis))
