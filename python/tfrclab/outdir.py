"""Result directories: their kind, whether a command may write there, and atomic writes.

A run directory holds ``run.json`` (written last, so its presence means the directory is
complete); a sweep directory holds ``sweep.json``. Commands check ``--out`` before any
simulation starts, so a mistake costs nothing: a run never writes into a sweep directory or
the other way round, an existing run is replaced only with ``--force``, a directory that holds
something else is never touched, and an unwritable place is refused up front.

Every command that writes probes its output locations before any work
(:func:`check_directory_writable`, :func:`check_file_writable`): for real, by creating and
removing a temporary directory, since permission bits do not show a read-only mount, /proc or
/sys, or anything at all to root.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Literal, TypeVar

__all__ = [
    "check_directory_writable",
    "check_file_writable",
    "check_run_out",
    "check_sweep_out",
    "directory_kind",
    "replace_directory",
    "replace_files",
    "write_named",
    "write_text_atomically",
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


def _unwritable(directory: Path) -> str | None:
    """Why nothing can be created in the existing ``directory``, or None if something can.

    Probed for real, with a temporary directory made and removed there: permission bits say
    nothing for root, a read-only mount or a pseudo file system (/proc, /sys).
    """
    try:
        Path(tempfile.mkdtemp(prefix=".tfrclab-probe-", dir=directory)).rmdir()
    except OSError as err:
        return f"cannot create anything in {directory}: {err.strerror or err}"
    return None


def _refuse(option: str, path: Path, reason: str) -> ValueError:
    """The one-line refusal of ``option``'s ``path`` (a positional argument: ``option`` "")."""
    if not option:
        return ValueError(f"{path}: cannot write there ({reason})")
    return ValueError(f"{option} {path}: cannot write there ({reason}); choose another {option}")


def check_directory_writable(out: Path, option: str = "--out", replaced: bool = False) -> None:
    """Refuse, before any work, a directory ``out`` that could not be written.

    ``out`` is written in if it exists, else created with its missing parents: the directory
    probed (:func:`_unwritable`) is ``out`` or the nearest one above it that exists. With
    ``replaced``, an existing ``out`` is replaced whole (:func:`replace_directory`), which
    needs its parent to be writable instead.

    Raises:
        ValueError: naming ``option`` and ``out``, in one line.
    """
    _check_in(out, out.parent if replaced and out.exists() else out, option)


def _check_in(named: Path, start: Path, option: str) -> None:
    """Refuse ``named`` unless ``start`` (or the nearest existing directory above) is writable."""
    probe = start.absolute()
    while not probe.exists() and probe.parent != probe:
        probe = probe.parent
    if not probe.is_dir():
        raise _refuse(option, named, f"{probe} is not a directory")
    reason = _unwritable(probe)
    if reason is not None:
        raise _refuse(option, named, reason)


def check_file_writable(path: Path, option: str) -> None:
    """Refuse, before any work, a file ``path`` that could not be written.

    An existing file must open for writing (it is not changed; a device such as /dev/null
    counts); a new one needs an existing directory to be created in (writers of single files
    do not create directories).

    Raises:
        ValueError: naming ``option`` and ``path``, in one line.
    """
    if path.is_dir():
        raise _refuse(option, path, "it is a directory")
    if path.exists():
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        except OSError as err:
            raise _refuse(option, path, err.strerror or str(err)) from None
        return
    parent = path.absolute().parent
    if not parent.is_dir():
        missing = "is not a directory" if parent.exists() else "does not exist"
        raise _refuse(option, path, f"{parent} {missing}")
    reason = _unwritable(parent)
    if reason is not None:
        raise _refuse(option, path, reason)


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
    if found == "other" and not (kind == "sweep" and _sweep_start_only(out)):
        raise ValueError(
            f"{out} holds files that are not a tfrclab {kind}; choose another --out (nothing "
            "was changed)"
        )
    check_directory_writable(out, replaced=kind == "run")


def _sweep_start_only(out: Path) -> bool:
    """Whether ``out`` holds only what a sweep leaves before its ``sweep.json`` is in place.

    That is its lock file, the manifest's temporary file and empty dataset directories: a
    sweep killed while starting leaves them, and the next sweep into ``out`` starts over
    there rather than refusing a directory that holds nothing of anybody's.
    """
    from tfrclab.sweep_store import DATASETS

    for entry in out.iterdir():
        plain = entry.is_file() and not entry.is_symlink()
        if entry.name in (".lock", ".sweep.json.tmp") and plain:
            continue
        if entry.name in DATASETS and entry.is_dir() and not any(entry.iterdir()):
            continue
        return False
    return True


def check_run_out(out: Path, force: bool) -> None:
    """Refuse ``--out`` for a run unless it is new, empty, or a run directory with ``force``.

    Raises:
        ValueError: naming the problem, in one line.
    """
    _check_out(out, "run", force)


def check_sweep_out(out: Path) -> None:
    """Refuse ``--out`` for a sweep unless it is new, empty, or a sweep directory.

    A directory a sweep killed while starting left (its lock file and empty dataset
    directories, no ``sweep.json`` yet) counts as empty.

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


def write_text_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` under a temporary name, then rename it into place.

    A process killed while writing leaves ``path`` as it was (or missing), never half-written.
    """
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_named(path: Path, text: str, option: str) -> None:
    """Write ``text`` to the file ``path`` a command was given as ``option``, in place.

    In place, not renamed into place: ``path`` may be a device (/dev/stdout) or a file another
    program watches. For the error: the OS's own message for a write that fails once the file
    is open (a full disk) names no file.

    Raises:
        OSError: naming ``option``, ``path`` and why, in one line.
    """
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as err:
        reason = err.strerror or " ".join(str(err).split())
        error = OSError(f"{option} {path}: not written ({reason})")
        error.errno = err.errno
        raise error from None


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
