"""The training run of the profile-guided build (scripts/install.sh).

It runs representative scenarios through the installed, instrumented extension so that LLVM
learns which paths are hot.

What it runs: every scenario file under scenarios/ (runs longer than CAP_S of simulated time are
cut to CAP_S: the hot paths repeat, the profile only needs their proportions) and the training
scenarios beside this file (every agent kind on congested DropTail and RED queues; 2048 flows).
The profile changes only how fast the code runs, never what it computes: the optimizer may not
reorder floating-point operations, so results stay bit for bit those of the plain build.

Exits non-zero if any scenario fails, so that the install falls back to the plain build rather
than optimizing for a partial profile, and if TFRCLAB_TRAIN_BUILD is set and the module
imported is not that build (``tfrclab._native.build()``): scripts/install.sh sets it to
``instrumented``, so that a training run never profiles the installed module by mistake.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import tfrclab
from tfrclab import _native

CAP_S = 30.0
"""The most simulated seconds a training run takes."""

ROOT = Path(__file__).resolve().parents[2]


def training_scenarios() -> list[Path]:
    """The scenario files to train on, in a fixed order."""
    shipped = sorted((ROOT / "scenarios").rglob("*.toml"))
    own = sorted(Path(__file__).resolve().parent.glob("*.toml"))
    return shipped + own


def training_scenario(path: Path) -> tfrclab.Scenario:
    """The scenario file at ``path``, cut to at most CAP_S of simulated time."""
    scenario = tfrclab.Scenario.load(path)
    if scenario.duration_s <= CAP_S:
        return scenario
    # The measurement window may lie past the cut: the summaries are not wanted here.
    tables = scenario.to_dict()
    tables.pop("measure", None)
    tables["duration"] = f"{CAP_S:g}s"
    return tfrclab.Scenario.from_dict(tables, source=scenario.source)


def main() -> int:
    """Runs every training scenario; prints how many events they took and how long."""
    expected = os.environ.get("TFRCLAB_TRAIN_BUILD")
    if expected is not None and _native.build() != expected:
        print(
            f"train.py: {tfrclab.__file__} is a {_native.build()} build, not {expected}: "
            "the training would profile the wrong module",
            file=sys.stderr,
        )
        return 1
    started = time.perf_counter()
    paths = training_scenarios()
    events = 0
    for path in paths:
        result = tfrclab.run(training_scenario(path), force=True)
        events += result.info.events
    elapsed = time.perf_counter() - started
    print(
        f"trained on {len(paths)} scenarios ({events / 1e6:.1f} M events) in {elapsed:.1f} s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
