"""scripts/bbr_lt_mode.py: the sign of BBR's long-term bandwidth mode in a sampled trace."""

from __future__ import annotations

import math
from types import ModuleType

import pytest

from conftest import REPO_ROOT, load_script


@pytest.fixture(scope="module")
def lt() -> ModuleType:
    module: ModuleType = load_script("bbr_lt_mode")
    return module


def test_a_frozen_estimate_at_gain_one_counts_and_gain_cycling_or_a_stall_does_not(
    lt: ModuleType,
) -> None:
    # 0.1 s samples from 5 s to 15 s: from 7 s to 9.5 s the estimate is frozen at gain 1 (2.5 s:
    # the long-term mode's sign); elsewhere it changes every sample; from 11 s to 13 s it is
    # frozen but the gain cycles through 1.25 and 0.75 (PROBE_BW: not the sign), and from 13 s
    # to 14.5 s it is frozen at gain 1 while the retransmission timeout is backed off (a stall).
    times = [5.0 + 0.1 * k for k in range(101)]
    bandwidth = [1000.0 + k for k in range(101)]
    gain = [1.0] * 101
    rto = [0.25] * 101
    for k, t in enumerate(times):
        if 7.0 <= t < 9.5 - 1e-9:
            bandwidth[k] = 777.0
        if 11.0 <= t < 13.0:
            bandwidth[k] = 555.0
            gain[k] = (1.25, 0.75, 1.0, 1.0)[k % 4]
        if 13.0 <= t < 14.5:
            bandwidth[k] = 333.0
            rto[k] = 1.0
    fraction = lt.frozen_fraction(times, bandwidth, gain, rto)
    assert fraction == pytest.approx(2.5 / 10.1, abs=0.011)
    # Without the backed-off timeout the stall would count.
    assert lt.frozen_fraction(times, bandwidth, gain, [0.25] * 101) == pytest.approx(
        4.0 / 10.1, abs=0.021
    )
    # A shorter frozen stretch than the span asked for is not counted.
    assert lt.frozen_fraction(times, bandwidth, gain, rto, min_span_s=3.0) == 0.0
    assert math.isnan(lt.frozen_fraction([1.0, 2.0], [1.0, 1.0], [1.0, 1.0], [0.2, 0.2]))


def test_a_flow_stalled_through_the_whole_window_is_not_read_as_frozen(lt: ModuleType) -> None:
    # Starved by its company: from 3 s on its timeout is backed off (4 s) and its estimate frozen
    # at gain 1; before, a usual 0.25 s timeout. The window from 5 s holds only the stall, so a
    # reference taken inside it would call the stall usual.
    times = [0.1 * k for k in range(301)]
    bandwidth = [1000.0 + k if t < 3.0 else 431.0 for k, t in enumerate(times)]
    gain = [1.0] * 301
    rto = [0.25 if t < 3.0 else 4.0 for t in times]
    assert lt.frozen_fraction(times, bandwidth, gain, rto) == 0.0


def test_the_kernels_kept_runs_read_back(lt: ModuleType) -> None:
    # The 4 BBR against 4 TFRC probe of docs/twin.md: 16 kernel flows, each with a fraction.
    probe = REPO_ROOT / "docs" / "testbed-results" / "twin-study" / "probes" / "kernel-bbr-lt"
    rows = lt.kernel_flows(probe, 1.0)
    assert len(rows) == 16
    values = [v for _, v in rows]
    assert all(0.0 <= v <= 1.0 for v in values)
    assert sum(values) / len(values) == pytest.approx(0.365, abs=0.001)


def test_the_inferred_sign_matches_netsims_traced_flag(lt: ModuleType) -> None:
    # The twin's 4 BBR + 4 TFRC cell at 20 Mb/s with half a BDP, 30 s, seed 1: netsim traces
    # the long-term mode itself (`bbr_lt_bw`); the sign the script infers from the estimate and
    # the gain at 0.1 s, as it must from the kernel's samples, covers about the same time.
    from tfrclab.scenario import Scenario
    from tfrclab.simulate import run

    scenario = Scenario.from_toml(
        """
duration = "30s"
[monitor]
bin = "100ms"
[topology]
kind = "dumbbell"
hosts = 8
[topology.bottleneck]
rate = "20Mbps"
delay = "20ms"
queue = { kind = "droptail", limit = 33 }
[topology.access]
rate = "1Gbps"
delay = "0.1ms"
[[flows]]
kind = "tcp"
name = "bbr"
variant = "bbr"
preset = "linux"
count = 4
start = { uniform = ["0s", "0.1s"] }
[[flows]]
kind = "tfrc"
name = "tfrc"
preset = "floyd2000"
size = "1028B"
count = 4
"""
    )
    result = run(scenario, seed=1)
    traced, inferred = [], []
    for k in range(4):
        trace = result.trace(f"bbr{k}")
        times = trace.index.to_numpy()  # the end of each 100 ms bin, seconds
        late = times >= 5.0
        flag = trace["bbr_lt_bw"].to_numpy()
        assert set(flag.tolist()) <= {0.0, 1.0}
        traced.append(float(flag[late].mean()))
        inferred.append(
            lt.frozen_fraction(
                times,
                trace["bbr_bw"].to_numpy(),
                trace["pacing_gain"].to_numpy(),
                trace["rto"].to_numpy(),
            )
        )
    assert sum(traced) > 0.4  # the mode is entered in this cell
    assert inferred == pytest.approx(traced, abs=0.05)
