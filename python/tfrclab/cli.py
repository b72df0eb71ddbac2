"""The ``tfrclab`` command line: a thin layer over the same API user scripts call.

Commands: ``run`` (one scenario), ``sweep`` (a grid of changes times seeds), ``plot`` and
``summary`` (of a run or sweep directory), ``demo`` (Floyd 2000 Fig. 2 over the scripted
channel) and ``equation``.

Errors in the input (an unknown option, a malformed scenario, an unknown ``--set`` path, an
impossible value, a duration without a unit, ...) print one line on stderr naming the field and
exit with status 2; failures while running (a file that cannot be written) print one line and
exit with status 1. Neither prints a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from tfrclab import ConfigError, ControllerError, ScenarioError, __version__
from tfrclab._native import build as _native_build
from tfrclab.equation import throughput_bytes_per_s
from tfrclab.units import format_duration, parse_duration, parse_size

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from typing import Any, Literal, NoReturn, TypeVar

    from rich.console import Console

    from tfrclab.result import Result
    from tfrclab.scenario import Scenario

    T = TypeVar("T")

PRESETS = ("floyd2000", "rfc5348")
"""The TFRC presets the commands accept."""

MAX_DEMO_SECONDS = 10_000.0
"""The longest ``demo`` run (the scripted channel keeps every feedback report in memory, and the
figure draws every one)."""


def _terminal_columns() -> int:
    """The width argparse formats help for, as ``shutil.get_terminal_size`` finds it.

    Read once per :func:`build_parser` call (see :class:`_HelpFormatter`): ``COLUMNS`` if it is
    a positive number, else the width of the terminal on stdout if it reports one, else 80.
    """
    global _columns
    if _columns is None:
        try:
            _columns = int(os.environ.get("COLUMNS", "0"))
        except ValueError:
            _columns = 0
        if _columns <= 0:
            stdout = sys.__stdout__
            try:
                _columns = os.get_terminal_size(stdout.fileno()).columns if stdout else 0
            except (AttributeError, ValueError, OSError):
                _columns = 0
            _columns = _columns or 80
    return _columns


_columns: int | None = None
"""The terminal width :func:`_terminal_columns` read for the parser being built (None: not yet)."""


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's help formatter, with the terminal width read once instead of per formatter.

    argparse makes a formatter for every ``add_argument`` call (to check the metavar), and each
    asks ``shutil`` for the terminal size; across the command's ~200 options that, and importing
    ``shutil`` for it, was a tenth of ``tfrclab --version``'s start-up. The width is argparse's:
    the terminal's less 2.
    """

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        width = _terminal_columns() - 2 if width is None else width
        super().__init__(prog, indent_increment, max_help_position, width)


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are a single line on stderr, with exit status 2."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        one_line = " ".join(message.split())
        self.exit(2, f"{self.prog}: error: {one_line} (see --help)\n")


def _argument_type(parse: Callable[[str], T]) -> Callable[[str], T]:
    """Turn a parser raising ValueError into an argparse type with a readable message."""

    def convert(text: str) -> T:
        try:
            return parse(text)
        except ValueError as err:
            raise argparse.ArgumentTypeError(str(err)) from None

    convert.__name__ = parse.__name__
    return convert


def _positive_duration(text: str) -> float:
    seconds = parse_duration(text)
    if seconds <= 0:
        raise ValueError(f"duration {text!r} must be positive")
    return seconds


def _number(text: str, what: str, expected: str, in_range: Callable[[float], bool]) -> float:
    """Parse ``text`` as a float and check it, with errors that name ``what`` and ``expected``."""
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"invalid {what} {text!r}: expected {expected}") from None
    if not in_range(value):
        raise ValueError(f"{what} must be {expected}, got {text}")
    return value


def _probability(text: str) -> float:
    return _number(text, "loss event rate p", "a number in (0, 1]", lambda p: 0.0 < p <= 1.0)


def _acks_per_packet(text: str) -> float:
    return _number(
        text, "b (packets per ACK)", "a finite number >= 1", lambda b: 1.0 <= b < float("inf")
    )


def _whole_number(text: str, what: str, minimum: int) -> int:
    try:
        value = int(text)
    except ValueError:
        value = minimum - 1
    if value < minimum:
        raise ValueError(f"invalid {what} {text!r}: expected a whole number >= {minimum}")
    return value


def _seed(text: str) -> int:
    seed = _whole_number(text, "seed", 0)
    if seed >= 2**64:
        raise ValueError(f"invalid seed {text!r}: expected a whole number from 0 to 2^64-1")
    return seed


def _jobs(text: str) -> int:
    return _whole_number(text, "--jobs", 1)


def _vary(text: str) -> tuple[str, tuple[Any, ...]]:
    from tfrclab.sweep import parse_vary

    path, values = parse_vary(text)
    return path, tuple(values)


def _zip(text: str) -> tuple[str, tuple[Any, ...]]:
    from tfrclab.sweep import parse_vary

    path, values = parse_vary(text, option="--zip")
    return path, tuple(values)


def _seeds(text: str) -> list[int]:
    from tfrclab.sweep import parse_seeds

    return parse_seeds(text)


def _cmd_equation(args: argparse.Namespace) -> int:
    size: int = args.size
    rtt_s: float = args.rtt
    t_rto_s: float = args.t_rto if args.t_rto is not None else 4.0 * rtt_s
    x = throughput_bytes_per_s(size, rtt_s, args.p, b=args.b, t_rto_s=t_rto_s)
    if args.json:
        print(json.dumps({"x_bytes_per_s": x, "x_pkts_per_s": x / size}))
    else:
        print(f"X = {x:.1f} bytes/s = {x / size:.2f} packets/s")
        print(
            f"  (s = {size} B, R = {format_duration(rtt_s)}, t_RTO = {format_duration(t_rto_s)}, "
            f"p = {args.p:g}, b = {args.b:g}; RFC 5348 §3.1)"
        )
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    # Imported here so that other commands do not pay for matplotlib.
    from tfrclab.demo import run_demo
    from tfrclab.outdir import check_directory_writable

    out: Path = args.out
    check_directory_writable(out)
    duration_s: float = args.duration
    if duration_s > MAX_DEMO_SECONDS:
        raise ValueError(
            f"--duration {format_duration(duration_s)}: at most {MAX_DEMO_SECONDS:g}s for the demo"
        )
    result = run_demo(out, preset=args.preset, duration_s=duration_s)
    run = result.run
    print(
        f"Floyd 2000 Fig. 2, preset {args.preset}: {format_duration(duration_s)}, R = 100ms, "
        "periodic loss 1% until 6s, 10% until 9s, then 0.5%"
    )
    print(result.table)
    print(
        f"feedback reports: {len(run)}, packets sent: {run.packets_sent}, "
        f"delivered: {run.packets_delivered}"
    )
    print(f"figure: {result.figure}")
    return 0


def _cmd_examples(args: argparse.Namespace) -> int:
    from tfrclab.examples import copy_scenarios
    from tfrclab.outdir import check_directory_writable

    check_directory_writable(args.dir, "")
    copied = copy_scenarios(args.dir, force=args.force)
    for path in copied:
        print(path)
    print(
        f"{len(copied)} scenario files in {args.dir}; try: tfrclab run "
        f"{args.dir / 'examples' / 'dumbbell.toml'}",
        file=sys.stderr,
    )
    return 0


def _set_pair(text: str) -> tuple[str, Any]:
    """Read a ``--set path=value`` argument."""
    from tfrclab.scenario import parse_value

    path, sep, value = text.partition("=")
    if not sep or not path.strip():
        raise ValueError(f"{text!r}: expected PATH=VALUE, e.g. topology.bottleneck.rate=30Mbps")
    return path.strip(), parse_value(value.strip())


def _load_scenario(path: Path, sets: Sequence[tuple[str, Any]]) -> Scenario:
    """The scenario file at ``path`` with the ``--set`` changes applied (checked by netsim)."""
    from tfrclab.scenario import Scenario, read_scenario_text

    try:
        text = read_scenario_text(path)
    except OSError as err:
        raise ValueError(f"{path}: cannot read the scenario file ({err.strerror})") from None
    try:
        scenario = Scenario.from_toml(text, source=str(path))
    except ScenarioError as err:
        if err.path is None:  # invalid TOML: no field to name, so name the file
            raise ValueError(f"{path}: {' '.join(str(err).split())}") from None
        raise
    if sets:
        changed = scenario.with_(**dict(sets))
        if any("queue" in str(key) for key, _ in sets):
            from tfrclab.buffers import smaller_buffers

            for warning in smaller_buffers(scenario, changed):
                print(f"tfrclab: warning: {warning}", file=sys.stderr)
        scenario = changed
    return scenario


def _stdout_console() -> Console:
    """A console for tables on stdout: at least 110 columns wide when not a terminal."""
    from rich.console import Console

    class StdoutConsole(Console):
        def on_broken_pipe(self) -> None:
            # rich exits with status 1 when the reader goes away; for us that is not an error.
            raise BrokenPipeError

    console = StdoutConsole(highlight=False)
    if not console.is_terminal:
        console = StdoutConsole(highlight=False, width=max(110, console.width))
    return console


def _stderr_console() -> Console:
    from rich.console import Console

    return Console(stderr=True)


def _run_with_progress(
    scenario: Scenario,
    seed: int | None,
    quiet: bool,
    force: bool = False,
    pcap_dir: Path | None = None,
    ns2_trace: Path | None = None,
) -> Result:
    """Run ``scenario``, showing progress in simulated time on a terminal unless ``quiet``.

    ``force`` runs it even if its cost estimate is over the budget; ``pcap_dir`` and
    ``ns2_trace`` ask for trace files (:func:`tfrclab.simulate.run`).
    """
    from tfrclab.simulate import run as run_all

    def run(scenario: Scenario, **kwargs: Any) -> Result:
        return run_all(scenario, pcap_dir=pcap_dir, ns2_trace=ns2_trace, **kwargs)

    if quiet:
        return run(scenario, seed=seed, force=force)
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    console = _stderr_console()
    if not console.is_terminal:
        return run(scenario, seed=seed, force=force)
    columns = (
        TextColumn("simulating"),
        BarColumn(),
        TextColumn("{task.completed:.1f} / {task.total:.1f} s simulated"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task("run", total=scenario.duration_s)

        def report(t_s: float, _end_s: float) -> None:
            progress.update(task, completed=t_s)

        return run(scenario, seed=seed, progress=report, force=force)


def _write_run(result: Result, out: Path) -> list[Path]:
    """Write the result's Parquet files, scenario and figures into ``out``, atomically.

    Everything is written into a temporary sibling directory that is renamed into place once
    complete, so ``out`` is never seen half-written: an interrupted write leaves the previous
    contents (or nothing) and a hidden ``.NAME.partial-*`` directory, removed by the next write.
    """
    from tfrclab.figures import plot_run
    from tfrclab.outdir import replace_directory

    def write(tmp: Path) -> list[Path]:
        result.to_parquet(tmp)
        return [out / figure.name for figure in plot_run(result, tmp)]

    return replace_directory(out, write)


def _report_lost_write(out: Path, err: BaseException) -> None:
    """Tell stderr that writing ``--out`` failed and exactly what that lost."""
    reason = str(err) or type(err).__name__
    if isinstance(err, MemoryError):
        reason = "out of memory"
    kept = "its previous contents are kept" if out.exists() else "it was not created"
    print(
        f"tfrclab run: error: writing --out {out} failed ({reason}): none of this run's files "
        f"(Parquet, scenario.toml, run.json, figures) are there ({kept}); the run's summary is "
        "printed on stdout",
        file=sys.stderr,
    )


def _measure_sets(args: argparse.Namespace) -> list[tuple[str, Any]]:
    """``--measure-from``/``--measure-to`` as scenario changes (``measure.from``/``to``)."""
    sets: list[tuple[str, Any]] = []
    if args.measure_from is not None:
        sets.append(("measure.from", args.measure_from))
    if args.measure_to is not None:
        sets.append(("measure.to", args.measure_to))
    return sets


def _check_trace_options(args: argparse.Namespace, scenario: Scenario) -> None:
    """Check ``--pcap`` and ``--ns2-trace`` against ``--out`` and the scenario's trace keys.

    Traces inside ``--out`` are refused (the directory is replaced when the run is written),
    and so are places they could not be written to (before the run, not after it); trace keys
    the scenario sets without a destination to write to get a note on stderr.
    """
    from tfrclab.outdir import check_directory_writable, check_file_writable

    if args.pcap is not None:
        check_directory_writable(args.pcap, "--pcap")
    if args.ns2_trace is not None:
        check_file_writable(args.ns2_trace, "--ns2-trace")
    for option, given in (("--pcap", args.pcap), ("--ns2-trace", args.ns2_trace)):
        inside = args.out is not None and given is not None
        if inside and given.resolve().is_relative_to(args.out.resolve()):
            raise ValueError(
                f"{option} {given} is inside --out {args.out}, which is replaced when the "
                "run is written: put the traces elsewhere"
            )
    for key, option, given in (
        ("monitor.pcap", "--pcap DIR", args.pcap),
        ("monitor.ns2_trace", "--ns2-trace FILE", args.ns2_trace),
    ):
        if given is None and _has(scenario, key):
            print(
                f"tfrclab run: note: {key} chooses links; pass {option} to write it",
                file=sys.stderr,
            )


def _check_room(args: argparse.Namespace, scenario: Scenario) -> None:
    """Refuse, unless ``--force``, a run that will not fit this machine (:mod:`tfrclab.room`).

    Its memory (writing ``--out`` included) must fit the memory available and its files
    (``--out``, ``--pcap``, ``--ns2-trace``) the free disk; what the traces will take on
    disk is told on stderr in any case.
    """
    from tfrclab.room import check_room, write_cost
    from tfrclab.simulate import estimate

    traces = [
        (option, given, key)
        for option, given, key in (
            ("--pcap", args.pcap, "monitor.pcap"),
            ("--ns2-trace", args.ns2_trace, "monitor.ns2_trace"),
        )
        if given is not None
    ]
    # Without the key a trace covers every link: estimate it so.
    changes = {key: "all" for _, _, key in traces if not _has(scenario, key)}
    cost = estimate(scenario.with_(**changes) if changes else scenario)
    disk = {part["path"]: int(part["disk_bytes"]) for part in cost["parts"]}
    destinations = [(option, given, disk.get(key, 0)) for option, given, key in traces]
    for option, given, size in destinations:
        print(
            f"tfrclab run: note: {option} {given} will take about {size / 1e6:.1f} MB on disk",
            file=sys.stderr,
        )
    write = None
    if args.out is not None:
        write = write_cost(cost)
        destinations.append(("--out", args.out, write.disk_bytes))
    # Over the budget, netsim's own refusal (naming the costliest parts) comes first.
    if not args.force and cost["refusal"] is None:
        check_room(cost, destinations, write)


def _has(scenario: Scenario, path: str) -> bool:
    """Whether the scenario sets ``path``."""
    try:
        scenario.get(path)
    except KeyError:
        return False
    return True


def _report_traces(result: Result) -> bool:
    """Tell stderr which trace files hit their cap or failed; True if one failed."""
    failed = False
    for trace in result.traces:
        where = f"{trace['kind']} trace {trace['path']} (link {trace['link']})"
        if trace["error"] is not None:
            print(f"tfrclab run: error: {where}: {trace['error']}", file=sys.stderr)
            failed = True
        elif trace["over_limit"]:
            print(
                f"tfrclab run: note: {where} stopped at monitor.trace_limit = {trace['limit']};"
                f" {trace['over_limit']} more records were not written (raise "
                "monitor.trace_limit, e.g. --set monitor.trace_limit=1000000)",
                file=sys.stderr,
            )
    return failed


def _cmd_run(args: argparse.Namespace) -> int:
    from tfrclab.outdir import check_run_out

    scenario = _load_scenario(args.scenario, [*args.set, *_measure_sets(args)])
    if args.out is not None:
        check_run_out(args.out, force=args.force)
    _check_trace_options(args, scenario)
    _check_room(args, scenario)
    result = _run_with_progress(
        scenario, args.seed, args.quiet or args.json, args.force, args.pcap, args.ns2_trace
    )
    failed = _report_traces(result)
    figures: list[Path] = []
    written = args.out is not None
    if args.out is not None:
        try:
            figures = _write_run(result, args.out)
        except (OSError, MemoryError) as err:
            # The summary below is still printed: the run is not lost with its files.
            _report_lost_write(args.out, err)
            written, failed = False, True
    summary = result.summary()
    if args.json:
        from tfrclab.report import json_summary

        print(json.dumps(json_summary(result, summary)))
        return 1 if failed else 0

    from tfrclab.report import classes_table, flows_table, links_table

    console = _stdout_console()
    title = scenario.name or str(args.scenario)
    console.print(
        f"{title}: {result.info.duration_s:g} s simulated in {result.info.wall_seconds:.3f} s "
        f"wall, {result.info.events} events, seed {result.info.seed}"
    )
    console.print(flows_table(result, summary))
    console.print(classes_table(summary))
    console.print(links_table(result, summary))
    if written:
        console.print(f"results: {args.out} (Parquet, scenario.toml, run.json)")
        for figure in figures:
            console.print(f"figure: {figure}")
    records_by_file: dict[tuple[str, str], int] = {}
    for trace in result.traces:
        file = (trace["kind"], trace["path"])
        records_by_file[file] = records_by_file.get(file, 0) + trace["written"]
    for (kind, path), records in records_by_file.items():
        console.print(f"{kind}: {path} ({records} records)")
    return 1 if failed else 0


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

    scenario = _load_scenario(args.scenario, [*args.set, *_measure_sets(args)])
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
    console = _stderr_console()
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
    return _summarize_sweep(out, plot=True, view=SweepView())


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


def _sweep_figure(directory: Path, manifest: dict[str, Any], view: argparse.Namespace) -> Path:
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


def _summarize_sweep(directory: Path, plot: bool, view: argparse.Namespace) -> int:
    from tfrclab.report import print_whole, sweep_links_table, sweep_table
    from tfrclab.sweep import grid_from_manifest, load, read_manifest, summarize, summarize_links

    manifest = read_manifest(directory)
    grid = grid_from_manifest(manifest, directory / "sweep.json")
    params = grid.params
    classes = load(directory, "classes")
    console = _stdout_console()
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
        console.print(f"figure: {_sweep_figure(directory, manifest, view)}")
    return 0


def _run_directory_kind(directory: Path) -> str:
    from tfrclab.outdir import directory_kind

    kind = directory_kind(directory)
    if kind not in ("run", "sweep"):
        raise ValueError(
            f"{directory}: neither a complete run directory (run.json) nor a sweep (sweep.json)"
        )
    return kind


def _cmd_plot(args: argparse.Namespace) -> int:
    from tfrclab.outdir import check_directory_writable

    directory: Path = args.dir
    kind = _run_directory_kind(directory)
    check_directory_writable(directory, "")  # the figures are written there
    if kind == "sweep":
        from tfrclab.sweep import read_manifest

        print(f"figure: {_sweep_figure(directory, read_manifest(directory), args)}")
        return 0
    if any(v is not None for v in (args.x, args.hue, args.facet, args.output)):
        raise ValueError(
            "--x, --hue, --facet and --output apply to sweep directories only (a run "
            "directory's figures are its rates.png and queue.png)"
        )
    from tfrclab.figures import plot_run
    from tfrclab.result import Result

    for figure in plot_run(Result.from_parquet(directory), directory):
        print(f"figure: {figure}")
    return 0


def _cmd_summary(args: argparse.Namespace) -> int:
    directory: Path = args.dir
    if _run_directory_kind(directory) == "sweep":
        _check_sweep_window(directory, args)
        if args.reference_group is not None:
            raise ValueError(
                f"{directory}: a sweep's friendliness was rated against the reference group its "
                "scenario set when it ran; to change it, run the sweep again with --set "
                "measure.reference_group=GROUP into another --out"
            )
        return _summarize_sweep(directory, plot=False, view=SweepView())

    from tfrclab.report import classes_table, flows_table, json_summary, links_table
    from tfrclab.result import Result

    result = Result.from_parquet(directory)
    summary = result.summary(args.measure_from_s, args.measure_to_s, args.reference_group)
    if args.json:
        print(json.dumps(json_summary(result, summary)))
        return 0
    console = _stdout_console()
    console.print(flows_table(result, summary))
    console.print(classes_table(summary))
    console.print(links_table(result, summary))
    return 0


def _window_time(text: str) -> str:
    """A ``--measure-from``/``--measure-to`` value: a duration, kept as text for the scenario."""
    if parse_duration(text) < 0:
        raise ValueError(f"a measurement time is not negative, got {text!r}")
    return text


def _window_seconds(text: str) -> float:
    return parse_duration(_window_time(text))


def _add_measure_options(parser: argparse.ArgumentParser, to_seconds: bool) -> None:
    """``--measure-from``/``--measure-to``: the measurement window (``[measure]`` in files)."""
    convert = _argument_type(_window_seconds if to_seconds else _window_time)
    dest = "_s" if to_seconds else ""
    parser.add_argument(
        "--measure-from",
        dest=f"measure_from{dest}",
        type=convert,
        default=None,
        metavar="TIME",
        help="summarize from this simulated time on, e.g. 50s (default: the scenario's "
        "[measure] from, else 0s)",
    )
    parser.add_argument(
        "--measure-to",
        dest=f"measure_to{dest}",
        type=convert,
        default=None,
        metavar="TIME",
        help="summarize up to this time (default: the scenario's [measure] to, else the end)",
    )


def _check_sweep_window(directory: Path, args: argparse.Namespace) -> None:
    """A sweep's rows were measured over its own window: a different one is refused."""
    if args.measure_from_s is None and args.measure_to_s is None:
        return
    raise ValueError(
        f"{directory}: a sweep's figures are measured over the window its scenario set when it "
        "ran; to change it, run the sweep again with --measure-from/--measure-to into another "
        "--out"
    )


def _add_set_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--set",
        type=_argument_type(_set_pair),
        action="append",
        default=[],
        metavar="PATH=VALUE",
        help="change a scenario value, e.g. topology.bottleneck.rate=30Mbps or flows.0.rate=2Mbps "
        "(repeatable; see docs/getting-started.md)",
    )


def version_line() -> str:
    """What ``tfrclab --version`` prints: the version and how the native module was built.

    The build is ``profile-guided``, ``plain`` or ``instrumented`` (the one that records the
    profile): the speed differs, the results do not.
    """
    return f"tfrclab {__version__} ({_native_build()} build)"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``tfrclab`` command, with one subparser per command."""
    global _columns
    _columns = None
    parser = _Parser(
        prog="tfrclab",
        description="A toolkit for TCP-friendly congestion control (TFRC, RFC 5348).",
    )
    parser.add_argument("--version", action="version", version=version_line())
    commands = parser.add_subparsers(title="commands", dest="command", required=True)

    run = commands.add_parser(
        "run",
        help="run a scenario file and write tables and figures",
        description="Run a netsim scenario, print a results table and, with --out, write the "
        "scenario, Parquet files and PNG figures (sending rates, queue length).",
    )
    run.add_argument(
        "scenario", type=Path, help="scenario file (TOML), e.g. scenarios/examples/dumbbell.toml"
    )
    run.add_argument(
        "--seed", type=_argument_type(_seed), default=None, help="seed (default: the scenario's)"
    )
    _add_set_option(run)
    _add_measure_options(run, to_seconds=False)
    run.add_argument("--out", type=Path, default=None, help="write results and figures here")
    run.add_argument(
        "--force",
        action="store_true",
        help="run even if the cost estimate is over the budget, and replace an existing run "
        "directory given as --out",
    )
    run.add_argument(
        "--json",
        action="store_true",
        help="print exactly one JSON object (the documented contract) on stdout",
    )
    run.add_argument("--quiet", action="store_true", help="no progress display")
    run.add_argument(
        "--pcap",
        type=Path,
        default=None,
        metavar="DIR",
        help="write a pcap file per link of monitor.pcap (default: every link) into DIR",
    )
    run.add_argument(
        "--ns2-trace",
        type=Path,
        default=None,
        metavar="FILE",
        help="write an ns-2 trace of the links of monitor.ns2_trace (default: every link)",
    )
    run.set_defaults(handler=_cmd_run)

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
        type=_argument_type(_vary),
        action="append",
        default=[],
        metavar="PATH=V1,V2,...",
        help="a scenario path and its values (repeatable; the grid is their product)",
    )
    sweep.add_argument(
        "--zip",
        type=_argument_type(_zip),
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
        type=_argument_type(_seeds),
        default=[1],
        help="seeds, e.g. 1-30 or 1,2,7 (default 1)",
    )
    _add_set_option(sweep)
    _add_measure_options(sweep, to_seconds=False)
    sweep.add_argument(
        "--jobs",
        type=_argument_type(_jobs),
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

    plot = commands.add_parser(
        "plot",
        help="draw the figures of a run or sweep directory",
        description="Draw rates.png and queue.png of a run directory, or a sweep's figure "
        "(sweep.png; another --metric goes to sweep-METRIC.png, --output anywhere).",
    )
    plot.add_argument("dir", type=Path, help="a directory written by run --out or sweep --out")
    for option, what in (
        ("--x", "the parameter on the x axis"),
        ("--hue", "the parameter shown by colour"),
        ("--facet", "the parameter that splits the figure into panels"),
    ):
        plot.add_argument(option, default=None, metavar="PATH", help=f"sweeps: {what}")
    plot.add_argument(
        "--metric",
        default=SweepView.metric,
        help="sweeps: the per-class figure on the y axis (normalized_throughput, "
        "mean_throughput_bits_per_s, fairness_index, friendliness_ratio, difference_ratio, "
        "packet_loss_rate, loss_event_rate)",
    )
    plot.add_argument(
        "--output",
        type=Path,
        default=None,
        metavar="FILE",
        help="sweeps: write the figure here (default: DIR/sweep.png, or DIR/sweep-METRIC.png "
        "for another --metric)",
    )
    plot.set_defaults(handler=_cmd_plot)

    summary = commands.add_parser(
        "summary",
        help="print the tables of a run or sweep directory",
        description="Print the results tables of a run directory, or the summary of a sweep.",
    )
    summary.add_argument("dir", type=Path, help="a directory written by run --out or sweep --out")
    summary.add_argument("--json", action="store_true", help="for a run: the run --json object")
    _add_measure_options(summary, to_seconds=True)
    summary.add_argument(
        "--reference-group",
        default=None,
        metavar="GROUP",
        help="for a run: rate friendliness against this flow group (default: the scenario's "
        "[measure] reference_group, else the long-lived TCP flows)",
    )
    summary.set_defaults(handler=_cmd_summary)

    equation = commands.add_parser(
        "equation",
        help="the rate the TCP throughput equation allows (RFC 5348 §3.1)",
        description="Print the allowed rate X of the TCP throughput equation (RFC 5348 §3.1).",
    )
    equation.add_argument(
        "--size", type=_argument_type(parse_size), required=True, help="segment size, e.g. 1000B"
    )
    equation.add_argument(
        "--rtt", type=_argument_type(_positive_duration), required=True, help="RTT R, e.g. 100ms"
    )
    equation.add_argument(
        "--p", type=_argument_type(_probability), required=True, help="loss event rate in (0, 1]"
    )
    equation.add_argument(
        "--b", type=_argument_type(_acks_per_packet), default=1.0, help="packets per ACK (1)"
    )
    equation.add_argument(
        "--t-rto",
        type=_argument_type(_positive_duration),
        default=None,
        help="retransmission timeout t_RTO (default 4R)",
    )
    equation.add_argument("--json", action="store_true", help="print a JSON object")
    equation.set_defaults(handler=_cmd_equation)

    examples = commands.add_parser(
        "examples",
        help="copy the example and paper scenario files into a directory",
        description="Copy the scenario files shipped with tfrclab (examples/, papers/<paper>/, "
        "crosscheck/) into DIR, to run and edit.",
    )
    examples.add_argument(
        "dir",
        type=Path,
        nargs="?",
        default=Path("tfrclab-scenarios"),
        help="where to put them (default ./tfrclab-scenarios; must be new or empty)",
    )
    examples.add_argument(
        "--force", action="store_true", help="overwrite files of the same name in DIR"
    )
    examples.set_defaults(handler=_cmd_examples)

    demo = commands.add_parser(
        "demo",
        help="reproduce Floyd 2000 Fig. 2 (one TFRC flow, periodic loss)",
        description="Run Floyd 2000 Fig. 2, print a table and write the figure as a PNG.",
    )
    demo.add_argument("--out", type=Path, default=Path("out/demo"), help="output folder (out/demo)")
    demo.add_argument("--preset", choices=PRESETS, default="floyd2000", help="TFRC parameters")
    demo.add_argument(
        "--duration",
        type=_argument_type(_positive_duration),
        default=15.0,
        help="simulated time (15s)",
    )
    demo.set_defaults(handler=_cmd_demo)

    from tfrclab.ns2 import cli as ns2_cli

    ns2_cli.register(commands)
    from tfrclab.reproduce import cli as reproduce_cli

    reproduce_cli.register(commands)
    from tfrclab import transport_cli

    transport_cli.register(commands)
    from tfrclab.testbed import cli as testbed_cli

    testbed_cli.register(commands)
    from tfrclab.fluid import cli as fluid_cli

    fluid_cli.register(commands)
    from tfrclab import twin_cli

    twin_cli.register(commands)
    from tfrclab.evaluate import cli as evaluate_cli

    evaluate_cli.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``tfrclab`` command with ``argv`` (default: ``sys.argv[1:]``).

    Returns:
        The exit status: 0 on success, 2 for bad arguments, 1 for failures while running.
    """
    # numpy's OpenBLAS starts a thread per core when imported, and those threads take CPU from
    # the simulation (0.1-0.15 s of a 0.8 s fig09 run on 2 cores). No command does linear
    # algebra; a value the user set is kept. Sweep workers inherit it.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 2)
    handler: Callable[[argparse.Namespace], int] = args.handler

    # SIGTERM ends a command like Ctrl-C: sweeps stop their workers, nothing half-written stays.
    previous = signal.getsignal(signal.SIGTERM)
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _interrupt)
    try:
        return handler(args)
    except ScenarioError as err:
        one_line = " ".join(str(err).split())
        print(f"tfrclab {args.command}: error: {one_line}", file=sys.stderr)
        return 2
    except ControllerError as err:
        print(f"tfrclab {args.command}: error: {' '.join(str(err).split())}", file=sys.stderr)
        return 1
    except (ConfigError, ValueError, KeyError) as err:
        text = str(err.args[0]) if isinstance(err, KeyError) and err.args else str(err)
        print(f"tfrclab {args.command}: error: {' '.join(text.split())}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"tfrclab {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (``tfrclab summary DIR | head``): not an error. Point stdout at
        # nothing so that the interpreter's final flush does not complain again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except (RuntimeError, OSError) as err:
        if isinstance(err, OSError):
            print(f"tfrclab {args.command}: error: {err}", file=sys.stderr)
            return 1
        if not _is_sweep_error(err):
            raise
        print(f"tfrclab {args.command}: error: {' '.join(str(err).split())}", file=sys.stderr)
        return 1
    finally:
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, previous)


def _is_sweep_error(err: BaseException) -> bool:
    """Whether ``err`` is a :class:`tfrclab.sweep.SweepError`.

    Checked without importing the sweep module (and so pandas) for commands that never load it.
    """
    sweep = sys.modules.get("tfrclab.sweep")
    return sweep is not None and isinstance(err, sweep.SweepError)


def _interrupt(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt
