"""Whether a process still exists: for lock files and namespaces left by processes that died."""

from __future__ import annotations

import os


def alive(pid: int) -> bool:
    """Whether a process with id ``pid`` exists (one owned by another user counts as alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
