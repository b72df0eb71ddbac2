"""rhee2005's setup in ns-2.35: web, ping, drawn ON/OFF schedules, loss events, experiments.

The exporter's web sessions, pings and netsim-drawn ON/OFF schedules, loss events counted from
ns-2's drop trace, and the rhee2005/ns2-* experiments' --quick runs.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import robust_claim_keys
from tfrclab import _native
from tfrclab.ns2 import ExportError, export_tcl, resolve
from tfrclab.ns2.crosscheck import run_ns2
from tfrclab.ns2.loss_events import drops_by_flow, group_events, ns2_losses
from tfrclab.ns2.output import read_output
from tfrclab.reproduce import rhee2005_ns2
from tfrclab.reproduce.registry import experiments, registry, scenario_path
from tfrclab.reproduce.runner import Outcome, run_experiment
from tfrclab.scenario import Scenario
from tfrclab.simulate import run

needs_ns = pytest.mark.skipif(shutil.which("ns") is None, reason="ns-2 (`ns`) is not installed")

IDS = ("rhee2005/ns2-loss-events", "rhee2005/ns2-rto-10ms")

# The verdicts a --quick run gives for the claims marked robust to the reduction (the full
# run's verdicts and numbers: docs/reproduction/rhee2005-ns2.md).
EXPECTED_QUICK: dict[str, str] = {
    "rhee2005/ns2-loss-events/tfrc-ler-above-tcp-tfrclab": "fails",
    "rhee2005/ns2-loss-events/tfrc-ler-above-tcp-ns2": "fails",
    "rhee2005/ns2-loss-events/agree-loss-event-rate-bg": "holds",
    "rhee2005/ns2-loss-events/agree-packet-loss-rate-bg": "holds",
    "rhee2005/ns2-rto-10ms/tfrc-over-tcp-20x-tfrclab": "fails",
    "rhee2005/ns2-rto-10ms/tfrc-over-tcp-20x-ns2": "fails",
    "rhee2005/ns2-rto-10ms/agree-loss-event-rate-bg": "holds",
}


def _dumbbell(flows: list[dict[str, Any]], duration: str = "20s", **extra: Any) -> Scenario:
    tables: dict[str, Any] = {
        "duration": duration,
        "monitor": {"bin": "1s"},
        "topology": {
            "kind": "dumbbell",
            "hosts": 2,
            "bottleneck": {"rate": "10Mbps", "delay": "20ms"},
            "access": {"rate": "100Mbps", "delay": "1ms"},
        },
        "flows": flows,
    }
    tables.update(extra)
    return Scenario.from_dict(tables)


# -- the exporter ----------------------------------------------------------------------------


def test_random_on_off_and_stop_are_netsims_draws() -> None:
    flow = {
        "kind": "cbr",
        "rate": "1Mbps",
        "start": {"uniform": ["0s", "5s"]},
        "stop": {"uniform": ["30s", "50s"]},
        "on_off": {"on": {"exponential": "3s"}, "off": {"exponential": "4s"}},
    }
    scenario = _dumbbell([flow], duration="60s")
    plan = resolve(scenario, 5)
    (drawn,) = _native.on_off_schedules(scenario.toml, 5)
    periods = plan.flows[0].on_periods
    assert periods is not None
    assert len(periods) >= 3
    assert periods[0][0] == pytest.approx(plan.flows[0].start_s)
    stop = plan.flows[0].stop_s
    assert stop is not None
    assert 30 <= stop <= 50
    script = export_tcl(plan)
    starts = [float(t) for t in re.findall(r'\$ns at (\S+) "\$app\(0\) start"', script)]
    stops = [float(t) for t in re.findall(r'\$ns at (\S+) "\$app\(0\) stop"', script)]
    expected = [on / 1e9 for on, _off in drawn if on / 1e9 < stop]
    assert starts == pytest.approx(expected, abs=1e-9)
    # Every ON period ends with a stop event; the drawn stop cuts the last one.
    assert len(stops) == len(starts)
    assert stops[-1] <= stop + 1e-9
    # The same seed resolves to the same script; another seed to other draws.
    assert export_tcl(resolve(scenario, 5)) == script
    assert export_tcl(resolve(scenario, 6)) != script


def test_web_is_a_webtraf_pool_with_netsims_distributions() -> None:
    web = {"kind": "web", "reverse": True, "share": 0.2, "start": "1s"}
    plan = resolve(_dumbbell([web]), 1)
    script = export_tcl(plan)
    assert "[new PagePool/WebTraf]" in script
    assert "PagePool/WebTraf set FID_ASSIGNING_MODE_ 2" in script
    # ns-2's example distributions: ParetoII of mean 12 packets, shape 1.2 (docs/web.md) ...
    assert "[new RandomVariable/ParetoII]" in script
    assert re.search(r"rv_object_size_0 set avg_ 12(\.0*\d*)?\n", script)
    assert "rv_object_size_0 set shape_ 1.2\n" in script
    # ... and the inter-page mean netsim derived from the share (0.2 of 10 Mb/s).
    kind, (mean,) = plan.flows[0].web["inter_page"] if plan.flows[0].web else ("", (0.0,))
    assert kind == "exponential"
    assert f"rv_inter_page_0 set avg_ {mean:.12g}" in script
    # Reno with the 2000-era knobs on every connection, fid the flow's index.
    assert "set tcp [new Agent/TCP/Reno]; $tcp set fid_ 0;" in script
    assert "$web(0) set-server 0 $n(" in script
    assert "tfrclab_web 0 1\n" in script


def test_ping_is_agent_ping_at_both_ends() -> None:
    script = export_tcl(resolve(_dumbbell([{"kind": "ping", "interval": "50ms"}]), 1))
    assert script.count("[new Agent/Ping]") == 2
    assert "$src(0) set packetSize_ 64\n" in script
    assert '$ns at 0 "tfrclab_ping 0 0.05"' in script


@pytest.mark.parametrize(
    ("flow", "path"),
    [
        ({"kind": "web", "stop": "5s"}, "flows[0].stop"),
        ({"kind": "ping", "on_off": {"on": "1s", "off": "1s"}}, "flows[0].on_off"),
        ({"kind": "web", "object_size": {"kind": "surge"}}, "flows[0].object_size"),
        (
            {"kind": "short_tcp", "load": "1Mbps", "on_off": {"on": "1s", "off": "1s"}},
            "flows[0].on_off",
        ),
    ],
)
def test_what_remains_unsupported_is_refused_by_name(flow: dict[str, Any], path: str) -> None:
    with pytest.raises(ExportError, match=re.escape(path)):
        export_tcl(resolve(_dumbbell([flow])))


def test_rhee2005_scenarios_export() -> None:
    for name in ("base.toml", "ns2-rto10ms.toml"):
        scenario = Scenario.load(scenario_path(f"rhee2005/{name}"))
        scenario = scenario.with_(duration="5s", **{"measure.from": "1s"})
        script = export_tcl(resolve(scenario, 1), 1.0, drop_trace=True)
        assert script.count("[new PagePool/WebTraf]") == 80
        assert "create-trace Drop stdout" in script


# -- loss events -----------------------------------------------------------------------------


def test_loss_events_group_by_one_rtt_from_the_events_first_drop() -> None:
    assert group_events([], 0.1) == []
    assert group_events([1.0, 1.1, 1.1000001, 5.0], 0.1) == [1.0, 1.1000001, 5.0]
    text = "\n".join(
        [
            "d 1.5 0 1 tcp 1040 ------- 3 0.0 1.0 7 70",
            "d 1.2 0 1 tcp 1040 ------- 3 0.0 1.0 6 60",
            "d 1.3 0 1 ack 40 ------- 3 1.0 0.0 6 61",
            "d 1.4 0 1 tcp 1040 ------- 4 0.0 1.0 6 62",
            "F 1 0 3 1 2 3",
        ]
    )
    assert drops_by_flow(text, [3]) == {3: [1.2, 1.5]}


@needs_ns
def test_the_drop_trace_sees_queue_and_loss_model_drops_once_each() -> None:
    # One CBR flow at 12 Mb/s into the 10 Mb/s bottleneck (its queue overflows) through a 5%
    # Bernoulli loss model at the bottleneck's head: both kinds of drop reach the trace, every
    # one of them once, with every flow monitor and with the bottleneck's alone.
    flows = [{"kind": "cbr", "name": "c", "rate": "12Mbps"}]
    losses = [{"link": "bottleneck", "kind": "bernoulli", "p": 0.05}]
    queue = {"kind": "droptail", "limit": 20}
    scenario = _dumbbell(flows, duration="10s", losses=losses).with_(
        **{"topology.bottleneck.queue": queue}
    )
    plan = resolve(scenario, 1)
    text = run_ns2(export_tcl(plan, 1.0, drop_trace=True))
    series = read_output(text, plan)
    traced = len(drops_by_flow(text, [0])[0])
    # 5% of about 15,000 packets meet the loss model; the queue drops what exceeds 10 Mb/s.
    assert traced == series.links[plan.primary_link].drops.sum()
    assert traced > 0.05 * 15_000 + 0.1 * 15_000 * 0.9
    bare = run_ns2(export_tcl(plan, 1.0, drop_trace=True, flow_monitors=False))
    assert len(drops_by_flow(bare, [0])[0]) == traced


@needs_ns
def test_web_ping_and_drops_run_in_ns2_as_in_netsim() -> None:
    flows = [
        {"kind": "tcp", "variant": "sack", "preset": "ns2_35", "window": 1000, "count": 2},
        {"kind": "web", "count": 2, "share": 0.3},
        {"kind": "ping", "interval": "100ms"},
    ]
    scenario = _dumbbell(flows, duration="30s")
    plan = resolve(scenario, 3)
    text = run_ns2(export_tcl(plan, 1.0, drop_trace=True))
    series = read_output(text, plan)
    result = run(scenario, seed=3)
    # The web sessions carry data in ns-2 as in netsim (heavy-tailed sizes: same order only).
    for k in (2, 3):
        ours = float(result.flow_bins["received_bytes"][k].sum())
        theirs = float(series.received_bytes[k].sum())
        assert theirs > 0, k
        assert 0.2 < theirs / ours < 5, (k, ours, theirs)
    # Echoes come back with an RTT above the path's base RTT (2 x (20 + 2 x 1) ms).
    pings = [line.split() for line in text.splitlines() if line.startswith("P 30 ")]
    sent, echoes, rtt_ms = int(pings[0][3]), int(pings[0][4]), float(pings[0][5])
    assert sent == 300
    assert echoes >= 250
    assert 44.0 <= rtt_ms / echoes <= 200.0
    # The drop trace and the link monitor count the same bottleneck drops.
    drops = drops_by_flow(text, range(len(plan.flows)))
    traced = sum(len(v) for v in drops.values())
    assert traced > 0
    assert traced <= series.links[plan.primary_link].drops.sum()
    losses = ns2_losses(plan, text, series, [0, 1], 0.0, 30.0)
    for k in (0, 1):
        assert 0 < losses[k].loss_events <= losses[k].dropped_packets
        assert losses[k].sent_packets > 100


# -- the registry ----------------------------------------------------------------------------


def test_experiments_are_registered_with_their_robust_claims() -> None:
    # Uniqueness over the whole registry is checked in test_reproduce.py.
    assert set(IDS) <= {e.id for e in registry()}
    assert tuple(e.id for e in rhee2005_ns2.EXPERIMENTS) == IDS
    for e in rhee2005_ns2.EXPERIMENTS:
        assert e.kind == "ns2"
        for relative in e.scenarios:
            assert scenario_path(relative).is_file()
    # Paper values, tolerances and finite bounds: test_reproduce.py, for every registered claim.
    assert robust_claim_keys(rhee2005_ns2.EXPERIMENTS) == set(EXPECTED_QUICK)


def test_without_ns_every_claim_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rhee2005_ns2.shutil, "which", lambda _name: None)
    for e in experiments(list(IDS)):
        outcome = run_experiment(e, tmp_path, quick=True)
        for r in outcome.results:
            assert r.verdict == "not comparable"
            assert "ns-2 is not installed" in r.reason
        assert outcome.figure.is_file()


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> list[Outcome]:
    out = tmp_path_factory.mktemp("rhee2005-ns2")
    return [run_experiment(e, out, quick=True) for e in experiments(list(IDS))]


@needs_ns
def test_quick_runs_keep_the_robust_verdicts(quick: list[Outcome]) -> None:
    for outcome in quick:
        assert outcome.figure.is_file()
        for r in outcome.results:
            key = f"{outcome.experiment.id}/{r.claim.id}"
            assert r.verdict != "not comparable", key
            if key in EXPECTED_QUICK:
                assert r.verdict == EXPECTED_QUICK[key], (key, r.measured.format())
