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
import pytest

from tfrclab import sweep
from tfrclab.cli import main

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


def test_killed_sweep_resumes_without_duplicates_or_losses(
    scenario_file: Path, serial: pd.DataFrame, tmp_path: Path
) -> None:
    # Longer runs, so that the sweep is still going when it is killed.
    slow = tmp_path / "slow.toml"
    slow.write_text(SCENARIO.replace('duration = "2s"', 'duration = "40s"'))
    out = tmp_path / "out"
    args = [str(slow), "--vary", "losses.0.p=0.01,0.02,0.03,0.04", "--seeds", "1-6"]
    env = {**os.environ, "MPLBACKEND": "Agg"}
    process = subprocess.Popen(
        [sys.executable, "-m", "tfrclab", "sweep", *args, "--out", str(out), "--quiet"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    runs_dir = out / "runs"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if runs_dir.exists() and len(list(runs_dir.glob("*.parquet"))) >= 3:
            break
        time.sleep(0.005)
    process.send_signal(signal.SIGKILL)
    process.wait()
    finished = len(list(runs_dir.glob("*.parquet")))
    assert 3 <= finished < 24, "the sweep should have been killed midway"
    # A run killed while writing leaves a temporary file; it must not count.
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
