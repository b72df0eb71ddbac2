"""TFRC flows as ns-2.35's Agent/TFRC and Agent/TFRCSink, the floyd2000 preset (docs/tfrc.md)."""

from __future__ import annotations

from typing import Any

from tfrclab.ns2.export.tcl import COMMON_KEYS, seconds, tcl_number
from tfrclab.ns2.plan import FlowPlan, Refusals
from tfrclab.ns2.values import rate_bps, size_bytes

__all__ = ["tfrc_flow"]

# floyd2000 TFRC: ns-2.35 Agent/TFRC and Agent/TFRCSink as ns-default.tcl sets them, except
# useHeaders_ false (the paper predates the 32-byte header accounting added in 2005).
_TFRC_FIXED: dict[str, Any] = {
    "segment_size": None,  # must equal size
    "cap_rto_term": True,
    "rto": "tcp_like",
    "rate_scale": 1,
    "initial_window": "ns2",
    "initial_nofeedback": "2s",
    "nofeedback_rtts": 2,
    "max_rate": "1Tbps",
    "nofeedback_response": "halve_rate",
    "congestion_avoidance": "ns2_additive_increase",
    "max_backoff_interval": "none",
    "scheduling_granularity": "0s",
    "short_history": "ns2",
    "first_interval": "current_receive_rate",
}
"""TFRC keys ns-2 has no knob for: allowed only at the floyd2000 value."""
_TFRC_MAPPED = {"size", "feedback_size", "b", "rto_granularity", "rto_min",
                "rate_before_feedback", "rtt_ewma_q", "sqrt_rtt_ewma_q", "oscillation_prevention",
                "ndupack", "discount_threshold", "ecn", "preset", "dither_fraction",
                "loss_intervals", "loss_event_round_check"}  # fmt: skip


def tfrc_flow(flow: FlowPlan, lines: list[str]) -> None:
    """ns-2.35 Agent/TFRC + Agent/TFRCSink as the floyd2000 preset (docs/tfrc.md)."""
    t = flow.table
    refusals = Refusals()
    if t.get("preset", "rfc5348") != "floyd2000":
        refusals.refuse(f"{flow.path}.preset: only floyd2000 (ns-2's own TFRC) is exported")
    for key in t:
        if key in COMMON_KEYS or key in _TFRC_MAPPED:
            continue
        if key not in _TFRC_FIXED:
            refusals.refuse(f"{flow.path}.{key}: has no ns-2 equivalent in the export")
            continue
        fixed = _TFRC_FIXED[key]
        value = t[key]
        same = (
            size_bytes(value) == size_bytes(t.get("size", 1000))
            if key == "segment_size"
            else seconds(value) == seconds(fixed)
            if key in ("initial_nofeedback", "scheduling_granularity")
            else value == fixed
        )
        if not same:
            refusals.refuse(f"{flow.path}.{key}: ns-2's TFRC has no knob for it (needs {fixed!r})")
    if t.get("sqrt_rtt_ewma_q", t.get("rtt_ewma_q", 0.95)) != t.get("rtt_ewma_q", 0.95):
        refusals.refuse(f"{flow.path}.sqrt_rtt_ewma_q: ns-2 uses df_ for both averages")
    refusals.raise_any()
    k = flow.index
    discount = t.get("discount_threshold", 0.5)
    init_rate = t.get("rate_before_feedback", "300Bps")
    if init_rate == "one_packet_per_second":
        init_bytes = float(size_bytes(t.get("size", 1000)))
    else:
        init_bytes = rate_bps(init_rate) / 8.0
    settings = [
        ("fid_", k),
        ("packetSize_", size_bytes(t.get("size", 1000))),
        ("useHeaders_", "false"),
        ("df_", tcl_number(float(t.get("rtt_ewma_q", 0.95)))),
        ("tcp_tick_", tcl_number(seconds(t.get("rto_granularity", "100ms")))),
        ("minrto_", tcl_number(seconds(t.get("rto_min", "0s")))),
        ("InitRate_", tcl_number(init_bytes)),
        ("bval_", tcl_number(float(t.get("b", 1)))),
        ("ca_", 1 if t.get("oscillation_prevention", True) else 0),
        # tfrc.cc: each gap times 1 + overhead_·(2U - 1), U uniform: netsim's dither.
        ("overhead_", tcl_number(float(t.get("dither_fraction", 0)))),
        ("ecn_", 1 if t.get("ecn", False) else 0),
        ("ssmult_", 2),
        ("rate_init_", 2),
        ("rate_init_option_", 2),
        ("slow_increase_", 1),
        ("conservative_", 0),
        ("voip_", 0),
        ("SndrType_", 0),
        ("maxHeavyRounds_", 0),
        ("idleFix_", "true"),
    ]
    sink = [
        ("packetSize_", size_bytes(t.get("feedback_size", 40))),
        ("numPkts_", int(t.get("ndupack", 1))),
        ("discount_", 0 if discount == "none" else 1),
        ("minDiscountRatio_", tcl_number(0.5 if discount == "none" else float(discount))),
        ("smooth_", 1),
        ("algo_", 1),
        ("NumFeedback_", 1),
        ("AdjustHistoryAfterSS_", 1),
        # tfrc-sink.cc: -1 is DEFAULT_NUMSAMPLES, 8 (scripts as before for the default).
        ("NumSamples_", -1 if int(t.get("loss_intervals", 8)) == 8 else int(t["loss_intervals"])),
        ("ShortIntervals_", 0),
        # ns-2.35's default, on; netsim's `loss_event_round_check` is off unless set, so an
        # explicit false turns ns-2's off too (docs/tfrc.md, "Deviations from ns-2 that remain").
        ("PreciseLoss_", 1 if t.get("loss_event_round_check", True) else 0),
    ]
    lines.append(f"set src({k}) [new Agent/TFRC]")
    lines += [f"$src({k}) set {name} {value}" for name, value in settings]
    lines.append(f"set snk({k}) [new Agent/TFRCSink]")
    lines += [f"$snk({k}) set {name} {value}" for name, value in sink]
    lines.append(f"set app({k}) $src({k})")
