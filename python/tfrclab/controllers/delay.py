"""A simple delay-based congestion controller in Python (docs/controllers.md).

Vegas's idea reduced to a few lines: the queue a flow keeps at the bottleneck is estimated
from the RTT samples as ``cwnd * (1 - base_rtt / rtt)`` packets (base_rtt the least RTT seen);
per ACK the window grows by 1/cwnd while that estimate is below ``alpha`` and shrinks by 1/cwnd
above ``beta``, so it settles with alpha to beta packets queued instead of filling the buffer.
Slow start doubles per RTT until the estimate passes ``alpha``; a loss halves the window, a
timeout restarts from one packet.
"""

from __future__ import annotations

from typing import Any

__all__ = ["DelayBased"]


class DelayBased:
    """Keep between ``alpha`` and ``beta`` packets queued at the bottleneck."""

    alpha: float = 2.0
    """Grow while fewer packets than this are estimated queued."""
    beta: float = 4.0
    """Shrink while more than this are."""

    def __init__(self) -> None:
        """No RTT seen yet."""
        self.base_rtt = float("inf")
        self.queued = 0.0

    def pkts_acked(self, state: Any, ack: Any) -> None:
        """Update the least RTT and the queue estimate from the ACK's RTT sample."""
        if ack.rtt is not None and ack.rtt > 0.0:
            self.base_rtt = min(self.base_rtt, ack.rtt)
            self.queued = state.cwnd * (1.0 - self.base_rtt / ack.rtt)

    def cong_avoid(self, state: Any, ack: Any) -> tuple[float, float]:
        """Slow start below ssthresh (left once the queue passes alpha), else +-1/cwnd."""
        cwnd, ssthresh = state.cwnd, state.ssthresh
        if cwnd < ssthresh:
            if self.queued > self.alpha:
                return cwnd, max(cwnd, 2.0)
            return cwnd + ack.acked, ssthresh
        if self.queued < self.alpha:
            cwnd += ack.acked / cwnd
        elif self.queued > self.beta:
            cwnd = max(cwnd - ack.acked / cwnd, 2.0)
        return cwnd, ssthresh

    def ssthresh(self, state: Any, reduction: str) -> tuple[float, float]:
        """Halve on a loss or an ECN mark; one packet after a timeout or an idle restart."""
        half = max(state.win / 2.0, 2.0)
        if reduction in ("recovery", "ecn"):
            return half, half
        if reduction == "restart":
            return 1.0, state.ssthresh
        return 1.0, half
