"""Contrary data: every claim's verdict must move when its runs' numbers do."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tfrclab.reproduce.claims import Claim, Measurement, evaluate, measure_seeds, worst_of
from tfrclab.reproduce.falsify import contrary, perturbations
from tfrclab.reproduce.registry import Experiment, Plan
from tfrclab.reproduce.report import write_report
from tfrclab.reproduce.runner import run_experiment


def _claim(name: str, accept: tuple[float, float], measure: Any) -> Claim:
    return Claim(
        id=name,
        statement="s",
        paper_value="p",
        how="h",
        tolerance=f"in {accept}",
        accept=accept,
        measure=measure,
    )


def _seeds(key: str) -> Any:
    return lambda analysis: measure_seeds(analysis[key])


def test_a_claim_computed_without_the_runs_cannot_fail() -> None:
    constant = _claim("constant", (0.0, 1.0), lambda _a: Measurement(0.5, float("nan"), 1))
    found = contrary(constant, {"drops": np.array([0.1, 0.2])})
    assert not found.can_fail
    assert found.reads == ()
    assert "computed without them" in found.describe()


def test_a_band_over_a_shares_whole_range_cannot_fail() -> None:
    # A share is in [0, 1]: a band of [0, 1] holds whatever the runs give (no perturbation
    # leaves the share's domain to fake a failure).
    share = _claim("share", (0.0, 1.0), _seeds("share"))
    found = contrary(share, {"share": np.array([0.6, 0.7, 0.65]), "other": 3.0})
    assert not found.can_fail
    assert found.reads == ("share",)
    assert found.tried > 0
    assert "no verdict moved" in found.describe()
    # The same share against "above one half" moves.
    half = contrary(_claim("half", (0.5, 1.0), _seeds("share")), {"share": np.array([0.6, 0.7])})
    assert half.can_fail
    assert half.verdict in ("fails", "inconclusive")


def test_a_narrow_band_far_from_the_value_is_reached() -> None:
    # A fail 13x above a narrow band (fig09's loss rate): some contrary run lands in it.
    loss = _claim("loss", (0.0005, 0.002), _seeds("loss"))
    analysis = {"loss": np.array([0.0255, 0.026, 0.0258])}
    assert evaluate(loss, analysis).verdict == "fails"
    found = contrary(loss, analysis)
    assert found.verdict == "holds"
    assert found.by is not None
    assert "['loss']" in found.by


def test_a_worst_of_several_moves_with_every_value_together() -> None:
    # The worst of three cells fails; moving one cell alone cannot lift the worst into the
    # band, moving all three together can.
    def worst(analysis: dict[str, Any]) -> Measurement:
        cells = np.column_stack([analysis[k] for k in ("a", "b", "c")])
        return worst_of(cells, ["a", "b", "c"], badness=lambda m: -m)

    claim = _claim("worst", (0.3, 1.0), worst)
    analysis = {k: np.array([0.1, 0.11, 0.12]) for k in ("a", "b", "c")}
    found = contrary(claim, analysis)
    assert found.can_fail
    assert found.by is not None
    assert found.by.startswith("every value it reads")


def test_signed_values_are_negated() -> None:
    falls = _claim("falls", (0.0, 1.0), lambda a: Measurement(float(a["fall"]), np.nan, 1))
    found = contrary(falls, {"fall": -0.05})
    assert found.verdict == "holds"


@dataclass(frozen=True)
class _Series:
    rate: np.ndarray
    label: str


def test_perturbations_reach_every_kind_of_value_and_copy_only_what_they_change() -> None:
    frame = pd.DataFrame({"seed": [1, 2], "util": [0.9, 0.8], "name": ["a", "b"]})
    analysis: dict[str, Any] = {
        "cells": {"red": {"drop": np.array([0.04, 0.05])}},
        "pair": (np.array([2.0, 3.0]), np.array([5.0])),
        "numbers": [1.0, 2.0],
        "flag": True,
        "table": frame,
        "series": _Series(np.array([10.0, 20.0]), "tcp"),
        "name": "not a number",
    }
    seen = {name.split(" -> ")[0] for name, _ in perturbations(analysis)}
    assert "analysis['cells']['red']['drop']" in seen
    assert "analysis['pair'][0]" in seen
    assert "analysis['numbers']" in seen
    assert "analysis['flag']" in seen
    assert "analysis['table']['util']" in seen
    assert "analysis['series']['rate']" in seen
    assert not any("name" in s for s in seen)
    for name, perturbed in perturbations(analysis, ("table", "series")):
        if name == "analysis['table']['util'] -> x * 0.5":
            assert list(perturbed["table"]["util"]) == [0.45, 0.4]
        if name == "analysis['series']['rate'] -> x * 2":
            assert list(perturbed["series"].rate) == [20.0, 40.0]
            assert perturbed["series"].label == "tcp"
        assert perturbed["cells"] is analysis["cells"]  # untouched values are shared
    # The analysis itself is never changed.
    assert list(frame["util"]) == [0.9, 0.8]
    assert list(analysis["series"].rate) == [10.0, 20.0]


def _experiment(claims: tuple[Claim, ...]) -> Experiment:
    def plot(_analysis: object, path: Path) -> Path:
        path.write_bytes(b"png")
        return path

    plan = Plan(seeds=(1,), duration_s=1.0)
    return Experiment(
        id="test/contrary",
        title="contrary",
        setup="a scripted analysis",
        kind="channel",
        scenarios=(),
        cells=(),
        full=plan,
        quick=plan,
        metrics=(),
        claims=claims,
        analyze=lambda _d, _p: {"share": np.array([0.6, 0.7, 0.65])},
        plot=plot,
    )


def test_reports_name_the_claims_no_contrary_data_moves(tmp_path: Path) -> None:
    experiment = _experiment(
        (
            _claim("above-half", (0.5, 1.0), _seeds("share")),
            _claim("whole-range", (0.0, 1.0), _seeds("share")),
            _claim("nothing", (0.0, 1.0), lambda _a: Measurement(float("nan"), np.nan, 0)),
        )
    )
    lines: list[str] = []
    outcome = run_experiment(experiment, tmp_path, quick=True, progress=lines.append)
    assert [r.claim.id for r, _c in outcome.unmoved] == ["whole-range"]
    assert outcome.contraries[2] is None  # not comparable: nothing to move
    assert any("whole-range: no contrary data moved its verdict" in line for line in lines)
    write_report([outcome], tmp_path)
    (record,) = json.loads((tmp_path / "claims.json").read_text())
    by_id = {c["id"]: c["contrary"] for c in record["claims"]}
    assert by_id["above-half"]["can_fail"] is True
    assert by_id["whole-range"]["can_fail"] is False
    assert by_id["whole-range"]["reads"] == ["share"]
    assert by_id["nothing"] is None
    md = (tmp_path / "report.md").read_text()
    assert "Claims whose verdict no contrary data moved: 1." in md
    assert "No contrary data moved these claims' verdicts: whole-range (" in md
    page = (tmp_path / "report.html").read_text()
    assert '<p class="contrary">No contrary data moved these claims' in page


def test_values_that_oppose_one_another_are_pushed_apart() -> None:
    # TFRC's CoV minus the larger of TCP's and GAIMD's, at two loss rates, must be above 0:
    # no move of every value alike, nor of one value alone, makes TFRC's the largest at both;
    # pushing each the way that raises the difference does.
    def gap(a: dict[str, np.ndarray]) -> Measurement:
        per_loss = [a[f"tfrc{p}"] - np.maximum(a[f"tcp{p}"], a[f"gaimd{p}"]) for p in (15, 20)]
        return measure_seeds(np.min(per_loss, axis=0))

    claim = replace(_claim("gap", (0.0, 1e9), gap), strict=(True, False))
    analysis = {
        **{f"tfrc{p}": np.array([0.7, 0.8, 0.75, 0.72]) for p in (15, 20)},
        **{f"tcp{p}": np.array([1.7, 1.6, 1.65, 1.62]) for p in (15, 20)},
        **{f"gaimd{p}": np.array([1.5, 1.4, 1.45, 1.42]) for p in (15, 20)},
    }
    assert evaluate(claim, analysis).verdict == "fails"
    found = contrary(claim, analysis)
    assert found.verdict == "holds"
    assert found.by is not None
    assert "pushed up and the rest down" in found.by
