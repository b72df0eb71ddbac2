"""The time-based Gilbert-Elliott loss model (``sojourn = "time"``) in runs and in the ns-2 export.

netsim's stays in time mirror ns-2.35's ``ErrorModel/TwoState`` with ``unit time``; the export
writes that model, refuses what it cannot express (naming the key), and ns-2 drops what netsim
drops when the stays are fixed, and as often when they are random.
"""

from __future__ import annotations

import re
import shutil
from typing import Any

import numpy as np
import pytest

from tfrclab.ns2 import ExportError, export_tcl, resolve
from tfrclab.ns2.crosscheck import run_ns2
from tfrclab.ns2.output import read_output
from tfrclab.scenario import Scenario
from tfrclab.simulate import run

needs_ns = pytest.mark.skipif(shutil.which("ns") is None, reason="ns-2 (`ns`) is not installed")


def _scenario(loss: dict[str, Any], duration: str = "10s") -> Scenario:
    return Scenario.from_dict(
        {
            "duration": duration,
            "monitor": {"bin": "1s"},
            "topology": {
                "kind": "dumbbell",
                "hosts": 1,
                "bottleneck": {"rate": "10Mbps", "delay": "5ms"},
            },
            "flows": [{"kind": "cbr", "rate": "800kbps"}],
            "losses": [{"link": "bottleneck", "kind": "gilbert_elliott", **loss}],
        }
    )


FIXED = {"sojourn": "time", "good": "1s", "bad": "250ms"}
RANDOM = {
    "sojourn": "time",
    "good": {"exponential": "500ms"},
    "bad": {"uniform": ["50ms", "150ms"]},
}


def test_fixed_stays_drop_the_packets_of_each_bad_stay() -> None:
    flows = run(_scenario(FIXED), seed=1).flows
    # 100 packets/s; Bad over [1, 1.25), [2.25, 2.5), ...: eight stays of 25 packets.
    assert int(flows["packets_dropped"][0]) == 200


def test_the_export_writes_ns2s_two_state_model_in_time() -> None:
    script = export_tcl(resolve(_scenario(RANDOM), 1))
    lines = script.splitlines()
    # ns-2's constructor sets the unit, then the random variables (the second starts the timer).
    assert "set em0 [new ErrorModel/TwoState $rv0_em0 $rv1_em0 time]" in lines
    assert "$rv0_em0 set avg_ 0.5" in lines
    assert "$rv1_em0 set min_ 0.05" in lines
    assert "$rv1_em0 set max_ 0.15" in lines
    fixed = export_tcl(resolve(_scenario(FIXED), 1)).splitlines()
    assert "set rv0_em0 [new RandomVariable/Constant]" in fixed
    assert "$rv1_em0 set val_ 0.25" in fixed


@pytest.mark.parametrize(
    ("loss", "path"),
    [
        ({**FIXED, "loss_in_bad": 0.5}, "losses[0].loss_in_bad"),
        ({**FIXED, "loss_in_good": 0.01}, "losses[0].loss_in_good"),
        ({"p_good_to_bad": 0.1, "p_bad_to_good": 0.5}, "losses[0].kind"),
    ],
)
def test_what_ns2_cannot_express_is_refused_by_name(loss: dict[str, Any], path: str) -> None:
    with pytest.raises(ExportError, match=re.escape(path)):
        export_tcl(resolve(_scenario(loss), 1))


def test_a_time_based_step_of_a_schedule_is_refused() -> None:
    tables = _scenario(FIXED).to_dict()
    step = {"at": "2s", "kind": "gilbert_elliott", **FIXED}
    tables["losses"] = [{"link": "bottleneck", "kind": "schedule", "steps": [step]}]
    with pytest.raises(ExportError, match=re.escape("losses[0].steps[0].sojourn")):
        export_tcl(resolve(Scenario.from_dict(tables), 1))


@needs_ns
def test_ns2_drops_what_netsim_drops_with_fixed_stays() -> None:
    scenario = _scenario(FIXED)
    plan = resolve(scenario, 1)
    series = read_output(run_ns2(export_tcl(plan)), plan)
    drops = series.links[plan.primary_link].drops
    netsim = run(scenario, seed=1).links
    ours = netsim[netsim["name"] == "bottleneck"]["loss_model_drops"].iloc[0]
    assert drops.sum() == ours == 200
    # One Bad stay per 1.25 s cycle: 25 drops in each of the seconds it falls in.
    assert np.count_nonzero(drops) == 8


@needs_ns
def test_ns2_and_netsim_drop_as_often_with_random_stays() -> None:
    """Different draws, one distribution: Bad holds 100 / (500 + 100) of the time."""
    scenario = _scenario(RANDOM, duration="300s")
    plan = resolve(scenario, 1)
    series = read_output(run_ns2(export_tcl(plan)), plan)
    ns2 = series.links[plan.primary_link].drops.sum() / 30_000
    links = run(scenario, seed=1).links
    ours = links[links["name"] == "bottleneck"]["loss_model_drops"].iloc[0] / 30_000
    # About 500 cycles: the fraction's sd is about 0.008; 0.03 is beyond 3.5 sd.
    assert ours == pytest.approx(1 / 6, abs=0.03)
    assert ns2 == pytest.approx(1 / 6, abs=0.03)
