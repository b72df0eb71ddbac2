"""The berumen experiments (Garcia Berumen & Marot, TCP vs TFRC fluid models over long delays).

Both experiments integrate the fluid model (:mod:`tfrclab.fluid`) themselves (kind
``channel``: no sweep), for the paper's bottleneck: 5 Mb/s, 1000-byte packets, a 100-packet
DropTail buffer. "Delay" is read as the fluid model's round-trip propagation delay tau. The
long-lived experiment also runs the same scenario files through the packet simulator, to show
where the two agree. Tolerances are fixed here, beside the paper's statements, before any run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from tfrclab.fluid.model import FluidFlow, FluidModel
from tfrclab.fluid.solver import solve
from tfrclab.reproduce.claims import Analysis, Claim, Measurement
from tfrclab.reproduce.evidence import because, not_established
from tfrclab.reproduce.registry import Experiment, Plan, scenario_path

__all__ = ["CAPACITY_BPS", "DELAYS_S", "EXPERIMENTS", "LONGER"]

CAPACITY_BPS = 5e6
"""The bottleneck of §3.1: 5 Mb/s."""
BUFFER_PACKETS = 100.0
"""The buffer of §3.1: 100 packets."""
DELAYS_S = (0.01, 0.2, 0.54)
"""The delays of Figs. 3-11: small, long, satellite."""
_STEP_S = 0.001
LONGER = 4
"""How many times the plan's run length the evidence run of the one-way reading lasts (1200 s
in the full plan, 400 s in the quick one)."""


def _fluid(tcp: str, delay: float, duration: float, **kw: Any) -> Any:
    model = FluidModel(
        capacity_bps=CAPACITY_BPS,
        buffer_packets=BUFFER_PACKETS,
        flows=(
            FluidFlow(tcp, delay, name="tcp", restart_mean_s=kw.get("tcp_mean")),  # type: ignore[arg-type]
            FluidFlow("tfrc", delay, name="tfrc", restart_mean_s=kw.get("tfrc_mean")),
        ),
        duration_s=duration,
        step_s=kw.get("step", _STEP_S),
        bin_s=1.0,
        seed=kw.get("seed", 1),
    )
    return solve(model)


def _single(key: str, note: str = "deterministic fluid run") -> Any:
    def measure(analysis: Analysis) -> Measurement:
        return Measurement(float(analysis[key]), float("nan"), 1, note)

    return measure


# ---------------------------------------------------------------------------------------------
# Figs. 3-11: one infinite TCP (Vegas, or Reno for Figs. 10-11) and one infinite TFRC flow


def _share(delivered: np.ndarray, lo: int, hi: int) -> float:
    """Flow 1's (TFRC's) share of what both delivered in bins [lo, hi)."""
    part = delivered[:, lo:hi].sum(axis=1)
    return float(part[1] / part.sum()) if part.sum() > 0 else float("nan")


def _infinite_analyze(_runs: Any, plan: Plan) -> Analysis:
    from tfrclab import simulate
    from tfrclab.scenario import Scenario

    duration = plan.duration_s or 300.0
    out: dict[str, Any] = {"duration": duration, "series": {}}
    for tcp in ("vegas", "reno"):
        for delay in DELAYS_S:
            run = _fluid(tcp, delay, duration)
            d = run.delivered
            bins = d.shape[1]
            key = f"{tcp}_{int(delay * 1000)}"
            out["series"][key] = (d * 8e3 / 1e6, run.queue_mean, run.states[:, 4])
            own = run.states[:, 4, bins // 2 :].mean(axis=1)
            out[f"{key}_tfrc_queue_share_end"] = float(own[1] / own.sum()) if own.sum() else 0.0
            out[f"{key}_tfrc_share_end"] = _share(d, bins // 2, bins)
            out[f"{key}_tcp_share_first10"] = 1 - _share(d, 0, 10)
            # The packet simulator on the same scenario (RTT = the delay).
            scenario = Scenario.load(scenario_path(f"berumen/{tcp}-tfrc.toml")).with_(
                duration=f"{duration:g}s", **{"topology.access.rtt": f"{delay * 1000:g}ms"}
            )
            packets = simulate.run(scenario)
            pd_ = packets.flow_bins["received_packets"].astype(float)
            out[f"{key}_packet_tfrc_share_end"] = _share(pd_, bins // 2, bins)
            out["series"][key + "_packet"] = (
                pd_ * 8e3 / 1e6,
                packets.link_bins["mean_queue_packets"][0],
                None,
            )
    # The other reading of "delay": a one-way delay, the round trip twice it (540 -> 1080 ms).
    doubled = _fluid("vegas", 2 * DELAYS_S[-1], duration).delivered
    out["vegas_540x2_tfrc_share_end"] = _share(doubled, doubled.shape[1] // 2, doubled.shape[1])
    # The same, run LONGER times as long: is "in the end" a matter of the run's length?
    longer = _fluid("vegas", 2 * DELAYS_S[-1], LONGER * duration).delivered
    out["vegas_540x2_longer_tfrc_share_end"] = _share(longer, longer.shape[1] // 2, longer.shape[1])
    for tcp in ("vegas", "reno"):
        out[f"{tcp}_gap_10"] = abs(
            out[f"{tcp}_10_tfrc_share_end"] - out[f"{tcp}_10_packet_tfrc_share_end"]
        )
    out["vegas_share_fall"] = out["vegas_10_tfrc_share_end"] - out["vegas_540_tfrc_share_end"]
    return out


def _infinite_plot(analysis: Analysis, path: Path) -> Path:
    figure = Figure(figsize=(10, 7))
    axes = figure.subplots(3, 3, sharex=True)
    for col, delay in enumerate(DELAYS_S):
        ms = int(delay * 1000)
        for row, tcp in enumerate(("vegas", "reno")):
            ax = axes[row, col]
            rate, _, _ = analysis["series"][f"{tcp}_{ms}"]
            prate, _, _ = analysis["series"][f"{tcp}_{ms}_packet"]
            t = np.arange(rate.shape[1])
            ax.plot(t, rate[0], "C0", lw=1, label=f"{tcp} (fluid)")
            ax.plot(t, rate[1], "C1", lw=1, label="tfrc (fluid)")
            ax.plot(t, prate[0], "C0--", lw=0.7, label=f"{tcp} (packets)")
            ax.plot(t, prate[1], "C1--", lw=0.7, label="tfrc (packets)")
            ax.set_title(f"{tcp} vs tfrc, delay {ms} ms", fontsize=8)
            if col == 0:
                ax.set_ylabel("throughput (Mb/s)")
            ax.legend(fontsize=5)
        ax = axes[2, col]
        for tcp, color in (("vegas", "C2"), ("reno", "C3")):
            _, queue, own = analysis["series"][f"{tcp}_{ms}"]
            t = np.arange(queue.size)
            ax.plot(t, queue, color, lw=1, label=f"{tcp}+tfrc (fluid)")
            ax.plot(t, own[1], color, lw=0.7, ls=":", label=f"tfrc's part ({tcp} run)")
        ax.set_xlabel("time (s)")
        ax.set_title(f"queue, delay {ms} ms", fontsize=8)
        if col == 0:
            ax.set_ylabel("queue (packets)")
        ax.legend(fontsize=6)
    figure.suptitle("berumen Figs. 3-11: one TCP and one TFRC flow, 5 Mb/s, buffer 100", fontsize=9)
    figure.tight_layout()
    figure.savefig(path, dpi=80)
    return path


_FLUID_RENO = not_established(
    "the fluid Reno holds about half the link at 10 ms, where the packet simulator on the same "
    "scenario gives TFRC most of it (tfrc-most-reno-10ms-packets; ns-2.35's TFRC against Reno "
    "gave it 0.56 in a separate tfrclab crosscheck, not a registered referee), so the paper's "
    "statement holds with packets. A separate run counted about the same loss events in both "
    "models (Reno + TFRC at 10 ms, 300 s: fluid 66 and 68, packets 53 and 60), which points at "
    "how the events become rate (the fluid model's overflow losses hit every flow, each TCP "
    "loss is one halving without timeouts) rather than at how many there are; which difference "
    "dominates is not isolated (docs/fluid.md)"
)
"""Why the fluid model's Reno-vs-TFRC claims at short delays fail: what the runs show."""

_INFINITE_CLAIMS = (
    Claim(
        id="tfrc-most-vegas-10ms",
        statement="At 10 ms TFRC takes most of the bandwidth against Vegas (Fig. 3).",
        paper_value="most of the bandwidth",
        how="TFRC's share of the delivered packets over the second half of the fluid run",
        tolerance="above 0.5",
        accept=(0.5, 1.0),
        strict=(True, False),
        measure=_single("vegas_10_tfrc_share_end"),
        robust_to_quick=True,
    ),
    Claim(
        id="tfrc-most-queue-vegas-10ms",
        statement="At 10 ms most of the packets in the buffer are TFRC's (Fig. 4).",
        paper_value="most of the queue",
        how="TFRC's share of the mean queue over the second half of the fluid run (each "
        "flow's fluid in the buffer: admitted minus departed)",
        tolerance="above 0.5",
        accept=(0.5, 1.0),
        strict=(True, False),
        measure=_single("vegas_10_tfrc_queue_share_end"),
        robust_to_quick=True,
    ),
    Claim(
        id="tfrc-most-reno-10ms",
        statement="At 10 ms TFRC starves much of the bandwidth against Reno (Fig. 10).",
        paper_value="most of the bandwidth",
        how="TFRC's share of the delivered packets over the second half of the fluid run",
        tolerance="above 0.5",
        accept=(0.5, 1.0),
        strict=(True, False),
        measure=_single("reno_10_tfrc_share_end"),
        known_deviation=_FLUID_RENO,
    ),
    Claim(
        id="tfrc-most-reno-10ms-packets",
        statement="At 10 ms TFRC starves much of the bandwidth against Reno (Fig. 10), "
        "measured with packets.",
        paper_value="most of the bandwidth",
        how="TFRC's share of the delivered packets over the second half of the packet run",
        tolerance="above 0.5",
        accept=(0.5, 1.0),
        strict=(True, False),
        measure=_single("reno_10_packet_tfrc_share_end", "one packet run, seed 1"),
    ),
    Claim(
        id="vegas-leads-slow-start-540ms",
        statement="At 540 ms Vegas takes most of the bandwidth at first, in slow start (Fig. 7).",
        paper_value="Vegas ahead at the beginning",
        how="Vegas's share of the delivered packets over the first 10 s (fluid)",
        tolerance="above 0.5",
        accept=(0.5, 1.0),
        strict=(True, False),
        measure=_single("vegas_540_tcp_share_first10"),
        robust_to_quick=True,
    ),
    Claim(
        id="tfrc-most-vegas-540ms",
        statement="In the end TFRC always takes most of the bandwidth, also at 540 ms (§3.1).",
        paper_value="most of the bandwidth",
        how="TFRC's share of the delivered packets over the second half of the fluid run",
        tolerance="above 0.5",
        accept=(0.5, 1.0),
        strict=(True, False),
        measure=_single("vegas_540_tfrc_share_end"),
    ),
    Claim(
        id="tfrc-most-vegas-540ms-as-one-way",
        statement="In the end TFRC takes most of the bandwidth at 540 ms (§3.1), with 540 ms "
        "read as a one-way delay (round trip 1080 ms): the sensitivity to that reading.",
        paper_value="most of the bandwidth",
        how="TFRC's share of the delivered packets over the second half of the fluid run",
        tolerance="above 0.5",
        accept=(0.5, 1.0),
        strict=(True, False),
        measure=_single("vegas_540x2_tfrc_share_end"),
        known_deviation=because(
            "with a 1080 ms round trip the fluid TFRC has not overtaken Vegas by the end of the "
            "300 s run; four times as long, it takes most of the link over the second half, "
            "and with the 540 ms round trip it does so within 300 s: 'in the end' depends on "
            "the run's length and on how the paper's delay is read",
            "berumen/fig03-11 tfrc-most-vegas-540ms-as-one-way-longer",
            "berumen/fig03-11 tfrc-most-vegas-540ms",
        ),
    ),
    Claim(
        id="tfrc-most-vegas-540ms-as-one-way-longer",
        statement="Evidence for tfrc-most-vegas-540ms-as-one-way (not a statement of the "
        "paper): with 540 ms read as a one-way delay (round trip 1080 ms), TFRC takes most of "
        f"the bandwidth in the end of a run {LONGER} times as long.",
        paper_value="(not in the paper; the paper's: most of the bandwidth)",
        how=f"TFRC's share of the delivered packets over the second half of a fluid run {LONGER} "
        "times the plan's length (1200 s in the full plan)",
        tolerance="above 0.5",
        accept=(0.5, 1.0),
        strict=(True, False),
        measure=_single("vegas_540x2_longer_tfrc_share_end"),
    ),
    Claim(
        id="tfrc-most-vegas-200ms",
        statement="In the end TFRC takes most of the bandwidth at 200 ms (Fig. 5).",
        paper_value="most of the bandwidth",
        how="TFRC's share of the delivered packets over the second half of the fluid run",
        tolerance="above 0.5",
        accept=(0.5, 1.0),
        strict=(True, False),
        measure=_single("vegas_200_tfrc_share_end"),
    ),
    Claim(
        id="fluid-matches-packets-vegas-10ms",
        statement="(tfrclab) The fluid model and the packet simulator agree on the shares.",
        paper_value="not in the paper (a check of the model)",
        how="|TFRC share fluid - TFRC share packets|, Vegas vs TFRC at 10 ms, second half",
        tolerance="at most 0.15",
        accept=(0.0, 0.15),
        measure=_single("vegas_gap_10"),
        robust_to_quick=True,
    ),
    Claim(
        id="fluid-matches-packets-reno-10ms",
        statement="(tfrclab) The fluid model and the packet simulator agree on the shares.",
        paper_value="not in the paper (a check of the model)",
        how="|TFRC share fluid - TFRC share packets|, Reno vs TFRC at 10 ms, second half",
        tolerance="at most 0.15",
        accept=(0.0, 0.15),
        measure=_single("reno_gap_10"),
        known_deviation=_FLUID_RENO,
    ),
)

INFINITE = Experiment(
    id="berumen/fig03-11",
    title="Figs. 3-11: one infinite TCP (Vegas, Reno) against one infinite TFRC, over delay",
    setup="Fluid model: 5 Mb/s, 100-packet DropTail buffer, 1000-byte packets, both flows from "
    "0 s, round-trip propagation delay 10, 200, 540 ms; step 1 ms; the same scenarios "
    "(scenarios/papers/berumen/*.toml) in the packet simulator. The paper's run length is not "
    "legible: 300 s (quick: 100 s).",
    kind="channel",
    scenarios=("berumen/vegas-tfrc.toml", "berumen/reno-tfrc.toml"),
    cells=(),
    full=Plan(seeds=(1,), duration_s=300.0),
    quick=Plan(seeds=(1,), duration_s=100.0),
    metrics=("throughput share", "queue"),
    claims=_INFINITE_CLAIMS,
    analyze=_infinite_analyze,
    plot=_infinite_plot,
)

# ---------------------------------------------------------------------------------------------
# Figs. 12-23: both flows restarted after exponential durations, over delay

RESTART_DELAYS_S = (0.01, 0.1, 0.2, 0.54)
"""The delays of the restarting-flow figures (the paper's axes span 10-540 ms)."""

RESTART_CASES = (
    ("same 30 s", 30.0, 30.0),
    ("same 240 s", 240.0, 240.0),
    ("TCP 240 s, TFRC 30 s", 240.0, 30.0),
    ("TFRC 240 s, TCP 30 s", 30.0, 240.0),
)
"""(label, TCP mean, TFRC mean): equal means (Figs. 12, 18), TCP fixed at 240 s (Figs. 13,
19), TFRC fixed at 240 s (Figs. 14, 20); the paper's means span 10-240 s."""

_RESTART_STEP_S = 0.002
"""2 ms: a fifth of the smallest delay (the convergence test shows 1 ms gives the same)."""


def _connections(seed: int, flow: int, mean: float, duration: float) -> list[tuple[float, float]]:
    """The (start, stop) of each connection of fluid flow ``flow``.

    These are the exponential draws the fluid solver makes: its stream (seed, flow), one draw
    per connection, no idle time.
    """
    rng = np.random.default_rng([seed, flow])
    spans: list[tuple[float, float]] = []
    t = 0.0
    while t < duration:
        end = t + float(rng.exponential(mean))
        spans.append((t, min(end, duration)))
        t = end
    return spans


def _restart_packets(tcp: str, delay: float, duration: float, means: tuple[float, float]) -> Any:
    """Throughput (Mb/s) of all TCP and all TFRC connections run as packets.

    One netsim flow per connection of the fluid run, with its start and stop times.
    """
    from tfrclab import simulate
    from tfrclab.scenario import Scenario

    base = Scenario.load(scenario_path(f"berumen/{tcp}-tfrc.toml")).to_dict()
    template = {f["name"]: f for f in base["flows"]}
    flows: list[dict[str, Any]] = []
    for k, (kind, mean) in enumerate((("tcp", means[0]), ("tfrc", means[1]))):
        for i, (start, stop) in enumerate(_connections(1, k, mean, duration)):
            if stop - start < 0.001:
                continue
            flow = dict(template[kind], name=f"{kind}{i}", start=f"{start:.6f}s")
            flow.update({"from": "left0", "to": "right0"})
            if stop < duration:
                flow["stop"] = f"{stop:.6f}s"
            flows.append(flow)
    base.update(flows=flows, duration=f"{duration:g}s")
    base["topology"]["hosts"] = 1
    base["topology"]["access"]["rtt"] = f"{delay * 1000:g}ms"
    result = simulate.run(Scenario.from_dict(base), force=True)
    got = result.flows.groupby("kind")["bytes_received"].sum() * 8 / duration / 1e6
    return float(got.get("tcp", 0.0)), float(got.get("tfrc", 0.0))


def _restart_analyze(_runs: Any, plan: Plan) -> Analysis:
    duration = plan.duration_s or 1500.0
    cases = RESTART_CASES if plan.changes.get("cases") != "quick" else RESTART_CASES[:2]
    delays = RESTART_DELAYS_S if plan.changes.get("cases") != "quick" else (0.01, 0.54)
    out: dict[str, Any] = {"delays": delays, "cases": [c[0] for c in cases]}
    for tcp in ("vegas", "reno"):
        for label, tcp_mean, tfrc_mean in cases:
            shares, occupation, tfrc_tp, tcp_tp = [], [], [], []
            packet_shares, packet_occupation = [], []
            for delay in delays:
                p_tcp, p_tfrc = _restart_packets(tcp, delay, duration, (tcp_mean, tfrc_mean))
                both = p_tcp + p_tfrc
                packet_shares.append(p_tcp / both if both else float("nan"))
                packet_occupation.append(both / (CAPACITY_BPS / 1e6))
                run = _fluid(
                    tcp,
                    delay,
                    duration,
                    tcp_mean=tcp_mean,
                    tfrc_mean=tfrc_mean,
                    step=_RESTART_STEP_S,
                )
                total = run.delivered.sum(axis=1) * 8e3 / duration / 1e6
                tcp_tp.append(float(total[0]))
                tfrc_tp.append(float(total[1]))
                shares.append(float(total[0] / total.sum()) if total.sum() else float("nan"))
                occupation.append(float(total.sum() / (CAPACITY_BPS / 1e6)))
            out[f"{tcp}/{label}"] = {
                "tcp_ratio": shares,
                "occupation": occupation,
                "tcp_mbps": tcp_tp,
                "tfrc_mbps": tfrc_tp,
                "packet_tcp_ratio": packet_shares,
                "packet_occupation": packet_occupation,
            }
    same = cases[1][0]
    for tcp in ("vegas", "reno"):
        row = out[f"{tcp}/{same}"]
        out[f"{tcp}_tfrc_share_short"] = 1 - row["tcp_ratio"][0]
        out[f"{tcp}_tfrc_share_fall"] = row["tcp_ratio"][-1] - row["tcp_ratio"][0]
        out[f"{tcp}_occupation_fall"] = row["occupation"][0] - row["occupation"][-1]
        out[f"{tcp}_packet_tfrc_share_short"] = 1 - row["packet_tcp_ratio"][0]
        out[f"{tcp}_packet_tfrc_share_fall"] = (
            row["packet_tcp_ratio"][-1] - row["packet_tcp_ratio"][0]
        )
        out[f"{tcp}_packet_occupation_fall"] = (
            row["packet_occupation"][0] - row["packet_occupation"][-1]
        )
    longer, shorter = RESTART_CASES[2][0], RESTART_CASES[3][0]
    for tcp in ("vegas", "reno"):
        if f"{tcp}/{longer}" in out and f"{tcp}/{shorter}" in out:
            out[f"{tcp}_longer_tcp_gain"] = float(
                np.mean(out[f"{tcp}/{longer}"]["tcp_ratio"])
                - np.mean(out[f"{tcp}/{shorter}"]["tcp_ratio"])
            )
        else:  # the quick plan has neither case
            out[f"{tcp}_longer_tcp_gain"] = float("nan")
    out["reno_minus_vegas_long"] = float(
        np.mean(out[f"reno/{same}"]["tcp_ratio"]) - np.mean(out[f"vegas/{same}"]["tcp_ratio"])
    )
    return out


def _restart_plot(analysis: Analysis, path: Path) -> Path:
    figure = Figure(figsize=(10, 6))
    axes = figure.subplots(2, 3)
    delays_ms = [d * 1000 for d in analysis["delays"]]
    for row, tcp in enumerate(("vegas", "reno")):
        for label in analysis["cases"]:
            values = analysis[f"{tcp}/{label}"]
            axes[row, 0].plot(delays_ms, values["tfrc_mbps"], "o-", label=f"TFRC, {label}")
            axes[row, 0].plot(delays_ms, values["tcp_mbps"], "s--", label=f"{tcp}, {label}")
            line = axes[row, 1].plot(delays_ms, values["tcp_ratio"], "o-", label=label)[0]
            color = line.get_color()
            axes[row, 1].plot(delays_ms, values["packet_tcp_ratio"], "x--", color=color, lw=0.8)
            axes[row, 2].plot(delays_ms, values["occupation"], "o-", color=color, label=label)
            axes[row, 2].plot(delays_ms, values["packet_occupation"], "x--", color=color, lw=0.8)
        axes[row, 0].set_ylabel(f"{tcp}: throughput (Mb/s)")
        axes[row, 1].set_ylabel("TCP / (TCP + TFRC)")
        axes[row, 2].set_ylabel("bandwidth occupation")
        for ax in axes[row]:
            ax.set_xlabel("delay (ms)")
            ax.legend(fontsize=5)
    figure.suptitle(
        "berumen Figs. 12-23: flows restarted after exponential durations "
        "(fluid: solid; packets: dashed, x)",
        fontsize=9,
    )
    figure.tight_layout()
    figure.savefig(path, dpi=80)
    return path


_SHORT_TCP_GAINS = {
    "vegas": not_established(
        "short TCP connections take the larger share at 540 ms (TCP ratio 0.62 with TCP 30 s / "
        "TFRC 240 s, 0.29 the other way round) and, by less, at 10 ms; at 100 and 200 ms the "
        "ordering is the paper's (the figure). At 540 ms Vegas leads at first in slow start "
        "(vegas-leads-slow-start-540ms), so restarts in slow start may favour short TCP "
        "connections there, but no registered run isolates it"
    ),
    "reno": not_established(
        "short TCP connections take the larger share at every delay, by 0.06 of the TCP ratio "
        "at 10 ms to 0.43 at 540 ms (0.78 with TCP 30 s / TFRC 240 s against 0.35 the other way "
        "round; the figure); no registered run isolates why (restarts in slow start, or the "
        "fluid TFRC's slow climb after its first loss, are candidates)"
    ),
}
"""Why the "longer TCP connections" claims fail: what the fluid runs show, per TCP."""


def _restart_claims() -> tuple[Claim, ...]:
    claims: list[Claim] = []
    for tcp, figs in (("vegas", "Figs. 12, 15"), ("reno", "Figs. 18, 21")):
        claims += [
            Claim(
                id=f"tfrc-high-short-delay-{tcp}",
                statement=f"TFRC's share is high at short delays ({figs}; against {tcp}).",
                paper_value="TFRC mean throughput very high at small delays",
                how="TFRC's share of both flows' throughput at 10 ms, equal means 240 s",
                tolerance="above 0.5",
                accept=(0.5, 1.0),
                strict=(True, False),
                measure=_single(f"{tcp}_tfrc_share_short"),
                # Reno's value sits near the 0.5 edge (0.45 in a quick run): not robust.
                robust_to_quick=tcp == "vegas",
                known_deviation=None if tcp == "vegas" else _FLUID_RENO,
            ),
            Claim(
                id=f"tfrc-share-falls-{tcp}",
                statement=f"TFRC's share falls with delay ({figs}; against {tcp}).",
                paper_value="decreasing in the delay",
                how="TCP ratio at 540 ms minus TCP ratio at 10 ms, equal means 240 s",
                tolerance="above 0",
                accept=(0.0, 1.0),
                strict=(True, False),
                measure=_single(f"{tcp}_tfrc_share_fall"),
            ),
            Claim(
                id=f"occupation-falls-{tcp}",
                statement=f"Total bandwidth occupation falls with delay ({figs}; {tcp}).",
                paper_value="decreasing in the delay",
                how="occupation at 10 ms minus occupation at 540 ms, equal means 240 s",
                tolerance="above 0",
                accept=(0.0, 1.0),
                strict=(True, False),
                measure=_single(f"{tcp}_occupation_fall"),
                robust_to_quick=True,
            ),
        ]
        claims += [
            Claim(
                id=f"packets-tfrc-high-short-delay-{tcp}",
                statement=f"TFRC's share is high at short delays ({figs}; {tcp}), with packets.",
                paper_value="TFRC mean throughput very high at small delays",
                how="as the fluid claim, on the packet run of the same connections",
                tolerance="above 0.5",
                accept=(0.5, 1.0),
                strict=(True, False),
                measure=_single(f"{tcp}_packet_tfrc_share_short", "one packet run, seed 1"),
            ),
            Claim(
                id=f"packets-tfrc-share-falls-{tcp}",
                statement=f"TFRC's share falls with delay ({figs}; {tcp}), with packets.",
                paper_value="decreasing in the delay",
                how="as the fluid claim, on the packet run of the same connections",
                tolerance="above 0",
                accept=(0.0, 1.0),
                strict=(True, False),
                measure=_single(f"{tcp}_packet_tfrc_share_fall", "one packet run, seed 1"),
            ),
            Claim(
                id=f"packets-occupation-falls-{tcp}",
                statement=f"Total occupation falls with delay ({figs}; {tcp}), with packets.",
                paper_value="decreasing in the delay",
                how="as the fluid claim, on the packet run of the same connections",
                tolerance="above 0",
                accept=(0.0, 1.0),
                strict=(True, False),
                measure=_single(f"{tcp}_packet_occupation_fall", "one packet run, seed 1"),
            ),
        ]
        claims.append(
            Claim(
                id=f"longer-tcp-more-share-{tcp}",
                statement="When TCP's connections last longer than TFRC's, TCP's share grows "
                f"({'Figs. 13-14' if tcp == 'vegas' else 'Figs. 19-20'}; {tcp}).",
                paper_value="TCP's proportion increases with its relative duration",
                how="mean over delays of the TCP ratio with means TCP 240 s / TFRC 30 s minus "
                "the same with TCP 30 s / TFRC 240 s (full plan only)",
                tolerance="above 0",
                accept=(0.0, 1.0),
                strict=(True, False),
                measure=_single(f"{tcp}_longer_tcp_gain"),
                known_deviation=_SHORT_TCP_GAINS[tcp],
            )
        )
    claims.append(
        Claim(
            id="reno-more-than-vegas",
            statement="Reno holds more of the bandwidth than Vegas for long durations (§3.2).",
            paper_value="Reno more aggressive in the steady state",
            how="mean over delays of the TCP ratio, Reno minus Vegas, equal means 240 s",
            tolerance="above 0",
            accept=(0.0, 1.0),
            strict=(True, False),
            measure=_single("reno_minus_vegas_long"),
            robust_to_quick=True,
        )
    )
    return tuple(claims)


RESTART = Experiment(
    id="berumen/fig12-23",
    title="Figs. 12-23: TCP (Vegas, Reno) and TFRC restarted after exponential durations",
    setup="Fluid model as Figs. 3-11; each connection lasts an exponential time and a new one "
    "starts at once, from slow start. Means (TCP, TFRC): 30/30, 240/240, 240/30, 30/240 s "
    "(the paper: 10-240 s); delays 10, 100, 200, 540 ms; 1500 s per point, one seed, step 2 ms "
    "(the paper averages until a 1% confidence interval: reduced to fit the time budget). "
    "The same connections (start and stop times) also run as packets, one netsim flow per "
    "connection. "
    "Quick: 30/30 and 240/240 at 10 and 540 ms, 400 s.",
    kind="channel",
    scenarios=(),
    cells=(),
    full=Plan(seeds=(1,), duration_s=1500.0),
    quick=Plan(seeds=(1,), changes={"cases": "quick"}, duration_s=400.0),
    metrics=("throughput", "TCP ratio", "bandwidth occupation"),
    claims=_restart_claims(),
    analyze=_restart_analyze,
    plot=_restart_plot,
)

EXPERIMENTS: tuple[Experiment, ...] = (INFINITE, RESTART)
"""The berumen experiments, in catalogue order."""
