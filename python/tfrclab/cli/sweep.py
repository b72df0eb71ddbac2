"""``tfrclab sweep``: a scenario over a grid of values and seeds.

Also how a sweep directory is summarized and drawn, which ``summary`` and ``plot`` share.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from tfrclab.cli.consoles import stderr_console, stdout_console
from tfrclab.cli.options import (
    add_measure_options,
    add_set_option,
    job_count,
    seed_list,
    vary_axis,
    zip_axis,
)
from tfrclab.cli.parser import argument_type
from tfrclab.cli.scenario_io import load_scenario, measure_sets
from tfrclab.units import format_duration

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from typing import Any, Literal

__all__ = [
    "SweepView",
    "check_sweep_window",
    "register",
    "summarize_sweep",
    "sweep_figure",
    "sweep_figure_path",
]


def _cmd_sweep(args: argparse.Namespace) -> int:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from tfrclab.outdir import check_sweep_out
    from tfrclab.sweep import Grid, run_sweep

    scenario = load_scenario(args.scenario, [*args.set, *measure_sets(args)])
    grid = Grid(
        scenario=scenario,
        vary=tuple(args.vary),
        zip=tuple(args.zip),
        zip_label=args.zip_label,
        seeds=tuple(args.seeds),
        series=args.series,
        force=args.force,
    )
    out: Path = args.out
    check_sweep_out(out)
    executor: Literal["local", "dask"] = "dask" if args.scheduler is not None else args.executor
    console = stderr_console()
    progress = Progress(
        TextColumn("sweep"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        disable=args.quiet,
    )
    task = progress.add_task("runs", total=None)

    def on_estimate(wall_s: float) -> None:
        if not args.quiet and wall_s > 0:
            workers = max(1, args.jobs)
            console.print(
                f"expected: about {format_duration(round(wall_s / workers, 1) or 0.1)} of "
                f"simulation on {workers} worker(s) (the cost estimate; Ctrl-C stops it, and "
                "rerunning resumes)"
            )

    def on_start(remaining: int, total: int) -> None:
        # Shown only once the grid was checked and the directory prepared.
        progress.start()
        progress.update(task, total=total, completed=total - remaining)
        if not args.quiet and remaining < total:
            console.print(f"resuming: {total - remaining} of {total} runs already done")

    def on_repair(path: Path, reason: str) -> None:
        # Always shown (--quiet too): results are being recomputed, and the user should know.
        console.print(
            f"repairing: {path} is {reason}; its batch's runs run again",
            soft_wrap=True,
            markup=False,
            highlight=False,
        )

    try:
        runs = run_sweep(
            grid,
            out,
            jobs=args.jobs,
            executor=executor,
            scheduler=args.scheduler,
            extend=args.extend,
            on_estimate=on_estimate,
            on_start=on_start,
            on_done=lambda _task: progress.advance(task),
            on_repair=on_repair,
        )
    finally:
        if progress.live.is_started:
            progress.stop()
    if args.json:
        print(json.dumps({"out": str(out), "runs": int(runs["run"].nunique()), "rows": len(runs)}))
        return 0
    return summarize_sweep(out, plot=True, view=SweepView())


class SweepView(argparse.Namespace):
    """How to draw a sweep: which parameters go on x, in colour and in facets (None: choose)."""

    x: str | None = None
    hue: str | None = None
    facet: str | None = None
    metric: str = "normalized_throughput"
    output: Path | None = None
    """Where the figure goes (None: :func:`sweep_figure_path`)."""


def sweep_figure_path(directory: Path, metric: str) -> Path:
    """Where ``plot`` writes a sweep's figure without ``--output``.

    ``sweep.png`` for the default metric (the figure ``sweep`` writes), ``sweep-METRIC.png``
    for another, so drawing another metric does not replace it.
    """
    if metric == SweepView.metric:
        return directory / "sweep.png"
    return directory / f"sweep-{metric}.png"


def sweep_figure(directory: Path, manifest: dict[str, Any], view: argparse.Namespace) -> Path:
    """Draw the sweep figure ``view`` asks for from ``directory``'s classes; its path."""
    from tfrclab.figures import plot_sweep
    from tfrclab.sweep import load

    classes = load(directory, "classes")
    if classes.empty:
        raise ValueError(f"{directory}: no finished runs to plot")
    output: Path | None = getattr(view, "output", None)
    return plot_sweep(
        classes,
        manifest,
        output if output is not None else sweep_figure_path(directory, view.metric),
        x=view.x,
        hue=view.hue,
        facet=view.facet,
        metric=view.metric,
    )


def summarize_sweep(directory: Path, plot: bool, view: argparse.Namespace) -> int:
    """Print a sweep directory's tables (and, with ``plot``, draw its figure); exit status 0."""
    from tfrclab.report import print_whole, sweep_links_table, sweep_table
    from tfrclab.sweep import grid_from_manifest, load, read_manifest, summarize, summarize_links

    manifest = read_manifest(directory)
    grid = grid_from_manifest(manifest, directory / "sweep.json")
    params = grid.params
    classes = load(directory, "classes")
    console = stdout_console()
    if classes.empty:
        console.print(f"{directory}: no finished runs yet")
        return 0
    runs = classes["run"].nunique()
    console.print(f"{directory}: {runs} of {len(grid.tasks())} runs")
    print_whole(console, sweep_table(summarize(classes, params), manifest, classes))
    links = load(directory, "links")
    if not links.empty:
        print_whole(console, sweep_links_table(summarize_links(links, params), manifest))
    console.print(f"datasets: {directory / 'runs'}, {directory / 'classes'}, {directory / 'links'}")
    if plot:
        console.print(f"figure: {sweep_figure(directory, manifest, view)}")
    return 0


def check_sweep_window(directory: Path, args: argparse.Namespace) -> None:
    """A sweep's rows were measured over its own window: a different one is refused."""
    if args.measure_from_s is None and args.measure_to_s is None:
        return
    raise ValueError(
        f"{directory}: a sweep's figures are measured over the window its scenario set when it "
        "ran; to change it, run the sweep again with --measure-from/--measure-to into another "
        "--out"
    )


def register(commands: Any) -> None:
    """Add ``sweep`` to the ``tfrclab`` command's subparsers."""
    sweep = commands.add_parser(
        "sweep",
        help="run a scenario over a grid of values and seeds (resumable)",
        description="Run every combination of the --vary values (and of the --zip axis) for "
        "every seed, in parallel, into Parquet datasets under --out (runs/: a row per run and "
        "flow; classes/: per flow group; links/: per link), every figure over the measurement "
        "window. Rerunning the same sweep into the same directory finishes an interrupted one; "
        "--extend adds values or seeds.",
    )
    sweep.add_argument("scenario", type=Path, help="scenario file (TOML)")
    sweep.add_argument(
        "--vary",
        type=argument_type(vary_axis),
        action="append",
        default=[],
        metavar="PATH=V1,V2,...",
        help="a scenario path and its values (repeatable; the grid is their product)",
    )
    sweep.add_argument(
        "--zip",
        type=argument_type(zip_axis),
        action="append",
        default=[],
        metavar="PATH=V1,V2,...",
        help="paths whose values change together, one axis of the grid (repeatable; every "
        "--zip needs as many values), e.g. --zip flows.0.count=1,2,4 --zip flows.1.count=1,2,4",
    )
    sweep.add_argument(
        "--zip-label",
        default=None,
        metavar="NAME",
        help="what tables and figures call the --zip axis (default: its first path)",
    )
    sweep.add_argument(
        "--seeds",
        type=argument_type(seed_list),
        default=[1],
        help="seeds, e.g. 1-30 or 1,2,7 (default 1)",
    )
    add_set_option(sweep)
    add_measure_options(sweep, to_seconds=False)
    sweep.add_argument(
        "--jobs",
        type=argument_type(job_count),
        default=1,
        help="parallel runs (worker processes; default 1)",
    )
    sweep.add_argument(
        "--executor",
        choices=("local", "dask"),
        default="local",
        help="local processes, or a dask.distributed cluster",
    )
    sweep.add_argument(
        "--scheduler",
        default=None,
        help="dask scheduler address (implies --executor dask; default: a local cluster)",
    )
    sweep.add_argument(
        "--extend",
        action="store_true",
        help="run a grid with more values or seeds into an existing sweep, reusing its runs",
    )
    sweep.add_argument(
        "--force",
        action="store_true",
        help="run combinations whose cost estimate is over the budget",
    )
    sweep.add_argument(
        "--series",
        action="store_true",
        help="also keep every run's per-bin series (flow_series/, link_series/)",
    )
    sweep.add_argument("--out", type=Path, required=True, help="sweep directory")
    sweep.add_argument("--json", action="store_true", help="print a JSON object when done")
    sweep.add_argument("--quiet", action="store_true", help="no progress bar")
    sweep.set_defaults(handler=_cmd_sweep)
