"""The loss event rate as each protocol sees it (Rhee & Xu 2005 §2).

Rhee & Xu compare "loss event rates" of TCP, TFRC and CBR, but each protocol counts loss
events its own way, and the comparison depends on which count is used. This module puts the
definitions side by side, each a pure function of plain arrays:

- :func:`grouped_loss_events`: the uniform definition of the paper's §2 (and RFC 5348 §5.2):
  a loss opens a new event when its packet was sent more than one RTT after the packet whose
  loss opened the current event. The RTT is either fixed (the path's base RTT: what netsim's
  flow monitor uses for ``loss_events``) or *measured*: a series of RTT samples over time,
  the event's window being the RTT in force when its first lost packet was sent.
- :func:`tcp_loss_indication_rate`: TCP's own count (Padhye et al., the paper's p_tcp):
  congestion window reductions, fast retransmits plus timeouts, per packet sent.
- :func:`tfrc_receiver_p`: TFRC's own p, as its receiver computes it (RFC 5348 §5.4):
  the time average of the receiver's p over the window, its value at the window's end, and
  the receiver's own loss events per packet (1/E[theta], the paper's p_tfrc).
- :func:`counter_delta`: how much a cumulative counter of a state trace grew over a window,
  the building block of the last two.

The monitor's packet loss rate and loss event rate themselves are
:func:`tfrclab.metrics.packet_loss_rate` and :func:`tfrclab.metrics.loss_event_rate`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from tfrclab.metrics import loss_event_rate, loss_event_starts

__all__ = [
    "TfrcP",
    "counter_delta",
    "grouped_loss_events",
    "rtt_in_force",
    "tcp_loss_indication_rate",
    "tfrc_receiver_p",
]


def _floats(x: ArrayLike) -> NDArray[np.float64]:
    return np.asarray(x, dtype=np.float64)


def rtt_in_force(
    times_s: ArrayLike, rtt_times_s: ArrayLike, rtt_values_s: ArrayLike
) -> NDArray[np.float64]:
    """The RTT in force at each of ``times_s``: the latest sample taken at or before it.

    ``rtt_times_s`` (sorted) and ``rtt_values_s`` are the flow's RTT samples; a time before
    the first sample gets the first sample (the flow had no estimate yet; the first one is the
    best there is). NaN samples (bins where nothing was sampled) are skipped.

    >>> rtt_in_force([0.0, 1.0, 2.5], [0.5, 2.0], [0.1, 0.3])
    array([0.1, 0.1, 0.3])

    Raises:
        ValueError: when the sample arrays differ in length, are unsorted or hold no
            finite positive sample.
    """
    at = _floats(rtt_times_s)
    values = _floats(rtt_values_s)
    if at.shape != values.shape or at.ndim != 1:
        raise ValueError(
            f"rtt_times_s and rtt_values_s: expected two 1-D arrays of one length, found "
            f"shapes {at.shape} and {values.shape}"
        )
    keep = np.isfinite(at) & np.isfinite(values) & (values > 0)
    at, values = at[keep], values[keep]
    if at.size == 0:
        raise ValueError(
            "rtt_values_s: expected at least one finite RTT sample above 0, found none"
        )
    if np.any(np.diff(at) < 0):
        raise ValueError("rtt_times_s: expected sample times in increasing order")
    index = np.searchsorted(at, _floats(times_s), side="right") - 1
    out: NDArray[np.float64] = values[np.clip(index, 0, None)]
    return out


def grouped_loss_events(
    lost_send_times_s: ArrayLike,
    rtt_s: float | tuple[ArrayLike, ArrayLike],
) -> NDArray[np.int64]:
    """Group losses into loss events; returns the index of each event's first loss.

    The rule of Rhee & Xu 2005 §2 ("the first packet loss is counted as a loss event ... there
    is a back-off for the duration of an RTT during which no packet loss is counted") with
    send times, as RFC 5348 §5.2 groups them. ``rtt_s`` is a fixed RTT (the base RTT: what
    netsim's monitor counts, :func:`tfrclab.metrics.loss_event_starts`) or the flow's
    measured RTT as ``(sample times, samples)``: each event then lasts the RTT in force
    (:func:`rtt_in_force`) when its first lost packet was sent.

    >>> grouped_loss_events([0.0, 0.05, 0.1, 0.11, 0.3], 0.1)
    array([0, 3, 4])
    >>> grouped_loss_events([0.0, 0.05, 0.1, 0.11, 0.3], ([0.0, 0.2], [0.06, 0.2]))
    array([0, 2, 4])

    Raises:
        ValueError: when the send times are not sorted, or the fixed RTT is not above 0.
    """
    t = _floats(lost_send_times_s)
    if np.any(np.diff(t) < 0):
        raise ValueError("lost_send_times_s: expected send times in increasing order")
    if not isinstance(rtt_s, tuple):
        if not float(rtt_s) > 0:
            raise ValueError(f"rtt_s: expected an RTT above 0 seconds, found {rtt_s!r}")
        return loss_event_starts(t, float(rtt_s))
    window = rtt_in_force(t, rtt_s[0], rtt_s[1])
    starts: list[int] = []
    i = 0
    while i < t.size:
        starts.append(i)
        i = int(np.searchsorted(t, t[i] + window[i], side="right"))
    return np.asarray(starts, dtype=np.int64)


def counter_delta(samples: ArrayLike) -> float:
    """How much a cumulative counter grew over a window of state-trace samples.

    ``samples`` are the counter's values at the end of each bin, from the bin before the
    window (its value when the window opens) to the window's last bin. NaN marks a bin that
    was not sampled (the flow had not started) and counts as 0: a counter starts at 0.

    >>> counter_delta([float("nan"), 3.0, 7.0, 7.0, 12.0])
    12.0
    >>> counter_delta([5.0, 7.0])
    2.0
    """
    x = np.nan_to_num(_floats(samples), nan=0.0)
    if x.size < 2:
        return 0.0
    return float(np.max(x) - x[0])


def tcp_loss_indication_rate(
    fast_retransmits: ArrayLike, timeouts: ArrayLike, packets_sent: ArrayLike
) -> float:
    """TCP's own loss event rate: congestion window reductions per packet sent.

    Padhye et al.'s p, the paper's p_tcp (Rhee & Xu 2005 §2): "the number of TCP loss
    indications (triple duplicate acknowledgment, and timeouts) ... divided by the total
    number of TCP packets transmitted". Each argument is a cumulative counter of the TCP
    sender's state trace over the window (see :func:`counter_delta`): entries into fast
    recovery, retransmission timer expiries with data outstanding (every expiry of a
    back-off sequence counts) and data packets sent (retransmissions included). NaN when
    nothing was sent.

    >>> tcp_loss_indication_rate([0, 2, 3], [0, 0, 1], [0, 100, 200])
    0.02
    """
    sent = counter_delta(packets_sent)
    reductions = counter_delta(fast_retransmits) + counter_delta(timeouts)
    return float(loss_event_rate(reductions, sent)) if sent > 0 else float("nan")


@dataclass(frozen=True)
class TfrcP:
    """TFRC's loss event rate as its own receiver sees it, over a window."""

    time_average: float
    """The receiver's p (RFC 5348 §5.4) averaged over the window's bins, zero bins included
    (time average: how the paper reports "p")."""
    at_end: float
    """The receiver's p at the window's end."""
    events_per_packet: float
    """The receiver's own loss events (grouped with the RTT the sender reports, i.e. the
    measured RTT) per packet sent: 1/E[theta], the paper's p_tfrc."""


def tfrc_receiver_p(rx_p: ArrayLike, rx_loss_events: ArrayLike, packets_sent: ArrayLike) -> TfrcP:
    """TFRC's own p over a window, from the TFRC state trace (docs/tfrc.md).

    ``rx_p`` is the receiver's p sampled at the end of each bin of the window; the two
    counters are cumulative, from the bin before the window to its last bin
    (:func:`counter_delta`). NaN p samples (unsampled bins) are left out of the average.

    >>> r = tfrc_receiver_p([0.0, 0.02, 0.04], [0, 1, 3], [0, 50, 100])
    >>> round(r.time_average, 3), r.at_end, r.events_per_packet
    (0.02, 0.04, 0.03)
    """
    p = _floats(rx_p)
    finite = p[np.isfinite(p)]
    sent = counter_delta(packets_sent)
    return TfrcP(
        time_average=float(finite.mean()) if finite.size else float("nan"),
        at_end=float(finite[-1]) if finite.size else float("nan"),
        events_per_packet=(
            float(loss_event_rate(counter_delta(rx_loss_events), sent))
            if sent > 0
            else float("nan")
        ),
    )
