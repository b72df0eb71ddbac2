"""Fluid model against packet simulation of the same scenario: a table and a figure.

:func:`compare` runs a dumbbell scenario both ways (the fluid model through
:func:`tfrclab.fluid.result.model_from_scenario`, the packets through :func:`tfrclab.run`) and
lines up what both measure over the scenario's measurement window: each flow's throughput and
loss rate, the link's utilization and mean queue.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tfrclab.fluid.result import model_from_scenario, to_result
from tfrclab.fluid.solver import solve
from tfrclab.result import Result
from tfrclab.scenario import Scenario

__all__ = ["Comparison", "compare", "plot_comparison"]


@dataclass(frozen=True)
class Comparison:
    """The fluid and the packet result of one scenario, and their side-by-side table."""

    fluid: Result
    packet: Result
    rows: list[dict[str, object]]
    """One row per flow (``flow``, ``kind``, fluid and packet throughput in Mb/s and share of
    the link, loss rates) and a last row ``bottleneck`` (utilization, mean queue)."""


def _window(result: Result) -> tuple[int, int]:
    lo, hi = result.info.measure_s
    b = result.info.bin_s
    return round(lo / b), round(hi / b)


def _per_flow(result: Result) -> tuple[np.ndarray, np.ndarray, float, float]:
    first, last = _window(result)
    bins = result.flow_bins
    span = (last - first) * result.info.bin_s
    got = bins["received_bytes"][:, first:last].sum(axis=1) * 8 / span / 1e6
    sent = bins["sent_packets"][:, first:last].sum(axis=1)
    lost = bins["dropped_packets"][:, first:last].sum(axis=1)
    loss = np.where(sent > 0, lost / np.maximum(sent, 1), np.nan)
    queue = float(result.link_bins["mean_queue_packets"][0, first:last].mean())
    utilization = float(result.link_bins["utilization"][0, first:last].mean())
    return got, loss, utilization, queue


def compare(scenario: Scenario, seed: int | None = None) -> Comparison:
    """Run ``scenario`` as a fluid model and as packets (same seed) and tabulate both.

    Raises:
        ValueError: if the scenario cannot be a fluid model (see ``model_from_scenario``).
    """
    from tfrclab import simulate

    model = model_from_scenario(scenario, seed=seed)
    fluid = to_result(solve(model), scenario.toml)
    packet = simulate.run(scenario, seed=seed)
    f_rate, f_loss, f_util, f_queue = _per_flow(fluid)
    p_rate, p_loss, p_util, p_queue = _per_flow(packet)
    capacity = model.capacity_bps / 1e6
    rows: list[dict[str, object]] = []
    for k, name in enumerate(model.flow_names):
        rows.append(
            {
                "flow": name,
                "kind": model.flows[k].kind,
                "fluid_mbps": float(f_rate[k]),
                "packet_mbps": float(p_rate[k]),
                "fluid_share": float(f_rate[k] / capacity),
                "packet_share": float(p_rate[k] / capacity),
                "fluid_loss": float(f_loss[k]),
                "packet_loss": float(p_loss[k]),
            }
        )
    rows.append(
        {
            "flow": "bottleneck",
            "kind": "link",
            "fluid_utilization": f_util,
            "packet_utilization": p_util,
            "fluid_mean_queue": f_queue,
            "packet_mean_queue": p_queue,
        }
    )
    return Comparison(fluid, packet, rows)


def plot_comparison(comparison: Comparison, path: Path, title: str = "") -> Path:
    """Draw fluid (solid) against packets (dashed) into a PNG at ``path``.

    Top: each flow's throughput per bin (Mb/s); bottom: the queue (packets), over time.
    """
    from matplotlib.figure import Figure

    figure = Figure(figsize=(8, 5.5))
    top, bottom = figure.subplots(2, 1, sharex=True)
    colors = ["C0", "C1", "C2", "C3", "C4", "C5", "C6", "C7"]
    for result, style, label in (
        (comparison.fluid, "-", "fluid"),
        (comparison.packet, "--", "packets"),
    ):
        t = result.time_s
        rate = result.flow_bins["received_bytes"] * 8 / result.info.bin_s / 1e6
        for k, name in enumerate(result.flows["name"]):
            top.plot(t, rate[k], style, color=colors[k % 8], lw=1, label=f"{name} ({label})")
        bottom.plot(
            t, result.link_bins["mean_queue_packets"][0], style, color="k", lw=1, label=label
        )
    top.set_ylabel("throughput (Mb/s)")
    top.legend(fontsize=7, ncol=2)
    bottom.set_ylabel("queue (packets)")
    bottom.set_xlabel("time (s)")
    bottom.legend(fontsize=7)
    if title:
        top.set_title(title, fontsize=9)
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    return path
