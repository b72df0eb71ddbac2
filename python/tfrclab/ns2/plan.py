"""A scenario resolved for one seed: the nodes, links, flows and loss models both simulators run.

netsim draws per-host delays, per-pair RTTs and per-flow start times from its own random
streams (docs/scenario.md, "Determinism"). To give ns-2 the same draws, :func:`resolve` builds
the scenario with the seed and a duration of 1 ns, and reads the drawn values back from the
result tables (``Result.links``: every simplex link's rate and delay; ``Result.flows``: every
flow's endpoints and start). Everything else comes from the scenario's own tables. What ns-2
cannot express raises :class:`ExportError`, which lists every such part of the scenario at once
(:class:`Refusals` collects them), each named by the keys the user wrote.
"""

from __future__ import annotations

import math
import re
from collections import deque
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from tfrclab.scenario import Scenario, expand_flows

__all__ = ["ExportError", "FlowPlan", "LinkPlan", "LossPlan", "Plan", "Refusals", "resolve"]


class ExportError(ValueError):
    """The parts of a scenario that ns-2.35 cannot run as tfrclab means them; the text names them.

    Each refusal is one line starting with the keys the user wrote (``flows[2].variant: ...``);
    several are joined into one message, so that a user fixes a scenario in one round.
    """

    def __init__(self, *refusals: str) -> None:
        self.refusals: tuple[str, ...] = tuple(dict.fromkeys(refusals))
        """Every refusal, once each, in the order found."""
        if len(self.refusals) == 1:
            text = self.refusals[0]
        else:
            text = f"ns-2.35 cannot run {len(self.refusals)} parts of the scenario: " + "; ".join(
                self.refusals
            )
        super().__init__(text)


class Refusals:
    """Collects the refusals of the parts of a scenario checked one after another.

    ``with refusals.part(): ...`` keeps going past an :class:`ExportError` raised inside, so
    that every part is checked; :meth:`raise_any` then raises them all in one error. A part
    repeated by ``count`` (the same keys, the same reason) is listed once.
    """

    def __init__(self, found: tuple[str, ...] = ()) -> None:
        self.found: list[str] = list(found)
        """The refusals so far, in the order found."""

    @contextmanager
    def part(self) -> Iterator[None]:
        """Check one part: an :class:`ExportError` inside is recorded, not raised."""
        try:
            yield
        except ExportError as err:
            self.found.extend(err.refusals)

    def refuse(self, text: str) -> None:
        """Record one refusal (``keys: reason``)."""
        self.found.append(text)

    def raise_any(self) -> None:
        """Raise every refusal recorded, in one :class:`ExportError`; nothing without one."""
        if self.found:
            raise ExportError(*self.found)


@dataclass(frozen=True)
class LinkPlan:
    """One simplex link with its drawn rate and delay and its queue table (None: the default)."""

    index: int
    name: str
    src: str
    dst: str
    rate_bps: int
    delay_s: float
    queue: Mapping[str, Any] | None
    queue_path: str
    binned: bool


@dataclass(frozen=True)
class FlowPlan:
    """One flow after ``count`` expansion: its table, endpoints, drawn start and paths."""

    index: int
    name: str
    kind: str
    table: Mapping[str, Any]
    path: str
    src: str
    dst: str
    start_s: float
    stop_s: float | None
    data_links: tuple[int, ...]
    reply_links: tuple[int, ...]
    """Links of the way back (ACKs, feedback); empty for flows whose sink sends nothing."""
    loss_event_rtt_s: float = math.nan
    """The RTT netsim groups the flow's losses into loss events with (its ``loss_event_rtt``)."""
    on_periods: tuple[tuple[float, float], ...] | None = None
    """With ``on_off``: the ON periods (start, end) netsim draws, the last one possibly past the
    stop or the run's end (``Simulation::on_off_schedules``); None without ``on_off``."""
    web: Mapping[str, tuple[str, tuple[float, ...]]] | None = None
    """A web session's random variables as netsim built them (``load``/``share`` resolved):
    ``inter_page``, ``objects_per_page``, ``inter_object``, ``object_size``, each as
    ``(kind, parameters)`` (``_native.web_variables``); a short-TCP flow's ``packets`` and
    ``interarrival``; None for other kinds."""


@dataclass(frozen=True)
class LossPlan:
    """One ``[[losses]]`` table on a link."""

    index: int
    link: int
    table: Mapping[str, Any]


@dataclass(frozen=True)
class Plan:
    """Everything an exporter needs: the scenario resolved for ``seed``."""

    scenario: Scenario
    seed: int
    duration_s: float
    bin_s: float
    nodes: tuple[str, ...]
    links: tuple[LinkPlan, ...]
    flows: tuple[FlowPlan, ...]
    losses: tuple[LossPlan, ...]
    primary_link: int
    """The link the cross-check's link metrics are taken on (the bottleneck, hop0, ...)."""
    topology_kind: str
    notes: list[str] = field(default_factory=list)
    refusals: tuple[str, ...] = ()
    """What :func:`resolve` found ns-2 cannot run as netsim does (routing), with ``strict``
    off: :func:`tfrclab.ns2.export.export_tcl` reports them with its own."""
    manual_routes: tuple[tuple[int, ...], ...] = ()
    """With ``topology.routes``: every path some packet takes (each flow's both ways), as link
    indices, netsim's own (read from a probe); the export installs them as ns-2 Manual routes.
    Empty otherwise (ns-2's static shortest-hop routing, as netsim's)."""

    def link_named(self, name: str) -> LinkPlan:
        """The link called ``name``."""
        for link in self.links:
            if link.name == name:
                return link
        raise ExportError(f"no link named {name!r}")

    def flows_crossing(self, link: int) -> list[FlowPlan]:
        """The flows whose data path crosses ``link``."""
        return [f for f in self.flows if link in f.data_links]

    @property
    def metric_links(self) -> list[tuple[str, int]]:
        """The links the cross-check takes link metrics on, with their metric-name suffixes.

        The primary link's metrics carry no suffix (``drop_rate``); on a parking lot every
        other hop's carry its name (``drop_rate/hop1``, ``drop_rate/hop2``, ...).
        """
        out = [("", self.primary_link)]
        if self.topology_kind == "parking_lot":
            hops = [link for link in self.links if re.fullmatch(r"hop\d+", link.name)]
            hops.sort(key=lambda link: int(link.name[3:]))
            out += [(f"/{link.name}", link.index) for link in hops
                    if link.index != self.primary_link]  # fmt: skip
        return out


_SILENT_SINKS = ("cbr", "pareto", "exponential", "web")
"""Flow kinds whose sink sends nothing back (ns-2 Agent/Null), and web, whose connections run
both ways inside the session (exported as its own WebTraf pool, not one source and sink)."""


def _queue_tables(topology: Mapping[str, Any], links: list[tuple[str, str, str]]) -> list[Any]:
    """The queue table (or None) and its path for each simplex link, by the topology's rules."""
    kind = topology["kind"]
    out: list[Any] = []
    if kind == "dumbbell":
        forward = topology["bottleneck"].get("queue")
        reverse_table = topology.get("bottleneck_reverse", {})
        reverse = reverse_table.get("queue", forward)
        reverse_path = (
            "topology.bottleneck_reverse.queue"
            if "queue" in reverse_table
            else "topology.bottleneck.queue"
        )
        access = topology.get("access", {}).get("queue")
        for name, _, _ in links:
            if name == "bottleneck":
                out.append((forward, "topology.bottleneck.queue"))
            elif name == "bottleneck_reverse":
                out.append((reverse, reverse_path))
            else:
                out.append((access, "topology.access.queue"))
    elif kind == "parking_lot":
        hop = topology["hop"].get("queue")
        access = topology.get("access", {}).get("queue")
        for name, _, _ in links:
            if name.startswith("hop"):
                out.append((hop, "topology.hop.queue"))
            else:
                out.append((access, "topology.access.queue"))
    else:
        by_name: dict[str, tuple[Any, str]] = {}
        for i, table in enumerate(topology.get("links", [])):
            forward_name = table.get("name", f"{table['from']}->{table['to']}")
            entry = (table.get("queue"), f"topology.links[{i}].queue")
            by_name[forward_name] = entry
            if table.get("duplex", True):
                by_name[
                    f"{table['name']}_reverse"
                    if "name" in table
                    else f"{table['to']}->{table['from']}"
                ] = entry
        for name, _, _ in links:
            out.append(by_name[name])
    return out


Route = tuple[tuple[int, ...], int]
"""A hop-count shortest path as link indices, and how many shortest paths there are."""


def _stubs(
    out: Mapping[str, list[LinkPlan]], into: Mapping[str, list[LinkPlan]]
) -> dict[str, tuple[LinkPlan, LinkPlan]]:
    """The stub nodes (a host on its access link) with their links up and down.

    A stub has one link out and one link in, both to and from the same neighbour, and that
    neighbour has other links out. No shortest path passes through a stub (it would visit the
    neighbour twice), so searches run on the other nodes and stubs are added at the ends.
    """
    stubs: dict[str, tuple[LinkPlan, LinkPlan]] = {}
    for node, ups in out.items():
        downs = into.get(node, [])
        if (
            len(ups) == 1
            and len(downs) == 1
            and ups[0].dst == downs[0].src
            and len(out[ups[0].dst]) > 1
        ):
            stubs[node] = (ups[0], downs[0])
    return stubs


def _search(out: Mapping[str, list[LinkPlan]], src: str) -> tuple[dict[str, int], dict[str, int]]:
    """Breadth-first search from ``src`` over the links ``out`` lists by node, in link order.

    Returns each reached node's count of shortest paths and the link it is first reached by.
    """
    dist: dict[str, int] = {src: 0}
    ways: dict[str, int] = {src: 1}
    via: dict[str, int] = {}
    queue = deque([src])
    while queue:
        node = queue.popleft()
        step = dist[node] + 1
        for link in out.get(node, ()):
            if link.dst not in dist:
                dist[link.dst] = step
                ways[link.dst] = ways[node]
                via[link.dst] = link.index
                queue.append(link.dst)
            elif dist[link.dst] == step:
                ways[link.dst] += ways[node]
    return ways, via


def _routes(
    links: tuple[LinkPlan, ...] | list[LinkPlan], pairs: list[tuple[str, str]]
) -> dict[tuple[str, str], Route | None]:
    """The hop-count shortest path of each ``(src, dst)`` pair, and how many there are.

    None where no route leads from ``src`` to ``dst``. netsim breaks ties by link order, ns-2's
    static routing its own way: a pair with more than one shortest path cannot be exported
    faithfully. The links are indexed by node once and stubs set aside (:func:`_stubs`); one
    search runs per distinct source among the rest, so a dumbbell of any size takes two.
    """
    out: dict[str, list[LinkPlan]] = {}
    into: dict[str, list[LinkPlan]] = {}
    for link in links:
        out.setdefault(link.src, []).append(link)
        into.setdefault(link.dst, []).append(link)
    stubs = _stubs(out, into)
    core = {
        node: [link for link in node_links if link.dst not in stubs]
        for node, node_links in out.items()
        if node not in stubs
    }
    # Each pair as its ends off the stubs: (prefix link, core src, core dst, suffix link).
    by_source: dict[str, list[tuple[tuple[str, str], int | None, str, int | None]]] = {}
    routes: dict[tuple[str, str], Route | None] = {}
    for src, dst in pairs:
        if src == dst:
            routes[(src, dst)] = ((), 1)
            continue
        up = stubs[src][0] if src in stubs else None
        down = stubs[dst][1] if dst in stubs else None
        a, up_index = (src, None) if up is None else (up.dst, up.index)
        b, down_index = (dst, None) if down is None else (down.src, down.index)
        by_source.setdefault(a, []).append(((src, dst), up_index, b, down_index))
    # One source's search at a time: memory stays linear in the network.
    for a, entries in by_source.items():
        ways, via = _search(core, a)
        for pair, up_index, b, down_index in entries:
            if b not in ways:
                routes[pair] = None
                continue
            path = [] if down_index is None else [down_index]
            node = b
            while node != a:
                index = via[node]
                path.append(index)
                node = links[index].src
            if up_index is not None:
                path.append(up_index)
            routes[pair] = (tuple(reversed(path)), ways[b])
    return routes


def _route(routes: Mapping[tuple[str, str], Route | None], src: str, dst: str) -> Route:
    """The route from ``src`` to ``dst`` in ``routes`` (:func:`_routes`); raises without one."""
    route = routes[(src, dst)]
    if route is None:
        raise ExportError(f"no route from {src!r} to {dst!r}")
    return route


def _probed_paths(
    scenario: Scenario, pairs: list[tuple[str, str]], links: tuple[LinkPlan, ...]
) -> dict[tuple[str, str], tuple[int, ...]]:
    """The path netsim itself gives each ``(src, dst)`` pair (link indices), routes applied.

    One probe run of the scenario's topology with a CBR flow per pair (and nothing else), whose
    flow table says which links each takes (``Result.flows["path"]``): netsim decides, nothing
    is re-derived here.
    """
    from tfrclab.simulate import run

    distinct = list(dict.fromkeys(pair for pair in pairs if pair[0] != pair[1]))
    tables = scenario.to_dict()
    probe_tables = {
        "duration": "1ns",
        "measure": {"from": "0s", "to": "1ns"},
        "topology": tables["topology"],
        "flows": [
            {"kind": "cbr", "name": f"probe{i}", "from": a, "to": b, "rate": "1kbps"}
            for i, (a, b) in enumerate(distinct)
        ],
    }
    names = {link.name: link.index for link in links}
    out: dict[tuple[str, str], tuple[int, ...]] = {(a, a): () for a, b in pairs if a == b}
    if distinct:
        result = run(Scenario.from_dict(probe_tables))
        for pair, path in zip(distinct, result.flows["path"].tolist(), strict=True):
            out[pair] = tuple(names[str(name)] for name in path)
    return out


def resolve(scenario: Scenario, seed: int | None = None, *, strict: bool = True) -> Plan:
    """Resolve ``scenario`` for ``seed`` (default: its own): the draws netsim makes, read back.

    Random starts and stops are read from the probe's flow table; random ``on_off`` periods
    are replayed from each flow's ON/OFF stream (``_native.on_off_schedules``, up to the real
    duration), web sessions' distributions read as built (``_native.web_variables``).

    Routing ns-2 would do differently (flows with several shortest paths) is refused, every
    such part at once; with ``strict`` off the refusals are kept in :attr:`Plan.refusals`
    instead, so that the exporter lists them with its own. With explicit routes
    (``topology.routes``) every flow's paths both ways are netsim's own (:func:`_probed_paths`),
    kept in :attr:`Plan.manual_routes` for the export's ns-2 Manual routing.

    Raises:
        ExportError: for flows whose routing would differ (with ``strict``).
        ScenarioError: if netsim refuses the scenario.
    """
    # Imported here: ``import tfrclab.ns2`` (and so the ``tfrclab`` parser) stays light.
    from tfrclab import _native
    from tfrclab.simulate import run

    seed = scenario.seed if seed is None else seed
    tables = scenario.to_dict()
    probe = run(
        scenario.with_(duration="1ns", **{"measure.from": "0s", "measure.to": "1ns"}), seed=seed
    )
    link_frame = probe.links
    topology = tables["topology"]
    raw_links = [
        (str(n), str(a), str(b))
        for n, a, b in zip(link_frame["name"], link_frame["from"], link_frame["to"], strict=True)
    ]
    # The columns as lists: one conversion each, where .iloc costs a lookup per link.
    rates = link_frame["rate_bps"].tolist()
    delays = link_frame["delay_s"].tolist()
    binned_flags = link_frame["binned"].tolist()
    queues = _queue_tables(topology, raw_links)
    links = tuple(
        LinkPlan(
            index=i,
            name=name,
            src=a,
            dst=b,
            rate_bps=int(rates[i]),
            delay_s=float(delays[i]),
            queue=queues[i][0],
            queue_path=queues[i][1],
            binned=bool(binned_flags[i]),
        )
        for i, (name, a, b) in enumerate(raw_links)
    )
    # Nodes in order of first appearance (a dict keeps insertion order).
    nodes = dict.fromkeys(node for link in links for node in (link.src, link.dst))
    flow_frame = probe.flows
    column = {
        key: flow_frame[key].tolist()
        for key in ("name", "from", "to", "start_s", "stop_s", "loss_event_rtt_s")
    }
    expanded = expand_flows(tables.get("flows", []))
    schedules = _native.on_off_schedules(scenario.toml, seed)
    web_tables = _native.web_variables(scenario.toml, seed)
    ends = [(str(a), str(b)) for a, b in zip(column["from"], column["to"], strict=True)]
    # Every flow's way there, and the way back of those whose sink sends: searched together.
    pairs = list(ends)
    for (src, dst), (table, _) in zip(ends, expanded, strict=True):
        if str(table["kind"]) not in _SILENT_SINKS:
            pairs.append((dst, src))
    refusals = Refusals()
    manual: dict[tuple[str, str], tuple[int, ...]] = {}
    if topology.get("routes"):
        # netsim's own paths, both ways for every flow (web sessions and pings too): ns-2's
        # Manual routing needs a route wherever a packet goes.
        manual = _probed_paths(scenario, [*ends, *((b, a) for a, b in ends)], links)
        routes: dict[tuple[str, str], Route | None] = {
            pair: (path, 1) for pair, path in manual.items()
        }
    else:
        routes = _routes(links, pairs)
    flows: list[FlowPlan] = []
    for i, (table, path) in enumerate(expanded):
        src, dst = ends[i]
        kind = str(table["kind"])
        drawn_stop = float(column["stop_s"][i])
        stop_s = drawn_stop if math.isfinite(drawn_stop) else None
        periods = (
            tuple((on / 1e9, off / 1e9) for on, off in schedules[i]) if "on_off" in table else None
        )
        web = web_tables[i]
        web_vars = (
            None if web is None else {name: (kind, tuple(values)) for name, (kind, values) in web}
        )
        data, ways = _route(routes, src, dst)
        reply: tuple[int, ...] = ()
        back_ways = 1
        if kind not in _SILENT_SINKS:
            reply, back_ways = _route(routes, dst, src)
        if ways > 1 or back_ways > 1:
            refusals.refuse(
                f"topology: flow {column['name'][i]!r} has several shortest paths "
                "(ns-2 breaks ties its own way)"
            )
        flows.append(
            FlowPlan(
                index=i,
                name=str(column["name"][i]),
                kind=kind,
                table=table,
                path=path,
                src=src,
                dst=dst,
                start_s=float(column["start_s"][i]),
                stop_s=stop_s,
                data_links=data,
                reply_links=reply,
                loss_event_rtt_s=float(column["loss_event_rtt_s"][i]),
                on_periods=periods,
                web=web_vars,
            )
        )
    # Link names are unique (netsim refuses duplicates).
    names = {link.name: link.index for link in links}
    losses: list[LossPlan] = []
    for i, table in enumerate(tables.get("losses", [])):
        losses.append(LossPlan(index=i, link=names[table["link"]], table=table))
    if "bottleneck" in names:
        primary = names["bottleneck"]
    elif "hop0" in names:
        primary = names["hop0"]
    else:
        binned = [link.index for link in links if link.binned]
        primary = binned[0] if binned else 0
    if strict:
        refusals.raise_any()
    return Plan(
        scenario=scenario,
        seed=seed,
        duration_s=scenario.duration_s,
        bin_s=scenario.bin_s,
        nodes=tuple(nodes),
        links=links,
        flows=tuple(flows),
        losses=tuple(losses),
        primary_link=primary,
        topology_kind=str(topology["kind"]),
        refusals=tuple(refusals.found),
        manual_routes=tuple(dict.fromkeys(manual.values())),
    )
