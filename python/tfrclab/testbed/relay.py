"""The relay process: ``python -m tfrclab.testbed relay CONFIG``.

It creates the two TUN
devices, prints ``ready START_NS`` (its time zero on ``CLOCK_MONOTONIC``), forwards packets in
Rust with the GIL released until its standard input closes, and prints its report as one JSON
line, with the CPU time the forwarding used (``cpu_s``).
"""

from __future__ import annotations

import json
import resource
import sys
from pathlib import Path

from tfrclab import _native


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main(config_path: str) -> int:
    """Run the relay configured by the TOML file ``config_path``; return the exit status."""
    text = Path(config_path).read_text(encoding="utf-8")
    cpu_at_start = [0.0]

    def ready(start_ns: int) -> None:
        cpu_at_start[0] = _cpu_seconds()
        print(f"ready {start_ns}", flush=True)

    try:
        report = _native.testbed_relay(text, ready)
    except (OSError, ValueError) as err:
        print(f"relay: {err}", file=sys.stderr, flush=True)
        return 1
    report["cpu_s"] = _cpu_seconds() - cpu_at_start[0]
    print(json.dumps(report), flush=True)
    return 0
