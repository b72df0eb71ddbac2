"""The experiment registry: every reproduction ``tfrclab reproduce`` knows, by id.

An :class:`Experiment` is one figure or table of a paper (``floyd2000/fig09``): its scenario
file(s) under ``scenarios/papers/<paper>/``, how it is run in full and with ``--quick``
(:class:`Plan`), the metrics it reports, its claims (:mod:`tfrclab.reproduce.claims`), how its
runs become an analysis, and how its figure is drawn. The experiments themselves are defined per
paper (:mod:`tfrclab.reproduce.floyd2000`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from tfrclab.reproduce.claims import Analysis, Claim
from tfrclab.reproduce.sensitivity import Unstated

__all__ = ["Experiment", "Plan", "experiments", "registry", "scenario_path"]


@dataclass(frozen=True)
class Plan:
    """How to run an experiment: the seeds and the changes made to its scenario(s)."""

    seeds: tuple[int, ...]
    changes: Mapping[str, Any] = field(default_factory=dict)
    """Scenario changes (``path = value`` as ``--set`` takes them), e.g. a shorter duration."""
    duration_s: float | None = None
    """For experiments without a scenario file (the scripted channel): the simulated time."""
    trace: tuple[str, ...] = ()
    """Agent state trace fields the sweep keeps per bin in ``flow_series``
    (:class:`tfrclab.sweep.Grid`'s ``trace``), for analyses that read the protocols' own
    estimates."""

    def describe(self) -> str:
        """One line: the seeds and the changes."""
        seeds = self.seeds
        shown = (
            f"seed {seeds[0]}" if len(seeds) == 1 else f"{len(seeds)} seeds {seeds[0]}-{seeds[-1]}"
        )
        parts = [shown, *(f"{k} = {v}" for k, v in self.changes.items())]
        if self.duration_s is not None:
            parts.append(f"duration = {self.duration_s:g}s")
        return ", ".join(parts)


@dataclass(frozen=True)
class Experiment:
    """One figure or table of a paper, its runs and its claims."""

    id: str
    """``<paper>/<figure>``, e.g. ``floyd2000/fig09``."""
    title: str
    setup: str
    """The setup in a sentence or two, with the parameters the paper does not give."""
    kind: Literal["sweep", "channel", "testbed", "ns2"]
    """``sweep``: the scenario files are run with :func:`tfrclab.sweep.run_sweep` over the
    plan's seeds; ``channel``: :func:`tfrclab.channel.run_channel`, no scenario file;
    ``testbed``: real stacks on the link-emulator testbed (:mod:`tfrclab.testbed`), run by
    ``analyze``, which is given the experiment's directory for its runs (root only); ``ns2``:
    the scenario files in netsim and in ns-2.35, run by ``analyze`` likewise."""
    scenarios: tuple[str, ...]
    """Scenario files relative to ``scenarios/papers`` (``floyd2000/fig09.toml``)."""
    cells: tuple[tuple[str, str, Mapping[str, Any]], ...]
    """For experiments of several scenarios (a table): ``(label, scenario file, changes)`` per
    cell, each run as its own sweep; empty for one scenario (``scenarios[0]``)."""
    full: Plan
    quick: Plan
    metrics: tuple[str, ...]
    """The metrics reported, by their :mod:`tfrclab.metrics` names."""
    claims: tuple[Claim, ...]
    analyze: Callable[[Any, Plan], Analysis] = field(repr=False, compare=False)
    """Turns the runs into the named values the claims and the figure read. It is given a
    :class:`tfrclab.reproduce.runner.SweepData` for a one-scenario sweep, a dict of them by
    cell label with ``cells``, ``None`` for the channel and the experiment's directory (a
    :class:`~pathlib.Path`) for the testbed."""
    plot: Callable[[Analysis, Path], Path] = field(repr=False, compare=False)
    """Draws the figure with the paper's axes into the PNG at the given path."""
    seeded: bool = False
    """For an experiment that is not a sweep: whether ``analyze`` makes one run per seed of the
    plan it is given, so that the runner can add seeds while a claim is inconclusive, as it
    does for sweeps (:attr:`extendable`)."""
    runs_of: str | None = None
    """The id of another experiment whose sweeps this one reads (the paper plots the same runs
    in several figures: Table 25's runs are Figs. 14, 24, 26 and 27). Its cells must be some of
    that experiment's cells and its plans the same, so the runs are made once and reused."""
    unstated: tuple[Unstated, ...] = ()
    """Parameters the paper leaves unstated that the reproduction had to choose, each with its
    plausible range: the runner measures every claim at each value of the range
    (:mod:`tfrclab.reproduce.sensitivity`). Sweep experiments only. An experiment reading
    another's runs (``runs_of``) shares that one's runs at each value when it declares the same
    parameter."""
    referee_drops: bool = False
    """Whether the analysis reads each flow's packet loss or loss events, which ns-2.35's runs
    under ``--referee ns2`` then print as a trace of every drop at the primary link
    (:func:`tfrclab.reproduce.referee.ns2_sweep_data`). Off elsewhere: the trace changes the
    script, so it would make every cached ns-2 output stale."""
    referee_state: tuple[str, ...] = ()
    """Scenario flow entries (their ``name``) whose protocol state the analysis reads from the
    state trace (a TFRC receiver's 1/theta_hat samples, a sender's RTT and RTO): ns-2.35's runs
    under ``--referee ns2`` then print what its agents expose of it
    (:mod:`tfrclab.ns2.export.agent_state`). Empty elsewhere, for the same reason as
    ``referee_drops``."""

    def __post_init__(self) -> None:
        if self.unstated and self.kind != "sweep":
            raise ValueError(
                f"{self.id}: unstated parameters need a sweep experiment (its cells are run "
                f"again at each value), not a {self.kind} one"
            )
        for knob, value in (
            ("referee_drops", self.referee_drops),
            ("referee_state", self.referee_state),
        ):
            if value and self.kind != "sweep":
                raise ValueError(
                    f"{self.id}: {knob} needs a sweep experiment, not a {self.kind} one"
                )
        names = [p.name for p in self.unstated]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.id}: unstated parameters repeat a name: {names}")

    @property
    def paper(self) -> str:
        """The paper id, e.g. ``floyd2000``."""
        return self.id.split("/", 1)[0]

    @property
    def extendable(self) -> bool:
        """Whether seeds can be added to its plan: a sweep, or a ``seeded`` experiment."""
        return self.kind == "sweep" or self.seeded

    def plan(self, quick: bool) -> Plan:
        """The ``--quick`` or the full plan."""
        return self.quick if quick else self.full


def scenario_path(relative: str) -> Path:
    """The path of a paper scenario file shipped in the package (``floyd2000/fig09.toml``)."""
    return Path(str(resources.files("tfrclab") / "scenarios" / "papers" / relative))


_MODULES = (
    "floyd2000",
    "floyd2000_fairness",
    "floyd2000_dynamics",
    "floyd2000_testbed",
    "yang2001",
    "hassan",
    "berumen",
    "rhee2005",
    "rhee2005_theory",
    "rhee2005_ns2",
)
"""The modules of ``tfrclab.reproduce`` that register experiments (each an ``EXPERIMENTS``
tuple), in catalogue order."""


def registry() -> tuple[Experiment, ...]:
    """Every registered experiment, in catalogue order."""
    import importlib

    found: list[Experiment] = []
    for name in _MODULES:
        found.extend(importlib.import_module(f"tfrclab.reproduce.{name}").EXPERIMENTS)
    return tuple(found)


def experiments(selectors: Sequence[str] = ()) -> list[Experiment]:
    """The experiments a list of paper ids and experiment ids names (all when empty), in order.

    Raises:
        ValueError: naming a selector that matches nothing.
    """
    known = registry()
    if not selectors:
        return list(known)
    chosen: list[Experiment] = []
    for selector in selectors:
        name = selector.strip().rstrip("/")
        matched = [e for e in known if name in (e.id, e.paper)]
        if not matched:
            ids = ", ".join(e.id for e in known)
            raise ValueError(f"no experiment or paper {selector!r}; known: {ids}")
        chosen.extend(e for e in matched if e not in chosen)
    return chosen
