"""``tfrclab run``: run one scenario, print its tables and, with ``--out``, write its directory."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tfrclab.cli.consoles import stderr_console, stdout_console
from tfrclab.cli.options import add_measure_options, add_set_option, seed_number
from tfrclab.cli.parser import argument_type
from tfrclab.cli.scenario_io import load_scenario, measure_sets, write_run

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    import argparse
    from typing import Any

    from tfrclab.result import Result
    from tfrclab.scenario import Scenario

__all__ = ["register"]


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

    console = stderr_console()
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


def _check_trace_options(args: argparse.Namespace, scenario: Scenario) -> None:
    """Check ``--pcap`` and ``--ns2-trace`` against ``--out`` and the scenario's trace keys.

    Traces inside ``--out`` are refused (the directory is replaced when the run is written),
    and so are places they could not be written to (before the run, not after it); trace keys
    the scenario sets without a destination to write to get a note on stderr.
    """
    # tfrclab.outdir (shutil, tempfile) only when there is a destination to check.
    if args.pcap is not None:
        from tfrclab.outdir import check_directory_writable

        check_directory_writable(args.pcap, "--pcap")
    if args.ns2_trace is not None:
        from tfrclab.outdir import check_file_writable

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
    from tfrclab.room import check_room, trace_destinations, write_cost

    traces = [
        (option, given, kind)
        for option, given, kind in (
            ("--pcap", args.pcap, "pcap"),
            ("--ns2-trace", args.ns2_trace, "ns2_trace"),
        )
        if given is not None
    ]
    # Without its key a trace covers every link, and is estimated so (the API does the same).
    cost, destinations = trace_destinations(scenario, traces)
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
    told: set[tuple[str, str]] = set()
    for trace in result.traces:
        where = f"{trace['kind']} trace {trace['path']} (link {trace['link']})"
        if trace["error"] is not None:
            # One file (an ns-2 trace holds every link) fails once, not once per link.
            if (trace["kind"], trace["path"]) not in told:
                told.add((trace["kind"], trace["path"]))
                print(
                    f"tfrclab run: error: {trace['kind']} trace {trace['path']}: {trace['error']}",
                    file=sys.stderr,
                )
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
    scenario = load_scenario(args.scenario, [*args.set, *measure_sets(args)])
    if args.out is not None:
        # Imported only here: tfrclab.outdir's shutil and tempfile cost a run without --out
        # about 3 ms of start-up.
        from tfrclab.outdir import check_run_out

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
            figures = write_run(result, args.out)
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

    console = stdout_console()
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
    failed_files = {(t["kind"], t["path"]) for t in result.traces if t["error"] is not None}
    for trace in result.traces:
        file = (trace["kind"], trace["path"])
        records_by_file[file] = records_by_file.get(file, 0) + trace["written"]
    for (kind, path), records in records_by_file.items():
        if (kind, path) in failed_files:
            console.print(f"{kind}: {path} (failed: see the error above; not complete)")
        else:
            console.print(f"{kind}: {path} ({records} records)")
    return 1 if failed else 0


def register(commands: Any) -> None:
    """Add ``run`` to the ``tfrclab`` command's subparsers."""
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
        "--seed",
        type=argument_type(seed_number),
        default=None,
        help="seed (default: the scenario's)",
    )
    add_set_option(run)
    add_measure_options(run, to_seconds=False)
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
