"""The run's tables (flows, groups, links) hold what the summary's DataFrames hold.

``tfrclab run`` prints them from the summary's columns, without making DataFrames, so that
printing a run's tables does not import pandas (a quarter of a second of start-up). These
tests rebuild every cell from the public DataFrames (``Summary.flows``, ``Summary.classes``,
``Summary.links``, ``queue_in_packets``, ``Result.links``) as the tables were printed from them
before, on a scenario with named groups, partial and never-started flows, byte-limited
DropTail and RED in bytes, and on the same result read back from Parquet (a result whose
tables are DataFrames).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from rich.table import Table

import tfrclab
from tfrclab import Result
from tfrclab.report import classes_table, flows_table, links_table, render_text
from tfrclab.summary import queue_in_packets

SCENARIO = """\
name = "byte queues, groups and partial flows"
duration = "6s"

[monitor]
bin = "100ms"
links = "all"

[measure]
from = "1s"
to = "5s"

[topology]
kind = "dumbbell"
hosts = 3

[topology.bottleneck]
rate = "5Mbps"
delay = "10ms"
queue = { kind = "droptail", bytes = "30000B" }

[topology.access]
rate = "100Mbps"
delay = "2ms"
queue = { kind = "red", preset = "ns2_35", queue_in_bytes = true }

[[flows]]
kind = "tcp"
variant = "sack"
count = 2
group = "tcp 2"

[[flows]]
kind = "tfrc"
start = "2s"
stop = "4s"

[[flows]]
kind = "cbr"
rate = "1Mbps"
start = "5.5s"
"""
"""Flows of a named group, a partial TFRC flow and a CBR flow starting after the window."""


@pytest.fixture(scope="module")
def result() -> Result:
    return tfrclab.run(tfrclab.Scenario.from_toml(SCENARIO))


def _cells(table: Table) -> list[list[str]]:
    """The table's rows, as the strings it prints."""
    columns = [list(column.cells) for column in table.columns]
    return [list(row) for row in zip(*columns, strict=True)]


def _mbps(bits_per_s: float) -> str:
    return "-" if not math.isfinite(bits_per_s) else f"{bits_per_s / 1e6:.3f}"


def _number(value: float, digits: int) -> str:
    return "-" if not math.isfinite(value) else f"{value:.{digits}f}"


def _flow_rows(summary: Any, max_rows: int) -> list[list[str]]:
    flows = summary.flows
    named = any(str(g) != str(c) for g, c in zip(flows["group"], flows["class"], strict=True))
    rows = [
        [
            str(row["id"]),
            str(row["name"]),
            str(row["class"]),
            *((str(row["group"]),) if named else ()),
            _mbps(float(row["throughput_bits_per_s"])),
            _number(float(row["normalized_throughput"]), 2),
            f"{row['packet_loss_rate']:.4f}",
            f"{row['loss_event_rate']:.4f}",
            str(row["status"]),
        ]
        for _, row in flows.head(max_rows).iterrows()
    ]
    if len(flows) > max_rows:
        width = 9 if named else 8
        rows.append(["...", f"({len(flows) - max_rows} more)", *[""] * (width - 2)])
    return rows


def _class_rows(summary: Any) -> list[list[str]]:
    return [
        [
            str(row["class"]) + ("*" if row["partial"] else ""),
            str(row["flows"]),
            _mbps(float(row["mean_throughput_bits_per_s"])),
            _number(float(row["normalized_throughput"]), 2),
            _number(float(row["fairness_index"]), 3),
            _number(float(row["friendliness_ratio"]), 2),
            "background" if row["background"] else str(row["friendliness_rating"]),
            _number(float(row["difference_ratio"]), 2),
        ]
        for _, row in summary.classes.iterrows()
    ]


def _link_rows(result: Result, summary: Any) -> list[list[str]]:
    queues = queue_in_packets(result).set_index("name")
    links = result.links.set_index("name")
    rows = []
    for _, row in summary.links.iterrows():
        name = str(row["name"])
        kind = {"red": "RED", "droptail": "DropTail"}[str(queues.loc[name, "queue_kind"])]
        packets = float(queues.loc[name, "buffer_packets"])
        queue = f"{kind} {packets:.0f}p" if math.isfinite(packets) else kind
        limit_bytes = int(links.loc[name, "limit_bytes"])
        if limit_bytes >= 0:
            queue += f" ({limit_bytes}B)"
        rows.append(
            [
                name,
                _mbps(float(row["rate_bps"])),
                queue,
                f"{row['utilization']:.3f}",
                f"{row['drop_rate']:.4f}",
                f"{row['mean_queue_packets']:.2f}",
                str(row["max_queue_packets"]),
            ]
        )
    return rows


def test_the_scenario_covers_what_the_tables_print(result: Result) -> None:
    # What the cells below are meant to exercise: a named group, a partial flow, a flow that
    # never ran in the window, byte limits, RED in bytes (buffer converted to packets) and RED
    # on a link no data crosses (no packet size: no buffer in packets).
    summary = result.summary()
    assert list(summary.flows["status"]) == ["", "", "partial", "not started"]
    assert "tcp 2" in list(summary.flows["group"])
    links = result.links.set_index("name")
    assert (links["limit_bytes"] >= 0).all()
    assert links["red_in_bytes"].any()
    assert queue_in_packets(result)["buffer_packets"].isna().any()


@pytest.mark.parametrize("max_rows", [40, 2])
def test_flows_table_cells_are_the_summary_frames(result: Result, max_rows: int) -> None:
    summary = result.summary()
    assert _cells(flows_table(result, summary, max_rows=max_rows)) == _flow_rows(summary, max_rows)


def test_classes_and_links_tables_cells_are_the_summary_frames(result: Result) -> None:
    summary = result.summary()
    assert _cells(classes_table(summary)) == _class_rows(summary)
    links = _cells(links_table(result, summary))
    assert links == _link_rows(result, summary)
    # The buffers in packets as printed before the tables were read from columns: 30000 B of
    # the data crossing the bottleneck, ns-2.35's RED buffer of 50 x 500 B on an access link,
    # and no packet count where no data crosses.
    queues = {row[0]: row[2] for row in links}
    assert queues["bottleneck"] == "DropTail 29p (30000B)"
    assert queues["bottleneck_reverse"] == "DropTail (30000B)"
    assert queues["left0->router_left"] == "RED 24p (25000B)"
    assert queues["router_left->left0"] == "RED (25000B)"


def test_tables_read_back_from_parquet_print_the_same(result: Result, tmp_path: Path) -> None:
    # A result read from a run directory keeps its tables as DataFrames: the same text.
    again = Result.from_parquet(result.to_parquet(tmp_path / "run"))

    def text(of: Result) -> str:
        summary = of.summary()
        return render_text(
            flows_table(of, summary), classes_table(summary), links_table(of, summary)
        )

    assert text(again) == text(result)
    assert "(30000B)" in text(result)
