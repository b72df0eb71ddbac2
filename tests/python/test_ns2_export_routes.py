"""Explicit routes exported as ns-2's Manual routing, on netsim's own paths.

With ``topology.routes`` the plan takes every flow's paths (both ways) from netsim itself (a
probe run's flow table) and the script installs them per node and destination, as both
simulators route. Checked against ns-2.35: the traffic crosses the same links in the same
numbers.
"""

from __future__ import annotations

import shutil
from typing import Any

import numpy as np
import pytest

from tfrclab.ns2 import export_tcl, resolve
from tfrclab.ns2.crosscheck import run_ns2
from tfrclab.ns2.output import from_result, read_output
from tfrclab.scenario import Scenario
from tfrclab.simulate import run

needs_ns = pytest.mark.skipif(shutil.which("ns") is None, reason="ns-2 (`ns`) is not installed")

LINK = {"rate": "10Mbps", "delay": "5ms"}


def _square(routes: list[dict[str, Any]]) -> Scenario:
    """A square a-b-c, a-d-c with a slow shortcut a->c; TCP src->dst and a CBR a->c."""
    return Scenario.from_dict(
        {
            "duration": "10s",
            "monitor": {"bin": "100ms", "links": ["a->b", "b->c", "a->d", "d->c", "c->b"]},
            "topology": {
                "kind": "graph",
                "nodes": ["a", "b", "c", "d", "src", "dst"],
                "links": [
                    {"from": "a", "to": "b", **LINK},
                    {"from": "b", "to": "c", **LINK},
                    {"from": "a", "to": "d", **LINK},
                    {"from": "d", "to": "c", **LINK},
                    {"from": "src", "to": "a", **LINK},
                    {"from": "c", "to": "dst", **LINK},
                    {"from": "a", "to": "c", "rate": "1Mbps", "delay": "5ms"},
                ],
                "routes": routes,
            },
            "flows": [
                {"kind": "tcp", "name": "t", "variant": "sack", "preset": "ns2_35",
                 "from": "src", "to": "dst"},
                {"kind": "cbr", "name": "x", "rate": "1Mbps", "from": "a", "to": "c"},
            ],
        }
    )  # fmt: skip


# The data around the square by d, the ACKs back by b: not the shortcut, which is shorter.
ROUTES = [{"path": ["src", "a", "d", "c", "dst"]}, {"path": ["dst", "c", "b", "a", "src"]}]


def test_the_plan_follows_netsims_routes_and_the_script_installs_them() -> None:
    plan = resolve(_square(ROUTES), 1)
    tcp = plan.flows[0]
    assert [plan.links[i].name for i in tcp.data_links] == ["src->a", "a->d", "d->c", "c->dst"]
    assert [plan.links[i].name for i in tcp.reply_links] == ["dst->c", "c->b", "b->a", "a->src"]
    script = export_tcl(plan)
    assert script.index("$ns rtproto Manual") < script.index("[$ns node]")
    d_c = next(link.index for link in plan.links if link.name == "d->c")
    c, dst = plan.nodes.index("c"), plan.nodes.index("dst")
    d = plan.nodes.index("d")
    assert f"[$n({d}) get-module Manual] add-route [$n({dst}) node-addr] [$lnk({d_c}) head]" in (
        script
    )
    assert f"get-module Manual] add-route [$n({c}) node-addr]" in script
    # Without routes, the static shortest-hop routing of both simulators (no Manual routes).
    assert "rtproto Manual" not in export_tcl(resolve(_square([]), 1))


@needs_ns
def test_ns2_sends_the_traffic_where_netsim_does() -> None:
    scenario = _square(ROUTES)
    plan = resolve(scenario, 1)
    theirs = read_output(run_ns2(export_tcl(plan, 0.1)), plan)
    mine = from_result(run(scenario, seed=1), plan, 0.1)
    for link in plan.links:
        if link.binned:
            ours, its = mine.links[link.index], theirs.links[link.index]
            assert its.departures.sum() == ours.departures.sum(), link.name
    names = {link.name: link.index for link in plan.links}
    assert mine.links[names["a->b"]].departures.sum() == 0
    assert mine.links[names["c->b"]].departures.sum() > 1000
    # One SACK flow alone on its path: the same bytes arrive.
    np.testing.assert_array_equal(theirs.received_bytes[0].sum(), mine.received_bytes[0].sum())
