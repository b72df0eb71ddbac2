"""netsim's CUBIC against the kernel's (the testbed's relay): one flow alone, same path.

A kernel CUBIC connection (set per socket) through the relay, 10 Mb/s, 50 ms each way, DropTail
of 100 packets, for 40 s, and netsim's ``variant = "cubic"`` with the ``linux`` preset on the
same path: the throughput, the queue drops after slow start and the sawtooth's periods (fast
convergence makes them alternate, about 3.6 s and 8.9 s here) agree within 10% (drops: or 3).
Needs root, /dev/net/tun and iproute2 (CI runs as root); skips otherwise. About 45 s of real
time.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tfrclab import simulate
from tfrclab.testbed import emulator, read_log
from tfrclab.testbed import experiments as tbx
from tfrclab.testbed.log import ARRIVE, DEPART, DROP_QUEUE, FORWARD

CAN_RUN = os.geteuid() == 0 and os.path.exists("/dev/net/tun") and shutil.which("ip") is not None
pytestmark = pytest.mark.skipif(
    not CAN_RUN, reason="the testbed needs root, /dev/net/tun and iproute2's ip"
)

SECONDS = 40.0
QUEUE = "droptail:100"
PORT = 5101


def _episodes(drop_times: np.ndarray) -> np.ndarray:
    """Start times of loss episodes: drops more than 1 s after the previous drop."""
    drops = np.sort(drop_times)
    gaps = np.diff(drops, prepend=-np.inf)
    return drops[gaps > 1.0]


def _periods(episodes: np.ndarray) -> tuple[float, float]:
    """Mean short and long period between episodes after the first 10 s (they alternate)."""
    periods = np.diff(episodes[episodes > 10.0])
    assert len(periods) >= 3, periods
    split = periods.mean()
    return float(periods[periods < split].mean()), float(periods[periods >= split].mean())


def test_one_cubic_flow_agrees_with_the_kernel(tmp_path: Path) -> None:
    log = tmp_path / "relay.log"
    module = [sys.executable, "-m", "tfrclab.testbed"]
    with emulator.Testbed(rate="10Mb/s", delay="50ms", queue=QUEUE, log=log) as tb:
        rx = tb.popen("b", [*module, "tcp-recv", "--port", str(PORT), "--limit",
                            str(SECONDS + 30)], stdout=subprocess.PIPE)  # fmt: skip
        send = ["tcp-send", tb.address("b"), "--port", str(PORT), "--seconds", str(SECONDS)]
        tx = tb.run("a", [*module, *send, "--cc", "cubic"], timeout=SECONDS + 60)
        assert tx.returncode == 0, tx.stderr
        rx.communicate(timeout=30)
    r = read_log(log).records
    tcp = (r["dir"] == FORWARD) & (r["proto"] == 6)
    t = r["t_ns"] / 1e9
    start = t[tcp & (r["event"] == ARRIVE)].min()
    departed = tcp & (r["event"] == DEPART) & (t - start >= 10.0) & (t - start < SECONDS)
    kernel_bps = r["size"][departed].sum() * 8 / (SECONDS - 10.0)
    kernel_drops = t[tcp & (r["event"] == DROP_QUEUE)] - start
    kernel_periods = _periods(_episodes(kernel_drops))

    flow = {"kind": "tcp", "variant": "cubic", "preset": "linux"}
    scenario = tbx._netsim_scenario(QUEUE, SECONDS - 1, flows=[flow], **{"topology.hosts": 1})
    result = simulate.run(scenario, 1)
    bin_s = result.info.bin_s
    received = result.flow_bins["received_bytes"][0].astype(np.float64) * 8
    netsim_bps = received[int(10 / bin_s) : int(SECONDS / bin_s)].sum() / (SECONDS - 10.0)
    dropped = np.asarray(result.flow_bins["dropped_packets"][0])
    netsim_periods = _periods(_episodes(np.nonzero(dropped)[0] * bin_s))
    netsim_drops = int(dropped[int(10 / bin_s) : int(SECONDS / bin_s)].sum())
    kernel_steady_drops = int(((kernel_drops >= 10.0) & (kernel_drops < SECONDS)).sum())

    assert abs(netsim_bps / kernel_bps - 1) < 0.10, (netsim_bps, kernel_bps)
    # Drops after slow start (its overshoot is a burst of tens of drops either way, its size a
    # matter of a few packets' timing): about one to a few per loss episode.
    assert abs(netsim_drops - kernel_steady_drops) <= max(3, 0.1 * kernel_steady_drops), (
        netsim_drops,
        kernel_steady_drops,
    )
    for ours, theirs in zip(netsim_periods, kernel_periods, strict=True):
        assert abs(ours / theirs - 1) < 0.10, (netsim_periods, kernel_periods)
