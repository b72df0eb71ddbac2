"""The metrics of the TCP-friendliness papers, on plain numpy arrays.

Every function takes arrays (or scalars) and nothing from the simulator, so the same code
measures netsim results (:class:`tfrclab.Result` hands out the arrays) and traces of real
networks. Each docstring names its source. Conventions: a *bin* is a fixed interval of length
``bin_s`` and per-bin arrays hold amounts per bin (packets, bytes or bits) along their last
axis; rates are per second; a metric that is undefined for its input (a mean of nothing, a
ratio of two zeros) is NaN, never an exception.

- Rates and smoothness: :func:`send_rate`, :func:`cov`, :func:`cov_at_timescale`,
  :func:`cov_time`.
- Fairness and friendliness: :func:`equivalence`, :func:`equivalence_ratio`,
  :func:`normalized_throughput`, :func:`fairness_index`, :func:`cov_lf`,
  :func:`friendliness_ratio`, :func:`friendliness_rating`, :func:`difference_ratio`,
  :func:`tcp_share`.
- Dynamics: :func:`responsiveness`, :func:`aggressiveness`.
- Loss: :func:`packet_loss_rate`, :func:`loss_event_rate`, :func:`loss_event_starts`,
  :func:`mean_inverse_loss_interval`, :func:`rhee_xu_predictions`.
- Links: :func:`link_utilization`, :func:`drop_rate`, :func:`time_weighted_mean`.
- Over seeds: :func:`mean_ci`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "FRIENDLINESS_BANDS",
    "aggressiveness",
    "cov",
    "cov_at_timescale",
    "cov_lf",
    "cov_time",
    "difference_ratio",
    "drop_rate",
    "equivalence",
    "equivalence_ratio",
    "fairness_index",
    "friendliness_rating",
    "friendliness_ratio",
    "link_utilization",
    "loss_event_rate",
    "loss_event_starts",
    "mean_ci",
    "mean_inverse_loss_interval",
    "normalized_throughput",
    "packet_loss_rate",
    "responsiveness",
    "rhee_xu_predictions",
    "send_rate",
    "tcp_share",
    "time_weighted_mean",
]

FloatArray = NDArray[np.float64]

_REL_TOL = 1e-9


def _floats(x: ArrayLike) -> FloatArray:
    return np.asarray(x, dtype=np.float64)


def _bins_per_window(bin_s: float, timescale_s: float) -> int:
    """How many bins make one window of ``timescale_s``; it must be a whole number."""
    if not (bin_s > 0 and timescale_s > 0 and np.isfinite(bin_s) and np.isfinite(timescale_s)):
        raise ValueError(
            f"bin ({bin_s!r} s) and timescale ({timescale_s!r} s) must be positive and finite"
        )
    k = round(timescale_s / bin_s)
    if k < 1 or abs(k * bin_s - timescale_s) > _REL_TOL * timescale_s:
        raise ValueError(
            f"timescale {timescale_s!r} s is not a whole number of bins of {bin_s!r} s"
        )
    return int(k)


def _ratio(num: ArrayLike, den: ArrayLike) -> FloatArray | float:
    """``num / den`` elementwise, 0.0 where ``den`` is 0 (netsim's convention for rates)."""
    n, d = _floats(num), _floats(den)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(d == 0, 0.0, n / np.where(d == 0, 1.0, d))
    return float(out) if out.ndim == 0 else out


# -- rates and smoothness -----------------------------------------------------------------------


def send_rate(per_bin: ArrayLike, bin_s: float, timescale_s: float) -> FloatArray:
    """The rate at timescale delta from per-bin amounts (Floyd 2000 eq. 3).

    R(t) = s * (packets sent in [t, t + delta)) / delta: the amounts of ``timescale_s /
    bin_s`` consecutive bins are summed and divided by delta, along the last axis. Give bits
    per bin for bits/s, packets per bin for packets/s (s = 1). A trailing partial window is
    dropped.

    >>> send_rate([1, 3, 2, 2, 5], bin_s=0.5, timescale_s=1.0)
    array([4., 4.])

    Raises:
        ValueError: if the timescale is not a positive whole number of bins.
    """
    k = _bins_per_window(bin_s, timescale_s)
    x = _floats(per_bin)
    windows = x.shape[-1] // k
    trimmed = x[..., : windows * k]
    rates: FloatArray = trimmed.reshape(*x.shape[:-1], windows, k).sum(axis=-1) / timescale_s
    return rates


def cov(samples: ArrayLike, axis: int = -1) -> FloatArray | float:
    """The coefficient of variation std / mean of rate samples (Floyd 2000 §4.1.1).

    The population standard deviation (divided by n) over ``axis``. NaN when the mean is 0 or
    there are no samples.

    >>> cov([1.0, 3.0])
    0.5
    >>> cov([2.0, 2.0, 2.0])
    0.0
    """
    x = _floats(samples)
    if x.shape[axis] == 0:
        out = np.full(np.delete(np.asarray(x.shape), axis), np.nan)
    else:
        mean = x.mean(axis=axis)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.where(mean == 0, np.nan, x.std(axis=axis) / np.where(mean == 0, 1, mean))
    return float(out) if np.ndim(out) == 0 else out


def cov_at_timescale(
    per_bin: ArrayLike,
    bin_s: float,
    timescale_s: float,
    start_s: float = 0.0,
    end_s: float | None = None,
) -> FloatArray | float:
    """CoV of the send rate at timescale delta over a measurement window (Floyd 2000 §4.1.1).

    The rate samples R(t0 + k delta), k = 0..n-1, of :func:`send_rate`, taken from the bins in
    ``[start_s, end_s)`` (``start_s`` and ``end_s`` are rounded to whole bins; default the
    whole series), then :func:`cov` of them along the last axis.

    >>> cov_at_timescale([1, 3, 1, 3, 2, 2], bin_s=1.0, timescale_s=2.0)
    0.0
    >>> round(cov_at_timescale([1, 3, 1, 3, 2, 2], bin_s=1.0, timescale_s=1.0), 4)
    0.4082
    """
    x = _floats(per_bin)
    first = max(0, round(start_s / bin_s))
    last = x.shape[-1] if end_s is None else min(x.shape[-1], round(end_s / bin_s))
    return cov(send_rate(x[..., first:last], bin_s, timescale_s))


def cov_time(per_bin: ArrayLike, bin_s: float, rtt_s: float) -> FloatArray | float:
    """CoV_time, a flow's smoothness: CoV of its per-RTT send-rate samples (Yang 2001 §III-A).

    The RTT is rounded to a whole number of bins (at least one), so bins much shorter than the
    RTT give the paper's per-RTT samples. AIMD's analytical value at low loss is
    sqrt((1 - beta)/(1 + beta)) (:func:`tfrclab.models.aimd_cov`).

    >>> cov_time([2, 0, 2, 0], bin_s=0.05, rtt_s=0.1)
    0.0
    """
    k = max(1, round(rtt_s / bin_s))
    return cov(send_rate(per_bin, bin_s, k * bin_s))


# -- fairness and friendliness -------------------------------------------------------------------


def equivalence(rate_a: ArrayLike, rate_b: ArrayLike) -> FloatArray | float:
    """The equivalence of two flows at each time (Floyd 2000 eq. 4).

    min(R_A/R_B, R_B/R_A): 1 when equal, 0 when exactly one is 0, NaN (undefined) when both
    are 0.

    >>> equivalence([2.0, 1.0, 0.0, 0.0], [1.0, 1.0, 3.0, 0.0])
    array([0.5, 1. , 0. , nan])
    """
    a, b = _floats(rate_a), _floats(rate_b)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.minimum(a, b) / np.maximum(a, b)
    out = np.where((a == 0) & (b == 0), np.nan, np.where((a == 0) | (b == 0), 0.0, out))
    return float(out) if out.ndim == 0 else out


def equivalence_ratio(rate_a: ArrayLike, rate_b: ArrayLike) -> float:
    """The mean of the defined equivalence values over a window (Floyd 2000 §4.1.1).

    Times where both rates are 0 are left out; NaN if none is left.

    >>> equivalence_ratio([2.0, 1.0, 0.0, 0.0], [1.0, 1.0, 3.0, 0.0])
    0.5
    """
    e = np.atleast_1d(equivalence(rate_a, rate_b))
    defined = e[~np.isnan(e)]
    return float(defined.mean()) if defined.size else float("nan")


def normalized_throughput(
    throughput: ArrayLike, capacity: float, n_flows: int
) -> FloatArray | float:
    """Throughput over the fair share capacity / n (Floyd 2000 Figs. 6-7); 1 is a fair share.

    ``throughput`` and ``capacity`` in the same unit.

    >>> normalized_throughput([1e6, 2e6], capacity=4e6, n_flows=4)
    array([1., 2.])
    """
    if n_flows < 1 or capacity <= 0:
        raise ValueError("capacity must be positive and n_flows at least 1")
    out = _floats(throughput) / (capacity / n_flows)
    return float(out) if out.ndim == 0 else out


def fairness_index(rates: ArrayLike, axis: int = -1) -> FloatArray | float:
    """Jain's fairness index over the flows on ``axis`` (Jain et al. 1984; Yang 2001 eq. 3).

    F = (sum x_i)^2 / (K sum x_i^2) over the K flows: 1 when all rates are equal, 1/K when one flow
    has everything; F ~ 1 / (1 + CoV^2). Give a (time x flow) array to get one index per interval
    (per RTT for short-term fairness, longer for long-term). NaN when all rates are 0.

    >>> fairness_index([1.0, 1.0, 1.0, 1.0])
    1.0
    >>> fairness_index([4.0, 0.0, 0.0, 0.0])
    0.25
    >>> fairness_index([[1.0, 1.0], [3.0, 1.0]])
    array([1. , 0.8])
    """
    x = _floats(rates)
    k = x.shape[axis]
    total = x.sum(axis=axis)
    squares = (x * x).sum(axis=axis)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(
            squares == 0, np.nan, total * total / (k * np.where(squares == 0, 1, squares))
        )
    return float(out) if np.ndim(out) == 0 else out


def cov_lf(mean_rates: ArrayLike) -> float:
    """CoV_lf, long-term fairness: CoV of competing flows' mean rates (Yang 2001 §III-A).

    The mean rates are taken over a long interval (15 s, 60 s in the paper).

    >>> round(cov_lf([1.0, 3.0]), 3)
    0.5
    """
    return float(cov(np.ravel(_floats(mean_rates))))


FRIENDLINESS_BANDS: tuple[tuple[float, str, str], ...] = (
    (4.00, "very poor", "< 20 %"),
    (2.34, "poor", "20-29 %"),
    (1.51, "unsatisfactory", "30-39 %"),
    (1.04, "satisfactory", "40-49 %"),
    (0.97, "excellent", "~50 %"),
    (0.69, "satisfactory", "51-59 %"),
    (0.44, "unsatisfactory", "60-69 %"),
    (0.25, "poor", "70-79 %"),
    (0.0, "very poor", "> 80 %"),
)
"""Hassan & Kara Table 1: (lower bound of F, rating, approximate TCP share), from high F to
low. The first band is F > 4.00; every other band includes its lower bound."""


def friendliness_ratio(tf_throughputs: ArrayLike, tcp_throughputs: ArrayLike) -> float:
    """The friendliness ratio F of TCP-friendly flows against TCP (Hassan & Kara eq. 2).

    F = mean throughput of the TCP-friendly flows / mean throughput of the TCP flows; infinite
    when the TCP flows got nothing and the others something, NaN when neither got anything.

    >>> friendliness_ratio([2.0, 4.0], [3.0, 3.0])
    1.0
    """
    tcp = float(np.mean(_floats(tcp_throughputs)))
    tf = float(np.mean(_floats(tf_throughputs)))
    if tcp == 0:
        return float("inf") if tf > 0 else float("nan")
    return tf / tcp


def friendliness_rating(ratio: float) -> str:
    """The rating band of a friendliness ratio F (Hassan & Kara Table 1).

    F is rounded to two decimals, as the table's bands are written, then placed: > 4.00 very
    poor, 2.34-4.00 poor, 1.51-2.33 unsatisfactory, 1.04-1.50 satisfactory, 0.97-1.03
    excellent, 0.69-0.96 satisfactory, 0.44-0.68 unsatisfactory, 0.25-0.43 poor, < 0.25 very
    poor.

    >>> friendliness_rating(1.0), friendliness_rating(2.31), friendliness_rating(0.45)
    ('excellent', 'unsatisfactory', 'unsatisfactory')

    Raises:
        ValueError: if F is negative or NaN.
    """
    if not ratio >= 0:
        raise ValueError(f"a friendliness ratio is >= 0, got {ratio!r}")
    f = round(ratio, 2)
    if f > FRIENDLINESS_BANDS[0][0]:
        return FRIENDLINESS_BANDS[0][1]
    for lower, rating, _share in FRIENDLINESS_BANDS[1:]:
        if f >= lower:
            return rating
    return FRIENDLINESS_BANDS[-1][1]  # pragma: no cover - the last band's bound is 0


def difference_ratio(a: ArrayLike, b: ArrayLike) -> FloatArray | float:
    """The throughput difference ratio of a against b (Rhee & Xu 2005 §2).

    (a - b) / b when a >= b, -(b - a) / a when a < b: positive when a is larger, negative
    when b is, 0 when equal (also when both are 0), and symmetric: swapping a and b flips the
    sign. Infinite when the smaller of the two is 0 and the other is not.

    >>> difference_ratio([3.0, 1.0, 2.0], [1.0, 3.0, 2.0])
    array([ 2., -2.,  0.])
    """
    x, y = _floats(a), _floats(b)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(x >= y, (x - y) / y, -(y - x) / x)
    out = np.where(x == y, 0.0, out)
    return float(out) if out.ndim == 0 else out


def tcp_share(tcp_throughput: ArrayLike, tfrc_throughput: ArrayLike) -> FloatArray | float:
    """TCP's share T_tcp / (T_tcp + T_tfrc) (Berumen & Marot Figs. 13-14).

    NaN when both are 0.

    >>> tcp_share(3.0, 1.0)
    0.75
    """
    t, f = _floats(tcp_throughput), _floats(tfrc_throughput)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(t + f == 0, np.nan, t / np.where(t + f == 0, 1, t + f))
    return float(out) if out.ndim == 0 else out


# -- dynamics ------------------------------------------------------------------------------------


def responsiveness(
    time_s: ArrayLike,
    rate: ArrayLike,
    onset_s: float,
    rtt_s: float,
    baseline_s: float | None = None,
) -> float:
    """Responsiveness D, in RTTs (Yang 2001 §IV; Floyd 2000 Appendix A.2).

    The RTTs from the onset of persistent congestion until the rate first falls to half its value
    before. ``rate`` is sampled at ``time_s`` (sorted). The rate before is the mean of the samples
    in ``[onset_s - baseline_s, onset_s)`` (default one RTT; the last sample before the onset when
    that window holds none). D = (t - onset_s) / rtt_s for the first sample time t >= onset_s whose
    rate is at most half of it; NaN if the rate never gets there. AIMD's analytical value is
    :func:`tfrclab.models.aimd_responsiveness`.

    >>> t = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5]
    >>> round(responsiveness(t, [10, 10, 10, 8, 6, 4], onset_s=0.2, rtt_s=0.1), 9)
    3.0
    """
    t, r = _floats(time_s), _floats(rate)
    window = rtt_s if baseline_s is None else baseline_s
    before = (t >= onset_s - window) & (t < onset_s)
    if before.any():
        base = float(r[before].mean())
    else:
        earlier = np.flatnonzero(t < onset_s)
        if earlier.size == 0:
            return float("nan")
        base = float(r[earlier[-1]])
    after = np.flatnonzero((t >= onset_s) & (r <= base / 2))
    if after.size == 0:
        return float("nan")
    return float((t[after[0]] - onset_s) / rtt_s)


def aggressiveness(
    time_s: ArrayLike,
    rate_packets_per_s: ArrayLike,
    onset_s: float,
    rtt_s: float,
    n_rtts: int = 10,
) -> float:
    """Aggressiveness I, in packets/RTT per RTT (Yang 2001 §V; Floyd 2000 Appendix A.1).

    The increase of the sending rate, in packets per RTT, per RTT after a step increase of the
    available bandwidth at ``onset_s``. The window W(t) = rate(t) * RTT is read at the onset and
    ``n_rtts`` RTTs later (each the last sample at or before that time), and I = (W(onset + n RTT) -
    W(onset)) / n. TCP's I is 1 packet/RTT per RTT, GAIMD's its alpha.

    >>> t = [0.0, 0.1, 0.2, 0.3]
    >>> aggressiveness(t, [100, 110, 120, 130], onset_s=0.0, rtt_s=0.1, n_rtts=3)
    1.0
    """
    if n_rtts < 1:
        raise ValueError(f"n_rtts must be at least 1, got {n_rtts}")
    t, r = _floats(time_s), _floats(rate_packets_per_s)

    def window_at(when: float) -> float:
        i = int(np.searchsorted(t, when + _REL_TOL * max(1.0, abs(when)), side="right")) - 1
        return float(r[i] * rtt_s) if i >= 0 else float("nan")

    return (window_at(onset_s + n_rtts * rtt_s) - window_at(onset_s)) / n_rtts


# -- loss ----------------------------------------------------------------------------------------


def packet_loss_rate(lost: ArrayLike, sent: ArrayLike) -> FloatArray | float:
    """Lost packets / packets sent (0 when nothing was sent).

    >>> packet_loss_rate(5, 100)
    0.05
    """
    return _ratio(lost, sent)


def loss_event_rate(loss_events: ArrayLike, sent: ArrayLike) -> FloatArray | float:
    """The loss event rate of any flow: loss events / packets sent (Rhee & Xu 2005 §2).

    0 when nothing was sent. Count the events with :func:`loss_event_starts`.

    >>> loss_event_rate(2, 100)
    0.02
    """
    return _ratio(loss_events, sent)


def loss_event_starts(lost_send_times_s: ArrayLike, rtt_s: float) -> NDArray[np.int64]:
    """Group losses into loss events; returns the index of each event's first loss.

    A loss opens a new event unless its packet was sent within one RTT (inclusive) of the
    packet whose loss opened the current event (Rhee & Xu 2005 §2, measured the same way for
    TCP, TFRC and CBR; the grouping of RFC 5348 §5.2). ``lost_send_times_s`` are the send
    times of the lost packets, sorted. netsim's flow monitor counts ``loss_events`` this way.

    >>> loss_event_starts([0.0, 0.05, 0.1, 0.11, 0.3], rtt_s=0.1)
    array([0, 3, 4])
    """
    t = _floats(lost_send_times_s)
    starts: list[int] = []
    i = 0
    while i < t.size:
        starts.append(i)
        i = int(np.searchsorted(t, t[i] + rtt_s, side="right"))
    return np.asarray(starts, dtype=np.int64)


def mean_inverse_loss_interval(theta_hat: ArrayLike) -> float:
    """E[1/theta_hat], the mean inverse estimated loss interval (Rhee & Xu 2005 §5).

    ``theta_hat`` holds the estimated loss interval sampled at each loss event.

    >>> mean_inverse_loss_interval([10.0, 40.0])
    0.0625
    """
    x = _floats(theta_hat)
    return float(np.mean(1.0 / x)) if x.size else float("nan")


def rhee_xu_predictions(
    theta_hat: ArrayLike,
    theta: ArrayLike,
    response: Callable[[float], float],
) -> tuple[float, float]:
    """TFRC throughput bounds of Rhee & Xu 2005 §5: (f(E[1/theta_hat]), f(1/E[theta])).

    ``theta_hat`` are the TFRC receiver's estimated loss intervals sampled at each loss event,
    ``theta`` the real loss intervals, ``response`` the response function f(p) (for example
    :func:`tfrclab.models.tfrc_rate` with fixed size and RTT). f(1/E[theta]) = f(p_tfrc) is the
    throughput the equation promises; f(E[1/theta_hat]) is the tighter bound that tracks TFRC
    more closely (for a decreasing f, by Jensen's inequality E[1/theta_hat] >= 1/E[theta_hat]).

    >>> rhee_xu_predictions([10.0, 40.0], [20.0, 30.0], lambda p: 1.0 / p)
    (16.0, 25.0)
    """
    p_hat = mean_inverse_loss_interval(theta_hat)
    th = _floats(theta)
    p_tfrc = 1.0 / float(np.mean(th)) if th.size else float("nan")
    return float(response(p_hat)), float(response(p_tfrc))


# -- links ---------------------------------------------------------------------------------------


def link_utilization(
    delivered_bits: ArrayLike, capacity_bps: float, time_s: float
) -> FloatArray | float:
    """Delivered bits / (capacity * time) (Floyd 2000 Table 25).

    >>> link_utilization(7.5e6, capacity_bps=15e6, time_s=1.0)
    0.5
    """
    if capacity_bps <= 0 or time_s <= 0:
        raise ValueError("capacity and time must be positive")
    out = _floats(delivered_bits) / (capacity_bps * time_s)
    return float(out) if out.ndim == 0 else out


def drop_rate(drops: ArrayLike, arrivals: ArrayLike) -> FloatArray | float:
    """Drops / arrivals at a link (Floyd 2000 Table 25); 0 without arrivals.

    >>> drop_rate(3, 300)
    0.01
    """
    return _ratio(drops, arrivals)


def time_weighted_mean(times_s: ArrayLike, levels: ArrayLike, end_s: float) -> float:
    """The time-weighted mean of a step function (Floyd 2000 Figs. 14, 24-28; Yang 2001).

    For example a queue length recorded at each change.
    ``levels[i]`` holds from ``times_s[i]`` until ``times_s[i + 1]`` (the last until
    ``end_s``); the mean is over ``[times_s[0], end_s]``.

    >>> time_weighted_mean([0.0, 1.0, 3.0], [0.0, 2.0, 4.0], end_s=4.0)
    2.0
    """
    t, v = _floats(times_s), _floats(levels)
    if t.size == 0 or end_s <= t[0]:
        return float("nan")
    edges = np.append(t, end_s)
    widths = np.clip(np.diff(edges), 0.0, None)
    return float(np.sum(v * widths) / (end_s - t[0]))


def mean_ci(samples: ArrayLike, confidence: float = 0.95) -> tuple[float, float]:
    """The mean of independent samples and the half-width of its Student t confidence interval.

    ``(mean, t_{(1+c)/2, n-1} * s / sqrt(n))`` with s the sample standard deviation, for
    figures averaged over seeds: the interval is ``mean +- half``. NaN samples are left out; the
    half-width is NaN with fewer than two samples (no spread to estimate).

    >>> m, half = mean_ci([1.0, 2.0, 3.0, 4.0])
    >>> m, round(half, 4)
    (2.5, 2.0543)

    Raises:
        ValueError: if ``confidence`` is not in (0, 1).
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    x = np.ravel(_floats(samples))
    x = x[~np.isnan(x)]
    if x.size == 0:
        return float("nan"), float("nan")
    mean = float(x.mean())
    if x.size < 2:
        return mean, float("nan")
    from scipy.stats import t

    quantile = float(t.ppf((1.0 + confidence) / 2.0, x.size - 1))
    return mean, quantile * float(x.std(ddof=1)) / float(np.sqrt(x.size))
