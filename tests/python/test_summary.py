"""Summaries over a measurement window: flows, links, protocol classes, and how they are shown."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

import tfrclab
from conftest import REPO_ROOT
from tfrclab import Result, Scenario, metrics
from tfrclab.cli import main
from tfrclab.report import classes_table, flows_table, json_summary
from tfrclab.window import Window

DUMBBELL = REPO_ROOT / "scenarios" / "examples" / "dumbbell.toml"

MIXED = """\
name = "mixed"
duration = "12s"

[monitor]
bin = "100ms"

[measure]
from = "4s"
to = "10s"

[topology]
kind = "dumbbell"
hosts = 5

[topology.bottleneck]
rate = "4Mbps"
delay = "10ms"
queue = { kind = "droptail", limit = 30 }

[topology.access]
rate = "100Mbps"
delay = "5ms"

[[flows]]
kind = "tcp"
variant = "reno"
count = 2

[[flows]]
kind = "tfrc"
count = 1

[[flows]]
kind = "cbr"
rate = "500kbps"
name = "late"
start = "7s"

[[flows]]
kind = "cbr"
rate = "500kbps"
name = "early"
stop = "3s"
"""
"""Two Reno flows, a TFRC flow, a CBR flow starting inside the window and one stopped before."""


@pytest.fixture(scope="module")
def mixed() -> Result:
    return tfrclab.run(Scenario.from_toml(MIXED), seed=3)


def test_window_snaps_to_bins_and_knows_the_last_partial_bin() -> None:
    w = Window.snap(0.26, 0.95, 0.1, 0.95)
    assert (w.first, w.last) == (3, 10)
    assert w.from_s == pytest.approx(0.3)
    assert w.to_s == pytest.approx(0.95)
    np.testing.assert_allclose(w.widths_s[-1], 0.05)
    assert w.length_s == pytest.approx(w.widths_s.sum())
    assert not w.whole_run
    assert Window.snap(0.0, 0.95, 0.1, 0.95).whole_run
    with pytest.raises(ValueError, match="start before the end"):
        Window.snap(1.0, 2.0, 0.1, 1.0)
    with pytest.raises(ValueError, match="end after its start"):
        Window.snap(0.5, 0.5, 0.1, 1.0)


def test_flow_figures_are_the_bins_inside_the_window(mixed: Result) -> None:
    summary = mixed.summary()
    assert summary.window.as_dict() == {"from_s": 4.0, "to_s": 10.0}
    bins = slice(40, 100)
    flows = summary.flows
    for key, column in (
        ("sent_packets", "packets_sent"),
        ("received_bytes", "bytes_received"),
        ("loss_events", "loss_events"),
        ("dropped_packets", "packets_dropped"),
    ):
        np.testing.assert_array_equal(mixed.flow_bins[key][:, bins].sum(axis=1), flows[column])
    np.testing.assert_allclose(
        flows["throughput_bits_per_s"], flows["bytes_received"] * 8 / 6.0, rtol=1e-12
    )
    np.testing.assert_allclose(
        flows["loss_event_rate"],
        metrics.loss_event_rate(flows["loss_events"], flows["packets_sent"]),
    )
    # The whole run is still one call away.
    whole = mixed.summary(0.0, 12.0)
    assert whole.window.whole_run
    np.testing.assert_array_equal(whole.flows["packets_sent"], mixed.flows["packets_sent"])


def test_flows_not_active_for_the_whole_window_are_flagged(mixed: Result) -> None:
    flows = mixed.summary().flows.set_index("name")
    assert flows.loc["late", "status"] == "partial"
    assert flows.loc["late", "active_fraction"] == pytest.approx(0.5)
    # Its throughput while active is twice its throughput over the window.
    assert flows.loc["late", "active_throughput_bits_per_s"] == pytest.approx(
        2 * flows.loc["late", "throughput_bits_per_s"]
    )
    assert flows.loc["early", "status"] == "stopped"
    assert flows.loc["early", "active_fraction"] == 0.0
    assert math.isnan(flows.loc["early", "normalized_throughput"])
    for name in ("tcp0", "tcp1", "tfrc0"):
        assert flows.loc[name, "status"] == ""
    not_started = mixed.summary(0.0, 6.0).flows.set_index("name")
    assert not_started.loc["late", "status"] == "not started"
    # The flags reach --json and the table.
    obj = json_summary(mixed)
    assert {f["name"]: f["status"] for f in obj["flows"]}["early"] == "stopped"
    text = _render(flows_table(mixed))
    assert "partial" in text
    assert "stopped" in text


def test_fair_share_counts_the_flows_active_in_the_window(mixed: Result) -> None:
    flows = mixed.summary().flows.set_index("name")
    # 3 greedy flows share what the background CBR (active half the window) leaves of the
    # bottleneck; the CBR's own share counts every competitor: 3.5 of them.
    cbr = flows.loc["late", "throughput_bits_per_s"]
    assert 0 < cbr < 0.5e6
    assert flows.loc["tcp0", "bottleneck"] == "bottleneck"
    assert flows.loc["tcp0", "fair_share_bits_per_s"] == pytest.approx((4e6 - cbr) / 3)
    assert flows.loc["tcp0", "normalized_throughput"] == pytest.approx(
        flows.loc["tcp0", "throughput_bits_per_s"] / ((4e6 - cbr) / 3)
    )
    assert bool(flows.loc["late", "background"])
    assert not bool(flows.loc["tcp0", "background"])
    assert flows.loc["late", "fair_share_bits_per_s"] == pytest.approx(4e6 / 3.5)


def test_friendliness_columns_equal_the_metrics_on_the_windowed_series(mixed: Result) -> None:
    summary = mixed.summary()
    classes = summary.classes.set_index("class")
    bits = mixed.flow_bins["received_bytes"][:, 40:100].sum(axis=1) * 8 / 6.0
    names = list(mixed.flows["name"])
    tcp = bits[[names.index("tcp0"), names.index("tcp1")]]
    tfrc = bits[[names.index("tfrc0")]]
    row = classes.loc["tfrc/rfc5348"]
    assert row["friendliness_ratio"] == pytest.approx(metrics.friendliness_ratio(tfrc, tcp))
    assert row["friendliness_rating"] == metrics.friendliness_rating(row["friendliness_ratio"])
    assert row["difference_ratio"] == pytest.approx(
        metrics.difference_ratio(tfrc.mean(), tcp.mean())
    )
    assert classes.loc["tcp/reno", "fairness_index"] == pytest.approx(metrics.fairness_index(tcp))
    assert classes.loc["tcp/reno", "friendliness_ratio"] == pytest.approx(1.0)
    # The CBR class is averaged over its partly active flow and marked so; the stopped flow
    # is left out.
    assert bool(classes.loc["cbr", "partial"])
    assert classes.loc["cbr", "flows"] == 1
    # JSON holds the same numbers (NaN as null).
    obj = json.loads(json.dumps(json_summary(mixed)))
    by_class = {c["class"]: c for c in obj["classes"]}
    assert by_class["tfrc/rfc5348"]["friendliness_ratio"] == pytest.approx(
        row["friendliness_ratio"]
    )


def test_windowed_jain_on_flows_starting_within_10s() -> None:
    """Symmetric flows started uniformly in 0-10 s are fair from 20 s on (Jain >= 0.9).

    The whole-run figure of a run that ends before they settle is below 0.5.
    """
    base = Scenario.load(DUMBBELL).with_(**{"topology.bottleneck.rate": "30Mbps"})
    short = tfrclab.run(base.with_(duration="10s", **{"measure.from": "0s"}), seed=1)
    whole = metrics.fairness_index(short.flows["throughput_bits_per_s"].to_numpy())
    assert whole < 0.5
    assert set(short.summary().flows["status"]) == {"partial"}
    measured = tfrclab.run(base.with_(duration="40s"), seed=1)
    summary = measured.summary()
    assert summary.window.as_dict() == {"from_s": 20.0, "to_s": 40.0}
    for _, row in summary.classes.iterrows():
        assert row["fairness_index"] >= 0.9, row["class"]
        assert not row["partial"]
    assert metrics.fairness_index(summary.flows["throughput_bits_per_s"].to_numpy()) >= 0.9


def _render(table: object, width: int = 80) -> str:
    buffer = io.StringIO()
    Console(file=buffer, width=width, highlight=False).print(table)
    return buffer.getvalue()


def test_tables_keep_the_protocol_column_whole_on_80_columns() -> None:
    result = tfrclab.run(
        Scenario.load(DUMBBELL).with_(duration="21s", **{"flows.1.count": 12}), seed=2
    )
    summary = result.summary()
    for table in (flows_table(result, summary), classes_table(summary)):
        text = _render(table)
        assert "tfrc/floyd2000" in text
        assert "tcp/sack" in text
        assert max(len(line) for line in text.splitlines()) <= 80


def test_repr_html_holds_every_flow(mixed: Result) -> None:
    html = mixed._repr_html_()
    assert html.count("<table") == 2
    for name in mixed.flows["name"]:
        assert f"<td>{name}</td>" in html
    assert "window 4s-10s" in html


def test_summary_command_takes_a_window(
    tmp_path: object, capsys: pytest.CaptureFixture[str]
) -> None:
    out = f"{tmp_path}/run"
    scenario = f"{tmp_path}/mixed.toml"
    with open(scenario, "w", encoding="utf-8") as handle:
        handle.write(MIXED)
    assert main(["run", scenario, "--out", out, "--quiet", "--json"]) == 0
    run_json = json.loads(capsys.readouterr().out)
    assert run_json["window"] == {"from_s": 4.0, "to_s": 10.0}
    assert main(["summary", out, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["flows"] == run_json["flows"]
    assert main(["summary", out, "--json", "--measure-from", "0s", "--measure-to", "12s"]) == 0
    whole = json.loads(capsys.readouterr().out)
    assert whole["window"] == {"from_s": 0.0, "to_s": 12.0}
    assert whole["flows"][0]["packets_sent"] > run_json["flows"][0]["packets_sent"]
    assert main(["summary", out, "--measure-from", "20s"]) == 2
    assert "start before the end" in capsys.readouterr().err
    # run --measure-from overrides the scenario's window.
    assert main(["run", scenario, "--json", "--measure-from", "1s"]) == 0
    assert json.loads(capsys.readouterr().out)["window"] == {"from_s": 1.0, "to_s": 10.0}


def test_byte_mode_red_limits_are_shown_in_packets_and_a_smaller_swap_warns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    droptail = DUMBBELL.read_text().replace(
        'queue = { kind = "red", preset = "ns2_2000", limit = 100, min_th = 10, max_th = 50, '
        "gentle = true }",
        'queue = { kind = "droptail", limit = 100 }',
    )
    assert "droptail" in droptail
    path = tmp_path / "droptail.toml"
    path.write_text(droptail)
    red = 'topology.bottleneck.queue={ kind = "red", preset = "ns2_35", limit = 100 }'
    args = ["run", str(path), "--set", "duration=21s", "--set", red, "--quiet"]
    assert main(args) == 0
    captured = capsys.readouterr()
    assert "RED 50p (50000B)" in captured.out
    assert "holds fewer packets than the one it replaced" in captured.err
    assert "50 packets of 1000 B" in captured.err
    # The same limit in packet mode is not smaller: no warning.
    same = 'topology.bottleneck.queue={ kind = "red", preset = "ns2_2000", limit = 100 }'
    assert main(["run", str(path), "--set", "duration=21s", "--set", same, "--quiet"]) == 0
    captured = capsys.readouterr()
    assert "RED 100p" in captured.out
    assert "warning" not in captured.err


def test_red_average_and_thresholds_reach_the_results() -> None:
    result = tfrclab.run(Scenario.load(DUMBBELL).with_(duration="21s"), seed=1)
    links = result.links.set_index("name")
    assert links.loc["bottleneck", "queue_kind"] == "red"
    assert links.loc["bottleneck", "limit_packets"] == 100
    assert (links.loc["bottleneck", "red_min_th"], links.loc["bottleneck", "red_max_th"]) == (
        10.0,
        50.0,
    )
    average = result.link_bins["red_average"][result.binned_links.index("bottleneck")]
    assert np.isfinite(average).all()
    # The EWMA lags the queue but follows it: their means over the run are close.
    queue = result.link_bins["mean_queue_packets"][result.binned_links.index("bottleneck")]
    assert abs(average[50:].mean() - queue[50:].mean()) < 0.25 * queue[50:].mean()
