"""Per-flow losses and loss events in both simulators, counted by one rule (Rhee & Xu 2005 §2).

netsim's flow monitor groups a flow's drops into loss events: a drop opens a new event when its
packet was sent more than the flow's ``loss_event_rtt`` after the packet that opened the current
event (RFC 5348 §5.2; ``crates/netsim/src/monitor/flow.rs``). ns-2 has no such monitor, so the
exported script prints every drop at the primary link, its queue's and its loss models'
(``export_tcl(drop_trace=True)``: ns-2's ``d`` trace lines), and :func:`group_events` applies
the same rule to them here. A packet dropped at the bottleneck was sent its first-hop delay
earlier (serialization and propagation on the access link: a constant per flow, as that link
never queues in these scenarios), so grouping by drop time groups exactly as by send time. Only
drops at the primary link are seen on the ns-2 side; netsim counts drops on every link (the same
in the dumbbells here, whose access links never drop).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from tfrclab.ns2.output import Series
from tfrclab.ns2.plan import Plan
from tfrclab.result import Result

__all__ = [
    "FlowLoss",
    "drops_by_flow",
    "group_events",
    "netsim_losses",
    "ns2_losses",
    "tcp_counters",
]


@dataclass(frozen=True)
class FlowLoss:
    """One flow's packets and losses over a measurement window."""

    sent_packets: float
    dropped_packets: float
    loss_events: float
    received_bytes: float

    @property
    def packet_loss_rate(self) -> float:
        """Drops per packet sent (NaN when none was sent)."""
        return self.dropped_packets / self.sent_packets if self.sent_packets else math.nan

    @property
    def loss_event_rate(self) -> float:
        """Loss events per packet sent (Rhee & Xu 2005 §2; NaN when none was sent)."""
        return self.loss_events / self.sent_packets if self.sent_packets else math.nan


def drops_by_flow(text: str, flows: Iterable[int]) -> dict[int, list[float]]:
    """The drop times of each of ``flows`` from ns-2's ``d`` trace lines (trace/trace.cc).

    A line is ``d <time> <from> <to> <type> <size> <flags> <fid> <src> <dst> <seq> <uid>``;
    ACKs (type ``ack``) are left out: the loss events are of data packets.
    """
    wanted = set(flows)
    out: dict[int, list[float]] = {fid: [] for fid in wanted}
    for line in text.splitlines():
        if not line.startswith("d "):
            continue
        parts = line.split()
        if len(parts) < 12 or parts[4] == "ack":
            continue
        fid = int(parts[7])
        if fid in wanted:
            out[fid].append(float(parts[1]))
    for times in out.values():
        times.sort()
    return out


def group_events(times: Sequence[float], rtt_s: float) -> list[float]:
    """The times of the drops that open loss events (netsim's rule, module documentation).

    >>> group_events([1.0, 1.05, 1.2, 1.25, 3.0], 0.1)
    [1.0, 1.2, 3.0]
    """
    opened: list[float] = []
    first: float | None = None
    for t in times:
        if first is None or t > first + rtt_s:
            first = t
            opened.append(t)
    return opened


def _window(series: Series, start_s: float, end_s: float) -> slice:
    dt = series.sample_s
    return slice(max(0, round(start_s / dt)), min(series.samples, round(end_s / dt)))


def ns2_losses(
    plan: Plan, text: str, series: Series, flows: Sequence[int], start_s: float, end_s: float
) -> dict[int, FlowLoss]:
    """Each of ``flows``' losses in ``[start_s, end_s)`` from an ns-2 run with a drop trace.

    Events are grouped over the whole run (an event opened before the window absorbs the drops
    that follow it) and counted in the window by the time of their opening drop, as netsim
    bins them.
    """
    if series.sent_packets is None:
        raise ValueError("the series has no packet counts")
    drops = drops_by_flow(text, flows)
    part = _window(series, start_s, end_s)
    out: dict[int, FlowLoss] = {}
    for fid in flows:
        rtt = float(plan.flows[fid].loss_event_rtt_s)
        times = np.array(drops[fid])
        events = np.array(group_events(drops[fid], rtt))
        inside = ((times >= start_s) & (times < end_s)).sum()
        opened = ((events >= start_s) & (events < end_s)).sum() if events.size else 0
        out[fid] = FlowLoss(
            sent_packets=float(series.sent_packets[fid, part].sum()),
            dropped_packets=float(inside),
            loss_events=float(opened),
            received_bytes=float(series.received_bytes[fid, part].sum()),
        )
    return out


def netsim_losses(
    result: Result, flows: Sequence[int], start_s: float, end_s: float
) -> dict[int, FlowLoss]:
    """Each of ``flows``' losses in ``[start_s, end_s)`` from netsim's per-bin series."""
    bin_s = result.info.bin_s
    part = slice(round(start_s / bin_s), round(end_s / bin_s))
    fb = result.flow_bins
    return {
        fid: FlowLoss(
            sent_packets=float(fb["sent_packets"][fid, part].sum()),
            dropped_packets=float(fb["dropped_packets"][fid, part].sum()),
            loss_events=float(fb["loss_events"][fid, part].sum()),
            received_bytes=float(fb["received_bytes"][fid, part].sum()),
        )
        for fid in flows
    }


def tcp_counters(text: str) -> Mapping[int, tuple[int, int, int, int]]:
    """Each long-lived TCP agent's counters at the run's end (tcp/tcp.cc).

    ``(ndatapack_, nrexmitpack_, nrexmit_, ncwndcuts_)``: data packets sent, packets
    retransmitted, retransmission timeouts, and window cuts (``slowdown()`` calls, one per fast
    retransmit or timeout: TCP's loss indications, which rhee2005 §2 after Padhye et al. counts
    as TCP's loss events).
    """
    out: dict[int, tuple[int, int, int, int]] = {}
    for line in text.splitlines():
        if line.startswith("T "):
            k, data, rexmit, timeouts, cuts = (int(float(v)) for v in line.split()[1:6])
            out[k] = (data, rexmit, timeouts, cuts)
    return out
