"""How a sweep stores its runs: batches of runs per file, the tables pandas would write.

A sweep writes finished runs in batches (``tfrclab.sweep_store``); these tests check that the
files hold exactly what writing each run's DataFrames with pandas gave (types, pandas
metadata, values), that the batches follow the flush policy, and that a sweep killed or
interrupted between two writes resumes to the same datasets as one that was not.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tfrclab import Scenario, sweep, sweep_store
from tfrclab.simulate import run
from tfrclab.sweep_store import Flush, Rows, arrow_table

SCENARIO = """\
name = "batches"
duration = "2s"

[monitor]
bin = "100ms"

[topology]
kind = "dumbbell"
hosts = 2

[topology.bottleneck]
rate = "2Mbps"
delay = "10ms"

[[flows]]
kind = "cbr"
count = 2
rate = "1.5Mbps"
random = true

[[losses]]
link = "bottleneck"
kind = "bernoulli"
p = 0.01
"""


def pandas_tables(task: sweep.Task) -> dict[str, pa.Table]:
    """A run's tables as the sweep wrote them with pandas.

    DataFrames, the front columns inserted as ``[value] * rows``, ``to_parquet`` without index.
    """
    scenario = Scenario.from_toml(task.scenario_toml).with_(**dict(task.changes))
    result = run(scenario, seed=task.seed)
    summary = result.summary()
    flows = summary.flows.copy()
    flows["window_from_s"] = summary.window.from_s
    flows["window_to_s"] = summary.window.to_s
    flows["events"] = result.info.events
    flows["sim_seconds"] = result.info.duration_s
    flows["wall_seconds"] = 0.0
    frames = {"runs": flows, "classes": summary.classes, "links": summary.links}
    bins = result.bins
    names = result.flows["name"].to_numpy()
    frames["flow_series"] = pd.DataFrame(
        {
            "flow": np.repeat(names, bins),
            "time_s": np.tile(result.time_s, len(names)),
            **{key: values.reshape(-1) for key, values in result.flow_bins.items()},
        }
    )
    links = np.asarray(result.binned_links, dtype=object)
    frames["link_series"] = pd.DataFrame(
        {
            "link": np.repeat(links, bins),
            "time_s": np.tile(result.time_s, len(links)),
            **{key: values.reshape(-1) for key, values in result.link_bins.items()},
        }
    )
    front: dict[str, Any] = {"run": task.key, "seed": task.seed, **dict(task.columns)}
    tables = {}
    for name, frame in frames.items():
        rows = frame.reset_index(drop=True)
        for position, (key, value) in enumerate(front.items()):
            rows.insert(position, key, [value] * len(rows))
        tables[name] = pa.Table.from_pandas(rows, preserve_index=False)
    return tables


def without_wall(table: pa.Table) -> pa.Table:
    """The table with its wall-clock column zeroed (everything else must be identical)."""
    if "wall_seconds" not in table.column_names:
        return table
    index = table.column_names.index("wall_seconds")
    zeros = pa.array(np.zeros(len(table)), type=pa.float64())
    return table.set_column(index, "wall_seconds", zeros)


@pytest.mark.parametrize("seed", [3, 2**63 + 1])
def test_a_runs_tables_are_those_pandas_wrote(seed: int) -> None:
    # Parameters of every kind a column takes: float, bool, int, a duration as seconds, text.
    changes = (
        ("losses.0.p", 0.05),
        ("flows.0.random", False),
        ("flows.0.count", 3),
        ("bottleneck.delay", "5ms"),
        ("flows.0.start", {"uniform": ["0s", "0.5s"]}),
    )
    columns = (*changes[:3], ("bottleneck.delay", 0.005), ("flows.0.start", "uniform"))
    task = sweep.Task(SCENARIO, changes, seed, series=True, columns=columns)
    rows = sweep.task_rows(task)
    expected = pandas_tables(task)
    assert rows.tables.keys() == expected.keys()
    for name, table in rows.tables.items():
        # The same schema, pandas metadata included, and the same values.
        assert table.schema.equals(expected[name].schema, check_metadata=True), name
        assert without_wall(table).equals(without_wall(expected[name])), name
    # A seed over 2^63 - 1 is stored as pandas stores it (uint64).
    assert rows.tables["runs"].schema.field("seed").type == (
        pa.int64() if seed < 2**63 else pa.uint64()
    )
    # The tables travel from worker processes as Arrow streams, unchanged.
    back = pickle.loads(pickle.dumps(rows))
    for name, table in rows.tables.items():
        assert back.tables[name].equals(table, check_metadata=True)


@pytest.mark.parametrize(
    ("front", "columns", "typed"),
    [
        # Typed here: NaN is stored as a missing value, as pandas stores it.
        ({"run": "k", "p": float("nan")}, {"a": np.array([np.nan, 1.0]), "b": [0.5, np.nan]}, 1),
        ({"run": "k", "on": True}, {"a": ["x", "y"], "b": [True, False], "c": [1, 2]}, 1),
        ({"run": "k"}, {"a": np.array(["x", "yy"]), "b": np.array(["z", "w"], dtype=object)}, 1),
        # Not typed here: pandas does it.
        ({"run": "k", "seed": 1}, {"a": [], "b": np.array([], dtype=np.float64)}, 0),
        ({"run": "k", "seed": 1}, {"a": [1, 2.5]}, 0),
        ({"run": "k", "seed": 1}, {"a": ["x", None]}, 0),
        ({"run": "k", "seed": 1}, {"a": [2**64 - 1, 1]}, 0),
        ({"run": "k", "seed": 2**64 - 1}, {"a": [1.0]}, 0),
        ({"run": "k", "seed": 1}, {"a": np.array(["2026-01-01"], dtype="datetime64[ns]")}, 0),
    ],
)
def test_tables_are_what_pandas_writes(
    front: dict[str, Any], columns: dict[str, Any], typed: int
) -> None:
    def frame() -> pd.DataFrame:
        assert not typed, "this table should not need pandas"
        return pd.DataFrame(columns)

    table = arrow_table(front, columns, frame)
    frame = pd.DataFrame(columns)
    for position, (key, value) in enumerate(front.items()):
        frame.insert(position, key, [value] * len(frame))
    assert table.equals(pa.Table.from_pandas(frame, preserve_index=False), check_metadata=True)


def grid(seeds: int = 5, series: bool = False) -> sweep.Grid:
    return sweep.Grid(
        Scenario.from_toml(SCENARIO),
        vary=(("losses.0.p", (0.01, 0.05)),),
        seeds=tuple(range(1, seeds + 1)),
        series=series,
    )


def datasets(out: Path) -> dict[str, pd.DataFrame]:
    """Every dataset of a sweep, without wall-clock times."""
    found = {}
    kept = sweep.DATASETS if sweep.read_manifest(out)["series"] else sweep.DATASETS[:3]
    for name in kept:
        frame = sweep.load(out, name)
        found[name] = frame.drop(columns=["wall_seconds"], errors="ignore")
    return found


def assert_same_datasets(a: Path, b: Path) -> None:
    left, right = datasets(a), datasets(b)
    assert left.keys() == right.keys()
    for name, frame in left.items():
        pd.testing.assert_frame_equal(frame, right[name], check_exact=True)


def files(out: Path, dataset: str = "runs") -> list[str]:
    return sorted(path.name for path in (out / dataset).glob("*.parquet"))


def keys_in(path: Path) -> list[str]:
    """The runs a ``runs/`` file holds, in order."""
    rows = pq.read_table(path, columns=["run"]).column("run").to_pylist()
    return [str(key) for key in dict.fromkeys(rows)]


def test_batches_follow_the_flush_policy(tmp_path: Path) -> None:
    written: list[str] = []

    def on_done(task: sweep.Task) -> None:
        # A run is reported once its files are in place.
        assert any(task.key in keys_in(p) for p in (tmp_path / "a" / "runs").glob("*.parquet"))
        written.append(task.key)

    g = grid(seeds=5, series=True)
    sweep.run_sweep(g, tmp_path / "a", flush=Flush(runs=4, seconds=3600), on_done=on_done)
    assert sorted(written) == sorted(task.key for task in g.tasks())
    # 10 runs, four at a time: files of 4, 4 and 2 runs, the same names in every dataset.
    names = files(tmp_path / "a")
    assert sorted(len(keys_in(tmp_path / "a" / "runs" / n)) for n in names) == [2, 4, 4]
    for dataset in sweep.DATASETS:
        assert files(tmp_path / "a", dataset) == names
    # A file per run (no batching at all, as earlier versions wrote) reads the same.
    sweep.run_sweep(g, tmp_path / "b", flush=Flush(seconds=0))
    assert files(tmp_path / "b") == sorted(f"{task.key}.parquet" for task in g.tasks())
    assert_same_datasets(tmp_path / "a", tmp_path / "b")
    # So does a batch that is written as soon as it holds more than a byte (with workers, such
    # runs are written by the worker that ran them).
    sweep.run_sweep(g, tmp_path / "c", flush=Flush(bytes=1), jobs=2)
    assert len(files(tmp_path / "c")) == 10
    assert_same_datasets(tmp_path / "a", tmp_path / "c")
    with pytest.raises(ValueError, match="at least 1"):
        Flush(runs=0)


def test_runs_of_other_column_types_go_to_another_file(tmp_path: Path) -> None:
    # 0 is an int and 0.05 a float: their parameter columns have different types.
    g = sweep.Grid(Scenario.from_toml(SCENARIO), vary=(("losses.0.p", (0, 0.05)),), seeds=(1, 2))
    sweep.run_sweep(g, tmp_path / "a")
    types = {
        pq.read_schema(tmp_path / "a" / "runs" / name).field("losses.0.p").type
        for name in files(tmp_path / "a")
    }
    assert types == {pa.int64(), pa.float64()}
    assert len(files(tmp_path / "a")) == 2
    sweep.run_sweep(g, tmp_path / "b", flush=Flush(runs=1))
    assert_same_datasets(tmp_path / "a", tmp_path / "b")


KILLED = """
import os, signal, sys
from tfrclab import Scenario, sweep

real = sweep.task_rows
calls = []


def dying(task):
    calls.append(task)
    if len(calls) == 6:  # runs 1-4 are written, run 5 is held: die now
        os.kill(os.getpid(), signal.SIGKILL)
    return real(task)


sweep.task_rows = dying
grid = sweep.Grid(
    Scenario.from_toml(open(sys.argv[1]).read()),
    vary=(("losses.0.p", (0.01, 0.05)),),
    seeds=(1, 2, 3, 4, 5),
    series=True,
)
sweep.run_sweep(grid, sys.argv[2], flush=sweep.Flush(runs=4, seconds=3600))
"""


def test_a_sweep_killed_between_writes_resumes_to_the_same_datasets(tmp_path: Path) -> None:
    scenario = tmp_path / "scenario.toml"
    scenario.write_text(SCENARIO)
    out = tmp_path / "killed"
    env = {**os.environ, "MPLBACKEND": "Agg"}
    process = subprocess.run(
        [sys.executable, "-c", KILLED, str(scenario), str(out)], env=env, timeout=120
    )
    assert process.returncode == -signal.SIGKILL
    g = grid(seeds=5, series=True)
    tasks = g.tasks()
    # The first batch was written; the run held in memory was lost.
    (batch,) = files(out)
    assert keys_in(out / "runs" / batch) == [task.key for task in tasks[:4]]
    # A batch whose runs/ file was never written (killed while writing it) is not kept.
    orphan = f"{tasks[5].key}.parquet"
    shutil.copy(out / "classes" / batch, out / "classes" / orphan)
    (out / "links" / ".x.parquet.tmp").write_bytes(b"partial")
    remaining: list[int] = []
    sweep.run_sweep(g, out, on_start=lambda left, _: remaining.append(left))
    assert remaining == [6]
    assert not (out / "classes" / orphan).exists()
    assert not list((out / "links").glob(".*.tmp"))
    sweep.run_sweep(g, tmp_path / "fresh", jobs=2)
    assert_same_datasets(out, tmp_path / "fresh")
    assert not sweep.load(out, "classes").duplicated(["run", "class"]).any()


def test_an_interrupted_sweep_writes_the_runs_it_finished(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = sweep.task_rows
    calls: list[sweep.Task] = []

    def interrupted(task: sweep.Task) -> Rows:
        calls.append(task)
        if len(calls) == 4:
            raise KeyboardInterrupt
        return real(task)

    monkeypatch.setattr(sweep, "task_rows", interrupted)
    g = grid(seeds=5)
    with pytest.raises(KeyboardInterrupt):
        sweep.run_sweep(g, tmp_path, flush=Flush(runs=64, seconds=3600))
    assert sweep.load(tmp_path)["run"].unique().tolist() == [t.key for t in g.tasks()[:3]]
    monkeypatch.setattr(sweep, "task_rows", real)
    remaining: list[int] = []
    sweep.run_sweep(g, tmp_path, on_start=lambda left, _: remaining.append(left))
    assert remaining == [7]


def test_a_run_without_flows_counts_as_finished(tmp_path: Path) -> None:
    # Its runs/ rows are none: the file's list of runs says it finished.
    text = SCENARIO[: SCENARIO.index("[[flows]]")]
    g = sweep.Grid(Scenario.from_toml(text), vary=(), seeds=(1, 2, 3))
    sweep.run_sweep(g, tmp_path)
    (name,) = files(tmp_path)
    listed = pq.read_schema(tmp_path / "runs" / name).metadata[sweep_store.RUNS_KEY]
    assert json.loads(listed) == [task.key for task in g.tasks()]
    remaining: list[int] = []
    sweep.run_sweep(g, tmp_path, on_start=lambda left, _: remaining.append(left))
    assert remaining == [0]
    assert sweep.load(tmp_path, "links")["run"].nunique() == 3


def damage(path: Path, how: str) -> None:
    """Damage a file as a crash, a full disk or a bad sector would."""
    data = path.read_bytes()
    if how == "missing":
        path.unlink()
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif how == "garbage":
        path.write_bytes(os.urandom(len(data)))
    elif how == "bad middle":  # a few bytes of a data page: the footer still reads
        middle = len(data) // 3
        path.write_bytes(
            data[:middle] + bytes(b ^ 0xFF for b in data[middle : middle + 8]) + data[middle + 8 :]
        )
    else:
        raise AssertionError(how)


@pytest.fixture(scope="module")
def whole(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished sweep with series, a file per run: what a damaged one must come back to."""
    out = tmp_path_factory.mktemp("whole") / "sweep"
    sweep.run_sweep(grid(seeds=2, series=True), out, flush=Flush(runs=1))
    return out


@pytest.mark.parametrize("how", ["missing", "empty", "truncated", "garbage", "bad middle"])
@pytest.mark.parametrize("dataset", sweep.DATASETS)
def test_a_damaged_file_of_any_dataset_is_run_again(
    whole: Path, tmp_path: Path, dataset: str, how: str
) -> None:
    out = tmp_path / "sweep"
    shutil.copytree(whole, out)
    victim = out / dataset / files(whole)[1]
    damage(victim, how)
    remaining: list[int] = []
    repaired: list[tuple[Path, str]] = []
    sweep.run_sweep(
        grid(seeds=2, series=True),
        out,
        on_start=lambda left, _: remaining.append(left),
        on_repair=lambda path, why: repaired.append((path, why)),
    )
    # The damaged file's batch (one run) ran again, and said so, naming the file.
    assert remaining == [1]
    assert [path for path, _ in repaired] == [victim]
    assert_same_datasets(out, whole)


def test_a_batch_with_a_damaged_or_missing_dataset_file_runs_again(tmp_path: Path) -> None:
    # Four batches of 4, 4, 1 and 1 runs; then one loses its classes/ file's end (truncated)
    # and another its link_series/ file. Resuming runs exactly those batches' runs again, and
    # the datasets are those of a sweep never damaged.
    g = grid(seeds=5, series=True)
    out = tmp_path / "damaged"
    sweep.run_sweep(g, out, flush=Flush(runs=4, seconds=3600))
    names = files(out)
    assert sorted(len(keys_in(out / "runs" / n)) for n in names) == [2, 4, 4]
    truncated, removed = (n for n in names if len(keys_in(out / "runs" / n)) == 4)
    classes = out / "classes" / truncated
    classes.write_bytes(classes.read_bytes()[:-20])
    (out / "link_series" / removed).unlink()
    remaining: list[int] = []
    sweep.run_sweep(g, out, on_start=lambda left, _: remaining.append(left))
    assert remaining == [8]
    sweep.run_sweep(g, tmp_path / "fresh", jobs=2)
    assert_same_datasets(out, tmp_path / "fresh")
    # Without --series only the three datasets it keeps are required.
    plain = grid(seeds=2)
    sweep.run_sweep(plain, tmp_path / "plain")
    remaining.clear()
    sweep.run_sweep(plain, tmp_path / "plain", on_start=lambda left, _: remaining.append(left))
    assert remaining == [0]


def test_a_full_disk_names_the_file_and_the_sweep_finishes_when_run_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # pyarrow's own error ("Error writing bytes to file") names no file; the temporary file it
    # leaves would hold on to the disk that is short.
    real = pq.write_table
    writes: list[Path] = []

    def full_on_the_fifth(table: pa.Table, where: Path, **kwargs: Any) -> None:
        writes.append(Path(where))
        if len(writes) == 5:  # links/ of the second batch
            Path(where).write_bytes(b"PAR1 partial")
            raise OSError(28, "Error writing bytes to file. Detail: [errno 28] No space left")
        real(table, where, **kwargs)

    monkeypatch.setattr(pq, "write_table", full_on_the_fifth)
    g = grid(seeds=2)
    with pytest.raises(OSError, match="could not be written") as caught:
        sweep.run_sweep(g, tmp_path, flush=Flush(runs=1))
    failed = writes[4].with_name(writes[4].name.removeprefix(".").removesuffix(".tmp"))
    assert str(caught.value) == (
        f"{failed}: could not be written (No space left on device); the runs written before "
        f"are kept: run the sweep again into {tmp_path} to finish it"
    )
    assert caught.value.errno == 28
    assert not writes[4].exists()
    monkeypatch.setattr(pq, "write_table", real)
    remaining: list[int] = []
    sweep.run_sweep(g, tmp_path, on_start=lambda left, _: remaining.append(left))
    assert remaining == [3]
    sweep.run_sweep(g, tmp_path / "whole")
    assert_same_datasets(tmp_path, tmp_path / "whole")
