"""ns-2.35's agent state (TFRC receiver and sender, TCP RTT and RTO), printed and read back."""

from __future__ import annotations

import itertools
import math
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tfrclab.cli import main
from tfrclab.ns2 import crosscheck
from tfrclab.ns2.agent_state import (
    ReceiverReport,
    new_events,
    read_agent_state,
    state_columns,
)
from tfrclab.ns2.crosscheck import NsNotFound, run_ns2
from tfrclab.ns2.export import export_tcl
from tfrclab.ns2.plan import ExportError, resolve
from tfrclab.reproduce import referee, rhee2005_theory
from tfrclab.reproduce.registry import experiments, scenario_path
from tfrclab.scenario import Scenario

needs_ns = pytest.mark.skipif(shutil.which("ns") is None, reason="ns-2 (`ns`) is not installed")

# What ns-2 prints for flows 0 (TFRC) and 5 (TCP), in the order it makes it, with a report of
# another flow's receiver (7, not traced) and an ACK trace line of no interest between. (ns-2
# ends its loss_rate lines with a space, which reading ignores.)
OUTPUT = """\
H 1 3 3
time: 0.51234 loss_rate: 0.05000
time: 0.51234 sample 0:     4 loss_rate: 0.05000
0.512340: sample 0:     4 1:    20 2:    20 3:     0 4:     0
+ 0.51234 0 0 tcpFriendCtl 40 ------- 0 3.0 1.0 4 100
r 0.58000 0 0 tcpFriendCtl 40 ------- 0 3.0 1.0 4 100
Decrease: now:  0.58 rate:  2.84 rtt:  0.12
time:  0.58 rate: 25000.00
time:  0.58 packetrate:  3.00
time:  0.58 maxrate:  1.97
S 1 5 0.12125 1.0 1
+ 0.9 7 7 tcpFriendCtl 40 ------- 0 9.0 2.0 1 101
+ 0.95 4 1 ack 40 ------- 5 4.0 1.0 9 102
time: 1.40000 loss_rate: 0.04000
time: 1.40000 sample 0:     2 loss_rate: 0.04000
1.400000: sample 0:     2 1:    30 2:    20 3:    20 4:     0
+ 1.40000 0 0 tcpFriendCtl 40 ------- 0 3.0 1.0 5 103
r 1.46 0 0 tcpFriendCtl 40 ------- 0 3.0 1.0 5 103
time:  1.46 rate: 20000.00
time:  1.46 packetrate:  3.00
S 2 5 0.125 2.0 2
time: 2.50000 loss_rate: 0.04000
time: 2.50000 sample 0:     9 loss_rate: 0.04000
2.500000: sample 0:     9 1:    30 2:    20 3:    20 4:     0
+ 2.50000 0 0 tcpFriendCtl 40 ------- 0 3.0 1.0 6 104
time: 2.70000 loss_rate: 0.03000
time: 2.70000 sample 0:     1 loss_rate: 0.03000
2.700000: sample 0:     1 1:    15 2:    30 3:    20 4:    20
+ 2.80000 0 0 tcpFriendCtl 40 ------- 0 3.0 1.0 7 105
S 3 5 0.0 1.0 1
"""


def test_prints_are_attributed_to_the_flow_their_trace_line_names() -> None:
    state = read_agent_state(OUTPUT, {0: 1000.0, 5: 1000.0})
    assert [r.time_s for r in state.reports[0]] == [0.51234, 1.4, 2.5]
    assert [r.loss_event_rate for r in state.reports[0]] == [0.05, 0.04, 0.04]
    assert state.reports[0][1].intervals == (2, 30, 20, 20, 0)
    # RTT = packets per RTT x size / rate: 3 x 1000 / 25000 and 3 x 1000 / 20000.
    assert state.rtts[0] == [(0.58, pytest.approx(0.12)), (1.46, pytest.approx(0.15))]
    assert state.tcp[5] == [(1, 0.12125, 1.0, 1.0), (2, 0.125, 2.0, 2.0), (3, 0.0, 1.0, 1.0)]
    # The last print's report left 0.1 s later than it says: left out and counted, not guessed.
    assert state.unattributed == 1
    assert 7 not in state.reports


_FIELD = st.sampled_from(("0", "5", "7", "1.5", "0.51234", "x", "-1", "nan", "1e9", "0:"))
_LINES = st.one_of(
    st.tuples(
        st.just("time:"), _FIELD, st.sampled_from(("loss_rate:", "rate:", "packetrate:")), _FIELD
    ),
    st.tuples(st.sampled_from(("+", "r")), _FIELD, _FIELD, _FIELD, st.just("tcpFriendCtl")),
    st.tuples(st.just("S"), _FIELD, _FIELD, _FIELD, _FIELD, _FIELD),
    st.tuples(st.just("0.5:"), st.just("sample"), *[_FIELD] * 10),
    st.lists(_FIELD, max_size=12).map(tuple),
).map(" ".join)


@given(st.lists(_LINES, max_size=40))
def test_no_line_of_any_shape_stops_the_reading(noise: list[str]) -> None:
    # A fuzz of the reader: lines of the shapes of its prints and trace lines with any field
    # in any place. Each is read, left out or counted, never a traceback, and the real prints
    # after them are still attributed.
    state = read_agent_state("\n".join([*noise, OUTPUT]), {0: 1000.0, 5: 1000.0})
    assert [r.time_s for r in state.reports[0]][-3:] == [0.51234, 1.4, 2.5]
    assert state.tcp[5][-3:] == [(1, 0.12125, 1.0, 1.0), (2, 0.125, 2.0, 2.0), (3, 0.0, 1.0, 1.0)]


def test_unreadable_numbers_are_counted() -> None:
    state = read_agent_state(
        "time: 1.0 loss_rate: x\nS 1 5 a b c\n+ 0.x 0 0 tcpFriendCtl", {0: 1.0, 5: 1.0}
    )
    assert state.malformed == 3
    assert not state.reports
    assert not state.tcp


def test_a_report_counts_the_loss_events_since_the_flows_previous_one() -> None:
    def report(*intervals: int) -> ReceiverReport:
        return ReceiverReport(0.0, 0.1, intervals)

    assert new_events(None, report(4, 20, 20, 0, 0)) == 0
    assert new_events(report(4, 20, 20, 0, 0), report(9, 20, 20, 0, 0)) == 0
    assert new_events(report(9, 20, 20, 0, 0), report(2, 30, 20, 20, 0)) == 1
    assert new_events(report(9, 30, 20, 20, 0), report(1, 3, 12, 30, 20)) == 2
    assert new_events(report(9, 5, 6, 7, 8), report(1, 2, 3, 9, 5)) == 3
    # Equal intervals shift into themselves: the open interval that shrank tells.
    assert new_events(report(20, 20, 20, 20, 20), report(1, 20, 20, 20, 20)) == 1
    # A history that no shift of one to three lines up with (four or more events between two
    # reports, which ns-2's reports right after each event make rare) counts one.
    assert new_events(report(9, 40, 0, 0, 0), report(2, 11, 0, 0, 0)) == 1


def _theta(bg: int, duration: str) -> Scenario:
    return Scenario.load(scenario_path("rhee2005/theta-tcp-rto.toml")).with_(
        **{"flows.2.count": bg, "duration": duration, "measure.from": "1s"}
    )


def test_state_columns_hold_each_sample_ends_value() -> None:
    plan = resolve(_theta(5, "4s"), 1, strict=False)
    state = read_agent_state(OUTPUT, {0: 1000.0, 5: 1000.0})
    columns = state_columns(state, plan, 4, 1.0)
    # Events: one at 1.4 s (rate 0.04); the 2.5 s report changed nothing.
    np.testing.assert_array_equal(columns["rx_inv_theta_hat_samples"][0], [0, 1, 1, 1])
    np.testing.assert_allclose(columns["rx_inv_theta_hat_sum"][0], [0, 0.04, 0.04, 0.04])
    np.testing.assert_allclose(columns["rtt_s"][0], [0.12, 0.15, 0.15, 0.15])
    # TCP: SRTT summed per sample while there is one (none yet at sample 3), the armed RTO.
    np.testing.assert_allclose(columns["rtt_s"][5][:2], [0.12125, 0.125])
    assert math.isnan(columns["rtt_s"][5][2])
    np.testing.assert_allclose(columns["rtt_sum"][5][:3], [0.12125, 0.24625, 0.24625])
    np.testing.assert_array_equal(columns["rtt_samples"][5][:3], [1, 2, 2])
    np.testing.assert_array_equal(columns["rto"][5][:3], [1.0, 2.0, 1.0])
    np.testing.assert_array_equal(columns["backoff"][5][:3], [1, 2, 1])
    assert np.isnan(columns["rto"][1]).all()  # an untraced flow has none


def test_only_long_lived_tfrc_and_tcp_flows_print_their_state() -> None:
    plan = resolve(_theta(5, "4s"), 1, strict=False)
    ping = next(f.index for f in plan.flows if f.kind == "ping")
    with pytest.raises(
        ExportError, match=r"flows\[\d+\]: ns-2's state is printed for TFRC and long-lived TCP"
    ):
        export_tcl(plan, 1.0, agent_state=[0, ping])


def test_line_buffering_needs_stdbuf(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        crosscheck.shutil, "which", lambda name: None if name == "stdbuf" else "/bin/true"
    )
    with pytest.raises(NsNotFound, match="stdbuf"):
        run_ns2("", line_buffered=True)


def test_referee_state_needs_a_sweep() -> None:
    (channel,) = experiments(["floyd2000/fig02"])
    with pytest.raises(ValueError, match="referee_state needs a sweep experiment"):
        replace(channel, referee_state=("tfrc",))


@needs_ns
def test_ns2_prints_its_agents_state_without_changing_the_run(tmp_path: Path) -> None:
    # rhee2005's theta setup with 5 background flows, 40 s: every print of the 5 TFRC and 5
    # TCP flows is attributed, the counters are those of the run without the prints, and the
    # values are each flow's own.
    scenario = _theta(5, "40s")
    plan = resolve(scenario, 1, strict=False)
    traced = [f.index for f in plan.flows if f.name.rstrip("0123456789") in ("tfrc", "tcp")]
    assert len(traced) == 10
    with_state = run_ns2(
        export_tcl(plan, 1.0, drop_trace=True, agent_state=traced), line_buffered=True
    )
    plain = run_ns2(export_tcl(plan, 1.0, drop_trace=True))

    def counters(text: str) -> list[str]:
        return [line for line in text.splitlines() if line[:2] in ("H ", "F ", "L ", "T ", "d ")]

    assert counters(with_state) == counters(plain)
    state = read_agent_state(with_state, dict.fromkeys(traced, 1000.0))
    assert state.unattributed == 0
    for k in traced[:5]:
        reports = state.reports[k]
        assert len(reports) > 20
        assert all(r.time_s >= plan.flows[k].start_s for r in reports)
        events = 0
        for before, after in itertools.pairwise(reports):
            shifts = new_events(before, after)
            events += shifts
            # One flow's reports in order: the open interval only grows until an event closes
            # it, and the interval it closed is at least as long as it was at the report before.
            assert after.intervals[shifts] >= before.intervals[0]
        assert events > 0
        rtts = [r for _, r in state.rtts[k]]
        # Base RTT about 2 x (50 + 2 x 1-3) ms, plus RED's queueing.
        assert 0.1 < float(np.median(rtts)) < 0.3
    for k in traced[5:]:
        rows = state.tcp[k]
        assert [row[0] for row in rows] == list(range(1, 41))
        srtt = [row[1] for row in rows[15:]]
        assert 0.1 < float(np.median(srtt)) < 0.3
        assert all(row[2] == row[3] for row in rows[15:])  # the 1 s floor (min_rto) x backoff
        # Before its first RTT sample (before it starts) the timer arms rtxcur_init_ (3 s in
        # the ns2_35 preset), not what SRTT 0 and the initial RTTVAR would give (48 s).
        before = [row for row in rows if row[0] < plan.flows[k].start_s - 1]
        assert before
        assert all(row[1] == 0.0 and row[2] == 3.0 for row in before)


@needs_ns
def test_the_theta_analysis_runs_on_ns2s_datasets(tmp_path: Path) -> None:
    # Two short cells of rhee2005 Figs. 6-11 (5 and 200 background flows, 90 s) in ns-2 with
    # the drop trace and the agent state: every per-flow value the claims read is there, and
    # every claim of the three experiments gets a number from the analysis run on them
    # (standing in for the twelve cells: the light one for loads 5 and 50, the heavy for 400).
    th = rhee2005_theory

    def cell(load: int) -> Any:
        return referee.ns2_sweep_data(
            th._THETA,
            {"flows.2.count": load, "duration": "90s", "measure.from": "30s"},
            (1,),
            tmp_path,
            print,
            jobs=2,
            drops=True,
            state=th._NS2_STATE,
        )

    light, heavy = cell(5), cell(200)
    runs = heavy.runs.set_index("name")
    assert runs.loc["tfrc0", "status"] == ""
    assert runs.loc["tfrc0", "send_rate_bits_per_s"] == pytest.approx(
        runs.loc["tfrc0", "bytes_sent"] * 8 / 60
    )
    flows = th._cell_flows(heavy)
    for key in ("tfrc_p", "tfrc_rate", "tfrc_inv", "tfrc_rtt", "tcp_p", "tcp_rtt", "tcp_rto"):
        # (a flow that sent under 100 packets in the window has no loss event rate)
        assert len(flows[key]) == 5, key
        assert np.isfinite(flows[key]).sum() >= 3, key
    # E[1/theta_hat] is the receiver's own p, near the monitor's count of the same losses.
    assert 0.5 < float(np.nanmedian(flows["tfrc_inv"] / flows["tfrc_p"])) < 2.0
    cells = {label: heavy if label.endswith("bg400") else light for label, _, _ in th._THETA_CELLS}
    analysis = th._theta_analyze(cells, th.FIG06_07.quick)
    for experiment in (th.FIG06_07, th.FIG08, th.FIG09_11):
        assert experiment.referee_drops
        assert experiment.referee_state == th._NS2_STATE
        for claim in experiment.claims:
            value = claim.measure(analysis)
            assert not math.isnan(value.mean), claim.id


def test_export_cli_prints_the_named_entries_state(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    theta = scenario_path("rhee2005/theta-tcp-rto.toml")
    out = tmp_path / "theta.tcl"
    args = ["export", "ns2", str(theta), "-o", str(out), "--agent-state", "tfrc"]
    assert main([*args, "--agent-state", "tcp"]) == 0
    script = out.read_text()
    assert "fconfigure stdout -buffering line" in script
    # The five TFRC flows (flows 0-4) trace their reports; the five TCP flows (5-9) and no
    # background flow (10 on) are sampled.
    assert [f"$snk({k}) set printLoss_ 1" in script for k in range(6)] == [True] * 5 + [False]
    assert "set tcp_state_flows {5 6 7 8 9}" in script
    assert main(["export", "ns2", str(theta), "-o", str(out)]) == 0
    assert "printLoss_ 1" not in out.read_text()
    # An entry no flow belongs to is refused, by name, with the export's status.
    assert main([*args, "--agent-state", "nope"]) == 2
    assert "agent state: no flow is named 'nope'" in capsys.readouterr().err
