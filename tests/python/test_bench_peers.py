"""scripts/bench_peers.py's table: what each row pairs and how it is computed from the rounds.

The timings themselves are not tested (they are the benchmark's output); the arithmetic is, on
made-up samples, and one round of a tiny scenario runs end to end where ns-2 is installed.
"""

from __future__ import annotations

import json
import math
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

import tfrclab
from conftest import REPO_ROOT, load_script

needs_ns = pytest.mark.skipif(shutil.which("ns") is None, reason="ns-2 (`ns`) is not installed")

TINY = """name = "bench-tiny"
duration = "1s"

[monitor]
bin = "100ms"

[topology]
kind = "dumbbell"
hosts = 2

[topology.bottleneck]
rate = "2Mbps"
delay = "10ms"

[[flows]]
kind = "tcp"
variant = "sack"
preset = "ns2_2000"

[[flows]]
kind = "tfrc"
preset = "floyd2000"
"""


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    module: ModuleType = load_script("bench_peers")
    return module


def _report(loop: float, setup: float) -> str:
    return json.dumps({"cpu_seconds": loop, "setup_cpu_seconds": setup})


def test_rows_take_differences_within_a_round(bench: ModuleType) -> None:
    sample = bench.Sample

    def cpu(*values: float) -> list:
        return [sample(wall_s=v + 0.5, cpu_s=v, rss_mib=10.0 + v, stdout="H ") for v in values]

    # Round 2 is slow for every process: the median of the differences (1.0) is not the
    # difference of the medians (2.0 - 0.5 = 1.5 for `all links`).
    runs = {
        "ns_start": cpu(0.05, 0.05, 0.05),
        "tfrclab_start": cpu(0.06, 0.06, 0.06),
        "ns_all_links_setup": cpu(0.45, 0.5, 4.0),
        "ns_all_links": cpu(1.45, 2.0, 5.0),
        "ns_bottleneck_setup": cpu(0.4, 0.4, 4.0),
        "ns_bottleneck": cpu(1.2, 1.0, 4.8),
        "ns_every_bin_setup": cpu(0.6, 0.6, 4.0),
        "ns_every_bin": cpu(8.6, 8.6, 12.6),
    }
    runs["tfrclab"] = [
        sample(wall_s=c + 0.1, cpu_s=c, rss_mib=30.0, stdout=_report(loop, setup))
        for c, loop, setup in ((0.5, 0.2, 0.01), (0.6, 0.3, 0.01), (0.9, 0.25, 0.02))
    ]
    rows = bench.peer_rows(runs)
    assert len({row.metric for row in rows}) == len(rows) == 11
    loops = [row for row in rows if row.metric.startswith("loop")]
    assert [(row.ns2, row.tfrclab) for row in loops] == [
        pytest.approx((1.0, 0.25)),
        pytest.approx((0.8, 0.25)),
        pytest.approx((8.0, 0.25)),
    ]
    for row, script in zip(loops, ("`all links`", "`bottleneck`", "`every bin`"), strict=True):
        assert script in row.metric
    (setup,) = [row for row in rows if row.metric.startswith("set-up")]
    assert (setup.ns2, setup.tfrclab) == pytest.approx((0.45, 0.01))
    (rest,) = [row for row in rows if row.metric.startswith("rest")]
    # ns-2: its start; tfrclab: whole CPU less set-up and loop, per round (0.29, 0.29, 0.63).
    assert (rest.ns2, rest.tfrclab) == pytest.approx((0.05, 0.29))
    whole = [row for row in rows if row.metric.startswith("whole process, wall")]
    assert [row.ns2 for row in whole] == pytest.approx([2.5, 1.7, 9.1])
    assert all(row.tfrclab == pytest.approx(0.7) for row in whole)
    for row in rows:
        assert row.ratio == pytest.approx(row.ns2 / row.tfrclab)


def test_scripts_are_the_exporters_variants(bench: ModuleType, tmp_path: Path) -> None:
    scenario = tmp_path / "tiny.toml"
    scenario.write_text(TINY, encoding="utf-8")
    paths = bench.export_scripts(scenario, tmp_path)
    assert set(paths) == {f"{n}{s}" for n in bench.SCRIPTS for s in ("", "_setup")}
    text = {name: path.read_text(encoding="utf-8") for name, path in paths.items()}
    for name in bench.SCRIPTS:
        assert text[name].endswith("$ns run\n")
        assert text[f"{name}_setup"] == text[name].removesuffix("$ns run\n")
    assert "set flow_links {}" in text["bottleneck"]
    assert "set flow_links {}" not in text["all_links"]
    # One sample at the end (1 s) against one per 100 ms bin.
    assert 'puts "H 1 1 1"' in text["all_links"]
    assert 'puts "H 0.1 10 1"' in text["every_bin"]


@needs_ns
def test_one_round_of_a_tiny_scenario(
    bench: ModuleType,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    tfrclab_command = Path(sys.executable).with_name("tfrclab")
    if not tfrclab_command.exists():
        pytest.skip(f"no tfrclab command next to {sys.executable}")
    # The children run the tfrclab this test imports, from any working directory.
    package_root = str(Path(tfrclab.__file__).resolve().parents[1])
    paths = [package_root, *filter(None, bench.ENV.get("PYTHONPATH", "").split(":"))]
    monkeypatch.setitem(bench.ENV, "PYTHONPATH", ":".join(paths))
    scenario = tmp_path / "tiny.toml"
    scenario.write_text(TINY, encoding="utf-8")
    assert bench.main([str(scenario), "--pairs", "1", "--json"]) == 0
    table = json.loads(capsys.readouterr().out)
    assert table["pairs"] == 1
    assert table["load_before"]
    assert len(table["rows"]) == 11
    for row in table["rows"]:
        assert math.isfinite(row["ns2"])
        assert math.isfinite(row["tfrclab"])
        if not row["metric"].startswith(("loop", "set-up")):  # differences may be noise
            assert row["ns2"] > 0
            assert row["tfrclab"] > 0
    loop = [row for row in table["rows"] if row["metric"].startswith("loop")]
    assert all(row["tfrclab"] > 0 for row in loop)


def test_unexportable_scenario_is_one_line_and_exit_2(
    bench: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if shutil.which("ns") is None:
        pytest.skip("ns-2 (`ns`) is not installed")
    scenario = tmp_path / "rfc.toml"
    scenario.write_text(TINY.replace('preset = "floyd2000"\n', ""), encoding="utf-8")
    assert bench.main([str(scenario), "--pairs", "1"]) == 2
    out = capsys.readouterr().out.strip()
    assert out.count("\n") == 0
    assert "flows[1].preset" in out


def _canned_report(bench: ModuleType) -> dict:
    rows = [
        ("set-up, CPU (s): `all links` without `$ns run`", 0.15, 0.001),
        ("loop, CPU (s): `all links` less its set-up / tfrclab's cpu_seconds", 0.44, 0.11),
        ("loop, CPU (s): `every bin` less its set-up / tfrclab's cpu_seconds", 2.8, 0.11),
        ("whole process, wall (s): `bottleneck` / `tfrclab run --json --quiet`", 0.5, 0.2),
        ("peak RSS (MiB): `all links` / `tfrclab run --json --quiet`", 51.44, 37.33),
    ]
    return {
        "scenario": str(bench.DEFAULT_SCENARIO),
        "pairs": 11,
        "date": "2026-11-29 10:00 UTC",
        "machine": "AMD EPYC, 2 cores, Linux",
        "load_before": "0.50 0.40 0.30",
        "load_after": "1.10 0.60 0.40",
        "build": "plain",
        "rows": [{"metric": m, "ns2": a, "tfrclab": b, "ratio": a / b} for m, a, b in rows],
    }


def test_readme_block_of_a_canned_measurement(bench: ModuleType) -> None:
    text = bench.readme_block(_canned_report(bench))
    intro, blank, header, rule, *rows = text.splitlines()
    assert blank == ""
    assert intro.startswith("`scenarios/papers/floyd2000/fig09.toml`, medians of 11 rounds, ")
    for part in (
        "2026-11-29 10:00 UTC",
        "AMD EPYC",
        "0.50 0.40 0.30 before",
        "1.10 0.60 0.40 after",
    ):
        assert part in intro
    assert "the plain build" in intro
    assert header.startswith("| what is paired: ns-2.35 / tfrclab |")
    assert rule == "|---|---:|---:|---:|"
    assert rows == [
        "| set-up, CPU (s): `all links` without `$ns run` | 0.15 | 0.001 | 150.00x |",
        "| loop, CPU (s): `all links` less its set-up / tfrclab's cpu_seconds | 0.44 | 0.11 "
        "| **4.00x** |",
        "| loop, CPU (s): `every bin` less its set-up / tfrclab's cpu_seconds | 2.8 | 0.11 "
        "| 25.45x |",
        "| whole process, wall (s): `bottleneck` / `tfrclab run --json --quiet` | 0.5 | 0.2 "
        "| **2.50x** |",
        "| peak RSS (MiB): `all links` / `tfrclab run --json --quiet` | 51.4 | 37.3 | 1.38x |",
    ]


def test_scaling_table_of_canned_points(bench: ModuleType) -> None:
    point = {
        "flows": 8,
        "setup_cpu_s": 0.0002,
        "loop_cpu_s": 0.05,
        "process_cpu_s": 0.13,
        "loop_us_per_sent": 0.26,
        "loop_us_per_delivered": 0.28,
        "growth": 1.0,
        "events_per_packet": 4.41,
        "rss_mib": 32.16,
        "ns2_setup_cpu_s": 0.045,
        "ns2_loop_cpu_s": 0.1,
        "ns2_process_cpu_s": 0.26,
        "ns2_loop_us_per_sent": 1.3,
        "ns2_rss_mib": 30.85,
        "ns2_note": "",
    }
    skipped = {
        **point,
        "flows": 2048,
        "growth": 6.5,
        **{key: None for key in point if key.startswith("ns2_") and key != "ns2_note"},
        "ns2_note": "over 3 min (set-up)",
    }
    header, rule, ran, over = bench.scaling_table([point, skipped])
    assert header.count("|") == rule.count("|") == ran.count("|") == over.count("|")
    assert ran == (
        "| 8 | 0.0002 / 0.050 / 0.130 | 0.045 / 0.100 / 0.260 | 2.0x | 2.0x | 0.260 / 1.300 "
        "| 0.280 | 1.00x | 4.41 | 32.2 / 30.9 | ran |"
    )
    assert over.startswith("| 2048 | 0.0002 / 0.050 / 0.130 | - | - | - | 0.260 / - | ")
    assert over.endswith("| 32.2 / - | over 3 min (set-up) |")


def test_help_names_the_readme_option() -> None:
    import subprocess

    result = subprocess.run(
        [sys.executable, str(REPO_ROOT / "scripts" / "bench_peers.py"), "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "--readme" in result.stdout
    assert "--scaling-ns-max" in result.stdout


def test_scaling_rate_fixed_or_per_flow(bench: ModuleType) -> None:
    assert bench.scaling_rate("1Gbps", 2048) == "1Gbps"
    assert bench.scaling_rate("468.75kbps/flow", 32) == "15000kbps"
    assert bench.scaling_rate("468.75kbps/flow", 8) == "3750kbps"
    with pytest.raises(SystemExit, match="--scaling-rate fastkbps/flow"):
        bench.scaling_rate("fastkbps/flow", 8)


def test_ns2_packets_without_flow_lines_are_the_bottlenecks_arrivals(bench: ModuleType) -> None:
    class Plan:
        primary_link = 0

    text = "H 20 1 20\nL 1 0 59654 59340 314 59340000 1.43\nL 1 1 26315 26315 0 1110040 0.0\nT\n"
    assert bench.ns2_packets(text, Plan()) == 59654
    with pytest.raises(SystemExit, match="no counters for the bottleneck"):
        bench.ns2_packets("H 20 1 20\nT\n", Plan())


@needs_ns
def test_one_scaling_point_end_to_end(
    bench: ModuleType,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    tfrclab_command = Path(sys.executable).with_name("tfrclab")
    if not tfrclab_command.exists():
        pytest.skip(f"no tfrclab command next to {sys.executable}")
    package_root = str(Path(tfrclab.__file__).resolve().parents[1])
    paths = [package_root, *filter(None, bench.ENV.get("PYTHONPATH", "").split(":"))]
    monkeypatch.setitem(bench.ENV, "PYTHONPATH", ":".join(paths))
    argv = ["--skip-peers", "--scaling", "4", "--scaling-rate", "500kbps/flow"]
    assert bench.main([*argv, "--scaling-duration", "12s", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["options"].startswith("--scaling 4 --scaling-rate 500kbps/flow")
    (point,) = report["scaling"]
    assert point["flows"] == 4
    assert point["ns2_note"] == ""
    assert point["packets_sent"] > 0
    assert point["ns2_packets_sent"] > 0
    for key in ("loop_cpu_s", "process_cpu_s", "ns2_setup_cpu_s", "ns2_process_cpu_s"):
        assert math.isfinite(point[key])
        assert point[key] >= 0
    # The two simulators send about the same packets when every flow has its share.
    assert point["ns2_packets_sent"] == pytest.approx(point["packets_sent"], rel=0.2)
