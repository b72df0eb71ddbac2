"""Parameter sweeps: a grid of scenario changes times seeds, run in parallel, resumable.

A sweep directory holds ``sweep.json`` (the base scenario, the varied parameters and their
values, the seeds) and ``runs/``, one Parquet file per finished run: a row per flow, with the
varied parameters and the seed as columns. ``runs/`` is one Parquet dataset
(``pandas.read_parquet(dir / "runs")`` reads it; :func:`load` also sorts it).

Resuming: every run of the grid has a stable key (a hash of its parameter values and seed), and
its file is written under a temporary name and renamed into place only once complete. Running
the same sweep into the same directory again skips runs whose file exists and cleans up partial
files, so an interrupted sweep finishes without duplicates or losses.

Executors: ``local`` runs serially in-process (``jobs=1``) or on a pool of ``jobs`` worker
processes; ``dask`` submits the runs to a ``dask.distributed`` cluster (the scheduler at
``scheduler``, or a local cluster of ``jobs`` worker processes). Each run is a pure function of
(scenario, changes, seed), so all executors give identical numbers.
"""

from __future__ import annotations

import concurrent.futures as cf
import hashlib
import json
import multiprocessing
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from tfrclab.scenario import Scenario, parse_value
from tfrclab.simulate import run

__all__ = [
    "FORMAT_VERSION",
    "Grid",
    "Task",
    "grid_from_manifest",
    "load",
    "parse_seeds",
    "parse_vary",
    "read_manifest",
    "run_sweep",
    "run_task",
    "summarize",
]

FORMAT_VERSION = 1
"""The version of the sweep directory layout."""

Executor = Literal["local", "dask"]


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


def parse_vary(text: str) -> tuple[str, list[Any]]:
    """Read ``path=v1,v2,...`` into the path and its values (each as :func:`parse_value` reads).

    >>> parse_vary("topology.bottleneck.rate=10Mbps,20Mbps")
    ('topology.bottleneck.rate', ['10Mbps', '20Mbps'])
    >>> parse_vary("losses.0.p=0.01,0.02")
    ('losses.0.p', [0.01, 0.02])

    Raises:
        ValueError: without ``=``, a path or values.
    """
    path, sep, values = text.partition("=")
    if not sep or not path.strip() or not values.strip():
        raise ValueError(f"--vary {text!r}: expected path=value1,value2,...")
    items = [v for v in split_values(values) if v]
    if not items:
        raise ValueError(f"--vary {text!r}: no values")
    parsed = [parse_value(v) for v in items]
    if len({json.dumps(v, sort_keys=True) for v in parsed}) != len(parsed):
        raise ValueError(f"--vary {text!r}: a value is repeated")
    return path.strip(), parsed


def parse_seeds(text: str) -> list[int]:
    """Read seeds as ``1-30``, ``1,2,7`` or a mix (``1-3,10``), in order, without repeats.

    >>> parse_seeds("1-3,10")
    [1, 2, 3, 10]

    Raises:
        ValueError: for anything else, or a range that runs backwards.
    """
    seeds: list[int] = []
    for part in text.split(","):
        part = part.strip()
        low, dash, high = part.partition("-")
        try:
            if dash:
                a, b = int(low), int(high)
                if a > b or a < 0:
                    raise ValueError
                seeds.extend(range(a, b + 1))
            else:
                if int(part) < 0:
                    raise ValueError
                seeds.append(int(part))
        except ValueError:
            raise ValueError(
                f"--seeds {text!r}: expected non-negative whole numbers like 1-30 or 1,2,7"
            ) from None
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"--seeds {text!r}: a seed is repeated")
    return seeds


@dataclass(frozen=True)
class Task:
    """One run of a sweep: the base scenario's text, the changes to make, and the seed."""

    scenario_toml: str
    changes: tuple[tuple[str, Any], ...]
    seed: int

    @property
    def key(self) -> str:
        """A stable name for the run: a hash of its changes and seed."""
        text = json.dumps({"changes": self.changes, "seed": self.seed}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:20]


@dataclass(frozen=True)
class Grid:
    """A sweep: the base scenario, the varied paths with their values, and the seeds."""

    scenario: Scenario
    vary: tuple[tuple[str, tuple[Any, ...]], ...]
    seeds: tuple[int, ...]

    @property
    def params(self) -> list[str]:
        """The varied paths, in order (the parameter columns of the results)."""
        return [path for path, _ in self.vary]

    def tasks(self) -> list[Task]:
        """Every run: each combination of values (the first path varying slowest), each seed."""
        combos: list[tuple[tuple[str, Any], ...]] = [()]
        for path, values in self.vary:
            combos = [(*c, (path, v)) for c in combos for v in values]
        return [Task(self.scenario.toml, c, s) for c in combos for s in self.seeds]

    def check(self) -> None:
        """Build every combination's scenario once, so a bad value fails before anything runs.

        Raises:
            ScenarioError: naming the field, for the first combination netsim refuses.
        """
        seen: set[str] = set()
        for task in self.tasks():
            key = json.dumps(task.changes, sort_keys=True)
            if key not in seen:
                seen.add(key)
                self.scenario.with_(**dict(task.changes))

    def manifest(self) -> dict[str, Any]:
        """What ``sweep.json`` records."""
        return {
            "format": FORMAT_VERSION,
            "scenario": self.scenario.toml,
            "vary": [[path, list(values)] for path, values in self.vary],
            "seeds": list(self.seeds),
        }


def run_task(task: Task) -> pd.DataFrame:
    """Run one task; returns its rows, one per flow.

    The rows are the flows table plus the run key, the seed, the varied parameters and the
    run's ``events``, ``sim_seconds`` and ``wall_seconds``.
    """
    scenario = Scenario.from_toml(task.scenario_toml)
    if task.changes:
        scenario = scenario.with_(**dict(task.changes))
    result = run(scenario, seed=task.seed)
    flows = result.flows
    front: dict[str, Any] = {"run": task.key, "seed": task.seed}
    for path, value in task.changes:
        front[path] = value if isinstance(value, int | float | str | bool) else json.dumps(value)
    head = pd.DataFrame({k: [v] * len(flows) for k, v in front.items()})
    rows: pd.DataFrame = pd.concat([head, flows], axis=1)
    rows["events"] = result.info.events
    rows["sim_seconds"] = result.info.duration_s
    rows["wall_seconds"] = result.info.wall_seconds
    return rows


def _write_atomically(rows: pd.DataFrame, path: Path) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    rows.to_parquet(tmp, index=False)
    os.replace(tmp, path)


def _prepare(grid: Grid, out: Path) -> list[Task]:
    """Create or check the sweep directory; returns the tasks still to run."""
    runs_dir = out / "runs"
    runs_dir.mkdir(parents=True, exist_ok=True)
    manifest_path = out / "sweep.json"
    manifest = grid.manifest()
    if manifest_path.exists():
        existing = json.loads(manifest_path.read_text(encoding="utf-8"))
        if existing != json.loads(json.dumps(manifest)):
            raise ValueError(
                f"{out} holds a different sweep (sweep.json differs); use another --out"
            )
    else:
        tmp = out / ".sweep.json.tmp"
        tmp.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, manifest_path)
    for leftover in runs_dir.glob(".*.tmp"):
        leftover.unlink()
    done = {p.stem for p in runs_dir.glob("*.parquet")}
    return [t for t in grid.tasks() if t.key not in done]


def _local(tasks: Sequence[Task], jobs: int) -> Iterator[tuple[Task, pd.DataFrame]]:
    if jobs <= 1:
        for task in tasks:
            yield task, run_task(task)
        return
    context = multiprocessing.get_context("spawn")
    with cf.ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        futures = {pool.submit(run_task, task): task for task in tasks}
        for future in cf.as_completed(futures):
            yield futures[future], future.result()


def _dask(
    tasks: Sequence[Task], jobs: int, scheduler: str | None
) -> Iterator[tuple[Task, pd.DataFrame]]:
    import distributed

    # distributed is only partly typed: its calls are made through Any.
    dist: Any = distributed
    cluster = None
    if scheduler is None:
        cluster = dist.LocalCluster(
            n_workers=max(1, jobs), threads_per_worker=1, processes=True, dashboard_address=None
        )
        client = dist.Client(cluster)
    else:
        client = dist.Client(scheduler)
    try:
        futures = {client.submit(run_task, task, pure=False): task for task in tasks}
        for future in dist.as_completed(list(futures)):
            yield futures[future], future.result()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def run_sweep(
    grid: Grid,
    out: str | Path,
    *,
    jobs: int = 1,
    executor: Executor = "local",
    scheduler: str | None = None,
    on_start: Callable[[int, int], None] | None = None,
    on_done: Callable[[Task], None] | None = None,
) -> pd.DataFrame:
    """Run every task of ``grid`` not finished yet under ``out``; returns all rows (:func:`load`).

    ``on_start(remaining, total)`` is called once before running, ``on_done(task)`` after each
    run's file is written.

    Raises:
        ScenarioError: if a combination is refused (before anything runs).
        ValueError: if ``out`` holds a different sweep, or the executor is unknown.
    """
    out = Path(out)
    grid.check()
    remaining = _prepare(grid, out)
    if on_start is not None:
        on_start(len(remaining), len(grid.tasks()))
    results: Iterable[tuple[Task, pd.DataFrame]]
    if not remaining:
        results = []
    elif executor == "local":
        results = _local(remaining, jobs)
    elif executor == "dask":
        results = _dask(remaining, jobs, scheduler)
    else:
        raise ValueError(f"unknown executor {executor!r}: expected local or dask")
    for task, rows in results:
        _write_atomically(rows, out / "runs" / f"{task.key}.parquet")
        if on_done is not None:
            on_done(task)
    return load(out)


def read_manifest(directory: str | Path) -> dict[str, Any]:
    """The ``sweep.json`` of a sweep directory."""
    manifest: dict[str, Any] = json.loads(
        (Path(directory) / "sweep.json").read_text(encoding="utf-8")
    )
    return manifest


def grid_from_manifest(manifest: dict[str, Any]) -> Grid:
    """The grid a ``sweep.json`` describes."""
    return Grid(
        scenario=Scenario.from_toml(manifest["scenario"]),
        vary=tuple((str(p), tuple(v)) for p, v in manifest["vary"]),
        seeds=tuple(int(s) for s in manifest["seeds"]),
    )


def load(directory: str | Path) -> pd.DataFrame:
    """All finished runs of a sweep directory, a row per run and flow, in grid order."""
    directory = Path(directory)
    grid = grid_from_manifest(read_manifest(directory))
    frames = []
    for task in grid.tasks():
        path = directory / "runs" / f"{task.key}.parquet"
        if path.exists():
            frames.append(pd.read_parquet(path))
    if not frames:
        empty: pd.DataFrame = pd.DataFrame()
        return empty
    runs: pd.DataFrame = pd.concat(frames, ignore_index=True)
    return runs


def summarize(runs: pd.DataFrame, params: list[str]) -> pd.DataFrame:
    """A sweep's figures per parameter combination and protocol.

    Columns: the parameters, ``kind``, ``variant``, ``runs``, the mean over runs of the mean
    throughput per flow (and its standard deviation over runs), mean loss rates, and the mean
    over runs of Jain's fairness index among that protocol's flows (Yang 2001 eq. 3).
    """
    from tfrclab import metrics

    keys = [*params, "kind", "variant"]
    per_run = (
        runs.groupby([*keys, "seed"], sort=False)
        .agg(
            throughput_bits_per_s=("throughput_bits_per_s", "mean"),
            loss_event_rate=("loss_event_rate", "mean"),
            packet_loss_rate=("packet_loss_rate", "mean"),
            fairness_index=(
                "throughput_bits_per_s",
                lambda x: float(metrics.fairness_index(x.to_numpy())),
            ),
        )
        .reset_index()
    )
    summary: pd.DataFrame = (
        per_run.groupby(keys, sort=False)
        .agg(
            runs=("seed", "count"),
            throughput_bits_per_s=("throughput_bits_per_s", "mean"),
            throughput_std_bits_per_s=("throughput_bits_per_s", "std"),
            loss_event_rate=("loss_event_rate", "mean"),
            packet_loss_rate=("packet_loss_rate", "mean"),
            fairness_index=("fairness_index", "mean"),
        )
        .reset_index()
    )
    return summary
