"""Time ``tfrclab export ns2`` on dumbbells of growing flow counts.

Usage: ``.venv/bin/python scripts/bench_export.py [--flows 512,1024,2048,4096] [--max-hosts N]``

Each point is bench_peers.py's scaling dumbbell (half SACK, half TFRC, RTTs 80-120 ms, starts in
0-10 s) with one host pair per flow up to ``--max-hosts`` pairs (default 2048; the dumbbell takes
at most 2500 a side), the flows sharing pairs beyond that. Per point it prints the network's size
and three times: netsim building the scenario alone (the probe :func:`tfrclab.ns2.resolve` runs,
1 ns long), ``resolve`` (that probe plus the paths and draws read back) and ``export_tcl``
(writing the script). Their difference, resolve less the probe plus the export, is the
exporter's own Python, which should grow about linearly with the flows.
"""

from __future__ import annotations

import argparse
import sys
import time

from bench_peers import SCALING_SCENARIO  # the same dumbbell (this folder is on sys.path)

from tfrclab.ns2 import export_tcl, resolve
from tfrclab.scenario import Scenario
from tfrclab.simulate import run


def scenario(flows: int, max_hosts: int) -> Scenario:
    """The ``flows``-flow dumbbell (module documentation)."""
    hosts = min(flows, max_hosts)
    text = SCALING_SCENARIO.format(
        flows=flows, hosts=hosts, half=flows // 2, rate="1Gbps", duration="20s"
    )
    return Scenario.from_toml(text)


def point(flows: int, max_hosts: int) -> dict[str, float]:
    """One flow count: the network's size and the seconds each step took."""
    scen = scenario(flows, max_hosts)
    started = time.perf_counter()
    run(scen.with_(duration="1ns", **{"measure.from": "0s", "measure.to": "1ns"}))
    probe = time.perf_counter() - started
    started = time.perf_counter()
    plan = resolve(scen)
    resolved = time.perf_counter() - started
    started = time.perf_counter()
    script = export_tcl(plan)
    exported = time.perf_counter() - started
    return {
        "flows": flows,
        "nodes": len(plan.nodes),
        "links": len(plan.links),
        "probe_s": probe,
        "resolve_s": resolved,
        "export_s": exported,
        "python_s": resolved - probe + exported,
        "script_mib": len(script) / 2**20,
    }


def main(argv: list[str]) -> int:
    """Run the points and print one line each; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flows", default="512,1024,2048,4096", help="flow counts")
    parser.add_argument("--max-hosts", type=int, default=2048, help="host pairs at most (2048)")
    args = parser.parse_args(argv)
    print(
        f"{'flows':>6} {'nodes':>6} {'links':>6} {'probe s':>8} {'resolve s':>9} "
        f"{'export s':>8} {'python s':>8} {'script MiB':>10}"
    )
    point(8, args.max_hosts)  # unmeasured: the first call imports and warms up
    for flows in (int(n) for n in args.flows.split(",")):
        p = point(flows, args.max_hosts)
        print(
            f"{flows:>6} {p['nodes']:>6} {p['links']:>6} {p['probe_s']:>8.2f} "
            f"{p['resolve_s']:>9.2f} {p['export_s']:>8.2f} {p['python_s']:>8.2f} "
            f"{p['script_mib']:>10.1f}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
