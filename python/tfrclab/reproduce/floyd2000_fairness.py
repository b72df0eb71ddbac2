"""floyd2000's fairness and smoothness experiments: Figs. 5, 6, 7, 8 and 11-13.

- Fig. 5 (§3.5.1): loss events per packet against the loss probability under Bernoulli loss,
  for flows at the equation's rate, twice and half it, measured in netsim.
- Figs. 6-7 (§4.1): n SACK + n TFRC flows over a grid of bottleneck rates and flow counts,
  DropTail and RED: TCP's throughput normalized to its fair share, the link's utilization, and
  the per-flow spread at 15 Mb/s.
- Fig. 8 (§4.1): four TCP and four TFRC flows of the 15 Mb/s, 32-flow runs in 0.15 s bins.
- Figs. 11-13 (§4.1.3): one TCP and one TFRC connection among 50-150 Pareto ON/OFF sources:
  the loss rate, their equivalence ratio and coefficients of variation over timescales.

Each claim's tolerance is written here, beside the paper's value, before any run, and is not
changed to fit a result; a claim the model does not meet fails, with the measured value and,
where understood, the cause in ``known_deviation``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from tfrclab import metrics, models
from tfrclab.reproduce.claims import Analysis, Claim, Measurement, measure_seeds, worst_of
from tfrclab.reproduce.evidence import because, not_established
from tfrclab.reproduce.registry import Experiment, Plan

__all__ = [
    "EXPERIMENTS",
    "FIG05_P",
    "FIG06_FLOWS",
    "FIG06_RATES_MBPS",
    "FIG07_FLOWS",
    "FIG11_SOURCES",
    "FIG11_TIMESCALES_S",
]

# ---------------------------------------------------------------------------------------------
# shared helpers


def _save(figure: Figure, path: Any) -> Any:
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=90)
    return path


def _seeds(data: Any) -> list[int]:
    return sorted(int(s) for s in data.runs["seed"].unique())


def _kind_series(data: Any, seed: int, column: str = "sent_packets") -> dict[str, np.ndarray]:
    """Per-bin ``column`` of every flow over the measurement window, stacked by flow kind.

    Rows of each array are the kind's flows in the order the scenario lists them.
    """
    runs = data.runs[data.runs["seed"] == seed]
    lo, hi = float(runs["window_from_s"].iloc[0]), float(runs["window_to_s"].iloc[0])
    series = data.flow_series
    rows = series[
        (series["seed"] == seed) & (series["time_s"] >= lo - 1e-9) & (series["time_s"] < hi - 1e-9)
    ]
    table = rows.pivot(index="flow", columns="time_s", values=column)
    out: dict[str, np.ndarray] = {}
    for kind in runs["kind"].unique():
        names = [n for n in runs.loc[runs["kind"] == kind, "name"] if n in table.index]
        out[str(kind)] = table.loc[names].to_numpy(float)
    return out


def _bottleneck(data: Any, seed: int, column: str) -> float:
    links = data.links
    row = links[(links["seed"] == seed) & (links["name"] == "bottleneck")]
    return float(row[column].iloc[0])


def _per_seed(key: str, note: str = "") -> Callable[[Analysis], Measurement]:
    def measure(analysis: Analysis) -> Measurement:
        return measure_seeds(analysis[key], note)

    return measure


def _errorbar(axes: Any, x: Any, per_seed: np.ndarray, **style: Any) -> None:
    """Seed means with their 95% CI of each column of ``per_seed`` (seeds x points)."""
    m = [measure_seeds(per_seed[:, k]) for k in range(per_seed.shape[1])]
    axes.errorbar(
        x, [v.mean for v in m], yerr=[np.nan_to_num(v.half) for v in m], capsize=3, **style
    )


# ---------------------------------------------------------------------------------------------
# fig05: loss-event fraction against loss probability (§3.5.1)

FIG05_P = (0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3)
"""The loss probabilities of Fig. 5's grid (the paper's axis is not readable in our copy)."""

_FIG05_FACTORS = (("rate1x", 1.0), ("rate2x", 2.0), ("rate05x", 0.5))
"""The three flows of fig05.toml and their rate as a multiple of the equation's W(p)."""

_FIG05_EVENTS_PER_S = 2.0
"""The equation-rate flow's expected loss events per second: each cell's RTT is W(p) p / 2 s,
so a run of D seconds gives about 2 D events at every p (the precision is the same along the
grid)."""

_FIG05_PACKET_BYTES = 1000


def _fig05_label(p: float) -> str:
    return f"p{p:g}"


def _fig05_cells() -> tuple[tuple[str, str, dict[str, Any]], ...]:
    cells: list[tuple[str, str, dict[str, Any]]] = []
    for p in FIG05_P:
        window = float(models.response_window(p))
        rtt_s = window * p / _FIG05_EVENTS_PER_S
        changes: dict[str, Any] = {"topology.access.rtt": f"{rtt_s * 1e6:.0f}us"}
        for k, (_name, factor) in enumerate(_FIG05_FACTORS):
            bits_per_s = factor * window * _FIG05_PACKET_BYTES * 8 / rtt_s
            changes[f"flows.{k}.rate"] = f"{bits_per_s:.0f}bps"
            changes[f"losses.{k}.p"] = p
        cells.append((_fig05_label(p), "floyd2000/fig05.toml", changes))
    return tuple(cells)


def _fig05_analyze(data: Any, _plan: Plan) -> Analysis:
    out: dict[str, Any] = {"p": np.asarray(FIG05_P)}
    seeds = _seeds(next(iter(data.values())))
    for name, factor in _FIG05_FACTORS:
        event = np.full((len(seeds), len(FIG05_P)), np.nan)
        loss = np.full_like(event, np.nan)
        for j, p in enumerate(FIG05_P):
            runs = data[_fig05_label(p)].runs
            for i, seed in enumerate(seeds):
                row = runs[(runs["seed"] == seed) & (runs["name"] == name)]
                loss[i, j] = float(row["packet_loss_rate"].iloc[0])
                event[i, j] = float(row["loss_event_rate"].iloc[0])
        out[f"{name}/loss"] = loss
        out[f"{name}/event"] = event
        out[f"{name}/difference"] = 1.0 - event / loss
        window = np.asarray(models.response_window(np.asarray(FIG05_P))) * factor
        formula = np.asarray(models.loss_event_fraction(np.asarray(FIG05_P), window))
        out[f"{name}/formula_difference"] = 1.0 - formula / np.asarray(FIG05_P)
        out[f"{name}/rule_difference"] = _fig05_rule_difference(np.asarray(FIG05_P), window)
    return out


def _fig05_rule_difference(p: np.ndarray, window: np.ndarray) -> np.ndarray:
    """1 - p_event / p that TFRC's loss-event rule gives a CBR flow of ``window`` packets/RTT.

    A new event opens at the first loss more than one RTT after the previous event's first
    loss, so each event covers the k = ceil(W) - 1 packets after its first loss: packets
    between event starts average k + 1/p, p_event = 1 / (1/p + k), the difference k p / (1 + k p).
    """
    k = np.maximum(np.ceil(window) - 1.0, 0.0)
    return np.asarray(k * p / (1.0 + k * p), dtype=float)


def _fig05_rule_gap(analysis: Analysis) -> Measurement:
    """The largest gap between the simulated difference and the rule's, at W(p) and 2 W(p)."""
    names = ("rate1x", "rate2x")
    gaps = np.concatenate(
        [analysis[f"{n}/difference"] - analysis[f"{n}/rule_difference"] for n in names], axis=1
    )
    labels = [f"{n}, {label}" for n in names for label in _FIG05_LABELS]
    return worst_of(gaps, labels, badness=lambda m: abs(m))


_FIG05_LABELS = [f"p = {p:g}" for p in FIG05_P]


def _fig05_largest(name: str) -> Callable[[Analysis], Measurement]:
    def measure(analysis: Analysis) -> Measurement:
        return worst_of(analysis[f"{name}/difference"], _FIG05_LABELS, badness=lambda m: abs(m))

    return measure


def _fig05_ends(analysis: Analysis) -> Measurement:
    diff = analysis["rate1x/difference"][:, [0, len(FIG05_P) - 1]]
    return worst_of(diff, [_FIG05_LABELS[0], _FIG05_LABELS[-1]], badness=lambda m: abs(m))


def _fig05_formula(analysis: Analysis) -> Measurement:
    values = np.concatenate([analysis[f"{n}/formula_difference"] for n, _f in _FIG05_FACTORS])
    k = int(np.argmax(np.abs(values)))
    name = _FIG05_FACTORS[k // len(FIG05_P)][0]
    return Measurement(
        float(values[k]), float("nan"), 1, f"largest at {name}, {_FIG05_LABELS[k % len(FIG05_P)]}"
    )


_FIG05_TOLERANCE = 0.12
"""The paper's "at most 10%", read off a curve, plus 2 percentage points."""


_FIG05_SLIDING = because(
    "TFRC's loss-event rule (RFC 5348 §5.2, netsim's monitor) opens a new event at the first "
    "loss more than one RTT after the previous event's first loss, so an event covers the k = "
    "ceil(W) - 1 packets after its first loss: p_event = 1 / (1/p + k), a difference of about "
    "(W - 1) p, twice the (W - 1) p / 2 of the paper's per-RTT expression (dashed in the "
    "figure), which itself exceeds the bound at 2 W(p); the simulated differences follow the "
    "rule's",
    "floyd2000/fig05 rule-explains-difference",
    "floyd2000/fig05 paper-formula",
)
"""Why the simulated difference exceeds the paper's bound at W(p) and 2 W(p)."""


def _fig05_claims() -> tuple[Claim, ...]:
    claims: list[Claim] = []
    for name, factor, what in (
        ("rate1x", 1.0, "at the equation's rate W(p)"),
        ("rate2x", 2.0, "at twice the equation's rate"),
        ("rate05x", 0.5, "at half the equation's rate"),
    ):
        claims.append(
            Claim(
                id=f"difference-{name}",
                statement=f"For a flow {what}, the loss-event fraction differs from the loss "
                "probability by at most 10%.",
                paper_value="at most 10% (moderate loss), small at high and low loss",
                how=f"1 - (loss events per packet) / (packet loss rate) of a CBR flow at "
                f"{factor:g} W(p) packets per RTT under Bernoulli loss, per seed at each p "
                "of the grid; the p whose seed mean is largest",
                tolerance=f"at most {_FIG05_TOLERANCE:g} at every p",
                accept=(0.0, _FIG05_TOLERANCE),
                measure=_fig05_largest(name),
                # --quick counts ~1000 events per point on 2 seeds: neither flow's worst point
                # is decided (W(p) / 2's 0.06 has an interval of +-0.15 there).
                robust_to_quick=False,
                known_deviation=None if factor < 1.0 else _FIG05_SLIDING,
            )
        )
    claims.append(
        Claim(
            id="small-at-ends",
            statement="For high and low loss rates the difference between the packet loss "
            "rate and the loss-event rate is small.",
            paper_value="small",
            how="the equation-rate flow's difference at the grid's lowest (0.2%) and highest "
            "(30%) p; the larger",
            tolerance="at most 0.05 (half the moderate-loss bound)",
            accept=(0.0, 0.05),
            measure=_fig05_ends,
            robust_to_quick=False,
            known_deviation=because(
                "at p = 0.2% the equation's W(p) is 27 packets per RTT and TFRC's loss-event "
                "rule gives about (W - 1) p = 5% (the paper's per-RTT expression: 2.5%); the "
                "simulated differences follow the rule's",
                "floyd2000/fig05 rule-explains-difference",
            ),
        )
    )
    claims.append(
        Claim(
            id="rule-explains-difference",
            statement="Evidence for the fails above (not a statement of the paper): the "
            "simulated difference is the one TFRC's loss-event rule gives, 1 - 1 / (1 + k p) "
            "with k = ceil(W) - 1.",
            paper_value="(not in the paper)",
            how="simulated difference minus the rule's at W(p) and 2 W(p), per seed at each p "
            "of the grid; the p and flow whose seed mean is farthest from 0",
            tolerance="within 0.02 of 0 at every p",
            accept=(-0.02, 0.02),
            measure=_fig05_rule_gap,
        )
    )
    claims.append(
        Claim(
            id="paper-formula",
            statement="The same bound holds for the paper's own expression "
            "p_event = (1 - (1 - p)^W) / W with W from eq. 2.",
            paper_value="at most 10%",
            how="1 - p_event / p from models.loss_event_fraction at W(p), 2 W(p) and W(p) / 2 "
            "over the grid; the largest (a model check, no simulation)",
            tolerance=f"at most {_FIG05_TOLERANCE:g}",
            accept=(0.0, _FIG05_TOLERANCE),
            measure=_fig05_formula,
            robust_to_quick=True,
            known_deviation=not_established(
                "a model check: the expression exceeds p where W < 1 (at W(p) from p = 20%, at "
                "W(p) / 2 from 10%), where it does not apply (below a packet per RTT every loss "
                "is its own event), and above W = 1 it exceeds the bound at 2 W(p); why the "
                "paper's figure stays within 10% is not known"
            ),
        )
    )
    return tuple(claims)


def _fig05_plot(analysis: Analysis, path: Any) -> Any:
    figure = Figure(figsize=(10, 4.2), layout="constrained")
    left, right = figure.subplots(1, 2)
    p = analysis["p"]
    for k, (name, factor) in enumerate(_FIG05_FACTORS):
        label = "at W(p)" if factor == 1 else f"at {factor:g} W(p)"
        _errorbar(left, p, analysis[f"{name}/event"], marker="o", label=label, color=f"C{k}")
        _errorbar(right, p, analysis[f"{name}/difference"], marker="o", label=label, color=f"C{k}")
        right.plot(p, analysis[f"{name}/formula_difference"], ls="--", color=f"C{k}", lw=1)
    left.plot(p, p, color="0.5", ls=":", label="loss-event fraction = p")
    right.plot([], [], ls="--", color="0.4", lw=1, label="paper's expression")
    right.axhline(0.10, color="0.6", lw=0.8)
    left.set_xscale("log")
    left.set_yscale("log")
    left.set_ylabel("Loss-event fraction (loss events per packet)")
    left.set_title("Fig. 5: loss events per packet under Bernoulli loss")
    right.set_xscale("log")
    right.set_ylabel("1 - loss-event fraction / loss probability")
    right.set_title("Difference (paper: at most 10%)")
    for axes in (left, right):
        axes.set_xlabel("Loss probability p")
        axes.grid(visible=True, alpha=0.3)
        axes.legend(fontsize="small")
    return _save(figure, path)


FIG05 = Experiment(
    id="floyd2000/fig05",
    title="Fig. 5: loss-event fraction against loss probability at W(p), 2 W(p) and W(p) / 2",
    setup="Three constant-rate flows at W(p), 2 W(p) and W(p) / 2 packets per RTT (W from the "
    "equation with t_RTO = 4R, eq. 2), each through its own Bernoulli loss p, for 8 values of "
    "p from 0.2% to 30% (scenario fig05.toml); loss events counted by netsim's monitor "
    "(TFRC's rule: a loss more than one RTT after the previous event's first loss opens a "
    "new one). Each cell's RTT gives the equation-rate flow about 2 loss events per second. "
    "The paper evaluates its expression analytically; its curves are drawn dashed.",
    kind="sweep",
    scenarios=("floyd2000/fig05.toml",),
    cells=_fig05_cells(),
    full=Plan(seeds=(1, 2, 3, 4)),
    quick=Plan(seeds=(1, 2), changes={"duration": "250s"}),
    metrics=("loss_event_rate", "packet_loss_rate"),
    claims=_fig05_claims(),
    analyze=_fig05_analyze,
    plot=_fig05_plot,
    referee_drops=True,
)

# ---------------------------------------------------------------------------------------------
# fig06/fig07: n SACK + n TFRC over bottleneck rates and flow counts (§4.1)

FIG06_RATES_MBPS = (1.5, 5.0, 15.0, 30.0)
"""The bottleneck rates of the grid (Mb/s)."""

FIG06_FLOWS = (2, 8, 32, 128)
"""The total flow counts of the grid (half TCP, half TFRC)."""

FIG07_FLOWS = (2, 4, 8, 16, 32, 64, 128)
"""Fig. 7's columns: total flow counts at 15 Mb/s with RED."""

_FIG06_REFERENCE_MBPS = 15.0
"""The rate at which fig06.toml's queue is given; other rates scale it."""

_SMALL_WINDOW_PACKETS = 1.5
"""A fair share below this many packets per 100 ms RTT is a "very small" TCP window."""

_FIG06_QUEUES = {
    "droptail": ("droptail", 1.0, "DropTail"),
    "red": ("red", 1.0, "RED"),
    "droptail-half": ("droptail", 0.5, "DropTail, half the buffer"),
}
"""Fig. 6's queues by cell-label prefix: (discipline, buffer scale, title). DropTail with half
the chosen buffer shows how much the unstated buffer size matters; the paper's claims are
checked on the first two."""

_FIG06_PAPER_QUEUES = ("droptail", "red")


def _fig06_queue(queue: str, rate_mbps: float, buffer_scale: float = 1.0) -> dict[str, Any]:
    scale = rate_mbps / _FIG06_REFERENCE_MBPS
    limit = max(2, round(250 * scale * buffer_scale))
    if queue == "droptail":
        return {"kind": "droptail", "limit": limit}
    min_th = 25 * scale
    return {
        "kind": "red",
        "preset": "ns2_2000",
        "limit": limit,
        "min_th": min_th,
        "max_th": 5 * min_th,
        "max_p": 0.1,
        "gentle": True,
    }


def _fig06_changes(queue: str, rate_mbps: float, flows: int) -> dict[str, Any]:
    discipline, buffer_scale, _title = _FIG06_QUEUES[queue]
    return {
        "topology.bottleneck.rate": f"{rate_mbps:g}Mbps",
        "topology.bottleneck.queue": _fig06_queue(discipline, rate_mbps, buffer_scale),
        "topology.hosts": flows,
        "flows.0.count": flows // 2,
        "flows.1.count": flows // 2,
    }


def _fig06_label(queue: str, rate_mbps: float, flows: int) -> str:
    return f"{queue}-{rate_mbps:g}M-{flows}"


def _fig06_grid() -> list[tuple[str, float, int]]:
    return [(q, r, n) for q in _FIG06_QUEUES for r in FIG06_RATES_MBPS for n in FIG06_FLOWS]


def _fig06_cells() -> tuple[tuple[str, str, dict[str, Any]], ...]:
    return tuple(
        (_fig06_label(q, r, n), "floyd2000/fig06.toml", _fig06_changes(q, r, n))
        for q, r, n in _fig06_grid()
    )


def _class_value(data: Any, seed: int, kind: str, column: str) -> float:
    classes = data.classes
    row = classes[(classes["seed"] == seed) & (classes["kind"] == kind)]
    return float(row[column].iloc[0]) if len(row) else float("nan")


def _fig06_analyze(data: Any, _plan: Plan) -> Analysis:
    grid = _fig06_grid()
    seeds = _seeds(data[_fig06_label(*grid[0])])
    tcp = np.full((len(seeds), len(grid)), np.nan)
    utilization = np.full_like(tcp, np.nan)
    for j, (q, r, n) in enumerate(grid):
        cell = data[_fig06_label(q, r, n)]
        for i, seed in enumerate(seeds):
            tcp[i, j] = _class_value(cell, seed, "tcp", "normalized_throughput")
            utilization[i, j] = _bottleneck(cell, seed, "utilization")
    return {"grid": grid, "tcp_normalized": tcp, "utilization": utilization}


def _fig06_columns(grid: Sequence[tuple[str, float, int]], queue: str) -> list[int]:
    return [j for j, (q, _r, _n) in enumerate(grid) if q == queue]


def _fig06_near_one(queue: str) -> Callable[[Analysis], Measurement]:
    def measure(analysis: Analysis) -> Measurement:
        columns = _fig06_columns(analysis["grid"], queue)
        x = analysis["tcp_normalized"][:, columns]
        inside = ((x >= 2 / 3) & (x <= 1.5)).mean(axis=1)
        return measure_seeds(inside, f"fraction of {len(columns)} cells")

    return measure


def _small_window(rate_mbps: float, flows: int) -> bool:
    packets_per_rtt = rate_mbps * 1e6 / flows / 8000 * 0.1
    return packets_per_rtt < _SMALL_WINDOW_PACKETS


def _fig06_small_window(analysis: Analysis) -> Measurement:
    grid = analysis["grid"]
    columns = [
        j for j, (q, r, n) in enumerate(grid) if q in _FIG06_PAPER_QUEUES and _small_window(r, n)
    ]
    x = analysis["tcp_normalized"][:, columns]
    labels = ", ".join(_fig06_label(*grid[j]) for j in columns)
    return measure_seeds(np.nanmean(x, axis=1), f"mean over {labels}")


def _fig06_min_utilization(queues: Sequence[str]) -> Callable[[Analysis], Measurement]:
    def measure(analysis: Analysis) -> Measurement:
        grid = analysis["grid"]
        columns = [j for j, c in enumerate(grid) if c[0] in queues]
        labels = [_fig06_label(*grid[j]) for j in columns]
        return worst_of(analysis["utilization"][:, columns], labels, badness=lambda m: -m)

    return measure


def _fig06_often_99(analysis: Analysis) -> Measurement:
    columns = [j for j, c in enumerate(analysis["grid"]) if c[0] in _FIG06_PAPER_QUEUES]
    x = analysis["utilization"][:, columns]
    return measure_seeds((x > 0.99).mean(axis=1), f"fraction of {x.shape[1]} cells")


def _fig06_plot(analysis: Analysis, path: Any) -> Any:
    figure = Figure(figsize=(13, 4.2), layout="constrained")
    panels = figure.subplots(1, len(_FIG06_QUEUES), sharey=True)
    grid = analysis["grid"]
    means = np.nanmean(analysis["tcp_normalized"], axis=0)
    for axes, queue in zip(panels, _FIG06_QUEUES, strict=True):
        for k, rate in enumerate(FIG06_RATES_MBPS):
            columns = [j for j, (q, r, _n) in enumerate(grid) if q == queue and r == rate]
            flows = [grid[j][2] for j in columns]
            axes.plot(flows, means[columns], marker="o", color=f"C{k}", label=f"{rate:g} Mb/s")
        axes.axhline(1.0, color="0.5", lw=0.8)
        axes.set_xscale("log", base=2)
        axes.set_xlabel("Number of flows (TCP + TFRC)")
        axes.set_title(f"Fig. 6: {_FIG06_QUEUES[queue][2]}")
        axes.grid(visible=True, alpha=0.3)
        axes.legend(fontsize="small", title="link rate")
    panels[0].set_ylabel("Normalized TCP throughput")
    panels[0].set_ylim(0, 2)
    return _save(figure, path)


FIG06 = Experiment(
    id="floyd2000/fig06",
    title="Fig. 6: TCP's throughput normalized to its fair share, competing with TFRC",
    setup="n/2 SACK TCP + n/2 TFRC flows (scenario fig06.toml) for n = 2, 8, 32, 128 at "
    "1.5, 5, 15 and 30 Mb/s, DropTail and RED, the queue scaled with the rate (250 packets "
    "at 15 Mb/s; RED min_th 25, max_th 125, max_p 0.1, gentle at 15 Mb/s), RTTs 80-120 ms, "
    "starts 0-10 s; 90 s, the last 60 s measured; and DropTail with half that buffer, to "
    "show the sensitivity to the buffer the paper does not give. The paper's axes are not legible "
    "in the text we have; this 4 x 4 grid per queue spans 1.5-30 Mb/s and 2-128 flows and "
    "includes the 15 Mb/s column Figs. 7 and 8 come from.",
    kind="sweep",
    scenarios=("floyd2000/fig06.toml",),
    cells=_fig06_cells(),
    full=Plan(seeds=(1, 2, 3)),
    quick=Plan(seeds=(1,), changes={"duration": "40s", "measure.from": "20s"}),
    metrics=("normalized_throughput", "link_utilization"),
    claims=(
        Claim(
            id="droptail-near-one",
            statement="With DropTail, TCP's mean throughput is mostly near its fair share.",
            paper_value="mostly near 1",
            how="per seed, the fraction of the 16 DropTail cells whose mean TCP normalized "
            "throughput (active throughput over fair share) lies in [2/3, 1.5]",
            tolerance="at least 0.75 of the cells",
            accept=(0.75, 1.0),
            measure=_fig06_near_one("droptail"),
            robust_to_quick=False,
        ),
        Claim(
            id="red-near-one",
            statement="With RED, TCP's mean throughput is mostly near its fair share.",
            paper_value="mostly near 1",
            how="per seed, the fraction of the 16 RED cells whose mean TCP normalized "
            "throughput lies in [2/3, 1.5]",
            tolerance="at least 0.75 of the cells",
            accept=(0.75, 1.0),
            measure=_fig06_near_one("red"),
            robust_to_quick=False,
        ),
        Claim(
            id="droptail-half-buffer-near-one",
            statement="With DropTail, TCP's mean throughput is mostly near its fair share "
            "(sensitivity: half the chosen buffer, 125 packets at 15 Mb/s).",
            paper_value="mostly near 1",
            how="as droptail-near-one, on the 16 DropTail cells with half the buffer",
            tolerance="at least 0.75 of the cells",
            accept=(0.75, 1.0),
            measure=_fig06_near_one("droptail-half"),
            robust_to_quick=False,
        ),
        Claim(
            id="small-window-suffers",
            statement="Where TCP's mean window is very small, TCP suffers.",
            paper_value="below its fair share in those cells",
            how=f"mean TCP normalized throughput over the cells whose fair share is below "
            f"{_SMALL_WINDOW_PACKETS:g} packets per 100 ms (both queues), per seed",
            tolerance="at most 0.9",
            accept=(0.0, 0.9),
            measure=_fig06_small_window,
            robust_to_quick=False,
        ),
        Claim(
            id="utilization-above-90",
            statement="The link utilization is always above 90%.",
            paper_value="> 90%",
            how="bottleneck utilization over the measured 60 s, per seed and cell; the cell "
            "with the lowest mean",
            tolerance="at least 0.90",
            accept=(0.90, 1.0),
            measure=_fig06_min_utilization(_FIG06_PAPER_QUEUES),
            # --quick measures 20 s: the worst cell (2 flows) lands within noise of 0.90.
            robust_to_quick=False,
        ),
        Claim(
            id="utilization-above-90-half-buffer",
            statement="The link utilization is always above 90% (sensitivity: DropTail with "
            "half the chosen buffer).",
            paper_value="> 90%",
            how="as utilization-above-90, on the 16 DropTail cells with half the buffer",
            tolerance="at least 0.90",
            accept=(0.90, 1.0),
            measure=_fig06_min_utilization(("droptail-half",)),
            robust_to_quick=False,
        ),
        Claim(
            id="utilization-often-99",
            statement="The link utilization is often above 99%.",
            paper_value="often > 99%",
            how="per seed, the fraction of the 32 DropTail and RED cells with utilization "
            "above 0.99",
            tolerance="at least half the cells",
            accept=(0.5, 1.0),
            measure=_fig06_often_99,
            robust_to_quick=True,
        ),
    ),
    analyze=_fig06_analyze,
    plot=_fig06_plot,
)


def _fig07_cells() -> tuple[tuple[str, str, dict[str, Any]], ...]:
    return tuple(
        (_fig06_label("red", 15.0, n), "floyd2000/fig06.toml", _fig06_changes("red", 15.0, n))
        for n in FIG07_FLOWS
    )


def _fig07_analyze(data: Any, _plan: Plan) -> Analysis:
    labels = [_fig06_label("red", 15.0, n) for n in FIG07_FLOWS]
    seeds = _seeds(data[labels[0]])
    shape = (len(seeds), len(FIG07_FLOWS))
    mean_ratio, tcp_sd, tfrc_sd, spread = (np.full(shape, np.nan) for _ in range(4))
    points: dict[str, list[tuple[int, np.ndarray]]] = {"tcp": [], "tfrc": []}
    for j, label in enumerate(labels):
        runs = data[label].runs
        for i, seed in enumerate(seeds):
            flows = runs[runs["seed"] == seed]
            x = {
                k: flows.loc[flows["kind"] == k, "normalized_throughput"].to_numpy(float)
                for k in ("tcp", "tfrc")
            }
            mean_ratio[i, j] = x["tcp"].mean() / x["tfrc"].mean()
            if x["tcp"].size > 1:
                tcp_sd[i, j] = x["tcp"].std()
                tfrc_sd[i, j] = x["tfrc"].std()
            both = np.concatenate([x["tcp"], x["tfrc"]])
            spread[i, j] = float(metrics.cov(both))
            if i == 0:
                for k in ("tcp", "tfrc"):
                    points[k].append((FIG07_FLOWS[j], x[k]))
    return {
        "mean_ratio": mean_ratio,
        "tcp_sd": tcp_sd,
        "tfrc_sd": tfrc_sd,
        "spread": spread,
        "points": points,
    }


def _fig07_similar_means(analysis: Analysis) -> Measurement:
    return measure_seeds(np.nanmean(analysis["mean_ratio"], axis=1), "mean over the columns")


def _fig07_tcp_more_variable(analysis: Analysis) -> Measurement:
    tcp, tfrc = analysis["tcp_sd"], analysis["tfrc_sd"]
    defined = ~np.isnan(tcp)
    share = np.sum((tcp > tfrc) & defined, axis=1) / np.sum(defined, axis=1)
    return measure_seeds(share, f"fraction of the {int(defined[0].sum())} columns of n >= 4")


def _fig07_spread_grows(analysis: Analysis) -> Measurement:
    spread = analysis["spread"]
    last, first = FIG07_FLOWS.index(128), FIG07_FLOWS.index(4)
    return measure_seeds(spread[:, first] / spread[:, last], "CoV across flows, 4 / 128 flows")


def _fig07_plot(analysis: Analysis, path: Any) -> Any:
    figure = Figure(figsize=(7, 4.2), layout="constrained")
    axes = figure.subplots()
    for k, (kind, marker, offset) in enumerate((("tcp", "x", -0.12), ("tfrc", "o", 0.12))):
        for n, values in analysis["points"][kind]:
            column = FIG07_FLOWS.index(n)
            axes.scatter(
                np.full(values.size, column + offset),
                values,
                marker=marker,
                s=14,
                color=f"C{k}",
                label=("TCP" if kind == "tcp" else "TFRC") if column == 0 else None,
            )
    axes.axhline(1.0, color="0.5", lw=0.8)
    axes.set_xticks(range(len(FIG07_FLOWS)), [str(n) for n in FIG07_FLOWS])
    axes.set_xlabel("Number of flows (TCP + TFRC), 15 Mb/s, RED")
    axes.set_ylabel("Normalized throughput (per flow)")
    axes.set_title("Fig. 7: TCP competing with TFRC, with RED (first seed)")
    axes.grid(visible=True, alpha=0.3)
    axes.legend(fontsize="small")
    return _save(figure, path)


FIG07 = Experiment(
    id="floyd2000/fig07",
    title="Fig. 7: per-flow normalized throughput at 15 Mb/s with RED",
    setup="Fig. 6's 15 Mb/s RED runs (scenario fig06.toml, the same cell changes, so the "
    "points at n = 2, 8, 32, 128 are those of fig06) for n = 2, 4, 8, 16, 32, 64, 128 total "
    "flows, half TCP half TFRC; the last 60 s of 90 s measured; each flow's active throughput "
    "over its fair share. The paper shows one run per column.",
    kind="sweep",
    scenarios=("floyd2000/fig06.toml",),
    cells=_fig07_cells(),
    full=Plan(seeds=(1, 2, 3)),
    quick=Plan(seeds=(1,), changes={"duration": "40s", "measure.from": "20s"}),
    metrics=("normalized_throughput",),
    claims=(
        Claim(
            id="similar-means",
            statement="The mean throughput of TCP and TFRC is rather similar.",
            paper_value="similar means",
            how="mean TCP over mean TFRC normalized throughput per column, averaged over the "
            "7 columns, per seed",
            tolerance="within a factor of 4/3: [0.75, 1.33]",
            accept=(0.75, 1.33),
            measure=_fig07_similar_means,
            robust_to_quick=False,
        ),
        Claim(
            id="tcp-more-variable",
            statement="Typically the TCP flows have higher variance than the TFRC flows.",
            paper_value="TCP's spread above TFRC's in most columns",
            how="per seed, the fraction of the columns with n >= 4 where the standard "
            "deviation of TCP's per-flow normalized throughput exceeds TFRC's",
            tolerance="at least half of the columns",
            accept=(0.5, 1.0),
            measure=_fig07_tcp_more_variable,
            robust_to_quick=False,
        ),
        Claim(
            id="spread-grows-with-flows",
            statement="The variance between flows increases as the bandwidth per flow decreases.",
            paper_value="spread grows with the number of flows",
            how="CoV of all flows' normalized throughput at 4 flows over that at 128 flows, "
            "per seed",
            tolerance="below 1",
            accept=(0.0, 1.0),
            strict=(False, True),
            measure=_fig07_spread_grows,
            robust_to_quick=True,
        ),
    ),
    analyze=_fig07_analyze,
    plot=_fig07_plot,
)

# ---------------------------------------------------------------------------------------------
# fig08: four TCP and four TFRC flows of the 15 Mb/s, 32-flow runs, 0.15 s bins (§4.1)

_FIG08_BIN_S = 0.15
"""Fig. 8's averaging interval: "slightly more than a typical round-trip time"."""

_FIG08_CELLS = (
    ("red", "RED", 1.0),
    ("droptail", "DropTail", 1.0),
    ("droptail-half-buffer", "DropTail, 125-packet buffer", 0.5),
)
"""Fig. 8's two queues, and DropTail with half the chosen buffer (the buffer is not given)."""


def _fig08_cells() -> tuple[tuple[str, str, dict[str, Any]], ...]:
    cells = []
    for label, _title, buffer_scale in _FIG08_CELLS:
        queue = "red" if label == "red" else "droptail"
        changes = {"topology.bottleneck.queue": _fig06_queue(queue, 15.0, buffer_scale)}
        cells.append((label, "floyd2000/fig08.toml", changes))
    return tuple(cells)


def _fig08_analyze(data: Any, _plan: Plan) -> Analysis:
    out: dict[str, Any] = {}
    for label, _title, _scale in _FIG08_CELLS:
        cell = data[label]
        seeds = _seeds(cell)
        ratio = np.full(len(seeds), np.nan)
        drops = np.full(len(seeds), np.nan)
        for i, seed in enumerate(seeds):
            series = _kind_series(cell, seed)
            rates = {k: metrics.send_rate(v, cell.bin_s, _FIG08_BIN_S) for k, v in series.items()}
            cov_tcp = float(np.nanmean(metrics.cov(rates["tcp"])))
            cov_tfrc = float(np.nanmean(metrics.cov(rates["tfrc"])))
            ratio[i] = cov_tfrc / cov_tcp
            drops[i] = _bottleneck(cell, seed, "drop_rate")
            if i == 0:
                out[f"{label}/trace"] = {k: rates[k][:4] * 8000 / 1e6 for k in ("tcp", "tfrc")}
        out[f"{label}/cov_ratio"] = ratio
        out[f"{label}/drop_rate"] = drops
    out["droptail_over_red_drops"] = out["droptail/drop_rate"] / out["red/drop_rate"]
    return out


def _fig08_plot(analysis: Analysis, path: Any) -> Any:
    figure = Figure(figsize=(10, 6), layout="constrained")
    panels = figure.subplots(2, 2, sharex=True, sharey=True)
    for row, (label, title) in enumerate((("red", "RED"), ("droptail", "DropTail"))):
        trace = analysis[f"{label}/trace"]
        for col, kind in enumerate(("tcp", "tfrc")):
            axes = panels[row][col]
            rates = trace[kind]
            t = 15.0 + _FIG08_BIN_S * np.arange(rates.shape[1])
            for k in range(rates.shape[0]):
                axes.plot(t, rates[k], lw=0.9, color=f"C{k}")
            axes.set_title(f"Fig. 8: {kind.upper()}, {title} (first seed, 4 flows)")
            axes.grid(visible=True, alpha=0.3)
            if row == 1:
                axes.set_xlabel("Time (s)")
            if col == 0:
                axes.set_ylabel("Throughput (Mb/s, 0.15 s bins)")
    return _save(figure, path)


def _fig08_cov_claim(label: str, title: str, robust: bool) -> Claim:
    return Claim(
        id=f"{label}-tfrc-smoother",
        statement=f"TFRC's throughput is visibly smoother than TCP's at 0.15 s ({title}).",
        paper_value="TFRC visibly smoother",
        how="CoV at 0.15 s over 15-30 s, averaged over the 16 flows of each protocol; TFRC's "
        "over TCP's, per seed",
        tolerance="at most 0.75 (TFRC's CoV at least a quarter below TCP's)",
        accept=(0.0, 0.75),
        measure=_per_seed(f"{label}/cov_ratio"),
        robust_to_quick=robust,
    )


FIG08 = Experiment(
    id="floyd2000/fig08",
    title="Fig. 8: TFRC and TCP throughput in 0.15 s bins, 15 Mb/s, 32 flows",
    setup="Fig. 6's 15 Mb/s, 16 SACK + 16 TFRC runs for 30 s (scenario fig08.toml), the "
    "second half in 0.15 s bins, with RED (min_th 25, max_th 125, max_p 0.1, gentle, 250 "
    "packets) and with DropTail (250 packets, and 125 packets to show the sensitivity to "
    "the buffer the paper does not give). The paper shows one run of each.",
    kind="sweep",
    scenarios=("floyd2000/fig08.toml",),
    cells=_fig08_cells(),
    full=Plan(seeds=(1, 2, 3, 4, 5)),
    quick=Plan(seeds=(1, 2)),
    metrics=("cov_at_timescale", "drop_rate"),
    claims=(
        _fig08_cov_claim("red", "RED", robust=True),
        _fig08_cov_claim("droptail", "DropTail", robust=True),
        _fig08_cov_claim("droptail-half-buffer", "DropTail, half the buffer", robust=True),
        Claim(
            id="red-needs-more-loss",
            statement="RED's lower queueing delay requires a higher loss rate than DropTail "
            "to keep the flows in check.",
            paper_value="loss rate higher with RED than with DropTail",
            how="bottleneck drop rate with DropTail (250 packets) over that with RED, 15-30 s, "
            "per seed",
            tolerance="below 1",
            accept=(0.0, 1.0),
            strict=(False, True),
            measure=_per_seed("droptail_over_red_drops"),
            robust_to_quick=True,
        ),
    ),
    analyze=_fig08_analyze,
    plot=_fig08_plot,
)

# ---------------------------------------------------------------------------------------------
# fig11-13: one TCP and one TFRC among 50-150 Pareto ON/OFF sources (§4.1.3)

FIG11_SOURCES = (50, 75, 100, 125, 150)
"""The numbers of ON/OFF sources (the paper: "varied between 50 and 150")."""

FIG11_TIMESCALES_S = (0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0)
"""The timescales of the equivalence and CoV figures (s)."""

_FIG11_BROAD_S = (1.0, 2.0, 5.0, 10.0, 20.0)
"""The "broad range of timescales" of the low-loss equivalence claim."""


def _fig11_label(sources: int) -> str:
    return f"sources-{sources}"


def _fig11_analyze(data: Any, _plan: Plan) -> Analysis:
    out: dict[str, Any] = {}
    n = len(FIG11_TIMESCALES_S)
    for sources in FIG11_SOURCES:
        cell = data[_fig11_label(sources)]
        seeds = _seeds(cell)
        eq = np.full((len(seeds), n), np.nan)
        cov = {k: np.full((len(seeds), n), np.nan) for k in ("tcp", "tfrc")}
        drops = np.full(len(seeds), np.nan)
        for i, seed in enumerate(seeds):
            series = _kind_series(cell, seed)
            for k, ts in enumerate(FIG11_TIMESCALES_S):
                rates = {
                    kind: metrics.send_rate(series[kind][0], cell.bin_s, ts)
                    for kind in ("tcp", "tfrc")
                }
                if rates["tcp"].size < 2:
                    continue
                eq[i, k] = metrics.equivalence_ratio(rates["tcp"], rates["tfrc"])
                for kind in ("tcp", "tfrc"):
                    cov[kind][i, k] = float(metrics.cov(rates[kind]))
            drops[i] = _bottleneck(cell, seed, "drop_rate")
        out[f"{sources}/equivalence"] = eq
        out[f"{sources}/cov_tcp"] = cov["tcp"]
        out[f"{sources}/cov_tfrc"] = cov["tfrc"]
        out[f"{sources}/drop_rate"] = drops
    return out


_FIG11_LABELS = [f"{ts:g} s" for ts in FIG11_TIMESCALES_S]


def _fig11_low_loss_equivalence(analysis: Analysis) -> Measurement:
    columns = [FIG11_TIMESCALES_S.index(ts) for ts in _FIG11_BROAD_S]
    values = analysis[f"{FIG11_SOURCES[0]}/equivalence"][:, columns]
    labels = [_FIG11_LABELS[k] for k in columns]
    return worst_of(values, labels, badness=lambda m: abs(m - 0.75))


def _fig11_long_timescale(analysis: Analysis) -> Measurement:
    values = analysis[f"{FIG11_SOURCES[-1]}/equivalence"][:, -1]
    return measure_seeds(values, f"{FIG11_SOURCES[-1]} sources at {_FIG11_LABELS[-1]}")


def _fig11_cov_lower(analysis: Analysis) -> Measurement:
    ratios = np.concatenate(
        [analysis[f"{s}/cov_tfrc"] / analysis[f"{s}/cov_tcp"] for s in FIG11_SOURCES], axis=1
    )
    labels = [f"{s} sources, {ts}" for s in FIG11_SOURCES for ts in _FIG11_LABELS]
    return worst_of(ratios, labels, badness=lambda m: m)


def _fig11_cov_gap_grows(analysis: Analysis) -> Measurement:
    def mean_ratio(sources: int) -> np.ndarray:
        r = analysis[f"{sources}/cov_tfrc"] / analysis[f"{sources}/cov_tcp"]
        return np.asarray(np.nanmean(r, axis=1))

    return measure_seeds(
        mean_ratio(FIG11_SOURCES[-1]) / mean_ratio(FIG11_SOURCES[0]),
        "CoV(TFRC) / CoV(TCP) averaged over timescales: 150 over 50 sources",
    )


def _fig11_plot(analysis: Analysis, path: Any) -> Any:
    figure = Figure(figsize=(13, 4.2), layout="constrained")
    loss_axes, eq_axes, cov_axes = figure.subplots(1, 3)
    drops = np.stack([analysis[f"{s}/drop_rate"] for s in FIG11_SOURCES], axis=1)
    _errorbar(loss_axes, FIG11_SOURCES, drops * 100, marker="o")
    loss_axes.set_xlabel("Number of ON/OFF sources")
    loss_axes.set_ylabel("Loss rate (%)")
    loss_axes.set_title("Fig. 11: loss rate at the bottleneck")
    ts = np.asarray(FIG11_TIMESCALES_S)
    for k, sources in enumerate(FIG11_SOURCES):
        _errorbar(
            eq_axes,
            ts,
            analysis[f"{sources}/equivalence"],
            marker="o",
            color=f"C{k}",
            label=f"{sources} sources",
        )
        for kind, style in (("tfrc", "-"), ("tcp", "--")):
            m = [measure_seeds(c).mean for c in analysis[f"{sources}/cov_{kind}"].T]
            cov_axes.plot(ts, m, ls=style, marker="o", ms=3, color=f"C{k}")
    cov_axes.plot([], [], "k-", label="TFRC")
    cov_axes.plot([], [], "k--", label="TCP")
    eq_axes.set_ylim(0, 1)
    eq_axes.set_ylabel("Equivalence ratio (TCP vs TFRC)")
    eq_axes.set_title("Fig. 12: equivalence")
    cov_axes.set_ylabel("Coefficient of variation")
    cov_axes.set_title("Fig. 13: CoV (colours as Fig. 12)")
    for axes in (eq_axes, cov_axes):
        axes.set_xscale("log")
        axes.set_xlabel("Timescale for throughput measurement (seconds)")
        axes.legend(fontsize="small")
    for axes in (loss_axes, eq_axes, cov_axes):
        axes.grid(visible=True, alpha=0.3)
    return _save(figure, path)


FIG11 = Experiment(
    id="floyd2000/fig11",
    title="Figs. 11-13: one TCP and one TFRC with 50-150 Pareto ON/OFF sources",
    setup="One SACK TCP and one TFRC connection on the Figs. 9-10 bottleneck (15 Mb/s RED, "
    "gentle, 100 packets, min_th 10, max_th 50; scenario fig11.toml) with 50, 75, 100, 125 "
    "and 150 Pareto ON/OFF UDP sources (shape 1.5, mean ON 1 s, OFF 2 s, 500 kb/s when ON); "
    "0.5 s bins. Reduced from the paper's 10 runs of 5000 s to 5 runs of 1000 s per source "
    "count (measured after 20 s) to fit a reproduction's budget.",
    kind="sweep",
    scenarios=("floyd2000/fig11.toml",),
    cells=tuple(
        (_fig11_label(n), "floyd2000/fig11.toml", {"flows.2.count": n}) for n in FIG11_SOURCES
    ),
    full=Plan(seeds=(1, 2, 3, 4, 5)),
    quick=Plan(seeds=(1, 2), changes={"duration": "200s"}),
    metrics=("drop_rate", "equivalence_ratio", "cov_at_timescale"),
    claims=(
        Claim(
            id="loss-low-at-50",
            statement="With the fewest sources the loss rate is low.",
            paper_value="low (the lower end of Fig. 11's range)",
            how="bottleneck drops / arrivals with 50 sources, per seed",
            tolerance="at most 2%",
            accept=(0.0, 0.02),
            measure=_per_seed(f"{FIG11_SOURCES[0]}/drop_rate"),
            robust_to_quick=True,
        ),
        Claim(
            id="loss-40-at-150",
            statement="With 150 sources the loss rate reaches about 40%.",
            paper_value="~40%",
            how="bottleneck drops / arrivals with 150 sources, per seed",
            tolerance="within 10 percentage points: [30%, 50%]",
            accept=(0.30, 0.50),
            measure=_per_seed(f"{FIG11_SOURCES[-1]}/drop_rate"),
            robust_to_quick=True,
        ),
        Claim(
            id="equivalence-low-loss",
            statement="At low loss rates the TCP-TFRC equivalence ratio is 0.7-0.8 over a "
            "broad range of timescales.",
            paper_value="0.7-0.8",
            how="equivalence ratio (eq. 4) of the TCP and the TFRC connection with 50 "
            "sources, per seed at 1, 2, 5, 10, 20 s; the timescale furthest from 0.75",
            tolerance="the band widened by 0.1 each side: [0.6, 0.9]",
            accept=(0.6, 0.9),
            measure=_fig11_low_loss_equivalence,
            robust_to_quick=False,
        ),
        Claim(
            id="equivalence-long-timescale-150",
            statement="On long timescales, even at 40% loss (150 sources), the equivalence "
            "ratio is still 0.4.",
            paper_value="0.4",
            how="equivalence ratio at 100 s with 150 sources, per seed",
            tolerance="within 0.15: [0.25, 0.55]",
            accept=(0.25, 0.55),
            measure=_fig11_long_timescale,
            robust_to_quick=False,
        ),
        Claim(
            id="cov-lower",
            statement="TFRC's send rate is much smoother than TCP's.",
            paper_value="CoV(TFRC) below CoV(TCP)",
            how="CoV(TFRC) / CoV(TCP) per seed, at every source count and timescale; the "
            "largest mean",
            tolerance="at most 1 everywhere",
            accept=(0.0, 1.0),
            measure=_fig11_cov_lower,
            robust_to_quick=False,
        ),
        Claim(
            id="cov-gap-grows-with-loss",
            statement="TFRC's advantage in smoothness is largest when the loss rate is high.",
            paper_value="especially at high loss",
            how="CoV(TFRC) / CoV(TCP) averaged over the timescales, with 150 sources over "
            "that with 50 sources, per seed",
            tolerance="below 1",
            accept=(0.0, 1.0),
            strict=(False, True),
            measure=_fig11_cov_gap_grows,
            robust_to_quick=False,
        ),
    ),
    analyze=_fig11_analyze,
    plot=_fig11_plot,
)

EXPERIMENTS: tuple[Experiment, ...] = (FIG05, FIG06, FIG07, FIG08, FIG11)
"""floyd2000's fairness and smoothness experiments, in figure order."""
