"""The ``tfrclab export ns2`` and ``tfrclab crosscheck`` commands (registered by tfrclab.cli)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tfrclab.units import parse_duration

# The commands import what they run only when run: building the ``tfrclab`` parser (every
# command, ``--version`` and ``--help`` included) must not load numpy or the simulator.
TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from typing import Any

    from tfrclab.ns2.crosscheck import Comparison

__all__ = ["format_table", "parse_seeds", "register"]


def parse_seeds(text: str) -> list[int]:
    """Seeds written as ``1-12``, ``1,2,7`` or a mix (``1-3,9``).

    >>> parse_seeds("1-3,9")
    [1, 2, 3, 9]
    """
    seeds: list[int] = []
    for part in text.split(","):
        low, _, high = part.strip().partition("-")
        first = int(low)
        last = int(high) if high else first
        if first < 0 or last < first:
            raise argparse.ArgumentTypeError(f"invalid seed range {part!r}")
        seeds.extend(range(first, last + 1))
    if not seeds:
        raise argparse.ArgumentTypeError("no seeds")
    return seeds


def _time(text: str) -> float:
    try:
        return parse_duration(text) if not text.replace(".", "", 1).isdigit() else float(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def format_table(comparisons: list[Comparison], seeds: int) -> str:
    """The cross-check's table: one row per metric."""
    header = f"{'metric':<22} {'tfrclab':>10} {'ns-2':>10} {'diff':>10} {'95% CI':>23}  verdict"
    lines = [f"{seeds} seed(s); diff = tfrclab - ns-2 (Welch t over seeds)", header]
    lines.append("-" * len(header))
    for c in comparisons:
        ci = f"[{c.ci_low:+.4g}, {c.ci_high:+.4g}]"
        lines.append(
            f"{c.metric:<22} {c.mean_tfrclab:>10.4g} {c.mean_ns2:>10.4g} {c.difference:>+10.3g}"
            f" {ci:>23}  {c.verdict}"
        )
    return "\n".join(lines)


def _cmd_export(args: argparse.Namespace) -> int:
    from tfrclab.ns2.export import export_tcl
    from tfrclab.ns2.plan import resolve
    from tfrclab.scenario import Scenario

    to_stdout = args.output is None or str(args.output) == "-"
    if not to_stdout:
        from tfrclab.outdir import check_file_writable, write_named

        check_file_writable(args.output, "--output")
    scenario = Scenario.load(args.scenario)
    plan = resolve(scenario, args.seed, strict=False)
    traced: list[int] = []
    if args.agent_state:
        from tfrclab.ns2.export.agent_state import traced_flows

        traced = list(traced_flows(plan, args.agent_state))
    script = export_tcl(plan, args.sample, agent_state=traced)
    if to_stdout:
        sys.stdout.write(script)
    else:
        write_named(Path(args.output), script, "--output")
    return 0


def _cmd_crosscheck(args: argparse.Namespace) -> int:
    from tfrclab.ns2.crosscheck import NsNotFound, SeedRun, crosscheck
    from tfrclab.scenario import Scenario

    scenario = Scenario.load(args.scenario)

    def progress(seed_run: SeedRun) -> None:
        if not args.json:
            print(f"seed {seed_run.seed} done", file=sys.stderr)

    try:
        comparisons, runs = crosscheck(
            scenario,
            args.seeds,
            start_s=args.measure_from,
            end_s=args.measure_to,
            jobs=args.jobs,
            tolerance=args.tolerance,
            progress=progress,
        )
    except (NsNotFound, RuntimeError) as err:
        print(f"tfrclab crosscheck: error: {err}", file=sys.stderr)
        return 1
    if args.json:
        out: dict[str, Any] = {
            "scenario": str(args.scenario),
            "seeds": args.seeds,
            "measure_from_s": (
                scenario.measure_s[0] if args.measure_from is None else args.measure_from
            ),
            "measure_to_s": scenario.measure_s[1] if args.measure_to is None else args.measure_to,
            "tolerance": args.tolerance,
            "metrics": [c.as_dict() for c in comparisons],
        }
        print(json.dumps(out))
    else:
        print(format_table(comparisons, len(runs)))
    return 0 if all(c.verdict == "agree" for c in comparisons) else 3


def register(commands: Any) -> None:
    """Add ``export`` and ``crosscheck`` to the ``tfrclab`` command's subparsers."""
    export = commands.add_parser(
        "export",
        help="write a scenario as a script for another simulator (ns-2.35)",
        description="Write SCENARIO as an ns-2.35 Tcl script with netsim's draws for the seed. "
        "Parts ns-2 cannot express are refused with one line naming them (exit 2).",
    )
    export.add_argument("target", choices=("ns2",), help="the simulator (ns2)")
    export.add_argument("scenario", type=Path, help="scenario file (TOML)")
    export.add_argument("--seed", type=int, default=None, help="seed (default: the scenario's)")
    export.add_argument(
        "--sample", type=_time, default=None, help="print counters every T (default: the bin)"
    )
    export.add_argument(
        "--agent-state",
        action="append",
        default=[],
        metavar="NAME",
        help="also print the protocol state of the flow entry NAME's agents (TFRC: the "
        "receiver's loss event rate per report, the sender's RTT; TCP: SRTT and RTO); "
        "repeatable; run the script with `stdbuf -oL ns` (docs/crosscheck.md, Agent state)",
    )
    export.add_argument("-o", "--output", type=Path, default=None, help="the .tcl file (stdout)")
    export.set_defaults(handler=_cmd_export)

    check = commands.add_parser(
        "crosscheck",
        help="run a scenario in netsim and ns-2.35 over seeds and compare",
        description="Run SCENARIO in both simulators for each seed (the same draws) and print "
        "each metric's two means, their difference with a 95% CI and a verdict. Exit 0 when "
        "every metric agrees, 3 when one differs, 2 when the scenario cannot be exported.",
    )
    check.add_argument("scenario", type=Path, help="scenario file (TOML)")
    check.add_argument("--seeds", type=parse_seeds, default=[1], help="e.g. 1-12 (default 1)")
    check.add_argument(
        "--measure-from",
        type=_time,
        default=None,
        help="window start (default: the scenario's [measure] from, else 0)",
    )
    check.add_argument(
        "--measure-to",
        type=_time,
        default=None,
        help="window end (default: the scenario's [measure] to, else the end)",
    )
    check.add_argument("--jobs", type=int, default=1, help="seeds run in parallel (1)")
    check.add_argument(
        "--tolerance",
        type=float,
        default=0.02,
        help="relative difference that still agrees when the CI excludes 0 (0.02)",
    )
    check.add_argument("--json", action="store_true", help="print one JSON object")
    check.set_defaults(handler=_cmd_crosscheck)
