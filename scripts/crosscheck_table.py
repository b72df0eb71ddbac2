"""Print docs/crosscheck.md's agreement table: every cross-check scenario in both simulators.

Usage: ``python scripts/crosscheck_table.py [--jobs N]`` (needs ns-2's ``ns`` on PATH). The
cases are the test suite's (``tfrclab.ns2.suite.CASES``); the table uses the command's
defaults (95% confidence intervals, 2% tolerance).
"""

from __future__ import annotations

import argparse
import time

from tfrclab.ns2.crosscheck import crosscheck
from tfrclab.ns2.suite import CASES
from tfrclab.scenario import Scenario


def main() -> None:
    """Run every case and print one Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    print("| scenario (seeds, window) | metric | tfrclab | ns-2 | diff | 95% CI | verdict |")
    print("|---|---|---|---|---|---|---|")
    started = time.perf_counter()
    for case in CASES:
        comparisons, _ = crosscheck(
            Scenario.load(case.path),
            list(case.seeds),
            start_s=case.start_s,
            end_s=case.end_s,
            jobs=args.jobs,
        )
        label = f"{case.name} ({len(case.seeds)}, {case.start_s:g}-{case.end_s:g} s)"
        for c in comparisons:
            print(
                f"| {label} | {c.metric} | {c.mean_tfrclab:.4g} | {c.mean_ns2:.4g} | "
                f"{c.difference:+.3g} | [{c.ci_low:+.3g}, {c.ci_high:+.3g}] | {c.verdict} |"
            )
            label = ""
    print(f"\n({time.perf_counter() - started:.0f} s wall)")


if __name__ == "__main__":
    main()
