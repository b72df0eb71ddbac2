"""Processes: whether one exists, killing one with its group, pools that die with their parent.

:func:`alive` is for lock files and namespaces left by processes that died. :func:`kill_group`
ends a started command with what it left running in its process group (the testbed's
commands and relay). :func:`worker_pool` makes the pools of the sweeps and reproductions: a
worker process is killed as soon as the process that started it ends, even by ``SIGKILL``
(which leaves it no chance to stop its pool), instead of waiting forever for work that will
never come.
"""

from __future__ import annotations

import concurrent.futures as cf
import ctypes
import multiprocessing
import os
import signal
import sys
import threading
import time

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    import subprocess
    from typing import Any

__all__ = ["alive", "die_with_parent", "group_alive", "kill_group", "worker_pool"]

_PR_SET_PDEATHSIG = 1
"""``prctl`` option: the signal this process gets when its parent (thread) ends (Linux)."""

WATCH_INTERVAL_S = 0.25
"""How often a worker checks that its parent is still there (where no death signal exists)."""


def alive(pid: int) -> bool:
    """Whether a process with id ``pid`` exists (one owned by another user counts as alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def kill_group(proc: subprocess.Popen[Any]) -> None:
    """SIGTERM ``proc``'s process group, SIGKILL what is left of it after 1 s, and reap ``proc``.

    For processes started in a group of their own (``start_new_session`` or ``setpgid``), such
    as the testbed's commands and relay: what they started goes with them.

    The group is killed even when ``proc`` itself has ended (its children may still run in it),
    as long as ``proc`` was not reaped before: until then its id cannot name another process's
    group. A ``proc`` already reaped is left alone.
    """
    if proc.returncode is not None:
        return
    for sig, grace in ((signal.SIGTERM, 1.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break  # the group is empty
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            proc.poll()
            if not group_alive(proc.pid):
                proc.poll()
                return
            time.sleep(0.01)
    proc.poll()


def group_alive(pgid: int) -> bool:
    """Whether process group ``pgid`` has a member (a zombie not yet reaped counts)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _parent_death_signal() -> bool:
    """Ask Linux to send this process ``SIGKILL`` when its parent ends; whether it could."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _end_now() -> None:
    """End this process at once (no cleanup: its parent is gone, nobody waits for it)."""
    os.kill(os.getpid(), signal.SIGKILL)


def _watch(parent: int) -> None:
    """Poll until this process's parent is no longer ``parent``, then end this process."""
    while os.getppid() == parent:
        time.sleep(WATCH_INTERVAL_S)
    _end_now()


def die_with_parent(parent: int) -> None:
    """Make this process end when its parent, process ``parent``, ends (a pool initializer).

    On Linux the kernel sends ``SIGKILL`` when the parent ends (``PR_SET_PDEATHSIG``: at once,
    even while a simulation runs). Everywhere, a daemon thread also checks every
    :data:`WATCH_INTERVAL_S` that the parent is still ``parent`` (an orphan is adopted by
    another process). A parent that ended before this was called ends this process at once.

    ``parent`` must be the process that started this one (with the ``spawn`` start method, the
    one that made the pool). Linux sends the signal when the *thread* that started the process
    ends, so a pool must be used from the thread that made it, as :func:`worker_pool`'s are.
    """
    _parent_death_signal()
    if os.getppid() != parent:
        _end_now()
    threading.Thread(target=_watch, args=(parent,), name="die-with-parent", daemon=True).start()


#: What a worker says when the script it imports starts workers itself.
MAIN_GUARD_MESSAGE = (
    "tfrclab: a worker process, importing your script, reached a call that starts worker "
    "processes (run_sweep, reproduce, evaluate with jobs > 1): put that call under "
    '`if __name__ == "__main__":` (worker processes import the main script)'
)


def refuse_while_importing_main() -> None:
    """Exit, saying why in one line, if this is a worker importing the main script.

    A spawned process is "inheriting" while it imports the main script (multiprocessing's own
    test for this case, which would end in a traceback only when it starts a worker itself);
    a script that reaches a call starting workers then lacks its ``__main__`` guard.
    """
    if getattr(multiprocessing.current_process(), "_inheriting", False):
        print(MAIN_GUARD_MESSAGE, file=sys.stderr)
        raise SystemExit(1)


def worker_pool(max_workers: int) -> cf.ProcessPoolExecutor:
    """A pool of ``max_workers`` spawned worker processes that end when this process ends.

    ``spawn`` (a fresh interpreter per worker, never a fork of this one's threads and locks)
    makes this process each worker's parent, which :func:`die_with_parent` watches. Each worker
    imports the main script (as ``__mp_main__``); one that reaches this call while doing so
    (a script without an ``if __name__ == "__main__":`` guard) would start workers of its own
    without end: it says so in one line on stderr and exits instead, and the parent's error
    points there.
    """
    refuse_while_importing_main()
    return cf.ProcessPoolExecutor(
        max_workers=max_workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=die_with_parent,
        initargs=(os.getpid(),),
    )
