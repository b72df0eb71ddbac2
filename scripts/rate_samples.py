"""Linux's delivery-rate samples rebuilt from a capture, against the kernel BBR's own estimate.

Kernel BBR's bandwidth estimate runs about 1.2% above the bottleneck's rate on the testbed,
while netsim's is exact (docs/twin.md). ACK timing alone accounts for a tenth of it
(``scripts/ack_timing.py``). This script has ``tfrclab twin --capture`` record the sender's
packets with their sequence numbers (tcpdump on the testbed's sender side, nanosecond stamps,
and netsim's capture of the same place) and replays ``net/ipv4/tcp_rate.c`` over either:

- per segment sent: the connection's delivered count, the time of the last ACK that delivered
  data (``delivered_mstamp``) and the send time of the newest delivered segment
  (``first_tx_mstamp``), reset when nothing is in flight (``tcp_rate_skb_sent``);
- per ACK: the segments it newly SACKs or cumulatively acks, the newest-sent one's snapshot
  (``tcp_rate_skb_delivered``), then a sample of delivered / max(send phase, ACK phase),
  dropped below the minimum RTT (``tcp_rate_gen``);
- BBR's 10-round windowed max filter of those samples (``bbr_update_bw``, lib/win_minmax.c),
  with rounds counted as ``bbr_update_round`` does.

It reports the filtered estimate's median over 5-30 s against the line rate and against the
kernel's ``TCP_CC_INFO`` samples of the same run, and where the samples above the line come
from (send phase or ACK phase, inside a recovery or not).

    scripts/rate_samples.py run CELL.toml --seeds 1-2 --out DIR   # root: tfrclab twin --capture
    scripts/rate_samples.py analyze DIR [--rate 20e6]              # the kernel's side and netsim's
"""

from __future__ import annotations

import argparse
import json
import statistics
import struct
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

_PCAP_NS = 0xA1B23C4D
_PCAP_US = 0xA1B2C3D4
_LINKTYPE_RAW = (101, 12, 228)
_LINKTYPE_SLL = 113
_LINKTYPE_ETHERNET = 1


@dataclass(frozen=True)
class Segment:
    """One TCP packet of the capture."""

    t_ns: int
    src_port: int
    dst_port: int
    seq: int
    ack: int
    payload: int
    syn: bool
    sack: tuple[tuple[int, int], ...]


def read_pcap(path: Path) -> Iterator[Segment]:
    """The TCP/IPv4 packets of a pcap file (raw IP, Linux cooked or Ethernet link types)."""
    data = path.read_bytes()
    if len(data) < 24:
        return
    magic = struct.unpack("<I", data[:4])[0]
    if magic not in (_PCAP_NS, _PCAP_US):
        raise ValueError(f"{path}: not a little-endian pcap file (magic {magic:#x})")
    scale = 1 if magic == _PCAP_NS else 1000
    linktype = struct.unpack("<I", data[20:24])[0]
    skip = {_LINKTYPE_SLL: 16, _LINKTYPE_ETHERNET: 14}.get(linktype, 0)
    if linktype not in _LINKTYPE_RAW and not skip:
        raise ValueError(f"{path}: link type {linktype} is not raw IP, SLL or Ethernet")
    at = 24
    while at + 16 <= len(data):
        sec, frac, caplen, _ = struct.unpack("<IIII", data[at : at + 16])
        pkt = data[at + 16 + skip : at + 16 + caplen]
        at += 16 + caplen
        if len(pkt) < 40 or pkt[0] >> 4 != 4 or pkt[9] != 6:
            continue
        ihl = (pkt[0] & 0xF) * 4
        total = struct.unpack(">H", pkt[2:4])[0]
        tcp = pkt[ihl:]
        sport, dport, seq, ack = struct.unpack(">HHII", tcp[:12])
        doff = (tcp[12] >> 4) * 4
        flags = tcp[13]
        yield Segment(
            t_ns=sec * 1_000_000_000 + frac * scale,
            src_port=sport,
            dst_port=dport,
            seq=seq,
            ack=ack,
            payload=total - ihl - doff,
            syn=bool(flags & 0x02),
            sack=_sack_blocks(tcp[20:doff]),
        )


def _sack_blocks(options: bytes) -> tuple[tuple[int, int], ...]:
    """The SACK blocks of a TCP header's options (kind 5), as (left, right) edges."""
    blocks = []
    i = 0
    while i < len(options):
        kind = options[i]
        if kind == 0:
            break
        if kind == 1:
            i += 1
            continue
        if i + 1 >= len(options) or options[i + 1] < 2:
            break
        length = options[i + 1]
        if kind == 5:
            body = options[i + 2 : i + length]
            for j in range(0, len(body) - 7, 8):
                blocks.append(struct.unpack(">II", body[j : j + 8]))
        i += length
    return tuple(blocks)


class WindowedMax:
    """Kathleen Nichols' windowed max (lib/win_minmax.c): best, second and third in a window."""

    def __init__(self) -> None:
        self.s = [(0, 0.0)] * 3

    def update(self, win: int, t: int, value: float) -> float:
        """Add ``value`` at round ``t``; the max over the last ``win`` rounds."""
        new = (t, value)
        if value >= self.s[0][1] or t - self.s[2][0] > win:
            self.s = [new] * 3
            return value
        if value >= self.s[1][1]:
            self.s[2] = self.s[1] = new
        elif value >= self.s[2][1]:
            self.s[2] = new
        dt = t - self.s[0][0]
        if dt > win:
            self.s = [self.s[1], self.s[2], new]
            if t - self.s[0][0] > win:
                self.s = [self.s[1], self.s[2], new]
        elif self.s[1][0] == self.s[0][0] and dt > win / 4:
            self.s[2] = self.s[1] = new
        elif self.s[2][0] == self.s[1][0] and dt > win / 2:
            self.s[2] = new
        return self.s[0][1]


@dataclass
class _Sent:
    end: int
    tx_us: int
    first_tx_us: int
    delivered_us: int
    delivered: int
    retrans: bool
    sacked: bool = False


@dataclass
class Sample:
    """One rate sample as ``tcp_rate_gen`` forms it (kept or dropped below min RTT)."""

    t_us: int
    delivered: int
    snd_us: int
    ack_us: int
    retrans: bool
    in_recovery: bool
    kept: bool

    @property
    def rate(self) -> float:
        """Segments per second over the longer phase."""
        return self.delivered * 1e6 / max(self.snd_us, self.ack_us)


@dataclass
class Replay:
    """The samples and BBR's filtered estimate over one connection's capture."""

    samples: list[Sample] = field(default_factory=list)
    estimate: list[tuple[int, float]] = field(default_factory=list)
    """(time us, the 10-round max filter) after each kept sample."""


def replay(segments: list[Segment], port: int, mss: int = 1448, rounds: int = 10) -> Replay:
    """Replay ``tcp_rate.c`` and BBR's bandwidth filter over the connection to ``port``.

    Data are the sender's packets with a payload to ``port``; ACKs are the receiver's packets
    from ``port``. Sequence numbers are taken relative to the SYN (or the first data packet).
    A segment sent again is a retransmission and takes a new snapshot, as the kernel's
    ``tcp_rate_skb_sent`` does on every transmission.
    """
    out = Replay()
    sent: dict[int, _Sent] = {}
    order: list[int] = []  # start seqs in sequence order, for the cumulative walk
    base: int | None = None
    una = 0
    delivered = 0
    delivered_us = 0
    first_tx_us = 0
    min_rtt = 1 << 62
    high_sacked = 0
    window = WindowedMax()
    rtt_cnt = 0
    next_rtt_delivered = 0
    recovery_until = -1  # snd_nxt at the start of the current recovery (seq), or -1

    def rel(x: int) -> int:
        return (x - base) % (1 << 32) if base is not None else 0

    snd_nxt = 0
    for seg in segments:
        if seg.dst_port == port and (seg.payload > 0 or seg.syn):
            if base is None:
                base = seg.seq + (1 if seg.syn else 0)
            if seg.payload <= 0:
                continue
            start = rel(seg.seq)
            if start > 1 << 31:
                continue  # before the base: the handshake's retransmission
            t_us = seg.t_ns // 1000
            if not order:  # nothing in flight (`order` keeps what is above snd_una)
                first_tx_us = delivered_us = t_us
            retrans = start in sent
            if retrans and sent[start].end > una and recovery_until < 0:
                recovery_until = snd_nxt  # a hole is being repaired
            end = start + min(seg.payload, mss)
            rec = _Sent(end, t_us, first_tx_us, delivered_us, delivered, retrans)
            if start not in sent:
                order.append(start)
            sent[start] = rec
            snd_nxt = max(snd_nxt, rec.end)
            continue
        if seg.src_port != port or base is None or seg.payload > 0:
            continue
        t_us = seg.t_ns // 1000
        ack = rel(seg.ack)
        if ack > 1 << 31:
            continue
        newly = 0
        best: _Sent | None = None
        rtt_us = None
        # SACKed first (tcp_sacktag_write_queue runs before tcp_clean_rtx_queue).
        for left, right in seg.sack:
            lo, hi = rel(left), rel(right)
            if lo <= ack or hi > 1 << 31:
                continue  # a DSACK or a block below the cumulative ACK
            high_sacked = max(high_sacked, hi)
            for start in order:
                s = sent[start]
                if start >= lo and s.end <= hi and not s.sacked and s.end > una:
                    s.sacked = True
                    newly += (s.end - start + mss - 1) // mss
                    if best is None or (s.tx_us, s.end) > (best.tx_us, best.end):
                        best = s
                    if not s.retrans:
                        rtt_us = t_us - s.tx_us
        for start in order:
            s = sent[start]
            if s.end > ack:
                break
            if s.end <= una:
                continue
            if not s.sacked:
                newly += (s.end - start + mss - 1) // mss
                if best is None or (s.tx_us, s.end) > (best.tx_us, best.end):
                    best = s
                if not s.retrans:
                    rtt_us = t_us - s.tx_us
        if ack > una:
            una = ack
            order = [s for s in order if sent[s].end > una]
            for start in [s for s in sent if sent[s].end <= una]:
                del sent[start]
        if recovery_until >= 0 and una >= recovery_until:
            recovery_until = -1
        if rtt_us is not None and rtt_us > 0:
            min_rtt = min(min_rtt, rtt_us)
        if newly:
            delivered += newly
            delivered_us = t_us
        if best is None:
            continue
        snd_us = best.tx_us - best.first_tx_us
        first_tx_us = best.tx_us
        ack_us = t_us - best.delivered_us
        sample = Sample(
            t_us=t_us,
            delivered=delivered - best.delivered,
            snd_us=snd_us,
            ack_us=ack_us,
            retrans=best.retrans,
            in_recovery=recovery_until >= 0,
            kept=max(snd_us, ack_us) >= min_rtt and delivered - best.delivered > 0,
        )
        out.samples.append(sample)
        if sample.kept:
            if best.delivered >= next_rtt_delivered:
                next_rtt_delivered = delivered
                rtt_cnt += 1
            out.estimate.append((t_us, window.update(rounds, rtt_cnt, sample.rate)))
    return out


def _median_in(points: list[tuple[float, float]], start: float, end: float) -> float:
    inside = [v for t, v in points if start <= t < end]
    return statistics.median(inside) if inside else float("nan")


def analyze_seed(directory: Path, line_pps: float, start_s: float, end_s: float) -> dict:
    """The replay's estimate and its samples' make-up beside the kernel's estimate."""
    segments = sorted(
        (seg for path in sorted(directory.glob("*.pcap")) for seg in read_pcap(path)),
        key=lambda seg: seg.t_ns,
    )
    syns = [s for s in segments if s.syn and s.ack == 0]
    if not syns:
        raise ValueError(f"{directory}: the capture holds no SYN")
    port, t0 = syns[0].dst_port, syns[0].t_ns
    result = replay(segments, port)
    rel = [((t * 1000 - t0) / 1e9, v) for t, v in result.estimate]
    kept = [s for s in result.samples if s.kept and start_s <= (s.t_us * 1000 - t0) / 1e9 < end_s]
    above = [s for s in kept if s.rate > line_pps]
    kernel = []
    for path in directory.glob("tcp_info-*.jsonl"):
        for row in map(json.loads, path.read_text().splitlines()):
            if start_s <= row.get("t", 0.0) < end_s and row.get("bbr_bw", 0.0) > 0:
                kernel.append(row["bbr_bw"] / row.get("snd_mss", 1448))

    def share(items: list[Sample], test: Callable[[Sample], bool]) -> float:
        return sum(1 for s in items if test(s)) / len(items) if items else float("nan")

    top = sorted(kept, key=lambda s: s.rate)[-max(1, len(kept) // 100) :]
    return {
        "port": port,
        "samples_kept": len(kept),
        "replayed_estimate_over_line": _median_in(rel, start_s, end_s) / line_pps,
        "kernel_estimate_over_line": (
            statistics.median(kernel) / line_pps if kernel else float("nan")
        ),
        "samples_above_line": len(above) / len(kept) if kept else float("nan"),
        "above_line_send_phase_longer": share(above, lambda s: s.snd_us > s.ack_us),
        "above_line_in_recovery": share(above, lambda s: s.in_recovery),
        "above_line_retransmission": share(above, lambda s: s.retrans),
        "kept_in_recovery": share(kept, lambda s: s.in_recovery),
        "top_percent": {
            "rate_over_line": statistics.median(s.rate for s in top) / line_pps if top else None,
            "in_recovery": share(top, lambda s: s.in_recovery),
            "retransmission": share(top, lambda s: s.retrans),
            "delivered": statistics.median(s.delivered for s in top) if top else None,
            "ack_us": statistics.median(s.ack_us for s in top) if top else None,
        },
    }


def run(scenario: Path, seeds: str, out: Path) -> int:
    """``tfrclab twin --capture``: both sides' packets in each seed's directory."""
    cmd = [sys.executable, "-m", "tfrclab", "twin", str(scenario), "--seeds", seeds]
    return subprocess.run([*cmd, "--out", str(out), "--capture"], check=False).returncode


def main(argv: list[str] | None = None) -> int:
    """``run`` a cell with the sender's side captured, or ``analyze`` a run's directory."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run a twin cell with the sender's side captured (root)")
    r.add_argument("scenario", type=Path)
    r.add_argument("--seeds", default="1", help="as tfrclab twin takes them, e.g. 1-2")
    r.add_argument("--out", type=Path, required=True)
    a = sub.add_parser("analyze", help="replay the rate samples of a run's directory")
    a.add_argument("out", type=Path)
    a.add_argument("--rate", type=float, default=20e6, help="line rate, bit/s")
    a.add_argument("--packet", type=int, default=1500, help="a full packet on the line, bytes")
    a.add_argument("--window", default="5,30", help="the seconds measured, START,END")
    args = parser.parse_args(argv)
    if args.command == "run":
        return run(args.scenario, args.seeds, args.out)
    start, end = (float(x) for x in args.window.split(","))
    line_pps = args.rate / 8 / args.packet
    for seed_dir in sorted(args.out.glob("seed-*")):
        for side in (seed_dir, seed_dir / "netsim-pcap"):
            if any(side.glob("*.pcap")):
                summary = analyze_seed(side, line_pps, start, end)
                print(side.relative_to(args.out), json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
