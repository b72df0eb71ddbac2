"""The DCTCP example controller (tfrclab.controllers.dctcp, docs/controllers.md "Examples").

Its alpha follows RFC 8257 §3.3's update once per window of data; through a RED queue that
marks, its cuts are alpha/2 of the window, gentler than Reno's halving, and it keeps the link
busier than the same controller with alpha held at 1 (which halves on every mark).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, ClassVar

from test_controllers_ecn import PATH
from tfrclab import Scenario
from tfrclab.controllers.dctcp import Dctcp
from tfrclab.simulate import run


def ack(acked: int, ece: bool) -> SimpleNamespace:
    """An ACK sample of ``acked`` 1000-byte packets."""
    return SimpleNamespace(acked=acked, acked_bytes=1000 * acked, rtt=0.05, ece=ece)


def state(highest_ack: int, max_sent: int, cwnd: float = 10.0) -> SimpleNamespace:
    """The sender's state fields the controller reads."""
    return SimpleNamespace(
        highest_ack=highest_ack, max_sent=max_sent, cwnd=cwnd, ssthresh=64.0, win=cwnd
    )


def test_alpha_moves_a_sixteenth_towards_each_windows_marked_fraction() -> None:
    cc = Dctcp()
    # The first ACK ends the (empty) initial window: F = 1 (its one packet was marked).
    cc.pkts_acked(state(0, 9), ack(1, ece=True))
    assert cc.alpha == 1.0
    assert cc.window_end == 9
    # The next window: 9 packets, 3 of them acked with ECN-Echo; it ends at ACK 10 > 9.
    for seq, ece in [(3, True), (6, False), (9, False)]:
        cc.pkts_acked(state(seq, 15), ack(3, ece=ece))
    assert cc.alpha == 1.0
    cc.pkts_acked(state(10, 19), ack(1, ece=False))
    # F = 3 marked of 10 acked packets in the window.
    assert cc.alpha == (1 - 1 / 16) * 1.0 + (1 / 16) * 0.3
    assert cc.window_end == 19
    alpha = cc.alpha
    assert cc.ssthresh(state(10, 19, cwnd=40.0), "ecn") == (40.0 * (1 - alpha / 2),) * 2
    assert cc.ssthresh(state(10, 19, cwnd=40.0), "recovery") == (20.0, 20.0)
    assert cc.ssthresh(state(10, 19, cwnd=40.0), "timeout") == (1.0, 20.0)


class Recording(Dctcp):
    """Dctcp that records each mark's cut: (cwnd before, after, alpha)."""

    cuts: ClassVar[list[tuple[float, float, float]]] = []

    def ssthresh(self, state: Any, reduction: str) -> tuple[float, float]:
        """Record the cut of a mark."""
        window = super().ssthresh(state, reduction)
        if reduction == "ecn":
            Recording.cuts.append((state.cwnd, window[0], self.alpha))
        return window


class Halving(Dctcp):
    """Alpha held at 1: every mark halves the window, as Reno with ECN does."""

    g = 0.0


def throughput(controller: type) -> float:
    """The flow's throughput through the marking RED queue of ``PATH`` with ``controller``."""
    tables = Scenario.from_toml(PATH).to_dict()
    tables["flows"][0]["controller"] = controller
    result = run(Scenario.from_dict(tables))
    assert int(result.links["marks"].sum()) > 10
    return float(result.flows.loc[0, "throughput_bits_per_s"])


def test_through_a_marking_red_queue_dctcp_cuts_gently_and_keeps_the_link_busier() -> None:
    Recording.cuts.clear()
    dctcp = throughput(Recording)
    cuts = Recording.cuts
    assert len(cuts) > 20
    # After the first few windows the marked fraction is small, and so are the cuts.
    late = cuts[len(cuts) // 2 :]
    assert all(0.0 < alpha < 0.5 for _, _, alpha in late), late
    assert all(after > 0.75 * before for before, after, _ in late), late
    halving = throughput(Halving)
    assert dctcp > 1.05 * halving, (dctcp, halving)
    assert dctcp > 9e6
