"""tfrc-udp's event log through Python's logging.

Off by default, then every report, feedback and rate change of a session as a record with its
fields, kept as rows by EventLog.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

import pytest

from conftest import wait_udp_bound
from tfrclab.media import EventLog, Receiver, Sender, log_events


def _session(seconds: float) -> None:
    with Receiver("127.0.0.1:0") as rx, Sender(rx.local_addr) as tx:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            tx.send(bytes(500))
            time.sleep(0.002)
        rx.drain()


def _settle(log: EventLog, seconds: float = 2.0) -> int:
    """Waits until the forwarding thread has delivered what it holds; the row count."""
    deadline = time.monotonic() + seconds
    count = -1
    while time.monotonic() < deadline and count != len(log.rows):
        count = len(log.rows)
        time.sleep(0.2)
    return len(log.rows)


def test_events_are_off_until_asked_for_and_stop_when_detached(tmp_path: Path) -> None:
    quiet = EventLog()
    logging.getLogger("tfrc_udp").addHandler(quiet)
    try:
        _session(0.2)
        assert _settle(quiet, 0.5) == 0
    finally:
        logging.getLogger("tfrc_udp").removeHandler(quiet)
    log = EventLog.attach(logging.DEBUG)
    try:
        _session(0.5)
        assert _settle(log) > 0
    finally:
        log.detach()
    frame = log.to_frame()
    events = set(frame["event"])
    assert {"session", "report", "feedback", "rate_change"} <= events, events
    reports = frame[frame.event == "report"]
    assert (reports["logger"] == "tfrc_udp.sender").all()
    assert (reports["x_bps"] > 0).all()
    assert (reports["rtt_s"] > 0).all()
    assert reports["time_s"].is_monotonic_increasing
    feedback = frame[frame.event == "feedback"]
    assert (feedback["logger"] == "tfrc_udp.receiver").all()
    path = tmp_path / "events.jsonl"
    log.write_jsonl(path)
    lines = path.read_text().splitlines()
    assert len(lines) == len(log.rows)
    assert all(json.loads(line)["event"] for line in lines)
    # Detached: a new session adds nothing.
    count = len(log.rows)
    _session(0.2)
    assert _settle(log, 0.5) == count


def test_an_info_log_has_no_debug_events() -> None:
    log = EventLog.attach(logging.INFO)
    try:
        _session(0.5)
        _settle(log)
    finally:
        log.detach()
    assert log.rows, "a session opens and X changes"
    assert {row["event"] for row in log.rows} <= {"session", "rate_change", "nofeedback"}


def test_a_bad_level_or_handler_is_named() -> None:
    from tfrclab._native import set_event_handler

    with pytest.raises(ValueError, match="level"):
        set_event_handler(print, "loud")
    with pytest.raises(ValueError, match="handler"):
        set_event_handler(42, "debug")  # type: ignore[arg-type]
    assert log_events(None) >= 0


def test_send_and_recv_write_their_event_logs(tmp_path: Path) -> None:
    import subprocess
    import sys

    port = 5731
    recv_log, send_log = tmp_path / "recv.jsonl", tmp_path / "send.jsonl"
    command = [sys.executable, "-m", "tfrclab"]
    receiver = subprocess.Popen(
        [*command, "recv", "--bind", f"127.0.0.1:{port}", "--duration", "2.5s",
         "--events", str(recv_log)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    wait_udp_bound(port, receiver)
    sender = subprocess.run(
        [*command, "send", "--to", f"127.0.0.1:{port}", "--duration", "1s",
         "--app-rate", "1Mbps", "--events", str(send_log)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    _, err = receiver.communicate(timeout=30)
    assert sender.returncode == 0, sender.stderr
    assert receiver.returncode == 0, err
    sent = [json.loads(line) for line in send_log.read_text().splitlines()]
    received = [json.loads(line) for line in recv_log.read_text().splitlines()]
    assert {"report", "rate_change"} <= {e["event"] for e in sent}
    assert {"session", "feedback"} <= {e["event"] for e in received}
    assert all(e["logger"] == "tfrc_udp.sender" for e in sent)
    assert "event(s) written to" in sender.stderr


def test_an_events_file_that_cannot_be_written_is_refused_first(tmp_path: Path) -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "tfrclab", "send", "--to", "127.0.0.1:9", "--duration", "1s",
         "--events", str(tmp_path / "missing" / "events.jsonl")],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "--events" in done.stderr
    assert "Traceback" not in done.stderr
