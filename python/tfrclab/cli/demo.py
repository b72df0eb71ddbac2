"""``tfrclab demo``: Floyd 2000 Fig. 2 over the scripted channel, with its figure."""

from __future__ import annotations

from pathlib import Path

from tfrclab.cli.options import PRESETS, positive_duration
from tfrclab.cli.parser import argument_type
from tfrclab.units import format_duration

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    import argparse
    from typing import Any

__all__ = ["MAX_DEMO_SECONDS", "register"]

MAX_DEMO_SECONDS = 10_000.0
"""The longest ``demo`` run (the scripted channel keeps every feedback report in memory, and the
figure draws every one)."""


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


def register(commands: Any) -> None:
    """Add ``demo`` to the ``tfrclab`` command's subparsers."""
    demo = commands.add_parser(
        "demo",
        help="reproduce Floyd 2000 Fig. 2 (one TFRC flow, periodic loss)",
        description="Run Floyd 2000 Fig. 2, print a table and write the figure as a PNG.",
    )
    demo.add_argument("--out", type=Path, default=Path("out/demo"), help="output folder (out/demo)")
    demo.add_argument("--preset", choices=PRESETS, default="floyd2000", help="TFRC parameters")
    demo.add_argument(
        "--duration",
        type=argument_type(positive_duration),
        default=15.0,
        help="simulated time (15s)",
    )
    demo.set_defaults(handler=_cmd_demo)
