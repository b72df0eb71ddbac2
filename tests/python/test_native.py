"""The bindings: tfrclab._native through the typed wrappers in tfrclab."""

from __future__ import annotations

import math
import threading
import time

import numpy as np
import pytest

import tfrclab
from conftest import rfc5348_rate
from tfrclab import _native
from tfrclab.channel import LossStep, run_channel

COLUMNS = {
    "time_s",
    "x_bytes_per_s",
    "x_calc_bytes_per_s",
    "x_recv_bytes_per_s",
    "p",
    "rtt_s",
    "last_interval_packets",
    "mean_interval_packets",
}


def test_version_matches_package() -> None:
    assert _native.version() == tfrclab.__version__
    assert tfrclab.__version__.count(".") == 2


@pytest.mark.parametrize("p", [1e-4, 0.01, 0.1, 0.5, 1.0])
def test_equation_matches_rfc5348(p: float) -> None:
    got = _native.equation(1460.0, 0.1, p)
    assert got == pytest.approx(rfc5348_rate(1460, 0.1, p), rel=1e-12)


def test_equation_keywords() -> None:
    got = _native.equation(1000.0, 0.2, 0.02, b=2.0, t_rto_s=1.0)
    assert got == pytest.approx(rfc5348_rate(1000, 0.2, 0.02, b=2, t_rto=1.0), rel=1e-12)
    # The cap on 3*sqrt(3bp/8) only matters above p = 8/27.
    assert _native.equation(1000.0, 0.1, 0.1, cap_rto_term=True) == _native.equation(
        1000.0, 0.1, 0.1
    )
    assert _native.equation(1000.0, 0.1, 0.5, cap_rto_term=True) > _native.equation(
        1000.0, 0.1, 0.5
    )


def test_equation_wrapper_checks_ranges() -> None:
    assert tfrclab.throughput_bytes_per_s(1460, 0.1, 0.01) == pytest.approx(164_005, abs=5)
    assert tfrclab.throughput_packets_per_s(1460, 0.1, 0.01) == pytest.approx(
        164_005 / 1460, abs=0.01
    )
    for kwargs in [
        {"size_bytes": 0, "rtt_s": 0.1, "p": 0.01},
        {"size_bytes": 1000, "rtt_s": -0.1, "p": 0.01},
        {"size_bytes": 1000, "rtt_s": 0.1, "p": 0.0},
        {"size_bytes": 1000, "rtt_s": 0.1, "p": 1.01},
        {"size_bytes": 1000, "rtt_s": 0.1, "p": math.nan},
    ]:
        with pytest.raises(ValueError, match="must be in"):
            tfrclab.throughput_bytes_per_s(**kwargs)
    with pytest.raises(ValueError, match="b must be in"):
        tfrclab.throughput_bytes_per_s(1000, 0.1, 0.01, b=0.5)


def test_periodic_one_percent_gives_p_of_one_percent() -> None:
    raw = _native.run_channel("rfc5348", 0.05, 0.05, [(0.0, "periodic", 100.0)], 20.0)
    assert set(raw) >= COLUMNS
    time_s = raw["time_s"]
    p = raw["p"]
    assert isinstance(time_s, np.ndarray)
    assert isinstance(p, np.ndarray)
    assert time_s.dtype == np.float64
    assert len(time_s) > 100
    assert np.all(np.diff(time_s) >= 0)
    for name in COLUMNS:
        column = raw[name]
        assert isinstance(column, np.ndarray)
        assert column.shape == time_s.shape, name
    later = p[time_s > 10.0]
    assert len(later) > 50
    np.testing.assert_allclose(later, 0.01, rtol=1e-9)
    mean_interval = raw["mean_interval_packets"]
    assert isinstance(mean_interval, np.ndarray)
    np.testing.assert_allclose(mean_interval[time_s > 10.0], 100.0, rtol=1e-9)
    sent, delivered = raw["packets_sent"], raw["packets_delivered"]
    assert isinstance(sent, int)
    assert isinstance(delivered, int)
    assert 0 < delivered < sent


def test_typed_wrapper_and_seeds() -> None:
    run = run_channel(
        preset="floyd2000",
        schedule=[LossStep(0.0, "bernoulli", 0.02)],
        duration_s=5.0,
        seed=7,
    )
    again = run_channel(
        preset="floyd2000",
        schedule=[LossStep(0.0, "bernoulli", 0.02)],
        duration_s=5.0,
        seed=7,
    )
    np.testing.assert_array_equal(run.x_bytes_per_s, again.x_bytes_per_s)
    assert run.segment_size_bytes == 1000
    np.testing.assert_allclose(run.x_pkts_per_s, run.x_bytes_per_s / 1000)
    assert run.index_at(-1.0) is None
    assert run.index_at(1e9) == len(run) - 1


def test_no_loss_and_all_loss() -> None:
    clean = run_channel(schedule=[LossStep(0.0, "none")], duration_s=3.0)
    # Without loss nothing is dropped; the difference is what is still in flight at the end.
    assert clean.packets_sent >= clean.packets_delivered > 0
    assert np.all(clean.p == 0.0)
    dead = run_channel(schedule=[LossStep(0.0, "all")], duration_s=3.0)
    assert dead.packets_delivered == 0
    assert len(dead) == 0


def test_unknown_preset_is_config_error() -> None:
    with pytest.raises(tfrclab.ConfigError, match="unknown TFRC preset"):
        _native.run_channel("reno", 0.05, 0.05, [], 1.0)
    assert issubclass(tfrclab.ConfigError, ValueError)
    assert tfrclab.ConfigError.__module__ == "tfrclab"


@pytest.mark.parametrize(
    ("schedule", "message"),
    [
        ([(0.0, "bursty", 1.0)], "unknown loss pattern 'bursty'|unknown loss pattern \"bursty\""),
        ([(0.0, "periodic", 0.0)], "periodic loss needs"),
        ([(0.0, "periodic", 2.5)], "periodic loss needs"),
        ([(0.0, "bernoulli", 1.5)], "bernoulli loss needs"),
        ([(-1.0, "none", 0.0)], "schedule start time"),
        ([(math.nan, "none", 0.0)], "schedule start time"),
    ],
)
def test_bad_schedules_raise_value_error(
    schedule: list[tuple[float, str, float]], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        _native.run_channel("rfc5348", 0.05, 0.05, schedule, 1.0)


def test_bad_delays_raise_value_error() -> None:
    with pytest.raises(ValueError, match="forward_delay_s"):
        _native.run_channel("rfc5348", -0.05, 0.05, [], 1.0)
    with pytest.raises(ValueError, match="duration_s"):
        _native.run_channel("rfc5348", 0.05, 0.05, [], math.inf)


def test_gil_is_released_during_a_run() -> None:
    # The main thread keeps stamping the time while another thread is inside the simulation. If
    # the bindings held the GIL, the main thread would stall for the whole call: one gap between
    # stamps as long as the simulation. With the GIL released, gaps stay short.
    window: list[float] = []

    def simulate() -> None:
        window.append(time.perf_counter())
        _native.run_channel("rfc5348", 0.05, 0.05, [(0.0, "bernoulli", 0.01)], 5000.0)
        window.append(time.perf_counter())

    stamps: list[float] = []
    worker = threading.Thread(target=simulate)
    worker.start()
    while worker.is_alive():
        stamps.append(time.perf_counter())
    worker.join()
    start, end = window
    inside = [t for t in stamps if start <= t <= end]
    longest_stall = max(np.diff([start, *inside, end]))
    assert longest_stall < 0.5 * (end - start), (longest_stall, end - start)
