"""The whole ns-2.35 script: nodes, links and queues, routes, monitors, flows, sampling."""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping

from tfrclab.ns2.export.agent_state import agent_state_tcl
from tfrclab.ns2.export.losses import insert_losses
from tfrclab.ns2.export.queues import queue_settings
from tfrclab.ns2.export.rap import rap_flow
from tfrclab.ns2.export.sources import ping_flow, udp_source_flow
from tfrclab.ns2.export.tcl import tcl_number
from tfrclab.ns2.export.tcp import TCP_KINDS, gaimd_flow, short_tcp_flow, tcp_flow
from tfrclab.ns2.export.tfrc import tfrc_flow
from tfrclab.ns2.export.web import web_flow
from tfrclab.ns2.plan import ExportError, FlowPlan, Plan, Refusals
from tfrclab.ns2.values import duration_s

__all__ = ["export_tcl", "monitored_links"]


def monitored_links(plan: Plan) -> tuple[list[int], list[int]]:
    """The links whose per-flow bytes (first and last links of flows) and link series are kept."""
    flow_links = {
        index for flow in plan.flows for index in (flow.data_links[0], flow.data_links[-1])
    }
    link_series = sorted({link.index for link in plan.links if link.binned} | {plan.primary_link})
    return sorted(flow_links), link_series


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
        tcp_flow(flow, lines)
    elif flow.kind == "gaimd":
        gaimd_flow(flow, lines)
    elif flow.kind == "rap":
        rap_flow(plan, flow, lines)
    elif flow.kind == "short_tcp":
        short_tcp_flow(plan, flow, index, lines)
        return
    elif flow.kind == "tfrc":
        tfrc_flow(flow, lines)
    elif flow.kind in ("cbr", "pareto", "exponential"):
        udp_source_flow(flow, lines)
    elif flow.kind in ("web", "ping"):
        refusals = Refusals()
        for key in ("stop", "on_off"):
            if key in flow.table:
                refusals.refuse(f"{flow.path}.{key}: not exported for {flow.kind} flows")
        with refusals.part():
            if flow.kind == "web":
                web_flow(flow, index, lines)
            else:
                ping_flow(flow, lines)
        refusals.raise_any()
        if flow.kind == "web":
            lines.append(f"tfrclab_web {k} {tcl_number(flow.start_s)}")
            return
        lines.append(f"$ns attach-agent $n({index[flow.src]}) $src({k})")
        lines.append(f"$ns attach-agent $n({index[flow.dst]}) $snk({k})")
        lines.append(f"$ns connect $src({k}) $snk({k})")
        lines.append(f"set ping_until({k}) {tcl_number(plan.duration_s)}")
        interval = duration_s(flow.table.get("interval", "100ms"))
        if flow.start_s < plan.duration_s:
            lines.append(
                f'$ns at {tcl_number(flow.start_s)} "tfrclab_ping {k} {tcl_number(interval)}"'
            )
        return
    else:
        raise ExportError(f"{flow.path}.kind: {flow.kind!r} has no ns-2 export")
    lines.append(f"$ns attach-agent $n({index[flow.src]}) $src({k})")
    lines.append(f"$ns attach-agent $n({index[flow.dst]}) $snk({k})")
    lines.append(f"$ns connect $src({k}) $snk({k})")
    max_packets = flow.table.get("max_packets") if flow.kind in (*TCP_KINDS, "rap") else None
    # rap.cc's advanceby counts the packets to send, as a TCP application's produce does.
    verb = "advanceby" if flow.kind == "rap" else "produce"
    start_cmd = f"$app({k}) {verb} {int(max_packets)}" if max_packets else f"$app({k}) start"
    for start, stop in _periods(flow, plan.duration_s):
        if start < plan.duration_s:
            lines.append(f'$ns at {tcl_number(start)} "{start_cmd}"')
        if stop is not None and stop < plan.duration_s:
            lines.append(f'$ns at {tcl_number(stop)} "$app({k}) stop"')


def export_tcl(
    plan: Plan,
    sample_s: float | None = None,
    drop_trace: bool = False,
    *,
    agent_state: Collection[int] = (),
    flow_monitors: bool = True,
    run: bool = True,
) -> str:
    """The ns-2.35 Tcl script of ``plan`` (see the module documentation).

    The counters are printed every ``sample_s`` seconds (default: the scenario's monitor bin);
    a coarser sample keeps ns-2's Tcl sampling cheap on long runs. With ``drop_trace`` every
    drop at the primary link, by its queue or its loss models, is printed too (``d`` lines of
    ns-2's trace format), from which :mod:`tfrclab.ns2.loss_events` groups each flow's losses
    into loss events. The flows of ``agent_state`` (indices) print their agents' protocol state
    (:mod:`tfrclab.ns2.export.agent_state`): such a script must run with C's standard output
    line-buffered.

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
            queue = queue_settings(link)
        cls, settings = queue
        a, b = index[link.src], index[link.dst]
        lines.append(
            f"$ns simplex-link $n({a}) $n({b}) {link.rate_bps} {tcl_number(link.delay_s)} {cls}"
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
    insert_losses(plan, lines, refusals)
    for flow in plan.flows:
        with refusals.part():
            _flow(plan, flow, index, lines)
    if agent_state:
        with refusals.part():
            lines += agent_state_tcl(plan, agent_state)
    refusals.raise_any()
    if drop_trace:
        # Every drop at the primary link, as ns-2's Drop trace writes it (trace/trace.cc), on
        # standard output. The error models inserted above drop to the link's drop head
        # (tfrclab_insert_loss); the queue drops there too unless attach-fmon made the flow
        # monitor's drop snoop its drop target (ns-lib.tcl), which is then also the drop
        # head's target (attach-monitors, ns-link.tcl). The trace goes in front of that.
        link = plan.links[plan.primary_link]
        a, b = index[link.src], index[link.dst]
        lines.append(f"set drpT [$ns create-trace Drop stdout $n({a}) $n({b})]")
        lines.append(f"set q [$lnk({link.index}) queue]; set dh [$lnk({link.index}) set drophead_]")
        lines.append("$drpT target [$dh target]; $dh target $drpT")
        lines.append("if {[$q drop-target] != $dh} { $q drop-target $drpT }")
    counters = " ".join(
        f"{flow.index}" for flow in plan.flows if flow.kind in TCP_KINDS and not flow.on_periods
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
    state = "; tfrclab_tcp_state $k" if agent_state else ""
    lines.append(f'    $ns at [expr {{$k * {tcl_number(step)}}}] "tfrclab_sample $k{state}"')
    lines.append("}")
    state = f"; tfrclab_tcp_state {bins}" if agent_state else ""
    lines.append(
        f'$ns at {tcl_number(plan.duration_s)} "tfrclab_sample {bins}{state}; tfrclab_counters; '
        'exit 0"'
    )
    lines.append(f'puts "H {tcl_number(step)} {bins} {tcl_number(plan.duration_s)}"')
    if run:
        lines.append("$ns run")
    return "\n".join(lines) + "\n"
