"""The ``tfrclab reproduce`` command: run the registered experiments and write the report."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from typing import Any, Literal

__all__ = ["positive_int", "register"]


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1 (``--jobs``, seed counts)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def register(commands: Any) -> None:
    """Add ``reproduce`` to the ``tfrclab`` command's subparsers."""
    reproduce = commands.add_parser(
        "reproduce",
        help="rerun papers' experiments and check their claims (report.md, report.html)",
        description="Run the registered experiments (all, or the papers and ids given), "
        "evaluate every claim against its tolerance and write DIR/report.md and a "
        "self-contained DIR/report.html. Runs are kept under DIR and reused, so an "
        "interrupted reproduction resumes. A claim holds when its whole 95% confidence "
        "interval lies inside its tolerance and fails when it lies wholly outside; while one "
        "crosses an edge, a full plan runs more seeds (up to --seed-cap times its own) and the "
        "claim is inconclusive if it still crosses. Exit 0 whatever the verdicts (they are "
        "findings).",
    )
    reproduce.add_argument(
        "select", nargs="*", metavar="PAPER|ID", help="e.g. floyd2000 or floyd2000/fig09"
    )
    reproduce.add_argument(
        "--quick", action="store_true", help="fewer seeds and shorter runs (a smoke test)"
    )
    reproduce.add_argument(
        "--jobs",
        type=positive_int,
        default=1,
        help="parallel runs (worker processes; with --referee, also ns-2 runs at once; 1)",
    )
    reproduce.add_argument(
        "--seed-cap",
        type=positive_int,
        default=None,
        metavar="N",
        help="while a claim is inconclusive, add seeds up to N times the plan's (default 4 for "
        "full plans, 1, none added, with --quick)",
    )
    reproduce.add_argument(
        "--executor",
        choices=("local", "dask"),
        default="local",
        help="where sweep runs go: local worker processes, or a dask.distributed cluster",
    )
    reproduce.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDR",
        help="dask scheduler address (implies --executor dask; default: one local cluster of "
        "--jobs workers for the whole reproduction)",
    )
    reproduce.add_argument(
        "--referee",
        choices=("ns2",),
        default=None,
        help="also run each sweep experiment's exportable cells in ns-2.35 on the same seeds and "
        "put ns-2's value of every claim's measure, and their agreement, beside tfrclab's",
    )
    reproduce.add_argument(
        "--sensitivity",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="run each experiment's cells again at every value of the plausible range of the "
        "parameters its paper leaves unstated, and judge every claim there (default: on for "
        "full plans, off with --quick)",
    )
    reproduce.add_argument("--out", type=Path, default=None, help="output directory")
    reproduce.add_argument(
        "--list", action="store_true", help="print the experiments and their claims, run nothing"
    )
    reproduce.add_argument("--quiet", action="store_true", help="no progress on stderr")
    reproduce.add_argument(
        "--json",
        action="store_true",
        help="print the experiments and their claims as JSON on stdout (paper value, tolerance, "
        "measured mean, CI half-width, verdict); with --list, the claims without measurements",
    )
    reproduce.set_defaults(handler=_cmd_reproduce)


def _list(selected: list[Any], as_json: bool) -> int:
    if as_json:
        print(json.dumps([_listed(e) for e in selected], indent=2))
        return 0
    for e in selected:
        print(f"{e.id}  {e.title}")
        print(f"    full: {e.full.describe()}; quick: {e.quick.describe()}")
        for p in e.unstated:
            shown = ", ".join(p.text(v) for v in p.values)
            print(f"    unstated {p.name}: {p.what}; chosen {p.text(p.chosen)}; range {shown}")
        for c in e.claims:
            print(f"    - {c.id}: {c.statement}")
            print(f"      paper: {c.paper_value}; tolerance: {c.tolerance}")
    return 0


def _listed(e: Any) -> dict[str, Any]:
    """An experiment and its claims as JSON-ready values, before any run."""
    return {
        "id": e.id,
        "title": e.title,
        "setup": e.setup,
        "full": e.full.describe(),
        "quick": e.quick.describe(),
        "unstated": [p.as_dict() for p in e.unstated],
        "claims": [{**c.as_dict(), "robust_to_quick": c.robust_to_quick} for c in e.claims],
    }


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from tfrclab.reproduce.registry import experiments

    selected = experiments(args.select)
    if args.list:
        return _list(selected, args.json)
    if args.out is None:
        raise ValueError("--out DIR is required (or --list)")
    from tfrclab.outdir import check_directory_writable

    check_directory_writable(args.out)

    from tfrclab.reproduce.report import write_report
    from tfrclab.reproduce.runner import run_experiment

    out: Path = args.out

    def progress(line: str) -> None:
        if not args.quiet:
            print(line, file=sys.stderr, flush=True)

    with contextlib.ExitStack() as stack:
        scheduler: str | None = args.scheduler
        executor: Literal["local", "dask"] = "dask" if scheduler is not None else args.executor
        if executor == "dask" and scheduler is None:
            from tfrclab.sweep import local_dask_cluster

            scheduler = stack.enter_context(local_dask_cluster(args.jobs))
        outcomes = [
            run_experiment(
                e,
                out,
                quick=args.quick,
                jobs=args.jobs,
                progress=progress,
                executor=executor,
                scheduler=scheduler,
                seed_cap=args.seed_cap,
                referee=args.referee,
                sensitivity=args.sensitivity,
            )
            for e in selected
        ]
    md, page = write_report(outcomes, out)
    if args.json:
        # The same records as DIR/claims.json, for scripts: one object per experiment.
        print(json.dumps([o.as_dict() for o in outcomes], indent=2))
        progress(f"report: {md} and {page}")
        return 0
    for o in outcomes:
        for r in o.results:
            print(f"{o.experiment.id}/{r.claim.id}: {r.verdict}: {r.measured.format()}")
    print(f"report: {md} and {page}")
    return 0
