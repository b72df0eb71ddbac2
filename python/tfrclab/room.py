"""Room for a run on this machine: its estimate against free memory and free disk.

The cost estimate (:func:`tfrclab.estimate`) holds a run to a fixed budget, which says nothing
about the machine it starts on. Before ``tfrclab run`` simulates anything, :func:`check_room`
adds what writing ``--out`` costs (:func:`write_cost`) to the estimate, and compares the memory
with what the machine has available and the bytes each destination takes (``--out``, the pcap
and ns-2 trace files) with the free space of its file system. A run that does not fit is
refused with a one-line :class:`~tfrclab.CostError` unless forced, like one over the budget.
:func:`tfrclab.run` checks the free disk for the trace files it is asked for the same way
(:func:`trace_destinations`, :func:`check_disk`), with its ``force``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from tfrclab.scenario import Scenario

__all__ = [
    "VALUES_PER_WALL_SECOND",
    "WRITE_MEMORY_BYTES",
    "WriteCost",
    "available_memory",
    "check_disk",
    "check_room",
    "free_disk",
    "trace_destinations",
    "write_cost",
]

WRITE_MEMORY_BYTES = 384 << 20
"""Memory ``tfrclab run --out`` needs besides the run's own series: the interpreter and the
Parquet, pandas and plotting libraries loaded, and one row group at a time (about 30 MB: the
files are written in batches). A 60 s dumbbell with 1 ms bins peaks at 352 MB writing 51 MB,
with 36 MB estimated for its series; rounded up."""

VALUE_DISK_BYTES = 12
"""At most this many bytes per per-bin value on disk: a plain int64 or float64, and its row's
keys beside it (flow, bin, field: dictionary- and run-length encoded to 2-4 bytes at worst).
Real runs compress to a fifth or less."""

FIXED_DISK_BYTES = 8 << 20
"""Disk for what does not grow with bins: the flow and link tables, ``scenario.toml``,
``run.json`` and the figures (under a MB each), rounded up."""


VALUES_PER_WALL_SECOND = 15e6
"""Per-bin values ``tfrclab run --out`` writes per second of wall time, figures included:
measured 15 million on a 60 s dumbbell in 1 ms bins and 26 million on rhee2005 in 10 ms
bins, on one core of the project's 2-core machine."""


class WriteCost(NamedTuple):
    """What writing a run's results with ``--out`` costs."""

    memory_bytes: int
    """Memory besides the run's series (:data:`WRITE_MEMORY_BYTES`)."""
    disk_bytes: int
    """At most this much on disk."""
    wall_s: float
    """Expected wall time."""
    values: int
    """Per-bin values the results hold."""


def write_cost(cost: Mapping[str, Any]) -> WriteCost:
    """What writing a run's results with ``--out`` costs.

    ``cost`` is the run's :func:`tfrclab.estimate`. The memory is a constant, since the
    files are written a row group at a time; the disk is at most :data:`VALUE_DISK_BYTES` and
    the time :data:`VALUES_PER_WALL_SECOND` per value the results hold (bins times the flows'
    and binned links' series and the flows' traced state fields).
    """
    from tfrclab.result import FLOW_SERIES, LINK_SERIES

    series = (
        int(cost["flows"]) * len(FLOW_SERIES)
        + int(cost["binned_links"]) * len(LINK_SERIES)
        + int(cost["state_fields"])
    )
    values = int(cost["bins"]) * series
    return WriteCost(
        memory_bytes=WRITE_MEMORY_BYTES,
        disk_bytes=values * VALUE_DISK_BYTES + FIXED_DISK_BYTES,
        wall_s=values / VALUES_PER_WALL_SECOND,
        values=values,
    )


def _duration(seconds: float) -> str:
    """``seconds``, readable: "45 s", "12.5 min", "3.2 h"."""
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    if seconds >= 60:
        return f"{seconds / 60:.1f} min"
    return f"{seconds:.0f} s"


def available_memory() -> int | None:
    """Bytes of memory this machine can give a new process (``MemAvailable``).

    None where that cannot be read (not Linux).
    """
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def free_disk(path: Path) -> tuple[int, Path]:
    """Free bytes for an unprivileged writer where ``path`` is (or would be created).

    Returns them with the existing directory that was asked: ``path`` or the nearest above.
    """
    here = path.absolute()
    while not here.exists() and here != here.parent:
        here = here.parent
    if not here.is_dir():
        here = here.parent
    stats = os.statvfs(here)
    return stats.f_bavail * stats.f_frsize, here


def _size(n: float) -> str:
    """``n`` bytes, readable: "1.5 GB", "230 MB"."""
    if n >= 1e9:
        return f"{n / 1e9:.1f} GB"
    return f"{max(n / 1e6, 0.1):.1f} MB"


def check_room(
    cost: Mapping[str, Any],
    destinations: Sequence[tuple[str, Path, int]],
    write: WriteCost | None = None,
) -> None:
    """Refuse a run that will not fit the wall-time budget, free memory or free disk.

    The wall time counts writing ``--out``. ``cost`` is the run's estimate;
    ``destinations`` what it will write, as (what, path, bytes) (``("--out", Path("out"),
    48_000_000)``), those on one file system added up; ``write`` what writing ``--out`` costs
    (:func:`write_cost`), if it is written.

    Raises:
        CostError: naming what does not fit, how much it needs and how much is free.
    """
    from tfrclab import _native

    write_memory = 0 if write is None else write.memory_bytes
    if write is not None:
        wall, budget = float(cost["wall_s"]) + write.wall_s, float(cost["budget"]["wall_s"])
        if wall > budget:
            raise _native.CostError(
                f"too costly to run: about {_duration(wall)} of wall time expected "
                f"({_duration(float(cost['wall_s']))} simulating, {_duration(write.wall_s)} "
                f"writing --out: {write.values:.2e} per-bin values; budget "
                f"{_duration(budget)}); a coarser `monitor.bin`, a shorter `duration` or "
                "fewer flows, or force the run to go ahead anyway"
            )
    needed = int(cost["memory_bytes"]) + write_memory
    available = available_memory()
    if available is not None and needed > available:
        parts = sorted(cost["parts"], key=lambda part: -int(part["memory_bytes"]))
        mostly = (
            f", mostly for {parts[0]['path']} ({parts[0]['hint']})"
            if parts and int(parts[0]["memory_bytes"]) > 0
            else ""
        )
        raise _native.CostError(
            f"too costly to run: about {_size(needed)} of memory needed"
            f"{' (writing the results included)' if write_memory else ''}, "
            f"{_size(available)} available{mostly}; free memory, make the run cheaper or "
            "force the run to go ahead anyway"
        )
    check_disk(destinations)


def check_disk(destinations: Sequence[tuple[str, Path, int]]) -> None:
    """Refuse files that will not fit the free disk where they are to be written.

    ``destinations`` are (what, path, bytes), as for :func:`check_room`; those on one file
    system are added up and compared with its free space (:func:`free_disk`).

    Raises:
        CostError: naming the files, how much they need and how much is free.
    """
    from tfrclab import _native

    by_device: dict[int, tuple[int, Path, list[str], int]] = {}
    for what, path, size in destinations:
        free, asked = free_disk(path)
        device = os.stat(asked).st_dev
        total, _, names, _ = by_device.get(device, (0, asked, [], free))
        by_device[device] = (total + size, asked, [*names, f"{what} {path}"], free)
    for total, asked, names, free in by_device.values():
        if total > free:
            raise _native.CostError(
                f"too costly to run: about {_size(total)} on disk needed for "
                f"{' and '.join(names)}, {_size(free)} free on the file system of {asked}; "
                "write elsewhere, trace fewer links (`monitor.pcap`, `monitor.ns2_trace`, "
                "`monitor.trace_limit`) or force the run to go ahead anyway"
            )


TRACE_KEYS = {"pcap": "monitor.pcap", "ns2_trace": "monitor.ns2_trace"}
"""The scenario key that chooses the links of each kind of trace file."""


def trace_destinations(
    scenario: Scenario, traces: Sequence[tuple[str, Path, str]]
) -> tuple[dict[str, Any], list[tuple[str, Path, int]]]:
    """The estimate of ``scenario`` written with ``traces``, and what each trace will take.

    ``traces`` are (what, path, kind) for each trace destination given, ``kind`` ``"pcap"``
    or ``"ns2_trace"`` (:data:`TRACE_KEYS`). A trace whose key the scenario does not set
    covers every link, and is estimated so. Returns the estimate
    (:func:`tfrclab.estimate`) and the destinations as (what, path, bytes on disk), for
    :func:`check_disk` or :func:`check_room`.
    """
    from tfrclab.simulate import estimate

    changes = {TRACE_KEYS[kind]: "all" for _, _, kind in traces if not _sets(scenario, kind)}
    cost = estimate(scenario.with_(**changes) if changes else scenario)
    disk = {part["path"]: int(part["disk_bytes"]) for part in cost["parts"]}
    return cost, [(what, path, disk.get(TRACE_KEYS[kind], 0)) for what, path, kind in traces]


def _sets(scenario: Scenario, kind: str) -> bool:
    """Whether ``scenario`` sets the key that chooses the links of trace ``kind``."""
    try:
        scenario.get(TRACE_KEYS[kind])
    except KeyError:
        return False
    return True
