"""Open-loop flows: CBR and ON/OFF sources over Agent/UDP, and Agent/Ping probes."""

from __future__ import annotations

from tfrclab.ns2.export.tcl import COMMON_KEYS, refuse_unknown, seconds, tcl_number
from tfrclab.ns2.plan import FlowPlan
from tfrclab.ns2.values import rate_bps, size_bytes

__all__ = ["ping_flow", "udp_source_flow"]


def udp_source_flow(flow: FlowPlan, lines: list[str]) -> None:
    """CBR, Pareto or exponential ON/OFF traffic over Agent/UDP into Agent/Null."""
    t = flow.table
    k = flow.index
    size = size_bytes(t.get("size", 1000))
    if flow.kind == "cbr":
        refuse_unknown(flow, COMMON_KEYS | {"rate", "size", "random", "max_packets"})
        app = [
            ("rate_", tcl_number(rate_bps(t["rate"]))),
            ("packetSize_", size),
            ("random_", 1 if t.get("random", False) else 0),
            ("maxpkts_", int(t.get("max_packets", 268435456))),
        ]
        cls = "Application/Traffic/CBR"
    else:
        keys = {"rate", "size", "on", "off"} | ({"shape"} if flow.kind == "pareto" else set())
        refuse_unknown(flow, COMMON_KEYS | keys)
        app = [
            ("rate_", tcl_number(rate_bps(t.get("rate", "64kbps")))),
            ("packetSize_", size),
            ("burst_time_", tcl_number(seconds(t.get("on", "500ms")))),
            ("idle_time_", tcl_number(seconds(t.get("off", "500ms")))),
        ]
        if flow.kind == "pareto":
            app.append(("shape_", tcl_number(float(t.get("shape", 1.5)))))
        cls = (
            "Application/Traffic/Pareto"
            if flow.kind == "pareto"
            else ("Application/Traffic/Exponential")
        )
    lines.append(f"set src({k}) [new Agent/UDP]")
    lines.append(f"$src({k}) set fid_ {k}")
    lines.append(f"$src({k}) set packetSize_ {size}")
    lines.append(f"set snk({k}) [new Agent/Null]")
    lines.append(f"set app({k}) [new {cls}]")
    lines += [f"$app({k}) set {name} {value}" for name, value in app]
    lines.append(f"$app({k}) attach-agent $src({k})")


def ping_flow(flow: FlowPlan, lines: list[str]) -> None:
    """Agent/Ping at both ends (apps/ping.cc): ``send`` every interval, echoes back at once.

    The echo is the sink agent's own packet (``allocpkt``), so both agents get the size. The
    source's ``recv`` (RTT in ms, one decimal) adds to per-flow counters the samples print.
    """
    refuse_unknown(flow, COMMON_KEYS | {"size", "interval", "timeout"})
    k = flow.index
    size = size_bytes(flow.table.get("size", "64B"))
    for agent in ("src", "snk"):
        lines.append(f"set {agent}({k}) [new Agent/Ping]")
        lines.append(f"${agent}({k}) set packetSize_ {size}")
        lines.append(f"${agent}({k}) set fid_ {k}")
    lines.append(f'$src({k}) proc recv {{from rtt}} "tfrclab_echo {k} \\$rtt"')
    lines.append(f"set ping_sent({k}) 0; set ping_echoes({k}) 0; set ping_rtt({k}) 0.0")
