"""netsim's Reno, CUBIC and BBR against the kernel's (the testbed's relay): one flow alone.

A kernel connection (its congestion control set per socket) through the relay, 10 Mb/s, 50 ms
each way, DropTail of 100 packets, for 40 s, and netsim's variant of the same name with the
``linux`` preset on the same path. CUBIC: the throughput and the sawtooth's periods (fast
convergence makes them alternate, about 3.6 s and 8.9 s here) agree within 10%, the loss
episodes after slow start within one and their drops within 40% (or 6). BBR: the throughput
within 2%, STARTUP's drops within 20% (or 10), none after it in either, and the PROBE_RTT dips
(one every 10 s) in the same seconds. Reno (the kernel's ``reno``, netsim's ``sack``, both
recovering with SACK) through DropTail of 20 packets, a quarter of the BDP, where the sawtooth
sets the throughput (about 8.8 of the 10 Mb/s): the throughput and the sawtooth's period
(about 6 s) within 10%, the loss episodes after slow start within one.
Needs root, /dev/net/tun and iproute2 (CI runs as root); skips otherwise. About 45 s of real
time each.
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
from tfrclab.testbed.timing import relay_timing

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


class _Run:
    """One flow's measurements: throughput from 10 s on, drop times, Mb/s per second."""

    def __init__(self, bps: float, drops: np.ndarray, per_second: np.ndarray) -> None:
        self.bps = bps
        self.drops = drops
        self.per_second = per_second

    def steady_drops(self) -> int:
        return int(((self.drops >= 10.0) & (self.drops < SECONDS)).sum())


def _kernel(cc: str, tmp_path: Path, queue: str = QUEUE) -> _Run:
    """One kernel ``cc`` connection through the relay, measured at the relay.

    A run whose relay the machine disturbed (:mod:`tfrclab.testbed.timing`) is run once more,
    as ``tfrclab twin`` does: its kernel answered a link that was not the one emulated. When
    the second is disturbed too, the test skips, saying so: a CI run on a host taking this
    machine's CPU left the kernel's CUBIC with 78 drops where quiet runs have about 19, and its
    BBR 4% slow, which no bound here should accept or blame on netsim.
    """
    log = tmp_path / "relay.log"
    module = [sys.executable, "-m", "tfrclab.testbed"]
    for _ in range(2):
        with emulator.Testbed(rate="10Mb/s", delay="50ms", queue=queue, log=log) as tb:
            rx = tb.popen("b", [*module, "tcp-recv", "--port", str(PORT), "--limit",
                                str(SECONDS + 30)], stdout=subprocess.PIPE)  # fmt: skip
            send = ["tcp-send", tb.address("b"), "--port", str(PORT), "--seconds", str(SECONDS)]
            tx = tb.run("a", [*module, *send, "--cc", cc], timeout=SECONDS + 60)
            assert tx.returncode == 0, tx.stderr
            rx.communicate(timeout=30)
        r = read_log(log).records
        timing = relay_timing(r)
        if not timing.disturbed:
            break
    else:
        pytest.skip(f"the machine disturbed the relay in both runs: {timing.describe()}")
    tcp = (r["dir"] == FORWARD) & (r["proto"] == 6)
    t = r["t_ns"] / 1e9 - (r["t_ns"][tcp & (r["event"] == ARRIVE)].min() / 1e9)
    departed = tcp & (r["event"] == DEPART)
    steady = departed & (t >= 10.0) & (t < SECONDS)
    edges = np.arange(0.0, SECONDS + 1.0)
    per_second = np.histogram(t[departed], bins=edges, weights=r["size"][departed] * 8.0)[0]
    return _Run(
        r["size"][steady].sum() * 8 / (SECONDS - 10.0),
        t[tcp & (r["event"] == DROP_QUEUE)],
        per_second / 1e6,
    )


def _netsim(variant: str, queue: str = QUEUE) -> _Run:
    """The same path and queue in netsim: ``variant`` with the linux preset."""
    flow = {"kind": "tcp", "variant": variant, "preset": "linux"}
    scenario = tbx._netsim_scenario(queue, SECONDS - 1, flows=[flow], **{"topology.hosts": 1})
    result = simulate.run(scenario, 1)
    bin_s = result.info.bin_s
    received = result.flow_bins["received_bytes"][0].astype(np.float64) * 8
    per_bin = round(1.0 / bin_s)
    seconds = int(SECONDS)
    per_second = received[: seconds * per_bin].reshape(seconds, per_bin).sum(axis=1)
    dropped = np.asarray(result.flow_bins["dropped_packets"][0])
    return _Run(
        received[int(10 / bin_s) : int(SECONDS / bin_s)].sum() / (SECONDS - 10.0),
        np.repeat(np.arange(len(dropped)) * bin_s, dropped),
        per_second / 1e6,
    )


def test_one_cubic_flow_agrees_with_the_kernel(tmp_path: Path) -> None:
    kernel = _kernel("cubic", tmp_path)
    kernel_periods = _periods(_episodes(kernel.drops))
    ours = _netsim("cubic")
    netsim_bps, kernel_bps = ours.bps, kernel.bps
    netsim_periods = _periods(_episodes(ours.drops))
    netsim_drops, kernel_steady_drops = ours.steady_drops(), kernel.steady_drops()

    assert abs(netsim_bps / kernel_bps - 1) < 0.10, (netsim_bps, kernel_bps)
    # After slow start (its overshoot is a burst of tens of drops either way, its size a matter
    # of a few packets' timing) the loss episodes agree within one, and their drops within
    # max(6, 40%): an episode drops one to five packets as the kernel's sub-millisecond timing
    # falls (one kernel run gave 14 where netsim gives 19; others 41 against 41 over 60 s).
    kernel_episodes = _episodes(kernel.drops)
    netsim_episodes = _episodes(ours.drops)
    steady = [int(((e >= 10.0) & (e < SECONDS)).sum()) for e in (kernel_episodes, netsim_episodes)]
    assert abs(steady[0] - steady[1]) <= 1, (kernel_episodes, netsim_episodes)
    assert abs(netsim_drops - kernel_steady_drops) <= max(6, 0.4 * kernel_steady_drops), (
        netsim_drops,
        kernel_steady_drops,
    )
    for ours, theirs in zip(netsim_periods, kernel_periods, strict=True):
        assert abs(ours / theirs - 1) < 0.10, (netsim_periods, kernel_periods)


def test_one_reno_flow_agrees_with_the_kernel(tmp_path: Path) -> None:
    queue = "droptail:20"
    kernel, ours = _kernel("reno", tmp_path, queue), _netsim("sack", queue)
    assert abs(ours.bps / kernel.bps - 1) < 0.10, (ours.bps, kernel.bps)
    # Reno's teeth are all alike (no fast convergence): one period, the mean gap between the
    # loss episodes after slow start (netsim: 5.9-6.0 s).
    steady = [e[e > 10.0] for e in (_episodes(kernel.drops), _episodes(ours.drops))]
    assert abs(len(steady[0]) - len(steady[1])) <= 1, steady
    assert all(len(e) >= 3 for e in steady), steady
    kernel_period, netsim_period = (float(np.diff(e).mean()) for e in steady)
    assert abs(netsim_period / kernel_period - 1) < 0.10, (netsim_period, kernel_period)


def test_one_bbr_flow_agrees_with_the_kernel(tmp_path: Path) -> None:
    kernel = _kernel("bbr", tmp_path)
    ours = _netsim("bbr")
    # 40 s here: 9.70 Mb/s both from 10 s on (PROBE_RTT costs 3%), 128 drops in the kernel's
    # STARTUP and 130 in netsim's, none after.
    assert abs(ours.bps / kernel.bps - 1) < 0.02, (ours.bps, kernel.bps)
    assert abs(len(ours.drops) - len(kernel.drops)) <= max(10, 0.2 * len(kernel.drops)), (
        len(ours.drops),
        len(kernel.drops),
    )
    assert ours.steady_drops() == kernel.steady_drops() == 0
    # PROBE_RTT: 200 ms at 4 packets every 10 s, a second at about 7 Mb/s (or two seconds at
    # about 8.5, when it straddles them). From 2 s: STARTUP's losses end without a timeout in
    # both (netsim's RACK finds a retransmission lost again, as the kernel's does).
    kernel_dips = _dip_starts(kernel.per_second)
    netsim_dips = _dip_starts(ours.per_second)
    assert min(len(kernel_dips), len(netsim_dips)) >= 3, (kernel_dips, netsim_dips)
    # The first PROBE_RTT comes 10 s after STARTUP's minimum RTT in both. Later ones come at
    # least 10 s apart (tcp_bbr.c's min_rtt window), or later when an RTT sample below the
    # minimum restarts the window: on a loaded machine the kernel's timing gives such samples
    # (one CI run: kernel 10, 25, 36 s against netsim's 10, 20, 31 s).
    assert abs(int(kernel_dips[0]) - int(netsim_dips[0])) <= 1, (kernel_dips, netsim_dips)
    for dips in (kernel_dips, netsim_dips):
        assert np.all((np.diff(dips) >= 9) & (np.diff(dips) <= 16)), (kernel_dips, netsim_dips)


def _dip_starts(mbps: np.ndarray) -> np.ndarray:
    """The first second of each run of seconds below 9 Mb/s, from 2 s on."""
    low = np.nonzero(mbps[2:] < 9.0)[0] + 2
    return low[np.diff(low, prepend=-10) > 1]
