"""Packet captures of the testbed's side a, with tcpdump inside its namespace.

Side a is where the senders run, so its TUN device sees every packet they put on the path
(before the relay's queue) and every ACK or report coming back: the view a capture at a real
sender gives. Headers only (``SNAPLEN`` bytes), nanosecond timestamps (pcap magic
``a1b23c4d``, as netsim's own captures), written as packets arrive (``-U``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from typing import Any

    from tfrclab.testbed.emulator import Testbed

#: Bytes kept of each packet: the IP and TCP or UDP headers with their options, and TFRC's.
SNAPLEN = 128


def tcpdump_missing() -> str | None:
    """Why no capture can be made here (tcpdump is not installed), or None."""
    if shutil.which("tcpdump") is None:
        return "tcpdump is not installed (apt-get install tcpdump)"
    return None


def command(device: str, path: Path) -> list[str]:
    """The tcpdump command line capturing ``device`` into ``path``."""
    return ["tcpdump", "-i", device, "-n", "-U", "-s", str(SNAPLEN),
            "--time-stamp-precision", "nano", "-w", str(path)]  # fmt: skip


def start(tb: Testbed, path: Path) -> subprocess.Popen[Any] | None:
    """Start capturing side a's device into ``path``; None when tcpdump is not installed."""
    if tcpdump_missing() is not None:
        return None
    proc = tb.popen("a", command(tb.devices["a"], path),
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    time.sleep(0.5)  # tcpdump opens the device before the first packet
    return proc


def stop(proc: subprocess.Popen[Any] | None) -> None:
    """SIGINT tcpdump so it flushes and closes the file; the testbed kills it if it hangs."""
    if proc is None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGINT)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)
