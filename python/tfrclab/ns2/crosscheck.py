"""Run a scenario in netsim and in ns-2.35 over seeds, and compare their metrics.

For each seed the scenario is resolved once (:func:`tfrclab.ns2.plan.resolve`), so both
simulators see the same per-host delays and start times; netsim runs it, ns-2 runs the exported
script, and both runs become per-sample :class:`~tfrclab.ns2.output.Series`. The metrics are
taken over a measurement window with the functions of :mod:`tfrclab.metrics`:

- ``throughput/<group>``: mean normalized throughput of the group's flows (Floyd 2000 Figs. 6-7;
  bytes received over the window against a fair share of the primary link). A flow's group is
  its ``group`` key, by default its protocol (``tcp-sack``, ``tfrc``, ...; :func:`flow_group`).
  Background flows (``background``, docs/scenario.md) take what they take: the long-lived
  flows' fair share is the link's rate less the background's throughput across it, over the
  long-lived flows crossing it; a background flow's is the rate over every flow crossing it;
- ``drop_rate``, ``utilization``: at the primary link (Floyd 2000 Table 25);
- ``mean_queue``: its time-weighted mean waiting packets;
- on a parking lot, the same three for every other hop (``drop_rate/hop1``, ...);
- ``cov_1s/<group>``: mean CoV of the group's send rates at a 1 s timescale (Floyd 2000 §4.1.1).

To compare groups of flows (say the 20 ms and the 200 ms flows) with ns-2, give the flows
``group`` keys and call :func:`crosscheck`; :func:`flow_groups` lists the flows of each group
and :func:`seed_metrics` reduces one run of either simulator.

The two means are compared with Welch's t over seeds: the difference (netsim - ns-2) with its
95% confidence interval. The verdict is *agree* when the interval holds 0 or the difference is
within ``tolerance`` of the larger mean (runs whose seeds do not matter, such as a flow under
deterministic loss, have no spread, so only the tolerance can decide them), *differ* otherwise.
"""

from __future__ import annotations

import math
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tfrclab import metrics
from tfrclab.ns2.export import export_tcl
from tfrclab.ns2.output import Series, from_result, read_output
from tfrclab.ns2.plan import Plan, resolve
from tfrclab.scenario import Scenario
from tfrclab.simulate import run

__all__ = [
    "Comparison",
    "NsNotFound",
    "compare",
    "crosscheck",
    "flow_group",
    "flow_groups",
    "is_background",
    "run_ns2",
    "seed_metrics",
    "t_quantile",
]


class NsNotFound(RuntimeError):
    """ns-2's ``ns`` binary is not on PATH."""


@dataclass(frozen=True)
class Comparison:
    """One metric over seeds in both simulators."""

    metric: str
    tfrclab: list[float]
    ns2: list[float]
    mean_tfrclab: float
    mean_ns2: float
    difference: float
    ci_low: float
    ci_high: float
    verdict: str

    def as_dict(self) -> dict[str, object]:
        """A JSON-ready dict."""
        return {
            "metric": self.metric,
            "tfrclab": self.tfrclab,
            "ns2": self.ns2,
            "mean_tfrclab": self.mean_tfrclab,
            "mean_ns2": self.mean_ns2,
            "difference": self.difference,
            "ci95": [self.ci_low, self.ci_high],
            "verdict": self.verdict,
        }


def _t_cdf(t: float, df: float) -> float:
    """Student's t CDF by Simpson's rule on the density (enough for a 95% quantile)."""
    if t == 0:
        return 0.5
    c = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)
    x = np.linspace(0.0, abs(t), 4001)
    y = c * (1 + x * x / df) ** (-(df + 1) / 2)
    h = x[1] - x[0]
    area = h / 3 * (y[0] + y[-1] + 4 * y[1:-1:2].sum() + 2 * y[2:-1:2].sum())
    return 0.5 + math.copysign(float(area), t)


def t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom (p > 0.5).

    >>> round(t_quantile(0.975, 10), 3), round(t_quantile(0.975, 1e6), 2)
    (2.228, 1.96)
    """
    lo, hi = 0.0, 1000.0
    for _ in range(80):
        mid = (lo + hi) / 2
        if _t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


FLOORS: dict[str, float] = {
    "drop_rate": 1e-4,
    "mean_queue": 0.1,
    "cov_1s": 0.01,
}
"""Absolute differences too small to matter, per metric family (a drop rate of 0.01%, a tenth
of a packet of queue, a hundredth of CoV): a metric that is near 0 in both simulators agrees
even where a relative tolerance would be meaningless. Throughput and utilization have none: a
flow alone on a fast link has a small normalized throughput, and a floor would hide its errors."""


def compare(
    metric: str,
    a: Sequence[float],
    b: Sequence[float],
    tolerance: float,
    level: float = 0.95,
) -> Comparison:
    """Welch's comparison of two samples of a metric (NaN values are left out).

    The verdict is *agree* when the ``level`` confidence interval of the difference holds 0,
    or the difference is within ``tolerance`` times the larger mean, or within the metric's
    absolute floor (:data:`FLOORS`).
    """
    x = np.array([v for v in a if math.isfinite(v)])
    y = np.array([v for v in b if math.isfinite(v)])
    mean_a = float(x.mean()) if x.size else math.nan
    mean_b = float(y.mean()) if y.size else math.nan
    diff = mean_a - mean_b
    va = float(x.var(ddof=1)) / x.size if x.size > 1 else 0.0
    vb = float(y.var(ddof=1)) / y.size if y.size > 1 else 0.0
    se = math.sqrt(va + vb)
    if se > 0:
        df = (va + vb) ** 2 / (
            (va**2 / (x.size - 1) if x.size > 1 else 0.0)
            + (vb**2 / (y.size - 1) if y.size > 1 else 0.0)
        )
        half = t_quantile(1 - (1 - level) / 2, df) * se
    else:
        half = 0.0
    low, high = diff - half, diff + half
    scale = max(abs(mean_a), abs(mean_b))
    if not math.isfinite(diff):
        verdict = "agree" if not (x.size or y.size) else "differ"
    else:
        floor = FLOORS.get(metric.split("/")[0], 0.0)
        agree = low <= 0 <= high or abs(diff) <= max(tolerance * scale, floor)
        verdict = "agree" if agree else "differ"
    return Comparison(
        metric,
        [float(v) for v in a],
        [float(v) for v in b],
        mean_a,
        mean_b,
        diff,
        low,
        high,
        verdict,
    )


def flow_group(plan: Plan, index: int) -> str:
    """The group the cross-check pools flow ``index`` in: its ``group`` key, else its protocol.

    The protocol is ``tcp-<variant>`` for TCP (``tcp-sack`` by default) and the kind for the
    others (``tfrc``, ``cbr``, ...).
    """
    flow = plan.flows[index]
    if "group" in flow.table:
        return str(flow.table["group"])
    if flow.kind == "tcp":
        return f"tcp-{flow.table.get('variant', 'sack')}"
    return flow.kind


def flow_groups(plan: Plan) -> dict[str, list[int]]:
    """The flows of each group (:func:`flow_group`), groups in order of first appearance."""
    groups: dict[str, list[int]] = {}
    for flow in plan.flows:
        groups.setdefault(flow_group(plan, flow.index), []).append(flow.index)
    return groups


def is_background(plan: Plan, index: int) -> bool:
    """Whether flow ``index`` is background traffic: its ``background`` key, else by kind.

    By default web sessions, short-TCP aggregates, ON/OFF sources and CBR are, as netsim's
    scenario parser decides (docs/scenario.md).
    """
    from tfrclab.summary import BACKGROUND_KINDS

    flow = plan.flows[index]
    if "background" in flow.table:
        return bool(flow.table["background"])
    return flow.kind in BACKGROUND_KINDS or "on_off" in flow.table


def seed_metrics(plan: Plan, series: Series, start_s: float, end_s: float) -> dict[str, float]:
    """The cross-check's metrics of one run over ``[start_s, end_s)`` (module documentation)."""
    dt = series.sample_s
    first = max(0, round(start_s / dt))
    last = min(series.samples, round(end_s / dt))
    window = (last - first) * dt
    link = plan.links[plan.primary_link]
    crossing = [flow.index for flow in plan.flows_crossing(plan.primary_link)]
    behind = [i for i in crossing if is_background(plan, i)]
    n_all = max(1, len(crossing))
    n_foreground = max(1, len(crossing) - len(behind))
    received = series.received_bytes[:, first:last].sum(axis=1) * 8.0 / window
    left = max(float(link.rate_bps) - float(received[behind].sum()), 0.0)
    out: dict[str, float] = {}
    classes = flow_groups(plan)
    for name, rows in classes.items():
        shares = [
            received[i] / (float(link.rate_bps) / n_all)
            if is_background(plan, i)
            else (received[i] / (left / n_foreground) if left > 0 else math.inf)
            for i in rows
        ]
        out[f"throughput/{name}"] = float(np.mean(shares))
    part = slice(first, last)
    for suffix, index in plan.metric_links:
        series_link = series.links[index]
        rate_bps = float(plan.links[index].rate_bps)
        drops, arrivals = series_link.drops[part].sum(), series_link.arrivals[part].sum()
        out[f"drop_rate{suffix}"] = float(metrics.drop_rate(drops, arrivals))
        out[f"utilization{suffix}"] = float(
            metrics.link_utilization(series_link.departed_bytes[part].sum() * 8.0, rate_bps, window)
        )
        out[f"mean_queue{suffix}"] = float(series_link.mean_queue[part].mean())
    if window >= 2.0:
        for name, rows in classes.items():
            covs = metrics.cov_at_timescale(
                series.sent_bytes[rows] * 8.0, dt, 1.0, first * dt, last * dt
            )
            out[f"cov_1s/{name}"] = float(np.nanmean(covs))
    return out


def run_ns2(
    script: str, ns: str = "ns", timeout_s: float = 600.0, *, line_buffered: bool = False
) -> str:
    """Run an exported script with ns-2 and return its standard output.

    With ``line_buffered``, ns-2's C standard output flushes every line (coreutils' ``stdbuf
    -oL``), so that what its C++ agents print interleaves line by line, in the order it was
    made, with what Tcl prints (a script exported with ``agent_state``).

    Raises:
        NsNotFound: if ``ns`` (or, with ``line_buffered``, ``stdbuf``) is not on PATH.
        RuntimeError: if ns-2 fails (with the end of its error output) or does not finish
            within ``timeout_s`` seconds of wall time (it is then killed).
    """
    binary = shutil.which(ns)
    if binary is None:
        raise NsNotFound(
            "ns-2 is not installed: `ns` is not on PATH (Debian/Ubuntu: apt-get install ns2)"
        )
    command = [binary]
    if line_buffered:
        stdbuf = shutil.which("stdbuf")
        if stdbuf is None:
            raise NsNotFound(
                "`stdbuf` (GNU coreutils) is not on PATH: it is needed to read ns-2's agent "
                "state line by line"
            )
        command = [stdbuf, "-oL", binary]
    with tempfile.TemporaryDirectory(prefix="tfrclab-ns2-") as tmp:
        path = Path(tmp) / "scenario.tcl"
        path.write_text(script, encoding="utf-8")
        try:
            proc = subprocess.run(
                [*command, str(path)], capture_output=True, text=True, timeout=timeout_s, cwd=tmp
            )
        except subprocess.TimeoutExpired:
            raise RuntimeError(
                f"ns-2 did not finish within {timeout_s:g} s of wall time and was stopped"
            ) from None
    if proc.returncode != 0 or "H " not in proc.stdout[:200]:
        tail = " ".join(proc.stderr.strip().splitlines()[-3:])
        raise RuntimeError(f"ns-2 failed (exit {proc.returncode}): {tail}")
    return proc.stdout


@dataclass(frozen=True)
class SeedRun:
    """Both simulators' metrics for one seed."""

    seed: int
    tfrclab: dict[str, float]
    ns2: dict[str, float]


def _one_seed(
    scenario: Scenario, seed: int, sample_s: float, start_s: float, end_s: float
) -> SeedRun:
    plan = resolve(scenario, seed)
    script = export_tcl(plan, sample_s)
    result = run(scenario, seed=seed)
    mine = seed_metrics(plan, from_result(result, plan, sample_s), start_s, end_s)
    theirs = seed_metrics(plan, read_output(run_ns2(script), plan), start_s, end_s)
    return SeedRun(seed, mine, theirs)


def default_sample(scenario: Scenario) -> float:
    """The sampling interval both runs are summed to: 1 s, or the bin if it does not divide."""
    bin_s = scenario.bin_s
    k = round(1.0 / bin_s)
    return 1.0 if k >= 1 and abs(k * bin_s - 1.0) < 1e-9 else bin_s


def crosscheck(
    scenario: Scenario,
    seeds: Sequence[int],
    *,
    start_s: float | None = None,
    end_s: float | None = None,
    jobs: int = 1,
    tolerance: float = 0.02,
    level: float = 0.95,
    sample_s: float | None = None,
    progress: Callable[[SeedRun], None] | None = None,
) -> tuple[list[Comparison], list[SeedRun]]:
    """Run ``scenario`` in both simulators for every seed and compare every metric.

    The metrics cover ``[start_s, end_s)``, by default the scenario's measurement window.

    Raises:
        NsNotFound: if ``ns`` is not on PATH.
        ExportError: if the scenario cannot be exported.
    """
    if shutil.which("ns") is None:
        raise NsNotFound(
            "ns-2 is not installed: `ns` is not on PATH (Debian/Ubuntu: apt-get install ns2)"
        )
    if start_s is None:
        start_s = scenario.measure_s[0]
    end = scenario.measure_s[1] if end_s is None else end_s
    if not 0 <= start_s < end <= scenario.duration_s + 1e-9:
        raise ValueError(f"the window [{start_s}, {end}) s is not inside the run")
    step = default_sample(scenario) if sample_s is None else sample_s
    # Refuse an unexportable scenario before running anything.
    export_tcl(resolve(scenario, seeds[0], strict=False), step)
    runs: list[SeedRun] = []
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [pool.submit(_one_seed, scenario, s, step, start_s, end) for s in seeds]
        for future in futures:
            seed_run = future.result()
            runs.append(seed_run)
            if progress is not None:
                progress(seed_run)
    names = list(runs[0].tfrclab)
    comparisons = [
        compare(
            name,
            [r.tfrclab.get(name, math.nan) for r in runs],
            [r.ns2.get(name, math.nan) for r in runs],
            tolerance,
            level,
        )
        for name in names
    ]
    return comparisons, runs
