"""Running experiments: their sweeps (resumable), their analysis, claims and figures.

A sweep experiment's runs go through :func:`tfrclab.sweep.run_sweep` with per-bin series kept,
into ``DIR/<paper>/<figure>/sweep`` (``sweep-quick`` with ``--quick``), so an interrupted
reproduction picks up where it stopped and a second one reuses every finished run. The analysis
reads the sweep's datasets back, so it is the same whether the runs were made now or before.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tfrclab.reproduce.claims import Analysis, ClaimResult, evaluate
from tfrclab.reproduce.registry import Experiment, Plan, scenario_path

if TYPE_CHECKING:
    from tfrclab.sweep import Executor

__all__ = ["Outcome", "SweepData", "experiment_dir", "run_experiment"]

Progress = Callable[[str], None]


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
    results: tuple[ClaimResult, ...]
    figure: Path
    wall_s: float
    analysis: Analysis

    def as_dict(self) -> dict[str, Any]:
        """The outcome as JSON-ready values (the analysis is left out)."""
        e = self.experiment
        return {
            "id": e.id,
            "title": e.title,
            "setup": e.setup,
            "quick": self.quick,
            "plan": self.plan.describe(),
            "scenarios": list(e.scenarios),
            "metrics": list(e.metrics),
            "figure": self.figure.name,
            "wall_s": self.wall_s,
            "claims": [r.as_dict() for r in self.results],
        }


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
        jobs=workers,
        executor=executor if workers > 1 or scheduler is not None else "local",
        scheduler=scheduler,
        on_start=on_start,
        on_done=on_done,
        on_repair=on_repair,
    )
    return SweepData(
        runs=load(directory, "runs"),
        classes=load(directory, "classes"),
        links=load(directory, "links"),
        flow_series=load(directory, "flow_series"),
        link_series=load(directory, "link_series"),
        bin_s=scenario.bin_s,
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
    run_sweep(grid, directory, jobs=1, on_repair=lambda path, why: repaired.append((path, why)))
    return repaired


def _run_cells_in_parallel(
    experiment: Experiment, plan: Plan, directory: Path, jobs: int, progress: Progress
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
                directory / label,
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
) -> SweepData | dict[str, SweepData]:
    """One sweep per cell (each in its own directory), or the one scenario's sweep."""
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
        _run_cells_in_parallel(experiment, plan, directory, jobs, progress)
        jobs = 1  # every run is done: the sweeps below only read them back
    return {
        label: _run_sweep(
            f"{experiment.id} {label}",
            relative,
            {**cell, **plan.changes},
            plan,
            directory / label,
            jobs,
            progress,
            executor,
            scheduler,
        )
        for label, relative, cell in experiment.cells
    }


def run_experiment(
    experiment: Experiment,
    out: Path,
    *,
    quick: bool = False,
    jobs: int = 1,
    progress: Progress | None = None,
    executor: Executor = "local",
    scheduler: str | None = None,
) -> Outcome:
    """Run ``experiment`` and evaluate its claims; finished runs under ``out`` are reused.

    ``executor``/``scheduler`` choose where sweep runs go, as for :func:`tfrclab.sweep.run_sweep`
    (``"dask"`` with a scheduler address sends them to that ``dask.distributed`` cluster).

    Draws its figure and writes ``claims.json`` beside it, in :func:`experiment_dir`.
    """
    say: Progress = progress if progress is not None else (lambda _line: None)
    started = time.perf_counter()
    plan = experiment.plan(quick)
    directory = experiment_dir(out, experiment)
    directory.mkdir(parents=True, exist_ok=True)
    data: Any = None
    if experiment.kind == "sweep":
        # Sweeps shared with another experiment live (and are reused) in that one's directory.
        home = out.joinpath(*experiment.runs_of.split("/")) if experiment.runs_of else directory
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
    analysis = experiment.analyze(data, plan)
    results = tuple(evaluate(claim, analysis) for claim in experiment.claims)
    figure = experiment.plot(analysis, directory / "figure.png")
    outcome = Outcome(
        experiment, quick, plan, results, figure, time.perf_counter() - started, analysis
    )
    (directory / "claims.json").write_text(json.dumps(outcome.as_dict(), indent=2) + "\n")
    for r in results:
        say(f"{experiment.id}: {r.claim.id}: {r.verdict} ({r.measured.format()})")
    return outcome
