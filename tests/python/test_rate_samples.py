"""scripts/rate_samples.py: Linux's delivery-rate samples rebuilt from a capture."""

from __future__ import annotations

import struct
from pathlib import Path
from types import ModuleType

import pytest

from conftest import load_script

SENDER, RECEIVER = 40000, 5101
MSS = 1448


@pytest.fixture(scope="module")
def rs() -> ModuleType:
    module: ModuleType = load_script("rate_samples")
    return module


def _packet(sport: int, dport: int, seq: int, ack: int, payload: int, flags: int,
            sack: tuple[tuple[int, int], ...] = ()) -> bytes:  # fmt: skip
    options = b""
    if sack:
        options = b"\x01\x01" + bytes([5, 2 + 8 * len(sack)])
        options += b"".join(struct.pack(">II", lo, hi) for lo, hi in sack)
    options += b"\x00" * (-len(options) % 4)
    doff = (20 + len(options)) // 4
    tcp = struct.pack(">HHIIBBHHH", sport, dport, seq, ack, doff << 4, flags, 65535, 0, 0)
    total = 20 + len(tcp) + len(options) + payload
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, total, 0, 0, 64, 6, 0, bytes(4), bytes(4))
    return ip + tcp + options + b"\x00" * payload


def _pcap(path: Path, records: list[tuple[int, bytes]]) -> None:
    out = [struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 101)]
    for t_ns, pkt in records:
        out.append(struct.pack("<IIII", t_ns // 10**9, t_ns % 10**9, len(pkt), len(pkt)))
        out.append(pkt)
    path.write_bytes(b"".join(out))


def _stream(late_every: int = 0, late_ns: int = 0, seconds: float = 3.0) -> list[tuple[int, bytes]]:
    """A sender sending a segment every 0.5 ms into a 0.6 ms-per-packet link, 20 ms each way.

    The receiver acks each segment as it arrives; with ``late_every``, every such ACK leaves
    ``late_ns`` late (as a held SACK-compression ACK does), still before the next one.
    """
    isn, link, gap, one_way = 1000, 600_000, 500_000, 20_000_000
    records = [(0, _packet(SENDER, RECEIVER, isn, 0, 0, 0x02))]
    free = 0
    for k in range(int(seconds * 1e9 / gap)):
        sent = 1_000_000 + k * gap
        seq = isn + 1 + k * MSS
        records.append((sent, _packet(SENDER, RECEIVER, seq, 1, MSS, 0x10)))
        free = max(free, sent) + link
        acked = free + 2 * one_way
        if late_every and k % late_every == 0:
            acked += late_ns
        records.append((acked, _packet(RECEIVER, SENDER, 1, seq + MSS, 0, 0x10)))
    return sorted(records, key=lambda r: r[0])


def test_pcap_reading_gives_sequence_numbers_payloads_and_sack_blocks(
    rs: ModuleType, tmp_path: Path
) -> None:
    path = tmp_path / "c.pcap"
    _pcap(
        path,
        [
            (5, _packet(SENDER, RECEIVER, 7, 0, 0, 0x02)),
            (1_000_000_007, _packet(SENDER, RECEIVER, 8, 1, MSS, 0x10)),
            (2_000_000_009, _packet(RECEIVER, SENDER, 1, 8, 0, 0x10, ((1456, 2904),))),
        ],
    )
    got = list(rs.read_pcap(path))
    assert [(s.t_ns, s.seq, s.payload, s.syn) for s in got] == [
        (5, 7, 0, True),
        (1_000_000_007, 8, MSS, False),
        (2_000_000_009, 1, 0, False),
    ]
    assert got[2].sack == ((1456, 2904),)
    assert got[2].ack == 8
    (tmp_path / "bad.pcap").write_bytes(b"\x00" * 24)
    with pytest.raises(ValueError, match="not a little-endian pcap"):
        list(rs.read_pcap(tmp_path / "bad.pcap"))


def test_windowed_max_keeps_the_best_of_the_window_and_forgets_older_ones(
    rs: ModuleType,
) -> None:
    m = rs.WindowedMax()
    assert m.update(10, 0, 5.0) == 5.0
    assert m.update(10, 3, 4.0) == 5.0
    assert m.update(10, 8, 3.0) == 5.0
    # Round 11 is past round 0's window: the best of rounds 3-11 is 4.
    assert m.update(10, 11, 1.0) == 4.0
    assert m.update(10, 12, 9.0) == 9.0


def test_acks_on_time_give_the_link_rate_and_late_window_starts_raise_it(
    rs: ModuleType, tmp_path: Path
) -> None:
    line = 1e9 / 600_000
    plain = rs.replay(_parse(rs, tmp_path, _stream()), RECEIVER)
    estimate = [v for _, v in plain.estimate[len(plain.estimate) // 2 :]]
    assert max(estimate) == pytest.approx(line, rel=1e-4)
    # Every 20th ACK 0.3 ms late: samples whose window opens at one run 0.3 ms short of about
    # 40-50 ms, and the max filter keeps them (the send phase is shorter still: the sender
    # outruns the link).
    late = rs.replay(_parse(rs, tmp_path, _stream(20, 300_000, seconds=1.0)), RECEIVER)
    estimate = [v for _, v in late.estimate[len(late.estimate) // 2 :]]
    assert min(estimate) > line * 1.004
    assert max(estimate) < line * 1.01


def _parse(rs: ModuleType, directory: Path, records: list[tuple[int, bytes]]) -> list:
    path = directory / "s.pcap"
    _pcap(path, records)
    return list(rs.read_pcap(path))


def test_analyze_reads_a_directory_and_compares_with_the_kernel(
    rs: ModuleType, tmp_path: Path
) -> None:
    seed = tmp_path / "seed-1"
    seed.mkdir()
    _pcap(seed / "capture.pcap", _stream(seconds=6.0))
    line_pps = 1e9 / 600_000
    (seed / "tcp_info-tcp0.jsonl").write_text(
        '{"t": 5.5, "bbr_bw": %r, "snd_mss": 1448}\n' % (line_pps * 1.01 * MSS)
    )
    got = rs.analyze_seed(seed, line_pps, 1.0, 6.0)
    assert got["port"] == RECEIVER
    assert got["replayed_estimate_over_line"] == pytest.approx(1.0, abs=1e-4)
    assert got["kernel_estimate_over_line"] == pytest.approx(1.01)
    assert got["samples_above_line"] < 0.01
