"""netsim's rows of docs/twin.md's mixed-experiment table: TFRC/TCP over 10 seeds.

``floyd2000/testbed-mixed.toml`` (1 TFRC + 3 TCP through 10 Mb/s, 50 ms each way) with the TCP
flows' variant and preset replaced (the linux preset with 1448-byte segments, 1500 bytes on the
wire), with and without 0.5 ms of host jitter, under DropTail of 50 packets and RED; measured
as the testbed measures it (``tfrclab.testbed.experiments.summarize_mixed``, 60 s from 5 s).
Prints one Markdown row per setting: the mean and its 95% interval (Student's t) per queue.

    .venv/bin/python scripts/twin_mixed_netsim.py
"""

from __future__ import annotations

import math
import statistics

import numpy as np

from tfrclab import simulate
from tfrclab.reproduce.registry import scenario_path
from tfrclab.scenario import Scenario
from tfrclab.testbed.config import queue_table
from tfrclab.testbed.experiments import QUEUES, summarize_mixed

SEEDS = range(1, 11)
#: Student's t, 97.5% quantile, 9 degrees of freedom.
T_9 = 2.262
ROWS = (
    ("sack", "rfc", None),
    ("sack", "linux", None),
    ("sack", "linux", "0.5ms"),
    ("cubic", "linux", None),
    ("cubic", "linux", "0.5ms"),
)


def tfrc_over_tcp(queue: str, variant: str, preset: str, jitter: str | None, seed: int) -> float:
    """One seed's TFRC throughput over the TCPs' mean."""
    changes = {"flows[0].variant": variant, "flows[0].preset": preset}
    if preset == "linux":
        changes["flows[0].size"] = "1448B"
    if jitter:
        changes["flows[0].host_jitter"] = jitter
        changes["flows[1].host_jitter"] = jitter
    seconds = 60.0
    scenario = Scenario.load(scenario_path("floyd2000/testbed-mixed.toml")).with_(
        duration=f"{seconds + 1:g}s",
        **{"topology.bottleneck.queue": queue_table(QUEUES[queue])},
        **changes,
    )
    result = simulate.run(scenario, seed)
    received = result.flow_bins["received_bytes"].astype(np.float64) * 8
    series = {
        (f"udp:{i}" if kind == "tfrc" else f"tcp:{i}"): received[i]
        for i, kind in enumerate(result.flows["kind"])
    }
    return float(summarize_mixed(series, seconds, result.info.bin_s)["tfrc_over_tcp_mean"])


def main() -> None:
    """Print the rows."""
    for variant, preset, jitter in ROWS:
        cells = []
        for queue in ("droptail", "red"):
            values = [tfrc_over_tcp(queue, variant, preset, jitter, s) for s in SEEDS]
            mean = statistics.mean(values)
            half = T_9 * statistics.stdev(values) / math.sqrt(len(values))
            cells.append(f"{mean:.2f} ({mean - half:.2f}-{mean + half:.2f})")
        label = f"netsim, `{variant}`, `{preset}`" + (f", `host_jitter` {jitter}" if jitter else "")
        print(f"| {label} | {cells[0]} | {cells[1]} |", flush=True)


if __name__ == "__main__":
    main()
