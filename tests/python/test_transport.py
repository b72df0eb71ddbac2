"""``tfrclab send`` / ``tfrclab recv`` and ``tfrclab.transport`` over loopback UDP.

End to end through the command line (traces written and read back by tfrclab.metrics), the
Python API with its per-interval callback, Ctrl-C, and one-line errors for bad arguments.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import run_cli
from tfrclab import metrics, transport
from tfrclab.cli import main

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="tfrc-udp is Linux only")


def free_port() -> int:
    """A UDP port nobody holds right now on 127.0.0.1."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_bound(port: int, timeout_s: float = 20.0) -> None:
    """Wait until someone holds UDP ``port`` on 127.0.0.1 (a receiver started in a subprocess)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                return
        time.sleep(0.05)
    raise AssertionError(f"nothing bound 127.0.0.1:{port} within {timeout_s} s")


def cli(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "tfrclab", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def test_send_and_recv_end_to_end_write_traces_metrics_read(tmp_path: Path) -> None:
    port = free_port()
    rx_dir, tx_dir = tmp_path / "rx", tmp_path / "tx"
    rx = cli("recv", "--bind", f"127.0.0.1:{port}", "--duration", "7s", "--out", str(rx_dir))
    wait_bound(port)
    tx = cli(
        "send",
        "--to",
        f"127.0.0.1:{port}",
        "--duration",
        "4s",
        "--app-rate",
        "2Mbps",
        "--size",
        "1000B",
        "--out",
        str(tx_dir),
    )
    tx_out, tx_err = tx.communicate(timeout=60)
    rx_out, rx_err = rx.communicate(timeout=60)
    assert tx.returncode == 0, tx_err
    assert rx.returncode == 0, rx_err
    # A line per second on each side, with the rate, p and the RTT.
    assert len(tx_out.splitlines()) == 4
    assert "Mb/s" in tx_out
    assert "RTT" in tx_out
    assert " p " in tx_out
    assert len(rx_out.splitlines()) == 7
    assert "trace written to" in tx_err

    sent = transport.load_trace(tx_dir)
    got = transport.load_trace(rx_dir)
    assert (sent.role, got.role) == ("send", "recv")
    assert sent.bin_s == 1.0
    assert len(sent.bins) == 4
    assert list(got.bins.columns[:6]) == [
        "flow",
        "bin",
        "received_packets",
        "received_bytes",
        "dropped_packets",
        "loss_events",
    ]
    # The application's 2 Mb/s (250 kB/s) within 10% at both ends, by tfrclab.metrics.
    tx_rate = metrics.send_rate(sent.bins["sent_bytes"], sent.bin_s, 1.0)
    assert all(abs(r / 250_000 - 1) < 0.10 for r in tx_rate[1:]), tx_rate
    # The receiver started first: its seconds wholly inside the flow (between the first and
    # the last second that saw data).
    rx_rate = metrics.send_rate(got.bins["received_bytes"], got.bin_s, 1.0)
    busy = [i for i, r in enumerate(rx_rate) if r > 0]
    inside = rx_rate[busy[0] + 1 : busy[-1]]
    assert len(inside) >= 2, rx_rate
    assert all(abs(r / 250_000 - 1) < 0.10 for r in inside), rx_rate
    assert got.bins["received_bytes"].sum() == sent.bins["sent_bytes"].sum()
    assert got.meta["report"]["input"]["dropped"] == 0
    assert sent.meta["report"]["feedback_accepted"] > 100
    assert sent.meta["peer"] == f"127.0.0.1:{port}"
    assert got.meta["peer"] == sent.meta["local_addr"].replace("0.0.0.0", "127.0.0.1")


def test_api_runs_both_ends_with_callbacks() -> None:
    port = free_port()
    received: list[transport.Session] = []
    rx_samples: list[dict[str, object]] = []

    def receive() -> None:
        received.append(
            transport.recv(f"127.0.0.1:{port}", 2.5, interval_s=0.5, on_sample=rx_samples.append)
        )

    thread = threading.Thread(target=receive)
    thread.start()
    time.sleep(0.2)
    tx_samples: list[dict[str, object]] = []
    session = transport.send(
        f"127.0.0.1:{port}",
        2.0,
        app_rate_bps=800_000,
        size_bytes=500,
        interval_s=0.5,
        on_sample=tx_samples.append,
    )
    thread.join(timeout=30)
    rx = received[0]
    assert not session.interrupted
    assert not rx.interrupted
    assert tx_samples == session.samples
    assert len(session.samples) == 4
    assert rx_samples == rx.samples
    assert len(rx.samples) == 5
    # 800 kb/s in 500-byte datagrams: 100 packets per half-second interval.
    assert all(abs(s["sent_packets"] - 100) <= 2 for s in session.samples[1:])
    bins = session.bins()
    assert list(bins["bin"]) == [0, 1, 2, 3]
    assert list(bins["sent_packets"]) == [s["sent_packets"] for s in session.samples]
    assert rx.report["sessions"] == 1
    assert rx.report["packets_received"] == session.report["packets_sent"]
    assert session.report["input"]["dropped"] == 0


def test_ctrl_c_stops_a_session_and_keeps_its_trace(tmp_path: Path) -> None:
    out = tmp_path / "rx"
    port = free_port()
    rx = cli("recv", "--bind", f"127.0.0.1:{port}", "--duration", "60s", "--out", str(out))
    wait_bound(port)
    time.sleep(1.2)
    started = time.monotonic()
    rx.send_signal(signal.SIGINT)
    _, err = rx.communicate(timeout=20)
    assert time.monotonic() - started < 5
    assert rx.returncode == 130, err
    assert "interrupted" in err
    trace = transport.load_trace(out)
    assert trace.meta["interrupted"] is True
    assert len(trace.bins) >= 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["send", "--to", "127.0.0.1:9", "--size", "10B"], "size_bytes: expected 35 to 65507"),
        (["send", "--to", "127.0.0.1:9", "--app-rate", "fast"], "invalid rate"),
        (["send", "--to", "127.0.0.1:9", "--duration", "5"], "needs a unit"),
        (["send", "--to", "no-such-host.invalid:9", "--duration", "1s"], "to: cannot resolve"),
        (["recv", "--bind", "127.0.0.1:99999"], "bind"),
        (["recv", "--bind", "127.0.0.1:0", "--interval", "1ms"], "stats_interval_s: expected 10ms"),
        (
            ["recv", "--bind", "127.0.0.1:0", "--duration", "24h", "--interval", "10ms"],
            "at most 131072 samples",
        ),
    ],
)
def test_bad_arguments_get_one_line_errors(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(args) in (1, 2)
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err


def test_a_busy_port_is_an_os_error() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        result = run_cli("recv", "--bind", f"127.0.0.1:{port}", "--duration", "1s")
    assert result.returncode == 1
    assert "binding the socket" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_out_refuses_a_directory_that_is_not_a_trace(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    result = run_cli(
        "recv", "--bind", f"127.0.0.1:{free_port()}", "--duration", "1s", "--out", str(tmp_path)
    )
    assert result.returncode == 2
    assert "not a transport trace" in result.stderr
    assert (tmp_path / "notes.txt").read_text() == "mine"
    with pytest.raises(ValueError, match="not a transport trace"):
        transport.load_trace(tmp_path)


def test_out_that_cannot_be_created_is_refused_before_the_session(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    started = time.monotonic()
    result = run_cli(
        "recv", "--bind", f"127.0.0.1:{free_port()}", "--duration", "60s",
        "--out", str(blocker / "trace"),
    )  # fmt: skip
    assert result.returncode == 2
    assert "cannot write there" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert time.monotonic() - started < 30  # refused up front, not after the 60 s session


def test_send_exits_non_zero_when_nothing_could_be_sent() -> None:
    # Port 0 is no destination: every datagram is refused at once, nothing leaves the host.
    result = run_cli("send", "--to", "127.0.0.1:0", "--duration", "1s")
    assert result.returncode == 1
    assert "nothing could be sent to 127.0.0.1:0" in result.stderr
    assert "Traceback" not in result.stderr


def test_an_ipv6_peer_from_an_ipv4_bind_is_refused() -> None:
    result = run_cli("send", "--to", "[::1]:9", "--bind", "0.0.0.0:0", "--duration", "1s")
    assert result.returncode == 1
    assert "cannot reach the IPv6 peer" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
