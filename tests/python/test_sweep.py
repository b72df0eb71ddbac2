"""``tfrclab sweep``.

The same numbers serially, with --jobs 2 and on a local Dask cluster; resuming a killed sweep
without duplicates or losses.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from conftest import is_worker, kill_and_count_orphans
from tfrclab import Scenario, sweep
from tfrclab.cli import main
from tfrclab.simulate import run

SCENARIO = """\
name = "sweep-test"
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

GRID = ["--vary", "losses.0.p=0.01,0.05", "--vary", "bottleneck.rate=2Mbps,3Mbps", "--seeds", "1-3"]


@pytest.fixture(scope="module")
def scenario_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sweep") / "scenario.toml"
    path.write_text(SCENARIO)
    return path


def numbers(runs: pd.DataFrame) -> pd.DataFrame:
    """The rows without wall-clock times (everything that must be identical)."""
    return runs.drop(columns=["wall_seconds"]).reset_index(drop=True)


@pytest.fixture(scope="module")
def serial(scenario_file: Path, tmp_path_factory: pytest.TempPathFactory) -> pd.DataFrame:
    out = tmp_path_factory.mktemp("serial")
    assert main(["sweep", str(scenario_file), *GRID, "--out", str(out), "--quiet", "--json"]) == 0
    return sweep.load(out)


def test_serial_sweep_rows(serial: pd.DataFrame) -> None:
    # 2 x 2 values x 3 seeds = 12 runs of 2 flows.
    assert len(serial) == 24
    assert serial["run"].nunique() == 12
    assert not serial.duplicated(["run", "id"]).any()
    assert list(serial.columns[:4]) == ["run", "seed", "losses.0.p", "bottleneck.rate"]
    assert set(serial["losses.0.p"]) == {0.01, 0.05}
    # Typed: rates as bits/s, so they sort as rates.
    assert set(serial["bottleneck.rate"]) == {2e6, 3e6}
    assert serial["seed"].tolist()[:6] == [1, 1, 2, 2, 3, 3]
    # The varied value took effect: more loss, more loss events.
    by_p = serial.groupby("losses.0.p")["packet_loss_rate"].mean()
    assert by_p[0.05] > by_p[0.01]


def test_jobs_2_gives_identical_numbers(
    scenario_file: Path, serial: pd.DataFrame, tmp_path: Path
) -> None:
    args = ["sweep", str(scenario_file), *GRID, "--out", str(tmp_path), "--jobs", "2", "--quiet"]
    assert main([*args, "--json"]) == 0
    pd.testing.assert_frame_equal(numbers(sweep.load(tmp_path)), numbers(serial))


def test_local_dask_cluster_gives_identical_numbers(
    scenario_file: Path, serial: pd.DataFrame, tmp_path: Path
) -> None:
    args = ["sweep", str(scenario_file), *GRID, "--out", str(tmp_path), "--quiet", "--json"]
    assert main([*args, "--executor", "dask", "--jobs", "2"]) == 0
    pd.testing.assert_frame_equal(numbers(sweep.load(tmp_path)), numbers(serial))


def finished_runs(out: Path) -> set[str]:
    """The keys of the runs whose files are complete (each ``runs/`` file may hold several)."""
    keys: set[str] = set()
    for path in (out / "runs").glob("*.parquet"):
        keys.update(pq.read_table(path, columns=["run"]).column("run").to_pylist())
    return keys


def test_killed_sweep_resumes_without_duplicates_or_losses(
    scenario_file: Path, serial: pd.DataFrame, tmp_path: Path
) -> None:
    # Longer runs, written three at a time, so that the sweep is still going when it is killed.
    slow = tmp_path / "slow.toml"
    slow.write_text(SCENARIO.replace('duration = "2s"', 'duration = "200s"'))
    out = tmp_path / "out"
    script = (
        "import sys; from tfrclab import Scenario, sweep; "
        "grid = sweep.Grid(Scenario.load(sys.argv[1]), "
        "vary=(('losses.0.p', (0.01, 0.02, 0.03, 0.04)),), seeds=tuple(range(1, 7))); "
        "sweep.run_sweep(grid, sys.argv[2], flush=sweep.Flush(runs=3, seconds=3600))"
    )
    env = {**os.environ, "MPLBACKEND": "Agg"}
    process = subprocess.Popen(
        [sys.executable, "-c", script, str(slow), str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    runs_dir = out / "runs"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if runs_dir.exists() and any(runs_dir.glob("*.parquet")):
            break
        time.sleep(0.005)
    process.send_signal(signal.SIGKILL)
    process.wait()
    finished = len(finished_runs(out))
    assert 3 <= finished < 24, "the sweep should have been killed midway"
    assert finished % 3 == 0, "batches are written whole"
    # A batch killed while writing leaves a temporary file; it must not count.
    (runs_dir / ".deadbeef.parquet.tmp").write_bytes(b"partial")

    messages: list[str] = []
    grid = sweep.grid_from_manifest(sweep.read_manifest(out))
    resumed = sweep.run_sweep(grid, out, on_start=lambda left, total: messages.append(f"{left}"))
    assert messages == [str(24 - finished)]
    assert len(resumed) == 48
    assert resumed["run"].nunique() == 24
    assert not resumed.duplicated(["run", "id"]).any()
    assert not list(runs_dir.glob(".*.tmp"))
    # The resumed sweep has exactly the numbers of one uninterrupted run of the same grid.
    fresh = sweep.run_sweep(grid, tmp_path / "fresh", jobs=2)
    pd.testing.assert_frame_equal(numbers(resumed), numbers(fresh))
    # Running it again does nothing.
    again: list[str] = []
    sweep.run_sweep(grid, out, on_start=lambda left, total: again.append(f"{left}/{total}"))
    assert again == ["0/24"]


def test_a_different_sweep_in_the_same_directory_is_refused(
    scenario_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["sweep", str(scenario_file), "--seeds", "1", "--out", str(tmp_path), "--quiet"]
    assert main([*base, "--vary", "losses.0.p=0.01", "--json"]) == 0
    capsys.readouterr()
    assert main([*base, "--vary", "losses.0.p=0.02"]) == 2
    assert "pass --extend" in capsys.readouterr().err
    assert main([*base, "--vary", "losses.0.p=0.01", "--set", "duration=3s"]) == 2
    assert "different sweep" in capsys.readouterr().err


def test_bad_vary_fails_before_anything_runs(
    scenario_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "bad"
    args = ["sweep", str(scenario_file), "--vary", "losses.0.p=0.01,7", "--out", str(out)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("tfrclab sweep: error: losses[0]")
    assert not out.exists()
    for bad in ("--vary=losses.0.p", "--seeds=3-1", "--seeds=1,1", "--jobs=0"):
        assert main(["sweep", str(scenario_file), bad, "--out", str(out)]) == 2
        assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_summary_and_plot_of_a_sweep(
    scenario_file: Path, serial: pd.DataFrame, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "s"
    assert main(["sweep", str(scenario_file), *GRID, "--out", str(out), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "12 of 12 runs" in text
    assert (out / "sweep.png").read_bytes()[:4] == b"\x89PNG"
    manifest = json.loads((out / "sweep.json").read_text())
    assert manifest["seeds"] == [1, 2, 3]
    summary = sweep.summarize(sweep.load(out, "classes"), ["losses.0.p", "bottleneck.rate"])
    assert len(summary) == 4
    assert summary["runs"].tolist() == [3, 3, 3, 3]
    assert sweep.SweepResult.open(out).summary().equals(summary)
    (out / "sweep.png").unlink()
    assert main(["plot", str(out)]) == 0
    assert (out / "sweep.png").exists()
    assert main(["summary", str(out)]) == 0
    text = capsys.readouterr().out
    assert "losses.0.p" in text
    assert "3Mbps" in text  # parameters are shown as written


def test_grid_and_parsers() -> None:
    assert sweep.parse_seeds("1-3,7") == [1, 2, 3, 7]
    assert sweep.parse_vary("a.b=1,2") == ("a.b", [1, 2])
    with pytest.raises(ValueError, match="repeated"):
        sweep.parse_vary("a=1,1")
    with pytest.raises(ValueError, match="seeds"):
        sweep.parse_seeds("x")


def test_zipped_paths_make_one_axis(scenario_file: Path, tmp_path: Path) -> None:
    grid = sweep.Grid(
        scenario=Scenario.load(scenario_file),
        vary=(("losses.0.p", (0.01, 0.05)),),
        zip=(("flows.0.count", (1, 2, 3)), ("bottleneck.rate", ("1Mbps", "2Mbps", "3Mbps"))),
        seeds=(1, 2),
    )
    combos = grid.combinations()
    assert len(combos) == 6
    assert combos[0] == (("losses.0.p", 0.01), ("flows.0.count", 1), ("bottleneck.rate", "1Mbps"))
    assert combos[5] == (("losses.0.p", 0.05), ("flows.0.count", 3), ("bottleneck.rate", "3Mbps"))
    runs = sweep.run_sweep(grid, tmp_path)
    assert runs["run"].nunique() == 12
    pairs = set(zip(runs["flows.0.count"], runs["bottleneck.rate"], strict=True))
    assert pairs == {(1, 1e6), (2, 2e6), (3, 3e6)}
    # Each run has as many flows as its zipped count.
    per_run = runs.groupby("run").agg(flows=("id", "count"), count=("flows.0.count", "first"))
    assert (per_run["flows"] == per_run["count"]).all()
    with pytest.raises(ValueError, match="as many values"):
        sweep.Grid(
            scenario=grid.scenario,
            vary=(),
            zip=(("flows.0.count", (1, 2)), ("bottleneck.rate", ("1Mbps",))),
            seeds=(1,),
        )


def test_extending_a_sweep_reruns_nothing_finished(
    scenario_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["sweep", str(scenario_file), "--vary", "losses.0.p=0.01,0.05", "--out", str(tmp_path)]
    assert main([*base, "--seeds", "1-2", "--quiet", "--json"]) == 0
    first = {p.name: p.stat().st_mtime_ns for p in (tmp_path / "runs").iterdir()}
    capsys.readouterr()
    assert main([*base, "--seeds", "1-4", "--quiet"]) == 2
    assert "--extend" in capsys.readouterr().err
    remaining: list[int] = []
    grid = sweep.Grid(
        scenario=Scenario.load(scenario_file),
        vary=(("losses.0.p", (0.01, 0.05, 0.1)),),
        seeds=(1, 2, 3, 4),
    )
    runs = sweep.run_sweep(
        grid, tmp_path, extend=True, on_start=lambda left, _: remaining.append(left)
    )
    assert remaining == [12 - 4]
    assert runs["run"].nunique() == 12
    # The four finished runs were not written again.
    after = {p.name: p.stat().st_mtime_ns for p in (tmp_path / "runs").iterdir()}
    assert all(after[name] == stamp for name, stamp in first.items())
    assert sweep.read_manifest(tmp_path)["seeds"] == [1, 2, 3, 4]


def test_summary_gives_the_student_t_interval_over_seeds(
    serial: pd.DataFrame, tmp_path: Path
) -> None:
    classes = pd.DataFrame(
        {
            "seed": [1, 2, 3, 4],
            "p": [0.1] * 4,
            "class": ["tcp/reno"] * 4,
            **{figure: [1.0, 2.0, 3.0, 4.0] for figure in sweep.CLASS_FIGURES},
        }
    )
    row = sweep.summarize(classes, ["p"]).iloc[0]
    # mean 2.5, s = 1.2910, t(0.975, 3) = 3.1824: half-width 3.1824 * 1.2910 / 2 = 2.0543.
    assert row["normalized_throughput"] == pytest.approx(2.5)
    assert row["normalized_throughput_std"] == pytest.approx(1.2909944, rel=1e-6)
    assert row["normalized_throughput_ci"] == pytest.approx(2.0542603, rel=1e-6)
    assert row["runs"] == 4


def test_duration_parameters_sort_as_durations(scenario_file: Path, tmp_path: Path) -> None:
    grid = sweep.Grid(
        scenario=Scenario.load(scenario_file),
        vary=(("bottleneck.delay", ("100ms", "20ms", "5ms")),),
        seeds=(1,),
    )
    runs = sweep.run_sweep(grid, tmp_path)
    assert runs["bottleneck.delay"].dtype == float
    assert sorted(set(runs["bottleneck.delay"])) == [0.005, 0.02, 0.1]
    assert sweep.read_manifest(tmp_path)["units"] == {"bottleneck.delay": "duration"}


def test_series_are_kept_only_when_asked(scenario_file: Path, tmp_path: Path) -> None:
    grid = sweep.Grid(scenario=Scenario.load(scenario_file), vary=(), seeds=(1, 2), series=True)
    sweep.run_sweep(grid, tmp_path / "with")
    flows = sweep.load(tmp_path / "with", "flow_series")
    assert len(flows) == 2 * 2 * 20  # seeds x flows x bins
    links = sweep.load(tmp_path / "with", "link_series")
    assert set(links["link"]) == {"bottleneck", "bottleneck_reverse"}
    plain = sweep.Grid(scenario=grid.scenario, vary=(), seeds=(1,))
    sweep.run_sweep(plain, tmp_path / "without")
    with pytest.raises(ValueError, match="--series"):
        sweep.load(tmp_path / "without", "flow_series")
    assert not sweep.load(tmp_path / "without", "links").empty


def test_a_locked_directory_is_refused(
    scenario_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["sweep", str(scenario_file), "--out", str(tmp_path), "--quiet"]
    assert main([*args, "--json"]) == 0
    capsys.readouterr()
    # Another process holds the lock.
    script = (
        "import sys, time; from pathlib import Path; from tfrclab.sweep import _Lock\n"
        "with _Lock(Path(sys.argv[1])): print('held', flush=True); time.sleep(30)"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", script, str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline() == "held\n"
        assert main(args) == 1
        assert f"in use by another sweep (process {holder.pid})" in capsys.readouterr().err
    finally:
        holder.kill()  # SIGKILL: the lock file stays, naming a process that has ended
        holder.wait()
    assert (tmp_path / ".lock").read_text() == f"{holder.pid}\n"
    # A stale lock (its process is gone) is taken over, and released at the end.
    assert main([*args, "--json"]) == 0
    assert not (tmp_path / ".lock").exists()


_KILLED_STARTING = r"""
import os, signal, sys
from tfrclab.cli import main

real = os.replace

def replace(src, dst, *args, **kwargs):
    if str(dst).endswith("sweep.json"):
        os.kill(os.getpid(), signal.SIGKILL)  # its lock taken, its manifest not in place
    return real(src, dst, *args, **kwargs)

os.replace = replace
main(sys.argv[1:])
"""


def test_a_lock_file_that_is_a_symbolic_link_is_refused_and_its_target_kept(
    scenario_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, target = tmp_path / "out", tmp_path / "precious.txt"
    args = ["sweep", str(scenario_file), "--out", str(out), "--quiet"]
    assert main([*args, "--json"]) == 0
    capsys.readouterr()
    target.write_text("precious\n")
    (out / ".lock").symlink_to(target)
    assert main(args) == 1
    err = capsys.readouterr().err
    assert f"{out / '.lock'}" in err
    assert len(err.strip().splitlines()) == 1, err
    assert target.read_text() == "precious\n"


def test_a_sweep_killed_while_starting_leaves_a_directory_the_next_one_takes(
    scenario_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    args = ["sweep", str(scenario_file), "--seeds", "1-2", "--out", str(out), "--quiet"]
    killed = subprocess.run(
        [sys.executable, "-c", _KILLED_STARTING, *args], timeout=120, check=False
    )
    assert killed.returncode == -signal.SIGKILL
    assert {path.name for path in out.iterdir()} >= {".lock", ".sweep.json.tmp", "runs"}
    assert not (out / "sweep.json").exists()
    assert main([*args, "--json"]) == 0, capsys.readouterr().err
    assert json.loads(capsys.readouterr().out)["runs"] == 2
    # Anything else in the directory is still refused, untouched.
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / ".lock").write_text("1\n")
    (tmp_path / "other" / "notes.txt").write_text("mine")
    assert main([*args[:5], str(tmp_path / "other"), "--quiet"]) == 2
    assert "holds files that are not a tfrclab sweep" in capsys.readouterr().err


def test_a_truncated_run_file_is_run_again(scenario_file: Path, tmp_path: Path) -> None:
    grid = sweep.Grid(scenario=Scenario.load(scenario_file), vary=(), seeds=(1, 2))
    sweep.run_sweep(grid, tmp_path)
    victim = next((tmp_path / "runs").iterdir())
    before = pd.read_parquet(victim)
    data = victim.read_bytes()
    victim.write_bytes(data[: len(data) // 2])
    remaining: list[int] = []
    runs = sweep.run_sweep(grid, tmp_path, on_start=lambda left, _: remaining.append(left))
    # The runs of the damaged file (its batch: here both) run again.
    assert remaining == [before["run"].nunique()]
    pd.testing.assert_frame_equal(numbers(pd.read_parquet(victim)), numbers(before))
    assert runs["run"].nunique() == 2


def test_table_values_in_vary_summarize_and_plot(
    scenario_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [
        "sweep",
        str(scenario_file),
        "--vary",
        'flows.0.start={ uniform = ["0s", "0.5s"] },"0s"',
        "--out",
        str(tmp_path),
        "--quiet",
    ]
    assert main(args) == 0
    assert (tmp_path / "sweep.png").exists()
    assert "uniform" in capsys.readouterr().out


def test_sigterm_ends_the_workers_and_a_killed_worker_is_retried(
    scenario_file: Path, tmp_path: Path
) -> None:
    slow = tmp_path / "slow.toml"
    slow.write_text(SCENARIO.replace('duration = "2s"', 'duration = "60s"'))
    out = tmp_path / "out"
    env = {**os.environ, "MPLBACKEND": "Agg"}
    args = [sys.executable, "-m", "tfrclab", "sweep", str(slow), "--seeds", "1-4", "--jobs", "2"]

    def workers(pid: int) -> list[int]:
        found = []
        for task in Path(f"/proc/{pid}/task").iterdir():
            text = (task / "children").read_text().split()
            found.extend(int(child) for child in text)
        return found

    def wait_for_workers(pid: int) -> list[int]:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            children = [c for c in workers(pid) if is_worker(c)]
            if len(children) >= 2:
                return children
            time.sleep(0.05)
        raise AssertionError("no workers started")

    # A worker killed by the OS: its run is retried and the sweep still finishes.
    process = subprocess.Popen([*args, "--out", str(out), "--quiet", "--json"], env=env)
    os.kill(wait_for_workers(process.pid)[0], signal.SIGKILL)
    assert process.wait(timeout=300) == 0
    assert sweep.load(out)["run"].nunique() == 4

    # SIGTERM: the sweep stops at once and takes its workers with it.
    process = subprocess.Popen(
        [*args, "--seeds", "5-8", "--extend", "--out", str(out), "--quiet"],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    children = wait_for_workers(process.pid)
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == 130
    deadline = time.monotonic() + 10
    while any(_alive(c) for c in children) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(c) for c in children)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except OSError:
        return False
    return state != "Z"


def test_a_sweep_result_shows_itself_in_notebooks(scenario_file: Path, tmp_path: Path) -> None:
    grid = sweep.Grid(
        scenario=Scenario.load(scenario_file), vary=(("losses.0.p", (0.01, 0.05)),), seeds=(1, 2)
    )
    sweep.run_sweep(grid, tmp_path)
    opened = sweep.SweepResult.open(tmp_path)
    assert opened.params == ["losses.0.p"]
    html = opened._repr_html_()
    assert "4 of 4 runs" in html
    # The table summary prints: a row per value (and protocol), the values as written.
    assert [line.split()[0] for line in html.splitlines() if " cbr " in line] == ["0.01", "0.05"]


def test_trace_fields_are_kept_in_the_flow_series(tmp_path: Path) -> None:
    text = """
duration = "3s"
[monitor]
bin = "1s"
[topology]
kind = "dumbbell"
hosts = 2
bottleneck = { rate = "2Mbps", delay = "10ms" }
[[flows]]
kind = "tfrc"
name = "f"
[[flows]]
kind = "tcp"
name = "t"
"""
    scenario = Scenario.from_toml(text)
    with pytest.raises(ValueError, match="--series"):
        sweep.Grid(scenario=scenario, vary=(), seeds=(1,), trace=("rtt_s",))
    grid = sweep.Grid(scenario=scenario, vary=(), seeds=(1,), series=True, trace=("rtt_s", "cwnd"))
    sweep.run_sweep(grid, tmp_path / "traced")
    rows = sweep.load(tmp_path / "traced", "flow_series").set_index("flow")
    result = run(scenario, seed=1)
    assert list(rows.loc["f", "rtt_s"]) == list(result.trace("f")["rtt_s"])
    assert list(rows.loc["t", "cwnd"]) == list(result.trace("t")["cwnd"])
    assert rows.loc["f", "cwnd"].isna().all()  # TFRC reports no cwnd
    assert rows.loc["t", "rtt_s"].isna().all()
    assert sweep.read_manifest(tmp_path / "traced")["trace"] == ["rtt_s", "cwnd"]
    other = sweep.Grid(scenario=scenario, vary=(), seeds=(1,), series=True, trace=("rtt_s",))
    with pytest.raises(ValueError, match="trace fields"):
        sweep.run_sweep(other, tmp_path / "traced")


def test_sigkill_takes_the_workers_with_it(scenario_file: Path, tmp_path: Path) -> None:
    slow = tmp_path / "slow.toml"
    slow.write_text(SCENARIO.replace('duration = "2s"', 'duration = "60s"'))
    args = [sys.executable, "-m", "tfrclab", "sweep", str(slow), "--seeds", "1-8", "--jobs", "2"]
    outlived_s = kill_and_count_orphans([*args, "--out", str(tmp_path / "out")], workers=2)
    assert outlived_s < 2


_LOCK_RACE = r"""
import json, os, subprocess, sys, time
from pathlib import Path
from tfrclab.sweep import SweepError, _Lock

out, rounds, racers = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
dead = subprocess.Popen(["true"])
dead.wait()
counts = {"overlaps": 0, "errors": 0, "rounds_without_holder": 0}
for round in range(rounds):
    (out / "holder").unlink(missing_ok=True)
    if round % 2:
        (out / ".lock").unlink(missing_ok=True)  # no lock at all
    else:
        (out / ".lock").write_text(f"{dead.pid}\n")  # stale: its process has ended
    go_r, go_w = os.pipe()
    children = []
    for _ in range(racers):
        pid = os.fork()
        if pid == 0:
            os.close(go_w)
            os.read(go_r, 1)  # all start together, when the pipe closes
            try:
                with _Lock(out):
                    try:
                        os.close(os.open(out / "holder", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
                    except FileExistsError:
                        os._exit(3)  # another process holds the lock too
                    time.sleep(0.01)
                    os.unlink(out / "holder")
                os._exit(0)
            except SweepError:
                os._exit(1)
            except BaseException:
                os._exit(2)
        children.append(pid)
    os.close(go_r)
    os.close(go_w)
    codes = [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in children]
    counts["overlaps"] += codes.count(3)
    counts["errors"] += sum(code not in (0, 1, 3) for code in codes)
    counts["rounds_without_holder"] += 0 not in codes
print(json.dumps(counts))
"""


def test_the_lock_admits_one_process_when_many_take_a_stale_lock(tmp_path: Path) -> None:
    # 16 processes at once take a lock left by a process that has ended (or no lock), 30
    # times. Before the lock was the kernel's, a second holder turned up 38-48 times.
    done = subprocess.run(
        [sys.executable, "-c", _LOCK_RACE, str(tmp_path), "30", "16"],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    counts = json.loads(done.stdout)
    assert counts == {"overlaps": 0, "errors": 0, "rounds_without_holder": 0}


def test_a_damaged_dataset_file_is_named_and_repaired(
    scenario_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["sweep", str(scenario_file), "--seeds", "1-4", "--out", str(tmp_path), "--quiet"]
    assert main([*args, "--json"]) == 0
    capsys.readouterr()
    victim = next((tmp_path / "classes").glob("*.parquet"))
    victim.write_bytes(victim.read_bytes()[:100])
    # Reading it names the file (one line, no traceback) instead of leaving its runs out.
    assert main(["summary", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"tfrclab summary: error: {victim}: damaged (")
    assert "run the sweep again" in err
    assert len(err.splitlines()) == 1
    # Running the sweep again says what it repairs, and ends with every run.
    assert main(args) == 0
    out, err = capsys.readouterr()
    assert f"repairing: {victim} is damaged (" in err
    assert f"{tmp_path}: 4 of 4 runs" in out


def test_an_unguarded_script_is_told_to_guard_its_sweep(
    scenario_file: Path, tmp_path: Path
) -> None:
    # Spawned workers import the main script; without the guard each would start a sweep of
    # its own. Each says why in one line and the sweep names the likely cause.
    script = tmp_path / "unguarded.py"
    script.write_text(
        "import sys\n"
        "from tfrclab import Scenario, sweep\n"
        f"grid = sweep.Grid(Scenario.load({str(scenario_file)!r}), "
        "vary=(('losses.0.p', (0.01, 0.02)),), seeds=(1,))\n"
        f"sweep.run_sweep(grid, {str(tmp_path / 'out')!r}, jobs=2)\n"
    )
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "MPLBACKEND": "Agg"},
    )
    assert done.returncode != 0
    assert '`if __name__ == "__main__":`' in done.stderr
    assert "put that call under" in done.stderr
    assert "BrokenProcessPool" not in done.stderr.splitlines()[-1]
    assert "without `if __name__" in done.stderr.splitlines()[-1]
