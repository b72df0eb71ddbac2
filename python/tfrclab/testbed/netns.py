"""Network namespaces and the processes in them, through iproute2's ``ip``.

Commands used: ``ip netns add``, ``ip netns exec``, ``ip netns pids``. Testbed namespaces
are named ``tftb-<pid>-<n>-<side>`` after the process that made them, so that concurrent
testbeds never collide, and each has an owner record (:func:`claim`) saying which process made
it: that process's id, its start time and its PID namespace. Only a namespace whose record
proves that its maker is dead (:func:`remove_stale`) is ever removed by another testbed; one
without a record, or made in another PID namespace (another container, where the id means
another process), is left alone.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
from pathlib import Path

from tfrclab._process import alive

#: Every testbed namespace's name starts with this.
PREFIX = "tftb-"
_OURS = re.compile(rf"^{PREFIX}(?P<pid>\d+)-\d+-[ab]$")

#: Where the owner records are kept (a tmpfs: emptied at boot, like the namespaces).
OWNERS = Path("/run/tfrclab-testbed")


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


def _start_time(pid: int) -> int | None:
    """When process ``pid`` started (clock ticks after boot), or None if there is none."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii")
        # The command name is in parentheses and may hold spaces: count fields after it.
        return int(stat.rpartition(")")[2].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def _pid_namespace() -> str:
    """This process's PID namespace (``pid:[4026531836]``)."""
    return os.readlink("/proc/self/ns/pid")


def _record(namespace: str) -> Path:
    return OWNERS / f"{namespace}.json"


def claim(namespace: str) -> None:
    """Record this process as the maker of ``namespace`` (before it is made).

    Raises:
        TestbedError: The record cannot be written (the path and the reason).
    """
    path = _record(namespace)
    owner = {"pid": os.getpid(), "start": _start_time(os.getpid()), "pidns": _pid_namespace()}
    try:
        OWNERS.mkdir(mode=0o700, parents=True, exist_ok=True)
        path.write_text(json.dumps(owner) + "\n", encoding="utf-8")
    except OSError as err:
        raise TestbedError(f"{path}: cannot record the testbed's owner ({err.strerror})") from None


def release(namespace: str) -> None:
    """Forget ``namespace``'s owner record (once the namespace is gone)."""
    with contextlib.suppress(OSError):
        _record(namespace).unlink()


def _maker_is_dead(namespace: str) -> bool:
    """Whether ``namespace``'s owner record proves that the process that made it is gone.

    It does if the record was written in this PID namespace and no process with its id runs,
    or one runs that started at another time (the id was reused). No record, an unreadable
    one or another PID namespace prove nothing.
    """
    try:
        owner = json.loads(_record(namespace).read_text(encoding="utf-8"))
        pid, start, pidns = int(owner["pid"]), owner["start"], str(owner["pidns"])
    except (OSError, ValueError, KeyError, TypeError):
        return False
    if pidns != _pid_namespace() or start is None:
        return False
    return not alive(pid) or _start_time(pid) != start


def remove_stale() -> list[str]:
    """Delete the testbed namespaces whose maker is provably dead; return their names.

    Such namespaces are left by a process that was SIGKILLed. Their relays have already stopped
    by themselves (their stop pipe closed when the creator died), which took the TUN devices
    away: a namespace that still holds a device belongs to a running relay and is left alone,
    and so is every namespace whose owner record does not prove its maker dead
    (:func:`_maker_is_dead`). Records of dead makers whose namespaces are gone are removed.
    Testbeds starting at the same time may race to remove one namespace: the one that finds it
    gone leaves it to the other, and neither fails.
    """
    removed = []
    existing = namespaces()
    for name in existing:
        if _OURS.match(name) and _maker_is_dead(name) and not devices_in(name):
            try:
                delete(name)
            except TestbedError:
                if name in namespaces():
                    raise
                continue  # another testbed starting at the same time removed it first
            release(name)
            removed.append(name)
    with contextlib.suppress(OSError):
        for record in OWNERS.glob(f"{PREFIX}*.json"):
            name = record.name.removesuffix(".json")
            if name not in existing and _maker_is_dead(name):
                record.unlink(missing_ok=True)
    return removed
