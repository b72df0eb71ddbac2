"""Result directories: their kind, whether a command may write there, and atomic writes.

A run directory holds ``run.json`` (written last, so its presence means the directory is
complete); a sweep directory holds ``sweep.json``. Commands check ``--out`` before any
simulation starts, so a mistake costs nothing: a run never writes into a sweep directory or
the other way round, an existing run is replaced only with ``--force``, a directory that holds
something else is never touched, and an unwritable place is refused up front.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Literal, TypeVar

__all__ = [
    "check_run_out",
    "check_sweep_out",
    "directory_kind",
    "replace_directory",
    "replace_files",
]

T = TypeVar("T")

Kind = Literal["missing", "empty", "run", "sweep", "file", "other"]


def directory_kind(path: Path) -> Kind:
    """What ``path`` is: missing, empty, a run or sweep directory, a file, or something else."""
    if not path.exists():
        return "missing"
    if not path.is_dir():
        return "file"
    if (path / "sweep.json").exists():
        return "sweep"
    if (path / "run.json").exists():
        return "run"
    if not any(path.iterdir()):
        return "empty"
    return "other"


def _check_writable(out: Path) -> None:
    """Refuse ``out`` if it, or the nearest directory above it that exists, is not writable."""
    probe = out
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if not probe.is_dir():
        raise ValueError(f"{out}: cannot create it, {probe} is not a directory")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise ValueError(f"{out}: cannot write there ({probe} is not writable)")


def _check_out(out: Path, kind: Literal["run", "sweep"], force: bool) -> None:
    """Refuse ``out`` for a ``kind`` directory (see :func:`check_run_out`)."""
    other = "sweep" if kind == "run" else "run"
    found = directory_kind(out)
    if found == other:
        raise ValueError(
            f"{out} is a {other} directory (it has {other}.json); choose another --out"
        )
    if found == "run" and not force:
        raise ValueError(
            f"{out} already holds a run; pass --force to replace it, or choose another --out"
        )
    if found == "file":
        raise ValueError(f"{out} is a file, not a directory; choose another --out")
    if found == "other":
        raise ValueError(
            f"{out} holds files that are not a tfrclab {kind}; choose another --out (nothing "
            "was changed)"
        )
    _check_writable(out if found == "missing" or kind == "sweep" else out.parent)


def check_run_out(out: Path, force: bool) -> None:
    """Refuse ``--out`` for a run unless it is new, empty, or a run directory with ``force``.

    Raises:
        ValueError: naming the problem, in one line.
    """
    _check_out(out, "run", force)


def check_sweep_out(out: Path) -> None:
    """Refuse ``--out`` for a sweep unless it is new, empty, or a sweep directory.

    Raises:
        ValueError: naming the problem, in one line.
    """
    _check_out(out, "sweep", force=False)


def _fresh_partial(parent: Path, name: str) -> Path:
    """A new, empty ``parent/.<name>.partial-*`` directory, earlier leftovers of it removed.

    It is made with the permissions an ordinary directory would get (``mkdtemp`` gives 0700).
    """
    parent.mkdir(parents=True, exist_ok=True)
    for stale in parent.glob(f".{name}.partial-*"):
        shutil.rmtree(stale, ignore_errors=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}.partial-", dir=parent))
    umask = os.umask(0)
    os.umask(umask)
    tmp.chmod(0o777 & ~umask)
    return tmp


def replace_directory(out: Path, write: Callable[[Path], T]) -> T:
    """Call ``write(tmp)`` on a fresh sibling of ``out``, then put it in place of ``out``.

    ``out`` is never seen half-written: until ``write`` returns it keeps its old contents (or
    does not exist). Leftovers of an earlier interrupted write are removed first. Returns what
    ``write`` returned.
    """
    parent = out.parent
    tmp = _fresh_partial(parent, out.name)
    try:
        value = write(tmp)
        if out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=parent))
            os.rename(out, old / "old")
            os.rename(tmp, out)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return value


def replace_files(directory: Path, name: str, write: Callable[[Path], T]) -> T:
    """Call ``write(tmp)`` on a fresh directory inside ``directory``, then move its files there.

    For files that must agree with one another (a report and its JSON): ``write`` puts them in
    ``tmp`` (``directory/.<name>.partial-*``), and only once it has returned are they renamed
    into ``directory``, each replacing the file of its name, one right after the other. An
    error while writing (a full disk, a failure half-way) leaves every old file as it was, none
    new; leftovers of an earlier interrupted write are removed first. Returns what ``write``
    returned.
    """
    tmp = _fresh_partial(directory, name)
    try:
        value = write(tmp)
        for path in sorted(tmp.iterdir()):
            os.replace(path, directory / path.name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return value
