"""ns-3.37 as a second opinion on netsim's Linux TCPs: the twin study's single-flow cells.

For each cell of scripts/twin_study.py with one TCP flow alone under DropTail (Reno with SACK,
CUBIC, BBR; half and twice the BDP; 10 Mb/s with 100 ms RTT and 20 Mb/s with 40 ms), run the
same dumbbell in ns-3.37 (Debian's ``libns3-dev``; scripts/ns3/dumbbell.cc, compiled once into
``--build``) and in netsim (``tfrclab.twin.netsim_metrics``), measure both as ``tfrclab twin``
does (over 5-30 s: throughput, utilization, drop rate and the time-averaged queue), and compare
them with the twin's intervals and tolerances. The kernel's values beside them are the testbed
runs kept in docs/testbed-results/twin-study/study.json. The kernel is the referee (docs/twin.md);
ns-3 says whether another simulator's CUBIC and BBR land where netsim's do.

ns-3's TCP is set as close to the `linux` preset as its knobs allow: 1448-byte segments with
timestamps, initial window 10, SACK, PRR, minimum RTO 200 ms, a delayed ACK every second segment
or after 40 ms, 8 MB buffers, pacing for BBR. It has no RACK, TLP, HyStart's Linux variants or
Linux's SACK compression. ns-3 has no RED with ns-2.35's automatic thresholds, so RED cells are
left out. ns-3's bottleneck is a FIFO queue disc of the cell's limit in front of a device that
holds one packet.

    scripts/ns3_second_opinion.py [--seeds 1-2] [--only bbr] [--build DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SOURCE = REPO / "scripts" / "ns3" / "dumbbell.cc"
STUDY = REPO / "docs" / "testbed-results" / "twin-study" / "study.json"
HEADER = Path("/usr/include/ns3/core-module.h")
LIBRARIES = ("applications", "traffic-control", "point-to-point", "internet", "network", "core")
#: netsim's TCP variant and ns-3's congestion control (the kernel's, as the twin maps them).
NS3_TCP = {"sack": "reno", "cubic": "cubic", "bbr": "bbr"}
METRICS = ("throughput/tcp", "utilization", "drop_rate", "mean_queue")


def ns3_missing() -> str | None:
    """Why ns-3 cannot be built here, or None."""
    if not HEADER.exists():
        return f"ns-3 is not installed ({HEADER} missing: apt-get install libns3-dev)"
    if shutil.which("g++") is None:
        return "g++ is not installed (apt-get install g++)"
    return None


def build(directory: Path) -> Path:
    """The compiled program, built into ``directory`` unless its source's build is there."""
    why = ns3_missing()
    if why is not None:
        raise RuntimeError(why)
    digest = hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:12]
    binary = directory / f"dumbbell-{digest}"
    if binary.exists():
        return binary
    directory.mkdir(parents=True, exist_ok=True)
    partial = binary.with_suffix(".partial")
    command = ["g++", "-O2", "-std=c++17", str(SOURCE), "-o", str(partial)]
    command += [f"-lns3-{name}" for name in LIBRARIES]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"compiling {SOURCE.name} failed:\n{done.stderr[-2000:]}")
    partial.rename(binary)
    return binary


def cell_arguments(scenario: Any) -> dict[str, Any]:
    """The program's arguments for a twin cell: one TCP variant, a dumbbell, DropTail."""
    flows = scenario.tables["flows"]
    if len(flows) != 1 or flows[0].get("kind") != "tcp":
        raise ValueError("a cell of TCP flows of one variant only")
    topology = scenario.tables["topology"]
    queue = topology["bottleneck"]["queue"]
    if queue.get("kind") != "droptail":
        raise ValueError(f"queue: ns-3 runs droptail cells only, found {queue.get('kind')}")
    from tfrclab.units import parse_duration

    return {
        "tcp": NS3_TCP[flows[0]["variant"]],
        "flows": int(flows[0].get("count", 1)),
        "rate": str(topology["bottleneck"]["rate"]),
        "delay_ms": parse_duration(topology["bottleneck"]["delay"]) * 1e3,
        "access_delay_ms": parse_duration(topology["access"]["delay"]) * 1e3,
        "queue": int(queue["limit"]),
        "duration": scenario.duration_s,
    }


def ns3_metrics(output: dict[str, Any], rate_bps: float) -> dict[str, float]:
    """The twin's metrics from one run's JSON: per-flow IP bits leaving the bottleneck."""
    low, high = output["window_s"]
    span = high - low
    per_flow = [8.0 * b / span for b in output["departed_bytes"]]
    arrivals = output["arrivals"]
    return {
        "throughput/tcp": sum(per_flow) / len(per_flow),
        "utilization": sum(per_flow) / rate_bps,
        "drop_rate": output["drops"] / arrivals if arrivals else 0.0,
        "mean_queue": float(output["mean_queue"]),
    }


def run_ns3(binary: Path, arguments: dict[str, Any], seed: int, start_s: float) -> dict[str, Any]:
    """One ns-3 run's JSON line."""
    argv = [str(binary)] + [f"--{k}={v}" for k, v in arguments.items()]
    argv += [f"--seed={seed}", f"--from={start_s}"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"ns-3 run failed ({' '.join(argv)}):\n{done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _twin_study() -> Any:
    """scripts/twin_study.py, imported."""
    if str(REPO / "scripts") not in sys.path:
        sys.path.insert(0, str(REPO / "scripts"))
    import twin_study

    return twin_study


def twin_cells(duration: str) -> list[tuple[str, Any]]:
    """Every cell of scripts/twin_study.py, labelled as there."""
    cells: list[tuple[str, Any]] = _twin_study().cells(duration)
    return cells


def single_flow_cells(duration: str) -> list[tuple[str, Any]]:
    """The twin study's cells of one TCP flow alone under DropTail."""
    return [
        (label, scenario)
        for label, scenario in twin_cells(duration)
        if "droptail" in label and "+" not in label
    ]


def compare_cell(
    scenario: Any,
    seeds: list[int],
    binary: Path,
    kernel: dict[str, Any] | None,
    start_s: float = 5.0,
) -> dict[str, Any]:
    """ns-3 against netsim (and the kernel's kept runs) on one cell."""
    from tfrclab.ns2.crosscheck import compare
    from tfrclab.twin import TOLERANCES, decide, netsim_metrics

    arguments = cell_arguments(scenario)
    ours, theirs = [], []
    for seed in seeds:
        metrics, _, rate_bps, _ = netsim_metrics(scenario, seed, start_s)
        ours.append(metrics)
        theirs.append(ns3_metrics(run_ns3(binary, arguments, seed, start_s), rate_bps))
    row: dict[str, Any] = {"seeds": seeds, "netsim": ours, "ns3": theirs, "comparisons": {}}
    for metric in METRICS:
        a = [m[metric] for m in ours]
        b = [m[metric] for m in theirs]
        versus_netsim = compare(metric, a, b, TOLERANCES[metric])
        entry = {
            "netsim": versus_netsim.mean_tfrclab,
            "ns3": versus_netsim.mean_ns2,
            "ns3_vs_netsim": decide(versus_netsim, TOLERANCES[metric]),
        }
        if kernel is not None:
            k = [m[metric] for m in kernel["testbed"]]
            versus_kernel = compare(metric, b, k, TOLERANCES[metric])
            entry["kernel"] = versus_kernel.mean_ns2
            entry["ns3_vs_kernel"] = decide(versus_kernel, TOLERANCES[metric])
            entry["netsim_vs_kernel"] = decide(
                compare(metric, a, k, TOLERANCES[metric]), TOLERANCES[metric]
            )
        row["comparisons"][metric] = entry
    return row


def table(rows: dict[str, Any]) -> str:
    """docs/twin.md's ns-3 table: per cell and metric, the three means and two verdicts."""
    lines = [
        "| cell | metric | netsim | ns-3 | kernel | ns-3 vs netsim | ns-3 vs kernel "
        "| netsim vs kernel |",
        "|---|---|---:|---:|---:|---|---|---|",
    ]
    names = {
        "throughput/tcp": "Mb/s",
        "utilization": "utilization",
        "drop_rate": "drop %",
        "mean_queue": "queue",
    }
    study = _twin_study()
    letter = study.LETTER
    # How docs/twin.md's table prints each metric's means.
    show_metric = {metric: show for _, metric, show in study.COLUMNS}
    for label, row in rows.items():
        for metric, c in row["comparisons"].items():
            show = show_metric[metric]
            kernel = show(c["kernel"]) if "kernel" in c and math.isfinite(c["kernel"]) else "-"
            lines.append(
                f"| {label} | {names[metric]} | {show(c['netsim'])} | {show(c['ns3'])} | "
                f"{kernel} | {letter[c['ns3_vs_netsim']]} | "
                f"{letter.get(c.get('ns3_vs_kernel', ''), '-')} | "
                f"{letter.get(c.get('netsim_vs_kernel', ''), '-')} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the cells, print the table, write ``--out``'s JSON."""
    from tfrclab.ns2.cli import parse_seeds

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=parse_seeds, default=[1, 2])
    parser.add_argument("--only", action="append", default=None, help="cells whose label has this")
    parser.add_argument("--duration", default="30s")
    parser.add_argument("--build", type=Path, default=Path("out/ns3-build"))
    parser.add_argument("--out", type=Path, default=Path("out/ns3-second-opinion.json"))
    args = parser.parse_args(argv)
    why = ns3_missing()
    if why is not None:
        print(f"error: {why}", file=sys.stderr)
        return 2
    binary = build(args.build)
    study = json.loads(STUDY.read_text())
    rows: dict[str, Any] = {}
    cells = [(label, s) for label, s in single_flow_cells(args.duration)
             if args.only is None or any(o in label for o in args.only)]  # fmt: skip
    for label, scenario in cells:
        print(f"{label} ...", file=sys.stderr, flush=True)
        rows[label] = compare_cell(scenario, args.seeds, binary, study.get(label))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(rows, indent=2, default=float) + "\n")
    print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
