"""``reproduce --referee ns2``: ns-2.35's value of each claim's measure beside tfrclab's."""

from __future__ import annotations

import json
import math
import shutil
import time
from dataclasses import replace
from pathlib import Path

import pytest

from tfrclab.cli import main
from tfrclab.reproduce import referee, yang2001
from tfrclab.reproduce.claims import Measurement, judge
from tfrclab.reproduce.referee import RefereeResult, agreement, referee_ns2
from tfrclab.reproduce.registry import experiments
from tfrclab.reproduce.report import count_agreements, paper_differences, write_report
from tfrclab.reproduce.runner import Outcome, run_experiment

needs_ns = pytest.mark.skipif(shutil.which("ns") is None, reason="ns-2 (`ns`) is not installed")


def test_agreement_is_decided_on_the_interval_of_the_difference() -> None:
    # Five seeds each, half-widths 0.02: the difference's interval is about +-0.027.
    a = Measurement(1.00, 0.02, 5)
    assert agreement(a, Measurement(1.01, 0.02, 5)).agreement == "agree"
    assert agreement(a, Measurement(1.30, 0.02, 5)).agreement == "differ"
    # 0.09 apart against a band of 0.1 x 1.09: the interval crosses the band's edge.
    crossing = agreement(a, Measurement(1.09, 0.02, 5))
    assert crossing.agreement == "inconclusive"
    assert crossing.difference_ci is not None
    assert crossing.difference_ci[0] < -0.109 < crossing.difference_ci[1]
    # One seed (no interval): a close match agrees, a far one cannot be told from noise.
    assert agreement(Measurement(1.0, math.nan, 1), Measurement(1.05, math.nan, 1)).agreement == (
        "agree"
    )
    one = agreement(Measurement(1.0, math.nan, 1), Measurement(1.2, math.nan, 1))
    assert one.agreement == "inconclusive"
    assert "one seed" in one.reason
    # Several seeds, one number over them (no interval): the difference decides.
    assert agreement(Measurement(1.0, math.nan, 5), Measurement(1.2, math.nan, 5)).agreement == (
        "differ"
    )
    nothing = agreement(a, Measurement(math.nan, math.nan, 0))
    assert nothing.agreement == "not comparable"


def test_an_experiment_that_is_not_a_sweep_is_not_exportable(tmp_path: Path) -> None:
    (channel,) = experiments(["floyd2000/fig02"])
    results = tuple(judge(c, Measurement(1.0, math.nan, 1)) for c in channel.claims)
    refereed = referee_ns2(channel, channel.quick, None, results, tmp_path, print)
    assert len(refereed) == len(results) > 0
    assert {r.agreement for r in refereed} == {"not exportable"}
    assert "only sweeps are refereed" in refereed[0].reason


@pytest.fixture(scope="module")
def fig16(tmp_path_factory: pytest.TempPathFactory) -> tuple[Outcome, Path]:
    """yang2001 Fig. 16's quick plan with the ns-2.35 referee (seconds: one 200 s seed)."""
    out = tmp_path_factory.mktemp("referee")
    outcome = run_experiment(yang2001.FIG16, out, quick=True, referee="ns2")
    return outcome, out


@needs_ns
def test_fig16_claims_carry_ns2s_value_or_the_refusal(fig16: tuple[Outcome, Path]) -> None:
    outcome, out = fig16
    by_id = {r.claim.id: k for k, r in enumerate(outcome.results)}
    dip = outcome.referee[by_id["tcp-dip"]]
    # One Reno flow under periodic loss: ns-2.35 sends the very same packets per bin as netsim,
    # so its value of the measure is tfrclab's, and the paper's "drops to about 0" fails in both.
    assert dip.agreement == "agree"
    assert dip.measured.mean == pytest.approx(outcome.results[by_id["tcp-dip"]].measured.mean)
    assert dip.ns2_verdict == "fails"
    # The order claims read the GAIMD and TEAR cells, which ns-2 cannot run.
    order = outcome.referee[by_id["tcp-before-gaimd+tfrc+tear-d"]]
    assert order.agreement == "not exportable"
    assert "flows[0].kind: 'tear'" in order.reason
    record = json.loads((out / "yang2001" / "fig16" / "claims.json").read_text())
    entries = {c["id"]: c["ns2"] for c in record["claims"]}
    assert entries["tcp-dip"]["agreement"] == "agree"
    assert entries["tcp-dip"]["verdict"] == "fails"
    assert entries["tcp-before-gaimd+tfrc+tear-d"]["mean"] is None


@needs_ns
def test_ns2_outputs_are_reused_and_a_damaged_one_rerun(fig16: tuple[Outcome, Path]) -> None:
    outcome, out = fig16
    cache = out / "yang2001" / "fig16" / "ns2-quick" / "tcp"
    (kept,) = cache.glob("*.out.gz")
    kept.write_bytes(b"not gzip")
    lines: list[str] = []
    again = run_experiment(yang2001.FIG16, out, quick=True, referee="ns2", progress=lines.append)
    assert any("repairing" in line and str(kept) in line for line in lines)
    assert [r.as_dict() for r in again.referee] == [r.as_dict() for r in outcome.referee]


@needs_ns
def test_report_opens_each_paper_with_its_differences(fig16: tuple[Outcome, Path]) -> None:
    outcome, out = fig16
    md, page = write_report([outcome], out)
    text = md.read_text()
    assert "| ns-2.35 |" in text
    assert "**yang2001: tfrclab and ns-2.35 differ on no refereed claim.**" in text
    assert count_agreements([outcome])["yang2001"]["agree"] == 1
    # Contrary data: had ns-2 given another value, the claim would open the paper's part.
    k = next(k for k, r in enumerate(outcome.results) if r.claim.id == "tcp-dip")
    mine = replace(outcome.results[k].measured, half=0.01, seeds=5)
    other = agreement(mine, Measurement(0.2, 0.01, 5))
    assert other.agreement == "differ"
    referee = list(outcome.referee)
    referee[k] = replace(other, ns2_verdict="holds")
    differing = replace(outcome, referee=tuple(referee))
    (line,) = paper_differences([differing], "yang2001")
    assert line.startswith(
        "yang2001/fig16/tcp-dip: tfrclab 0.874 (fails), ns-2.35 0.2 ± 0.01 (holds)"
    )
    write_report([differing], out)
    text = md.read_text()
    assert "**yang2001: tfrclab and ns-2.35 differ on 1 claim(s): yang2001/fig16/tcp-dip" in text
    assert 'class="referee-differ" data-paper="yang2001"' in page.read_text()
    counts = json.loads((out / "counts.json").read_text())
    assert counts["ns2_agreement"]["all"]["differ"] == 1


def test_without_the_referee_nothing_changes(tmp_path: Path) -> None:
    outcome = run_experiment(yang2001.FIG16, tmp_path, quick=True)
    assert outcome.referee == ()
    record = json.loads((tmp_path / "yang2001" / "fig16" / "claims.json").read_text())
    assert all("ns2" not in c for c in record["claims"])
    md, _ = write_report([outcome], tmp_path)
    assert "ns-2.35" not in md.read_text()


def test_referee_result_formats_its_cell() -> None:
    missing = RefereeResult(Measurement(math.nan, math.nan, 0), "not exportable", "why")
    assert missing.format() == "not exportable: why"
    assert missing.as_dict()["mean"] is None


def test_without_ns2_installed_the_referee_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    args = ["reproduce", "yang2001/fig16", "--quick", "--referee", "ns2", "--out", str(tmp_path)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "--referee ns2: ns-2 is not installed" in err
    assert "Traceback" not in err


@needs_ns
def test_a_failing_ns2_run_leaves_its_claims_without_a_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tfrclab.ns2.crosscheck

    def fail(
        script: str, ns: str = "ns", timeout_s: float = 600.0, *, line_buffered: bool = False
    ) -> str:
        raise RuntimeError("ns-2 failed (exit 1): invalid command name")

    monkeypatch.setattr(tfrclab.ns2.crosscheck, "run_ns2", fail)
    outcome = run_experiment(yang2001.FIG16, tmp_path, quick=True, referee="ns2")
    assert {r.agreement for r in outcome.referee} == {"not exportable"}
    assert all("RuntimeError: ns-2 failed" in r.reason for r in outcome.referee)


@needs_ns
def test_an_ns2_run_past_its_time_limit_is_stopped_and_its_cell_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tfrclab.ns2.crosscheck import run_ns2

    started = time.perf_counter()
    with pytest.raises(RuntimeError, match=r"did not finish within 0\.5 s"):
        run_ns2("while {1} {}\n", timeout_s=0.5)
    assert time.perf_counter() - started < 30.0
    monkeypatch.setattr(referee, "NS2_TIMEOUT_S", 0.01)
    outcome = run_experiment(yang2001.FIG16, tmp_path, quick=True, referee="ns2")
    assert {r.agreement for r in outcome.referee} == {"not exportable"}
    assert all("did not finish within 0.01 s" in r.reason for r in outcome.referee)
    assert not list(tmp_path.rglob("*.out.gz"))  # nothing cached for the stopped runs


@needs_ns
def test_seeds_run_side_by_side_give_the_same_datasets(tmp_path: Path) -> None:
    one = referee.ns2_sweep_data("floyd2000/fig22.toml", {}, (1, 2), tmp_path / "a", print)
    two = referee.ns2_sweep_data("floyd2000/fig22.toml", {}, (1, 2), tmp_path / "b", print, jobs=2)
    for name in ("runs", "links", "flow_series", "link_series"):
        assert getattr(one, name).equals(getattr(two, name)), name
    assert len(list((tmp_path / "b").glob("*.out.gz"))) == 2


@needs_ns
def test_ns2s_runs_carry_netsims_per_class_table(tmp_path: Path) -> None:
    # Fig. 6's RED cell at 5 Mb/s with 4 TCP and 4 TFRC flows, 60 s measured after 20 s, two
    # seeds: ns-2's runs get each flow's fair share and normalized throughput, and a class
    # table made as netsim's (tfrclab.summary.class_rows).
    from tfrclab.reproduce.floyd2000_fairness import FIG06
    from tfrclab.reproduce.registry import scenario_path
    from tfrclab.scenario import Scenario
    from tfrclab.simulate import run
    from tfrclab.summary import summarize

    label = "red-5M-8"
    (cell,) = [c for c in FIG06.cells if c[0] == label]
    changes = {**cell[2], "duration": "80s", "measure.from": "20s"}
    ns2 = referee.ns2_sweep_data(cell[1], changes, (1, 2), tmp_path / "ns2", print, jobs=2)
    for seed in (1, 2):
        runs = ns2.runs[ns2.runs["seed"] == seed]
        # No background: every flow's share is the bottleneck's 5 Mb/s over the 8 flows.
        assert runs["fair_share_bits_per_s"].to_numpy() == pytest.approx([5e6 / 8] * 8)
        assert runs["normalized_throughput"].to_numpy() == pytest.approx(
            runs["throughput_bits_per_s"].to_numpy() / (5e6 / 8)
        )
        classes = ns2.classes[ns2.classes["seed"] == seed].set_index("kind")
        assert set(classes.index) == {"tcp", "tfrc"}
        assert list(classes["class"]) == ["tcp/sack", "tfrc/floyd2000"]
        assert list(classes["flows"]) == [4, 4]
        for kind in ("tcp", "tfrc"):
            mine = runs.loc[runs["kind"] == kind, "normalized_throughput"].mean()
            assert classes.loc[kind, "normalized_throughput"] == pytest.approx(mine)
        # The shares add up to what the bottleneck carried.
        link = ns2.links[(ns2.links["seed"] == seed) & (ns2.links["name"] == "bottleneck")]
        used = float(link["utilization"].iloc[0])
        assert runs["normalized_throughput"].mean() == pytest.approx(used, rel=0.02)
        # netsim's class table of the same cell and seed has the same rows and nearly the
        # same values.
        scenario = Scenario.load(scenario_path(cell[1])).with_(**changes)
        netsim = summarize(run(scenario, seed=seed)).classes.set_index("class")
        theirs = classes.set_index("class")
        assert list(netsim.index) == list(theirs.index)
        assert theirs["normalized_throughput"].to_numpy() == pytest.approx(
            netsim["normalized_throughput"].to_numpy(), rel=0.25
        )


@needs_ns
def test_fig05_is_refereed_on_the_losses_ns2s_drop_trace_prints(tmp_path: Path) -> None:
    # Three constant-rate flows, each through its own Bernoulli loss model (quick plan: 8
    # values of p, 2 seeds of 250 s). ns-2's error models drop at the link's drop head, which
    # the drop trace now follows, so every flow gets its packet loss and loss event rates and
    # every claim an ns-2 value.
    (fig05,) = experiments(["floyd2000/fig05"])
    assert fig05.referee_drops
    outcome = run_experiment(fig05, tmp_path, quick=True, referee="ns2", jobs=2)
    assert outcome.referee
    for result in outcome.referee:
        assert result.agreement in ("agree", "differ", "inconclusive"), result.reason
        assert not math.isnan(result.measured.mean)
    from tfrclab.reproduce.floyd2000_fairness import FIG05_P

    ns2 = referee.ns2_sweep_data(
        "floyd2000/fig05.toml",
        {**fig05.cells[3][2], **fig05.quick.changes},
        (1,),
        tmp_path / "again",
        print,
        drops=True,
    )
    runs = ns2.runs.set_index("name")
    for name in ("rate1x", "rate2x", "rate05x"):
        # Drops per packet at the cell's p, and fewer loss events than drops.
        assert runs.loc[name, "packet_loss_rate"] == pytest.approx(FIG05_P[3], rel=0.25)
        assert 0 < runs.loc[name, "loss_events"] <= runs.loc[name, "packets_dropped"]
    assert not ns2.classes["loss_event_rate"].isna().any()


@needs_ns
def test_fig07_is_refereed_on_its_normalized_throughputs(tmp_path: Path) -> None:
    # Its analysis reads each flow's throughput normalized to its fair share, which ns-2's runs
    # now carry (quick plan: 7 cells of 2-128 flows, one seed of 40 s).
    (fig07,) = experiments(["floyd2000/fig07"])
    outcome = run_experiment(fig07, tmp_path, quick=True, referee="ns2", jobs=2)
    assert outcome.referee
    for result in outcome.referee:
        assert result.agreement in ("agree", "differ", "inconclusive"), result.reason
        assert not math.isnan(result.measured.mean)


@needs_ns
def test_floyd2000_fig22_is_refereed_on_its_link_and_flow_series(tmp_path: Path) -> None:
    # Two TCP flows on a RED link (quick: 2 seeds): the peak packets per 0.1 s, read from the
    # per-bin flow series, are the same in ns-2.35; the queue's growth is measured in both.
    (fig22,) = experiments(["floyd2000/fig22"])
    outcome = run_experiment(fig22, tmp_path, quick=True, referee="ns2", jobs=2)
    by_id = {r.claim.id: outcome.referee[k] for k, r in enumerate(outcome.results)}
    assert by_id["rtt50-peak-per-0.1s"].agreement == "agree"
    assert by_id["rtt50-peak-per-0.1s"].measured.seeds == 2
    growth = by_id["rtt100-queue-grows-1-per-rtt"]
    assert growth.agreement in ("agree", "inconclusive")
    assert not math.isnan(growth.measured.mean)


def test_a_claim_reading_a_refused_cell_through_a_minimum_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two cells of yang2001's single-flow scenario: TCP (exported) and TEAR (refused). One
    # claim is the minimum over both cells' mean packets per bin, where TEAR's larger value is
    # masked; the other reads TCP's alone. ns-2's runs are stood in for (no ns-2 needed).
    import pandas as pd

    import tfrclab.reproduce.referee as referee
    from tfrclab.reproduce.claims import Claim
    from tfrclab.reproduce.registry import Experiment, Plan
    from tfrclab.reproduce.runner import SweepData

    def data(value: float) -> SweepData:
        series = pd.DataFrame(
            {"seed": [1, 1], "flow": ["flow", "flow"], "time_s": [0.0, 0.1],
             "sent_packets": [value, value]}
        )  # fmt: skip
        seeds = pd.DataFrame({"seed": [1]})
        return SweepData(seeds, seeds, seeds, series, seeds, 0.1)

    def mean(cell: SweepData) -> float:
        return float(cell.flow_series["sent_packets"].mean())

    def claim(claim_id: str, key: str) -> Claim:
        return Claim(
            id=claim_id, statement=claim_id, paper_value="-", how="-", tolerance="any",
            accept=(-1e9, 1e9), measure=lambda a: Measurement(a[key], math.nan, 1),
        )  # fmt: skip

    tcp, tear = yang2001.FIG16.cells[0], yang2001.FIG16.cells[3]
    assert (tcp[0], tear[0]) == ("tcp", "tear")
    experiment = Experiment(
        id="test/masked", title="-", setup="-", kind="sweep", scenarios=(tcp[1],),
        cells=(tcp, tear), full=Plan(seeds=(1,)), quick=Plan(seeds=(1,)), metrics=(),
        claims=(claim("min", "min"), claim("tcp", "tcp")),
        analyze=lambda d, plan: {"min": min(mean(d["tcp"]), mean(d["tear"])),
                                 "tcp": mean(d["tcp"])},
        plot=lambda analysis, path: path,
    )  # fmt: skip
    netsim = {"tcp": data(5.0), "tear": data(9.0)}
    monkeypatch.setattr(referee, "ns2_sweep_data", lambda *args, **kwargs: data(4.0))
    results = tuple(judge(c, c.measure(experiment.analyze(netsim, experiment.quick)))
                    for c in experiment.claims)  # fmt: skip
    masked, alone = referee_ns2(experiment, experiment.quick, netsim, results, tmp_path, print)
    assert masked.agreement == "not exportable"
    assert "tear: flows[0].kind: 'tear' has no ns-2 export" in masked.reason
    assert alone.measured.mean == 4.0
    assert alone.agreement == "inconclusive"  # 5 against 4 on one seed

    # An analysis that reads what ns-2's datasets lack (a TFRC receiver's own counters, say)
    # leaves every claim without an ns-2 value, and says why.
    def reads_netsims_own(d: dict[str, SweepData], plan: Plan) -> dict[str, float]:
        if mean(d["tcp"]) == 4.0:  # ns-2's stand-in
            raise KeyError("packet_loss_rate")
        return {"min": min(mean(d["tcp"]), mean(d["tear"])), "tcp": mean(d["tcp"])}

    lacking = replace(experiment, analyze=reads_netsims_own)
    for r in referee_ns2(lacking, lacking.quick, netsim, results, tmp_path, print):
        assert r.agreement == "not comparable"
        assert "cannot run on ns-2's datasets (KeyError: 'packet_loss_rate')" in r.reason
