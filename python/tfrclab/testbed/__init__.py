"""A Dummynet-style link-emulator testbed for real protocol stacks (docs/testbed.md).

:class:`Testbed` joins two network namespaces through a user-space relay that applies, per
direction, Bernoulli loss, netsim's DropTail or RED queue, a rate and a delay, so kernel TCP (or
any program) can be run against the same links the simulator models::

    with Testbed(rate="10Mb/s", delay="25ms", queue="droptail:50", log="relay.log") as tb:
        server = tb.popen("b", ["iperf3", "-s", "-1"])
        tb.run("a", ["iperf3", "-c", tb.address("b"), "-C", "reno", "-t", "10"])
    print(tb.report["forward"])           # the relay's counters
    print(flows(read_log("relay.log")))    # per-flow throughput, drops, queueing delay

Needs root and /dev/net/tun.
"""

from __future__ import annotations

from tfrclab._lazy import lazy_exports

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from tfrclab.testbed.emulator import ADDRESSES, Testbed
    from tfrclab.testbed.log import PacketLog, flows, read_log, throughput
    from tfrclab.testbed.netns import TestbedError

# Imported when first used: the CLI imports tfrclab.testbed.cli at every start, and the log
# reader needs numpy.
__getattr__ = lazy_exports(
    __name__,
    {
        "ADDRESSES": "emulator",
        "Testbed": "emulator",
        "PacketLog": "log",
        "flows": "log",
        "read_log": "log",
        "throughput": "log",
        "TestbedError": "netns",
    },
)

__all__ = [
    "ADDRESSES",
    "PacketLog",
    "Testbed",
    "TestbedError",
    "flows",
    "read_log",
    "throughput",
]
