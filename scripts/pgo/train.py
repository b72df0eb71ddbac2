"""The training run of the profile-guided build (scripts/install.sh).

It runs representative scenarios through the installed, instrumented extension so that LLVM
learns which paths are hot.

What it runs: every scenario file under scenarios/ (runs longer than CAP_S of simulated time are
cut to CAP_S: the hot paths repeat, the profile only needs their proportions) and the training
scenarios beside this file (every agent kind on congested DropTail and RED queues; 2048 flows).
The profile changes only how fast the code runs, never what it computes: the optimizer may not
reorder floating-point operations, so results stay bit for bit those of the plain build.

Exits non-zero if any scenario fails, so that the install falls back to the plain build rather
than optimizing for a partial profile.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import tfrclab

CAP_S = 30.0
"""The most simulated seconds a training run takes."""

ROOT = Path(__file__).resolve().parents[2]


def training_scenarios() -> list[Path]:
    """The scenario files to train on, in a fixed order."""
    shipped = sorted((ROOT / "scenarios").rglob("*.toml"))
    own = sorted(Path(__file__).resolve().parent.glob("*.toml"))
    return shipped + own


def main() -> int:
    """Runs every training scenario; prints how many events they took and how long."""
    started = time.perf_counter()
    paths = training_scenarios()
    events = 0
    for path in paths:
        scenario = tfrclab.Scenario.load(path)
        if scenario.duration_s > CAP_S:
            # The measurement window may lie past the cut: the summaries are not wanted here.
            tables = scenario.to_dict()
            tables.pop("measure", None)
            tables["duration"] = f"{CAP_S:g}s"
            scenario = tfrclab.Scenario.from_dict(tables, source=scenario.source)
        result = tfrclab.run(scenario, force=True)
        events += result.info.events
    elapsed = time.perf_counter() - started
    print(
        f"trained on {len(paths)} scenarios ({events / 1e6:.1f} M events) in {elapsed:.1f} s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
