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
- peak RSS of the same two processes;
- start-up: wall time of ``ns empty.tcl`` against ``tfrclab --version``.

Ratios say how many times faster (or smaller) tfrclab is: ns-2's median over tfrclab's.
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


def measure(argv: list[str], cwd: Path) -> Sample:
    """Run ``argv`` to its end and measure it (see the module documentation)."""
    with tempfile.TemporaryFile() as out:
        started = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=cwd, stdout=out, stderr=subprocess.PIPE, env=ENV)
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
    # ru_maxrss is in KiB on Linux.
    return Sample(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, text)


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
    args = parser.parse_args(argv)
    ns = shutil.which(args.ns)
    if ns is None:
        print(f"bench_peers: {args.ns!r} not found (Debian/Ubuntu: apt-get install ns2)")
        return 2
    tfrclab = args.tfrclab
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
                    "rows": [
                        {"metric": m, "ns2": a, "tfrclab": b, "ratio": a / b} for m, a, b in rows
                    ],
                }
            )
        )
        return 0
    print(f"{args.scenario}: medians of {args.pairs} runs each, {when}")
    print(f"machine: {machine()}")
    print()
    print("| measure | ns-2.35 | tfrclab | ns-2 / tfrclab |")
    print("|---|---:|---:|---:|")
    for metric, a, b in rows:
        digits = 1 if "RSS" in metric else 3
        print(f"| {metric} | {a:.{digits}f} | {b:.{digits}f} | {a / b:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
