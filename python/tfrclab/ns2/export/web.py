"""Web sessions as ns-2.35's ``PagePool/WebTraf`` (tcl/webcache/webtraf.tcl; docs/web.md)."""

from __future__ import annotations

from collections.abc import Mapping

from tfrclab.ns2.export.ranvar import ranvar
from tfrclab.ns2.export.tcl import NEVER, refuse_unknown
from tfrclab.ns2.export.tcp import TCP_KEYS, tcp_agents, tcp_checks
from tfrclab.ns2.plan import FlowPlan, Refusals

__all__ = ["web_flow"]

_WEB_KEYS = {"model", "inter_page", "objects_per_page", "inter_object", "object_size", "pages",
             "inter_page_from", "load", "share"}  # fmt: skip


def web_flow(flow: FlowPlan, index: Mapping[str, int], lines: list[str]) -> None:
    """One web session as its own ``PagePool/WebTraf`` (tcl/webcache/webtraf.tcl).

    One pool per netsim flow, with one client (the flow's sink node), one server (its source)
    and one session: netsim binds a session to its server (docs/web.md). The pool's TCP agents
    come from per-pool ``alloc-tcp``/``alloc-tcp-sink`` procs with the flow's TCP knobs and
    ``fid_`` the flow's index (``FID_ASSIGNING_MODE_`` 2 keeps it on every connection). The
    distributions are netsim's as built (``share``/``load`` already in the inter-page mean).
    """
    refusals = Refusals()
    with refusals.part():
        refuse_unknown(flow, TCP_KEYS | _WEB_KEYS)
    with refusals.part():
        tcp_checks(flow, "reno", "ns2_2000")
    refusals.raise_any()
    assert flow.web is not None
    k = flow.index
    agents = tcp_agents(flow, "tcp", "snk", "reno", "ns2_2000")

    def target(line: str) -> str:  # "set snk [...]" or "$snk set ...": the agent it sets
        words = line.split()
        return words[0].lstrip("$") if words[0].startswith("$") else words[1]

    tcp_lines = [line for line in agents if target(line) == "tcp"]
    sink_lines = [line for line in agents if target(line) == "snk"]
    body_tcp = "; ".join([*tcp_lines, "return $tcp"])
    body_sink = "; ".join([*sink_lines, "return $snk"])
    lines.append(f"set web({k}) [new PagePool/WebTraf]")
    lines.append(f"$web({k}) proc alloc-tcp {{}} {{{body_tcp}}}")
    lines.append(f"$web({k}) proc alloc-tcp-sink {{}} {{{body_sink}}}")
    lines.append(f"$web({k}) set-num-client 1")
    lines.append(f"$web({k}) set-client 0 $n({index[flow.dst]})")
    lines.append(f"$web({k}) set-num-server 1")
    lines.append(f"$web({k}) set-server 0 $n({index[flow.src]})")
    lines.append(f"$web({k}) set-num-session 1")
    names = []
    for key in ("inter_page", "objects_per_page", "inter_object", "object_size"):
        name = f"rv_{key}_{k}"
        lines += ranvar(name, flow.web[key], f"{flow.path}.{key}")
        names.append(f"${name}")
    pages = int(flow.table.get("pages", NEVER))
    lines.append(f"set web_args({k}) [list {pages} {' '.join(names)}]")
    option = 1 if flow.table.get("inter_page_from", _web_from_default(flow)) == "end" else 0
    lines.append(f"set web_option({k}) {option}")


def _web_from_default(flow: FlowPlan) -> str:
    """The default ``inter_page_from`` in netsim: "start" with a load or share, else "end"."""
    return "start" if ("load" in flow.table or "share" in flow.table) else "end"
