"""Python congestion controllers (docs/controllers.md).

The GAIMD controller written in Python gives the built-in GAIMD agent's results on the same
path; the delay-based one keeps the queue short; misbehaving controllers end the run with a
ControllerError naming the flow, the controller, the callback and the time (or are refused
with the scenario); runs are deterministic; sweep workers import the controller.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from tfrclab import ControllerError, Scenario, ScenarioError, sweep
from tfrclab.cli import main
from tfrclab.controllers.gaimd import Gaimd
from tfrclab.simulate import run


def path_with(flow: str, *, duration: str = "60s", limit: int = 25, loss: float = 0.01) -> str:
    """One flow (keys ``flow``) through a 10 Mb/s, 20 ms bottleneck.

    The bottleneck has a DropTail queue of ``limit`` packets and Bernoulli loss ``loss``.
    """
    return f"""\
duration = "{duration}"
[monitor]
bin = "1s"
[topology]
kind = "dumbbell"
hosts = 1
bottleneck = {{ rate = "10Mbps", delay = "20ms", queue = {{ kind = "droptail", limit = {limit} }} }}
[[flows]]
name = "f"
{flow}
[[losses]]
link = "bottleneck"
kind = "bernoulli"
p = {loss}
"""


def measured(result: object) -> pd.DataFrame:
    """The flow table without the labels that name the protocol."""
    return result.flows.drop(columns=["kind", "variant"])  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("rule", "controller"),
    [("ns2", "Gaimd"), ("paper", "GaimdPaper")],
)
def test_python_gaimd_gives_the_built_in_gaimd_results(rule: str, controller: str) -> None:
    builtin = run(Scenario.from_toml(path_with(f'kind = "gaimd"\nrule = "{rule}"\nwindow = 100')))
    python = run(
        Scenario.from_toml(
            path_with(
                'kind = "tcp"\nvariant = "reno"\npreset = "ns2_2000"\nwindow = 100\n'
                f'controller = "tfrclab.controllers.gaimd:{controller}"'
            )
        )
    )
    assert int(builtin.flows.loc[0, "packets_sent"]) > 10_000
    # The same arithmetic in the same order on IEEE doubles: the same results, bit for bit.
    pd.testing.assert_frame_equal(measured(builtin), measured(python))
    for key, series in builtin.flow_bins.items():
        np.testing.assert_array_equal(series, python.flow_bins[key], err_msg=key)


def test_the_delay_based_controller_keeps_the_queue_short() -> None:
    def one(flow: str) -> object:
        return run(Scenario.from_toml(path_with(flow, duration="30s", limit=200, loss=0.0)))

    reno = one('kind = "tcp"\nvariant = "reno"')
    delay = one(
        'kind = "tcp"\nvariant = "reno"\ncontroller = "tfrclab.controllers.delay:DelayBased"'
    )
    queue = {
        name: float(r.links.loc[r.links["name"] == "bottleneck", "mean_queue_packets"].iloc[0])  # type: ignore[attr-defined]
        for name, r in (("reno", reno), ("delay", delay))
    }
    rate = {
        name: float(r.flows.loc[0, "throughput_bits_per_s"])  # type: ignore[attr-defined]
        for name, r in (("reno", reno), ("delay", delay))
    }
    drops = int(delay.links["queue_drops"].sum())  # type: ignore[attr-defined]
    # Here (30 s, a 200-packet buffer): Reno 8.86 Mb/s with 61 packets queued on average and
    # 139 drops; the delay-based controller 8.98 Mb/s with under one packet queued, no drop.
    assert rate["delay"] >= 0.98 * rate["reno"], rate
    assert queue["delay"] < 3, queue
    assert queue["reno"] > 30, queue
    assert drops == 0


def test_a_controller_class_goes_through_the_api_and_runs_are_deterministic() -> None:
    tables = Scenario.from_toml(
        path_with('kind = "tcp"\nvariant = "reno"', duration="10s")
    ).to_dict()
    tables["flows"][0]["controller"] = Gaimd
    scenario = Scenario.from_dict(tables)
    assert scenario.get("flows.0.controller") == "tfrclab.controllers.gaimd:Gaimd"
    a, b = run(scenario, seed=5), run(scenario, seed=5)
    pd.testing.assert_frame_equal(a.flows, b.flows)


class Paced(Gaimd):
    """Reno's window, paced at 1 Mb/s (125 000 bytes per second)."""

    alpha = 1.0
    beta = 0.5

    def cong_avoid(self, state: Any, ack: Any) -> tuple[float, float, float]:  # type: ignore[override]
        """Grow as Reno, and ask for pacing."""
        cwnd, ssthresh = super().cong_avoid(state, ack)
        return cwnd, ssthresh, 125_000.0


def test_a_pacing_rate_paces_the_sender() -> None:
    flow = 'kind = "tcp"\nvariant = "reno"\npreset = "ns2_2000"\nwindow = 1000'
    tables = Scenario.from_toml(path_with(flow, duration="20s", limit=100, loss=0.0)).to_dict()
    tables["flows"][0]["controller"] = Paced
    result = run(Scenario.from_dict(tables))
    # Unpaced, the window would fill the 10 Mb/s link; paced, 1000-byte packets leave at
    # 125 per second.
    assert 0.97e6 < float(result.flows.loc[0, "throughput_bits_per_s"]) < 1.01e6
    assert int(result.links["queue_drops"].sum()) == 0


BAD = """\
class Raises:
    def cong_avoid(self, state, ack):
        return state.cwnd + 1.0 / state.cwnd, state.ssthresh

    def ssthresh(self, state, reduction):
        raise ValueError("boom")


class Nan(Raises):
    def ssthresh(self, state, reduction):
        return float("nan"), 2


class Negative(Raises):
    def ssthresh(self, state, reduction):
        return -1, 2


class WrongType(Raises):
    def cong_avoid(self, state, ack):
        return "big"


class BadPacing(Raises):
    def ssthresh(self, state, reduction):
        return max(state.win / 2, 2), max(state.win / 2, 2)

    def set_state(self, state, new_state):
        return [state.cwnd, state.ssthresh, 0.0]


class NoMethods:
    pass
"""


@pytest.fixture(scope="module")
def bad_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("controllers")
    (directory / "badcc.py").write_text(BAD)
    return directory


@pytest.mark.parametrize(
    ("name", "callback", "reason"),
    [
        ("Raises", "ssthresh", "raised ValueError: boom ("),
        ("Nan", "ssthresh", "cwnd must be a finite number of at least 1 packet, got NaN"),
        ("Negative", "ssthresh", "got -1"),
        ("WrongType", "cong_avoid", "returned str 'big'; expected None or (cwnd, ssthresh)"),
        ("BadPacing", "set_state", "pacing_rate must be a finite number"),
    ],
)
def test_a_misbehaving_controller_ends_the_run_naming_itself(
    bad_dir: Path, name: str, callback: str, reason: str
) -> None:
    path = bad_dir / f"{name}.toml"
    path.write_text(path_with(f'kind = "tcp"\nvariant = "newreno"\ncontroller = "badcc:{name}"'))
    with pytest.raises(ControllerError) as caught:
        run(Scenario.load(path))
    text = str(caught.value)
    assert f'flow "f": congestion controller "badcc:{name}" failed in {callback} at t = ' in text
    assert reason in text, text
    assert "Traceback" not in text


def test_a_controller_that_cannot_be_found_is_refused_with_the_scenario(bad_dir: Path) -> None:
    for name, expected in [
        ("badcc:NoMethods", "has no cong_avoid() and no ssthresh()"),
        ("badcc:Missing", "a class 'Missing' in module 'badcc'"),
        ("nosuchmodule:X", "a module 'nosuchmodule'"),
        ("justaname", '"reno", "cubic", "native:PATH" (a plugin library) or "module:Class"'),
    ]:
        path = bad_dir / "refused.toml"
        path.write_text(path_with(f'kind = "tcp"\ncontroller = "{name}"'))
        with pytest.raises(ScenarioError) as caught:
            Scenario.load(path)
        assert caught.value.path == "flows[0].controller"
        assert expected in str(caught.value), str(caught.value)


def test_cli_run_and_a_parallel_sweep_import_the_controller(bad_dir: Path, tmp_path: Path) -> None:
    (bad_dir / "mygaimd.py").write_text(
        "from tfrclab.controllers.gaimd import Gaimd\n\nclass Mine(Gaimd):\n    alpha = 0.5\n"
    )
    path = bad_dir / "mine.toml"
    path.write_text(
        path_with('kind = "tcp"\nvariant = "reno"\ncontroller = "mygaimd:Mine"', duration="5s")
    )
    assert main(["run", str(path), "--quiet"]) == 0
    out = tmp_path / "sweep"
    assert (
        main(["sweep", str(path), "--seeds", "1-2", "--jobs", "2", "--out", str(out), "--quiet"])
        == 0
    )
    runs = sweep.load(out)
    assert len(runs) == 2
    bad = bad_dir / "bad_cli.toml"
    bad.write_text(path_with('kind = "tcp"\ncontroller = "badcc:Raises"', duration="5s"))
    assert main(["run", str(bad), "--quiet"]) == 1
