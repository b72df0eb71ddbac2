"""Processes: a command killed with its process group, whatever it left running there."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from tfrclab._process import alive, group_alive, kill_group

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups")


def started(script: str) -> tuple[subprocess.Popen[str], int]:
    """A shell running ``script`` in a session of its own, and its background child's pid."""
    proc = subprocess.Popen(
        ["sh", "-c", script], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    assert proc.stdout is not None
    return proc, int(proc.stdout.readline())


def test_kill_group_ends_the_command_and_what_it_left_in_its_group() -> None:
    # The shell has ended by itself (not reaped); its child still runs in the group.
    proc, child = started("sleep 60 & echo $!; exit 3")
    time.sleep(0.2)
    assert alive(child)
    kill_group(proc)
    assert proc.returncode == 3
    assert not group_alive(proc.pid)
    deadline = time.monotonic() + 5
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.01)  # the child is reaped by init once killed
    assert not alive(child)


def test_kill_group_kills_what_ignores_sigterm() -> None:
    proc, child = started("trap '' TERM; sleep 60 & echo $!; wait")
    began = time.monotonic()
    kill_group(proc)
    assert proc.returncode is not None
    assert not group_alive(proc.pid)
    # One second of grace after SIGTERM, then SIGKILL.
    assert 0.9 <= time.monotonic() - began < 5
    deadline = time.monotonic() + 5
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not alive(child)
