"""``tfrclab equation``: the rate the TCP throughput equation allows (RFC 5348 §3.1)."""

from __future__ import annotations

import json

from tfrclab.cli.options import acks_per_packet, loss_event_rate, positive_duration
from tfrclab.cli.parser import argument_type
from tfrclab.equation import throughput_bytes_per_s
from tfrclab.units import format_duration, parse_size

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    import argparse
    from typing import Any

__all__ = ["register"]


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


def register(commands: Any) -> None:
    """Add ``equation`` to the ``tfrclab`` command's subparsers."""
    equation = commands.add_parser(
        "equation",
        help="the rate the TCP throughput equation allows (RFC 5348 §3.1)",
        description="Print the allowed rate X of the TCP throughput equation (RFC 5348 §3.1).",
    )
    equation.add_argument(
        "--size", type=argument_type(parse_size), required=True, help="segment size, e.g. 1000B"
    )
    equation.add_argument(
        "--rtt", type=argument_type(positive_duration), required=True, help="RTT R, e.g. 100ms"
    )
    equation.add_argument(
        "--p", type=argument_type(loss_event_rate), required=True, help="loss event rate in (0, 1]"
    )
    equation.add_argument(
        "--b", type=argument_type(acks_per_packet), default=1.0, help="packets per ACK (1)"
    )
    equation.add_argument(
        "--t-rto",
        type=argument_type(positive_duration),
        default=None,
        help="retransmission timeout t_RTO (default 4R)",
    )
    equation.add_argument("--json", action="store_true", help="print a JSON object")
    equation.set_defaults(handler=_cmd_equation)
