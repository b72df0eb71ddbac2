"""Result directories: --out is checked before anything runs, and runs are written atomically."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import tfrclab
from conftest import SMALL_SCENARIO
from tfrclab import _native
from tfrclab.cli import main


@pytest.fixture
def small_file(tmp_path: Path) -> Path:
    path = tmp_path / "small.toml"
    path.write_text(SMALL_SCENARIO)
    return path


def _one_line_exit_2(args: list[str], capsys: pytest.CaptureFixture[str], needle: str) -> None:
    assert main(args) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert needle in err


def test_conflicting_out_is_refused_before_any_simulation(
    small_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    run_dir = tmp_path / "run"
    assert main(["run", str(small_file), "--out", str(run_dir), "--quiet", "--json"]) == 0
    sweep_dir = tmp_path / "sweep"
    assert main(["sweep", str(small_file), "--out", str(sweep_dir), "--quiet", "--json"]) == 0
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    a_file = tmp_path / "file"
    a_file.write_text("x")
    capsys.readouterr()

    built: list[str] = []

    class Refused:
        def __init__(self, *args: object) -> None:
            built.append("built")
            raise AssertionError("a simulation was built")

    monkeypatch.setattr(_native, "Simulation", Refused)
    run = ["run", str(small_file), "--quiet", "--out"]
    _one_line_exit_2([*run, str(sweep_dir)], capsys, "is a sweep directory")
    _one_line_exit_2([*run, str(run_dir)], capsys, "pass --force to replace it")
    _one_line_exit_2([*run, str(other)], capsys, "not a tfrclab run")
    _one_line_exit_2([*run, str(a_file)], capsys, "is a file")
    _one_line_exit_2([*run, str(a_file / "below")], capsys, "not a directory")
    sweep = ["sweep", str(small_file), "--quiet", "--out"]
    _one_line_exit_2([*sweep, str(run_dir)], capsys, "is a run directory")
    _one_line_exit_2([*sweep, str(other)], capsys, "not a tfrclab sweep")
    assert built == []
    assert (other / "notes.txt").read_text() == "mine"


def test_force_replaces_a_run_directory_whole(
    small_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    assert main(["run", str(small_file), "--out", str(out), "--quiet", "--seed", "1"]) == 0
    (out / "stray.txt").write_text("left from before")
    assert (
        main(["run", str(small_file), "--out", str(out), "--quiet", "--seed", "2", "--force"]) == 0
    )
    assert json.loads((out / "run.json").read_text())["seed"] == 2
    assert not (out / "stray.txt").exists()
    assert not list(tmp_path.glob(".run.partial-*"))
    capsys.readouterr()


def test_an_interrupted_write_leaves_the_old_run(
    small_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = tmp_path / "run"
    assert main(["run", str(small_file), "--out", str(out), "--quiet", "--seed", "1"]) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def interrupted(*_args: object) -> list[Path]:
        raise KeyboardInterrupt

    monkeypatch.setattr("tfrclab.figures.plot_run", interrupted)
    args = ["run", str(small_file), "--out", str(out), "--quiet", "--seed", "2", "--force"]
    assert main(args) == 130
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert not list(tmp_path.glob(".run.partial-*"))
    capsys.readouterr()


def test_incomplete_or_malformed_run_directories_are_refused(
    small_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    assert main(["run", str(small_file), "--out", str(out), "--quiet"]) == 0
    capsys.readouterr()
    meta = json.loads((out / "run.json").read_text())
    (out / "run.json").write_text(json.dumps({**meta, "bin_ns": 0}))
    _one_line_exit_2(["plot", str(out)], capsys, "bin_ns must be positive")
    (out / "run.json").write_text("{not json")
    _one_line_exit_2(["summary", str(out)], capsys, "not valid JSON")
    (out / "run.json").unlink()
    _one_line_exit_2(["summary", str(out)], capsys, "neither a complete run directory")
    with pytest.raises(ValueError, match=r"no run\.json"):
        tfrclab.Result.from_parquet(out)
    # A sweep manifest that is not one.
    sweep_dir = tmp_path / "sweep"
    sweep_dir.mkdir()
    (sweep_dir / "sweep.json").write_text('{"format": 2}')
    _one_line_exit_2(["summary", str(sweep_dir)], capsys, "not a sweep manifest")


def test_a_sweep_of_seeds_alone_draws_its_figure(small_file: Path, tmp_path: Path) -> None:
    # Nothing varied but the seed: the figure's x axis is the seed (this used to fail at the
    # end, after every run, on the axis label).
    out = tmp_path / "seeds"
    assert main(["sweep", str(small_file), "--seeds", "2", "--out", str(out), "--quiet"]) == 0
    assert list(out.glob("*.png"))
