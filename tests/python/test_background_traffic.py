"""Background traffic is left out of the fair share and the ratings.

Web sessions, short-TCP aggregates, ON/OFF sources and CBR are background unless a flow says
``background = false``; the long-lived flows share what the background leaves of each link.
"""

from __future__ import annotations

import io
import math

import numpy as np
import pytest
from rich.console import Console

import tfrclab
from tfrclab import Result, Scenario
from tfrclab.figures import rates_figure
from tfrclab.report import classes_table

FAIR_WITH_WEB = """\
name = "eight TCP flows with web background"
duration = "12s"

[monitor]
bin = "100ms"

[measure]
from = "4s"

[topology]
kind = "dumbbell"
hosts = 8
bottleneck = { rate = "10Mbps", delay = "20ms", queue = { kind = "red", limit = 100 } }
access = { rate = "100Mbps", delay = "2ms" }

[[flows]]
kind = "tcp"
variant = "sack"
count = 8
start = { uniform = ["0s", "1s"] }

[[flows]]
kind = "web"
count = 20
share = 0.3
"""
"""A fair scenario: identical long-lived TCP flows, 20 web sessions offering 30 % of the link."""


def _run(text: str) -> Result:
    return tfrclab.run(Scenario.from_toml(text), seed=2)


@pytest.fixture(scope="module")
def fair() -> Result:
    return _run(FAIR_WITH_WEB)


def test_long_lived_flows_share_what_the_web_background_leaves(fair: Result) -> None:
    summary = fair.summary()
    flows = summary.flows
    web = flows["kind"] == "web"
    assert flows["background"].to_numpy().tolist() == web.to_numpy().tolist()
    load = float(flows.loc[web, "throughput_bits_per_s"].sum())
    assert 1e6 < load < 5e6
    tcp = flows[~web]
    assert tcp["fair_share_bits_per_s"].to_numpy() == pytest.approx((10e6 - load) / 8)
    # A fair scenario reads fair: the long-lived flows' mean norm. is about 1 (the link is
    # not quite full), where counting every web session as a competitor gave 2.5-3.3.
    classes = summary.classes.set_index("class")
    assert 0.85 <= classes.loc["tcp/sack", "normalized_throughput"] <= 1.1
    # The sessions are pooled apart and not rated against TCP.
    row = classes.loc["web/reno"]
    assert bool(row["background"])
    assert row["flows"] == 20
    assert math.isnan(row["friendliness_ratio"])
    assert row["friendliness_rating"] == ""
    assert math.isnan(row["difference_ratio"])
    # A background flow's own share still counts every competitor on the link.
    assert flows.loc[web, "fair_share_bits_per_s"].to_numpy() == pytest.approx(10e6 / 28)


def test_background_false_counts_the_sessions_as_competitors_and_moves_the_line(
    fair: Result,
) -> None:
    counted = _run(FAIR_WITH_WEB.replace("share = 0.3", "share = 0.3\nbackground = false"))
    flows = counted.summary().flows
    assert not flows["background"].any()
    assert flows["fair_share_bits_per_s"].to_numpy() == pytest.approx(10e6 / 28)
    classes = counted.summary().classes.set_index("class")
    assert classes.loc["tcp/sack", "normalized_throughput"] > 2.0
    assert classes.loc["web/reno", "friendliness_rating"] != ""
    # The figure: with background, the fair-share line sits at what the web leaves over the
    # 8 TCP flows, in a panel of its own above the background's; without, at a 28th of the
    # link, in one panel.
    apart, together = rates_figure(fair), rates_figure(counted)
    assert len(apart.axes) == 2
    assert len(together.axes) == 1
    load = float(fair.summary().flows.query("background")["throughput_bits_per_s"].sum())

    def line_mbps(figure: object) -> float:
        axes = figure.axes[0]  # type: ignore[attr-defined]
        [line] = [ln for ln in axes.get_lines() if ln.get_label() == "fair share"]
        return float(np.asarray(line.get_ydata())[0])

    assert line_mbps(apart) == pytest.approx((10e6 - load) / 8 / 1e6)
    assert line_mbps(together) == pytest.approx(10 / 28)
    labels = [t.get_text() for t in apart.axes[1].get_legend().get_texts()]
    assert labels == ["web/reno: total of 20 flow(s)"]
    assert "fair share" not in labels


def test_background_defaults_by_kind_and_the_table_marks_it() -> None:
    text = FAIR_WITH_WEB.replace(
        '[[flows]]\nkind = "web"\ncount = 20\nshare = 0.3\n',
        '[[flows]]\nkind = "cbr"\nrate = "1Mbps"\n'
        '[[flows]]\nkind = "pareto"\nrate = "1Mbps"\n'
        '[[flows]]\nkind = "short_tcp"\nload = "1Mbps"\n'
        '[[flows]]\nkind = "tfrc"\nname = "pulsing"\non_off = { on = "1s", off = "1s" }\n'
        '[[flows]]\nkind = "cbr"\nname = "steady"\nrate = "500kbps"\n'
        'background = false\ngroup = "steady"\n',
    )
    summary = _run(text).summary()
    flows = summary.flows.set_index("name")
    assert not flows.loc["tcp0", "background"]
    for name in ("cbr0", "pareto0", "short_tcp0", "pulsing"):
        assert flows.loc[name, "background"], name
    assert not flows.loc["steady", "background"]
    buffer = io.StringIO()
    Console(file=buffer, width=120, highlight=False).print(classes_table(summary))
    rows = {line.split()[0]: line for line in buffer.getvalue().splitlines() if line.strip()}
    assert "background" in rows["cbr"]
    assert "background" in rows["pareto"]
    assert "background" not in rows["tcp/sack"]
    assert "background" not in rows["steady"]
