"""The ns-2 export at scale: routes searched once per core node, not per flow and direction."""

from __future__ import annotations

import time
from collections import deque

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import REPO_ROOT
from tfrclab.ns2 import ExportError, export_tcl, resolve
from tfrclab.ns2.plan import LinkPlan, Route, _routes
from tfrclab.scenario import Scenario


def _plain_search(links: list[LinkPlan], src: str, dst: str) -> Route | None:
    """The search the exporter used to run per flow (every link scanned per node): the reference."""
    dist: dict[str, int] = {src: 0}
    ways: dict[str, int] = {src: 1}
    via: dict[str, int] = {}
    queue = deque([src])
    while queue:
        node = queue.popleft()
        for link in links:
            if link.src != node:
                continue
            if link.dst not in dist:
                dist[link.dst] = dist[node] + 1
                ways[link.dst] = ways[node]
                via[link.dst] = link.index
                queue.append(link.dst)
            elif dist[link.dst] == dist[node] + 1:
                ways[link.dst] += ways[node]
    if dst not in dist:
        return None
    path: list[int] = []
    node = dst
    while node != src:
        path.append(via[node])
        node = links[via[node]].src
    return tuple(reversed(path)), ways[dst]


@st.composite
def _networks(draw: st.DrawFn) -> list[LinkPlan]:
    """Small networks in a random link order: routers joined at random and hosts on access links.

    The routers' links make ties, one-way links and parallel links; the hosts are stubs.
    """
    routers = draw(st.integers(1, 6))
    pairs = st.tuples(st.integers(0, routers - 1), st.integers(0, routers - 1))
    core = [(f"r{a}", f"r{b}") for a, b in draw(st.lists(pairs, max_size=12)) if a != b]
    hosts = draw(st.lists(st.integers(0, routers - 1), max_size=5))
    access = [(f"h{i}", f"r{r}") for i, r in enumerate(hosts)]
    access += [(b, a) for a, b in access]
    # A one-way host now and then: not a stub, searched as any node.
    ends = draw(st.permutations(core + access + draw(st.sampled_from([[], [("r0", "h9")]]))))
    return [
        LinkPlan(i, f"{a}->{b}#{i}", a, b, 1_000_000, 0.001, None, "", False)
        for i, (a, b) in enumerate(ends)
    ]


@given(_networks())
def test_routes_match_the_plain_search(links: list[LinkPlan]) -> None:
    nodes = sorted({node for link in links for node in (link.src, link.dst)} | {"lonely"})
    pairs = [(a, b) for a in nodes for b in nodes]
    routes = _routes(links, pairs)
    assert routes == {(a, b): _plain_search(links, a, b) for a, b in pairs}


def test_parking_lot_routes_cross_the_hops_in_order() -> None:
    scenario = Scenario.load(REPO_ROOT / "scenarios" / "crosscheck" / "parking-lot-cbr.toml")
    plan = resolve(scenario, 1)

    def names(links: tuple[int, ...]) -> list[str]:
        return [plan.links[i].name for i in links]

    long_tcp = plan.flows[0]
    assert names(long_tcp.data_links) == [
        "long_src->router0", "hop0", "hop1", "hop2", "router3->long_dst",
    ]  # fmt: skip
    assert names(long_tcp.reply_links) == [
        "long_dst->router3", "hop2_reverse", "hop1_reverse", "hop0_reverse", "router0->long_src",
    ]  # fmt: skip
    for i, cross in enumerate(plan.flows[2:]):
        assert names(cross.data_links) == [
            f"cross_src{i}->router{i}", f"hop{i}", f"router{i + 1}->cross_dst{i}",
        ]  # fmt: skip
        assert cross.reply_links == ()  # CBR: the sink sends nothing
    assert [f.index for f in plan.flows_crossing(plan.primary_link)] == [0, 1, 2]


def test_routing_ties_are_still_refused() -> None:
    link = {"rate": "10Mbps", "delay": "1ms"}
    square = Scenario.from_dict(
        {
            "duration": "1s",
            "topology": {
                "kind": "graph",
                "nodes": ["a", "b", "c", "d", "host"],
                "links": [
                    {"from": "a", "to": "b", **link},
                    {"from": "b", "to": "c", **link},
                    {"from": "a", "to": "d", **link},
                    {"from": "d", "to": "c", **link},
                    {"from": "host", "to": "a", **link},
                ],
            },
            "flows": [
                {"kind": "cbr", "rate": "1Mbps", "from": "host", "to": "b"},
                {"kind": "cbr", "rate": "1Mbps", "from": "host", "to": "c"},
            ],
        }
    )
    with pytest.raises(ExportError, match="flow 'cbr1' has several shortest paths"):
        resolve(square)


def _dumbbell(flows: int, hosts: int) -> Scenario:
    """bench_peers.py's scaling dumbbell: half SACK, half TFRC, RTTs 80-120 ms."""
    start = {"uniform": ["0s", "10s"]}
    sack = {"kind": "tcp", "variant": "sack", "preset": "ns2_2000", "window": 10000}
    return Scenario.from_dict(
        {
            "duration": "20s",
            "topology": {
                "kind": "dumbbell",
                "hosts": hosts,
                "bottleneck": {"rate": "1Gbps", "delay": "30ms"},
                "access": {"rate": "10Gbps", "rtt": {"uniform": ["80ms", "120ms"]}},
            },
            "flows": [
                {**sack, "count": flows // 2, "start": start},
                {"kind": "tfrc", "preset": "floyd2000", "count": flows // 2, "start": start},
            ],
        }
    )


def test_a_4096_flow_dumbbell_exports_in_seconds() -> None:
    # The route search this replaced scanned every link for every node of every path: 70 s
    # at 512 flows, cubic in the flows. Now about 2 s here (scripts/bench_export.py); the bound
    # is loose for slow and shared machines.
    flows, hosts = 4096, 2048
    started = time.perf_counter()
    plan = resolve(_dumbbell(flows, hosts))
    script = export_tcl(plan)
    elapsed = time.perf_counter() - started
    assert elapsed < 60, f"export took {elapsed:.1f} s"
    assert len(plan.flows) == flows
    assert len(plan.nodes) == 2 * hosts + 2
    assert script.count("[new Agent/TCP/Sack1]") == flows // 2
    assert script.count("[new Agent/TFRC]") == flows // 2
    for flow in (plan.flows[0], plan.flows[hosts + 7], plan.flows[-1]):
        pair = flow.index % hosts
        assert [plan.links[i].name for i in flow.data_links] == [
            f"left{pair}->router_left", "bottleneck", f"router_right->right{pair}",
        ]  # fmt: skip
        assert [plan.links[i].name for i in flow.reply_links] == [
            f"right{pair}->router_right", "bottleneck_reverse", f"router_left->left{pair}",
        ]  # fmt: skip
