"""Figures of a run and of a sweep, written as PNG files (matplotlib, no display needed).

- :func:`plot_rates`: every flow's send rate at a timescale (Floyd 2000 eq. 3), coloured by
  flow group (by default the protocol class), with each group's mean and the fair share,
  scaled to the measurement window, background traffic in a panel of its own;
- :func:`plot_queue`: each binned link's time-weighted mean queue per bin, a panel per link
  (Floyd 2000 Figs. 14, 24-28);
- :func:`plot_run`: both, for ``tfrclab run`` and ``tfrclab plot``;
- :func:`plot_sweep`: a per-protocol figure (normalized throughput by default) against a
  varied parameter, mean and 95% CI over seeds, with colours and facets for the others
  (:func:`sweep_figure` draws it without writing it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from tfrclab.result import Result

__all__ = [
    "choose_sweep_axes",
    "default_timescale",
    "plot_queue",
    "plot_rates",
    "plot_run",
    "plot_sweep",
    "rates_figure",
    "sweep_figure",
    "sweep_metrics",
]


def default_timescale(result: Result, target_s: float = 1.0) -> float:
    """The smallest whole number of bins at least ``target_s`` long (at most the run)."""
    bin_s = result.info.bin_s
    k = max(1, min(result.bins, int(np.ceil(target_s / bin_s - 1e-9))))
    return k * bin_s


def plot_rates(result: Result, path: Path, timescale_s: float | None = None) -> Path:
    """Draw every flow's send rate at ``timescale_s`` (default about 1 s) into ``path``.

    The figure is :func:`rates_figure`'s.
    """
    figure = rates_figure(result, timescale_s)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    return path


def rates_figure(result: Result, timescale_s: float | None = None) -> Figure:
    """The figure :func:`plot_rates` writes, for a look at its artists or to save elsewhere.

    Flows are coloured by group (by default the protocol class), each group with its mean. The
    y axis is scaled to the measurement window (slow-start spikes before it do not set it), the
    time before the window is shaded, and a dashed line marks the smallest fair share of the
    long-lived flows. Background traffic (web, short TCP, ON/OFF, CBR; docs/scenario.md) is
    drawn apart, in a panel of its own below, each background group by its total.
    """
    delta = default_timescale(result) if timescale_s is None else timescale_s
    rates = result.rates(delta) / 1e6
    summary = result.summary()
    flows = summary.flows
    window = summary.window
    names = [str(name) for name in flows["name"]]
    groups = [str(group) for group in flows["group"]]
    background = flows["background"].to_numpy(dtype=bool)
    behind = bool(background.any()) and not bool(background.all())
    figure = Figure(figsize=(9, 7 if behind else 5), layout="constrained")
    if behind:
        top_axes, bottom_axes = figure.subplots(
            2, 1, sharex=True, gridspec_kw={"height_ratios": [2, 1]}
        )
        panels = [(top_axes, ~background), (bottom_axes, background)]
    else:
        top_axes = figure.subplots()
        panels = [(top_axes, np.ones(len(names), dtype=bool))]
    colours = {group: f"C{i % 10}" for i, group in enumerate(dict.fromkeys(groups))}
    t = rates.index.to_numpy() + delta
    inside = (t > window.from_s) & (t <= window.to_s + 1e-9)
    for axes, chosen in panels:
        mine = [i for i in range(len(names)) if chosen[i]]
        for i in mine:
            axes.plot(t, rates[names[i]], color=colours[groups[i]], alpha=0.35, linewidth=0.8)
        # Long-lived groups by their mean; background groups by their total, the load they
        # take off the links.
        total = behind and axes is not top_axes
        for group in dict.fromkeys(groups[i] for i in mine):
            members = [names[i] for i in mine if groups[i] == group]
            line = rates[members].sum(axis=1) if total else rates[members].mean(axis=1)
            axes.plot(
                t,
                line,
                color=colours[group],
                linewidth=2.2,
                label=f"{group}: {'total' if total else 'mean'} of {len(members)} flow(s)",
            )
        shares = flows["fair_share_bits_per_s"][chosen].dropna()
        share = float(shares.min()) / 1e6 if len(shares) and axes is top_axes else None
        if share is not None:
            axes.axhline(share, color="black", linestyle="--", linewidth=1.0, label="fair share")
        picked = rates[[names[i] for i in mine]].to_numpy()
        if total:
            picked = picked.sum(axis=1, keepdims=True)
        steady = picked[inside] if inside.any() else picked
        top = float(np.nanpercentile(steady, 99)) if steady.size else 0.0
        if share is not None:
            top = max(top, share)
        if window.from_s > 0:
            axes.axvspan(
                0,
                window.from_s,
                color="grey",
                alpha=0.12,
                label="before the window" if axes is top_axes else None,
            )
        axes.set_ylabel(f"send rate (Mb/s, {delta:g} s timescale)")
        axes.grid(visible=True, alpha=0.3)
        axes.legend(loc="upper right", fontsize="small")
        axes.set_xlim(0, result.info.duration_s)
        axes.set_ylim(0, top * 1.3 if top > 0 else None)
    top_axes.set_title(
        f"send rates (Floyd 2000 eq. 3); thin lines: single flows; window {window.label()}"
    )
    if behind:
        panels[1][0].set_title("background traffic (not counted in the fair share)")
    panels[-1][0].set_xlabel("time (s)")
    return figure


def plot_queue(result: Result, path: Path) -> Path:
    """Draw each binned link's queue into ``path``, one panel per link.

    The time-weighted mean queue per bin; for RED, also its average queue at the end of each
    bin and its thresholds, all in packets of the data crossing the link.
    """
    from tfrclab.summary import queue_in_packets

    queue = result.queue
    setups = queue_in_packets(result).set_index("name")
    red_average = result.link_bins["red_average"]
    panels = max(1, len(queue.columns))
    figure = Figure(figsize=(9, 2.2 + 1.8 * panels), layout="constrained")
    axes_list = figure.subplots(panels, 1, sharex=True, squeeze=False)[:, 0]
    t = queue.index.to_numpy()
    window = result.summary().window
    for row, (axes, name) in enumerate(zip(axes_list, queue.columns, strict=False)):
        axes.plot(t, queue[name], drawstyle="steps-post", linewidth=1.0, color="C0", label="queue")
        setup = setups.loc[name]
        if setup["queue_kind"] == "red" and not np.isnan(red_average[row]).all():
            axes.plot(
                t + result.info.bin_s,
                red_average[row] / setup["red_scale"],
                color="C3",
                linewidth=1.2,
                label="RED average",
            )
            for key, style in (("red_min_th_packets", ":"), ("red_max_th_packets", "--")):
                axes.axhline(setup[key], color="C3", linestyle=style, linewidth=0.8)
            axes.legend(loc="upper right", fontsize="small")
        if window.from_s > 0:
            axes.axvspan(0, window.from_s, color="grey", alpha=0.12)
        axes.set_ylabel("packets")
        axes.set_title(f"{name}: time-weighted mean queue per {result.info.bin_s:g} s bin")
        axes.grid(visible=True, alpha=0.3)
        axes.set_ylim(bottom=0)
    axes_list[-1].set_xlabel("time (s)")
    axes_list[-1].set_xlim(0, result.info.duration_s)
    if not len(queue.columns):
        axes_list[0].set_title("no binned links")
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    return path


def plot_run(result: Result, directory: Path) -> list[Path]:
    """Write ``rates.png`` and ``queue.png`` for ``result`` under ``directory``."""
    return [
        plot_rates(result, directory / "rates.png"),
        plot_queue(result, directory / "queue.png"),
    ]


def choose_sweep_axes(
    classes: pd.DataFrame,
    params: list[str],
    x: str | None = None,
    hue: str | None = None,
    facet: str | None = None,
) -> tuple[str, list[str], str | None]:
    """The x parameter, the hue keys and the facet parameter of a sweep figure.

    Defaults: x is the parameter with the most values (seed when nothing was varied), facets
    split by the parameter with the next most values, and colour tells the protocol class
    apart together with any remaining parameters. Given names must be varied parameters
    (``class`` may also be given as ``hue``).

    Raises:
        ValueError: naming an unknown parameter, or one used twice.
    """
    known = set(params)
    for option, name in (("--x", x), ("--hue", hue), ("--facet", facet)):
        if name is not None and name not in known and not (option == "--hue" and name == "class"):
            choices = ", ".join(params) if params else "none (nothing was varied)"
            raise ValueError(f"{option} {name!r}: not a varied parameter; varied: {choices}")
    chosen = [n for n in (x, hue, facet) if n is not None]
    if len(set(chosen)) != len(chosen):
        raise ValueError("--x, --hue and --facet must name different parameters")
    by_values = sorted(params, key=lambda p: -classes[p].nunique())
    free = [p for p in by_values if p not in chosen]
    if x is None:
        x = free.pop(0) if free else "seed"
    # A facet takes a parameter when colour still has one to show, or colour was chosen.
    if facet is None and free and (hue is not None or len(free) >= 2):
        facet = free.pop(0)
    hue_keys = [hue] if hue is not None else ["class"]
    if "class" not in hue_keys:
        hue_keys.append("class")
    hue_keys += [p for p in free if p not in hue_keys and p != facet]
    return x, hue_keys, facet


def sweep_metrics(classes: pd.DataFrame) -> list[str]:
    """The per-class figures of a sweep's ``classes`` dataset a sweep figure can draw.

    They are the figures :func:`tfrclab.sweep.summarize` averages over seeds
    (:data:`tfrclab.sweep.CLASS_FIGURES`), those the dataset holds.
    """
    from tfrclab.sweep import CLASS_FIGURES

    return [name for name in CLASS_FIGURES if name in classes.columns]


def sweep_figure(
    classes: pd.DataFrame,
    manifest: dict[str, Any],
    x: str | None = None,
    hue: str | None = None,
    facet: str | None = None,
    metric: str = "normalized_throughput",
) -> Figure:
    """The figure :func:`plot_sweep` writes, for a look at its artists or to save elsewhere.

    Numeric x values (durations, rates and sizes included) lie on a numeric axis joined by
    lines; text values (a preset, a variant, a table) lie on one categorical axis shared by
    every class and panel, in the order the sweep wrote them, as markers without lines (the
    classes side by side within a category). A class missing at some values simply has no
    point there. Ticks are labelled with the values as written.

    Raises:
        ValueError: for an unknown parameter, or a metric that is not one of
            :func:`sweep_metrics` (the message lists them).
    """
    from tfrclab.report import param_labels, zip_axis_text
    from tfrclab.sweep import grid_from_manifest, summarize

    grid = grid_from_manifest(manifest)
    # Zipped paths move together: the first stands for the zip axis, the others follow it.
    params = grid.axes
    followers = [path for path, _ in grid.zip[1:]]
    choices = sweep_metrics(classes)
    if metric not in choices:
        raise ValueError(
            f"--metric {metric!r}: not a per-class figure of the sweep; choose one of "
            f"{', '.join(choices)}"
        )
    x, hue_keys, facet = choose_sweep_axes(classes, params, x, hue, facet)
    labels = param_labels(manifest)
    group_params = [p for p in params if p not in (x,)]
    keys = [*([x] if x != "seed" else []), *group_params, *followers]
    stats = summarize(classes, keys) if x != "seed" else _per_seed(classes, group_params, metric)
    facets = [None] if facet is None else list(_ordered(stats[facet]))
    figure = Figure(figsize=(min(5.5 * len(facets), 16), 4.8), layout="constrained")
    axes_list = figure.subplots(1, len(facets), squeeze=False, sharey=True)[0]
    numeric = pd.api.types.is_numeric_dtype(stats[x])
    # One axis for every class and panel: numeric values at themselves, text values at their
    # place in the sweep's written order.
    if numeric:
        ticks = sorted(set(stats[x].tolist()), key=float)
        where = {value: float(value) for value in ticks}
    else:
        present = set(stats[x].tolist())
        ticks = [v for v in labels.get(x, {}) if v in present]
        ticks += [v for v in dict.fromkeys(stats[x]) if v not in ticks]
        where = {value: float(i) for i, value in enumerate(ticks)}
    tick_labels = [_shown(x, v, labels, bare=True) for v in ticks]
    x_label = x
    if followers and x == params[-1]:
        label = manifest.get("zip_label")
        x_label = f"{label} ({zip_axis_text(manifest)})" if label else zip_axis_text(manifest)
    # Each hue (class and any parameters) has one colour and, on a categorical axis, one
    # place within the category (side by side within 0.4), the same in every panel.
    hues = [key if isinstance(key, tuple) else (key,) for key, _ in stats.groupby(hue_keys)]
    colours = {values: f"C{j % 10}" for j, values in enumerate(hues)}
    offsets = {
        values: 0.0 if numeric else 0.4 * ((j + 0.5) / len(hues) - 0.5)
        for j, values in enumerate(hues)
    }
    hue_labels = {
        values: ", ".join(_shown(k, v, labels) for k, v in zip(hue_keys, values, strict=True))
        for values in hues
    }
    handles: dict[str, Any] = {}
    for axes, facet_value in zip(axes_list, facets, strict=True):
        part = stats if facet is None else stats[stats[facet] == facet_value]
        for hue_value, group in part.groupby(hue_keys, sort=True):
            values = hue_value if isinstance(hue_value, tuple) else (hue_value,)
            label = hue_labels[values]
            group = group.assign(_at=group[x].map(where)).sort_values("_at")
            handles[label] = axes.errorbar(
                group["_at"].to_numpy(dtype=float) + offsets[values],
                group[metric],
                yerr=group[f"{metric}_ci"].fillna(0.0),
                marker="o",
                linestyle="-" if numeric else "none",
                capsize=3,
                color=colours[values],
                label=label,
            )
        axes.set_xticks([where[v] for v in ticks], tick_labels)
        if not numeric:
            axes.set_xlim(-0.5, len(ticks) - 0.5)
        if metric in ("normalized_throughput", "friendliness_ratio"):
            axes.axhline(1.0, color="black", linestyle="--", linewidth=0.8)
        if facet is not None:
            axes.set_title(_shown(facet, facet_value, labels))
        axes.set_xlabel(x_label)
        axes.grid(visible=True, alpha=0.3)
    axes_list[0].set_ylabel(f"{metric} (mean ± 95% CI over seeds)")
    # Every hue in the legend, in order, also those missing from the first panel.
    shown = [label for label in hue_labels.values() if label in handles]
    axes_list[0].legend([handles[label] for label in shown], shown, fontsize="small")
    figure.suptitle(f"sweep: {metric} by protocol")
    return figure


def plot_sweep(
    classes: pd.DataFrame,
    manifest: dict[str, Any],
    path: Path,
    x: str | None = None,
    hue: str | None = None,
    facet: str | None = None,
    metric: str = "normalized_throughput",
) -> Path:
    """A sweep's per-class ``metric`` against one parameter, mean and 95% CI over seeds.

    ``classes`` is the sweep's ``classes`` dataset; the axes are chosen by
    :func:`choose_sweep_axes` unless given; :func:`sweep_figure` draws it (numeric parameters
    on a numeric axis, text values on one categorical axis in the sweep's order), written as
    a PNG at ``path``.

    Raises:
        ValueError: for an unknown parameter or metric.
    """
    figure = sweep_figure(classes, manifest, x, hue, facet, metric)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    return path


def _per_seed(classes: pd.DataFrame, params: list[str], metric: str) -> pd.DataFrame:
    """Per seed, the metric as is (x = seed: nothing to average over)."""
    frame: pd.DataFrame = classes[["seed", *params, "class", metric]].copy()
    frame[f"{metric}_ci"] = np.nan
    return frame


def _ordered(column: pd.Series) -> list[Any]:
    values = list(dict.fromkeys(column))
    if all(isinstance(v, int | float | np.integer | np.floating) for v in values):
        return sorted(values, key=float)
    return values


def _shown(key: str, value: Any, labels: dict[str, dict[Any, str]], bare: bool = False) -> str:
    text = labels.get(key, {}).get(value, str(value))
    return text if bare or key == "class" else f"{key}={text}"
