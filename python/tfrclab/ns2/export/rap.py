"""RAP flows as ns-2.35's ``Agent/RAP`` at both ends (rap/rap.cc; docs/rap.md)."""

from __future__ import annotations

from typing import Any

from tfrclab.ns2.export.tcl import COMMON_KEYS, refuse_unknown, seconds, tcl_number
from tfrclab.ns2.plan import FlowPlan, Plan, Refusals
from tfrclab.ns2.values import size_bytes

__all__ = ["rap_flow"]

_RAP_PRESETS: dict[str, dict[str, Any]] = {
    "ns2": {"size": 512, "ack_size": 44, "shared_first_sample": False},
    "ns2_exact": {"size": 512, "ack_size": 44, "shared_first_sample": True},
    "hassan": {"size": 100, "ack_size": 40, "shared_first_sample": False},
}
"""docs/rap.md's RAP presets: what each sets apart from ns-default.tcl's ``Agent/RAP`` knobs."""
_RAP_KNOBS = (
    ("ipg", "ipg_", "2s", "duration"), ("srtt", "srtt_", "2s", "duration"),
    ("timeout", "timeout_", "2s", "duration"), ("alpha", "alpha_", 1.0, "number"),
    ("beta", "beta_", 0.5, "number"), ("delta", "delta_", 0.5, "number"),
    ("mu", "mu_", 1.2, "number"), ("phi", "phi_", 4.0, "number"),
    ("overhead", "overhead_", "0s", "duration"), ("kfrtt", "kfrtt_", 0.9, "number"),
    ("kxrtt", "kxrtt_", 0.01, "number"), ("dpthresh", "dpthresh_", 50, "number"),
)  # fmt: skip
"""netsim's RAP keys with ns-2's knob, ns-default.tcl's default and the value's kind."""
_RAP_KEYS = {key for key, _, _, _ in _RAP_KNOBS} | {
    "preset", "size", "ack_size", "fine_grain", "shared_first_sample", "max_packets",
}  # fmt: skip


def rap_flow(plan: Plan, flow: FlowPlan, lines: list[str]) -> None:
    """``Agent/RAP`` at both ends (rap/rap.cc), every knob written out (docs/rap.md).

    Both agents get the flow's knobs: the sink's ``rap_base_hdr_size_`` is its ACK size. The
    source is started with ``start`` (``advanceby`` with ``max_packets``) and stopped with
    ``stop``, as netsim's. ns-2 keeps its first-sample flag in a function-level ``static``
    (``UpdateTimeValues``), shared by every RAP agent of the process: with one RAP flow the flag
    is its own, as in netsim; with several, only flows that share it (``shared_first_sample``,
    preset ``ns2_exact``) run as in ns-2, and the others are refused.
    """
    t = flow.table
    refusals = Refusals()
    with refusals.part():
        refuse_unknown(flow, COMMON_KEYS | _RAP_KEYS)
    preset = str(t.get("preset", "ns2"))
    knobs = dict(_RAP_PRESETS.get(preset, _RAP_PRESETS["ns2"]))
    knobs.update({key: t[key] for key in knobs if key in t})
    raps = [f for f in plan.flows if f.kind == "rap"]
    if len(raps) > 1 and not knobs["shared_first_sample"]:
        # The key the user wrote: shared_first_sample, else the preset that left it off.
        key = "shared_first_sample" if "shared_first_sample" in t else f"preset ({preset!r})"
        refusals.refuse(
            f"{flow.path}.{key}: no shared first sample, beside {len(raps) - 1} other RAP flow(s): "
            "ns-2's Agent/RAP shares one first-sample flag among all its agents (rap.cc's "
            "static in UpdateTimeValues); only preset 'ns2_exact' or shared_first_sample = true "
            "runs as ns-2 does"
        )
    refusals.raise_any()
    settings: list[tuple[str, Any]] = [
        ("fid_", flow.index),
        ("packetSize_", size_bytes(knobs["size"])),
        ("rap_base_hdr_size_", size_bytes(knobs["ack_size"])),
        ("useFineGrain_", 1 if t.get("fine_grain", False) else 0),
        ("variance_", 0),
        ("seqno_", 0),
        ("debugEnable_", 0),
    ]
    for key, knob, default, kind in _RAP_KNOBS:
        value = t.get(key, default)
        settings.append((knob, tcl_number(seconds(value) if kind == "duration" else float(value))))
    k = flow.index
    for agent in ("src", "snk"):
        lines.append(f"set {agent}({k}) [new Agent/RAP]")
        lines += [f"${agent}({k}) set {name} {value}" for name, value in settings]
    lines.append(f"set app({k}) $src({k})")
