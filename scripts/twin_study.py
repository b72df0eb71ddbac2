"""The twin agreement study (docs/twin.md): netsim against the testbed over a matrix of cells.

Each cell is ``scenarios/twin/cubic-tfrc.toml`` with its path, flows and queue replaced: a
bottleneck rate and propagation RTT (10 Mb/s and 100 ms, or 20 Mb/s and 40 ms), a kernel-like
TCP (netsim's cubic, bbr or sack with the linux preset; the kernel's cubic, bbr or reno) alone,
against one TFRC flow, or four of it against four TFRC flows, through DropTail of half or twice
the BDP or RED, run with ``tfrclab twin`` over the seeds given. Needs root (the testbed) and
runs in real time: about (duration + 10 s) x seeds per cell, said before it starts. Writes
DIR/CELL/ (each twin's files) and DIR/study.json, and prints a Markdown table.

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
from tfrclab.testbed.sysctl import sysctl_argument
from tfrclab.twin import TOLERANCES, decide, netsim_metrics, twin
from tfrclab.units import parse_duration

#: The study's base scenario.
BASE = Path(__file__).resolve().parents[1] / "python/tfrclab/scenarios/twin/cubic-tfrc.toml"

#: Bottleneck rate (bit/s) and one-way propagation delay (s) of each setting; the label of the
#: first is left out of the cells' labels.
SETTINGS: dict[str, tuple[float, float]] = {
    "10mbps-100ms": (10e6, 0.050),
    "20mbps-40ms": (20e6, 0.020),
}
TCPS = ("cubic", "bbr", "sack")
TFRC = {"kind": "tfrc", "preset": "floyd2000", "size": "1028B", "start": "0s"}
#: The mixes: the TCP flows and the TFRC flows of a cell.
MIXES: dict[str, tuple[int, int]] = {"": (1, 0), "+tfrc": (1, 1), "4x4": (4, 4)}


def queues(rate_bps: float, one_way_s: float) -> dict[str, dict[str, Any]]:
    """DropTail of half and twice the BDP (in 1500-byte packets) and RED in twice the BDP."""
    bdp = round(rate_bps * 2 * one_way_s / 8 / 1500)
    return {
        "droptail-0.5bdp": {"kind": "droptail", "limit": bdp // 2},
        "droptail-2bdp": {"kind": "droptail", "limit": 2 * bdp},
        "red-2bdp": {"kind": "red", "preset": "ns2_35", "limit": 2 * bdp},
    }


def cells(duration: str, tcp_keys: dict[str, Any] | None = None) -> list[tuple[str, Scenario]]:
    """Every cell's label and scenario; ``tcp_keys`` are added to every TCP flow (netsim's side)."""
    base = Scenario.load(BASE)
    first = next(iter(SETTINGS))
    out = []
    for setting, (rate_bps, one_way_s) in SETTINGS.items():
        prefix = "" if setting == first else f"{setting}:"
        for queue_name, queue in queues(rate_bps, one_way_s).items():
            for tcp in TCPS:
                for mix, (n_tcp, n_tfrc) in MIXES.items():
                    flow = {"kind": "tcp", "variant": tcp, "preset": "linux", "count": n_tcp,
                            "start": {"uniform": ["0s", "0.1s"]}, **(tcp_keys or {})}  # fmt: skip
                    flows = [flow] + ([{**TFRC, "count": n_tfrc}] if n_tfrc else [])
                    mixed = f"{n_tcp}{tcp}+{n_tfrc}tfrc" if mix == "4x4" else f"{tcp}{mix}"
                    label = f"{prefix}{mixed}/{queue_name}"
                    scenario = base.with_(
                        flows=flows,
                        duration=duration,
                        **{
                            "topology.hosts": n_tcp + n_tfrc,
                            "topology.bottleneck.rate": f"{rate_bps / 1e6:g}Mbps",
                            "topology.bottleneck.delay": f"{one_way_s * 1e3:g}ms",
                            "topology.bottleneck.queue": queue,
                        },
                    )
                    out.append((label, scenario))
    return out


def main(argv: list[str] | None = None) -> int:
    """Run the study; print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("out/twin-study"))
    parser.add_argument("--seeds", type=parse_seeds, default=[1, 2])
    parser.add_argument("--duration", default="30s")
    parser.add_argument(
        "--only",
        action="append",
        default=None,
        help="run the cells whose label contains this (repeat: any of them)",
    )
    parser.add_argument(
        "--reanalyze",
        action="store_true",
        help="no testbed: rerun netsim's side with today's code against DIR/study.json's runs",
    )
    parser.add_argument(
        "--tcp",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        type=tcp_key,
        help="add this key (a TOML value) to every TCP flow of netsim's side, e.g. --tcp "
        "cubic_hystart_rounds_any_cwnd=true (repeat for more)",
    )
    parser.add_argument(
        "--sysctl",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        type=sysctl_argument,
        help="a kernel setting for the testbed's side (net.* only; repeat for more), e.g. "
        "net.ipv4.tcp_comp_sack_nr=0 beside --tcp sack_compression=false",
    )
    parser.add_argument(
        "--retries",
        type=int,
        default=1,
        help="rerun a seed's testbed side up to this many times when its relay was disturbed "
        "(tfrclab twin --retries; default 1)",
    )
    parser.add_argument(
        "--table",
        action="store_true",
        help="no runs: print docs/twin.md's table of DIR/study.json, and its verdict counts",
    )
    args = parser.parse_args(argv)
    if args.sysctl and (args.reanalyze or args.table):
        parser.error("--sysctl sets the testbed's kernels: it needs testbed runs")
    if args.reanalyze:
        return reanalyze(args.out, args.duration, args.only, dict(args.tcp))
    if args.table:
        print(docs_table(json.loads((args.out / "study.json").read_text())))
        return 0
    chosen = [(label, s) for label, s in cells(args.duration, dict(args.tcp))
              if args.only is None or any(o in label for o in args.only)]  # fmt: skip
    per_cell = (parse_duration(args.duration) + 10) * len(args.seeds)
    print(f"{len(chosen)} cells, about {len(chosen) * per_cell / 60:.0f} min", file=sys.stderr)
    rows: dict[str, Any] = {}

    def say(line: str) -> None:
        print(f"  {line}", file=sys.stderr, flush=True)

    for label, scenario in chosen:
        print(f"{label} ...", file=sys.stderr, flush=True)
        report = twin(scenario, args.seeds, args.out / label.replace("/", "-"),
                      sysctls=dict(args.sysctl), retries=args.retries, progress=say)  # fmt: skip
        rows[label] = report.as_dict()
        (args.out / "study.json").write_text(json.dumps(rows, indent=2, default=float) + "\n")
    print("| cell | metric | netsim | testbed | verdict |")
    print("|---|---|---|---|---|")
    for label, row in rows.items():
        for c in row["comparisons"]:
            print(f"| {label} | {c['metric']} | {c['mean_tfrclab']:.4g} | {c['mean_ns2']:.4g} | "
                  f"{c['verdict']} |")  # fmt: skip
    return 0


#: docs/twin.md's columns: the metric and how its means are printed.
COLUMNS = (
    ("TCP Mb/s", "throughput/tcp", lambda v: f"{v / 1e6:.2f}"),
    ("TFRC/TCP", "tfrc_over_tcp", lambda v: f"{v:.2f}"),
    ("utilization", "utilization", lambda v: f"{v:.3f}"),
    ("drop rate (%)", "drop_rate", lambda v: f"{100 * v:.3f}"),
    ("mean queue (packets)", "mean_queue", lambda v: f"{v:.1f}"),
)
LETTER = {"agree": "a", "inconclusive": "i", "differ": "**D**"}


def docs_table(rows: dict[str, Any]) -> str:
    """One line per cell: netsim / testbed means per metric and the verdict's letter.

    The count below it covers every metric compared, TFRC's throughput included.
    """
    lines = [
        "| cell | " + " | ".join(name for name, _, _ in COLUMNS) + " |",
        "|---|" + "---|" * len(COLUMNS),
    ]
    counts: dict[str, int] = {}
    for label, row in rows.items():
        by_metric = {c["metric"]: c for c in row["comparisons"]}
        for c in row["comparisons"]:
            counts[c["verdict"]] = counts.get(c["verdict"], 0) + 1
        cells = []
        for _, metric, fmt in COLUMNS:
            c = by_metric.get(metric)
            if c is None:
                cells.append("")
                continue
            letter = LETTER.get(c["verdict"], c["verdict"])
            cells.append(f"{fmt(c['mean_tfrclab'])} / {fmt(c['mean_ns2'])} ({letter})")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    total = sum(counts.values())
    summary = ", ".join(f"{counts.get(v, 0)} {v}" for v in ("agree", "inconclusive", "differ"))
    lines.append("")
    lines.append(f"{len(rows)} cells, {total} metrics: {summary}.")
    return "\n".join(lines)


def tcp_key(text: str) -> tuple[str, Any]:
    """``KEY=VALUE`` with VALUE a TOML value (``true``, ``16``, ``"linux"``)."""
    import tomllib

    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, found {text!r}")
    try:
        return key.strip(), tomllib.loads(f"v = {value}")["v"]
    except tomllib.TOMLDecodeError as e:
        raise argparse.ArgumentTypeError(
            f"{key.strip()}: {value!r} is not a TOML value ({e})"
        ) from None


def reanalyze(
    out: Path,
    duration: str,
    only: list[str] | None = None,
    tcp_keys: dict[str, Any] | None = None,
) -> int:
    """Compare netsim's side, rerun now, with the testbed runs already in ``out/study.json``.

    Only the cells whose label contains one of ``only`` (all without it); ``tcp_keys`` are
    added to every TCP flow of netsim's side.
    """
    from dataclasses import replace

    from tfrclab.ns2.crosscheck import compare

    rows = json.loads((out / "study.json").read_text())
    scenarios = dict(cells(duration, tcp_keys))
    print("| cell | metric | netsim | testbed | difference (95% CI) | verdict |")
    print("|---|---|---|---|---|---|")
    for label, row in rows.items():
        if only is not None and not any(o in label for o in only):
            continue
        ours = [netsim_metrics(scenarios[label], seed, row["window_s"][0])[0]
                for seed in row["seeds"]]  # fmt: skip
        for metric, tolerance in TOLERANCES.items():
            if metric not in ours[0] or metric not in row["testbed"][0]:
                continue  # a metric the study's testbed runs did not measure yet
            theirs = [m[metric] for m in row["testbed"]]
            c = compare(metric, [m[metric] for m in ours], theirs, tolerance)
            c = replace(c, verdict=decide(c, tolerance))
            ci = f"{c.difference:+.3g} ({c.ci_low:+.3g}, {c.ci_high:+.3g})"
            print(f"| {label} | {metric} | {c.mean_tfrclab:.4g} | {c.mean_ns2:.4g} | {ci} | "
                  f"{c.verdict} |")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
