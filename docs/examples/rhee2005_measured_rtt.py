"""rhee2005: the uniform loss event count with each flow's *measured* RTT, from a packet trace.

``tfrclab reproduce rhee2005`` reports this count as ``ler_measured``, from the send times
the monitor logs for the measured flows (``monitor.drop_log``). This script cross-checks it
independently of that log, and adds what the log cannot give (TCP's uncut events): it makes
one short run of ``cbr-loads.toml`` with the per-packet trace on, finds each measured
flow's drops and the send time of each dropped packet, and groups them with
:func:`tfrclab.loss_events.grouped_loss_events` twice: with the base RTT and with the flow's
RTT samples (TCP's ``srtt``, TFRC's ``rtt_s``, every 100 ms). It prints, per type (mean of the
5 flows), the packet loss rate, both uniform counts and the protocol's own count, per packet
sent in the window; for TCP also the share of its uniform (base-RTT) loss events followed by
no window cut before the next one, and how long before each such event's first lost packet
was sent the previous cut came (median).

    PYTHONPATH=python python docs/examples/rhee2005_measured_rtt.py 100
    PYTHONPATH=python python docs/examples/rhee2005_measured_rtt.py 100 droptail

80 s simulated (20-80 s measured), about 4 million trace records (200 MB) at 100 flows.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from tfrclab.loss_events import (
    grouped_loss_events,
    tcp_loss_indication_rate,
    tfrc_receiver_p,
)
from tfrclab.reproduce.registry import scenario_path
from tfrclab.scenario import Scenario
from tfrclab.simulate import run

DURATION_S, FROM_S = 80.0, 20.0


def drop_send_times(sent: Any, drops: Any) -> np.ndarray:
    """Each drop's send time: the latest send of its sequence number before the drop."""
    by_seq: dict[int, list[float]] = {}
    for t, seq in zip(sent["time_s"].to_numpy(), sent["seq"].to_numpy(), strict=True):
        by_seq.setdefault(int(seq), []).append(float(t))
    times = [
        max(x for x in by_seq[int(seq)] if x <= t)
        for t, seq in zip(drops["time_s"].to_numpy(), drops["seq"].to_numpy(), strict=True)
    ]
    return np.sort(np.asarray(times, dtype=float))


def uncut_events(
    lost: np.ndarray, base_rtt_s: float, sample_times: np.ndarray, cuts: np.ndarray
) -> tuple[int, list[float]]:
    """TCP's uniform loss events followed by no window cut before the next event.

    ``cuts`` is the cumulative count of fast retransmits plus timeouts at ``sample_times``.
    Returns the number of events and, for each uncut one, the time from the last cut before
    its first lost packet was sent (infinite when there was none).
    """
    steps = np.diff(np.nan_to_num(cuts), prepend=0.0).astype(int)
    cut_times = np.repeat(sample_times, np.clip(steps, 0, None))
    starts = lost[grouped_loss_events(lost, base_rtt_s)]
    ends = np.append(starts[1:], np.inf)
    gaps = []
    for start, end in zip(starts, ends, strict=True):
        # A cut is recorded at the end of the 100 ms bin it falls in.
        if not np.any((cut_times > start) & (cut_times <= end + 0.1)):
            before = cut_times[cut_times <= start]
            gaps.append(float(start - before.max()) if before.size else float("inf"))
    return starts.size, gaps


def main(load: int, droptail: bool) -> None:
    """Run ``cbr-loads.toml`` at ``load`` background flows and print the counts per type."""
    changes: dict[str, Any] = {
        "flows.2.count": load,
        "duration": f"{DURATION_S:g}s",
        "measure.from": f"{FROM_S:g}s",
        "monitor.bin": "100ms",
        "monitor.packet_trace": 8_000_000,
    }
    if droptail:
        changes["topology.bottleneck.queue"] = {"kind": "droptail", "limit": 540}
    result = run(Scenario.load(scenario_path("rhee2005/cbr-loads.toml")).with_(**changes), seed=1)
    trace = result.packet_trace
    if trace is None or result.info.packet_trace_overflowed:
        raise SystemExit("the packet trace is missing or overflowed: raise monitor.packet_trace")
    window = result.summary().window
    lo, hi = window.first - 1, window.last
    forward = trace[~trace["reverse"]]
    sample_times = result.time_s + result.info.bin_s
    for kind in ("tcp", "tfrc"):
        rows = []
        events, gaps = 0, list[float]()
        for i in range(5):
            flow = result.flow_index(f"{kind}{i}")
            mine = forward[forward["flow"] == flow]
            sent = mine[mine["event"] == "sent"]
            drops = mine[mine["event"].astype(str).str.startswith("dropped")]
            lost = drop_send_times(sent, drops)
            lost = lost[lost >= FROM_S]
            packets = int(((sent["time_s"] >= FROM_S) & (sent["time_s"] < DURATION_S)).sum())
            fields, values = result._state_of(flow)
            state = {name: values[j] for j, name in enumerate(fields)}
            rtt = state["srtt"] if kind == "tcp" else state["rtt_s"]
            base = float(result.flows["base_rtt_s"].to_numpy()[flow])
            if kind == "tcp":
                cuts = np.nan_to_num(state["fast_retransmits"]) + np.nan_to_num(state["timeouts"])
                n_events, uncut = uncut_events(lost, base, sample_times, cuts)
                events, gaps = events + n_events, gaps + uncut
                own = tcp_loss_indication_rate(
                    state["fast_retransmits"][lo:hi],
                    state["timeouts"][lo:hi],
                    state["packets_sent"][lo:hi],
                )
            else:
                own = tfrc_receiver_p(
                    state["rx_p"][lo + 1 : hi],
                    state["rx_loss_events"][lo:hi],
                    state["packets_sent"][lo:hi],
                ).events_per_packet
            in_window = rtt[lo + 1 : hi]
            rows.append(
                (
                    lost.size / packets,
                    grouped_loss_events(lost, base).size / packets,
                    grouped_loss_events(lost, (sample_times, rtt)).size / packets,
                    own,
                    float(np.nanmean(in_window[in_window > 0])),
                )
            )
        plr, base_rate, measured_rate, own_rate, mean_rtt = np.mean(rows, axis=0)
        print(
            f"{kind:5s} packet loss {plr:.4f}  uniform (base RTT) {base_rate:.4f}  "
            f"uniform (measured RTT) {measured_rate:.4f}  own {own_rate:.4f}  "
            f"mean measured RTT {mean_rtt * 1e3:.0f} ms"
        )
        if kind == "tcp" and events:
            print(
                f"      uniform events with no window cut before the next: {len(gaps)} of "
                f"{events}; median time since the previous cut "
                f"{float(np.median(gaps)) if gaps else float('nan'):.2f} s"
            )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100, "droptail" in sys.argv[2:])
