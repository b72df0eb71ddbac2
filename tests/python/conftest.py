"""Shared helpers for the Python test suite."""

from __future__ import annotations

import math
import os
import subprocess
import sys
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
