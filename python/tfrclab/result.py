"""What a netsim run measured, as pandas DataFrames and numpy arrays, and its Parquet form.

A :class:`Result` keeps the simulator's records as they crossed the binding (one 2-D array per
binned series, one row per flow or link) and builds DataFrames from them on demand:

- :attr:`Result.flows`: one row per flow (identity, totals, throughput, loss rates);
- :attr:`Result.links`: one row per link (totals, utilization, drop rate, queue);
- :meth:`Result.rates`: the send rate of every flow at a timescale (Floyd 2000 eq. 3);
- :attr:`Result.queue`: the binned links' time-weighted mean queue per bin;
- :meth:`Result.trace`: a flow's agent state sampled at the end of each bin, with whatever
  fields its protocol declares.

Bin k covers ``[k * bin_s, (k + 1) * bin_s)``; series are indexed by the bin's start time.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from numpy.typing import NDArray

from tfrclab import metrics

# pandas and pyarrow are imported where a DataFrame or a Parquet file is made: a run and its
# summary (``tfrclab run --json``) need numpy only.
if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

    from tfrclab.summary import Summary

__all__ = ["FLOW_SERIES", "FORMAT_VERSION", "LINK_SERIES", "Result", "RunInfo"]

FORMAT_VERSION = 2
"""The version of the on-disk layout :meth:`Result.to_parquet` writes (1 is still read)."""

FLOW_SERIES = (
    "sent_packets",
    "sent_bytes",
    "received_packets",
    "received_bytes",
    "dropped_packets",
    "dropped_bytes",
    "loss_events",
)
"""The per-bin series every flow keeps (``Result.flow_bins``), in the order they cross the
binding; :mod:`tfrclab.room` counts them to size a run's memory."""
LINK_SERIES = (
    "mean_queue_packets",
    "mean_queue_bytes",
    "max_queue_packets",
    "arrivals",
    "drops",
    "departures",
    "departed_bytes",
    "utilization",
    "red_average",
)
"""The per-bin series every binned link keeps (``Result.link_bins``), in binding order."""


@dataclass(frozen=True)
class RunInfo:
    """How a run was made: enough to redo it, and what it cost."""

    scenario_toml: str
    """The scenario text the simulator read."""
    seed: int
    """The seed every random stream derived from."""
    version: str
    """The netsim version that produced the results."""
    duration_ns: int
    """Simulated time covered, in nanoseconds."""
    bin_ns: int
    """Width of every bin, in nanoseconds."""
    events: int
    """Events the simulator processed."""
    wall_seconds: float
    """Wall-clock time the simulation itself took (the native stepping calls)."""
    packet_trace_overflowed: int = 0
    """Packet-trace records not kept because the trace's limit was reached."""
    measure_from_ns: int = 0
    """Start of the scenario's measurement window (``[measure] from``), in nanoseconds."""
    measure_to_ns: int | None = None
    """End of the scenario's measurement window (``[measure] to``); None: the end of the run."""
    cpu_seconds: float | None = None
    """CPU time of the native stepping calls (the thread that simulated); None when not
    recorded (results saved before it was)."""
    setup_cpu_seconds: float | None = None
    """CPU time building the simulation before it ran: the native module parsing the scenario
    text, checking its cost and building the network and its monitors; None when not
    recorded."""

    reference_group: str = ""
    """The flow group friendliness is rated against (``[measure] reference_group``); empty:
    the long-lived TCP flows."""

    @property
    def duration_s(self) -> float:
        """Simulated time covered, in seconds."""
        return self.duration_ns / 1e9

    @property
    def bin_s(self) -> float:
        """Width of every bin, in seconds."""
        return self.bin_ns / 1e9

    @property
    def measure_s(self) -> tuple[float, float]:
        """The scenario's measurement window ``(from, to)`` in seconds."""
        to_ns = self.duration_ns if self.measure_to_ns is None else self.measure_to_ns
        return self.measure_from_ns / 1e9, to_ns / 1e9


class _Table:
    """A table kept as columns (numpy arrays or lists) or as a DataFrame.

    Each form is made from the other on first use.
    """

    def __init__(self, table: pd.DataFrame | Mapping[str, Any]) -> None:
        self._columns: dict[str, Any] | None = None
        self._frame: pd.DataFrame | None = None
        if isinstance(table, Mapping):
            self._columns = dict(table)
        else:
            self._frame = table

    def column(self, key: str) -> Any:
        """The column ``key`` as a numpy array or a list."""
        if self._columns is not None:
            return self._columns[key]
        assert self._frame is not None
        return self._frame[key].to_numpy()

    def frame(self) -> pd.DataFrame:
        """The table as a DataFrame (made once)."""
        if self._frame is None:
            import pandas as pd

            self._frame = pd.DataFrame(self._columns)
        return self._frame


def _as_2d(array: Any, rows: int, bins: int, dtype: Any) -> NDArray[Any]:
    """``array`` as a (rows x bins) array of ``dtype`` (an empty one when there are no rows)."""
    out = np.asarray(array, dtype=dtype)
    return out.reshape(rows, bins)


class Result:
    """The records of one run (see the module documentation).

    Build one with :func:`tfrclab.run` or :meth:`from_parquet`.
    """

    def __init__(
        self,
        info: RunInfo,
        flows: pd.DataFrame | Mapping[str, Any],
        links: pd.DataFrame | Mapping[str, Any],
        flow_bins: dict[str, NDArray[Any]],
        link_bins: dict[str, NDArray[Any]],
        states: list[tuple[tuple[str, ...], NDArray[np.float64]]],
        packet_trace: pd.DataFrame | None = None,
    ) -> None:
        # ``flows`` and ``links``: the tables of :attr:`flows` and :attr:`links`, as DataFrames
        # or as their columns (a DataFrame is then made only when one is asked for).
        self.info = info
        """How the run was made."""
        self._flow_table = _Table(flows)
        self._link_table = _Table(links)
        self._flow_bins: dict[str, NDArray[Any]] | None = flow_bins
        # From a run: each series as one array per flow, made 2-D when first asked for.
        self._flow_bin_rows: dict[str, list[Any]] = {}
        self._bin_count = int(flow_bins["sent_bytes"].shape[1]) if "sent_bytes" in flow_bins else 0
        self.link_bins = link_bins
        """Each link series of the binned links as a (binned links x bins) array."""
        self._states: list[tuple[tuple[str, ...], NDArray[np.float64]]] | None = states
        # From a run: each flow's fields and its trace compressed as the simulator kept it,
        # decoded when first asked for (a summary never needs the traces, dense most of a run's
        # records: 3.9 GB for 2048 TCP flows over 150 s of 10 ms bins).
        self._state_blobs: list[tuple[tuple[str, ...], bytes]] = []
        self.packet_trace = packet_trace
        """The per-packet trace when the scenario asked for one (``monitor.packet_trace``)."""
        self.traces: list[dict[str, Any]] = []
        """What each pcap and ns-2 trace file wrote, one dict per traced link (``kind``,
        ``path``, ``link``, ``written``, ``over_limit``, ``limit``, ``error``); empty when the
        run wrote none (docs/traces.md). Not saved with the result."""
        self._drop_logs: dict[str, tuple[NDArray[np.float64], bool]] = {}
        # From a run with ``monitor.drop_log``: per logged flow, the send times (s) of its
        # dropped data packets in drop order and whether the log hit ``drop_log_limit``.

    @classmethod
    def from_native(
        cls,
        raw: dict[str, Any],
        wall_seconds: float,
        *,
        cpu_seconds: float | None = None,
        setup_cpu_seconds: float | None = None,
    ) -> Result:
        """Build a result from the dict ``tfrclab._native.Simulation.finish`` returns.

        The timings go into :attr:`info` as given (:class:`RunInfo`).
        """
        bins = int(raw["bins"])
        duration_s = int(raw["duration_ns"]) / 1e9
        f = raw["flows"]
        n_flows = len(f["name"])
        flows: dict[str, Any] = {
            "id": np.arange(n_flows, dtype=np.int64),
            "name": list(f["name"]),
            "kind": list(f["kind"]),
            "variant": list(f["variant"]),
            "from": list(f["from"]),
            "to": list(f["to"]),
            "start_s": np.asarray(f["start_ns"], dtype=np.float64) / 1e9,
            "stop_s": _stop_seconds(f["stop_ns"]),
            "base_rtt_s": np.asarray(f["base_rtt_ns"], dtype=np.float64) / 1e9,
            "loss_event_rtt_s": np.asarray(f["loss_event_rtt_ns"], dtype=np.float64) / 1e9,
            **{
                key: np.asarray(f[key], dtype=np.int64)
                for key in (
                    "packets_sent",
                    "bytes_sent",
                    "packets_received",
                    "bytes_received",
                    "packets_dropped",
                    "bytes_dropped",
                    "loss_events",
                    "reverse_packets_sent",
                    "reverse_packets_received",
                    "reverse_packets_dropped",
                )
            },
        }
        link_names = [str(name) for name in raw["links"]["name"]]
        flows["path"] = [[link_names[int(i)] for i in path] for path in f["path"]]
        flows["group"] = [str(group) for group in f["group"]]
        flows["background"] = np.asarray(f["background"], dtype=bool)
        flows["throughput_bits_per_s"] = (
            flows["bytes_received"].astype(np.float64) * 8.0 / duration_s
        )
        flows["send_rate_bits_per_s"] = flows["bytes_sent"].astype(np.float64) * 8.0 / duration_s
        flows["packet_loss_rate"] = metrics.packet_loss_rate(
            flows["packets_dropped"], flows["packets_sent"]
        )
        flows["loss_event_rate"] = metrics.loss_event_rate(
            flows["loss_events"], flows["packets_sent"]
        )
        link = raw["links"]
        links: dict[str, Any] = {
            "name": list(link["name"]),
            "from": list(link["from"]),
            "to": list(link["to"]),
            "rate_bps": np.asarray(link["rate_bps"], dtype=np.int64),
            "delay_s": np.asarray(link["delay_ns"], dtype=np.float64) / 1e9,
            "binned": np.asarray(link["binned"], dtype=bool),
            **{
                key: np.asarray(link[key], dtype=np.int64)
                for key in (
                    "arrivals",
                    "queue_drops",
                    "loss_model_drops",
                    "departures",
                    "bytes_departed",
                    "max_queue_packets",
                    "early_drops",
                    "forced_drops",
                    "marks",
                )
            },
            "busy_s": np.asarray(link["busy_ns"], dtype=np.float64) / 1e9,
            "utilization": np.asarray(link["utilization"], dtype=np.float64),
            "drop_rate": np.asarray(link["drop_rate"], dtype=np.float64),
            "mean_queue_packets": np.asarray(link["mean_queue_packets"], dtype=np.float64),
            "queue_kind": list(link["queue_kind"]),
            "limit_packets": np.asarray(link["limit_packets"], dtype=np.int64),
            "limit_bytes": np.asarray(link["limit_bytes"], dtype=np.int64),
            "red_min_th": np.asarray(link["red_min_th"], dtype=np.float64),
            "red_max_th": np.asarray(link["red_max_th"], dtype=np.float64),
            "red_in_bytes": np.asarray(link["red_in_bytes"], dtype=bool),
        }
        n_binned = int(links["binned"].sum())
        flow_bin_rows = {key: list(raw["flow_bins"][key]) for key in FLOW_SERIES}
        link_bins = {
            key: _as_2d(
                raw["link_bins"][key],
                n_binned,
                bins,
                np.float64
                if key in ("mean_queue_packets", "mean_queue_bytes", "utilization", "red_average")
                else np.int64,
            )
            for key in LINK_SERIES
        }
        state_blobs = [
            (tuple(str(name) for name in fields), bytes(blob))
            for fields, blob in raw["flow_states"]
        ]
        trace_raw = raw["packet_trace"]
        packet_trace = None
        overflowed = 0
        if trace_raw is not None:
            import pandas as pd

            overflowed = int(trace_raw["overflowed"])
            names = list(trace_raw["event_names"])
            packet_trace = pd.DataFrame(
                {
                    "time_s": np.asarray(trace_raw["time_ns"], dtype=np.float64) / 1e9,
                    "event": pd.Categorical.from_codes(
                        np.asarray(trace_raw["event"], dtype=np.int64), categories=pd.Index(names)
                    ),
                    "link": np.asarray(trace_raw["link"], dtype=np.int64),
                    "node": np.asarray(trace_raw["node"], dtype=np.int64),
                    "flow": np.asarray(trace_raw["flow"], dtype=np.int64),
                    "seq": np.asarray(trace_raw["seq"], dtype=np.int64),
                    "size_bytes": np.asarray(trace_raw["size_bytes"], dtype=np.int64),
                    "reverse": np.asarray(trace_raw["reverse"], dtype=bool),
                }
            )
        info = RunInfo(
            scenario_toml=str(raw["scenario"]),
            seed=int(raw["seed"]),
            version=str(raw["version"]),
            duration_ns=int(raw["duration_ns"]),
            bin_ns=int(raw["bin_ns"]),
            events=int(raw["events"]),
            wall_seconds=float(wall_seconds),
            packet_trace_overflowed=overflowed,
            measure_from_ns=int(raw["measure_from_ns"]),
            measure_to_ns=int(raw["measure_to_ns"]),
            cpu_seconds=cpu_seconds,
            setup_cpu_seconds=setup_cpu_seconds,
            reference_group=str(raw.get("reference_group", "")),
        )
        result = cls(info, flows, links, {}, link_bins, [], packet_trace)
        result._states, result._state_blobs = None, state_blobs
        result._flow_bins, result._flow_bin_rows, result._bin_count = None, flow_bin_rows, bins
        result._drop_logs = {
            str(name): (
                np.asarray(log["send_ns"], dtype=np.float64) / 1e9,
                bool(log["overflowed"]),
            )
            for name, log in raw.get("drop_logs", {}).items()
        }
        return result

    # -- views ---------------------------------------------------------------------------------

    @property
    def flows(self) -> pd.DataFrame:
        """One row per flow, in scenario order.

        Columns: ``id`` (0-based position), ``name``, ``kind``, ``variant``, ``from``, ``to``,
        ``start_s``, ``stop_s`` (NaN: no stop), ``base_rtt_s``, ``loss_event_rtt_s``, ``path``
        (the names of the links its data crosses, in order), ``group`` (the scenario's
        ``group``, empty for the protocol class) and ``background`` (docs/scenario.md); the
        totals ``packets_sent``,
        ``bytes_sent``, ``packets_received``, ``bytes_received``, ``packets_dropped``,
        ``bytes_dropped``, ``loss_events``, ``reverse_packets_{sent,received,dropped}``;
        ``throughput_bits_per_s`` and ``send_rate_bits_per_s`` (bytes received / sent over the
        whole run's duration; :meth:`summary` gives them over the measurement window),
        ``packet_loss_rate`` and ``loss_event_rate`` (per packet sent, Rhee & Xu 2005 §2).
        """
        frame: pd.DataFrame = self._flows.copy()
        return frame

    @property
    def flow_bins(self) -> dict[str, NDArray[Any]]:
        """Each flow series (``sent_bytes``, ``loss_events``, ...) as a (flows x bins) array."""
        if self._flow_bins is None:
            self._flow_bins = {
                key: _as_2d(rows, len(rows), self._bin_count, np.int64)
                for key, rows in self._flow_bin_rows.items()
            }
            self._flow_bin_rows = {}
        return self._flow_bins

    def _flow_sums(self, first: int, last: int) -> dict[str, NDArray[np.int64]]:
        """Each flow series added up over bins ``[first, last)``: one int64 per flow.

        Exact integer sums, the same whether the series are 2-D yet or still one array per flow
        (which a summary leaves so).
        """
        if self._flow_bins is not None:
            return {
                key: series[:, first:last].sum(axis=1) for key, series in self._flow_bins.items()
            }
        return {
            key: np.array([row[first:last].sum(dtype=np.int64) for row in rows], dtype=np.int64)
            for key, rows in self._flow_bin_rows.items()
        }

    @property
    def states(self) -> list[tuple[tuple[str, ...], NDArray[np.float64]]]:
        """Each flow's state trace: its field names and a (fields x bins) float64 array."""
        if self._states is None:
            self._states = [self._state_of(i) for i in range(len(self._state_blobs))]
            self._state_blobs = []
        return self._states

    def _state_of(self, row: int) -> tuple[tuple[str, ...], NDArray[np.float64]]:
        """Flow ``row``'s state trace, decoding only that flow's while the rest stay compressed."""
        if self._states is not None:
            return self._states[row]
        from tfrclab import _native

        fields, blob = self._state_blobs[row]
        return fields, _native.decode_state(blob, len(fields), self.bins)

    def _state_fields(self) -> list[tuple[str, ...]]:
        """Each flow's state field names (without decoding any trace)."""
        if self._states is not None:
            return [fields for fields, _ in self._states]
        return [fields for fields, _ in self._state_blobs]

    @property
    def _flows(self) -> pd.DataFrame:
        return self._flow_table.frame()

    @property
    def _links(self) -> pd.DataFrame:
        return self._link_table.frame()

    def _flow_column(self, key: str) -> Any:
        """A column of :attr:`flows` as a numpy array or a list, without making a DataFrame."""
        return self._flow_table.column(key)

    def _link_column(self, key: str) -> Any:
        """A column of :attr:`links` as a numpy array or a list, without making a DataFrame."""
        return self._link_table.column(key)

    @property
    def links(self) -> pd.DataFrame:
        """One row per simplex link, in topology order.

        Columns: ``name``, ``from``, ``to``, ``rate_bps``, ``delay_s``, ``binned`` (whether its
        per-bin series were kept), the totals ``arrivals``, ``queue_drops``,
        ``loss_model_drops``, ``departures``, ``bytes_departed``, ``max_queue_packets``, the
        queue's ``early_drops``, ``forced_drops`` and ``marks``, ``busy_s``, ``utilization``
        and ``drop_rate`` (Floyd 2000 Table 25), the time-weighted ``mean_queue_packets``, and
        the queue as built: ``queue_kind`` (``droptail``, ``red``), its buffer as
        ``limit_packets`` or ``limit_bytes`` (the other is -1), RED's ``red_min_th`` and
        ``red_max_th`` in the queue's units (bytes when ``red_in_bytes``; NaN without RED).
        """
        frame: pd.DataFrame = self._links.copy()
        return frame

    @property
    def bins(self) -> int:
        """The number of bins of every series."""
        if self._flow_bins is not None and "sent_bytes" in self._flow_bins:
            return int(self._flow_bins["sent_bytes"].shape[1])
        return self._bin_count

    @property
    def time_s(self) -> NDArray[np.float64]:
        """The start time of every bin, in seconds."""
        return np.arange(self.bins, dtype=np.float64) * self.info.bin_s

    @property
    def binned_links(self) -> list[str]:
        """The names of the links whose per-bin series were kept, in row order."""
        names, binned = self._link_column("name"), self._link_column("binned")
        return [str(n) for n, kept in zip(names, binned, strict=True) if kept]

    def flow_index(self, flow: int | str) -> int:
        """The row of ``flow``, given by name or 0-based id.

        Raises:
            KeyError: if there is no such flow.
        """
        names = [str(name) for name in self._flow_column("name")]
        if isinstance(flow, str):
            if flow not in names:
                raise KeyError(f"no flow named {flow!r}; flows: {', '.join(names)}")
            return names.index(flow)
        if not 0 <= flow < len(names):
            raise KeyError(f"no flow {flow}; ids run from 0 to {len(names) - 1}")
        return int(flow)

    def rates(
        self,
        timescale: float | None = None,
        what: Literal["sent", "received", "dropped"] = "sent",
    ) -> pd.DataFrame:
        """Every flow's rate in bits/s at a timescale: time x flow (columns are flow names).

        The send rate at timescale delta (Floyd 2000 eq. 3): bytes the flow sent in
        ``[t, t + delta)`` times 8 over delta, for t = 0, delta, 2 delta, ...; ``what`` picks
        the bytes received or dropped instead. ``timescale`` (seconds, default one bin) must
        be a whole number of bins; a trailing partial window is left out.

        Raises:
            ValueError: if the timescale is not a positive whole number of bins.
        """
        import pandas as pd

        delta = self.info.bin_s if timescale is None else float(timescale)
        key = f"{what}_bytes"
        if self._flow_bins is not None:
            rows: Any = self._flow_bins[key]
        else:
            # One flow at a time from the compact series: no (flows x bins) copy of any series.
            rows = self._flow_bin_rows[key]
        windows = [
            metrics.send_rate(np.asarray(row, dtype=np.float64) * 8.0, self.info.bin_s, delta)
            for row in rows
        ]
        empty = metrics.send_rate(np.zeros((0, self.bins)), self.info.bin_s, delta)
        rates = np.vstack(windows) if windows else empty
        index = pd.Index(np.arange(rates.shape[1]) * delta, name="time_s")
        frame: pd.DataFrame = pd.DataFrame(rates.T, index=index, columns=list(self._flows["name"]))
        return frame

    @property
    def queue(self) -> pd.DataFrame:
        """The time-weighted mean queue per bin, in packets: time x binned link."""
        import pandas as pd

        frame: pd.DataFrame = pd.DataFrame(
            self.link_bins["mean_queue_packets"].T,
            index=pd.Index(self.time_s, name="time_s"),
            columns=self.binned_links,
        )
        return frame

    def link_series(self, link: str) -> pd.DataFrame:
        """Every per-bin series of a binned link: time x series.

        Raises:
            KeyError: if the link does not exist or kept totals only.
        """
        import pandas as pd

        names = self.binned_links
        if link not in names:
            raise KeyError(f"no binned link named {link!r}; binned links: {', '.join(names)}")
        row = names.index(link)
        frame: pd.DataFrame = pd.DataFrame(
            {key: values[row] for key, values in self.link_bins.items()},
            index=pd.Index(self.time_s, name="time_s"),
        )
        return frame

    def flow_series(self, flow: int | str) -> pd.DataFrame:
        """Every per-bin counter of a flow: time x series.

        Packets and bytes sent, received and dropped, and loss events opened, per bin.
        """
        import pandas as pd

        row = self.flow_index(flow)
        frame: pd.DataFrame = pd.DataFrame(
            {key: values[row] for key, values in self.flow_bins.items()},
            index=pd.Index(self.time_s, name="time_s"),
        )
        return frame

    def trace(self, flow: int | str) -> pd.DataFrame:
        """A flow's agent state sampled at the end of each bin: time x field.

        The fields are whatever the flow's protocol declares (TCP's ``cwnd``, TFRC's
        ``x_bps``, ...); the index is the sample time, the end of each bin. NaN marks a bin
        that was never sampled.
        """
        import pandas as pd

        fields, values = self._state_of(self.flow_index(flow))
        index = pd.Index(self.time_s + self.info.bin_s, name="time_s")
        frame: pd.DataFrame = pd.DataFrame(
            {name: values[i] for i, name in enumerate(fields)}, index=index, columns=list(fields)
        )
        return frame

    @property
    def drop_logged_flows(self) -> list[str]:
        """The flows whose drops were logged (``monitor.drop_log``), in scenario order."""
        return list(self._drop_logs)

    def drop_send_times(self, flow: int | str) -> NDArray[np.float64]:
        """The send times (s) of a logged flow's dropped data packets, in drop order.

        Kept only for the flows of ``monitor.drop_log`` (docs/scenario.md), so that loss
        events can be regrouped with another RTT than the monitor's, e.g. the flow's measured
        one (:func:`tfrclab.loss_events.grouped_loss_events`, which wants them sorted). Not
        saved with the result.

        Raises:
            ValueError: when the flow was not logged, or its log hit ``drop_log_limit`` (the
                times would then cover only the first drops).
        """
        name = str(self._flow_column("name")[self.flow_index(flow)])
        if name not in self._drop_logs:
            logged = ", ".join(self._drop_logs) or "none"
            raise ValueError(
                f"flow {name!r}: its drops were not logged; name it in monitor.drop_log "
                f"(logged: {logged})"
            )
        times, overflowed = self._drop_logs[name]
        if overflowed:
            raise ValueError(
                f"flow {name!r}: its drop log hit monitor.drop_log_limit "
                f"({times.size} send times); raise the limit"
            )
        return times

    def summary(
        self,
        from_s: float | None = None,
        to_s: float | None = None,
        reference_group: str | None = None,
    ) -> Summary:
        """The run's figures over a measurement window (default: the scenario's ``[measure]``).

        Per flow, per binned link and per flow group (by default the protocol class), with
        fair shares, normalized throughput, fairness and friendliness against
        ``reference_group`` (default: the scenario's, else the long-lived TCP flows; see
        :mod:`tfrclab.summary`).

        Raises:
            ValueError: if the window is empty or outside the run, or the reference group is
                not a group of the window.
        """
        from tfrclab.summary import summarize

        return summarize(self, from_s, to_s, reference_group)

    def _repr_html_(self) -> str:
        """A compact HTML table for notebooks: every flow over the window, then the protocols."""
        from html import escape

        summary = self.summary()
        flows = summary.flows[
            [
                "id",
                "name",
                "class",
                "throughput_bits_per_s",
                "normalized_throughput",
                "packet_loss_rate",
                "loss_event_rate",
                "status",
            ]
        ].rename(columns={"throughput_bits_per_s": "Mb/s", "normalized_throughput": "norm."})
        flows["Mb/s"] = flows["Mb/s"] / 1e6
        classes = summary.classes[
            ["class", "flows", "normalized_throughput", "fairness_index", "friendliness_ratio"]
        ]
        info = self.info
        head = (
            f"<p><b>{escape(_scenario_name(info.scenario_toml))}</b>: seed {info.seed}, "
            f"{info.duration_s:g} s simulated, window {escape(summary.window.label())}, "
            f"{info.events} events</p>"
        )
        flows_html: str = flows.to_html(index=False, float_format=lambda v: f"{v:.4g}", border=0)
        classes_html: str = classes.to_html(
            index=False, float_format=lambda v: f"{v:.3g}", border=0
        )
        return head + flows_html + classes_html

    # -- Parquet -------------------------------------------------------------------------------

    def to_parquet(self, directory: str | Path) -> Path:
        """Write the result to ``directory`` (created if needed); returns it.

        Layout: ``run.json`` (how the run was made; written last, so a directory without it is
        incomplete), ``scenario.toml``, ``flows.parquet``,
        ``links.parquet``, ``flow_bins.parquet`` (one row per flow and bin), ``link_bins.parquet``
        (one row per binned link and bin), ``flow_states.parquet`` (one row per flow, field and
        bin) and, when there is a packet trace, ``packet_trace.parquet``.
        """
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        # The old run.json goes first: while files are replaced the directory reads incomplete.
        (out / "run.json").unlink(missing_ok=True)
        info = self.info
        meta = {
            "format": FORMAT_VERSION,
            "seed": info.seed,
            "version": info.version,
            "duration_ns": info.duration_ns,
            "bin_ns": info.bin_ns,
            "events": info.events,
            "wall_seconds": info.wall_seconds,
            "packet_trace_overflowed": info.packet_trace_overflowed,
            "measure_from_ns": info.measure_from_ns,
            "measure_to_ns": info.measure_to_ns,
            "cpu_seconds": info.cpu_seconds,
            "setup_cpu_seconds": info.setup_cpu_seconds,
            "reference_group": info.reference_group,
            "flow_state_fields": [list(fields) for fields in self._state_fields()],
        }
        (out / "scenario.toml").write_text(info.scenario_toml, encoding="utf-8")
        self._flows.to_parquet(out / "flows.parquet", index=False)
        self._links.to_parquet(out / "links.parquet", index=False)
        self._write_flow_bins(out / "flow_bins.parquet")
        self._write_link_bins(out / "link_bins.parquet")
        self._write_flow_states(out / "flow_states.parquet")
        trace_path = out / "packet_trace.parquet"
        if self.packet_trace is not None:
            self.packet_trace.to_parquet(trace_path, index=False)
        elif trace_path.exists():
            trace_path.unlink()
        # run.json last, under a temporary name: its presence means the directory is complete.
        tmp = out / ".run.json.tmp"
        tmp.write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, out / "run.json")
        return out

    def _write_flow_bins(self, path: Path) -> None:
        """Write ``flow_bins.parquet``: a row per flow and bin, a few flows at a time.

        Series a summary left as one compact array per flow stay so (no 2-D int64 copy).
        """
        import pyarrow as pa

        bins = self.bins
        keys = list(self._flow_bins or self._flow_bin_rows)
        schema = pa.schema(
            [pa.field("flow", pa.int32()), pa.field("bin", pa.int32())]
            + [pa.field(key, pa.int64()) for key in keys]
        )

        def series(key: str, rows: slice) -> NDArray[np.int64]:
            if self._flow_bins is not None:
                return self._flow_bins[key][rows].reshape(-1)
            per_flow = self._flow_bin_rows[key][rows]
            return np.concatenate([np.asarray(row, dtype=np.int64) for row in per_flow])

        def batches() -> Iterator[dict[str, Any]]:
            for rows in _row_batches(len(self._flows), bins):
                count = rows.stop - rows.start
                yield {
                    "flow": np.repeat(np.arange(rows.start, rows.stop, dtype=np.int32), bins),
                    "bin": np.tile(np.arange(bins, dtype=np.int32), count),
                    **{key: series(key, rows) for key in keys},
                }

        _write_batches(path, schema, batches())

    def _write_link_bins(self, path: Path) -> None:
        """Write ``link_bins.parquet``: a row per binned link and bin, a few links at a time."""
        import pyarrow as pa
        import pyarrow.compute as pc

        bins, names = self.bins, self.binned_links

        def batches() -> Iterator[dict[str, Any]]:
            for rows in _row_batches(len(names), bins):
                which = np.repeat(np.arange(rows.stop - rows.start, dtype=np.int32), bins)
                yield {
                    "link": pc.take(pa.array(names[rows], pa.string()), which),
                    "bin": np.tile(np.arange(bins, dtype=np.int32), rows.stop - rows.start),
                    **{k: v[rows].reshape(-1) for k, v in self.link_bins.items()},
                }

        _write_batches(path, _link_bins_schema(self.link_bins), batches())

    def _write_flow_states(self, path: Path) -> None:
        """Write ``flow_states.parquet``: a row per flow, field and bin.

        One flow's trace is decoded at a time; the others stay compressed.
        """
        import pyarrow as pa
        import pyarrow.compute as pc

        bins, all_fields = self.bins, self._state_fields()
        schema = pa.schema(
            [
                ("flow", pa.int32()),
                ("field", pa.string()),
                ("bin", pa.int32()),
                ("value", pa.float64()),
            ]
        )

        def batches() -> Iterator[dict[str, Any]]:
            for i, fields in enumerate(all_fields):
                if not fields:
                    continue
                _, values = self._state_of(i)
                names = pa.array(list(fields), pa.string())
                for rows in _row_batches(len(fields), bins):
                    count = rows.stop - rows.start
                    which = np.repeat(np.arange(rows.start, rows.stop, dtype=np.int32), bins)
                    yield {
                        "flow": np.full(count * bins, i, dtype=np.int32),
                        "field": pc.take(names, which),
                        "bin": np.tile(np.arange(bins, dtype=np.int32), count),
                        "value": np.ascontiguousarray(values[rows], dtype=np.float64).reshape(-1),
                    }

        _write_batches(path, schema, batches())

    @classmethod
    def from_parquet(cls, directory: str | Path) -> Result:
        """Read a result :meth:`to_parquet` wrote.

        Raises:
            OSError: if a file is missing.
            ValueError: if ``run.json`` is missing (an incomplete directory) or malformed, or
                the layout is of another format version.
        """
        import pandas as pd
        import pyarrow.parquet as pq

        src = Path(directory)
        if not (src / "run.json").is_file():
            raise ValueError(f"{src}: not a complete run directory (no run.json)")
        try:
            meta = json.loads((src / "run.json").read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            raise ValueError(f"{src}/run.json: not valid JSON ({err})") from None
        if not isinstance(meta, dict) or meta.get("format") not in (1, FORMAT_VERSION):
            found = meta.get("format") if isinstance(meta, dict) else meta
            raise ValueError(f"{src}: result format {found!r}, expected {FORMAT_VERSION}")
        try:
            to_ns = meta.get("measure_to_ns")
            info = RunInfo(
                scenario_toml=(src / "scenario.toml").read_text(encoding="utf-8"),
                seed=int(meta["seed"]),
                version=str(meta["version"]),
                duration_ns=int(meta["duration_ns"]),
                bin_ns=int(meta["bin_ns"]),
                events=int(meta["events"]),
                wall_seconds=float(meta["wall_seconds"]),
                packet_trace_overflowed=int(meta["packet_trace_overflowed"]),
                measure_from_ns=int(meta.get("measure_from_ns", 0)),
                measure_to_ns=None if to_ns is None else int(to_ns),
                cpu_seconds=_optional_float(meta.get("cpu_seconds")),
                setup_cpu_seconds=_optional_float(meta.get("setup_cpu_seconds")),
                reference_group=str(meta.get("reference_group", "")),
            )
        except (KeyError, TypeError, ValueError) as err:
            raise ValueError(f"{src}/run.json: a field is missing or malformed ({err})") from None
        if info.bin_ns <= 0 or info.duration_ns <= 0:
            raise ValueError(f"{src}/run.json: duration_ns and bin_ns must be positive")
        with _reading(src / "flows.parquet"):
            flows = pd.read_parquet(src / "flows.parquet")
            if "stop_s" not in flows:  # format 1: no stops or paths were recorded
                flows.insert(list(flows.columns).index("start_s") + 1, "stop_s", np.nan)
                flows["path"] = [[] for _ in range(len(flows))]
            flows["path"] = [[str(name) for name in path] for path in flows["path"]]
        with _reading(src / "links.parquet"):
            links = pd.read_parquet(src / "links.parquet")
            if "queue_kind" not in links:  # format 1: the queue setup was not recorded
                links["queue_kind"] = ""
                for column in ("limit_packets", "limit_bytes"):
                    links[column] = -1
                for column in ("red_min_th", "red_max_th"):
                    links[column] = np.nan
                links["red_in_bytes"] = False
            n_binned = int(links["binned"].sum())
        n_flows = len(flows)
        with _reading(src / "flow_bins.parquet"):
            flow_table = pq.read_table(src / "flow_bins.parquet")
            bins = _bins_of(info)
            if flow_table.num_rows != n_flows * bins:
                raise ValueError(
                    f"{flow_table.num_rows} rows, expected {n_flows} flows (flows.parquet) "
                    f"x {bins} bins (run.json)"
                )
            flow_bins = {
                key: flow_table.column(key).to_numpy().reshape(n_flows, bins) for key in FLOW_SERIES
            }
        with _reading(src / "link_bins.parquet"):
            link_table = pq.read_table(src / "link_bins.parquet")
            link_bins = {
                key: (
                    link_table.column(key).to_numpy().reshape(n_binned, bins)
                    if key in link_table.column_names
                    else np.full((n_binned, bins), np.nan)  # format 1 kept no RED average
                )
                for key in LINK_SERIES
            }
        states: list[tuple[tuple[str, ...], NDArray[np.float64]]] = []
        with _reading(src / "flow_states.parquet"):
            state_table = pq.read_table(src / "flow_states.parquet")
            all_values = state_table.column("value").to_numpy()
            offset = 0
            for fields in meta["flow_state_fields"]:
                size = len(fields) * bins
                values = np.array(all_values[offset : offset + size], dtype=np.float64)
                states.append((tuple(fields), values.reshape(len(fields), bins)))
                offset += size
        trace_path = src / "packet_trace.parquet"
        with _reading(trace_path):
            packet_trace = pd.read_parquet(trace_path) if trace_path.exists() else None
        return cls(info, flows, links, flow_bins, link_bins, states, packet_trace)

    def equals(self, other: Result) -> bool:
        """Whether two results hold the same records (timings aside), bit for bit."""
        mine, theirs = self.info, other.info
        if (mine.scenario_toml, mine.seed, mine.version, mine.duration_ns, mine.bin_ns) != (
            theirs.scenario_toml,
            theirs.seed,
            theirs.version,
            theirs.duration_ns,
            theirs.bin_ns,
        ) or (mine.events, mine.packet_trace_overflowed, mine.measure_s) != (
            theirs.events,
            theirs.packet_trace_overflowed,
            theirs.measure_s,
        ):
            return False
        if not (self._flows.equals(other._flows) and self._links.equals(other._links)):
            return False
        for mine_bins, their_bins in (
            (self.flow_bins, other.flow_bins),
            (self.link_bins, other.link_bins),
        ):
            if mine_bins.keys() != their_bins.keys():
                return False
            if not all(_same(mine_bins[k], their_bins[k]) for k in mine_bins):
                return False
        if len(self.states) != len(other.states):
            return False
        for (fields_a, values_a), (fields_b, values_b) in zip(
            self.states, other.states, strict=True
        ):
            if fields_a != fields_b or not np.array_equal(values_a, values_b, equal_nan=True):
                return False
        if self.packet_trace is None or other.packet_trace is None:
            return self.packet_trace is None and other.packet_trace is None
        return bool(self.packet_trace.equals(other.packet_trace))


def _same(a: NDArray[Any], b: NDArray[Any]) -> bool:
    """Whether two arrays are equal, NaN equal to NaN (RED's average is NaN for other queues)."""
    floats = np.issubdtype(a.dtype, np.floating) and np.issubdtype(b.dtype, np.floating)
    return bool(np.array_equal(a, b, equal_nan=floats))


def _optional_float(value: Any) -> float | None:
    """``value`` as a float, None kept (a timing a saved result may lack)."""
    return None if value is None else float(value)


def _scenario_name(scenario_toml: str) -> str:
    """The ``name`` of a scenario text ("scenario" when it has none or does not parse)."""
    from tfrclab.scenario import Scenario, ScenarioError

    try:
        name = Scenario.from_toml(scenario_toml).name
    except ScenarioError:
        return "scenario"
    return str(name) if name else "scenario"


def _stop_seconds(stop_ns: Any) -> NDArray[np.float64]:
    """Stop times in seconds from nanoseconds, NaN where the native side says -1 (no stop)."""
    ns = np.asarray(stop_ns, dtype=np.int64)
    return np.where(ns < 0, np.nan, ns.astype(np.float64) / 1e9)


def _bins_of(info: RunInfo) -> int:
    """ceil(duration / bin), the number of bins of every series."""
    return -(-info.duration_ns // info.bin_ns)


@contextlib.contextmanager
def _reading(path: Path) -> Iterator[None]:
    """Name ``path`` in any error that reading it gives (pyarrow's and numpy's leave it out).

    Raises:
        ValueError: ``path: unreadable or not matching the rest of the run directory (...)``.
    """
    import pyarrow as pa

    try:
        yield
    except FileNotFoundError:
        raise FileNotFoundError(
            errno.ENOENT, "missing: not a complete run directory", str(path)
        ) from None
    except (ValueError, KeyError, IndexError, TypeError, pa.ArrowException) as err:
        reason = " ".join(str(err).split()) or type(err).__name__
        if str(path) in reason:
            raise ValueError(reason) from None
        raise ValueError(
            f"{path}: unreadable or not matching the rest of the run directory ({reason})"
        ) from None


_BATCH_ROWS = 1 << 20
"""Rows per Parquet row group that :meth:`Result.to_parquet` writes (tens of MB; pyarrow's own
default, so the files compress as well as written whole): the most it holds in memory at once
besides the result itself."""


def _row_batches(items: int, bins: int) -> Iterator[slice]:
    """Slices of ``range(items)``, each about :data:`_BATCH_ROWS` rows at ``bins`` per item.

    Every slice holds at least one item.
    """
    step = max(1, _BATCH_ROWS // max(bins, 1))
    for start in range(0, items, step):
        yield slice(start, min(start + step, items))


def _write_batches(path: Path, schema: pa.Schema, batches: Iterator[dict[str, Any]]) -> None:
    """Write ``batches`` (columns by name) to the Parquet file ``path``, a row group each.

    Only one batch is in memory at a time; with no batch the file holds the empty table.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    with pq.ParquetWriter(path, schema) as writer:
        for columns in batches:
            writer.write_table(pa.table(columns, schema=schema))


def _link_bins_schema(link_bins: dict[str, NDArray[Any]]) -> pa.Schema:
    """The schema of ``link_bins.parquet`` (explicit, so an empty table keeps its types)."""
    import pyarrow as pa

    fields = [pa.field("link", pa.string()), pa.field("bin", pa.int32())]
    for key, values in link_bins.items():
        fields.append(pa.field(key, pa.from_numpy_dtype(values.dtype)))
    return pa.schema(fields)
