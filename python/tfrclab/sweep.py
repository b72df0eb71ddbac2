"""Parameter sweeps: a grid of scenario changes times seeds, run in parallel, resumable.

The grid is the product of the ``vary`` axes (each a path and its values) and, when given, one
``zip`` axis: several paths whose values change together (``flows.0.count=1,2,4`` zipped with
``flows.1.count=1,2,4`` gives three runs, not nine), each combination for every seed.

A sweep directory holds ``sweep.json`` (the base scenario, the axes, the seeds, and whether
per-bin series are kept) and one Parquet dataset per table:

- ``runs/``: a row per run and flow: the flow's figures over the measurement window
  (:attr:`tfrclab.summary.Summary.flows`), the window, and the run's events and times;
- ``classes/``: a row per run and flow group, by default per protocol class (throughput,
  fairness, friendliness);
- ``links/``: a row per run and binned link (utilization, drop rate, queue);
- ``flow_series/`` and ``link_series/`` (with ``series``): every bin of every flow and binned
  link, for figures over time; with ``trace`` (field names of the agents' state traces,
  :meth:`tfrclab.result.Result.trace`) ``flow_series`` also holds those fields, NaN for a flow
  whose agent does not report one.

Every row starts with the run key, the seed and the varied parameters. A parameter column is
typed: durations become seconds, rates bits per second and sizes bytes (as the scenario checker
reads them), so they sort as quantities; ``sweep.json`` keeps the values as written, for labels.

Finished runs are written in batches, a file per batch in each dataset (up to 64 runs, or
what finished within a second; :mod:`tfrclab.sweep_store`): a Parquet write costs more than
the run of a small scenario.

Resuming and extending: a run's key hashes its changes and seed; a batch's files are written
under temporary names and renamed into place, ``runs/`` last, so a run counts as finished only
once all its files are complete. Resuming reads every finished batch's files whole, checksums
verified: a batch with a missing or damaged file in any dataset is removed and its runs run
again (reading a dataset refuses such a file, naming it, instead of leaving its runs out). Running
the same sweep into the same directory finishes an interrupted one (a sweep killed outright
loses the runs it had not written yet, about a second's worth at most); with ``extend``, a grid
with more values or seeds replaces the old one and reuses every finished run. A lock file keeps
two sweeps from writing into one directory at once (the kernel's ``flock`` on ``.lock``, which
ends with its process however that ends, so a crashed sweep's lock is simply taken).

Executors: ``local`` runs serially in-process (``jobs=1``) or on a pool of ``jobs`` worker
processes (a worker the system kills is replaced and its run retried once; the workers end
with the sweep's process, even one killed outright, :func:`tfrclab._process.worker_pool`);
``dask`` submits the runs to a ``dask.distributed`` cluster (the scheduler at ``scheduler``, or
a local cluster of ``jobs`` worker processes). Each run is a pure function of (scenario,
changes, seed), so all executors give identical numbers.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import functools
import hashlib
import itertools
import json
import os
import queue
from collections.abc import Callable, Generator, Iterator, Sequence
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from tfrclab import _native
from tfrclab._process import worker_pool
from tfrclab.scenario import Scenario, parse_value
from tfrclab.simulate import run
from tfrclab.sweep_store import (
    DATASETS,
    BatchWriter,
    Flush,
    Rows,
    arrow_table,
    finished_runs,
    read_dataset,
)

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from tfrclab.result import Result

__all__ = [
    "DATASETS",
    "FORMAT_VERSION",
    "Flush",
    "Grid",
    "SweepError",
    "SweepResult",
    "Task",
    "grid_from_manifest",
    "load",
    "param_column",
    "parse_seeds",
    "parse_vary",
    "read_manifest",
    "run_sweep",
    "run_task",
    "summarize",
    "summarize_links",
    "task_rows",
]

FORMAT_VERSION = 2
"""The version of the sweep directory layout."""

_SERIES = ("flow_series", "link_series")

Executor = Literal["local", "dask"]


class SweepError(RuntimeError):
    """A sweep could not finish: a run failed twice, or its directory is in use."""


def split_values(text: str) -> list[str]:
    """Split ``v1,v2,...`` at commas outside quotes, brackets and braces.

    >>> split_values('10Mbps,20Mbps')
    ['10Mbps', '20Mbps']
    >>> split_values('{ uniform = ["1ms", "3ms"] },"2ms"')
    ['{ uniform = ["1ms", "3ms"] }', '"2ms"']
    """
    parts: list[str] = []
    depth = 0
    quote: str | None = None
    current = ""
    for ch in text:
        if quote is not None:
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
            continue
        current += ch
    parts.append(current.strip())
    return parts


def parse_vary(text: str, option: str = "--vary") -> tuple[str, list[Any]]:
    """Read ``path=v1,v2,...`` into the path and its values (each as :func:`parse_value` reads).

    >>> parse_vary("topology.bottleneck.rate=10Mbps,20Mbps")
    ('topology.bottleneck.rate', ['10Mbps', '20Mbps'])
    >>> parse_vary("losses.0.p=0.01,0.02")
    ('losses.0.p', [0.01, 0.02])

    Raises:
        ValueError: without ``=``, a path or values, or with a repeated value.
    """
    path, sep, values = text.partition("=")
    if not sep or not path.strip() or not values.strip():
        raise ValueError(f"{option} {text!r}: expected path=value1,value2,...")
    items = [v for v in split_values(values) if v]
    if not items:
        raise ValueError(f"{option} {text!r}: no values")
    parsed = [parse_value(v) for v in items]
    if len({json.dumps(v, sort_keys=True) for v in parsed}) != len(parsed):
        raise ValueError(f"{option} {text!r}: a value is repeated")
    return path.strip(), parsed


MAX_SEEDS = 1_000_000
"""The most seeds one sweep may name (a guard against typing 0-100000000)."""


def parse_seeds(text: str) -> list[int]:
    """Read seeds as ``1-30``, ``1,2,7`` or a mix (``1-3,10``), in order, without repeats.

    Seeds are whole numbers from 0 to 2^64 - 1; at most :data:`MAX_SEEDS` of them.

    >>> parse_seeds("1-3,10")
    [1, 2, 3, 10]

    Raises:
        ValueError: for anything else, or a range that runs backwards.
    """
    seeds: list[int] = []
    expected = "expected whole numbers from 0 to 2^64-1 like 1-30 or 1,2,7"
    for part in text.split(","):
        part = part.strip()
        low, dash, high = part.partition("-")
        try:
            a, b = (int(low), int(high)) if dash else (int(part), int(part))
        except ValueError:
            raise ValueError(f"--seeds {text!r}: {expected}") from None
        if a > b or a < 0 or b >= 2**64:
            raise ValueError(f"--seeds {text!r}: {expected}")
        if len(seeds) + (b - a + 1) > MAX_SEEDS:
            raise ValueError(f"--seeds {text!r}: more than {MAX_SEEDS} seeds")
        seeds.extend(range(a, b + 1))
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"--seeds {text!r}: a seed is repeated")
    return seeds


def written(value: Any) -> str:
    """A varied value as the user wrote it: strings as they are, numbers short, tables as JSON.

    >>> written("10ms"), written(0.01), written(True), written({"uniform": ["0s", "1s"]})
    ('10ms', '0.01', 'true', '{"uniform": ["0s", "1s"]}')
    """
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return f"{value:g}"
    return json.dumps(value, sort_keys=True)


def param_column(values: Sequence[Any]) -> list[Any]:
    """A varied parameter's values as its typed column holds them, in the same order.

    Numbers and booleans stay as they are; when every value is a duration, a rate or a size
    (the same kind for all), each becomes seconds, bits per second or bytes (netsim's reading),
    so the column sorts as quantities; anything else (mixed kinds, tables) becomes the text as
    written (:func:`written`).

    >>> param_column(["10ms", "1s"]), param_column(["15Mbps"]), param_column([0.01, 0.02])
    ([0.01, 1.0], [15000000.0], [0.01, 0.02])
    >>> param_column(["0s", {"uniform": ["0s", "1s"]}])
    ['0s', '{"uniform": ["0s", "1s"]}']
    """
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in values) or all(
        isinstance(v, bool) for v in values
    ):
        return list(values)
    quantities = [_native.quantity(v) if isinstance(v, str) else None for v in values]
    kinds = {q[0] if q is not None else None for q in quantities}
    if len(kinds) == 1 and None not in kinds:
        return [q[1] for q in quantities if q is not None]
    return [written(v) for v in values]


def param_unit(values: Sequence[Any]) -> str | None:
    """The quantity of a parameter whose every value is a duration, rate or size, else None.

    >>> param_unit(["10ms", "1s"]), param_unit(["10ms", 5])
    ('duration', None)
    """
    kinds = set()
    for value in values:
        quantity = _native.quantity(value) if isinstance(value, str) else None
        kinds.add(None if quantity is None else quantity[0])
    kind = kinds.pop() if len(kinds) == 1 else None
    return kind


@dataclass(frozen=True)
class Task:
    """One run of a sweep: the base scenario's text, the changes to make, and the seed."""

    scenario_toml: str
    changes: tuple[tuple[str, Any], ...]
    seed: int
    series: bool = False
    """Whether the run's per-bin series are kept (``flow_series``, ``link_series``)."""
    force: bool = False
    """Run even if the run's cost estimate is over the budget."""
    columns: tuple[tuple[str, Any], ...] = ()
    """The changes as the parameter columns hold them (:func:`param_column`); the changes
    themselves when empty."""
    trace: tuple[str, ...] = ()
    """State trace fields kept in ``flow_series`` beside the monitor's counts (with ``series``)."""

    @property
    def key(self) -> str:
        """A stable name for the run: a hash of its changes (in any order) and seed."""
        changes = sorted([path, value] for path, value in self.changes)
        text = json.dumps({"changes": changes, "seed": self.seed}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:20]


@dataclass(frozen=True)
class Grid:
    """A sweep: the base scenario, the varied and zipped paths with their values, the seeds."""

    scenario: Scenario
    vary: tuple[tuple[str, tuple[Any, ...]], ...]
    seeds: tuple[int, ...]
    zip: tuple[tuple[str, tuple[Any, ...]], ...] = ()
    """Paths whose values change together: one axis of the grid (all the same length)."""
    series: bool = False
    """Keep every run's per-bin series."""
    force: bool = False
    """Run combinations whose cost estimate is over the budget (not part of the manifest)."""
    trace: tuple[str, ...] = ()
    """State trace fields kept in ``flow_series`` (only with ``series``)."""
    zip_label: str | None = None
    """What tables and figures call the zip axis (None: its first path); only with ``zip``."""

    def __post_init__(self) -> None:
        if self.zip_label is not None:
            if not self.zip:
                raise ValueError("--zip-label names the --zip axis: it needs --zip")
            if not isinstance(self.zip_label, str) or not self.zip_label.strip():
                raise ValueError(f"--zip-label must be a non-empty name, got {self.zip_label!r}")
        lengths = {len(values) for _, values in self.zip}
        if len(lengths) > 1:
            shown = ", ".join(f"{path} has {len(values)}" for path, values in self.zip)
            raise ValueError(f"--zip: every zipped path needs as many values ({shown})")
        paths = [path for path, _ in (*self.vary, *self.zip)]
        repeated = sorted({p for p in paths if paths.count(p) > 1})
        if repeated:
            raise ValueError(f"--vary/--zip: {', '.join(repeated)} is given more than once")
        if not self.seeds:
            raise ValueError("a sweep needs at least one seed")
        if self.trace and not self.series:
            raise ValueError("trace fields are kept in the per-bin series: they need --series")

    @property
    def params(self) -> list[str]:
        """The varied and zipped paths, in order (the parameter columns of the results)."""
        return [path for path, _ in (*self.vary, *self.zip)]

    @property
    def axes(self) -> list[str]:
        """The grid's axes, one column each: every vary path, then the zip axis's first path.

        The other zipped paths move with the first, so tables and figures show the first (named
        :attr:`zip_label` where given) and the results keep every path's column.
        """
        return [path for path, _ in (*self.vary, *self.zip[:1])]

    def combinations(self) -> list[tuple[tuple[str, Any], ...]]:
        """Every combination of changes: the vary axes (the first slowest), then the zip axis."""
        axes: list[list[tuple[tuple[str, Any], ...]]] = [
            [((path, value),) for value in values] for path, values in self.vary
        ]
        if self.zip:
            count = len(self.zip[0][1])
            axes.append(
                [tuple((path, values[i]) for path, values in self.zip) for i in range(count)]
            )
        return [tuple(itertools.chain.from_iterable(c)) for c in itertools.product(*axes)]

    def tasks(self) -> list[Task]:
        """Every run: each combination, each seed."""
        typed = {
            path: dict(zip(map(_value_key, values), param_column(values), strict=True))
            for path, values in (*self.vary, *self.zip)
        }
        tasks: list[Task] = []
        for changes in self.combinations():
            columns = tuple((path, typed[path][_value_key(value)]) for path, value in changes)
            tasks.extend(
                Task(self.scenario.toml, changes, s, self.series, self.force, columns, self.trace)
                for s in self.seeds
            )
        return tasks

    def check(self) -> float:
        """Build every combination's scenario once, so a bad value fails before anything runs.

        Returns the expected wall time of the whole grid on this machine, in seconds (the sum
        of every run's cost estimate, :func:`tfrclab.simulate.estimate`).

        Raises:
            ScenarioError: naming the field, for the first combination netsim refuses.
            CostError: for the first combination over the cost budget, unless ``force``.
        """
        from tfrclab.simulate import estimate

        total_s = 0.0
        for changes in self.combinations():
            cost = estimate(self.scenario.with_(**dict(changes)))
            if cost["refusal"] is not None and not self.force:
                raise _cost_error(cost, changes)
            total_s += float(cost["wall_s"]) * len(self.seeds)
        return total_s

    def units(self) -> dict[str, str | None]:
        """Each parameter's quantity (``duration``, ``rate``, ``size``) or None."""
        return {path: param_unit(values) for path, values in (*self.vary, *self.zip)}

    def manifest(self) -> dict[str, Any]:
        """What ``sweep.json`` records (``trace`` only when fields are kept)."""
        manifest: dict[str, Any] = {
            "format": FORMAT_VERSION,
            "scenario": self.scenario.toml,
            "vary": [[path, list(values)] for path, values in self.vary],
            "zip": [[path, list(values)] for path, values in self.zip],
            "seeds": list(self.seeds),
            "series": self.series,
            "units": self.units(),
        }
        if self.trace:
            manifest["trace"] = list(self.trace)
        if self.zip_label is not None:
            manifest["zip_label"] = self.zip_label
        return manifest


def _value_key(value: Any) -> str:
    """A hashable key for a varied value (tables and arrays included)."""
    return json.dumps(value, sort_keys=True)


def _cost_error(cost: dict[str, Any], changes: tuple[tuple[str, Any], ...]) -> _native.CostError:
    """The error a sweep gives for a combination over the cost budget."""
    where = ", ".join(f"{path}={value}" for path, value in changes) or "the base scenario"
    err = _native.CostError(f"{where}: {cost['refusal']} (or pass --force)")
    err.kind = "cost"
    err.path = cost["parts"][0]["path"] if cost["parts"] else None
    err.expected = err.found = err.suggestion = None
    err.estimate = cost
    return err


def _front(task: Task) -> dict[str, Any]:
    """The values that lead each of the task's rows: run key, seed, typed parameters."""
    front: dict[str, Any] = {"run": task.key, "seed": task.seed}
    for path, value in task.columns or task.changes:
        front[path] = value
    return front


@functools.lru_cache(maxsize=16)
def _scenario(toml: str, changes: str) -> Scenario:
    """The base scenario with ``changes`` (as JSON) made, built once for all of their seeds."""
    scenario = Scenario.from_toml(toml)
    pairs = json.loads(changes)
    return scenario.with_(**dict(pairs)) if pairs else scenario


def task_rows(task: Task) -> Rows:
    """Run one task; returns its rows for each dataset (see the module documentation).

    The tables are Arrow tables with the types and schema that writing the DataFrames of
    :func:`run_task` with pandas would give (:func:`tfrclab.sweep_store.arrow_table`).
    """
    scenario = _scenario(task.scenario_toml, json.dumps(list(task.changes)))
    try:
        result = run(scenario, seed=task.seed, force=task.force)
    except _native.ControllerError as err:  # name the run whose controller failed
        raise _native.ControllerError(
            f"run {task.key} (seed {task.seed}, {dict(task.changes)}): {err}"
        ) from None
    summary = result.summary()
    front = _front(task)
    flows = summary.columns("flows")
    count = len(flows["id"])
    run_columns = {
        "window_from_s": float(summary.window.from_s),
        "window_to_s": float(summary.window.to_s),
        "events": int(result.info.events),
        "sim_seconds": float(result.info.duration_s),
        "wall_seconds": float(result.info.wall_seconds),
    }
    for key, value in run_columns.items():
        flows[key] = np.full(count, value, dtype=np.int64 if key == "events" else np.float64)
    tables = {
        "runs": arrow_table(front, flows, lambda: summary.flows.assign(**run_columns)),
        "classes": arrow_table(front, summary.columns("classes"), lambda: summary.classes),
        "links": arrow_table(front, summary.columns("links"), lambda: summary.links),
    }
    if task.series:
        bins, names = result.bins, [str(name) for name in result.flows["name"]]
        flow_series = {
            "flow": np.repeat(np.asarray(names, dtype=object), bins),
            "time_s": np.tile(result.time_s, len(names)),
            **{key: values.reshape(-1) for key, values in result.flow_bins.items()},
            **_trace_columns(result, task.trace),
        }
        links = result.binned_links
        link_series = {
            "link": np.repeat(np.asarray(links, dtype=object), bins),
            "time_s": np.tile(result.time_s, len(links)),
            **{key: values.reshape(-1) for key, values in result.link_bins.items()},
        }
        tables["flow_series"] = arrow_table(front, flow_series, lambda: pd.DataFrame(flow_series))
        tables["link_series"] = arrow_table(front, link_series, lambda: pd.DataFrame(link_series))
    return Rows(tables)


def _trace_columns(result: Result, fields: tuple[str, ...]) -> dict[str, NDArray[np.float64]]:
    """The state trace ``fields`` of every flow, in ``flow_series``'s row order.

    NaN where a flow's agent does not report the field.
    """
    columns = {field: np.full((len(result.flows), result.bins), np.nan) for field in fields}
    for row, (names, values) in enumerate(result.states):
        for field in fields:
            if field in names:
                columns[field][row] = values[names.index(field)]
    return {field: column.reshape(-1) for field, column in columns.items()}


def run_task(task: Task) -> dict[str, pd.DataFrame]:
    """Run one task; returns its rows for each dataset as DataFrames (:func:`task_rows`)."""
    return {name: table.to_pandas() for name, table in task_rows(task).tables.items()}


class _Lock:
    """``out/.lock``: one sweep at a time writes into a directory.

    The lock is the kernel's (``flock``) on that file, taken without waiting and held while the
    sweep runs; the kernel drops it when its process ends, however it ends, so a lock left by a
    process that died is free to take, and two processes can never both hold it (the process id
    written in the file only names the holder in the refusal). The holder removes the file
    before it lets go; a process that locked the removed file sees that it is no longer the one
    at ``out/.lock`` and tries again.
    """

    def __init__(self, out: Path) -> None:
        self.path = out / ".lock"
        self._fd: int | None = None

    def __enter__(self) -> _Lock:
        import fcntl

        for _ in range(100):  # each retry follows another process's release: a few at most
            # Never through a symbolic link: the holder's id would overwrite the file it names.
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                owner = self._owner()
                holder = f" (process {owner})" if owner is not None else ""
                raise SweepError(
                    f"{self.path.parent} is in use by another sweep{holder}; wait for it or "
                    "choose another --out"
                ) from None
            except BaseException:
                os.close(fd)
                raise
            try:
                current = os.stat(self.path)
            except FileNotFoundError:
                current = None
            if current is None or not os.path.samestat(current, os.fstat(fd)):
                os.close(fd)  # its holder removed it on release: lock the file there now
                continue
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
            self._fd = fd
            return self
        raise SweepError(f"{self.path}: could not take the sweep lock")

    def _owner(self) -> int | None:
        try:
            return int(self.path.read_text().strip())
        except (OSError, ValueError):
            return None

    def __exit__(self, *_exc: object) -> None:
        if self._fd is not None:
            self.path.unlink(missing_ok=True)
            os.close(self._fd)
            self._fd = None


def _prepare(
    grid: Grid, out: Path, extend: bool, on_repair: Callable[[Path, str], None] | None = None
) -> list[Task]:
    """Create or check the sweep directory; returns the tasks still to run.

    Every file of the finished runs is verified; a damaged one's runs are among those returned
    (``on_repair(path, reason)`` is called for each damaged file).
    """
    manifest_path = out / "sweep.json"
    manifest = json.loads(json.dumps(grid.manifest()))
    if manifest_path.exists():
        existing = read_manifest(out)
        if existing.get("format") != FORMAT_VERSION:
            raise ValueError(
                f"{out} holds a sweep of an older format ({existing.get('format')!r}); "
                "use another --out"
            )
        if (existing["scenario"], existing.get("series"), existing.get("trace")) != (
            manifest["scenario"],
            manifest["series"],
            manifest.get("trace"),
        ):
            raise ValueError(
                f"{out} holds a different sweep (its base scenario, measurement window, "
                "--series or trace fields differ); use another --out"
            )
        # The zip axis's label names it only: a new one replaces the old.
        runs_of = {key: value for key, value in existing.items() if key != "zip_label"}
        if runs_of != {k: v for k, v in manifest.items() if k != "zip_label"} and not extend:
            raise ValueError(
                f"{out} holds this sweep over other values or seeds; pass --extend to run this "
                "grid there (finished runs are reused), or use another --out"
            )
    for name in DATASETS:
        (out / name).mkdir(parents=True, exist_ok=True)
    if not manifest_path.exists() or read_manifest(out) != manifest:
        tmp = out / ".sweep.json.tmp"
        tmp.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, manifest_path)
    kept = DATASETS if grid.series else tuple(d for d in DATASETS if d not in _SERIES)
    done = finished_runs(out, kept, on_repair)
    return [t for t in grid.tasks() if t.key not in done]


def _terminate(pool: cf.ProcessPoolExecutor) -> None:
    """Stop a pool's worker processes now (on an interrupt or a failure)."""
    # ProcessPoolExecutor has no public way to end running workers before Python 3.14.
    for process in list(getattr(pool, "_processes", {}).values()):
        if process.is_alive():
            process.terminate()
    pool.shutdown(wait=False, cancel_futures=True)


_Completed = tuple[Task, Rows | None] | None
"""What the executors yield: a finished task with its rows (None: a worker wrote them), or
None when a while passed without one (so that the runs held are written on time)."""


def _rows_or_write(task: Task, out: Path, limit: int) -> Rows | None:
    """In a worker process: run ``task``; returns its rows, or None once it wrote them itself.

    Tables of ``limit`` bytes or more (long per-bin series) are written where they were made,
    as a batch of one run, rather than sent to the sweep's process to write.
    """
    rows = task_rows(task)
    if rows.nbytes < limit:
        return rows
    BatchWriter(out, Flush(runs=1)).add(task.key, rows)
    return None


def _completions(futures: dict[Any, Task], tick: float) -> Iterator[tuple[Any, Task] | None]:
    """Each future of ``futures`` with its task, as it completes; None when ``tick`` passes.

    Works for ``concurrent.futures`` and ``distributed`` futures alike.
    """
    done: queue.Queue[Any] = queue.Queue()
    for future in futures:
        future.add_done_callback(done.put)
    for _ in range(len(futures)):
        while True:
            try:
                future = done.get(timeout=tick)
            except queue.Empty:
                yield None
                continue
            break
        yield future, futures[future]


def _local(
    tasks: Sequence[Task], jobs: int, tick: float, out: Path, limit: int
) -> Iterator[_Completed]:
    """Run ``tasks`` here (``jobs`` <= 1) or on a pool of ``jobs`` processes.

    The workers send each run's tables back (:class:`~tfrclab.sweep_store.Rows`, pickled as
    Arrow streams) for this process to write in batches, but write tables of ``limit`` bytes
    or more themselves.
    """
    if jobs <= 1:
        for task in tasks:
            yield task, task_rows(task)
        return
    pending = list(tasks)
    tries: dict[str, int] = {}
    while pending:
        pool = worker_pool(jobs)
        broken: list[Task] = []
        try:
            futures = {pool.submit(_rows_or_write, task, out, limit): task for task in pending}
            for item in _completions(futures, tick):
                if item is None:
                    yield None
                    continue
                future, task = item
                try:
                    rows = future.result()
                except BrokenProcessPool:
                    broken.append(task)
                    continue
                yield task, rows
        except BaseException:
            _terminate(pool)
            raise
        pool.shutdown(wait=True)
        for task in broken:
            tries[task.key] = tries.get(task.key, 0) + 1
            if tries[task.key] >= 2:
                raise SweepError(
                    f"run {task.key} (seed {task.seed}, {dict(task.changes)}) failed twice: its "
                    "worker process died (out of memory, a congestion controller's callback "
                    "that never returned, or a script that calls run_sweep without "
                    '`if __name__ == "__main__":`, which stderr then names); the '
                    "finished runs are kept"
                )
        pending = broken


@contextlib.contextmanager
def local_dask_cluster(jobs: int) -> Iterator[str]:
    """A local ``dask.distributed`` cluster of ``jobs`` single-threaded worker processes.

    It lasts as long as the ``with``, which yields its scheduler address (for ``scheduler`` of
    :func:`run_sweep`, so several sweeps share one cluster instead of starting one each).
    """
    import distributed

    # distributed is only partly typed: its calls are made through Any.
    dist: Any = distributed
    cluster = dist.LocalCluster(
        n_workers=max(1, jobs), threads_per_worker=1, processes=True, dashboard_address=None
    )
    try:
        yield str(cluster.scheduler_address)
    finally:
        cluster.close()


@contextlib.contextmanager
def dask_client(jobs: int, scheduler: str | None) -> Iterator[Any]:
    """A ``dask.distributed`` client for the ``with``: of the cluster at ``scheduler``.

    Without an address, of a local cluster of ``jobs`` processes made for the ``with``
    (``sweep`` and ``evaluate`` both submit their runs through it).
    """
    import distributed

    # distributed is only partly typed: its calls are made through Any.
    dist: Any = distributed
    with contextlib.ExitStack() as stack:
        if scheduler is None:
            scheduler = stack.enter_context(local_dask_cluster(jobs))
        client = dist.Client(scheduler)
        try:
            yield client
        finally:
            client.close()


def _dask(
    tasks: Sequence[Task], jobs: int, scheduler: str | None, tick: float
) -> Iterator[_Completed]:
    with dask_client(jobs, scheduler) as client:
        futures = {client.submit(task_rows, task, pure=False): task for task in tasks}
        for item in _completions(futures, tick):
            yield None if item is None else (item[1], item[0].result())


def run_sweep(
    grid: Grid,
    out: str | Path,
    *,
    jobs: int = 1,
    executor: Executor = "local",
    scheduler: str | None = None,
    extend: bool = False,
    on_start: Callable[[int, int], None] | None = None,
    on_done: Callable[[Task], None] | None = None,
    on_estimate: Callable[[float], None] | None = None,
    flush: Flush | None = None,
    on_repair: Callable[[Path, str], None] | None = None,
) -> pd.DataFrame:
    """Run every task of ``grid`` not finished yet under ``out``; returns all rows (:func:`load`).

    ``extend`` lets the grid differ from the one ``out`` holds (more values or seeds); the
    finished runs are reused. ``on_start(remaining, total)`` is called once before running,
    ``on_done(task)`` after each run's files are written (finished runs are written in
    batches, when ``flush`` says: by default up to 64 runs, or a second's worth, at a time),
    and ``on_estimate(wall_s)`` once with the expected wall time of the runs still to do (one
    process, this machine). An error or an interrupt writes the runs finished so far first.

    Before anything runs, every file of the finished runs is read whole and checked
    (:func:`tfrclab.sweep_store.finished_runs`): the runs of a batch with a missing or damaged
    file run again, and ``on_repair(path, reason)`` is called for that file.

    The whole grid is checked first (every combination built and its cost estimated), so a bad
    value or a run over the cost budget fails before anything runs.

    Raises:
        ScenarioError: if a combination is refused (before anything runs).
        CostError: if a combination is over the cost budget and ``grid.force`` is false.
        ValueError: if ``out`` holds a different sweep, or the executor is unknown.
        SweepError: if ``out`` is in use by another sweep, or a run's worker died twice.
    """
    from tfrclab._process import refuse_while_importing_main

    refuse_while_importing_main()
    from tfrclab.outdir import check_sweep_out

    out = Path(out)
    if executor not in ("local", "dask"):
        raise ValueError(f"unknown executor {executor!r}: expected local or dask")
    check_sweep_out(out)
    expected_s = grid.check()
    out.mkdir(parents=True, exist_ok=True)
    with _Lock(out):
        remaining = _prepare(grid, out, extend, on_repair)
        if on_estimate is not None:
            on_estimate(expected_s * len(remaining) / max(1, len(grid.tasks())))
        if on_start is not None:
            on_start(len(remaining), len(grid.tasks()))
        policy = flush if flush is not None else Flush()
        tick = max(0.01, min(policy.seconds, 1.0) / 4)
        results: Iterator[_Completed]
        if not remaining:
            results = iter([])
        elif executor == "local":
            results = _local(remaining, jobs, tick, out, policy.bytes)
        else:
            results = _dask(remaining, jobs, scheduler, tick)

        def written(tasks: list[Task]) -> None:
            if on_done is not None:
                for task in tasks:
                    on_done(task)

        writer = BatchWriter(out, policy, written)
        try:
            for item in results:
                if item is None:
                    writer.flush_if_due()
                elif item[1] is None:
                    written([item[0]])
                else:
                    writer.add(item[0].key, item[1], item[0])
        except BaseException:
            # Stop the workers first (Ctrl-C stops at once), then keep what finished.
            if isinstance(results, Generator):
                results.close()
            with contextlib.suppress(Exception):
                writer.flush()
            raise
        writer.flush()
    return load(out)


def read_manifest(directory: str | Path) -> dict[str, Any]:
    """The ``sweep.json`` of a sweep directory.

    Raises:
        ValueError: if it is missing or not a sweep manifest.
    """
    path = Path(directory) / "sweep.json"
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{directory}: not a sweep directory (no sweep.json)") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ValueError(f"{path}: not valid JSON ({err})") from None
    keys = ("format", "scenario", "vary", "seeds")
    if not isinstance(manifest, dict) or any(key not in manifest for key in keys):
        raise ValueError(f"{path}: not a sweep manifest (it needs {', '.join(keys)})")
    checked: dict[str, Any] = manifest
    return checked


def grid_from_manifest(manifest: dict[str, Any], source: str | Path = "sweep.json") -> Grid:
    """The grid a ``sweep.json`` describes; ``source`` is that file, for the error.

    Raises:
        ValueError: if the manifest's axes or seeds are malformed (naming ``source``).
    """
    try:
        return Grid(
            scenario=Scenario.from_toml(manifest["scenario"]),
            vary=tuple((str(p), tuple(v)) for p, v in manifest["vary"]),
            zip=tuple((str(p), tuple(v)) for p, v in manifest.get("zip", [])),
            seeds=tuple(int(s) for s in manifest["seeds"]),
            series=bool(manifest.get("series", False)),
            trace=tuple(str(f) for f in manifest.get("trace", [])),
            zip_label=manifest.get("zip_label"),
        )
    except (TypeError, ValueError) as err:
        raise ValueError(f"{source}: malformed axes or seeds ({err})") from None


def load(directory: str | Path, dataset: str = "runs") -> pd.DataFrame:
    """One dataset of a sweep directory (default ``runs``), its finished runs in grid order.

    Raises:
        ValueError: for an unknown dataset, or one the sweep did not keep.
        tfrclab.sweep_store.DamagedFileError: naming the file, if a finished batch's file is
            missing or damaged.
    """
    if dataset not in DATASETS:
        raise ValueError(f"unknown dataset {dataset!r}: expected one of {', '.join(DATASETS)}")
    directory = Path(directory)
    grid = grid_from_manifest(read_manifest(directory), directory / "sweep.json")
    if dataset in _SERIES and not grid.series:
        raise ValueError(f"{directory}: this sweep kept no per-bin series (run it with --series)")
    return read_dataset(directory, dataset, [task.key for task in grid.tasks()])


def _ci_table(
    rows: pd.DataFrame, keys: list[str], columns: Sequence[str], confidence: float
) -> pd.DataFrame:
    """Per group of ``keys``: the number of runs and, per column, mean, std and CI half-width."""
    from tfrclab.metrics import mean_ci

    out = []
    for key, group in rows.groupby(keys, sort=False, dropna=False):
        values = key if isinstance(key, tuple) else (key,)
        row: dict[str, Any] = dict(zip(keys, values, strict=True))
        row["runs"] = int(group["seed"].nunique())
        for column in columns:
            samples = group[column].to_numpy(dtype=np.float64)
            mean, half = mean_ci(samples, confidence)
            row[column] = mean
            row[f"{column}_std"] = float(np.std(samples, ddof=1)) if len(samples) > 1 else np.nan
            row[f"{column}_ci"] = half
        out.append(row)
    frame: pd.DataFrame = pd.DataFrame(out)
    return frame


CLASS_FIGURES = (
    "mean_throughput_bits_per_s",
    "normalized_throughput",
    "fairness_index",
    "friendliness_ratio",
    "difference_ratio",
    "packet_loss_rate",
    "loss_event_rate",
)
"""The per-class figures :func:`summarize` averages over seeds."""

LINK_FIGURES = ("utilization", "drop_rate", "mean_queue_packets", "throughput_bits_per_s")
"""The per-link figures :func:`summarize_links` averages over seeds."""


def summarize(classes: pd.DataFrame, params: list[str], confidence: float = 0.95) -> pd.DataFrame:
    """A sweep's figures per parameter combination and protocol class, over seeds.

    ``classes`` is the ``classes`` dataset (:func:`load` with ``dataset="classes"``). Columns:
    the parameters, ``class``, ``runs`` (seeds), and for each of :data:`CLASS_FIGURES` its
    mean over seeds, ``_std`` and ``_ci`` (the half-width of the Student t interval at
    ``confidence``: the mean is ``x +- x_ci``).
    """
    return _ci_table(classes, [*params, "class"], CLASS_FIGURES, confidence)


def summarize_links(
    links: pd.DataFrame, params: list[str], confidence: float = 0.95
) -> pd.DataFrame:
    """Like :func:`summarize` for the ``links`` dataset and :data:`LINK_FIGURES`, per link."""
    return _ci_table(links, [*params, "name"], LINK_FIGURES, confidence)


@dataclass(frozen=True)
class SweepResult:
    """A sweep directory, read: its datasets, its summary over seeds, and a notebook view."""

    directory: Path
    """The sweep directory."""
    manifest: dict[str, Any]
    """Its ``sweep.json``."""

    @classmethod
    def open(cls, directory: str | Path) -> SweepResult:
        """Read the sweep in ``directory``.

        Raises:
            ValueError: if it is not a sweep directory.
        """
        return cls(Path(directory), read_manifest(directory))

    @property
    def params(self) -> list[str]:
        """The varied and zipped parameters."""
        return grid_from_manifest(self.manifest, self.directory / "sweep.json").params

    def dataset(self, name: str) -> pd.DataFrame:
        """One dataset (``runs``, ``classes``, ``links``, ``flow_series``, ``link_series``)."""
        return load(self.directory, name)

    def summary(self, confidence: float = 0.95) -> pd.DataFrame:
        """:func:`summarize` of the ``classes`` dataset (empty when nothing finished)."""
        classes = self.dataset("classes")
        if classes.empty:
            return classes
        return summarize(classes, self.params, confidence)

    def _head(self) -> str:
        """``DIR: N of M runs``, as ``tfrclab summary`` starts."""
        classes = self.dataset("classes")
        done = 0 if classes.empty else int(classes["run"].nunique())
        total = len(grid_from_manifest(self.manifest, self.directory / "sweep.json").tasks())
        return f"{self.directory}: {done} of {total} runs"

    def __repr__(self) -> str:
        """One line: the directory, runs done, each axis with its values as written, seeds."""
        from tfrclab.report import sweep_axes

        values = {str(path): list(vals) for path, vals in self.manifest["vary"]}
        values.update({str(path): list(vals) for path, vals in self.manifest.get("zip", [])})
        axes = "".join(
            f"; {header} = {', '.join(map(written, values[path]))}"
            for path, header in sweep_axes(self.manifest).items()
        )
        seeds = ", ".join(str(seed) for seed in self.manifest["seeds"])
        return f"<SweepResult {self._head()}{axes}; seeds {seeds}>"

    def _repr_html_(self) -> str:
        """The table ``tfrclab summary`` prints (values as written, means ± 95% CI)."""
        from tfrclab.report import render_html, sweep_table

        summary = self.summary()
        if summary.empty:
            return render_html(self._head())
        classes = self.dataset("classes")
        return render_html(self._head(), sweep_table(summary, self.manifest, classes))
