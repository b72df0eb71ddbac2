"""Benchmark tfrclab against ns-2.35 on the same scenario, both measured in the same run.

Usage: ``.venv/bin/python scripts/bench_peers.py [SCENARIO] [--pairs N] [--json]``
(default: scenarios/papers/floyd2000/fig09.toml, 5 pairs). Needs ns-2.35's ``ns`` on PATH.

The scenario is exported with ``tfrclab export ns2 SCENARIO --sample BIN`` (BIN: the scenario's
``monitor.bin``, so ns-2 reports the per-bin counters tfrclab records), then ns-2 and
``tfrclab run SCENARIO --json --quiet`` run alternately, N times each; so do the two start-ups
(``ns`` on an empty script, ``tfrclab --version``), after one unmeasured run of each (caches
warm, Python's bytecode written). Each process is timed on its own: wall time around it, and
its CPU time and peak resident memory from ``wait4`` (the kernel's rusage of that child). The
table gives medians and their ratios:

- simulation loop: ns-2's CPU time (the whole process: ns-2 has no separate loop timer) against
  tfrclab's ``wall_seconds`` (the native stepping calls only); also ns-2 with one sample at the
  end instead of one per bin, which leaves out the Tcl sampling procedure's cost;
- whole process: wall time of ``ns x.tcl`` against ``tfrclab run ... --json --quiet``;
- peak RSS of the same two processes (through GNU time where ``/usr/bin/time`` exists: Linux
  carries a parent's peak RSS into a forked child, so without it the figure is at least this
  script's own size);
- start-up: wall time of ``ns empty.tcl`` against ``tfrclab --version``.

Ratios say how many times faster (or smaller) tfrclab is: ns-2's median over tfrclab's.

``--scaling 8,32,128,512,2048`` adds the flow-count series: a dumbbell of N flows (half SACK, half
TFRC, as Fig. 9; RTTs 80-120 ms, starts in 0-10 s) whose bottleneck has the same rate for every
N (``--scaling-rate``, default 1 Gb/s: about Fig. 9's 0.47 Mb/s per flow at 2048 flows), with
the default monitoring (10 ms bins, every flow's state trace), run for ``--scaling-duration``
(default 20 s) and for twice that. Per N: the CPU time per delivered packet (packets sent less
packets dropped, from ``--json``) between the two runs, (CPU(2D) - CPU(D)) / (packets(2D) -
packets(D)), so start-up, building the network and slow start drop out; its growth over the
smallest N (the target: within 1.5x); tfrclab's peak RSS at 2D; ns-2 (process CPU and peak RSS
at D) runs the same exported scenario for N up to ``--scaling-ns-max``. Each point runs
``--scaling-pairs`` times, tfrclab and ns-2 alternating.

Timed, that series is noisy on a shared machine (a small N's point is the difference of two
short runs). ``--scaling-count`` adds what does not vary: the simulation loop of the same two
runs under callgrind (valgrind), with a simulated last-level cache of one core's second level on
the project's machines (512 KiB, 8-way, 64-byte lines), per delivered packet between D and 2D:
instructions and second-level read and write misses. Slow: about a minute per million events.

``--sweep-runs 10,50`` adds the sweep overhead: ``tfrclab sweep`` of a tiny scenario (two flows,
1 s) with ``--jobs 2`` and that many seeds; the per-run overhead is the slope between the two
sizes of the sweep's CPU time (its workers included) less the runs' own simulation time, so the
sweep's fixed start-up drops out. On a loaded machine CPU time is the steadier figure; the wall
time slope times the jobs is printed beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SCENARIO = ROOT / "scenarios" / "papers" / "floyd2000" / "fig09.toml"


@dataclass(frozen=True)
class Sample:
    """One process: wall seconds, CPU seconds (user + system), peak RSS in MiB, stdout."""

    wall_s: float
    cpu_s: float
    rss_mib: float
    stdout: str


ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
"""The children's environment: Python may cache bytecode, as an installed package does (with
PYTHONDONTWRITEBYTECODE set, every run would compile the modules changed since the last cache)."""


GNU_TIME = "/usr/bin/time"
"""GNU time, which reports its child's own peak RSS. Linux carries a process's peak RSS across
fork and exec, so a child started from this script reports at least this script's size; GNU
time forks the measured program from its own small process, whose size is a few MiB."""


def measure(argv: list[str], cwd: Path) -> Sample:
    """Run ``argv`` to its end and measure it (see the module documentation)."""
    with tempfile.TemporaryFile() as out, tempfile.NamedTemporaryFile("r") as peak:
        wrapped = argv
        if Path(GNU_TIME).exists():
            wrapped = [GNU_TIME, "--format=%M", f"--output={peak.name}", *argv]
        started = time.perf_counter()
        proc = subprocess.Popen(wrapped, cwd=cwd, stdout=out, stderr=subprocess.PIPE, env=ENV)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        assert proc.stderr is not None
        err = proc.stderr.read().decode(errors="replace")
        proc.stderr.close()
        if proc.returncode != 0:
            tail = " ".join(err.strip().splitlines()[-3:])
            raise SystemExit(f"{' '.join(argv)}: exit {proc.returncode}: {tail}")
        out.seek(0)
        text = out.read().decode(errors="replace")
        # Both in KiB on Linux. The rusage of GNU time includes its child's CPU time; without
        # GNU time the peak is an upper bound (at least this script's size).
        rss_kib = usage.ru_maxrss
        reported = peak.read().strip().splitlines()
        if reported and reported[-1].isdigit():
            rss_kib = int(reported[-1])
    return Sample(wall, usage.ru_utime + usage.ru_stime, rss_kib / 1024, text)


def scenario_bin(scenario: Path) -> str | None:
    """The scenario's ``monitor.bin`` as written (None: the exporter's default)."""
    import tomllib

    tables = tomllib.loads(scenario.read_text(encoding="utf-8"))
    value = tables.get("monitor", {}).get("bin")
    return None if value is None else str(value)


def scenario_duration(scenario: Path) -> str:
    """The scenario's ``duration`` as written."""
    import tomllib

    return str(tomllib.loads(scenario.read_text(encoding="utf-8"))["duration"])


def median(values: list[float]) -> float:
    """The median of ``values``."""
    return statistics.median(values)


def machine() -> str:
    """The CPU model, cores and load, for the report."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return f"{model}, {os.cpu_count()} cores, load average {load}, {platform.system()}"


def tfrclab_build(tfrclab: str) -> str:
    """How the measured tfrclab was built, from ``tfrclab --version``.

    ``profile-guided`` or ``plain`` (scripts/install.sh); the speed depends on it.
    """
    line = subprocess.run(
        [tfrclab, "--version"], capture_output=True, text=True, check=True, env=ENV
    ).stdout.strip()
    return line.rsplit("(", 1)[-1].removesuffix(" build)") if "(" in line else "unknown"


CALLGRIND_LL = "524288,8,64"
"""The last level ``--scaling-count`` simulates: 512 KiB, 8-way, 64-byte lines."""


def counted(argv: list[str], out: Path) -> dict[str, int]:
    """Callgrind's counts for the simulation loop alone of the tfrclab run ``argv``.

    Keys are callgrind's event names: ``Ir`` instructions, ``DLmr``/``DLmw`` last-level data
    read/write misses, and the rest. Deterministic: the same binary and input give the same
    counts whatever else the machine does.
    """
    valgrind = [
        "valgrind",
        "--tool=callgrind",
        f"--callgrind-out-file={out}",
        "--cache-sim=yes",
        f"--LL={CALLGRIND_LL}",
        "--toggle-collect=netsim::sim::Simulation::run_until_at_most",
    ]
    subprocess.run(
        [*valgrind, *argv],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=ENV,
    )
    names: list[str] = []
    totals: list[int] = []
    for line in out.read_text(encoding="utf-8").splitlines():
        if line.startswith("events:"):
            names = line.split()[1:]
        elif line.startswith("summary:"):
            totals = [int(x) for x in line.split()[1:]]
    # Callgrind leaves out trailing zero counts.
    totals += [0] * (len(names) - len(totals))
    return dict(zip(names, totals, strict=True))


SCALING_SCENARIO = """name = "scaling-{flows}"
description = "bench_peers scaling point: {flows} flows on a {rate} dumbbell"
duration = "{duration}"
seed = 1

[topology]
kind = "dumbbell"
hosts = {hosts}

[topology.bottleneck]
rate = "{rate}"
delay = "30ms"
queue = {{ kind = "red", preset = "ns2_2000", limit = 1000, gentle = true }}

[topology.access]
rate = "10Gbps"
rtt = {{ uniform = ["80ms", "120ms"] }}

[[flows]]
kind = "tcp"
variant = "sack"
preset = "ns2_2000"
window = 10000
count = {half}
start = {{ uniform = ["0s", "10s"] }}

[[flows]]
kind = "tfrc"
preset = "floyd2000"
count = {half}
start = {{ uniform = ["0s", "10s"] }}
"""

TINY_SCENARIO = """name = "sweep-overhead"
duration = "1s"

[topology]
kind = "dumbbell"
hosts = 2

[topology.bottleneck]
rate = "1Mbps"
delay = "10ms"

[[flows]]
kind = "tcp"

[[flows]]
kind = "tfrc"
"""


def delivered_packets(report: str) -> int:
    """Packets delivered in a ``tfrclab run --json`` report: sent less dropped, every flow."""
    flows = json.loads(report)["flows"]
    return sum(int(f["packets_sent"]) - int(f["packets_dropped"]) for f in flows)


def scaling(args: argparse.Namespace, ns: str | None, tfrclab: str, work: Path) -> list[dict]:
    """The flow-count series (module documentation): one dict per N."""
    points = []
    for flows in [int(n) for n in args.scaling.split(",")]:
        path = work / f"scaling-{flows}.toml"
        path.write_text(
            SCALING_SCENARIO.format(
                flows=flows,
                hosts=flows,
                half=max(1, flows // 2),
                rate=args.scaling_rate,
                duration=args.scaling_duration,
            ),
            encoding="utf-8",
        )
        double = work / f"scaling-{flows}-double.toml"
        seconds = float(args.scaling_duration.rstrip("s"))
        double.write_text(
            SCALING_SCENARIO.format(
                flows=flows,
                hosts=flows,
                half=max(1, flows // 2),
                rate=args.scaling_rate,
                duration=f"{2 * seconds:g}s",
            ),
            encoding="utf-8",
        )
        commands = {
            "tfrclab": [tfrclab, "run", str(path), "--json", "--quiet", "--force"],
            "tfrclab_double": [tfrclab, "run", str(double), "--json", "--quiet", "--force"],
        }
        if ns is not None and flows <= args.scaling_ns_max:
            tcl = work / f"scaling-{flows}.tcl"
            export = [tfrclab, "export", "ns2", str(path), "-o", str(tcl), "--sample", "10ms"]
            subprocess.run(export, check=True)
            commands["ns"] = [ns, str(tcl)]
        runs: dict[str, list[Sample]] = {name: [] for name in commands}
        for i in range(args.scaling_pairs):
            print(f"scaling {flows} flows, run {i + 1}/{args.scaling_pairs}", file=sys.stderr)
            for name, argv in commands.items():
                runs[name].append(measure(argv, work))
        packets = delivered_packets(runs["tfrclab"][0].stdout)
        packets_double = delivered_packets(runs["tfrclab_double"][0].stdout)
        events = int(json.loads(runs["tfrclab"][0].stdout)["events"])
        events_double = int(json.loads(runs["tfrclab_double"][0].stdout)["events"])
        cpu = median([r.cpu_s for r in runs["tfrclab"]])
        cpu_double = median([r.cpu_s for r in runs["tfrclab_double"]])
        point = {
            "flows": flows,
            "delivered_packets": packets_double - packets,
            "cpu_s": cpu_double - cpu,
            "events_per_packet": (events_double - events) / max(1, packets_double - packets),
            "cpu_ns_per_event": 1e9 * (cpu_double - cpu) / max(1, events_double - events),
            "cpu_us_per_packet": 1e6 * (cpu_double - cpu) / max(1, packets_double - packets),
            "rss_mib": median([r.rss_mib for r in runs["tfrclab_double"]]),
            "ns2_cpu_s": median([r.cpu_s for r in runs["ns"]]) if "ns" in runs else None,
            "ns2_rss_mib": median([r.rss_mib for r in runs["ns"]]) if "ns" in runs else None,
        }
        if args.scaling_count:
            print(f"scaling {flows} flows, counting (callgrind)", file=sys.stderr)
            once = counted(commands["tfrclab"], work / f"callgrind-{flows}.out")
            twice = counted(commands["tfrclab_double"], work / f"callgrind-{flows}-double.out")
            packets_between = max(1, packets_double - packets)
            for key, name in (
                ("Ir", "instructions_per_packet"),
                ("DLmr", "l2_read_misses_per_packet"),
                ("DLmw", "l2_write_misses_per_packet"),
            ):
                point[name] = (twice[key] - once[key]) / packets_between
        points.append(point)
    base = points[0]["cpu_us_per_packet"] if points else 1.0
    for point in points:
        point["growth"] = point["cpu_us_per_packet"] / base
    return points


def sweep_overhead(args: argparse.Namespace, tfrclab: str, work: Path) -> dict:
    """The sweep's per-run overhead (module documentation), in milliseconds."""
    scenario = work / "tiny.toml"
    scenario.write_text(TINY_SCENARIO, encoding="utf-8")
    small, large = (int(n) for n in args.sweep_runs.split(","))
    samples = {}
    for runs in (small, large):
        out = work / f"sweep-{runs}"
        argv = [tfrclab, "sweep", str(scenario), "--vary", "topology.bottleneck.rate=1Mbps"]
        argv += ["--seeds", f"1-{runs}", "--jobs", "2", "--out", str(out), "--json", "--quiet"]
        print(f"sweep of {runs} runs", file=sys.stderr)
        sample = measure(argv, work)
        import pandas as pd

        sim = float(pd.read_parquet(out / "runs").groupby("run")["wall_seconds"].first().sum())
        samples[runs] = (sample, sim)
    (s_small, sim_small), (s_large, sim_large) = samples[small], samples[large]
    extra = large - small
    return {
        "runs": [small, large],
        "cpu_ms_per_run": 1e3 * ((s_large.cpu_s - s_small.cpu_s) - (sim_large - sim_small)) / extra,
        "wall_x_jobs_ms_per_run": 1e3
        * (2 * (s_large.wall_s - s_small.wall_s) - (sim_large - sim_small))
        / extra,
        "sim_ms_per_run": 1e3 * sim_large / large,
    }


def print_extras(points: list[dict], overhead: dict | None) -> None:
    """The scaling table and the sweep-overhead line, as Markdown."""
    if points:
        print()
        print(
            "| flows | packets D..2D | CPU D..2D (s) | CPU (us/packet) | vs smallest | "
            "events/packet | CPU (ns/event) | peak RSS at 2D (MiB) | ns-2 CPU at D (s) | "
            "ns-2 peak RSS (MiB) |"
        )
        print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for p in points:
            ns_cpu = "-" if p["ns2_cpu_s"] is None else f"{p['ns2_cpu_s']:.2f}"
            ns_rss = "-" if p["ns2_rss_mib"] is None else f"{p['ns2_rss_mib']:.1f}"
            print(
                f"| {p['flows']} | {p['delivered_packets']} | {p['cpu_s']:.2f} | "
                f"{p['cpu_us_per_packet']:.3f} | {p['growth']:.2f}x | "
                f"{p['events_per_packet']:.2f} | {p['cpu_ns_per_event']:.0f} | "
                f"{p['rss_mib']:.1f} | "
                f"{ns_cpu} | {ns_rss} |"
            )
    if points and "instructions_per_packet" in points[0]:
        print()
        print("counted (callgrind, the loop only; second level: 512 KiB), per packet D..2D:")
        print()
        print("| flows | instructions | vs smallest | L2 read misses | L2 write misses |")
        print("|---:|---:|---:|---:|---:|")
        first = points[0]["instructions_per_packet"]
        for p in points:
            print(
                f"| {p['flows']} | {p['instructions_per_packet']:.0f} | "
                f"{p['instructions_per_packet'] / first:.2f}x | "
                f"{p['l2_read_misses_per_packet']:.2f} | {p['l2_write_misses_per_packet']:.2f} |"
            )
    if overhead is not None:
        print()
        print(
            f"sweep overhead per run ({overhead['runs'][0]} vs {overhead['runs'][1]} runs, "
            f"--jobs 2): {overhead['cpu_ms_per_run']:.1f} ms CPU "
            f"({overhead['wall_x_jobs_ms_per_run']:.1f} ms wall x jobs), beside "
            f"{overhead['sim_ms_per_run']:.1f} ms of simulation"
        )


def main(argv: list[str]) -> int:
    """Run the benchmark and print its table (or JSON); returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenario", type=Path, nargs="?", default=DEFAULT_SCENARIO)
    parser.add_argument("--pairs", type=int, default=5, help="runs of each (default 5)")
    parser.add_argument("--ns", default="ns", help="the ns-2 binary (default: ns on PATH)")
    parser.add_argument(
        "--tfrclab",
        default=str(Path(sys.executable).with_name("tfrclab")),
        help="the tfrclab command (default: the one next to this Python)",
    )
    parser.add_argument("--json", action="store_true", help="print the medians as JSON")
    parser.add_argument("--scaling", help="flow counts of the scaling series, e.g. 8,128,2048")
    parser.add_argument("--scaling-rate", default="1Gbps", help="bottleneck rate (1Gbps)")
    parser.add_argument("--scaling-duration", default="20s", help="simulated time D (20s)")
    parser.add_argument("--scaling-pairs", type=int, default=1, help="runs per point (1)")
    parser.add_argument(
        "--scaling-ns-max", type=int, default=128, help="largest N ns-2 runs (default 128)"
    )
    parser.add_argument(
        "--scaling-count",
        action="store_true",
        help="also count instructions and cache misses per packet with callgrind (slow)",
    )
    parser.add_argument("--sweep-runs", help="two sweep sizes for the overhead, e.g. 10,50")
    parser.add_argument(
        "--skip-peers", action="store_true", help="only the scaling series and sweep overhead"
    )
    args = parser.parse_args(argv)
    ns = shutil.which(args.ns)
    tfrclab = args.tfrclab
    if args.scaling_count and shutil.which("valgrind") is None:
        print("bench_peers: --scaling-count needs valgrind (Debian: apt-get install valgrind)")
        return 2
    if args.skip_peers:
        with tempfile.TemporaryDirectory(prefix="tfrclab-bench-") as tmp:
            points = scaling(args, ns, tfrclab, Path(tmp)) if args.scaling else []
            overhead = sweep_overhead(args, tfrclab, Path(tmp)) if args.sweep_runs else None
        if args.json:
            print(
                json.dumps(
                    {
                        "machine": machine(),
                        "build": tfrclab_build(tfrclab),
                        "scaling": points,
                        "sweep": overhead,
                    }
                )
            )
        else:
            print(f"machine: {machine()}")
            print(f"tfrclab build: {tfrclab_build(tfrclab)}")
            print_extras(points, overhead)
        return 0
    if ns is None:
        print(f"bench_peers: {args.ns!r} not found (Debian/Ubuntu: apt-get install ns2)")
        return 2
    scenario = args.scenario.resolve()
    with tempfile.TemporaryDirectory(prefix="tfrclab-bench-") as tmp:
        work = Path(tmp)
        sample = scenario_bin(scenario)
        export = [tfrclab, "export", "ns2", str(scenario), "-o", str(work / "matched.tcl")]
        subprocess.run([*export, *(["--sample", sample] if sample else [])], check=True)
        once = [tfrclab, "export", "ns2", str(scenario), "-o", str(work / "one_sample.tcl")]
        subprocess.run([*once, "--sample", scenario_duration(scenario)], check=True)
        (work / "empty.tcl").write_text("", encoding="utf-8")
        commands = {
            "ns": [ns, "matched.tcl"],
            "tfrclab": [tfrclab, "run", str(scenario), "--json", "--quiet"],
            "ns_one": [ns, "one_sample.tcl"],
            "ns_start": [ns, "empty.tcl"],
            "tfrclab_start": [tfrclab, "--version"],
        }
        print("warm-up: each command once, not measured", file=sys.stderr)
        for argv in commands.values():
            measure(argv, work)
        runs: dict[str, list[Sample]] = {name: [] for name in commands}
        for i in range(args.pairs):
            print(f"pair {i + 1}/{args.pairs}", file=sys.stderr)
            for name, argv in commands.items():
                runs[name].append(measure(argv, work))
        for run in runs["ns"]:
            if not run.stdout.startswith("H "):
                raise SystemExit("ns-2 did not print the exported script's header")
        points = scaling(args, ns, tfrclab, work) if args.scaling else []
        overhead = sweep_overhead(args, tfrclab, work) if args.sweep_runs else None
    loop = [float(json.loads(r.stdout)["wall_seconds"]) for r in runs["tfrclab"]]
    rows = [
        (
            "simulation loop (s): ns-2 CPU, per-bin samples / tfrclab wall_seconds",
            median([r.cpu_s for r in runs["ns"]]),
            median(loop),
        ),
        (
            "simulation loop (s): ns-2 CPU, one sample / tfrclab wall_seconds",
            median([r.cpu_s for r in runs["ns_one"]]),
            median(loop),
        ),
        (
            "whole process, wall (s)",
            median([r.wall_s for r in runs["ns"]]),
            median([r.wall_s for r in runs["tfrclab"]]),
        ),
        (
            "whole process, CPU (s)",
            median([r.cpu_s for r in runs["ns"]]),
            median([r.cpu_s for r in runs["tfrclab"]]),
        ),
        (
            "peak RSS (MiB)",
            median([r.rss_mib for r in runs["ns"]]),
            median([r.rss_mib for r in runs["tfrclab"]]),
        ),
        (
            "start-up, wall (s): ns empty.tcl / tfrclab --version",
            median([r.wall_s for r in runs["ns_start"]]),
            median([r.wall_s for r in runs["tfrclab_start"]]),
        ),
    ]
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    if args.json:
        print(
            json.dumps(
                {
                    "scenario": str(args.scenario),
                    "pairs": args.pairs,
                    "date": when,
                    "machine": machine(),
                    "build": tfrclab_build(tfrclab),
                    "rows": [
                        {"metric": m, "ns2": a, "tfrclab": b, "ratio": a / b} for m, a, b in rows
                    ],
                    "scaling": points,
                    "sweep": overhead,
                }
            )
        )
        return 0
    print(f"{args.scenario}: medians of {args.pairs} runs each, {when}")
    print(f"machine: {machine()}")
    print(f"tfrclab build: {tfrclab_build(tfrclab)}")
    print()
    print("| measure | ns-2.35 | tfrclab | ns-2 / tfrclab |")
    print("|---|---:|---:|---:|")
    for metric, a, b in rows:
        digits = 1 if "RSS" in metric else 3
        print(f"| {metric} | {a:.{digits}f} | {b:.{digits}f} | {a / b:.2f}x |")
    print_extras(points, overhead)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
