"""The relay benchmark: ``python -m tfrclab.testbed bench``.

For each rate, one kernel TCP Reno bulk transfer through a testbed (10 ms each way, DropTail
of one bandwidth-delay product, no log) for a few seconds, then: the rate the relay delivered,
the relay's CPU time per Mbit carried (both directions), per packet and as a fraction of one
core, and how late its deliveries were (median and 99th percentile), the measure of how
faithfully a user-space emulator keeps its schedule on this machine. Needs root.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Sequence

from tfrclab.testbed.emulator import Testbed


def measure(
    rate_mbps: float, seconds: float, tick_s: float = 0.0, slack_s: float = 0.0
) -> dict[str, float]:
    """One bulk transfer at ``rate_mbps`` for ``seconds``; the relay's figures.

    The buffer is one bandwidth-delay product (20 ms RTT) and at least 100 packets, so that
    Reno's halved window still fills the link.
    """
    limit = max(100, math.ceil(rate_mbps * 1e6 * 0.020 / (1500 * 8)))
    with Testbed(
        rate=f"{rate_mbps}Mb/s",
        delay="10ms",
        queue=f"droptail:{limit}",
        tick=tick_s,
        slack=slack_s,
    ) as tb:
        receiver = tb.popen(
            "b",
            [sys.executable, "-m", "tfrclab.testbed", "tcp-recv", "--limit", str(seconds + 20)],
            stdout=-1,
            text=True,
        )
        tb.tool("a", "tcp-send", tb.address("b"), "--seconds", str(seconds), "--cc", "reno")
        out, _ = receiver.communicate(timeout=30)
        got = json.loads(out)
    report = tb.report
    assert report is not None
    forward, reverse = report["forward"], report["reverse"]
    # The transfer outlasts the sender's seconds by the data still in its socket buffer: rates
    # are over the receiver's span from first to last byte.
    span = max(got["last"] - got["first"], 1e-9)
    carried_mbit = (forward["departed_bytes"] + reverse["departed_bytes"]) * 8 / 1e6
    packets = forward["departures"] + reverse["departures"]
    cpu = float(report["cpu_s"])
    return {
        "rate_mbps": rate_mbps,
        "delivered_mbps": forward["departed_bytes"] * 8 / 1e6 / span,
        "goodput_mbps": got["bytes"] * 8 / 1e6 / span,
        "cpu_core_fraction": cpu / span,
        "cpu_us_per_mbit": cpu * 1e6 / max(carried_mbit, 1e-9),
        "cpu_us_per_packet": cpu * 1e6 / max(packets, 1),
        "wakeups_per_packet": float(report["wakeups"]) / max(packets, 1),
        "late_p50_us": forward["lateness_p50_us"],
        "late_p99_us": forward["lateness_p99_us"],
        "late_max_us": forward["lateness_max_us"],
        "queue_drops": forward["queue_drops"],
    }


def main(
    rates_mbps: Sequence[float], seconds: float, tick_s: float = 0.0, slack_s: float = 0.0
) -> int:
    """Run :func:`measure` for each rate and print a table; return the exit status."""
    header = (
        f"{'rate':>8} {'delivered':>10} {'goodput':>8} {'core':>6} {'us/Mbit':>8} {'us/pkt':>7} "
        f"{'wake/pkt':>8} {'late p50':>9} {'late p99':>9} {'late max':>9} {'drops':>6}"
    )
    print(header)
    for rate in rates_mbps:
        m = measure(rate, seconds, tick_s, slack_s)
        print(
            f"{m['rate_mbps']:>6.0f}Mb {m['delivered_mbps']:>8.2f}Mb {m['goodput_mbps']:>6.2f}Mb "
            f"{m['cpu_core_fraction']:>6.1%} {m['cpu_us_per_mbit']:>8.0f} "
            f"{m['cpu_us_per_packet']:>7.1f} {m['wakeups_per_packet']:>8.2f} "
            f"{m['late_p50_us']:>7.0f}us {m['late_p99_us']:>7.0f}us {m['late_max_us']:>7.0f}us "
            f"{m['queue_drops']:>6.0f}",
            flush=True,
        )
    return 0
