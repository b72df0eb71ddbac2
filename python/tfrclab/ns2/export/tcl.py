"""What every part of the ns-2 export shares: Tcl values, the keys every flow has, refusals."""

from __future__ import annotations

from typing import Any

from tfrclab.ns2.plan import ExportError, FlowPlan
from tfrclab.ns2.values import duration_s

__all__ = ["COMMON_KEYS", "NEVER", "refuse_unknown", "seconds", "tcl_bool", "tcl_number"]

COMMON_KEYS = {"kind", "name", "count", "from", "to", "reverse", "start", "stop", "on_off",
                "loss_event_rtt", "group", "background"}  # fmt: skip
"""The keys every flow kind has; ``group`` and ``background`` only say how the flows are
reported, so they have nothing to export."""

NEVER = 2147483647
"""A Periodic period that never comes round again: how a schedule retires a periodic step."""


def tcl_bool(value: bool) -> str:
    """A boolean as Tcl writes it."""
    return "true" if value else "false"


def tcl_number(value: float) -> str:
    """A number for Tcl, exact enough for nanosecond times."""
    text = f"{value:.12g}"
    return text


def seconds(value: Any) -> float:
    """A duration (a string such as ``"100ms"``, or seconds) in seconds."""
    return duration_s(value) if isinstance(value, str) else float(value)


def refuse_unknown(flow: FlowPlan, allowed: set[str]) -> None:
    """Refuse every key of the flow's table the export has no ns-2 knob for, all at once."""
    unknown = [key for key in flow.table if key not in allowed]
    if unknown:
        raise ExportError(
            *(f"{flow.path}.{key}: has no ns-2 equivalent in the export" for key in unknown)
        )
