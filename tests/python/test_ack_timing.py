"""scripts/ack_timing.py: pairing the relay's ACKs with the sender's tcp_probe events."""

from __future__ import annotations

from types import ModuleType

import numpy as np
import pytest

from conftest import load_script


@pytest.fixture(scope="module")
def at() -> ModuleType:
    module: ModuleType = load_script("ack_timing")
    return module


def _line(t: float, port: int, length: int, una: int, flags: str = "..s2.") -> str:
    # The socket's own address is src: the receiver's (port) for data, the sender's for ACKs.
    ends = (
        f"src=10.0.0.2:{port} dest=10.0.0.1:40000"
        if length
        else (f"src=10.0.0.1:40000 dest=10.0.0.2:{port}")
    )
    return (
        f"         python3-3712    [001] {flags} {t:.6f}: tcp_probe: family=AF_INET "
        f"{ends} mark=0x0 data_len={length} "
        f"snd_nxt=0x{una + 1000:x} snd_una=0x{una:x} snd_cwnd=10 ssthresh=7 snd_wnd=65536 "
        "srtt=23 rcv_wnd=65483 sock_cookie=4a skbaddr=00000000c095dac8 skaddr=0000000050108c0c"
    )


def test_probe_lines_give_pure_acks_of_one_port_with_context_and_unwrapped_una(
    at: ModuleType,
) -> None:
    lines = [
        _line(100.000100, 5001, 0, 0xFFFFF000),
        _line(100.000200, 5001, 1448, 0xFFFFF000),  # a data segment: not an ACK
        _line(100.000300, 5002, 0, 0xFFFFF000),  # another connection
        _line(100.001300, 5001, 0, 0x00000800, flags="....."),  # wrapped; a backlog
        "garbage",
    ]
    probe = at.parse_probe(lines, 5001)
    assert list(probe.t_ns) == [100_000_100_000, 100_001_300_000]
    assert list(probe.snd_una) == [0xFFFFF000, 0xFFFFF000 + 0x1800]
    assert list(probe.softirq) == [True, False]
    assert list(at.parse_probe(lines, 5001, data=True).t_ns) == [100_000_200_000]


def test_pairing_finds_the_shift_of_the_packets_the_trace_does_not_see(at: ModuleType) -> None:
    rng = np.random.default_rng(1)
    sent = np.cumsum(rng.integers(1_000_000, 1_400_000, 300))
    # The trace misses the relay's first three packets; each ACK arrives 5-15 us later.
    seen = sent[3:] + rng.integers(5_000, 15_000, 297)
    assert at.pair_in_order(sent, seen) == 3
    # A shift that would give a negative delay is never chosen.
    assert at.pair_in_order(sent, sent[:-2] + 1) == 0
    with pytest.raises(ValueError, match="non-negative"):
        at.pair_in_order(sent, sent[5:] - 10**9)


def test_a_max_filter_over_noisy_ack_times_reads_above_the_line_rate(at: ModuleType) -> None:
    # ACKs of 2 packets of 1448 bytes every 1.2 ms: exactly 2.413 MB/s when timed exactly.
    n = 3000
    exact = np.arange(n, dtype=np.int64) * 1_200_000
    delivered = np.arange(n) * 2 * 1448.0
    line = 2 * 1448 / 1.2e-3
    rates = at.windowed_rates(exact, delivered, 40_000_000)
    assert np.nanmax(np.abs(rates / line - 1)) < 1e-9
    assert np.isnan(rates[0])
    peak = at.max_filter(exact, rates, 400_000_000)
    assert np.nanmedian(peak) == pytest.approx(line)
    # Each ACK late by 0-200 us at random: the filter keeps the high tail.
    noisy = exact + np.random.default_rng(2).integers(0, 200_000, n)
    peak = at.max_filter(noisy, at.windowed_rates(noisy, delivered, 40_000_000), 400_000_000)
    assert 1.002 < np.nanmedian(peak) / line < 1.01


def test_windows_with_a_duplicate_ack_or_a_recoverys_jump_are_left_out(at: ModuleType) -> None:
    t = np.arange(100, dtype=np.int64) * 1_000_000
    delivered = np.arange(100) * 2896.0
    delivered[50:] += 100_000  # a recovery's end: SACKed data counted at once
    delivered[80] = delivered[79]  # a duplicate ACK
    delivered[81:] = delivered[80] + np.arange(1, 20) * 2896.0
    rates = at.windowed_rates(t, delivered, 10_000_000, max_step=4 * 1448)
    assert rates[20] == pytest.approx(2896 / 1e-3)
    assert np.isnan(rates[[55, 85]]).all()
    assert np.isfinite(rates[[70, 95]]).all()
