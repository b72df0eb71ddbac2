"""Careless input gets one line and a clear exit status, never a traceback, a hang or a flood."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO_ROOT, run_cli
from tfrclab import run_channel
from tfrclab.cli import main

DUMBBELL = str(REPO_ROOT / "scenarios" / "examples" / "dumbbell.toml")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", DUMBBELL, "--seed", str(2**64)], "from 0 to 2^64-1"),
        (["sweep", DUMBBELL, "--seeds", "0-100000000", "--out", "x"], "more than 1000000 seeds"),
        (["run", "/dev/zero"], "not a scenario file"),
        (["run", str(REPO_ROOT / "scenarios")], "not a scenario file"),
        (["demo", "--duration", "1e9s"], "at most 10000s for the demo"),
        (["run", DUMBBELL, "--set", "flows.0.count=4\nflows.1.count=9"], "on one line"),
    ],
)
def test_careless_input_is_one_line_and_exit_2(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(args) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert message in err


def test_a_binary_scenario_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.toml"
    path.write_bytes(b"\xff\xfe\x00 not text")
    assert main(["run", str(path)]) == 2
    assert "not a text file" in capsys.readouterr().err


def test_the_channel_refuses_a_run_too_long_to_keep() -> None:
    with pytest.raises(ValueError, match="at most 100000 s"):
        run_channel(duration_s=1e9)


def test_a_reader_that_goes_away_is_not_an_error(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert (
        run_cli("run", DUMBBELL, "--set", "duration=21s", "--out", str(out), "--quiet").returncode
        == 0
    )
    pipeline = subprocess.run(
        f"{sys.executable} -m tfrclab summary {out} | head -1",
        shell=True,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        executable="/bin/bash",
    )
    assert pipeline.stdout.strip()
    assert pipeline.stderr == ""
    status = subprocess.run(
        # `true` exits at once, long before the summary writes: every write meets a closed pipe.
        f"set -o pipefail; {sys.executable} -m tfrclab summary {out} | true",
        shell=True,
        timeout=60,
        check=False,
        executable="/bin/bash",
    )
    assert status.returncode == 0
