"""The media API over loopback.

The application's own payloads with deadlines and priorities, live statistics, deliveries with
sender timestamps, the asyncio form, and clear errors.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Callable

import pytest

from tfrclab import ConfigError
from tfrclab.media import Delivery, QueueFull, Receiver, Sender


def test_payloads_arrive_with_sequence_gaps_and_sender_timestamps() -> None:
    with Receiver("127.0.0.1:0") as rx, Sender(rx.local_addr) as tx:
        tickets = [tx.send(f"frame {i}".encode()) for i in range(20)]
        assert tickets == list(range(20))
        got = [rx.recv(timeout_s=2.0) for _ in range(20)]
    assert all(isinstance(d, Delivery) for d in got)
    deliveries = [d for d in got if d is not None]
    assert [d.payload for d in deliveries] == [f"frame {i}".encode() for i in range(20)]
    assert [d.seq for d in deliveries] == list(range(20))
    assert all(d.gap == 0 and not d.late for d in deliveries)
    sent = [d.sent_s for d in deliveries]
    assert sent == sorted(sent)
    assert len(set(sent)) == 20
    # The clocks' origins differ by the time between opening the two (well under a second),
    # so the delay plus offset is small and nearly constant on loopback.
    delays = [d.delay_s for d in deliveries]
    assert max(delays) - min(delays) < 0.05, delays
    assert -1.0 < delays[0] < 1.0


def _wait_for(condition: Callable[[], bool], limit_s: float = 3.0) -> None:
    deadline = time.monotonic() + limit_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def test_deadlines_priorities_and_flush_decide_what_is_sent() -> None:
    # A plain socket takes the port first and never reports: without feedback TFRC sends one
    # packet, then waits about a second (RFC 5348 §4.2), so the payloads queued meanwhile wait.
    silent = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    silent.bind(("127.0.0.1", 0))
    port = silent.getsockname()[1]
    with Sender(f"127.0.0.1:{port}") as tx:
        tx.send(b"first")
        _wait_for(lambda: tx.stats()["queue_sent"] == 1)
        assert silent.recv(2048).endswith(b"first")
        # A frame of three parts: only the first has a deadline, the group takes the rest.
        stale = [tx.send(b"stale", deadline_s=0.05, priority=2, group=7)]
        stale += [tx.send(b"stale", priority=2, group=7) for _ in range(2)]
        tx.send(b"delta", priority=0)
        tx.send(b"key", priority=3)
        tx.send(b"audio", priority=6)
        assert tx.flush(below=1) == 1  # the delta: a new key frame makes it useless
        silent.close()
        with Receiver(f"127.0.0.1:{port}") as rx:
            got = [rx.recv(timeout_s=3.0) for _ in range(2)]
            _wait_for(lambda: tx.queued == 0)
            assert rx.recv(timeout_s=0.2) is None
        expired = tx.expired()
        stats = tx.stats()
    assert [d.payload if d else None for d in got] == [b"audio", b"key"]
    assert [e["ticket"] for e in expired] == stale
    assert [e["group"] for e in expired] == [7, 7, 7]
    assert expired[0]["dropped_s"] > expired[0]["deadline_s"] > expired[0]["queued_s"]
    assert (stats["queue_expired"], stats["queue_flushed"], stats["queue_sent"]) == (3, 1, 3)


def test_statistics_are_live_while_the_session_runs() -> None:
    with Receiver("127.0.0.1:0") as rx, Sender(rx.local_addr) as tx:
        readings = []
        for _ in range(10):
            for _ in range(20):
                tx.send(bytes(900))
            time.sleep(0.05)
            readings.append((tx.stats(), rx.stats()))
        rx.drain()
    sent = [s["packets_sent"] for s, _ in readings]
    received = [r["packets_received"] for _, r in readings]
    assert sent == sorted(sent)
    assert len(set(sent)) >= 5, sent
    assert received == sorted(received)
    assert received[-1] > 0
    last_tx, last_rx = readings[-1]
    assert last_tx["x_bytes_per_s"] > 0
    assert last_tx["rtt_s"] > 0
    assert last_tx["t_rto_s"] > 0
    assert last_tx["x_recv_bytes_per_s"] > 0
    assert last_rx["feedback_sent"] > 0
    assert last_rx["overflow"] == 0
    assert tx.allowed_rate_bps == pytest.approx(8 * tx.stats()["x_bytes_per_s"], rel=0.5)


def test_a_full_queue_raises_queue_full_and_counts_it() -> None:
    with Receiver("127.0.0.1:0") as rx, Sender(rx.local_addr, queue_packets=2) as tx:
        refused = 0
        for _ in range(10):
            try:
                tx.send(b"x" * 100)
            except QueueFull:
                refused += 1
        assert refused >= 5
        assert tx.stats()["queue_drops"] == refused


def test_bad_arguments_are_named() -> None:
    with pytest.raises(ConfigError):
        Sender("127.0.0.1:9", preset="nope")
    with pytest.raises(ValueError, match="max_pending"):
        Receiver("127.0.0.1:0", max_pending=0)
    with Receiver("127.0.0.1:0") as rx, Sender(rx.local_addr, size_bytes=200) as tx:
        with pytest.raises(ValueError, match="payload: expected at most 166 bytes"):
            tx.send(bytes(167))
        with pytest.raises(ValueError, match="priority"):
            tx.send(b"x", priority=8)
        with pytest.raises(ValueError, match="deadline_s"):
            tx.send(b"x", deadline_s=-1.0)
        with pytest.raises(ValueError, match="below"):
            tx.flush(below=9)
        with pytest.raises(ValueError, match="timeout_s"):
            rx.recv(timeout_s=float("nan"))
    final = tx.close()
    assert tx.closed
    assert final == tx.close()
    with pytest.raises(RuntimeError, match="closed"):
        tx.send(b"late")
    assert rx.recv(timeout_s=0.1) is None


def test_the_asyncio_form_streams_payloads_and_rate_changes() -> None:
    async def main() -> tuple[list[bytes], dict[str, object]]:
        async with Receiver("127.0.0.1:0") as rx, Sender(rx.local_addr) as tx:
            change = asyncio.create_task(tx.rate_change())
            for i in range(5):
                tx.send(bytes([i]) * 10)
            got = []
            async for delivery in rx:
                got.append(delivery.payload)
                if len(got) == 5:
                    break
            return got, await asyncio.wait_for(change, 5.0)

    got, change = asyncio.run(main())
    assert got == [bytes([i]) * 10 for i in range(5)]
    assert isinstance(change["rate_bps"], float)
    assert change["rate_bps"] > 0
