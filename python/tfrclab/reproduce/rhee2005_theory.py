"""rhee2005 §5-§6 (Rhee and Xu, SIGCOMM 2005), Figs. 6-15, and their claims.

E[1/theta_hat], the equation's accuracy, and the RTO study.

§5 (Figs. 6-11) runs the common setup with TFRC's t_RTO set like a standard TCP's, so that the
equation and the loss interval average alone separate TFRC from its target f(1/E[theta]); the
protocol's own samples of 1/theta_hat at each loss event (the receiver's trace fields
``rx_inv_theta_hat_sum``/``_samples``) give E[1/theta_hat]. §6 (Figs. 12-15) sets each
protocol's RTO as its RFC recommends and varies the delay. Figs. 12 and 13 are analytic here.

Each claim's tolerance is written here, beside the paper's value, before any run, and never
changed to fit a result; a claim the model does not meet fails, with the measured value and,
where understood, the reason in the report.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from tfrclab import equation, metrics
from tfrclab.reproduce.claims import Analysis, Claim, Measurement, measure_seeds
from tfrclab.reproduce.evidence import because, not_established
from tfrclab.reproduce.registry import Experiment, Plan
from tfrclab.reproduce.sensitivity import Cell, Unstated

__all__ = [
    "EXPERIMENTS",
    "RTO_DELAYS_MS",
    "THETA_LOADS",
    "THETA_WINDOWS",
    "rto_linux_s",
    "rto_standard_s",
    "rto_tfrc_s",
]

_THETA = "rhee2005/theta-tcp-rto.toml"
_RTO = "rhee2005/rto-rfc.toml"

_S = 1000.0
"""The packet size of every flow, bytes (base.toml)."""

THETA_LOADS = (5, 50, 400)
"""Background TCP flows (``flows.2.count``) of the §5 runs: the paper's 5-400 range."""

THETA_WINDOWS = (4, 8, 16, 32)
"""Loss intervals averaged, L: 8 (Fig. 6) and 16 (Fig. 7); 4 and 32 too for Fig. 8."""

RTO_DELAYS_MS = (10, 50, 100, 200, 500)
"""One-way bottleneck delays of Figs. 14-15 (the paper's 10-500 ms)."""

_RTO_LOADS = (5, 50, 400)
"""Background TCP flows of the §6 runs at each delay: the ends of the paper's 5-400 range and
the base's 50."""

_TCP_FLOWS = (1, 2, 5, 6)
"""The scenario's TCP flow entries (measured, background, short-lived both ways)."""

_QUICK = {"duration": "80s", "measure.from": "30s"}
"""The --quick reduction of every §5/§6 run: 50 s measured after 30 s."""

_TRACE = (
    "rx_inv_theta_hat_sum",
    "rx_inv_theta_hat_samples",
    "rtt_s",
    "t_rto_s",
    "rtt_sum",
    "rtt_samples",
    "rto",
    "backoff",
)
"""The state trace fields the analyses read: TFRC's receiver samples of 1/theta_hat, its R
and t_RTO; TCP's RTT samples and its RTO (before the backoff)."""

_LOW_LOSS = 0.03
"""The paper's "low loss" bound (§5.1's example: p < 0.03 for R = 100 ms, t_RTO = 400 ms)."""

_MIN_PACKETS = 100
"""A flow's loss event rate counts only from this many packets sent in the window: a TCP flow
starved by backed-off 1 s timeouts sends a handful (one gave p = 1 from a single packet). Its
throughput still counts."""

_HIGH_LOSS = 0.05
"""Loss event rates counted as "high" in the §5 claims (above the low-loss region)."""


def _buffer_packets(delay_ms: float) -> int:
    """Twice the bandwidth-delay product at 15 Mb/s for a one-way bottleneck delay, packets.

    RTT = 2 x (delay + 2 x 2 ms of mean access delay); 1000-byte packets.
    """
    rtt_s = 2.0 * (delay_ms + 4.0) / 1000.0
    return math.ceil(2.0 * 15e6 * rtt_s / (8.0 * _S))


def _all_tcp(key: str, value: Any) -> dict[str, Any]:
    """The same change to every TCP flow entry of the scenario."""
    return {f"flows.{i}.{key}": value for i in _TCP_FLOWS}


# ---------------------------------------------------------------------------------------------
# Per-flow values from one cell's sweep


def _f(p: float, rtt_s: float, t_rto_s: float, cap: bool) -> float:
    """The equation's rate in bytes/s (NaN where an argument is out of range)."""
    if not (0.0 < p <= 1.0 and rtt_s > 0.0 and t_rto_s > 0.0):
        return float("nan")
    return equation.throughput_bytes_per_s(_S, rtt_s, p, t_rto_s=t_rto_s, cap_rto_term=cap)


def _at(rows: Any, time_s: float, field: str) -> float:
    """The state field sampled at the end of the bin that ends at ``time_s`` (NaN if none)."""
    hit = rows.loc[np.isclose(rows["time_s"].to_numpy(float), time_s), field]
    return float(hit.iloc[0]) if len(hit) else float("nan")


_NS2_TFRC_T_RTO_S = 1.0
"""The TFRC flows' t_RTO in ns-2.35's runs of theta-tcp-rto.toml: its floor (``rto_min``).

ns-2's Agent/TFRC keeps t_RTO (``tzero_``: SRTT + 4 RTTVAR on a 10 ms tick, at least
``minrto_``) in an unbound member, so its runs cannot show it. netsim runs the same estimator
on the same cells and stays at the 1 s floor there throughout (every measured TFRC flow of the
committed full runs, docs/reproduction/rhee2005-theory.md), which is taken for ns-2."""


def _tfrc_t_rto(rows: Any) -> float:
    """A TFRC flow's mean t_RTO over the window: its state trace's, or ns-2's floor."""
    if "t_rto_s" in rows:
        return float(np.nanmean(rows["t_rto_s"]))
    return _NS2_TFRC_T_RTO_S


def _cell_flows(data: Any) -> dict[str, Any]:
    """The measured flows of one cell's runs, and the ping's packet loss rate.

    Per TFRC flow: p, send rate, E[1/theta_hat], R, t_RTO; per TCP flow: p, send rate, mean
    RTT, RTO.

    Send rates (data sent per second over the window) stand for throughput: the equation
    gives a sending rate. Loss event rates are the monitor's (loss events / packets sent, a
    loss event being the first loss more than one RTT after the previous event's first), NaN
    for a flow that sent fewer than ``_MIN_PACKETS`` packets in the window.
    """
    runs, series, bin_s = data.runs, data.flow_series, data.bin_s
    out: dict[str, list[float]] = {
        k: []
        for k in (
            "tfrc_p",
            "tfrc_rate",
            "tfrc_inv",
            "tfrc_rtt",
            "tfrc_rto",
            "tfrc_cap",
            "tcp_p",
            "tcp_rate",
            "tcp_rtt",
            "tcp_rto",
        )
    }
    run_ids: dict[str, list[int]] = {"tfrc": [], "tcp": []}
    ping: list[float] = []
    for r, seed in enumerate(sorted(runs["seed"].unique())):
        flows = runs[runs["seed"] == seed]
        lo, hi = float(flows["window_from_s"].iloc[0]), float(flows["window_to_s"].iloc[0])
        rows_all = series[series["seed"] == seed]
        ping_rows = flows[flows["name"] == "ping"]
        ping.append(float(ping_rows["packet_loss_rate"].iloc[0]) if len(ping_rows) else np.nan)
        for _, flow in flows.iterrows():
            name, kind = str(flow["name"]), str(flow["kind"])
            measured = name[:-1] in ("tfrc", "tcp") and name[-1].isdigit()
            if not measured or flow["status"] != "":
                continue
            rows = rows_all[rows_all["flow"] == name]
            inside = rows[(rows["time_s"] >= lo - 1e-9) & (rows["time_s"] < hi - 1e-9)]
            rate = float(flow["send_rate_bits_per_s"]) / 8.0
            enough = float(flow["packets_sent"]) >= _MIN_PACKETS
            p = float(flow["loss_event_rate"]) if enough else float("nan")
            if kind == "tfrc":
                n = _at(rows, hi - bin_s, "rx_inv_theta_hat_samples") - _at(
                    rows, lo - bin_s, "rx_inv_theta_hat_samples"
                )
                total = _at(rows, hi - bin_s, "rx_inv_theta_hat_sum") - _at(
                    rows, lo - bin_s, "rx_inv_theta_hat_sum"
                )
                out["tfrc_p"].append(p)
                out["tfrc_rate"].append(rate)
                out["tfrc_inv"].append(total / n if n > 0 else np.nan)
                out["tfrc_rtt"].append(float(np.nanmean(inside["rtt_s"])))
                out["tfrc_rto"].append(_tfrc_t_rto(inside))
                out["tfrc_cap"].append(1.0)  # preset floyd2000: ns-2's capped RTO term
                run_ids["tfrc"].append(r)
            elif kind == "tcp":
                samples = _at(rows, hi - bin_s, "rtt_samples") - _at(
                    rows, lo - bin_s, "rtt_samples"
                )
                rtt_sum = _at(rows, hi - bin_s, "rtt_sum") - _at(rows, lo - bin_s, "rtt_sum")
                base_rto = inside["rto"].to_numpy(float) / inside["backoff"].to_numpy(float)
                out["tcp_p"].append(p)
                out["tcp_rate"].append(rate)
                out["tcp_rtt"].append(rtt_sum / samples if samples > 0 else np.nan)
                out["tcp_rto"].append(float(np.nanmean(base_rto)))
                run_ids["tcp"].append(r)
    result: dict[str, Any] = {k: np.asarray(v, dtype=float) for k, v in out.items()}
    result["tfrc_run"] = np.asarray(run_ids["tfrc"], dtype=int)
    result["tcp_run"] = np.asarray(run_ids["tcp"], dtype=int)
    result["ping_loss"] = np.asarray(ping, dtype=float)
    return result


def _with_predictions(c: dict[str, Any]) -> dict[str, Any]:
    """Adds the equation's predictions (bytes/s) to :func:`_cell_flows`'s tables.

    f(E[1/theta_hat]) and f(1/E[theta]) = f(p_tfrc) per TFRC flow (its own R, t_RTO), f(p_tcp)
    per TCP flow (its own mean RTT and RTO).
    """
    cap = c["tfrc_cap"] > 0
    c["f_inv"] = np.array(
        [
            _f(p, r, t, bool(k))
            for p, r, t, k in zip(c["tfrc_inv"], c["tfrc_rtt"], c["tfrc_rto"], cap, strict=True)
        ]
    )
    c["f_tfrc"] = np.array(
        [
            _f(p, r, t, bool(k))
            for p, r, t, k in zip(c["tfrc_p"], c["tfrc_rtt"], c["tfrc_rto"], cap, strict=True)
        ]
    )
    c["f_tcp"] = np.array(
        [_f(p, r, t, False) for p, r, t in zip(c["tcp_p"], c["tcp_rtt"], c["tcp_rto"], strict=True)]
    )
    return c


def _dr(a: Any, b: Any) -> np.ndarray:
    """The difference ratio of a against b, as an array (Rhee & Xu 2005 §2)."""
    return np.atleast_1d(np.asarray(metrics.difference_ratio(a, b), dtype=float))


def _run_means(values: np.ndarray, run: np.ndarray, runs: int) -> np.ndarray:
    """The mean of per-flow ``values`` in each run (NaN for a run without flows)."""
    out = np.full(runs, np.nan)
    for r in range(runs):
        chosen = values[run == r]
        chosen = chosen[np.isfinite(chosen)]
        if chosen.size:
            out[r] = float(chosen.mean())
    return out


def _run_table(c: dict[str, Any]) -> dict[str, np.ndarray]:
    """Per run: mean TFRC/TCP send rate, loss event rate, and the predictions' means."""
    runs = c["ping_loss"].size
    tf, tc = c["tfrc_run"], c["tcp_run"]
    tfrc_rtt = _run_means(c["tfrc_rtt"], tf, runs)
    tfrc_rto = _run_means(c["tfrc_rto"], tf, runs)
    p_tcp = _run_means(c["tcp_p"], tc, runs)
    f_tcp_for_tfrc = np.array(
        [_f(p, r, t, True) for p, r, t in zip(p_tcp, tfrc_rtt, tfrc_rto, strict=True)]
    )
    return {
        "tfrc_rate": _run_means(c["tfrc_rate"], tf, runs),
        "tcp_rate": _run_means(c["tcp_rate"], tc, runs),
        "p_tfrc": _run_means(c["tfrc_p"], tf, runs),
        "p_tcp": p_tcp,
        "f_inv": _run_means(c["f_inv"], tf, runs),
        "f_tfrc": _run_means(c["f_tfrc"], tf, runs),
        "f_tcp_for_tfrc": f_tcp_for_tfrc,
        "ping_loss": c["ping_loss"],
    }


def _concat(parts: Sequence[dict[str, np.ndarray]], key: str) -> np.ndarray:
    arrays = [np.atleast_1d(p[key]) for p in parts]
    return np.concatenate(arrays) if arrays else np.array([])


# ---------------------------------------------------------------------------------------------
# Measurements


def _values(key: str, note: str) -> Callable[[Analysis], Measurement]:
    """The mean (with a 95% CI over its points) of the array ``key`` of the analysis."""

    def measure(analysis: Analysis) -> Measurement:
        x = np.asarray(analysis[key], dtype=float)
        x = x[np.isfinite(x)]
        if not x.size:
            return Measurement(float("nan"), float("nan"), 0, f"no {note}")
        m = measure_seeds(x, note)
        return Measurement(m.mean, m.half, int(x.size), f"{note} ({x.size} points)")

    return measure


def _single(key: str, note: str) -> Callable[[Analysis], Measurement]:
    """One computed value of the analysis (no CI)."""

    def measure(analysis: Analysis) -> Measurement:
        value = float(analysis[key])
        return Measurement(value, float("nan"), 1, note if math.isfinite(value) else f"no {note}")

    return measure


def _spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's rank correlation of the finite pairs (NaN with fewer than 3)."""
    keep = np.isfinite(x) & np.isfinite(y)
    if np.count_nonzero(keep) < 3:
        return float("nan")
    rx = np.argsort(np.argsort(x[keep])).astype(float)
    ry = np.argsort(np.argsort(y[keep])).astype(float)
    if rx.std() == 0 or ry.std() == 0:
        return float("nan")
    return float(np.corrcoef(rx, ry)[0, 1])


def _fit(x: np.ndarray, y: np.ndarray) -> tuple[float, float] | None:
    """Least-squares line (slope, intercept) through the finite points (the paper's curves)."""
    keep = np.isfinite(x) & np.isfinite(y)
    if np.count_nonzero(keep) < 2 or np.ptp(x[keep]) == 0:
        return None
    slope, intercept = np.polyfit(x[keep], y[keep], 1)
    return float(slope), float(intercept)


# ---------------------------------------------------------------------------------------------
# Figs. 6-11: the §5 runs (TFRC t_RTO like standard TCP), L and load as cells


_NS2_STATE = ("tfrc", "tcp")
"""The measured flows, whose state ns-2.35 prints under ``--referee ns2``
(``Experiment.referee_state``): TFRC's receiver samples and RTT, TCP's RTT and RTO."""


def _theta_label(window: int, load: int) -> str:
    return f"L{window}-bg{load}"


_THETA_CELLS = tuple(
    (
        _theta_label(window, load),
        _THETA,
        {"flows.0.loss_intervals": window, "flows.2.count": load},
    )
    for window in THETA_WINDOWS
    for load in THETA_LOADS
)

_THETA_FULL = Plan(seeds=(1,), trace=_TRACE)
_THETA_QUICK = Plan(seeds=(1,), changes=_QUICK, trace=_TRACE)


def _round_check(value: str, cell: Cell) -> dict[str, Any]:
    """A theta cell with the measured TFRC flows' receiver round check ``on`` or ``off``."""
    _label, _relative, changes = cell
    return {**changes, "flows.0.loss_event_round_check": value == "on"}


ROUND_CHECK = Unstated(
    name="round-check",
    what="ns-2's PreciseLoss_ round check in the TFRC receiver (loss_event_round_check of the "
    "measured TFRC flows), which merges losses of one sender round into one loss event",
    chosen="on",
    why="ns-2's default since December 2002 (ns-default.tcl), so on in the ns-2 of a 2005 paper; "
    "the paper does not say, and the check changes which losses start loss events and so the "
    "samples of 1/theta_hat",
    values=("off", "on"),
    apply=_round_check,
)
"""The receiver's round check off (RFC 5348's rule alone) or on (ns-2's default, chosen)."""


def _theta_analyze(data: Any, _plan: Plan) -> Analysis:
    per_l: dict[int, dict[str, Any]] = {}
    runs_l: dict[int, dict[str, np.ndarray]] = {}
    for window in THETA_WINDOWS:
        flows = [_with_predictions(_cell_flows(data[_theta_label(window, n)])) for n in THETA_LOADS]
        tables = [_run_table(c) for c in flows]
        merged = {
            key: _concat(flows, key)
            for key in (
                "tfrc_p",
                "tfrc_rate",
                "tfrc_inv",
                "f_inv",
                "f_tfrc",
                "tcp_p",
                "tcp_rate",
                "f_tcp",
            )
        }
        merged["dr_inv"] = _dr(merged["f_inv"], merged["tfrc_rate"])
        merged["dr_tfrc"] = _dr(merged["f_tfrc"], merged["tfrc_rate"])
        merged["gap"] = _dr(merged["f_tfrc"], merged["f_inv"])
        merged["dr_tcp_eq"] = _dr(merged["f_tcp"], merged["tcp_rate"])
        per_l[window] = merged
        runs_l[window] = {key: _concat(tables, key) for key in tables[0]}
        runs_l[window]["load"] = np.asarray(THETA_LOADS, dtype=float)
    return _theta_measures(per_l, runs_l)


def _theta_measures(
    per_l: dict[int, dict[str, Any]], runs_l: dict[int, dict[str, np.ndarray]]
) -> Analysis:
    """Every value the §5 claims read, from the per-flow and per-run tables of each L."""
    out: dict[str, Any] = {"flows": per_l, "runs": runs_l}
    for window in (8, 16):
        f = per_l[window]
        p = f["tfrc_p"]
        low, high = p < _LOW_LOSS, p >= _HIGH_LOSS
        out[f"L{window}_low_abs_dr_inv"] = np.abs(f["dr_inv"][low])
        closer = np.abs(f["dr_inv"]) < np.abs(f["dr_tfrc"])
        out[f"L{window}_closer"] = closer[np.isfinite(f["dr_inv"]) & np.isfinite(f["dr_tfrc"])]
        out[f"L{window}_high_inv_above"] = (f["dr_inv"][high] >= 0).astype(float)
        out[f"L{window}_high_inv_tighter"] = (f["f_inv"][high] <= f["f_tfrc"][high]).astype(float)
        out[f"L{window}_gap_vs_p"] = _spearman(p, f["gap"])
    out["gap_ratio_16_8"] = float(np.nanmean(per_l[16]["gap"]) / np.nanmean(per_l[8]["gap"]))
    inv8, inv16 = np.nanmean(np.abs(per_l[8]["dr_inv"])), np.nanmean(np.abs(per_l[16]["dr_inv"]))
    out["tracking_ratio_16_8"] = float(inv16 / inv8)
    # Fig. 8: the TCP-TFRC difference ratio per run, by L (runs paired by load).
    # TCP against TFRC: the paper's Fig. 8 computes its ratios with respect to TFRC.
    dr_runs = {w: _dr(runs_l[w]["tcp_rate"], runs_l[w]["tfrc_rate"]) for w in THETA_WINDOWS}
    out["fig08_dr"] = dr_runs
    out["fig08_change_8_to_32"] = float(np.nanmean(dr_runs[32] - dr_runs[8]))
    out["fig08_spread"] = float(
        np.nanmax([np.nanmean(v) for v in dr_runs.values()])
        - np.nanmin([np.nanmean(v) for v in dr_runs.values()])
    )
    eq_gap = np.nanmean(np.abs(np.concatenate([per_l[w]["dr_inv"] for w in (8, 16)])))
    tcp_gap = np.nanmean(np.abs(np.concatenate([dr_runs[w] for w in (8, 16)])))
    out["fig08_tcp_over_eq"] = float(tcp_gap / eq_gap)
    # Fig. 9: f(p_tcp) against TCP (L = 8 runs, as the paper's Fig. 9 uses Fig. 6's runs).
    f8 = per_l[8]
    out["fig09_dr_vs_p"] = _spearman(f8["tcp_p"], f8["dr_tcp_eq"])
    out["fig09_high_dr"] = f8["dr_tcp_eq"][f8["tcp_p"] >= _HIGH_LOSS]
    # Fig. 10: per run, each against TFRC's send rate, over the ping's loss rate (all L).
    r_all = {k: np.concatenate([runs_l[w][k] for w in THETA_WINDOWS]) for k in runs_l[8]}
    dr_eq_tfrc = np.abs(_dr(r_all["f_tfrc"], r_all["tfrc_rate"]))
    dr_eq_tcp = np.abs(_dr(r_all["f_tcp_for_tfrc"], r_all["tfrc_rate"]))
    out["fig10_eq_closer"] = (dr_eq_tfrc < dr_eq_tcp).astype(float)
    # Fig. 11: p_tfrc against p_tcp per run (all L).
    dr_p = _dr(r_all["p_tfrc"], r_all["p_tcp"])
    out["fig11_dr_p"] = dr_p
    out["fig11_dr_p_vs_p"] = _spearman(r_all["p_tfrc"], dr_p)
    all_tfrc = np.concatenate([per_l[w]["tfrc_p"] for w in THETA_WINDOWS])
    all_tcp = np.concatenate([per_l[w]["tcp_p"] for w in THETA_WINDOWS])
    out["max_p_tfrc"] = float(np.nanmax(all_tfrc)) if all_tfrc.size else float("nan")
    out["max_p_tcp"] = float(np.nanmax(all_tcp)) if all_tcp.size else float("nan")
    out["max_p_ratio"] = out["max_p_tcp"] / out["max_p_tfrc"]
    return out


def _scatter_with_fit(ax: Any, x: np.ndarray, y: np.ndarray, label: str, style: str) -> None:
    keep = np.isfinite(x) & np.isfinite(y)
    points = ax.plot(x[keep], y[keep], style, ms=4, alpha=0.7, label=label)
    line = _fit(x, y)
    if line is not None:
        xs = np.linspace(float(np.min(x[keep])), float(np.max(x[keep])), 20)
        ax.plot(xs, line[0] * xs + line[1], "-", color=points[0].get_color(), lw=1)


def _fig0607_plot(analysis: Analysis, path: Path) -> Path:
    fig = Figure(figsize=(10, 4))
    first = None
    for k, window in enumerate((8, 16)):
        f = analysis["flows"][window]
        ax = fig.add_subplot(1, 2, k + 1, sharey=first)
        first = first or ax
        ax.axhline(0.0, color="black", lw=1, label="TFRC throughput")
        _scatter_with_fit(ax, f["tfrc_p"], f["dr_inv"], "f(E[1/θ̂])", "o")
        _scatter_with_fit(ax, f["tfrc_p"], f["dr_tfrc"], "f(1/E[θ]) = f(p_tfrc)", "^")
        ax.set_xlabel("loss event rate p")
        ax.set_ylabel("difference ratio w.r.t. TFRC")
        ax.set_title(f"Fig. {6 if window == 8 else 7}: L = {window}")
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    return path


def _fig08_plot(analysis: Analysis, path: Path) -> Path:
    fig = Figure(figsize=(6, 4))
    ax = fig.add_subplot(1, 1, 1)
    ax.axhline(0.0, color="black", lw=1)
    for window in THETA_WINDOWS:
        runs = analysis["runs"][window]
        _scatter_with_fit(ax, runs["p_tfrc"], analysis["fig08_dr"][window], f"L = {window}", "o")
    ax.set_xlabel("loss event rate p (TFRC)")
    ax.set_ylabel("difference ratio TCP vs TFRC (w.r.t. TFRC)")
    ax.set_title("Fig. 8: TFRC vs TCP as L varies")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    return path


def _fig0911_plot(analysis: Analysis, path: Path) -> Path:
    fig = Figure(figsize=(14, 4))
    f8 = analysis["flows"][8]
    ax = fig.add_subplot(1, 3, 1)
    ax.axhline(0.0, color="black", lw=1)
    _scatter_with_fit(ax, f8["tcp_p"], f8["dr_tcp_eq"], "f(p_tcp) vs TCP", "o")
    ax.set_xlabel("loss event rate p_tcp")
    ax.set_ylabel("difference ratio w.r.t. TCP")
    ax.set_title("Fig. 9: the equation against TCP (L = 8)")
    ax.grid(alpha=0.3)
    ax = fig.add_subplot(1, 3, 2)
    r = {k: np.concatenate([analysis["runs"][w][k] for w in THETA_WINDOWS]) for k in ("ping_loss",)}
    runs = analysis["runs"]
    ping = r["ping_loss"]
    series = {
        "TCP": "tcp_rate",
        "f(E[1/θ̂])": "f_inv",
        "f(1/E[θ])": "f_tfrc",
        "f(p_tcp)": "f_tcp_for_tfrc",
    }
    ax.axhline(0.0, color="black", lw=1, label="TFRC")
    tfrc = np.concatenate([runs[w]["tfrc_rate"] for w in THETA_WINDOWS])
    for label, key in series.items():
        values = np.concatenate([runs[w][key] for w in THETA_WINDOWS])
        ax.plot(ping, _dr(values, tfrc), "o", ms=4, label=label)
    ax.set_xlabel("packet loss rate (ping)")
    ax.set_ylabel("difference ratio w.r.t. TFRC")
    ax.set_title("Fig. 10: per run")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    ax = fig.add_subplot(1, 3, 3)
    ax.axhline(0.0, color="black", lw=1)
    for window in THETA_WINDOWS:
        w = runs[window]
        ax.plot(w["p_tfrc"], _dr(w["p_tfrc"], w["p_tcp"]), "o", ms=4, label=f"L = {window}")
    ax.set_xlabel("loss event rate p_tfrc")
    ax.set_ylabel("difference ratio p_tfrc vs p_tcp")
    ax.set_title("Fig. 11")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    return path


_SETUP_THETA = (
    "rhee2005 §3's common setup (base.toml) with TFRC's t_RTO set like standard TCP's "
    "(RFC 2988: SRTT + 4 RTTVAR, at least 1 s, 10 ms tick) and every TCP flow at the standard's "
    "1 s RTO floor (scenario theta-tcp-rto.toml). Cells: L = 4, 8, 16, 32 loss intervals x "
    f"{', '.join(map(str, THETA_LOADS))} background TCP flows, one seed each, 1000 s measured "
    "after 200 s as the paper (--quick: 50 s after 30 s). The paper gives neither its loads "
    "nor its seeds: each cell is one run, each measured flow one point. E[1/theta_hat] is the "
    "mean of the TFRC receiver's own 1/theta_hat sampled at each loss event of the window; "
    "p_tfrc and p_tcp are the flow monitor's loss event rates; throughput is the send rate; "
    "f is Eq. (1) with the flow's own mean R and t_RTO (ns-2's capped RTO term for TFRC)."
)

FIG06_07 = Experiment(
    id="rhee2005/fig06-07",
    title="Figs. 6-7: f(E[1/θ̂]) and f(1/E[θ]) against TFRC throughput, L = 8 and 16",
    setup=_SETUP_THETA,
    kind="sweep",
    scenarios=(_THETA,),
    cells=_THETA_CELLS,
    full=_THETA_FULL,
    quick=_THETA_QUICK,
    metrics=("difference_ratio", "mean_inverse_loss_interval", "loss_event_rate"),
    claims=(
        Claim(
            id="tracks-at-low-loss",
            robust_to_quick=True,
            statement="Under low loss f(E[1/θ̂]) very closely tracks TFRC throughput (L = 8).",
            paper_value="close to the 0 line below p = 0.03 (Fig. 6)",
            how="mean |difference ratio| of f(E[1/θ̂]) against TFRC's send rate over the L = 8 "
            "flows with p_tfrc < 0.03",
            tolerance="at most 0.25",
            accept=(0.0, 0.25),
            measure=_values("L8_low_abs_dr_inv", "L = 8 flows below p = 0.03"),
        ),
        Claim(
            id="closer-than-target",
            robust_to_quick=False,  # quick: 0.67 +- 0.31 over 12 points crosses the band
            statement="f(E[1/θ̂]) tracks TFRC throughput much more closely than f(1/E[θ]) "
            "in most operating conditions (L = 8).",
            paper_value="closer in most conditions (Figs. 6-7, §5.1)",
            how="fraction of L = 8 TFRC flows whose |difference ratio| of f(E[1/θ̂]) is below "
            "that of f(1/E[θ])",
            tolerance="at least 0.5",
            accept=(0.5, 1.0),
            measure=_values("L8_closer", "L = 8 flows"),
        ),
        Claim(
            id="upper-bound-at-high-loss",
            statement="Under high loss f(E[1/θ̂]) is an upper bound to TFRC throughput (L = 8).",
            paper_value="above TFRC at high loss (Fig. 6, Eq. 13)",
            how="fraction of L = 8 flows with p_tfrc >= 0.05 whose f(E[1/θ̂]) >= TFRC's send rate",
            tolerance="at least 0.5",
            accept=(0.5, 1.0),
            measure=_values("L8_high_inv_above", "L = 8 flows at p >= 0.05"),
        ),
        Claim(
            id="tighter-at-high-loss",
            statement="... and a tighter upper bound than f(1/E[θ]) (L = 8).",
            paper_value="f(E[1/θ̂]) <= f(1/E[θ]) (Eq. 13)",
            how="fraction of L = 8 flows with p_tfrc >= 0.05 whose f(E[1/θ̂]) <= f(1/E[θ])",
            tolerance="at least 0.9",
            accept=(0.9, 1.0),
            measure=_values("L8_high_inv_tighter", "L = 8 flows at p >= 0.05"),
        ),
        Claim(
            id="gap-grows-with-loss",
            statement="The gap between f(1/E[θ]) and f(E[1/θ̂]) grows with the loss event rate.",
            paper_value="growing gap (Figs. 6-7; Eq. 16: VAR/E^3)",
            how="Spearman rank correlation of p_tfrc and the difference ratio of f(1/E[θ]) "
            "against f(E[1/θ̂]) over the L = 8 flows",
            tolerance="at least 0.3",
            accept=(0.3, 1.0),
            measure=_single("L8_gap_vs_p", "L = 8 flows"),
        ),
        Claim(
            id="gap-smaller-with-L16",
            statement="With L = 16 the gap between f(E[1/θ̂]) and f(1/E[θ]) is significantly "
            "smaller than with L = 8.",
            paper_value="significantly smaller (Fig. 7 vs Fig. 6)",
            how="mean gap (difference ratio of f(1/E[θ]) against f(E[1/θ̂])) over the L = 16 "
            "flows divided by that over the L = 8 flows",
            tolerance="at most 0.8",
            accept=(0.0, 0.8),
            measure=_single("gap_ratio_16_8", "mean over flows of each L"),
        ),
        Claim(
            id="tracking-unchanged-by-L",
            statement="The difference between TFRC throughput and f(E[1/θ̂]) does not change "
            "much from L = 8 to L = 16.",
            paper_value="does not change much (Fig. 7 caption)",
            how="mean |difference ratio| of f(E[1/θ̂]) against TFRC at L = 16 over that at L = 8",
            tolerance="between 0.5 and 2",
            accept=(0.5, 2.0),
            measure=_single("tracking_ratio_16_8", "mean over flows of each L"),
        ),
    ),
    analyze=_theta_analyze,
    plot=_fig0607_plot,
    unstated=(ROUND_CHECK,),
    referee_drops=True,
    referee_state=_NS2_STATE,
)

FIG08 = Experiment(
    id="rhee2005/fig08",
    title="Fig. 8: TCP vs TFRC throughput difference ratio as L varies",
    setup=_SETUP_THETA + " Runs shared with rhee2005/fig06-07.",
    kind="sweep",
    scenarios=(_THETA,),
    cells=_THETA_CELLS,
    full=_THETA_FULL,
    quick=_THETA_QUICK,
    metrics=("difference_ratio",),
    claims=(
        Claim(
            id="ratio-reduces-with-L",
            statement="As L increases, the throughput difference ratio of TCP and TFRC "
            "(w.r.t. TFRC) reduces.",
            paper_value="reduces with L (Fig. 8)",
            how="mean over loads of the per-run difference ratio (TCP against TFRC, mean send "
            "rates of the 5 flows each) at L = 32 minus that at L = 8",
            tolerance="at most 0 (any reduction)",
            accept=(-100.0, 0.0),
            measure=_single("fig08_change_8_to_32", "paired by load"),
        ),
        Claim(
            id="small-differences",
            statement="But the differences between the L values are small.",
            paper_value="small (Fig. 8)",
            how="largest minus smallest mean per-run difference ratio over L = 4, 8, 16, 32",
            tolerance="at most 0.3",
            accept=(0.0, 0.3),
            measure=_single("fig08_spread", "means over loads"),
        ),
        Claim(
            id="tcp-gap-larger-than-equation-gap",
            robust_to_quick=True,
            statement="The TCP-TFRC difference ratio is much larger than that of f(E[1/θ̂]) "
            "and TFRC throughput.",
            paper_value="much larger (Fig. 8 vs Figs. 6-7)",
            how="mean |per-run difference ratio TFRC vs TCP| over mean |difference ratio of "
            "f(E[1/θ̂]) vs TFRC| per flow, L = 8 and 16",
            tolerance="at least 1.5",
            accept=(1.5, 1000.0),
            measure=_single("fig08_tcp_over_eq", "L = 8 and 16"),
        ),
    ),
    analyze=_theta_analyze,
    plot=_fig08_plot,
    runs_of=FIG06_07.id,
    unstated=(ROUND_CHECK,),
    referee_drops=True,
    referee_state=_NS2_STATE,
)

FIG09_11 = Experiment(
    id="rhee2005/fig09-11",
    title="Figs. 9-11: the equation against TCP, per-run ratios, p_tfrc vs p_tcp",
    setup=_SETUP_THETA + " Runs shared with rhee2005/fig06-07; Fig. 9 uses its L = 8 runs, "
    "Figs. 10-11 all of them. Fig. 10's f(p_tcp) takes the TFRC flows' mean R and t_RTO "
    "(the rate TFRC would get at TCP's loss event rate); Fig. 9's takes TCP's own mean RTT "
    "and RTO. The ping's loss rate is its packets lost over packets sent.",
    kind="sweep",
    scenarios=(_THETA,),
    cells=_THETA_CELLS,
    full=_THETA_FULL,
    quick=_THETA_QUICK,
    metrics=("difference_ratio", "loss_event_rate", "packet_loss_rate"),
    claims=(
        Claim(
            id="fig09-discrepancy-grows",
            statement="The difference ratio of f(p_tcp) and TCP throughput increases with the "
            "loss event rate.",
            paper_value="increasing with p (Fig. 9)",
            how="Spearman rank correlation of p_tcp and the difference ratio of f(p_tcp) "
            "against the TCP flow's send rate (L = 8 runs)",
            tolerance="at least 0.3",
            accept=(0.3, 1.0),
            measure=_single("fig09_dr_vs_p", "L = 8 TCP flows"),
            known_deviation=not_established(
                "TCP sends more than Eq. (1) with t_RTO = 1 s predicts, and the more so the "
                "higher p (the figure); one candidate, not measured here: SACK with a 1 s RTO "
                "floor recovers most losses without a timeout"
            ),
        ),
        Claim(
            id="fig09-equation-above-tcp-at-high-loss",
            robust_to_quick=True,
            statement="Under high loss event rates TCP gets less than the equation.",
            paper_value="TCP below f(p_tcp) at high p (Fig. 9)",
            how="mean difference ratio of f(p_tcp) against TCP over the L = 8 TCP flows with "
            "p_tcp >= 0.05",
            tolerance="above 0",
            accept=(0.0, 1000.0),
            strict=(True, False),
            measure=_values("fig09_high_dr", "L = 8 TCP flows at p >= 0.05"),
            known_deviation=not_established(
                "TCP sends more than Eq. (1) with its 1 s RTO predicts at high loss too (see "
                "fig09-discrepancy-grows)"
            ),
        ),
        Claim(
            id="fig10-equation-reasonably-accurate",
            robust_to_quick=False,  # quick: 0.75 +- 0.29 over 12 points crosses the band
            statement="f(p_tfrc) is much closer to TFRC throughput than f(p_tcp) is: the "
            "disparate loss event rates make the bigger gap.",
            paper_value="|DR f(p_tfrc)| much smaller than |DR f(p_tcp)| (Fig. 10)",
            how="fraction of runs whose |difference ratio| of f(p_tfrc) against TFRC is below "
            "that of f(p_tcp)",
            tolerance="at least 0.5",
            accept=(0.5, 1.0),
            measure=_values("fig10_eq_closer", "runs"),
        ),
        Claim(
            id="fig11-tfrc-higher-loss-event-rate",
            statement="TFRC tends to have higher loss event rates than TCP.",
            paper_value="difference ratio of p_tfrc and p_tcp above 0 (Fig. 11)",
            how="mean over runs of the difference ratio of p_tfrc against p_tcp (5 flows each)",
            tolerance="above 0",
            accept=(0.0, 100.0),
            strict=(True, False),
            measure=_values("fig11_dr_p", "runs"),
        ),
        Claim(
            id="fig11-difference-grows",
            statement="The loss event rate difference increases as the loss event rate increases.",
            paper_value="increasing (Fig. 11)",
            how="Spearman rank correlation of p_tfrc and the difference ratio of p_tfrc against "
            "p_tcp over the runs",
            tolerance="at least 0.3",
            accept=(0.3, 1.0),
            measure=_single("fig11_dr_p_vs_p", "runs"),
        ),
        Claim(
            id="max-loss-event-rates",
            statement="TFRC's loss event rate reaches 0.16 while TCP's stays below 0.11.",
            paper_value="max p_tcp / max p_tfrc = 0.11 / 0.16 = 0.69",
            how="largest per-flow p_tcp over largest per-flow p_tfrc, all runs",
            tolerance="at most 0.85 (TCP's maximum clearly below TFRC's)",
            accept=(0.0, 0.85),
            measure=_single("max_p_ratio", "all flows"),
        ),
    ),
    analyze=_theta_analyze,
    plot=_fig0911_plot,
    runs_of=FIG06_07.id,
    unstated=(ROUND_CHECK,),
    referee_drops=True,
    referee_state=_NS2_STATE,
)

# ---------------------------------------------------------------------------------------------
# Fig. 12: RTO values over the RTT (the PlanetLab measurement is not rerun)

_RTTVAR_FRACTION = 0.1
"""The rttvar model of Fig. 12's analytic curves: RTTVAR = 0.1 x RTT (a steady path whose RTT
samples deviate by 10% on average); 0 (no jitter) is drawn as the band's other edge."""


def rto_standard_s(rtt_s: Any, rttvar_s: Any) -> Any:
    """A standard TCP's RTO (RFC 2988 §2): max(1 s, SRTT + 4 RTTVAR)."""
    return np.maximum(1.0, np.asarray(rtt_s) + 4.0 * np.asarray(rttvar_s))


def rto_linux_s(rtt_s: Any, rttvar_s: Any) -> Any:
    """Linux's RTO: SRTT + max(4 RTTVAR, 200 ms).

    Its 200 ms minimum bounds the variance term, so the RTO follows the RTT once the RTT is
    well above 200 ms.
    """
    return np.asarray(rtt_s) + np.maximum(4.0 * np.asarray(rttvar_s), 0.2)


def rto_tfrc_s(rtt_s: Any) -> Any:
    """TFRC's t_RTO as RFC 3448 §3.1 recommends: 4R."""
    return 4.0 * np.asarray(rtt_s)


_FIG12_RTT_S = np.linspace(0.01, 0.5, 99)


def _fig12_analyze(_runs: Any, _plan: Plan) -> Analysis:
    rtt = _FIG12_RTT_S
    var = _RTTVAR_FRACTION * rtt
    return {
        "rtt_s": rtt,
        "standard": rto_standard_s(rtt, var),
        "linux": rto_linux_s(rtt, var),
        "tfrc": rto_tfrc_s(rtt),
        "standard_0": rto_standard_s(rtt, 0.0 * rtt),
        "linux_0": rto_linux_s(rtt, 0.0 * rtt),
        "tfrc_10ms": float(rto_tfrc_s(0.01)),
        "standard_10ms": float(rto_standard_s(0.01, 0.001)),
        "tfrc_500ms": float(rto_tfrc_s(0.5)),
        "standard_500ms": float(rto_standard_s(0.5, 0.05)),
        "tfrc_over_linux_500ms": float(rto_tfrc_s(0.5) / rto_linux_s(0.5, 0.05)),
        "measured": float("nan"),
    }


def _fig12_plot(analysis: Analysis, path: Path) -> Path:
    fig = Figure(figsize=(6, 4))
    ax = fig.add_subplot(1, 1, 1)
    rtt = analysis["rtt_s"] * 1000.0
    ax.plot(rtt, analysis["standard"], label="TCP standard max(1 s, SRTT + 4 RTTVAR)")
    ax.plot(rtt, analysis["linux"], label="Linux SRTT + max(4 RTTVAR, 200 ms)")
    ax.plot(rtt, analysis["tfrc"], label="TFRC 4R")
    ax.plot(rtt, analysis["linux_0"], ":", color="C1", label="Linux, RTTVAR = 0")
    ax.set_xlabel("RTT (ms)")
    ax.set_ylabel("RTO (s)")
    ax.set_title("Fig. 12 (analytic; RTTVAR = 0.1 RTT)")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    return path


FIG12 = Experiment(
    id="rhee2005/fig12",
    title="Fig. 12: RTO values of standard TCP, Linux TCP and TFRC",
    setup="The paper measured RTOs to 28 PlanetLab sites; that measurement cannot be rerun "
    "here. The analytic part: over RTTs of 10-500 ms on a steady path with RTTVAR = 0.1 RTT, "
    "standard TCP max(1 s, SRTT + 4 RTTVAR) (RFC 2988), Linux SRTT + max(4 RTTVAR, 200 ms), "
    "TFRC 4R (RFC 3448).",
    kind="channel",
    scenarios=(),
    cells=(),
    full=Plan(seeds=(0,)),
    quick=Plan(seeds=(0,)),
    metrics=("RTO",),
    claims=(
        Claim(
            id="tfrc-10ms",
            robust_to_quick=True,
            statement="Under a 10 ms RTT path TFRC can have a 40 ms RTO ...",
            paper_value="40 ms",
            how="4R at R = 10 ms",
            tolerance="35-45 ms",
            accept=(0.035, 0.045),
            measure=_single("tfrc_10ms", "analytic"),
            unit="s",
        ),
        Claim(
            id="standard-10ms",
            robust_to_quick=True,
            statement="... while a standard-conformant TCP has one second.",
            paper_value="1 s",
            how="max(1 s, SRTT + 4 RTTVAR) at R = 10 ms",
            tolerance="0.9-1.1 s",
            accept=(0.9, 1.1),
            measure=_single("standard_10ms", "analytic"),
            unit="s",
        ),
        Claim(
            id="tfrc-500ms",
            robust_to_quick=True,
            statement="Under a 500 ms RTT path TFRC can have a 2 s RTO ...",
            paper_value="2 s",
            how="4R at R = 500 ms",
            tolerance="1.8-2.2 s",
            accept=(1.8, 2.2),
            measure=_single("tfrc_500ms", "analytic"),
            unit="s",
        ),
        Claim(
            id="standard-500ms",
            robust_to_quick=True,
            statement="... while TCP has about one second.",
            paper_value="about 1 s",
            how="max(1 s, SRTT + 4 RTTVAR) at R = 500 ms, RTTVAR = 50 ms",
            tolerance="0.9-1.5 s",
            accept=(0.9, 1.5),
            measure=_single("standard_500ms", "analytic"),
            unit="s",
        ),
        Claim(
            id="tfrc-above-linux-at-long-delay",
            robust_to_quick=True,
            statement="TFRC's RTO is much larger than Linux's over long delay sites.",
            paper_value="much larger (Fig. 12)",
            how="4R over SRTT + max(4 RTTVAR, 200 ms) at R = 500 ms",
            tolerance="at least 2",
            accept=(2.0, 100.0),
            measure=_single("tfrc_over_linux_500ms", "analytic"),
        ),
        Claim(
            id="planetlab-measurement",
            statement="Measured RTOs of TFRC and Linux TCP to 28 PlanetLab sites (Fig. 12).",
            paper_value="28 sites, RTTs to about 500 ms",
            how="not rerun: the PlanetLab sites and the 2005 kernel are gone",
            tolerance="(a measurement)",
            accept=(0.0, 0.0),
            measure=lambda _a: Measurement(
                float("nan"),
                float("nan"),
                0,
                "not comparable: the paper's measurement to 28 PlanetLab sites cannot be "
                "rerun; only the analytic curves are drawn",
            ),
        ),
    ),
    analyze=_fig12_analyze,
    plot=_fig12_plot,
)

# ---------------------------------------------------------------------------------------------
# Fig. 13: F(p, t_RTT, t_0) with TFRC's and TCP's RTO, analytic


def _big_f(p: np.ndarray, rtt_s: float, t0_s: float) -> np.ndarray:
    """Eq. (1) as F(p, t_RTT, t_0) (b = 1, no cap, per unit packet size)."""
    return np.array([equation.throughput_bytes_per_s(1.0, rtt_s, x, t_rto_s=t0_s) for x in p])


_FIG13_P = np.concatenate([np.linspace(0.001, 0.2, 200), np.linspace(0.21, 0.5, 30)])


def _fig13_analyze(_runs: Any, _plan: Plan) -> Analysis:
    p = _FIG13_P
    short = _big_f(p, 0.01, 0.04) / _big_f(p, 0.01, 1.0)
    long = _big_f(p, 0.5, 2.0) / _big_f(p, 0.5, 1.0)

    def at(ratio: np.ndarray, x: float) -> float:
        return float(np.interp(x, p, ratio))

    return {
        "p": p,
        "dr_10ms": _dr(short, 1.0),
        "dr_500ms": _dr(long, 1.0),
        "ratio_10ms_15": at(short, 0.15),
        "dr_10ms_5": float(metrics.difference_ratio(at(short, 0.05), 1.0)),
        "ratio_500ms_min": float(long.min()),
        "dr_low_loss": float(
            max(
                abs(float(metrics.difference_ratio(at(short, 0.001), 1.0))),
                abs(float(metrics.difference_ratio(at(long, 0.001), 1.0))),
            )
        ),
    }


def _fig13_plot(analysis: Analysis, path: Path) -> Path:
    fig = Figure(figsize=(6, 4))
    ax = fig.add_subplot(1, 1, 1)
    ax.axhline(0.0, color="black", lw=1)
    ax.plot(analysis["p"], analysis["dr_10ms"], label="F(p, 0.01, 0.04) vs F(p, 0.01, 1)")
    ax.plot(analysis["p"], analysis["dr_500ms"], label="F(p, 0.5, 2) vs F(p, 0.5, 1)")
    ax.set_xlim(0.0, 0.2)
    ax.set_xlabel("loss event rate p")
    ax.set_ylabel("difference ratio")
    ax.set_title("Fig. 13: the equation with TFRC's and TCP's RTO")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    return path


FIG13 = Experiment(
    id="rhee2005/fig13",
    title="Fig. 13: the equation's rate with TFRC's RTO against TCP's",
    setup="Analytic: Eq. (1) (RFC 3448's equation, b = 1, no cap on the RTO term) as "
    "F(p, t_RTT, t_0), computed by tfrclab's equation code; p from 0.001 to 0.5 (Eq. (1) "
    "holds up to 0.54 with b = 1).",
    kind="channel",
    scenarios=(),
    cells=(),
    full=Plan(seeds=(0,)),
    quick=Plan(seeds=(0,)),
    metrics=("difference_ratio",),
    claims=(
        Claim(
            id="ratio-10ms-at-15pct",
            robust_to_quick=True,
            statement="For a 10 ms network F(p, 0.01, 0.04) gives around 18 times the "
            "throughput of F(p, 0.01, 1) under 15% loss.",
            paper_value="~18x",
            how="F(0.15, 0.01, 0.04) / F(0.15, 0.01, 1)",
            tolerance="15-21",
            accept=(15.0, 21.0),
            measure=_single("ratio_10ms_15", "analytic"),
        ),
        Claim(
            id="dr-10ms-at-5pct",
            robust_to_quick=True,
            statement="Around 5% loss event rate the feedback rate difference ratio is around "
            "8.5 (§6).",
            paper_value="~8.5",
            how="difference ratio of F(0.05, 0.01, 0.04) against F(0.05, 0.01, 1)",
            tolerance="7-10",
            accept=(7.0, 10.0),
            measure=_single("dr_10ms_5", "analytic"),
        ),
        Claim(
            id="ratio-500ms",
            robust_to_quick=True,
            statement="In a 500 ms network F(p, 0.5, 2) gives around two times smaller "
            "throughput than F(p, 0.5, 1).",
            paper_value="~0.5x",
            how="smallest F(p, 0.5, 2) / F(p, 0.5, 1) over p in (0, 0.5]",
            tolerance="0.4-0.6",
            accept=(0.4, 0.6),
            measure=_single("ratio_500ms_min", "analytic"),
        ),
        Claim(
            id="small-at-low-loss",
            robust_to_quick=True,
            statement="Under low loss rates differing RTO values do not affect the rate much.",
            paper_value="small (Fig. 13)",
            how="largest |difference ratio| of the two pairs at p = 0.001",
            tolerance="at most 0.3",
            accept=(0.0, 0.3),
            measure=_single("dr_low_loss", "analytic"),
        ),
    ),
    analyze=_fig13_analyze,
    plot=_fig13_plot,
)

# ---------------------------------------------------------------------------------------------
# Figs. 14-15: TFRC (t_RTO = 4R) against standard TCP over delays


def _rto_label(delay_ms: int, load: int, variant: str = "") -> str:
    return f"{delay_ms}ms-bg{load}" + (f"-{variant}" if variant else "")


_SENSITIVITY_LOAD = 5
"""The load of the 10 ms sensitivity cells: the lightest, whose loss event rate is the
closest to the 5% of the claim (at 10 ms every load is above it)."""

_SENSITIVITY: tuple[tuple[str, int, dict[str, Any]], ...] = (
    ("tcp-min-rto-200ms", 10, _all_tcp("min_rto", "200ms")),
    ("tfrc-rfc5348", 10, {"flows.0.preset": "rfc5348"}),
    ("buffer-400", 10, {"topology.bottleneck.queue.limit": 400}),
    ("tcp-reno", 10, {"flows.1.variant": "reno"}),
    ("rtt-10ms", 1, {}),
)
"""The 10 ms cells that change one thing each: every TCP flow at ns-2.35's 200 ms RTO floor;
TFRC as RFC 5348 (preset rfc5348: no cap on the RTO term, RFC rate rules); a 400-packet
buffer instead of 2 x BDP (105); the measured TCP flows as Reno instead of SACK; and a
bottleneck of 1 ms one way, so that the RTT is about 10 ms as in the paper's "10 ms RTT path"
of §6 (one-way 10 ms gives 28 ms)."""


def _rto_cells() -> tuple[tuple[str, str, dict[str, Any]], ...]:
    cells: list[tuple[str, str, dict[str, Any]]] = []
    for delay in RTO_DELAYS_MS:
        for load in _RTO_LOADS:
            cells.append(
                (
                    _rto_label(delay, load),
                    _RTO,
                    {
                        "topology.bottleneck.delay": f"{delay}ms",
                        "topology.bottleneck.queue.limit": _buffer_packets(delay),
                        "flows.2.count": load,
                    },
                )
            )
    for variant, delay, change in _SENSITIVITY:
        base = {
            "topology.bottleneck.delay": f"{delay}ms",
            "topology.bottleneck.queue.limit": _buffer_packets(delay),
            "flows.2.count": _SENSITIVITY_LOAD,
        }
        cells.append((_rto_label(10, _SENSITIVITY_LOAD, variant), _RTO, {**base, **change}))
    return tuple(cells)


def _ten_ms_path(delay: str, cell: Cell) -> dict[str, Any] | None:
    """A 10 ms cell of the main grid with its one-way bottleneck delay at ``delay``.

    Its buffer follows the delay by the setup's rule (2 x BDP, :func:`_buffer_packets`); the
    other delays' cells and the 10 ms sensitivity cells are left as they are.
    """
    label, _relative, changes = cell
    if label not in {_rto_label(10, load) for load in _RTO_LOADS}:
        return None
    ms = float(delay.removesuffix("ms"))
    return {
        **changes,
        "topology.bottleneck.delay": delay,
        "topology.bottleneck.queue.limit": _buffer_packets(ms),
    }


TEN_MS_PATH = Unstated(
    name="10ms-path",
    what="the one-way bottleneck delay of the paper's '10 ms network' (the 10 ms cells of "
    "every load)",
    chosen="10ms",
    why="read as a one-way delay like the paper's other delays (Fig. 14's 10-500 ms); the paper "
    "does not say, and its section 6 writes 'a 10 ms RTT path'",
    values=("1ms", "10ms"),
    apply=_ten_ms_path,
)
"""The two readings of "10 ms": one way (chosen, a 28 ms propagation RTT with the access links)
or round trip (a 1 ms bottleneck, about 10 ms of RTT, as the ``rtt-10ms`` sensitivity cell)."""


_AROUND_5PCT = (0.025, 0.1)
"""The loss event rates counted as "around 5%" in the 10 ms claims."""


def _rto_point(data: Any) -> dict[str, float]:
    """One cell's run as Figs. 14-15's point, with what explains it.

    Throughput and loss event rate difference ratios of TFRC against TCP, the measured flows'
    mean loss event rate, and the equation's feedback difference ratio at that rate with
    TFRC's and TCP's own mean R and RTO.
    """
    c = _cell_flows(data)
    tf, tc = c["tfrc_run"] == 0, c["tcp_run"] == 0
    tfrc_rate, tcp_rate = float(np.mean(c["tfrc_rate"][tf])), float(np.mean(c["tcp_rate"][tc]))
    p_tfrc, p_tcp = float(np.mean(c["tfrc_p"][tf])), float(np.mean(c["tcp_p"][tc]))
    p = float(np.mean(np.concatenate([c["tfrc_p"][tf], c["tcp_p"][tc]])))
    r = float(np.nanmean(c["tfrc_rtt"][tf]))
    predicted = _f(p, r, float(np.nanmean(c["tfrc_rto"][tf])), True) / _f(
        p, r, float(np.nanmean(c["tcp_rto"][tc])), False
    )
    return {
        "p": p,
        "p_tfrc": p_tfrc,
        "p_tcp": p_tcp,
        "dr_rate": float(metrics.difference_ratio(tfrc_rate, tcp_rate)),
        "dr_p": float(metrics.difference_ratio(p_tfrc, p_tcp)),
        "dr_predicted": float(metrics.difference_ratio(predicted, 1.0)),
        "tfrc_rto": float(np.nanmean(c["tfrc_rto"][tf])),
        "tcp_rto": float(np.nanmean(c["tcp_rto"][tc])),
        "rtt": r,
    }


def _rto_analyze(data: Any, _plan: Plan) -> Analysis:
    points = {label: _rto_point(data[label]) for label, _, _ in _rto_cells()}
    by_delay = {d: [points[_rto_label(d, n)] for n in _RTO_LOADS] for d in RTO_DELAYS_MS}

    def around(delay: int, key: str) -> np.ndarray:
        return np.array(
            [q[key] for q in by_delay[delay] if _AROUND_5PCT[0] <= q["p"] <= _AROUND_5PCT[1]]
        )

    slopes = []
    for d in RTO_DELAYS_MS:
        line = _fit(
            np.array([q["p"] for q in by_delay[d]]), np.array([q["dr_rate"] for q in by_delay[d]])
        )
        if line is not None:
            slopes.append(1.0 if line[0] < 0 else 0.0)
    at10 = around(10, "dr_rate")
    amplification = around(10, "dr_rate") / around(10, "dr_predicted")
    return {
        "points": points,
        "by_delay": by_delay,
        "dr_10ms_5pct": at10,
        "dr_p_10ms_5pct": around(10, "dr_p"),
        "amplification_10ms": amplification,
        "dr_500ms_min": float(min(q["dr_rate"] for q in by_delay[500])),
        "dr_p_500ms_max": float(max(q["dr_p"] for q in by_delay[500])),
        "p_500ms_max": float(max(q["p"] for q in by_delay[500])),
        "dr_10ms_rto200": points[_rto_label(10, _SENSITIVITY_LOAD, "tcp-min-rto-200ms")]["dr_rate"],
        "dr_predicted_10ms_max": _largest(around(10, "dr_predicted")),
        "falls_with_p": np.asarray(slopes, dtype=float),
    }


def _largest(values: np.ndarray) -> float:
    """The largest of ``values``; NaN when there is none."""
    return float(np.max(values)) if values.size else math.nan


def _fig1415_plot(analysis: Analysis, path: Path) -> Path:
    fig = Figure(figsize=(12, 4.5))
    axes = [fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2)]
    for delay in RTO_DELAYS_MS:
        q = analysis["by_delay"][delay]
        p = np.array([x["p"] for x in q])
        for ax, key in zip(axes, ("dr_rate", "dr_p"), strict=True):
            _scatter_with_fit(ax, p, np.array([x[key] for x in q]), f"{delay} ms", "o")
    for label, q in analysis["points"].items():
        if label.count("-") >= 2:
            short = label.split("-", 2)[2]
            axes[0].plot(q["p"], q["dr_rate"], "kx", ms=6)
            axes[0].annotate(short, (q["p"], q["dr_rate"]), fontsize=6)
            axes[1].plot(q["p"], q["dr_p"], "kx", ms=6)
    axes[0].set_ylabel("throughput difference ratio TFRC vs TCP")
    axes[0].set_title("Fig. 14 (x: 10 ms sensitivity cells)")
    axes[1].set_ylabel("loss event rate difference ratio TFRC vs TCP")
    axes[1].set_title("Fig. 15")
    for ax in axes:
        ax.axhline(0.0, color="black", lw=1)
        ax.set_xlabel("loss event rate (measured TFRC and TCP flows)")
        ax.legend(fontsize=8, title="one-way delay")
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    return path


FIG14_15 = Experiment(
    id="rhee2005/fig14-15",
    title="Figs. 14-15: TFRC (t_RTO = 4R) against standard TCP over delays of 10-500 ms",
    setup="rhee2005 §3's common setup with TFRC's t_RTO = 4R (RFC 3448; preset floyd2000, "
    "ns-2's Agent/TFRC) and every TCP flow (SACK) at RFC 2988's RTO max(1 s, SRTT + 4 RTTVAR) "
    "with ns-2.35's 10 ms tick (scenario rto-rfc.toml); one-way bottleneck delays "
    f"{', '.join(map(str, RTO_DELAYS_MS))} ms, each with a buffer of 2 x BDP and "
    f"{', '.join(map(str, _RTO_LOADS))} background TCP flows; one seed per cell; 1000 s "
    "measured after 200 s as the paper (--quick: 50 s after 30 s). Sensitivity cells at 10 ms "
    f"and {_SENSITIVITY_LOAD} background flows change one thing each: TCP's RTO floor 200 ms "
    "(ns-2.35), TFRC as RFC 5348, a 400-packet buffer, Reno for the measured TCP flows, and a "
    "1 ms bottleneck (RTT about 10 ms). Throughput is the send rate; the loss event rate on "
    "the x axis is the mean of the 10 measured flows'.",
    kind="sweep",
    scenarios=(_RTO,),
    cells=_rto_cells(),
    full=Plan(seeds=(1,), trace=_TRACE),
    quick=Plan(seeds=(1,), changes=_QUICK, trace=_TRACE),
    metrics=("difference_ratio", "loss_event_rate"),
    claims=(
        Claim(
            id="10ms-above-20x",
            robust_to_quick=True,
            statement="In the 10 ms network TFRC gets more than 20 times (difference ratio) "
            "TCP's throughput around a 5% loss event rate.",
            paper_value="> 20 (Fig. 14)",
            how="mean throughput difference ratio (TFRC against TCP) of the 10 ms runs whose "
            "loss event rate is in [0.025, 0.1] (the sensitivity cells excluded)",
            tolerance="at least 15",
            accept=(15.0, 1000.0),
            measure=_values("dr_10ms_5pct", "10 ms runs around 5%"),
            known_deviation=because(
                "the advantage is TCP's 1 s RTO floor, which at ns-2.35's 200 ms floor is gone; "
                "the equation itself predicts less than the paper's 8.5 at the measured RTT (the "
                "paper's assumes a 10 ms RTT); and TFRC's loss event rate is barely lower than "
                "TCP's, so nothing amplifies it",
                "rhee2005/fig14-15 10ms-rto-floor-200ms",
                "rhee2005/fig14-15 10ms-equation-below-8.5",
                "rhee2005/fig14-15 10ms-lower-loss-event-rate",
            ),
        ),
        Claim(
            id="10ms-lower-loss-event-rate",
            robust_to_quick=True,
            statement="... while the loss event rate difference ratio of TFRC and TCP "
            "reaches -0.6.",
            paper_value="-0.6 (Fig. 15)",
            how="mean loss event rate difference ratio (TFRC against TCP) of the same runs",
            tolerance="-1.0 to -0.3",
            accept=(-1.0, -0.3),
            measure=_values("dr_p_10ms_5pct", "10 ms runs around 5%"),
            known_deviation=not_established(
                "TFRC sends faster than TCP at 10 ms, but its loss event rate is only a little "
                "lower than TCP's in every 10 ms cell (the figure): under adaptive RED with the "
                "web and short-flow traffic the rate difference moves the loss event rate little"
            ),
        ),
        Claim(
            id="10ms-amplified",
            statement="The feedback rate difference (Fig. 13) is amplified in the actual "
            "throughput difference at 10 ms (8.5 became more than 20).",
            paper_value="> 20 / 8.5 = 2.4",
            how="throughput difference ratio over the equation's difference ratio with TFRC's "
            "and TCP's own mean t_RTO at the run's loss event rate, 10 ms runs around 5%",
            tolerance="above 1",
            accept=(1.0, 1000.0),
            strict=(True, False),
            measure=_values("amplification_10ms", "10 ms runs around 5%"),
            known_deviation=because(
                "without a large loss event rate difference the throughput ratio stays below the "
                "equation's own prediction at the measured rate",
                "rhee2005/fig14-15 10ms-lower-loss-event-rate",
            ),
        ),
        Claim(
            id="500ms-negative",
            statement="In the 500 ms network the throughput difference ratio goes down to "
            "-9.8 at high loss event rates.",
            paper_value="-9.8 (Fig. 14)",
            how="smallest throughput difference ratio of the 500 ms runs",
            tolerance="-14.7 to -6.5 (within a factor 1.5)",
            accept=(-14.7, -6.5),
            measure=_single("dr_500ms_min", "500 ms runs"),
            known_deviation=because(
                "at 500 ms the runs stay below a 5% loss event rate even with 400 background "
                "flows (the BDP is 1890 packets), where the RTO term hardly matters",
                "rhee2005/fig14-15 500ms-loss-event-rate-low",
            ),
        ),
        Claim(
            id="500ms-higher-tcp-loss",
            statement="... with the loss event rate difference ratio up to 0.5.",
            paper_value="0.5 (Fig. 15)",
            how="largest loss event rate difference ratio of the 500 ms runs",
            tolerance="0.25 to 1.0",
            accept=(0.25, 1.0),
            measure=_single("dr_p_500ms_max", "500 ms runs"),
            known_deviation=because(
                "the 500 ms runs never reach the high loss event rates of the paper's 500 ms curve",
                "rhee2005/fig14-15 500ms-loss-event-rate-low",
            ),
        ),
        Claim(
            id="10ms-rto-floor-200ms",
            statement="Evidence for 10ms-above-20x (not a statement of the paper): with every "
            "TCP at ns-2.35's 200 ms RTO floor instead of 1 s, TFRC's 10 ms advantage is gone.",
            paper_value="(not in the paper)",
            how="throughput difference ratio (TFRC against TCP) of the 10 ms sensitivity cell "
            f"with TCP's min_rto = 200 ms, {_SENSITIVITY_LOAD} background flows (one run)",
            tolerance="below 1 (TFRC less than twice TCP's throughput)",
            accept=(-1000.0, 1.0),
            strict=(False, True),
            measure=_single("dr_10ms_rto200", "the 200 ms RTO floor cell"),
        ),
        Claim(
            id="10ms-equation-below-8.5",
            statement="Evidence for 10ms-above-20x (not a statement of the paper): at the "
            "measured RTT the equation's own difference ratio (TFRC's RTO against TCP's) is "
            "below the paper's 8.5 for a 10 ms RTT.",
            paper_value="(not in the paper; the paper's Fig. 13: 8.5)",
            how="the largest equation difference ratio, with TFRC's and TCP's own mean R and "
            "t_RTO at the run's loss event rate, of the 10 ms runs around 5% (one number)",
            tolerance="below 8.5",
            accept=(-1000.0, 8.5),
            strict=(False, True),
            measure=_single("dr_predicted_10ms_max", "10 ms runs around 5%"),
        ),
        Claim(
            id="500ms-loss-event-rate-low",
            statement="Evidence for the 500 ms claims (not a statement of the paper): the 500 ms "
            "runs stay below a 5% loss event rate.",
            paper_value="(not in the paper)",
            how="the largest loss event rate (TFRC's and TCP's measured flows pooled) of the "
            "500 ms runs (one number)",
            tolerance="below 0.05",
            accept=(0.0, 0.05),
            strict=(False, True),
            measure=_single("p_500ms_max", "500 ms runs"),
        ),
        Claim(
            id="falls-with-loss",
            statement="The throughput difference ratios tend to fall as the loss event rate "
            "increases.",
            paper_value="falling (Fig. 14)",
            how="fraction of delays whose least-squares line of difference ratio over loss "
            "event rate has a negative slope",
            tolerance="at least 0.6",
            accept=(0.6, 1.0),
            measure=_values("falls_with_p", "delays"),
        ),
    ),
    analyze=_rto_analyze,
    plot=_fig1415_plot,
    unstated=(TEN_MS_PATH,),
)

EXPERIMENTS: tuple[Experiment, ...] = (FIG06_07, FIG08, FIG09_11, FIG12, FIG13, FIG14_15)
"""The rhee2005 §5-§6 experiments, in figure order."""
