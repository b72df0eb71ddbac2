"""The ``tfrclab evaluate`` command (see :mod:`tfrclab.evaluate`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tfrclab.reproduce.cli import positive_int

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["register"]


def _seeds(text: str) -> list[int]:
    from tfrclab.ns2.cli import parse_seeds

    try:
        return parse_seeds(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected seeds like 1-5 or 1,4,9, got {text!r}"
        ) from None


def check_out(out: Path) -> None:
    """Refuse ``--out`` unless it is new, empty, or an earlier scorecard (it is replaced whole).

    Raises:
        ValueError: one line naming the problem.
    """
    from tfrclab.outdir import check_directory_writable

    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out} is a file, not a directory; choose another --out")
    if out.is_dir() and any(out.iterdir()) and not (out / "scorecard.json").exists():
        raise ValueError(
            f"--out {out} holds files that are not a scorecard, and it would be replaced whole; "
            "choose another --out (nothing was changed)"
        )
    check_directory_writable(out, replaced=True)


def _cmd_evaluate(args: argparse.Namespace) -> int:
    from tfrclab.evaluate.algorithm import parse_algorithm, parse_competitors
    from tfrclab.evaluate.battery import FULL, QUICK
    from tfrclab.evaluate.scorecard import evaluate, write_scorecard

    algorithm = parse_algorithm(args.algo)
    competitors = parse_competitors(args.against)
    check_out(args.out)
    plan = QUICK if args.quick else FULL
    if args.seeds is not None:
        plan = plan.with_seeds(args.seeds)

    def progress(line: str) -> None:
        if not args.quiet:
            print(f"evaluate: {line}", file=sys.stderr, flush=True)

    executor = "dask" if args.scheduler is not None else args.executor
    card = evaluate(
        algorithm,
        competitors,
        plan,
        jobs=args.jobs,
        progress=progress,
        executor=executor,
        scheduler=args.scheduler,
    )
    paths = write_scorecard(card, args.out)
    if args.json:
        print(json.dumps(json.loads(paths[2].read_text(encoding="utf-8")), indent=2))
        return 0
    width = max(len(row.id) for row in card.rows)
    for row in card.rows:
        print(f"{row.id:<{width}}  {row.verdict:<13}  {row.value.format()}")
    print(f"\n{algorithm.label}: {card.summary()} ({card.wall_s:.1f} s)")
    print(f"scorecard: {paths[0]}, {paths[1].name}, {paths[2].name}")
    return 0


def register(commands: Any) -> None:
    """Add ``evaluate`` to the ``tfrclab`` command's subparsers."""
    cmd = commands.add_parser(
        "evaluate",
        help="run a congestion control through an RFC 9743 battery: scorecard.md/.html/.json",
        description="Run ALGO through the battery (TCP-friendliness against each competitor "
        "at DropTail 0.5 and 2 BDP and RED, harm to the competitors in throughput, latency "
        "and loss, fairness among ALGO flows, smoothness, responsiveness and aggressiveness "
        "to a step of cross traffic, bufferbloat, high loss, loss of all feedback) and write "
        "DIR/scorecard.md, scorecard.html and scorecard.json: per criterion the scenario, the "
        "metric, the mean over seeds with its 95% interval and a verdict decided on the "
        "interval against a threshold written beside the RFC 9743 sentence it serves (meets, "
        "flag, inconclusive, not evaluated). ALGO is KIND[:KEY=VALUE,...] "
        "(tfrc:preset=rfc5348, gaimd:alpha=0.31,beta=0.875, tcp:variant=cubic, tear, rap, "
        "cbr:rate=...) or a TOML table. Exit 0 whatever the verdicts (they are findings), 2 "
        "for bad input. docs/evaluation.md has every criterion.",
    )
    cmd.add_argument("algo", metavar="ALGO", help="e.g. tfrc:preset=rfc5348")
    cmd.add_argument(
        "--against",
        default="reno,cubic",
        metavar="NAMES",
        help="competitors, the kernel's TCP: reno, newreno, cubic, bbr (default reno,cubic)",
    )
    cmd.add_argument(
        "--quick", action="store_true", help="fewer seeds and shorter runs (under a minute)"
    )
    cmd.add_argument(
        "--seeds", type=_seeds, default=None, help="e.g. 1-10 (default: 5 quick, 20 full)"
    )
    cmd.add_argument(
        "--jobs", type=positive_int, default=1, help="parallel runs (worker processes; 1)"
    )
    cmd.add_argument(
        "--executor",
        choices=("local", "dask"),
        default="local",
        help="where runs go: worker processes here (local), or a dask.distributed cluster",
    )
    cmd.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="dask scheduler address, e.g. tcp://host:8786 (implies --executor dask; its "
        "workers need tfrclab installed; default: a local cluster of --jobs processes)",
    )
    cmd.add_argument("--out", type=Path, required=True, help="output directory (replaced)")
    cmd.add_argument("--json", action="store_true", help="print scorecard.json on stdout")
    cmd.add_argument("--quiet", action="store_true", help="no progress on stderr")
    cmd.set_defaults(handler=_cmd_evaluate)
