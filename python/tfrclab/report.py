"""Readable tables and the ``--json`` summary of a run.

The JSON summary is a contract (issue 6): one object with ``version``, ``seed``,
``sim_seconds``, ``wall_seconds``, ``events``, ``flows`` (each with ``id``, ``name``, ``kind``,
``variant``, ``throughput_bits_per_s``, ``packets_sent``, ``packet_loss_rate``,
``loss_event_rate``) and ``links`` (each with ``name``, ``utilization``, ``drop_rate``,
``mean_queue_packets``). More fields may be added; these stay.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
from rich.table import Table

from tfrclab import metrics
from tfrclab.result import Result

__all__ = ["by_kind", "flows_table", "json_summary", "links_table", "sweep_table"]


def json_summary(result: Result) -> dict[str, Any]:
    """The ``tfrclab run --json`` object for ``result`` (see the module documentation)."""
    flows = result.flows
    links = result.links
    return {
        "version": result.info.version,
        "seed": result.info.seed,
        "sim_seconds": result.info.duration_s,
        "wall_seconds": result.info.wall_seconds,
        "events": result.info.events,
        "bin_seconds": result.info.bin_s,
        "flows": [
            {
                "id": int(row["id"]),
                "name": str(row["name"]),
                "kind": str(row["kind"]),
                "variant": str(row["variant"]),
                "throughput_bits_per_s": float(row["throughput_bits_per_s"]),
                "packets_sent": int(row["packets_sent"]),
                "packet_loss_rate": float(row["packet_loss_rate"]),
                "loss_event_rate": float(row["loss_event_rate"]),
                "packets_dropped": int(row["packets_dropped"]),
                "loss_events": int(row["loss_events"]),
            }
            for _, row in flows.iterrows()
        ],
        "links": [
            {
                "name": str(row["name"]),
                "utilization": float(row["utilization"]),
                "drop_rate": float(row["drop_rate"]),
                "mean_queue_packets": float(row["mean_queue_packets"]),
                "rate_bps": int(row["rate_bps"]),
            }
            for _, row in links.iterrows()
        ],
    }


def _mbps(bits_per_s: float) -> str:
    return f"{bits_per_s / 1e6:.3f}"


def by_kind(flows: pd.DataFrame) -> pd.DataFrame:
    """Per protocol (kind and variant): flows, throughput, fairness and loss rates.

    Columns: ``kind``, ``variant``, ``flows``, mean and total throughput, Jain's fairness index
    among the protocol's flows (Yang 2001 eq. 3) and their mean loss rates.
    """
    rows = []
    for (kind, variant), group in flows.groupby(["kind", "variant"], sort=True):
        throughput = group["throughput_bits_per_s"].to_numpy()
        rows.append(
            {
                "kind": kind,
                "variant": variant,
                "flows": len(group),
                "mean_throughput_bits_per_s": float(throughput.mean()),
                "total_throughput_bits_per_s": float(throughput.sum()),
                "fairness_index": float(metrics.fairness_index(throughput)),
                "packet_loss_rate": float(group["packet_loss_rate"].mean()),
                "loss_event_rate": float(group["loss_event_rate"].mean()),
            }
        )
    frame: pd.DataFrame = pd.DataFrame(rows)
    return frame


def flows_table(result: Result, max_rows: int = 40) -> Table:
    """A table of the flows: throughput, packets, loss rates (at most ``max_rows`` rows)."""
    table = Table(title=f"flows (seed {result.info.seed}, {result.info.duration_s:g} s simulated)")
    for header in ("id", "name", "kind", "Mb/s", "sent", "lost", "loss rate", "loss ev.", "LER"):
        table.add_column(header, justify="left" if header in ("name", "kind") else "right")
    flows = result.flows
    for _, row in flows.head(max_rows).iterrows():
        kind = str(row["kind"]) + (f"/{row['variant']}" if row["variant"] else "")
        table.add_row(
            str(row["id"]),
            str(row["name"]),
            kind,
            _mbps(float(row["throughput_bits_per_s"])),
            str(row["packets_sent"]),
            str(row["packets_dropped"]),
            f"{row['packet_loss_rate']:.4f}",
            str(row["loss_events"]),
            f"{row['loss_event_rate']:.4f}",
        )
    if len(flows) > max_rows:
        table.add_row("...", f"({len(flows) - max_rows} more)", *[""] * 7)
    kinds = by_kind(flows)
    if len(kinds) > 0:
        table.add_section()
        for _, row in kinds.iterrows():
            kind = str(row["kind"]) + (f"/{row['variant']}" if row["variant"] else "")
            members = flows[(flows["kind"] == row["kind"]) & (flows["variant"] == row["variant"])]
            table.add_row(
                "all",
                f"{row['flows']} flows",
                kind,
                _mbps(float(row["total_throughput_bits_per_s"])),
                str(members["packets_sent"].sum()),
                str(members["packets_dropped"].sum()),
                f"{row['packet_loss_rate']:.4f}",
                str(members["loss_events"].sum()),
                f"{row['loss_event_rate']:.4f}",
            )
    fairness = ", ".join(
        f"{row['kind']}{'/' + str(row['variant']) if row['variant'] else ''} "
        f"{row['fairness_index']:.3f}"
        for _, row in kinds.iterrows()
    )
    table.caption = (
        "Mb/s: throughput over the run; LER: loss event rate (Rhee & Xu 2005 §2); "
        f"Jain's fairness index per protocol: {fairness}"
    )
    return table


def links_table(result: Result) -> Table:
    """A table of the links that kept per-bin series (the bottlenecks, by default)."""
    table = Table(title="links")
    for header in ("link", "Mb/s", "utilization", "drop rate", "mean queue (pkts)", "max queue"):
        table.add_column(header, justify="left" if header == "link" else "right")
    links = result.links
    for _, row in links[links["binned"]].iterrows():
        table.add_row(
            str(row["name"]),
            _mbps(float(row["rate_bps"])),
            f"{row['utilization']:.3f}",
            f"{row['drop_rate']:.4f}",
            f"{row['mean_queue_packets']:.2f}",
            str(row["max_queue_packets"]),
        )
    return table


def sweep_table(summary: pd.DataFrame, params: list[str]) -> Table:
    """A table of a sweep's summary (:func:`tfrclab.sweep.summarize`)."""
    table = Table(title="sweep")
    columns = [*params, "kind", "runs", "Mb/s (mean)", "Mb/s (std)", "loss event rate", "Jain"]
    for header in columns:
        table.add_column(header, justify="right")
    for _, row in summary.iterrows():
        kind = str(row["kind"]) + (f"/{row['variant']}" if row["variant"] else "")
        std = float(row["throughput_std_bits_per_s"])
        table.add_row(
            *[str(row[p]) for p in params],
            kind,
            str(row["runs"]),
            _mbps(float(row["throughput_bits_per_s"])),
            "-" if math.isnan(std) else _mbps(std),
            f"{row['loss_event_rate']:.4f}",
            f"{row['fairness_index']:.3f}",
        )
    return table
