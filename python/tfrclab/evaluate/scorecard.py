"""Running the battery for one algorithm, and its scorecard: Markdown, HTML and JSON.

The three files are written together and atomically (:func:`tfrclab.outdir.replace_directory`):
``--out`` holds the previous scorecard or the new one, never half of one.
"""

from __future__ import annotations

import html
import json
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tfrclab.evaluate.algorithm import Algorithm
from tfrclab.evaluate.battery import BatteryPlan, build_runs, run_all
from tfrclab.evaluate.criteria import CRITERIA, NOT_EVALUATED, Row, evaluate_criteria
from tfrclab.evaluate.verdict import VERDICTS, Verdict

__all__ = ["FORMAT", "Scorecard", "evaluate", "write_scorecard"]

FORMAT = 1
"""The version of ``scorecard.json``'s layout."""

FILES = ("scorecard.md", "scorecard.html", "scorecard.json")


@dataclass(frozen=True)
class Scorecard:
    """The battery's result for one algorithm."""

    algorithm: Algorithm
    competitors: tuple[tuple[str, Mapping[str, Any]], ...]
    plan: BatteryPlan
    rows: tuple[Row, ...]
    runs: int
    wall_s: float

    def counts(self) -> dict[Verdict, int]:
        """How many rows have each verdict (the not-evaluated criteria included)."""
        counts: dict[Verdict, int] = dict.fromkeys(VERDICTS, 0)
        for row in self.rows:
            counts[row.verdict] += 1
        counts["not evaluated"] += len(NOT_EVALUATED)
        return counts

    def summary(self) -> str:
        """One line: the counts of verdicts."""
        c = self.counts()
        return (
            f"{c['meets']} meet, {c['flag']} flagged, {c['inconclusive']} inconclusive, "
            f"{c['not evaluated']} not evaluated"
        )

    def as_dict(self) -> dict[str, Any]:
        """The scorecard as JSON-ready values (``scorecard.json``)."""
        return {
            "format": FORMAT,
            "algorithm": self.algorithm.as_dict(),
            "competitors": {name: dict(table) for name, table in self.competitors},
            "plan": self.plan.as_dict(),
            "runs": self.runs,
            "wall_s": self.wall_s,
            "counts": self.counts(),
            "criteria": [c.as_dict() for c in CRITERIA],
            "rows": [row.as_dict() for row in self.rows],
            "not_evaluated": [
                {"source": source, "sentence": sentence, "why": why}
                for source, sentence, why in NOT_EVALUATED
            ],
        }


def evaluate(
    algorithm: Algorithm,
    competitors: Sequence[tuple[str, Mapping[str, Any]]],
    plan: BatteryPlan,
    *,
    jobs: int = 1,
    progress: Callable[[str], None] | None = None,
    executor: str = "local",
    scheduler: str | None = None,
) -> Scorecard:
    """Run the battery for ``algorithm`` against ``competitors`` and decide every criterion.

    ``jobs``, ``executor`` and ``scheduler`` choose where the runs go
    (:func:`tfrclab.evaluate.battery.run_all`); the scorecard is the same.
    """
    started = time.perf_counter()
    runs = build_runs(algorithm.table, competitors, plan)
    if progress is not None:
        progress(f"{len(runs)} runs ({plan.describe()})")
    measured = run_all(runs, jobs=jobs, progress=progress, executor=executor, scheduler=scheduler)
    rows = evaluate_criteria(measured, [name for name, _ in competitors], plan)
    return Scorecard(
        algorithm,
        tuple((name, dict(table)) for name, table in competitors),
        plan,
        tuple(rows),
        len(runs),
        time.perf_counter() - started,
    )


# -- Markdown ------------------------------------------------------------------------------------


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _toml_inline(table: Mapping[str, Any]) -> str:
    """A flow table as one line of TOML (``{ kind = "tfrc", size = "1500B" }``)."""
    import tomli_w

    text = tomli_w.dumps({"t": dict(table)}).strip()
    body = [line for line in text.splitlines()[1:] if line.strip()]
    return "{ " + ", ".join(body) + " }"


def _measured(row: Row) -> str:
    unit = row.criterion.unit
    shown = row.value.format() + (f" {unit}" if unit and row.value.has_interval else "")
    if row.references:
        refs = "; ".join(f"{name} {v.format()}" for name, v in row.references.items())
        shown += f" (competitors alone: {refs})"
    return shown


def _header(card: Scorecard) -> list[str]:
    plan = card.plan
    competitors = ", ".join(f"{name} `{_toml_inline(t)}`" for name, t in card.competitors)
    return [
        f"ALGO: `{card.algorithm.label}`, run as `{_toml_inline(card.algorithm.table)}`.",
        f"Competitors: {competitors}.",
        f"Plan: {plan.describe()}. {card.runs} runs in {card.wall_s:.1f} s.",
        "",
        f"Verdicts: {card.summary()}. Values are means over seeds with their 95% "
        "interval [low, high]; a verdict is decided on the interval: *meets* when it lies on "
        "the acceptable side of the threshold, *flag* when it lies wholly on the other, "
        "*inconclusive* when it crosses it. RFC 9743 sets no thresholds: each is this "
        "battery's, written beside the sentence it serves (docs/evaluation.md).",
    ]


def _markdown(card: Scorecard) -> str:
    lines = [f"# tfrclab evaluate: {card.algorithm.label}", "", *_header(card), ""]
    lines += [
        "| criterion | setting | measured | threshold | verdict | reason |",
        "|---|---|---|---|---|---|",
    ]
    for row in card.rows:
        c = row.criterion
        lines.append(
            "| "
            + " | ".join(
                _cell(x)
                for x in (
                    c.title,
                    row.setting or "-",
                    _measured(row),
                    c.threshold.describe(c.unit),
                    f"**{row.verdict}**",
                    row.reason,
                )
            )
            + " |"
        )
    lines += ["", "## Criteria", ""]
    for c in CRITERIA:
        lines += [
            f"### {c.title} (`{c.id}`)",
            "",
            f'{c.source}: "{c.sentence}"',
            "",
            f"- Threshold: {c.threshold.describe(c.unit)} ({c.threshold_source}).",
            f"- Metric: {c.metric}.",
            f"- Scenario: {c.scenario}.",
            "",
        ]
    lines += [
        "## Not evaluated in this battery",
        "",
        "| source | sentence | why |",
        "|---|---|---|",
    ]
    for source, sentence, why in NOT_EVALUATED:
        lines.append(f"| {_cell(source)} | {_cell(sentence)} | {_cell(why)} |")
    return "\n".join(lines) + "\n"


# -- HTML ----------------------------------------------------------------------------------------

_VERDICT_STYLE = """
tr.meets { background: #d8f0d8; } tr.flag { background: #f6d5d5; }
tr.inconclusive { background: #fbf0c8; } tr.not-evaluated { background: #eeeeee; }
blockquote { margin: 0.3em 1em; color: #333; }
"""


def _html(card: Scorecard) -> str:
    from tfrclab.reproduce.report import STYLE  # the reproduction report's look

    esc = html.escape
    header = "".join(f"<p>{esc(line)}</p>" for line in _header(card) if line)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>tfrclab evaluate: {esc(card.algorithm.label)}</title>",
        f"<style>{STYLE}{_VERDICT_STYLE}</style></head><body>",
        f"<h1>tfrclab evaluate: {esc(card.algorithm.label)}</h1>",
        header,
        '<table class="claims"><thead><tr><th>criterion</th><th>setting</th>'
        "<th>measured</th><th>threshold</th><th>verdict</th><th>reason</th></tr></thead><tbody>",
    ]
    for row in card.rows:
        c = row.criterion
        cells = (
            c.title,
            row.setting or "-",
            _measured(row),
            c.threshold.describe(c.unit),
            row.verdict,
            row.reason,
        )
        parts.append(
            f'<tr class="{row.verdict.replace(" ", "-")}" data-row="{esc(row.id)}">'
            + "".join(f"<td>{esc(x)}</td>" for x in cells)
            + "</tr>"
        )
    parts += ["</tbody></table>", "<h2>Criteria</h2>"]
    for c in CRITERIA:
        parts += [
            f'<section id="{esc(c.id)}"><h3>{esc(c.title)}</h3>',
            f"<p>{esc(c.source)}:</p><blockquote>{esc(c.sentence)}</blockquote>",
            "<ul>",
            f"<li>Threshold: {esc(c.threshold.describe(c.unit))} ({esc(c.threshold_source)}).</li>",
            f"<li>Metric: {esc(c.metric)}.</li>",
            f"<li>Scenario: {esc(c.scenario)}.</li>",
            "</ul></section>",
        ]
    parts += [
        "<h2>Not evaluated in this battery</h2>",
        '<table class="claims"><thead><tr><th>source</th><th>sentence</th><th>why</th></tr>'
        "</thead><tbody>",
    ]
    for source, sentence, why in NOT_EVALUATED:
        parts.append(
            '<tr class="not-evaluated">'
            + "".join(f"<td>{esc(x)}</td>" for x in (source, sentence, why))
            + "</tr>"
        )
    parts += ["</tbody></table>", "</body></html>"]
    return "\n".join(parts) + "\n"


def _plain(value: Any) -> Any:
    """``value`` with numpy numbers as floats and NaN or infinities as None (strict JSON)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, bool | str | int) or value is None:
        return value
    number = float(value)
    return number if math.isfinite(number) else None


def write_scorecard(card: Scorecard, out: Path) -> list[Path]:
    """Write ``scorecard.md``, ``scorecard.html`` and ``scorecard.json`` into ``out``, together.

    ``out`` is replaced as a whole (a temporary sibling renamed into place), so it never holds
    a mix of two scorecards or half of one. Returns the three paths.
    """
    from tfrclab.outdir import replace_directory

    def write(tmp: Path) -> list[Path]:
        (tmp / "scorecard.md").write_text(_markdown(card), encoding="utf-8")
        (tmp / "scorecard.html").write_text(_html(card), encoding="utf-8")
        text = json.dumps(_plain(card.as_dict()), indent=2, allow_nan=False)
        (tmp / "scorecard.json").write_text(text + "\n", encoding="utf-8")
        return [out / name for name in FILES]

    return replace_directory(out, write)
