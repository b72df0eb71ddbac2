"""``run`` on the machine it has: memory when writing, free memory and disk, failed writes."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import tfrclab
from conftest import REPO_ROOT, SMALL_SCENARIO
from tfrclab import room
from tfrclab.cli import main
from tfrclab.cli.scenario_io import load_scenario
from tfrclab.result import Result

DUMBBELL = REPO_ROOT / "scenarios" / "examples" / "dumbbell.toml"

PEAK_RSS = """
import resource, sys
from tfrclab.cli import main
status = main(sys.argv[1:])
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, file=sys.stderr)
sys.exit(status)
"""


def small(tmp_path: Path) -> Path:
    path = tmp_path / "small.toml"
    path.write_text(SMALL_SCENARIO)
    return path


def test_writing_a_run_peaks_near_its_estimate(tmp_path: Path) -> None:
    # 16 flows, 60 s in 1 ms bins: 48 MB of Parquet, once written with a 2.5 GB peak.
    sets = ["--set", "monitor.bin=1ms"]
    scenario = load_scenario(DUMBBELL, [("monitor.bin", "1ms")])
    cost = tfrclab.estimate(scenario)
    memory, disk = room.write_cost(cost)[:2]
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-c", PEAK_RSS, "run", str(DUMBBELL), *sets, "--quiet", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "MPLBACKEND": "Agg"},
    )
    assert done.returncode == 0, done.stderr
    peak = int(done.stderr.strip().splitlines()[-1])
    assert peak <= cost["memory_bytes"] + memory, (peak, cost["memory_bytes"], memory)
    on_disk = sum(f.stat().st_size for f in out.iterdir())
    assert on_disk <= disk
    assert Result.from_parquet(out).bins == 60_000


def test_a_run_that_needs_more_memory_than_is_free_is_refused_before_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(room, "available_memory", lambda: 100 << 20)
    out = tmp_path / "out"
    assert main(["run", str(small(tmp_path)), "--quiet", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert "memory needed (writing the results included)" in err
    assert "MB available" in err
    assert not out.exists()
    # Without --out the run itself fits.
    assert main(["run", str(small(tmp_path)), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["run", str(small(tmp_path)), "--quiet", "--out", str(out), "--force"]) == 0
    assert (out / "run.json").is_file()


def test_files_larger_than_the_free_disk_are_refused_naming_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(room, "free_disk", lambda path: (1_000_000, tmp_path))
    scenario = small(tmp_path)
    out, pcap = tmp_path / "out", tmp_path / "pcap"
    assert main(["run", str(scenario), "--quiet", "--out", str(out), "--pcap", str(pcap)]) == 2
    err = capsys.readouterr().err
    assert f"--pcap {pcap} will take about" in err
    refusal = err.strip().splitlines()[-1]
    assert f"on disk needed for --pcap {pcap} and --out {out}" in refusal
    assert "1.0 MB free" in refusal
    assert not out.exists()
    assert main(["run", str(scenario), "--quiet", "--pcap", str(pcap), "--force"]) == 0
    assert any(pcap.iterdir())


def test_the_api_refuses_traces_larger_than_the_free_disk_unless_forced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # tfrclab.run checks the disk for its trace files as the CLI does, before writing any.
    monkeypatch.setattr(room, "free_disk", lambda path: (1_000, tmp_path))
    scenario = tfrclab.Scenario.from_toml(SMALL_SCENARIO)
    pcap, ns2 = tmp_path / "pcap", tmp_path / "run.tr"
    with pytest.raises(tfrclab.CostError) as caught:
        tfrclab.run(scenario, pcap_dir=pcap, ns2_trace=ns2)
    message = str(caught.value)
    assert f"on disk needed for pcap_dir {pcap} and ns2_trace {ns2}" in message
    assert "0.1 MB free" in message
    assert "\n" not in message
    assert not pcap.exists()
    assert not ns2.exists()
    with pytest.raises(tfrclab.CostError, match=f"ns2_trace {ns2}"):
        tfrclab.run(scenario, ns2_trace=ns2)
    result = tfrclab.run(scenario, pcap_dir=pcap, force=True)
    assert result.traces
    assert any(pcap.iterdir())


def test_a_plain_pcap_shows_its_disk_use(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # No monitor.pcap in the scenario: every link is captured, and counted.
    pcap = tmp_path / "pcap"
    assert main(["run", str(small(tmp_path)), "--quiet", "--pcap", str(pcap)]) == 0
    err = capsys.readouterr().err
    line = next(line for line in err.splitlines() if "will take about" in line)
    estimated = float(line.split("about ")[1].split(" MB")[0]) * 1e6
    written = sum(f.stat().st_size for f in pcap.iterdir())
    assert 0.5 * written <= estimated <= 2 * written, (estimated, written)


def test_a_failed_write_keeps_the_runs_summary_and_says_what_was_lost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def full(self: Result, directory: Path) -> Path:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(directory))

    monkeypatch.setattr(Result, "to_parquet", full)
    out = tmp_path / "out"
    assert main(["run", str(small(tmp_path)), "--json", "--out", str(out)]) == 1
    captured = capsys.readouterr()
    summary = json.loads(captured.out)
    assert summary["events"] > 0
    assert summary["flows"]
    assert f"writing --out {out} failed" in captured.err
    assert "No space left on device" in captured.err
    assert "none of this run's files (Parquet, scenario.toml, run.json, figures)" in captured.err
    assert "it was not created" in captured.err
    assert not out.exists()


@pytest.mark.skipif(
    sys.platform != "linux" or os.geteuid() != 0, reason="mounts a small tmpfs (root, Linux)"
)
def test_a_full_disk_keeps_the_runs_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(disk)], check=False
    )
    if mounted.returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        out, pcap = disk / "out", disk / "pcap"
        argv = ["run", str(small(tmp_path)), "--json", "--out", str(out), "--pcap", str(pcap)]
        assert main(argv) == 2
        assert "on disk needed for --pcap" in capsys.readouterr().err
        assert main([*argv, "--force"]) == 1
        captured = capsys.readouterr()
        assert json.loads(captured.out)["events"] > 0
        errors = [line for line in captured.err.splitlines() if ": error: " in line]
        # One line per trace file (one per link: 10 in this dumbbell) and one for --out.
        assert len(errors) <= 10 + 1, captured.err
        assert f"writing --out {out} failed" in errors[-1]
    finally:
        subprocess.run(["umount", str(disk)], check=False)


def test_writing_that_would_take_the_run_past_the_wall_time_budget_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # As if the machine wrote a value a second: the small run's thousand or so take 15 min.
    monkeypatch.setattr(room, "VALUES_PER_WALL_SECOND", 1.0)
    out = tmp_path / "out"
    assert main(["run", str(small(tmp_path)), "--quiet", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "of wall time expected" in err
    assert "writing --out" in err
    assert not out.exists()
    assert main(["run", str(small(tmp_path)), "--quiet"]) == 0


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_an_ns2_trace_that_cannot_be_written_is_one_error_and_not_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # One ns-2 trace file holds every link: a full disk is one error line naming the file,
    # and the summary does not count records that never reached it.
    scenario = small(tmp_path)
    assert main(["run", str(scenario), "--ns2-trace", "/dev/full"]) == 1
    out, err = capsys.readouterr()
    errors = [line for line in err.splitlines() if "error:" in line]
    assert len(errors) == 1, err
    assert "/dev/full" in errors[0]
    assert "ns2: /dev/full (failed" in out
    assert "records)" not in out
