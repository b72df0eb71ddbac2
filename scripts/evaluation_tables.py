"""The tables of docs/evaluation/README.md, from the committed scorecards' JSON.

Prints the full battery's table (one row per criterion: each algorithm's mean over seeds, its
95% interval and verdict) and the count of verdicts and wall time per algorithm, in the
README's column order. Run it after ``scripts/evaluation_scorecards.sh`` and paste the output
over the README's two tables, so that no number there is typed by hand.

    .venv/bin/python scripts/evaluation_tables.py [full|quick]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "docs" / "evaluation"
#: The README's columns, in order.
NAMES = ("tfrc-rfc5348", "tfrc-floyd2000", "gaimd-0.31-0.875", "tear", "rap", "tcp-cubic")
SHORT = {"inconclusive": "incon.", "flag": "**flag**"}


def _cell(row: dict) -> str:
    value = row["value"]
    low, high = value["ci95"]
    verdict = SHORT.get(row["verdict"], row["verdict"])
    return f"{value['mean']:.3g} [{low:.3g}, {high:.3g}] {verdict}"


def main(plan: str = "full") -> None:
    """Print both tables for ``plan``."""
    cards = {n: json.loads((ROOT / plan / n / "scorecard.json").read_text()) for n in NAMES}
    header = "| row | " + " | ".join(NAMES) + " |"
    rule = "|---|" + "---|" * len(NAMES)
    print(header)
    print(rule)
    ids = [row["id"] for row in cards[NAMES[0]]["rows"]]
    for row_id in ids:
        cells = []
        for name in NAMES:
            row = next((r for r in cards[name]["rows"] if r["id"] == row_id), None)
            cells.append(_cell(row) if row is not None else "")
        print(f"| `{row_id}` | " + " | ".join(cells) + " |")
    print()
    print("| | " + " | ".join(NAMES) + " |")
    print(rule)
    for verdict in ("meets", "flag", "inconclusive"):
        counts = [str(cards[n]["counts"].get(verdict, 0)) for n in NAMES]
        print(f"| {verdict} | " + " | ".join(counts) + " |")
    print("| wall (s) | " + " | ".join(f"{cards[n]['wall_s']:.0f}" for n in NAMES) + " |")


if __name__ == "__main__":
    main(*sys.argv[1:2])
