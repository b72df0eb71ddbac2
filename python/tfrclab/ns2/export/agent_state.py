"""Tcl that makes ns-2.35 print the protocol state of chosen flows' agents.

ns-2.35 keeps the state a reproduction reads (a TFRC receiver's loss event rate, a TFRC
sender's RTT, a TCP sender's RTT and RTO) in C++ members, most of them not bound to Tcl. What
it does offer:

- ``Agent/TFRCSink``'s ``printLoss_`` prints, on standard output, the loss event rate of every
  report it builds (``print_loss``: ``time: T loss_rate: P`` and ``time: T sample 0: N
  loss_rate: P``) and its five most recent loss intervals (``print_loss_all``: ``T: sample 0: a
  1: b 2: c 3: d 4: e``), tcp/tfrc-sink.cc;
- ``Agent/TFRC``'s ``printStatus_`` prints, for every report it receives, its rate and its
  rate times its RTT over the packet size (``time: T rate: X``, ``time: T packetrate: Y``),
  from which its RTT is ``Y x size / X`` (tcp/tfrc.cc, ``TfrcAgent::recv``);
- ``Agent/TCP`` binds ``rtt_``, ``srtt_``, ``rttvar_`` and ``backoff_`` (tcp/tcp.cc), read here
  once per sample: ``S <sample> <flow> <srtt s> <RTO s> <backoff>`` lines, the RTO being what
  ``rtt_timeout`` arms (``t_rtxcur_``, which is ``rtxcur_init_`` until the first RTT sample, at
  least ``minrto_``, times the backoff, at most ``maxrto_``).

Neither print names its flow. Each agent therefore gets a trace object of its own, whose
``src_`` and ``dst_`` are the flow's index (not node ids): in front of a TFRC receiver's output
(an ``Enque`` trace, ``+ t k k tcpFriendCtl ...`` written as each report leaves, right after
its prints) and in front of a TFRC sender's input (a ``Recv`` trace, ``r t k k ...`` written as
each report arrives, right before its prints). The lines come out in the order ns-2 makes them
only when both writers flush every line: the script sets Tcl's ``stdout`` to line buffering,
and ns-2 must run with C's standard output line-buffered too (``stdbuf -oL``;
:func:`tfrclab.ns2.crosscheck.run_ns2`'s ``line_buffered``). :mod:`tfrclab.ns2.agent_state`
reads it all back. None of it changes the simulation: trace objects only pass packets on, and
the prints draw no random numbers (a test compares the counters with and without).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from tfrclab.ns2.plan import ExportError, Plan
from tfrclab.ns2.values import size_bytes

__all__ = ["agent_state_tcl", "traced_flows"]

SAMPLER = """\
# Each traced TCP agent's SRTT and the RTO its timer arms (tcp.cc: rtt_update's t_rtxcur_, which
# is rtxcur_init_ until the first RTT sample, and rtt_timeout's floor, backoff and cap).
proc tfrclab_tcp_state {k} {
    global src tcp_state_flows
    foreach f $tcp_state_flows {
        set a $src($f)
        set tick [$a set tcpTick_]
        set sb [$a set T_SRTT_BITS]
        set srtt [$a set srtt_]
        if {[$a set rtt_] == 0} {
            set cur [$a set rtxcur_init_]
        } else {
            set shift [expr {[$a set rttvar_exp_] + $sb - [$a set T_RTTVAR_BITS]}]
            set cur [expr {((([$a set rttvar_] << $shift) + $srtt) >> $sb) * $tick}]
        }
        set b [$a set backoff_]
        set floor [$a set minrto_]
        if {[$a set rfc2988_]} {
            set rto [expr {($cur < $floor ? $floor : $cur) * $b}]
        } else {
            set rto [expr {$cur * $b < $floor ? $floor : $cur * $b}]
        }
        if {$rto > [$a set maxrto_]} { set rto [$a set maxrto_] }
        if {$rto < 2.0 * $tick} { set rto [expr {2.0 * $tick}] }
        puts "S $k $f [expr {double($srtt) * $tick / (1 << $sb)}] $rto $b"
    }
}
"""
"""The sampler's Tcl, defined once; :func:`agent_state_tcl` lists the flows it reads."""


def agent_state_tcl(plan: Plan, flows: Collection[int]) -> list[str]:
    """Tcl printing the state of ``flows`` (indices into ``plan.flows``; module documentation).

    Goes after every flow's agents are attached and connected (the traces wrap their targets).

    Raises:
        ExportError: naming a flow whose kind has no state to print.
    """
    lines = ["fconfigure stdout -buffering line", SAMPLER]
    tcp: list[int] = []
    for k in sorted(flows):
        flow = plan.flows[k]
        if flow.kind == "tfrc":
            lines += [
                f"$snk({k}) set printLoss_ 1",
                f"set rpT({k}) [$ns create-trace Enque stdout {k} {k}]",
                f"$rpT({k}) target [$snk({k}) target]; $snk({k}) target $rpT({k})",
                f"$src({k}) set printStatus_ true",
                f"set rsT({k}) [$ns create-trace Recv stdout {k} {k}]",
                f"$rsT({k}) target $src({k})",
                f"[[$src({k}) set node_] demux] install [$src({k}) set agent_port_] $rsT({k})",
            ]
        elif flow.kind == "tcp" and not flow.on_periods:
            tcp.append(k)
        else:
            raise ExportError(
                f"{flow.path}: ns-2's state is printed for TFRC and long-lived TCP flows, not "
                f"for {flow.name!r} ({flow.kind}{', on/off' if flow.on_periods else ''})"
            )
    lines.append(f"set tcp_state_flows {{{' '.join(map(str, tcp))}}}")
    return lines


def traced_flows(plan: Plan, entries: Sequence[str]) -> dict[int, float]:
    """The flows of the scenario entries named ``entries``: index -> data packet size in bytes.

    A flow is an entry's when its name is the entry's ``name``, or that name followed by the
    flow's number (``count`` expansion: ``tfrc0``, ``tfrc1``, ...). The sizes are what
    :func:`tfrclab.ns2.agent_state.read_agent_state` needs.

    Raises:
        ExportError: naming an entry no flow belongs to.
    """

    def entry(name: str) -> str:
        return name if name in entries else name.rstrip("0123456789")

    found = {flow.index: entry(flow.name) for flow in plan.flows if entry(flow.name) in entries}
    missing = [name for name in entries if name not in found.values()]
    if missing:
        names = ", ".join(repr(name) for name in missing)
        raise ExportError(f"agent state: no flow is named {names} (a flow entry's `name`)")
    return {k: float(size_bytes(plan.flows[k].table.get("size", 1000))) for k in found}
