"""The ``tfrclab send`` and ``tfrclab recv`` commands (registered by tfrclab.cli.app).

Kept apart from :mod:`tfrclab.transport` so that building the command line, for ``--help`` or
any other command, does not import the transport's dependencies: each handler imports it when
it runs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tfrclab.units import parse_duration, parse_size

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from tfrclab.transport import Sample, Session


def _duration(text: str) -> float:
    try:
        seconds = parse_duration(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    if not 0 < seconds <= 24 * 3600:
        raise argparse.ArgumentTypeError(f"duration {text!r}: must be more than 0 and at most 24h")
    return seconds


def _size(text: str) -> int:
    try:
        return parse_size(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _rate(text: str) -> float:
    from tfrclab.transport import parse_rate

    try:
        return parse_rate(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _mbps(bytes_per_s: float) -> str:
    return f"{bytes_per_s * 8 / 1e6:8.3f} Mb/s"


def _print_send(sample: Sample, interval_s: float) -> None:
    print(
        f"{sample['time_s']:7.1f}s  sent {_mbps(sample['sent_bytes'] / interval_s)}  "
        f"X {_mbps(sample['x_bytes_per_s'])}  p {sample['p']:.5f}  "
        f"RTT {sample['rtt_s'] * 1e3:8.3f} ms  feedback {sample['feedback_accepted']:5d}  "
        f"rejected {sample['feedback_rejected'] + sample['input_dropped']}",
        flush=True,
    )


def _print_recv(sample: Sample, interval_s: float) -> None:
    print(
        f"{sample['time_s']:7.1f}s  received {_mbps(sample['received_bytes'] / interval_s)}  "
        f"p {sample['p']:.5f}  lost {sample['lost_packets']:5d}  "
        f"RTT {sample['rtt_s'] * 1e3:8.3f} ms  dropped {sample['input_dropped']}",
        flush=True,
    )


def _finish(session: Session, args: argparse.Namespace) -> int:
    report = session.report
    ledger = report["input"]
    dropped = {k: v for k, v in ledger.items() if k not in ("datagrams", "dropped") and v}
    print(
        f"{session.role}: {len(session.samples)} interval(s), datagrams in {ledger['datagrams']}, "
        f"dropped {ledger['dropped']}" + (f" {dropped}" if dropped else ""),
        file=sys.stderr,
    )
    if args.out is not None:
        from tfrclab.transport import write_trace

        path = write_trace(session, args.out, force=args.force)
        print(f"trace written to {path}", file=sys.stderr)
    if session.interrupted:
        print(f"tfrclab {session.role}: interrupted", file=sys.stderr)
        return 130
    if session.role == "send" and report["packets_sent"] == 0 and report["send_errors"] > 0:
        reason = report.get("last_send_error") or "the socket refused every datagram"
        print(
            f"tfrclab send: nothing could be sent to {session.peer}: "
            f"{report['send_errors']} datagram(s) refused ({reason})",
            file=sys.stderr,
        )
        return 1
    return 0


def _session_with_events(args: argparse.Namespace, run: Callable[[], Session]) -> Session:
    """Runs the session; with ``--events``, writes its event log there as JSON lines."""
    if args.events is None:
        return run()
    from tfrclab.media import EventLog
    from tfrclab.outdir import check_file_writable

    check_file_writable(args.events, "--events")
    log = EventLog.attach()
    try:
        session = run()
    finally:
        log.detach()
    log.write_jsonl(args.events)
    print(f"{len(log.rows)} event(s) written to {args.events}", file=sys.stderr)
    return session


def _cmd_send(args: argparse.Namespace) -> int:
    from tfrclab.transport import check_trace_out, send

    if args.sqrt_rtt_spacing is not None:
        args.sqrt_rtt_spacing = args.sqrt_rtt_spacing == "on"
    if args.out is not None:
        check_trace_out(args.out, args.force)
    session = _session_with_events(
        args,
        lambda: send(
            args.to,
            args.duration,
            app_rate_bps=args.app_rate,
            size_bytes=args.size,
            preset=args.preset,
            bind=args.bind,
            interval_s=args.interval,
            on_sample=lambda s: _print_send(s, args.interval),
            oscillation_prevention=args.sqrt_rtt_spacing,
        ),
    )
    return _finish(session, args)


def _cmd_recv(args: argparse.Namespace) -> int:
    from tfrclab.transport import check_trace_out, recv

    if args.out is not None:
        check_trace_out(args.out, args.force)
    session = _session_with_events(
        args,
        lambda: recv(
            args.bind,
            args.duration,
            preset=args.preset,
            interval_s=args.interval,
            on_sample=lambda s: _print_recv(s, args.interval),
        ),
    )
    return _finish(session, args)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--duration", type=_duration, default=30.0, help="how long to run (default 30s)"
    )
    from tfrclab.cli.options import PRESETS

    parser.add_argument(
        "--preset", choices=PRESETS, default="rfc5348", help="TFRC preset (default rfc5348)"
    )
    parser.add_argument(
        "--interval", type=_duration, default=1.0, help="statistics interval (default 1s)"
    )
    parser.add_argument("--out", type=Path, default=None, help="write a trace directory here")
    parser.add_argument("--force", action="store_true", help="replace an existing trace")
    parser.add_argument(
        "--events",
        type=Path,
        default=None,
        help="write the session's event log (reports, rate changes, loss events) here, "
        "as JSON lines",
    )


def register(commands: Any) -> None:
    """Add ``send`` and ``recv`` to the ``tfrclab`` command's subparsers."""
    send_cmd = commands.add_parser(
        "send",
        help="send a TFRC flow over real UDP",
        description="Send a TFRC flow to ADDR over UDP, printing each second's send rate, the "
        "allowed rate X, p and the RTT. Ctrl-C stops early (the trace is still written).",
    )
    send_cmd.add_argument("--to", required=True, help="the receiver, host:port")
    send_cmd.add_argument(
        "--app-rate",
        type=_rate,
        default=None,
        help="a constant-rate application, e.g. 2Mbps (default: greedy)",
    )
    send_cmd.add_argument(
        "--size", type=_size, default=1000, help="datagram size, header included (default 1000B)"
    )
    send_cmd.add_argument("--bind", default=None, help="local address (default: any port)")
    send_cmd.add_argument(
        "--sqrt-rtt-spacing",
        choices=("on", "off"),
        default=None,
        type=str,
        help="the sqrt(RTT) inter-packet spacing of RFC 5348 §4.5 (default: the preset's, on)",
    )
    _common(send_cmd)
    send_cmd.set_defaults(handler=_cmd_send)

    recv_cmd = commands.add_parser(
        "recv",
        help="receive a TFRC flow over real UDP",
        description="Receive a TFRC flow on ADDR over UDP and send its feedback, printing each "
        "second's receive rate, p, losses and the sender's RTT.",
    )
    recv_cmd.add_argument("--bind", required=True, help="local address, host:port")
    _common(recv_cmd)
    recv_cmd.set_defaults(handler=_cmd_recv)
