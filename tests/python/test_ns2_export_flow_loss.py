"""A loss model for one flow on a shared link, exported in an ns-2 ``ErrorModule Fid``.

floyd2000 Fig. 5 puts a 1% Bernoulli model for each of three CBR flows on one bottleneck: each
flow meets only its own. ns-2's ErrorModule hands a model only the packets of the flow id bound
to it; checked against ns-2.35 on a shortened Fig. 5.
"""

from __future__ import annotations

import shutil
from typing import Any

import pytest

from conftest import REPO_ROOT
from tfrclab.ns2 import ExportError, export_tcl, resolve
from tfrclab.ns2.crosscheck import run_ns2
from tfrclab.ns2.output import from_result, read_output
from tfrclab.scenario import Scenario
from tfrclab.simulate import run

needs_ns = pytest.mark.skipif(shutil.which("ns") is None, reason="ns-2 (`ns`) is not installed")

FIG05 = REPO_ROOT / "scenarios" / "papers" / "floyd2000" / "fig05.toml"


def test_each_model_is_bound_to_its_flow() -> None:
    script = export_tcl(resolve(Scenario.load(FIG05), 1))
    for k in range(3):
        assert f"set fem{k} [new ErrorModule Fid]" in script
        assert f"$fem{k} bind $em{k} {k}\n" in script
        assert f"tfrclab_insert_loss 0 $fem{k}" in script


def test_a_flow_whose_feedback_lacks_its_id_is_refused() -> None:
    # A TFRC flow's feedback crosses the reverse bottleneck, shared with a reversed CBR flow.
    tables: dict[str, Any] = Scenario.load(FIG05).to_dict()
    tables["flows"][0] = {"kind": "tfrc", "name": "rate1x", "preset": "floyd2000"}
    tables["flows"][1]["reverse"] = True
    tables["losses"] = [
        {"link": "bottleneck_reverse", "flow": "rate1x", "kind": "bernoulli", "p": 0.01}
    ]
    with pytest.raises(ExportError, match=r"^losses\[0\]\.flow: 'rate1x''s packets back"):
        export_tcl(resolve(Scenario.from_dict(tables), 1))


@needs_ns
def test_each_flow_meets_only_its_own_model() -> None:
    scenario = Scenario.load(FIG05).with_(duration="100s")
    for seed in (1, 2):
        plan = resolve(scenario, seed)
        theirs = read_output(run_ns2(export_tcl(plan, 10.0)), plan)
        mine = from_result(run(scenario, seed=seed), plan, 10.0)
        link = theirs.links[plan.primary_link]
        # Three models each seeing every packet would drop 3%; one each, 1% of the total.
        assert link.drops.sum() / link.arrivals.sum() == pytest.approx(0.01, abs=0.001)
        for flow in plan.flows:
            sent = theirs.sent_bytes[flow.index].sum()
            assert sent == mine.sent_bytes[flow.index].sum()
            lost = 1 - theirs.received_bytes[flow.index].sum() / sent
            assert lost == pytest.approx(0.01, abs=0.002), flow.name
