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
- with ``drop_trace``, ns-2's own ``d`` lines for every drop at the primary link;
- with ``agent_state``, the chosen flows' agents' own prints of their state, each beside a
  trace line naming its flow, and ``S <bin> <flow> <SRTT> <RTO> <backoff>`` for TCP agents
  (:mod:`tfrclab.ns2.export.agent_state`).

Read it back with :func:`tfrclab.ns2.output.read_output`. Each mapping cites the ns-2 source
(``tcl/lib/ns-default.tcl``, ``queue/drop-tail.cc``, ``queue/errmodel.cc``, ...);
docs/crosscheck.md has the whole table.
"""

from __future__ import annotations

from tfrclab.ns2.export.script import export_tcl, monitored_links
from tfrclab.ns2.export.tcp import TCP_PRESETS

__all__ = ["TCP_PRESETS", "export_tcl", "monitored_links"]
