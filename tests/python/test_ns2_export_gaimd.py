"""GAIMD exported as ns-2.35's own: a TCP agent with ``increase_num_`` and ``decrease_num_``.

Checked against ns-2.35 itself: under periodic loss (no randomness past the start) the two
simulators send the very same packets in every bin; under Bernoulli loss (each simulator's own
random numbers) the cross-check's metrics agree over eight seeds.
"""

from __future__ import annotations

import shutil
from typing import Any

import numpy as np
import pytest

from tfrclab.ns2 import ExportError, export_tcl, resolve
from tfrclab.ns2.crosscheck import crosscheck, run_ns2
from tfrclab.ns2.output import from_result, read_output
from tfrclab.scenario import Scenario
from tfrclab.simulate import run

needs_ns = pytest.mark.skipif(shutil.which("ns") is None, reason="ns-2 (`ns`) is not installed")


def _gaimd(loss: dict[str, Any], duration: str = "30s", **keys: Any) -> Scenario:
    """One GAIMD(0.31, 7/8) flow alone on yang2001's dumbbell behind a loss model of its own."""
    flow = {"kind": "gaimd", "name": "g", "alpha": 0.31, "beta": 0.875, "window": 1000, **keys}
    return Scenario.from_dict(
        {
            "duration": duration,
            "measure": {"from": "5s"},
            "monitor": {"bin": "100ms"},
            "topology": {
                "kind": "dumbbell",
                "hosts": 1,
                "bottleneck": {
                    "rate": "2.5Mbps",
                    "delay": "30ms",
                    "queue": {"kind": "droptail", "limit": 50},
                },
                "access": {"rate": "100Mbps", "delay": "10ms"},
            },
            "flows": [{**flow, "start": {"uniform": ["0s", "1s"]}}],
            "losses": [{"link": "bottleneck", "flow": "g", **loss}],
        }
    )


def test_gaimd_is_a_tcp_agent_with_its_increase_and_decrease() -> None:
    script = export_tcl(resolve(_gaimd({"kind": "periodic", "every": 100}), 1))
    assert "set src(0) [new Agent/TCP/Reno]" in script
    assert "$src(0) set increase_num_ 0.31\n" in script
    assert "$src(0) set decrease_num_ 0.875\n" in script
    # netsim's GAIMD runs on the ns2_2000 preset by default: ns-2's tick and RTO as of 2000.
    assert "$src(0) set tcpTick_ 0.1\n" in script
    assert "$src(0) set window_ 1000\n" in script
    sack = export_tcl(resolve(_gaimd({"kind": "periodic", "every": 100}, recovery="sack"), 1))
    assert "set src(0) [new Agent/TCP/Sack1]" in sack
    assert "[new Agent/TCPSink/Sack1]" in sack


def test_the_paper_rule_is_refused_by_its_key() -> None:
    with pytest.raises(ExportError, match=r"^flows\[0\]\.rule: 'paper' has no ns-2 equivalent"):
        export_tcl(resolve(_gaimd({"kind": "periodic", "every": 100}, rule="paper"), 1))
    with pytest.raises(ExportError, match=r"flows\[0\]\.recovery: 'sack' under preset 'rfc'"):
        export_tcl(resolve(_gaimd({"kind": "periodic", "every": 100}, recovery="sack",
                                  preset="rfc"), 1))  # fmt: skip


@needs_ns
def test_under_periodic_loss_both_send_the_same_packets_in_every_bin() -> None:
    scenario = _gaimd({"kind": "periodic", "every": 100})
    plan = resolve(scenario, 3)
    theirs = read_output(run_ns2(export_tcl(plan, 0.1)), plan)
    mine = from_result(run(scenario, seed=3), plan, 0.1)
    assert theirs.sent_packets is not None
    assert mine.sent_packets is not None
    assert theirs.sent_packets.sum() > 1000
    np.testing.assert_array_equal(theirs.sent_packets, mine.sent_packets)


@needs_ns
def test_under_bernoulli_loss_the_crosscheck_agrees() -> None:
    # 8 seeds of 30 s at 1% loss: throughput, drop rate, queue and 1 s CoV, Welch's t over the
    # seeds (tfrclab crosscheck's verdict, tolerance 5% of the larger mean).
    comparisons, runs = crosscheck(
        _gaimd({"kind": "bernoulli", "p": 0.01}), list(range(1, 9)), tolerance=0.05
    )
    assert len(runs) == 8
    verdicts = {c.metric: c.verdict for c in comparisons}
    assert set(verdicts) >= {"throughput/gaimd", "drop_rate", "cov_1s/gaimd"}
    assert set(verdicts.values()) == {"agree"}
