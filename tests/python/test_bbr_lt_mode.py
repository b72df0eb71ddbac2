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


def test_a_frozen_estimate_at_gain_one_counts_and_gain_cycling_does_not(lt: ModuleType) -> None:
    # 0.1 s samples from 5 s to 15 s: from 7 s to 9.5 s the estimate is frozen at gain 1 (2.5 s:
    # the long-term mode's sign); elsewhere it changes every sample, and from 11 s to 13 s it is
    # frozen but the gain cycles through 1.25 and 0.75 (PROBE_BW: not the sign).
    times = [5.0 + 0.1 * k for k in range(101)]
    bandwidth = [1000.0 + k for k in range(101)]
    gain = [1.0] * 101
    for k, t in enumerate(times):
        if 7.0 <= t < 9.5 - 1e-9:
            bandwidth[k] = 777.0
        if 11.0 <= t < 13.0:
            bandwidth[k] = 555.0
            gain[k] = (1.25, 0.75, 1.0, 1.0)[k % 4]
    fraction = lt.frozen_fraction(times, bandwidth, gain)
    assert fraction == pytest.approx(2.5 / 10.1, abs=0.011)
    # A shorter frozen stretch than the span asked for is not counted.
    assert lt.frozen_fraction(times, bandwidth, gain, min_span_s=3.0) == 0.0
    assert math.isnan(lt.frozen_fraction([1.0, 2.0], [1.0, 1.0], [1.0, 1.0]))


def test_the_kernels_kept_runs_read_back(lt: ModuleType) -> None:
    # The 4 BBR against 4 TFRC probe of docs/twin.md: 16 kernel flows, each with a fraction.
    probe = REPO_ROOT / "docs" / "testbed-results" / "twin-study" / "probes" / "kernel-bbr-lt"
    rows = lt.kernel_flows(probe, 1.0)
    assert len(rows) == 16
    values = [v for _, v in rows]
    assert all(0.0 <= v <= 1.0 for v in values)
    assert sum(values) / len(values) == pytest.approx(0.365, abs=0.001)
