"""Per-flow figures of share-gap.md section 4 from runs of ``investigate.py``.

    PYTHONPATH=python python docs/testbed-results/share-gap/analyze.py OUT/VARIANT...

For each run directory (with its ``relay.log`` and ``result.json``): each flow's arrivals at
the relay, drops, loss events (a drop more than one RTT after the previous event's first
drop), loss event rate per packet, mean forward queueing delay, throughput and the TCP
equation's rate for that loss event rate, packet size and RTT (RFC 5348 §3.1, b = 1,
t_RTO = 4R). One JSON line per run.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from tfrclab.models import tfrc_rate
from tfrclab.testbed import log as tblog
from tfrclab.testbed.experiments import TCP_PORTS, TFRC_PORT, WARMUP_S

#: The path's RTT: 100 ms of propagation, the mean queueing delay measured (about 30 ms, the
#: same for every flow) and transmission.
RTT_S = 0.131
DROPS = (tblog.DROP_LOSS, tblog.DROP_QUEUE)


def analyze(run: Path) -> dict[str, object]:
    """The figures of one run directory."""
    records = tblog.read_log(run / "relay.log").records
    result = json.loads((run / "result.json").read_text(encoding="utf-8"))
    span = result["window_s"][1] - result["window_s"][0]
    t0 = records["t_ns"].min()
    window = ((records["t_ns"] - t0) >= WARMUP_S * 1e9) & (records["dir"] == tblog.FORWARD)
    out: dict[str, object] = {"run": run.name, "tfrc_over_tcp": result["tfrc_over_tcp_mean"]}
    names = {TFRC_PORT: "tfrc", **{p: f"tcp{i + 1}" for i, p in enumerate(TCP_PORTS)}}
    for port, name in names.items():
        flow = window & (records["dport"] == port)
        arrivals = int(((records["event"] == tblog.ARRIVE) & flow).sum())
        departed = records[(records["event"] == tblog.DEPART) & flow]
        drops = np.sort(records["t_ns"][np.isin(records["event"], DROPS) & flow]) / 1e9
        events, last = 0, -np.inf
        for t in drops:
            if t - last > RTT_S:
                events, last = events + 1, t
        p = events / arrivals if arrivals else float("nan")
        size = float(np.median(departed["size"])) if len(departed) else float("nan")
        bps = float(departed["size"].sum() * 8 / span)
        equation = float(tfrc_rate(size, RTT_S, p)) * 8 if p > 0 else float("nan")
        out[name] = {
            "packets": arrivals,
            "drops": len(drops),
            "loss_events": events,
            "loss_event_rate": p,
            "queue_delay_ms": float(departed["qdelay_ns"].mean() / 1e6) if len(departed) else None,
            "throughput_bps": bps,
            "equation_bps": equation,
            "throughput_over_equation": bps / equation if equation > 0 else None,
        }
    return out


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        print(json.dumps(analyze(Path(arg))), flush=True)
