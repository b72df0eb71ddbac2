"""Reading the relay's per-packet log, and the per-flow measures derived from it.

The layout is in crate ``testbed``'s ``log`` module and docs/testbed.md; the measures are
throughput, drops by cause, queueing delay and the relay's lateness.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

#: The file's magic bytes.
MAGIC = b"TFTBLOG1"
_HEADER_BYTES = 32

#: One record, as numpy reads it.
RECORD = np.dtype(
    [
        ("t_ns", "<u8"),
        ("qdelay_ns", "<u8"),
        ("late_ns", "<i8"),
        ("src", "<u4"),
        ("dst", "<u4"),
        ("sport", "<u2"),
        ("dport", "<u2"),
        ("size", "<u4"),
        ("qlen", "<u4"),
        ("proto", "u1"),
        ("dir", "u1"),
        ("event", "u1"),
        ("_reserved", "u1"),
    ]
)

#: Event codes.
ARRIVE, DROP_LOSS, DROP_QUEUE, DEPART, MARK, DROP_WRITE = range(6)
#: Direction codes.
FORWARD, REVERSE = 0, 1


@dataclass(frozen=True)
class PacketLog:
    """A relay log: its records and the relay's time zero on ``CLOCK_MONOTONIC``."""

    records: np.ndarray
    start_monotonic_ns: int


def read_log(path: str | os.PathLike[str]) -> PacketLog:
    """Read a relay log written by a :class:`tfrclab.testbed.Testbed` with ``log=path``.

    Raises:
        ValueError: The file is not a relay log (wrong magic or record size).
    """
    with open(path, "rb") as f:
        header = f.read(_HEADER_BYTES)
        if len(header) < _HEADER_BYTES or header[:8] != MAGIC:
            raise ValueError(f"{os.fspath(path)}: not a testbed relay log")
        size = int.from_bytes(header[8:12], "little")
        if size != RECORD.itemsize:
            raise ValueError(f"{os.fspath(path)}: record size {size}, expected {RECORD.itemsize}")
        start = int.from_bytes(header[16:24], "little")
        records = np.fromfile(f, dtype=RECORD)
    return PacketLog(records=records, start_monotonic_ns=start)


def _address(value: int) -> str:
    return ".".join(str((value >> shift) & 0xFF) for shift in (24, 16, 8, 0))


def flows(log: PacketLog, start_s: float = 0.0, end_s: float | None = None) -> pd.DataFrame:
    """Per flow and direction over ``[start_s, end_s)`` (relay time, s).

    Columns: packets arrived, dropped by the loss and by the queue, departed; throughput of
    departures in bit/s over the window (IP bytes); queueing delay mean and max; lateness
    median and 99th percentile.
    """
    import pandas as pd  # here: the traffic tools import this package and need no pandas

    r = log.records
    t = r["t_ns"] / 1e9
    end = float(t.max()) if end_s is None and len(r) else (end_s or 0.0)
    keep = r[(t >= start_s) & (t < end if end_s is not None else t <= end)]
    span = max(end - start_s, 1e-9)
    rows = []
    keys = ["dir", "proto", "src", "sport", "dst", "dport"]
    frame = pd.DataFrame({k: keep[k] for k in [*keys, "event", "size", "qdelay_ns", "late_ns"]})
    for key, group in frame.groupby(keys, sort=True):
        dep = group[group["event"] == DEPART]
        rows.append(
            {
                "dir": "forward" if key[0] == FORWARD else "reverse",
                "proto": int(key[1]),
                "src": f"{_address(int(key[2]))}:{key[3]}",
                "dst": f"{_address(int(key[4]))}:{key[5]}",
                "arrivals": int((group["event"] == ARRIVE).sum()),
                "loss_drops": int((group["event"] == DROP_LOSS).sum()),
                "queue_drops": int((group["event"] == DROP_QUEUE).sum()),
                "departures": len(dep),
                "throughput_bits_per_s": float(dep["size"].sum()) * 8 / span,
                "qdelay_mean_s": float(dep["qdelay_ns"].mean()) / 1e9 if len(dep) else 0.0,
                "qdelay_max_s": float(dep["qdelay_ns"].max()) / 1e9 if len(dep) else 0.0,
                "late_p50_s": float(np.percentile(dep["late_ns"], 50)) / 1e9 if len(dep) else 0.0,
                "late_p99_s": float(np.percentile(dep["late_ns"], 99)) / 1e9 if len(dep) else 0.0,
            }
        )
    table: pd.DataFrame = pd.DataFrame(rows)
    return table


def throughput(
    log: PacketLog, bin_s: float, direction: int = FORWARD
) -> tuple[np.ndarray, np.ndarray]:
    """Departed bits per second of ``direction`` in bins of ``bin_s`` seconds.

    Returns:
        The bins' start times (s) and the rates (bit/s).
    """
    r = log.records
    dep = r[(r["event"] == DEPART) & (r["dir"] == direction)]
    if len(dep) == 0:
        return np.zeros(0), np.zeros(0)
    bins = (dep["t_ns"] / 1e9 // bin_s).astype(np.int64)
    sums = np.bincount(bins, weights=dep["size"].astype(np.float64) * 8)
    return np.arange(len(sums)) * bin_s, sums / bin_s
