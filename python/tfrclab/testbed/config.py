"""The relay's configuration document, built from a testbed's parameters.

The parameters are the keyword arguments of :class:`tfrclab.testbed.Testbed` and the
``tfrclab testbed`` options.

Values are passed to the relay as written (``"10Mb/s"``, ``"25ms"``): the Rust side reads them
with the scenario files' own parsers and names the key of any error, so a testbed link and a
simulated link accept the same rates, durations and ``queue`` tables (docs/scenario.md,
"Queues").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import tomli_w

#: The keys of one direction of the link.
DIRECTION_KEYS = ("rate", "delay", "loss", "queue")

_QUEUE_KINDS = ("droptail", "red")
_RED_PRESETS = ("ns2_35", "ns2_2000", "adaptive")


def queue_table(spec: str | Mapping[str, Any]) -> dict[str, Any]:
    """A scenario ``queue`` table from a short spec or a table.

    ``"droptail:50"`` is DropTail holding 50 waiting packets, ``"droptail"`` ns-2's default
    (``limit_`` 50, 49 waiting); ``"red"`` is RED with ns-2.35's defaults and ``"red:ns2_2000"``
    or ``"red:adaptive"`` another preset. A mapping is taken as a scenario-file queue table
    (``{"kind": "red", "preset": "ns2_2000", "limit": 100}``).

    Raises:
        ValueError: The spec is neither form; the message names ``queue``.
    """
    if isinstance(spec, Mapping):
        return dict(spec)
    kind, _, arg = spec.strip().partition(":")
    if kind not in _QUEUE_KINDS:
        raise ValueError(
            f"queue {spec!r}: expected droptail[:PACKETS] or red[:PRESET] "
            f"(presets: {', '.join(_RED_PRESETS)})"
        )
    if kind == "droptail":
        if not arg:
            return {"kind": "droptail"}
        if not arg.isdigit():
            raise ValueError(f"queue {spec!r}: the DropTail limit must be a whole number")
        return {"kind": "droptail", "limit": int(arg)}
    if not arg:
        return {"kind": "red"}
    if arg not in _RED_PRESETS:
        raise ValueError(f"queue {spec!r}: unknown RED preset (use {', '.join(_RED_PRESETS)})")
    return {"kind": "red", "preset": arg}


def _rate(value: str | float) -> str:
    return value if isinstance(value, str) else f"{float(value)!r}bps"


def _duration(value: str | float) -> str:
    return value if isinstance(value, str) else f"{float(value)!r}s"


def direction_table(params: Mapping[str, Any]) -> dict[str, Any]:
    """One direction's table of the relay's configuration.

    From ``rate`` (b/s or a string with a unit), ``delay`` (seconds or a string with a unit),
    ``loss`` (probability) and ``queue`` (see :func:`queue_table`); keys left out are left out
    (the relay's defaults, or the forward direction's for the reverse).

    Raises:
        ValueError: An unknown key.
    """
    unknown = sorted(set(params) - set(DIRECTION_KEYS))
    if unknown:
        raise ValueError(
            f"unknown link parameter {unknown[0]!r} (expected {', '.join(DIRECTION_KEYS)})"
        )
    table: dict[str, Any] = {}
    if params.get("rate") is not None:
        table["rate"] = _rate(params["rate"])
    if params.get("delay") is not None:
        table["delay"] = _duration(params["delay"])
    if params.get("loss") is not None:
        table["loss"] = float(params["loss"])
    if params.get("queue") is not None:
        table["queue"] = queue_table(params["queue"])
    return table


def relay_document(
    *,
    tun_a: str,
    tun_b: str,
    forward: Mapping[str, Any],
    reverse: Mapping[str, Any] | None,
    seed: int,
    max_duration: str | float,
    log: str | None,
    max_log_bytes: int,
    tick: str | float = 0.0,
    slack: str | float = 0.0,
) -> str:
    """The relay's TOML configuration (its keys are documented in docs/testbed.md)."""
    doc: dict[str, Any] = {
        "tun_a": tun_a,
        "tun_b": tun_b,
        "seed": int(seed),
        "max_duration": _duration(max_duration),
        "max_log_bytes": int(max_log_bytes),
        "tick": _duration(tick),
        "slack": _duration(slack),
    }
    if log is not None:
        doc["log"] = log
    doc["forward"] = direction_table(forward)
    if reverse:
        doc["reverse"] = direction_table(reverse)
    return tomli_w.dumps(doc)
