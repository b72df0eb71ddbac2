"""ns-2.35's agent state, read back from a script exported with ``agent_state``.

:mod:`tfrclab.ns2.export.agent_state` has ns-2 print, for chosen flows, what its C++ agents
print of their own state, each print followed (a TFRC receiver's) or preceded (a TFRC
sender's) by a trace line naming the flow, and each TCP agent's RTT and RTO once per sample.
This module attributes every print to its flow and turns it into the per-sample state columns
netsim's state trace has (docs/scenario.md "Results"; TFRC's fields in docs/tfrc.md):

- a TFRC receiver's ``rx_inv_theta_hat_sum`` and ``rx_inv_theta_hat_samples``: 1/theta_hat (the
  loss event rate the receiver reports) summed at each new loss event, and the events counted.
  ns-2 prints the rate of every report, so a report follows a new loss event when its five most
  recent loss intervals have shifted since the flow's previous report (the newest closed
  interval moved down), or its open interval shrank; ``m`` shifts at once (several events
  handled by one report, which ns-2 does when it updates the history lazily, at the report)
  count its rate ``m`` times. ns-2 prints the rate to five decimals;
- a TFRC sender's ``rtt_s``, its RTT (``rtt_``, the EWMA of the samples the equation uses) as
  of the last report it received, from ``packetrate x size / rate``, the packet rate to two
  decimals;
- a TCP sender's ``rtt_sum`` and ``rtt_samples``: its smoothed RTT (``srtt_``) summed once per
  sample and the samples counted, so that their ratio over a window is the window's mean SRTT
  (netsim's are the raw samples'), its ``rto`` (the timeout its timer arms, with the backoff and
  the cap) and ``backoff``.

Each column's row of a sample holds the value at that sample's end, as netsim's state trace
does. Prints that cannot be attributed (a report line whose time is not its prints') are
counted, never guessed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from tfrclab.ns2.plan import Plan

__all__ = ["AgentState", "ReceiverReport", "new_events", "read_agent_state", "state_columns"]

_RECEIVER_SLACK_S = 1e-5
"""How far a receiver's print may lie from its report's trace line: it prints the time to five
decimals."""

_SENDER_SLACK_S = 0.006
"""How far a sender's print may lie from its report's trace line: it prints the time to two
decimals."""


@dataclass(frozen=True)
class ReceiverReport:
    """One report of a TFRC receiver, as ``printLoss_`` prints it."""

    time_s: float
    loss_event_rate: float
    """1/theta_hat: the inverse of the weighted mean loss interval (five decimals)."""
    intervals: tuple[int, ...]
    """The open interval and the four most recent closed ones, in packets (``sample[0..4]``)."""


@dataclass
class AgentState:
    """Every attributed print of one run, by flow index."""

    reports: dict[int, list[ReceiverReport]] = field(default_factory=dict)
    rtts: dict[int, list[tuple[float, float]]] = field(default_factory=dict)
    """Per TFRC sender: (time, RTT in s) at each report it received."""
    tcp: dict[int, list[tuple[int, float, float, float]]] = field(default_factory=dict)
    """Per TCP sender: (sample, SRTT s, RTO as armed s, backoff) once per sample."""
    unattributed: int = 0
    """Prints left out because no trace line named their flow."""
    malformed: int = 0
    """Lines shaped like a print or a trace line whose numbers do not read, left out."""


class _Reader:
    """Walks ns-2's output line by line, keeping the print that awaits its trace line."""

    def __init__(self, sizes: Mapping[int, float]) -> None:
        self.sizes = sizes
        self.state = AgentState()
        self.pending: tuple[float, float] | None = None  # a receiver's (time, 1/theta_hat)
        self.intervals: tuple[int, ...] | None = None  # ... and its loss intervals
        self.sender: tuple[int, float] | None = None  # the flow and time of a report received
        self.sender_rate: float | None = None

    def line(self, parts: list[str]) -> None:
        head = parts[0]
        if head == "time:" and len(parts) == 4:
            self.status(parts[2], float(parts[1]), float(parts[3]))
        elif head.endswith(":") and len(parts) == 12 and parts[1] == "sample":
            if self.pending is not None and self.intervals is None:
                self.intervals = tuple(int(parts[i]) for i in (3, 5, 7, 9, 11))
        elif head in ("+", "r") and len(parts) >= 5 and parts[4] == "tcpFriendCtl":
            flow = int(parts[2]) if parts[2] == parts[3] and parts[2].isdigit() else -1
            if flow in self.sizes:
                self.report(head, flow, float(parts[1]))
        elif head == "S" and len(parts) == 6 and int(parts[2]) in self.sizes:
            row = (int(parts[1]), float(parts[3]), float(parts[4]), float(parts[5]))
            self.state.tcp.setdefault(int(parts[2]), []).append(row)

    def status(self, what: str, printed_s: float, value: float) -> None:
        """A ``time: T <what> <value>`` print of a TFRC receiver or sender."""
        if what == "loss_rate:":
            if self.pending is not None:
                self.state.unattributed += 1
            self.pending, self.intervals = (printed_s, value), None
        elif what == "rate:" and self.sender is not None:
            self.sender_rate = value
        elif what == "packetrate:" and self.sender is not None:
            flow, received_s = self.sender
            rate = self.sender_rate
            if rate is None or abs(printed_s - received_s) > _SENDER_SLACK_S:
                self.state.unattributed += 1
            elif rate > 0.0:
                rtt = value * self.sizes[flow] / rate
                self.state.rtts.setdefault(flow, []).append((received_s, rtt))
            self.sender, self.sender_rate = None, None

    def report(self, event: str, flow: int, at: float) -> None:
        """A traced report of ``flow``: received by its sender (``r``) or sent (``+``)."""
        if event == "r":
            self.sender, self.sender_rate = (flow, at), None
            return
        if self.pending is None:
            return  # no print: the receiver has seen no loss yet
        printed_s, rate = self.pending
        if self.intervals is not None and abs(printed_s - at) <= _RECEIVER_SLACK_S:
            self.state.reports.setdefault(flow, []).append(ReceiverReport(at, rate, self.intervals))
        else:
            self.state.unattributed += 1
        self.pending, self.intervals = None, None


def read_agent_state(text: str, sizes: Mapping[int, float]) -> AgentState:
    """Attribute the agent prints of ns-2's output ``text`` to the flows of ``sizes``.

    ``sizes`` maps each traced flow's index to its data packet size in bytes (a TFRC sender
    prints its rate in bytes per second and its packets per RTT). A line shaped like a print
    or a trace line whose numbers do not read is left out and counted (``malformed``).
    """
    reader = _Reader(sizes)
    for line in text.splitlines():
        parts = line.split()
        if not parts:
            continue
        try:
            reader.line(parts)
        except ValueError:
            reader.state.malformed += 1
    return reader.state


def new_events(previous: ReceiverReport | None, report: ReceiverReport) -> int:
    """How many loss events started between a receiver's ``previous`` report and ``report``.

    A new event shifts the closed intervals down by one (the module documentation); the
    smallest shift that lines the two histories up is taken, and a history that changed
    otherwise, or an open interval that shrank with the history unchanged, counts one.
    """
    if previous is None:
        return 0
    old, new = previous.intervals, report.intervals
    if old[1:] == new[1:]:
        return 1 if new[0] < old[0] else 0
    for shift in range(1, len(old) - 1):
        if new[1 + shift :] == old[1 : len(old) - shift]:
            return shift
    return 1


def state_columns(
    state: AgentState, plan: Plan, samples: int, sample_s: float
) -> dict[str, NDArray[np.float64]]:
    """Per-sample state columns (flows x samples; NaN where a flow has none) from ``state``.

    Row ``j`` of a column holds the value at the end of sample ``j`` (time ``(j + 1) x
    sample_s``), as netsim's state trace; see the module documentation for each column.
    """
    flows = len(plan.flows)
    ends = (np.arange(samples) + 1) * sample_s
    nan = np.full((flows, samples), np.nan)
    out = {
        key: nan.copy()
        for key in (
            "rx_inv_theta_hat_sum",
            "rx_inv_theta_hat_samples",
            "rtt_s",
            "rtt_sum",
            "rtt_samples",
            "rto",
            "backoff",
        )
    }
    for flow, reports in state.reports.items():
        times, total, count = [], [], []
        running_sum, running_count = 0.0, 0
        previous: ReceiverReport | None = None
        for report in reports:
            events = new_events(previous, report)
            running_sum += events * report.loss_event_rate
            running_count += events
            times.append(report.time_s)
            total.append(running_sum)
            count.append(running_count)
            previous = report
        at = np.searchsorted(np.asarray(times), ends, side="right") - 1
        known = at >= 0
        out["rx_inv_theta_hat_sum"][flow] = np.where(known, np.asarray(total)[at], 0.0)
        out["rx_inv_theta_hat_samples"][flow] = np.where(known, np.asarray(count)[at], 0.0)
    for flow, rtts in state.rtts.items():
        times_s = np.asarray([t for t, _ in rtts])
        values = np.asarray([r for _, r in rtts])
        at = np.searchsorted(times_s, ends, side="right") - 1
        out["rtt_s"][flow] = np.where(at >= 0, values[np.maximum(at, 0)], np.nan)
    for flow, rows in state.tcp.items():
        srtt = np.full(samples, np.nan)
        rto = np.full(samples, np.nan)
        backoff = np.full(samples, np.nan)
        for sample, s, armed, b in rows:
            if 1 <= sample <= samples:
                srtt[sample - 1], rto[sample - 1], backoff[sample - 1] = s, armed, b
        seen = np.isfinite(srtt) & (srtt > 0)
        out["rtt_s"][flow] = np.where(seen, srtt, np.nan)
        out["rtt_sum"][flow] = np.cumsum(np.where(seen, srtt, 0.0))
        out["rtt_samples"][flow] = np.cumsum(seen.astype(float))
        out["rto"][flow] = rto
        out["backoff"][flow] = backoff
    return out
