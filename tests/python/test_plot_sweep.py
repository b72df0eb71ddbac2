"""Sweep figures: where the points land (checked on the artists), and ``plot``'s options."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from matplotlib.container import ErrorbarContainer

from tfrclab import sweep
from tfrclab.cli import main
from tfrclab.figures import plot_sweep, sweep_figure

SCENARIO = """\
duration = "2s"

[topology]
kind = "dumbbell"
hosts = 2
bottleneck = { rate = "2Mbps", delay = "10ms" }

[[flows]]
kind = "tcp"

[[flows]]
kind = "tfrc"
"""


def _manifest(vary: list[list[Any]], zip_: list[list[Any]] | None = None) -> dict[str, Any]:
    return {
        "format": sweep.FORMAT_VERSION,
        "scenario": SCENARIO,
        "vary": vary,
        "zip": zip_ or [],
        "seeds": [1, 2],
    }


def _classes(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """A classes dataset: each row for seeds 1 and 2, every figure at ``value`` + seed / 100."""
    out = []
    for row in rows:
        keys = {k: v for k, v in row.items() if k != "value"}
        for seed in (1, 2):
            figures = dict.fromkeys(sweep.CLASS_FIGURES, row["value"] + seed / 100)
            out.append({"run": f"r{len(out)}", "seed": seed, **keys, **figures})
    return pd.DataFrame(out)


def _points(figure: Any) -> dict[str, list[tuple[float, float]]]:
    """Each legend entry's (x, y) points, per panel concatenated."""
    points: dict[str, list[tuple[float, float]]] = {}
    for axes in figure.axes:
        for container in axes.containers:
            assert isinstance(container, ErrorbarContainer)
            line = container.lines[0]
            xs, ys = line.get_xdata(), line.get_ydata()
            points.setdefault(container.get_label(), []).extend(
                zip(map(float, xs), map(float, ys), strict=True)
            )
    return points


def test_text_x_is_one_shared_axis_in_written_order() -> None:
    # A variant sweep: each TCP class exists at one value only, TFRC at every value. Written
    # order vegas, reno, sack (not alphabetical).
    manifest = _manifest([["flows.0.variant", ["vegas", "reno", "sack"]]])
    rows = [
        {"flows.0.variant": v, "class": c, "value": y}
        for v, c, y in [
            ("vegas", "tcp/vegas", 0.2),
            ("vegas", "tfrc", 1.8),
            ("reno", "tcp/reno", 0.6),
            ("reno", "tfrc", 1.4),
            ("sack", "tcp/sack", 0.9),
            ("sack", "tfrc", 1.1),
        ]
    ]
    figure = sweep_figure(_classes(rows), manifest)
    axes = figure.axes[0]
    assert [t.get_text() for t in axes.get_xticklabels()] == ["vegas", "reno", "sack"]
    assert list(axes.get_xticks()) == [0.0, 1.0, 2.0]
    points = _points(figure)
    # Each class at its own value's place (side by side within 0.2 of it), with its own y.
    expected = {
        "tcp/vegas": [(0, 0.215)],
        "tcp/reno": [(1, 0.615)],
        "tcp/sack": [(2, 0.915)],
        "tfrc": [(0, 1.815), (1, 1.415), (2, 1.115)],
    }
    assert set(points) == set(expected)
    for label, want in expected.items():
        got = points[label]
        assert [round(x) for x, _ in got] == [x for x, _ in want], label
        assert all(abs(x - round(x)) <= 0.2 for x, _ in got)
        assert [y for _, y in got] == pytest.approx([y for _, y in want]), label
    # Markers only: no line joins two categories.
    for container in axes.containers:
        assert container.lines[0].get_linestyle() == "None"


def test_numeric_x_keeps_lines_and_every_tick_when_a_class_is_missing() -> None:
    manifest = _manifest([["bottleneck.rate", ["1Mbps", "2Mbps", "4Mbps"]]])
    rows = [
        {"bottleneck.rate": r, "class": c, "value": y}
        for r, c, y in [
            (1e6, "tcp/sack", 0.5),
            (2e6, "tcp/sack", 0.7),
            (4e6, "tcp/sack", 0.9),
            (1e6, "tfrc", 1.5),  # TFRC at 1 Mb/s only: the last hue drawn
        ]
    ]
    figure = sweep_figure(_classes(rows), manifest)
    axes = figure.axes[0]
    assert [t.get_text() for t in axes.get_xticklabels()] == ["1Mbps", "2Mbps", "4Mbps"]
    points = _points(figure)
    assert [x for x, _ in points["tcp/sack"]] == [1e6, 2e6, 4e6]
    assert [x for x, _ in points["tfrc"]] == [1e6]
    assert axes.containers[0].lines[0].get_linestyle() == "-"


def test_panels_share_the_categories_colours_and_legend() -> None:
    manifest = _manifest(
        [["flows.0.preset", ["rfc", "ns2_2000"]], ["flows.1.kind", ["tfrc", "tcp"]]]
    )
    rows = [
        {"flows.0.preset": p, "flows.1.kind": k, "class": c, "value": 1.0}
        for p, k, c in [
            ("ns2_2000", "tfrc", "tcp/sack"),
            ("rfc", "tcp", "tcp/sack"),
            ("ns2_2000", "tcp", "tcp/sack"),
            ("rfc", "tfrc", "tfrc"),
        ]
    ]
    figure = sweep_figure(_classes(rows), manifest, x="flows.0.preset", facet="flows.1.kind")
    left, right = figure.axes[:2]
    for axes in (left, right):
        assert [t.get_text() for t in axes.get_xticklabels()] == ["rfc", "ns2_2000"]
    colour = {}
    for axes in (left, right):
        for container in axes.containers:
            line = container.lines[0]
            label = container.get_label()
            assert colour.setdefault(label, line.get_color()) == line.get_color()
    # ns2_2000 is the second category wherever a class has it; TFRC only in the left panel.
    left_points = _points(figure)
    assert sorted(round(x) for x, _ in left_points["tcp/sack"]) == [0, 1, 1]
    assert [round(x) for x, _ in left_points["tfrc"]] == [0]
    legend = [t.get_text() for t in left.get_legend().get_texts()]
    assert legend == ["tcp/sack", "tfrc"]


def test_a_bad_metric_lists_the_choices() -> None:
    manifest = _manifest([["flows.0.variant", ["reno"]]])
    classes = _classes([{"flows.0.variant": "reno", "class": "tcp/reno", "value": 1.0}])
    with pytest.raises(ValueError, match="choose one of mean_throughput_bits_per_s, ") as err:
        sweep_figure(classes, manifest, metric="throughput")
    assert all(name in str(err.value) for name in sweep.CLASS_FIGURES)


def test_plot_writes_a_png(tmp_path: Path) -> None:
    manifest = _manifest([["flows.0.variant", ["reno", "sack"]]])
    classes = _classes([{"flows.0.variant": "sack", "class": "tcp/sack", "value": 1.0}])
    path = plot_sweep(classes, manifest, tmp_path / "a" / "f.png")
    assert path.read_bytes()[:4] == b"\x89PNG"


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # A real (small) variant sweep: the class changes with the value.
    base = tmp_path_factory.mktemp("plot")
    scenario = base / "s.toml"
    scenario.write_text(SCENARIO.replace('kind = "tcp"', 'kind = "tcp"\nvariant = "reno"'))
    out = base / "out"
    args = ["sweep", str(scenario), "--vary", "flows.0.variant=vegas,reno", "--out", str(out)]
    assert main([*args, "--quiet", "--json"]) == 0
    return out


def test_plot_metric_does_not_replace_sweep_png(
    sweep_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plot", str(sweep_dir)]) == 0
    first = (sweep_dir / "sweep.png").read_bytes()
    assert main(["plot", str(sweep_dir), "--metric", "loss_event_rate"]) == 0
    assert (sweep_dir / "sweep.png").read_bytes() == first
    assert (sweep_dir / "sweep-loss_event_rate.png").read_bytes()[:4] == b"\x89PNG"
    out = tmp_path / "figs" / "fair.png"
    assert main(["plot", str(sweep_dir), "--metric", "fairness_index", "--output", str(out)]) == 0
    assert f"figure: {out}" in capsys.readouterr().out
    assert out.read_bytes()[:4] == b"\x89PNG"
    assert not (sweep_dir / "sweep-fairness_index.png").exists()


def test_plot_bad_metric_is_one_line_with_the_choices(
    sweep_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plot", str(sweep_dir), "--metric", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "choose one of" in err
    assert "loss_event_rate" in err


def test_sweep_figure_of_a_real_variant_sweep(sweep_dir: Path) -> None:
    classes = sweep.load(sweep_dir, "classes")
    manifest = json.loads((sweep_dir / "sweep.json").read_text())
    points = _points(sweep_figure(classes, manifest))
    assert [round(x) for x, _ in points["tcp/vegas"]] == [0]
    assert [round(x) for x, _ in points["tcp/reno"]] == [1]
    assert [round(x) for x, _ in points["tfrc/rfc5348"]] == [0, 1]
    assert np.isfinite([y for _, y in points["tfrc/rfc5348"]]).all()
