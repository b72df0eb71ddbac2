"""Shared helpers for the Python test suite."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

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
