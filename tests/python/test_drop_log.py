"""``monitor.drop_log``: the send times of the logged flows' dropped packets, in Python."""

from __future__ import annotations

import numpy as np
import pytest

from tfrclab.loss_events import grouped_loss_events
from tfrclab.scenario import Scenario, ScenarioError
from tfrclab.simulate import run

_TOML = """
duration = "8s"
[monitor]
bin = "100ms"
drop_log = ["tcp", "tfrc"]
[topology]
kind = "dumbbell"
hosts = 3
[topology.bottleneck]
rate = "2Mbps"
delay = "20ms"
queue = { kind = "droptail", limit = 15 }
[topology.access]
rate = "100Mbps"
delay = "2ms"
[[flows]]
kind = "tcp"
name = "tcp"
variant = "sack"
[[flows]]
kind = "tfrc"
name = "tfrc"
[[flows]]
kind = "cbr"
name = "cbr"
rate = "300kbps"
"""


def test_drop_send_times_regroup_to_the_monitors_count() -> None:
    result = run(Scenario.from_toml(_TOML))
    assert result.drop_logged_flows == ["tcp", "tfrc"]
    flows = result.flows.set_index("name")
    for name in ("tcp", "tfrc"):
        times = result.drop_send_times(name)
        assert times.dtype == np.float64
        assert times.size == flows.loc[name, "packets_dropped"] > 0
        assert np.all((times >= 0) & (times < 8.0))
        rtt = float(flows.loc[name, "loss_event_rtt_s"])
        # The monitor groups in drop order; sorted send times give the same count here.
        assert grouped_loss_events(np.sort(times), rtt).size == flows.loc[name, "loss_events"]
    with pytest.raises(ValueError, match="'cbr': its drops were not logged"):
        result.drop_send_times("cbr")


def test_logging_changes_no_result() -> None:
    logged = run(Scenario.from_toml(_TOML))
    plain = run(Scenario.from_toml(_TOML).with_(**{"monitor.drop_log": []}))
    assert plain.drop_logged_flows == []
    for key in ("packets_sent", "packets_dropped", "loss_events", "bytes_received"):
        assert logged.flows[key].tolist() == plain.flows[key].tolist()


def test_a_full_log_is_refused_and_bad_names_name_the_field() -> None:
    capped = run(Scenario.from_toml(_TOML).with_(**{"monitor.drop_log_limit": 2}))
    with pytest.raises(ValueError, match="drop_log_limit"):
        capped.drop_send_times("tcp")
    with pytest.raises(ScenarioError, match=r'monitor\.drop_log\[1\].*found "x"'):
        Scenario.from_toml(_TOML.replace('drop_log = ["tcp", "tfrc"]', 'drop_log = ["tcp", "x"]'))
