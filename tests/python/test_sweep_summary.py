"""``tfrclab summary`` of a sweep: the zip axis is one named column, and no result is dropped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tfrclab import sweep
from tfrclab.cli import main
from tfrclab.figures import sweep_figure

FLOWS = 16


def _scenario(path: Path) -> Path:
    lines = [
        'name = "zip16"',
        'duration = "1s"',
        "[monitor]",
        'bin = "100ms"',
        "[topology]",
        'kind = "dumbbell"',
        f"hosts = {FLOWS}",
        "[topology.bottleneck]",
        'rate = "10Mbps"',
        'delay = "10ms"',
    ]
    for i in range(FLOWS):
        lines += ["[[flows]]", 'kind = "cbr"', 'rate = "0.5Mbps"', f'from = "left{i}"']
        lines += [f'to = "right{i}"']
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _scenario(tmp_path_factory.mktemp("zip") / "s.toml")


def _sweep(scenario: Path, out: Path, option: str, values: str, *extra: str) -> None:
    args = [a for i in range(FLOWS) for a in (option, f"flows.{i}.rate={values}")]
    assert (
        main(["sweep", str(scenario), *args, *extra, "--out", str(out), "--quiet", "--json"]) == 0
    )


def _header(text: str) -> list[str]:
    """The column headers of the first table in ``text``."""
    lines = text.splitlines()
    rule = next(i for i, line in enumerate(lines) if set(line.strip()) == {"─"})
    return lines[rule - 1].split()


def test_sixteen_zipped_paths_are_one_column_named_by_the_first(
    scenario: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "zip"
    _sweep(scenario, out, "--zip", "0.5Mbps,1Mbps")
    capsys.readouterr()
    assert main(["summary", str(out)]) == 0
    text = capsys.readouterr().out
    assert _header(text) == ["rate", "protocol", "runs", "Mb/s", "norm.", "vs", "TCP", "Jain"]
    assert "rate: flows.0.rate, zipped with flows.1.rate and 14 more paths" in " ".join(
        text.split()
    )
    assert "0.5Mbps" in text
    assert "1Mbps" in text
    # The datasets keep every zipped path's column.
    assert all(f"flows.{i}.rate" in sweep.load(out, "classes") for i in range(FLOWS))


def test_the_zip_axis_takes_a_label(
    scenario: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "zip"
    _sweep(scenario, out, "--zip", "0.5Mbps,1Mbps", "--zip-label", "load")
    capsys.readouterr()
    assert main(["summary", str(out)]) == 0
    text = capsys.readouterr().out
    assert _header(text)[:2] == ["load", "protocol"]
    assert "load: flows.0.rate, zipped with" in " ".join(text.split())
    manifest = json.loads((out / "sweep.json").read_text())
    assert manifest["zip_label"] == "load"
    figure = sweep_figure(sweep.load(out, "classes"), manifest)
    assert figure.axes[0].get_xlabel() == (
        "load (flows.0.rate, zipped with flows.1.rate and 14 more paths)"
    )
    assert [t.get_text() for t in figure.axes[0].get_xticklabels()] == ["0.5Mbps", "1Mbps"]
    # Renaming the axis is not another sweep: the same grid reruns nothing, under a new label.
    _sweep(scenario, out, "--zip", "0.5Mbps,1Mbps", "--zip-label", "offered")
    assert json.loads((out / "sweep.json").read_text())["zip_label"] == "offered"


def test_many_axes_never_drop_the_results(
    scenario: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 16 one-valued --vary axes: 16 parameter columns, wider than the 110 columns summary
    # prints when stdout is not a terminal. The results are printed whole all the same.
    out = tmp_path / "vary"
    _sweep(scenario, out, "--vary", "1Mbps")
    capsys.readouterr()
    assert main(["summary", str(out)]) == 0
    text = capsys.readouterr().out
    header = _header(text)
    assert header[:FLOWS] == [f"{i}.rate" for i in range(FLOWS)]
    assert header[FLOWS:] == ["protocol", "runs", "Mb/s", "norm.", "vs", "TCP", "Jain"]
    row = next(line.split() for line in text.splitlines() if " cbr " in line)
    assert row[: FLOWS + 2] == ["1Mbps"] * FLOWS + ["cbr", "1"]
    assert float(row[FLOWS + 2]) > 0  # Mb/s, whole
    assert "utilization" in text  # the links table too


def test_a_zip_label_needs_a_zip(
    scenario: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["sweep", str(scenario), "--vary", "flows.0.rate=1Mbps", "--zip-label", "x"]
    assert main([*args, "--out", str(tmp_path / "s")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "--zip-label names the --zip axis: it needs --zip" in err
