"""floyd2000's dynamics experiments: queues (Figs. 14, 24, 26-28), TFRC's response (Figs. 19-23).

- Figs. 19-21 (App. A.1-A.2): one TFRC flow under deterministic periodic drops over the scripted
  channel (:mod:`tfrclab.channel`): how fast the rate rises once drops stop, and how many
  round-trip times of persistent congestion it takes to halve.
- Figs. 22-23 (App. A.3): two TCP, then two TFRC, flows on a RED link; flow 1 stops at 30 s and
  flow 0's sending rate is held near the link rate (TCP by its ACK clock, TFRC by the growing RTT).
- Figs. 14, 24, 26, 27 (§4.2, App. B): the queue over time in Table 25's runs (the same sweeps as
  ``floyd2000/table25``, read, not rerun).
- Fig. 28 (App. B): 40 flows with the randomization removed: standing queue oscillations.

Every tolerance is written beside its claim, fixed before any run; misses are findings, with
what is believed to cause them in the claim's ``known_deviation``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from tfrclab.reproduce.claims import Analysis, Claim, Measurement, measure_seeds
from tfrclab.reproduce.evidence import because, not_established
from tfrclab.reproduce.floyd2000 import (
    HALVE_AT_LEAST_3_RTTS,
    HALVE_AT_MOST_8_RTTS,
    TABLE25_BUFFER,
    TABLE25_EXPERIMENT,
    per_seed_measure,
    single_measure,
    table25_analyze,
)
from tfrclab.reproduce.registry import Experiment, Plan
from tfrclab.reproduce.sensitivity import Cell, Unstated

__all__ = [
    "EXPERIMENTS",
    "FIG21_DROP_RATES",
    "autocorrelation_peak",
    "halving_rtts",
    "mean_crossing_rate",
]

FloatArray = np.ndarray

# ---------------------------------------------------------------------------------------------
# Shared measures


def autocorrelation_peak(q: Sequence[float] | FloatArray, bin_s: float, max_lag_s: float) -> float:
    """How periodic a series is: its autocorrelation's highest peak past the first zero.

    The normalized autocorrelation r(k) of ``q`` minus its mean falls from 1 at lag 0; a
    standing oscillation brings it back near 1 at its period, noise does not. Returned: the
    largest r(k) from the first lag where r < 0 up to ``max_lag_s``; 0 when r stays positive
    that long (no oscillation of a period below ``max_lag_s``) or ``q`` is constant.
    """
    x = np.asarray(q, dtype=float)
    x = x - x.mean()
    energy = float(x @ x)
    if x.size < 3 or energy <= 0.0:
        return 0.0
    lags = min(x.size - 1, round(max_lag_s / bin_s))
    r = np.array([float(x[: x.size - k] @ x[k:]) / energy for k in range(lags + 1)])
    negative = np.flatnonzero(r < 0)
    if negative.size == 0:
        return 0.0
    return float(r[negative[0] :].max())


def mean_crossing_rate(q: Sequence[float] | FloatArray, bin_s: float) -> float:
    """Crossings of a series through its own mean, per second: a frequency of its swings."""
    x = np.asarray(q, dtype=float)
    if x.size < 2:
        return float("nan")
    above = x > x.mean()
    return float(np.count_nonzero(above[1:] != above[:-1]) / (x.size * bin_s))


def _link_matrix(cell: Any, column: str) -> tuple[FloatArray, FloatArray]:
    """The bottleneck's per-bin ``column``: (bin start times, seeds x bins), seeds in order."""
    rows = cell.link_series[cell.link_series["link"] == "bottleneck"]
    table = rows.pivot(index="seed", columns="time_s", values=column).sort_index()
    return table.columns.to_numpy(float), table.to_numpy(float)


def _flow_matrix(cell: Any, flow: str, column: str) -> FloatArray:
    """One flow's per-bin ``column``, seeds x bins, seeds in order."""
    rows = cell.flow_series[cell.flow_series["flow"] == flow]
    table = rows.pivot(index="seed", columns="time_s", values=column).sort_index()
    return np.asarray(table.to_numpy(float), dtype=float)


def _bottleneck(cell: Any, column: str) -> FloatArray:
    """A bottleneck total per seed (``utilization``, ``mean_queue_packets``, ...)."""
    links = cell.links[cell.links["name"] == "bottleneck"].sort_values("seed")
    return np.asarray(links[column].to_numpy(float), dtype=float)


def _ratio(numerator: str, denominator: str, note: str = "") -> Callable[[Analysis], Measurement]:
    """Per-seed ratio of two analysis arrays (paired by seed)."""

    def measure(analysis: Analysis) -> Measurement:
        return measure_seeds(
            np.asarray(analysis[numerator]) / np.asarray(analysis[denominator]), note
        )

    return measure


def _difference(a: str, b: str, note: str = "") -> Callable[[Analysis], Measurement]:
    """Per-seed difference of two analysis arrays (paired by seed)."""

    def measure(analysis: Analysis) -> Measurement:
        return measure_seeds(np.asarray(analysis[a]) - np.asarray(analysis[b]), note)

    return measure


def _save(figure: Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=90)
    return path


def _queue_panel(axes: Axes, t: FloatArray, q: FloatArray, drops: FloatArray, title: str) -> None:
    """The paper's queue plots: queue (packets) over time, an 'x' under each bin with drops."""
    axes.plot(t, q, linewidth=0.7, color="C0")
    dropped = drops > 0
    axes.plot(t[dropped], np.full(np.count_nonzero(dropped), -1.5), "x", color="C3", ms=3)
    axes.set_ylim(bottom=-3)
    axes.set_ylabel("queue (packets)")
    axes.set_title(title, fontsize="medium")
    axes.grid(visible=True, alpha=0.3)


# ---------------------------------------------------------------------------------------------
# Figs. 19-21: one TFRC flow over the scripted channel, periodic drops

_CHANNEL_R_S = 0.1
"""The scripted channel's round-trip time (two one-way delays of 50 ms). The paper does not give
it; 100 ms is Fig. 2's, and it puts Fig. 19's first increase near the paper's 10.75 s (100
packets at ~12 packets per RTT after the last drop near 10 s)."""

_CHANGE_AT_S = 10.0
"""When the drops change in Figs. 19-21."""

FIG21_DROP_RATES = (0.005, 0.01, 0.02, 0.05, 0.1, 0.2)
"""Fig. 21's initial drop rates (one packet in 200, 100, 50, 20, 10, 5). The paper's axis is
not legible in our copy; this range spans light to heavy loss."""

_FIG21_LOWER = 0.02
"""The "lower drop rates" of Fig. 21's ">= 5 RTTs" statement: those up to 2%."""


def _channel(before: Any, after: Any, duration_s: float) -> Any:
    from tfrclab.channel import run_channel

    return run_channel(
        preset="floyd2000",
        forward_delay_s=_CHANNEL_R_S / 2,
        reverse_delay_s=_CHANNEL_R_S / 2,
        schedule=(before, after),
        duration_s=duration_s,
    )


def _packets_per_rtt(run: Any) -> FloatArray:
    """The allowed rate X in packets per RTT (the channel's fixed R), Fig. 19's unit."""
    x: FloatArray = run.x_pkts_per_s * _CHANNEL_R_S
    return x


def _slope(x: FloatArray, y: FloatArray) -> float:
    """Least-squares slope of ``y`` over ``x`` (NaN with fewer than 3 points)."""
    if x.size < 3:
        return float("nan")
    return float(np.polyfit(x, y, 1)[0])


def _fig19_analyze(_runs: Any, plan: Plan) -> Analysis:
    from tfrclab.channel import LossStep

    run = _channel(
        LossStep.periodic(0.0, 0.01), LossStep(_CHANGE_AT_S, "none"), plan.duration_s or 16.0
    )
    t, x = run.time_s, _packets_per_rtt(run)
    before = (t >= _CHANGE_AT_S - 2.0) & (t <= _CHANGE_AT_S)
    ceiling = float(x[before].max()) if before.any() else float("nan")
    rising = np.flatnonzero((t > _CHANGE_AT_S) & (x > ceiling * 1.001))
    start = float(t[rising[0]]) if rising.size else float("nan")
    discounted = np.flatnonzero((t > _CHANGE_AT_S) & (run.discount_factor < 1.0))
    discount_at = float(t[discounted[0]]) if discounted.size else float("nan")
    rtts = t / _CHANNEL_R_S
    plain = np.zeros(t.size, dtype=bool)
    if rising.size:
        end = discounted[0] if discounted.size else t.size
        plain[rising[0] : end] = True
    # With discounting: the steepest rise over any 5 consecutive reports (about 5 RTTs).
    steepest = float("nan")
    if discounted.size:
        k = discounted[0]
        slopes = [_slope(rtts[i : i + 5], x[i : i + 5]) for i in range(k, t.size - 4)]
        steepest = float(np.nanmax(slopes)) if slopes else float("nan")
    return {
        "run": run,
        "increase_start_s": start,
        "plain_increase_per_rtt": _slope(rtts[plain], x[plain]),
        "discount_start_s": discount_at,
        "discounted_increase_per_rtt": steepest,
    }


def _fig19_plot(analysis: Analysis, path: Path) -> Path:
    run = analysis["run"]
    figure = Figure(figsize=(8, 3.6), layout="constrained")
    axes = figure.subplots()
    axes.plot(run.time_s, _packets_per_rtt(run), "-+", ms=4, linewidth=0.8, label="allowed rate")
    for key, label, style in (
        ("increase_start_s", "first increase", "C2"),
        ("discount_start_s", "history discounting", "C3"),
    ):
        if np.isfinite(analysis[key]):
            axes.axvline(analysis[key], color=style, linestyle=":", label=label)
    axes.axvline(_CHANGE_AT_S, color="0.5", linestyle="--", label="drops stop (10 s)")
    axes.set_xlim(_CHANGE_AT_S - 2, float(run.time_s[-1]))
    shown = _packets_per_rtt(run)[run.time_s >= _CHANGE_AT_S - 2]
    axes.set_ylim(0, 1.3 * float(shown.max()) if shown.size else None)
    axes.set_xlabel("Time (s)")
    axes.set_ylabel("Allowed sending rate (packets/RTT)")
    axes.set_title("Fig. 19: a TFRC flow with an end to congestion at time 10.0 (R = 100 ms)")
    axes.grid(visible=True, alpha=0.3)
    axes.legend(fontsize="small")
    return _save(figure, path)


_DETERMINISTIC = "deterministic run (no seeds)"

FIG19 = Experiment(
    id="floyd2000/fig19",
    title="Fig. 19: TFRC's rate increase once congestion ends (App. A.1)",
    setup="One TFRC flow (preset floyd2000) over the scripted channel, R = 100 ms (not given by "
    "the paper), every 100th packet dropped until 10 s, then none; 16 s. Deterministic: one run.",
    kind="channel",
    scenarios=(),
    cells=(),
    full=Plan(seeds=(0,), duration_s=16.0),
    quick=Plan(seeds=(0,), duration_s=16.0),
    metrics=("allowed rate X (packets/RTT)", "history discounting"),
    claims=(
        Claim(
            id="increase-starts",
            statement="The flow does not begin to increase its rate until about 10.75 s, when "
            "the current loss interval exceeds the average of 100 packets.",
            paper_value="10.75 s",
            how="time of the first feedback report after 10 s whose X exceeds the largest X "
            "of the 2 s before 10 s",
            tolerance="within 5 RTTs (0.5 s): [10.25 s, 11.25 s]",
            accept=(10.25, 11.25),
            measure=single_measure("increase_start_s", _DETERMINISTIC),
            unit="s",
            robust_to_quick=True,
        ),
        Claim(
            id="increase-per-rtt",
            statement="Without history discounting the rate then rises by about 0.12 packets "
            "per RTT each RTT (App. A.1: at most 0.12 with the simple equation, 0.14 with "
            "Equation 1).",
            paper_value="0.12 packets/RTT per RTT",
            how="least-squares slope of X (packets per RTT) against time in RTTs from the first "
            "increase to the first report with history discounting",
            tolerance="within a third: [0.08, 0.16]",
            accept=(0.08, 0.16),
            measure=single_measure("plain_increase_per_rtt", _DETERMINISTIC),
            unit="packets/RTT per RTT",
            robust_to_quick=True,
        ),
        Claim(
            id="discounting-starts",
            statement="The receiver invokes history discounting from about 11.5 s.",
            paper_value="11.5 s",
            how="time of the first report after 10 s with a discount factor below 1",
            tolerance="within 5 RTTs (0.5 s): [11.0 s, 12.0 s]",
            accept=(11.0, 12.0),
            measure=single_measure("discount_start_s", _DETERMINISTIC),
            unit="s",
            robust_to_quick=True,
        ),
        Claim(
            id="discounted-increase-per-rtt",
            statement="With history discounting the rate rises by up to 0.29 packets per RTT "
            "each RTT (App. A.1: at most 0.28).",
            paper_value="up to 0.29 packets/RTT per RTT",
            how="the steepest least-squares slope of X (packets per RTT) over 5 consecutive "
            "reports after discounting starts",
            tolerance="within a third: [0.20, 0.38]",
            accept=(0.20, 0.38),
            measure=single_measure("discounted_increase_per_rtt", _DETERMINISTIC),
            unit="packets/RTT per RTT",
            robust_to_quick=True,
        ),
    ),
    analyze=_fig19_analyze,
    plot=_fig19_plot,
)


def halving_rtts(run: Any, at_s: float, rtt_s: float) -> float:
    """Round-trip times from ``at_s`` until the sender's X is at most half its value there.

    The time of the first feedback report after ``at_s`` with X at most half the X in force at
    ``at_s``, less ``at_s``, in RTTs. Time, not a count of reports: the receiver reports once
    per RTT and also at once on each new loss event (RFC 5348 §6.2), so under persistent
    congestion there are about two reports per RTT. NaN when X never halves (or there is no
    report by ``at_s``).
    """
    i = run.index_at(at_s)
    if i is None:
        return float("nan")
    x = run.x_bytes_per_s
    later = np.flatnonzero((run.time_s > at_s) & (x <= x[i] / 2))
    if later.size == 0:
        return float("nan")
    return float((run.time_s[later[0]] - at_s) / rtt_s)


def _halving_run(rate: float, duration_s: float) -> Any:
    from tfrclab.channel import LossStep

    return _channel(LossStep.periodic(0.0, rate), LossStep.periodic(_CHANGE_AT_S, 0.5), duration_s)


def _fig20_analyze(_runs: Any, plan: Plan) -> Analysis:
    run = _halving_run(0.01, plan.duration_s or 13.0)
    return {"run": run, "halve_rtts": halving_rtts(run, _CHANGE_AT_S, _CHANNEL_R_S)}


def _fig20_plot(analysis: Analysis, path: Path) -> Path:
    run = analysis["run"]
    figure = Figure(figsize=(8, 3.6), layout="constrained")
    axes = figure.subplots()
    axes.plot(run.time_s, _packets_per_rtt(run), "-+", ms=5, linewidth=0.8, label="allowed rate")
    i = run.index_at(_CHANGE_AT_S)
    if i is not None:
        axes.axhline(_packets_per_rtt(run)[i] / 2, color="C3", linestyle=":", label="half")
    axes.axvline(_CHANGE_AT_S, color="0.5", linestyle="--", label="every other packet dropped")
    axes.set_xlim(_CHANGE_AT_S - 1, float(run.time_s[-1]))
    shown = _packets_per_rtt(run)[run.time_s >= _CHANGE_AT_S - 1]
    axes.set_ylim(0, 1.3 * float(shown.max()) if shown.size else None)
    axes.set_xlabel("Time (s)")
    axes.set_ylabel("Allowed sending rate (packets/RTT)")
    axes.set_title(
        f"Fig. 20: persistent congestion at time 10; halved after {analysis['halve_rtts']:.1f} RTTs"
    )
    axes.grid(visible=True, alpha=0.3)
    axes.legend(fontsize="small")
    return _save(figure, path)


_ONE_RTT = (
    "one RTT of slack: the paper counts the sender's marks, one per RTT, and where a mark falls "
    "within its RTT shifts the count by one"
)

FIG20 = Experiment(
    id="floyd2000/fig20",
    title="Fig. 20: RTTs of persistent congestion before TFRC halves its rate (App. A.2)",
    setup="One TFRC flow (preset floyd2000) over the scripted channel, R = 100 ms (not given by "
    "the paper), every 100th packet dropped until 10 s, then every other packet; 13 s. "
    "Deterministic: one run.",
    kind="channel",
    scenarios=(),
    cells=(),
    full=Plan(seeds=(0,), duration_s=13.0),
    quick=Plan(seeds=(0,), duration_s=13.0),
    metrics=("allowed rate X", "RTTs to halve"),
    claims=(
        Claim(
            id="halves-after-5-rtts",
            statement="When persistent congestion begins at 10 s it takes five round-trip times "
            "for the sending rate to be reduced by half.",
            paper_value="5 RTTs",
            how="RTTs (R = 100 ms) from 10 s until the first feedback report with X at most "
            "half its value at 10 s",
            tolerance=f"5 +- 1: [4, 6] ({_ONE_RTT})",
            accept=(4.0, 6.0),
            measure=single_measure("halve_rtts", _DETERMINISTIC),
            unit="RTTs",
            robust_to_quick=True,
            known_deviation=not_established(
                "X halves after five small loss intervals, as App. A.2 says, but more than five "
                "RTTs after 10 s; a separate ns-2.35 run of the same schedule (tfrclab "
                "crosscheck's export, not a registered referee; docs/reproduction/README.md) "
                "halves the send rate in the same 0.1 s. The paper's count may start at the "
                "first report that carries the new drops, about an RTT after 10 s"
            ),
        ),
    ),
    analyze=_fig20_analyze,
    plot=_fig20_plot,
)


def _fig21_analyze(_runs: Any, plan: Plan) -> Analysis:
    counts = np.array(
        [
            halving_rtts(_halving_run(r, plan.duration_s or 13.0), _CHANGE_AT_S, _CHANNEL_R_S)
            for r in FIG21_DROP_RATES
        ]
    )
    lower = np.asarray(FIG21_DROP_RATES) <= _FIG21_LOWER
    return {
        "rates": np.asarray(FIG21_DROP_RATES),
        "halve_rtts": counts,
        "fewest": float(np.nanmin(counts)) if np.isfinite(counts).any() else float("nan"),
        "most": float(np.max(counts)),
        "fewest_lower": float(np.min(counts[lower])),
    }


def _fig21_plot(analysis: Analysis, path: Path) -> Path:
    figure = Figure(figsize=(6.5, 3.8), layout="constrained")
    axes = figure.subplots()
    axes.axhspan(3, 8, color="0.88", zorder=0, label="paper: 3-8")
    axes.plot(analysis["rates"], analysis["halve_rtts"], "o-", label="tfrclab")
    axes.set_xscale("log")
    axes.set_ylim(0, 10)
    axes.set_xlabel("Initial packet drop rate (before 10 s)")
    axes.set_ylabel("Round-trip times to halve the rate")
    axes.set_title("Fig. 21: RTTs to reduce the sending rate by half")
    axes.grid(visible=True, alpha=0.3)
    axes.legend(fontsize="small")
    return _save(figure, path)


FIG21 = Experiment(
    id="floyd2000/fig21",
    title="Fig. 21: RTTs to halve the rate, over the initial drop rate (App. A.2)",
    setup="Fig. 20's scenario (scripted channel, R = 100 ms, every other packet dropped from "
    "10 s) with initial periodic drop rates of 0.5%, 1%, 2%, 5%, 10% and 20% (the paper's "
    "values are not legible; 13 s each). Deterministic: one run per rate.",
    kind="channel",
    scenarios=(),
    cells=(),
    full=Plan(seeds=(0,), duration_s=13.0),
    quick=Plan(seeds=(0,), duration_s=13.0),
    metrics=("RTTs to halve",),
    claims=(
        Claim.in_band(
            HALVE_AT_LEAST_3_RTTS,
            id="fewest-rtts",
            statement="The number of round-trip times to halve ranges from three to eight: "
            "never fewer than three.",
            paper_value="at least 3 RTTs",
            how="the fewest RTTs to halve (as in fig20) over the six initial drop rates",
            measure=single_measure("fewest", _DETERMINISTIC),
            unit="RTTs",
            robust_to_quick=True,
        ),
        Claim.in_band(
            HALVE_AT_MOST_8_RTTS,
            id="most-rtts",
            statement="The number of round-trip times to halve ranges from three to eight: "
            "never more than eight.",
            paper_value="at most 8 RTTs",
            how="the most RTTs to halve (as in fig20) over the six initial drop rates",
            measure=single_measure("most", _DETERMINISTIC),
            unit="RTTs",
            robust_to_quick=True,
            known_deviation=not_established(
                "only the 20% initial rate misses (the figure gives every rate's count); at "
                "20% the flow sends fewer than one packet per "
                "RTT, below App. A.2's assumption of at least one packet and one report per "
                "RTT. The paper's range of rates is not legible, it may stop lower"
            ),
        ),
        Claim(
            id="at-least-5-at-lower-rates",
            statement="At the lower drop rates TFRC takes at least five round-trip times to "
            "halve its rate (App. A.2's lower bound).",
            paper_value=">= 5 RTTs",
            how="the fewest RTTs to halve (as in fig20) over the initial drop rates up to 2%",
            tolerance=f"at least 4 ({_ONE_RTT})",
            accept=(4.0, 1000.0),
            measure=single_measure("fewest_lower", _DETERMINISTIC),
            unit="RTTs",
            robust_to_quick=True,
        ),
    ),
    analyze=_fig21_analyze,
    plot=_fig21_plot,
)

# ---------------------------------------------------------------------------------------------
# Figs. 22-23: two flows on a RED link, flow 1 stops at 30 s

_STOP_S = 30.0
"""When flow 1 stops."""

_FIG22_LINK_PPS = 1.5e6 / 8000
"""The chosen link rate in 1000-byte packets per second (1.5 Mb/s; fig22.toml)."""

_FIG22_RTTS = {"rtt50": 0.05, "rtt100": 0.1}
"""The cells: the chosen 50 ms round-trip time and 100 ms beside it (sensitivity)."""

_FIG22_CELLS = tuple(
    (label, "", {} if rtt == 0.05 else {"topology.access.rtt": f"{rtt * 1000:g}ms"})
    for label, rtt in _FIG22_RTTS.items()
)


def _cells_of(scenario: str) -> tuple[tuple[str, str, Mapping[str, Any]], ...]:
    return tuple((label, scenario, changes) for label, _s, changes in _FIG22_CELLS)


def _after_stop(data: Mapping[str, Any], tfrc: bool) -> Analysis:
    """Per cell and seed: flow 0's largest packets per 0.1 s after 30 s, and the queue's build-up.

    The build-up window runs from the queue's last minimum after 30 s to the first drop after
    30 s. TCP: the queue's growth per RTT there (RTTs counted with the queueing delay: n(t) =
    sum of bin / (R0 + q / C)). TFRC: when the queue starts to build (the first bin at least
    one packet above that minimum) and how much flow 0's rise slows once it does (slope of its
    packets per bin in the 2 s after the onset over the slope from 30 s to the onset).
    """
    out: dict[str, Any] = {}
    for label, cell in data.items():
        r0 = _FIG22_RTTS[label]
        t, q = _link_matrix(cell, "mean_queue_packets")
        _t, drops = _link_matrix(cell, "drops")
        sent = _flow_matrix(cell, "flow0", "sent_packets")
        sent1 = _flow_matrix(cell, "flow1", "sent_packets")
        n = q.shape[0]
        peak = np.full(n, np.nan)
        growth = np.full(n, np.nan)
        onset = np.full(n, np.nan)
        flatten = np.full(n, np.nan)
        i0 = int(np.searchsorted(t, _STOP_S - 1e-9))
        for s in range(n):
            peak[s] = sent[s, i0:].max()
            dropped = np.flatnonzero(drops[s, i0:] > 0)
            i_drop = i0 + (int(dropped[0]) if dropped.size else t.size - i0)
            segment = q[s, i0:i_drop]
            if segment.size < 4:
                continue
            start = i0 + int(segment.size - 1 - np.argmin(segment[::-1]))
            if not tfrc:
                window = slice(start, i_drop)
                elapsed = np.cumsum(cell.bin_s / (r0 + q[s, window] / _FIG22_LINK_PPS))
                growth[s] = _slope(elapsed, q[s, window])
                continue
            built = np.flatnonzero(q[s, start:i_drop] >= q[s, start] + 1.0)
            if built.size == 0:
                continue
            i_on = start + int(built[0])
            onset[s] = t[i_on] - _STOP_S
            before = _slope(t[i0:i_on], sent[s, i0:i_on])
            after = _slope(t[i_on : min(i_on + 20, i_drop)], sent[s, i_on : min(i_on + 20, i_drop)])
            if np.isfinite(before) and before > 0:
                flatten[s] = after / before
        out[f"{label}/peak"] = peak
        out[f"{label}/queue_growth_per_rtt"] = growth
        out[f"{label}/onset_after_stop_s"] = onset
        out[f"{label}/flatten_ratio"] = flatten
        out[f"{label}/series"] = (t, sent[0], sent1[0], q[0], drops[0])
    return out


def _fig22_23_plot(analysis: Analysis, path: Path, name: str, number: int) -> Path:
    figure = Figure(figsize=(10, 5.5), layout="constrained")
    axes = figure.subplots(2, len(_FIG22_RTTS), sharex=True)
    for k, label in enumerate(_FIG22_RTTS):
        t, sent0, sent1, q, drops = analysis[f"{label}/series"]
        top, bottom = axes[0][k], axes[1][k]
        top.step(t, sent0, where="post", linewidth=0.8, label="flow 0")
        top.step(t, sent1, where="post", linewidth=0.8, label="flow 1 (stops at 30 s)")
        top.axhline(_FIG22_LINK_PPS / 10, color="0.5", linestyle=":", label="link rate")
        dropped = drops > 0
        top.plot(t[dropped], np.zeros(np.count_nonzero(dropped)), "x", color="C3", ms=3)
        top.set_ylabel("packets per 0.1 s")
        top.set_title(f"Fig. {number}: two {name} flows, R = {label[3:]} ms (first seed)")
        top.legend(fontsize="x-small", loc="upper left")
        bottom.plot(t, q, linewidth=0.8)
        bottom.set_ylabel("queue (packets)")
        bottom.set_xlabel("Time (s)")
        for a in (top, bottom):
            a.set_xlim(20, float(t[-1]) + 0.1)
            a.grid(visible=True, alpha=0.3)
    return _save(figure, path)


_ONSET_DEVIATION = because(
    "the onset scales with the unstated RTT: TFRC adds a fixed fraction of a packet per RTT "
    "(App. A.1), so at 100 ms flow 0 takes longer to fill the link again than at 50 ms, where "
    "the onset is the paper's: the paper's 1.6 s fits an RTT near 50 ms",
    "floyd2000/fig23 rtt50-queue-onset",
)


def _peak_claims(limit: int) -> list[Claim]:
    return [
        Claim(
            id=f"{label}-peak-per-0.1s",
            statement=f"Flow 0's sending rate never exceeds {limit} packets per 0.1 s after flow "
            "1 stops (R = " + label[3:] + " ms).",
            paper_value=f"at most {limit} packets/0.1 s",
            how="the largest number of packets flow 0 sends in a 0.1 s bin from 30 s to the "
            "end, per seed",
            tolerance=f"at most {limit + 1} (one packet for where the bins fall)",
            accept=(0.0, float(limit + 1)),
            measure=per_seed_measure(f"{label}/peak"),
            unit="packets",
            robust_to_quick=True,
        )
        for label in _FIG22_RTTS
    ]


FIG22 = Experiment(
    id="floyd2000/fig22",
    title="Fig. 22: two TCP flows on a RED link, flow 1 stops at 30 s (App. A.3)",
    setup="Two SACK TCP flows on a 1.5 Mb/s RED bottleneck (ns-2 2000 defaults), starts in "
    "0-1 s, flow 1 stops at 30 s, 40 s, 0.1 s bins (scenario fig22.toml). Link rate, RTT (50 "
    "ms; a 100 ms cell beside it) and RED parameters are not given by the paper. The paper "
    "shows one run.",
    kind="sweep",
    scenarios=("floyd2000/fig22.toml",),
    cells=_cells_of("floyd2000/fig22.toml"),
    full=Plan(seeds=tuple(range(1, 11))),
    quick=Plan(seeds=(1, 2)),
    metrics=("packets per 0.1 s", "queue (packets)"),
    claims=(
        *_peak_claims(21),
        *(
            Claim(
                id=f"{label}-queue-grows-1-per-rtt",
                statement="With flow 0 alone at 100% throughput, the queue grows by one packet "
                f"each round-trip time (R = {label[3:]} ms).",
                paper_value="1 packet/RTT",
                how="least-squares slope of the bottleneck queue (0.1 s bin means) against "
                "elapsed RTTs (queueing delay included) from its last minimum after 30 s to "
                "the first drop after 30 s, per seed",
                tolerance="within half a packet: [0.5, 1.5]",
                accept=(0.5, 1.5),
                measure=per_seed_measure(f"{label}/queue_growth_per_rtt"),
                unit="packets/RTT",
            )
            for label in _FIG22_RTTS
        ),
    ),
    analyze=lambda data, _plan: _after_stop(data, tfrc=False),
    plot=lambda analysis, path: _fig22_23_plot(analysis, path, "TCP", 22),
)

FIG23 = Experiment(
    id="floyd2000/fig23",
    title="Fig. 23: two TFRC flows on a RED link, flow 1 stops at 30 s (App. A.3)",
    setup="Fig. 22's setup with two TFRC flows (preset floyd2000; scenario fig23.toml): 1.5 "
    "Mb/s RED, RTT 50 ms (and a 100 ms cell), flow 1 stops at 30 s, 40 s, 0.1 s bins. The "
    "paper shows one run.",
    kind="sweep",
    scenarios=("floyd2000/fig23.toml",),
    cells=_cells_of("floyd2000/fig23.toml"),
    full=Plan(seeds=tuple(range(1, 11))),
    quick=Plan(seeds=(1, 2)),
    metrics=("packets per 0.1 s", "queue (packets)"),
    claims=(
        *_peak_claims(20),
        *(
            Claim(
                id=f"{label}-queue-onset",
                statement="Flow 0's rate increases from 30 s until the queue begins to build at "
                f"31.6 s (R = {label[3:]} ms).",
                paper_value="1.6 s after flow 1 stops",
                how="time from 30 s to the first 0.1 s bin with the queue one packet above its "
                "last minimum after 30 s (before any drop), per seed",
                tolerance="within a factor of 2: [0.8 s, 3.2 s] (it scales with the unstated "
                "link and RTT)",
                accept=(0.8, 3.2),
                measure=per_seed_measure(f"{label}/onset_after_stop_s"),
                unit="s",
                # At 100 ms the 2 quick seeds' interval (5.1 +- 6.4 s) crosses the band.
                robust_to_quick=label == "rtt50",
                known_deviation=_ONSET_DEVIATION if label == "rtt100" else None,
            )
            for label in _FIG22_RTTS
        ),
        *(
            Claim(
                id=f"{label}-rate-flattens",
                statement="Once the queue starts to build, flow 0's sending rate flattens out "
                f"even without new drops (R = {label[3:]} ms).",
                paper_value="flat after 31.6 s",
                how="slope of flow 0's packets per 0.1 s over the 2 s after the queue's onset "
                "(or up to the first drop) divided by its slope from 30 s to the onset, per seed",
                tolerance="at most half the earlier rise: [-1, 0.5]",
                accept=(-1.0, 0.5),
                measure=per_seed_measure(f"{label}/flatten_ratio"),
                robust_to_quick=label == "rtt50",  # rtt100: -0.07 +- 0.9 on 2 quick seeds
            )
            for label in _FIG22_RTTS
        ),
    ),
    analyze=lambda data, _plan: _after_stop(data, tfrc=True),
    plot=lambda analysis, path: _fig22_23_plot(analysis, path, "TFRC", 23),
)

# ---------------------------------------------------------------------------------------------
# Figs. 14, 24, 26, 27: the queue in Table 25's runs

_STEADY_S = (20.0, 30.0)
"""The queue measures' window: after every long-lived flow has started (starts over 0-20 s)."""

_NEARLY_FULL = 0.8
"""A bin counts as "nearly full" when its mean queue is at least 80% of the buffer."""

_TABLE25_BUFFER_PACKETS = 49.0
"""Table 25's DropTail buffer: ns-2's limit_ 50, of which 49 packets wait (docs/queues.md)."""


def _table25_cells(*labels: str) -> tuple[tuple[str, str, Mapping[str, Any]], ...]:
    return tuple(cell for cell in TABLE25_EXPERIMENT.cells if cell[0] in labels)


def _queue_measures(data: Mapping[str, Any]) -> Analysis:
    """Table 25's per-seed utilization and drop rate, plus per-seed queue measures per cell."""
    out: dict[str, Any] = dict(table25_analyze(data, TABLE25_EXPERIMENT.full))
    for label, cell in data.items():
        t, q = _link_matrix(cell, "mean_queue_packets")
        _t, drops = _link_matrix(cell, "drops")
        steady = (t >= _STEADY_S[0] - 1e-9) & (t < _STEADY_S[1] - 1e-9)
        out[f"{label}/mean_queue"] = _bottleneck(cell, "mean_queue_packets")
        out[f"{label}/queue_std"] = q[:, steady].std(axis=1)
        out[f"{label}/nearly_full"] = (q[:, steady] >= _NEARLY_FULL * _TABLE25_BUFFER_PACKETS).mean(
            axis=1
        )
        out[f"{label}/crossings_per_s"] = np.array(
            [mean_crossing_rate(row[steady], cell.bin_s) for row in q]
        )
        out[f"{label}/series"] = (t, q[0], drops[0])
    return out


def _queue_figure(analysis: Analysis, path: Path, rows: Sequence[tuple[str, str]]) -> Path:
    """Rows of (figure title, queue-flows prefix): TCP on the left, TFRC on the right."""
    figure = Figure(figsize=(10, 2.3 * len(rows) + 0.5), layout="constrained")
    axes = figure.subplots(len(rows), 2, squeeze=False, sharex=True)
    for r, (title, prefix) in enumerate(rows):
        queue, flows = prefix.split("-")
        for c, traffic in enumerate(("tcp", "tfrc")):
            label = f"{queue}-{traffic}-{flows}"
            t, q, drops = analysis[f"{label}/series"]
            _queue_panel(axes[r][c], t, q, drops, f"{title}: {flows} {traffic.upper()} flows")
    for c in range(2):
        axes[-1][c].set_xlabel("Time (s), queue as 0.1 s means, first seed")
    return _save(figure, path)


FIG14 = Experiment(
    id="floyd2000/fig14",
    title="Fig. 14: the queue with 40 long-lived TCP or TFRC flows, DropTail (§4.2)",
    setup="Table 25's 40-flow DropTail runs (15 Mb/s, RTTs 40-50 ms, starts over 20 s, 20% short "
    "TCP, 5% reverse; read from floyd2000/table25's sweeps, the same seeds). Their utilization "
    "and drop rates are table25's droptail-*-40 claims; here the queue, measured over 20-30 s "
    "(after every start) from 0.1 s bin means. The paper shows one run each.",
    kind="sweep",
    scenarios=("floyd2000/table25-droptail-tcp.toml", "floyd2000/table25-droptail-tfrc.toml"),
    cells=_table25_cells("droptail-tcp-40", "droptail-tfrc-40"),
    full=TABLE25_EXPERIMENT.full,
    quick=TABLE25_EXPERIMENT.quick,
    metrics=("queue (packets)", "drop_rate"),
    claims=(
        Claim(
            id="tfrc-drop-rate-below-tcp",
            statement="The drop rate is lower with TFRC than with TCP (3.5% against 4.9%).",
            paper_value="TFRC / TCP = 3.5 / 4.9 = 0.71",
            how="bottleneck drop rate with TFRC over that with TCP, seeds paired",
            tolerance="below 1: [0, 1)",
            accept=(0.0, 1.0),
            strict=(False, True),
            measure=_ratio("droptail-tfrc-40/drop_rate", "droptail-tcp-40/drop_rate"),
            known_deviation=not_established(
                "TFRC's drop rate is about TCP's, where the paper's single runs give 0.71; not "
                "refereed in ns-2 (the cross-check cannot export short TCP flows); each drop "
                "rate is within table25's factor of 2 of the paper's"
            ),
        ),
        *(
            Claim(
                id=f"queue-nearly-full-{traffic}",
                statement="With DropTail the queue is nearly full for most of the simulation "
                f"({traffic.upper()}; App. B).",
                paper_value="nearly full most of the time",
                how="fraction of 0.1 s bins in 20-30 s whose mean queue is at least 80% of the "
                "buffer, per seed",
                tolerance="most: at least 0.5",
                accept=(0.5, 1.0),
                measure=per_seed_measure(f"droptail-{traffic}-40/nearly_full"),
                # TFRC's 0.93 on 2 quick seeds has an interval of +-0.5: undecided there.
                robust_to_quick=traffic == "tcp",
            )
            for traffic in ("tcp", "tfrc")
        ),
        Claim(
            id="tfrc-queue-no-worse",
            statement="TFRC traffic does not have a negative impact on queue dynamics.",
            paper_value="no negative impact (shape)",
            how="standard deviation of the queue (0.1 s bin means, 20-30 s) with TFRC over that "
            "with TCP, seeds paired",
            tolerance="at most 1.25 (TFRC's queue swings at most 25% wider)",
            accept=(0.0, 1.25),
            measure=_ratio("droptail-tfrc-40/queue_std", "droptail-tcp-40/queue_std"),
        ),
    ),
    analyze=lambda data, _plan: _queue_measures(data),
    plot=lambda analysis, path: _queue_figure(analysis, path, (("Fig. 14", "droptail-40"),)),
    runs_of=TABLE25_EXPERIMENT.id,
)


def _utilization_claim(
    figure: str, queue: str, higher: bool, paper: str, metric: str = "utilization"
) -> Claim:
    what = "link utilization" if metric == "utilization" else "drop rate"
    word = "higher" if higher else "lower"
    unit = "pp" if metric == "utilization" else "pp (drop %)"
    return Claim(
        id=f"{figure}-tfrc-{word}-{metric.replace('_', '-')}",
        statement=f"With 4 flows and {queue}, TFRC gives a {word} {what} than TCP.",
        paper_value=paper,
        how=f"{what} (%) with TFRC minus with TCP, seeds paired",
        tolerance=f"the sign: {'at least' if higher else 'at most'} 0",
        accept=(0.0, 100.0) if higher else (-100.0, 0.0),
        measure=_difference(f"{queue}-tfrc-4/{metric}", f"{queue}-tcp-4/{metric}"),
        unit=unit,
    )


def _delay_claim(traffic: str, flows: int, at_least: float, paper: str) -> Claim:
    return Claim(
        id=f"droptail-delay-above-red-{traffic}-{flows}",
        statement=f"The average queueing delay is {'much ' if at_least > 1 else ''}higher with "
        f"DropTail than with RED ({flows} {traffic.upper()} flows).",
        paper_value=paper,
        how="time-averaged bottleneck queue over the 30 s, DropTail over RED, seeds paired",
        tolerance=f"at least {at_least:g}",
        accept=(at_least, 1000.0),
        measure=_ratio(
            f"droptail-{traffic}-{flows}/mean_queue", f"red-{traffic}-{flows}/mean_queue"
        ),
        robust_to_quick=True,
    )


FIG24_26_27 = Experiment(
    id="floyd2000/fig24-26-27",
    title="Figs. 24, 26, 27: the queue in Table 25's runs, RED and DropTail (App. B)",
    setup="Table 25's runs read from floyd2000/table25's sweeps (same seeds): Fig. 24 = 4 flows "
    "at 1.5 Mb/s with RED, Fig. 26 = the same with DropTail, Fig. 27 = 40 flows at 15 Mb/s with "
    "RED (Fig. 14 is the 40-flow DropTail pair). Queue frequency over 20-30 s from 0.1 s bin "
    "means; average queue over the 30 s. The paper shows one run each.",
    kind="sweep",
    scenarios=TABLE25_EXPERIMENT.scenarios,
    cells=TABLE25_EXPERIMENT.cells,
    full=TABLE25_EXPERIMENT.full,
    quick=TABLE25_EXPERIMENT.quick,
    metrics=("queue (packets)", "link_utilization", "drop_rate"),
    claims=(
        _utilization_claim("fig24", "red", True, "89% against 83%"),
        _utilization_claim("fig24", "red", True, "5.9% against 4.7%", "drop_rate"),
        Claim(
            id="fig24-tfrc-lower-frequency",
            statement="With 4 flows and RED, TFRC gives lower-frequency oscillations of the "
            "queue, with longer busy periods, than TCP.",
            paper_value="lower frequency (not quantified)",
            how="crossings of the queue (0.1 s bin means, 20-30 s) through its mean per second, "
            "TFRC over TCP, seeds paired",
            tolerance="below 1",
            accept=(0.0, 1.0),
            strict=(False, True),
            measure=_ratio("red-tfrc-4/crossings_per_s", "red-tcp-4/crossings_per_s"),
            known_deviation=not_established(
                "TFRC's and TCP's queue frequencies are not separated; Table 25's runs keep "
                "0.1 s bins, and a separate check at 10 ms bins (seeds 1-10, not registered) "
                "did not separate them either: the paper's impression of one run, which it did "
                "not quantify, is not reproduced"
            ),
        ),
        _utilization_claim("fig26", "droptail", True, "96% against 89%"),
        _utilization_claim("fig26", "droptail", False, "4.9% against 5.2%", "drop_rate"),
        _delay_claim("tcp", 4, 1.0, "higher (not quantified)"),
        _delay_claim("tfrc", 4, 1.0, "higher (not quantified)"),
        _delay_claim("tcp", 40, 2.0, "much higher (not quantified); 'much' taken as 2x"),
        _delay_claim("tfrc", 40, 2.0, "much higher (not quantified); 'much' taken as 2x"),
    ),
    analyze=lambda data, _plan: _queue_measures(data),
    plot=lambda analysis, path: _queue_figure(
        analysis,
        path,
        (("Fig. 24 (RED)", "red-4"), ("Fig. 26 (DropTail)", "droptail-4"), ("Fig. 27", "red-40")),
    ),
    runs_of=TABLE25_EXPERIMENT.id,
    unstated=(TABLE25_BUFFER,),
)

# ---------------------------------------------------------------------------------------------
# Fig. 28: 40 flows, no randomization: standing oscillations

_RED_QUEUE = {"kind": "red", "preset": "ns2_2000", "limit": 50}
"""Table 25's RED queue (table25-red-*.toml), swapped in for the RED cells."""

_PERIODIC = 0.4
"""An autocorrelation peak (:func:`autocorrelation_peak`, lags up to 5 s) of at least 0.4 is a
standing oscillation; a noisy queue stays near 0.1-0.2."""

_MAX_LAG_S = 5.0

_BUFFER100 = {"topology.bottleneck.queue.ns2_limit": 100}
"""The sensitivity cells: a 100-packet DropTail buffer instead of ns-2's default 50."""


def _fig28_buffer(packets: int, cell: Cell) -> dict[str, Any] | None:
    """Fig. 28's two DropTail cells with their buffer at ``packets`` (the others as they are)."""
    label, _relative, changes = cell
    if label not in ("droptail-tcp", "droptail-tfrc"):
        return None
    return {**changes, "topology.bottleneck.queue.ns2_limit": packets}


FIG28_BUFFER = Unstated(
    name="buffer",
    what="the DropTail bottleneck's limit in packets (the droptail-tcp and droptail-tfrc cells; "
    "the 100-packet cells and RED keep theirs)",
    chosen=50,
    why="ns-2's default limit_ of the time; the paper gives no queue size",
    values=(25, 50, 100),
    apply=_fig28_buffer,
)
"""Fig. 28's unstated buffer, as Table 25's: half and twice ns-2's default 50 (the value 100 runs
the same scenarios as the ``*-buffer100`` cells, which have claims of their own)."""

_FIG28_NS2 = (
    "a separate ns-2.35 run of fig28-{traffic}.toml (tfrclab crosscheck's export, seeds 1-3, "
    "10 ms samples; not a registered referee, docs/reproduction/README.md) gives the same"
)

_FIG28_CELLS: tuple[tuple[str, str, Mapping[str, Any]], ...] = (
    ("droptail-tcp", "floyd2000/fig28-tcp.toml", {}),
    ("droptail-tfrc", "floyd2000/fig28-tfrc.toml", {}),
    ("red-tcp", "floyd2000/fig28-tcp.toml", {"topology.bottleneck.queue": _RED_QUEUE}),
    ("red-tfrc", "floyd2000/fig28-tfrc.toml", {"topology.bottleneck.queue": _RED_QUEUE}),
    ("droptail-tcp-buffer100", "floyd2000/fig28-tcp.toml", _BUFFER100),
    ("droptail-tfrc-buffer100", "floyd2000/fig28-tfrc.toml", _BUFFER100),
)


def _fig28_analyze(data: Mapping[str, Any], _plan: Plan) -> Analysis:
    """Per cell and seed over 20-30 s: periodicity, amplitude (p95 - p5) and idle fraction."""
    out: dict[str, Any] = {}
    for label, cell in data.items():
        t, q = _link_matrix(cell, "mean_queue_packets")
        _t, drops = _link_matrix(cell, "drops")
        steady = (t >= _STEADY_S[0] - 1e-9) & (t < _STEADY_S[1] - 1e-9)
        rows = q[:, steady]
        out[f"{label}/periodicity"] = np.array(
            [autocorrelation_peak(row, cell.bin_s, _MAX_LAG_S) for row in rows]
        )
        out[f"{label}/amplitude"] = np.percentile(rows, 95, axis=1) - np.percentile(rows, 5, axis=1)
        out[f"{label}/idle"] = (rows < 0.5).mean(axis=1)
        out[f"{label}/series"] = (t, q[0], drops[0])
    return out


def _fig28_plot(analysis: Analysis, path: Path) -> Path:
    figure = Figure(figsize=(10, 5.2), layout="constrained")
    axes = figure.subplots(2, 2, sharex=True)
    for r, queue in enumerate(("droptail", "red")):
        for c, traffic in enumerate(("tcp", "tfrc")):
            label = f"{queue}-{traffic}"
            t, q, drops = analysis[f"{label}/series"]
            p = measure_seeds(analysis[f"{label}/periodicity"]).mean
            title = (
                f"Fig. 28: 40 {traffic.upper()}, {queue}, no randomization (periodicity {p:.2f})"
            )
            _queue_panel(axes[r][c], t, q, drops, title)
    for c in range(2):
        axes[-1][c].set_xlabel("Time (s), queue as 10 ms means, first seed")
    return _save(figure, path)


def _periodicity_claim(
    label: str,
    oscillates: bool,
    statement: str,
    paper: str,
    robust: bool = True,
    known_deviation: str | None = None,
) -> Claim:
    return Claim(
        id=f"{label}-{'oscillates' if oscillates else 'no-oscillation'}",
        statement=statement,
        paper_value=paper,
        how="autocorrelation peak of the bottleneck queue (10 ms bin means, 20-30 s) past its "
        "first zero, lags up to 5 s, per seed",
        tolerance=f"{'at least' if oscillates else 'below'} {_PERIODIC:g} (defined before running)",
        accept=(_PERIODIC, 1.0) if oscillates else (-1.0, _PERIODIC),
        strict=(False, not oscillates),
        measure=per_seed_measure(f"{label}/periodicity"),
        robust_to_quick=robust,
        known_deviation=known_deviation,
    )


FIG28 = Experiment(
    id="floyd2000/fig28",
    title="Fig. 28: 40 long-lived flows with no randomization: standing queue oscillations "
    "(App. B)",
    setup="40 TCP or 40 TFRC flows, 15 Mb/s, every RTT 45 ms, starts uniform over 20 s, no short "
    "or reverse traffic, 30 s, 10 ms bins (fig28-*.toml); DropTail (50 packets; 100-packet "
    "cells beside it) or RED (Table 25's ns-2 2000 defaults). Oscillation measured over 20-30 s. "
    "The paper shows one run each.",
    kind="sweep",
    scenarios=("floyd2000/fig28-tcp.toml", "floyd2000/fig28-tfrc.toml"),
    cells=_FIG28_CELLS,
    full=Plan(seeds=tuple(range(1, 11))),
    quick=Plan(seeds=(1, 2)),
    metrics=("queue periodicity", "queue amplitude (p95 - p5)", "idle fraction"),
    claims=(
        _periodicity_claim(
            "droptail-tcp",
            True,
            "With TCP and DropTail there are standing oscillations in the queue size.",
            "standing oscillations",
        ),
        Claim(
            id="droptail-tcp-amplitude",
            statement="The TCP oscillations are pronounced.",
            paper_value="pronounced (shape)",
            how="95th minus 5th percentile of the queue (10 ms bin means, 20-30 s), per seed",
            tolerance="at least 10 packets (a fifth of the 50-packet buffer)",
            accept=(10.0, 1000.0),
            measure=per_seed_measure("droptail-tcp/amplitude"),
            unit="packets",
            robust_to_quick=True,
        ),
        *(
            Claim(
                id=f"{label}-never-idle",
                statement="The queue does not go idle in this scenario"
                + (" (buffer 100 packets)." if "buffer" in label else "."),
                paper_value="never idle",
                how="fraction of 10 ms bins in 20-30 s with a mean queue below half a packet, "
                "per seed",
                tolerance="at most 1%",
                accept=(0.0, 0.01),
                measure=per_seed_measure(f"{label}/idle"),
                # 2 quick seeds leave both intervals across the 1% line (0.07 +- 0.1).
                robust_to_quick=False,
                known_deviation=None
                if "buffer" in label
                else because(
                    "the unstated buffer: with 100 packets instead of ns-2's default 50 the "
                    "queue never goes idle, so the paper's buffer was likely larger; "
                    + _FIG28_NS2.format(traffic="tcp"),
                    "floyd2000/fig28 droptail-tcp-buffer100-never-idle",
                ),
            )
            for label in ("droptail-tcp", "droptail-tcp-buffer100")
        ),
        _periodicity_claim(
            "droptail-tfrc",
            True,
            "Fig. 28 shows oscillations with TFRC flows too under DropTail.",
            "oscillations (text: 'with both TCP and TFRC')",
            robust=False,  # 0.13 +- 0.57 on 2 quick seeds: undecided there
            known_deviation=not_established(
                "TFRC holds the queue near full without a standing oscillation, with a "
                "100-packet buffer too (droptail-tfrc-buffer100-oscillates), so not because of "
                "the buffer; " + _FIG28_NS2.format(traffic="tfrc")
            ),
        ),
        Claim(
            id="tfrc-less-pronounced",
            statement="TFRC's delay-based congestion avoidance prevents more pronounced "
            "oscillations: TFRC's swing no larger than TCP's.",
            paper_value="less pronounced with TFRC (shape)",
            how="queue amplitude (p95 - p5) with TFRC over that with TCP under DropTail, seeds "
            "paired",
            tolerance="at most 1",
            accept=(0.0, 1.0),
            measure=_ratio("droptail-tfrc/amplitude", "droptail-tcp/amplitude"),
            robust_to_quick=True,
        ),
        _periodicity_claim(
            "red-tcp",
            False,
            "Neither TCP nor TFRC oscillates with RED: TCP.",
            "no oscillations",
            robust=False,  # 0.36 over 10 seeds, near the 0.4 line: 2 seeds can cross it
        ),
        _periodicity_claim(
            "red-tfrc", False, "Neither TCP nor TFRC oscillates with RED: TFRC.", "no oscillations"
        ),
        _periodicity_claim(
            "droptail-tcp-buffer100",
            True,
            "The TCP oscillations under DropTail do not depend on the unstated buffer (100 "
            "packets instead of 50).",
            "standing oscillations",
            robust=False,  # 0.8 +- 0.8 on 2 quick seeds: undecided there
        ),
        _periodicity_claim(
            "droptail-tfrc-buffer100",
            True,
            "TFRC's oscillations under DropTail with a 100-packet buffer instead of 50.",
            "oscillations (text: 'with both TCP and TFRC')",
            known_deviation=not_established(
                "with 100 packets too TFRC holds the queue near full without a standing "
                "oscillation, as with 50 (droptail-tfrc-oscillates): the buffer is not what "
                "differs from the paper"
            ),
        ),
    ),
    analyze=_fig28_analyze,
    plot=_fig28_plot,
    unstated=(FIG28_BUFFER,),
)

EXPERIMENTS: tuple[Experiment, ...] = (
    FIG14,
    FIG19,
    FIG20,
    FIG21,
    FIG22,
    FIG23,
    FIG24_26_27,
    FIG28,
)
"""The floyd2000 dynamics experiments, in figure order."""
