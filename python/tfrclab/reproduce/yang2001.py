"""The yang2001 experiments (Yang, Kim, Lam, INFOCOM 2001) and their claims, with Table I.

Every run is one of two scenario files with its flows and loss model replaced per cell:
``yang2001/single.toml`` (one flow alone behind a loss model at the bottleneck: Figs. 3-6,
16-18, 23-26 and Table I's CoV_time, D and I) and ``yang2001/multi.toml`` (flows sharing the
DropTail bottleneck: Figs. 7-14, 19-22, 27-29 and Table I's fairness F). Time is counted in base
RTTs of 100 ms; step changes happen at RTT 1000 (100 s).

Readings the paper leaves open, both computed (the claims say which they use):

- **Per-RTT samples at the base or the measured RTT.** A window-based flow sends one window per
  *measured* RTT (base + queueing delay); sampled per base RTT its windows straddle the bins.
  Fairness F and CoV_time are computed both ways; the claims use the measured RTT (a flow's
  "round-trip time" in the paper is the one it experiences; eq. 3 ties F to CoV at that
  timescale). Single flows behind a loss model hardly queue, so there the two coincide.
- **GAIMD's loss recovery**: the paper says Reno; the claims use Reno, and a SACK-recovery
  variant is run beside it as evidence (docs/tcp.md: with SACK the paper's CoV is met).

Each claim's tolerance is written here beside the paper's value and never changed to fit a
result; a claim the model does not meet fails, with the measured value and, where understood,
why (``known_deviation``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from tfrclab import metrics
from tfrclab.reproduce.claims import Analysis, Band, Claim, Measurement, measure_seeds
from tfrclab.reproduce.evidence import Reason, because, not_established
from tfrclab.reproduce.registry import Experiment, Plan
from tfrclab.reproduce.sensitivity import Cell, Unstated

__all__ = [
    "EXPERIMENTS",
    "FIG06_LOSSES",
    "F_BANDS",
    "F_TCP_VARIANTS",
    "PROTOCOLS",
    "RANDOMIZATION",
    "SERVICE_TIME",
    "TABLE1_PAPER",
    "TEAR_FAR_ABOVE_TCP_AT_20",
    "TFRC_COV_ABOUT_2_AT_20",
    "TFRC_RATE_NEAR_0_AT_20",
]

PROTOCOLS = ("tcp", "gaimd", "tfrc", "tear")
"""The four protocols compared, in the paper's order."""

_NAMES = {
    "tcp": "TCP",
    "gaimd": "GAIMD",
    "tfrc": "TFRC",
    "tear": "TEAR",
    "gaimd-sack": "GAIMD (SACK recovery)",
    "tcp-sack": "TCP (SACK)",
    "tfrc-rfc5348": "TFRC (RFC 5348)",
    "tfrc-nodisc": "TFRC (no history discounting)",
}

_RTT_S = 0.1
"""The base RTT: 2 x (10 + 30 + 10) ms."""
_ONSET_S = 100.0
"""RTT 1000, when the step changes happen."""
_CAPACITY_PKTS_PER_RTT = 2.5e6 * _RTT_S / 8000
"""The bottleneck's rate in 1000-byte packets per base RTT (31.25)."""
_SINGLE = "yang2001/single.toml"
_MULTI = "yang2001/multi.toml"

_FLOWS: dict[str, dict[str, Any]] = {
    "tcp": {"kind": "tcp", "variant": "reno", "preset": "ns2_2000", "window": 1000},
    "gaimd": {"kind": "gaimd", "alpha": 0.31, "beta": 0.875, "window": 1000},
    "gaimd-sack": {
        "kind": "gaimd",
        "alpha": 0.31,
        "beta": 0.875,
        "window": 1000,
        "recovery": "sack",
    },
    "tcp-sack": {"kind": "tcp", "variant": "sack", "preset": "ns2_2000", "window": 1000},
    "tfrc": {"kind": "tfrc", "preset": "floyd2000"},
    "tfrc-rfc5348": {"kind": "tfrc", "preset": "rfc5348"},
    "tfrc-nodisc": {"kind": "tfrc", "preset": "floyd2000", "discount_threshold": "none"},
    "tear": {"kind": "tear", "preset": "yang2001"},
}
"""The flow tables: TCP Reno, GAIMD(0.31, 7/8) on Reno, TFRC of 2000 (ns-2.35's Agent/TFRC:
history discounting on), TEAR with its receiver timeout; and the variants run as evidence."""


def _flow(protocol: str, name: str, **keys: Any) -> dict[str, Any]:
    """A ``[[flows]]`` table of ``protocol`` named ``name`` with extra keys."""
    return {**_FLOWS[protocol], "name": name, **keys}


# ---------------------------------------------------------------------------------------------
# loss models (single.toml's [[losses]] table)


def _bernoulli(p: float) -> dict[str, Any]:
    return {"kind": "bernoulli", "p": p}


def _periodic(rate: float) -> dict[str, Any]:
    """One drop in every 1/rate packets, the last of each period."""
    every = round(1 / rate)
    return {"kind": "periodic", "every": every, "phase": every - 1}


def _one_per_rtt() -> dict[str, Any]:
    """Persistent congestion: one drop per base RTT from the step on (yang2001 §IV)."""
    return {"kind": "periodic_time", "interval": "100ms", "offset": "0s"}


def _loss(model: Mapping[str, Any]) -> dict[str, Any]:
    return {"link": "bottleneck", "flow": "flow", **model}


def _step(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, Any]:
    """``before`` until RTT 1000, ``after`` from then on."""
    steps = [{"at": "0s", **before}, {"at": f"{_ONSET_S:g}s", **after}]
    return {"link": "bottleneck", "flow": "flow", "kind": "schedule", "steps": steps}


def _single_cell(
    label: str, protocol: str, loss: Mapping[str, Any]
) -> tuple[str, str, dict[str, Any]]:
    start = {"uniform": ["0s", "1s"]}
    return (label, _SINGLE, {"flows.0": _flow(protocol, "flow", start=start), "losses.0": loss})


def _multi_cell(label: str, flows: list[dict[str, Any]]) -> tuple[str, str, dict[str, Any]]:
    return (label, _MULTI, {"flows": flows})


_EARLY = {"uniform": ["0s", "10s"]}

SERVICE_TIME = "3.2ms"
"""One 1000-byte packet's service time at the 2.5 Mb/s bottleneck: TCP's and GAIMD's random
send delay U(0, 3.2 ms) in the shared-link runs (:data:`RANDOMIZATION`)."""

RANDOMIZATION: dict[str, dict[str, Any]] = {
    "tcp": {"overhead": SERVICE_TIME},
    "gaimd": {"overhead": SERVICE_TIME},
    "tfrc": {"dither_fraction": 0.1},
}
"""The randomization of every flow of the shared-link runs (``multi.toml``), by flow kind.

yang2001 §II-C: "To avoid phase effects [21] ... we introduce randomizations by setting the
overhead parameter of TCP, GAIMD, and TFRC to a small non-zero value" (TEAR is not named, and
gets none). The value is not given. TCP's and GAIMD's ``overhead`` (ns-2 ``overhead_``) delays
each ACK-triggered burst by U(0, overhead): one bottleneck service time, the random processing
time by which Floyd and Jacobson's phase-effects study, the paper's [21], breaks the phase
locking. TFRC's ``dither_fraction`` (ns-2 TFRC's ``overhead_``) scales each gap by U(1 - d,
1 + d): d = 0.1 moves a packet by up to 2.6 ms at its fair share of these runs (a 26 ms gap),
about the same. The rule was fixed before any run with randomization; how much F depends on
the value (runs of 1-50 ms, made while checking the rule's sensitivity) is in
docs/reproduction/yang2001.md. The single-flow runs (one flow behind a loss model, no queue to
lock phases on) keep none."""


def _with_overhead(value: str, cell: Cell) -> dict[str, Any] | None:
    """A shared-link cell with every randomized TCP and GAIMD flow's ``overhead`` at ``value``."""
    _label, _relative, changes = cell
    flows = changes.get("flows")
    if not flows:
        return None
    return {**changes, "flows": [{**f, "overhead": value} if "overhead" in f else f for f in flows]}


OVERHEAD = Unstated(
    name="overhead",
    what="TCP's and GAIMD's random send delay U(0, overhead) in the shared-link runs (ns-2's "
    "overhead_, the paper's randomization)",
    chosen=SERVICE_TIME,
    why="the paper gives no value: one bottleneck service time, the random processing time of "
    "Floyd and Jacobson's phase-effects study (RANDOMIZATION)",
    values=("1ms", SERVICE_TIME, "10ms"),
    apply=_with_overhead,
)
"""The randomization's unstated size, from a third of the chosen to about three times it (the
10 ms of Table I's ``F-tcp-overhead10ms`` evidence cell)."""

ACCESS_RATE = Unstated(
    name="access-rate",
    what="the access links' rate (multi.toml)",
    chosen="100Mbps",
    why="the paper says only that the access links are sufficiently provisioned: 40 times the "
    "bottleneck",
    values=("10Mbps", "100Mbps", "1Gbps"),
    apply=lambda value, cell: {**cell[2], "topology.access.rate": value},
)
"""The access links' unstated rate, from 4 to 400 times the 2.5 Mb/s bottleneck (10 Mb/s is
Table I's ``F-tcp-access10Mbps`` evidence cell)."""


def _group(protocol: str, name: str, count: int, **keys: Any) -> dict[str, Any]:
    """A flow table of the shared-link runs: ``count`` flows starting in 0-10 s, randomized."""
    randomized = RANDOMIZATION.get(_FLOWS[protocol]["kind"], {})
    return _flow(protocol, name, count=count, **{"start": _EARLY, **randomized, **keys})


# ---------------------------------------------------------------------------------------------
# reading the runs


def _series(data: Any, flow_prefix: str = "") -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Per-seed packets sent per bin: (bin start times, array seeds x flows x bins, flow names).

    Only flows whose name starts with ``flow_prefix`` (all when empty), in name order.
    """
    fs = data.flow_series
    seeds = sorted(fs["seed"].unique())
    chosen = sorted(f for f in fs["flow"].unique() if str(f).startswith(flow_prefix))
    rows = fs[fs["flow"].isin(chosen)]
    times = np.sort(rows["time_s"].unique())
    out = np.zeros((len(seeds), len(chosen), len(times)))
    for s, seed in enumerate(seeds):
        table = rows[rows["seed"] == seed].pivot(
            index="flow", columns="time_s", values="sent_packets"
        )
        table = table.reindex(index=chosen, columns=times).fillna(0.0)
        out[s] = table.to_numpy(float)
    return times, out, [str(c) for c in chosen]


def _queue(data: Any) -> tuple[np.ndarray, np.ndarray]:
    """The bottleneck's mean queue per bin, per seed: (bin start times, seeds x bins)."""
    ls = data.link_series
    ls = ls[ls["link"] == "bottleneck"]
    seeds = sorted(ls["seed"].unique())
    times = np.sort(ls["time_s"].unique())
    out = np.zeros((len(seeds), len(times)))
    for s, seed in enumerate(seeds):
        rows = ls[ls["seed"] == seed].set_index("time_s").reindex(times)
        out[s] = rows["mean_queue_packets"].to_numpy(float)
    return times, out


def _per_rtt(times: np.ndarray, counts: np.ndarray, bin_s: float) -> tuple[np.ndarray, np.ndarray]:
    """Packets per base RTT, sampled once per base RTT: (sample start times, samples)."""
    k = max(1, round(_RTT_S / bin_s))
    rate = metrics.send_rate(counts, bin_s, k * bin_s) * _RTT_S
    return times[::k][: rate.shape[-1]], rate


def _smooth(x: np.ndarray, n: int) -> np.ndarray:
    """Trailing mean over ``n`` samples (the first n - 1 use what there is)."""
    c = np.cumsum(np.insert(np.asarray(x, float), 0, 0.0))
    idx = np.arange(1, len(x) + 1)
    lo = np.maximum(idx - n, 0)
    return np.asarray((c[idx] - c[lo]) / (idx - lo), dtype=float)


def _mean_between(t: np.ndarray, x: np.ndarray, lo: float, hi: float) -> float:
    sel = (t >= lo - 1e-9) & (t < hi - 1e-9)
    return float(np.mean(x[sel])) if sel.any() else float("nan")


def _first_time(t: np.ndarray, cond: np.ndarray, after_s: float) -> float:
    """RTTs from ``after_s`` to the first sample at or after it where ``cond`` holds."""
    hits = np.flatnonzero(cond & (t >= after_s - 1e-9))
    return float((t[hits[0]] - after_s) / _RTT_S) if hits.size else float("nan")


def _responsiveness(t: np.ndarray, rate: np.ndarray) -> float:
    """D, in RTTs (yang2001 §IV).

    RTTs from the onset until the per-RTT rate is at most half its mean over the 10 s
    before (:func:`tfrclab.metrics.responsiveness`, baseline 100 RTTs: the mean of a sawtooth).
    """
    return metrics.responsiveness(t, rate, _ONSET_S, _RTT_S, baseline_s=10.0)


def _aggressiveness(t: np.ndarray, rate: np.ndarray) -> float:
    """I, in packets/RTT per RTT (yang2001 §V).

    The fastest increase of the per-RTT rate over 10 RTTs in the 60 RTTs after the onset,
    counting only windows that end before the rate first reaches 80% of the bottleneck (where
    the link, not the protocol, stops the increase). The paper's I is an upper bound on the
    increase per RTT (§V), hence the fastest window, not the mean.
    """
    cap = 0.8 * _CAPACITY_PKTS_PER_RTT
    start = int(np.searchsorted(t, _ONSET_S - 1e-9))
    full = np.flatnonzero((rate >= cap) & (t >= _ONSET_S - 1e-9))
    stop = int(full[0]) if full.size else len(rate) - 1
    best = float("nan")
    for i in range(start, min(start + 60, stop - 10) + 1):
        slope = (rate[i + 10] - rate[i]) / 10.0
        best = slope if math.isnan(best) else max(best, slope)
    return best


def _measured_rtt_bins(data: Any, seed_index: int, lo: float, hi: float) -> int:
    """The measured RTT in monitor bins: base + the mean queueing delay over [lo, hi)."""
    t, q = _queue(data)
    delay = _mean_between(t, q[seed_index], lo, hi) * 8000 / 2.5e6
    return max(1, round((_RTT_S + delay) / float(data.bin_s)))


def _fairness(counts: np.ndarray, bin_s: float, k: int) -> np.ndarray:
    """Jain's index over flows of the per-interval rates, per interval.

    ``k`` bins per interval; intervals where every flow sent nothing are NaN.
    """
    rates = metrics.send_rate(counts, bin_s, k * bin_s)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(metrics.fairness_index(rates, axis=0), dtype=float)


# ---------------------------------------------------------------------------------------------
# single-flow analysis, per cell


def _single_analysis(data: Any) -> dict[str, Any]:
    """Per seed: CoV_time, mean rate, D and I and the step response times; seed 0's trace."""
    times, counts, _ = _series(data)
    t, per_rtt = _per_rtt(times, counts[:, 0, :], data.bin_s)
    n = per_rtt.shape[0]
    out: dict[str, Any] = {
        key: np.full(n, np.nan)
        for key in (
            "cov",
            "rate",
            "rate_before",
            "rate_after",
            "d",
            "i",
            "rise90",
            "fall05",
            "dip_ratio",
        )
    }
    for s in range(n):
        r = per_rtt[s]
        steady = t >= 20.0 - 1e-9
        out["cov"][s] = float(metrics.cov(r[steady]))
        out["rate"][s] = float(np.mean(r[steady]))
        before = _mean_between(t, r, _ONSET_S - 50.0, _ONSET_S)
        after = _mean_between(t, r, 170.0, 200.0)
        out["rate_before"][s], out["rate_after"][s] = before, after
        out["d"][s] = _responsiveness(t, r)
        out["i"][s] = _aggressiveness(t, r)
        smooth = _smooth(r, 10)
        out["rise90"][s] = _first_time(t, smooth >= 0.9 * after, _ONSET_S)
        fall = _first_time(t, r <= 0.05 * before, _ONSET_S)
        # Never reached: the RTTs left in the run, a lower bound (TEAR under 100% loss).
        out["fall05"][s] = (t[-1] + _RTT_S - _ONSET_S) / _RTT_S if math.isnan(fall) else fall
        window = (t >= _ONSET_S - 1e-9) & (t < _ONSET_S + 30.0)
        out["dip_ratio"][s] = float(np.min(smooth[window]) / after) if after > 0 else np.nan
    out["trace_t"], out["trace"] = t, per_rtt[0]
    return out


def _cells_analysis(runs: Mapping[str, Any], each: Callable[[Any], dict[str, Any]]) -> Analysis:
    return {label: each(data) for label, data in runs.items()}


def _value(label: str, key: str, note: str = "") -> Callable[[Analysis], Measurement]:
    def measure(analysis: Analysis) -> Measurement:
        return measure_seeds(analysis[label][key], note)

    return measure


def _difference(
    a: Sequence[tuple[str, str]], b: Sequence[tuple[str, str]], how: str, note: str = ""
) -> Callable[[Analysis], Measurement]:
    """Per seed, a combination of a's values minus one of b's.

    ``how`` = "max-min" (max of a minus min of b) or "min-max" (min of a minus max of b).
    """

    def measure(analysis: Analysis) -> Measurement:
        va = np.array([analysis[lab][key] for lab, key in a])
        vb = np.array([analysis[lab][key] for lab, key in b])
        if how == "max-min":
            diff = np.max(va, axis=0) - np.min(vb, axis=0)
        else:
            diff = np.min(va, axis=0) - np.max(vb, axis=0)
        return measure_seeds(diff, note)

    return measure


def _ratio(
    a: tuple[str, str], b: tuple[str, str], note: str = ""
) -> Callable[[Analysis], Measurement]:
    def measure(analysis: Analysis) -> Measurement:
        with np.errstate(invalid="ignore", divide="ignore"):
            x = analysis[a[0]][a[1]] / analysis[b[0]][b[1]]
        return measure_seeds(x, note)

    return measure


_INF = 1e9
"""An unbounded side of an acceptance interval (claims need finite bounds)."""


# ---------------------------------------------------------------------------------------------
# Table I (and the runs Figs. 6 and 12-14 read)

FIG06_LOSSES = (0.005, 0.01, 0.02, 0.04, 0.08, 0.15, 0.2)
"""Fig. 6's Bernoulli loss rates (the paper's axis runs 0.5%-20%)."""

TABLE1_PAPER: dict[str, dict[str, str]] = {
    "F": {"tcp": "0.7", "gaimd": "0.9", "tfrc": "~1 (rate ~0 at high loss)", "tear": "~1 (too "
          "high at high loss)"},
    "CoV 2%": {"tcp": "0.58", "gaimd": "0.26", "tfrc": "0.22", "tear": "0.2"},
    "CoV 20%": {"tcp": "1.7", "gaimd": "1.7", "tfrc": "2", "tear": "0.4"},
    "D (RTTs)": {"tcp": "1", "gaimd": "5", "tfrc": "5-6", "tear": "5-6"},
    "I (pkts/RTT per RTT)": {"tcp": "1.0", "gaimd": "0.31", "tfrc": "0.12 (0.22 w/ disc.)",
                             "tear": "0.08"},
}  # fmt: skip
"""Table I as the paper gives it, by row and protocol."""


# Bands shared by the claims of several experiments (one tolerance per quantity and statement)

F_BANDS: dict[str, Band] = {
    protocol: Band(
        quantity=f"Jain's fairness index of 8 {_NAMES[protocol]} flows per measured RTT over "
        "[50 s, 200 s)",
        statement=f"yang2001 Table I and Figs. 12-14: {_NAMES[protocol]}'s fairness index F = "
        f"{value}",
        accept=accept,
        tolerance=f"in [{accept[0]:g}, {accept[1]:g}]",
    )
    for protocol, value, accept in (
        ("tcp", "0.7", (0.6, 0.8)),
        ("gaimd", "0.9", (0.8, 1.0)),
        ("tfrc", "~1", (0.9, 1.0)),
        ("tear", "~1", (0.9, 1.0)),
    )
}
"""F per protocol, for Table I and Figs. 12-14 (the same runs): within 0.1 of the paper's value
(its ~1 as [0.9, 1])."""

TFRC_RATE_NEAR_0_AT_20 = Band(
    quantity="TFRC's mean rate over TCP's, each alone at 20% Bernoulli loss",
    statement="yang2001 §III (Figs. 5-6, Table I): at high loss TFRC's rate drops to near 0",
    accept=(0.0, 0.5),
    tolerance="at most 0.5",
)
"""Figs. 3-5's and Table I's "TFRC near 0 at 20%"."""

TEAR_FAR_ABOVE_TCP_AT_20 = Band(
    quantity="TEAR's mean rate over TCP's, each alone at 20% Bernoulli loss",
    statement="yang2001 §III (Figs. 5-6, Table I): at high loss TEAR's rate is far above TCP's",
    accept=(2.0, _INF),
    tolerance="at least 2",
)
"""Figs. 3-5's and Table I's "TEAR far above TCP at 20%"."""

TFRC_COV_ABOUT_2_AT_20 = Band(
    quantity="TFRC's CoV_time at 20% Bernoulli loss, one flow alone",
    statement="yang2001 Table I and Fig. 6: TFRC's CoV_time is about 2 at 20% loss",
    accept=(1.6, 2.4),
    tolerance="within 20% of the paper's value",
)
"""Fig. 6's "about 2 at 20%" and Table I's CoV 20% for TFRC: 2 within 20%, as every CoV."""


def _cov_label(protocol: str, p: float) -> str:
    return f"cov-{protocol}-{p * 100:g}%"


def _table1_cells() -> tuple[tuple[str, str, dict[str, Any]], ...]:
    cells: list[tuple[str, str, dict[str, Any]]] = []
    for protocol in (*PROTOCOLS, "gaimd-sack"):
        for p in FIG06_LOSSES:
            cells.append(_single_cell(_cov_label(protocol, p), protocol, _loss(_bernoulli(p))))
    for p in (0.15, 0.2):
        cells.append(_single_cell(_cov_label("tfrc-rfc5348", p), "tfrc-rfc5348",
                                  _loss(_bernoulli(p))))  # fmt: skip
    for protocol in PROTOCOLS:
        cells.append(
            _single_cell(f"d-{protocol}", protocol, _step(_periodic(0.01), _one_per_rtt()))
        )
        cells.append(
            _single_cell(f"i-{protocol}", protocol, _step(_periodic(0.02), _bernoulli(0.0)))
        )
        cells.append(_multi_cell(f"f-{protocol}", [_group(protocol, "study", 8)]))
    for protocol in ("gaimd-sack", "tfrc-nodisc"):
        cells.append(
            _single_cell(f"i-{protocol}", protocol, _step(_periodic(0.02), _bernoulli(0.0)))
        )
    for label, _what, flow_keys, changes in F_TCP_VARIANTS:
        group = _group("tcp", "study", 8, **flow_keys)
        cells.append((label, _MULTI, {"flows": [group], **changes}))
    return tuple(cells)


F_TCP_VARIANTS: tuple[tuple[str, str, dict[str, Any], dict[str, Any]], ...] = (
    ("f-tcp-overhead10ms", "a 10 ms overhead", {"overhead": "10ms"}, {}),
    ("f-tcp-access10Mbps", "10 Mb/s access links", {}, {"topology.access.rate": "10Mbps"}),
)
"""Table I's TCP fairness runs with one value the paper does not give changed (label, what,
flow keys, scenario changes): evidence that F-tcp depends on them. Each is run beside the
setup's runs and judged against the same band."""


def _multi_fairness(data: Any, lo: float, hi: float, prefix: str = "") -> dict[str, np.ndarray]:
    """F per seed over [lo, hi), at the base and at the measured RTT.

    The mean per-interval Jain index at both timescales, and the measured RTT in s.
    """
    times, counts, _ = _series(data, prefix)
    sel = (times >= lo - 1e-9) & (times < hi - 1e-9)
    n = counts.shape[0]
    base, measured, rtt = np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan)
    for s in range(n):
        k = _measured_rtt_bins(data, s, lo, hi)
        rtt[s] = k * data.bin_s
        base[s] = float(np.nanmean(_fairness(counts[s][:, sel], data.bin_s, 5)))
        measured[s] = float(np.nanmean(_fairness(counts[s][:, sel], data.bin_s, k)))
    return {"f_base": base, "f_measured": measured, "rtt_measured": rtt}


def _table1_analyze(runs: Mapping[str, Any], _plan: Plan) -> Analysis:
    out: dict[str, Any] = {}
    for label, data in runs.items():
        if label.startswith("f-"):
            out[label] = _multi_fairness(data, 50.0, 200.0)
            times, counts, _ = _series(data)
            out[label]["trace_t"] = times
            k = _measured_rtt_bins(data, 0, 50.0, 200.0)
            out[label]["f_trace"] = _fairness(counts[0], data.bin_s, k)
            out[label]["k"] = k
        else:
            out[label] = _single_analysis(data)
    return out


def _table1_plot(analysis: Analysis, path: Any) -> Any:
    fig = Figure(figsize=(9, 3.2))
    ax1, ax2 = fig.subplots(1, 2)
    x = [p * 100 for p in FIG06_LOSSES]
    for protocol in (*PROTOCOLS, "gaimd-sack"):
        y = [float(np.mean(analysis[_cov_label(protocol, p)]["cov"])) for p in FIG06_LOSSES]
        ax1.plot(x, y, marker="o", ms=3, label=_NAMES[protocol])
    ax1.set(xlabel="Bernoulli loss rate (%)", ylabel="CoV_time", xscale="log",
            title="smoothness (Fig. 6 / Table I)")  # fmt: skip
    ax1.legend(fontsize=7)
    for protocol in PROTOCOLS:
        a = analysis[f"d-{protocol}"]
        ax2.plot((a["trace_t"] - _ONSET_S) / _RTT_S, a["trace"], lw=0.8, label=_NAMES[protocol])
    ax2.set(xlim=(-20, 40), xlabel="RTTs after the onset of one loss per RTT",
            ylabel="packets per RTT", title="responsiveness D")  # fmt: skip
    ax2.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    return path


def _table1_claims() -> tuple[Claim, ...]:
    claims: list[Claim] = []
    for protocol in PROTOCOLS:
        name = _NAMES[protocol]
        claims.append(
            Claim.in_band(
                F_BANDS[protocol],
                id=f"F-{protocol}",
                statement=f"{name}'s short-term fairness index among 8 {name} flows at low loss.",
                paper_value=TABLE1_PAPER["F"][protocol],
                how="Jain's index of the 8 flows' rates per measured RTT (base + mean queueing "
                "delay), averaged over [50 s, 200 s) (the base-RTT reading is in the analysis)",
                measure=_value(f"f-{protocol}", "f_measured", "per measured RTT"),
            )
        )
    for row, p in (("CoV 2%", 0.02), ("CoV 20%", 0.2)):
        for protocol in PROTOCOLS:
            paper = float(TABLE1_PAPER[row][protocol])
            shared = TFRC_COV_ABOUT_2_AT_20 if (protocol, p) == ("tfrc", 0.2) else None
            claims.append(
                Claim(
                    id=f"cov{p * 100:g}-{protocol}",
                    statement=f"{_NAMES[protocol]}'s CoV_time at {p * 100:g}% Bernoulli loss.",
                    paper_value=TABLE1_PAPER[row][protocol],
                    how="CoV of the per-RTT (100 ms) packet counts over [20 s, 200 s), one flow "
                    "alone",
                    tolerance="within 20% of the paper's value",
                    accept=(0.8 * paper, 1.2 * paper),
                    band=shared,
                    measure=_value(_cov_label(protocol, p), "cov"),
                    robust_to_quick=protocol in ("tear",) and p == 0.02,
                )
            )
    d_accept = {"tcp": (0.0, 3.0), "gaimd": (3.0, 7.0), "tfrc": (3.0, 8.0), "tear": (3.0, 8.0)}
    for protocol in PROTOCOLS:
        claims.append(
            Claim(
                id=f"D-{protocol}",
                statement=f"{_NAMES[protocol]}'s responsiveness: RTTs to halve its rate under "
                "one loss indication per RTT.",
                paper_value=TABLE1_PAPER["D (RTTs)"][protocol],
                how="periodic 1% loss, then one drop per 100 ms (periodic_time) from RTT 1000: "
                "RTTs until the per-RTT rate is at most half its mean over the 100 RTTs before",
                tolerance=f"in [{d_accept[protocol][0]:g}, {d_accept[protocol][1]:g}] RTTs",
                accept=d_accept[protocol],
                measure=_value(f"d-{protocol}", "d"),
                unit="RTTs",
                robust_to_quick=protocol == "tcp",
            )
        )
    i_accept = {
        "tcp": (0.8, 1.2),
        "gaimd": (0.25, 0.37),
        "tfrc": (0.15, 0.29),
        "tear": (0.04, 0.1),
    }
    for protocol in PROTOCOLS:
        claims.append(
            Claim(
                id=f"I-{protocol}",
                statement=f"{_NAMES[protocol]}'s aggressiveness: increase of its rate per RTT "
                "once losses stop.",
                paper_value=TABLE1_PAPER["I (pkts/RTT per RTT)"][protocol],
                how="periodic 2% loss, none from RTT 1000: the fastest 10-RTT increase of the "
                "per-RTT rate in the 60 RTTs after, before it reaches 80% of the link",
                tolerance=f"in [{i_accept[protocol][0]:g}, {i_accept[protocol][1]:g}] "
                "(TFRC: the with-discounting value, ours discounts)",
                accept=i_accept[protocol],
                measure=_value(f"i-{protocol}", "i"),
                unit="packets/RTT per RTT",
            )
        )
    claims.extend(_table1_variant_claims(i_accept))
    claims.append(
        Claim.in_band(
            TFRC_RATE_NEAR_0_AT_20,
            id="tfrc-rate-near-0-at-20%",
            statement="At high loss TFRC's sending rate drops to almost zero (next to TCP's).",
            paper_value="~0",
            how="TFRC's mean rate / TCP's mean rate, each alone at 20% Bernoulli loss",
            measure=_ratio((_cov_label("tfrc", 0.2), "rate"), (_cov_label("tcp", 0.2), "rate")),
        )
    )
    claims.append(
        Claim.in_band(
            TEAR_FAR_ABOVE_TCP_AT_20,
            id="tear-rate-too-high-at-20%",
            statement="At high loss TEAR's sending rate is too high compared with TCP's.",
            paper_value="far above TCP",
            how="TEAR's mean rate / TCP's mean rate, each alone at 20% Bernoulli loss",
            measure=_ratio((_cov_label("tear", 0.2), "rate"), (_cov_label("tcp", 0.2), "rate")),
            robust_to_quick=True,
        )
    )
    return tuple(claims)


def _table1_variant_claims(i_accept: Mapping[str, tuple[float, float]]) -> list[Claim]:
    """Table I's claims on the variant runs: the evidence the failing cells' reasons cite."""
    claims = [
        Claim.in_band(
            F_BANDS["tcp"],
            id=f"F-tcp-{label.removeprefix('f-tcp-')}",
            statement=f"A variant, evidence for F-tcp: 8 TCP flows' fairness index with {what} "
            "(a value the paper does not give).",
            paper_value=TABLE1_PAPER["F"]["tcp"],
            how="as F-tcp, on runs with only that value changed",
            measure=_value(label, "f_measured", "per measured RTT"),
        )
        for label, what, _keys, _changes in F_TCP_VARIANTS
    ]
    claims.append(
        Claim(
            id="cov2-gaimd-sack",
            statement="A variant, evidence for cov2-gaimd: GAIMD's CoV_time at 2% Bernoulli "
            "loss with SACK recovery instead of the paper's Reno.",
            paper_value=TABLE1_PAPER["CoV 2%"]["gaimd"],
            how="as cov2-gaimd, GAIMD with recovery = sack",
            tolerance="within 20% of the paper's value",
            accept=(
                0.8 * float(TABLE1_PAPER["CoV 2%"]["gaimd"]),
                1.2 * float(TABLE1_PAPER["CoV 2%"]["gaimd"]),
            ),
            measure=_value(_cov_label("gaimd-sack", 0.02), "cov"),
        )
    )
    claims.append(
        Claim(
            id="I-gaimd-sack",
            statement="A variant, evidence for I-gaimd: GAIMD's increase per RTT once losses "
            "stop, with SACK recovery instead of the paper's Reno.",
            paper_value=TABLE1_PAPER["I (pkts/RTT per RTT)"]["gaimd"],
            how="as I-gaimd, GAIMD with recovery = sack",
            tolerance=f"in [{i_accept['gaimd'][0]:g}, {i_accept['gaimd'][1]:g}]",
            accept=i_accept["gaimd"],
            measure=_value("i-gaimd-sack", "i"),
            unit="packets/RTT per RTT",
        )
    )
    claims.append(
        Claim(
            id="I-tfrc-no-discounting",
            statement="A variant, evidence for I-tfrc: TFRC's increase per RTT once losses stop, "
            "without history discounting (the paper's 0.12; 0.22 with it).",
            paper_value="0.12",
            how="as I-tfrc, TFRC with discount_threshold = none",
            tolerance="in [0.05, 0.19] (the with-discounting band's width around 0.12)",
            accept=(0.05, 0.19),
            measure=_value("i-tfrc-nodisc", "i"),
            unit="packets/RTT per RTT",
        )
    )
    return claims


TABLE1 = Experiment(
    id="yang2001/table1",
    title="Table I: fairness, smoothness, responsiveness and aggressiveness of TCP, GAIMD, "
    "TFRC, TEAR",
    setup="F: 8 flows of one protocol on the 2.5 Mb/s, 50-packet DropTail bottleneck (Figs. "
    "12-14). CoV_time: one flow alone behind Bernoulli loss (Fig. 6's grid; GAIMD with SACK "
    "recovery and RFC 5348 TFRC as variants). D: periodic 1% loss, then one drop per RTT "
    "(time-periodic) from RTT 1000. I: periodic 2% loss, none from RTT 1000. 200 s runs.",
    kind="sweep",
    scenarios=(_SINGLE, _MULTI),
    cells=_table1_cells(),
    full=Plan(seeds=(1, 2, 3, 4, 5)),
    quick=Plan(seeds=(1,)),
    metrics=("fairness_index", "cov_time", "responsiveness", "aggressiveness"),
    claims=_table1_claims(),
    analyze=lambda runs, plan: _table1_analyze(runs, plan),
    plot=_table1_plot,
)


# ---------------------------------------------------------------------------------------------
# Fig. 6: CoV_time under Bernoulli loss (Table I's runs)


def _fig06_plot(analysis: Analysis, path: Any) -> Any:
    fig = Figure(figsize=(5, 3.4))
    ax = fig.subplots()
    x = [p * 100 for p in FIG06_LOSSES]
    for protocol in (*PROTOCOLS, "gaimd-sack"):
        y = [float(np.mean(analysis[_cov_label(protocol, p)]["cov"])) for p in FIG06_LOSSES]
        ax.plot(x, y, marker="o", ms=3, label=_NAMES[protocol])
    ax.set(xlabel="loss rate (%)", ylabel="CoV_time", title="yang2001 Fig. 6: Bernoulli loss")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    return path


def _cov_at(protocol: str, p: float) -> tuple[str, str]:
    return (_cov_label(protocol, p), "cov")


def _tear_extreme(worst: str) -> Callable[[Analysis], Measurement]:
    def measure(analysis: Analysis) -> Measurement:
        values = np.array([analysis[_cov_label("tear", p)]["cov"] for p in FIG06_LOSSES])
        per_seed = values.max(axis=0) if worst == "max" else values.min(axis=0)
        return measure_seeds(per_seed, f"{worst} over 0.5%-20%")

    return measure


def _fig06_claims() -> tuple[Claim, ...]:
    at1 = {"tcp": 0.51, "gaimd": 0.3, "tfrc": 0.23, "tear": 0.22}
    claims = [
        Claim(
            id=f"cov1-{protocol}",
            statement=f"{_NAMES[protocol]}'s CoV_time at 1% Bernoulli loss.",
            paper_value=f"{value:g}",
            how="CoV of per-RTT packet counts, one flow alone, [20 s, 200 s)",
            tolerance="within 20%",
            accept=(0.8 * value, 1.2 * value),
            measure=_value(_cov_label(protocol, 0.01), "cov"),
        )
        for protocol, value in at1.items()
    ]
    claims += [
        Claim(
            id="cov1-gaimd-sack",
            statement="GAIMD's CoV_time at 1% loss, here with SACK recovery (a variant: the "
            "paper states Reno).",
            paper_value="0.3",
            how="as cov1-gaimd, GAIMD on ns-2 Sack1 recovery",
            tolerance="within 20%",
            accept=(0.24, 0.36),
            measure=_value(_cov_label("gaimd-sack", 0.01), "cov"),
        ),
        Claim(
            id="gaimd-equals-tcp-at-8%",
            statement="GAIMD's CoV_time equals TCP's by 8% loss.",
            paper_value="equal",
            how="abs(CoV_GAIMD - CoV_TCP) / CoV_TCP at 8%",
            tolerance="at most 0.1",
            accept=(0.0, 0.1),
            measure=lambda a: measure_seeds(
                np.abs(a[_cov_label("gaimd", 0.08)]["cov"] - a[_cov_label("tcp", 0.08)]["cov"])
                / a[_cov_label("tcp", 0.08)]["cov"]
            ),
        ),
        Claim(
            id="tfrc-below-aimd-to-4%",
            statement="TFRC's CoV_time stays below TCP's and GAIMD's up to 4% loss.",
            paper_value="below",
            how="max over 0.5%-4% of CoV_TFRC - min(CoV_TCP, CoV_GAIMD), per seed",
            tolerance="below 0",
            accept=(-_INF, 0.0),
            strict=(False, True),
            measure=lambda a: measure_seeds(
                np.max(
                    [
                        a[_cov_label("tfrc", p)]["cov"]
                        - np.minimum(
                            a[_cov_label("tcp", p)]["cov"], a[_cov_label("gaimd", p)]["cov"]
                        )
                        for p in (0.005, 0.01, 0.02, 0.04)
                    ],
                    axis=0,
                )
            ),
            robust_to_quick=True,
        ),
        Claim(
            id="tfrc-above-aimd-from-15%",
            statement="From 15% loss TFRC's CoV_time is above TCP's and GAIMD's.",
            paper_value="above",
            how="min over 15% and 20% of CoV_TFRC - max(CoV_TCP, CoV_GAIMD), per seed",
            tolerance="above 0",
            accept=(0.0, _INF),
            strict=(True, False),
            measure=lambda a: measure_seeds(
                np.min(
                    [
                        a[_cov_label("tfrc", p)]["cov"]
                        - np.maximum(
                            a[_cov_label("tcp", p)]["cov"], a[_cov_label("gaimd", p)]["cov"]
                        )
                        for p in (0.15, 0.2)
                    ],
                    axis=0,
                )
            ),
        ),
        Claim.in_band(
            TFRC_COV_ABOUT_2_AT_20,
            id="tfrc-about-2-at-20%",
            statement="TFRC's CoV_time is about 2 at 20% loss.",
            paper_value="~2",
            how="CoV_time of TFRC at 20%",
            measure=_value(_cov_label("tfrc", 0.2), "cov"),
        ),
        Claim(
            id="aimd-about-1.6-at-20%",
            statement="AIMD's (TCP's) CoV_time is about 1.6 at 20% loss.",
            paper_value="~1.6",
            how="CoV_time of TCP at 20%",
            tolerance="in [1.3, 1.9]",
            accept=(1.3, 1.9),
            measure=_value(_cov_label("tcp", 0.2), "cov"),
        ),
        Claim(
            id="tear-at-most-0.4",
            statement="TEAR's CoV_time stays between 0.2 and 0.4 at every loss rate (upper end).",
            paper_value="0.2-0.4",
            how="the largest TEAR CoV_time over 0.5%-20%, per seed",
            tolerance="at most 0.45",
            accept=(0.0, 0.45),
            measure=_tear_extreme("max"),
            robust_to_quick=True,
        ),
        Claim(
            id="tear-at-least-0.2",
            statement="TEAR's CoV_time stays between 0.2 and 0.4 at every loss rate (lower end).",
            paper_value="0.2-0.4",
            how="the smallest TEAR CoV_time over 0.5%-20%, per seed",
            tolerance="at least 0.15",
            accept=(0.15, _INF),
            measure=_tear_extreme("min"),
        ),
    ]
    return tuple(claims)


FIG06 = Experiment(
    id="yang2001/fig06",
    title="Fig. 6: CoV_time of the four protocols under Bernoulli loss 0.5%-20%",
    setup="One flow alone behind Bernoulli loss on the bottleneck (Table I's runs); GAIMD with "
    "SACK recovery as a variant. CoV of the per-RTT (100 ms) packet counts over [20 s, 200 s).",
    kind="sweep",
    scenarios=(_SINGLE,),
    cells=tuple(c for c in TABLE1.cells if c[0].startswith("cov-")),
    full=TABLE1.full,
    quick=TABLE1.quick,
    metrics=("cov_time",),
    claims=_fig06_claims(),
    analyze=lambda runs, plan: _cells_analysis(runs, _single_analysis),
    plot=_fig06_plot,
    runs_of="yang2001/table1",
)


# ---------------------------------------------------------------------------------------------
# Figs. 12-14: 8 flows of one protocol (Table I's F runs)


def _fairness_plot(title: str) -> Callable[[Analysis, Any], Any]:
    def plot(analysis: Analysis, path: Any) -> Any:
        fig = Figure(figsize=(6, 3.2))
        ax = fig.subplots()
        for protocol in PROTOCOLS:
            a = analysis.get(f"f-{protocol}")
            if a is None:
                continue
            k = int(a["k"])
            t = a["trace_t"][::k][: len(a["f_trace"])] / _RTT_S
            ax.plot(t, _smooth(a["f_trace"], 10), lw=0.7, label=_NAMES[protocol])
        ax.set(xlabel="time (RTTs)", ylabel="fairness index (10-RTT mean)", ylim=(0, 1.05),
               title=title)  # fmt: skip
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(path, dpi=90)
        return path

    return plot


def _fig12_claims() -> tuple[Claim, ...]:
    # Table I's bands: the same runs, the same quantity and the same statement (GAIMD's was
    # [0.85, 0.95] here against Table I's [0.8, 1] for the same 0.9).
    paper = {"gaimd": "~0.9", "tfrc": "~1", "tear": "~1"}
    return tuple(
        Claim.in_band(
            F_BANDS[protocol],
            id=f"F-{protocol}",
            statement=f"8 {_NAMES[protocol]} flows: fairness index {paper[protocol]}.",
            paper_value=paper[protocol],
            how="mean Jain index per measured RTT over [50 s, 200 s)",
            measure=_value(f"f-{protocol}", "f_measured", "per measured RTT"),
            robust_to_quick=protocol == "tfrc",
        )
        for protocol in ("gaimd", "tfrc", "tear")
    )


FIG12_14 = Experiment(
    id="yang2001/fig12-14",
    title="Figs. 12-14: fairness index among 8 flows of one protocol",
    setup="8 flows of one protocol on the 2.5 Mb/s, 50-packet DropTail bottleneck, starts "
    "uniform in 0-10 s, 200 s, measured over [50 s, 200 s) (Table I's F runs).",
    kind="sweep",
    scenarios=(_MULTI,),
    cells=tuple(c for c in TABLE1.cells if c[0] in {f"f-{p}" for p in PROTOCOLS}),
    full=TABLE1.full,
    quick=TABLE1.quick,
    metrics=("fairness_index",),
    claims=_fig12_claims(),
    analyze=lambda runs, plan: {
        label: _table1_analyze({label: data}, plan)[label] for label, data in runs.items()
    },
    plot=_fairness_plot("yang2001 Figs. 12-14: 8 flows of one protocol"),
    runs_of="yang2001/table1",
)


# ---------------------------------------------------------------------------------------------
# Figs. 3-5: one flow of each protocol under periodic 5%, Bernoulli 5% and Bernoulli 20%

_FIG03_LOSSES = (("per5", "periodic 5%", _periodic(0.05)), ("bern5", "Bernoulli 5%",
                 _bernoulli(0.05)), ("bern20", "Bernoulli 20%", _bernoulli(0.2)))  # fmt: skip


def _fig03_plot(analysis: Analysis, path: Any) -> Any:
    fig = Figure(figsize=(9, 3))
    axes = fig.subplots(1, 3, sharey=False)
    for ax, (key, title, _model) in zip(axes, _FIG03_LOSSES, strict=True):
        for protocol in PROTOCOLS:
            a = analysis[f"{key}-{protocol}"]
            sel = (a["trace_t"] >= 100.0) & (a["trace_t"] < 110.0)
            ax.plot(a["trace_t"][sel] / _RTT_S, a["trace"][sel], lw=0.8, label=_NAMES[protocol])
        ax.set(xlabel="time (RTTs)", title=title)
    axes[0].set_ylabel("sending rate (packets/RTT)")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    return path


def _fig03_claims() -> tuple[Claim, ...]:
    claims = [
        Claim(
            id=f"smoother-at-{key}",
            statement=f"TFRC and TEAR are smoother than TCP and GAIMD at {title} loss.",
            paper_value="smoother",
            how="max(CoV_TFRC, CoV_TEAR) - min(CoV_TCP, CoV_GAIMD), per seed",
            tolerance="below 0",
            accept=(-_INF, 0.0),
            strict=(False, True),
            measure=_difference(
                [(f"{key}-tfrc", "cov"), (f"{key}-tear", "cov")],
                [(f"{key}-tcp", "cov"), (f"{key}-gaimd", "cov")],
                "max-min",
            ),
            robust_to_quick=True,
        )
        for key, title, _model in _FIG03_LOSSES[:2]
    ]
    claims += [
        Claim.in_band(
            TFRC_RATE_NEAR_0_AT_20,
            id="tfrc-near-0-at-20%",
            statement="At 20% loss TFRC's rate is near 0.",
            paper_value="near 0 (below TCP's)",
            how="TFRC's mean rate / TCP's, each alone at Bernoulli 20%",
            measure=_ratio(("bern20-tfrc", "rate"), ("bern20-tcp", "rate")),
        ),
        Claim.in_band(
            TEAR_FAR_ABOVE_TCP_AT_20,
            id="tear-far-above-tcp-at-20%",
            statement="At 20% loss TEAR's rate is far above TCP's.",
            paper_value="far above",
            how="TEAR's mean rate / TCP's at Bernoulli 20%",
            measure=_ratio(("bern20-tear", "rate"), ("bern20-tcp", "rate")),
            robust_to_quick=True,
        ),
    ]
    return tuple(claims)


FIG03_05 = Experiment(
    id="yang2001/fig03-05",
    title="Figs. 3-5: sending rates of one flow of each protocol under periodic 5%, Bernoulli "
    "5% and Bernoulli 20% loss",
    setup="One flow alone behind the loss model at the bottleneck, 200 s; per-RTT (100 ms) "
    "samples over [20 s, 200 s).",
    kind="sweep",
    scenarios=(_SINGLE,),
    cells=tuple(
        _single_cell(f"{key}-{protocol}", protocol, _loss(model))
        for key, _title, model in _FIG03_LOSSES
        for protocol in PROTOCOLS
    ),
    full=Plan(seeds=(1, 2, 3, 4, 5)),
    quick=Plan(seeds=(1,)),
    metrics=("cov_time", "send_rate"),
    claims=_fig03_claims(),
    analyze=lambda runs, plan: _cells_analysis(runs, _single_analysis),
    plot=_fig03_plot,
)


# ---------------------------------------------------------------------------------------------
# Figs. 16-18, 23-26: a step change of the loss process at RTT 1000, one flow alone


def _step_plot(title: str) -> Callable[[Analysis, Any], Any]:
    def plot(analysis: Analysis, path: Any) -> Any:
        fig = Figure(figsize=(6, 3.2))
        ax = fig.subplots()
        for protocol in PROTOCOLS:
            a = analysis[protocol]
            sel = (a["trace_t"] >= 80.0) & (a["trace_t"] < 160.0)
            ax.plot(a["trace_t"][sel] / _RTT_S, _smooth(a["trace"], 5)[sel], lw=0.8,
                    label=_NAMES[protocol])  # fmt: skip
        ax.axvline(_ONSET_S / _RTT_S, color="k", lw=0.6)
        ax.set(xlabel="time (RTTs)", ylabel="sending rate (packets/RTT, 5-RTT mean)",
               title=title)  # fmt: skip
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(path, dpi=90)
        return path

    return plot


def _order(
    key: str, first: Sequence[str], then: Sequence[str], statement: str, robust: bool = False
) -> Claim:
    """``first`` reach the event (``key``: RTTs after the step) no later than ``then``."""
    return Claim(
        id=f"{'+'.join(first)}-before-{'+'.join(then)}-{key}",
        statement=statement,
        paper_value="ordered as stated",
        how=f"max of {key} (RTTs after the step) over {', '.join(first)} minus min over "
        f"{', '.join(then)}, per seed",
        tolerance="at most 0",
        accept=(-_INF, 0.0),
        measure=_difference([(p, key) for p in first], [(p, key) for p in then], "max-min"),
        unit="RTTs",
        robust_to_quick=robust,
    )


def _step_experiment(
    fig: str,
    title: str,
    before: Mapping[str, Any],
    after: Mapping[str, Any],
    claims: tuple[Claim, ...],
    setup: str,
) -> Experiment:
    return Experiment(
        id=f"yang2001/{fig}",
        title=title,
        setup="One flow alone; " + setup + " Rise time: RTTs after the step until the 10-RTT "
        "mean rate reaches 90% of its mean over [170 s, 200 s); fall time: until the per-RTT "
        "rate is at most 5% of its mean over the 500 RTTs before (never: the RTTs left in the run, "
        "a lower bound); D as in Table I.",
        kind="sweep",
        scenarios=(_SINGLE,),
        cells=tuple(
            _single_cell(protocol, protocol, _step(before, after)) for protocol in PROTOCOLS
        ),
        full=Plan(seeds=(1, 2, 3, 4, 5)),
        quick=Plan(seeds=(1,)),
        metrics=("send_rate", "responsiveness"),
        claims=claims,
        analyze=lambda runs, plan: _cells_analysis(runs, _single_analysis),
        plot=_step_plot(f"yang2001 {title.split(':')[0]}"),
    )


def _overshoot(protocol: str, paper: str, accept: tuple[float, float], text: str) -> Claim:
    return Claim(
        id=f"{protocol}-dip",
        statement=text,
        paper_value=paper,
        how=f"{_NAMES[protocol]}'s lowest 10-RTT mean rate in the 300 RTTs after the step / its "
        "mean over [170 s, 200 s)",
        tolerance=f"in [{accept[0]:g}, {accept[1]:g}]",
        accept=accept,
        measure=_value(protocol, "dip_ratio"),
    )


_LATER = ("gaimd", "tfrc", "tear")

FIG16 = _step_experiment(
    "fig16",
    "Fig. 16: sending rates, periodic loss 1% -> 4% at RTT 1000",
    _periodic(0.01),
    _periodic(0.04),
    (
        _order("d", ["tcp"], _LATER, "TCP is the fastest to respond (halve its rate).", True),
        _order("d", ["gaimd"], ["tfrc", "tear"], "GAIMD follows; TFRC and TEAR are slower."),
        _overshoot("tcp", "overshoots to ~0", (0.0, 0.5), "TCP overreacts, dropping to about 0."),
    ),
    "periodic loss 1% until RTT 1000, then 4%.",
)

FIG17 = _step_experiment(
    "fig17",
    "Fig. 17: sending rates, Bernoulli loss 0.5% -> 100% at RTT 1000",
    _bernoulli(0.005),
    _bernoulli(1.0),
    (
        _order("fall05", ["tcp"], ["gaimd"], "TCP reaches ~0 first, then GAIMD.", True),
        _order("fall05", ["gaimd"], ["tfrc"], "GAIMD reaches ~0 before TFRC."),
        _order("fall05", ["tfrc"], ["tear"], "TEAR is the slowest to respond.", True),
        Claim(
            id="tear-very-slow",
            statement="TEAR's response is very slow.",
            paper_value="very slow (far behind TFRC)",
            how="TEAR's fall time (RTTs to 5% of its rate) / TFRC's",
            tolerance="at least 2",
            accept=(2.0, _INF),
            measure=_ratio(("tear", "fall05"), ("tfrc", "fall05")),
        ),
    ),
    "Bernoulli loss 0.5% until RTT 1000, then 100% (every data packet dropped).",
)

FIG18 = _step_experiment(
    "fig18",
    "Fig. 18: sending rates, Bernoulli loss 1% -> 4% at RTT 1000",
    _bernoulli(0.01),
    _bernoulli(0.04),
    (
        _order("d", ["tcp"], _LATER, "TCP is the fastest to respond.", True),
        Claim(
            id="others-do-not-overreact",
            statement="GAIMD, TFRC and TEAR do not overreact.",
            paper_value="no overreaction",
            how="the smallest over GAIMD, TFRC, TEAR of (lowest 10-RTT mean rate in the 300 RTTs "
            "after the step / mean over [170 s, 200 s)), per seed",
            tolerance="at least 0.5",
            accept=(0.5, _INF),
            measure=lambda a: measure_seeds(np.min([a[p]["dip_ratio"] for p in _LATER], axis=0)),
        ),
        Claim(
            id="tfrc-tear-do-not-overreact",
            statement="A part, evidence for others-do-not-overreact: TFRC and TEAR do not "
            "overreact (GAIMD left out).",
            paper_value="no overreaction",
            how="as others-do-not-overreact, the smallest over TFRC and TEAR only",
            tolerance="at least 0.5",
            accept=(0.5, _INF),
            measure=lambda a: measure_seeds(
                np.min([a[p]["dip_ratio"] for p in ("tfrc", "tear")], axis=0)
            ),
        ),
        Claim(
            id="tcp-overreacts",
            statement="TCP drops below its new state (overreacts), unlike the others.",
            paper_value="TCP below the others",
            how="TCP's dip ratio minus the smallest dip ratio of the others, per seed",
            tolerance="below 0",
            accept=(-_INF, 0.0),
            strict=(False, True),
            measure=lambda a: measure_seeds(
                a["tcp"]["dip_ratio"] - np.min([a[p]["dip_ratio"] for p in _LATER], axis=0)
            ),
        ),
    ),
    "Bernoulli loss 1% until RTT 1000, then 4%.",
)

FIG23 = _step_experiment(
    "fig23",
    "Fig. 23: sending rates, periodic loss 4% -> 1% at RTT 1000",
    _periodic(0.04),
    _periodic(0.01),
    (
        _order("rise90", ["tcp"], _LATER, "TCP is the fastest to increase.", True),
        _order("rise90", ["gaimd", "tfrc"], ["tear"], "TEAR is the slowest."),
        Claim(
            id="gaimd-like-tfrc",
            statement="GAIMD and TFRC (with history discounting) increase about as fast.",
            paper_value="GAIMD ~ TFRC",
            how="GAIMD's rise time / TFRC's",
            tolerance="in [0.5, 2]",
            accept=(0.5, 2.0),
            measure=_ratio(("gaimd", "rise90"), ("tfrc", "rise90")),
        ),
    ),
    "periodic loss 4% until RTT 1000, then 1%.",
)

FIG24 = _step_experiment(
    "fig24",
    "Fig. 24: sending rates, periodic loss 3% -> 2% at RTT 1000",
    _periodic(0.03),
    _periodic(0.02),
    (
        Claim(
            id="tfrc-like-tear",
            statement="History discounting is not triggered: TFRC increases about as fast as TEAR.",
            paper_value="TFRC ~ TEAR",
            how="TFRC's rise time / TEAR's",
            tolerance="in [0.5, 2]",
            accept=(0.5, 2.0),
            measure=_ratio(("tfrc", "rise90"), ("tear", "rise90")),
        ),
    ),
    "periodic loss 3% until RTT 1000, then 2%.",
)

FIG25 = _step_experiment(
    "fig25",
    "Fig. 25: sending rates, Bernoulli loss 10% -> 0% at RTT 1000",
    _bernoulli(0.1),
    _bernoulli(0.0),
    (
        _order("rise90", ["tcp"], ["gaimd"], "TCP increases faster than GAIMD.", True),
        _order("rise90", ["gaimd"], ["tfrc"], "GAIMD increases faster than TFRC."),
        Claim(
            id="tear-much-slower",
            statement="TEAR is much slower than TFRC.",
            paper_value="TFRC >> TEAR",
            how="TEAR's rise time / TFRC's",
            tolerance="at least 2",
            accept=(2.0, _INF),
            measure=_ratio(("tear", "rise90"), ("tfrc", "rise90")),
        ),
    ),
    "Bernoulli loss 10% until RTT 1000, then none (the flow grows to the link's capacity).",
)

FIG26 = _step_experiment(
    "fig26",
    "Fig. 26: sending rates, Bernoulli loss 4% -> 1% at RTT 1000",
    _bernoulli(0.04),
    _bernoulli(0.01),
    (
        _order("rise90", ["tcp"], _LATER, "TCP is the fastest to increase.", True),
        _order("rise90", ["gaimd"], ["tfrc"], "GAIMD is faster than TFRC."),
        _order("rise90", ["tfrc"], ["tear"], "TFRC is faster than TEAR."),
    ),
    "Bernoulli loss 4% until RTT 1000, then 1%.",
)


# ---------------------------------------------------------------------------------------------
# Figs. 7-11, 19-22, 27-29: flows sharing the bottleneck


def _refill(t: np.ndarray, q: np.ndarray, level: float) -> float:
    """RTTs after the onset until the queue is back at ``level``.

    The queue (10-RTT mean) must first have fallen below it (0 when it never falls below).
    """
    after = t >= _ONSET_S - 1e-9
    below = np.flatnonzero(after & (q < level))
    if below.size == 0:
        return 0.0
    back = np.flatnonzero((np.arange(len(q)) > below[0]) & (q >= level))
    return float((t[back[0]] - _ONSET_S) / _RTT_S) if back.size else float("nan")


def _cycle_s(t: np.ndarray, drops: np.ndarray, lo: float, hi: float) -> float:
    """Mean time between overflow episodes (runs of bins with drops, gaps under 1 s merged)."""
    sel = (t >= lo) & (t < hi)
    when = t[sel][drops[sel] > 0]
    if when.size == 0:
        return float("nan")
    episodes = 1 + int(np.count_nonzero(np.diff(when) > 1.0))
    return (hi - lo) / episodes


def _multi_analysis(data: Any) -> dict[str, Any]:
    """Per seed: fairness before/after, the observed flow's rates and the queue's measures."""
    times, counts, names = _series(data)
    qt, queue = _queue(data)
    ls = data.link_series
    ls = ls[ls["link"] == "bottleneck"]
    seeds = sorted(ls["seed"].unique())
    observed = names.index("study0") if "study0" in names else names.index("study")
    keys = ("f_before", "f_late", "f_dip", "f_before_base", "rate_before", "rate_after",
            "min_ratio", "rise90", "q_before", "q_min", "amplitude", "cycle_s", "dip_time",
            "dip_depth", "refill")  # fmt: skip
    n = counts.shape[0]
    out: dict[str, Any] = {key: np.full(n, np.nan) for key in keys}
    for s in range(n):
        k = _measured_rtt_bins(data, s, 50.0, 100.0)
        present = counts[s]
        f = _fairness(present, data.bin_s, k)
        ft = times[::k][: len(f)]
        out["f_before"][s] = float(np.nanmean(f[(ft >= 50.0) & (ft < 100.0)]))
        out["f_late"][s] = float(np.nanmean(f[(ft >= 170.0) & (ft < 200.0)]))
        fb = _fairness(present, data.bin_s, 5)
        fbt = times[::5][: len(fb)]
        out["f_before_base"][s] = float(np.nanmean(fb[(fbt >= 50.0) & (fbt < 100.0)]))
        fs = _smooth(np.nan_to_num(f, nan=1.0), 10)
        dip = (ft >= 100.0) & (ft < 130.0)
        out["f_dip"][s] = float(np.min(fs[dip])) if dip.any() else np.nan
        t, r = _per_rtt(times, present[observed], data.bin_s)
        before = _mean_between(t, r, 50.0, 100.0)
        after = _mean_between(t, r, 170.0, 200.0)
        out["rate_before"][s], out["rate_after"][s] = before, after
        window = (t >= 100.0) & (t < 130.0)
        out["min_ratio"][s] = float(np.min(_smooth(r, 10)[window]) / before) if before else np.nan
        out["rise90"][s] = _first_time(t, _smooth(r, 10) >= 0.9 * after, _ONSET_S)
        rt, rq = _per_rtt(qt, queue[s], data.bin_s)
        rq = rq / 5.0  # per-RTT sums of 5 bins' mean queues -> the mean over the RTT
        q_before = _mean_between(rt, rq, 50.0, 100.0)
        out["q_before"][s] = q_before
        steady = (rt >= 50.0) & (rt < 200.0)
        out["q_min"][s] = float(np.min(rq[steady]))
        qs = queue[s][(qt >= 50.0) & (qt < 200.0)]
        out["amplitude"][s] = float(np.percentile(qs, 95) - np.percentile(qs, 5))
        drops = ls[ls["seed"] == seeds[s]].set_index("time_s").reindex(qt)["drops"].to_numpy(float)
        out["cycle_s"][s] = _cycle_s(qt, drops, 50.0, 200.0)
        win = (rt >= 100.0) & (rt < 150.0)
        i = int(np.argmin(np.where(win, rq, np.inf)))
        out["dip_time"][s] = float((rt[i] - _ONSET_S) / _RTT_S)
        out["dip_depth"][s] = float(rq[i] / q_before) if q_before > 0 else np.nan
        out["refill"][s] = _refill(rt, _smooth(rq, 10), 0.9 * q_before)
        if s == 0:
            out["trace_t"], out["trace"] = t, r
            out["queue_t"], out["queue"] = rt, rq
            out["f_t"], out["f_trace"] = ft, f
    return out


def _multi_plot(title: str, what: str) -> Callable[[Analysis, Any], Any]:
    """Seed 1's traces per protocol: ``what`` = "rate", "queue" or "fairness"."""

    def plot(analysis: Analysis, path: Any) -> Any:
        fig = Figure(figsize=(6, 3.2))
        ax = fig.subplots()
        for protocol in PROTOCOLS:
            a = analysis[protocol]
            if what == "queue":
                x, y, label = a["queue_t"], a["queue"], "queue length (packets)"
            elif what == "fairness":
                x, y = a["f_t"], _smooth(np.nan_to_num(a["f_trace"], nan=1.0), 10)
                label = "fairness index (10-RTT mean)"
            else:
                x, y, label = a["trace_t"], _smooth(a["trace"], 5), "packets/RTT (5-RTT mean)"
            ax.plot(x / _RTT_S, y, lw=0.6, label=_NAMES[protocol])
        ax.set(xlabel="time (RTTs)", ylabel=label, title=title)
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(path, dpi=90)
        return path

    return plot


def _multi_experiment(
    fig: str,
    title: str,
    setup: str,
    flows: Callable[[str], list[dict[str, Any]]],
    claims: tuple[Claim, ...],
    what: str,
    unstated: tuple[Unstated, ...] = (),
) -> Experiment:
    return Experiment(
        id=f"yang2001/{fig}",
        title=title,
        setup=setup + " 2.5 Mb/s, 50-packet DropTail bottleneck, base RTT 100 ms, 200 s; "
        "fairness per measured RTT (base + mean queueing delay over [50 s, 100 s)).",
        kind="sweep",
        scenarios=(_MULTI,),
        cells=tuple(_multi_cell(p, flows(p)) for p in PROTOCOLS),
        full=Plan(seeds=(1, 2, 3)),
        quick=Plan(seeds=(1,)),
        metrics=("fairness_index", "queue_length", "send_rate"),
        claims=claims,
        analyze=lambda runs, plan: _cells_analysis(runs, _multi_analysis),
        plot=_multi_plot(f"yang2001 {title.split(':')[0]}", what),
        unstated=unstated,
    )


def _per_protocol(
    key: str,
    accept: Mapping[str, tuple[float, float]],
    paper: Mapping[str, str],
    statement: str,
    how: str,
    unit: str = "",
    robust: Sequence[str] = (),
) -> tuple[Claim, ...]:
    return tuple(
        Claim(
            id=f"{key}-{p}",
            statement=statement.format(name=_NAMES[p]),
            paper_value=paper[p],
            how=how,
            tolerance=f"in [{accept[p][0]:g}, {accept[p][1]:g}]",
            accept=accept[p],
            measure=_value(p, key),
            unit=unit,
            robust_to_quick=p in robust,
        )
        for p in accept
    )


FIG07_08 = _multi_experiment(
    "fig07-08",
    "Figs. 7-8: queue length with one flow alone on the link",
    "One flow alone (no loss model: drops are DropTail overflows; BDP ~31 packets + 50 buffer).",
    lambda p: [_group(p, "study", 1, start={"uniform": ["0s", "1s"]})],
    (
        Claim(
            id="gaimd-cycles-smaller",
            statement="GAIMD's queue cycles are smaller than TCP's.",
            paper_value="smaller",
            how="(95th - 5th percentile of the queue) GAIMD / TCP over [50 s, 200 s)",
            tolerance="below 1",
            accept=(0.0, 1.0),
            strict=(False, True),
            measure=_ratio(("gaimd", "amplitude"), ("tcp", "amplitude")),
            robust_to_quick=True,
        ),
        Claim(
            id="tfrc-never-drains",
            statement="Under TFRC the queue never drains.",
            paper_value="never empty",
            how="the lowest per-RTT mean queue over [50 s, 200 s), TFRC",
            tolerance="at least 1 packet",
            accept=(1.0, _INF),
            measure=_value("tfrc", "q_min"),
            unit="packets",
        ),
        Claim(
            id="tfrc-longer-cycle",
            statement="TFRC's queue cycle is longer than TCP's.",
            paper_value="longer",
            how="mean time between overflow episodes, TFRC / TCP",
            tolerance="above 1",
            accept=(1.0, _INF),
            strict=(True, False),
            measure=_ratio(("tfrc", "cycle_s"), ("tcp", "cycle_s")),
        ),
        Claim(
            id="tear-cycle-twice-tcp",
            statement="TEAR's queue cycle is about twice TCP's.",
            paper_value="~2x",
            how="mean time between overflow episodes, TEAR / TCP",
            tolerance="in [1.5, 3]",
            accept=(1.5, 3.0),
            measure=_ratio(("tear", "cycle_s"), ("tcp", "cycle_s")),
        ),
    ),
    "queue",
    (OVERHEAD, ACCESS_RATE),
)

FIG09_11 = _multi_experiment(
    "fig09-11",
    "Figs. 9-11: fairness index, one flow of a protocol + 7 TCP",
    "One flow of the protocol under study and 7 TCP Reno flows, starts uniform in 0-10 s.",
    lambda p: [_group(p, "study", 1), _group("tcp", "other", 7)],
    _per_protocol(
        "f_before",
        dict.fromkeys(PROTOCOLS, (0.6, 0.8)),
        dict.fromkeys(PROTOCOLS, "fluctuates around 0.7"),
        "With one {name} flow and 7 TCP flows the fairness index is about 0.7.",
        "mean Jain index of the 8 flows per measured RTT over [50 s, 100 s)",
        # None is robust: with the paper's randomization TCP's seed 1 gives 0.77, in the band,
        # while the full plan's mean is 0.82, above it.
    ),
    "fairness",
    (OVERHEAD, ACCESS_RATE),
)

FIG19 = _multi_experiment(
    "fig19",
    "Fig. 19: queue length, one flow + 7 TCP, 8 more TCP start at RTT 1000",
    "One flow of the protocol under study and 7 TCP flows; 8 more TCP flows start at 100 s.",
    lambda p: [
        _group(p, "study", 1),
        _group("tcp", "other", 7),
        _group("tcp", "join", 8, start=f"{_ONSET_S:g}s"),
    ],
    (
        *_per_protocol(
            "dip_time",
            dict.fromkeys(PROTOCOLS, (10.0, 50.0)),
            dict.fromkeys(PROTOCOLS, "a large dip ~25 RTTs after"),
            "With {name} under study, the queue dips about 25 RTTs after 8 TCP flows join.",
            "RTTs from 100 s to the lowest per-RTT mean queue in [100 s, 150 s)",
            "RTTs",
        ),
        Claim(
            id="dip-is-large",
            statement="The dip is large.",
            paper_value="large",
            how="lowest per-RTT mean queue in [100 s, 150 s) / mean over [50 s, 100 s), the "
            "largest over the four protocols",
            tolerance="at most 0.5",
            accept=(0.0, 0.5),
            measure=lambda a: measure_seeds(np.max([a[p]["dip_depth"] for p in PROTOCOLS], axis=0)),
        ),
    ),
    "queue",
)

FIG20_22 = _multi_experiment(
    "fig20-22",
    "Figs. 20-22: sending rate, queue and fairness, 8 -> 16 flows of one protocol",
    "8 flows of one protocol, 8 more of it start at 100 s; the observed flow is one of the first "
    "8.",
    lambda p: [_group(p, "study", 8), _group(p, "join", 8, start=f"{_ONSET_S:g}s")],
    (
        Claim(
            id="tcp-gaimd-overshoot-to-0",
            statement="TCP and GAIMD respond fast and overshoot to about 0.",
            paper_value="to ~0",
            how="the larger over TCP and GAIMD of the observed flow's lowest 10-RTT mean rate in "
            "[100 s, 130 s) / its mean over [50 s, 100 s)",
            tolerance="at most 0.2",
            accept=(0.0, 0.2),
            measure=lambda a: measure_seeds(
                np.maximum(a["tcp"]["min_ratio"], a["gaimd"]["min_ratio"])
            ),
        ),
        Claim(
            id="tfrc-tear-fall-gradually",
            statement="TFRC and TEAR reduce gradually to the new state (no overshoot to 0).",
            paper_value="gradual",
            how="the smaller over TFRC and TEAR of the same ratio",
            tolerance="at least 0.3",
            accept=(0.3, _INF),
            measure=lambda a: measure_seeds(
                np.minimum(a["tfrc"]["min_ratio"], a["tear"]["min_ratio"])
            ),
            # Not robust: with the paper's randomization seed 1 gives 0.23 (below 0.3), the
            # full plan 0.34 +- 0.05 (inconclusive on 12 seeds).
        ),
        *_per_protocol(
            "f_dip",
            {"tfrc": (0.3, 0.7), "tear": (0.3, 0.7)},
            {"tfrc": "drops to ~0.5", "tear": "drops to ~0.5"},
            "{name}'s fairness index drops to about 0.5 right after the 8 new flows start.",
            "lowest 10-RTT mean Jain index of the 16 flows in [100 s, 130 s)",
        ),
        *_per_protocol(
            "f_late",
            {"tfrc": (0.9, 1.0), "tear": (0.9, 1.0)},
            {"tfrc": "recovers to ~1", "tear": "recovers to ~1"},
            "{name}'s fairness index recovers to about 1.",
            "mean Jain index of the 16 flows per measured RTT over [170 s, 200 s)",
        ),
    ),
    "fairness",
)

FIG27 = _multi_experiment(
    "fig27",
    "Fig. 27: sending rate, one flow + 15 TCP, 8 TCP stop at RTT 1000",
    "One flow of the protocol under study and 15 TCP flows; 8 of the TCP flows stop at 100 s.",
    lambda p: [
        _group(p, "study", 1),
        _group("tcp", "other", 7),
        _group("tcp", "leave", 8, stop=f"{_ONSET_S:g}s"),
    ],
    (
        Claim(
            id="tfrc-tear-later-than-tcp-gaimd",
            statement="TCP and GAIMD take the freed bandwidth at once, TFRC and TEAR much later.",
            paper_value="TFRC, TEAR much later",
            how="min(rise time of TFRC, TEAR) - max(rise time of TCP, GAIMD), rise time = RTTs "
            "until the observed flow's 10-RTT mean rate reaches 90% of its mean over [170 s, "
            "200 s)",
            tolerance="above 0",
            accept=(0.0, _INF),
            strict=(True, False),
            measure=_difference(
                [("tfrc", "rise90"), ("tear", "rise90")],
                [("tcp", "rise90"), ("gaimd", "rise90")],
                "min-max",
            ),
            unit="RTTs",
        ),
    ),
    "rate",
)

FIG28_29 = _multi_experiment(
    "fig28-29",
    "Figs. 28-29: sending rate and queue, 16 -> 8 flows of one protocol",
    "16 flows of one protocol; 8 of them stop at 100 s. Refill: RTTs until the 10-RTT mean "
    "queue is back at 90% of its mean over [50 s, 100 s) after falling below it.",
    lambda p: [_group(p, "study", 8), _group(p, "leave", 8, stop=f"{_ONSET_S:g}s")],
    (
        *_per_protocol(
            "refill",
            {
                "tcp": (10.0, 40.0),
                "gaimd": (21.0, 84.0),
                "tfrc": (22.0, 90.0),
                "tear": (100.0, _INF),
            },
            {"tcp": "20 RTTs", "gaimd": "42 RTTs", "tfrc": "45 RTTs", "tear": "> 200 RTTs"},
            "After 8 of 16 {name} flows stop, the queue is refilled after the paper's time.",
            "RTTs from 100 s until the queue is refilled (see setup)",
            "RTTs",
        ),
        _order("refill", ["tcp"], ["gaimd", "tfrc", "tear"], "TCP refills the queue first."),
    ),
    "queue",
)

# ---------------------------------------------------------------------------------------------
# Fig. 15: long-term fairness CoV_lf among 32 flows of one protocol under Bernoulli loss

_FIG15_LOSSES = (0.005, 0.02, 0.17)
"""Fig. 15's loss rates used here: its two ends (0.5%, 17%) and 2%."""
_FIG15_PROTOCOLS = ("tcp-sack", "gaimd", "tfrc", "tear")
"""Fig. 15's TCP is SACK (the catalogue); the others as elsewhere."""


def _fig15_label(protocol: str, p: float) -> str:
    return f"{protocol}-{p * 100:g}%"


def _fig15_analysis(data: Any) -> dict[str, Any]:
    """Per seed: CoV_lf over 15 s and over 60 s windows (mean over the windows)."""
    times, counts, _ = _series(data)
    lo = float(data.runs["window_from_s"].iloc[0])
    hi = float(data.runs["window_to_s"].iloc[0])
    n = counts.shape[0]
    out: dict[str, Any] = {"cov15": np.full(n, np.nan), "cov60": np.full(n, np.nan)}
    for s in range(n):
        for key, width in (("cov15", 15.0), ("cov60", 60.0)):
            values = []
            start = lo
            while start + width <= hi + 1e-9:
                sel = (times >= start - 1e-9) & (times < start + width - 1e-9)
                values.append(metrics.cov_lf(counts[s][:, sel].sum(axis=1) / width))
                start += width
            out[key][s] = float(np.mean(values)) if values else np.nan
    return out


def _fig15_plot(analysis: Analysis, path: Any) -> Any:
    fig = Figure(figsize=(5, 3.4))
    ax = fig.subplots()
    x = [p * 100 for p in _FIG15_LOSSES]
    for protocol in _FIG15_PROTOCOLS:
        y15 = [float(np.mean(analysis[_fig15_label(protocol, p)]["cov15"])) for p in _FIG15_LOSSES]
        ax.plot(x, y15, marker="o", ms=3, label=f"{protocol.upper()} 15 s")
    ax.set(xlabel="loss rate (%)", ylabel="CoV_lf", xscale="log",
           title="yang2001 Fig. 15: 32 flows, Bernoulli loss")  # fmt: skip
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    return path


def _fig15_half(analysis: Analysis) -> Measurement:
    """CoV_lf over 60 s / over 15 s at 0.5%, averaged over the four protocols, per seed."""
    ratios = [
        analysis[_fig15_label(p, 0.005)]["cov60"] / analysis[_fig15_label(p, 0.005)]["cov15"]
        for p in _FIG15_PROTOCOLS
    ]
    return measure_seeds(np.mean(ratios, axis=0), "mean over the four protocols")


FIG15 = Experiment(
    id="yang2001/fig15",
    title="Fig. 15: long-term fairness CoV_lf of 32 flows of one protocol under Bernoulli loss",
    setup="32 flows of one protocol (TCP = SACK), Bernoulli loss on the bottleneck for every "
    "flow. The paper's link would be far too slow for 32 flows at 0.5% loss (they would want "
    "~17 times its capacity), so the bottleneck is 100 Mb/s here and the loss model, not the "
    "queue, sets the loss rate. CoV_lf of the flows' mean rates over 15 s and 60 s windows, "
    "140 s runs measured from 20 s (two 60 s windows).",
    kind="sweep",
    scenarios=(_MULTI,),
    cells=tuple(
        (
            _fig15_label(protocol, p),
            _MULTI,
            {
                "flows": [_group(protocol, "study", 32)],
                "topology.hosts": 32,
                "topology.bottleneck.rate": "100Mbps",
                "duration": "140s",
                "measure.from": "20s",
                "losses": [{"link": "bottleneck", "kind": "bernoulli", "p": p}],
            },
        )
        for protocol in _FIG15_PROTOCOLS
        for p in _FIG15_LOSSES
    ),
    full=Plan(seeds=(1, 2, 3)),
    quick=Plan(seeds=(1,), changes={"duration": "80s"}),
    metrics=("cov_lf",),
    claims=(
        Claim(
            id="tcp-less-fair-than-tfrc-tear-at-2%",
            statement="The ordering of Fig. 6 at low loss: TCP's CoV_lf above TFRC's and TEAR's.",
            paper_value="same ordering as Fig. 6",
            how="CoV_lf(TCP) - max(CoV_lf(TFRC), CoV_lf(TEAR)) at 2%, 15 s windows",
            tolerance="above 0",
            accept=(0.0, _INF),
            strict=(True, False),
            measure=_difference(
                [(_fig15_label("tcp-sack", 0.02), "cov15")],
                [(_fig15_label("tfrc", 0.02), "cov15"), (_fig15_label("tear", 0.02), "cov15")],
                "min-max",
            ),
        ),
        Claim(
            id="tfrc-above-aimd-at-17%",
            statement="The ordering of Fig. 6 at high loss: TFRC's CoV_lf above TCP's and GAIMD's.",
            paper_value="same ordering as Fig. 6",
            how="CoV_lf(TFRC) - max(CoV_lf(TCP), CoV_lf(GAIMD)) at 17%, 15 s windows",
            tolerance="above 0",
            accept=(0.0, _INF),
            strict=(True, False),
            measure=_difference(
                [(_fig15_label("tfrc", 0.17), "cov15")],
                [(_fig15_label("tcp-sack", 0.17), "cov15"), (_fig15_label("gaimd", 0.17), "cov15")],
                "min-max",
            ),
        ),
        Claim(
            id="60s-halves-cov-at-low-loss",
            statement="60 s windows give about half the CoV_lf of 15 s windows at low loss.",
            paper_value="about half",
            how="CoV_lf over 60 s / over 15 s at 0.5%, mean over the four protocols",
            tolerance="in [0.35, 0.65]",
            accept=(0.35, 0.65),
            measure=_fig15_half,
        ),
    ),
    analyze=lambda runs, plan: _cells_analysis(runs, _fig15_analysis),
    plot=_fig15_plot,
)

_GAIMD_RENO = because(
    "GAIMD on Reno recovery (the paper's) times out after two losses in a window and regrows at "
    "0.31 packets/RTT: with SACK recovery its CoV_time at 1% is Fig. 6's",
    "yang2001/fig06 cov1-gaimd-sack",
)
_TFRC_20 = not_established(
    "at 20% Bernoulli loss TFRC alone sends about as fast as TCP alone, where the paper's TFRC "
    "nearly stops; a separate ns-2.35 run of single.toml at 20% (tfrclab crosscheck, not a "
    "registered referee) gave TFRC more than TCP Reno's throughput too"
)
_KNOWN: dict[str, Reason] = {
    "table1/cov2-gaimd": not_established(
        "with SACK recovery GAIMD's CoV_time at 2% is lower but above the band too "
        "(cov2-gaimd-sack), so Reno's timeouts are only part of it; the paper's 0.26 is the "
        "analytic eq. 6, which has no timeouts at all"
    ),
    "fig06/cov1-gaimd": _GAIMD_RENO,
    "fig18/others-do-not-overreact": because(
        "GAIMD is the flow that overreacts: without it TFRC and TEAR stay above half their new "
        "rate",
        "yang2001/fig18 tfrc-tear-do-not-overreact",
    ),
    "fig09-11/f_before-gaimd": not_established(
        "one GAIMD flow among 7 TCP is less fair than the paper's; no GAIMD variant was run "
        "with the 7 TCP flows"
    ),
    "table1/I-gaimd": not_established(
        "GAIMD's fastest 10-RTT increase after the loss stops exceeds alpha = 0.31 with SACK "
        "recovery as much as with Reno's (I-gaimd-sack), so it is not Reno's timeouts"
    ),
    "table1/cov20-tfrc": _TFRC_20,
    "fig06/tfrc-about-2-at-20%": _TFRC_20,
    "fig06/tfrc-above-aimd-from-15%": _TFRC_20,
    "table1/tfrc-rate-near-0-at-20%": _TFRC_20,
    "fig03-05/tfrc-near-0-at-20%": _TFRC_20,
    "table1/D-tfrc": not_established(
        "TFRC takes about twice the paper's 5-6 RTTs to halve, counted from the onset of one "
        "loss per RTT (the paper's value is analytic: five or six short loss intervals)"
    ),
    "table1/I-tfrc": because(
        "history discounting accelerates the increase: without it TFRC's fastest 10-RTT increase "
        "is lower by about a third, though still above the band around the paper's 0.12 for "
        "that case, so our measure (the fastest window, the paper's is a bound for the start of "
        "the increase) is high either way",
        "yang2001/table1 I-tfrc-no-discounting",
    ),
    "table1/F-tcp": because(
        "with the paper's randomization (every TCP's overhead U(0, 3.2 ms)) 8 Reno flows per "
        "measured RTT are fairer than the paper's 0.7; F hinges on values the paper does not "
        "give: a larger overhead or slower access links put it in the band",
        "yang2001/table1 F-tcp-overhead10ms",
        "yang2001/table1 F-tcp-access10Mbps",
    ),
    "fig09-11/f_before-tcp": because(
        "per measured RTT 8 TCP flows with the paper's randomization are fairer than 0.7, as in "
        "Table I's F; a larger overhead or slower access links, values the paper does not give, "
        "put Table I's F in the band",
        "yang2001/table1 F-tcp-overhead10ms",
        "yang2001/table1 F-tcp-access10Mbps",
    ),
}
"""Why a claim fails, by ``<figure>/<claim id>``, with the registered claims that show it
(:mod:`tfrclab.reproduce.evidence`); only the reason shown for a failing claim, never its
verdict."""


def _with_known(experiment: Experiment) -> Experiment:
    """``experiment`` with the known deviations of :data:`_KNOWN` on its claims."""
    figure = experiment.id.split("/", 1)[1]
    claims = tuple(
        replace(c, known_deviation=_KNOWN[f"{figure}/{c.id}"])
        if f"{figure}/{c.id}" in _KNOWN
        else c
        for c in experiment.claims
    )
    return replace(experiment, claims=claims)


EXPERIMENTS: tuple[Experiment, ...] = tuple(
    _with_known(e)
    for e in (
        FIG03_05,
        FIG06,
        FIG07_08,
        FIG09_11,
        FIG12_14,
        FIG15,
        FIG16,
        FIG17,
        FIG18,
        FIG19,
        FIG20_22,
        FIG23,
        FIG24,
        FIG25,
        FIG26,
        FIG27,
        FIG28_29,
        TABLE1,
    )
)
"""Every yang2001 simulation experiment of the catalogue, and Table I."""
