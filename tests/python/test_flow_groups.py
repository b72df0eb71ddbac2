"""Flow groups: the ``group`` key pools flows everywhere, rated against a reference group.

Every table, ``--json``, sweep, figure and cross-check pools by group; the friendliness columns
take a named reference group; the per-flow datasets carry the base RTT and the path.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import tfrclab
from tfrclab import Result, Scenario, metrics, sweep
from tfrclab.cli import main
from tfrclab.figures import rates_figure, sweep_figure
from tfrclab.ns2.crosscheck import flow_groups, seed_metrics
from tfrclab.ns2.output import from_result
from tfrclab.ns2.plan import resolve
from tfrclab.report import json_summary

HETERO = """\
name = "20ms and 200ms flows with web background"
duration = "8s"

[monitor]
bin = "100ms"

[measure]
from = "3s"
reference_group = "tcp 20ms"

[topology]
kind = "graph"
nodes = ["s1", "s2", "r1", "r2", "d1", "d2"]

[[topology.links]]
from = "s1"
to = "r1"
rate = "100Mbps"
delay = "4ms"
duplex = true

[[topology.links]]
from = "s2"
to = "r1"
rate = "100Mbps"
delay = "94ms"
duplex = true

[[topology.links]]
from = "r1"
to = "r2"
name = "bottleneck"
rate = "4Mbps"
delay = "5ms"
duplex = true
queue = { kind = "red", limit = 60 }

[[topology.links]]
from = "r2"
to = "d1"
rate = "100Mbps"
delay = "1ms"
duplex = true

[[topology.links]]
from = "r2"
to = "d2"
rate = "100Mbps"
delay = "1ms"
duplex = true

[[flows]]
kind = "tcp"
variant = "sack"
count = 2
from = "s1"
to = "d1"
group = "tcp 20ms"

[[flows]]
kind = "tfrc"
count = 2
from = "s1"
to = "d1"
group = "tfrc 20ms"

[[flows]]
kind = "tcp"
variant = "sack"
count = 2
from = "s2"
to = "d2"
group = "tcp 200ms"

[[flows]]
kind = "tfrc"
count = 2
from = "s2"
to = "d2"
group = "tfrc 200ms"

[[flows]]
kind = "web"
count = 10
from = "s1"
to = "d1"
load = "1Mbps"
"""
"""TCP and TFRC on a 20 ms and a 200 ms path through one bottleneck, with web background."""

GROUPS = ["tcp 20ms", "tfrc 20ms", "tcp 200ms", "tfrc 200ms", "web/reno"]


def _without_groups(text: str) -> str:
    lines = text.splitlines(keepends=True)
    return "".join(line for line in lines if not line.startswith(("group =", "reference_group =")))


@pytest.fixture(scope="module")
def hetero() -> Result:
    return tfrclab.run(Scenario.from_toml(HETERO), seed=1)


def test_groups_pool_their_flows_and_are_rated_against_the_reference(hetero: Result) -> None:
    summary = hetero.summary()
    flows = summary.flows
    classes = summary.classes.set_index("class")
    assert list(classes.index) == GROUPS
    rates = flows["active_throughput_bits_per_s"].to_numpy()
    reference = rates[(flows["group"] == "tcp 20ms").to_numpy()]
    for group in GROUPS[:4]:
        mine = rates[(flows["group"] == group).to_numpy()]
        row = classes.loc[group]
        assert row["flows"] == 2
        assert row["mean_throughput_bits_per_s"] == pytest.approx(mine.mean())
        assert row["fairness_index"] == pytest.approx(metrics.fairness_index(mine))
        assert row["friendliness_ratio"] == pytest.approx(
            metrics.friendliness_ratio(mine, reference)
        )
        assert not row["background"]
        assert bool(row["reference"]) == (group == "tcp 20ms")
    # The long path gets less than the short one: pooled by protocol, that was hidden.
    assert classes.loc["tcp 200ms", "friendliness_ratio"] < 1.0
    # Web sessions are background: pooled, but not rated.
    web = classes.loc["web/reno"]
    assert bool(web["background"])
    assert web["flows"] == 10
    assert math.isnan(web["friendliness_ratio"])
    assert web["friendliness_rating"] == ""
    # Another reference, given when summarizing; one that no flow has is refused by name.
    other = hetero.summary(reference_group="tcp 200ms").classes.set_index("class")
    assert other.loc["tcp 200ms", "friendliness_ratio"] == pytest.approx(1.0)
    with pytest.raises(ValueError, match=r"measure.reference_group: 'tcp' .*groups: tcp 20ms"):
        hetero.summary(reference_group="tcp")


def test_flows_carry_their_group_base_rtt_and_path(hetero: Result) -> None:
    flows = hetero.summary().flows.set_index("name")
    assert flows.loc["tcp0", "group"] == "tcp 20ms"
    assert flows.loc["tcp0", "class"] == "tcp/sack"
    assert flows.loc["tcp0", "base_rtt_s"] == pytest.approx(0.022, abs=0.001)
    assert flows.loc["tcp2", "base_rtt_s"] == pytest.approx(0.202, abs=0.001)
    assert flows.loc["tcp0", "path"].split(" ")[1] == "bottleneck"
    assert flows.loc["tcp2", "path"] != flows.loc["tcp0", "path"]
    obj = json.loads(json.dumps(json_summary(hetero)))
    by_name = {flow["name"]: flow for flow in obj["flows"]}
    assert by_name["tfrc3"]["group"] == "tfrc 200ms"
    assert by_name["web0"]["background"] is True
    assert by_name["tcp2"]["base_rtt_s"] == pytest.approx(0.2, rel=0.02)
    assert by_name["tcp2"]["path"] == flows.loc["tcp2", "path"]
    assert [c["class"] for c in obj["classes"]] == GROUPS


def test_without_group_keys_the_groups_are_the_protocol_classes() -> None:
    plain = tfrclab.run(Scenario.from_toml(_without_groups(HETERO)), seed=1)
    summary = plain.summary()
    assert list(summary.classes["class"]) == ["tcp/sack", "tfrc/rfc5348", "web/reno"]
    assert list(summary.flows["group"]) == list(summary.flows["class"])
    # The same run: group keys change the reporting only.
    labelled = tfrclab.run(Scenario.from_toml(HETERO), seed=1)
    assert np.array_equal(plain.flow_bins["received_bytes"], labelled.flow_bins["received_bytes"])
    assert plain.info.events == labelled.info.events


def test_summary_and_plot_give_the_per_group_answer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = tmp_path / "hetero.toml"
    scenario.write_text(HETERO)
    out = tmp_path / "run"
    assert main(["run", str(scenario), "--seed", "1", "--out", str(out), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["summary", str(out)]) == 0
    text = capsys.readouterr().out
    assert "groups (window" in text
    assert "vs tcp 20ms" in text
    for group in GROUPS:
        assert group in text
    assert "background" in text
    # Another reference for the run directory, by option; an unknown one in one line.
    assert main(["summary", str(out), "--reference-group", "tcp 200ms"]) == 0
    assert "vs tcp 200ms" in capsys.readouterr().out
    assert main(["summary", str(out), "--reference-group", "tcp"]) == 2
    err = capsys.readouterr().err
    assert "--reference-group: expected the group of a flow of" in err
    assert "'tcp 20ms', 'tfrc 20ms', 'tcp 200ms'" in err
    (out / "rates.png").unlink()
    assert main(["plot", str(out)]) == 0
    png = (out / "rates.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    # Two panels (long-lived flows above, background below) make the figure taller.
    height = int.from_bytes(png[20:24], "big")
    assert height > 700
    figure = rates_figure(Result.from_parquet(out))
    top, bottom = figure.axes
    top_labels = [t.get_text() for t in top.get_legend().get_texts()]
    assert [label.split(":")[0] for label in top_labels[:4]] == GROUPS[:4]
    assert [t.get_text() for t in bottom.get_legend().get_texts()] == [
        "web/reno: total of 10 flow(s)"
    ]


def test_sweep_datasets_and_figures_hold_the_groups(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = tmp_path / "hetero.toml"
    scenario.write_text(HETERO.replace('duration = "8s"', 'duration = "5s"'))
    out = tmp_path / "sweep"
    args = ["sweep", str(scenario), "--vary", "topology.links.2.rate=3Mbps,4Mbps"]
    assert main([*args, "--out", str(out), "--quiet", "--json"]) == 0
    runs = sweep.load(out, "runs")
    assert {"group", "background", "base_rtt_s", "path"} <= set(runs.columns)
    assert set(runs["group"]) == {*GROUPS[:4], "web/reno"}
    classes = sweep.load(out, "classes")
    assert list(dict.fromkeys(classes["class"])) == GROUPS
    manifest = sweep.read_manifest(out)
    figure = sweep_figure(classes, manifest)
    labels = [t.get_text() for t in figure.axes[0].get_legend().get_texts()]
    assert set(labels) == set(GROUPS)
    capsys.readouterr()
    assert main(["summary", str(out)]) == 0
    text = capsys.readouterr().out
    assert "sweep: per group" in text
    assert "vs tcp 20ms" in text
    assert "tfrc 200ms" in text


def test_crosscheck_metrics_are_per_group(hetero: Result) -> None:
    scenario = Scenario.from_toml(HETERO)
    plan = resolve(scenario, 1)
    groups = flow_groups(plan)
    assert list(groups) == [*GROUPS[:4], "web"]
    series = from_result(hetero, plan, 1.0)
    out = seed_metrics(plan, series, 3.0, 8.0)
    for group in GROUPS[:4]:
        assert math.isfinite(out[f"throughput/{group}"])
        assert f"cov_1s/{group}" in out
    assert out["throughput/tcp 20ms"] > out["throughput/tcp 200ms"]
    # The web sessions are background: the 8 long-lived flows share what they leave.
    bits = series.received_bytes[:, 3:8].sum(axis=1) * 8.0 / 5.0
    left = 4e6 - bits[groups["web"]].sum()
    assert out["throughput/tcp 20ms"] == pytest.approx(
        float(np.mean(bits[groups["tcp 20ms"]] / (left / 8)))
    )


def test_the_fluid_model_keeps_the_groups_and_the_reference(tmp_path: Path) -> None:
    scenario = tmp_path / "fluid.toml"
    scenario.write_text(
        'duration = "6s"\n[measure]\nfrom = "2s"\nreference_group = "window"\n'
        '[topology]\nkind = "dumbbell"\nhosts = 3\n'
        'bottleneck = { rate = "10Mbps", delay = "20ms", queue = { kind = "droptail", '
        "limit = 100 } }\n"
        '[[flows]]\nkind = "tcp"\nvariant = "sack"\ncount = 2\ngroup = "window"\n'
        '[[flows]]\nkind = "tfrc"\ngroup = "rate"\n'
    )
    out = tmp_path / "fluid"
    assert main(["fluid", str(scenario), "--out", str(out)]) == 0
    classes = Result.from_parquet(out).summary().classes.set_index("class")
    assert list(classes.index) == ["window", "rate"]
    assert bool(classes.loc["window", "reference"])
    assert classes.loc["window", "friendliness_ratio"] == pytest.approx(1.0)
