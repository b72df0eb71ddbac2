"""Short TCP flows exported as connections of fresh ns-2 TCP agents arriving as netsim's.

netsim's ``short_tcp`` (docs/web.md) opens a one-way TCP connection of ceil(``packets``)
packets at each arrival of a renewal process; the export runs the same process in Tcl with
ns-2's random variables on netsim's resolved distributions (``load``/``share`` in the
inter-arrival mean). The draws differ, so the two compare over seeds: the offered load, and
with long-lived TCP beside it (floyd2000 Table 25's mix, scaled down) every cross-check metric.
The tests use tolerance 5% of the larger mean, as the other exports' tests do.
"""

from __future__ import annotations

import shutil
from typing import Any

import pytest

from tfrclab.ns2 import ExportError, export_tcl, resolve
from tfrclab.ns2.crosscheck import crosscheck
from tfrclab.scenario import Scenario

needs_ns = pytest.mark.skipif(shutil.which("ns") is None, reason="ns-2 (`ns`) is not installed")

SHORT = {"kind": "short_tcp", "name": "short", "variant": "sack", "preset": "ns2_2000"}


def _dumbbell(flows: list[dict[str, Any]], hosts: int, duration: str = "20s") -> Scenario:
    """A 10 Mb/s, 10 ms DropTail dumbbell (50 packets), access RTTs 40-50 ms."""
    return Scenario.from_dict(
        {
            "duration": duration,
            "measure": {"from": "5s"},
            "monitor": {"bin": "100ms"},
            "topology": {
                "kind": "dumbbell",
                "hosts": hosts,
                "bottleneck": {
                    "rate": "10Mbps",
                    "delay": "10ms",
                    "queue": {"kind": "droptail", "ns2_limit": 50},
                },
                "access": {"rate": "100Mbps", "rtt": {"uniform": ["40ms", "50ms"]}},
            },
            "flows": flows,
        }
    )


def test_arrivals_use_netsims_resolved_distributions() -> None:
    script = export_tcl(resolve(_dumbbell([{**SHORT, "share": 0.2}], hosts=1), 1))
    # share 0.2 of 10 Mb/s in 1000-byte packets of mean 10.5: 42 ms between arrivals.
    assert "set rv_interarrival_0 [new RandomVariable/Exponential]" in script
    assert "$rv_interarrival_0 set avg_ 0.042\n" in script
    assert "$rv_packets_0 set max_ 20\n" in script
    assert "proc tfrclab_short_0 {} {" in script
    assert "[$tcp attach-app FTP] produce $size" in script
    assert "set tcp [new Agent/TCP/Sack1]" in script


def test_on_off_and_max_packets_are_refused() -> None:
    flow = {**SHORT, "share": 0.2, "on_off": {"on": "1s", "off": "1s"}}
    with pytest.raises(ExportError, match=r"flows\[0\]\.on_off: not exported for short_tcp"):
        export_tcl(resolve(_dumbbell([flow], hosts=1), 1))


@needs_ns
def test_short_flows_alone_offer_the_same_load() -> None:
    # 20% of the link in short connections, nothing else: 4 seeds of 20 s.
    comparisons, _ = crosscheck(
        _dumbbell([{**SHORT, "share": 0.2}], hosts=1), list(range(1, 5)), tolerance=0.05
    )
    verdicts = {c.metric: c.verdict for c in comparisons}
    assert verdicts["throughput/short_tcp"] == "agree"
    assert verdicts["utilization"] == "agree"
    (load,) = [c for c in comparisons if c.metric == "utilization"]
    assert load.mean_ns2 == pytest.approx(0.2, rel=0.1)


@needs_ns
def test_beside_long_lived_tcp_the_crosscheck_agrees() -> None:
    long_lived = {
        "kind": "tcp",
        "variant": "sack",
        "preset": "ns2_2000",
        "window": 1000,
        "count": 8,
        "start": {"uniform": ["0s", "5s"]},
    }
    flows = [long_lived, {**SHORT, "share": 0.2}, {**SHORT, "name": "back", "share": 0.05,
                                                    "reverse": True}]  # fmt: skip
    # 4 seeds of 20 s, measured over the last 15 s.
    comparisons, _ = crosscheck(_dumbbell(flows, hosts=8), list(range(1, 5)), tolerance=0.05)
    verdicts = {c.metric: c.verdict for c in comparisons}
    assert {"throughput/tcp-sack", "throughput/short_tcp", "drop_rate"} <= set(verdicts)
    assert set(verdicts.values()) == {"agree"}
