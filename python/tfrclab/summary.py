"""What a run measured over its measurement window: per flow, per link and per flow group.

:func:`summarize` (or :meth:`tfrclab.Result.summary`) adds up a run's per-bin series over a
:class:`~tfrclab.window.Window` and returns a :class:`Summary` of three tables:

- ``flows``: each flow's counts and rates in the window, how much of the window it was active
  (``active_fraction``, ``status``), its group and whether it is background traffic, its base
  RTT and path, the link it shares most tightly (``bottleneck``), its fair share there and its
  normalized throughput (Floyd 2000 Figs. 6-7);
- ``links``: each binned link's utilization, drop rate and time-weighted queue in the window
  (Floyd 2000 Table 25);
- ``classes``: per flow group (the ``class`` column names it; by default a group is a protocol
  class ``kind/variant``): mean throughput, mean normalized throughput, Jain's fairness index
  within the group (Yang 2001 eq. 3), loss rates, and against the reference group the
  friendliness ratio with its rating (Hassan & Kara eq. 2, Table 1) and the difference ratio
  (Rhee & Xu 2005 §2).

Rules, each a choice a reader should know:

- A flow's *group* is its ``group`` key in the scenario, by default its protocol class
  (``tcp/sack``, ``tfrc``), so that flows of one protocol on different paths can be told apart
  (``group = "tcp 20ms"``) and flows of several protocols pooled.
- A flow is *background* traffic when it says ``background = true``, and by default when it is
  a web session, a short-TCP aggregate, an ON/OFF source (``pareto``, ``exponential`` or an
  ``on_off`` table) or CBR. Background flows do not compete for a fair share: they take what
  they take, and the long-lived (foreground) flows share what is left.
- A flow is *active* from its start to its stop (or the end of the run). ``status`` is
  ``"not started"`` when it starts at or after the window's end, ``"stopped"`` when it stopped
  before the window began, ``"partial"`` when it was active for only part of the window, and
  empty otherwise. ON/OFF pauses are part of a flow's behaviour and do not make it partial.
- ``throughput_bits_per_s`` is what the flow delivered in the window divided by the window's
  length; ``active_throughput_bits_per_s`` divides by the time it was active instead.
- The fair share of a foreground flow on a link is what is left of the link's rate after the
  background traffic crossing it (the background flows' throughput in the window) over the
  number of foreground flows crossing it, each counted by the fraction of the window it was
  active (the time-average number of competitors). A background flow's fair share is the
  link's whole rate over every flow crossing it, background or not. Ping probes count in
  neither. A flow's fair share is the smallest over the links of its path, and that link is
  its ``bottleneck``. ``normalized_throughput`` is the active throughput over it. Without
  background traffic both rules are the link's rate over its competitors.
- Group figures average the flows active for the whole window; a group none of whose flows was
  is averaged over its partly active flows and marked ``partial``, and a group of flows that
  never ran in the window is left out. A group is ``background`` when all its flows are.
- The reference of the friendliness columns is the group ``[measure] reference_group`` names
  (or the ``reference_group`` argument), by default every long-lived foreground flow of
  ``kind = "tcp"`` (all variants pooled); the columns are NaN when there is no reference, and
  for background groups, which are not rated.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from tfrclab import metrics
from tfrclab.window import Window

# The figures are computed on numpy columns; pandas is imported only when a table is asked
# for as a DataFrame (``tfrclab run --json`` never does).
if TYPE_CHECKING:
    import pandas as pd

    from tfrclab.result import Result

__all__ = [
    "BACKGROUND_KINDS",
    "Summary",
    "active_seconds",
    "class_label",
    "class_rows",
    "data_packet_bytes",
    "fair_shares",
    "flow_labels",
    "flow_status",
    "queue_columns",
    "queue_in_packets",
    "summarize",
]

_FULL = 1.0 - 1e-9
"""An active fraction at least this large counts as the whole window."""

_NOT_COMPETING = frozenset({"ping"})
"""Flow kinds that probe the path rather than compete for it (not counted in fair shares)."""

BACKGROUND_KINDS = ("web", "short_tcp", "pareto", "exponential", "cbr")
"""Flow kinds that are background traffic unless a flow says ``background = false`` (as
netsim's scenario parser decides; used for results saved before flows carried the flag)."""

_CLASS_COLUMNS = (
    "class",
    "kind",
    "variant",
    "flows",
    "partial",
    "background",
    "reference",
    "mean_throughput_bits_per_s",
    "total_throughput_bits_per_s",
    "normalized_throughput",
    "fairness_index",
    "packet_loss_rate",
    "loss_event_rate",
    "friendliness_ratio",
    "friendliness_rating",
    "difference_ratio",
)


def class_label(kind: str, variant: str) -> str:
    """A protocol class as tables print it: ``kind/variant``, or ``kind`` without a variant.

    >>> class_label("tcp", "sack"), class_label("cbr", "")
    ('tcp/sack', 'cbr')
    """
    return f"{kind}/{variant}" if variant else kind


class Summary:
    """A run's figures over one measurement window (see the module documentation).

    The tables are DataFrames made on first use from the figures, which are computed with
    numpy when the summary is made.
    """

    def __init__(
        self,
        window: Window,
        flows: dict[str, Any],
        links: dict[str, Any],
        classes: list[dict[str, Any]],
        result: Result | None = None,
    ) -> None:
        # ``flows`` and ``links``: columns (numpy arrays or lists); ``classes``: one dict per
        # row with the keys of ``_CLASS_COLUMNS``.
        self.window = window
        """The window the figures cover, after snapping to bins."""
        self.result = result
        """The run summarized (its seed, length and queues title the tables; None: unknown)."""
        self._flow_columns = flows
        self._link_columns = links
        self._class_rows = classes
        self._frames: dict[str, pd.DataFrame] = {}

    @property
    def flows(self) -> pd.DataFrame:
        """One row per flow, in scenario order."""
        return self._frame("flows", self._flow_columns)

    @property
    def links(self) -> pd.DataFrame:
        """One row per binned link, in topology order."""
        return self._frame("links", self._link_columns)

    @property
    def classes(self) -> pd.DataFrame:
        """One row per protocol class present in the window, in order of first appearance."""
        if "classes" not in self._frames:
            import pandas as pd

            self._frames["classes"] = pd.DataFrame(self._class_rows, columns=list(_CLASS_COLUMNS))
        return self._frames["classes"]

    def columns(self, table: str) -> dict[str, Any]:
        """The columns of ``flows``, ``links`` or ``classes`` as numpy arrays or lists.

        What the DataFrames are made from; a sweep stores these without making DataFrames,
        which cost more than the run of a small scenario.

        Raises:
            ValueError: for another table name.
        """
        if table == "flows":
            return dict(self._flow_columns)
        if table == "links":
            return dict(self._link_columns)
        if table == "classes":
            return {key: [row[key] for row in self._class_rows] for key in _CLASS_COLUMNS}
        raise ValueError(f"unknown table {table!r}: expected flows, links or classes")

    def __repr__(self) -> str:
        """One line: the window, the flows and links, and each class's normalized throughput.

        >>> import tfrclab
        >>> s = tfrclab.Scenario.from_dict({
        ...     "duration": "2s",
        ...     "topology": {"kind": "dumbbell", "hosts": 1,
        ...                  "bottleneck": {"rate": "10Mbps", "delay": "10ms"}},
        ...     "flows": [{"kind": "cbr", "rate": "1Mbps"}],
        ... })
        >>> tfrclab.run(s).summary()
        <Summary, whole run: 1 flow(s), 2 binned link(s); cbr: 1 flow(s), norm. 0.10>
        >>> tfrclab.run(s).summary(1.0, 2.0)
        <Summary, window 1s-2s: 1 flow(s), 2 binned link(s); cbr: 1 flow(s), norm. 0.10>
        """
        from tfrclab.report import window_text

        classes = "".join(
            f"; {row['class']}: {row['flows']} flow(s), norm. {row['normalized_throughput']:.2f}"
            for row in self._class_rows
        )
        return (
            f"<Summary, {window_text(self)}: {len(self._flow_columns['name'])} flow(s), "
            f"{len(self._link_columns['name'])} binned link(s){classes}>"
        )

    def _repr_html_(self) -> str:
        """The tables ``tfrclab summary`` prints (flows, protocols, links), for notebooks."""
        from tfrclab.report import classes_table, flows_table, links_table, render_html

        if self.result is None:
            return render_html(classes_table(self))
        return render_html(
            flows_table(self.result, self), classes_table(self), links_table(self.result, self)
        )

    def _frame(self, name: str, columns: dict[str, Any]) -> pd.DataFrame:
        if name not in self._frames:
            import pandas as pd

            self._frames[name] = pd.DataFrame(columns)
        return self._frames[name]


def summarize(
    result: Result,
    from_s: float | None = None,
    to_s: float | None = None,
    reference_group: str | None = None,
) -> Summary:
    """The figures of ``result`` over ``[from_s, to_s)`` (default: the scenario's window).

    Friendliness is rated against ``reference_group`` (default: the scenario's ``[measure]
    reference_group``, else the long-lived TCP flows; see the module documentation).

    Raises:
        ValueError: if the window is empty or outside the run, or the reference group is not
            a group of a flow active in the window (the message lists the groups).
    """
    scenario_from, scenario_to = result.info.measure_s
    window = Window.snap(
        scenario_from if from_s is None else from_s,
        scenario_to if to_s is None else to_s,
        result.info.bin_s,
        result.info.duration_s,
    )
    flows = _flows(result, window)
    links = _links(result, window)
    reference = reference_group if reference_group is not None else result.info.reference_group
    classes = class_rows(flows, reference or None)
    return Summary(window=window, flows=flows, links=links, classes=classes, result=result)


def flow_labels(result: Result) -> tuple[list[str], Any]:
    """Each flow's group and whether it is background traffic (see the module documentation).

    Results that carry no labels (saved before flows had them, or from the fluid model) get
    the defaults: the protocol class, and background by kind.
    """
    kinds = [str(kind) for kind in result._flow_column("kind")]
    variants = [str(variant) for variant in result._flow_column("variant")]
    try:
        given = [str(group) for group in result._flow_column("group")]
    except KeyError:
        given = [""] * len(kinds)
    groups = [
        label or class_label(kind, variant)
        for label, kind, variant in zip(given, kinds, variants, strict=True)
    ]
    try:
        background = np.asarray(result._flow_column("background"), dtype=bool)
    except KeyError:
        background = np.array([kind in BACKGROUND_KINDS for kind in kinds], dtype=bool)
    return groups, background


def _flows(result: Result, window: Window) -> dict[str, Any]:
    """The per-flow table of the module documentation, as columns."""
    column = result._flow_column
    sums = result._flow_sums(window.first, window.last)
    length = window.length_s
    start = np.asarray(column("start_s"), dtype=np.float64)
    stop_s = np.asarray(column("stop_s"), dtype=np.float64)
    active_s = active_seconds(start, stop_s, window.from_s, window.to_s)
    fraction = active_s / length
    status = flow_status(start, stop_s, fraction, window.from_s, window.to_s)
    received_bits = sums["received_bytes"].astype(np.float64) * 8.0
    with np.errstate(divide="ignore", invalid="ignore"):
        active_throughput = np.where(active_s > 0, received_bits / active_s, np.nan)
    kinds = [str(kind) for kind in column("kind")]
    variants = [str(variant) for variant in column("variant")]
    groups, background = flow_labels(result)
    frame: dict[str, Any] = {
        "id": np.asarray(column("id"), dtype=np.int64),
        "name": [str(name) for name in column("name")],
        "kind": kinds,
        "variant": variants,
        "class": [class_label(k, v) for k, v in zip(kinds, variants, strict=True)],
        "group": groups,
        "background": background,
        "start_s": start,
        "stop_s": stop_s,
        "base_rtt_s": np.asarray(column("base_rtt_s"), dtype=np.float64),
        "path": [" ".join(str(link) for link in path) for path in column("path")],
        "active_s": active_s,
        "active_fraction": fraction,
        "status": status,
        "packets_sent": sums["sent_packets"],
        "bytes_sent": sums["sent_bytes"],
        "packets_received": sums["received_packets"],
        "bytes_received": sums["received_bytes"],
        "packets_dropped": sums["dropped_packets"],
        "loss_events": sums["loss_events"],
        "throughput_bits_per_s": received_bits / length,
        "active_throughput_bits_per_s": active_throughput,
        "send_rate_bits_per_s": sums["sent_bytes"].astype(np.float64) * 8.0 / length,
        "packet_loss_rate": metrics.packet_loss_rate(sums["dropped_packets"], sums["sent_packets"]),
        "loss_event_rate": metrics.loss_event_rate(sums["loss_events"], sums["sent_packets"]),
    }
    bottleneck, share = _fair_shares(result, fraction, background, received_bits / length)
    frame["bottleneck"] = bottleneck
    frame["fair_share_bits_per_s"] = share
    with np.errstate(divide="ignore", invalid="ignore"):
        frame["normalized_throughput"] = active_throughput / share
    return frame


def flow_status(start_s: Any, stop_s: Any, fraction: Any, from_s: float, to_s: float) -> Any:
    """Each flow's status over the window ``[from_s, to_s)``.

    ``"not started"`` (it starts at or after the window's end), ``"stopped"`` (it stopped at or
    before the window's start; a NaN stop: never), ``"partial"`` (active for a ``fraction`` of it
    below 1) or ``""`` (active all through). Also used for ns-2.35's runs.
    """
    start = np.asarray(start_s, dtype=np.float64)
    stop = np.nan_to_num(np.asarray(stop_s, dtype=np.float64), nan=np.inf)
    partial = np.where(np.asarray(fraction, dtype=np.float64) < _FULL, "partial", "")
    return np.where(start >= to_s, "not started", np.where(stop <= from_s, "stopped", partial))


def active_seconds(start_s: Any, stop_s: Any, from_s: float, to_s: float) -> Any:
    """How long each flow ran within ``[from_s, to_s)``, in seconds.

    ``start_s`` and ``stop_s`` per flow, a NaN stop meaning it never stopped. Also used for
    ns-2.35's runs (:func:`tfrclab.reproduce.referee.ns2_sweep_data`).
    """
    stop = np.nan_to_num(np.asarray(stop_s, dtype=np.float64), nan=np.inf)
    start = np.asarray(start_s, dtype=np.float64)
    return np.clip(np.minimum(stop, to_s) - np.maximum(start, from_s), 0.0, None)


def _fair_shares(
    result: Result, fraction: Any, background: Any, throughput: Any
) -> tuple[list[str], Any]:
    """:func:`fair_shares` of ``result``'s flows and links."""
    link_names = [str(name) for name in result._link_column("name")]
    link_rates = np.asarray(result._link_column("rate_bps")).astype(np.float64)
    return fair_shares(
        [[str(link) for link in path] for path in result._flow_column("path")],
        [str(kind) for kind in result._flow_column("kind")],
        dict(zip(link_names, link_rates, strict=True)),
        fraction,
        background,
        throughput,
    )


def fair_shares(
    paths: Sequence[Sequence[str]],
    kinds: Sequence[str],
    rate: Mapping[str, float],
    fraction: Any,
    background: Any,
    throughput: Any,
) -> tuple[list[str], Any]:
    """Each flow's tightest link and its fair share there (see the module documentation).

    Per flow: the links it crosses (``paths``, names in ``rate``, bit/s), its kind, the
    fraction of the window it was active, whether it is background traffic and its throughput
    in the window (bit/s): the background's is taken off the links it crosses, and the
    foreground flows share the rest, each weighted by its active fraction. Also used for
    ns-2.35's runs (:func:`tfrclab.reproduce.referee.ns2_sweep_data`).
    """
    everyone: dict[str, float] = {}
    foreground: dict[str, float] = {}
    load: dict[str, float] = {}
    for path, kind, weight, behind, bits in zip(
        paths, kinds, fraction, background, throughput, strict=True
    ):
        if kind in _NOT_COMPETING:
            continue
        for link in path:
            everyone[link] = everyone.get(link, 0.0) + float(weight)
            if behind:
                load[link] = load.get(link, 0.0) + float(bits)
            else:
                foreground[link] = foreground.get(link, 0.0) + float(weight)
    names: list[str] = []
    shares = np.full(len(paths), np.nan)
    for i, path in enumerate(paths):
        best: tuple[float, str] | None = None
        for link in path:
            if background[i]:
                n, capacity = everyone.get(link, 0.0), rate[link]
            else:
                n = foreground.get(link, 0.0)
                capacity = max(rate[link] - load.get(link, 0.0), 0.0)
            if n > 0 and (best is None or capacity / n < best[0]):
                best = (capacity / n, link)
        names.append("" if best is None else best[1])
        if best is not None:
            shares[i] = best[0]
    return names, shares


def data_packet_bytes(result: Result) -> dict[str, float]:
    """For each link, the mean size of the data packets of the flows whose path crosses it.

    RED in byte mode counts its buffer and thresholds in bytes; this is the packet size that
    turns them into the packets a reader thinks in. NaN for a link no flow's data crosses.
    """
    sizes: dict[str, tuple[float, float]] = {}
    column = result._flow_column
    for path, sent_bytes, sent_packets in zip(
        column("path"), column("bytes_sent"), column("packets_sent"), strict=True
    ):
        for link in path:
            total_bytes, total_packets = sizes.get(link, (0.0, 0.0))
            sizes[link] = (total_bytes + float(sent_bytes), total_packets + float(sent_packets))
    return {
        str(name): (
            sizes[name][0] / sizes[name][1] if sizes.get(name, (0, 0))[1] > 0 else float("nan")
        )
        for name in result._link_column("name")
    }


def queue_in_packets(result: Result) -> pd.DataFrame:
    """Each binned link's queue in data packets: discipline, buffer and RED's thresholds.

    Columns: ``name``, ``queue_kind``, ``data_packet_bytes`` (:func:`data_packet_bytes`),
    ``buffer_packets`` (the buffer in packets of that size), ``red_min_th_packets`` and
    ``red_max_th_packets`` (NaN without RED), and ``red_scale``: what to divide RED's average
    queue by to get packets (the packet size in byte mode, else 1).
    """
    import pandas as pd

    frame: pd.DataFrame = pd.DataFrame(queue_columns(result))
    return frame


def queue_columns(result: Result) -> dict[str, Any]:
    """The columns of :func:`queue_in_packets`, as lists and numpy arrays (no DataFrame).

    What ``tfrclab run``'s links table reads, so that printing it does not import pandas.
    """
    column = result._link_column
    binned = np.asarray(column("binned"), dtype=bool)

    def kept(key: str) -> Any:
        """The binned links' values of the links column ``key``, as float64."""
        return np.asarray(column(key), dtype=np.float64)[binned]

    sizes = data_packet_bytes(result)
    names = [name for name, keep in zip(column("name"), binned, strict=True) if keep]
    size = np.array([sizes[str(name)] for name in names], dtype=np.float64)
    limit_bytes, limit_packets = kept("limit_bytes"), kept("limit_packets")
    scale = np.where(np.asarray(column("red_in_bytes"), dtype=bool)[binned], size, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return {
            "name": names,
            "queue_kind": [
                kind for kind, keep in zip(column("queue_kind"), binned, strict=True) if keep
            ],
            "data_packet_bytes": size,
            "buffer_packets": np.where(limit_packets >= 0, limit_packets, limit_bytes / size),
            "red_min_th_packets": kept("red_min_th") / scale,
            "red_max_th_packets": kept("red_max_th") / scale,
            "red_scale": scale,
        }


def _links(result: Result, window: Window) -> dict[str, Any]:
    """The per-link table of the module documentation (binned links only), as columns."""
    binned = np.asarray(result._link_column("binned"), dtype=bool)
    names = [
        str(name) for name, kept in zip(result._link_column("name"), binned, strict=True) if kept
    ]
    bins = {key: window.take(series).astype(np.float64) for key, series in result.link_bins.items()}
    widths = window.widths_s
    length = window.length_s
    arrivals = bins["arrivals"].sum(axis=1).astype(np.int64)
    drops = bins["drops"].sum(axis=1).astype(np.int64)
    return {
        "name": names,
        "rate_bps": np.asarray(result._link_column("rate_bps"), dtype=np.int64)[binned],
        "arrivals": arrivals,
        "drops": drops,
        "departures": bins["departures"].sum(axis=1).astype(np.int64),
        "bytes_departed": bins["departed_bytes"].sum(axis=1).astype(np.int64),
        "throughput_bits_per_s": bins["departed_bytes"].sum(axis=1) * 8.0 / length,
        "utilization": (bins["utilization"] * widths).sum(axis=1) / length,
        "drop_rate": metrics.drop_rate(drops, arrivals),
        "mean_queue_packets": (bins["mean_queue_packets"] * widths).sum(axis=1) / length,
        "max_queue_packets": (
            bins["max_queue_packets"].max(axis=1).astype(np.int64)
            if bins["max_queue_packets"].shape[1]
            else np.zeros(len(names), dtype=np.int64)
        ),
    }


def _nanmean(values: Any) -> float:
    """The mean of the non-NaN values, NaN if there are none.

    This is what pandas' ``Series.mean`` gives, computed the same way (NaN as 0 in the sum,
    divided by the count) so that the result is the same to the last bit.
    """
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        return float("nan")
    missing = np.isnan(values)
    count = np.float64(values.size - int(missing.sum()))
    total = np.where(missing, 0.0, values).sum(dtype=np.float64)
    return float(total / count) if count > 0 else float("nan")


def class_rows(flows: Mapping[str, Any], reference: str | None = None) -> list[dict[str, Any]]:
    """The per-group table of the module documentation, one dict per row.

    ``flows`` holds per-flow columns: ``group``, ``kind``, ``variant``, ``background``,
    ``active_fraction``, ``active_throughput_bits_per_s``, ``normalized_throughput``,
    ``packet_loss_rate`` and ``loss_event_rate`` (NaN where unknown). Also used for ns-2.35's
    runs (:func:`tfrclab.reproduce.referee.ns2_sweep_data`).

    Raises:
        ValueError: if ``reference`` names no group of the window.
    """
    labels = flows["group"]
    kinds = flows["kind"]
    variants = flows["variant"]
    background = np.asarray(flows["background"], dtype=bool)
    fraction = np.asarray(flows["active_fraction"], dtype=np.float64)
    members: dict[str, Any] = {}
    partial: dict[str, bool] = {}
    for label in dict.fromkeys(labels):  # in order of first appearance
        group = np.array([i for i, other in enumerate(labels) if other == label], dtype=np.intp)
        whole = group[fraction[group] >= _FULL]
        some = group[fraction[group] > 0]
        if len(whole):
            members[label], partial[label] = whole, False
        elif len(some):
            members[label], partial[label] = some, True
    active_throughput = np.asarray(flows["active_throughput_bits_per_s"], dtype=np.float64)
    if reference is None:
        rows_in = np.concatenate(list(members.values())) if members else np.array([], np.intp)
        ref = [i for i in rows_in if kinds[i] == "tcp" and not background[i]]
    elif reference in members:
        ref = list(members[reference])
    else:
        known = ", ".join(members) or "none"
        raise ValueError(
            f"measure.reference_group: {reference!r} is not the group of a flow active in the "
            f"window; groups: {known}"
        )
    ref_rates = active_throughput[np.asarray(ref, dtype=np.intp)]
    normalized = np.asarray(flows["normalized_throughput"], dtype=np.float64)
    packet_loss = np.asarray(flows["packet_loss_rate"], dtype=np.float64)
    loss_event = np.asarray(flows["loss_event_rate"], dtype=np.float64)
    rows = []
    for label, group in members.items():
        rates = active_throughput[group]
        behind = bool(background[group].all())
        rated = bool(ref_rates.size) and not behind
        ratio = metrics.friendliness_ratio(rates, ref_rates) if rated else float("nan")
        rows.append(
            {
                "class": label,
                "kind": _common(kinds[i] for i in group),
                "variant": _common(variants[i] for i in group),
                "flows": len(group),
                "partial": partial[label],
                "background": behind,
                "reference": label == reference if reference is not None else False,
                "mean_throughput_bits_per_s": float(rates.mean()),
                "total_throughput_bits_per_s": float(rates.sum()),
                "normalized_throughput": _nanmean(normalized[group]),
                "fairness_index": float(metrics.fairness_index(rates)),
                "packet_loss_rate": _nanmean(packet_loss[group]),
                "loss_event_rate": _nanmean(loss_event[group]),
                "friendliness_ratio": ratio,
                "friendliness_rating": (metrics.friendliness_rating(ratio) if ratio >= 0 else ""),
                "difference_ratio": (
                    float(metrics.difference_ratio(rates.mean(), ref_rates.mean()))
                    if rated
                    else float("nan")
                ),
            }
        )
    return rows


def _common(values: Any) -> str:
    """The one value all of ``values`` share, "" when they differ (a group of several kinds)."""
    distinct = set(values)
    return str(next(iter(distinct))) if len(distinct) == 1 else ""
