"""Shared helpers for the Python test suite."""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from hypothesis import settings

# Property tests draw the same cases on every run (as the Rust suite's fixed proptest seed
# does), so a failure is never a matter of luck; HYPOTHESIS_PROFILE=random searches wider.
settings.register_profile("fixed", derandomize=True)
settings.register_profile("random", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fixed"))

REPO_ROOT = Path(__file__).resolve().parents[2]


def load_script(name: str) -> Any:
    """The module of ``scripts/NAME.py``, imported for its functions (its ``main`` not run).

    It is registered in ``sys.modules`` first, as a dataclass defined in it looks its module up
    there.
    """
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, REPO_ROOT / "scripts" / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def rfc5348_rate(
    s: float, rtt: float, p: float, b: float = 1.0, t_rto: float | None = None
) -> float:
    """RFC 5348 §3.1, written out independently of the Rust implementation."""
    t_rto = 4 * rtt if t_rto is None else t_rto
    denominator = rtt * math.sqrt(2 * b * p / 3) + t_rto * (
        3 * math.sqrt(3 * b * p / 8) * p * (1 + 32 * p**2)
    )
    return s / denominator


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m tfrclab ARGS`` in a fresh interpreter and capture its output."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "MPLBACKEND": "Agg"}
    return subprocess.run(
        [sys.executable, "-m", "tfrclab", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=cwd,
        env=env,
    )


def wait_udp_bound(
    port: int, process: subprocess.Popen[Any] | None = None, timeout_s: float = 60.0
) -> None:
    """Wait until a socket is bound to UDP ``port`` (a receiver started in a subprocess).

    Reads ``/proc/net/udp`` and ``/proc/net/udp6`` rather than trying to bind the port, which
    could take it from the receiver at the wrong moment. A fixed sleep is not enough: on a
    loaded machine the interpreter's start and ``tfrclab``'s import can take longer, and the
    first packet (TFRC sends one, then waits a second for feedback) then goes nowhere. Fails
    if ``process`` ends first.
    """
    suffix = f":{port:04X}"
    deadline = time.monotonic() + timeout_s
    while True:
        for table in ("/proc/net/udp", "/proc/net/udp6"):
            try:
                lines = Path(table).read_text().splitlines()[1:]
            except OSError:
                continue
            if any(line.split()[1].endswith(suffix) for line in lines):
                return
        assert process is None or process.poll() is None, f"it ended ({process.returncode})"
        assert time.monotonic() < deadline, f"nothing bound UDP port {port} in {timeout_s} s"
        time.sleep(0.01)


def session_processes(sid: int) -> list[int]:
    """The live (not zombie) processes of session ``sid``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            # The command name is in parentheses and may hold spaces: split after it.
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if int(fields[3]) == sid and fields[0] != "Z":
            found.append(int(entry.name))
    return found


def kill_and_count_orphans(args: list[str], workers: int, cwd: Path | None = None) -> float:
    """SIGKILL ``args`` (a command) once ``workers`` of its worker processes run.

    The command runs in a session of its own; returns how long the session's other processes
    (workers, multiprocessing's resource tracker) outlived it, in seconds, and fails if any is
    still there 10 s later.
    """
    env = {**os.environ, "MPLBACKEND": "Agg"}
    process = subprocess.Popen(
        args,
        env=env,
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while sum(map(is_worker, session_processes(process.pid))) < workers:
            assert time.monotonic() < deadline, "no workers started"
            assert process.poll() is None, "it ended before its workers started"
            time.sleep(0.05)
        time.sleep(0.5)  # the workers are running a task
        process.kill()
        process.wait()
        killed = time.monotonic()
        while session_processes(process.pid) and time.monotonic() - killed < 10:
            time.sleep(0.02)
        left = session_processes(process.pid)
        assert not left, f"processes {left} outlived the SIGKILLed {process.pid}"
        return time.monotonic() - killed
    finally:
        for pid in session_processes(process.pid):
            os.kill(pid, signal.SIGKILL)


def is_worker(pid: int) -> bool:
    """Whether process ``pid`` is a worker process that multiprocessing spawned."""
    try:
        return "multiprocessing.spawn" in Path(f"/proc/{pid}/cmdline").read_text()
    except OSError:
        return False


SMALL_SCENARIO = """\
name = "small"
duration = "3s"
seed = 5

[monitor]
bin = "100ms"
packet_trace = 500

[topology]
kind = "dumbbell"
hosts = 2

[topology.bottleneck]
rate = "2Mbps"
delay = "10ms"
queue = { kind = "droptail", limit = 20 }

[topology.access]
rate = "100Mbps"
delay = { uniform = ["1ms", "5ms"] }

[[flows]]
kind = "cbr"
count = 2
rate = "1.5Mbps"
size = "1000B"
random = true
start = { uniform = ["0s", "0.5s"] }

[[losses]]
link = "bottleneck"
kind = "bernoulli"
p = 0.02
"""
"""Two randomized CBR flows overloading a small DropTail dumbbell with Bernoulli loss: queue
drops, loss-model drops and a packet trace in three simulated seconds."""


def small_scenario_dict() -> dict[str, object]:
    """:data:`SMALL_SCENARIO` as tables."""
    from tfrclab import Scenario

    return Scenario.from_toml(SMALL_SCENARIO).to_dict()


def robust_claim_keys(experiments: Iterable[Any]) -> set[str]:
    """The ``experiment/claim`` keys of the claims marked robust to ``--quick``."""
    return {f"{e.id}/{c.id}" for e in experiments for c in e.claims if c.robust_to_quick}
