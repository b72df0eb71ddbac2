"""The ``tfrclab`` command line, run both in-process (``main``) and as ``python -m tfrclab``."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import tfrclab
from conftest import REPO_ROOT, rfc5348_rate, run_cli
from tfrclab import _native
from tfrclab.cli import main, version_line
from tfrclab.cli.app import COMMAND_MODULES

KNOWN = ("--size", "1460", "--rtt", "100ms", "--p", "0.01")


def test_version_subprocess() -> None:
    result = run_cli("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"tfrclab {tfrclab.__version__} ({_native.build()} build)"
    assert result.stderr == ""


@pytest.mark.parametrize("argv", [["--version"], ["run", "--help"]])
def test_start_up_imports_no_heavy_library(argv: list[str]) -> None:
    # What keeps `tfrclab --version` and `tfrclab run --help` fast: every command registers
    # at start-up, and none may pull in numpy, pandas, pyarrow or matplotlib to do so; nor the
    # standard modules that cost milliseconds each and are only needed once a command runs
    # (typing and dataclasses, subprocess, and shutil, which argparse imports for the terminal
    # width unless the parser's formatter reads it). Counted beyond what the interpreter had
    # loaded before tfrclab (an environment's site hooks may import some of them themselves).
    probe = (
        "import sys\n"
        "before = {m.split('.')[0] for m in sys.modules}\n"
        "from tfrclab.cli import main\n"
        "try:\n"
        f"    main({argv!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = ('numpy', 'pandas', 'pyarrow', 'matplotlib', 'typing', 'dataclasses',\n"
        "         'subprocess', 'shutil')\n"
        "print(sorted(({m.split('.')[0] for m in sys.modules} - before) & set(heavy)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip().splitlines()[-1] == "[]"


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_run_prints_its_tables_without_pandas(json_flag: list[str]) -> None:
    # `tfrclab run` without --out prints its tables (or --json) from the summary's columns:
    # pandas and pyarrow (a quarter of a second to import) and matplotlib are for --out, the
    # packet trace and the DataFrame views. numpy is not checked: the native module's results
    # are numpy arrays, so the simulator's own finish() imports it.
    path = REPO_ROOT / "python/tfrclab/scenarios/papers/floyd2000/fig22.toml"
    probe = (
        "import sys\n"
        "before = {m.split('.')[0] for m in sys.modules}\n"
        "from tfrclab.cli import main\n"
        f"code = main(['run', {str(path)!r}, '--quiet', *{json_flag!r}])\n"
        "heavy = ('pandas', 'pyarrow', 'matplotlib')\n"
        "print(code, sorted(({m.split('.')[0] for m in sys.modules} - before) & set(heavy)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip().splitlines()[-1] == "0 []"


def test_command_modules_name_every_command_and_its_module() -> None:
    # main() registers only the module of the command it runs: the table must list every
    # command the whole parser has, in its order, with the module that registers it.
    from tfrclab.cli.app import COMMAND_MODULES, build_parser

    def commands(parser: argparse.ArgumentParser) -> dict[str, str]:
        (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        return {name: sub.get_default("handler").__module__ for name, sub in action.choices.items()}

    assert commands(build_parser()) == COMMAND_MODULES
    assert list(commands(build_parser())) == list(COMMAND_MODULES)
    for name, module in COMMAND_MODULES.items():
        alone = commands(build_parser(name))
        assert alone[name] == module
        assert set(alone.values()) == {module}


def test_one_command_parses_as_the_whole_parser(tmp_path: Path) -> None:
    from tfrclab.cli.app import build_parser

    argv = ["run", str(tmp_path / "x.toml"), "--seed", "3", "--set", "duration=2s", "--json"]
    assert build_parser("run").parse_args(argv) == build_parser().parse_args(argv)


def test_version_in_process(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    line = capsys.readouterr().out.strip()
    assert line == version_line()
    builds = "profile-guided|plain|instrumented"
    assert re.fullmatch(rf"tfrclab \d+\.\d+\.\d+ \(({builds}) build\)", line)


def test_equation_json_subprocess() -> None:
    result = run_cli("equation", *KNOWN, "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert list(out) == ["x_bytes_per_s", "x_pkts_per_s"]
    expected = rfc5348_rate(1460, 0.1, 0.01)
    assert out["x_bytes_per_s"] == pytest.approx(expected, rel=1e-12)
    assert out["x_bytes_per_s"] == pytest.approx(164_005, abs=5)
    assert out["x_pkts_per_s"] == pytest.approx(expected / 1460, rel=1e-12)


def test_equation_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["equation", *KNOWN]) == 0
    out = capsys.readouterr().out
    expected = rfc5348_rate(1460, 0.1, 0.01)
    assert f"{expected:.1f} bytes/s" in out
    assert f"{expected / 1460:.2f} packets/s" in out


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (("--size", "1000B", "--rtt", "0.1s", "--p", "0.1"), rfc5348_rate(1000, 0.1, 0.1)),
        (
            ("--size", "1000", "--rtt", "250ms", "--p", "0.02", "--b", "2"),
            rfc5348_rate(1000, 0.25, 0.02, b=2),
        ),
        (
            ("--size", "500", "--rtt", "100000us", "--p", "0.05", "--t-rto", "1s"),
            rfc5348_rate(500, 0.1, 0.05, t_rto=1.0),
        ),
    ],
)
def test_equation_options(
    capsys: pytest.CaptureFixture[str], extra: tuple[str, ...], expected: float
) -> None:
    assert main(["equation", *extra, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["x_bytes_per_s"] == pytest.approx(expected, rel=1e-12)


BAD_ARGUMENTS = [
    pytest.param(("equation", "--size", "1460", "--rtt", "100xs", "--p", "0.01"), id="bad-unit"),
    pytest.param(("equation", "--size", "1460", "--rtt", "fast", "--p", "0.01"), id="no-number"),
    pytest.param(("equation", "--size", "1460", "--rtt", "100", "--p", "0.01"), id="no-unit"),
    pytest.param(("equation", "--size", "1460", "--rtt", "0ms", "--p", "0.01"), id="zero-rtt"),
    pytest.param(("equation", "--size", "1460", "--rtt", "100ms", "--p", "0"), id="p-zero"),
    pytest.param(("equation", "--size", "1460", "--rtt", "100ms", "--p", "1.5"), id="p-above-1"),
    pytest.param(("equation", "--size", "1460", "--rtt", "100ms", "--p", "-0.1"), id="p-negative"),
    pytest.param(("equation", "--size", "1460", "--rtt", "100ms", "--p", "nan"), id="p-nan"),
    pytest.param(("equation", "--size", "-5", "--rtt", "100ms", "--p", "0.01"), id="size-negative"),
    pytest.param(("equation", "--size", "0B", "--rtt", "100ms", "--p", "0.01"), id="size-zero"),
    pytest.param(("equation", "--size", "12parsecs", "--rtt", "1s", "--p", "0.01"), id="size-unit"),
    pytest.param(("equation", *KNOWN, "--b", "0.5"), id="b-below-1"),
    pytest.param(("equation", *KNOWN, "--t-rto", "-1s"), id="t-rto-negative"),
    pytest.param(("equation", *KNOWN, "--bogus"), id="unknown-option"),
    pytest.param(("equation", "--rtt", "100ms", "--p", "0.01"), id="missing-size"),
    pytest.param(("frobnicate",), id="unknown-command"),
    pytest.param((), id="no-command"),
    pytest.param(("demo", "--preset", "reno"), id="unknown-preset"),
    pytest.param(("demo", "--duration", "15"), id="demo-duration-no-unit"),
]


@pytest.mark.parametrize("argv", BAD_ARGUMENTS)
def test_bad_arguments_in_process(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...]
) -> None:
    assert main(list(argv)) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("tfrclab")
    assert "error:" in lines[0]
    assert "Traceback" not in captured.err


@pytest.mark.parametrize(
    "argv",
    [
        ("equation", "--size", "1460", "--rtt", "100xs", "--p", "0.01"),
        ("equation", "--size", "1460", "--rtt", "100ms", "--p", "2"),
        ("equation", "--size", "-1460", "--rtt", "100ms", "--p", "0.01"),
        ("equation", *KNOWN, "--bogus"),
    ],
    ids=["bad-duration", "p-out-of-range", "negative-size", "unknown-option"],
)
def test_bad_arguments_subprocess(argv: tuple[str, ...]) -> None:
    result = run_cli(*argv)
    assert result.returncode == 2
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert "Traceback" not in result.stderr


def test_error_messages_name_the_problem(capsys: pytest.CaptureFixture[str]) -> None:
    main(["equation", "--size", "1460", "--rtt", "100xs", "--p", "0.01"])
    assert "'100xs'" in capsys.readouterr().err
    main(["equation", *KNOWN[:4], "--p", "1.5"])
    assert "(0, 1]" in capsys.readouterr().err


def test_demo_subprocess(tmp_path: Path) -> None:
    out_dir = tmp_path / "demo"
    result = run_cli("demo", "--out", str(out_dir))
    assert result.returncode == 0, result.stderr
    figure = out_dir / "fig2_floyd2000.png"
    assert figure.stat().st_size > 10_000
    assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"figure: {figure}" in result.stdout
    lines = result.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.lstrip().startswith("t (s)"))
    rows = [line.split() for line in lines[header + 2 : header + 2 + 30]]
    assert [float(row[0]) for row in rows] == [0.5 * k for k in range(1, 31)]
    # Fig. 2: the loss event rate settles at 1% before the change at 6 s.
    row_6s = rows[11]
    assert float(row_6s[1]) == pytest.approx(0.01, abs=5e-4)


def test_demo_rfc5348_short(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--out", str(tmp_path), "--preset", "rfc5348", "--duration", "2s"]) == 0
    out = capsys.readouterr().out
    assert (tmp_path / "fig2_rfc5348.png").stat().st_size > 0
    assert "   2.0 " in out
    assert "   2.5 " not in out


def test_demo_unwritable_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    # Refused up front, as a bad argument, naming the option and the place.
    assert main(["demo", "--out", str(blocker / "sub"), "--duration", "1s"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1
    assert f"--out {blocker / 'sub'}: cannot write there ({blocker} is not a directory)" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("command", sorted(COMMAND_MODULES))
def test_every_commands_help_prints_its_text_as_written(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # argparse %-formats help strings but not descriptions: an escaped "%%" in a description
    # is printed doubled.
    assert main([command, "--help"]) == 0
    text = capsys.readouterr().out
    assert f"usage: tfrclab {command}" in text
    assert "%%" not in text
