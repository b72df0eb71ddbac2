"""A twin's testbed run is checked for the relay's timing, and a disturbed one is run again."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tfrclab.scenario import Scenario
from tfrclab.testbed.log import ARRIVE, DEPART, RECORD
from tfrclab.testbed.timing import (
    DISTURBED_FRACTION,
    LATE_S,
    RelayTiming,
    cpu_steal_s,
    relay_timing,
)
from tfrclab.twin import TwinError, TwinReport

BASE = Path(__file__).resolve().parents[2] / "python/tfrclab/scenarios/twin/cubic-tfrc.toml"


def _records(late_ms: list[float], arrivals: int = 0) -> np.ndarray:
    records = np.zeros(len(late_ms) + arrivals, dtype=RECORD)
    records["event"][: len(late_ms)] = DEPART
    records["event"][len(late_ms) :] = ARRIVE
    records["late_ns"][: len(late_ms)] = np.round(np.asarray(late_ms) * 1e6).astype(np.int64)
    # An arrival's lateness is not a delivery's: it must not count.
    records["late_ns"][len(late_ms) :] = 50_000_000
    return records


def test_the_late_share_counts_deliveries_over_a_millisecond() -> None:
    timing = relay_timing(_records([0.05] * 980 + [1.5] * 19 + [14.0], arrivals=500))
    assert (timing.deliveries, timing.late) == (1000, 20)
    assert timing.late_fraction == pytest.approx(0.02)
    assert timing.disturbed
    assert timing.max_s == pytest.approx(0.014)
    assert timing.p99_s == pytest.approx(0.0015, rel=0.01)
    text = timing.describe()
    assert "2.00% of 1000 packets more than 1 ms late" in text
    assert "99th percentile 1.50 ms, worst 14.0 ms)" in text
    stolen = RelayTiming(1000, 20, 0.0015, 0.014, steal_s=0.25)
    assert "worst 14.0 ms; the hypervisor took 250 ms of CPU during the run)" in stolen.describe()
    assert stolen.as_dict()["steal_s"] == 0.25
    assert RelayTiming.from_dict({"seed": 3, **stolen.as_dict()}) == stolen


def test_the_steal_is_read_from_proc_stat() -> None:
    steal = cpu_steal_s()
    if not Path("/proc/stat").exists():
        assert steal is None
        return
    assert steal is not None
    assert steal >= 0
    # Exactly at the line is not disturbed; one more late delivery is.
    assert not relay_timing(_records([0.05] * 990 + [1.5] * 10)).disturbed
    assert relay_timing(_records([0.05] * 989 + [1.5] * 11)).disturbed
    # A delivery exactly 1 ms late is on time.
    assert relay_timing(_records([LATE_S * 1e3] * 10)).late == 0


def test_a_log_without_deliveries_is_not_disturbed() -> None:
    timing = relay_timing(_records([], arrivals=3))
    assert timing == RelayTiming(0, 0, 0.0, 0.0)
    assert timing.late_fraction == 0.0
    assert not timing.disturbed


def _canned_twin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fractions: list[float], retries: int
) -> tuple[TwinReport, list[str], list[int]]:
    """``twin`` with the testbed replaced: its runs' late shares are ``fractions`` in turn."""
    from tfrclab import twin as twin_module

    runs: list[int] = []
    said: list[str] = []
    left = list(fractions)

    def fake_testbed(*args: Any) -> tuple[dict[str, float], RelayTiming]:
        runs.append(args[3])
        late = round(left.pop(0) * 10_000)
        metrics = {"throughput/tcp": 5e6 + len(runs), "utilization": 0.99}
        return metrics, RelayTiming(10_000, late, 0.001, 0.02)

    monkeypatch.setattr(twin_module, "testbed_available", lambda: None)
    monkeypatch.setattr(twin_module, "testbed_metrics", fake_testbed)
    monkeypatch.setattr(twin_module, "_write_netsim_traces", lambda result, directory: None)
    scenario = Scenario.load(BASE).with_(duration="8s")
    report = twin_module.twin(
        scenario, [1, 2], tmp_path, start_s=2.0, progress=said.append, retries=retries
    )
    assert not left, "every canned run was used"
    return report, said, runs


def test_a_disturbed_run_is_run_again_and_the_quiet_one_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report, said, runs = _canned_twin(tmp_path, monkeypatch, [0.15, 0.001, 0.002], retries=1)
    assert runs == [1, 1, 2]
    assert [r["runs"] for r in report.relay] == [2, 1]
    assert report.disturbed_seeds == []
    # The kept run's metrics are the second one's.
    assert report.testbed[0]["throughput/tcp"] == 5e6 + 2
    assert len(said) == 3
    assert "seed 1: the relay delivered 15.00% of 10000 packets" in said[1]
    assert "running it again (1 of 1)" in said[1]
    assert "not the emulated link's timing" not in report.table()
    saved = (tmp_path / "twin.json").read_text()
    assert '"late_fraction"' in saved
    assert '"steal_s"' in saved


def test_a_seed_disturbed_in_every_run_is_kept_and_marked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report, said, runs = _canned_twin(tmp_path, monkeypatch, [0.05, 0.03, 0.0], retries=1)
    assert runs == [1, 1, 2]
    assert report.disturbed_seeds == [1]
    assert "in every run: kept, and marked" in said[2]
    table = report.table()
    assert table.startswith("Seed 1's testbed run is not the emulated link's timing")
    assert "in all 2 run(s)" in table
    assert "| metric |" in table
    # With no retries a disturbed seed is kept at once.
    report, _, runs = _canned_twin(
        tmp_path / "none", monkeypatch, [DISTURBED_FRACTION * 2, 0.0], retries=0
    )
    assert runs == [1, 2]
    assert report.disturbed_seeds == [1]


def test_retries_outside_the_range_are_refused(tmp_path: Path) -> None:
    from tfrclab.twin import twin

    with pytest.raises(TwinError, match="--retries: expected 0 to 5, found 6"):
        twin(Scenario.load(BASE), [1], tmp_path, retries=6)
    done = subprocess.run(
        [sys.executable, "-m", "tfrclab", "twin", str(BASE), "--retries", "many"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "--retries: expected a whole number 0 to 5, found 'many'" in done.stderr
    assert "Traceback" not in done.stderr
