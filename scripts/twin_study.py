"""The twin agreement study (docs/twin.md): netsim against the testbed over a matrix of cells.

Each cell is ``scenarios/twin/cubic-tfrc.toml`` with its flows and queue replaced: a kernel-like
TCP (netsim's cubic, bbr or sack with the linux preset; the kernel's cubic, bbr or reno) alone
or against one TFRC flow, through DropTail of half or twice the BDP or RED, run with ``tfrclab
twin`` over the seeds given. Needs root (the testbed) and runs in real time: about (duration +
10 s) x seeds per cell, said before it starts. Writes DIR/CELL/ (each twin's files) and
DIR/study.json, and prints a Markdown table.

    sudo .venv/bin/python scripts/twin_study.py --out out/twin-study --seeds 1-2
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from tfrclab.ns2.cli import parse_seeds
from tfrclab.scenario import Scenario
from tfrclab.twin import TOLERANCES, decide, netsim_metrics, twin

#: The study's base scenario.
BASE = Path(__file__).resolve().parents[1] / "python/tfrclab/scenarios/twin/cubic-tfrc.toml"

#: 10 Mb/s and 100 ms of propagation RTT: a BDP of 83 packets of 1500 bytes.
BDP_PACKETS = 83
QUEUES: dict[str, dict[str, Any]] = {
    "droptail-0.5bdp": {"kind": "droptail", "limit": BDP_PACKETS // 2},
    "droptail-2bdp": {"kind": "droptail", "limit": 2 * BDP_PACKETS},
    "red-2bdp": {"kind": "red", "preset": "ns2_35", "limit": 2 * BDP_PACKETS},
}
TCPS = ("cubic", "bbr", "sack")
TFRC = {"kind": "tfrc", "preset": "floyd2000", "size": "1028B", "start": "0s"}


def cells(duration: str) -> list[tuple[str, Scenario]]:
    """Every cell's label and scenario."""
    base = Scenario.load(BASE)
    out = []
    for queue_name, queue in QUEUES.items():
        for tcp in TCPS:
            flow = {"kind": "tcp", "variant": tcp, "preset": "linux",
                    "start": {"uniform": ["0s", "0.1s"]}}  # fmt: skip
            for against in (None, "tfrc"):
                flows = [flow] if against is None else [flow, TFRC]
                label = f"{tcp}{'+tfrc' if against else ''}/{queue_name}"
                scenario = base.with_(
                    flows=flows,
                    duration=duration,
                    **{"topology.bottleneck.queue": queue},
                )
                out.append((label, scenario))
    return out


def main(argv: list[str] | None = None) -> int:
    """Run the study; print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("out/twin-study"))
    parser.add_argument("--seeds", type=parse_seeds, default=[1, 2])
    parser.add_argument("--duration", default="30s")
    parser.add_argument("--only", default=None, help="run the cells whose label contains this")
    parser.add_argument(
        "--reanalyze",
        action="store_true",
        help="no testbed: rerun netsim's side with today's code against DIR/study.json's runs",
    )
    args = parser.parse_args(argv)
    if args.reanalyze:
        return reanalyze(args.out, args.duration)
    chosen = [(label, s) for label, s in cells(args.duration)
              if args.only is None or args.only in label]  # fmt: skip
    per_cell = (Scenario.load(BASE).duration_s + 10) * len(args.seeds)
    print(f"{len(chosen)} cells, about {len(chosen) * per_cell / 60:.0f} min", file=sys.stderr)
    rows: dict[str, Any] = {}
    for label, scenario in chosen:
        print(f"{label} ...", file=sys.stderr, flush=True)
        report = twin(scenario, args.seeds, args.out / label.replace("/", "-"))
        rows[label] = report.as_dict()
        (args.out / "study.json").write_text(json.dumps(rows, indent=2, default=float) + "\n")
    print("| cell | metric | netsim | testbed | verdict |")
    print("|---|---|---|---|---|")
    for label, row in rows.items():
        for c in row["comparisons"]:
            print(f"| {label} | {c['metric']} | {c['mean_tfrclab']:.4g} | {c['mean_ns2']:.4g} | "
                  f"{c['verdict']} |")  # fmt: skip
    return 0


def reanalyze(out: Path, duration: str) -> int:
    """Compare netsim's side, rerun now, with the testbed runs already in ``out/study.json``."""
    from dataclasses import replace

    from tfrclab.ns2.crosscheck import compare

    rows = json.loads((out / "study.json").read_text())
    scenarios = dict(cells(duration))
    print("| cell | metric | netsim | testbed | difference (95% CI) | verdict |")
    print("|---|---|---|---|---|---|")
    for label, row in rows.items():
        ours = [netsim_metrics(scenarios[label], seed, row["window_s"][0])[0]
                for seed in row["seeds"]]  # fmt: skip
        for metric, tolerance in TOLERANCES.items():
            if metric not in ours[0]:
                continue
            theirs = [m.get(metric, float("nan")) for m in row["testbed"]]
            c = compare(metric, [m[metric] for m in ours], theirs, tolerance)
            c = replace(c, verdict=decide(c, tolerance))
            ci = f"{c.difference:+.3g} ({c.ci_low:+.3g}, {c.ci_high:+.3g})"
            print(f"| {label} | {metric} | {c.mean_tfrclab:.4g} | {c.mean_ns2:.4g} | {ci} | "
                  f"{c.verdict} |")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
