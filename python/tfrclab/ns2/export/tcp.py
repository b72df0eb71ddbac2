"""TCP flows as ns-2.35's one-way agents: long-lived TCP, GAIMD and short connections.

Every preset knob is written out (tcl/lib/ns-default.tcl; docs/tcp.md has the table), and what
ns-2.35's agents do not have is refused, every knob at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from tfrclab.ns2.export.ranvar import ranvar
from tfrclab.ns2.export.tcl import COMMON_KEYS, refuse_unknown, seconds, tcl_bool, tcl_number
from tfrclab.ns2.plan import FlowPlan, Plan, Refusals
from tfrclab.ns2.values import size_bytes

__all__ = [
    "TCP_KEYS",
    "TCP_KINDS",
    "TCP_PRESETS",
    "gaimd_flow",
    "short_tcp_flow",
    "tcp_agents",
    "tcp_checks",
    "tcp_flow",
]

TCP_PRESETS: dict[str, dict[str, Any]] = {
    "ns2_2000": {
        "window": 20,
        "initial_window": 1,
        "syn": False,
        "delay_growth": False,
        "tick": 0.1,
        "min_rto": 0.0,
        "max_rto": 64.0,
        "initial_rto": 6.0,
        "rfc2988": False,
        "use_headers": False,
        "limited_transmit": False,
        "precision_reduce": False,
        "ack": "immediate",
        "sack_recovery": "sack1",
        "partial_window_deflation": False,
        "newreno_impatient": False,
    },
    "ns2_35": {
        "window": 20,
        "initial_window": 2,
        "syn": True,
        "delay_growth": True,
        "tick": 0.01,
        "min_rto": 0.2,
        "max_rto": 60.0,
        "initial_rto": 3.0,
        "rfc2988": True,
        "use_headers": True,
        "limited_transmit": True,
        "precision_reduce": True,
        "ack": "immediate",
        "sack_recovery": "sack1",
        "partial_window_deflation": True,
        "newreno_impatient": True,
    },
    "rfc": {
        "window": 1_000_000,
        "initial_window": None,  # RFC 3390, from the size
        "syn": True,
        "delay_growth": True,
        "tick": 0.001,
        "min_rto": 1.0,
        "max_rto": 60.0,
        "initial_rto": 1.0,
        "rfc2988": True,
        "use_headers": True,
        "limited_transmit": True,
        "precision_reduce": True,
        "ack": "delayed",
        "sack_recovery": "rfc6675",
        "partial_window_deflation": True,
        "newreno_impatient": True,
    },
}
"""docs/tcp.md's preset table: the knobs each TCP preset sets (durations in seconds)."""

_TCP_AGENTS = {
    "tahoe": "Agent/TCP",
    "reno": "Agent/TCP/Reno",
    "newreno": "Agent/TCP/Newreno",
    "sack": "Agent/TCP/Sack1",
    "vegas": "Agent/TCP/Vegas",
}
TCP_KEYS = {
    "kind", "name", "count", "from", "to", "reverse", "start", "stop", "on_off",
    "loss_event_rtt", "variant", "preset", "size", "window", "initial_window", "syn",
    "delay_growth", "tick", "min_rto", "max_rto", "initial_rto", "rfc2988", "use_headers",
    "header_size", "limited_transmit", "precision_reduce", "overhead", "max_cwnd", "increase",
    "decrease", "decrease_rule", "numdupacks", "ack", "ack_interval", "ack_size",
    "max_sack_blocks", "sack_block_size", "sack_recovery", "partial_window_deflation",
    "newreno_impatient", "vegas_alpha", "vegas_beta", "vegas_gamma", "max_packets",
    "group", "background",
}  # fmt: skip
_GAIMD_KEYS = (
    TCP_KEYS
    - {"variant", "increase", "decrease", "decrease_rule", "max_sack_blocks", "sack_block_size",
       "sack_recovery", "partial_window_deflation", "newreno_impatient", "vegas_alpha",
       "vegas_beta", "vegas_gamma"}
) | {"alpha", "beta", "rule", "recovery"}  # fmt: skip
"""docs/scenario.md's GAIMD keys: TCP's, with alpha and beta for increase and decrease."""

_SHORT_KEYS = (TCP_KEYS - {"max_packets"}) | {"packets", "interarrival", "load", "share"}
"""docs/scenario.md's short-TCP keys: TCP's but ``max_packets``, and the arrival process."""

TCP_KINDS = ("tcp", "gaimd")
"""Flow kinds exported as an ns-2 TCP agent (``max_packets``, the end-of-run counters)."""


def tcp_flow(flow: FlowPlan, lines: list[str]) -> None:
    """An ns-2 one-way TCP agent with every preset knob set (ns-default.tcl; docs/tcp.md)."""
    refusals = Refusals()
    with refusals.part():
        refuse_unknown(flow, TCP_KEYS)
    with refusals.part():
        tcp_checks(flow, "sack", "rfc")
    refusals.raise_any()
    k = flow.index
    lines += tcp_agents(flow, f"src({k})", f"snk({k})", "sack", "rfc")
    lines.append(f"set app({k}) [$src({k}) attach-app FTP]")


def gaimd_flow(flow: FlowPlan, lines: list[str]) -> None:
    """GAIMD(alpha, beta) as ns-2's own: a TCP agent with ``increase_num_`` and ``decrease_num_``.

    ns-2.35's tcp.cc opens the window by ``increase_num_ / cwnd_`` per ACK in congestion
    avoidance (``windowOption_`` 1) and its ``slowdown()`` cuts to ``decrease_num_`` times the
    window, except that the first decrease, any decrease in slow start and ssthresh after a
    timeout halve: netsim's ``rule = "ns2"`` (docs/tcp.md, GAIMD). ``recovery`` picks the agent
    (Agent/TCP/Reno, /Newreno, /Sack1) as it picks netsim's recovery; ``preset`` defaults to
    ``ns2_2000`` as netsim's GAIMD does. ``rule = "paper"`` (every reduction to beta) has no ns-2
    knob.
    """
    t = flow.table
    refusals = Refusals()
    with refusals.part():
        refuse_unknown(flow, _GAIMD_KEYS)
    if t.get("rule", "ns2") != "ns2":
        refusals.refuse(
            f"{flow.path}.rule: 'paper' has no ns-2 equivalent (ns-2's slowdown() halves on "
            "the first decrease, in slow start and for ssthresh after a timeout)"
        )
    preset = str(t.get("preset", "ns2_2000"))
    recovery = str(t.get("recovery", "reno"))
    if recovery == "sack" and TCP_PRESETS.get(preset, {}).get("sack_recovery", "sack1") != "sack1":
        refusals.refuse(
            f"{flow.path}.recovery: 'sack' under preset {preset!r} is RFC 6675 recovery, which "
            "has no ns-2 agent"
        )
    table = {key: value for key, value in t.items() if key not in ("alpha", "beta", "rule",
             "recovery")}  # fmt: skip
    table.update(
        variant=recovery,
        preset=preset,
        increase=float(t.get("alpha", 0.31)),
        decrease=float(t.get("beta", 0.875)),
    )
    as_tcp = replace(flow, table=table)
    with refusals.part():
        tcp_checks(as_tcp, recovery, preset)
    refusals.raise_any()
    tcp_flow(as_tcp, lines)


def short_tcp_flow(plan: Plan, flow: FlowPlan, index: Mapping[str, int], lines: list[str]) -> None:
    """Short TCP connections arriving as netsim's do, each a fresh ns-2 TCP agent pair.

    A Tcl process per flow (``tfrclab_short_<k>``): at each arrival a new agent and sink with
    the flow's TCP knobs (``fid_`` the flow's index, so the monitors pool its connections) are
    attached and connected, an FTP ``produce``s ceil(``packets``) packets (at least 1), and the
    next arrival is scheduled one ``interarrival`` draw later; the first comes one draw after the
    flow's start, and none opens at or after its stop (open connections finish), as netsim's
    (docs/web.md). The two variables are netsim's as built (``load``/``share`` resolved into the
    inter-arrival mean), drawn from ns-2's own random variables (tools/ranvar.cc) on its default
    RNG: the arrivals and sizes compare in distribution. ``on_off`` is refused.
    """
    refusals = Refusals()
    with refusals.part():
        refuse_unknown(flow, COMMON_KEYS | _SHORT_KEYS)
    if "on_off" in flow.table:
        refusals.refuse(f"{flow.path}.on_off: not exported for short_tcp flows")
    with refusals.part():
        tcp_checks(flow, "sack", "rfc")
    refusals.raise_any()
    assert flow.web is not None
    k = flow.index
    names = {}
    for key in ("packets", "interarrival"):
        names[key] = f"rv_{key}_{k}"
        lines += ranvar(names[key], flow.web[key], f"{flow.path}.{key}")
    until = plan.duration_s if flow.stop_s is None else min(plan.duration_s, flow.stop_s)
    agents = tcp_agents(flow, "tcp", "snk", "sack", "rfc")
    body = [
        f"global ns n {names['packets']} {names['interarrival']}",
        f"if {{[$ns now] >= {tcl_number(until)}}} {{ return }}",
        *agents,
        f"$ns attach-agent $n({index[flow.src]}) $tcp",
        f"$ns attach-agent $n({index[flow.dst]}) $snk",
        "$ns connect $tcp $snk",
        f"set size [expr {{int(ceil([${names['packets']} value]))}}]",
        "if {$size < 1} { set size 1 }",
        "[$tcp attach-app FTP] produce $size",
        f'$ns at [expr {{[$ns now] + [${names["interarrival"]} value]}}] "tfrclab_short_{k}"',
    ]
    lines.append(f"proc tfrclab_short_{k} {{}} {{")
    lines += [f"    {line}" for line in body]
    lines.append("}")
    first = f"[expr {{{tcl_number(flow.start_s)} + [${names['interarrival']} value]}}]"
    lines.append(f'$ns at {first} "tfrclab_short_{k}"')


def tcp_agents(
    flow: FlowPlan, src: str, snk: str, default_variant: str, default_preset: str
) -> list[str]:
    """Tcl creating the TCP agent ``src`` and its sink ``snk`` with the flow's knobs."""
    tcp_checks(flow, default_variant, default_preset)
    t = flow.table
    variant = str(t.get("variant", default_variant))
    knobs = dict(TCP_PRESETS[str(t.get("preset", default_preset))])
    for key in knobs:
        if key in t:
            knobs[key] = t[key]
    size = size_bytes(t.get("size", 1000))
    if knobs["initial_window"] is None:  # RFC 3390: min(4 MSS, max(2 MSS, 4380 B))
        knobs["initial_window"] = min(4 * size, max(2 * size, 4380)) // size
    k = flow.index
    agent = _TCP_AGENTS[variant]
    delayed = knobs["ack"] == "delayed"
    sink = (
        "Agent/TCPSink" + ("/Sack1" if variant == "sack" else "") + ("/DelAck" if delayed else "")
    )
    settings = [
        ("fid_", k),
        ("packetSize_", size),
        ("window_", int(knobs["window"])),
        ("windowInit_", int(knobs["initial_window"])),
        ("windowInitOption_", 1),
        ("syn_", tcl_bool(knobs["syn"])),
        ("delay_growth_", tcl_bool(knobs["delay_growth"])),
        ("tcpTick_", tcl_number(seconds(knobs["tick"]))),
        ("minrto_", tcl_number(seconds(knobs["min_rto"]))),
        ("maxrto_", tcl_number(seconds(knobs["max_rto"]))),
        ("rtxcur_init_", tcl_number(seconds(knobs["initial_rto"]))),
        ("rfc2988_", tcl_bool(knobs["rfc2988"])),
        ("useHeaders_", tcl_bool(knobs["use_headers"] and variant != "vegas")),
        ("tcpip_base_hdr_size_", int(t.get("header_size", 40))),
        ("singledup_", 1 if knobs["limited_transmit"] else 0),
        ("precisionReduce_", tcl_bool(knobs["precision_reduce"])),
        ("overhead_", tcl_number(seconds(t.get("overhead", 0.0)))),
        ("maxcwnd_", int(t.get("max_cwnd", 0))),
        ("increase_num_", tcl_number(float(t.get("increase", 1.0)))),
        ("decrease_num_", tcl_number(float(t.get("decrease", 0.5)))),
        ("numdupacks_", int(t.get("numdupacks", 3))),
        ("bugfix_ss_", 1),
        ("maxburst_", 0),
        ("timestamps_", "false"),
        ("ecn_", 0),
    ]
    if variant == "newreno":
        settings += [
            ("partial_window_deflation_", 1 if knobs["partial_window_deflation"] else 0),
            ("newreno_changes1_", 1 if knobs["newreno_impatient"] else 0),
        ]
    if variant == "vegas":
        settings += [
            ("v_alpha_", tcl_number(float(t.get("vegas_alpha", 1)))),
            ("v_beta_", tcl_number(float(t.get("vegas_beta", 3)))),
            ("v_gamma_", tcl_number(float(t.get("vegas_gamma", 1)))),
        ]
    lines = [f"set {src} [new {agent}]"]
    lines += [f"${src} set {name} {value}" for name, value in settings]
    lines.append(f"set {snk} [new {sink}]")
    lines.append(f"${snk} set packetSize_ {int(t.get('ack_size', 40))}")
    if variant == "sack":
        lines.append(f"${snk} set maxSackBlocks_ {int(t.get('max_sack_blocks', 3))}")
    if delayed:
        lines.append(f"${snk} set interval_ {tcl_number(seconds(t.get('ack_interval', '100ms')))}")
    return lines


def tcp_checks(flow: FlowPlan, default_variant: str, default_preset: str) -> None:
    """Refuse, all at once, the TCP knobs of ``flow`` that ns-2.35's agents do not have."""
    t = flow.table
    variant = str(t.get("variant", default_variant))
    preset = str(t.get("preset", default_preset))
    refusals = Refusals()
    if preset not in TCP_PRESETS:
        refusals.refuse(
            f"{flow.path}.preset: {preset!r} has no ns-2.35 export (its segment counting and "
            "quick ACKs have no ns-2 knob)"
        )
    if variant not in _TCP_AGENTS:
        refusals.refuse(
            f"{flow.path}.variant: {variant!r} has no ns-2.35 export (ns-2's Agent/TCP/Linux "
            "runs a 2.6-era kernel's congestion controls, not today's)"
        )
    recovery = t.get("sack_recovery", TCP_PRESETS.get(preset, {}).get("sack_recovery"))
    if variant == "sack" and recovery not in (None, "sack1"):
        refusals.refuse(f"{flow.path}.sack_recovery: rfc6675 has no ns-2 agent (use sack1)")
    if t.get("decrease_rule", "ns2") != "ns2":
        refusals.refuse(f"{flow.path}.decrease_rule: 'paper' has no ns-2 equivalent")
    if int(t.get("sack_block_size", 8)) != 8:
        refusals.refuse(f"{flow.path}.sack_block_size: ns-2 SACK blocks are 8 bytes")
    refusals.raise_any()
