"""The per-protocol loss event definitions (tfrclab.loss_events) on hand-built drop sequences."""

from __future__ import annotations

import doctest
import math

import numpy as np
import pytest

from tfrclab import loss_events
from tfrclab.loss_events import (
    counter_delta,
    grouped_loss_events,
    rtt_in_force,
    tcp_loss_indication_rate,
    tfrc_receiver_p,
)
from tfrclab.metrics import loss_event_starts


def test_doctests() -> None:
    failures, _ = doctest.testmod(loss_events)
    assert failures == 0


def test_fixed_rtt_groups_a_burst_into_one_event() -> None:
    # A drop-tail burst: five losses sent within 30 ms, then an isolated loss 0.5 s later.
    drops = [1.000, 1.005, 1.010, 1.020, 1.030, 1.530]
    assert grouped_loss_events(drops, 0.1).tolist() == [0, 5]


def test_fixed_rtt_boundary_is_inclusive() -> None:
    # A loss sent exactly one RTT after the event's first loss still belongs to it.
    assert grouped_loss_events([0.0, 0.1, 0.2000001], 0.1).tolist() == [0, 2]


def test_event_window_starts_at_the_first_loss_not_the_last() -> None:
    # Losses every 60 ms with a 100 ms RTT: a chain, but each event closes 100 ms after its
    # own first loss, so 0.12 opens a new one (not chained from 0.06).
    assert grouped_loss_events([0.0, 0.06, 0.12, 0.18, 0.24], 0.1).tolist() == [0, 2, 4]


def test_fixed_rtt_matches_the_monitor_definition() -> None:
    rng = np.random.default_rng(3)
    drops = np.sort(rng.uniform(0, 50, 400))
    assert np.array_equal(grouped_loss_events(drops, 0.11), loss_event_starts(drops, 0.11))


def test_measured_rtt_follows_the_rtt_in_force_at_the_event_start() -> None:
    # RTT 50 ms until t = 1 s, then 300 ms (a queue built up).
    rtt = ([0.0, 1.0], [0.05, 0.3])
    drops = [0.50, 0.54, 0.60, 1.00, 1.20, 1.29, 1.31]
    # 0.50 opens (window 50 ms: 0.54 in); 0.60 opens; 1.00 opens with 300 ms: 1.20, 1.29 in;
    # 1.31 opens.
    assert grouped_loss_events(drops, rtt).tolist() == [0, 2, 3, 6]
    # With the base RTT alone the count differs: the definition matters.
    assert grouped_loss_events(drops, 0.05).tolist() == [0, 2, 3, 4, 5]


def test_measured_rtt_constant_equals_fixed() -> None:
    drops = [0.0, 0.05, 0.1, 0.11, 0.3, 0.31, 0.45]
    measured = grouped_loss_events(drops, ([0.0, 5.0], [0.1, 0.1]))
    assert measured.tolist() == grouped_loss_events(drops, 0.1).tolist()


def test_rtt_before_the_first_sample_and_unsampled_bins() -> None:
    got = rtt_in_force([0.1, 1.5, 3.0], [1.0, 2.0, 2.5], [0.2, float("nan"), 0.4])
    assert got.tolist() == [0.2, 0.2, 0.4]


def test_no_losses_no_events() -> None:
    assert grouped_loss_events([], 0.1).size == 0
    assert grouped_loss_events([], ([0.0], [0.1])).size == 0


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda: grouped_loss_events([0.2, 0.1], 0.1), "lost_send_times_s"),
        (lambda: grouped_loss_events([0.1], 0.0), "rtt_s"),
        (lambda: rtt_in_force([0.0], [0.0, 1.0], [0.1]), "rtt_times_s"),
        (lambda: rtt_in_force([0.0], [1.0, 0.0], [0.1, 0.1]), "rtt_times_s"),
        (lambda: rtt_in_force([0.0], [0.0], [float("nan")]), "rtt_values_s"),
    ],
)
def test_bad_input_names_the_field(call: object, field: str) -> None:
    with pytest.raises(ValueError, match=field):
        call()  # type: ignore[operator]


def test_counter_delta() -> None:
    assert counter_delta([float("nan"), float("nan"), 4.0]) == 4.0
    assert counter_delta([10.0]) == 0.0
    assert counter_delta([]) == 0.0


def test_tcp_counts_window_reductions_not_lost_packets() -> None:
    # 1000 packets sent in the window, 3 fast retransmits (each may repair several losses)
    # and 2 timeouts: 5 reductions.
    rate = tcp_loss_indication_rate([7, 8, 10], [1, 1, 3], [500, 900, 1500])
    assert rate == pytest.approx(5 / 1000)


def test_tcp_nothing_sent_is_nan() -> None:
    assert math.isnan(tcp_loss_indication_rate([0, 0], [0, 0], [5, 5]))


def test_tfrc_receiver_p() -> None:
    # p is 0 until the first loss event, then 0.01, then 0.03: the time average counts the
    # loss-free start.
    p = tfrc_receiver_p(
        [0.0, 0.0, 0.01, 0.01, 0.03, float("nan")],
        [float("nan"), 0, 1, 1, 2, 4],
        [float("nan"), 100, 200, 300, 350, 400],
    )
    assert p.time_average == pytest.approx(0.01)
    assert p.at_end == 0.03
    assert p.events_per_packet == pytest.approx(4 / 400)
