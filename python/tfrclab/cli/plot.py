"""``tfrclab plot``: draw the figures of a run or sweep directory."""

from __future__ import annotations

from pathlib import Path

from tfrclab.cli.summary import run_directory_kind
from tfrclab.cli.sweep import SweepView, sweep_figure

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    import argparse
    from typing import Any

__all__ = ["register"]


def _cmd_plot(args: argparse.Namespace) -> int:
    from tfrclab.outdir import check_directory_writable

    directory: Path = args.dir
    kind = run_directory_kind(directory)
    check_directory_writable(directory, "")  # the figures are written there
    if kind == "sweep":
        from tfrclab.sweep import read_manifest

        print(f"figure: {sweep_figure(directory, read_manifest(directory), args)}")
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


def register(commands: Any) -> None:
    """Add ``plot`` to the ``tfrclab`` command's subparsers."""
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
