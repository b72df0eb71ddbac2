"""``tfrclab summary``: print the tables of a run or sweep directory."""

from __future__ import annotations

import json
from pathlib import Path

from tfrclab.cli.consoles import stdout_console
from tfrclab.cli.options import add_measure_options
from tfrclab.cli.sweep import SweepView, check_sweep_window, summarize_sweep

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    import argparse
    from typing import Any

    from tfrclab.result import Result

__all__ = ["register", "run_directory_kind"]


def run_directory_kind(directory: Path) -> str:
    """``"run"`` or ``"sweep"``: what ``directory`` holds, or ValueError saying it is neither."""
    from tfrclab.outdir import directory_kind

    kind = directory_kind(directory)
    if kind not in ("run", "sweep"):
        raise ValueError(
            f"{directory}: neither a complete run directory (run.json) nor a sweep (sweep.json)"
        )
    return kind


def _check_reference_group(reference: str, result: Result, directory: Path) -> None:
    """Refuse a ``--reference-group`` that is no flow's group, naming the option and the groups.

    The scenario's own ``[measure] reference_group`` was checked when it was read; the option
    is checked here, against the groups the run's flows have (a group with no flow active in
    the window is refused by the summary itself).
    """
    from tfrclab.summary import flow_labels

    groups = list(dict.fromkeys(flow_labels(result)[0]))
    if reference not in groups:
        listed = ", ".join(repr(group) for group in groups) or "none"
        raise ValueError(
            f"--reference-group: expected the group of a flow of {directory}, one of {listed}, "
            f"found {reference!r}"
        )


def _cmd_summary(args: argparse.Namespace) -> int:
    directory: Path = args.dir
    if run_directory_kind(directory) == "sweep":
        check_sweep_window(directory, args)
        if args.reference_group is not None:
            raise ValueError(
                f"{directory}: a sweep's friendliness was rated against the reference group its "
                "scenario set when it ran; to change it, run the sweep again with --set "
                "measure.reference_group=GROUP into another --out"
            )
        return summarize_sweep(directory, plot=False, view=SweepView())

    from tfrclab.report import classes_table, flows_table, json_summary, links_table
    from tfrclab.result import Result

    result = Result.from_parquet(directory)
    if args.reference_group is not None:
        _check_reference_group(args.reference_group, result, directory)
    summary = result.summary(args.measure_from_s, args.measure_to_s, args.reference_group)
    if args.json:
        print(json.dumps(json_summary(result, summary)))
        return 0
    console = stdout_console()
    console.print(flows_table(result, summary))
    console.print(classes_table(summary))
    console.print(links_table(result, summary))
    return 0


def register(commands: Any) -> None:
    """Add ``summary`` to the ``tfrclab`` command's subparsers."""
    summary = commands.add_parser(
        "summary",
        help="print the tables of a run or sweep directory",
        description="Print the results tables of a run directory, or the summary of a sweep.",
    )
    summary.add_argument("dir", type=Path, help="a directory written by run --out or sweep --out")
    summary.add_argument("--json", action="store_true", help="for a run: the run --json object")
    add_measure_options(summary, to_seconds=True)
    summary.add_argument(
        "--reference-group",
        default=None,
        metavar="GROUP",
        help="for a run: rate friendliness against this flow group (default: the scenario's "
        "[measure] reference_group, else the long-lived TCP flows)",
    )
    summary.set_defaults(handler=_cmd_summary)
