"""tfrclab.metrics against hand-computed cases, the papers' definitions, and properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from tfrclab import metrics as m

settings.register_profile("tfrclab", max_examples=60, deadline=None, derandomize=True)
settings.load_profile("tfrclab")

positive = st.floats(min_value=1e-3, max_value=1e6, allow_nan=False, allow_infinity=False)
non_negative = st.floats(
    min_value=0.0, max_value=1e6, allow_nan=False, allow_infinity=False, allow_subnormal=False
)
scales = st.floats(min_value=1e-3, max_value=1e3)


# -- send rate and CoV -----------------------------------------------------------------------


def test_send_rate_floyd_eq3_by_hand() -> None:
    # Packets per 10 ms bin, s = 1000 B: at delta = 20 ms the windows hold 3 and 1 packets.
    packets = np.array([1, 2, 0, 1, 7])
    bits = packets * 1000 * 8
    np.testing.assert_allclose(m.send_rate(bits, 0.01, 0.02), [3 * 8000 / 0.02, 8000 / 0.02])
    np.testing.assert_allclose(m.send_rate(packets, 0.01, 0.01), packets / 0.01)
    # 2-D: one row per flow.
    two = m.send_rate(np.vstack([packets, 2 * packets]), 0.01, 0.02)
    assert two.shape == (2, 2)
    np.testing.assert_allclose(two[1], 2 * two[0])


@pytest.mark.parametrize("timescale", [0.0, -1.0, 0.015, math.nan])
def test_send_rate_refuses_timescales_that_are_not_whole_bins(timescale: float) -> None:
    with pytest.raises(ValueError, match="bin"):
        m.send_rate([1, 2, 3], 0.01, timescale)


def test_cov_at_several_timescales() -> None:
    # Alternating 0/2 packets per bin: bursty at one bin, perfectly smooth at two or four.
    per_bin = np.tile([0.0, 2.0], 8)
    assert m.cov_at_timescale(per_bin, 0.1, 0.1) == pytest.approx(1.0)
    assert m.cov_at_timescale(per_bin, 0.1, 0.2) == 0.0
    assert m.cov_at_timescale(per_bin, 0.1, 0.4) == 0.0
    # Rates 1, 3 at delta: mean 2, population std 1.
    assert m.cov([1.0, 3.0]) == pytest.approx(0.5)
    # A measurement window: only bins 4..8 (rates 0, 2, 0, 2).
    assert m.cov_at_timescale(np.r_[np.full(4, 9.0), per_bin], 0.1, 0.1, start_s=0.4) == (
        pytest.approx(1.0)
    )
    assert m.cov_at_timescale([5.0, 5.0, 1.0, 9.0], 1.0, 1.0, end_s=2.0) == 0.0


def test_cov_is_nan_without_traffic() -> None:
    assert math.isnan(m.cov([0.0, 0.0]))
    assert math.isnan(m.cov(np.array([])))


def test_cov_time_uses_one_rtt_windows() -> None:
    per_bin = np.tile([4.0, 0.0], 10)  # 10 ms bins, RTT 20 ms: every RTT the same.
    assert m.cov_time(per_bin, 0.01, 0.02) == 0.0
    assert m.cov_time(per_bin, 0.01, 0.01) == pytest.approx(1.0)


@given(arrays(np.float64, st.integers(2, 40), elements=positive), scales)
def test_cov_is_scale_invariant(x: np.ndarray, c: float) -> None:
    assert m.cov(x * c) == pytest.approx(m.cov(x), rel=1e-9, abs=1e-12)


# -- equivalence ---------------------------------------------------------------------------------


def test_equivalence_floyd_eq4() -> None:
    e = m.equivalence([1.0, 4.0, 0.0, 3.0, 0.0], [2.0, 1.0, 5.0, 0.0, 0.0])
    np.testing.assert_array_equal(e[:4], [0.5, 0.25, 0.0, 0.0])
    assert math.isnan(e[4])
    assert m.equivalence(2.0, 2.0) == 1.0
    # Undefined values are left out of the ratio, zeros are not.
    assert m.equivalence_ratio([1.0, 0.0, 0.0], [1.0, 1.0, 0.0]) == pytest.approx(0.5)
    assert math.isnan(m.equivalence_ratio([0.0], [0.0]))


@given(
    arrays(np.float64, 20, elements=non_negative),
    arrays(np.float64, 20, elements=non_negative),
    scales,
)
def test_equivalence_is_symmetric_bounded_and_scale_invariant(
    a: np.ndarray, b: np.ndarray, c: float
) -> None:
    e = m.equivalence(a, b)
    defined = ~np.isnan(e)
    assert np.all((e[defined] >= 0) & (e[defined] <= 1))
    np.testing.assert_array_equal(np.isnan(e), (a == 0) & (b == 0))
    np.testing.assert_allclose(m.equivalence(b, a), e)
    np.testing.assert_allclose(m.equivalence(a * c, b * c), e, rtol=1e-9)


# -- fairness ------------------------------------------------------------------------------------


def test_jain_index_by_hand() -> None:
    assert m.fairness_index([5.0, 5.0, 5.0]) == pytest.approx(1.0)
    assert m.fairness_index([1.0, 0.0]) == pytest.approx(0.5)
    # (1 + 2 + 3)^2 / (3 * 14) = 36 / 42.
    assert m.fairness_index([1.0, 2.0, 3.0]) == pytest.approx(36 / 42)
    per_interval = m.fairness_index(np.array([[1.0, 1.0], [2.0, 0.0], [0.0, 0.0]]))
    np.testing.assert_allclose(per_interval[:2], [1.0, 0.5])
    assert math.isnan(per_interval[2])


@given(arrays(np.float64, st.integers(1, 30), elements=positive), scales)
def test_jain_index_bounds_scale_invariance_and_cov_relation(x: np.ndarray, c: float) -> None:
    f = m.fairness_index(x)
    assert 1 / len(x) - 1e-12 <= f <= 1 + 1e-12
    assert m.fairness_index(x * c) == pytest.approx(f, rel=1e-9)
    # Yang 2001: F = 1 / (1 + CoV^2) exactly, with the population CoV.
    assert f == pytest.approx(1 / (1 + m.cov(x) ** 2), rel=1e-9)


def test_cov_lf_and_normalized_throughput() -> None:
    assert m.cov_lf([2.0, 2.0, 2.0]) == 0.0
    assert m.cov_lf([[1.0, 3.0]]) == pytest.approx(0.5)
    np.testing.assert_allclose(m.normalized_throughput([0.5, 1.0, 1.5], 3.0, 3), [0.5, 1, 1.5])
    with pytest.raises(ValueError, match="capacity"):
        m.normalized_throughput(1.0, 0.0, 1)


# -- friendliness ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ratio", "rating"),
    [
        (6.46, "very poor"),
        (4.01, "very poor"),
        (4.00, "poor"),
        (2.34, "poor"),
        (2.33, "unsatisfactory"),
        (2.31, "unsatisfactory"),  # Hassan & Kara Table 3, TFRC vs Reno on DropTail
        (1.51, "unsatisfactory"),
        (1.50, "satisfactory"),
        (1.04, "satisfactory"),
        (1.03, "excellent"),
        (1.0, "excellent"),
        (0.97, "excellent"),
        (0.96, "satisfactory"),
        (0.77, "satisfactory"),  # Table 4, TFRC vs Reno on RED
        (0.69, "satisfactory"),
        (0.68, "unsatisfactory"),
        (0.45, "unsatisfactory"),  # Table 4, TFRC vs SACK on RED
        (0.44, "unsatisfactory"),
        (0.43, "poor"),
        (0.25, "poor"),
        (0.24, "very poor"),
        (0.0, "very poor"),
    ],
)
def test_friendliness_rating_bands(ratio: float, rating: str) -> None:
    assert m.friendliness_rating(ratio) == rating


def test_friendliness_ratio_and_bad_input() -> None:
    assert m.friendliness_ratio([3.0, 5.0], [2.0, 2.0]) == pytest.approx(2.0)
    assert m.friendliness_ratio([1.0], [0.0]) == math.inf
    with pytest.raises(ValueError, match=">= 0"):
        m.friendliness_rating(-0.1)
    with pytest.raises(ValueError, match=">= 0"):
        m.friendliness_rating(math.nan)


def test_difference_ratio_sign() -> None:
    # Rhee & Xu 2005 §2: positive when a is larger, negative when b is, same magnitude.
    assert m.difference_ratio(30.0, 10.0) == pytest.approx(2.0)
    assert m.difference_ratio(10.0, 30.0) == pytest.approx(-2.0)
    assert m.difference_ratio(10.0, 10.0) == 0.0
    assert m.difference_ratio(0.0, 0.0) == 0.0
    assert m.difference_ratio(1.0, 0.0) == math.inf
    assert m.difference_ratio(0.0, 1.0) == -math.inf


@given(positive, positive, scales)
def test_difference_ratio_is_antisymmetric_and_scale_invariant(
    a: float, b: float, c: float
) -> None:
    d = m.difference_ratio(a, b)
    assert m.difference_ratio(b, a) == pytest.approx(-d)
    assert (d > 0) == (a > b)
    assert m.difference_ratio(a * c, b * c) == pytest.approx(d, rel=1e-9)


@given(non_negative, non_negative)
def test_tcp_share_is_a_fraction(t: float, f: float) -> None:
    share = m.tcp_share(t, f)
    if t + f == 0:
        assert math.isnan(share)
    else:
        assert 0.0 <= share <= 1.0
        if f > 0 and t > 0:
            # TCP share and friendliness: share = 1 / (1 + F).
            assert share == pytest.approx(1 / (1 + m.friendliness_ratio([f], [t])))


# -- dynamics -------------------------------------------------------------------------------------


def test_responsiveness_of_a_halving_flow() -> None:
    rtt = 0.1
    t = np.arange(0, 3, rtt / 4)
    # TCP-like: halves one RTT after the onset at 1 s.
    rate = np.where(t < 1.0 + rtt - 1e-9, 100.0, 50.0)
    assert m.responsiveness(t, rate, onset_s=1.0, rtt_s=rtt) == pytest.approx(1.0)
    # A smooth flow losing 1/8 per RTT: the first sample at or below half is after 6 RTTs.
    k = np.floor((t - 1.0) / rtt + 1e-9)
    smooth = np.where(t < 1.0, 100.0, 100.0 * 0.875 ** np.maximum(k, 0))
    assert m.responsiveness(t, smooth, 1.0, rtt) == pytest.approx(6.0)
    assert math.isnan(m.responsiveness(t, np.full_like(t, 10.0), 1.0, rtt))


def test_aggressiveness_of_additive_increase() -> None:
    rtt = 0.05
    t = np.arange(0, 2, rtt)
    alpha = 0.31  # GAIMD: the window grows alpha packets per RTT
    w = 10 + alpha * np.maximum(0, np.round((t - 0.5) / rtt))
    assert m.aggressiveness(t, w / rtt, onset_s=0.5, rtt_s=rtt, n_rtts=10) == pytest.approx(alpha)
    with pytest.raises(ValueError, match="n_rtts"):
        m.aggressiveness(t, w, 0.5, rtt, n_rtts=0)


# -- loss -----------------------------------------------------------------------------------------


def test_loss_rates() -> None:
    np.testing.assert_allclose(m.packet_loss_rate([1, 0, 5], [100, 0, 50]), [0.01, 0.0, 0.1])
    assert m.loss_event_rate(3, 300) == 0.01


def test_loss_events_group_losses_within_one_rtt_of_the_first() -> None:
    # The same cases as netsim's flow monitor test (RTT 100 ms).
    sent = [0.010, 0.050, 0.110, 0.110000001, 0.200, 0.211]
    np.testing.assert_array_equal(m.loss_event_starts(sent, 0.1), [0, 3, 5])
    assert m.loss_event_starts([], 0.1).size == 0


@given(
    st.lists(st.floats(0, 100, allow_nan=False), max_size=60),
    st.floats(0.001, 5),
)
def test_loss_events_partition_the_losses(times: list[float], rtt: float) -> None:
    t = np.sort(np.asarray(times))
    starts = m.loss_event_starts(t, rtt)
    assert len(starts) <= len(t)
    if len(t):
        assert starts[0] == 0
        # Consecutive event starts are more than one RTT apart, members within one of theirs.
        assert np.all(np.diff(t[starts]) > rtt)
        owner = np.searchsorted(starts, np.arange(len(t)), side="right") - 1
        assert np.all(t - t[starts[owner]] <= rtt)


def test_rhee_xu_predictions_and_jensen() -> None:
    theta_hat = np.array([5.0, 20.0, 50.0])
    p_hat = m.mean_inverse_loss_interval(theta_hat)
    assert p_hat == pytest.approx((1 / 5 + 1 / 20 + 1 / 50) / 3)
    assert p_hat >= 1 / theta_hat.mean()

    def f(p: float) -> float:
        return 1.0 / math.sqrt(p)

    tight, loose = m.rhee_xu_predictions(theta_hat, theta_hat, f)
    assert tight == pytest.approx(f(p_hat))
    assert loose == pytest.approx(f(1 / theta_hat.mean()))
    assert tight <= loose


# -- links ----------------------------------------------------------------------------------------


def test_link_metrics() -> None:
    assert m.link_utilization(15e6 * 10, 15e6, 10.0) == 1.0
    assert m.drop_rate(0, 0) == 0.0
    assert m.drop_rate(5, 100) == 0.05
    assert m.time_weighted_mean([0.0, 2.0], [10.0, 0.0], 4.0) == 5.0
    assert math.isnan(m.time_weighted_mean([], [], 1.0))
    with pytest.raises(ValueError, match="positive"):
        m.link_utilization(1.0, 0.0, 1.0)


@given(
    arrays(np.float64, st.integers(1, 20), elements=st.floats(0, 100)),
    arrays(np.float64, 20, elements=st.floats(0.001, 10)),
)
def test_time_weighted_mean_lies_within_the_levels(levels: np.ndarray, gaps: np.ndarray) -> None:
    times = np.cumsum(gaps[: len(levels)]) - gaps[0]
    end = times[-1] + 1.0
    mean = m.time_weighted_mean(times, levels, end)
    assert levels.min() - 1e-9 <= mean <= levels.max() + 1e-9
