"""Write a resolved scenario as an ns-2.35 Tcl script (``tfrclab export ns2``).

The script builds the same network with every knob set explicitly (never relying on
ns-2.35's defaults, which differ from the 2000-era ones: ns-default.tcl), starts each flow at
the time netsim drew for it, and prints what the cross-check compares, once per monitor bin:

- ``F <bin> <link> <fid> <arrived bytes> <departed bytes> <arrived packets> ...``: the
  cumulative bytes of each flow entering and leaving the queue of a link that is the first or
  last link of some flow (a flow's *sent* bytes are the arrivals at its first link, its
  *received* bytes the departures from its last one), and its packets entering;
- ``L <bin> <link> <arrivals> <departures> <drops> <departed bytes> <queue integral>``: the
  cumulative packet counts of a binned link (drops include loss-model drops), its departed
  bytes and the time integral of its waiting packets (a ``QueueMonitor`` with an
  ``Integrator``: ns-2 counts packets between its in- and out-snoop, the waiting ones);
- ``P <bin> <flow> <probes sent> <echoes> <summed RTT in ms>``: each ping's cumulative counts;
- ``T <flow> <data packets> <retransmitted packets> <timeouts> <window cuts>``: at the end,
  each long-lived TCP agent's counters (``ndatapack_``, ``nrexmitpack_``, ``nrexmit_``,
  ``ncwndcuts_``: its loss indications, fast retransmits and timeouts);
- with ``drop_trace``, ns-2's own ``d`` lines for every drop at the primary link.

Read it back with :func:`tfrclab.ns2.output.read_output`. Each mapping cites the ns-2 source
(``tcl/lib/ns-default.tcl``, ``queue/drop-tail.cc``, ``queue/errmodel.cc``, ...);
docs/crosscheck.md has the whole table.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from tfrclab.ns2.plan import ExportError, FlowPlan, LinkPlan, LossPlan, Plan, Refusals
from tfrclab.ns2.two_state import two_state_tcl
from tfrclab.ns2.values import duration_s, rate_bps, size_bytes

__all__ = ["TCP_PRESETS", "export_tcl", "monitored_links"]

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
_TCP_KEYS = {
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
    _TCP_KEYS
    - {"variant", "increase", "decrease", "decrease_rule", "max_sack_blocks", "sack_block_size",
       "sack_recovery", "partial_window_deflation", "newreno_impatient", "vegas_alpha",
       "vegas_beta", "vegas_gamma"}
) | {"alpha", "beta", "rule", "recovery"}  # fmt: skip
"""docs/scenario.md's GAIMD keys: TCP's, with alpha and beta for increase and decrease."""
# ``group`` and ``background`` only say how the flows are reported: nothing to export.
_COMMON_KEYS = {"kind", "name", "count", "from", "to", "reverse", "start", "stop", "on_off",
                "loss_event_rtt", "group", "background"}  # fmt: skip

# floyd2000 TFRC: ns-2.35 Agent/TFRC and Agent/TFRCSink as ns-default.tcl sets them, except
# useHeaders_ false (the paper predates the 32-byte header accounting added in 2005).
_TFRC_FIXED: dict[str, Any] = {
    "segment_size": None,  # must equal size
    "cap_rto_term": True,
    "rto": "tcp_like",
    "rate_scale": 1,
    "initial_window": "ns2",
    "initial_nofeedback": "2s",
    "nofeedback_rtts": 2,
    "max_rate": "1Tbps",
    "nofeedback_response": "halve_rate",
    "congestion_avoidance": "ns2_additive_increase",
    "max_backoff_interval": "none",
    "scheduling_granularity": "0s",
    "short_history": "ns2",
    "first_interval": "current_receive_rate",
}
"""TFRC keys ns-2 has no knob for: allowed only at the floyd2000 value."""
_TFRC_MAPPED = {"size", "feedback_size", "b", "rto_granularity", "rto_min",
                "rate_before_feedback", "rtt_ewma_q", "sqrt_rtt_ewma_q", "oscillation_prevention",
                "ndupack", "discount_threshold", "ecn", "preset", "dither_fraction",
                "loss_intervals"}  # fmt: skip

_RED_PRESETS: dict[str, dict[str, Any]] = {
    "ns2_35": {"queue_in_bytes": True, "byte_mode": True, "min_th": 0, "max_th": 0,
               "w_q": -1, "gentle": True, "use_mark_p": True, "adaptive": False},
    "ns2_2000": {"queue_in_bytes": False, "byte_mode": False, "min_th": 5, "max_th": 15,
                 "w_q": 0.002, "gentle": False, "use_mark_p": False, "adaptive": False},
    "adaptive": {"queue_in_bytes": False, "byte_mode": False, "min_th": 0, "max_th": 0,
                 "w_q": 0, "gentle": True, "use_mark_p": True, "adaptive": True},
}  # fmt: skip
"""docs/queues.md's RED presets in ns-2's terms (thresh_ 0 and maxthresh_ 0: automatic)."""
_W_Q_CODES = {"auto": -1, "packet_time": 0, "ten_packet_times": -2}

_RAP_PRESETS: dict[str, dict[str, Any]] = {
    "ns2": {"size": 512, "ack_size": 44, "shared_first_sample": False},
    "ns2_exact": {"size": 512, "ack_size": 44, "shared_first_sample": True},
    "hassan": {"size": 100, "ack_size": 40, "shared_first_sample": False},
}
"""docs/rap.md's RAP presets: what each sets apart from ns-default.tcl's ``Agent/RAP`` knobs."""
_RAP_KNOBS = (
    ("ipg", "ipg_", "2s", "duration"), ("srtt", "srtt_", "2s", "duration"),
    ("timeout", "timeout_", "2s", "duration"), ("alpha", "alpha_", 1.0, "number"),
    ("beta", "beta_", 0.5, "number"), ("delta", "delta_", 0.5, "number"),
    ("mu", "mu_", 1.2, "number"), ("phi", "phi_", 4.0, "number"),
    ("overhead", "overhead_", "0s", "duration"), ("kfrtt", "kfrtt_", 0.9, "number"),
    ("kxrtt", "kxrtt_", 0.01, "number"), ("dpthresh", "dpthresh_", 50, "number"),
)  # fmt: skip
"""netsim's RAP keys with ns-2's knob, ns-default.tcl's default and the value's kind."""
_RAP_KEYS = {key for key, _, _, _ in _RAP_KNOBS} | {
    "preset", "size", "ack_size", "fine_grain", "shared_first_sample", "max_packets",
}  # fmt: skip

_SHORT_KEYS = (_TCP_KEYS - {"max_packets"}) | {"packets", "interarrival", "load", "share"}
"""docs/scenario.md's short-TCP keys: TCP's but ``max_packets``, and the arrival process."""

_TCP_KINDS = ("tcp", "gaimd")
"""Flow kinds exported as an ns-2 TCP agent (``max_packets``, the end-of-run counters)."""

_NEVER = 2147483647
"""A Periodic period that never comes round again: how a schedule retires a periodic step."""


def _b(value: bool) -> str:
    return "true" if value else "false"


def _num(value: float) -> str:
    """A number for Tcl, exact enough for nanosecond times."""
    text = f"{value:.12g}"
    return text


def monitored_links(plan: Plan) -> tuple[list[int], list[int]]:
    """The links whose per-flow bytes (first and last links of flows) and link series are kept."""
    flow_links = {
        index for flow in plan.flows for index in (flow.data_links[0], flow.data_links[-1])
    }
    link_series = sorted({link.index for link in plan.links if link.binned} | {plan.primary_link})
    return sorted(flow_links), link_series


# -- queues ----------------------------------------------------------------------------------


def _queue(link: LinkPlan) -> tuple[str, list[str]]:
    """The ns-2 queue class of a link and the ``$q set`` lines that configure it."""
    table = link.queue
    path = link.queue_path
    if table is None:
        # docs/scenario.md: the default link queue is ns-2's DropTail with limit_ 50.
        return "DropTail", ["limit_ 50", "queue_in_bytes_ false", "drop_front_ false"]
    kind = table.get("kind")
    if kind == "droptail":
        # drop-tail.cc drops when len + 1 >= limit_ (N - 1 wait, one on the wire), and in
        # bytes when bytes + size >= limit_ * mean_pktsize_.
        if "limit" in table:
            return "DropTail", [f"limit_ {int(table['limit']) + 1}", "queue_in_bytes_ false",
                                "drop_front_ false"]  # fmt: skip
        if "ns2_limit" in table:
            return "DropTail", [f"limit_ {int(table['ns2_limit'])}", "queue_in_bytes_ false",
                                "drop_front_ false"]  # fmt: skip
        if "bytes" in table:
            limit = size_bytes(table["bytes"]) + 1
            return "DropTail", [f"limit_ {limit}", "queue_in_bytes_ true", "mean_pktsize_ 1",
                                "drop_front_ false"]  # fmt: skip
        return "DropTail", ["limit_ 50", "queue_in_bytes_ false", "drop_front_ false"]
    if kind != "red":
        raise ExportError(f"{path}.kind: {kind!r} has no ns-2 export")
    preset_name = table.get("preset", "ns2_35")
    if preset_name not in _RED_PRESETS:
        raise ExportError(f"{path}.preset: {preset_name!r} has no ns-2 export")
    red = dict(_RED_PRESETS[preset_name])
    for key in ("queue_in_bytes", "byte_mode", "gentle", "use_mark_p", "adaptive"):
        if key in table:
            red[key] = bool(table[key])
    for key in ("min_th", "max_th"):
        if key in table:
            if float(table[key]) == 0 and key == "min_th":
                raise ExportError(f"{path}.min_th: 0 means 'automatic' to ns-2 (thresh_ 0)")
            red[key] = float(table[key])
    if "w_q" in table:
        w_q = table["w_q"]
        red["w_q"] = _W_Q_CODES[w_q] if isinstance(w_q, str) else w_q
    mean = size_bytes(table.get("mean_packet_size", 500))
    limit = int(table.get("limit", 50))
    max_p = float(table.get("max_p", 0.1))
    lines = [
        f"limit_ {limit}",
        f"mean_pktsize_ {mean}",
        f"queue_in_bytes_ {_b(red['queue_in_bytes'])}",
        f"bytes_ {_b(red['byte_mode'])}",
        f"thresh_ {_num(red['min_th'])}",
        f"maxthresh_ {_num(red['max_th'])}",
        f"thresh_queue_ {_num(red['min_th'])}",
        f"maxthresh_queue_ {_num(red['max_th'])}",
        f"q_weight_ {_num(red['w_q'])}",
        f"linterm_ {_num(1.0 / max_p)}",
        f"gentle_ {_b(red['gentle'])}",
        f"wait_ {_b(bool(table.get('wait', True)))}",
        f"setbit_ {_b(bool(table.get('ecn', False)))}",
        f"use_mark_p_ {_b(red['use_mark_p'])}",
        f"mark_p_ {_num(float(table.get('mark_p', 0.1)))}",
        f"targetdelay_ {_num(duration_s(table.get('target_delay', '5ms')))}",
        f"adaptive_ {1 if red['adaptive'] else 0}",
        # Adaptive RED's controller as netsim has it (Floyd, Gummadi, Shenker 2001).
        "interval_ 0.5",
        "alpha_ 0.01",
        "beta_ 0.9",
        "top_ 0.5",
        "bottom_ 0.01",
        "drop_tail_ true",
        "drop_front_ false",
        "drop_rand_ false",
        "ns1_compat_ false",
        "cautious_ 0",
        "feng_adaptive_ 0",
        "summarystats_ false",
    ]
    return "RED", lines


# -- flows -----------------------------------------------------------------------------------


def _refuse_unknown(flow: FlowPlan, allowed: set[str]) -> None:
    """Refuse every key of the flow's table the export has no ns-2 knob for, all at once."""
    unknown = [key for key in flow.table if key not in allowed]
    if unknown:
        raise ExportError(
            *(f"{flow.path}.{key}: has no ns-2 equivalent in the export" for key in unknown)
        )


def _tcp(flow: FlowPlan, lines: list[str]) -> None:
    """An ns-2 one-way TCP agent with every preset knob set (ns-default.tcl; docs/tcp.md)."""
    refusals = Refusals()
    with refusals.part():
        _refuse_unknown(flow, _TCP_KEYS)
    with refusals.part():
        _tcp_checks(flow, "sack", "rfc")
    refusals.raise_any()
    k = flow.index
    lines += _tcp_agents(flow, f"src({k})", f"snk({k})", "sack", "rfc")
    lines.append(f"set app({k}) [$src({k}) attach-app FTP]")


def _gaimd(flow: FlowPlan, lines: list[str]) -> None:
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
        _refuse_unknown(flow, _GAIMD_KEYS)
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
        _tcp_checks(as_tcp, recovery, preset)
    refusals.raise_any()
    _tcp(as_tcp, lines)


def _rap(plan: Plan, flow: FlowPlan, lines: list[str]) -> None:
    """``Agent/RAP`` at both ends (rap/rap.cc), every knob written out (docs/rap.md).

    Both agents get the flow's knobs: the sink's ``rap_base_hdr_size_`` is its ACK size. The
    source is started with ``start`` (``advanceby`` with ``max_packets``) and stopped with
    ``stop``, as netsim's. ns-2 keeps its first-sample flag in a function-level ``static``
    (``UpdateTimeValues``), shared by every RAP agent of the process: with one RAP flow the flag
    is its own, as in netsim; with several, only flows that share it (``shared_first_sample``,
    preset ``ns2_exact``) run as in ns-2, and the others are refused.
    """
    t = flow.table
    refusals = Refusals()
    with refusals.part():
        _refuse_unknown(flow, _COMMON_KEYS | _RAP_KEYS)
    preset = str(t.get("preset", "ns2"))
    knobs = dict(_RAP_PRESETS.get(preset, _RAP_PRESETS["ns2"]))
    knobs.update({key: t[key] for key in knobs if key in t})
    raps = [f for f in plan.flows if f.kind == "rap"]
    if len(raps) > 1 and not knobs["shared_first_sample"]:
        # The key the user wrote: shared_first_sample, else the preset that left it off.
        key = "shared_first_sample" if "shared_first_sample" in t else f"preset ({preset!r})"
        refusals.refuse(
            f"{flow.path}.{key}: no shared first sample, beside {len(raps) - 1} other RAP flow(s): "
            "ns-2's Agent/RAP shares one first-sample flag among all its agents (rap.cc's "
            "static in UpdateTimeValues); only preset 'ns2_exact' or shared_first_sample = true "
            "runs as ns-2 does"
        )
    refusals.raise_any()
    settings: list[tuple[str, Any]] = [
        ("fid_", flow.index),
        ("packetSize_", size_bytes(knobs["size"])),
        ("rap_base_hdr_size_", size_bytes(knobs["ack_size"])),
        ("useFineGrain_", 1 if t.get("fine_grain", False) else 0),
        ("variance_", 0),
        ("seqno_", 0),
        ("debugEnable_", 0),
    ]
    for key, knob, default, kind in _RAP_KNOBS:
        value = t.get(key, default)
        settings.append((knob, _num(_secs(value) if kind == "duration" else float(value))))
    k = flow.index
    for agent in ("src", "snk"):
        lines.append(f"set {agent}({k}) [new Agent/RAP]")
        lines += [f"${agent}({k}) set {name} {value}" for name, value in settings]
    lines.append(f"set app({k}) $src({k})")


def _short_tcp(plan: Plan, flow: FlowPlan, index: Mapping[str, int], lines: list[str]) -> None:
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
        _refuse_unknown(flow, _COMMON_KEYS | _SHORT_KEYS)
    if "on_off" in flow.table:
        refusals.refuse(f"{flow.path}.on_off: not exported for short_tcp flows")
    with refusals.part():
        _tcp_checks(flow, "sack", "rfc")
    refusals.raise_any()
    assert flow.web is not None
    k = flow.index
    names = {}
    for key in ("packets", "interarrival"):
        names[key] = f"rv_{key}_{k}"
        lines += _ranvar(names[key], flow.web[key], f"{flow.path}.{key}")
    until = plan.duration_s if flow.stop_s is None else min(plan.duration_s, flow.stop_s)
    agents = _tcp_agents(flow, "tcp", "snk", "sack", "rfc")
    body = [
        f"global ns n {names['packets']} {names['interarrival']}",
        f"if {{[$ns now] >= {_num(until)}}} {{ return }}",
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
    first = f"[expr {{{_num(flow.start_s)} + [${names['interarrival']} value]}}]"
    lines.append(f'$ns at {first} "tfrclab_short_{k}"')


def _tcp_agents(
    flow: FlowPlan, src: str, snk: str, default_variant: str, default_preset: str
) -> list[str]:
    """Tcl creating the TCP agent ``src`` and its sink ``snk`` with the flow's knobs."""
    _tcp_checks(flow, default_variant, default_preset)
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
        ("syn_", _b(knobs["syn"])),
        ("delay_growth_", _b(knobs["delay_growth"])),
        ("tcpTick_", _num(_secs(knobs["tick"]))),
        ("minrto_", _num(_secs(knobs["min_rto"]))),
        ("maxrto_", _num(_secs(knobs["max_rto"]))),
        ("rtxcur_init_", _num(_secs(knobs["initial_rto"]))),
        ("rfc2988_", _b(knobs["rfc2988"])),
        ("useHeaders_", _b(knobs["use_headers"] and variant != "vegas")),
        ("tcpip_base_hdr_size_", int(t.get("header_size", 40))),
        ("singledup_", 1 if knobs["limited_transmit"] else 0),
        ("precisionReduce_", _b(knobs["precision_reduce"])),
        ("overhead_", _num(_secs(t.get("overhead", 0.0)))),
        ("maxcwnd_", int(t.get("max_cwnd", 0))),
        ("increase_num_", _num(float(t.get("increase", 1.0)))),
        ("decrease_num_", _num(float(t.get("decrease", 0.5)))),
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
            ("v_alpha_", _num(float(t.get("vegas_alpha", 1)))),
            ("v_beta_", _num(float(t.get("vegas_beta", 3)))),
            ("v_gamma_", _num(float(t.get("vegas_gamma", 1)))),
        ]
    lines = [f"set {src} [new {agent}]"]
    lines += [f"${src} set {name} {value}" for name, value in settings]
    lines.append(f"set {snk} [new {sink}]")
    lines.append(f"${snk} set packetSize_ {int(t.get('ack_size', 40))}")
    if variant == "sack":
        lines.append(f"${snk} set maxSackBlocks_ {int(t.get('max_sack_blocks', 3))}")
    if delayed:
        lines.append(f"${snk} set interval_ {_num(_secs(t.get('ack_interval', '100ms')))}")
    return lines


def _tcp_checks(flow: FlowPlan, default_variant: str, default_preset: str) -> None:
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


def _secs(value: Any) -> float:
    return duration_s(value) if isinstance(value, str) else float(value)


def _tfrc(flow: FlowPlan, lines: list[str]) -> None:
    """ns-2.35 Agent/TFRC + Agent/TFRCSink as the floyd2000 preset (docs/tfrc.md)."""
    t = flow.table
    refusals = Refusals()
    if t.get("preset", "rfc5348") != "floyd2000":
        refusals.refuse(f"{flow.path}.preset: only floyd2000 (ns-2's own TFRC) is exported")
    for key in t:
        if key in _COMMON_KEYS or key in _TFRC_MAPPED:
            continue
        if key not in _TFRC_FIXED:
            refusals.refuse(f"{flow.path}.{key}: has no ns-2 equivalent in the export")
            continue
        fixed = _TFRC_FIXED[key]
        value = t[key]
        same = (
            size_bytes(value) == size_bytes(t.get("size", 1000))
            if key == "segment_size"
            else _secs(value) == _secs(fixed)
            if key in ("initial_nofeedback", "scheduling_granularity")
            else value == fixed
        )
        if not same:
            refusals.refuse(f"{flow.path}.{key}: ns-2's TFRC has no knob for it (needs {fixed!r})")
    if t.get("sqrt_rtt_ewma_q", t.get("rtt_ewma_q", 0.95)) != t.get("rtt_ewma_q", 0.95):
        refusals.refuse(f"{flow.path}.sqrt_rtt_ewma_q: ns-2 uses df_ for both averages")
    refusals.raise_any()
    k = flow.index
    discount = t.get("discount_threshold", 0.5)
    init_rate = t.get("rate_before_feedback", "300Bps")
    if init_rate == "one_packet_per_second":
        init_bytes = float(size_bytes(t.get("size", 1000)))
    else:
        init_bytes = rate_bps(init_rate) / 8.0
    settings = [
        ("fid_", k),
        ("packetSize_", size_bytes(t.get("size", 1000))),
        ("useHeaders_", "false"),
        ("df_", _num(float(t.get("rtt_ewma_q", 0.95)))),
        ("tcp_tick_", _num(_secs(t.get("rto_granularity", "100ms")))),
        ("minrto_", _num(_secs(t.get("rto_min", "0s")))),
        ("InitRate_", _num(init_bytes)),
        ("bval_", _num(float(t.get("b", 1)))),
        ("ca_", 1 if t.get("oscillation_prevention", True) else 0),
        # tfrc.cc: each gap times 1 + overhead_·(2U - 1), U uniform: netsim's dither.
        ("overhead_", _num(float(t.get("dither_fraction", 0)))),
        ("ecn_", 1 if t.get("ecn", False) else 0),
        ("ssmult_", 2),
        ("rate_init_", 2),
        ("rate_init_option_", 2),
        ("slow_increase_", 1),
        ("conservative_", 0),
        ("voip_", 0),
        ("SndrType_", 0),
        ("maxHeavyRounds_", 0),
        ("idleFix_", "true"),
    ]
    sink = [
        ("packetSize_", size_bytes(t.get("feedback_size", 40))),
        ("numPkts_", int(t.get("ndupack", 1))),
        ("discount_", 0 if discount == "none" else 1),
        ("minDiscountRatio_", _num(0.5 if discount == "none" else float(discount))),
        ("smooth_", 1),
        ("algo_", 1),
        ("NumFeedback_", 1),
        ("AdjustHistoryAfterSS_", 1),
        # tfrc-sink.cc: -1 is DEFAULT_NUMSAMPLES, 8 (scripts as before for the default).
        ("NumSamples_", -1 if int(t.get("loss_intervals", 8)) == 8 else int(t["loss_intervals"])),
        ("ShortIntervals_", 0),
        ("PreciseLoss_", 1),
    ]
    lines.append(f"set src({k}) [new Agent/TFRC]")
    lines += [f"$src({k}) set {name} {value}" for name, value in settings]
    lines.append(f"set snk({k}) [new Agent/TFRCSink]")
    lines += [f"$snk({k}) set {name} {value}" for name, value in sink]
    lines.append(f"set app({k}) $src({k})")


def _udp_source(flow: FlowPlan, lines: list[str]) -> None:
    """CBR, Pareto or exponential ON/OFF traffic over Agent/UDP into Agent/Null."""
    t = flow.table
    k = flow.index
    size = size_bytes(t.get("size", 1000))
    if flow.kind == "cbr":
        _refuse_unknown(flow, _COMMON_KEYS | {"rate", "size", "random", "max_packets"})
        app = [
            ("rate_", _num(rate_bps(t["rate"]))),
            ("packetSize_", size),
            ("random_", 1 if t.get("random", False) else 0),
            ("maxpkts_", int(t.get("max_packets", 268435456))),
        ]
        cls = "Application/Traffic/CBR"
    else:
        keys = {"rate", "size", "on", "off"} | ({"shape"} if flow.kind == "pareto" else set())
        _refuse_unknown(flow, _COMMON_KEYS | keys)
        app = [
            ("rate_", _num(rate_bps(t.get("rate", "64kbps")))),
            ("packetSize_", size),
            ("burst_time_", _num(_secs(t.get("on", "500ms")))),
            ("idle_time_", _num(_secs(t.get("off", "500ms")))),
        ]
        if flow.kind == "pareto":
            app.append(("shape_", _num(float(t.get("shape", 1.5)))))
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


def _periods(flow: FlowPlan, duration: float) -> list[tuple[float, float | None]]:
    """The flow's (start, stop) periods: one, or its ON periods (docs/scenario.md).

    Random ON/OFF periods are netsim's own draws (``FlowPlan.on_periods``), so both simulators
    switch the flow at the same times; a stop (fixed or drawn) cuts the period it falls in.
    """
    end = duration if flow.stop_s is None else min(duration, flow.stop_s)
    if flow.on_periods is not None:
        out: list[tuple[float, float | None]] = []
        for on, off in flow.on_periods:
            if on >= end:
                break
            out.append((on, off if off < end else flow.stop_s))
        return out
    on_off = flow.table.get("on_off")
    if on_off is None:
        return [(flow.start_s, flow.stop_s)]
    on_s, off_s = duration_s(on_off["on"]), duration_s(on_off["off"])
    periods: list[tuple[float, float | None]] = []
    t = flow.start_s
    while t < end:
        periods.append((t, min(t + on_s, end) if t + on_s < duration else flow.stop_s))
        t += on_s + off_s
    return periods


_WEB_KEYS = {"model", "inter_page", "objects_per_page", "inter_object", "object_size", "pages",
             "inter_page_from", "load", "share"}  # fmt: skip


def _ranvar(name: str, variable: tuple[str, tuple[float, ...]], path: str) -> list[str]:
    """Tcl creating ns-2's RandomVariable ``name`` (tools/ranvar.cc) for a netsim variable.

    ns-2's Pareto and ParetoII take the mean (``avg_``): Pareto's scale is avg·(shape-1)/shape,
    ParetoII's avg·(shape-1) (ranvar.cc), so the mean is written back from netsim's scale.
    """
    kind, values = variable
    if kind == "constant":
        settings = [("val_", values[0])]
        cls = "Constant"
    elif kind == "uniform":
        settings = [("min_", values[0]), ("max_", values[1])]
        cls = "Uniform"
    elif kind == "exponential":
        settings = [("avg_", values[0])]
        cls = "Exponential"
    elif kind in ("pareto", "pareto2"):
        scale, shape = values
        if shape <= 1:
            raise ExportError(f"{path}.shape: ns-2's {kind} takes a mean, which needs shape > 1")
        mean = scale * shape / (shape - 1) if kind == "pareto" else scale / (shape - 1)
        settings = [("avg_", mean), ("shape_", shape)]
        cls = "Pareto" if kind == "pareto" else "ParetoII"
    elif kind == "lognormal":
        settings = [("avg_", values[0]), ("std_", values[1])]
        cls = "LogNormal"
    elif kind == "weibull":
        settings = [("scale_", values[0]), ("shape_", values[1])]
        cls = "Weibull"
    else:
        raise ExportError(f"{path}: {kind!r} has no ns-2 RandomVariable")
    lines = [f"set {name} [new RandomVariable/{cls}]"]
    lines += [f"${name} set {key} {_num(float(value))}" for key, value in settings]
    return lines


def _web(flow: FlowPlan, index: Mapping[str, int], lines: list[str]) -> None:
    """One web session as its own ``PagePool/WebTraf`` (tcl/webcache/webtraf.tcl).

    One pool per netsim flow, with one client (the flow's sink node), one server (its source)
    and one session: netsim binds a session to its server (docs/web.md). The pool's TCP agents
    come from per-pool ``alloc-tcp``/``alloc-tcp-sink`` procs with the flow's TCP knobs and
    ``fid_`` the flow's index (``FID_ASSIGNING_MODE_`` 2 keeps it on every connection). The
    distributions are netsim's as built (``share``/``load`` already in the inter-page mean).
    """
    refusals = Refusals()
    with refusals.part():
        _refuse_unknown(flow, _TCP_KEYS | _WEB_KEYS)
    with refusals.part():
        _tcp_checks(flow, "reno", "ns2_2000")
    refusals.raise_any()
    assert flow.web is not None
    k = flow.index
    agents = _tcp_agents(flow, "tcp", "snk", "reno", "ns2_2000")

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
        lines += _ranvar(name, flow.web[key], f"{flow.path}.{key}")
        names.append(f"${name}")
    pages = int(flow.table.get("pages", _NEVER))
    lines.append(f"set web_args({k}) [list {pages} {' '.join(names)}]")
    option = 1 if flow.table.get("inter_page_from", _web_from_default(flow)) == "end" else 0
    lines.append(f"set web_option({k}) {option}")


def _web_from_default(flow: FlowPlan) -> str:
    """The default ``inter_page_from`` in netsim: "start" with a load or share, else "end"."""
    return "start" if ("load" in flow.table or "share" in flow.table) else "end"


def _ping(flow: FlowPlan, lines: list[str]) -> None:
    """Agent/Ping at both ends (apps/ping.cc): ``send`` every interval, echoes back at once.

    The echo is the sink agent's own packet (``allocpkt``), so both agents get the size. The
    source's ``recv`` (RTT in ms, one decimal) adds to per-flow counters the samples print.
    """
    _refuse_unknown(flow, _COMMON_KEYS | {"size", "interval", "timeout"})
    k = flow.index
    size = size_bytes(flow.table.get("size", "64B"))
    for agent in ("src", "snk"):
        lines.append(f"set {agent}({k}) [new Agent/Ping]")
        lines.append(f"${agent}({k}) set packetSize_ {size}")
        lines.append(f"${agent}({k}) set fid_ {k}")
    lines.append(f'$src({k}) proc recv {{from rtt}} "tfrclab_echo {k} \\$rtt"')
    lines.append(f"set ping_sent({k}) 0; set ping_echoes({k}) 0; set ping_rtt({k}) 0.0")


# -- losses ----------------------------------------------------------------------------------


def _loss_model(loss: LossPlan, table: Mapping[str, Any], name: str, path: str) -> list[str]:
    """Tcl creating one ErrorModel (queue/errmodel.cc) in packets, named ``name``."""
    kind = table.get("kind")
    if kind == "bernoulli":
        # ErrorModel with a uniform ranvar drops when u < rate_ (its own RNG stream).
        seed_var = f"rng_{name}"
        return [
            f"set {name} [new ErrorModel]",
            f"${name} unit pkt",
            f"${name} set rate_ {_num(float(table['p']))}",
            f"set {seed_var} [new RNG]",
            f"${seed_var} seed [expr {{$tfrclab_seed * 1000 + {loss.index * 37 + len(name)}}}]",
            f"set rv_{name} [new RandomVariable/Uniform]",
            f"$rv_{name} use-rng ${seed_var}",
            f"${name} ranvar $rv_{name}",
        ]
    if kind == "periodic":
        # PeriodicErrorModel counts arrivals from 1: the first drop at cnt_ >= offset_, then
        # every period_-th. tfrclab drops index n (from 0) when n mod every = phase mod every.
        every = int(table["every"])
        phase = int(table.get("phase", 0)) % every
        return [
            f"set {name} [new ErrorModel/Periodic]",
            f"${name} unit pkt",
            f"${name} set period_ {every}",
            f"${name} set offset_ {phase + 1}",
            f"${name} set burstlen_ 0",
            f"${name} set default_drop_ 0",
        ]
    if kind == "gilbert_elliott" and table.get("sojourn") == "time":
        seed = f"$tfrclab_seed * 1000 + {loss.index * 37 + len(name)}"
        return two_state_tcl(table, name, seed, path)
    if kind == "list":
        # ListErrorModel counts arrivals from 0 and needs its list sorted.
        indices = " ".join(str(int(i)) for i in sorted(table["indices"]))
        return [
            f"set {name} [new ErrorModel/List]",
            f"${name} unit pkt",
            f"${name} droplist {{{indices}}}",
        ]
    raise ExportError(f"{path}.kind: {kind!r} has no ns-2 error model in the export")


def _retire(table: Mapping[str, Any], name: str, path: str) -> str:
    """Tcl that stops an inserted model from dropping (a schedule's step ends)."""
    kind = table.get("kind")
    if kind == "bernoulli":
        return f"${name} set enable_ 0"
    if kind == "periodic":
        # PeriodicErrorModel::corrupt ignores enable_; a period it never reaches retires it.
        return f"${name} set period_ {_NEVER}; ${name} set offset_ {_NEVER}"
    raise ExportError(f"{path}.kind: {kind!r} cannot end inside a schedule in ns-2")


def _losses(plan: Plan, lines: list[str], refusals: Refusals) -> None:
    """Loss models at the link head (before the queue), after the link's in-snoop.

    What ns-2 cannot run goes to ``refusals``, every loss model checked.
    """
    on_link: dict[int, list[LossPlan]] = {}
    for loss in plan.losses:
        on_link.setdefault(loss.link, []).append(loss)
    for link_index, losses in on_link.items():
        link = plan.links[link_index]
        per_flow: dict[int, int] = {}
        for loss in losses:
            path = f"losses[{loss.index}]"
            flow_name = loss.table.get("flow")
            if flow_name is not None:
                others = [
                    f.name
                    for f in plan.flows
                    if f.name != flow_name
                    and (link_index in f.data_links or link_index in f.reply_links)
                ]
                if others:
                    with refusals.part():
                        per_flow[loss.index] = _flow_filter(plan, loss, link, path)
            if loss.table.get("kind") == "schedule" and len(losses) > 1:
                refusals.refuse(f"{path}: a schedule must be the only loss model on its link")
        # The first model in file order must see packets first: insert the last one first.
        for loss in reversed(losses):
            with refusals.part():
                _insert(loss, link_index, lines, refusals, per_flow.get(loss.index))


_FID_BOTH_WAYS = ("tcp", "gaimd", "rap", "ping")
"""Flow kinds whose packets back carry the flow's ``fid_`` in the export (tcp-sink.cc copies the
data packet's flow id into its ACK; RAP and ping agents get the flow's ``fid_`` at both ends)."""


def _flow_filter(plan: Plan, loss: LossPlan, link: LinkPlan, path: str) -> int:
    """The flow id an ns-2 ``ErrorModule Fid`` must pass to a flow's loss model on a shared link.

    netsim's ``flow`` key lets only that flow's packets, both ways, meet the model; ns-2's
    ``ErrorModule`` (tcl/lib/ns-errmodel.tcl) classifies by flow id and passes the others
    untouched and undrawn. Its packets back are classified too only where they carry the flow's
    id (:data:`_FID_BOTH_WAYS`); a schedule's steps are not wrapped.

    Raises:
        ExportError: for a schedule, or a flow whose packets back cross the link without its id.
    """
    flow = next(f for f in plan.flows if f.name == loss.table["flow"])
    if loss.table.get("kind") == "schedule":
        raise ExportError(
            f"{path}.flow: a schedule for one flow on {link.name!r}, which other flows cross, "
            "is not exported"
        )
    if link.index in flow.reply_links and flow.kind not in _FID_BOTH_WAYS:
        raise ExportError(
            f"{path}.flow: {flow.name!r}'s packets back cross {link.name!r} without its flow id "
            "in ns-2, so a per-flow error module cannot find them"
        )
    return flow.index


def _insert(
    loss: LossPlan, link_index: int, lines: list[str], refusals: Refusals, fid: int | None = None
) -> None:
    """Tcl creating one ``[[losses]]`` table's model(s) and inserting it on its link.

    With ``fid`` the model sits in an ``ErrorModule Fid`` that hands it only that flow's
    packets and passes the others (:func:`_flow_filter`).
    """
    path = f"losses[{loss.index}]"
    if loss.table.get("kind") != "schedule":
        name = f"em{loss.index}"
        lines += _loss_model(loss, loss.table, name, path)
        if fid is not None:
            lines += [
                f"set fem{loss.index} [new ErrorModule Fid]",
                f"$fem{loss.index} insert ${name}",
                f"$fem{loss.index} bind ${name} {fid}",
                f"$fem{loss.index} default pass",
            ]
            name = f"fem{loss.index}"
        lines.append(f"tfrclab_insert_loss {link_index} ${name}")
        return
    steps = loss.table.get("steps", [])
    previous: tuple[Mapping[str, Any], str, str] | None = None
    for j, step in enumerate(steps):
        name = f"em{loss.index}_{j}"
        step_path = f"{path}.steps[{j}]"
        with refusals.part():
            if step.get("sojourn") == "time":
                # ns-2's TwoState timer starts at setup, not at the step's start.
                raise ExportError(
                    f"{step_path}.sojourn: ns-2's ErrorModel/TwoState in time starts its "
                    "stays when the script is set up, not at a schedule step"
                )
            lines += _loss_model(loss, step, name, step_path)
            at = duration_s(step["at"])
            action = f"tfrclab_insert_loss {link_index} ${name}"
            if previous is not None:
                action = _retire(*previous) + "; " + action
            if at == 0:
                lines.append(action)
            else:
                lines.append(f'$ns at {_num(at)} "{action}"')
        previous = (step, name, step_path)


# -- the script ------------------------------------------------------------------------------

_PRELUDE = """\
# Monitors: a flow monitor (QueueMonitor/ED/Flowmon, classified by fid) on each monitored link,
# with an Integrator for the time integral of its waiting packets.
proc tfrclab_monitor {i} {
    global ns n lnk fm integ
    set fm($i) [$ns makeflowmon Fid]
    set integ($i) [new Integrator]
    $fm($i) set-pkts-integrator $integ($i)
    $ns attach-fmon $lnk($i) $fm($i)
}
# A loss model goes right after the link's in-snoop (so the monitor counts its drops as
# arrivals and drops), or at the link head (ns-2 `lossmodel`: before the queue).
proc tfrclab_insert_loss {i em} {
    global lnk
    set link $lnk($i)
    if {[$link info vars snoopIn_] != ""} {
        set snoop [$link set snoopIn_]
        $em target [$snoop target]
        $snoop target $em
    } else {
        $link add-to-head $em
    }
    $em drop-target [$link set drophead_]
}
# A ping source sends while its period lasts (ping_until), one probe every interval.
proc tfrclab_ping {k dt} {
    global ns src ping_sent ping_until
    if {[$ns now] >= $ping_until($k)} { return }
    $src($k) send
    incr ping_sent($k)
    $ns at [expr {[$ns now] + $dt}] "tfrclab_ping $k $dt"
}
proc tfrclab_echo {k rtt} {
    global ping_echoes ping_rtt
    incr ping_echoes($k)
    set ping_rtt($k) [expr {$ping_rtt($k) + $rtt}]
}
# A web session starts at its flow's start (create-session's launch time).
proc tfrclab_web {k at} {
    global web web_args web_option
    eval $web($k) create-session 0 [lindex $web_args($k) 0] $at [lrange $web_args($k) 1 end]
    $web($k) set-interPageOption $web_option($k)
}
proc tfrclab_sample {k} {
    global ns fm integ flow_links series_links ping_sent ping_echoes ping_rtt
    set now [$ns now]
    foreach i $flow_links {
        set out "F $k $i"
        foreach f [$fm($i) flows] {
            set id [$f set flowid_]
            append out " $id [$f set barrivals_] [$f set bdepartures_] [$f set parrivals_]"
        }
        puts $out
    }
    foreach p [array names ping_sent] {
        puts "P $k $p $ping_sent($p) $ping_echoes($p) $ping_rtt($p)"
    }
    foreach i $series_links {
        set q $integ($i)
        set area [expr {[$q set sum_] + [$q set lasty_] * ($now - [$q set lastx_])}]
        set m $fm($i)
        set counts "[$m set parrivals_] [$m set pdepartures_] [$m set pdrops_]"
        puts "L $k $i $counts [$m set bdepartures_] $area"
    }
}
"""


def _manual_routes(plan: Plan, index: Mapping[str, int]) -> list[str]:
    """Tcl installing :attr:`Plan.manual_routes` as ns-2 Manual routes (tcl/lib/ns-rtmodule.tcl).

    At every node of a path, packets for the path's last node take the path's next link:
    ``[$node get-module Manual] add-route <destination's address> [$link head]``. netsim routes
    by destination too (docs/scenario.md, "Routing"), so every (node, destination) has one link.
    """
    chosen: dict[tuple[int, int], int] = {}
    for path in plan.manual_routes:
        destination = index[plan.links[path[-1]].dst]
        for link_index in path:
            key = (index[plan.links[link_index].src], destination)
            if chosen.setdefault(key, link_index) != link_index:
                raise ExportError(
                    "topology.routes: two paths leave node "
                    f"{plan.nodes[key[0]]!r} for {plan.nodes[destination]!r} by different links"
                )
    return [
        f"[$n({node}) get-module Manual] add-route [$n({destination}) node-addr] "
        f"[$lnk({link_index}) head]"
        for (node, destination), link_index in chosen.items()
    ]


def _flow(plan: Plan, flow: FlowPlan, index: Mapping[str, int], lines: list[str]) -> None:
    """Tcl for one flow: its agents, their attachment, and its start and stop times.

    Raises:
        ExportError: naming every key of the flow ns-2 cannot run as tfrclab does.
    """
    lines.append(f"# flow {flow.index}: {flow.name} ({flow.kind})")
    k = flow.index
    if flow.kind == "tcp":
        _tcp(flow, lines)
    elif flow.kind == "gaimd":
        _gaimd(flow, lines)
    elif flow.kind == "rap":
        _rap(plan, flow, lines)
    elif flow.kind == "short_tcp":
        _short_tcp(plan, flow, index, lines)
        return
    elif flow.kind == "tfrc":
        _tfrc(flow, lines)
    elif flow.kind in ("cbr", "pareto", "exponential"):
        _udp_source(flow, lines)
    elif flow.kind in ("web", "ping"):
        refusals = Refusals()
        for key in ("stop", "on_off"):
            if key in flow.table:
                refusals.refuse(f"{flow.path}.{key}: not exported for {flow.kind} flows")
        with refusals.part():
            if flow.kind == "web":
                _web(flow, index, lines)
            else:
                _ping(flow, lines)
        refusals.raise_any()
        if flow.kind == "web":
            lines.append(f"tfrclab_web {k} {_num(flow.start_s)}")
            return
        lines.append(f"$ns attach-agent $n({index[flow.src]}) $src({k})")
        lines.append(f"$ns attach-agent $n({index[flow.dst]}) $snk({k})")
        lines.append(f"$ns connect $src({k}) $snk({k})")
        lines.append(f"set ping_until({k}) {_num(plan.duration_s)}")
        interval = duration_s(flow.table.get("interval", "100ms"))
        if flow.start_s < plan.duration_s:
            lines.append(f'$ns at {_num(flow.start_s)} "tfrclab_ping {k} {_num(interval)}"')
        return
    else:
        raise ExportError(f"{flow.path}.kind: {flow.kind!r} has no ns-2 export")
    lines.append(f"$ns attach-agent $n({index[flow.src]}) $src({k})")
    lines.append(f"$ns attach-agent $n({index[flow.dst]}) $snk({k})")
    lines.append(f"$ns connect $src({k}) $snk({k})")
    max_packets = flow.table.get("max_packets") if flow.kind in (*_TCP_KINDS, "rap") else None
    # rap.cc's advanceby counts the packets to send, as a TCP application's produce does.
    verb = "advanceby" if flow.kind == "rap" else "produce"
    start_cmd = f"$app({k}) {verb} {int(max_packets)}" if max_packets else f"$app({k}) start"
    for start, stop in _periods(flow, plan.duration_s):
        if start < plan.duration_s:
            lines.append(f'$ns at {_num(start)} "{start_cmd}"')
        if stop is not None and stop < plan.duration_s:
            lines.append(f'$ns at {_num(stop)} "$app({k}) stop"')


def export_tcl(
    plan: Plan,
    sample_s: float | None = None,
    drop_trace: bool = False,
    *,
    flow_monitors: bool = True,
    run: bool = True,
) -> str:
    """The ns-2.35 Tcl script of ``plan`` (see the module documentation).

    The counters are printed every ``sample_s`` seconds (default: the scenario's monitor bin);
    a coarser sample keeps ns-2's Tcl sampling cheap on long runs. With ``drop_trace`` every
    drop at the primary link is printed too (``d`` lines of ns-2's trace format), from which
    :mod:`tfrclab.ns2.loss_events` groups each flow's losses into loss events.

    Two variants serve timing (scripts/bench_peers.py): without ``flow_monitors`` only the
    links whose series are kept (the bottleneck) and those with a loss model get a monitor,
    and no per-flow counters are printed, as a script that watches the bottleneck alone;
    without ``run`` the final ``$ns run`` is left out, so ns-2 builds the network and exits,
    which times its set-up.

    Every part of the scenario is checked before anything is refused: the error lists each
    part ns-2 cannot run (with the routing :func:`~tfrclab.ns2.plan.resolve` left in
    :attr:`Plan.refusals`), in the keys the scenario wrote.

    Raises:
        ExportError: naming every part of the scenario ns-2 cannot run as tfrclab does.
    """
    refusals = Refusals(plan.refusals)
    lines: list[str] = [
        f"# {plan.scenario.name or 'scenario'}: `tfrclab export ns2`, seed {plan.seed}.",
        "# Every knob is set explicitly; per-host delays and start times are netsim's draws.",
        "set ns [new Simulator]",
        "PagePool/WebTraf set FID_ASSIGNING_MODE_ 2",
        f"set tfrclab_seed {plan.seed}",
        "global defaultRNG",
        f"$defaultRNG seed {plan.seed + 1}",
        _PRELUDE,
    ]
    index = {name: i for i, name in enumerate(plan.nodes)}
    if plan.manual_routes:
        # ns-2's Manual routing (tcl/rtglib/route-proto.tcl): the nodes get a hash classifier
        # by destination, filled below with netsim's own paths; before the nodes are made.
        lines.append("$ns rtproto Manual")
    for name, i in index.items():
        lines.append(f"set n({i}) [$ns node] ;# {name}")
    for link in plan.links:
        queue: tuple[str, list[str]] = ("DropTail", [])
        with refusals.part():
            queue = _queue(link)
        cls, settings = queue
        a, b = index[link.src], index[link.dst]
        lines.append(
            f"$ns simplex-link $n({a}) $n({b}) {link.rate_bps} {_num(link.delay_s)} {cls}"
            f" ;# {link.name}"
        )
        lines.append(f"set lnk({link.index}) [$ns link $n({a}) $n({b})]")
        lines += [f"[$lnk({link.index}) queue] set {s}" for s in settings]
    with refusals.part():
        lines += _manual_routes(plan, index)
    flow_links, series_links = monitored_links(plan)
    if not flow_monitors:
        flow_links = []
    loss_links = sorted({loss.link for loss in plan.losses})
    monitors = sorted(set(flow_links) | set(series_links) | set(loss_links))
    lines.append(f"set flow_links {{{' '.join(map(str, flow_links))}}}")
    lines.append(f"set series_links {{{' '.join(map(str, series_links))}}}")
    for i in monitors:
        lines.append(f"tfrclab_monitor {i}")
    _losses(plan, lines, refusals)
    for flow in plan.flows:
        with refusals.part():
            _flow(plan, flow, index, lines)
    refusals.raise_any()
    if drop_trace:
        # Every queue drop at the primary link, as ns-2's Drop trace writes it (trace/trace.cc),
        # on standard output: between the queue and its drop target (the flow monitor's drop
        # snoop, which attach-fmon made the queue's drop target).
        link = plan.links[plan.primary_link]
        a, b = index[link.src], index[link.dst]
        lines.append(f"set drpT [$ns create-trace Drop stdout $n({a}) $n({b})]")
        lines.append(f"set q [$lnk({link.index}) queue]")
        lines.append("$drpT target [$q drop-target]; $q drop-target $drpT")
    counters = " ".join(
        f"{flow.index}" for flow in plan.flows if flow.kind in _TCP_KINDS and not flow.on_periods
    )
    step = plan.bin_s if sample_s is None else sample_s
    bins = math.ceil(plan.duration_s / step - 1e-9)
    # At the end, each long-lived TCP agent's counters (tcp.cc): data packets, retransmitted
    # packets, timeouts, window cuts (slowdown() calls: fast retransmits and timeouts).
    lines.append(f"proc tfrclab_counters {{}} {{ global src; foreach k {{{counters}}} {{")
    lines.append(
        '    puts "T $k [$src($k) set ndatapack_] [$src($k) set nrexmitpack_] '
        '[$src($k) set nrexmit_] [$src($k) set ncwndcuts_]" } }'
    )
    lines.append(f"for {{set k 1}} {{$k < {bins}}} {{incr k}} {{")
    lines.append(f'    $ns at [expr {{$k * {_num(step)}}}] "tfrclab_sample $k"')
    lines.append("}")
    lines.append(
        f'$ns at {_num(plan.duration_s)} "tfrclab_sample {bins}; tfrclab_counters; exit 0"'
    )
    lines.append(f'puts "H {_num(step)} {bins} {_num(plan.duration_s)}"')
    if run:
        lines.append("$ns run")
    return "\n".join(lines) + "\n"
