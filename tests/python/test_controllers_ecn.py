"""ECN for Python congestion controllers (docs/controllers.md, "ECN").

Through a marking RED queue, a DCTCP-style controller written in Python sees ACKs that carry
ECN-Echo (``ack.ece``) and the ``"ecn"`` reduction, and the window it returns is the sender's.
"""

from __future__ import annotations

from typing import Any, ClassVar

from tfrclab import Scenario
from tfrclab.simulate import run

PATH = """\
duration = "20s"
[monitor]
bin = "1s"
[topology]
kind = "dumbbell"
hosts = 1
bottleneck = { rate = "10Mbps", delay = "20ms", queue = { kind = "red", ecn = true, \
mean_packet_size = 1500 } }
[[flows]]
name = "f"
kind = "tcp"
variant = "sack"
preset = "linux"
ecn = true
"""


class DctcpLike:
    """DCTCP's window rule on the marked fraction of acked bytes (Alizadeh et al. 2010).

    Once per window of data, alpha moves 1/16 of the way to the fraction of bytes acked by
    ACKs with ECN-Echo; an ``"ecn"`` reduction cuts the window by alpha/2 instead of half.
    Every event is recorded on the class, for the test to read.
    """

    events: ClassVar[list[tuple[str, float, float]]] = []

    def __init__(self) -> None:
        """Start with alpha 1, as DCTCP does."""
        self.alpha = 1.0
        self.acked = 0
        self.marked = 0
        self.window_end = -1

    def pkts_acked(self, state: Any, ack: Any) -> None:
        """Count acked and marked bytes; update alpha at the end of each window."""
        DctcpLike.events.append(("ack_ece" if ack.ece else "ack", state.cwnd, 0.0))
        self.acked += ack.acked_bytes
        if ack.ece:
            self.marked += ack.acked_bytes
        if state.highest_ack >= self.window_end:
            self.alpha += (self.marked / max(self.acked, 1) - self.alpha) / 16.0
            self.acked = self.marked = 0
            self.window_end = state.max_sent

    def cong_avoid(self, state: Any, ack: Any) -> tuple[float, float]:
        """Reno's growth."""
        if state.cwnd < state.ssthresh:
            return state.cwnd + ack.acked, state.ssthresh
        return state.cwnd + ack.acked / state.cwnd, state.ssthresh

    def ssthresh(self, state: Any, reduction: str) -> tuple[float, float]:
        """Cut by alpha/2 on a mark, halve on a loss, one packet on a timeout."""
        if reduction == "ecn":
            cwnd = max(state.cwnd * (1.0 - self.alpha / 2.0), 2.0)
            DctcpLike.events.append(("ecn", state.cwnd, cwnd))
            return cwnd, cwnd
        DctcpLike.events.append((reduction, state.cwnd, 0.0))
        half = max(state.win / 2.0, 2.0)
        return (half if reduction == "recovery" else 1.0), half


def test_a_python_controller_sees_the_echo_and_its_ecn_window_applies() -> None:
    DctcpLike.events.clear()
    tables = Scenario.from_toml(PATH).to_dict()
    tables["flows"][0]["controller"] = DctcpLike
    result = run(Scenario.from_dict(tables))
    events = DctcpLike.events
    kinds = [kind for kind, _, _ in events]
    assert kinds.count("ack_ece") > 10
    assert kinds.count("ecn") > 5
    # The window the controller returned for a mark is the one the next ACK shows.
    after = [
        (events[i][2], events[i + 1][1])
        for i, (kind, _, _) in enumerate(events[:-1])
        if kind == "ecn" and events[i + 1][0].startswith("ack")
    ]
    assert after
    assert all(returned == seen for returned, seen in after), after[:5]
    # Marks, not drops, hold it back after slow start: no loss recovery then.
    first_ecn = kinds.index("ecn")
    assert "recovery" not in kinds[first_ecn + len(kinds) // 4 :]
    assert float(result.flows.loc[0, "throughput_bits_per_s"]) > 5e6


def test_without_ecn_the_controller_sees_no_echo() -> None:
    DctcpLike.events.clear()
    tables = Scenario.from_toml(PATH.replace("ecn = true\n", "ecn = false\n")).to_dict()
    tables["flows"][0]["controller"] = DctcpLike
    run(Scenario.from_dict(tables))
    kinds = {kind for kind, _, _ in DctcpLike.events}
    assert "ack_ece" not in kinds
    assert "ecn" not in kinds
