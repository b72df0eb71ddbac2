"""A link's queue as ns-2.35's DropTail or RED, every knob set (drop-tail.cc, red.cc)."""

from __future__ import annotations

from typing import Any

from tfrclab.ns2.export.tcl import tcl_bool, tcl_number
from tfrclab.ns2.plan import ExportError, LinkPlan
from tfrclab.ns2.values import duration_s, size_bytes

__all__ = ["queue_settings"]

_RED_PRESETS: dict[str, dict[str, Any]] = {
    "ns2_35": {"queue_in_bytes": True, "byte_mode": True, "min_th": 0, "max_th": 0,
               "w_q": -1, "gentle": True, "use_mark_p": True, "adaptive": False},
    "ns2_2000": {"queue_in_bytes": False, "byte_mode": False, "min_th": 5, "max_th": 15,
                 "w_q": 0.002, "gentle": False, "use_mark_p": False, "adaptive": False},
    "adaptive": {"queue_in_bytes": False, "byte_mode": False, "min_th": 0, "max_th": 0,
                 "w_q": 0, "gentle": True, "use_mark_p": True, "adaptive": True},
}  # fmt: skip
"""docs/queues.md's RED presets in ns-2's terms (thresh_ 0 and maxthresh_ 0: automatic)."""
_W_Q_CODES = {"auto": -1, "packet_time": 0, "ten_packet_times": -2}


def queue_settings(link: LinkPlan) -> tuple[str, list[str]]:
    """The ns-2 queue class of a link and the ``$q set`` lines that configure it."""
    table = link.queue
    path = link.queue_path
    if table is None:
        # docs/scenario.md: the default link queue is ns-2's DropTail with limit_ 50.
        return "DropTail", ["limit_ 50", "queue_in_bytes_ false", "drop_front_ false"]
    kind = table.get("kind")
    if kind == "droptail":
        # drop-tail.cc drops when len + 1 >= limit_ (N - 1 wait, one on the wire), and in
        # bytes when bytes + size >= limit_ * mean_pktsize_.
        if "limit" in table:
            return "DropTail", [f"limit_ {int(table['limit']) + 1}", "queue_in_bytes_ false",
                                "drop_front_ false"]  # fmt: skip
        if "ns2_limit" in table:
            return "DropTail", [f"limit_ {int(table['ns2_limit'])}", "queue_in_bytes_ false",
                                "drop_front_ false"]  # fmt: skip
        if "bytes" in table:
            limit = size_bytes(table["bytes"]) + 1
            return "DropTail", [f"limit_ {limit}", "queue_in_bytes_ true", "mean_pktsize_ 1",
                                "drop_front_ false"]  # fmt: skip
        return "DropTail", ["limit_ 50", "queue_in_bytes_ false", "drop_front_ false"]
    if kind != "red":
        raise ExportError(f"{path}.kind: {kind!r} has no ns-2 export")
    preset_name = table.get("preset", "ns2_35")
    if preset_name not in _RED_PRESETS:
        raise ExportError(f"{path}.preset: {preset_name!r} has no ns-2 export")
    red = dict(_RED_PRESETS[preset_name])
    for key in ("queue_in_bytes", "byte_mode", "gentle", "use_mark_p", "adaptive"):
        if key in table:
            red[key] = bool(table[key])
    for key in ("min_th", "max_th"):
        if key in table:
            if float(table[key]) == 0 and key == "min_th":
                raise ExportError(f"{path}.min_th: 0 means 'automatic' to ns-2 (thresh_ 0)")
            red[key] = float(table[key])
    if "w_q" in table:
        w_q = table["w_q"]
        red["w_q"] = _W_Q_CODES[w_q] if isinstance(w_q, str) else w_q
    mean = size_bytes(table.get("mean_packet_size", 500))
    limit = int(table.get("limit", 50))
    max_p = float(table.get("max_p", 0.1))
    lines = [
        f"limit_ {limit}",
        f"mean_pktsize_ {mean}",
        f"queue_in_bytes_ {tcl_bool(red['queue_in_bytes'])}",
        f"bytes_ {tcl_bool(red['byte_mode'])}",
        f"thresh_ {tcl_number(red['min_th'])}",
        f"maxthresh_ {tcl_number(red['max_th'])}",
        f"thresh_queue_ {tcl_number(red['min_th'])}",
        f"maxthresh_queue_ {tcl_number(red['max_th'])}",
        f"q_weight_ {tcl_number(red['w_q'])}",
        f"linterm_ {tcl_number(1.0 / max_p)}",
        f"gentle_ {tcl_bool(red['gentle'])}",
        f"wait_ {tcl_bool(bool(table.get('wait', True)))}",
        f"setbit_ {tcl_bool(bool(table.get('ecn', False)))}",
        f"use_mark_p_ {tcl_bool(red['use_mark_p'])}",
        f"mark_p_ {tcl_number(float(table.get('mark_p', 0.1)))}",
        f"targetdelay_ {tcl_number(duration_s(table.get('target_delay', '5ms')))}",
        f"adaptive_ {1 if red['adaptive'] else 0}",
        # Adaptive RED's controller as netsim has it (Floyd, Gummadi, Shenker 2001).
        "interval_ 0.5",
        "alpha_ 0.01",
        "beta_ 0.9",
        "top_ 0.5",
        "bottom_ 0.01",
        "drop_tail_ true",
        "drop_front_ false",
        "drop_rand_ false",
        "ns1_compat_ false",
        "cautious_ 0",
        "feng_adaptive_ 0",
        "summarystats_ false",
    ]
    return "RED", lines
