"""Your own payloads over TFRC: a media sender that follows the allowed rate, and a receiver.

:class:`Sender` opens a ``tfrc-udp`` sender whose loop runs on a thread of its own for as long
as the application keeps it open; the application pushes its payloads (each with an optional
deadline, after which it is dropped rather than sent, and a priority), reads the allowed rate X
to set its encoder's bitrate, and reads live statistics (X, X_calc, X_recv, p, R, t_RTO, the
queue) at any time. :class:`Receiver` hands each payload over as a :class:`Delivery`, with its
sequence number, the gap before it, and the sender's timestamp (so ``arrival_s - sent_s`` is
the one-way delay plus a constant offset: what a playout buffer needs). Both have an asyncio
form (:meth:`Sender.rate_change`, :meth:`Receiver.arecv` and ``async for``), and both are
context managers.

>>> from tfrclab.media import Receiver, Sender
>>> with Receiver("127.0.0.1:0") as rx, Sender(rx.local_addr) as tx:  # doctest: +SKIP
...     tx.send(b"frame 0", deadline_s=0.1)
...     rx.recv(timeout_s=1.0).payload
b'frame 0'

docs/transport.md ("Media API") describes every call; ``python/examples/media.py`` in the
repository is a complete encoder that adapts its bitrate.

:func:`log_events` forwards the sessions' events (reports, rate changes, loss events, expired
payloads; docs/transport.md, "Event log") to Python's :mod:`logging` under the loggers
``tfrc_udp.sender`` and ``tfrc_udp.receiver``; :class:`EventLog` keeps them as rows to plot.
Both are off until asked for.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from tfrclab._native import (
    MediaReceiver,
    MediaSender,
    QueueFull,
    flush_events,
    set_event_handler,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "PRIORITY_LEVELS",
    "Delivery",
    "EventLog",
    "QueueFull",
    "Receiver",
    "Sender",
    "log_events",
]

PRIORITY_LEVELS = 8
"""Priorities are ``0..PRIORITY_LEVELS``; a higher one is always sent first."""

_POLL_S = 0.1
"""How long one waiting call of the asyncio forms blocks its worker thread."""


@dataclass(frozen=True, slots=True)
class Delivery:
    """One payload as the receiver handed it over."""

    seq: int
    """The packet's sequence number."""
    payload: bytes
    """The application's bytes."""
    sent_s: float
    """When it was sent, seconds on the sender's clock (the data packet's timestamp)."""
    arrival_s: float
    """When it arrived, seconds on the receiver's clock."""
    gap: int
    """Sequence numbers skipped before it (lost, or still to come if reordered)."""
    late: bool
    """Whether it arrived after a higher sequence number (filling a gap)."""
    lost_total: int
    """Packets declared lost so far in this session."""
    p: float
    """The loss event rate at this arrival (RFC 5348 §5)."""

    @property
    def delay_s(self) -> float:
        """``arrival_s - sent_s``: the one-way delay plus the clocks' constant offset.

        Its changes are the delay's changes (queueing, jitter).
        """
        return self.arrival_s - self.sent_s


class _Session:
    """What :class:`Sender` and :class:`Receiver` share: closing when a ``with`` block ends.

    The ``async with`` form closes on a worker thread, so the event loop never waits for the
    session's thread to stop.
    """

    def close(self) -> dict[str, Any]:
        """Stop the session; its final statistics."""
        raise NotImplementedError

    def __enter__(self: _S) -> _S:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    async def __aenter__(self: _S) -> _S:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await asyncio.to_thread(self.close)


_S = TypeVar("_S", bound=_Session)


class Sender(_Session):
    """A TFRC sender of the application's own payloads, running until :meth:`close`.

    ``to`` is ``host:port``; ``size_bytes`` the datagram size s (header included: payloads
    may be up to ``size_bytes - 34`` bytes); ``queue_packets`` the queue's bound. ``preset`` is
    ``"rfc5348"`` or ``"floyd2000"``. Raises ValueError naming a bad argument, ConfigError for
    an unknown preset, OSError naming the failed step.
    """

    def __init__(
        self,
        to: str,
        *,
        preset: str = "rfc5348",
        size_bytes: int = 1000,
        bind: str | None = None,
        queue_packets: int = 256,
        oscillation_prevention: bool | None = None,
    ) -> None:
        self._native = MediaSender(
            to,
            preset=preset,
            size_bytes=size_bytes,
            bind=bind,
            queue_packets=queue_packets,
            oscillation_prevention=oscillation_prevention,
        )

    @property
    def local_addr(self) -> str:
        """The socket's address."""
        return self._native.local_addr

    @property
    def peer(self) -> str:
        """Where the payloads go."""
        return self._native.peer

    @property
    def now_s(self) -> float:
        """Now on the sender's clock, in seconds since it opened.

        The clock of :meth:`stats`' ``time_s`` and of the receiver's :attr:`Delivery.sent_s`:
        stamp a frame's capture with it to time the frame end to end.
        """
        return self._native.now_s

    @property
    def allowed_rate_bps(self) -> float:
        """The allowed sending rate X in bits/s (whole datagrams): what an encoder aims at."""
        return self._native.allowed_rate_bps

    @property
    def queued(self) -> int:
        """Payloads waiting to be sent."""
        return self._native.queued

    @property
    def closed(self) -> bool:
        """Whether the sender was closed (or its loop failed: :meth:`close` says why)."""
        return self._native.closed

    def send(
        self,
        payload: bytes,
        *,
        deadline_s: float | None = None,
        priority: int = 0,
        group: int | None = None,
    ) -> int:
        """Queue ``payload`` for sending; its ticket (0, 1, ... in the order accepted).

        With ``deadline_s``, a payload still queued that long after this call is dropped when
        its turn comes, counted and listed by :meth:`expired`. Higher ``priority``
        (``0..PRIORITY_LEVELS``) goes first. Payloads with the same ``group`` (the parts of one
        video frame) expire together: when one is dropped at its deadline, the others still
        queued go with it, and so does a part queued later (the last 64 expired groups are
        remembered: do not reuse a group number soon). Raises :class:`QueueFull` when the
        queue holds its bound (the payload is dropped and counted), ValueError for a payload
        larger than one datagram or an argument out of range, OSError if the loop failed,
        RuntimeError once closed.
        """
        return self._native.send(bytes(payload), deadline_s, priority, group)

    def flush(self, below: int | None = None) -> int:
        """Drop queued payloads of priority below ``below`` (all of them when None); how many."""
        return self._native.flush(below)

    def stats(self) -> dict[str, Any]:
        """The live statistics, as of the loop's last pass.

        ``x_bytes_per_s`` (X), ``x_calc_bytes_per_s``, ``x_recv_bytes_per_s``, ``p``,
        ``rtt_s``, ``t_rto_s``, ``slow_start``; ``queued``, ``queue_accepted``,
        ``queue_drops`` (refused, full), ``queue_expired``, ``queue_flushed``, ``queue_sent``;
        ``packets_sent``, ``bytes_sent``, ``send_errors``, ``nofeedback_expiries``, the
        feedback counters and the ``input`` ledger; ``time_s`` on the sender's clock.
        """
        return self._native.stats()

    def rate_changes(self) -> list[dict[str, Any]]:
        """Rate changes (by more than 5%) since the last call.

        Each has ``time_s``, ``rate_bps``, ``p`` and ``rtt_s``. At most 64 are kept unread;
        :attr:`allowed_rate_bps` is always current.
        """
        return self._native.rate_changes()

    def wait_rate_change(self, timeout_s: float | None = None) -> dict[str, Any] | None:
        """Block until the next rate change (None after ``timeout_s``); Ctrl-C interrupts."""
        return self._native.wait_rate_change(timeout_s)

    async def rate_change(self) -> dict[str, Any]:
        """The next rate change, awaited (asyncio). Raises RuntimeError once closed."""
        while True:
            change = await asyncio.to_thread(self._native.wait_rate_change, _POLL_S)
            if change is not None:
                return change

    def expired(self) -> list[dict[str, Any]]:
        """Payloads dropped at their deadline since the last call.

        Each has ``ticket``, ``priority``, ``group``, ``queued_s``, ``deadline_s`` and
        ``dropped_s`` (at most 1,024 kept unread; the count is in :meth:`stats`).
        """
        return self._native.expired()

    def close(self) -> dict[str, Any]:
        """Stop sending (queued payloads are not sent); the final statistics.

        Raises OSError if the loop had failed. Closing again returns the same statistics.
        """
        return self._native.close()


class Receiver(_Session):
    """A TFRC receiver handing the payloads of whichever sender reaches it to the application.

    ``bind`` is ``host:port`` (port 0: any, see :attr:`local_addr`). Up to ``max_pending``
    payloads wait for the application; beyond that they are dropped and counted (``overflow``
    in :meth:`stats`). Iterating blocks for each payload until the receiver is closed.
    """

    def __init__(self, bind: str, *, preset: str = "rfc5348", max_pending: int = 4096) -> None:
        self._native = MediaReceiver(bind, preset=preset, max_pending=max_pending)

    @property
    def local_addr(self) -> str:
        """The socket's address."""
        return self._native.local_addr

    @property
    def closed(self) -> bool:
        """Whether the receiver was closed (or its loop failed: :meth:`close` says why)."""
        return self._native.closed

    def recv(self, timeout_s: float | None = None) -> Delivery | None:
        """The next payload, waiting up to ``timeout_s`` (forever when None).

        None on timeout or once closed with nothing pending. Ctrl-C interrupts.
        """
        got = self._native.recv(timeout_s)
        return None if got is None else Delivery(*got)

    def drain(self, limit: int = 4096) -> list[Delivery]:
        """Every payload pending now (at most ``limit``), without waiting."""
        return [Delivery(*got) for got in self._native.drain(limit)]

    async def arecv(self) -> Delivery | None:
        """The next payload, awaited (asyncio); None once closed with nothing pending."""
        while True:
            got = await asyncio.to_thread(self._native.recv, _POLL_S)
            if got is not None:
                return Delivery(*got)
            if self._native.closed:
                return None

    def stats(self) -> dict[str, Any]:
        """The live statistics, as of the loop's last pass.

        ``packets_received``, ``bytes_received``, ``packets_lost``, ``loss_events``, ``p``,
        ``x_recv_bytes_per_s``, ``rtt_s``, ``feedback_sent``, ``sessions``, ``peer``,
        ``overflow``, the ``input`` ledger; ``time_s`` on the receiver's clock.
        """
        return self._native.stats()

    def close(self) -> dict[str, Any]:
        """Stop receiving (payloads already pending stay readable); the final statistics."""
        return self._native.close()

    def __iter__(self) -> Iterator[Delivery]:
        while True:
            got = self.recv(_POLL_S)
            if got is not None:
                yield got
            elif self._native.closed:
                return

    def __aiter__(self) -> AsyncIterator[Delivery]:
        return self._deliveries()

    async def _deliveries(self) -> AsyncIterator[Delivery]:
        while (got := await self.arecv()) is not None:
            yield got


_LEVELS = {
    "ERROR": logging.ERROR,
    "WARN": logging.WARNING,
    "INFO": logging.INFO,
    "DEBUG": logging.DEBUG,
    "TRACE": 5,
}
"""tfrc-udp's levels as :mod:`logging`'s (TRACE below DEBUG)."""


def _to_logging(level: str, target: str, event: str, fields: dict[str, Any]) -> None:
    """Log one event on the logger named after its target (``tfrc_udp.sender``, ...)."""
    logger = logging.getLogger(target.replace("::", "."))
    number = _LEVELS.get(level, logging.INFO)
    if logger.isEnabledFor(number):
        logger.log(number, "%s %s", event, fields, extra={"event": event, "fields": fields})


def log_events(level: int | None = logging.DEBUG) -> int:
    """Forward tfrc-udp's events at ``level`` and more severe to :mod:`logging`; None stops.

    Each event becomes a record on the logger ``tfrc_udp.sender`` or ``tfrc_udp.receiver``,
    with the attributes ``event`` (``report``, ``rate_change``, ``loss_event``, ...) and
    ``fields`` (a dict: ``time_s`` on the session's clock, then the event's values). INFO gives
    rate changes, nofeedback expiries, sessions and send errors; DEBUG adds every report,
    feedback packet, loss event, expired payload and dropped datagram. Events reach Python on
    a thread of their own (a session never waits for the GIL); if the handlers fall 65,536
    events behind, later ones are dropped: the return value counts them so far. Off by
    default; raises RuntimeError if another library installed a ``tracing`` subscriber in
    this process first.
    """
    if level is None:
        return set_event_handler(None)
    name = (
        "error" if level >= logging.ERROR
        else "warn" if level >= logging.WARNING
        else "info" if level >= logging.INFO
        else "debug" if level >= logging.DEBUG
        else "trace"
    )  # fmt: skip
    return set_event_handler(_to_logging, name)


class EventLog(logging.Handler):
    """A :mod:`logging` handler that keeps tfrc-udp's events as rows, to plot or save.

    >>> log = EventLog.attach()  # doctest: +SKIP
    >>> run_my_sessions()  # doctest: +SKIP
    >>> log.detach()  # doctest: +SKIP
    >>> frame = log.to_frame()  # doctest: +SKIP
    >>> frame[frame.event == "report"].plot(x="time_s", y="x_bps")  # doctest: +SKIP

    :meth:`attach` turns :func:`log_events` on at ``level`` and adds the handler to the
    ``tfrc_udp`` logger; :meth:`detach` undoes both. Rows hold ``logger``, ``level``,
    ``event`` and the event's fields; other records are ignored.
    """

    def __init__(self, level: int = logging.DEBUG) -> None:
        super().__init__(level)
        self.rows: list[dict[str, Any]] = []

    @classmethod
    def attach(cls, level: int = logging.DEBUG) -> EventLog:
        """A new log receiving every event at ``level`` and above from now on."""
        log = cls(level)
        logger = logging.getLogger("tfrc_udp")
        logger.addHandler(log)
        if logger.getEffectiveLevel() > level:
            logger.setLevel(level)
        log_events(level)
        return log

    def detach(self) -> None:
        """Stop forwarding events and remove this handler from the ``tfrc_udp`` logger.

        Events emitted before the call reach the log first (waiting at most 2 s for the
        forwarding thread).
        """
        flush_events(2.0)
        log_events(None)
        logging.getLogger("tfrc_udp").removeHandler(self)

    def emit(self, record: logging.LogRecord) -> None:
        """Keep ``record`` as a row if it is one of tfrc-udp's events."""
        event = getattr(record, "event", None)
        fields = getattr(record, "fields", None)
        if isinstance(event, str) and isinstance(fields, dict):
            self.rows.append(
                {"logger": record.name, "level": record.levelname, "event": event, **fields}
            )

    def to_frame(self) -> pd.DataFrame:
        """The rows as a DataFrame (one column per field name seen; NaN where absent)."""
        import pandas as pd

        frame: pd.DataFrame = pd.DataFrame(self.rows)
        return frame

    def write_jsonl(self, path: str | Path) -> None:
        """The rows as JSON lines (infinite values, such as X_calc while p = 0, as null)."""

        def clean(value: object) -> object:
            return None if isinstance(value, float) and not math.isfinite(value) else value

        with Path(path).open("w", encoding="utf-8") as out:
            for row in self.rows:
                out.write(json.dumps({k: clean(v) for k, v in row.items()}) + "\n")
