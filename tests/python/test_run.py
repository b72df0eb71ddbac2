"""tfrclab.run and Result: the native simulation through the Python API."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import tfrclab
from conftest import SMALL_SCENARIO
from tfrclab import Result, Scenario, _native


@pytest.fixture(scope="module")
def small() -> Scenario:
    return Scenario.from_toml(SMALL_SCENARIO)


@pytest.fixture(scope="module")
def result(small: Scenario) -> Result:
    return tfrclab.run(small, seed=11)


def test_same_seed_same_result_and_other_seeds_differ(small: Scenario, result: Result) -> None:
    again = tfrclab.run(small, seed=11)
    assert result.equals(again)
    other = tfrclab.run(small, seed=12)
    assert not result.equals(other)
    assert result.info.seed == 11
    # The scenario's own seed is the default.
    assert tfrclab.run(small).info.seed == 5


def test_stepping_with_progress_gives_the_same_result(small: Scenario, result: Result) -> None:
    seen: list[tuple[float, float]] = []
    stepped = tfrclab.run(small, seed=11, progress=lambda t, end: seen.append((t, end)), steps=7)
    assert stepped.equals(result)
    assert len(seen) == 7
    assert seen[-1] == (3.0, 3.0)
    assert [t for t, _ in seen] == sorted(t for t, _ in seen)


def test_run_accepts_a_path(tmp_path: Path, result: Result) -> None:
    path = tmp_path / "small.toml"
    path.write_text(SMALL_SCENARIO)
    assert tfrclab.run(path, seed=11).equals(result)


def test_flows_table(result: Result) -> None:
    flows = result.flows
    assert list(flows["name"]) == ["cbr0", "cbr1"]
    assert list(flows["id"]) == [0, 1]
    assert set(flows["kind"]) == {"cbr"}
    for _, row in flows.iterrows():
        # In flight at the end: sent but neither delivered nor dropped (at most a queue's worth).
        in_flight = row["packets_sent"] - row["packets_received"] - row["packets_dropped"]
        assert 0 <= in_flight <= 25
        assert 0 < row["loss_events"] <= row["packets_dropped"]
        assert row["packet_loss_rate"] == pytest.approx(
            row["packets_dropped"] / row["packets_sent"]
        )
        assert row["loss_event_rate"] == pytest.approx(row["loss_events"] / row["packets_sent"])
        assert row["throughput_bits_per_s"] == pytest.approx(row["bytes_received"] * 8 / 3.0)
    # Per-bin series sum to the totals (nothing happens at exactly the end for CBR here, up to
    # packets in flight).
    bins = result.flow_bins
    assert np.array_equal(bins["sent_packets"].sum(axis=1), flows["packets_sent"].to_numpy())
    assert np.array_equal(bins["loss_events"].sum(axis=1), flows["loss_events"].to_numpy())


def test_links_table(result: Result) -> None:
    links = result.links
    bottleneck = links.set_index("name").loc["bottleneck"]
    assert bottleneck["rate_bps"] == 2_000_000
    assert bottleneck["binned"]
    assert bottleneck["queue_drops"] > 0
    assert bottleneck["loss_model_drops"] > 0
    assert 0.9 < bottleneck["utilization"] <= 1.0
    assert bottleneck["drop_rate"] == pytest.approx(
        (bottleneck["queue_drops"] + bottleneck["loss_model_drops"]) / bottleneck["arrivals"]
    )
    assert result.binned_links == ["bottleneck", "bottleneck_reverse"]
    # Access links keep totals only.
    assert (~links["binned"]).sum() == len(links) - 2
    assert result.link_bins["arrivals"].shape == (2, 30)


def test_rates_at_timescales(result: Result) -> None:
    fine = result.rates()
    assert fine.shape == (30, 2)
    assert list(fine.columns) == ["cbr0", "cbr1"]
    assert fine.index[1] == pytest.approx(0.1)
    coarse = result.rates(1.0)
    assert coarse.shape == (3, 2)
    # A 1 s rate is the mean of its ten 100 ms rates.
    np.testing.assert_allclose(
        coarse.to_numpy(), fine.to_numpy().reshape(3, 10, 2).mean(axis=1), rtol=1e-12
    )
    total_bits = result.flows["bytes_sent"].to_numpy() * 8
    np.testing.assert_allclose(fine.to_numpy().sum(axis=0) * 0.1, total_bits)
    with pytest.raises(ValueError, match="whole number of bins"):
        result.rates(0.15)


def test_queue_and_link_series(result: Result) -> None:
    q = result.queue
    assert list(q.columns) == ["bottleneck", "bottleneck_reverse"]
    assert q.shape == (30, 2)
    assert q["bottleneck"].max() <= 20
    mean = result.links.set_index("name").loc["bottleneck", "mean_queue_packets"]
    assert q["bottleneck"].mean() == pytest.approx(mean, rel=1e-9)
    series = result.link_series("bottleneck")
    assert {"arrivals", "drops", "utilization", "max_queue_packets"} <= set(series.columns)
    with pytest.raises(KeyError):
        result.link_series("nowhere")


def test_trace_has_the_agent_fields(result: Result) -> None:
    trace = result.trace("cbr1")
    assert list(trace.columns) == ["packets_sent"]
    assert trace.index[-1] == pytest.approx(3.0)
    assert trace["packets_sent"].iloc[-1] == result.flows.loc[1, "packets_sent"]
    assert result.trace(1).equals(trace)
    with pytest.raises(KeyError):
        result.trace("nobody")
    with pytest.raises(KeyError):
        result.trace(2)


def test_packet_trace(result: Result) -> None:
    trace = result.packet_trace
    assert trace is not None
    assert len(trace) == 500
    assert result.info.packet_trace_overflowed > 0
    assert set(trace["event"].cat.categories) >= {"sent", "delivered", "dropped_queue"}
    assert (trace["time_s"].diff().dropna() >= 0).all()


def test_parquet_round_trip(tmp_path: Path, result: Result) -> None:
    out = result.to_parquet(tmp_path / "run")
    assert {p.name for p in out.iterdir()} >= {
        "run.json",
        "scenario.toml",
        "flows.parquet",
        "links.parquet",
        "flow_bins.parquet",
        "link_bins.parquet",
        "flow_states.parquet",
        "packet_trace.parquet",
    }
    back = Result.from_parquet(out)
    assert back.equals(result)
    assert back.info == result.info
    pd.testing.assert_frame_equal(back.rates(0.5), result.rates(0.5))
    pd.testing.assert_frame_equal(back.trace("cbr0"), result.trace("cbr0"))
    flow_bins = pd.read_parquet(out / "flow_bins.parquet")
    assert len(flow_bins) == 2 * 30


def test_saved_result_without_timings_reads_none(tmp_path: Path, result: Result) -> None:
    # Results saved before the CPU timings were recorded read back without them.
    out = result.to_parquet(tmp_path / "run")
    meta = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert result.info.cpu_seconds is not None
    assert meta["cpu_seconds"] == result.info.cpu_seconds
    del meta["cpu_seconds"], meta["setup_cpu_seconds"]
    (out / "run.json").write_text(json.dumps(meta), encoding="utf-8")
    back = Result.from_parquet(out)
    assert (back.info.cpu_seconds, back.info.setup_cpu_seconds) == (None, None)
    assert back.equals(result)


def test_round_trip_without_packet_trace(tmp_path: Path, small: Scenario) -> None:
    plain = tfrclab.run(small.with_(**{"monitor.packet_trace": 0}), seed=3)
    assert plain.packet_trace is None
    back = Result.from_parquet(plain.to_parquet(tmp_path))
    assert back.equals(plain)
    assert not back.equals(tfrclab.run(small, seed=3))


def test_native_simulation_steps_and_refuses_use_after_finish() -> None:
    sim = _native.Simulation(SMALL_SCENARIO, 4)
    assert sim.seed == 4
    assert sim.end_ns == 3_000_000_000
    sim.run_until(1_000_000_000)
    assert sim.now_ns == 1_000_000_000
    assert sim.events > 0
    sim.finish()
    with pytest.raises(RuntimeError, match="finished"):
        sim.run_until(2_000_000_000)
    with pytest.raises(RuntimeError, match="finished"):
        sim.finish()


def test_native_errors_carry_their_parts() -> None:
    with pytest.raises(tfrclab.ScenarioError) as info:
        _native.Simulation(SMALL_SCENARIO.replace('"2Mbps"', '"2 parsecs"'))
    err = info.value
    assert (err.kind, err.path) == ("invalid", "topology.bottleneck.rate")
    assert err.found == '"2 parsecs"'
    assert str(err) == f"topology.bottleneck.rate: expected {err.expected}, found {err.found}"


def test_the_gil_is_released_while_simulating() -> None:
    long = SMALL_SCENARIO.replace('duration = "3s"', 'duration = "300s"').replace(
        "packet_trace = 500", "packet_trace = 0"
    )
    sim = _native.Simulation(long, 1)
    ticks = 0
    done = threading.Event()

    def simulate() -> None:
        sim.run_until(sim.end_ns)
        done.set()

    worker = threading.Thread(target=simulate)
    worker.start()
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    worker.join()
    assert ticks > 3, "the main thread should run while the simulation does"
