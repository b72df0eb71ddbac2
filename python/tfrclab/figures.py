"""Figures of a run and of a sweep, written as PNG files (matplotlib, no display needed).

- :func:`plot_rates`: every flow's send rate at a timescale (Floyd 2000 eq. 3), coloured by
  protocol, with each protocol's mean;
- :func:`plot_queue`: the binned links' time-weighted mean queue per bin (Floyd 2000 Figs. 14,
  24-28);
- :func:`plot_run`: both, for ``tfrclab run`` and ``tfrclab plot``;
- :func:`plot_sweep`: mean throughput per protocol against the first varied parameter, with
  the spread over seeds.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from tfrclab.result import Result

__all__ = ["default_timescale", "plot_queue", "plot_rates", "plot_run", "plot_sweep"]


def default_timescale(result: Result, target_s: float = 1.0) -> float:
    """The smallest whole number of bins at least ``target_s`` long (at most the run)."""
    bin_s = result.info.bin_s
    k = max(1, min(result.bins, int(np.ceil(target_s / bin_s - 1e-9))))
    return k * bin_s


def _label(kind: str, variant: str) -> str:
    return f"{kind}/{variant}" if variant else kind


def plot_rates(result: Result, path: Path, timescale_s: float | None = None) -> Path:
    """Draw every flow's send rate at ``timescale_s`` (default about 1 s) into ``path``."""
    delta = default_timescale(result) if timescale_s is None else timescale_s
    rates = result.rates(delta) / 1e6
    flows = result.flows
    figure = Figure(figsize=(9, 5), layout="constrained")
    axes = figure.subplots()
    labels = [_label(str(k), str(v)) for k, v in zip(flows["kind"], flows["variant"], strict=True)]
    kinds = sorted(set(labels))
    colours = {kind: f"C{i % 10}" for i, kind in enumerate(kinds)}
    t = rates.index.to_numpy() + delta
    for name, label in zip(flows["name"], labels, strict=True):
        axes.plot(t, rates[name], color=colours[label], alpha=0.35, linewidth=0.8)
    for kind in kinds:
        members = [str(n) for n, lab in zip(flows["name"], labels, strict=True) if lab == kind]
        axes.plot(
            t,
            rates[members].mean(axis=1),
            color=colours[kind],
            linewidth=2.2,
            label=f"{kind}: mean of {len(members)} flow(s)",
        )
    axes.set_xlabel("time (s)")
    axes.set_ylabel(f"send rate (Mb/s, {delta:g} s timescale)")
    axes.set_title("send rates (Floyd 2000 eq. 3); thin lines: single flows")
    axes.grid(visible=True, alpha=0.3)
    axes.legend(loc="upper right", fontsize="small")
    axes.set_xlim(0, result.info.duration_s)
    axes.set_ylim(bottom=0)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    return path


def plot_queue(result: Result, path: Path) -> Path:
    """Draw the binned links' mean queue length per bin into ``path``."""
    queue = result.queue
    figure = Figure(figsize=(9, 4), layout="constrained")
    axes = figure.subplots()
    t = queue.index.to_numpy()
    for name in queue.columns:
        axes.plot(t, queue[name], drawstyle="steps-post", linewidth=1.0, label=str(name))
    axes.set_xlabel("time (s)")
    axes.set_ylabel(f"mean queue per {result.info.bin_s:g} s bin (packets)")
    axes.set_title("queue length (time-weighted mean per bin)")
    axes.grid(visible=True, alpha=0.3)
    if len(queue.columns):
        axes.legend(loc="upper right", fontsize="small")
    axes.set_xlim(0, result.info.duration_s)
    axes.set_ylim(bottom=0)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    return path


def plot_run(result: Result, directory: Path) -> list[Path]:
    """Write ``rates.png`` and ``queue.png`` for ``result`` under ``directory``."""
    return [
        plot_rates(result, directory / "rates.png"),
        plot_queue(result, directory / "queue.png"),
    ]


def plot_sweep(
    runs: pd.DataFrame, params: list[str], path: Path, x_order: list[object] | None = None
) -> Path:
    """Mean throughput per protocol against the first varied parameter.

    ``x_order`` lists that parameter's values in plotting order (default: numeric order when they
    are numbers, else as they come). Each point is the mean over seeds of the per-run mean
    throughput of that protocol's flows; the bars span one standard deviation over seeds. With
    several varied parameters, every combination of the others gets its own line.
    """
    figure = Figure(figsize=(8, 5), layout="constrained")
    axes = figure.subplots()
    x_param = params[0] if params else "seed"
    others = params[1:]
    per_run = (
        runs.groupby([*params, "seed", "kind", "variant"], sort=True)["throughput_bits_per_s"]
        .mean()
        .reset_index()
    )
    group_keys = [*others, "kind", "variant"]
    for i, (key, group) in enumerate(per_run.groupby(group_keys, sort=True)):
        values = key if isinstance(key, tuple) else (key,)
        stats = group.groupby(x_param, sort=False)["throughput_bits_per_s"].agg(["mean", "std"])
        order = (
            _sorted_index(stats.index)
            if x_order is None
            else [v for v in x_order if v in set(stats.index)]
        )
        stats = stats.loc[order]
        xs = np.arange(len(stats))
        label_parts = [f"{p}={v}" for p, v in zip(others, values[: len(others)], strict=True)]
        label_parts.append(_label(str(values[-2]), str(values[-1])))
        axes.errorbar(
            xs,
            stats["mean"] / 1e6,
            yerr=stats["std"].fillna(0) / 1e6,
            marker="o",
            capsize=3,
            color=f"C{i % 10}",
            label=", ".join(label_parts),
        )
        axes.set_xticks(xs, [str(v) for v in stats.index])
    axes.set_xlabel(x_param)
    axes.set_ylabel("mean throughput per flow (Mb/s)")
    axes.set_title("sweep: throughput per flow by protocol (mean ± std over seeds)")
    axes.grid(visible=True, alpha=0.3)
    axes.legend(fontsize="small")
    axes.set_ylim(bottom=0)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    return path


def _sorted_index(index: pd.Index) -> list[object]:
    """The index values in numeric order when they are all numbers, else as they come."""
    values = list(index)
    if all(isinstance(v, int | float | np.integer | np.floating) for v in values):
        return sorted(values, key=float)
    return values
