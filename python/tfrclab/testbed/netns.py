"""Network namespaces and the processes in them, through iproute2's ``ip``.

Commands used: ``ip netns add``, ``ip netns exec``, ``ip netns pids``. Testbed namespaces
are named ``tftb-<pid>-<n>-<side>`` after the process that made them, so that concurrent
testbeds never collide and those of a process that died can be found and removed
(:func:`remove_stale`).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess

from tfrclab._process import alive

#: Every testbed namespace's name starts with this.
PREFIX = "tftb-"
_OURS = re.compile(rf"^{PREFIX}(?P<pid>\d+)-\d+-[ab]$")


class TestbedError(OSError):
    """The testbed cannot run here, or a step of its set-up failed.

    Not root, no /dev/net/tun, no ``ip``, or a command that failed: the message says which.
    """


def require_privileges() -> None:
    """Raise :class:`TestbedError` unless this process can create namespaces and TUN devices.

    Raises:
        TestbedError: Not root, no ``/dev/net/tun`` or no ``ip`` command.
    """
    if os.geteuid() != 0:
        raise TestbedError("the testbed needs root (network namespaces and TUN devices)")
    if not os.path.exists("/dev/net/tun"):
        raise TestbedError("the testbed needs /dev/net/tun (the tun kernel module)")
    if shutil.which("ip") is None:
        raise TestbedError("the testbed needs iproute2's ip command")


def ip(*args: str) -> str:
    """Run ``ip ARGS`` and return its output.

    Raises:
        TestbedError: ``ip`` failed; the message holds the command and its error output.
    """
    done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30, check=False)
    if done.returncode != 0:
        raise TestbedError(f"ip {' '.join(args)}: {done.stderr.strip() or done.returncode}")
    return done.stdout


def namespaces() -> list[str]:
    """The names of all network namespaces ``ip netns`` knows."""
    return [line.split()[0] for line in ip("netns", "list").splitlines() if line.strip()]


def pids_in(namespace: str) -> list[int]:
    """The processes running in ``namespace`` (empty if it is gone)."""
    try:
        out = ip("netns", "pids", namespace)
    except TestbedError:
        return []
    return [int(word) for word in out.split()]


def kill_all_in(namespace: str) -> None:
    """SIGKILL every process in ``namespace`` (a testbed's namespace holds only its own)."""
    for pid in pids_in(namespace):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def delete(namespace: str) -> None:
    """Kill the processes in ``namespace`` and delete it (its devices go with it).

    A namespace that is already gone is not an error.
    """
    kill_all_in(namespace)
    if namespace in namespaces():
        ip("netns", "delete", namespace)


def devices_in(namespace: str) -> list[str]:
    """The network devices in ``namespace`` other than ``lo`` (empty if it is gone)."""
    try:
        out = ip("-n", namespace, "-o", "link", "show")
    except TestbedError:
        return []
    names = [line.split(":")[1].strip().split("@")[0] for line in out.splitlines() if ":" in line]
    return [name for name in names if name != "lo"]


def remove_stale() -> list[str]:
    """Delete the testbed namespaces whose creating process is gone; return their names.

    Such namespaces are left by a process that was SIGKILLed. Their relays have already stopped
    by themselves (their stop pipe closed when the creator died), which took the TUN devices
    away: a namespace that still holds a device belongs to a running relay (perhaps of a
    process in another PID namespace, whose id this one cannot see) and is left alone.
    """
    removed = []
    for name in namespaces():
        match = _OURS.match(name)
        if match and not alive(int(match["pid"])) and not devices_in(name):
            delete(name)
            removed.append(name)
    return removed
