"""RAP exported as ns-2.35's ``Agent/RAP`` (rap/rap.cc), checked against ns-2.35 itself.

netsim's RAP is a port of rap.cc (docs/rap.md): one coarse-grain flow alone sends the very same
packets as ns-2 (the cumulative counts never more than one packet apart: a packet sent at a
bin's edge is counted on either side of it); fine grain ends within a packet of ns-2's total.
Several flows run as ns-2 only when they share ns-2's first-sample flag (``ns2_exact``); four
of them with a send-gap dither agree with ns-2 in the cross-check over six seeds.
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


def _dumbbell(flows: list[dict[str, Any]], hosts: int = 1, duration: str = "60s") -> Scenario:
    """docs/rap.md's fine-grain test link: 1 Mb/s, 20 ms, 50 packets of DropTail."""
    return Scenario.from_dict(
        {
            "duration": duration,
            "measure": {"from": "10s"},
            "monitor": {"bin": "100ms"},
            "topology": {
                "kind": "dumbbell",
                "hosts": hosts,
                "bottleneck": {
                    "rate": "1Mbps",
                    "delay": "20ms",
                    "queue": {"kind": "droptail", "limit": 50},
                },
                "access": {"rate": "100Mbps", "delay": "5ms"},
            },
            "flows": flows,
        }
    )


def test_every_knob_is_written_on_both_agents() -> None:
    flow = {"kind": "rap", "preset": "hassan", "fine_grain": True, "overhead": "5ms"}
    script = export_tcl(resolve(_dumbbell([flow]), 1))
    for agent in ("src", "snk"):
        assert f"set {agent}(0) [new Agent/RAP]" in script
        assert f"${agent}(0) set packetSize_ 100\n" in script
        assert f"${agent}(0) set rap_base_hdr_size_ 40\n" in script
        assert f"${agent}(0) set useFineGrain_ 1\n" in script
        assert f"${agent}(0) set overhead_ 0.005\n" in script
        assert f"${agent}(0) set dpthresh_ 50\n" in script
    assert '"$app(0) start"' in script
    counted = export_tcl(resolve(_dumbbell([{**flow, "max_packets": 300}]), 1))
    assert '"$app(0) advanceby 300"' in counted


def test_several_flows_need_ns2s_shared_first_sample() -> None:
    flows = [
        {"kind": "rap", "preset": "hassan", "count": 2},
        {"kind": "rap", "preset": "ns2_exact"},
    ]
    with pytest.raises(ExportError) as caught:
        export_tcl(resolve(_dumbbell(flows, hosts=3), 1))
    assert [r.split(":")[0] for r in caught.value.refusals] == ["flows[0].preset ('hassan')"]
    written = [{**flows[0], "shared_first_sample": False}, flows[1]]
    with pytest.raises(ExportError, match=r"^flows\[0\]\.shared_first_sample: no shared"):
        export_tcl(resolve(_dumbbell(written, hosts=3), 1))
    shared = [{**flows[0], "shared_first_sample": True}, flows[1]]
    assert "Agent/RAP" in export_tcl(resolve(_dumbbell(shared, hosts=3), 1))


@needs_ns
@pytest.mark.parametrize("fine", [False, True])
def test_one_flow_sends_what_ns2_sends(fine: bool) -> None:
    scenario = _dumbbell([{"kind": "rap", "name": "r", "fine_grain": fine, "start": "0.5s"}])
    plan = resolve(scenario, 1)
    theirs = read_output(run_ns2(export_tcl(plan, 0.1)), plan).sent_packets
    mine = from_result(run(scenario, seed=1), plan, 0.1).sent_packets
    assert theirs is not None
    assert mine is not None
    assert mine.sum() > 10_000
    assert abs(theirs.sum() - mine.sum()) <= 1
    if not fine:
        assert np.abs(np.cumsum(theirs) - np.cumsum(mine)).max() <= 1


@needs_ns
def test_four_dithered_flows_agree_in_the_crosscheck() -> None:
    flow = {
        "kind": "rap",
        "preset": "ns2_exact",
        "count": 4,
        "overhead": "5ms",
        "start": {"uniform": ["0s", "5s"]},
    }
    comparisons, _ = crosscheck(_dumbbell([flow], hosts=4), list(range(1, 7)), tolerance=0.05)
    assert {c.verdict for c in comparisons} == {"agree"}
