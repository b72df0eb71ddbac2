"""tfrclab against ns-2.35 on matched scenarios (scenarios/crosscheck/; docs/crosscheck.md).

Each case runs the scenario in both simulators with the same draws for every seed and asserts
that every metric agrees. The tolerances were fixed before the runs were looked at: a metric
agrees when the 99% confidence interval (Welch t over seeds) of the difference holds 0, or the
difference is within 2% of the larger mean, or within the metric's absolute floor
(``crosscheck.FLOORS``). 99% rather than the command's 95% because the suite makes about 70
comparisons: at 95% three or four would fail by chance alone. The deterministic Fig. 2 run has
no spread, so there the 2% tolerance decides alone.

Fig. 2 is measured from 3 s, after slow start: ns-2's TFRC slow start differs from the RFC 5348
one tfrclab runs in both presets (docs/tfrc.md, "Deviations from ns-2 that remain"), which puts
tfrclab 8% ahead over the first 3 s. That window was chosen after the full run showed the
difference; the full run stays below as an expected failure, so the difference stays visible
and a fix shows up as an unexpected pass.

ns-2 comes from Debian's ``ns2`` package (scripts/test.sh installs it); without ``ns`` the
suite is skipped with that reason.
"""

from __future__ import annotations

import shutil

import pytest

from conftest import REPO_ROOT
from tfrclab.cli import main
from tfrclab.ns2.crosscheck import crosscheck
from tfrclab.ns2.suite import CASES, Case
from tfrclab.scenario import Scenario

pytestmark = pytest.mark.skipif(
    shutil.which("ns") is None,
    reason="ns-2 is not installed (`ns` not on PATH; Debian/Ubuntu: apt-get install ns2)",
)

SCENARIOS = REPO_ROOT / "scenarios" / "crosscheck"
LEVEL = 0.99
TOLERANCE = 0.02


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_tfrclab_agrees_with_ns2(case: Case) -> None:
    scenario = Scenario.load(case.path)
    comparisons, _ = crosscheck(
        scenario,
        list(case.seeds),
        start_s=case.start_s,
        end_s=case.end_s,
        jobs=2,
        tolerance=TOLERANCE,
        level=LEVEL,
    )
    report = "\n".join(
        f"{c.metric}: tfrclab {c.mean_tfrclab:.4g}, ns-2 {c.mean_ns2:.4g}, "
        f"diff {c.difference:+.3g} [{c.ci_low:+.3g}, {c.ci_high:+.3g}] {c.verdict}"
        for c in comparisons
    )
    assert all(c.verdict == "agree" for c in comparisons), report


@pytest.mark.xfail(
    strict=True, reason="ns-2's TFRC slow start differs (docs/crosscheck.md, known differences)"
)
def test_fig02_including_slow_start() -> None:
    scenario = Scenario.load(SCENARIOS / "tfrc-fig02.toml")
    comparisons, _ = crosscheck(scenario, [1], tolerance=TOLERANCE, level=LEVEL)
    assert all(c.verdict == "agree" for c in comparisons)


def test_cli_prints_the_table_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(SCENARIOS / "tfrc-fig02.toml")
    assert main(["crosscheck", path, "--seeds", "1", "--measure-from", "3"]) == 0
    out = capsys.readouterr().out
    assert "throughput/tfrc" in out
    assert "agree" in out
    assert main(["crosscheck", path, "--seeds", "1", "--measure-from", "3", "--json"]) == 0
    assert '"verdict": "agree"' in capsys.readouterr().out
    # Slow start included: the known difference, exit status 3.
    assert main(["crosscheck", path, "--seeds", "1", "--measure-to", "6"]) == 3
