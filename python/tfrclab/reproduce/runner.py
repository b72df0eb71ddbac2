"""Running experiments: their sweeps (resumable), their analysis, claims and figures.

A sweep experiment's runs go through :func:`tfrclab.sweep.run_sweep` with per-bin series kept,
into ``DIR/<paper>/<figure>/sweep`` (``sweep-quick`` with ``--quick``), so an interrupted
reproduction picks up where it stopped and a second one reuses every finished run. The analysis
reads the sweep's datasets back, so it is the same whether the runs were made now or before.

Seeds are added sequentially while a claim is ``inconclusive`` (its 95% interval crosses an edge
of its tolerance, :mod:`tfrclab.reproduce.claims`): a sweep experiment whose claims are not all
decided on the plan's seeds runs as many seeds again (the next seeds after the plan's largest),
re-evaluates every claim on all of them, and repeats until no claim is inconclusive or the
seeds reach :data:`SEED_CAP` times the plan's number. The verdicts reported are those on the
last set of seeds, which the report's plan line states. ``--quick`` plans are not extended (they
are smoke tests): their inconclusive claims stay so. Channel, testbed and ns-2 experiments are
extended only when they make one run per seed of their plan
(:attr:`~tfrclab.reproduce.registry.Experiment.seeded`, as rhee2005's load sweeps and ns-2
runs do); the others run one deterministic case or a fixed set of runs.

An experiment's unstated parameters (:attr:`~tfrclab.reproduce.registry.Experiment.unstated`)
are then run across their plausible ranges, on the plan the verdicts were decided on, into
``sensitivity/<name>-<value>`` beside the sweep's directory (``sensitivity-quick``), and every
claim is judged at each value (:mod:`tfrclab.reproduce.sensitivity`); by default for full plans
only.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tfrclab.reproduce.claims import VERDICTS, Analysis, ClaimResult, evaluate
from tfrclab.reproduce.falsify import Contrary, contrary
from tfrclab.reproduce.registry import Experiment, Plan, scenario_path
from tfrclab.reproduce.sensitivity import Sensitivity, SensitivityRow, Unstated, vary

if TYPE_CHECKING:
    from tfrclab.reproduce.referee import RefereeResult
    from tfrclab.sweep import Executor

__all__ = ["SEED_CAP", "Outcome", "SweepData", "experiment_dir", "extended_plan", "run_experiment"]

Progress = Callable[[str], None]

SEED_CAP = 4
"""The most seeds a full plan is extended to, as a multiple of its own number of seeds (a plan
of 10 seeds runs at most 40 while a claim stays inconclusive)."""


@dataclass(frozen=True)
class SweepData:
    """A sweep experiment's datasets (:mod:`tfrclab.sweep`), read back from its directory."""

    runs: Any
    classes: Any
    links: Any
    flow_series: Any
    link_series: Any
    """Per-bin series of the binned links (queue, drops, utilization per bin)."""
    bin_s: float


@dataclass(frozen=True)
class Outcome:
    """What one experiment gave: its plan, claim results, figure and wall time."""

    experiment: Experiment
    quick: bool
    plan: Plan
    """The plan the claims were decided on: the registry's, with the seeds added while a claim
    was inconclusive (:data:`SEED_CAP`)."""
    results: tuple[ClaimResult, ...]
    figure: Path
    wall_s: float
    analysis: Analysis
    planned_seeds: int = 0
    """How many seeds the registry's plan has (0: as many as :attr:`plan`)."""
    seed_cap: int = 1
    """The most seeds the run could reach, as a multiple of the planned ones."""
    contraries: tuple[Contrary | None, ...] = ()
    """Per claim (in the order of :attr:`results`), the verdict contrary data would give it
    (:func:`tfrclab.reproduce.falsify.contrary`); None for a claim that is not comparable."""
    referee: tuple[RefereeResult, ...] = ()
    """Per claim (in the order of :attr:`results`), ns-2.35's value of its measure on the same
    scenarios and seeds and their agreement (:mod:`tfrclab.reproduce.referee`); empty when the
    run had no referee."""
    sensitivity: tuple[Sensitivity, ...] = ()
    """Per unstated parameter of the experiment, every claim across its plausible range
    (:mod:`tfrclab.reproduce.sensitivity`); empty when the ranges were not run (``--quick``
    by default, or ``--no-sensitivity``)."""

    def rows_of(self, index: int) -> tuple[SensitivityRow, ...]:
        """The ``index``-th claim's sensitivity rows, one per unstated parameter run."""
        return tuple(s.rows[index] for s in self.sensitivity)

    def referee_of(self, index: int) -> RefereeResult | None:
        """ns-2.35's result for the ``index``-th claim; None without a referee."""
        return self.referee[index] if index < len(self.referee) else None

    @property
    def differing(self) -> tuple[tuple[ClaimResult, RefereeResult], ...]:
        """The claims whose measure tfrclab and ns-2.35 differ on, with ns-2's result."""
        found = []
        for k, r in enumerate(self.results):
            ref = self.referee_of(k)
            if ref is not None and ref.agreement == "differ":
                found.append((r, ref))
        return tuple(found)

    def contrary_of(self, index: int) -> Contrary | None:
        """The contrary-data check of the ``index``-th claim; None when it was not made."""
        return self.contraries[index] if index < len(self.contraries) else None

    def contrary_for(self, claim_id: str) -> Contrary | None:
        """The contrary-data check of the claim ``claim_id``; None when it was not made.

        Raises:
            KeyError: naming a claim the experiment does not have.
        """
        for k, r in enumerate(self.results):
            if r.claim.id == claim_id:
                return self.contrary_of(k)
        raise KeyError(f"{self.experiment.id} has no claim {claim_id!r}")

    @property
    def unmoved(self) -> tuple[tuple[ClaimResult, Contrary], ...]:
        """The claims whose verdict no perturbation of the runs moved, with the check."""
        found = []
        for k, r in enumerate(self.results):
            c = self.contrary_of(k)
            if c is not None and not c.can_fail:
                found.append((r, c))
        return tuple(found)

    @property
    def added_seeds(self) -> int:
        """How many seeds were added to the registry's plan (0 when none were)."""
        return len(self.plan.seeds) - self.planned_seeds if self.planned_seeds else 0

    def describe_plan(self) -> str:
        """The plan line of the reports: the seeds run, and how many were added."""
        line = self.plan.describe()
        if self.added_seeds:
            line += (
                f" ({self.planned_seeds} planned, {self.added_seeds} added while a claim was "
                f"inconclusive; cap {self.seed_cap}x)"
            )
        return line

    def as_dict(self) -> dict[str, Any]:
        """The outcome as JSON-ready values (the analysis is left out)."""
        e = self.experiment
        counts = dict.fromkeys(VERDICTS, 0)
        for r in self.results:
            counts[r.verdict] += 1
        return {
            "id": e.id,
            "paper": e.paper,
            "title": e.title,
            "setup": e.setup,
            "quick": self.quick,
            "plan": self.describe_plan(),
            "seeds": len(self.plan.seeds),
            "planned_seeds": self.planned_seeds or len(self.plan.seeds),
            "scenarios": list(e.scenarios),
            "metrics": list(e.metrics),
            "figure": self.figure.name,
            "wall_s": self.wall_s,
            "counts": counts,
            **self._unstated(),
            "claims": [
                {
                    **r.as_dict(),
                    "contrary": _as_dict(self.contrary_of(k)),
                    **self._ns2(k),
                    **self._rows(k),
                }
                for k, r in enumerate(self.results)
            ],
        }

    def _unstated(self) -> dict[str, Any]:
        """The ``unstated`` entry of the experiment's record: only when its ranges were run."""
        if not self.sensitivity:
            return {}
        return {"unstated": [s.as_dict() for s in self.sensitivity]}

    def _rows(self, index: int) -> dict[str, Any]:
        """The ``sensitivity`` entry of a claim's record: only when the ranges were run."""
        if not self.sensitivity:
            return {}
        return {"sensitivity": [row.as_dict() for row in self.rows_of(index)]}

    def _ns2(self, index: int) -> dict[str, Any]:
        """The ``ns2`` entry of a claim's record: only in a run with the referee."""
        ref = self.referee_of(index)
        return {} if ref is None else {"ns2": ref.as_dict()}


def _as_dict(c: Contrary | None) -> dict[str, Any] | None:
    return None if c is None else c.as_dict()


def experiment_dir(out: Path, experiment: Experiment) -> Path:
    """Where an experiment's files go: ``out/<paper>/<figure>``."""
    return out.joinpath(*experiment.id.split("/"))


def _run_sweep(
    label: str,
    relative: str,
    changes: dict[str, Any],
    plan: Plan,
    directory: Path,
    jobs: int,
    progress: Progress,
    executor: Executor = "local",
    scheduler: str | None = None,
) -> SweepData:
    from tfrclab.scenario import Scenario
    from tfrclab.sweep import Grid, load, run_sweep

    scenario = Scenario.load(scenario_path(relative))
    if changes:
        scenario = scenario.with_(**changes)
    grid = Grid(scenario, vary=(), seeds=plan.seeds, series=True, trace=plan.trace)
    done = [0]

    def on_start(remaining: int, total: int) -> None:
        done[0] = total - remaining
        progress(f"{label}: {remaining} of {total} runs to do")

    def on_done(task: Any) -> None:
        done[0] += 1
        progress(f"{label}: run {done[0]}/{len(plan.seeds)} (seed {task.seed}) done")

    def on_repair(path: Path, reason: str) -> None:
        progress(f"{label}: repairing: {path} is {reason}; its batch's runs run again")

    # A pool of worker processes costs seconds to start (spawn): not worth it for one run.
    workers = min(jobs, len(plan.seeds))
    run_sweep(
        grid,
        directory,
        extend=True,  # the seeds a claim needed before (SEED_CAP) stay there, for reuse
        jobs=workers,
        executor=executor if workers > 1 or scheduler is not None else "local",
        scheduler=scheduler,
        on_start=on_start,
        on_done=on_done,
        on_repair=on_repair,
    )
    data = SweepData(
        runs=load(directory, "runs"),
        classes=load(directory, "classes"),
        links=load(directory, "links"),
        flow_series=load(directory, "flow_series"),
        link_series=load(directory, "link_series"),
        bin_s=scenario.bin_s,
    )
    _check_seeds(data, plan.seeds, directory)
    return data


def _check_seeds(data: SweepData, seeds: tuple[int, ...], directory: Path) -> None:
    """Refuse datasets that do not hold every seed of the plan, and only those.

    The sweep reruns a batch whose files are missing or truncated (their footers are checked
    when it resumes, :func:`tfrclab.sweep_store.finished_runs`); a file damaged in a way its
    footer does not show could still leave a dataset short of a seed, and the claims would then
    be measured on fewer seeds than the report states.

    Raises:
        ValueError: naming the dataset and the seeds it lacks.
    """
    wanted = set(seeds)
    for name in ("runs", "classes", "links", "flow_series", "link_series"):
        frame = getattr(data, name)
        found = {int(seed) for seed in frame["seed"].unique()} if len(frame) else set()
        if found != wanted:
            missing = sorted(wanted - found)
            extra = sorted(found - wanted)
            raise ValueError(
                f"{directory}: the {name} dataset lacks seeds {missing}"
                + (f" and holds others {extra}" if extra else "")
                + f" of the plan's {len(seeds)}: a damaged batch file; remove {directory} to "
                "rerun its runs"
            )


def _cell_runs(
    relative: str,
    changes: dict[str, Any],
    seeds: tuple[int, ...],
    directory: Path,
    trace: tuple[str, ...] = (),
) -> list[tuple[Path, str]]:
    """Run one cell's sweep in this process (a worker of :func:`_run_cells_in_parallel`).

    Returns the damaged files that were repaired, with what was wrong with each.
    """
    from tfrclab.scenario import Scenario
    from tfrclab.sweep import Grid, run_sweep

    scenario = Scenario.load(scenario_path(relative))
    if changes:
        scenario = scenario.with_(**changes)
    grid = Grid(scenario, vary=(), seeds=seeds, series=True, trace=trace)
    repaired: list[tuple[Path, str]] = []
    run_sweep(
        grid,
        directory,
        jobs=1,
        extend=True,
        on_repair=lambda path, why: repaired.append((path, why)),
    )
    return repaired


def _run_cells_in_parallel(
    experiment: Experiment,
    plan: Plan,
    directory: Path,
    jobs: int,
    progress: Progress,
    cell_dirs: Mapping[str, Path],
) -> None:
    """Run the cells' sweeps side by side, one cell per worker process.

    For experiments of many cells and few seeds: one pool for the whole experiment instead of
    one per cell, whose start-up (spawned interpreters) would cost more than the runs.
    """
    import concurrent.futures as cf

    from tfrclab._process import worker_pool

    workers = min(jobs, len(experiment.cells))
    with worker_pool(workers) as pool:
        futures = {
            pool.submit(
                _cell_runs,
                relative,
                {**cell, **plan.changes},
                plan.seeds,
                cell_dirs.get(label, directory / label),
                plan.trace,
            ): label
            for label, relative, cell in experiment.cells
        }
        try:
            for done, future in enumerate(cf.as_completed(futures), start=1):
                for path, reason in future.result():
                    progress(f"{experiment.id} {futures[future]}: repaired: {path} was {reason}")
                progress(
                    f"{experiment.id} {futures[future]}: done "
                    f"({done}/{len(futures)} cells, {len(plan.seeds)} runs each)"
                )
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise


def _run_sweeps(
    experiment: Experiment,
    plan: Plan,
    directory: Path,
    jobs: int,
    progress: Progress,
    executor: Executor = "local",
    scheduler: str | None = None,
    cell_dirs: Mapping[str, Path] | None = None,
) -> SweepData | dict[str, SweepData]:
    """One sweep per cell (each in its own directory), or the one scenario's sweep.

    A cell's directory is ``directory / label`` unless ``cell_dirs`` names another (a
    sensitivity value's cells the value leaves unchanged are the verdict's own runs).
    """
    where = dict(cell_dirs or {})
    if not experiment.cells:
        if len(experiment.scenarios) != 1:
            raise ValueError(f"{experiment.id}: give one scenario file, or cells")
        changes = dict(plan.changes)
        return _run_sweep(
            experiment.id,
            experiment.scenarios[0],
            changes,
            plan,
            directory,
            jobs,
            progress,
            executor,
            scheduler,
        )
    if executor == "local" and jobs > 1 and len(experiment.cells) > len(plan.seeds):
        _run_cells_in_parallel(experiment, plan, directory, jobs, progress, where)
        jobs = 1  # every run is done: the sweeps below only read them back
    return {
        label: _run_sweep(
            f"{experiment.id} {label}",
            relative,
            {**cell, **plan.changes},
            plan,
            where.get(label, directory / label),
            jobs,
            progress,
            executor,
            scheduler,
        )
        for label, relative, cell in experiment.cells
    }


def extended_plan(plan: Plan, base: int) -> Plan:
    """``plan`` with ``base`` more seeds: the next whole numbers after its largest seed."""
    start = max(plan.seeds) + 1
    return replace(plan, seeds=(*plan.seeds, *range(start, start + base)))


def _write_json(path: Path, value: Any) -> None:
    """Write ``value`` as JSON to ``path`` under a temporary name, then rename it into place."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(value, indent=2) + "\n")
    os.replace(tmp, path)


def run_experiment(
    experiment: Experiment,
    out: Path,
    *,
    quick: bool = False,
    jobs: int = 1,
    progress: Progress | None = None,
    executor: Executor = "local",
    scheduler: str | None = None,
    seed_cap: int | None = None,
    referee: str | None = None,
    sensitivity: bool | None = None,
) -> Outcome:
    """Run ``experiment`` and evaluate its claims; finished runs under ``out`` are reused.

    ``executor``/``scheduler`` choose where sweep runs go, as for :func:`tfrclab.sweep.run_sweep`
    (``"dask"`` with a scheduler address sends them to that ``dask.distributed`` cluster).

    While a claim is inconclusive, a sweep (or ``seeded``) experiment runs more seeds, as many
    as its plan has each time, up to ``seed_cap`` times the plan's number (default
    :data:`SEED_CAP` for the full plan, 1, no extension, for ``quick``); see the module
    documentation.

    Each decided claim is then re-decided on perturbed copies of the analysis, to show that
    contrary data would have moved its verdict (:mod:`tfrclab.reproduce.falsify`).

    With ``referee="ns2"`` a sweep experiment's cells are also run in ns-2.35 on the seeds the
    claims were decided on, and each claim's measure taken on ns-2's runs beside tfrclab's
    (:func:`tfrclab.reproduce.referee.referee_ns2`; outputs kept in ``ns2`` or ``ns2-quick``
    beside the sweep's directory).

    With ``sensitivity`` (default: for full plans, not for ``quick``) the cells are run again at
    each value of the experiment's unstated parameters, on the plan and seeds the verdicts were
    decided on, and every claim is measured and judged there
    (:mod:`tfrclab.reproduce.sensitivity`; runs kept in ``sensitivity`` or
    ``sensitivity-quick`` beside the sweep's directory, and reused).

    Draws its figure and writes ``claims.json`` beside it, in :func:`experiment_dir`.

    Raises:
        ValueError: for a referee other than ``"ns2"``, or ``"ns2"`` without ns-2 installed.
    """
    if referee not in (None, "ns2"):
        raise ValueError(f"--referee: expected ns2, found {referee!r}")
    if referee == "ns2":
        import shutil

        if shutil.which("ns") is None:
            raise ValueError(
                "--referee ns2: ns-2 is not installed (`ns` is not on PATH; Debian/Ubuntu: "
                "apt-get install ns2)"
            )
    say: Progress = progress if progress is not None else (lambda _line: None)
    started = time.perf_counter()
    planned = experiment.plan(quick)
    cap = (1 if quick else SEED_CAP) if seed_cap is None else seed_cap
    if cap < 1:
        raise ValueError(f"seed_cap must be at least 1, got {cap}")
    directory = experiment_dir(out, experiment)
    directory.mkdir(parents=True, exist_ok=True)
    plan = planned
    while True:
        analysis, data = _analysis(
            experiment, plan, out, directory, quick, jobs, say, executor, scheduler
        )
        results = tuple(evaluate(claim, analysis) for claim in experiment.claims)
        open_claims = [r.claim.id for r in results if r.verdict == "inconclusive"]
        base = len(planned.seeds)
        if not experiment.extendable or not open_claims or len(plan.seeds) >= cap * base:
            break
        plan = extended_plan(plan, min(base, cap * base - len(plan.seeds)))
        say(
            f"{experiment.id}: {len(open_claims)} claim(s) inconclusive "
            f"({', '.join(open_claims)}): running seeds up to {max(plan.seeds)} "
            f"({len(plan.seeds)} of at most {cap * base})"
        )
    figure = experiment.plot(analysis, directory / "figure.png")
    contraries = tuple(
        None if r.verdict == "not comparable" else contrary(r.claim, analysis, r) for r in results
    )
    refereed: tuple[RefereeResult, ...] = ()
    if referee == "ns2":
        from tfrclab.reproduce.referee import referee_ns2

        cache = _home(out, experiment, directory) / ("ns2-quick" if quick else "ns2")
        refereed = referee_ns2(experiment, plan, data, results, cache, say, jobs=jobs)
    ranges: tuple[Sensitivity, ...] = ()
    if (not quick if sensitivity is None else sensitivity) and experiment.unstated:
        home = _home(out, experiment, directory)
        ranges = tuple(
            vary(
                experiment,
                parameter,
                plan,
                results,
                _value_runs(experiment, parameter, home, quick, jobs, say, executor, scheduler),
            )
            for parameter in experiment.unstated
        )
    outcome = Outcome(
        experiment,
        quick,
        plan,
        results,
        figure,
        time.perf_counter() - started,
        analysis,
        planned_seeds=len(planned.seeds),
        seed_cap=cap if experiment.extendable else 1,
        contraries=contraries,
        referee=refereed,
        sensitivity=ranges,
    )
    _write_json(directory / "claims.json", outcome.as_dict())
    for r in results:
        say(f"{experiment.id}: {r.claim.id}: {r.verdict} ({r.measured.format()})")
    for r, ref in outcome.differing:
        say(f"{experiment.id}: {r.claim.id}: tfrclab and ns-2.35 differ ({ref.reason})")
    for r, c in outcome.unmoved:
        say(f"{experiment.id}: {r.claim.id}: no contrary data moved its verdict ({c.describe()})")
    for k, r in enumerate(results):
        for row in outcome.rows_of(k):
            if row.moves:
                say(f"{experiment.id}: {r.claim.id}: {row.summary()}")
    return outcome


def _home(out: Path, experiment: Experiment, directory: Path) -> Path:
    """Where an experiment's sweeps live.

    Its own directory, or that of the experiment whose runs it reads (``runs_of``), so that
    shared runs are made once.
    """
    return out.joinpath(*experiment.runs_of.split("/")) if experiment.runs_of else directory


def _value_runs(
    experiment: Experiment,
    parameter: Unstated,
    home: Path,
    quick: bool,
    jobs: int,
    say: Progress,
    executor: Executor,
    scheduler: str | None,
) -> Callable[[Experiment, Plan, Any, frozenset[str]], Any]:
    """Makes (or reuses) the runs of ``experiment`` at a value of ``parameter``.

    A value's changed cells run in ``home/sensitivity/<name>-<value>/`` (``sensitivity-quick``
    with ``--quick``); the cells it leaves as they are are read from the verdict's own sweep.
    """
    main = home / ("sweep-quick" if quick else "sweep")
    root = home / ("sensitivity-quick" if quick else "sensitivity")

    def run(variant: Experiment, plan: Plan, value: Any, changed: frozenset[str]) -> Any:
        text = parameter.text(value)
        say(
            f"{experiment.id}: unstated {parameter.name} = {text}: {len(changed)} cell(s) x "
            f"{len(plan.seeds)} seed(s)"
        )
        keep = {label: main / label for label, _, _ in variant.cells if label not in changed}
        return _run_sweeps(
            replace(variant, id=f"{experiment.id} [{parameter.name} = {text}]"),
            plan,
            root / parameter.directory(value),
            jobs,
            say,
            executor,
            scheduler,
            keep,
        )

    return run


def _analysis(
    experiment: Experiment,
    plan: Plan,
    out: Path,
    directory: Path,
    quick: bool,
    jobs: int,
    say: Progress,
    executor: Executor,
    scheduler: str | None,
) -> tuple[Analysis, Any]:
    """Make (or reuse) the runs of ``plan`` and analyze them: (the analysis, the data read)."""
    data: Any = None
    if experiment.kind == "sweep":
        # Sweeps shared with another experiment live (and are reused) in that one's directory.
        home = _home(out, experiment, directory)
        data = _run_sweeps(
            experiment,
            plan,
            home / ("sweep-quick" if quick else "sweep"),
            jobs,
            say,
            executor,
            scheduler,
        )
    elif experiment.kind == "testbed":
        say(f"{experiment.id}: running on the testbed (runs in {directory / 'runs'})")
        data = directory
    elif experiment.kind == "ns2":
        say(f"{experiment.id}: running in netsim and ns-2.35 (runs in {directory / 'runs'})")
        data = directory
    else:
        say(f"{experiment.id}: running the scripted channel")
    return experiment.analyze(data, plan), data
