"""The ``tfrclab testbed`` command: bring up an emulated link, run a command, tear it down.

``tfrclab testbed --rate 10Mb/s --delay 25ms --queue droptail:50 [--loss 0.01] -- CMD ...``
runs CMD (by default in the root namespace, with the testbed's names and addresses in its
environment; with ``--side a`` or ``--side b`` inside that namespace) and exits with its status.
Without CMD the testbed stays up until Ctrl-C or SIGTERM. Either way everything is removed at
the end, and the relay's counters are printed to stderr (``--report FILE`` writes them as JSON).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["register"]


def _probability(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a probability, got {text!r}") from None
    if not 0.0 <= value < 1.0:
        raise argparse.ArgumentTypeError(f"must be in [0, 1), got {value}")
    return value


def register(commands: Any) -> None:
    """Add ``testbed`` to the ``tfrclab`` command's subparsers."""
    testbed = commands.add_parser(
        "testbed",
        help="emulate a link between two network namespaces and run a command over it (root)",
        description="Create two network namespaces, a (10.200.0.1) and b (10.200.0.2), joined "
        "by a user-space link emulator (Bernoulli loss, netsim's DropTail or RED queue, rate, "
        "delay per direction), run CMD and remove everything. CMD runs in the root namespace "
        "with TFRCLAB_NS_A, TFRCLAB_NS_B, TFRCLAB_ADDR_A and TFRCLAB_ADDR_B set (use "
        "'ip netns exec $TFRCLAB_NS_B ...'), or inside one side with --side. Without CMD the "
        "testbed stays up until Ctrl-C. Needs root and /dev/net/tun. See docs/testbed.md.",
    )
    testbed.add_argument("--rate", default="10Mb/s", help="link rate (10Mb/s)")
    testbed.add_argument("--delay", default="25ms", help="one-way propagation delay (25ms)")
    testbed.add_argument(
        "--queue",
        default="droptail:50",
        help="droptail[:PACKETS] or red[:ns2_35|ns2_2000|adaptive] (droptail:50)",
    )
    testbed.add_argument(
        "--loss", type=_probability, default=0.0, help="Bernoulli loss probability (0)"
    )
    for key in ("rate", "delay", "queue"):
        testbed.add_argument(
            f"--reverse-{key}", default=None, help=f"b-to-a {key} (default: as a to b)"
        )
    testbed.add_argument(
        "--reverse-loss", type=_probability, default=None, help="b-to-a loss (default: --loss)"
    )
    testbed.add_argument("--seed", type=int, default=1, help="seed of loss and RED draws (1)")
    testbed.add_argument(
        "--tick",
        default="0s",
        help="relay clock granularity: deliveries due within a tick leave together, up to a "
        "tick late, for less CPU (0s: exact; Dummynet's 1 kHz clock is 1ms)",
    )
    testbed.add_argument(
        "--slack",
        default="0s",
        help="how late a delivery may be to leave in one wake-up with later ones, for less CPU "
        "(0s: exact; isolated deliveries stay exact)",
    )
    testbed.add_argument("--log", type=Path, default=None, help="write the per-packet log here")
    testbed.add_argument("--report", type=Path, default=None, help="write the counters as JSON")
    testbed.add_argument(
        "--side", choices=("a", "b"), default=None, help="run CMD inside this namespace"
    )
    testbed.add_argument("cmd", nargs=argparse.REMAINDER, help="-- CMD [ARGS...]")
    testbed.set_defaults(handler=_cmd_testbed)


def _cmd_testbed(args: argparse.Namespace) -> int:
    from tfrclab.outdir import check_file_writable
    from tfrclab.testbed.emulator import Testbed
    from tfrclab.testbed.interrupts import OneInterrupt, signals_deferred

    # Before the testbed comes up and CMD runs, not after.
    for option, path in (("--report", args.report), ("--log", args.log)):
        if path is not None:
            check_file_writable(path, option)

    cmd: list[str] = list(args.cmd)
    if cmd[:1] == ["--"]:
        cmd = cmd[1:]
    reverse = {
        key: value
        for key, value in (
            ("rate", args.reverse_rate),
            ("delay", args.reverse_delay),
            ("queue", args.reverse_queue),
            ("loss", args.reverse_loss),
        )
        if value is not None
    }
    status = 0
    bed = Testbed(
        rate=args.rate,
        delay=args.delay,
        queue=args.queue,
        loss=args.loss,
        reverse=reverse or None,
        seed=args.seed,
        log=args.log,
        tick=args.tick,
        slack=args.slack,
    )
    # The first SIGINT or SIGTERM ends the command; more cannot cut its cleanup or its report
    # short (the testbed's own holding steps aside for this one).
    interrupts = OneInterrupt()
    try:
        interrupts.install(always=True)
        with bed as tb:
            env = dict(os.environ)
            env.update(
                TFRCLAB_NS_A=tb.namespaces["a"],
                TFRCLAB_NS_B=tb.namespaces["b"],
                TFRCLAB_ADDR_A=tb.address("a"),
                TFRCLAB_ADDR_B=tb.address("b"),
            )
            if not cmd:
                print(
                    f"testbed up: a = {tb.namespaces['a']} ({tb.address('a')}), "
                    f"b = {tb.namespaces['b']} ({tb.address('b')}); Ctrl-C to remove it",
                    file=sys.stderr,
                    flush=True,
                )
                with contextlib.suppress(KeyboardInterrupt):
                    signal.pause()
            else:
                # In a process group of its own (in this session, so that it can have the
                # terminal), killed whole when the testbed closes.
                proc = tb.popen(
                    args.side, cmd, env=env, start_new_session=False, preexec_fn=_own_group
                )
                status = _wait_in_foreground(proc)
    finally:
        try:
            # Interrupted or not, the counters the relay reported are not lost.
            with signals_deferred():
                _print_report(bed.report, args.report)
        finally:
            interrupts.uninstall()
    return status


def _own_group() -> None:
    """In the child before ``exec``: lead a new process group."""
    os.setpgid(0, 0)


def _wait_in_foreground(proc: Any) -> int:
    """Wait for ``proc``, giving it the terminal while it runs if this process has it.

    ``proc`` leads a process group of its own; a terminal's Ctrl-C then reaches it (not this
    process, which removes the testbed once it has ended). What it leaves running in its group
    is killed when it ends.
    """
    from tfrclab._process import kill_group

    fd = sys.stdin.fileno() if sys.stdin is not None and sys.stdin.isatty() else -1
    handed = False
    if fd >= 0:
        with contextlib.suppress(OSError):
            if os.tcgetpgrp(fd) == os.getpgrp():
                os.tcsetpgrp(fd, proc.pid)
                handed = True
    try:
        # Wait without reaping: CMD's zombie keeps its group id ours while what CMD left running
        # in its group is killed; then reap it.
        os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
        kill_group(proc)
        return int(proc.wait())
    finally:
        if handed:
            # Taking the terminal back from the background would stop this process: SIGTTOU off.
            previous = signal.signal(signal.SIGTTOU, signal.SIG_IGN)
            try:
                with contextlib.suppress(OSError):
                    os.tcsetpgrp(fd, os.getpgrp())
            finally:
                signal.signal(signal.SIGTTOU, previous)


def _print_report(report: dict[str, Any] | None, path: Path | None) -> None:
    """Print the relay's counters on stderr and write them to ``path`` (``--report``).

    Raises:
        OSError: naming ``--report`` and ``path``, if it cannot be written.
    """
    if report is None:
        if path is not None:
            print(
                f"tfrclab testbed: --report {path} not written: the relay reported no counters",
                file=sys.stderr,
            )
        return
    for direction in ("forward", "reverse"):
        d = report[direction]
        print(
            f"{direction}: {d['arrivals']} arrived, {d['loss_drops']} lost, "
            f"{d['queue_drops']} dropped by the queue, {d['departures']} delivered "
            f"({d['departed_bytes']} bytes); late p50 {d['lateness_p50_us']} us, "
            f"p99 {d['lateness_p99_us']} us, max {d['lateness_max_us']:.0f} us",
            file=sys.stderr,
        )
    if path is not None:
        from tfrclab.outdir import write_named

        write_named(path, json.dumps(report, indent=1) + "\n", "--report")
