"""The ``tfrclab`` command line: a thin layer over the same API user scripts call.

Errors in the arguments (an unknown option, a duration without a unit, p outside (0, 1], ...)
print one line on stderr and exit with status 2; failures while running (a figure that cannot be
written) print one line and exit with status 1. Neither prints a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn, TypeVar

from tfrclab import ConfigError, __version__
from tfrclab.equation import throughput_bytes_per_s
from tfrclab.units import format_duration, parse_duration, parse_size

T = TypeVar("T")

PRESETS = ("floyd2000", "rfc5348")
"""The TFRC presets the commands accept."""


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are a single line on stderr, with exit status 2."""

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

    out: Path = args.out
    duration_s: float = args.duration
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


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``tfrclab`` command, with one subparser per command."""
    parser = _Parser(
        prog="tfrclab",
        description="A toolkit for TCP-friendly congestion control (TFRC, RFC 5348).",
    )
    parser.add_argument("--version", action="version", version=f"tfrclab {__version__}")
    commands = parser.add_subparsers(title="commands", dest="command", required=True)

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
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``tfrclab`` command with ``argv`` (default: ``sys.argv[1:]``).

    Returns:
        The exit status: 0 on success, 2 for bad arguments, 1 for failures while running.
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 2)
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        return handler(args)
    except (ConfigError, ValueError) as err:
        print(f"tfrclab {args.command}: error: {err}", file=sys.stderr)
        return 2
    except OSError as err:
        print(f"tfrclab {args.command}: error: {err}", file=sys.stderr)
        return 1
