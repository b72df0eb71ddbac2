"""One seed of a scenario in both simulators, reduced to per-class loss and throughput figures.

Used by the rhee2005 ns-2 experiments (``tfrclab.reproduce.rhee2005_ns2``): for each named flow
class (a ``[[flows]]`` table's ``name``, ``count`` expanded) the packet loss rate, the loss event
rate (loss events per packet sent, Rhee & Xu 2005 §2) and the mean throughput per flow, over a
window, counted the same way in both (:mod:`tfrclab.ns2.loss_events`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from tfrclab.ns2.crosscheck import run_ns2
from tfrclab.ns2.export import export_tcl
from tfrclab.ns2.loss_events import FlowLoss, netsim_losses, ns2_losses, tcp_counters
from tfrclab.ns2.output import read_output
from tfrclab.ns2.plan import resolve
from tfrclab.result import Result
from tfrclab.scenario import Scenario
from tfrclab.simulate import run

__all__ = ["ClassLoss", "class_of", "run_classes"]


@dataclass(frozen=True)
class ClassLoss:
    """A flow class's figures over the window (means over its flows; rates pooled)."""

    packet_loss_rate: float
    """Drops over packets sent, the class's flows pooled."""
    loss_event_rate: float
    """Loss events over packets sent, pooled."""
    throughput_bps: float
    """Mean received bits per second per flow."""
    loss_event_rate_run: float = math.nan
    """Loss events over packets sent over the whole run (warm-up included), pooled."""
    timeouts_per_flow: float = math.nan
    """ns-2 only, long-lived TCP: retransmission timeouts per flow over the whole run."""
    indication_rate_run: float = math.nan
    """Long-lived TCP only: loss indications (fast retransmits and timeouts; ns-2's
    ``ncwndcuts_``) over data packets sent, over the whole run: p_tcp as rhee2005 §2 measures it
    after Padhye et al., to set beside ``loss_event_rate_run``."""

    def as_dict(self) -> dict[str, float]:
        """A JSON-ready dict."""
        return {
            "packet_loss_rate": self.packet_loss_rate,
            "loss_event_rate": self.loss_event_rate,
            "throughput_bps": self.throughput_bps,
            "loss_event_rate_run": self.loss_event_rate_run,
            "timeouts_per_flow": self.timeouts_per_flow,
            "indication_rate_run": self.indication_rate_run,
        }


def class_of(name: str) -> str:
    """A flow's class: its name without the index ``count`` appends (``tfrc3`` -> ``tfrc``)."""
    return re.sub(r"\d+$", "", name)


def _pool(losses: Sequence[FlowLoss], whole: Sequence[FlowLoss], window_s: float) -> ClassLoss:
    sent = sum(x.sent_packets for x in losses)
    drops = sum(x.dropped_packets for x in losses)
    events = sum(x.loss_events for x in losses)
    bits = sum(x.received_bytes for x in losses) * 8.0
    sent_run = sum(x.sent_packets for x in whole)
    return ClassLoss(
        packet_loss_rate=drops / sent if sent else math.nan,
        loss_event_rate=events / sent if sent else math.nan,
        throughput_bps=bits / window_s / max(1, len(losses)),
        loss_event_rate_run=sum(x.loss_events for x in whole) / sent_run if sent_run else math.nan,
    )


def _netsim_indications(result: Result, rows: Sequence[int]) -> float:
    """TCP flows' loss indications (fast retransmits and timeouts) per packet sent, whole run.

    From the end of netsim's state traces, as ns-2's ``ncwndcuts_`` over ``ndatapack_``.
    """
    cuts = sent = 0.0
    for i in rows:
        fields, values = result.states[i]
        last = {name: float(values[k, -1]) for k, name in enumerate(fields)}
        cuts += last["fast_retransmits"] + last["timeouts"]
        sent += last["packets_sent"]
    return cuts / sent if sent else math.nan


def run_classes(
    scenario: Scenario, seed: int, classes: Sequence[str], start_s: float, end_s: float
) -> tuple[dict[str, ClassLoss], dict[str, ClassLoss]]:
    """Run ``scenario`` for ``seed`` in netsim and in ns-2.35 and reduce ``classes``.

    Returns (netsim, ns-2), each class name -> :class:`ClassLoss` over ``[start_s, end_s)``.

    Raises:
        NsNotFound: if ``ns`` is not on PATH.
        ExportError: if the scenario cannot be exported.
    """
    plan = resolve(scenario, seed)
    script = export_tcl(plan, 1.0, drop_trace=True)
    members: dict[str, list[int]] = {c: [] for c in classes}
    for flow in plan.flows:
        c = class_of(flow.name)
        if c in members:
            members[c].append(flow.index)
    wanted = [i for rows in members.values() for i in rows]
    end = plan.duration_s
    result = run(scenario, seed=seed)
    mine = netsim_losses(result, wanted, start_s, end_s)
    mine_run = netsim_losses(result, wanted, 0.0, end)
    text = run_ns2(script, timeout_s=1200.0)
    series = read_output(text, plan)
    theirs = ns2_losses(plan, text, series, wanted, start_s, end_s)
    theirs_run = ns2_losses(plan, text, series, wanted, 0.0, end)
    counters: Mapping[int, tuple[int, int, int, int]] = tcp_counters(text)
    window = end_s - start_s
    out_mine: dict[str, ClassLoss] = {}
    for c, rows in members.items():
        pooled = _pool([mine[i] for i in rows], [mine_run[i] for i in rows], window)
        if all(plan.flows[i].kind == "tcp" for i in rows):
            pooled = replace(pooled, indication_rate_run=_netsim_indications(result, rows))
        out_mine[c] = pooled
    out_theirs: dict[str, ClassLoss] = {}
    for c, rows in members.items():
        pooled = _pool([theirs[i] for i in rows], [theirs_run[i] for i in rows], window)
        tcp = [counters[i] for i in rows if i in counters]
        if tcp:
            data = sum(x[0] for x in tcp)
            pooled = replace(
                pooled,
                timeouts_per_flow=sum(x[2] for x in tcp) / len(tcp),
                indication_rate_run=sum(x[3] for x in tcp) / data if data else math.nan,
            )
        out_theirs[c] = pooled
    return out_mine, out_theirs
