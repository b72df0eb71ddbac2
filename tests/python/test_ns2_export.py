"""The ns-2.35 exporter: knobs mapped explicitly, netsim's draws carried over, refusals named."""

from __future__ import annotations

import re
import shutil
from typing import Any

import pytest

from conftest import REPO_ROOT
from tfrclab.cli import main
from tfrclab.ns2 import ExportError, export_tcl, resolve
from tfrclab.ns2.crosscheck import compare, run_ns2, seed_metrics, t_quantile
from tfrclab.ns2.output import from_result, read_output
from tfrclab.scenario import Scenario
from tfrclab.simulate import run

FIG09 = REPO_ROOT / "scenarios" / "papers" / "floyd2000" / "fig09.toml"
needs_ns = pytest.mark.skipif(shutil.which("ns") is None, reason="ns-2 (`ns`) is not installed")


def _one_flow(flow: dict[str, Any], **extra: Any) -> Scenario:
    tables: dict[str, Any] = {
        "duration": "2s",
        "monitor": {"bin": "100ms"},
        "topology": {
            "kind": "dumbbell",
            "hosts": 1,
            "bottleneck": {"rate": "10Mbps", "delay": "10ms"},
        },
        "flows": [flow],
    }
    tables.update(extra)
    return Scenario.from_dict(tables)


def test_fig09_sets_every_knob_explicitly() -> None:
    script = export_tcl(resolve(Scenario.load(FIG09), 4))
    # SACK, ns2_2000 preset (docs/tcp.md), never ns-2.35's defaults.
    for knob in (
        "windowInit_ 1",
        "syn_ false",
        "tcpTick_ 0.1",
        "minrto_ 0",
        "maxrto_ 64",
        "rtxcur_init_ 6",
        "useHeaders_ false",
        "window_ 1000",
        "singledup_ 0",
    ):
        assert f"set {knob}\n" in script, knob
    assert "[new Agent/TCP/Sack1]" in script
    assert "[new Agent/TCPSink/Sack1]" in script
    # TFRC floyd2000 without the 2005 header accounting; the sink's discounting.
    assert script.count("[new Agent/TFRC]") == 16
    assert "set minDiscountRatio_ 0.5\n" in script
    # RED ns2_2000 in packet mode with the scenario's thresholds.
    for knob in (
        "q_weight_ 0.002",
        "linterm_ 10",
        "bytes_ false",
        "queue_in_bytes_ false",
        "thresh_ 10",
        "maxthresh_ 50",
        "limit_ 100",
        "gentle_ true",
        "use_mark_p_ false",
        "mean_pktsize_ 500",
    ):
        assert f"queue] set {knob}\n" in script, knob


def test_per_host_delays_and_starts_are_netsims_draws() -> None:
    scenario = Scenario.load(FIG09)
    plan = resolve(scenario, 7)
    script = export_tcl(plan)
    delays = [float(m) for m in re.findall(r"simplex-link \S+ \S+ \d+ (\S+) ", script)]
    assert delays == pytest.approx([link.delay_s for link in plan.links], abs=1e-12)
    assert len(set(delays)) > 10  # drawn per host pair, not one value
    starts = [float(m) for m in re.findall(r'\$ns at (\S+) "\$app\(\d+\) start"', script)]
    assert starts == pytest.approx([f.start_s for f in plan.flows], abs=1e-9)
    # Another seed, other draws.
    assert resolve(scenario, 8).flows[0].start_s != plan.flows[0].start_s


@pytest.mark.parametrize(
    ("queue", "expected"),
    [
        ({"kind": "droptail", "limit": 20}, ["limit_ 21", "queue_in_bytes_ false"]),
        ({"kind": "droptail", "ns2_limit": 20}, ["limit_ 20"]),
        ({"kind": "droptail", "bytes": "5000B"}, ["limit_ 5001", "mean_pktsize_ 1"]),
        ({"kind": "red"}, ["q_weight_ -1", "bytes_ true", "thresh_ 0", "use_mark_p_ true"]),
    ],
)
def test_queue_limits_follow_ns2s_conventions(queue: dict[str, Any], expected: list[str]) -> None:
    scenario = _one_flow({"kind": "cbr", "rate": "1Mbps"})
    tables = scenario.to_dict()
    tables["topology"]["bottleneck"]["queue"] = queue
    script = export_tcl(resolve(Scenario.from_dict(tables)))
    first_queue = script.split("$lnk(0) queue] set ")[1:]
    settings = [s.split("\n")[0] for s in first_queue]
    for knob in expected:
        assert knob in settings


def test_periodic_loss_offset_counts_from_one() -> None:
    loss = [{"link": "bottleneck", "kind": "periodic", "every": 10, "phase": 3}]
    script = export_tcl(resolve(_one_flow({"kind": "cbr", "rate": "1Mbps"}, losses=loss)))
    assert "set period_ 10\n" in script
    assert "set offset_ 4\n" in script


@pytest.mark.parametrize(
    ("flow", "losses", "path"),
    [
        ({"kind": "tear"}, None, "flows[0].kind"),
        ({"kind": "tfrc"}, None, "flows[0].preset"),
        ({"kind": "tfrc", "preset": "floyd2000", "rate_scale": 2}, None, "flows[0].rate_scale"),
        ({"kind": "tcp", "variant": "sack", "preset": "rfc"}, None, "flows[0].sack_recovery"),
        ({"kind": "tcp", "variant": "cubic", "preset": "ns2_35"}, None, "flows[0].variant"),
        ({"kind": "tcp", "variant": "sack", "preset": "linux"}, None, "flows[0].preset"),
        ({"kind": "tcp", "variant": "bbr", "preset": "rfc"}, None, "flows[0].variant"),
        ({"kind": "cbr", "rate": "1Mbps", "host_jitter": "1ms"}, None, "flows[0].host_jitter"),
        ({"kind": "web", "stop": "1s"}, None, "flows[0].stop"),
        (
            {"kind": "cbr", "rate": "1Mbps"},
            [
                {
                    "link": "bottleneck",
                    "kind": "gilbert_elliott",
                    "p_good_to_bad": 0.1,
                    "p_bad_to_good": 0.5,
                }
            ],
            "losses[0].kind",
        ),
    ],
)
def test_refusals_name_the_part(flow: dict[str, Any], losses: Any, path: str) -> None:
    extra = {"losses": losses} if losses else {}
    with pytest.raises(ExportError, match=re.escape(path)):
        export_tcl(resolve(_one_flow(flow, **extra)))


def test_cli_refusal_is_one_line_and_exit_2(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "tear.toml"
    path.write_text(_one_flow({"kind": "tear"}).toml, encoding="utf-8")
    assert main(["export", "ns2", str(path), "-o", str(tmp_path / "x.tcl")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "flows[0].kind" in err


def test_cli_writes_the_script(tmp_path: Any) -> None:
    out = tmp_path / "fig09.tcl"
    assert main(["export", "ns2", str(FIG09), "--seed", "3", "-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8").endswith("$ns run\n")


def test_t_quantiles_and_verdicts() -> None:
    assert t_quantile(0.975, 5) == pytest.approx(2.5706, abs=1e-3)
    assert t_quantile(0.995, 10) == pytest.approx(3.1693, abs=1e-3)
    assert compare("drop_rate", [0.01, 0.012], [0.011, 0.0115], 0.02).verdict == "agree"
    assert compare("drop_rate", [0.01, 0.0101], [0.02, 0.0201], 0.02).verdict == "differ"
    # No spread at all (deterministic runs): the tolerance decides.
    assert compare("throughput/x", [1.0, 1.0], [1.01, 1.01], 0.02).verdict == "agree"
    assert compare("throughput/x", [1.0, 1.0], [1.05, 1.05], 0.02).verdict == "differ"


def test_parking_lot_metrics_cover_every_hop() -> None:
    scenario = Scenario.load(REPO_ROOT / "scenarios" / "crosscheck" / "parking-lot-cbr.toml")
    scenario = scenario.with_(duration="4s")
    plan = resolve(scenario, 1)
    names = [(suffix, plan.links[i].name) for suffix, i in plan.metric_links]
    assert names == [("", "hop0"), ("/hop1", "hop1"), ("/hop2", "hop2")]
    result = run(scenario, seed=1)
    values = seed_metrics(plan, from_result(result, plan, 1.0), 1.0, 4.0)
    for metric in ("drop_rate", "utilization", "mean_queue"):
        assert {metric, f"{metric}/hop1", f"{metric}/hop2"} <= set(values)
    # Each hop carries the long flows and its own 3 Mb/s of CBR: busy, but not the same link.
    assert all(0.3 < values[f"utilization{s}"] <= 1.0 for s, _ in plan.metric_links)
    # A dumbbell compares its bottleneck alone.
    dumbbell = resolve(_one_flow({"kind": "cbr", "rate": "800kbps"}))
    assert [suffix for suffix, _ in dumbbell.metric_links] == [""]


@needs_ns
def test_ns2_runs_the_script_and_output_reads_back() -> None:
    scenario = _one_flow({"kind": "cbr", "rate": "800kbps"})
    plan = resolve(scenario)
    series = read_output(run_ns2(export_tcl(plan)), plan)
    # 800 kb/s of 1000 B packets: 100 packets/s, 10 per 100 ms bin, the first at 0.
    assert series.sent_bytes[0].sum() == pytest.approx(200 * 1000, abs=1000)
    assert series.received_bytes[0, 1:-1] == pytest.approx(10_000, abs=1000)
    assert series.links[plan.primary_link].drops.sum() == 0


def test_timing_variants_drop_flow_monitors_or_the_run() -> None:
    plan = resolve(Scenario.load(FIG09), 1)
    full = export_tcl(plan)
    bottleneck = export_tcl(plan, flow_monitors=False)
    setup = export_tcl(plan, run=False)
    # 32 flows' first and last links and the bottleneck's two directions; then those two.
    assert full.count("\ntfrclab_monitor ") == 66
    assert bottleneck.count("\ntfrclab_monitor ") == 2
    assert "\nset flow_links {}\n" in bottleneck
    assert "\nset series_links {0 1}\n" in bottleneck
    assert full.endswith("\n$ns run\n")
    assert "$ns run" not in setup
    assert setup == full.removesuffix("$ns run\n")


@needs_ns
def test_timing_variants_run_in_ns2() -> None:
    plan = resolve(_one_flow({"kind": "cbr", "rate": "800kbps"}))
    lines = run_ns2(export_tcl(plan, flow_monitors=False)).splitlines()
    assert not [line for line in lines if line.startswith("F ")]
    assert len([line for line in lines if line.startswith("L ")]) == 2 * 20
    # Without the run ns-2 builds the network and exits: the header, no sample.
    assert run_ns2(export_tcl(plan, run=False)).splitlines() == ["H 0.1 20 2"]
