"""``tfrclab reproduce yang2001``: registry entries, the time-periodic loss model, a quick run.

The --quick run's robust claims must give the verdicts measured for them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import robust_claim_keys
from tfrclab.reproduce import yang2001
from tfrclab.reproduce.claims import ClaimResult
from tfrclab.reproduce.registry import experiments, registry, scenario_path
from tfrclab.reproduce.runner import run_experiment
from tfrclab.scenario import Scenario, ScenarioError

# The verdicts a --quick run (seed 1 of the full plan's five) must give for the claims marked
# robust to the reduction: the model's behaviour, measured, not the paper's (a "fails" here is
# a documented finding, docs/reproduction/yang2001.md).
EXPECTED_QUICK = {
    "yang2001/fig03-05/smoother-at-per5": "holds",
    "yang2001/fig03-05/smoother-at-bern5": "holds",
    "yang2001/fig03-05/tear-far-above-tcp-at-20%": "holds",
    "yang2001/fig06/tfrc-below-aimd-to-4%": "holds",
    "yang2001/fig06/tear-at-most-0.4": "holds",
    "yang2001/fig07-08/gaimd-cycles-smaller": "holds",
    "yang2001/fig12-14/F-tfrc": "holds",
    "yang2001/fig16/tcp-before-gaimd+tfrc+tear-d": "holds",
    "yang2001/fig17/tcp-before-gaimd-fall05": "holds",
    "yang2001/fig17/tfrc-before-tear-fall05": "holds",
    "yang2001/fig18/tcp-before-gaimd+tfrc+tear-d": "holds",
    "yang2001/fig23/tcp-before-gaimd+tfrc+tear-rise90": "holds",
    "yang2001/fig25/tcp-before-gaimd-rise90": "holds",
    "yang2001/fig26/tcp-before-gaimd+tfrc+tear-rise90": "holds",
    "yang2001/table1/cov2-tear": "holds",
    "yang2001/table1/D-tcp": "holds",
    "yang2001/table1/tear-rate-too-high-at-20%": "holds",
}


def test_every_yang2001_experiment_is_registered() -> None:
    ids = {e.id for e in registry()}
    mine = {e.id for e in yang2001.EXPERIMENTS}
    assert mine <= ids
    expected = {
        "yang2001/fig03-05",
        "yang2001/fig06",
        "yang2001/fig07-08",
        "yang2001/fig09-11",
        "yang2001/fig12-14",
        "yang2001/fig15",
        "yang2001/fig16",
        "yang2001/fig17",
        "yang2001/fig18",
        "yang2001/fig19",
        "yang2001/fig20-22",
        "yang2001/fig23",
        "yang2001/fig24",
        "yang2001/fig25",
        "yang2001/fig26",
        "yang2001/fig27",
        "yang2001/fig28-29",
        "yang2001/table1",
    }
    assert expected == mine
    assert [e.id for e in experiments(["yang2001"])] == [e.id for e in yang2001.EXPERIMENTS]


def test_table1_has_every_row_for_every_protocol() -> None:
    claims = {c.id for c in yang2001.TABLE1.claims}
    for protocol in yang2001.PROTOCOLS:
        for row in ("F", "cov2", "cov20", "D", "I"):
            assert f"{row}-{protocol}" in claims
    assert set(yang2001.TABLE1_PAPER) == {
        "F",
        "CoV 2%",
        "CoV 20%",
        "D (RTTs)",
        "I (pkts/RTT per RTT)",
    }
    # Experiments reading Table I's runs use its plans and some of its cells.
    cells = {label for label, _r, _c in yang2001.TABLE1.cells}
    for e in yang2001.EXPERIMENTS:
        if e.runs_of == yang2001.TABLE1.id:
            assert {label for label, _r, _c in e.cells} <= cells
            assert (e.full, e.quick) == (yang2001.TABLE1.full, yang2001.TABLE1.quick)


def test_shared_link_runs_are_randomized_as_the_paper_states() -> None:
    # yang2001 §II-C sets the overhead of TCP, GAIMD and TFRC to a small non-zero value against
    # phase effects: every such flow of every shared-link cell has it, TEAR and the single-flow
    # runs (one flow behind a loss model) none; and the scenario accepts the cells.
    expected = {"tcp": ("overhead", "3.2ms"), "gaimd": ("overhead", "3.2ms")}
    expected["tfrc"] = ("dither_fraction", 0.1)
    multi = Scenario.load(scenario_path("yang2001/multi.toml"))
    assert [f["overhead"] for f in multi.to_dict()["flows"]] == ["3.2ms", "3.2ms"]
    # The F-tcp variants change one value each, the overhead among them.
    variants = {label: keys for label, _what, keys, _changes in yang2001.F_TCP_VARIANTS}
    shared = 0
    for e in yang2001.EXPERIMENTS:
        for label, relative, changes in e.cells:
            flows = changes.get("flows") or [changes["flows.0"]]
            for flow in flows:
                kind = flow["kind"]
                knobs = {"overhead", "dither_fraction"} & set(flow)
                if relative != "yang2001/multi.toml" or kind == "tear":
                    assert not knobs, (e.id, label, flow)
                    continue
                key, value = expected[kind]
                assert knobs == {key}, (e.id, label, flow)
                assert flow[key] == variants.get(label, {}).get(key, value), (e.id, label, flow)
                shared += 1
            if relative == "yang2001/multi.toml":
                Scenario.load(scenario_path(relative)).with_(**changes)
    assert shared > 50


def test_periodic_time_loss_in_a_scenario_and_its_errors() -> None:
    base = Scenario.load(scenario_path("yang2001/single.toml"))
    loss = {"link": "bottleneck", "flow": "flow", "kind": "periodic_time", "interval": "100ms"}
    assert base.with_(**{"losses.0": loss}).duration_s == 200.0
    with pytest.raises(ScenarioError, match=r"losses\[0\]\.interval"):
        base.with_(**{"losses.0": {**loss, "interval": "0s"}})
    with pytest.raises(ScenarioError, match=r"losses\[0\]\.interval"):
        base.with_(**{"losses.0": {"link": "bottleneck", "kind": "periodic_time"}})


def test_quick_run_of_yang2001(tmp_path: Path) -> None:
    # In this process, one run at a time: worker pools cost more to start than these runs.
    outcomes = [run_experiment(e, tmp_path, quick=True, jobs=1) for e in yang2001.EXPERIMENTS]
    verdicts: dict[str, ClaimResult] = {}
    for outcome in outcomes:
        assert outcome.quick
        assert outcome.figure.is_file()
        for result in outcome.results:
            verdicts[f"{outcome.experiment.id}/{result.claim.id}"] = result
    # Every decided claim's verdict moves under contrary data.
    unmoved = {
        f"{o.experiment.id}/{r.claim.id}": c.describe() for o in outcomes for r, c in o.unmoved
    }
    assert unmoved == {}
    assert robust_claim_keys(yang2001.EXPERIMENTS) == set(EXPECTED_QUICK)
    for key, expected in EXPECTED_QUICK.items():
        assert verdicts[key].verdict == expected, (key, verdicts[key])
    # One loss per RTT halves TCP's window within about one RTT (yang2001 §IV: D_TCP = 1).
    assert 0 <= verdicts["yang2001/table1/D-tcp"].measured.mean <= 3
