"""The relay process: ``python -m tfrclab.testbed relay CONFIG``.

It creates the two TUN
devices, prints ``ready START_NS`` (its time zero on ``CLOCK_MONOTONIC``), forwards packets in
Rust with the GIL released until its standard input closes, and prints its report as one JSON
line, with the CPU time the forwarding used (``cpu_s``) and whether it ran at real-time
priority (``realtime``).
"""

from __future__ import annotations

import json
import os
import resource
import sys
from pathlib import Path

from tfrclab import _native


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


#: The relay's real-time priority (SCHED_FIFO, 1-99): above every ordinary process, below the
#: kernel's own threads. It sleeps in poll between packets, and the kernel's real-time
#: throttling (``sched_rt_runtime_us``) bounds it even if it did not.
RT_PRIORITY = 50


def _realtime() -> bool:
    """Ask for SCHED_FIFO; return whether it was granted.

    Other processes on the machine (the traffic generators, unrelated jobs) then do not delay
    the relay's deliveries.
    """
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(RT_PRIORITY))
    except (OSError, AttributeError):
        return False
    return True


def main(config_path: str) -> int:
    """Run the relay configured by the TOML file ``config_path``; return the exit status."""
    text = Path(config_path).read_text(encoding="utf-8")
    realtime = _realtime()
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
    report["realtime"] = realtime
    print(json.dumps(report), flush=True)
    return 0
