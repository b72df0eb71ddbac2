"""The ``tfrclab twin`` command (see :mod:`tfrclab.twin`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tfrclab.ns2.cli import parse_seeds
from tfrclab.units import parse_duration

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["register"]


def _cmd_twin(args: argparse.Namespace) -> int:
    from tfrclab.outdir import check_directory_writable
    from tfrclab.scenario import Scenario
    from tfrclab.testbed.capture import tcpdump_missing
    from tfrclab.twin import plan, testbed_available, twin

    scenario = Scenario.load(args.scenario)
    twin_plan = plan(scenario)
    # Before minutes on the testbed, not after them.
    check_directory_writable(args.out)
    why = testbed_available() or (tcpdump_missing() if args.capture else None)
    if why is not None:
        print(f"tfrclab twin: error: {why}", file=sys.stderr)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    real = twin_plan.real_time_s(len(args.seeds))
    again = (
        f" (up to {twin_plan.real_time_s(1) * args.retries / 60:.1f} min more per seed whose "
        "relay is disturbed and is run again)"
        if args.retries
        else ""
    )
    print(
        f"twin: {len(args.seeds)} seed(s) x {twin_plan.duration_s:g} s on the testbed: about "
        f"{real / 60:.1f} min of real time{again}",
        file=sys.stderr,
    )
    report = twin(
        scenario,
        args.seeds,
        args.out,
        start_s=args.measure_from,
        progress=lambda line: print(f"twin: {line}", file=sys.stderr),
        capture=args.capture,
        sysctls=dict(args.sysctl),
        retries=args.retries,
    )
    if args.json:
        print(json.dumps(report.as_dict(), default=float))
    else:
        print(report.table())
        print(f"\n{report.verdict}; written to {args.out}/twin.md and twin.json")
    return 3 if report.verdict == "differ" else 0


def _duration(text: str) -> float:
    try:
        return parse_duration(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _retries(text: str) -> int:
    from tfrclab.twin import MAX_RETRIES

    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= MAX_RETRIES:
        raise argparse.ArgumentTypeError(
            f"expected a whole number 0 to {MAX_RETRIES}, found {text!r}"
        )
    return value


def _sysctl(text: str) -> tuple[str, str]:
    from tfrclab.testbed.sysctl import sysctl_argument

    return sysctl_argument(text)


def register(commands: Any) -> None:
    """Add ``twin`` to the ``tfrclab`` command's subparsers."""
    cmd = commands.add_parser(
        "twin",
        help="run a dumbbell scenario in netsim and on the testbed (kernel TCP) and compare",
        description="Run SCENARIO (a dumbbell of tcp and tfrc flows) in netsim and on the "
        "testbed for each seed: kernel TCP with the same congestion control per socket, "
        "tfrc-udp, the relay emulating the bottleneck. Print each metric's two means, their "
        "difference with a 95% CI and a verdict decided on the interval (agree, differ, or "
        "inconclusive when it crosses the tolerance: run more seeds). Needs root; runs in real "
        "time (said before it starts). Exit 0 when no metric differs, 3 when one does, 2 when "
        "the scenario has no twin.",
    )
    cmd.add_argument("scenario", type=Path, help="scenario file (TOML)")
    cmd.add_argument("--seeds", type=parse_seeds, default=[1], help="e.g. 1-3 (default 1)")
    cmd.add_argument(
        "--from",
        dest="measure_from",
        type=_duration,
        default=5.0,
        help="window start, after the first packet (5s)",
    )
    cmd.add_argument("--out", type=Path, default=Path("out/twin"), help="output folder")
    cmd.add_argument("--json", action="store_true", help="print one JSON object")
    cmd.add_argument(
        "--capture",
        action="store_true",
        help="also capture the packets: each seed's capture.pcap (tcpdump on the testbed's "
        "sender side, headers only) and netsim-pcap/ (netsim's sender access links)",
    )
    cmd.add_argument(
        "--sysctl",
        action="append",
        default=[],
        type=_sysctl,
        metavar="KEY=VALUE",
        help="a kernel setting for the testbed's hosts (net.* only, set in both namespaces "
        "before the flows start; repeat for more), e.g. net.ipv4.tcp_comp_sack_nr=0 to switch "
        "the receiver's SACK compression off. netsim's side runs the scenario as written: "
        "change the same feature there in the scenario",
    )
    cmd.add_argument(
        "--retries",
        type=_retries,
        default=1,
        help="run a seed's testbed side again, up to this many times, when the relay was "
        "disturbed (more than 1%% of its packets delivered over 1 ms late: the machine stalled "
        "it, and the kernel answered a link that was not the one emulated); the report marks "
        "a seed that stayed disturbed (default 1, at most 5)",
    )
    cmd.set_defaults(handler=_cmd_twin)
