"""``tfrclab reproduce``: the registry's own checks, and a --quick run of floyd2000."""

from __future__ import annotations

import json
import math
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from conftest import REPO_ROOT, kill_and_count_orphans, run_cli
from tfrclab.reproduce.claims import Band, Claim, Measurement, band_conflicts, evaluate
from tfrclab.reproduce.registry import Experiment, Plan, experiments, registry, scenario_path
from tfrclab.reproduce.report import write_report
from tfrclab.reproduce.runner import SweepData, run_experiment
from tfrclab.sweep import load

# The verdicts a --quick run must give for the claims marked robust to the reduction. They
# are the model's behaviour, measured (see docs/reproduction/README.md), not the paper's.
EXPECTED_QUICK = {
    "floyd2000/fig02/stable-before-6s": "fails",
    "floyd2000/fig02/cut-after-6s": "fails",
    "floyd2000/fig02/smooth-rise-after-9s": "holds",
    "floyd2000/fig09/tcp-tfrc-equivalence": "holds",
    "floyd2000/fig09/loss-rate": "fails",
}

_FLOYD2000_PY = ("floyd2000/fig02", "floyd2000/fig09", "floyd2000/table25")


def test_ids_are_unique_and_well_formed() -> None:
    ids = [e.id for e in registry()]
    assert len(ids) == len(set(ids))
    assert {"floyd2000/fig02", "floyd2000/fig09", "floyd2000/table25"} <= set(ids)
    for e in registry():
        paper, _, figure = e.id.partition("/")
        assert paper == e.paper
        assert figure
        claim_ids = [c.id for c in e.claims]
        assert len(claim_ids) == len(set(claim_ids)), e.id


def test_every_claim_has_a_paper_value_and_a_tolerance() -> None:
    # Every paper's experiments (each module's tests check only what is particular to it).
    for e in registry():
        assert e.claims, e.id
        assert e.setup.strip(), e.id
        for c in e.claims:
            for text in (c.statement, c.paper_value, c.tolerance, c.how):
                assert text.strip(), f"{e.id}/{c.id}"
            low, high = c.accept
            assert math.isfinite(low), c.id
            assert math.isfinite(high), c.id
            assert low <= high, c.id


def test_scenario_files_exist_and_quick_is_smaller() -> None:
    for e in registry():
        for _label, relative, _changes in e.cells:
            assert relative in e.scenarios, relative
        for relative in e.scenarios:
            assert scenario_path(relative).is_file(), relative
            assert (REPO_ROOT / "scenarios" / "papers" / relative).is_file(), relative
        assert len(e.quick.seeds) <= len(e.full.seeds)
        assert e.kind == "channel" or not e.full.changes


def test_selectors() -> None:
    assert [e.id for e in experiments(["floyd2000/fig09"])] == ["floyd2000/fig09"]
    floyd = [e for e in registry() if e.paper == "floyd2000"]
    assert experiments(["floyd2000"]) == floyd
    with pytest.raises(ValueError, match="no experiment"):
        experiments(["nosuchpaper"])


def _claim(
    accept: tuple[float, float], value: float, known: str | None = None, half: float = 0.1
) -> Claim:
    return Claim(
        id="c",
        statement="s",
        paper_value="p",
        how="h",
        tolerance="t",
        accept=accept,
        measure=lambda _a: Measurement(value, half, 3),
        known_deviation=known,
    )


def test_verdicts() -> None:
    assert evaluate(_claim((0, 1), 0.5), {}).verdict == "holds"
    failed = evaluate(_claim((0, 1), 2.0), {})
    assert failed.verdict == "fails"
    assert "outside" in failed.reason
    known = evaluate(_claim((0, 1), 2.0, known="explained"), {})
    assert known.verdict == "fails"
    assert known.reason == "explained"
    assert evaluate(_claim((0, 1), math.nan), {}).verdict == "not comparable"


def test_verdicts_are_decided_on_the_whole_interval() -> None:
    # A mean inside the band whose interval crosses an edge does not hold, nor does a mean
    # outside it whose interval reaches back in fail: the seeds run do not decide.
    inside = evaluate(_claim((0, 1), 0.95), {})
    assert inside.verdict == "inconclusive"
    assert "crosses the tolerance's edge 1" in inside.reason
    outside = evaluate(_claim((0, 1), 1.05, known="explained"), {})
    assert outside.verdict == "inconclusive"  # a known deviation does not decide it either
    assert "edge 1" in outside.reason
    assert evaluate(_claim((0, 1), -0.05), {}).verdict == "inconclusive"
    assert evaluate(_claim((0, 1), 0.9), {}).verdict == "holds"  # [0.8, 1.0]: closed band
    assert evaluate(_claim((0, 1), 1.1000001), {}).verdict == "fails"
    result = evaluate(_claim((0, 1), 0.5), {})
    assert result.as_dict()["ci"] == pytest.approx([0.4, 0.6])
    # Without an interval (a deterministic run, one seed) the value decides, as before.
    assert evaluate(_claim((0, 1), 0.95, half=math.nan), {}).verdict == "holds"
    assert evaluate(_claim((0, 1), 1.05, half=math.nan), {}).verdict == "fails"
    assert evaluate(_claim((0, 1), 0.95, half=math.nan), {}).as_dict()["ci"] is None


def test_a_strict_edge_is_not_met_by_a_tie() -> None:
    # "above 0" (strict low edge) against "at least 0": a tie, or an interval reaching the
    # edge, does not hold.
    above = replace(_claim((0, 1), 0.0, half=math.nan), strict=(True, False))
    tie = evaluate(above, {})
    assert tie.verdict == "fails"
    assert tie.reason == "0 is outside (0, 1]"
    at_least = evaluate(_claim((0, 1), 0.0, half=math.nan), {})
    assert at_least.verdict == "holds"
    reaching = evaluate(replace(_claim((0, 1), 0.1), strict=(True, False)), {})
    assert reaching.verdict == "inconclusive"  # [0, 0.2] touches the excluded 0
    assert "edge 0 of (0, 1]" in reaching.reason
    assert evaluate(replace(_claim((0, 1), 0.2), strict=(True, False)), {}).verdict == "holds"
    below = replace(_claim((0, 1), 1.0, half=0.0), strict=(False, True))
    assert evaluate(below, {}).verdict == "fails"  # [1, 1] against [0, 1)
    assert evaluate(replace(below, strict=(False, False)), {}).verdict == "holds"
    assert below.as_dict()["strict"] == [False, True]


_STRICT_WORDS = {"above": 0, "over": 0, "more than": 0, "below": 1, "under": 1, "less than": 1}


def test_above_and_below_tolerances_exclude_their_edge() -> None:
    # A paper's "above N" accepts neither N nor less (nor "below N" N or more): every
    # tolerance written so has that edge at N and strict, and no other tolerance is strict.
    for e in registry():
        for c in e.claims:
            text = c.tolerance.lower()
            word = next((w for w in _STRICT_WORDS if text.startswith(w + " ")), None)
            key = f"{e.id}/{c.id}"
            if word is None:
                assert c.strict == (False, False), key
                continue
            side = _STRICT_WORDS[word]
            number = float(text[len(word) :].split()[0].rstrip(":,"))
            assert c.accept[side] == number, (key, c.tolerance, c.accept)
            assert c.strict == (side == 0, side == 1), (key, c.tolerance, c.strict)


def _seed_experiment(claims: tuple[Claim, ...], kind: str = "sweep") -> Experiment:
    """A small sweep experiment (2 quick seeds of a 2 s fig22 run) with the given claims.

    Its analysis is the seeds the sweep's runs hold, so the claims see every seed run.
    """

    def analyze(data: SweepData, _plan: Plan) -> dict[str, object]:
        return {"seeds": sorted(int(s) for s in set(data.runs["seed"]))}

    def plot(_analysis: object, path: Path) -> Path:
        path.write_bytes(b"png")
        return path

    plan = Plan(seeds=(1, 2), changes={"duration": "2s"})
    return Experiment(
        id="test/seeds",
        title="seeds",
        setup="two TCP flows, 2 s",
        kind=kind,  # type: ignore[arg-type]
        scenarios=("floyd2000/fig22.toml",),
        cells=(),
        full=plan,
        quick=plan,
        metrics=(),
        claims=claims,
        analyze=analyze if kind == "sweep" else lambda _d, p: {"seeds": list(p.seeds)},
        plot=plot,
    )


def _narrowing(accept: tuple[float, float], half_at_2: float) -> Claim:
    """A claim measured at 0.5 whose interval narrows as 1/seeds (``half_at_2`` at 2 seeds)."""

    def measure(analysis: dict[str, list[int]]) -> Measurement:
        n = len(analysis["seeds"])
        return Measurement(0.5, half_at_2 * 2 / n, n)

    return replace(_claim(accept, 0.5), id=f"narrow-{half_at_2}", measure=measure)


def test_inconclusive_claims_get_more_seeds_up_to_the_cap(tmp_path: Path) -> None:
    # Decided at 4 seeds (half 0.25: [0.25, 0.75] in [0, 0.9]); undecided at 2 ([0, 1]).
    decided = run_experiment(
        _seed_experiment((_narrowing((0, 0.9), 0.5),)), tmp_path, quick=True, seed_cap=4
    )
    assert decided.plan.seeds == (1, 2, 3, 4)  # stopped once decided, before the cap
    assert decided.added_seeds == 2
    assert decided.analysis["seeds"] == [1, 2, 3, 4]
    assert [r.verdict for r in decided.results] == ["holds"]
    assert decided.results[0].measured.seeds == 4
    assert "2 planned, 2 added" in decided.describe_plan()

    # Never decided: the seeds stop at the cap (3 x 2) and the verdict stays inconclusive; the
    # four seeds run before are reused.
    lines: list[str] = []
    capped = run_experiment(
        _seed_experiment((_narrowing((0, 0.5), 0.5),)),
        tmp_path,
        quick=True,
        seed_cap=3,
        progress=lines.append,
    )
    assert capped.plan.seeds == (1, 2, 3, 4, 5, 6)
    assert [r.verdict for r in capped.results] == ["inconclusive"]
    assert "test/seeds: 0 of 4 runs to do" in lines
    record = json.loads((tmp_path / "test" / "seeds" / "claims.json").read_text())
    assert (record["seeds"], record["planned_seeds"]) == (6, 2)
    assert record["counts"] == {"holds": 0, "fails": 0, "inconclusive": 1, "not comparable": 0}

    # A quick plan adds no seeds by default; nor does an experiment that is not a sweep.
    quick = run_experiment(_seed_experiment((_narrowing((0, 0.5), 0.5),)), tmp_path, quick=True)
    assert quick.plan.seeds == (1, 2)
    assert quick.results[0].verdict == "inconclusive"
    channel = run_experiment(
        _seed_experiment((_narrowing((0, 0.5), 0.5),), kind="channel"), tmp_path, seed_cap=4
    )
    assert channel.plan.seeds == (1, 2)
    # A channel (or ns-2) experiment that makes one run per seed of its plan is extended too.
    seeded = replace(_seed_experiment((_narrowing((0, 0.9), 0.5),), kind="channel"), seeded=True)
    assert seeded.extendable
    extended = run_experiment(seeded, tmp_path, seed_cap=4)
    assert extended.plan.seeds == (1, 2, 3, 4)
    assert extended.analysis["seeds"] == [1, 2, 3, 4]
    assert [r.verdict for r in extended.results] == ["holds"]
    assert "2 planned, 2 added" in extended.describe_plan()

    # The reports count the verdicts per paper.
    write_report([decided, capped], tmp_path)
    md = (tmp_path / "report.md").read_text()
    assert "1 hold, 0 fail, 1 inconclusive, 0 not comparable" in md
    assert "| paper | holds | fails | inconclusive | not comparable |" in md
    assert "| test | 1 | 0 | 1 | 0 |" in md
    page = (tmp_path / "report.html").read_text()
    assert '<tr class="inconclusive" data-claim="test/seeds/narrow-0.5">' in page
    assert '<tr data-paper="test"><td>test</td><td>1</td><td>0</td><td>1</td><td>0</td>' in page
    counts = json.loads((tmp_path / "counts.json").read_text())
    assert counts["test"] == {"holds": 1, "fails": 0, "inconclusive": 1, "not comparable": 0}


def test_list() -> None:
    done = run_cli("reproduce", "--list")
    assert done.returncode == 0, done.stderr
    for e in registry():
        assert e.id in done.stdout
        for c in e.claims:
            assert c.id in done.stdout


def test_out_is_required_to_run() -> None:
    done = run_cli("reproduce", "floyd2000/fig02")
    assert done.returncode == 2
    assert "--out" in done.stderr


def test_quick_run_of_floyd2000(tmp_path: Path) -> None:
    out = tmp_path / "repro"
    # The experiments of floyd2000.py; the other modules' experiments have their own tests.
    done = run_cli("reproduce", *_FLOYD2000_PY, "--quick", "--jobs", "2", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "floyd2000/fig09: run" in done.stderr  # progress on stderr

    results = json.loads((out / "claims.json").read_text())
    verdicts: dict[str, dict[str, object]] = {}
    for experiment in results:
        assert experiment["quick"] is True
        assert (out / experiment["id"] / experiment["figure"]).is_file()
        for claim in experiment["claims"]:
            verdicts[f"{experiment['id']}/{claim['id']}"] = claim
            assert claim["verdict"] in ("holds", "fails", "inconclusive", "not comparable")
    # Every decided claim's verdict moves under contrary data (null: not comparable).
    unmoved = {k: v["contrary"] for k, v in verdicts.items() if v["contrary"] is not None}
    assert {k: v["summary"] for k, v in unmoved.items() if not v["can_fail"]} == {}
    for e in experiments(list(_FLOYD2000_PY)):
        for c in e.claims:
            if c.robust_to_quick:
                key = f"{e.id}/{c.id}"
                assert verdicts[key]["verdict"] == EXPECTED_QUICK[key], (key, verdicts[key])

    loss = verdicts["floyd2000/fig09/loss-rate"]
    assert loss["reason"].startswith("the loss rate is far above the paper's")  # type: ignore[union-attr]
    assert 0.015 < loss["mean"] < 0.04  # type: ignore[operator]
    assert loss["ci_half"] is not None  # three seeds give a CI

    md = (out / "report.md").read_text()
    assert "| claim | paper | how measured | tolerance | measured | verdict | reason |" in md
    page = (out / "report.html").read_text()
    assert '<table class="claims">' in page
    assert page.count("data:image/png;base64,") == len(results)
    assert 'class="fails" data-claim="floyd2000/fig09/loss-rate"' in page
    assert 'src="floyd' not in page  # self-contained: no links to the figure files

    # A second run reuses every finished run of the sweep (resumable like a sweep).
    again = run_cli("reproduce", "floyd2000/fig09", "--quick", "--out", str(out))
    assert again.returncode == 0, again.stderr
    assert "0 of 3 runs to do" in again.stderr

    # A damaged file of the sweep (not only of runs/) is named, and its runs are made again.
    sweep_dir = out / "floyd2000" / "fig09" / "sweep-quick"
    victim = sorted((sweep_dir / "flow_series").glob("*.parquet"))[0]
    victim.write_bytes(victim.read_bytes()[:64])
    repaired = run_cli("reproduce", "floyd2000/fig09", "--quick", "--out", str(out))
    assert repaired.returncode == 0, repaired.stderr
    assert f"floyd2000/fig09: repairing: {victim} is damaged (" in repaired.stderr
    assert "0 of 3 runs to do" not in repaired.stderr
    fig09 = json.loads((out / "floyd2000" / "fig09" / "claims.json").read_text())
    for claim in fig09["claims"]:  # the same numbers as before the damage
        before = verdicts[f"floyd2000/fig09/{claim['id']}"]
        assert claim["verdict"] == before["verdict"]
        assert claim["mean"] == pytest.approx(before["mean"], nan_ok=True)


def test_dask_executor_gives_the_local_numbers(tmp_path: Path) -> None:
    # The same claims, measured the same to the last bit, whether the sweeps ran in local
    # worker processes or on a dask.distributed cluster (one local cluster for the whole run).
    pytest.importorskip("distributed")
    measured = {}
    for executor in ("local", "dask"):
        out = tmp_path / executor
        done = run_cli(
            "reproduce",
            "floyd2000/fig22",
            "--quick",
            "--jobs",
            "2",
            "--executor",
            executor,
            "--quiet",
            "--json",
            "--out",
            str(out),
        )
        assert done.returncode == 0, done.stderr
        measured[executor] = [
            (c["id"], c["mean"], c["ci_half"], c["verdict"])
            for e in json.loads(done.stdout)
            for c in e["claims"]
        ]
    assert measured["local"]
    assert measured["local"] == measured["dask"]


def test_sigkill_takes_the_workers_with_it(tmp_path: Path) -> None:
    # The full fig09 (14 seeds of 16 + 16 flows): its runs are still going when it is killed.
    args = ["reproduce", "floyd2000/fig09", "--jobs", "2", "--out", str(tmp_path / "repro")]
    outlived_s = kill_and_count_orphans([sys.executable, "-m", "tfrclab", *args], workers=2)
    assert outlived_s < 2


@pytest.mark.parametrize(
    "damage", [b"", b'{"key": {"scenario": "rhee', b"\xff\xfe garbage", b"[1, 2]"]
)
def test_a_damaged_run_record_is_made_again(
    damage: bytes,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from tfrclab.ns2 import classes
    from tfrclab.reproduce import floyd2000_testbed, rhee2005_ns2

    made: list[int] = []

    def run_classes(*args: object) -> tuple[dict[str, object], dict[str, object]]:
        made.append(1)
        loss = classes.ClassLoss(0.01, 0.005, 1e6, 0.005, 0.0, 0.01)
        return dict.fromkeys(rhee2005_ns2.CLASSES, loss), dict.fromkeys(rhee2005_ns2.CLASSES, loss)

    monkeypatch.setattr(classes, "run_classes", run_classes)
    path = tmp_path / "runs" / "load10-seed1.json"
    first = rhee2005_ns2._one_run("rhee2005/base.toml", 10, 1, 30.0, path)
    assert rhee2005_ns2._one_run("rhee2005/base.toml", 10, 1, 30.0, path) == first
    assert made == [1]  # reused
    # A record cut short, garbage or not an object: made again and rewritten, and said so.
    path.write_bytes(damage)
    capsys.readouterr()
    assert rhee2005_ns2._one_run("rhee2005/base.toml", 10, 1, 30.0, path) == first
    assert made == [1, 1]
    assert f"repairing: {path}" in capsys.readouterr().err
    assert json.loads(path.read_text()) == first
    # The testbed experiments' records likewise: a damaged one is not reused.
    result = tmp_path / "testbed" / "result.json"
    result.parent.mkdir()
    result.write_bytes(damage)
    assert floyd2000_testbed._reuse(result.parent, 60.0, 1) is None


def _one_run_per_batch(experiment: Experiment, out: Path) -> Path:
    """Run ``experiment``'s quick sweep as the runner would, one file per run; its directory."""
    from tfrclab.scenario import Scenario
    from tfrclab.sweep import Grid, run_sweep
    from tfrclab.sweep_store import Flush

    plan = experiment.quick
    scenario = Scenario.load(scenario_path(experiment.scenarios[0])).with_(**plan.changes)
    directory = out / "test" / "seeds" / "sweep-quick"
    grid = Grid(scenario, vary=(), seeds=plan.seeds, series=True, trace=plan.trace)
    run_sweep(grid, directory, flush=Flush(runs=1))
    return directory


def test_a_damaged_batch_file_is_run_again(tmp_path: Path) -> None:
    # One seed's per-bin series file is truncated: the runner's sweep sees it when it resumes
    # and runs that seed again, so the claims are measured on both seeds, as the report says.
    experiment = _seed_experiment((_narrowing((0, 1), 0.1),))
    directory = _one_run_per_batch(experiment, tmp_path)
    damaged = sorted((directory / "flow_series").glob("*.parquet"))[1]
    damaged.write_bytes(damaged.read_bytes()[: damaged.stat().st_size // 2])
    lines: list[str] = []
    outcome = run_experiment(experiment, tmp_path, quick=True, progress=lines.append)
    assert "test/seeds: 1 of 2 runs to do" in lines
    assert outcome.analysis["seeds"] == [1, 2]
    assert sorted(set(load(directory, "flow_series")["seed"])) == [1, 2]


def test_a_dataset_short_of_a_seed_is_refused(tmp_path: Path) -> None:
    # A damage the files' footers do not show (here one seed's link series file replaced by the
    # other's, a readable file) must not give claims on fewer seeds than the plan states.
    experiment = _seed_experiment((_narrowing((0, 1), 0.1),))
    directory = _one_run_per_batch(experiment, tmp_path)
    first, second = sorted((directory / "link_series").glob("*.parquet"))
    runs = load(directory, "runs")
    kept = first if int(runs[runs["run"] == first.stem]["seed"].iloc[0]) == 1 else second
    lost = second if kept == first else first
    lost.write_bytes(kept.read_bytes())
    with pytest.raises(ValueError, match=r"link_series dataset lacks seeds \[2\]"):
        run_experiment(experiment, tmp_path, quick=True)


def test_report_files_are_replaced_together(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A failure while writing the second report leaves all four files as they were (and no
    # temporary directory), never a new report.md beside an old claims.json.
    from tfrclab.reproduce import report

    experiment = _seed_experiment((_narrowing((0, 1), 0.1),), kind="channel")
    outcome = run_experiment(experiment, tmp_path, quick=True)
    write_report([outcome], tmp_path)
    names = ("report.md", "report.html", "claims.json", "counts.json")
    before = {name: (tmp_path / name).read_text() for name in names}
    changed = replace(outcome, wall_s=outcome.wall_s + 100.0)

    def failing(_outcomes: object) -> str:
        raise OSError("disk full")

    monkeypatch.setattr(report, "_html", failing)
    with pytest.raises(OSError, match="disk full"):
        write_report([changed], tmp_path)
    assert {name: (tmp_path / name).read_text() for name in names} == before
    assert not list(tmp_path.glob(".report.partial-*"))
    monkeypatch.undo()
    write_report([changed], tmp_path)
    assert (tmp_path / "report.md").read_text() != before["report.md"]
    assert not list(tmp_path.glob(".report.partial-*"))


# Claims that check the same quantity against the same paper statement, in different
# experiments (found auditing the registry): each group must take its tolerance from one band.
SAME_STATEMENT = (
    ("floyd2000/fig02/cut-after-6s", "floyd2000/fig21/most-rtts"),
    ("yang2001/table1/F-gaimd", "yang2001/fig12-14/F-gaimd"),
    ("yang2001/table1/F-tfrc", "yang2001/fig12-14/F-tfrc"),
    ("yang2001/table1/F-tear", "yang2001/fig12-14/F-tear"),
    ("yang2001/table1/tfrc-rate-near-0-at-20%", "yang2001/fig03-05/tfrc-near-0-at-20%"),
    ("yang2001/table1/tear-rate-too-high-at-20%", "yang2001/fig03-05/tear-far-above-tcp-at-20%"),
    ("yang2001/table1/cov20-tfrc", "yang2001/fig06/tfrc-about-2-at-20%"),
)


def test_one_band_per_quantity_and_statement() -> None:
    claims = {f"{e.id}/{c.id}": c for e in registry() for c in e.claims}
    assert band_conflicts(claims.items()) == []
    for group in SAME_STATEMENT:
        bands = {claims[name].band for name in group}
        assert len(bands) == 1, (group, bands)
        assert None not in bands, group
        accepts = {claims[name].accept for name in group}
        assert len(accepts) == 1, (group, accepts)


def test_band_conflicts_finds_a_statement_with_two_bands() -> None:
    def band(accept: tuple[float, float]) -> Band:
        return Band("RTTs to halve", "App. A.2: three to eight", accept, f"in {accept}")

    def claim(name: str, b: Band) -> tuple[str, Claim]:
        return name, Claim.in_band(
            b, id=name, statement="s", paper_value="p", how="h", measure=lambda _a: None
        )

    strict, loose = band((0.0, 8.0)), band((0.0, 9.0))
    assert band_conflicts([claim("a", strict), claim("b", strict)]) == []
    (found,) = band_conflicts([claim("a", strict), claim("b", loose)])
    assert "App. A.2: three to eight" in found
    assert "a [0.0, 8.0]" in found
    assert "b [0.0, 9.0]" in found
    # A claim written out twice with two tolerances is found without a band too.
    twice = [("x", _claim((0, 1), 0.5)), ("y", replace(_claim((0, 2), 0.5), id="y"))]
    assert len(band_conflicts(twice)) == 1
    # A claim cannot take a band and another tolerance.
    with pytest.raises(ValueError, match="differ from its band"):
        replace(claim("a", strict)[1], accept=(0.0, 9.0))
