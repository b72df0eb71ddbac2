"""Human-readable quantities: durations such as ``"100ms"`` and sizes such as ``"1000B"``.

Scenario files and the command line share these parsers (design: "units are in names or
types"; scenario files accept human units). Every value comes back in a base unit: seconds for
durations, bytes for sizes.
"""

from __future__ import annotations

import math
import re

_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"

_DURATION = re.compile(rf"\s*(?P<value>{_NUMBER})\s*(?P<unit>[A-Za-zµ]*)\s*")
_DURATION_UNITS: dict[str, float] = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "min": 60.0,
    "h": 3600.0,
}

_SIZE = re.compile(rf"\s*(?P<value>{_NUMBER})\s*(?P<unit>[A-Za-z]*)\s*")
_SIZE_UNITS: dict[str, int] = {"": 1, "B": 1, "KB": 1000, "kB": 1000, "KiB": 1024}


def parse_duration(text: str) -> float:
    """Parse a duration with a unit (``"100ms"``, ``"0.1s"``, ``"250us"``) into seconds.

    Accepted units: ns, us (or µs), ms, s, min, h. A bare number is refused, because whether
    ``"100"`` means seconds or milliseconds is exactly the mistake units are there to prevent.

    Args:
        text: The duration as written by a user.

    Returns:
        The duration in seconds, finite and not negative.

    Raises:
        ValueError: The text is not a non-negative number followed by a known unit.
    """
    match = _DURATION.fullmatch(text)
    if match is None:
        raise ValueError(f"invalid duration {text!r}: expected a number and a unit, e.g. 100ms")
    unit = match["unit"]
    if unit not in _DURATION_UNITS:
        known = ", ".join(u for u in _DURATION_UNITS if u != "µs")
        if not unit:
            raise ValueError(f"duration {text!r} needs a unit ({known}), e.g. 100ms")
        raise ValueError(f"invalid duration {text!r}: unknown unit {unit!r} (use {known})")
    seconds = float(match["value"]) * _DURATION_UNITS[unit]
    if not math.isfinite(seconds):
        raise ValueError(f"invalid duration {text!r}: not finite")
    if seconds < 0:
        raise ValueError(f"invalid duration {text!r}: must not be negative")
    return seconds


def parse_size(text: str) -> int:
    """Parse a size in bytes (``"1000"``, ``"1000B"``, ``"1.5KB"``, ``"4KiB"``).

    Args:
        text: The size as written by a user; a bare number means bytes.

    Returns:
        The size in whole bytes, at least 1.

    Raises:
        ValueError: The text is not a positive whole number of bytes in a known unit.
    """
    match = _SIZE.fullmatch(text)
    if match is None:
        raise ValueError(f"invalid size {text!r}: expected a number of bytes, e.g. 1000 or 1000B")
    unit = match["unit"]
    if unit not in _SIZE_UNITS:
        raise ValueError(f"invalid size {text!r}: unknown unit {unit!r} (use B, KB or KiB)")
    value = float(match["value"]) * _SIZE_UNITS[unit]
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"invalid size {text!r}: must be a positive number of bytes")
    if value != int(value):
        raise ValueError(f"invalid size {text!r}: not a whole number of bytes")
    return int(value)


def format_duration(seconds: float) -> str:
    """Format seconds in the largest unit that keeps the number at least 1 (``0.1`` → ``"100ms"``).

    Args:
        seconds: A non-negative duration in seconds.

    Returns:
        A compact string that :func:`parse_duration` reads back to the same value (to about 6
        significant digits).
    """
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.6g}{unit}"
    return f"{seconds / 1e-9:.6g}ns"
