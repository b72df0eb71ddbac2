"""``tfrclab reproduce``: the registry's own checks, and a --quick run of floyd2000."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

from conftest import REPO_ROOT, kill_and_count_orphans, run_cli
from tfrclab.reproduce.claims import Claim, Measurement, evaluate
from tfrclab.reproduce.registry import experiments, registry, scenario_path

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


def _claim(accept: tuple[float, float], value: float, known: str | None = None) -> Claim:
    return Claim(
        id="c",
        statement="s",
        paper_value="p",
        how="h",
        tolerance="t",
        accept=accept,
        measure=lambda _a: Measurement(value, 0.1, 3),
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
            assert claim["verdict"] in ("holds", "fails", "not comparable")
    for e in experiments(list(_FLOYD2000_PY)):
        for c in e.claims:
            if c.robust_to_quick:
                key = f"{e.id}/{c.id}"
                assert verdicts[key]["verdict"] == EXPECTED_QUICK[key], (key, verdicts[key])

    loss = verdicts["floyd2000/fig09/loss-rate"]
    assert loss["reason"].startswith("the paper's loss rate does not fit")  # type: ignore[union-attr]
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
