"""Per-pair RTT lists on the dumbbell, through the run, the fluid model, the ns-2 export and ns-2.

``topology.access.rtt = ["20ms", "200ms"]`` gives host pair i the i-th RTT; each tool that
reads a dumbbell must keep it: the per-flow ``base_rtt_s``, the fluid model's flows, the
exported script's access links (and ns-2's own pings), and the twin's refusal.
"""

from __future__ import annotations

import re
import shutil
from typing import Any

import pytest

from tfrclab.fluid.result import model_from_scenario
from tfrclab.ns2 import export_tcl, resolve
from tfrclab.ns2.crosscheck import run_ns2
from tfrclab.scenario import Scenario, ScenarioError
from tfrclab.simulate import run
from tfrclab.twin import TwinError, plan

needs_ns = pytest.mark.skipif(shutil.which("ns") is None, reason="ns-2 (`ns`) is not installed")
RTTS = ("20ms", "200ms")


def _scenario(flows: list[dict[str, Any]], rtt: Any = RTTS, hosts: int = 2) -> Scenario:
    return Scenario.from_dict(
        {
            "duration": "2s",
            "monitor": {"bin": "100ms"},
            "topology": {
                "kind": "dumbbell",
                "hosts": hosts,
                "bottleneck": {"rate": "10Mbps", "delay": "5ms"},
                "access": {"rtt": list(rtt) if isinstance(rtt, tuple) else rtt},
            },
            "flows": flows,
        }
    )


def _tcp() -> Scenario:
    return _scenario([{"kind": "tcp", "variant": "reno", "count": 2}])


def test_each_flow_reports_its_pairs_rtt() -> None:
    flows = run(_tcp(), seed=1).flows
    rtts = flows["base_rtt_s"].to_numpy()
    # Propagation 20 ms and 200 ms; transmission times on the way are the same for both pairs.
    assert rtts[1] - rtts[0] == pytest.approx(0.18, abs=1e-8)
    assert 0.02 <= rtts[0] < 0.022
    assert list(flows["from"]) == ["left0", "left1"]


def test_the_fluid_model_keeps_each_pairs_rtt() -> None:
    model = model_from_scenario(_tcp(), seed=1)
    rtts = [flow.rtt_s for flow in model.flows]
    assert rtts[1] - rtts[0] == pytest.approx(0.18, abs=1e-8)
    assert 0.02 <= rtts[0] < 0.022


def test_the_ns2_export_gives_each_pair_its_rtt() -> None:
    resolved = resolve(_tcp(), 1)
    script = export_tcl(resolved)
    delays = {
        m.group(1): float(m.group(2))
        for m in re.finditer(r"simplex-link \$n\((\d+)\) \S+ \d+ (\S+) ", script)
    }
    assert delays
    access = {link.name: link.delay_s for link in resolved.links}
    # Pair i's four access links each carry (RTT - 10 ms) / 4.
    assert access["left0->router_left"] == pytest.approx(0.0025, abs=1e-12)
    assert access["router_right->right1"] == pytest.approx(0.0475, abs=1e-12)
    written = [float(m) for m in re.findall(r"simplex-link \S+ \S+ \d+ (\S+) ", script)]
    assert written == pytest.approx([link.delay_s for link in resolved.links], abs=1e-12)


def test_a_list_that_does_not_fit_is_refused_naming_the_key() -> None:
    with pytest.raises(ScenarioError, match=re.escape("topology.access.rtt: expected one RTT")):
        run(_scenario([{"kind": "cbr", "rate": "1Mbps", "count": 3}], hosts=3), seed=1)


def test_the_twin_refuses_a_list_naming_the_key() -> None:
    with pytest.raises(TwinError, match=re.escape("topology.access.rtt")):
        plan(_tcp())


@needs_ns
def test_ns2_pings_see_each_pairs_rtt() -> None:
    """ns-2's own Agent/Ping measures each pair's RTT as netsim's ping does (idle path)."""
    scenario = _scenario([{"kind": "ping", "interval": "100ms", "count": 2}])
    resolved = resolve(scenario, 1)
    output = run_ns2(export_tcl(resolved))
    last: dict[int, tuple[int, float]] = {}
    for line in output.splitlines():
        parts = line.split()
        if parts and parts[0] == "P":
            last[int(parts[2])] = (int(parts[4]), float(parts[5]))
    # ns-2's Agent/Ping hands its RTT to Tcl in milliseconds with one decimal ("%3.1f").
    ns2 = [last[k][1] / last[k][0] / 1e3 for k in sorted(last)]
    # On an idle path netsim's ping measures exactly the flow's base RTT (docs/scenario.md).
    netsim = list(run(scenario, seed=1).flows["base_rtt_s"])
    assert len(ns2) == 2
    assert ns2 == pytest.approx(netsim, abs=5e-5)
    assert ns2[1] - ns2[0] == pytest.approx(0.18, abs=1e-4)
