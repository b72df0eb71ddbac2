"""Result directories: --out is checked before anything runs, and runs are written atomically."""

from __future__ import annotations

import importlib
import json
import os
import sys
import time
from pathlib import Path

import pytest

import tfrclab
from conftest import REPO_ROOT, SMALL_SCENARIO
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


# Imported before any test patches the calls below, so that no module binds a patched one
# (``from tfrclab.fluid.solver import solve``) for the rest of the session.
for _module in (
    "tfrclab.demo",
    "tfrclab.examples",
    "tfrclab.cli.fluid",
    "tfrclab.fluid.compare",
    "tfrclab.ns2.classes",
    "tfrclab.ns2.cli",
    "tfrclab.ns2.crosscheck",
    "tfrclab.reproduce.cli",
    "tfrclab.reproduce.registry",
    "tfrclab.reproduce.report",
    "tfrclab.sweep",
    "tfrclab.testbed.bench",
    "tfrclab.testbed.cli",
    "tfrclab.testbed.experiments",
    "tfrclab.cli.transport",
    "tfrclab.cli.twin",
    "tfrclab.evaluate.cli",
):
    importlib.import_module(_module)


def _no_work(*_args: object, **_kwargs: object) -> None:
    raise AssertionError("work started before the output location was checked")


# Every command that writes, with an output place no process can write to (for root too: /proc
# and /sys take no new entries), and the call that would start its work.
_UNWRITABLE = [
    (["run", "{scenario}", "--out", "/proc/tfrclab-test/run"], "tfrclab._native.Simulation"),
    (["run", "{scenario}", "--pcap", "/sys/tfrclab-test/pcap"], "tfrclab._native.Simulation"),
    (["run", "{scenario}", "--ns2-trace", "/proc/tfrclab-test.tr"], "tfrclab._native.Simulation"),
    (["sweep", "{scenario}", "--out", "/proc/tfrclab-test/sweep"], "tfrclab.sweep._prepare"),
    (["fluid", "{scenario}", "--out", "/sys/tfrclab-test"], "tfrclab.fluid.solver.solve"),
    (
        ["reproduce", "floyd2000/fig09", "--out", "/proc/tfrclab-test"],
        "tfrclab.reproduce.runner.run_experiment",
    ),
    (["demo", "--out", "/proc/tfrclab-test/demo"], "tfrclab.demo.run_demo"),
    (["examples", "/sys/kernel/tfrclab-test"], "tfrclab.examples.copy_scenarios"),
    (
        ["export", "ns2", "{scenario}", "-o", "/proc/tfrclab-test.tcl"],
        "tfrclab.ns2.export.export_tcl",
    ),
    (
        ["testbed", "--report", "/proc/tfrclab-test.json", "--", "true"],
        "tfrclab.testbed.emulator.Testbed",
    ),
    (
        ["testbed", "--log", "/sys/tfrclab-test.log", "--", "true"],
        "tfrclab.testbed.emulator.Testbed",
    ),
    (
        ["recv", "--bind", "127.0.0.1:0", "--duration", "60s", "--out", "/proc/tfrclab-test"],
        "tfrclab.transport.recv",
    ),
    (
        ["send", "--to", "127.0.0.1:9", "--duration", "1s", "--out", "/proc/tfrclab-test"],
        "tfrclab.transport.send",
    ),
    (["twin", "{twin}", "--out", "/proc/tfrclab-test/twin"], "tfrclab.twin.twin"),
    (
        ["evaluate", "tfrc", "--quick", "--out", "/sys/tfrclab-test"],
        "tfrclab.evaluate.scorecard.evaluate",
    ),
]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs Linux's /proc and /sys")
@pytest.mark.parametrize(
    ("args", "work"),
    _UNWRITABLE,
    ids=[" ".join(a for a in args if not a.startswith(("{", "/"))) for args, _ in _UNWRITABLE],
)
def test_an_unwritable_output_is_refused_before_any_work(
    args: list[str],
    work: str,
    small_file: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(work, _no_work)
    twin = REPO_ROOT / "python" / "tfrclab" / "scenarios" / "twin" / "cubic-tfrc.toml"
    argv = [arg.replace("{scenario}", str(small_file)).replace("{twin}", str(twin)) for arg in args]
    place = next(arg for arg in argv if arg.startswith(("/proc/", "/sys/")))
    started = time.perf_counter()
    status = main(argv)
    elapsed = time.perf_counter() - started
    err = capsys.readouterr().err
    assert status == 2, err
    assert err.startswith(f"tfrclab {argv[0]}: error: "), err
    assert f"{place}: cannot write there (cannot create anything in " in err
    assert len(err.strip().splitlines()) == 1, err
    assert elapsed < 0.5  # a check, not a run


def test_plot_refuses_a_directory_it_cannot_write_before_drawing(
    small_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tfrclab import figures, outdir

    run_dir = tmp_path / "run"
    assert main(["run", str(small_file), "--out", str(run_dir), "--quiet", "--json"]) == 0
    capsys.readouterr()
    # Read-only for everyone; root ignores permission bits, so the probe is told as much.
    run_dir.chmod(0o555)
    real = outdir._unwritable
    monkeypatch.setattr(
        outdir,
        "_unwritable",
        lambda d: "read-only" if d == run_dir else real(d),
    )
    monkeypatch.setattr(figures, "plot_run", _no_work)
    try:
        assert main(["plot", str(run_dir)]) == 2
    finally:
        run_dir.chmod(0o755)
    err = capsys.readouterr().err
    assert err == f"tfrclab plot: error: {run_dir}: cannot write there (read-only)\n"


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_file_that_cannot_be_written_is_named(
    small_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # /dev/full opens for writing (the check before the work passes), then every write fails
    # with ENOSPC, whose own message names no file.
    assert main(["export", "ns2", str(small_file), "-o", "/dev/full"]) == 1
    err = capsys.readouterr().err
    assert err == (
        "tfrclab export: error: --output /dev/full: not written (No space left on device)\n"
    )
