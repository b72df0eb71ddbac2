"""TFRC over real UDP: ``tfrclab send`` and ``tfrclab recv``, and the traces they write.

:func:`send` and :func:`recv` run a session of the ``tfrc-udp`` crate (the sans-IO TFRC sender
or receiver driven over a UDP socket, paced by a timerfd) and return a :class:`Session` with
one sample per interval (1 s by default). :func:`write_trace` stores it as a directory in the
layout of a simulator run's per-bin flow series (``flow_bins.parquet``, one row per bin, with
``sent_bytes`` or ``received_bytes`` and friends), so :mod:`tfrclab.metrics` reads a real
network's flow as it reads a simulated one; :func:`load_trace` reads it back.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "TRACE_FORMAT",
    "Session",
    "Trace",
    "check_trace_out",
    "load_trace",
    "parse_rate",
    "recv",
    "send",
    "write_trace",
]

TRACE_FORMAT = 1
"""The version of the trace layout :func:`write_trace` writes."""

_PRESETS = ("rfc5348", "floyd2000")

# Per-bin counts, named as in a simulator run's flow_bins.parquet; the rest are state at the
# bin's end (written as float64).
_SENDER_COUNTS = {"sent_packets": "sent_packets", "sent_bytes": "sent_bytes"}
_RECEIVER_COUNTS = {
    "received_packets": "received_packets",
    "received_bytes": "received_bytes",
    "dropped_packets": "lost_packets",
    "loss_events": "loss_events",
}

Sample = dict[str, Any]


@dataclass(frozen=True)
class Session:
    """What one ``send`` or ``recv`` session measured."""

    role: Literal["send", "recv"]
    """Which end this was."""
    local_addr: str
    """The socket's address."""
    peer: str | None
    """The other end (the sender's address at a receiver; None if no data came)."""
    preset: str
    """The TFRC preset."""
    interval_s: float
    """The sampling interval (the trace's bin width), seconds."""
    duration_s: float
    """The duration asked for, seconds."""
    interrupted: bool
    """Whether Ctrl-C ended the session early."""
    samples: list[Sample]
    """One dict per interval, oldest first (keys: see ``tfrclab._native.run_send``)."""
    report: dict[str, Any]
    """The session's totals, with the ``input`` ledger of dropped datagrams by cause."""
    options: dict[str, Any] = field(default_factory=dict)
    """The sender's size_bytes and app_rate_bps (empty for a receiver)."""

    def bins(self) -> pd.DataFrame:
        """The samples as the table :func:`write_trace` writes (``flow_bins.parquet``)."""
        return _bins_table(self)


def parse_rate(text: str) -> float:
    """A rate such as ``"2Mbps"`` in bits per second, read as scenario files read it.

    Raises:
        ValueError: ``text`` is not a positive rate with a unit.
    """
    from tfrclab import _native

    quantity = _native.quantity(text)
    if quantity is None or quantity[0] != "rate" or not quantity[1] > 0:
        raise ValueError(f"invalid rate {text!r}: expected a positive rate, e.g. 2Mbps")
    return quantity[1]


def _check_preset(preset: str) -> None:
    if preset not in _PRESETS:
        raise ValueError(f"preset: expected one of {', '.join(_PRESETS)}, found {preset!r}")


def send(
    to: str,
    duration_s: float = 30.0,
    *,
    app_rate_bps: float | None = None,
    size_bytes: int = 1000,
    preset: str = "rfc5348",
    bind: str | None = None,
    interval_s: float = 1.0,
    on_sample: Callable[[Sample], object] | None = None,
    oscillation_prevention: bool | None = None,
) -> Session:
    """Send a TFRC flow to ``to`` (``host:port``) for ``duration_s`` seconds.

    ``app_rate_bps`` runs a constant-rate application at that many bits/s (``None``: greedy,
    always data to send). ``size_bytes`` is the datagram size s, header included.
    ``oscillation_prevention`` turns the sqrt(RTT) inter-packet spacing (RFC 5348 §4.5,
    Floyd et al. 2000 §3.4) on or off; ``None`` keeps the preset's (on in both). Each
    interval's sample goes to ``on_sample`` as it is taken. Ctrl-C ends the session early
    (``Session.interrupted``).

    Raises:
        ValueError: an argument out of range, naming it.
        OSError: the socket could not be bound or used.
    """
    from tfrclab import _native

    _check_preset(preset)
    raw = _native.run_send(
        to,
        duration_s,
        preset=preset,
        size_bytes=size_bytes,
        app_rate_bps=app_rate_bps,
        bind=bind,
        stats_interval_s=interval_s,
        on_sample=on_sample,
        oscillation_prevention=oscillation_prevention,
    )
    options: Sample = {"size_bytes": size_bytes, "app_rate_bps": app_rate_bps}
    if oscillation_prevention is not None:
        options["oscillation_prevention"] = oscillation_prevention
    return _session(raw, preset, interval_s, duration_s, options)


def recv(
    bind: str,
    duration_s: float = 30.0,
    *,
    preset: str = "rfc5348",
    interval_s: float = 1.0,
    on_sample: Callable[[Sample], object] | None = None,
) -> Session:
    """Receive a TFRC flow on ``bind`` (``host:port``) for ``duration_s`` seconds.

    The first sender to send well-formed data is the peer; see :func:`send` for the rest.
    """
    from tfrclab import _native

    _check_preset(preset)
    raw = _native.run_recv(
        bind, duration_s, preset=preset, stats_interval_s=interval_s, on_sample=on_sample
    )
    return _session(raw, preset, interval_s, duration_s, {})


def _session(
    raw: dict[str, Any], preset: str, interval_s: float, duration_s: float, options: Sample
) -> Session:
    return Session(
        role=raw["role"],
        local_addr=raw["local_addr"],
        peer=raw["peer"],
        preset=preset,
        interval_s=interval_s,
        duration_s=duration_s,
        interrupted=raw["interrupted"],
        samples=list(raw["samples"]),
        report=dict(raw["report"]),
        options=options,
    )


# -- traces ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Trace:
    """A trace :func:`write_trace` wrote, read back."""

    meta: dict[str, Any]
    """``transport.json``: role, addresses, preset, bin width, totals."""
    bins: pd.DataFrame
    """``flow_bins.parquet``: one row per bin (``flow``, ``bin``, counts, state)."""

    @property
    def bin_s(self) -> float:
        """The bin width in seconds (for :func:`tfrclab.metrics.send_rate` and friends)."""
        return float(self.meta["bin_s"])

    @property
    def role(self) -> str:
        """``"send"`` or ``"recv"``."""
        return str(self.meta["role"])


def _bins_table(session: Session) -> pd.DataFrame:
    import numpy as np
    import pandas as pd

    counts = _SENDER_COUNTS if session.role == "send" else _RECEIVER_COUNTS
    rows = session.samples
    table: dict[str, Any] = {
        "flow": np.zeros(len(rows), dtype=np.int32),
        "bin": np.arange(len(rows), dtype=np.int32),
    }
    for column, key in counts.items():
        table[column] = np.array([r[key] for r in rows], dtype=np.int64)
    skip = {"time_s", *counts.values()}
    state = [k for k in (rows[0] if rows else {}) if k not in skip]
    for key in state:
        values = [r[key] for r in rows]
        whole = all(isinstance(v, int) for v in values)
        table[key] = np.array(values, dtype=np.int64 if whole else np.float64)
    frame: pd.DataFrame = pd.DataFrame(table)
    return frame


def check_trace_out(out: Path, force: bool) -> None:
    """Refuse ``--out`` for a trace unless it is new, empty, or a trace with ``force``."""
    from tfrclab.outdir import check_directory_writable, directory_kind

    kind = directory_kind(out)
    check_directory_writable(out, replaced=True)  # written by replace_directory
    if kind in ("missing", "empty"):
        return
    if kind == "file":
        raise ValueError(f"{out} is a file, not a directory; choose another --out")
    if (out / "transport.json").exists():
        if not force:
            raise ValueError(f"{out} already holds a trace; pass --force to replace it")
        return
    raise ValueError(
        f"{out} holds files that are not a transport trace; choose another --out "
        "(nothing was changed)"
    )


def write_trace(session: Session, out: str | Path, force: bool = False) -> Path:
    """Write ``session`` to the directory ``out`` (atomically); returns it.

    Layout: ``flow_bins.parquet`` (one row per bin: ``flow`` 0, ``bin``, then at a sender
    ``sent_packets``/``sent_bytes``, at a receiver ``received_packets``/``received_bytes``/
    ``dropped_packets`` (declared lost)/``loss_events``, as in a simulator run, then the
    sample's other fields: state at the bin's end such as ``x_bytes_per_s``, ``p``,
    ``rtt_s`` as float64, counters such as ``feedback_accepted`` as int64) and ``transport.json``
    (written last).

    Raises:
        ValueError: ``out`` holds something else, or a trace and ``force`` is false.
    """
    from tfrclab.outdir import replace_directory

    path = Path(out)
    check_trace_out(path, force)
    meta = {
        "format": TRACE_FORMAT,
        "role": session.role,
        "local_addr": session.local_addr,
        "peer": session.peer,
        "preset": session.preset,
        "bin_s": session.interval_s,
        "bins": len(session.samples),
        "duration_s": session.duration_s,
        "interrupted": session.interrupted,
        "options": session.options,
        "report": session.report,
    }

    def write(tmp: Path) -> None:
        _bins_table(session).to_parquet(tmp / "flow_bins.parquet", index=False)
        (tmp / "transport.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")

    replace_directory(path, write)
    return path


def load_trace(directory: str | Path) -> Trace:
    """Read a trace :func:`write_trace` wrote.

    Raises:
        ValueError: ``directory`` is not a complete trace of a known format.
    """
    import pandas as pd

    src = Path(directory)
    meta_path = src / "transport.json"
    if not meta_path.is_file():
        raise ValueError(f"{src} is not a transport trace (no transport.json)")
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    if meta.get("format") != TRACE_FORMAT:
        raise ValueError(f"{src}: unknown trace format {meta.get('format')!r}")
    return Trace(meta=meta, bins=pd.read_parquet(src / "flow_bins.parquet"))
