"""DCTCP's sender written as a Python controller (docs/controllers.md, "Examples").

Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010, as RFC 8257 §3.3 specifies the
sender: it keeps ``alpha``, an estimate of the fraction of its data that routers mark,
updated once per window of data as ``alpha = (1 - g) alpha + g F`` (``g`` = 1/16, ``F`` the
fraction of the bytes acknowledged in that window that ACKs with ECN-Echo acknowledged), and
answers a mark by cutting the window by ``alpha / 2`` instead of half: ``cwnd = cwnd (1 -
alpha / 2)``, which is also the new ssthresh (as Linux's ``dctcp_ssthresh``, at least two
packets). Growth is Reno's; a loss halves the window as conventional TCP does (RFC 8257 §3.4),
a timeout restarts from one packet and a restart after idle from one packet keeping ssthresh.

Run it on a flow with ``ecn = true`` through a queue that marks (``ecn = true`` on a RED
queue). One deviation from DCTCP, netsim's, not this class's: netsim's receiver echoes as RFC
3168 says, ECN-Echo on every ACK from a mark until the sender's CWR, not DCTCP's receiver's
echo of each packet's own mark (RFC 8257 §3.2); so ``F`` counts a round trip's worth of ACKs
per mark and ``alpha`` runs high of the true marking fraction (docs/controllers.md, "ECN").
"""

from __future__ import annotations

from typing import Any

__all__ = ["Dctcp"]


class Dctcp:
    """DCTCP (RFC 8257): cut by ``alpha / 2`` on an ECN mark, ``alpha`` the marked fraction."""

    g: float = 1.0 / 16.0
    """The weight of a window's marked fraction in ``alpha`` (RFC 8257 §4.2 suggests 1/16)."""
    initial_alpha: float = 1.0
    """``alpha`` before any window was seen: 1, as RFC 8257 §3.3 and Linux start it, so the
    first marks cut as hard as Reno's."""

    def __init__(self) -> None:
        """No window observed yet."""
        self.alpha = self.initial_alpha
        self.bytes_acked = 0
        self.bytes_marked = 0
        self.window_end = -1

    def pkts_acked(self, state: Any, ack: Any) -> None:
        """Count acknowledged and marked bytes; at the end of a window of data update alpha.

        A window ends when the cumulative ACK passes ``window_end``, the highest sequence
        number sent when the last window ended (RFC 8257's ``DCTCP.WindowEnd`` = SND.NXT).
        """
        self.bytes_acked += ack.acked_bytes
        if ack.ece:
            self.bytes_marked += ack.acked_bytes
        if state.highest_ack > self.window_end:
            marked = self.bytes_marked / self.bytes_acked if self.bytes_acked else 0.0
            self.alpha = (1.0 - self.g) * self.alpha + self.g * marked
            self.bytes_acked = self.bytes_marked = 0
            self.window_end = state.max_sent

    def cong_avoid(self, state: Any, ack: Any) -> tuple[float, float]:
        """Reno's growth: one packet per packet acked in slow start, 1/cwnd after."""
        if state.cwnd < state.ssthresh:
            return state.cwnd + ack.acked, state.ssthresh
        return state.cwnd + ack.acked / state.cwnd, state.ssthresh

    def ssthresh(self, state: Any, reduction: str) -> tuple[float, float]:
        """``cwnd (1 - alpha/2)`` on a mark; Reno's halving on a loss; 1 packet otherwise."""
        if reduction == "ecn":
            cut = max(state.cwnd * (1.0 - self.alpha / 2.0), 2.0)
            return cut, cut
        half = max(state.win / 2.0, 2.0)
        if reduction == "recovery":
            return half, half
        if reduction == "restart":
            return 1.0, state.ssthresh
        return 1.0, half
