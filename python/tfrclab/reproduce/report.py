"""The reproduction report: ``report.md``, one self-contained ``report.html`` and the JSON.

Both reports open with the verdicts counted per paper (holds, fails, inconclusive, not
comparable). Per experiment: its setup, the plan it ran (seeds, changes, and the seeds added
while a claim was inconclusive), its figure, and a claims table with the paper's value beside
the measured one (mean ± 95% CI half-width over seeds), the tolerance, the verdict and its
reason, then the claims no contrary data moved (:mod:`tfrclab.reproduce.falsify`). The HTML
embeds the figures as base64 PNGs and colours each claim's row by its verdict, so the one file
can be mailed or archived alone. ``claims.json`` holds every experiment's
record (:meth:`tfrclab.reproduce.runner.Outcome.as_dict`, with its verdict counts) and
``counts.json`` the counts per paper and in all.

With the ns-2.35 referee (``reproduce --referee ns2``, :mod:`tfrclab.reproduce.referee`) each
claims table has an ``ns-2.35`` column (ns-2's value of the same measure on the same scenarios
and seeds, its agreement with tfrclab's and the claim's verdict on it), each paper's part opens
with the list of claims where tfrclab and ns-2.35 differ, and the agreements are counted per
paper beside the verdicts. Without the referee the reports are as before.

When the experiments' unstated parameters were run across their plausible ranges
(:mod:`tfrclab.reproduce.sensitivity`), each such experiment gets a table per parameter under its
claims: per claim, the claim's value and verdict at each value of the range and whether the
parameter decides it ("decided by the unstated buffer: holds at 50, fails at 100"); the reports
open with the claims so decided counted per paper (``counts.json``: ``unstated``).
"""

from __future__ import annotations

import base64
import html
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from tfrclab.reproduce.claims import VERDICTS, ClaimResult
from tfrclab.reproduce.referee import AGREEMENT, AGREEMENTS
from tfrclab.reproduce.registry import Experiment
from tfrclab.reproduce.runner import SEED_CAP, Outcome

__all__ = [
    "STYLE",
    "count_agreements",
    "count_unstated",
    "count_verdicts",
    "paper_differences",
    "write_report",
]

STYLE = """
body { font-family: sans-serif; max-width: 70em; margin: 2em auto; line-height: 1.4; }
table.claims { border-collapse: collapse; width: 100%; font-size: 0.9em; }
table.claims th, table.claims td { border: 1px solid #bbb; padding: 0.3em 0.5em;
  vertical-align: top; text-align: left; }
tr.holds { background: #d8f0d8; } tr.fails { background: #f6d5d5; }
tr.inconclusive { background: #f7ecc4; } tr.not-comparable { background: #eeeeee; }
td.holds { background: #d8f0d8; } td.fails { background: #f6d5d5; }
td.inconclusive { background: #f7ecc4; } td.not-comparable { background: #eeeeee; }
tr.decided td.range { font-weight: bold; }
table.counts { border-collapse: collapse; margin-bottom: 1em; }
table.counts th, table.counts td { border: 1px solid #bbb; padding: 0.2em 0.6em; }
img { max-width: 100%; }
"""
"""The report's CSS; the evaluation scorecard (:mod:`tfrclab.evaluate.scorecard`) shares it."""


def _scenarios(e: Experiment) -> str:
    """The experiment's scenario files, or what it runs instead of one."""
    names = ", ".join(e.scenarios)
    if e.kind == "testbed":
        return "the link-emulator testbed (real stacks)" + (
            f", beside netsim: {names}" if names else ""
        )
    if e.kind == "ns2":
        return f"{names}, in netsim and in ns-2.35"
    return names or "(scripted channel)"


def count_verdicts(outcomes: Sequence[Outcome]) -> dict[str, dict[str, int]]:
    """The verdicts counted per paper, in the order the papers first appear, and ``"all"``.

    Each count is a dict of every verdict (:data:`~tfrclab.reproduce.claims.VERDICTS`) with
    its number of claims, zeros included.
    """
    counts: dict[str, dict[str, int]] = {}
    total: dict[str, int] = dict.fromkeys(VERDICTS, 0)
    for outcome in outcomes:
        paper = counts.setdefault(outcome.experiment.paper, dict.fromkeys(VERDICTS, 0))
        for r in outcome.results:
            paper[r.verdict] += 1
            total[r.verdict] += 1
    counts["all"] = total
    return counts


def count_agreements(outcomes: Sequence[Outcome]) -> dict[str, dict[str, int]]:
    """The ns-2.35 referee's agreements counted per paper and ``"all"`` (refereed runs only).

    Each count is a dict of every agreement (:data:`~tfrclab.reproduce.referee.AGREEMENTS`),
    zeros included; a paper none of whose experiments was refereed is left out.
    """
    counts: dict[str, dict[str, int]] = {}
    total: dict[str, int] = dict.fromkeys(AGREEMENTS, 0)
    for outcome in outcomes:
        if not outcome.referee:
            continue
        paper = counts.setdefault(outcome.experiment.paper, dict.fromkeys(AGREEMENTS, 0))
        for ref in outcome.referee:
            paper[ref.agreement] += 1
            total[ref.agreement] += 1
    if counts:
        counts["all"] = total
    return counts


def count_unstated(outcomes: Sequence[Outcome]) -> dict[str, dict[str, int]]:
    """Claims checked across unstated parameters' ranges, per paper and ``"all"``.

    Each count: ``claims`` (measured across at least one range), ``reached`` (whose value
    changes within some range: the others have the same value throughout), ``decided``
    (holding at one value and failing at another of some range) and ``moved`` (any verdict
    differing within a range, ``decided`` included). Papers without a range run are left out;
    empty when none was.
    """
    counts: dict[str, dict[str, int]] = {}
    keys = ("claims", "reached", "decided", "moved")
    total = dict.fromkeys(keys, 0)
    for o in outcomes:
        if not o.sensitivity:
            continue
        paper = counts.setdefault(o.experiment.paper, dict.fromkeys(keys, 0))
        for k in range(len(o.results)):
            rows = o.rows_of(k)
            for tally in (paper, total):
                tally["claims"] += 1
                tally["reached"] += any(row.reached for row in rows)
                tally["decided"] += any(row.decided for row in rows)
                tally["moved"] += any(row.moves for row in rows)
    if counts:
        counts["all"] = total
    return counts


_UNSTATED = (
    "Unstated parameters: where a paper leaves a parameter unstated, the experiment names the "
    "value chosen and a plausible range; its cells were run again at each other value on the "
    "verdict's seeds, and every claim measured and judged there as for its verdict "
    "(`tfrclab.reproduce.sensitivity`). Reached: the claim's value changes within a range (the "
    "others have the very same value throughout: they read only cells the range leaves alone, "
    "or a number it did not move); decided: holds at one value of a range and fails at another; "
    "moved: any verdict differs within a range."
)


def _range_cell(r: ClaimResult) -> str:
    """A claim's value and verdict at one value of a range."""
    return f"{r.measured.format()}: {r.verdict}"


def _range_tables(
    o: Outcome,
) -> list[tuple[str, list[str], list[tuple[str, list[ClaimResult], str, bool]]]]:
    """Per parameter run: its line, the column heads (values) and the claims' rows.

    Each row: the claim's id, its result at each value, the summary and whether it is decided.
    """
    tables = []
    for s in o.sensitivity:
        p = s.parameter
        heads = [p.text(v) + (" (chosen)" if v == p.chosen else "") for v in p.values]
        rows = [
            (o.results[k].claim.id, [r for _v, r in row.values], row.summary(), row.decided)
            for k, row in enumerate(s.rows)
        ]
        tables.append((s.describe(), heads, rows))
    return tables


def paper_differences(outcomes: Sequence[Outcome], paper: str) -> list[str]:
    """The claims of ``paper`` where tfrclab and ns-2.35 differ, one line each."""
    lines = []
    for o in outcomes:
        if o.experiment.paper != paper:
            continue
        for r, ref in o.differing:
            lines.append(
                f"{o.experiment.id}/{r.claim.id}: tfrclab {r.measured.format()} ({r.verdict}), "
                f"ns-2.35 {ref.measured.format()} ({ref.ns2_verdict}); {ref.reason}"
            )
    return lines


def _opening_head(paper: str, found: Sequence[str]) -> str:
    """The head of a refereed paper's opening: how many claims tfrclab and ns-2.35 differ on."""
    if not found:
        return f"{paper}: tfrclab and ns-2.35 differ on no refereed claim."
    return f"{paper}: tfrclab and ns-2.35 differ on {len(found)} claim(s):"


def _paper_opening(outcomes: Sequence[Outcome], paper: str) -> str | None:
    """What opens a refereed paper's part: where tfrclab and ns-2.35 differ (None: unrefereed)."""
    if not any(o.referee for o in outcomes if o.experiment.paper == paper):
        return None
    found = paper_differences(outcomes, paper)
    return " ".join([_opening_head(paper, found), " | ".join(found)]).strip()


_REFEREE = (
    "ns-2.35 referee: each sweep experiment's cells that `tfrclab export ns2` can express were "
    "also run in ns-2.35 on the same seeds, and each claim's own measure taken on ns-2's runs. "
    "The two agree when the 95% Welch interval of their difference lies within "
    f"{AGREEMENT:g} of the larger mean, differ when it lies wholly outside, and are "
    "inconclusive otherwise; a claim reading a cell ns-2 cannot run is not exportable "
    "(`tfrclab.reproduce.referee`)."
)


def _sentence(counts: dict[str, int]) -> str:
    """``3 hold, 1 fails, 0 inconclusive, 0 not comparable``."""
    return (
        f"{counts['holds']} hold, {counts['fails']} fail, {counts['inconclusive']} "
        f"inconclusive, {counts['not comparable']} not comparable"
    )


_RULE = (
    "Measured values are means over seeds ± the half-width of their 95% Student t confidence "
    "interval. A claim holds when its whole interval lies inside the tolerance fixed in the "
    "registry before running, fails when the interval lies wholly outside, and is inconclusive "
    "when the interval crosses an edge of the tolerance even after seeds were added (full "
    f"plans: up to {SEED_CAP} times the plan's seeds; quick plans add none). A value without "
    "an interval (a deterministic run, one seed) is decided on itself."
)


_CONTRARY = (
    "Every decided claim is also re-decided on contrary data: the numbers its measure reads from "
    "the runs, perturbed within their domain (all together, each alone, then pushed apart; "
    "`tfrclab.reproduce.falsify`); a claim whose verdict no perturbation moves may not test "
    "the simulation at all, and is listed under its experiment."
)


def _unmoved_sentence(outcomes: Sequence[Outcome]) -> str:
    """How many claims no contrary data moved, in all."""
    n = sum(len(o.unmoved) for o in outcomes)
    return f"Claims whose verdict no contrary data moved: {n}."


def _unmoved_line(o: Outcome) -> str:
    """The experiment's claims that no contrary data moved, or that there are none."""
    if not o.unmoved:
        return "Contrary data moves every decided claim's verdict."
    listed = "; ".join(f"{r.claim.id} ({c.describe()})" for r, c in o.unmoved)
    return f"No contrary data moved these claims' verdicts: {listed}."


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _markdown(outcomes: Sequence[Outcome], out: Path) -> str:
    counts = count_verdicts(outcomes)
    mode = "quick" if any(o.quick for o in outcomes) else "full"
    lines = [
        "# tfrclab reproduction report",
        "",
        f"Mode: {mode}. Claims: {_sentence(counts['all'])}. {_RULE}",
        "",
        f"{_CONTRARY} {_unmoved_sentence(outcomes)}",
        "",
        "| paper | " + " | ".join(VERDICTS) + " |",
        "|---|" + "---|" * len(VERDICTS),
        *(
            f"| {paper} | " + " | ".join(str(c[v]) for v in VERDICTS) + " |"
            for paper, c in counts.items()
        ),
        "",
    ]
    agreements = count_agreements(outcomes)
    if agreements:
        lines += [
            _REFEREE,
            "",
            "| paper | " + " | ".join(AGREEMENTS) + " |",
            "|---|" + "---|" * len(AGREEMENTS),
            *(
                f"| {paper} | " + " | ".join(str(c[v]) for v in AGREEMENTS) + " |"
                for paper, c in agreements.items()
            ),
            "",
        ]
    unstated = count_unstated(outcomes)
    if unstated:
        lines += [
            _UNSTATED,
            "",
            "| paper | claims across a range | reached | decided by an unstated parameter | "
            "moved |",
            "|---|---|---|---|---|",
            *(
                f"| {paper} | {c['claims']} | {c['reached']} | {c['decided']} | {c['moved']} |"
                for paper, c in unstated.items()
            ),
            "",
        ]
    previous_paper = None
    for o in outcomes:
        e = o.experiment
        if e.paper != previous_paper:
            previous_paper = e.paper
            opening = _paper_opening(outcomes, e.paper)
            if opening is not None:
                lines += [f"**{_cell(opening)}**", ""]
        figure = o.figure.relative_to(out).as_posix()
        refereed = bool(o.referee)
        lines += [
            f"## {e.id}: {e.title}",
            "",
            e.setup,
            "",
            f"Scenarios: {_scenarios(e)}. Plan: {o.describe_plan()}. Wall time {o.wall_s:.1f} s.",
            "",
            f"![{e.id}]({figure})",
            "",
            "| claim | paper | how measured | tolerance | measured | verdict | reason |"
            + (" ns-2.35 |" if refereed else ""),
            "|---|---|---|---|---|---|---|" + ("---|" if refereed else ""),
        ]
        for k, r in enumerate(o.results):
            cells = _claim_cells(r) + _referee_cells(o, k)
            lines.append("| " + " | ".join(_cell(x) for x in cells) + " |")
        lines += ["", _unmoved_line(o), ""]
        for line, heads, rows in _range_tables(o):
            lines += [
                f"Unstated {_cell(line)}.",
                "",
                "| claim | " + " | ".join(_cell(h) for h in heads) + " | across the range |",
                "|---|" + "---|" * (len(heads) + 1),
                *(
                    f"| {claim} | "
                    + " | ".join(_cell(_range_cell(r)) for r in results)
                    + f" | {'**' if decided else ''}{_cell(summary)}{'**' if decided else ''} |"
                    for claim, results, summary, decided in rows
                ),
                "",
            ]
    return "\n".join(lines)


def _claim_cells(r: ClaimResult) -> tuple[str, ...]:
    """A claim's cells in both reports: statement, paper, how, tolerance, measured, verdict."""
    c = r.claim
    measured = r.measured.format() + (f" {c.unit}" if c.unit else "")
    if r.measured.note:
        measured += f" ({r.measured.note})"
    return (c.statement, c.paper_value, c.how, c.tolerance, measured, r.verdict, r.reason)


def _referee_cells(o: Outcome, index: int) -> tuple[str, ...]:
    """The ``ns-2.35`` cell of a claim's row: none in a run without the referee."""
    ref = o.referee_of(index)
    if ref is None:
        return ()
    if ref.ns2_verdict is None:
        return (ref.format(),)
    return (f"{ref.format()}; claim on ns-2.35: {ref.ns2_verdict}",)


def _counts_table(
    css: str,
    heads: Sequence[str],
    keys: Sequence[str],
    counts: Mapping[str, Mapping[str, int]],
) -> list[str]:
    """An HTML table of per-paper counts: a row per paper, the column ``heads[i]`` ``keys[i]``."""
    esc = html.escape
    return [
        f'<table class="{css}"><thead><tr><th>paper</th>'
        + "".join(f"<th>{esc(h)}</th>" for h in heads)
        + "</tr></thead><tbody>",
        *(
            f'<tr data-paper="{esc(paper)}"><td>{esc(paper)}</td>'
            + "".join(f"<td>{c[k]}</td>" for k in keys)
            + "</tr>"
            for paper, c in counts.items()
        ),
        "</tbody></table>",
    ]


def _html(outcomes: Sequence[Outcome]) -> str:
    counts = count_verdicts(outcomes)
    esc = html.escape
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<title>tfrclab reproduction report</title>",
        f"<style>{STYLE}</style></head><body>",
        "<h1>tfrclab reproduction report</h1>",
        f"<p>Claims: {esc(_sentence(counts['all']))}. {esc(_RULE)}</p>",
        f"<p>{esc(_CONTRARY)} {esc(_unmoved_sentence(outcomes))}</p>",
        *_counts_table("counts", VERDICTS, VERDICTS, counts),
    ]
    agreements = count_agreements(outcomes)
    if agreements:
        parts += [
            f"<p>{esc(_REFEREE)}</p>",
            *_counts_table("counts referee", AGREEMENTS, AGREEMENTS, agreements),
        ]
    unstated = count_unstated(outcomes)
    if unstated:
        parts += [
            f"<p>{esc(_UNSTATED)}</p>",
            *_counts_table(
                "counts unstated",
                ("claims across a range", "reached", "decided by an unstated parameter", "moved"),
                ("claims", "reached", "decided", "moved"),
                unstated,
            ),
        ]
    previous_paper = None
    for o in outcomes:
        e = o.experiment
        if e.paper != previous_paper:
            previous_paper = e.paper
            opening = _paper_opening(outcomes, e.paper)
            if opening is not None:
                items = paper_differences(outcomes, e.paper)
                parts.append(f'<div class="referee-differ" data-paper="{esc(e.paper)}">')
                parts.append(f"<p><strong>{esc(_opening_head(e.paper, items))}</strong></p>")
                if items:
                    parts.append("<ul>" + "".join(f"<li>{esc(x)}</li>" for x in items) + "</ul>")
                parts.append("</div>")
        refereed = bool(o.referee)
        image = base64.b64encode(o.figure.read_bytes()).decode("ascii")
        parts += [
            f'<section id="{esc(e.id)}">',
            f"<h2>{esc(e.id)}: {esc(e.title)}</h2>",
            f"<p>{esc(e.setup)}</p>",
            f"<p>Scenarios: {esc(_scenarios(e))}. "
            f"Plan: {esc(o.describe_plan())}. Wall time {o.wall_s:.1f} s.</p>",
            f'<img alt="{esc(e.id)}" src="data:image/png;base64,{image}">',
            '<table class="claims"><thead><tr><th>claim</th><th>paper</th>'
            "<th>how measured</th><th>tolerance</th><th>measured</th><th>verdict</th>"
            "<th>reason</th>" + ("<th>ns-2.35</th>" if refereed else "") + "</tr></thead><tbody>",
        ]
        for k, r in enumerate(o.results):
            c = r.claim
            row_class = r.verdict.replace(" ", "-")
            cells = _claim_cells(r) + _referee_cells(o, k)
            parts.append(
                f'<tr class="{row_class}" data-claim="{esc(e.id)}/{esc(c.id)}">'
                + "".join(f"<td>{esc(x)}</td>" for x in cells)
                + "</tr>"
            )
        parts += ["</tbody></table>", f'<p class="contrary">{esc(_unmoved_line(o))}</p>']
        for line, heads, rows in _range_tables(o):
            parts += [
                f'<p class="unstated">Unstated {esc(line)}.</p>',
                '<table class="claims sensitivity"><thead><tr><th>claim</th>'
                + "".join(f"<th>{esc(h)}</th>" for h in heads)
                + "<th>across the range</th></tr></thead><tbody>",
                *(
                    f'<tr class="{"decided" if decided else "same"}" '
                    f'data-claim="{esc(e.id)}/{esc(claim)}"><td>{esc(claim)}</td>'
                    + "".join(
                        f'<td class="{r.verdict.replace(" ", "-")}">{esc(_range_cell(r))}</td>'
                        for r in results
                    )
                    + f'<td class="range">{esc(summary)}</td></tr>'
                    for claim, results, summary, decided in rows
                ),
                "</tbody></table>",
            ]
        parts.append("</section>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_report(outcomes: Sequence[Outcome], out: Path) -> tuple[Path, Path]:
    """Write ``out/report.md``, ``out/report.html``, ``out/claims.json`` and ``out/counts.json``.

    The four are written to a temporary directory inside ``out`` and renamed into place together
    once all are written (:func:`tfrclab.outdir.replace_files`): a failure on the way leaves the
    old ones, which agree with one another, never a new report beside an old JSON.

    Returns the paths of the two reports.
    """
    from tfrclab.outdir import replace_files

    def write(tmp: Path) -> None:
        (tmp / "report.md").write_text(_markdown(outcomes, out) + "\n")
        (tmp / "report.html").write_text(_html(outcomes))
        records = [o.as_dict() for o in outcomes]
        (tmp / "claims.json").write_text(json.dumps(records, indent=2) + "\n")
        tallies: dict[str, object] = dict(count_verdicts(outcomes))
        agreements = count_agreements(outcomes)
        if agreements:
            tallies["ns2_agreement"] = agreements
        unstated = count_unstated(outcomes)
        if unstated:
            tallies["unstated"] = unstated
        counts = json.dumps(tallies, indent=2)
        (tmp / "counts.json").write_text(counts + "\n")

    out.mkdir(parents=True, exist_ok=True)
    replace_files(out, "report", write)
    return out / "report.md", out / "report.html"
