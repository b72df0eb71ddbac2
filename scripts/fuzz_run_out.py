"""Fuzz ``tfrclab run --out`` end to end under a memory cap: shipped scenarios with hostile values.

Each try takes a shipped scenario file, changes one to three of its values with ``--set``
(bins from 1 us to hours, durations from 0 to 10^7 s, flow counts, rates, sizes and ping
intervals at and past their limits, packet-trace and trace limits), sometimes asks for pcap and
ns-2 traces too, and runs ``python -m tfrclab run FILE --set ... --quiet --out DIR`` under
``prlimit --as`` (an address-space cap) and a wall-clock timeout. What it checks is the
command's contract: it ends by itself (no hang), with status 0, 1 (a write or trace failed,
said in one line) or 2 (refused, in one line), and never with a traceback or a signal. The
tries are drawn from ``--seed``, so a finding can be run again.

    python scripts/fuzz_run_out.py --seconds 600 --seed 1 --memory 3GB

Prints one line per finding and a tally at the end; exits 1 if there was a finding.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# Values each key is set to: ordinary ones, boundaries and nonsense.
CHANGES: dict[str, list[str]] = {
    "monitor.bin": ["1us", "100us", "1ms", "10ms", "1s", "0s", "-1ms", "3h", '"x"'],
    "duration": ["0s", "1ms", "1s", "30s", "300s", "1000s", "10000000s", "1"],
    "flows[0].count": ["0", "1", "64", "1000", "100001", "-1", "1.5"],
    "flows[0].rate": ["1bps", "1Mbps", "1Gbps", "10Tbps", "0bps", '"x"'],
    "flows[0].size": ["1B", "40B", "1500B", "64KiB", "0B", "1GB"],
    "flows[0].start": ["0s", "1s", "1000s", "-1s"],
    "flows[0].stop": ["0s", "1ms", "10s"],
    "monitor.packet_trace": ["0", "10", "100000", "1000000000", "-1"],
    "monitor.trace_limit": ["1", "100000", "1000000000", "0"],
    "topology.bottleneck.rate": ["1bps", "10Mbps", "100Gbps", "0bps"],
    "topology.bottleneck.delay": ["0s", "1ns", "10ms", "10s"],
    "seed": ["0", "18446744073709551615", "-1"],
}
PING = {"kind": '"ping"', "interval": ["1ns", "1us", "5us", "1ms"]}


def scenario_files() -> list[Path]:
    """The shipped scenario files (the package's and the examples')."""
    files = sorted((REPO / "python" / "tfrclab" / "scenarios").rglob("*.toml"))
    return files + sorted((REPO / "scenarios").rglob("*.toml"))


def one_try(rng: random.Random, files: list[Path], work: Path) -> tuple[list[str], Path]:
    """A command line for one try, and the scenario it runs."""
    scenario = rng.choice(files)
    sets: list[str] = []
    for key in rng.sample(sorted(CHANGES), rng.randint(1, 3)):
        sets += ["--set", f"{key}={rng.choice(CHANGES[key])}"]
    if rng.random() < 0.15:
        sets += ["--set", f"flows[0].kind={PING['kind']}"]
        sets += ["--set", f"flows[0].interval={rng.choice(PING['interval'])}"]
    argv = ["run", str(scenario), *sets, "--quiet", "--out", str(work / "out")]
    if rng.random() < 0.2:
        argv += ["--pcap", str(work / "pcap")]
    if rng.random() < 0.1:
        argv += ["--ns2-trace", str(work / "trace.tr")]
    return argv, scenario


def main() -> int:
    """Run tries until ``--seconds`` have passed; print the findings and a tally."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=600.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--memory", default="3GB", help="address-space cap (prlimit --as)")
    # A run may take up to the 10 min budget (writing included) and then some.
    parser.add_argument("--timeout", type=float, default=660.0, help="per try, seconds")
    args = parser.parse_args()
    cap = args.memory.upper().removesuffix("B")
    factor = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(cap[-1:], 1)
    cap_bytes = int(float(cap.rstrip("KMG")) * factor)
    if shutil.which("prlimit") is None:
        print("fuzz_run_out: needs util-linux's prlimit", file=sys.stderr)
        return 2
    rng = random.Random(args.seed)
    files = scenario_files()
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONDONTWRITEBYTECODE": "1"}
    tally: Counter[str] = Counter()
    findings = 0
    deadline = time.monotonic() + args.seconds
    while time.monotonic() < deadline:
        with tempfile.TemporaryDirectory(prefix="fuzz-run-out-") as tmp:
            argv, _ = one_try(rng, files, Path(tmp))
            command = ["prlimit", f"--as={cap_bytes}", sys.executable, "-m", "tfrclab", *argv]
            started = time.monotonic()
            try:
                done = subprocess.run(
                    command, capture_output=True, text=True, timeout=args.timeout, env=env
                )
            except subprocess.TimeoutExpired:
                findings += 1
                tally["hang"] += 1
                print(f"HANG ({args.timeout:.0f} s): {' '.join(argv)}", flush=True)
                continue
            took = time.monotonic() - started
            errors = [line for line in done.stderr.splitlines() if ": error: " in line]
            problem = None
            if "Traceback" in done.stderr:
                problem = "traceback: " + done.stderr.strip().splitlines()[-1]
            elif done.returncode not in (0, 1, 2):
                problem = f"status {done.returncode}: {done.stderr.strip()[-300:]}"
            elif done.returncode == 2 and len(errors) != 1:
                problem = f"refusal in {len(errors)} error lines: {done.stderr.strip()[-300:]}"
            tally[f"status {done.returncode}"] += 1
            if problem is not None:
                findings += 1
                print(f"FINDING ({took:.1f} s) {problem}\n  {' '.join(argv)}", flush=True)
    print(f"fuzz_run_out: seed {args.seed}, cap {args.memory}: {dict(sorted(tally.items()))}")
    print(f"fuzz_run_out: {findings} finding(s)")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
