"""Analytical models the papers check simulations against, vectorised over numpy arrays.

- Response functions: :func:`tfrc_rate` (RFC 5348 §3.1, through the Rust implementation the
  protocol uses), :func:`pftk_full` and :func:`pftk_approx` (Padhye et al. 1998),
  :func:`mathis` (pure triple-duplicate losses), and :func:`response_window`, the window the
  TFRC equation allows per RTT.
- :func:`loss_event_fraction`: loss events per packet under independent loss (Yang 2001
  §III-B; Floyd 2000 §3.5.1).
- AIMD: :func:`aimd_cov` (smoothness), :func:`aimd_responsiveness`, and
  :func:`gaimd_friendly_alpha` (Yang and Lam 2000).

Rates are in packets per second unless a name says otherwise; ``p`` is a loss event rate (a
loss indication probability for PFTK) in (0, 1].
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from tfrclab import _native

__all__ = [
    "aimd_cov",
    "aimd_responsiveness",
    "gaimd_friendly_alpha",
    "loss_event_fraction",
    "mathis",
    "pftk_approx",
    "pftk_full",
    "response_window",
    "tfrc_rate",
]

FloatArray = NDArray[np.float64]


def _out(x: FloatArray) -> FloatArray | float:
    return float(x) if x.ndim == 0 else x


def _check_p(p: FloatArray) -> None:
    if np.any(~((p > 0) & (p <= 1))):
        raise ValueError("p must lie in (0, 1]")


def tfrc_rate(
    size_bytes: ArrayLike,
    rtt_s: ArrayLike,
    p: ArrayLike,
    b: float = 1.0,
    t_rto_s: ArrayLike | None = None,
) -> FloatArray | float:
    """The TCP throughput equation in bytes/s (RFC 5348 §3.1; Floyd 2000 eq. 1).

    X = s / (R sqrt(2bp/3) + t_RTO 3 sqrt(3bp/8) p (1 + 32 p^2)), t_RTO = 4R by default.
    Computed by the Rust implementation TFRC itself uses (``tfrc::equation``), elementwise
    over broadcast arrays.

    >>> round(tfrc_rate(1000, 0.1, 0.01))
    112332
    """
    s, r, pp = np.broadcast_arrays(
        np.asarray(size_bytes, dtype=np.float64),
        np.asarray(rtt_s, dtype=np.float64),
        np.asarray(p, dtype=np.float64),
    )
    t_rto = 4.0 * r if t_rto_s is None else np.broadcast_to(np.asarray(t_rto_s, float), r.shape)
    _check_p(pp)
    out = np.empty(s.shape, dtype=np.float64)
    for index in np.ndindex(s.shape):
        out[index] = _native.equation(
            float(s[index]), float(r[index]), float(pp[index]), b, float(t_rto[index])
        )
    return _out(out)


def response_window(p: ArrayLike) -> FloatArray | float:
    """The window the TFRC equation allows, in packets per RTT (Yang 2001 §III-B).

    W = 1 / (sqrt(2p/3) + 12 sqrt(3p/8) p (1 + 32 p^2)), the equation with b = 1 and t_RTO = 4R
    (Floyd 2000 §3.5.1).

    >>> round(response_window(0.01), 2)
    11.23
    """
    pp = np.asarray(p, dtype=np.float64)
    _check_p(pp)
    return _out(1.0 / (np.sqrt(2 * pp / 3) + 12 * np.sqrt(3 * pp / 8) * pp * (1 + 32 * pp**2)))


def loss_event_fraction(p: ArrayLike, window: ArrayLike | None = None) -> FloatArray | float:
    """Loss events per packet under independent loss (Yang 2001 §III-B; Floyd 2000 §3.5.1).

    For a flow sending W packets per RTT under independent packet loss p: (1 - (1 - p)^W) / W.
    Losses within one RTT form one event, so the loss event rate is below p. ``window`` defaults to
    :func:`response_window` of p.

    >>> round(loss_event_fraction(0.01), 5)
    0.0095
    """
    pp = np.asarray(p, dtype=np.float64)
    _check_p(pp)
    w = np.asarray(response_window(pp) if window is None else window, dtype=np.float64)
    if np.any(w <= 0):
        raise ValueError("the window must be positive")
    return _out((1 - (1 - pp) ** w) / w)


def mathis(p: ArrayLike, rtt_s: ArrayLike, b: float = 1.0) -> FloatArray | float:
    """TCP throughput with triple-duplicate losses only, in packets/s (Mathis et al. 1997).

    sqrt(3/(2bp)) / RTT: the pure-TD case of PFTK (protocols reference §7); Floyd 2000 eq. 7
    with b = 1, where sqrt(3/2) ~ 1.22.

    >>> round(mathis(0.01, 0.1), 2)
    122.47
    """
    pp = np.asarray(p, dtype=np.float64)
    _check_p(pp)
    return _out(np.sqrt(3.0 / (2.0 * b * pp)) / np.asarray(rtt_s, dtype=np.float64))


def pftk_approx(
    p: ArrayLike,
    rtt_s: ArrayLike,
    t0_s: ArrayLike,
    b: float = 1.0,
    w_max: float = np.inf,
) -> FloatArray | float:
    """PFTK's approximate model in packets/s (Padhye et al. 1998; protocols reference §7).

    min(W_max / RTT, 1 / (RTT sqrt(2bp/3) + T0 min(1, 3 sqrt(3bp/8)) p (1 + 32 p^2))).

    With b = 1 and T0 = 4R it is TFRC's equation with ns-2's cap on the timeout term.

    >>> round(pftk_approx(0.01, 0.1, 0.4), 1)
    112.3
    """
    pp = np.asarray(p, dtype=np.float64)
    _check_p(pp)
    r = np.asarray(rtt_s, dtype=np.float64)
    t0 = np.asarray(t0_s, dtype=np.float64)
    timeout = t0 * np.minimum(1.0, 3 * np.sqrt(3 * b * pp / 8)) * pp * (1 + 32 * pp**2)
    return _out(np.minimum(w_max / r, 1.0 / (r * np.sqrt(2 * b * pp / 3) + timeout)))


def pftk_full(
    p: ArrayLike,
    rtt_s: ArrayLike,
    t0_s: ArrayLike,
    b: float = 1.0,
    w_max: float = np.inf,
) -> FloatArray | float:
    """PFTK's full model in packets/s (Padhye et al. 1998; protocols reference §7).

    It models timeouts and the receiver window. W(p) = (2+b)/(3b) + sqrt(8(1-p)/(3bp) +
    ((2+b)/(3b))^2); Q(p, w) = min(1, (1-(1-p)^3) (1 + (1-p)^3 (1-(1-p)^(w-3))) / (1-(1-p)^w)); G(p)
    = 1 + p + 2p^2 + 4p^3 + 8p^4 + 16p^5 + 32p^6. If W(p) < W_max: B = ((1-p)/p + W + Q/(1-p)) /
    (RTT (bW/2 + 1) + Q G T0/(1-p)), else B = ((1-p)/p + W_max + Q(p, W_max)/(1-p)) / (RTT (b
    W_max/8 + (1-p)/(p W_max) + 2) + Q(p, W_max) G T0/(1-p)). Defined for p < 1.

    >>> round(pftk_full(0.01, 0.1, 0.4), 1)
    111.0
    """
    pp = np.asarray(p, dtype=np.float64)
    if np.any(~((pp > 0) & (pp < 1))):
        raise ValueError("the full PFTK model needs p in (0, 1)")
    r = np.asarray(rtt_s, dtype=np.float64)
    t0 = np.asarray(t0_s, dtype=np.float64)
    q1 = 1.0 - pp
    c = (2.0 + b) / (3.0 * b)
    w = c + np.sqrt(8.0 * q1 / (3.0 * b * pp) + c * c)

    def timeout_probability(window: FloatArray) -> FloatArray:
        num = (1 - q1**3) * (1 + q1**3 * (1 - q1 ** (window - 3)))
        return np.asarray(np.minimum(1.0, num / (1 - q1**window)), dtype=np.float64)

    g = 1 + pp + 2 * pp**2 + 4 * pp**3 + 8 * pp**4 + 16 * pp**5 + 32 * pp**6
    q_w = timeout_probability(w)
    unlimited = (q1 / pp + w + q_w / q1) / (r * (b * w / 2 + 1) + q_w * g * t0 / q1)
    wm = np.asarray(w_max, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        q_m = timeout_probability(np.broadcast_to(wm, np.shape(pp)).astype(np.float64))
        limited = (q1 / pp + wm + q_m / q1) / (
            r * (b * wm / 8 + q1 / (pp * wm) + 2) + q_m * g * t0 / q1
        )
    return _out(np.asarray(np.where(w < wm, unlimited, limited), dtype=np.float64))


def aimd_cov(beta: ArrayLike) -> FloatArray | float:
    """CoV_time of an AIMD flow at low loss (Yang 2001 eq. 4, §III-B).

    sqrt((1 - beta) / (1 + beta)): 0.58 for TCP (beta = 1/2), 0.26 for GAIMD (beta = 7/8).

    >>> round(aimd_cov(0.5), 2), round(aimd_cov(0.875), 2)
    (0.58, 0.26)
    """
    bb = np.asarray(beta, dtype=np.float64)
    if np.any(~((bb > 0) & (bb < 1))):
        raise ValueError("beta must lie in (0, 1)")
    return _out(np.sqrt((1 - bb) / (1 + bb)))


def aimd_responsiveness(beta: ArrayLike) -> FloatArray | float:
    """RTTs an AIMD flow needs to halve its rate (Yang 2001 §IV; Floyd 2000 Appendix A.2).

    With one loss indication per RTT: log(1/2) / log(beta) (Yang 2001 §IV; Floyd 2000 Appendix A.2).
    1 for TCP; 5.19 for beta = 7/8, which Yang 2001 Table I rounds to 5 (a whole number of decreases
    takes 6).

    >>> aimd_responsiveness(0.5), round(aimd_responsiveness(0.875), 2)
    (1.0, 5.19)
    """
    bb = np.asarray(beta, dtype=np.float64)
    if np.any(~((bb > 0) & (bb < 1))):
        raise ValueError("beta must lie in (0, 1)")
    return _out(np.log(0.5) / np.log(bb))


def gaimd_friendly_alpha(beta: ArrayLike) -> FloatArray | float:
    """The TCP-friendly GAIMD increase alpha for a decrease factor beta (Yang and Lam 2000).

    4 (1 - beta^2) / 3 (Yang and Lam 2000; protocols reference §2): 1 at beta = 1/2 (TCP),
    0.3125 at beta = 7/8.

    >>> gaimd_friendly_alpha(0.5), gaimd_friendly_alpha(0.875)
    (1.0, 0.3125)
    """
    bb = np.asarray(beta, dtype=np.float64)
    if np.any(~((bb > 0) & (bb < 1))):
        raise ValueError("beta must lie in (0, 1)")
    return _out(4 * (1 - bb**2) / 3)
