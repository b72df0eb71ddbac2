"""The criteria: each one's source sentence, threshold, scenario and metric, and its rows.

RFC 9743 gives no numbers: "This document, except where otherwise noted, does not provide
normative guidance on the acceptable thresholds for any of these criteria." Every threshold
below is therefore this battery's choice, written beside the sentence that asks for the
criterion and saying where the number comes from. Sentences are quoted from the working
group's final source of RFC 9743 (draft-ietf-ccwg-rfc5033bis); sections are named by title.

Relative criteria compare ALGO with each competitor measured the same way, as the ratio of
their means; its interval comes from Welch's interval of the difference
(:func:`tfrclab.evaluate.verdict.ratio_of_means`). They share one tolerance,
:data:`RELATIVE_MARGIN`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

from tfrclab.evaluate.battery import QUEUES, BatteryPlan
from tfrclab.evaluate.verdict import Threshold, Value, Verdict, decide, ratio_of_means, seed_mean

__all__ = [
    "CRITERIA",
    "NOT_EVALUATED",
    "RELATIVE_MARGIN",
    "Criterion",
    "Row",
    "evaluate_criteria",
]

Measured = Mapping[tuple[str, int], Mapping[str, Any]]

RELATIVE_MARGIN = 0.25
"""How much worse than a competitor, measured the same way, ALGO may be before a relative
criterion flags it: 25%. RFC 9743 asks whether ALGO does "more harm than previous
standards-track algorithms"; a margin keeps an algorithm equal to its competitor (CUBIC
evaluated against CUBIC) from flagging on noise, and 25% is below the spread between Reno and
CUBIC themselves in most of these measures."""


@dataclass(frozen=True)
class Criterion:
    """One criterion of the battery, as the scorecard shows it."""

    id: str
    title: str
    source: str
    """Where the requirement is written (RFC 9743 and the section's title)."""
    sentence: str
    """The requirement, one sentence quoted."""
    threshold: Threshold
    threshold_source: str
    """Where the threshold's number comes from."""
    metric: str
    unit: str = ""
    scenario: str = ""

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "id": self.id,
            "title": self.title,
            "source": self.source,
            "sentence": self.sentence,
            "threshold": self.threshold.as_dict(),
            "threshold_text": self.threshold.describe(self.unit),
            "threshold_source": self.threshold_source,
            "metric": self.metric,
            "unit": self.unit,
            "scenario": self.scenario,
        }


@dataclass(frozen=True)
class Row:
    """A criterion measured in one setting (a competitor, a queue): value and verdict."""

    criterion: Criterion
    setting: str
    """``reno, DropTail 0.5 BDP (42 packets)``; empty when the criterion has one setting."""
    value: Value
    verdict: Verdict
    reason: str
    references: Mapping[str, Value] = field(default_factory=dict)
    """The competitors' own values measured the same way (absolute criteria), for reading."""
    key: str = ""
    """The setting's key (``reno/red``); empty when the criterion has one setting."""

    @property
    def id(self) -> str:
        """The criterion's id and the setting's key (``friendliness/reno/red``)."""
        return self.criterion.id + (f"/{self.key}" if self.key else "")

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "id": self.id,
            "criterion": self.criterion.id,
            "setting": self.setting,
            "value": self.value.as_dict(),
            "verdict": self.verdict,
            "reason": self.reason,
            "references": {name: v.as_dict() for name, v in self.references.items()},
        }


# -- the criteria: sentence, threshold and its origin side by side ------------------------------

FRIENDLINESS = Criterion(
    id="friendliness",
    title="TCP-friendliness",
    source="RFC 9743, Existing General-Purpose Congestion Control",
    sentence="A proposed congestion control algorithm MUST be evaluated when competing "
    "against standard IETF congestion controls, e.g. [RFC5681], [RFC9002], [RFC9438].",
    # RFC 5348 §1: a flow is "reasonably fair" if its sending rate is generally within a
    # factor of two of the sending rate of a TCP flow under the same conditions.
    threshold=Threshold("within", 0.5, 2.0),
    threshold_source='RFC 5348 §1\'s "reasonably fair": within a factor of two of TCP',
    metric="throughput per ALGO flow / throughput per competitor flow, sharing the bottleneck",
    scenario="2 ALGO + 2 competitor flows, each queue",
)

HARM_THROUGHPUT = Criterion(
    id="harm-throughput",
    title="Harm: competitors' throughput",
    source="RFC 9743, Mixed Algorithm Behavior",
    sentence="In contexts where differing congestion control algorithms are used, it is "
    "important to understand whether the proposed congestion control algorithm could result "
    "in more harm than previous standards-track algorithms (e.g., [RFC5681], [RFC9002], "
    "[RFC9438]) to flows sharing a common bottleneck.",
    # The factor of two of friendliness seen from the competitor's side: ALGO taking twice a
    # competitor's rate leaves the competitors 2/3 of what they had among themselves.
    threshold=Threshold("at least", low=2.0 / 3.0),
    threshold_source="the factor of two of RFC 5348 §1 from the competitor's side "
    "(ALGO at twice a competitor's rate leaves the competitors 2/3)",
    metric="per-flow throughput of the competitor flows beside ALGO / per-flow throughput of "
    "the same number of competitor flows beside competitors (tcpeval-01's impact on standard "
    "TCP: the mix against the baseline)",
    scenario="2 ALGO + 2 competitor flows against 4 competitor flows, each queue",
)

HARM_LATENCY = Criterion(
    id="harm-latency",
    title="Harm: latency",
    source="RFC 9743, Mixed Algorithm Behavior",
    sentence="The measure of harm is not restricted to unequal capacity, but ought also to "
    "consider metrics such as the introduced latency, or an increase in packet loss.",
    threshold=Threshold("at most", high=1.0 + RELATIVE_MARGIN),
    threshold_source="RELATIVE_MARGIN: at most 25% more than among competitors alone",
    metric="mean queueing delay at the bottleneck with ALGO in the mix / with competitors only",
    scenario="2 ALGO + 2 competitor flows against 4 competitor flows, DropTail 2 BDP",
)

HARM_LOSS = Criterion(
    id="harm-loss",
    title="Harm: packet loss",
    source=HARM_LATENCY.source,
    sentence=HARM_LATENCY.sentence,
    threshold=Threshold("at most", high=1.0 + RELATIVE_MARGIN),
    threshold_source="RELATIVE_MARGIN: at most 25% more than among competitors alone",
    metric="drop rate at the bottleneck with ALGO in the mix / with competitors only",
    scenario="2 ALGO + 2 competitor flows against 4 competitor flows, DropTail 0.5 BDP",
)

FAIRNESS = Criterion(
    id="fairness",
    title="Fairness within ALGO",
    source="RFC 9743, Fairness within the Proposed Congestion Control Algorithm",
    sentence="When multiple competing flows all use the same proposed congestion control "
    "algorithm, the proposal should explore how the capacity is shared among the competing "
    "flows.",
    # Jain's index of 4 flows is 0.9 when they hold e.g. shares 0.35/0.25/0.2/0.2 (CoV 0.33).
    threshold=Threshold("at least", low=0.9),
    threshold_source="Jain's index 0.9, CoV of the flows' throughputs 1/3 (the common "
    "convention of the fairness literature; yang2001 eq. 3)",
    metric="Jain's fairness index of the ALGO flows' throughputs over the window",
    scenario="4 ALGO flows alone",
)

SMOOTHNESS = Criterion(
    id="smoothness",
    title="Smoothness",
    source="RFC 5348, Abstract (not an RFC 9743 criterion)",
    sentence="It is reasonably fair when competing for bandwidth with TCP flows, but has a "
    "much lower variation of throughput over time compared with TCP, making it more suitable "
    "for applications such as streaming media where a relatively smooth sending rate is of "
    "importance.",
    threshold=Threshold("at most", high=1.0 + RELATIVE_MARGIN),
    threshold_source="RELATIVE_MARGIN: no more than 25% more variable than the competitor",
    metric="CoV of the send rate per ALGO flow / per competitor flow in the same runs, at "
    "0.2, 1 and 10 s (floyd2000 §4.1.1); the worst timescale is shown",
    scenario="2 ALGO + 2 competitor flows, DropTail 2 BDP",
)

RESPONSIVENESS = Criterion(
    id="responsiveness",
    title="Responsiveness D",
    source="RFC 9743, Transient Events",
    sentence="A proposed congestion control algorithm SHOULD consider how the proposed "
    "congestion control algorithm would perform in the presence of transient events such as "
    "sudden onset of congestion, a routing change, or a mobility event.",
    # floyd2000 App. A.2: TFRC takes from three to eight round-trip times to halve its rate
    # under persistent congestion; RFC 5348 accepts that for its smoothness.
    threshold=Threshold("at most", high=8.0),
    threshold_source="floyd2000 App. A.2: TFRC halves in 3 to 8 RTTs of persistent congestion",
    metric="RTTs from the first drop after a CBR of 75% of the link starts until ALGO's send "
    "rate (over one RTT) is half what it was (floyd2000's D)",
    unit="RTTs",
    scenario="1 ALGO flow alone, DropTail 1 BDP, cross traffic 0 -> 75%",
)

AGGRESSIVENESS = Criterion(
    id="aggressiveness",
    title="Aggressiveness I",
    source="RFC 9743, Protection Against High Packet Loss",
    sentence="To accomplish this, it should avoid excessive increases in sending rate, and "
    "reduce its sending rate if experiencing high packet loss.",
    threshold=Threshold("at most", high=1.0 + RELATIVE_MARGIN),
    threshold_source="RELATIVE_MARGIN: at most 25% faster than the competitor",
    metric="window increase per RTT over 20 RTTs from 4 RTTs after the cross traffic stops "
    "(floyd2000's I as a least-squares slope, packets of 1500 bytes), ALGO / competitor",
    scenario="1 flow alone, DropTail 1 BDP, cross traffic 75% -> 0",
)

BUFFERBLOAT = Criterion(
    id="bufferbloat",
    title="Bufferbloat",
    source="RFC 9743, Protection Against Bufferbloat",
    sentence="A congestion control algorithm should try to avoid maintaining excessive queues "
    "in the network.",
    # RFC 9743 notes that Reno and CUBIC fill FIFO buffers: ALGO is asked not to do worse.
    threshold=Threshold("at most", high=1.0 + RELATIVE_MARGIN),
    threshold_source="RELATIVE_MARGIN: at most 25% more queueing delay than the competitor "
    "(which fills the buffer: RFC 9743 says Reno and CUBIC do)",
    metric="mean queueing delay at the bottleneck, ALGO alone / competitor alone",
    scenario="4 flows alone, DropTail 4 BDP (deep)",
)

HIGH_LOSS = Criterion(
    id="high-loss",
    title="High packet loss",
    source="RFC 9743, Protection Against High Packet Loss",
    sentence="A congestion control algorithm should try to avoid causing excessively high "
    "rates of packet loss.",
    threshold=Threshold("at most", high=1.0 + RELATIVE_MARGIN),
    threshold_source="RELATIVE_MARGIN: at most 25% more drops than the competitor causes",
    metric="drop rate at the bottleneck, ALGO alone / competitor alone",
    scenario="4 flows alone, DropTail 0.5 BDP (shallow)",
)

FEEDBACK_LOSS = Criterion(
    id="feedback-loss",
    title="Loss of all feedback",
    source="RFC 9743, Mixed Algorithm Behavior",
    sentence="An evaluation MUST assess the potential to cause starvation, including "
    "assurance that a loss of all feedback (e.g., detected by expiry of a retransmission time "
    "out) results in backoff.",
    # RFC 5348 §4.4 halves at each nofeedback timeout; "backoff" read as at least one halving
    # over the last 2 s of a 5 s blackout.
    threshold=Threshold("at most", high=0.5),
    threshold_source="one halving at least (RFC 5348 §4.4's nofeedback response halves)",
    metric="ALGO's send rate over the last 2 s of a 5 s loss of every feedback packet / its "
    "rate over the 5 s before",
    scenario="1 ALGO flow alone, DropTail 1 BDP, reverse path dropping all its packets",
)

CRITERIA: tuple[Criterion, ...] = (
    FRIENDLINESS,
    HARM_THROUGHPUT,
    HARM_LATENCY,
    HARM_LOSS,
    FAIRNESS,
    SMOOTHNESS,
    RESPONSIVENESS,
    AGGRESSIVENESS,
    BUFFERBLOAT,
    HIGH_LOSS,
    FEEDBACK_LOSS,
)
"""Every criterion this battery measures, in scorecard order."""

NOT_EVALUATED: tuple[tuple[str, str, str], ...] = (
    (
        "RFC 9743, Protection Against Congestion Collapse",
        "A congestion control algorithm should either stop sending when the packet drop rate "
        'exceeds some threshold [RFC3714], or should include some notion of "full backoff".',
        "only the loss of all feedback is run; persistent heavy loss on the forward path "
        "(and exponential backoff down to one packet per RTT) is not",
    ),
    (
        "RFC 9743, Short Flows; Short and Long Flows",
        "A proposed congestion control algorithm MUST consider how new and short-lived flows "
        "affect long-lived flows, and vice versa.",
        "no short flows or web background yet (netsim has short_tcp and web traffic: the "
        "next slice)",
    ),
    (
        "RFC 9743, Real-Time Congestion Control",
        "A proposed congestion control algorithm SHOULD consider coexistence with widely "
        "deployed real-time congestion control algorithms.",
        "netsim has no real-time congestion control (e.g. RFC 8698's NADA, GCC)",
    ),
    (
        "RFC 9743, Differences with Congestion Control Principles; Incremental Deployment",
        "A proposed congestion control algorithm MUST clearly explain any deviations from "
        "[RFC2914] and [RFC7141].",
        "a question for the specification, not a simulation",
    ),
    (
        "RFC 9743, Tunnel Behavior",
        "When a proposed congestion control algorithm relies on explicit signals from the "
        "path, the proposal MUST consider the effect of traffic passing through a tunnel, "
        "where routers may not be aware of the flow.",
        "no explicit signals (ECN) are exercised",
    ),
    (
        "RFC 9743, Wireless Paths",
        "In particular, a proposed congestion control algorithm should be evaluated in "
        "situations where some packet losses are due to radio effects, rather than router "
        "queue drops; the link capacity varies over time due to changing link conditions; and "
        "media access delays and link-layer retransmission lead to increased jitter in "
        "round-trip times.",
        "no random-loss or varying-capacity links in this slice (netsim's loss models could "
        "give the first)",
    ),
    (
        "RFC 9743, Active Queue Management (AQM)",
        "The proposed congestion control algorithm SHOULD be evaluated under a variety of "
        "bottleneck queue disciplines.",
        "RED is run; FQ-CoDel, PIE, L4S and ECN marking are not (netsim has RED and DropTail only)",
    ),
    (
        "RFC 9743, Operation with the Envelope set by Network Circuit Breakers",
        "A well-designed congestion control algorithm ought to react before the flow uses "
        "excessive resources, and therefore will operate within the envelope set by network "
        "transport circuit breaker algorithms.",
        "no circuit breaker is modelled",
    ),
    (
        "RFC 9743, Paths with Varying Delay; Sudden changes in the Path",
        "A proposed congestion control algorithm SHOULD be evaluated to ensure its operation "
        "is robust when there is a significant change in the minimum delay.",
        "netsim's links keep their delay during a run",
    ),
    (
        "RFC 9743, Internet of Things and Constrained Nodes; Paths with High Delay; Data Centers",
        "A proposed congestion control algorithm ought not to presume that all general "
        "Internet paths have a low delay.",
        "one path setting (20 Mb/s, 50 ms) only: tcpeval-01's dial-up, satellite, "
        "trans-oceanic and data-centre settings and its RTTs of 4-200 ms are the next slice",
    ),
    (
        "RFC 9743, Misbehaving Nodes; Extreme Packet Reordering",
        "A proposed congestion control algorithm SHOULD explore how the algorithm performs "
        "with non-compliant senders, receivers, or routers.",
        "no misbehaving endpoints or reordering links in netsim",
    ),
    (
        "RFC 9743, Multipath Transport",
        "Authors of a proposed multipath congestion control algorithm that implements path "
        "fail-over MUST evaluate the harm to performance resulting from a change in the path, "
        "and show that this does not result in flow starvation.",
        "netsim's flows are single-path",
    ),
    (
        "draft-irtf-iccrg-tcpeval-01, Intra-protocol and inter-RTT fairness; Multiple "
        "bottlenecks; Ramp-up time",
        "(tcpeval-01's inter-RTT fairness, 3-hop parking lot and ramp-up time tests)",
        "not run in this slice (netsim has the parking lot and random RTTs)",
    ),
)
"""Criteria this slice does not evaluate: (source, its sentence, why)."""


# -- turning the measurements into rows ----------------------------------------------------------


def _reason(value: Value, threshold: Threshold, verdict: Verdict, unit: str = "") -> str:
    """Why the verdict: the interval against the threshold, in a few words."""
    if verdict == "not evaluated":
        return value.note or "nothing measured"
    where = "the mean" if not value.has_interval else "the 95% interval"
    shown = value.format()
    words = {
        "meets": f"{where} {shown} is {threshold.describe(unit)}",
        "flag": f"{where} {shown} is wholly outside {threshold.describe(unit)}",
        "inconclusive": f"{where} {shown} crosses the threshold ({threshold.describe(unit)}): "
        "more seeds decide",
    }
    text = words[verdict]
    if value.note:
        text += f" ({value.note})"
    return text


def _row(
    criterion: Criterion,
    key: str,
    setting: str,
    value: Value,
    references: Mapping[str, Value] | None = None,
) -> Row:
    verdict = decide(value, criterion.threshold)
    return Row(
        criterion,
        setting,
        value,
        verdict,
        _reason(value, criterion.threshold, verdict, criterion.unit),
        dict(references or {}),
        key,
    )


def _per_seed(
    measured: Measured, key: str, seeds: Sequence[int], read: Callable[[Mapping[str, Any]], float]
) -> np.ndarray:
    """``read`` of every seed's measurements of run ``key`` (NaN where missing)."""
    out = []
    for seed in seeds:
        m = measured.get((key, seed))
        out.append(read(m) if m is not None else math.nan)
    return np.asarray(out, dtype=float)


def _class_mean(m: Mapping[str, Any], prefix: str, field_: str = "throughput_bps") -> float:
    values = [v for n, v in zip(m["names"], m[field_], strict=True) if n.startswith(prefix)]
    return float(np.mean(values)) if values else math.nan


def _field(name: str) -> Callable[[Mapping[str, Any]], float]:
    """A reader of the measurement ``name`` of a run."""

    def read(m: Mapping[str, Any]) -> float:
        return float(m[name])

    return read


def _jain(m: Mapping[str, Any]) -> float:
    from tfrclab.metrics import fairness_index

    return float(fairness_index(m["throughput_bps"]))


def _cov_ratio(m: Mapping[str, Any], k: int) -> float:
    covs = np.asarray(m["cov"], dtype=float)[:, k]
    algo = [c for n, c in zip(m["names"], covs, strict=True) if n.startswith("algo")]
    ref = [c for n, c in zip(m["names"], covs, strict=True) if n.startswith("ref")]
    a, r = float(np.nanmean(algo)), float(np.nanmean(ref))
    return a / r if r > 0 else math.nan


def evaluate_criteria(
    measured: Measured, competitors: Sequence[str], plan: BatteryPlan
) -> list[Row]:
    """Every criterion's rows from the runs' measurements (:func:`battery.run_all`)."""
    from tfrclab.reproduce.claims import worst_of

    seeds = plan.seeds
    net = plan.network
    rows: list[Row] = []

    def queue_setting(name: str, queue: str) -> str:
        return f"vs {name}, {net.describe_queue(queue)}"

    for name in competitors:
        for queue in ("droptail-0.5bdp", "droptail-2bdp", "red"):
            ratios = _per_seed(
                measured,
                f"mix/{name}/{queue}",
                seeds,
                lambda m: _ratio(_class_mean(m, "algo"), _class_mean(m, "ref")),
            )
            rows.append(
                _row(
                    FRIENDLINESS,
                    f"{name}/{queue}",
                    queue_setting(name, queue),
                    seed_mean(ratios, log=True),
                )
            )
    for name in competitors:
        for queue in ("droptail-0.5bdp", "droptail-2bdp", "red"):
            mix = _per_seed(measured, f"mix/{name}/{queue}", seeds, lambda m: _class_mean(m, "ref"))
            base = _per_seed(
                measured, f"solo/{name}/{queue}", seeds, lambda m: _class_mean(m, "ref")
            )
            rows.append(
                _row(
                    HARM_THROUGHPUT,
                    f"{name}/{queue}",
                    queue_setting(name, queue),
                    ratio_of_means(mix, base),
                )
            )
    for criterion, queue, field_ in (
        (HARM_LATENCY, "droptail-2bdp", "queue_delay_s"),
        (HARM_LOSS, "droptail-0.5bdp", "drop_rate"),
    ):
        for name in competitors:
            mix = _per_seed(measured, f"mix/{name}/{queue}", seeds, _field(field_))
            base = _per_seed(measured, f"solo/{name}/{queue}", seeds, _field(field_))
            rows.append(
                _row(criterion, name, queue_setting(name, queue), ratio_of_means(mix, base))
            )
    for queue in ("droptail-0.5bdp", "droptail-2bdp"):
        refs = {
            name: seed_mean(_per_seed(measured, f"solo/{name}/{queue}", seeds, _jain))
            for name in competitors
        }
        value = seed_mean(_per_seed(measured, f"solo/algo/{queue}", seeds, _jain))
        rows.append(_row(FAIRNESS, queue, net.describe_queue(queue), value, refs))
    labels = [f"{ts:g} s" for ts in plan.timescales]
    for name in competitors:
        per_seed = np.column_stack(
            [
                _per_seed(measured, f"mix/{name}/droptail-2bdp", seeds, partial(_cov_ratio, k=k))
                for k in range(len(plan.timescales))
            ]
        )
        with np.errstate(divide="ignore", invalid="ignore"):
            logs = np.log(np.where(per_seed > 0, per_seed, np.nan))
        # The worst timescale by the mean of the log ratios (the geometric mean), as for
        # friendliness; its interval taken back from the logarithms.
        worst = worst_of(logs, labels, badness=lambda mean: mean)
        value = (
            Value.missing(worst.note)
            if math.isnan(worst.mean)
            else Value(
                math.exp(worst.mean),
                math.exp(worst.mean - worst.half),
                math.exp(worst.mean + worst.half),
                worst.seeds,
                worst.note,
            )
        )
        rows.append(_row(SMOOTHNESS, name, queue_setting(name, "droptail-2bdp"), value))
    d = {
        x: seed_mean(_per_seed(measured, f"step/{x}", seeds, lambda m: m["d_rtts"]))
        for x in ("algo", *competitors)
    }
    rows.append(
        _row(
            RESPONSIVENESS,
            "",
            "",
            d["algo"],
            {name: d[name] for name in competitors},
        )
    )
    algo_i = _per_seed(measured, "step/algo", seeds, lambda m: m["i_pkts"])
    for name in competitors:
        ref_i = _per_seed(measured, f"step/{name}", seeds, lambda m: m["i_pkts"])
        rows.append(
            _row(
                AGGRESSIVENESS,
                name,
                f"vs {name}: ALGO {seed_mean(algo_i).format()}, {name} "
                f"{seed_mean(ref_i).format()} packets/RTT per RTT",
                ratio_of_means(algo_i, ref_i),
            )
        )
    for criterion, queue, field_ in (
        (BUFFERBLOAT, "droptail-4bdp", "queue_delay_s"),
        (HIGH_LOSS, "droptail-0.5bdp", "drop_rate"),
    ):
        algo_v = _per_seed(measured, f"solo/algo/{queue}", seeds, _field(field_))
        for name in competitors:
            ref_v = _per_seed(measured, f"solo/{name}/{queue}", seeds, _field(field_))
            unit = "ms" if field_ == "queue_delay_s" else ""
            scale = 1e3 if field_ == "queue_delay_s" else 1.0
            rows.append(
                _row(
                    criterion,
                    name,
                    f"vs {name}, {net.describe_queue(queue)}: ALGO "
                    f"{_scaled(seed_mean(algo_v), scale).format()}{unit and ' ' + unit}, {name} "
                    f"{_scaled(seed_mean(ref_v), scale).format()}{unit and ' ' + unit}",
                    ratio_of_means(algo_v, ref_v),
                )
            )
    fb = {
        x: seed_mean(_per_seed(measured, f"blackout/{x}", seeds, lambda m: m["rate_ratio"]))
        for x in ("algo", *competitors)
    }
    rows.append(_row(FEEDBACK_LOSS, "", "", fb["algo"], {name: fb[name] for name in competitors}))
    return rows


def _ratio(a: float, b: float) -> float:
    """The ratio a / b: infinite when only b is 0 (the competitor starved), NaN when both are."""
    if b > 0:
        return a / b
    return math.inf if a > 0 else math.nan


def _scaled(value: Value, factor: float) -> Value:
    return Value(
        value.mean * factor, value.low * factor, value.high * factor, value.seeds, value.note
    )


def queue_label(queue: str) -> str:
    """A queue's label without its size (``DropTail, 2 BDP``)."""
    return QUEUES[queue][2]
