"""Two TFRC knobs ns-2.35 has: the send-gap dither (``overhead_``) and n (``NumSamples_``).

netsim's ``dither_fraction`` d draws each gap times 1 + d(2U - 1), as ns-2's tfrc.cc does with
``overhead_``; ``loss_intervals`` n is the number of loss intervals averaged, ns-2's
``NumSamples_`` (tfrc-sink.cc's ``init_WALI``: the same weights, 1 for the newest n/2, then
falling linearly). Each is checked against ns-2.35 itself on short runs.
"""

from __future__ import annotations

import shutil
from typing import Any

import pytest

from tfrclab.ns2 import export_tcl, resolve
from tfrclab.ns2.crosscheck import crosscheck, run_ns2
from tfrclab.ns2.output import from_result, read_output
from tfrclab.scenario import Scenario
from tfrclab.simulate import run

needs_ns = pytest.mark.skipif(shutil.which("ns") is None, reason="ns-2 (`ns`) is not installed")


def _dumbbell(flow: dict[str, Any], hosts: int, duration: str, **extra: Any) -> Scenario:
    """yang2001's 2.5 Mb/s DropTail dumbbell with floyd2000 TFRC flows."""
    return Scenario.from_dict(
        {
            "duration": duration,
            "measure": {"from": "20s"},
            "monitor": {"bin": "100ms"},
            "topology": {
                "kind": "dumbbell",
                "hosts": hosts,
                "bottleneck": {
                    "rate": "2.5Mbps",
                    "delay": "30ms",
                    "queue": {"kind": "droptail", "limit": 50},
                },
                "access": {"rate": "100Mbps", "delay": "10ms"},
            },
            "flows": [{"kind": "tfrc", "name": "t", "preset": "floyd2000", **flow}],
            **extra,
        }
    )


def test_the_knobs_are_written() -> None:
    flow = {"dither_fraction": 0.1, "loss_intervals": 16}
    script = export_tcl(resolve(_dumbbell(flow, 1, "30s"), 1))
    assert "$src(0) set overhead_ 0.1\n" in script
    assert "$snk(0) set NumSamples_ 16\n" in script
    plain = export_tcl(resolve(_dumbbell({}, 1, "30s"), 1))
    assert "$src(0) set overhead_ 0\n" in plain
    assert "$snk(0) set NumSamples_ -1\n" in plain  # DEFAULT_NUMSAMPLES, 8


@needs_ns
def test_dithered_flows_sharing_a_link_agree() -> None:
    # yang2001's shared-link TFRC: 8 flows, dither 0.1; 6 seeds of 60 s.
    flow = {"dither_fraction": 0.1, "count": 8, "start": {"uniform": ["0s", "10s"]}}
    comparisons, _ = crosscheck(_dumbbell(flow, 8, "60s"), list(range(1, 7)), tolerance=0.05)
    assert {c.verdict for c in comparisons} == {"agree"}


@needs_ns
def test_more_loss_intervals_recover_faster_in_both() -> None:
    # One flow under periodic loss of 1% that steps to 5% at 30 s: the packets sent over the
    # 10 s after the step. More intervals averaged keep more of the old, lighter loss: n = 16
    # sends about a fifth more than n = 4, in ns-2.35 as in tfrclab, within 2% of each other.
    steps = [
        {"at": "0s", "kind": "periodic", "every": 100},
        {"at": "30s", "kind": "periodic", "every": 20},
    ]
    losses = [{"link": "bottleneck", "flow": "t", "kind": "schedule", "steps": steps}]
    sent = {}
    for n in (4, 16):
        scenario = _dumbbell({"loss_intervals": n, "start": "0.5s"}, 1, "40s", losses=losses)
        plan = resolve(scenario, 1)
        theirs = read_output(run_ns2(export_tcl(plan, 0.1)), plan).sent_packets
        mine = from_result(run(scenario, seed=1), plan, 0.1).sent_packets
        assert theirs is not None
        assert mine is not None
        sent[n] = (float(theirs[0, 300:400].sum()), float(mine[0, 300:400].sum()))
        assert sent[n][0] == pytest.approx(sent[n][1], rel=0.02)
    assert sent[16][0] > 1.1 * sent[4][0]
    assert sent[16][1] > 1.1 * sent[4][1]
