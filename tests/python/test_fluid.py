"""The fluid models: analytic equilibria, convergence in the step, bounds and bad input."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

from tfrclab.cli.fluid import register  # noqa: F401  (the CLI module imports)
from tfrclab.equation import throughput_packets_per_s
from tfrclab.fluid import FluidFlow, FluidModel, solve
from tfrclab.fluid.result import model_from_scenario, to_result
from tfrclab.result import Result
from tfrclab.scenario import Scenario

SCENARIOS = Path(__file__).resolve().parents[2] / "python/tfrclab/scenarios/papers/berumen"


def _model(*flows: FluidFlow, **kw: object) -> FluidModel:
    args: dict[str, object] = {"capacity_bps": 5e6, "buffer_packets": 100.0, "flows": flows}
    args.update(kw)
    return FluidModel(**args)  # type: ignore[arg-type]


def test_reno_equilibrium_matches_sqrt_2_over_p() -> None:
    # One Reno flow alone: a sawtooth between W/2 and W with one loss per cycle. Its mean
    # window over the packets per loss event must follow the deterministic AIMD model
    # W_mean = sqrt(3/(2p)) (Floyd's sqrt(1.5/p); Mathis et al. with C = sqrt(3/2)).
    m = _model(FluidFlow("reno", 0.2), duration_s=400.0, step_s=0.002, bin_s=1.0)
    run = solve(m)
    half = slice(200, 400)
    events = run.loss_events[0, half].sum()
    sent = run.sent[0, half].sum()
    assert events >= 5
    p = events / sent
    rtt = run.states[0, 2, half]
    window = run.states[0, 0, half]
    mean_window = float(np.mean(window))
    model = math.sqrt(3 / (2 * p))
    assert abs(mean_window - model) / model < 0.2, (mean_window, model, p, rtt.mean())


def test_queue_never_overflows_below_capacity() -> None:
    # A Reno flow capped at a window whose rate is below C: no loss, the queue stays empty.
    m = _model(FluidFlow("reno", 0.1, max_window=40.0), duration_s=60.0, step_s=0.001)
    run = solve(m)
    assert run.dropped.sum() == 0.0
    assert run.queue_max.max() < 1e-9
    assert run.loss_events.sum() == 0
    # ... and at 40 packets per 100 ms it delivers 400 packets/s at the end.
    assert run.delivered[0, -10:].mean() / m.bin_s == pytest.approx(400.0, rel=0.01)


def test_tfrc_equilibrium_is_the_equation_rate() -> None:
    # TFRC beside a Reno flow (alone it is held by the 2 x receive-rate cap instead): where it
    # settles, its rate equals the equation at the loss event rate and RTT it measures
    # (RFC 5348 §4.3; Berumen eq. 9).
    m = _model(
        FluidFlow("tfrc", 0.2), FluidFlow("reno", 0.2), duration_s=300.0, step_s=0.002, bin_s=1.0
    )
    run = solve(m)
    p = run.states[0, 3, -50:]
    rtt = run.states[0, 2, -50:]
    assert p.min() > 0
    assert p.max() < 0.1
    equation = np.mean([throughput_packets_per_s(1000, r, q) for r, q in zip(rtt, p, strict=True)])
    rate = run.sent[0, -50:].mean()
    assert abs(rate - equation) / equation < 0.05, (rate, equation)


def test_flow_queues_add_up_to_the_queue() -> None:
    m = _model(
        FluidFlow("reno", 0.01),
        FluidFlow("tfrc", 0.01),
        FluidFlow("vegas", 0.05),
        duration_s=40.0,
        bin_s=1.0,
    )
    run = solve(m)
    parts = run.states[:, 4, 10:].sum(axis=0)
    total = run.queue_mean[10:]
    # The parts are read with the queueing delay at the end of each step, so they lag the
    # queue while it moves fast (a few packets in a bin); on average they add up.
    assert abs(parts.mean() - total.mean()) <= 0.02 * total.mean()
    assert np.all(np.abs(parts - total) <= 0.06 * total.max())


def test_halving_the_step_changes_shares_little() -> None:
    # Convergence: TFRC's share against Vegas at 200 ms with steps of 2 ms and 1 ms.
    shares = []
    for step in (0.002, 0.001):
        m = _model(
            FluidFlow("vegas", 0.2),
            FluidFlow("tfrc", 0.2),
            duration_s=120.0,
            step_s=step,
            bin_s=1.0,
        )
        d = solve(m).delivered[:, 60:].sum(axis=1)
        shares.append(d[1] / d.sum())
    assert abs(shares[0] - shares[1]) < 0.05, shares


def test_same_seed_same_run_and_restarts_are_seeded() -> None:
    flows = (
        FluidFlow("reno", 0.05, restart_mean_s=5.0),
        FluidFlow("tfrc", 0.05, restart_mean_s=5.0),
    )
    a = solve(_model(*flows, duration_s=40.0, seed=3))
    b = solve(_model(*flows, duration_s=40.0, seed=3))
    c = solve(_model(*flows, duration_s=40.0, seed=4))
    assert np.array_equal(a.delivered, b.delivered)
    assert a.connections.min() >= 3
    assert not np.array_equal(a.delivered, c.delivered)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"capacity_bps": -1.0}, "capacity_bps"),
        ({"buffer_packets": float("nan")}, "buffer_packets"),
        ({"step_s": 0.1}, "step_s"),
        ({"duration_s": 1e6, "step_s": 0.001}, "limit"),
        ({"bin_s": 0.0015}, "bin_s"),
        ({"flows": ()}, "flows"),
    ],
)
def test_bad_model_names_the_field(change: dict[str, object], field: str) -> None:
    args: dict[str, object] = {
        "capacity_bps": 5e6,
        "buffer_packets": 100.0,
        "flows": (FluidFlow("reno", 0.1),),
    }
    args.update(change)
    with pytest.raises(ValueError, match=field):
        FluidModel(**args)  # type: ignore[arg-type]


def test_bad_flow_names_the_field() -> None:
    with pytest.raises(ValueError, match=r"flows\[0\]\.kind"):
        _model(FluidFlow("cubic", 0.1))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"flows\[1\]\.rtt_s"):
        _model(FluidFlow("reno", 0.1), FluidFlow("tfrc", -0.1))
    with pytest.raises(ValueError, match=r"flows\[0\]\.beta"):
        _model(FluidFlow("vegas", 0.1, alpha=3.0, beta=1.0))


def test_scenario_round_trip_and_refusals(tmp_path: Path) -> None:
    scenario = Scenario.load(SCENARIOS / "vegas-tfrc.toml").with_(
        duration="20s", **{"measure.from": "10s"}
    )
    model = model_from_scenario(scenario)
    assert model.measure_from_s == 10.0
    assert [f.kind for f in model.flows] == ["vegas", "tfrc"]
    assert model.buffer_packets == 100.0
    result = to_result(solve(model), scenario.toml)
    result.to_parquet(tmp_path / "run")
    again = Result.from_parquet(tmp_path / "run")
    assert again.equals(result)
    assert result.flows["packets_received"].sum() <= result.flows["packets_sent"].sum()
    assert 0.9 < float(result.links["utilization"].iloc[0]) <= 1.0
    red = scenario.with_(**{"topology.bottleneck.queue": {"kind": "red", "limit": 100}})
    with pytest.raises(ValueError, match=r"topology\.bottleneck\.queue"):
        model_from_scenario(red)


def test_cli_fluid_compare(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tfrclab.cli import main

    out = tmp_path / "out"
    code = main(
        [
            "fluid",
            str(SCENARIOS / "reno-tfrc.toml"),
            "--set",
            "duration=10s",
            "--compare",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    assert (out / "run.json").exists()
    assert (out / "compare.png").exists()
    assert "packet Mb/s" in capsys.readouterr().out
    code = main(["fluid", str(SCENARIOS / "reno-tfrc.toml"), "--step", "-1"])
    assert code == 2
    assert "--step" in capsys.readouterr().err


SHIPPED = sorted((SCENARIOS.parents[1]).rglob("*.toml"))
"""Every scenario file shipped with tfrclab (examples, papers, crosscheck)."""

IN_SCOPE = {
    "berumen/reno-tfrc.toml",
    "berumen/vegas-tfrc.toml",
    "crosscheck/sack-tfrc-2-droptail.toml",
    "crosscheck/sack-tfrc-8-droptail.toml",
    "crosscheck/vegas-pair.toml",
    "floyd2000/fig28-tcp.toml",
    "floyd2000/fig28-tfrc.toml",
    "yang2001/multi.toml",
}
"""The shipped files within the fluid model's scope (TCP and TFRC flows, `count` groups
included, on a DropTail dumbbell): each must run."""


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_shipped_scenario_runs_or_says_what_is_out_of_scope(
    path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tfrclab.cli import main

    code = main(["fluid", str(path), "--set", "duration=2s", "--set", "measure={}"])
    out, err = capsys.readouterr()
    if f"{path.parent.name}/{path.name}" in IN_SCOPE:
        assert code == 0, err
        assert "fluid model, 2 s" in out
    else:
        assert code == 2, (out, err)
        lines = err.splitlines()
        assert len(lines) == 1, err
        assert lines[0].startswith("tfrclab fluid: error: ")
        assert "the fluid model" in lines[0]


def test_count_groups_expand_into_flows_with_their_own_keys() -> None:
    scenario = Scenario.load(SCENARIOS.parent.parent / "crosscheck/sack-tfrc-2-droptail.toml")
    model = model_from_scenario(scenario)
    assert [f.kind for f in model.flows] == ["reno", "reno", "tfrc", "tfrc"]
    assert [f.name for f in model.flows] == ["tcp0", "tcp1", "tfrc0", "tfrc1"]
    assert [f.max_window for f in model.flows] == [100.0, 100.0, None, None]
    # Each flow of a group has its own drawn RTT (access.rtt is uniform in 60-100 ms).
    assert len({f.rtt_s for f in model.flows}) == 4
    assert all(0.06 <= f.rtt_s <= 0.1 for f in model.flows)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"losses": [{"link": "bottleneck", "kind": "bernoulli", "p": 0.01}]}, "losses[0]"),
        ({"flows[0].on_off": {"on": "1s", "off": "1s"}}, "flows[0].on_off"),
        ({"flows[1].reverse": True}, "flows[1]: flow tfrc does not cross the bottleneck"),
        ({"topology.access": {"rate": "1Mbps", "rtt": "10ms"}}, "topology.access.rate"),
    ],
)
def test_out_of_scope_parts_are_named(change: dict[str, object], field: str) -> None:
    scenario = Scenario.load(SCENARIOS / "reno-tfrc.toml").with_(**change)
    with pytest.raises(ValueError, match=re.escape(field)):
        model_from_scenario(scenario)


@pytest.mark.parametrize("seed", ["-1", str(2**64), "x"])
def test_cli_seed_out_of_range_is_one_line(seed: str, capsys: pytest.CaptureFixture[str]) -> None:
    from tfrclab.cli import main

    code = main(["fluid", str(SCENARIOS / "reno-tfrc.toml"), "--seed", seed])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1
    assert "--seed" in err
    assert "invalid seed" in err


@pytest.mark.parametrize("seed", [-1, 2**64, 1.5, True])
def test_api_seed_out_of_range_is_refused(seed: object) -> None:
    scenario = Scenario.load(SCENARIOS / "reno-tfrc.toml")
    with pytest.raises(ValueError, match="seed must be a whole number from 0 to 2\\^64-1"):
        model_from_scenario(scenario, seed=seed)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="seed must be"):
        _model(FluidFlow("reno", 0.1), seed=seed)
    assert _model(FluidFlow("reno", 0.1), seed=2**64 - 1).seed == 2**64 - 1


def test_loss_event_rate_above_loss_rate_is_explained(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Vegas beside TFRC at 10 ms: Vegas sends little, and every overflow it sends into is a
    # loss event for it though it loses a fraction of a packet each time.
    from tfrclab.cli import main

    code = main(["fluid", str(SCENARIOS / "vegas-tfrc.toml"), "--set", "duration=20s"])
    out = capsys.readouterr().out
    assert code == 0
    rows = {line.split()[0]: line.split() for line in out.splitlines()[1:3]}
    loss, ler = float(rows["tcp"][4]), float(rows["tcp"][6])
    assert ler > loss
    assert "note: the loss event rate (LER) of tcp is above its loss rate" in out
    assert "docs/fluid.md" in out
