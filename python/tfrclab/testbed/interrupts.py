"""SIGINT and SIGTERM while a testbed is up: one interrupt tears it down, more wait for that.

A testbed interrupted half-way through its set-up or its cleanup would leave namespaces,
devices and processes behind, so a second Ctrl-C (or a shower of SIGTERMs from a supervisor)
must not cut the cleanup short. :class:`OneInterrupt` holds the two signals for as long as a
testbed is up: the first raises ``KeyboardInterrupt`` where the program is, later ones are only
counted until the testbed is closed. :func:`signals_deferred` holds them, all of them, around a
step that must finish (the cleanup itself, writing the report), and raises one
``KeyboardInterrupt`` once it has.

Signals can be handled only in the main thread: elsewhere both leave the handlers as they are.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

__all__ = ["OneInterrupt", "signals_deferred"]

HELD = (signal.SIGINT, signal.SIGTERM)
"""The signals held: Ctrl-C and a polite request to stop."""


def _in_main_thread() -> bool:
    """Whether signal handlers can be set from here."""
    return threading.current_thread() is threading.main_thread()


class OneInterrupt:
    """SIGINT and SIGTERM while installed: the first raises ``KeyboardInterrupt``, later wait.

    By default a signal is taken over only if nobody handles it (SIGINT with Python's default
    handler, SIGTERM with the system's default action), so a program's own handlers keep
    working.
    :attr:`waiting` counts the signals that came after the first; :meth:`uninstall` puts the
    previous handlers back.
    """

    def __init__(self) -> None:
        self.interrupted = False
        """Whether the first signal came (and was raised as ``KeyboardInterrupt``)."""
        self.waiting = 0
        """Signals that came after the first, held until :meth:`uninstall`."""
        self._previous: dict[int, Any] = {}

    def install(self, always: bool = False) -> None:
        """Take over SIGINT and SIGTERM where nobody else handles them (main thread only).

        With ``always``, take them over whatever handles them: for a command whose own
        handlers raise ``KeyboardInterrupt`` on every signal (``tfrclab``'s SIGTERM).
        """
        if not _in_main_thread():
            return
        unhandled = {signal.SIGINT: signal.default_int_handler, signal.SIGTERM: signal.SIG_DFL}
        for sig, default in unhandled.items():
            if always or signal.getsignal(sig) is default:
                self._previous[sig] = signal.signal(sig, self._handle)

    def _handle(self, _signum: int, _frame: FrameType | None) -> None:
        if self.interrupted:
            self.waiting += 1
            return
        self.interrupted = True
        raise KeyboardInterrupt

    def uninstall(self) -> None:
        """Put back the handlers :meth:`install` replaced."""
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()


@contextmanager
def signals_deferred() -> Iterator[None]:
    """Hold SIGINT and SIGTERM back while the block runs, then raise ``KeyboardInterrupt``.

    Raised only if one came; outside the main thread, where no handler can be set, it does
    nothing.
    """
    if not _in_main_thread():
        yield
        return
    came: list[int] = []
    previous = {sig: signal.signal(sig, lambda signum, _frame: came.append(signum)) for sig in HELD}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if came:
        raise KeyboardInterrupt
