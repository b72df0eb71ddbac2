"""The per-sample series both simulators are compared on, from ns-2's output or a netsim run.

A :class:`Series` holds, per sampling interval of ``sample_s`` seconds: each flow's bytes sent
(entering its first link) and received (leaving its last link), and for the monitored links the
packets arriving, departing and dropped (queue and loss-model drops), the bytes departing and the
time-weighted mean of the waiting packets. From a netsim :class:`~tfrclab.result.Result` these
are sums (means, for the queue) of its per-bin arrays ``flow_bins``/``link_bins``; from ns-2 they
are differences of the cumulative counters the exported script prints (:mod:`tfrclab.ns2.export`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from tfrclab.ns2.plan import Plan
from tfrclab.result import Result

__all__ = ["LinkSeries", "Series", "from_result", "read_output"]

_LINK_FIELDS = ("arrivals", "departures", "drops", "departed_bytes", "mean_queue")


@dataclass(frozen=True)
class LinkSeries:
    """One link's per-sample series."""

    arrivals: NDArray[np.float64]
    departures: NDArray[np.float64]
    drops: NDArray[np.float64]
    departed_bytes: NDArray[np.float64]
    mean_queue: NDArray[np.float64]
    """Time-weighted mean of the waiting packets over each sample."""


@dataclass(frozen=True)
class Series:
    """Per-sample series of one run (see the module documentation)."""

    sample_s: float
    sent_bytes: NDArray[np.float64]
    """(flows x samples)."""
    received_bytes: NDArray[np.float64]
    """(flows x samples)."""
    links: dict[int, LinkSeries]
    """By link index (``Plan.links``)."""
    sent_packets: NDArray[np.float64] | None = None
    """(flows x samples): packets entering each flow's first link."""

    @property
    def samples(self) -> int:
        """The number of samples of every series."""
        return int(self.sent_bytes.shape[1])


def _sum_bins(array: NDArray[np.float64], k: int, n: int) -> NDArray[np.float64]:
    """Sum groups of ``k`` bins along the last axis into ``n`` samples (zero-padded)."""
    padded = np.zeros((*array.shape[:-1], n * k))
    width = min(array.shape[-1], n * k)
    padded[..., :width] = array[..., :width]
    out: NDArray[np.float64] = padded.reshape(*array.shape[:-1], n, k).sum(axis=-1)
    return out


def samples_of(plan: Plan, sample_s: float) -> int:
    """How many samples of ``sample_s`` cover the run (the last may be partial)."""
    return math.ceil(plan.duration_s / sample_s - 1e-9)


def from_result(result: Result, plan: Plan, sample_s: float) -> Series:
    """A netsim run's series, summed from its bins into samples of ``sample_s``.

    Raises:
        ValueError: if ``sample_s`` is not a whole number of bins, or a monitored link of the
            plan was not binned.
    """
    bin_s = result.info.bin_s
    k = round(sample_s / bin_s)
    if k < 1 or abs(k * bin_s - sample_s) > 1e-9 * sample_s:
        raise ValueError(f"the sample {sample_s} s is not a whole number of {bin_s} s bins")
    n = samples_of(plan, sample_s)
    fb = result.flow_bins
    sent = _sum_bins(fb["sent_bytes"].astype(np.float64), k, n)
    sent_packets = _sum_bins(fb["sent_packets"].astype(np.float64), k, n)
    received = _sum_bins(fb["received_bytes"].astype(np.float64), k, n)
    names = result.binned_links
    lb = result.link_bins
    links: dict[int, LinkSeries] = {}
    for link in plan.links:
        if link.name not in names:
            continue
        row = names.index(link.name)

        def summed(key: str, row: int = row) -> NDArray[np.float64]:
            return _sum_bins(lb[key][row].astype(np.float64), k, n)

        links[link.index] = LinkSeries(
            arrivals=summed("arrivals"),
            departures=summed("departures"),
            drops=summed("drops"),
            departed_bytes=summed("departed_bytes"),
            mean_queue=summed("mean_queue_packets") / k,
        )
    return Series(sample_s, sent, received, links, sent_packets)


def read_output(text: str, plan: Plan) -> Series:
    """Parse the exported script's output (``H``, ``F`` and ``L`` lines) into a :class:`Series`.

    Raises:
        ValueError: if the output has no header line or is cut short.
    """
    header = None
    flow_rows: list[tuple[int, int, list[str]]] = []
    link_rows: list[list[str]] = []
    for line in text.splitlines():
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "H":
            header = (float(parts[1]), int(parts[2]))
        elif parts[0] == "F":
            flow_rows.append((int(parts[1]), int(parts[2]), parts[3:]))
        elif parts[0] == "L":
            link_rows.append(parts[1:])
    if header is None:
        raise ValueError("ns-2 output has no header line (did the script fail?)")
    sample_s, n = header
    flows = len(plan.flows)
    # Cumulative counters at the end of each sample: [sample, link, fid] -> (arrived, departed).
    arrived = np.zeros((n + 1, len(plan.links), flows))
    departed = np.zeros((n + 1, len(plan.links), flows))
    packets = np.zeros((n + 1, len(plan.links), flows))
    last = 0
    for k, link, values in flow_rows:
        for j in range(0, len(values), 4):
            fid = int(values[j])
            if 0 <= fid < flows:
                arrived[k, link, fid] = float(values[j + 1])
                departed[k, link, fid] = float(values[j + 2])
                packets[k, link, fid] = float(values[j + 3])
        last = max(last, k)
    if last < n:
        raise ValueError(f"ns-2 output stops at sample {last} of {n}")
    sent = np.zeros((flows, n))
    received = np.zeros((flows, n))
    sent_packets = np.zeros((flows, n))
    for flow in plan.flows:
        first, final = flow.data_links[0], flow.data_links[-1]
        sent[flow.index] = np.diff(arrived[:, first, flow.index])
        received[flow.index] = np.diff(departed[:, final, flow.index])
        sent_packets[flow.index] = np.diff(packets[:, first, flow.index])
    cumulative: dict[int, NDArray[np.float64]] = {}
    for fields in link_rows:
        k, link = int(fields[0]), int(fields[1])
        counters = np.array([float(v) for v in fields[2:7]])
        cumulative.setdefault(link, np.zeros((n + 1, 5)))[k] = counters
    links: dict[int, LinkSeries] = {}
    for link, table in cumulative.items():
        steps = np.diff(table, axis=0)
        widths = np.full(n, sample_s)
        widths[-1] = plan.duration_s - (n - 1) * sample_s
        links[link] = LinkSeries(
            arrivals=steps[:, 0],
            departures=steps[:, 1],
            drops=steps[:, 2],
            departed_bytes=steps[:, 3],
            mean_queue=steps[:, 4] / widths,
        )
    return Series(sample_s, sent, received, links, sent_packets)
