"""Compact run records cross the binding and read back as the dense forms users see.

Narrow counter arrays become int64 series; compressed state traces become float64 arrays.
"""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pytest

import tfrclab
from tfrclab import _native

SCENARIO = """
name = "compact"
duration = "3s"
[monitor]
bin = "10ms"
[topology]
kind = "dumbbell"
hosts = 4
[topology.bottleneck]
rate = "2Mbps"
delay = "20ms"
[[flows]]
kind = "tcp"
variant = "sack"
count = 2
[[flows]]
kind = "tfrc"
count = 2
start = "1s"
"""


def _raw() -> dict[str, Any]:
    sim = _native.Simulation(SCENARIO)
    sim.run_until(10**10)
    return sim.finish()


def test_counters_cross_narrow_and_read_back_as_int64() -> None:
    raw = _raw()
    rows = raw["flow_bins"]["sent_bytes"]
    assert {row.dtype for row in rows} <= {np.dtype(t) for t in ("u1", "u2", "u4", "u8")}
    assert any(row.dtype.itemsize < 8 for row in rows)
    result = tfrclab.run(tfrclab.Scenario.from_toml(SCENARIO))
    bins = result.flow_bins
    assert all(series.dtype == np.int64 for series in bins.values())
    assert bins["sent_bytes"].sum(axis=1).tolist() == result.flows["bytes_sent"].tolist()
    assert bins["sent_packets"].sum(axis=1).tolist() == result.flows["packets_sent"].tolist()


def test_state_traces_decode_per_flow_and_all_at_once_alike() -> None:
    result = tfrclab.run(tfrclab.Scenario.from_toml(SCENARIO))
    one = [result.trace(i).to_numpy().T.copy() for i in range(4)]
    again = pickle.loads(pickle.dumps(result))
    for (fields, values), single in zip(again.states, one, strict=True):
        assert values.shape == (len(fields), result.bins)
        np.testing.assert_array_equal(values, single)
    # The flow that starts at 1 s has a state that does not move before it starts.
    fields, values = result.states[2]
    sent = values[list(fields).index("packets_sent")]
    assert np.all(sent[:99] == 0.0)
    assert sent[-1] > 0


def test_decode_state_refuses_a_corrupt_blob() -> None:
    raw = _raw()
    fields, blob = raw["flow_states"][0]
    good = _native.decode_state(blob, len(fields), raw["bins"])
    assert good.shape == (len(fields), raw["bins"])
    with pytest.raises(ValueError, match="state trace"):
        _native.decode_state(blob[: len(blob) // 2], len(fields), raw["bins"])
    with pytest.raises(ValueError, match="truncated state trace"):
        _native.decode_state(b"", len(fields), raw["bins"])
