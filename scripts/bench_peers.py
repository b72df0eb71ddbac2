"""Benchmark tfrclab against ns-2.35 on the same scenario, both measured in the same run.

Usage: ``.venv/bin/python scripts/bench_peers.py [SCENARIO] [--pairs N] [--json | --readme]``
(default: scenarios/papers/floyd2000/fig09.toml, 5 pairs). Needs ns-2.35's ``ns`` on PATH.

The scenario is exported (:func:`tfrclab.ns2.export_tcl`, netsim's draws for the seed) as three
ns-2 scripts, each also without its final ``$ns run`` (ns-2 then builds the network and exits:
its set-up):

- ``all links``: a flow monitor on every link whose counters tfrclab keeps (each flow's first and
  last link, the bottleneck both ways), the counters printed once, at the end: ns-2 watching
  what the tfrclab run watches;
- ``bottleneck``: the bottleneck's monitors only, printed once: the script an ns-2 user who
  watches the bottleneck writes;
- ``every bin``: ``all links`` printing every bin's counters from Tcl, the series tfrclab
  records bin by bin (a Tcl procedure per bin, which no ns-2 user writes for speed).

Each round runs, one after the other: ``ns`` on an empty script and ``tfrclab --version``
(start-up), each ns-2 script without and with its run, and ``tfrclab run SCENARIO --json
--quiet``, after one unmeasured round (caches warm, Python's bytecode written). Each process is
timed on its own: wall time around it, and its CPU time and peak resident memory from ``wait4``
(the kernel's rusage of that child). tfrclab's report gives its loop's CPU time
(``cpu_seconds``: the native stepping calls) and its set-up's (``setup_cpu_seconds``: parsing
the scenario and building the network and monitors). Per round:

- ns-2's loop is the CPU time of a script less that of the same script without ``$ns run``
  (the loop and the end-of-run output; ns-2 has no loop timer of its own);
- ns-2's set-up is the CPU time of ``all links`` without ``$ns run`` less that of the empty
  script (ns-2's own start);
- the rest of a process is its CPU time less its set-up and loop: for ns-2 its start (the
  empty script), for tfrclab the interpreter's start, the imports, building the result and
  printing the report.

The table gives the medians over the rounds and their ratios, each row naming what it pairs
and how it is timed; peak RSS goes through GNU time where ``/usr/bin/time`` exists (Linux
carries a parent's peak RSS into a forked child, so without it the figure is at least this
script's own size). Ratios say how many times faster (or smaller) tfrclab is: ns-2's median
over tfrclab's. The machine's load average is printed before and after.

``--readme`` prints only what README.md and docs/performance.md carry: a paragraph saying which
scenario, how many rounds, when, on what machine under what load (before and after the rounds)
and which build, then the table (and the scaling table with ``--scaling``).

``--scaling 8,32,128,512,2048`` adds the flow-count series: a dumbbell of N flows (half SACK, half
TFRC, as Fig. 9; RTTs 80-120 ms, starts in 0-10 s) whose bottleneck has the same rate for every
N (``--scaling-rate``, default 1 Gb/s: about Fig. 9's 0.47 Mb/s per flow at 2048 flows), with
the default monitoring (10 ms bins, every flow's state trace), run for ``--scaling-duration``
(default 20 s) and for twice that. Per N, medians over ``--scaling-pairs`` rounds:

- tfrclab's set-up and loop (its report's ``setup_cpu_seconds`` and ``cpu_seconds``) and its
  whole process (CPU, wall) at D;
- ns-2's set-up and loop at D, as for the peers table: the scenario exported as ``all links``
  (``--scaling-ns-script bottleneck``: as ``bottleneck``; the counters printed once, at the
  end), run with and without ``$ns run``, less ``ns`` on an empty script; a process that runs
  over 3 minutes (:data:`NS2_LIMIT_S`) is stopped, and ns-2 is then not run at that N nor any
  larger one (the table says so); ``--scaling-ns-max`` caps N for ns-2 beforehand;
- the loop's CPU per data packet sent at D, each simulator over its own count (tfrclab's
  report; ns-2's flow monitors on each flow's first link, or with ``bottleneck`` the packets
  arriving at the bottleneck, which every data packet crosses): the two do not send the same
  number of packets (ns-2's TFRC sends far fewer at these rates), so loop against loop
  compares different work and the per-packet figure is the fairer pairing;
- tfrclab's loop CPU per delivered packet (sent less dropped) between the two runs,
  (loop(2D) - loop(D)) / (packets(2D) - packets(D)), so slow start drops out, and its growth
  over the smallest N; events per packet; peak RSS (tfrclab at 2D, ns-2 at D).

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
import signal
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


def measure(argv: list[str], cwd: Path, limit_s: float | None = None) -> Sample | None:
    """Run ``argv`` to its end and measure it (see the module documentation).

    With ``limit_s``, a process still running after that many seconds is stopped (coreutils'
    ``timeout``) and None returned; without it, None is never returned.
    """
    with tempfile.TemporaryFile() as out, tempfile.NamedTemporaryFile("r") as peak:
        wrapped = argv if limit_s is None else ["timeout", f"{limit_s:g}", *argv]
        if Path(GNU_TIME).exists():
            wrapped = [GNU_TIME, "--format=%M", f"--output={peak.name}", *wrapped]
        started = time.perf_counter()
        proc = subprocess.Popen(wrapped, cwd=cwd, stdout=out, stderr=subprocess.PIPE, env=ENV)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        assert proc.stderr is not None
        err = proc.stderr.read().decode(errors="replace")
        proc.stderr.close()
        if limit_s is not None and proc.returncode == TIMED_OUT:
            return None
        if proc.returncode != 0:
            tail = " ".join(err.strip().splitlines()[-3:])
            status = f"exit {proc.returncode}"
            # GNU time and the shell report a child killed by signal N as 128 + N.
            number = -proc.returncode if proc.returncode < 0 else proc.returncode - 128
            if 0 < number < 65:
                status += f" ({signal.Signals(number).name})" if number in SIGNALS else ""
            raise SystemExit(f"{' '.join(argv)}: {status}: {tail}")
        out.seek(0)
        text = out.read().decode(errors="replace")
        # Both in KiB on Linux. The rusage of GNU time includes its child's CPU time; without
        # GNU time the peak is an upper bound (at least this script's size).
        rss_kib = usage.ru_maxrss
        reported = peak.read().strip().splitlines()
        if reported and reported[-1].isdigit():
            rss_kib = int(reported[-1])
    return Sample(wall, usage.ru_utime + usage.ru_stime, rss_kib / 1024, text)


SIGNALS = {int(sig) for sig in signal.Signals}
"""The signal numbers this system names."""

TIMED_OUT = 124
"""The exit status of coreutils' ``timeout`` when it stopped its command (GNU time passes it on)."""


def measured(argv: list[str], cwd: Path) -> Sample:
    """:func:`measure` without a time limit: always a sample."""
    sample = measure(argv, cwd)
    assert sample is not None
    return sample


SCRIPTS = ("all_links", "bottleneck", "every_bin")
"""The ns-2 scripts of a scenario (module documentation), in the order a round runs them."""


def export_scripts(scenario: Path, work: Path) -> dict[str, Path]:
    """Write the scenario's ns-2 scripts into ``work``; returns their paths by name.

    Each of :data:`SCRIPTS`, and each without its ``$ns run`` (``NAME_setup``).
    """
    from tfrclab.ns2 import export_tcl, resolve
    from tfrclab.scenario import Scenario

    plan = resolve(Scenario.load(scenario))
    options = {
        "all_links": {"sample_s": plan.duration_s},
        "bottleneck": {"sample_s": plan.duration_s, "flow_monitors": False},
        "every_bin": {"sample_s": plan.bin_s},
    }
    paths = {}
    for name in SCRIPTS:
        for suffix, run in (("", True), ("_setup", False)):
            path = work / f"{name}{suffix}.tcl"
            path.write_text(export_tcl(plan, **options[name], run=run), encoding="utf-8")
            paths[f"{name}{suffix}"] = path
    return paths


def peer_commands(ns: str, tfrclab: str, scenario: Path, scripts: dict[str, Path]) -> dict:
    """The commands of one round, by name, in the order they run.

    The start-ups, then each ns-2 script without and with its run, tfrclab's run after the
    first script.
    """
    commands = {
        "ns_start": [ns, "empty.tcl"],
        "tfrclab_start": [tfrclab, "--version"],
    }
    for name in SCRIPTS:
        commands[f"ns_{name}_setup"] = [ns, str(scripts[f"{name}_setup"])]
        commands[f"ns_{name}"] = [ns, str(scripts[name])]
        if name == SCRIPTS[0]:
            commands["tfrclab"] = [tfrclab, "run", str(scenario), "--json", "--quiet"]
    return commands


@dataclass(frozen=True)
class Row:
    """One line of the table: what it pairs, and the medians of ns-2 and tfrclab."""

    metric: str
    ns2: float
    tfrclab: float

    @property
    def ratio(self) -> float:
        """ns-2's median over tfrclab's (inf when tfrclab's is 0)."""
        return self.ns2 / self.tfrclab if self.tfrclab > 0 else float("inf")


def peer_rows(runs: dict[str, list[Sample]]) -> list[Row]:
    """The table's rows from the rounds' samples.

    ``runs`` holds a list per command of :func:`peer_commands`, one sample per round.
    Differences are taken within a round, then the median over the rounds.
    """
    rounds = range(len(runs["tfrclab"]))
    report = [json.loads(r.stdout) for r in runs["tfrclab"]]
    loop = [float(r["cpu_seconds"]) for r in report]
    setup = [float(r["setup_cpu_seconds"]) for r in report]

    def ns_loop(name: str) -> float:
        return median(
            [runs[f"ns_{name}"][i].cpu_s - runs[f"ns_{name}_setup"][i].cpu_s for i in rounds]
        )

    def cpu(name: str) -> float:
        return median([r.cpu_s for r in runs[name]])

    def wall(name: str) -> float:
        return median([r.wall_s for r in runs[name]])

    tfrclab_cpu, tfrclab_wall = cpu("tfrclab"), wall("tfrclab")
    return [
        Row(
            "start-up, wall (s): `ns` on an empty script / `tfrclab --version`",
            wall("ns_start"),
            wall("tfrclab_start"),
        ),
        Row(
            "set-up, CPU (s): `all links` without `$ns run`, less the empty script / "
            "tfrclab's setup_cpu_seconds",
            median(
                [runs["ns_all_links_setup"][i].cpu_s - runs["ns_start"][i].cpu_s for i in rounds]
            ),
            median(setup),
        ),
        Row(
            "loop, CPU (s): `all links` less its set-up / tfrclab's cpu_seconds",
            ns_loop("all_links"),
            median(loop),
        ),
        Row(
            "loop, CPU (s): `bottleneck` less its set-up / tfrclab's cpu_seconds",
            ns_loop("bottleneck"),
            median(loop),
        ),
        Row(
            "loop, CPU (s): `every bin` less its set-up / tfrclab's cpu_seconds",
            ns_loop("every_bin"),
            median(loop),
        ),
        Row(
            "rest of the process, CPU (s): `ns` on an empty script / `tfrclab run` less "
            "set-up and loop",
            cpu("ns_start"),
            median([runs["tfrclab"][i].cpu_s - setup[i] - loop[i] for i in rounds]),
        ),
        Row(
            "whole process, CPU (s): `all links` / `tfrclab run --json --quiet`",
            cpu("ns_all_links"),
            tfrclab_cpu,
        ),
        Row(
            "whole process, wall (s): `all links` / `tfrclab run --json --quiet`",
            wall("ns_all_links"),
            tfrclab_wall,
        ),
        Row(
            "whole process, wall (s): `bottleneck` / `tfrclab run --json --quiet`",
            wall("ns_bottleneck"),
            tfrclab_wall,
        ),
        Row(
            "whole process, wall (s): `every bin` / `tfrclab run --json --quiet`",
            wall("ns_every_bin"),
            tfrclab_wall,
        ),
        Row(
            "peak RSS (MiB): `all links` / `tfrclab run --json --quiet`",
            median([r.rss_mib for r in runs["ns_all_links"]]),
            median([r.rss_mib for r in runs["tfrclab"]]),
        ),
    ]


def peers(args: argparse.Namespace, ns: str, tfrclab: str, work: Path) -> list[Row]:
    """Run the rounds (module documentation) in ``work`` and return the table's rows."""
    scripts = export_scripts(args.scenario.resolve(), work)
    (work / "empty.tcl").write_text("", encoding="utf-8")
    commands = peer_commands(ns, tfrclab, args.scenario.resolve(), scripts)
    print("warm-up: each command once, not measured", file=sys.stderr)
    warm = {name: measured(argv, work) for name, argv in commands.items()}
    if "cpu_seconds" not in json.loads(warm["tfrclab"].stdout):
        raise SystemExit(f"{tfrclab} reports no cpu_seconds: a tfrclab older than this script")
    runs: dict[str, list[Sample]] = {name: [] for name in commands}
    for i in range(args.pairs):
        print(f"round {i + 1}/{args.pairs}", file=sys.stderr)
        for name, argv in commands.items():
            runs[name].append(measured(argv, work))
    for name in SCRIPTS:
        for run in runs[f"ns_{name}"]:
            if not run.stdout.startswith("H "):
                raise SystemExit(f"ns-2 did not print the header of the {name} script")
    return peer_rows(runs)


def median(values: list[float]) -> float:
    """The median of ``values``."""
    return statistics.median(values)


def load_average() -> str:
    """The machine's load averages over 1, 5 and 15 minutes."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def machine() -> str:
    """The CPU model, cores and system, for the report (the load is reported apart)."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores, {platform.system()}"


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
        sample = measured(argv, work)
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


def delivered_packets(report: dict) -> int:
    """Packets delivered in a ``tfrclab run --json`` report: sent less dropped, every flow."""
    return sum(int(f["packets_sent"]) - int(f["packets_dropped"]) for f in report["flows"])


def sent_packets(report: dict) -> int:
    """Data packets sent in a ``tfrclab run --json`` report, every flow."""
    return sum(int(f["packets_sent"]) for f in report["flows"])


NS2_LIMIT_S = 180.0
"""How long one ns-2 process of the scaling series may run: 3 minutes. At the first flow count
where ns-2's set-up or run takes longer, ns-2 is stopped and not run at larger counts."""


def scaling_rate(rate: str, flows: int) -> str:
    """The bottleneck rate of the point of ``flows`` flows.

    ``rate`` itself, or ``rate`` times ``flows`` when it ends in ``/flow`` (``468.75kbps/flow``:
    Fig. 9's 15 Mb/s over its 32 flows, so that every N shares the bottleneck as Fig. 9 does).
    """
    if not rate.endswith("/flow"):
        return rate
    number = rate.removesuffix("/flow").rstrip("bpsKkMGT")
    unit = rate.removesuffix("/flow")[len(number) :]
    try:
        per_flow = float(number)
    except ValueError:
        message = f"bench_peers: --scaling-rate {rate}: expected e.g. 468.75kbps/flow"
        raise SystemExit(message) from None
    return f"{per_flow * flows:g}{unit}"


def scaling_files(args: argparse.Namespace, flows: int, work: Path) -> tuple[Path, Path]:
    """Write the scaling dumbbell of ``flows`` flows run for D and for 2D; returns both paths."""
    seconds = float(args.scaling_duration.rstrip("s"))
    paths = []
    for suffix, duration in (("", args.scaling_duration), ("-double", f"{2 * seconds:g}s")):
        path = work / f"scaling-{flows}{suffix}.toml"
        text = SCALING_SCENARIO.format(
            flows=flows,
            hosts=flows,
            half=max(1, flows // 2),
            rate=scaling_rate(args.scaling_rate, flows),
            duration=duration,
        )
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths[0], paths[1]


def ns2_scaling_scripts(path: Path, work: Path, script: str) -> tuple[Path, Path, object]:
    """The ns-2 script of the scenario at ``path``, with and without ``$ns run``.

    ``script`` is ``all_links`` or ``bottleneck`` (module documentation), printed once at the
    end. Returns both paths and the scenario's plan (to read the script's output).
    """
    from tfrclab.ns2 import export_tcl, resolve
    from tfrclab.scenario import Scenario

    plan = resolve(Scenario.load(path))
    scripts = []
    for suffix, run in (("", True), ("-setup", False)):
        tcl = work / f"{path.stem}{suffix}.tcl"
        text = export_tcl(
            plan, sample_s=plan.duration_s, flow_monitors=script == "all_links", run=run
        )
        tcl.write_text(text, encoding="utf-8")
        scripts.append(tcl)
    return scripts[0], scripts[1], plan


def scaling(args: argparse.Namespace, ns: str | None, tfrclab: str, work: Path) -> list[dict]:
    """The flow-count series (module documentation): one dict per N."""
    points = []
    ns_over: int | None = None  # the flow count at which ns-2 ran out of time
    ns_max = args.scaling_ns_max
    if ns is not None:
        (work / "empty.tcl").write_text("", encoding="utf-8")
    for flows in [int(n) for n in args.scaling.split(",")]:
        path, double = scaling_files(args, flows, work)
        commands = {
            "tfrclab": [tfrclab, "run", str(path), "--json", "--quiet", "--force"],
            "tfrclab_double": [tfrclab, "run", str(double), "--json", "--quiet", "--force"],
        }
        ns_note = "not installed" if ns is None else ""
        if ns is not None and ns_max is not None and flows > ns_max:
            ns_note = f"not run (over --scaling-ns-max {ns_max})"
        elif ns_over is not None:
            ns_note = f"not run (over 3 min at {ns_over} flows)"
        scripts = None
        if ns is not None and not ns_note:
            scripts = ns2_scaling_scripts(path, work, args.scaling_ns_script)
        runs: dict[str, list[Sample]] = {
            name: [] for name in (*commands, "ns_start", "ns_setup", "ns")
        }
        for i in range(args.scaling_pairs):
            print(f"scaling {flows} flows, run {i + 1}/{args.scaling_pairs}", file=sys.stderr)
            for name, argv in commands.items():
                runs[name].append(measured(argv, work))
            if scripts is None or ns is None:
                continue
            script, setup_script, _ = scripts
            runs["ns_start"].append(measured([ns, "empty.tcl"], work))
            for name, tcl in (("ns_setup", setup_script), ("ns", script)):
                try:
                    sample = measure([ns, str(tcl)], work, limit_s=NS2_LIMIT_S)
                except SystemExit as err:  # ns-2 failed at this N: say so, try the next N
                    print(f"scaling {flows} flows: {err}", file=sys.stderr)
                    ns_note = f"failed: {str(err).split(': ')[1]}"
                    scripts = None
                    for partial in ("ns_start", "ns_setup", "ns"):
                        runs[partial].clear()
                    break
                if sample is None:
                    print(f"scaling {flows} flows: ns-2 over 3 min, stopped", file=sys.stderr)
                    ns_over, scripts = flows, None
                    ns_note = f"over 3 min ({'set-up' if name == 'ns_setup' else 'run'})"
                    for partial in ("ns_start", "ns_setup", "ns"):
                        runs[partial].clear()
                    break
                runs[name].append(sample)
        point = scaling_point(flows, runs, scripts[2] if scripts else None)
        point["ns2_note"] = ns_note
        if args.scaling_count:
            print(f"scaling {flows} flows, counting (callgrind)", file=sys.stderr)
            once = counted(commands["tfrclab"], work / f"callgrind-{flows}.out")
            twice = counted(commands["tfrclab_double"], work / f"callgrind-{flows}-double.out")
            between = max(1, point["delivered_packets"])
            for key, name in (
                ("Ir", "instructions_per_packet"),
                ("DLmr", "l2_read_misses_per_packet"),
                ("DLmw", "l2_write_misses_per_packet"),
            ):
                point[name] = (twice[key] - once[key]) / between
        points.append(point)
    base = points[0]["loop_us_per_delivered"] if points else 1.0
    for point in points:
        point["growth"] = point["loop_us_per_delivered"] / base if base > 0 else float("nan")
    return points


def ns2_packets(text: str, plan: object) -> int:
    """The data packets ns-2 sent in a scaling script's output (printed once, at the end).

    With flow monitors, each flow's packets into its first link (:func:`read_output`); without
    (``bottleneck``, whose output :func:`read_output` refuses for want of flow lines), the
    packets that arrived at the bottleneck, which every data packet crosses: the third field
    of its ``L`` line (``L sample link arrivals departures drops bytes queue``).
    """
    from tfrclab.ns2.output import read_output

    if any(line.startswith("F ") for line in text.splitlines()):
        series = read_output(text, plan)  # type: ignore[arg-type]
        assert series.sent_packets is not None
        return int(series.sent_packets.sum())
    primary = str(plan.primary_link)  # type: ignore[attr-defined]
    for line in reversed(text.splitlines()):
        fields = line.split()
        if fields[:1] == ["L"] and fields[2] == primary:
            return int(float(fields[3]))
    raise SystemExit("ns-2 printed no counters for the bottleneck")


def scaling_point(flows: int, runs: dict[str, list[Sample]], plan: object | None) -> dict:
    """One point of the series from its runs (module documentation).

    ns-2's figures are None when it did not run (or not to the end) at this N.
    """
    once = [json.loads(r.stdout) for r in runs["tfrclab"]]
    twice = [json.loads(r.stdout) for r in runs["tfrclab_double"]]
    packets, packets_double = delivered_packets(once[0]), delivered_packets(twice[0])
    between = max(1, packets_double - packets)
    events = int(twice[0]["events"]) - int(once[0]["events"])
    loop = median([float(r["cpu_seconds"]) for r in once])
    loop_double = median([float(r["cpu_seconds"]) for r in twice])
    sent = sent_packets(once[0])
    point: dict = {
        "flows": flows,
        "packets_sent": sent,
        "delivered_packets": packets_double - packets,
        "setup_cpu_s": median([float(r["setup_cpu_seconds"]) for r in once]),
        "loop_cpu_s": loop,
        "process_cpu_s": median([r.cpu_s for r in runs["tfrclab"]]),
        "process_wall_s": median([r.wall_s for r in runs["tfrclab"]]),
        "loop_us_per_sent": 1e6 * loop / max(1, sent),
        "loop_us_per_delivered": 1e6 * (loop_double - loop) / between,
        "events_per_packet": events / between,
        "loop_ns_per_event": 1e9 * (loop_double - loop) / max(1, events),
        "rss_mib": median([r.rss_mib for r in runs["tfrclab_double"]]),
        "ns2_setup_cpu_s": None,
        "ns2_loop_cpu_s": None,
        "ns2_process_cpu_s": None,
        "ns2_packets_sent": None,
        "ns2_loop_us_per_sent": None,
        "ns2_rss_mib": None,
    }
    rounds = range(len(runs["ns"]))
    if plan is not None and runs["ns"] and len(runs["ns_setup"]) == len(runs["ns"]):
        ns_sent = ns2_packets(runs["ns"][0].stdout, plan)
        ns_loop = median([runs["ns"][i].cpu_s - runs["ns_setup"][i].cpu_s for i in rounds])
        point.update(
            ns2_setup_cpu_s=median(
                [runs["ns_setup"][i].cpu_s - runs["ns_start"][i].cpu_s for i in rounds]
            ),
            ns2_loop_cpu_s=ns_loop,
            ns2_process_cpu_s=median([r.cpu_s for r in runs["ns"]]),
            ns2_packets_sent=ns_sent,
            ns2_loop_us_per_sent=1e6 * ns_loop / max(1, ns_sent),
            ns2_rss_mib=median([r.rss_mib for r in runs["ns"]]),
        )
    return point


HEADLINE = (
    "loop, CPU (s): `all links`",
    "loop, CPU (s): `bottleneck`",
    "whole process, wall (s): `all links`",
    "whole process, wall (s): `bottleneck`",
)
"""The rows whose ratio the table prints in bold: loop against loop and whole process against
whole process, against ns-2 watching what tfrclab watches and against ns-2 watching the
bottleneck only."""


def peers_table(rows: list[dict]) -> list[str]:
    """The Markdown table of the rows (as ``--json`` gives them: metric, ns2, tfrclab, ratio)."""
    lines = [
        "| what is paired: ns-2.35 / tfrclab | ns-2.35 | tfrclab | ns-2 / tfrclab |",
        "|---|---:|---:|---:|",
    ]
    for row in rows:
        form = ".1f" if "RSS" in row["metric"] else ".4g"
        ratio = f"{row['ratio']:.2f}x"
        if row["metric"].startswith(HEADLINE):
            ratio = f"**{ratio}**"
        lines.append(
            f"| {row['metric']} | {row['ns2']:{form}} | {row['tfrclab']:{form}} | {ratio} |"
        )
    return lines


def scenario_label(scenario: str) -> str:
    """The scenario's path relative to the repository when it lies inside it."""
    path = Path(scenario).absolute()
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else scenario


def readme_block(report: dict) -> str:
    """The README's paragraph and table for a ``--json`` report of the peers rounds.

    What README.md and docs/performance.md carry, regenerated by ``--readme``: which scenario,
    how many rounds, when, on what machine under what load, which build, and the table.
    """
    intro = (
        f"`{scenario_label(report['scenario'])}`, medians of {report['pairs']} rounds, "
        f"{report['date']}, {report['machine']} (load average {report['load_before']} before "
        f"the rounds, {report['load_after']} after), the {report['build']} build of the module "
        "(`tfrclab --version` says which build you have); ratio: ns-2's median over "
        "tfrclab's, in bold loop against loop and whole process against whole process."
    )
    return "\n".join([intro, "", *peers_table(report["rows"])])


def scaling_intro(report: dict) -> str:
    """The paragraph before the scaling table of a ``--skip-peers --json`` report.

    What was run, when, where, under what load, and which build.
    """
    return (
        f"The scaling dumbbell (`{report['options']}`), medians of {report['pairs']} "
        f"round(s), {report['date']}, {report['machine']} (load average "
        f"{report['load_before']} before, {report['load_after']} after), the "
        f"{report['build']} build of the module."
    )


def scaling_table(points: list[dict]) -> list[str]:
    """The scaling series as a Markdown table (module documentation).

    "-" where ns-2 did not run, with the reason in the last column.
    """

    def fmt(value: float | None, form: str) -> str:
        return "-" if value is None else f"{value:{form}}"

    def ratio(ns2: float | None, ours: float) -> str:
        return "-" if ns2 is None or ours <= 0 else f"{ns2 / ours:.1f}x"

    lines = [
        "| flows | tfrclab set-up / loop / process CPU (s) | ns-2 set-up / loop / process CPU "
        "(s) | loop ratio | process ratio | loop us per packet sent, tfrclab / ns-2 | tfrclab "
        "loop us per delivered packet D..2D | vs smallest | events per packet | peak RSS "
        "(MiB), tfrclab at 2D / ns-2 at D | ns-2 |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for p in points:
        ns2 = "-"
        if p["ns2_loop_cpu_s"] is not None:
            ns2 = (
                f"{p['ns2_setup_cpu_s']:.3f} / {p['ns2_loop_cpu_s']:.3f} / "
                f"{p['ns2_process_cpu_s']:.3f}"
            )
        lines.append(
            f"| {p['flows']} | {p['setup_cpu_s']:.4f} / {p['loop_cpu_s']:.3f} / "
            f"{p['process_cpu_s']:.3f} | {ns2} | {ratio(p['ns2_loop_cpu_s'], p['loop_cpu_s'])} | "
            f"{ratio(p['ns2_process_cpu_s'], p['process_cpu_s'])} | "
            f"{p['loop_us_per_sent']:.3f} / {fmt(p['ns2_loop_us_per_sent'], '.3f')} | "
            f"{p['loop_us_per_delivered']:.3f} | {p['growth']:.2f}x | "
            f"{p['events_per_packet']:.2f} | {p['rss_mib']:.1f} / {fmt(p['ns2_rss_mib'], '.1f')} "
            f"| {p['ns2_note'] or 'ran'} |"
        )
    return lines


def counted_table(points: list[dict]) -> list[str]:
    """``--scaling-count``'s figures as a Markdown table, per delivered packet D..2D."""
    first = points[0]["instructions_per_packet"]
    lines = [
        "| flows | instructions | vs smallest | L2 read misses | L2 write misses |",
        "|---:|---:|---:|---:|---:|",
    ]
    for p in points:
        lines.append(
            f"| {p['flows']} | {p['instructions_per_packet']:.0f} | "
            f"{p['instructions_per_packet'] / first:.2f}x | "
            f"{p['l2_read_misses_per_packet']:.2f} | {p['l2_write_misses_per_packet']:.2f} |"
        )
    return lines


def print_extras(points: list[dict], overhead: dict | None) -> None:
    """The scaling table, the counted table and the sweep-overhead line, as Markdown."""
    if points:
        print()
        print("\n".join(scaling_table(points)))
    if points and "instructions_per_packet" in points[0]:
        print()
        print("counted (callgrind, the loop only; second level: 512 KiB), per packet D..2D:")
        print()
        print("\n".join(counted_table(points)))
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
    from tfrclab.reproduce.cli import positive_int

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenario", type=Path, nargs="?", default=DEFAULT_SCENARIO)
    parser.add_argument("--pairs", type=positive_int, default=5, help="rounds (default 5)")
    parser.add_argument("--ns", default="ns", help="the ns-2 binary (default: ns on PATH)")
    parser.add_argument(
        "--tfrclab",
        default=str(Path(sys.executable).with_name("tfrclab")),
        help="the tfrclab command (default: the one next to this Python)",
    )
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print the medians as JSON")
    output.add_argument(
        "--readme",
        action="store_true",
        help="print only what README.md and docs/performance.md carry: the paragraph and "
        "table of the rounds, and the scaling table with --scaling",
    )
    parser.add_argument("--scaling", help="flow counts of the scaling series, e.g. 8,128,2048")
    parser.add_argument(
        "--scaling-rate",
        default="1Gbps",
        help="bottleneck rate (1Gbps), or a rate per flow times N (e.g. 468.75kbps/flow)",
    )
    parser.add_argument("--scaling-duration", default="20s", help="simulated time D (20s)")
    parser.add_argument("--scaling-pairs", type=positive_int, default=1, help="runs per point (1)")
    parser.add_argument(
        "--scaling-ns-max",
        type=int,
        default=None,
        help="largest N ns-2 runs (default: every N until one takes over 3 minutes)",
    )
    parser.add_argument(
        "--scaling-ns-script",
        choices=("all_links", "bottleneck"),
        default="all_links",
        help="the ns-2 script of the series: monitors where tfrclab keeps counters "
        "(all_links, the default) or on the bottleneck only",
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
        load_before = load_average()
        with tempfile.TemporaryDirectory(prefix="tfrclab-bench-") as tmp:
            points = scaling(args, ns, tfrclab, Path(tmp)) if args.scaling else []
            overhead = sweep_overhead(args, tfrclab, Path(tmp)) if args.sweep_runs else None
        extras = {
            "options": f"--scaling {args.scaling} --scaling-rate {args.scaling_rate} "
            f"--scaling-duration {args.scaling_duration} --scaling-ns-script "
            f"{args.scaling_ns_script}",
            "pairs": args.scaling_pairs,
            "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "machine": machine(),
            "load_before": load_before,
            "load_after": load_average(),
            "build": tfrclab_build(tfrclab),
        }
        if args.json:
            print(json.dumps({**extras, "scaling": points, "sweep": overhead}))
        elif args.readme:
            print(scaling_intro(extras))
            print()
            print("\n".join(scaling_table(points)))
        else:
            print(
                f"machine: {extras['machine']}, load average {load_before} before, "
                f"{extras['load_after']} after"
            )
            print(f"tfrclab build: {extras['build']}")
            print_extras(points, overhead)
        return 0
    if ns is None:
        print(f"bench_peers: {args.ns!r} not found (Debian/Ubuntu: apt-get install ns2)")
        return 2
    from tfrclab.ns2 import ExportError
    from tfrclab.scenario import ScenarioError

    load_before = load_average()
    with tempfile.TemporaryDirectory(prefix="tfrclab-bench-") as tmp:
        work = Path(tmp)
        try:
            rows = peers(args, ns, tfrclab, work)
        except (ExportError, ScenarioError, OSError) as err:
            print(f"bench_peers: {args.scenario}: {err}")
            return 2
        load_after = load_average()
        points = scaling(args, ns, tfrclab, work) if args.scaling else []
        overhead = sweep_overhead(args, tfrclab, work) if args.sweep_runs else None
    report = {
        "scenario": str(args.scenario),
        "pairs": args.pairs,
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine(),
        "load_before": load_before,
        "load_after": load_after,
        "build": tfrclab_build(tfrclab),
        "rows": [
            {"metric": r.metric, "ns2": r.ns2, "tfrclab": r.tfrclab, "ratio": r.ratio} for r in rows
        ],
        "scaling": points,
        "sweep": overhead,
    }
    if args.json:
        print(json.dumps(report))
        return 0
    print(readme_block(report))
    if not args.readme:
        print_extras(points, overhead)
    elif points:
        print()
        print("\n".join(scaling_table(points)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
