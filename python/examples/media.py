"""A media sender and receiver over TFRC with tfrclab.media.

The sender is a 30 fps encoder whose bitrate follows TFRC's allowed rate X, up to a ceiling: each
frame is cut into full-size payloads that start with a 16-byte frame header (big-endian: frame
number u32, packet index u16, packet count u16, capture time u64 in µs), every 30th frame is a
key frame queued at a higher priority, and every payload has a 100 ms deadline after which it is
dropped rather than sent (a frame's payloads form a group that expires together). The receiver
reassembles frames. Both print a one-line JSON summary, in the same layout as the Rust example
(``cargo run -p tfrc-udp --example media``), with which they interoperate::

    python python/examples/media.py recv --bind 0.0.0.0:5000 --duration 12
    python python/examples/media.py send --to HOST:5000 --duration 10 [--size 1200]
        [--max-rate 8e6] [--path-rate 4e6]

The sender's summary gives its highest 100 ms sending rate over the first 2 s and its rate over
the second half, and with ``--path-rate`` both as fractions of the path's rate (the start-up
overshoot and the steady share); the receiver's, frames complete, on time (within 200 ms of
capture beyond the path's base delay), incomplete and missing, and the one-way delay variation.
"""

from __future__ import annotations

import argparse
import json
import math
import struct
import sys
import time
from typing import Any

from tfrclab.media import QueueFull, Receiver, Sender

FPS = 30
KEY_INTERVAL = 30
KEY_PRIORITY = 3
DEADLINE_S = 0.1
PLAYOUT_S = 0.2
HEADER = struct.Struct(">IHHQ")  # frame, index, count, capture µs
DATA_HEADER = 34  # tfrc-udp's data packet header
START_UP_S = 2.0
WINDOW_S = 0.1


def _rate_between(series: list[tuple[float, int]], start: float, end: float) -> float:
    """The sending rate between two times (s) of a (time, bytes sent) series, bits/s."""

    def at(t: float) -> float:
        before = [(s, b) for s, b in series if s <= t]
        after = [(s, b) for s, b in series if s > t]
        if not before:
            return 0.0
        (t0, b0), (t1, b1) = before[-1], after[0] if after else before[-1]
        return b0 + (b1 - b0) * (t - t0) / (t1 - t0) if t1 > t0 else float(b0)

    return (at(end) - at(start)) * 8 / (end - start)


def send(
    to: str, duration_s: float, size: int, max_bps: float, path_bps: float | None
) -> dict[str, Any]:
    """Stream frames to ``to`` for ``duration_s`` and summarize."""
    summary: dict[str, Any] = {"role": "send", "frames": 0, "frames_refused": 0}
    queued = refused = 0
    series = [(0.0, 0)]
    with Sender(to, size_bytes=size) as tx:
        start = time.monotonic()
        for frame in range(round(duration_s * FPS)):
            time.sleep(max(0.0, frame / FPS - (time.monotonic() - start)))
            capture_us = int(tx.now_s * 1e6)
            target = min(tx.allowed_rate_bps, max_bps) / 8
            # Whole datagrams within X / 30: rounding up would ask for more than X.
            count = min(256, max(1, math.floor(target / FPS / size)))
            priority = KEY_PRIORITY if frame % KEY_INTERVAL == 0 else 0
            frame_refused = False
            for index in range(count):
                body = HEADER.pack(frame, index, count, capture_us)
                payload = body + bytes(size - DATA_HEADER - len(body))
                try:
                    tx.send(payload, deadline_s=DEADLINE_S, priority=priority, group=frame)
                    queued += 1
                except QueueFull:
                    refused += 1
                    frame_refused = True
            summary["frames"] += 1
            summary["frames_refused"] += frame_refused
            series.append((time.monotonic() - start, tx.stats()["bytes_sent"]))
        time.sleep(DEADLINE_S)
        final = tx.close()
    series.append((time.monotonic() - start, final["bytes_sent"]))
    windows = [k * WINDOW_S / 4 for k in range(int(START_UP_S / WINDOW_S * 4))]
    peak = max(
        _rate_between(series, s, s + WINDOW_S) for s in windows if s + WINDOW_S <= START_UP_S
    )
    steady = _rate_between(series, duration_s / 2, duration_s)
    summary.update(
        payloads_queued=queued,
        payloads_refused=refused,
        payloads_expired=final["queue_expired"],
        payloads_sent=final["queue_sent"],
        start_up_peak_bps=round(peak),
        steady_bps=round(steady),
        path_bps=path_bps,
        start_up_overshoot=None if path_bps is None else round(peak / path_bps, 4),
        steady_fraction=None if path_bps is None else round(steady / path_bps, 4),
    )
    return summary


def receive(bind: str, duration_s: float) -> dict[str, Any]:
    """Play what arrives at ``bind`` for ``duration_s`` and summarize."""
    frames: dict[int, list[float]] = {}  # frame: [count, got, capture_s, last arrival_s]
    delays: list[float] = []
    end = time.monotonic() + duration_s
    with Receiver(bind, max_pending=1 << 14) as rx:
        while (left := end - time.monotonic()) > 0:
            d = rx.recv(timeout_s=min(left, 0.1))
            if d is None or len(d.payload) < HEADER.size:
                continue
            frame, _, count, capture_us = HEADER.unpack_from(d.payload)
            delays.append(d.delay_s)
            state = frames.setdefault(frame, [count, 0, capture_us / 1e6, 0.0])
            state[1] += 1
            state[3] = d.arrival_s
    base = min(delays, default=0.0)
    complete = [s for s in frames.values() if s[1] >= s[0]]
    on_time = [s for s in complete if s[3] - s[2] - base <= PLAYOUT_S]
    variation = [(d - base) * 1e3 for d in delays]
    return {
        "role": "recv",
        "frames_complete": len(complete),
        "frames_on_time": len(on_time),
        "frames_incomplete": len(frames) - len(complete),
        "frames_missing": (max(frames) + 1 - len(frames)) if frames else 0,
        "payloads": len(delays),
        "mean_delay_variation_ms": round(sum(variation) / len(variation), 3) if variation else 0.0,
        "max_delay_variation_ms": round(max(variation, default=0.0), 3),
    }


def main(argv: list[str] | None = None) -> int:
    """Parse the command line, run one end, print its summary."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("role", choices=("send", "recv"))
    parser.add_argument("--bind", help="recv: the address to listen on")
    parser.add_argument("--to", help="send: the receiver's address")
    parser.add_argument("--duration", type=float, default=10.0, help="seconds (default 10)")
    parser.add_argument("--size", type=int, default=1200, help="datagram bytes (default 1200)")
    parser.add_argument("--max-rate", type=float, default=8e6, help="encoder ceiling, bits/s")
    parser.add_argument("--path-rate", type=float, help="the path's rate, bits/s (for ratios)")
    args = parser.parse_args(argv)
    if not 0 < args.duration <= 3600:
        parser.error(f"--duration: expected 0 to 3600 s, found {args.duration}")
    if not 100 <= args.size <= 65507:
        parser.error(f"--size: expected 100 to 65507 bytes, found {args.size}")
    if args.role == "send":
        if not args.to:
            parser.error("send: --to is required")
        out = send(args.to, args.duration, args.size, args.max_rate, args.path_rate)
    else:
        if not args.bind:
            parser.error("recv: --bind is required")
        out = receive(args.bind, args.duration)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
