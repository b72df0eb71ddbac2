"""Readable tables and the ``--json`` summary of a run.

The JSON summary is a contract: one object with ``version``, ``seed``, ``sim_seconds``,
``wall_seconds``, ``events``, ``flows`` (each with ``id``, ``name``, ``kind``, ``variant``,
``throughput_bits_per_s``, ``packets_sent``, ``packet_loss_rate``, ``loss_event_rate``) and
``links`` (each with ``name``, ``utilization``, ``drop_rate``, ``mean_queue_packets``). More
fields may be added; these stay. Every figure covers the measurement window, given as
``window`` (``from_s``, ``to_s``); flows also carry ``class``, ``status``,
``active_fraction``, ``active_throughput_bits_per_s``, ``bottleneck``,
``fair_share_bits_per_s``, ``normalized_throughput``, ``group``, ``background``,
``base_rtt_s`` and ``path`` (link names separated by spaces); ``classes`` holds one object per
flow group, by default per protocol class (the columns of
:attr:`tfrclab.summary.Summary.classes`); each link says
whether its figures are ``windowed`` (links without per-bin series give whole-run figures).
``cpu_seconds`` is the CPU time of the simulation itself (as ``wall_seconds``) and
``setup_cpu_seconds`` that of building it from the scenario before it ran.
Numbers JSON cannot hold (NaN, infinities) are ``null``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from tfrclab import metrics
from tfrclab.summary import queue_columns

# pandas and rich are imported by the tables that use them: json_summary (``tfrclab run
# --json``) needs neither.
if TYPE_CHECKING:
    import pandas as pd
    from rich.console import Console
    from rich.table import Table

    from tfrclab.result import Result
    from tfrclab.summary import Summary

__all__ = [
    "TEXT_WIDTH",
    "by_kind",
    "classes_table",
    "flows_table",
    "json_summary",
    "links_table",
    "param_labels",
    "print_whole",
    "render_html",
    "render_text",
    "short_names",
    "sweep_axes",
    "sweep_links_table",
    "sweep_table",
    "window_text",
    "zip_axis_text",
]


def json_summary(result: Result, summary: Summary | None = None) -> dict[str, Any]:
    """The ``tfrclab run --json`` object for ``result`` (see the module documentation).

    Every figure covers ``summary``'s window (default: the scenario's measurement window).
    """
    if summary is None:
        summary = result.summary()
    # Read from the columns both tables are made of (no DataFrame is made).
    windowed = summary._link_columns
    windowed_row = {str(name): i for i, name in enumerate(windowed["name"])}
    links = []
    for i, name in enumerate(str(name) for name in result._link_column("name")):
        row = windowed_row.get(name)
        source, k = (result._link_column, i) if row is None else (windowed.__getitem__, row)
        links.append(
            {
                "name": name,
                "utilization": float(source("utilization")[k]),
                "drop_rate": float(source("drop_rate")[k]),
                "mean_queue_packets": float(source("mean_queue_packets")[k]),
                "rate_bps": int(result._link_column("rate_bps")[i]),
                "windowed": row is not None,
            }
        )
    f = summary._flow_columns
    return {
        "version": result.info.version,
        "seed": result.info.seed,
        "sim_seconds": result.info.duration_s,
        "wall_seconds": result.info.wall_seconds,
        "cpu_seconds": result.info.cpu_seconds,
        "setup_cpu_seconds": result.info.setup_cpu_seconds,
        "events": result.info.events,
        "bin_seconds": result.info.bin_s,
        "window": summary.window.as_dict(),
        "flows": [
            {
                "id": int(f["id"][i]),
                "name": str(f["name"][i]),
                "kind": str(f["kind"][i]),
                "variant": str(f["variant"][i]),
                "class": str(f["class"][i]),
                "group": str(f["group"][i]),
                "background": bool(f["background"][i]),
                "base_rtt_s": float(f["base_rtt_s"][i]),
                "path": str(f["path"][i]),
                "throughput_bits_per_s": float(f["throughput_bits_per_s"][i]),
                "packets_sent": int(f["packets_sent"][i]),
                "packet_loss_rate": float(f["packet_loss_rate"][i]),
                "loss_event_rate": float(f["loss_event_rate"][i]),
                "packets_dropped": int(f["packets_dropped"][i]),
                "loss_events": int(f["loss_events"][i]),
                "status": str(f["status"][i]),
                "active_fraction": float(f["active_fraction"][i]),
                "active_throughput_bits_per_s": _json_float(f["active_throughput_bits_per_s"][i]),
                "bottleneck": str(f["bottleneck"][i]),
                "fair_share_bits_per_s": _json_float(f["fair_share_bits_per_s"][i]),
                "normalized_throughput": _json_float(f["normalized_throughput"][i]),
            }
            for i in range(len(f["id"]))
        ],
        "classes": [
            {
                key: (_json_float(value) if isinstance(value, float) else _plain(value))
                for key, value in row.items()
            }
            for row in summary._class_rows
        ],
        "links": links,
    }


def _json_float(value: Any) -> float | None:
    """A float for JSON: None for NaN and the infinities (which JSON cannot hold)."""
    number = float(value)
    return number if math.isfinite(number) else None


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python value JSON writes."""
    return value.item() if hasattr(value, "item") else value


def _mbps(bits_per_s: float) -> str:
    return "-" if not math.isfinite(bits_per_s) else f"{bits_per_s / 1e6:.3f}"


def _number(value: float, digits: int) -> str:
    return "-" if not math.isfinite(value) else f"{value:.{digits}f}"


def by_kind(flows: pd.DataFrame) -> pd.DataFrame:
    """Per protocol (kind and variant): flows, throughput, fairness and loss rates.

    ``flows`` is any table with ``kind``, ``variant``, ``throughput_bits_per_s`` and the loss
    rates (:attr:`Result.flows` for the whole run, :attr:`Summary.flows` for a window). Columns:
    ``kind``, ``variant``, ``flows``, mean and total throughput, Jain's fairness index among
    the protocol's flows (Yang 2001 eq. 3) and their mean loss rates.
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
    import pandas as pd

    frame: pd.DataFrame = pd.DataFrame(rows)
    return frame


TEXT_WIDTH = 110
"""The width tables are rendered at off a terminal (``tfrclab`` piped, notebook views)."""


def print_whole(console: Console, table: Table) -> None:
    """Print ``table`` whole: wider than the console if its columns need more, never cropped.

    rich crops a table whose columns cannot shrink to the console's width, dropping the
    columns on the right (the results, after the parameters); a terminal wraps a long line
    instead.
    """
    # Measured without the console's width as a cap (console.measure clamps to it).
    need = console.measure(table, options=console.options.update_width(10**5)).minimum
    if need > console.width:
        console.print(table, width=need, crop=False)
    else:
        console.print(table)


def _recorded(tables: tuple[Table | str, ...]) -> Console:
    """A console that recorded ``tables`` as the command line prints them off a terminal."""
    import io

    from rich.console import Console
    from rich.text import Text

    console = Console(
        file=io.StringIO(), width=TEXT_WIDTH, record=True, highlight=False, color_system=None
    )
    for table in tables:
        if isinstance(table, str):
            console.print(Text(table))  # as is: no rich markup
        else:
            print_whole(console, table)
    return console


def render_text(*tables: Table | str) -> str:
    """Tables (and lines of text) as ``tfrclab`` prints them when piped: plain text."""
    return _recorded(tables).export_text()


def render_html(*tables: Table | str) -> str:
    """Tables (and lines of text) as ``tfrclab`` prints them, in an HTML ``<pre>`` block.

    For notebook views (``_repr_html_``): the same columns, units and captions as the
    command line.
    """
    return _recorded(tables).export_html(
        inline_styles=True,
        code_format='<pre style="font-family: monospace; line-height: 1.25">{code}</pre>',
    )


def _table(title: str) -> Table:
    """An empty rich table with our style."""
    from rich import box
    from rich.table import Table

    return Table(title=title, box=box.SIMPLE_HEAD)


def window_text(summary: Summary) -> str:
    """The window as the tables' titles give it: ``whole run`` or ``window 20s-60s``."""
    window = summary.window
    return "whole run" if window.whole_run else f"window {window.label()}"


def flows_table(result: Result, summary: Summary | None = None, max_rows: int = 40) -> Table:
    """The flows over the measurement window (at most ``max_rows`` rows).

    Mb/s and norm. are the flow's throughput in the window and its throughput while active over
    its fair share; ``note`` flags flows not active for the whole window.
    """
    if summary is None:
        summary = result.summary()
    table = _table(
        f"flows (seed {result.info.seed}, {window_text(summary)} of {result.info.duration_s:g} s)"
    )
    named = _named_groups(summary)
    headers = ("id", "name", "protocol", *(("group",) if named else ()), "Mb/s", "norm.")
    for header in (*headers, "loss rate", "LER", "note"):
        left = header in ("name", "protocol", "group", "note")
        table.add_column(
            header,
            justify="left" if left else "right",
            no_wrap=header in ("protocol", "group", "note"),
        )
    # Read from the summary's columns: no DataFrame, so printing the tables needs no pandas.
    flows = summary._flow_columns
    count = len(flows["id"])
    for i in range(min(count, max_rows)):
        table.add_row(
            str(flows["id"][i]),
            str(flows["name"][i]),
            str(flows["class"][i]),
            *((str(flows["group"][i]),) if named else ()),
            _mbps(float(flows["throughput_bits_per_s"][i])),
            _number(float(flows["normalized_throughput"][i]), 2),
            f"{flows['packet_loss_rate'][i]:.4f}",
            f"{flows['loss_event_rate'][i]:.4f}",
            str(flows["status"][i]),
        )
    if count > max_rows:
        table.add_row("...", f"({count - max_rows} more)", *[""] * (len(headers) + 1))
    table.caption = (
        "Mb/s: delivered in the window; norm.: throughput while active / fair share of its "
        "bottleneck; LER: loss event rate (Rhee & Xu 2005 §2)"
    )
    if result.info.version == "fluid" and any(
        event_rate > loss_rate
        for event_rate, loss_rate in zip(
            flows["loss_event_rate"], flows["packet_loss_rate"], strict=True
        )
    ):
        table.caption += (
            "; fluid model: every flow sending while the buffer overflows sees a loss event, "
            "however little of it is dropped, so LER can be above the loss rate (docs/fluid.md)"
        )
    return table


def _named_groups(summary: Summary) -> bool:
    """Whether some flow's group is not its protocol class (the scenario set ``group``)."""
    flows = summary._flow_columns
    return any(str(g) != str(c) for g, c in zip(flows["group"], flows["class"], strict=True))


def classes_table(summary: Summary) -> Table:
    """Per flow group: throughput, fairness and friendliness to the reference over the window.

    The groups are the protocol classes unless the scenario sets ``group`` (the table is then
    titled "groups"); background groups are marked and not rated.
    """
    classes = summary._class_rows  # one dict per row: no DataFrame (pandas) to print them
    named = _named_groups(summary)
    reference = [str(row["class"]) for row in classes if row["reference"]]
    against = f"vs {reference[0]}" if reference else "vs TCP"
    first = "group" if named else "protocol"
    table = _table(f"{'groups' if named else 'protocols'} ({window_text(summary)})")
    for header in (first, "flows", "Mb/s", "norm.", "Jain", against, "rating", "diff."):
        table.add_column(
            header,
            justify="left" if header in (first, "rating") else "right",
            no_wrap=header in (first, "rating"),
        )
    for row in classes:
        table.add_row(
            str(row["class"]) + ("*" if row["partial"] else ""),
            str(row["flows"]),
            _mbps(float(row["mean_throughput_bits_per_s"])),
            _number(float(row["normalized_throughput"]), 2),
            _number(float(row["fairness_index"]), 3),
            _number(float(row["friendliness_ratio"]), 2),
            "background" if row["background"] else str(row["friendliness_rating"]),
            _number(float(row["difference_ratio"]), 2),
        )
    subject = "the group" if named else "the protocol"
    target = reference[0] if reference else "TCP"
    caption = (
        f"Mb/s: mean per flow; norm.: mean normalized throughput; Jain: fairness index within "
        f"{subject}; {against}: friendliness ratio and rating (Hassan & Kara); diff.: "
        f"difference ratio to {target} (Rhee & Xu)"
    )
    if any(row["background"] for row in classes):
        caption += (
            "; background: not rated, and the other flows' fair share is what the background "
            "leaves of each link"
        )
    if any(row["partial"] for row in classes):
        caption += f"; *: no flow of {subject} was active for the whole window"
    table.caption = caption
    return table


def links_table(result: Result, summary: Summary | None = None) -> Table:
    """The links that kept per-bin series (the bottlenecks, by default), over the window."""
    if summary is None:
        summary = result.summary()
    table = _table(f"links ({window_text(summary)})")
    for header in ("link", "Mb/s", "queue", "util.", "drop rate", "mean q", "max q"):
        table.add_column(
            header, justify="left" if header in ("link", "queue") else "right", no_wrap=True
        )
    # Columns, not DataFrames: printing the tables needs no pandas.
    queues = queue_columns(result)
    queue_row = {str(name): i for i, name in enumerate(queues["name"])}
    limit_bytes = dict(
        zip(
            (str(name) for name in result._link_column("name")),
            result._link_column("limit_bytes"),
            strict=True,
        )
    )
    links = summary._link_columns
    for i, name in enumerate(str(name) for name in links["name"]):
        q = queue_row[name]
        table.add_row(
            name,
            _mbps(float(links["rate_bps"][i])),
            _queue_text(
                str(queues["queue_kind"][q]), float(queues["buffer_packets"][q]), limit_bytes[name]
            ),
            f"{links['utilization'][i]:.3f}",
            f"{links['drop_rate'][i]:.4f}",
            f"{links['mean_queue_packets'][i]:.2f}",
            str(links["max_queue_packets"][i]),
        )
    table.caption = (
        "queue: discipline and buffer in packets of the data crossing the link (a byte limit "
        "is converted); mean q and max q: queue length in packets (time-weighted mean, largest)"
    )
    return table


def _queue_text(queue_kind: str, packets: float, limit_bytes: int) -> str:
    """``RED 100p`` or ``RED 50p (50000B)`` or ``DropTail 49p`` for a link's queue.

    ``packets`` is its buffer in data packets (:func:`tfrclab.summary.queue_columns`) and
    ``limit_bytes`` its byte limit (-1: none).
    """
    kind = {"red": "RED", "droptail": "DropTail"}.get(queue_kind, "?")
    text = f"{kind} {packets:.0f}p" if math.isfinite(packets) else kind
    if int(limit_bytes) >= 0:
        text += f" ({int(limit_bytes)}B)"
    return text


def param_labels(manifest: dict[str, Any]) -> dict[str, dict[Any, str]]:
    """For each varied path of a sweep, its typed column values mapped to the values as written."""
    from tfrclab.sweep import param_column, written

    labels: dict[str, dict[Any, str]] = {}
    for path, values in [*manifest["vary"], *manifest.get("zip", [])]:
        labels[str(path)] = dict(zip(param_column(values), map(written, values), strict=True))
    return labels


def _ci(mean: float, half: float, scale: float, digits: int) -> str:
    if not math.isfinite(mean):
        return "-"
    text = f"{mean / scale:.{digits}f}"
    if math.isfinite(half):
        text += f"±{half / scale:.{digits}f}"
    return text


def short_names(paths: list[str]) -> list[str]:
    """The shortest tails of dotted paths that still tell them apart, for column headers.

    >>> short_names(["topology.bottleneck.delay", "flows.0.count", "flows.1.count"])
    ['delay', '0.count', '1.count']
    """
    parts = [p.split(".") for p in paths]
    names = []
    for i, segments in enumerate(parts):
        for k in range(1, len(segments) + 1):
            tail = segments[-k:]
            if all(other[-k:] != tail for j, other in enumerate(parts) if j != i):
                break
        names.append(".".join(tail))
    return names


def sweep_axes(manifest: dict[str, Any]) -> dict[str, str]:
    """The column header of each axis of a sweep, by its path (:attr:`tfrclab.sweep.Grid.axes`).

    Every vary path, then the zip axis as one column (its paths move together): named by the
    sweep's zip label, else its first path. Paths are shortened to the tails that tell them
    apart (:func:`short_names`).

    >>> sweep_axes({"vary": [["topology.bottleneck.delay", ["10ms"]]],
    ...             "zip": [["flows.0.count", [1, 2]], ["flows.1.count", [1, 2]]]})
    {'topology.bottleneck.delay': 'delay', 'flows.0.count': 'count'}
    """
    zipped = [str(path) for path, _ in manifest.get("zip", [])]
    paths = [str(path) for path, _ in manifest["vary"]] + zipped[:1]
    headers = dict(zip(paths, short_names(paths), strict=True))
    label = manifest.get("zip_label")
    if zipped and label:
        headers[zipped[0]] = str(label)
    return headers


def zip_axis_text(manifest: dict[str, Any]) -> str:
    """What the zip axis holds, for captions and figure labels ("" without one).

    >>> zip_axis_text({"zip": [["flows.0.count", [1, 2]], ["flows.1.count", [1, 2]]]})
    'flows.0.count, zipped with flows.1.count'
    >>> zip_axis_text({"zip": [[f"flows.{i}.rate", ["1Mbps"]] for i in range(16)]})
    'flows.0.rate, zipped with flows.1.rate and 14 more paths'
    """
    zipped = [str(path) for path, _ in manifest.get("zip", [])]
    if not zipped:
        return ""
    if len(zipped) == 1:
        return zipped[0]
    rest = zipped[1] if len(zipped) == 2 else f"{zipped[1]} and {len(zipped) - 2} more paths"
    return f"{zipped[0]}, zipped with {rest}"


def _axes_caption(manifest: dict[str, Any]) -> str:
    """``header: path`` for every axis column of a sweep table."""
    zipped = [str(path) for path, _ in manifest.get("zip", [])]
    parts = []
    for path, header in sweep_axes(manifest).items():
        what = zip_axis_text(manifest) if zipped and path == zipped[0] else path
        parts.append(f"{header}: {what}")
    return "; ".join(parts)


def _sweep_columns(table: Table, params: list[str], headers: tuple[str, ...]) -> None:
    """Axis columns that fold long values, then result columns that never wrap."""
    for header in params:
        table.add_column(header, justify="right", overflow="fold", min_width=len(header))
    for header in headers:
        table.add_column(
            header, justify="left" if header in ("protocol", "link") else "right", no_wrap=True
        )


def _param_cells(row: pd.Series, params: list[str], labels: dict[str, dict[Any, str]]) -> list[str]:
    return [labels.get(p, {}).get(row[p], str(row[p])) for p in params]


def sweep_table(
    summary: pd.DataFrame, manifest: dict[str, Any], classes: pd.DataFrame | None = None
) -> Table:
    """Per parameter combination and protocol (or flow group): means over seeds, 95% intervals.

    ``summary`` is :func:`tfrclab.sweep.summarize` of the sweep's ``classes`` dataset; given
    that dataset as ``classes``, the table says "group" when the scenario named groups and
    names the reference group friendliness was rated against.
    """
    labels = param_labels(manifest)
    axes = sweep_axes(manifest)
    params = list(axes)
    named, reference = _sweep_groups(classes)
    first = "group" if named else "protocol"
    against = f"vs {reference}" if reference else "vs TCP"
    table = _table(f"sweep: per {first}, mean ± 95% CI over seeds")
    _sweep_columns(table, list(axes.values()), (first, "runs", "Mb/s", "norm.", against, "Jain"))
    for _, row in summary.iterrows():
        table.add_row(
            *_param_cells(row, params, labels),
            str(row["class"]),
            str(row["runs"]),
            _ci(row["mean_throughput_bits_per_s"], row["mean_throughput_bits_per_s_ci"], 1e6, 3),
            _ci(row["normalized_throughput"], row["normalized_throughput_ci"], 1.0, 2),
            _ci(row["friendliness_ratio"], row["friendliness_ratio_ci"], 1.0, 2),
            _ci(row["fairness_index"], row["fairness_index_ci"], 1.0, 3),
        )
    table.caption = (
        f"Mb/s: mean per flow; norm.: normalized throughput; {against}: friendliness ratio; "
        f"Jain: within the {first} (loss rates and more: tfrclab.sweep.summarize). ± is the "
        "half-width of the 95% Student t interval (none with one seed). " + _axes_caption(manifest)
    )
    return table


def _sweep_groups(classes: pd.DataFrame | None) -> tuple[bool, str]:
    """Whether a sweep's ``classes`` dataset holds named groups, and its reference group ("")."""
    if classes is None or "reference" not in classes.columns:
        return False, ""
    from tfrclab.summary import class_label

    named = any(
        str(c) != class_label(str(k), str(v))
        for c, k, v in zip(classes["class"], classes["kind"], classes["variant"], strict=True)
    )
    references = list(dict.fromkeys(classes.loc[classes["reference"].astype(bool), "class"]))
    return named, str(references[0]) if len(references) == 1 else ""


def sweep_links_table(summary: pd.DataFrame, manifest: dict[str, Any]) -> Table:
    """Per parameter combination and binned link: means over seeds with 95% intervals.

    ``summary`` is :func:`tfrclab.sweep.summarize_links` of the sweep's ``links`` dataset.
    """
    labels = param_labels(manifest)
    axes = sweep_axes(manifest)
    params = list(axes)
    table = _table("sweep: per link, mean ± 95% CI over seeds")
    _sweep_columns(
        table, list(axes.values()), ("link", "runs", "utilization", "drop rate", "mean queue")
    )
    for _, row in summary.iterrows():
        table.add_row(
            *_param_cells(row, params, labels),
            str(row["name"]),
            str(row["runs"]),
            _ci(row["utilization"], row["utilization_ci"], 1.0, 3),
            _ci(row["drop_rate"], row["drop_rate_ci"], 1.0, 4),
            _ci(row["mean_queue_packets"], row["mean_queue_packets_ci"], 1.0, 1),
        )
    table.caption = _axes_caption(manifest) or None
    return table
