"""tfrclab.models against the sanity values of the protocols reference and the papers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import rfc5348_rate
from tfrclab import models


def test_pftk_sanity_values() -> None:
    # Protocols reference §7: b = 1, p = 1%, RTT 0.1 s, T0 0.4 s.
    assert models.pftk_approx(0.01, 0.1, 0.4) == pytest.approx(112.3, abs=0.05)
    assert models.pftk_full(0.01, 0.1, 0.4) == pytest.approx(111.0, abs=0.05)


@pytest.mark.parametrize(("p", "ratio"), [(0.01, 1.01), (0.10, 0.84), (0.20, 0.51), (0.30, 0.33)])
def test_pftk_approx_over_full(p: float, ratio: float) -> None:
    got = models.pftk_approx(p, 0.1, 0.4) / models.pftk_full(p, 0.1, 0.4)
    assert got == pytest.approx(ratio, abs=0.01)


def test_pftk_window_limit() -> None:
    # With W_max far above W(p) nothing changes; a small W_max caps both models.
    assert models.pftk_full(0.01, 0.1, 0.4, w_max=1000) == models.pftk_full(0.01, 0.1, 0.4)
    limited = models.pftk_full(0.001, 0.1, 0.4, w_max=8)
    assert limited < models.pftk_full(0.001, 0.1, 0.4)
    assert limited <= 8 / 0.1
    assert models.pftk_approx(0.001, 0.1, 0.4, w_max=8) == pytest.approx(80.0)


def test_low_loss_limits_agree_with_mathis() -> None:
    p = 1e-6
    assert models.pftk_full(p, 0.1, 0.4) / models.mathis(p, 0.1) == pytest.approx(1, rel=0.01)
    assert models.pftk_approx(p, 0.1, 0.4) / models.mathis(p, 0.1) == pytest.approx(1, rel=0.01)
    # Floyd 2000 eq. 7: 1.22 / (R sqrt(p)).
    assert models.mathis(0.01, 0.2) == pytest.approx(1.2247 / (0.2 * 0.1), rel=1e-4)


def test_tfrc_rate_is_rfc5348_and_vectorised() -> None:
    ps = np.array([0.001, 0.01, 0.1, 0.5])
    got = models.tfrc_rate(1460, 0.1, ps)
    expected = [rfc5348_rate(1460, 0.1, p) for p in ps]
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    # With b = 1 and t_RTO = 4R it is the approximate PFTK model (below the cap) times s.
    assert models.tfrc_rate(1000, 0.1, 0.05) == pytest.approx(
        1000 * models.pftk_approx(0.05, 0.1, 0.4), rel=1e-12
    )
    with pytest.raises(ValueError, match="p must"):
        models.tfrc_rate(1000, 0.1, 0.0)


def test_loss_event_fraction() -> None:
    p = 0.01
    w = models.response_window(p)
    assert w == pytest.approx(1 / (math.sqrt(2 * p / 3) + 12 * math.sqrt(3 * p / 8) * p * 1.0032))
    assert models.loss_event_fraction(p) == pytest.approx((1 - (1 - p) ** w) / w)
    assert models.loss_event_fraction(0.2, window=1.0) == pytest.approx(0.2)


@given(st.floats(1e-5, 0.999))
def test_loss_event_fraction_is_below_the_loss_rate(p: float) -> None:
    # At least one packet per RTT: several losses may share an event, so events <= losses.
    fraction = models.loss_event_fraction(p)
    assert fraction > 0
    if models.response_window(p) >= 1:
        assert fraction <= p * (1 + 1e-12)


def test_aimd_formulas() -> None:
    # Yang 2001 Table I and §III-B.
    assert models.aimd_cov(0.5) == pytest.approx(0.577, abs=1e-3)
    assert models.aimd_cov(7 / 8) == pytest.approx(0.258, abs=1e-3)
    assert models.gaimd_friendly_alpha(7 / 8) == pytest.approx(0.3125)
    assert models.gaimd_friendly_alpha(0.5) == pytest.approx(1.0)
    assert models.aimd_responsiveness(0.5) == pytest.approx(1.0)
    assert math.ceil(models.aimd_responsiveness(7 / 8)) == 6
    np.testing.assert_allclose(models.aimd_cov(np.array([0.5, 0.875])), [0.5774, 0.2582], atol=1e-4)
    for bad in (0.0, 1.0, 1.5):
        with pytest.raises(ValueError, match="beta"):
            models.aimd_cov(bad)


@given(st.floats(0.05, 0.95))
def test_friendly_gaimd_matches_tcps_mean_window(beta: float) -> None:
    # Protocols reference §2: with alpha = 4(1 - beta^2)/3, GAIMD's mean window at loss,
    # sqrt(2 alpha / (b (1 - beta^2) p)), equals TCP's sqrt(8 / (3 b p)).
    alpha = models.gaimd_friendly_alpha(beta)
    p = 0.01
    assert math.sqrt(2 * alpha / ((1 - beta**2) * p)) == pytest.approx(math.sqrt(8 / (3 * p)))
