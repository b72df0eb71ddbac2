"""Small traffic tools run inside a testbed namespace (``python -m tfrclab.testbed TOOL``).

A bulk TCP sender and receiver with a chosen congestion control, a paced UDP sender and a
counting receiver, and an ICMP echo ping. Each is bounded in time and prints one JSON line.

Linux TCP is set per socket with ``TCP_CONGESTION`` (the system default here may be bbr; the
papers' comparisons are against Reno-like TCP).
"""

from __future__ import annotations

import json
import os
import select
import socket
import struct
import time

_CHUNK = 1 << 16


def tcp_recv(port: int, limit_s: float) -> dict[str, float]:
    """Accept one TCP connection on ``port`` and read it to its end or for ``limit_s`` seconds.

    Returns:
        ``bytes`` received and the ``first``/``last`` arrival times (``time.monotonic``).
    """
    deadline = time.monotonic() + limit_s
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("0.0.0.0", port))
        server.listen(1)
        server.settimeout(limit_s)
        conn, _ = server.accept()
    total, first, last = 0, 0.0, 0.0
    with conn:
        while (left := deadline - time.monotonic()) > 0:
            conn.settimeout(left)
            try:
                data = conn.recv(_CHUNK)
            except TimeoutError:
                break
            if not data:
                break
            last = time.monotonic()
            first = first or last
            total += len(data)
    return {"bytes": total, "first": first, "last": last}


def _connect(host: str, port: int, cc: str) -> socket.socket:
    """A TCP connection to ``host:port`` with congestion control ``cc``.

    Retried with a fresh socket (one whose connect failed cannot be reused) for up to 5 s while
    the receiver is not yet listening.
    """
    deadline = time.monotonic() + 5.0
    while True:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
            sock.settimeout(10)
            sock.connect((host, port))
            return sock
        except ConnectionRefusedError:
            sock.close()
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
        except BaseException:
            sock.close()
            raise


#: ``struct tcp_info`` (include/uapi/linux/tcp.h): 8 bytes of u8 fields, then u32 fields from
#: ``tcpi_rto``; the indices of those read here.
_TCP_INFO_U32 = {"rto_us": 0, "snd_mss": 2, "unacked": 4, "lost": 6, "retrans": 7, "rtt_us": 15,
                 "rttvar_us": 16, "ssthresh": 17, "cwnd": 18, "total_retrans": 23}  # fmt: skip
#: Later fields of ``struct tcp_info`` by byte offset and ``struct`` format: the pacing rate
#: (bytes/s), the bytes written but not yet sent, and the time (µs) the connection was limited
#: by the receiver's window and by its send buffer (``tcp_chrono``), then the receiver's window.
_TCP_INFO_LATER = {"pacing_rate": (104, "<Q"), "notsent_bytes": (144, "<I"),
                   "rwnd_limited_us": (176, "<Q"), "sndbuf_limited_us": (184, "<Q"),
                   "snd_wnd": (228, "<I")}  # fmt: skip
_TCP_INFO_BYTES = 232


def tcp_info(sock: socket.socket) -> dict[str, int]:
    """The connection's state from ``TCP_INFO``.

    cwnd and ssthresh (packets), the sender's MSS (``snd_mss``, bytes), packets in flight
    (``unacked``), RTT, RTT variance and RTO (µs), packets lost and retransmitted now,
    retransmissions in all, the pacing rate (bytes/s; the kernel sets one for every congestion
    control, enforced only under BBR or the fq qdisc), unsent bytes, the µs spent limited by
    the receiver's window and by the send buffer, and the receiver's window (bytes). A field
    the kernel does not fill (an older kernel's shorter ``struct tcp_info``) reads 0.
    """
    raw = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, _TCP_INFO_BYTES)
    raw = raw.ljust(_TCP_INFO_BYTES, b"\0")
    u32 = struct.unpack_from("<24I", raw, 8)
    info = {name: u32[i] for name, i in _TCP_INFO_U32.items()}
    for name, (offset, fmt) in _TCP_INFO_LATER.items():
        info[name] = struct.unpack_from(fmt, raw, offset)[0]
    return info


_TCP_CC_INFO = 26
"""``TCP_CC_INFO`` (include/uapi/linux/tcp.h): the congestion control's own state, for BBR a
``struct tcp_bbr_info`` of five u32 (bandwidth low and high words, min RTT, the two gains)."""


def bbr_info(sock: socket.socket) -> dict[str, float]:
    """BBR's model of the path from ``TCP_CC_INFO`` (what ``ss -ti`` shows as ``bbr:(...)``).

    ``bbr_bw``: the max-filtered bandwidth estimate in payload bytes/s (``bbr_get_info`` in
    ``tcp_bbr.c`` scales its packets/µs by ``mss_cache``), ``bbr_min_rtt_us``, and the pacing
    and cwnd gains (the kernel's fixed point over 256, as plain numbers). Empty when the socket's
    congestion control is not BBR (CUBIC and Reno report nothing; Vegas and DCTCP report other
    structs, never read here).
    """
    used = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16)
    if used.split(b"\0")[0] != b"bbr":
        return {}
    raw = sock.getsockopt(socket.IPPROTO_TCP, _TCP_CC_INFO, 20)
    if len(raw) < 20:
        return {}
    low, high, min_rtt_us, pacing_gain, cwnd_gain = struct.unpack("<5I", raw)
    return {
        "bbr_bw": float(high << 32 | low),
        "bbr_min_rtt_us": float(min_rtt_us),
        "bbr_pacing_gain": pacing_gain / 256.0,
        "bbr_cwnd_gain": cwnd_gain / 256.0,
    }


def tcp_send(
    host: str,
    port: int,
    seconds: float,
    cc: str,
    info_every: float = 0.0,
    info_path: str | None = None,
) -> dict[str, object]:
    """Send bulk data to ``host:port`` for ``seconds`` with congestion control ``cc``.

    With ``info_every`` > 0, the connection's :func:`tcp_info` (and under BBR its
    :func:`bbr_info`) is sampled about that often (between writes) and written to ``info_path``
    as JSON lines with ``t`` (s from the connection's start).

    Raises:
        OSError: ``cc`` is not available (``/proc/sys/net/ipv4/tcp_available_congestion_control``)
            or the connection failed.
    """
    sock = _connect(host, port, cc)
    samples: list[dict[str, float]] = []
    with sock:
        used = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16)
        payload = b"\0" * _CHUNK
        sent = 0
        start = time.monotonic()
        end = start + seconds
        next_info = start if info_every > 0 else float("inf")
        while (left := end - time.monotonic()) > 0:
            if (now := time.monotonic()) >= next_info:
                samples.append({"t": now - start, **tcp_info(sock), **bbr_info(sock)})
                next_info += info_every
            sock.settimeout(min(left, info_every) if info_every > 0 else left)
            try:
                sent += sock.send(payload)
            except TimeoutError:
                continue
        sock.settimeout(10)
        sock.shutdown(socket.SHUT_WR)
    if info_path is not None:
        with open(info_path, "w") as f:
            f.writelines(json.dumps(sample) + "\n" for sample in samples)
    return {"bytes_sent": sent, "cc": used.split(b"\0")[0].decode(), "info_samples": len(samples)}


def udp_send(host: str, port: int, count: int, size: int, rate_bps: float) -> dict[str, int]:
    """Send ``count`` UDP datagrams of ``size`` payload bytes, paced at ``rate_bps`` (IP level)."""
    gap = (size + 28) * 8 / rate_bps
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        payload = b"\0" * size
        start = time.monotonic()
        for n in range(count):
            due = start + n * gap
            if (wait := due - time.monotonic()) > 0:
                time.sleep(wait)
            sock.sendto(payload, (host, port))
    return {"sent": count}


def udp_recv(port: int, idle_s: float, limit_s: float) -> dict[str, int]:
    """Count UDP datagrams on ``port``.

    Stops after ``idle_s`` without one (after the first), or ``limit_s`` in all.
    """
    deadline = time.monotonic() + limit_s
    received = 0
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
        sock.bind(("0.0.0.0", port))
        while (left := deadline - time.monotonic()) > 0:
            wait = min(left, idle_s) if received else left
            ready, _, _ = select.select([sock], [], [], wait)
            if not ready:
                if received:
                    break
                continue
            sock.recv(_CHUNK)
            received += 1
    return {"received": received}


def _checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total: int = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total > 0xFFFF:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def ping(host: str, count: int, interval_s: float, timeout_s: float) -> dict[str, object]:
    """ICMP echo (RFC 792) to ``host``: ``count`` probes ``interval_s`` apart.

    The replies come from the far side's kernel, so the RTT holds no user-space time at that end.

    Returns:
        ``rtt_s``: each probe's round-trip time in seconds, None if no reply came in
        ``timeout_s`` after the last probe.
    """
    ident = os.getpid() & 0xFFFF
    sent: dict[int, float] = {}
    rtts: dict[int, float] = {}
    with socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP) as sock:
        next_send = time.monotonic()
        seq = 0
        end = float("inf")
        while time.monotonic() < end:
            now = time.monotonic()
            if seq < count and now >= next_send:
                header = struct.pack("!BBHHH", 8, 0, 0, ident, seq)
                body = b"tfrclab-testbed-"
                packet = struct.pack("!BBHHH", 8, 0, _checksum(header + body), ident, seq) + body
                sent[seq] = time.monotonic()
                sock.sendto(packet, (host, 0))
                seq += 1
                next_send += interval_s
                if seq == count:
                    end = time.monotonic() + timeout_s
                continue
            wait = min(next_send if seq < count else end, end) - time.monotonic()
            ready, _, _ = select.select([sock], [], [], max(wait, 0.0))
            if not ready:
                continue
            data = sock.recv(2048)
            arrived = time.monotonic()
            ihl = (data[0] & 0x0F) * 4
            kind, _, _, rid, rseq = struct.unpack("!BBHHH", data[ihl : ihl + 8])
            if kind == 0 and rid == ident and rseq in sent and rseq not in rtts:
                rtts[rseq] = arrived - sent[rseq]
                if len(rtts) == count:
                    break
    return {"rtt_s": [rtts.get(n) for n in range(count)]}


def print_json(result: object) -> None:
    """Print a tool's result as one JSON line."""
    print(json.dumps(result), flush=True)
