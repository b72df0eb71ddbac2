"""GAIMD(alpha, beta) as a Python congestion controller (docs/controllers.md).

Yang and Lam's general AIMD: alpha packets more per RTT in congestion avoidance, the window
multiplied by beta at each congestion signal. This is the built-in ``kind = "gaimd"`` agent's
window written against the controller interface, with ns-2's arithmetic (``opencwnd`` per ACK,
``slowdown`` on min(cwnd + inflation, window) in whole packets, as the ``ns2_2000`` preset
does with ``precision_reduce = false``), so that on the same path it gives the same results
(``tests/python/test_controllers.py``). Change ``alpha``, ``beta`` or ``rule`` in a subclass.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["Gaimd", "GaimdPaper"]


class Gaimd:
    """GAIMD(0.31, 7/8) with ns-2's decrease rule (yang2001's flows)."""

    alpha: float = 0.31
    """Packets added per RTT in congestion avoidance."""
    beta: float = 0.875
    """The window is multiplied by this at a congestion signal."""
    rule: str = "ns2"
    """``"ns2"``: the first decrease, decreases in slow start and ssthresh after a timeout
    halve (ns-2's ``slowdown()``); ``"paper"``: every reduction multiplies by beta."""
    whole_packets: bool = True
    """Reduce whole windows (ns-2's ``precisionReduce_`` off, as in the ``ns2_2000``
    preset); False reduces in floating point."""

    def cong_avoid(self, state: Any, ack: Any) -> tuple[float, float]:
        """+1 per ACK in slow start, +alpha/cwnd per ACK in congestion avoidance."""
        cwnd = state.cwnd
        cwnd = cwnd + 1.0 if cwnd < state.ssthresh else cwnd + self.alpha / cwnd
        return cwnd, state.ssthresh

    def ssthresh(self, state: Any, reduction: str) -> tuple[float, float]:
        """Cut to beta (or half, per the rule) on a loss or an ECN mark; else cwnd 1.

        A timeout, a restart or a go-back-N sets cwnd to 1.
        """
        if self.whole_packets:
            win = float(math.trunc(state.win))
            half = float(int(win) // 2)
            decreased = float(math.trunc(self.beta * win))
        else:
            win = state.win
            half = win / 2.0
            decreased = self.beta * win
        slow_start = state.cwnd < state.ssthresh
        quirks = self.rule == "ns2"
        ssthresh = state.ssthresh
        if reduction != "restart":
            halve = quirks and (state.first_reduction or slow_start or state.after_timeout)
            ssthresh = float(math.trunc(half if halve else decreased))
        if reduction in ("recovery", "ecn"):
            halve = (quirks and (state.first_reduction or slow_start)) or self.beta == 0.5
            cwnd = half if halve else decreased
        else:
            cwnd = 1.0
        return cwnd, max(ssthresh, 2.0)


class GaimdPaper(Gaimd):
    """GAIMD(0.31, 7/8) with yang2001's rule: every reduction multiplies by beta."""

    rule = "paper"
