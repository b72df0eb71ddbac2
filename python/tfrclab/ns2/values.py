"""Scenario values in netsim's human units, read on the Python side (docs/scenario.md, "Values").

The exporter needs a few values netsim does not hand back (a CBR rate, a packet size, a fixed
stop time); these parsers follow the table of docs/scenario.md: SI rate prefixes (k = 1000, as
ns-2), byte rates with a capital ``B``, sizes as bare integers (bytes) or with a unit.
"""

from __future__ import annotations

import re
from typing import Any

from tfrclab.units import parse_duration

__all__ = ["duration_s", "rate_bps", "size_bytes"]

_NUMBER = re.compile(
    r"\s*(?P<value>[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*(?P<unit>.*?)\s*"
)
_PREFIX = {
    "": 1.0,
    "k": 1e3,
    "K": 1e3,
    "M": 1e6,
    "m": 1e6,
    "G": 1e9,
    "g": 1e9,
    "T": 1e12,
    "t": 1e12,
}
_SIZES = {
    "": 1,
    "B": 1,
    "byte": 1,
    "bytes": 1,
    "kB": 1000,
    "KB": 1000,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
    "KiB": 1024,
    "MiB": 1024**2,
    "GiB": 1024**3,
    "TiB": 1024**4,
}


def rate_bps(value: Any) -> float:
    """A rate string (``"15Mbps"``, ``"300Bps"``, ``"2MB/s"``, ``"800kbit/s"``) in bits/s.

    >>> rate_bps("15Mbps"), rate_bps("300Bps"), rate_bps("800kb/s")
    (15000000.0, 2400.0, 800000.0)
    """
    match = _NUMBER.fullmatch(str(value))
    if match is None:
        raise ValueError(f"invalid rate {value!r}")
    unit = match["unit"]
    for suffix, bits in (("bps", 1), ("b/s", 1), ("bit/s", 1), ("Bps", 8), ("B/s", 8)):
        if unit.endswith(suffix) and unit[: -len(suffix)] in _PREFIX:
            prefix = unit[: -len(suffix)]
            if bits == 8 and prefix in ("m", "g", "t"):
                break
            return float(match["value"]) * _PREFIX[prefix] * bits
    raise ValueError(f"invalid rate {value!r}")


def size_bytes(value: Any) -> int:
    """A size (a bare integer of bytes, or ``"1000B"``, ``"1.5KB"``, ``"4KiB"``) in bytes.

    >>> size_bytes(1000), size_bytes("1.5KB"), size_bytes("40B")
    (1000, 1500, 40)
    """
    if isinstance(value, int):
        return value
    match = _NUMBER.fullmatch(str(value))
    if match is None or match["unit"] not in _SIZES:
        raise ValueError(f"invalid size {value!r}")
    return round(float(match["value"]) * _SIZES[match["unit"]])


def duration_s(value: Any) -> float:
    """A fixed duration string in seconds (``"100ms"`` is 0.1)."""
    return parse_duration(str(value))
