"""How a sweep stores its runs: Arrow tables, written in batches of runs, read back in grid order.

Each finished run gives one table per dataset (``runs``, ``classes``, ``links`` and, with
per-bin series, ``flow_series`` and ``link_series``; :data:`DATASETS`). The sweep does not
write a file per run and table: a Parquet write costs a few milliseconds however small the
table (footer, schema, statistics), more than the run of a small scenario. Finished runs are
kept in memory instead and written together (:class:`BatchWriter`), one file per dataset for
the whole batch, when the batch holds :attr:`Flush.runs` runs or :attr:`Flush.bytes` bytes, or
its oldest run finished :attr:`Flush.seconds` ago; and before the sweep returns or stops on an
error or Ctrl-C. A batch's files share one name (its first run's key) and are written under
temporary names and renamed into place, ``runs/`` last: a batch is finished once its ``runs/``
file exists, which lists the batch's runs in its schema metadata (:data:`RUNS_KEY`; the one
addition to what pandas wrote), and the files of the sweep's other datasets are there and
readable. A sweep killed outright (``SIGKILL``, power loss) loses only the runs of the batch in
memory, which the next sweep into the directory runs again; so does a batch whose file of any
dataset was later truncated or removed (:func:`finished_runs`).

Every page of every file carries a CRC-32 checksum. Before a sweep resumes, each file of every
finished batch is read in full and its checksums verified (:func:`check_file`): a batch with a
file that is missing, truncated or damaged anywhere is removed, every dataset's file of it,
and its runs run again. Reading a dataset refuses such a file, naming it
(:class:`DamagedFileError`), rather than leaving its runs out.

The tables are made from numpy arrays and lists directly rather than through pandas (several
times slower for a table of a few rows), with the types, the missing values (a float NaN is
stored as null, as pandas stores it) and the pandas schema metadata that
``DataFrame.to_parquet`` would give the same rows, so the files read back exactly as before;
a column whose type pandas would infer in a way this module does not (an empty list, mixed
Python types) sends its table through pandas instead (:func:`arrow_table`).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import pyarrow as pa

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "DATASETS",
    "RUNS_KEY",
    "BatchWriter",
    "DamagedFileError",
    "Flush",
    "Rows",
    "arrow_table",
    "batch_runs",
    "check_file",
    "finished_runs",
    "read_dataset",
]

DATASETS = ("runs", "classes", "links", "flow_series", "link_series")
"""The datasets of a sweep directory; ``runs`` is written last and marks a batch finished."""

RUNS_KEY = b"tfrclab.runs"
"""The schema metadata key of a ``runs/`` file that lists its runs' keys (JSON), in order."""

_INT64 = (-(2**63), 2**63 - 1)

T = TypeVar("T")


class DamagedFileError(OSError):
    """A file of a finished batch is missing or cannot be read whole.

    Running the sweep again into its directory runs the batch's runs again. The message names
    the file; :attr:`path` is the file and :attr:`reason` what is wrong with it.
    """

    path: Path
    reason: str


def _damaged(path: Path, err: BaseException, hint: bool = False) -> DamagedFileError:
    """The error for file ``path``, which ``err`` showed is missing or damaged.

    With ``hint``, the message says how to repair the sweep.
    """
    if isinstance(err, FileNotFoundError):
        reason = "missing"
    else:
        reason = f"damaged ({' '.join(str(err).split()) or type(err).__name__})"
    sweep = path.parent.parent
    tail = f"; run the sweep again into {sweep} to redo its runs" if hint else ""
    error = DamagedFileError(f"{path}: {reason}{tail}")
    error.path, error.reason = path, reason
    return error


@dataclass(frozen=True)
class Flush:
    """When a sweep writes the runs it holds in memory (see the module documentation).

    The defaults keep the writing under a millisecond per run for small scenarios while a
    sweep killed outright loses at most about a second of finished runs.
    """

    runs: int = 64
    """Write once this many runs are held."""
    seconds: float = 1.0
    """Write once the oldest run held finished this long ago."""
    bytes: int = 64 * 2**20
    """Write once the tables held take this much memory (per-bin series can be large)."""

    def __post_init__(self) -> None:
        if self.runs < 1 or self.bytes < 1 or not self.seconds >= 0:
            raise ValueError(f"Flush: runs and bytes must be at least 1, seconds >= 0 ({self})")


class _Unrecognized(Exception):
    """A column whose pandas type this module does not infer itself."""


def _strings(values: Any) -> pa.Array:
    """A column of Python strings as pandas stores one (``large_string``)."""
    array = pa.array(values, type=pa.large_string())
    if array.null_count:
        raise _Unrecognized
    return array


def _sequence(values: Sequence[Any]) -> pa.Array:
    """A list (or an object array) as pandas would type it: strings, booleans, ints or floats."""
    if len(values) == 0:
        raise _Unrecognized
    kinds = set(map(type, values))
    if kinds == {str}:
        return _strings(values)
    if kinds == {bool}:
        return pa.array(values, type=pa.bool_())
    if kinds == {int}:
        if min(values) < _INT64[0] or max(values) > _INT64[1]:
            raise _Unrecognized  # pandas makes it uint64 or object
        return pa.array(values, type=pa.int64())
    if kinds == {float}:
        return pa.array(values, type=pa.float64(), from_pandas=True)
    raise _Unrecognized


def _column(values: Any) -> pa.Array:
    """A data column (numpy array or list) as an Arrow array of the type pandas would give it."""
    if isinstance(values, np.ndarray):
        if values.ndim != 1:
            raise _Unrecognized
        if values.dtype.kind in "biuf":
            return pa.array(values, from_pandas=True)
        if values.dtype.kind in "UO":
            return _sequence(values.tolist())
        raise _Unrecognized
    if isinstance(values, list | tuple):
        return _sequence(values)
    raise _Unrecognized


def _constant(value: Any, rows: int) -> pa.Array:
    """``rows`` copies of ``value``: what inserting ``[value] * rows`` into a DataFrame gives."""
    if rows == 0:
        raise _Unrecognized  # pandas types an empty column on its own
    kind = type(value)
    if kind is str:
        arrow: pa.DataType = pa.large_string()
    elif kind is bool:
        arrow = pa.bool_()
    elif kind is int and _INT64[0] <= value <= _INT64[1]:
        arrow = pa.int64()
    elif kind is float:
        arrow = pa.float64()
        if value != value:  # NaN: pandas stores a missing value
            return pa.nulls(rows, type=arrow)
    else:
        raise _Unrecognized
    return pa.repeat(pa.scalar(value, type=arrow), rows)


_PANDAS_SCHEMAS: list[tuple[pa.Schema, pa.Schema | None]] = []
"""Schemas seen (no metadata) with the schema pandas writes for each, or None if it differs;
searched by equality, which is much cheaper than hashing a schema."""

_PANDAS_SCHEMAS_MAX = 64
"""The most schemas remembered (a sweep has a handful: one per dataset and parameter types)."""


def _pandas_schema(schema: pa.Schema) -> pa.Schema | None:
    """``schema`` with the pandas metadata ``DataFrame.to_parquet`` writes (made once per schema).

    The metadata is taken from pandas itself (an empty table of these types, as pandas reads
    it and would write it back), so it is the same as the old files' byte for byte; None when
    pandas would give a column another type.
    """
    for known, derived in _PANDAS_SCHEMAS:
        if known.equals(schema):
            return derived
    frame = schema.empty_table().to_pandas()
    made = pa.Schema.from_pandas(frame, preserve_index=False)
    found = made if made.remove_metadata().equals(schema) else None
    if len(_PANDAS_SCHEMAS) >= _PANDAS_SCHEMAS_MAX:
        del _PANDAS_SCHEMAS[0]
    _PANDAS_SCHEMAS.append((schema, found))
    return found


def arrow_table(
    front: Mapping[str, Any], columns: Mapping[str, Any], frame: Callable[[], pd.DataFrame]
) -> pa.Table:
    """A run's rows for one dataset as the Arrow table ``DataFrame.to_parquet`` would write.

    ``front``: the values that lead every row (run key, seed, parameters); ``columns``: the
    table's columns (numpy arrays or lists), all as long. ``frame`` makes the same table as a
    DataFrame without the front columns; it is used only for what this module does not type
    itself (see the module documentation), with the front inserted as ``[value] * rows``.
    """
    names = [*front, *columns]
    if len(set(names)) == len(names) and columns:
        try:
            arrays = [_column(values) for values in columns.values()]
            rows = len(arrays[0])
            if any(len(array) != rows for array in arrays):
                raise _Unrecognized
            arrays = [_constant(value, rows) for value in front.values()] + arrays
            table = pa.Table.from_arrays(arrays, names=names)
            schema = _pandas_schema(table.schema)
            if schema is not None:
                return table.replace_schema_metadata(schema.metadata)
        except _Unrecognized:
            pass
    return _through_pandas(front, frame())


def _through_pandas(front: Mapping[str, Any], table: pd.DataFrame) -> pa.Table:
    """The table pandas writes: ``front`` inserted first as ``[value] * rows``, no index."""
    rows = table.reset_index(drop=True)
    for position, (key, value) in enumerate(front.items()):
        rows.insert(position, key, [value] * len(rows))
    return pa.Table.from_pandas(rows, preserve_index=False)


class Rows:
    """One finished run's tables, one per dataset it keeps.

    Pickled (from a worker process to the sweep) as Arrow IPC streams, which cost a tenth of
    pickling the tables themselves.
    """

    def __init__(self, tables: dict[str, pa.Table]) -> None:
        self.tables = tables
        """The run's table per dataset name."""

    @property
    def nbytes(self) -> int:
        """The memory the tables' buffers take."""
        return sum(int(table.get_total_buffer_size()) for table in self.tables.values())

    def __reduce__(self) -> tuple[Callable[[dict[str, bytes]], Rows], tuple[dict[str, bytes]]]:
        streams = {}
        for name, table in self.tables.items():
            sink = pa.BufferOutputStream()
            with pa.ipc.new_stream(sink, table.schema) as writer:
                writer.write_table(table)
            streams[name] = sink.getvalue().to_pybytes()
        return _rows_from_streams, (streams,)


def _rows_from_streams(streams: dict[str, bytes]) -> Rows:
    """The :class:`Rows` that :meth:`Rows.__reduce__` pickled."""
    return Rows({name: pa.ipc.open_stream(data).read_all() for name, data in streams.items()})


def _write_atomically(table: pa.Table, path: Path) -> None:
    """Write ``table`` to ``path`` under a temporary name, then rename it into place.

    Raises:
        OSError: naming ``path`` and why (a full disk), the temporary file removed; pyarrow's
            own message names no file.
    """
    import pyarrow.parquet as pq

    tmp = path.with_name(f".{path.name}.tmp")
    try:
        # Snappy, as pandas' to_parquet; page checksums let check_file find damage anywhere.
        pq.write_table(table, tmp, write_page_checksum=True)
        os.replace(tmp, path)
    except OSError as err:
        tmp.unlink(missing_ok=True)
        reason = os.strerror(err.errno) if err.errno else " ".join(str(err).split())
        sweep = path.parent.parent
        error = OSError(
            f"{path}: could not be written ({reason}); the runs written before are kept: run "
            f"the sweep again into {sweep} to finish it"
        )
        error.errno = err.errno
        raise error from None


class BatchWriter:
    """Holds finished runs and writes them in batches (see the module documentation).

    ``on_written(items)`` is called after each batch with the items given to :meth:`add`, in
    order. Runs whose tables have other columns or types than the batch's (a parameter that
    is an int in one run and a float in another) start a new batch, so every file holds one
    schema, as the file of each of its runs would have.
    """

    def __init__(
        self, out: Path, flush: Flush, on_written: Callable[[list[Any]], None] | None = None
    ) -> None:
        self.out = out
        self.flush_policy = flush
        self._on_written = on_written
        self._keys: list[str] = []
        self._items: list[Any] = []
        self._tables: dict[str, list[pa.Table]] = {}
        self._schemas: dict[str, pa.Schema] = {}
        self._bytes = 0
        self._since = 0.0

    def __len__(self) -> int:
        """The number of runs held, not yet written."""
        return len(self._keys)

    def add(self, key: str, rows: Rows, item: Any = None) -> None:
        """Hold run ``key``'s rows (and ``item`` for ``on_written``); write the batch if due."""
        schemas = {name: table.schema for name, table in rows.tables.items()}
        if self._keys and (
            schemas.keys() != self._schemas.keys()
            or any(not s.equals(self._schemas[n], check_metadata=True) for n, s in schemas.items())
        ):
            self.flush()
        if not self._keys:
            self._schemas = schemas
            self._since = time.monotonic()
        self._keys.append(key)
        self._items.append(item)
        for name, table in rows.tables.items():
            self._tables.setdefault(name, []).append(table)
        self._bytes += rows.nbytes
        if len(self._keys) >= self.flush_policy.runs or self._bytes >= self.flush_policy.bytes:
            self.flush()
        else:
            self.flush_if_due()

    def flush_if_due(self) -> None:
        """Write the batch if its oldest run has waited :attr:`Flush.seconds`."""
        if self._keys and time.monotonic() - self._since >= self.flush_policy.seconds:
            self.flush()

    def flush(self) -> None:
        """Write the runs held, one file per dataset (``runs/`` last), and forget them."""
        if not self._keys:
            return
        name = f"{self._keys[0]}.parquet"
        keys, tables, items = self._keys, self._tables, self._items
        self._keys, self._items, self._tables, self._schemas, self._bytes = [], [], {}, {}, 0
        for dataset in DATASETS[1:]:
            if dataset in tables:
                _write_atomically(pa.concat_tables(tables[dataset]), self.out / dataset / name)
        runs = pa.concat_tables(tables[DATASETS[0]])
        listed = {**(runs.schema.metadata or {}), RUNS_KEY: json.dumps(keys).encode()}
        _write_atomically(runs.replace_schema_metadata(listed), self.out / DATASETS[0] / name)
        if self._on_written is not None:
            self._on_written(items)


def batch_runs(path: Path) -> list[str]:
    """The keys of the runs a ``runs/`` file holds, in order (from its footer alone).

    Raises:
        Exception: whatever pyarrow raises for a file it cannot read (a truncated one).
    """
    import pyarrow.parquet as pq

    listed = (pq.read_schema(path).metadata or {}).get(RUNS_KEY)
    if listed is None:  # written a file per run, named by its key (before batches)
        return [path.stem]
    return [str(key) for key in json.loads(listed)]


def check_file(path: Path) -> None:
    """Read the Parquet file ``path`` whole, verifying its page checksums (where it has them).

    Files written before checksums are read whole too, which finds most damage (a truncated
    or overwritten file, garbage in compressed pages) but not all.

    Raises:
        DamagedFileError: naming ``path``, if it is missing or anything in it cannot be read.
    """
    import pyarrow.parquet as pq

    try:
        with pq.ParquetFile(path, page_checksum_verification=True) as file:
            for _ in file.iter_batches(batch_size=65536):
                pass
    except Exception as err:  # pyarrow raises several kinds for damaged files
        raise _damaged(path, err) from None


def finished_runs(
    out: Path,
    datasets: Sequence[str] = DATASETS[:3],
    on_damaged: Callable[[Path, str], None] | None = None,
) -> set[str]:
    """The keys of the runs finished in sweep directory ``out``; tidies what is not finished.

    A batch is finished when its ``runs/`` file and its file in each other dataset of
    ``datasets`` (those the sweep keeps) read whole (:func:`check_file`); a run with no rows
    there (a scenario without flows) counts too. A batch with a missing or damaged file is
    removed, its files in every dataset, so that its runs run again; ``on_damaged(path,
    reason)`` is called for the file that was found damaged. So are the other datasets' files
    of a batch whose ``runs/`` file is missing (a sweep killed while writing it; ``on_damaged``
    is called for the ``runs/`` file), and temporary files.
    """
    for name in DATASETS:
        (out / name).mkdir(parents=True, exist_ok=True)
        for leftover in (out / name).glob(".*.tmp"):
            leftover.unlink()
    done: set[str] = set()
    batches, removed = set(), set()
    for path in sorted((out / "runs").glob("*.parquet")):
        try:
            check_file(path)
            keys = batch_runs(path)
            for name in datasets:
                if name != DATASETS[0]:
                    check_file(out / name / path.name)
        except DamagedFileError as err:
            for name in DATASETS:
                (out / name / path.name).unlink(missing_ok=True)
            removed.add(path.name)
            if on_damaged is not None:
                on_damaged(err.path, err.reason)
            continue
        done.update(keys)
        batches.add(path.name)
    unfinished = set()
    for name in DATASETS[1:]:
        for path in (out / name).glob("*.parquet"):
            if path.name not in batches:
                path.unlink()
                unfinished.add(path.name)
    if on_damaged is not None:
        for name in sorted(unfinished - removed):
            on_damaged(out / DATASETS[0] / name, "missing (the batch was never finished)")
    return done


def read_dataset(out: Path, dataset: str, keys: Sequence[str]) -> pd.DataFrame:
    """The rows of runs ``keys`` in dataset ``dataset`` of ``out``, the runs in that order.

    Only finished batches are read (those with a ``runs/`` file); rows of runs not in ``keys``
    (a grid that was changed with ``--extend``) are left out. Each file is read as
    ``pandas.read_parquet`` reads it, so the columns' types are those the files were written
    with; an empty DataFrame when no run of ``keys`` finished.

    Raises:
        DamagedFileError: naming the file, if a finished batch's file in ``dataset`` is
            missing or cannot be read (its runs would be left out otherwise).
    """
    import pandas as pd

    position = {key: i for i, key in enumerate(keys)}
    frames = []
    for path in sorted((out / "runs").glob("*.parquet")):
        table = out / dataset / path.name
        batch = _read(path, batch_runs)
        if not any(key in position for key in batch):
            continue
        frame = _read(table, pd.read_parquet)
        if not all(key in position for key in batch):
            frame = frame[frame["run"].isin(list(position))]
        frames.append(frame)
    if not frames:
        empty: pd.DataFrame = pd.DataFrame()
        return empty
    rows = pd.concat(frames, ignore_index=True)
    order = np.argsort(rows["run"].map(position).to_numpy(dtype=np.int64), kind="stable")
    result: pd.DataFrame = rows.iloc[order].reset_index(drop=True)
    return result


def _read(path: Path, read: Callable[[Path], T]) -> T:
    """``read(path)``, with a missing or unreadable file reported as :class:`DamagedFileError`."""
    try:
        return read(path)
    except Exception as err:  # pyarrow raises several kinds for damaged files
        raise _damaged(path, err, hint=True) from None
