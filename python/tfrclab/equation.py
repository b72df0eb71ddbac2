"""The TCP throughput equation that sets TFRC's allowed rate (RFC 5348 §3.1; Floyd 2000 eq. (1)).

``X = s / (R*sqrt(2bp/3) + t_RTO * 3*sqrt(3bp/8) * p * (1 + 32p^2))`` bytes per second, computed
by the Rust crate ``tfrc`` so that Python and the protocol use the same arithmetic.
"""

from __future__ import annotations

import math

from tfrclab import _native


def _check(name: str, value: float, *, low: float, low_inclusive: bool, high: float) -> None:
    """Raise ValueError unless ``low < value <= high`` (``low <= value`` if inclusive)."""
    above_low = value >= low if low_inclusive else value > low
    if not (math.isfinite(value) and above_low and value <= high):
        bracket = "[" if low_inclusive else "("
        upper = "inf)" if math.isinf(high) else f"{high:g}]"
        raise ValueError(f"{name} must be in {bracket}{low:g}, {upper}, got {value!r}")


def throughput_bytes_per_s(
    size_bytes: float,
    rtt_s: float,
    p: float,
    *,
    b: float = 1.0,
    t_rto_s: float | None = None,
    cap_rto_term: bool = False,
) -> float:
    """The rate TFRC allows, in bytes per second (RFC 5348 §3.1).

    Args:
        size_bytes: Segment size s in bytes.
        rtt_s: Round-trip time R in seconds.
        p: Loss event rate, in (0, 1].
        b: Packets acknowledged by one TCP ACK (RFC 5348 recommends 1).
        t_rto_s: TCP retransmission timeout in seconds; ``None`` uses the RFC's 4R.
        cap_rto_term: Cap the factor 3*sqrt(3bp/8) at 1, as Padhye's model and ns-2 do; it only
            changes the result above p = 8/27.

    Returns:
        The allowed sending rate X in bytes per second.

    Raises:
        ValueError: An argument is out of range (sizes and times must be positive, p in (0, 1],
            b at least 1).
    """
    _check("size_bytes", size_bytes, low=0.0, low_inclusive=False, high=math.inf)
    _check("rtt_s", rtt_s, low=0.0, low_inclusive=False, high=math.inf)
    _check("p", p, low=0.0, low_inclusive=False, high=1.0)
    _check("b", b, low=1.0, low_inclusive=True, high=math.inf)
    if t_rto_s is not None:
        _check("t_rto_s", t_rto_s, low=0.0, low_inclusive=False, high=math.inf)
    return _native.equation(
        float(size_bytes),
        float(rtt_s),
        float(p),
        b=float(b),
        t_rto_s=None if t_rto_s is None else float(t_rto_s),
        cap_rto_term=cap_rto_term,
    )


def throughput_packets_per_s(
    size_bytes: float,
    rtt_s: float,
    p: float,
    *,
    b: float = 1.0,
    t_rto_s: float | None = None,
    cap_rto_term: bool = False,
) -> float:
    """The rate TFRC allows, in packets of ``size_bytes`` per second.

    Takes the same arguments as :func:`throughput_bytes_per_s` and divides its result by
    ``size_bytes``.
    """
    x = throughput_bytes_per_s(
        size_bytes, rtt_s, p, b=b, t_rto_s=t_rto_s, cap_rto_term=cap_rto_term
    )
    return x / size_bytes
