"""One TFRC flow over a scripted channel: fixed delays and a schedule of loss patterns.

This wraps ``tfrc::harness`` (the smallest loop around the Rust sender and receiver), which is
what Floyd 2000 Fig. 2 needs: a known loss pattern, no queue, and the sender's state at every
feedback it processes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, NamedTuple

import numpy as np
from numpy.typing import NDArray

from tfrclab import _native

PatternName = Literal["none", "all", "periodic", "bernoulli"]
"""The loss patterns a :class:`LossStep` can name."""

Preset = Literal["rfc5348", "floyd2000"]
"""The TFRC parameter presets: RFC 5348, or ns-2's Agent/TFRC as used by Floyd et al. 2000."""

FloatArray = NDArray[np.float64]


class LossStep(NamedTuple):
    """From ``start_s`` on, drop data packets by ``pattern`` (until the next step starts).

    ``parameter`` is ``every`` for ``"periodic"`` (drop one packet in every ``every``, so the
    loss rate is 1/every) and the drop probability for ``"bernoulli"``; ``"none"`` and
    ``"all"`` ignore it.
    """

    start_s: float
    pattern: PatternName
    parameter: float = 0.0

    @classmethod
    def periodic(cls, start_s: float, loss_rate: float) -> LossStep:
        """A periodic step that drops one packet in every ``round(1 / loss_rate)``."""
        if not 0.0 < loss_rate <= 1.0:
            raise ValueError(f"loss_rate must be in (0, 1], got {loss_rate!r}")
        return cls(start_s, "periodic", float(round(1.0 / loss_rate)))


@dataclass(frozen=True)
class ChannelRun:
    """The sender's state at each feedback it processed, one array element per feedback.

    Rates are in bytes per second, times in seconds, loss intervals in packets. ``p``, the
    loss intervals and ``discount_factor`` (1 = no history discounting, RFC 5348 §5.5) are the
    receiver's values when it sent the report; ``x_*`` and ``rtt_s`` are the sender's after
    processing it (``x_calc_bytes_per_s`` is infinite before the first loss).
    """

    time_s: FloatArray
    x_bytes_per_s: FloatArray
    x_calc_bytes_per_s: FloatArray
    x_recv_bytes_per_s: FloatArray
    p: FloatArray
    rtt_s: FloatArray
    last_interval_packets: FloatArray
    mean_interval_packets: FloatArray
    discount_factor: FloatArray
    open_interval_packets: FloatArray
    packets_sent: int
    packets_delivered: int
    segment_size_bytes: int

    @property
    def x_pkts_per_s(self) -> FloatArray:
        """The allowed sending rate X in packets per second."""
        return self.x_bytes_per_s / self.segment_size_bytes

    def __len__(self) -> int:
        return len(self.time_s)

    def index_at(self, t_s: float) -> int | None:
        """The index of the last feedback at or before ``t_s``, or None if there is none yet."""
        i = int(np.searchsorted(self.time_s, t_s, side="right")) - 1
        return i if i >= 0 else None


def _array(raw: dict[str, FloatArray | int], key: str) -> FloatArray:
    value = raw[key]
    if not isinstance(value, np.ndarray):
        raise TypeError(f"tfrclab._native.run_channel returned a {type(value)} for {key!r}")
    return value


def _int(raw: dict[str, FloatArray | int], key: str) -> int:
    value = raw[key]
    if not isinstance(value, int):
        raise TypeError(f"tfrclab._native.run_channel returned a {type(value)} for {key!r}")
    return value


MAX_CHANNEL_SECONDS = 100_000.0
"""The longest scripted-channel run (one record per feedback report is kept)."""


def run_channel(
    *,
    preset: Preset | str = "rfc5348",
    forward_delay_s: float = 0.05,
    reverse_delay_s: float = 0.05,
    schedule: Iterable[LossStep | tuple[float, str, float]] = (),
    duration_s: float,
    seed: int = 0,
) -> ChannelRun:
    """Run one TFRC flow over a channel with fixed delays and scheduled data-packet loss.

    Args:
        preset: TFRC parameters, ``"rfc5348"`` or ``"floyd2000"`` (ns-2's Agent/TFRC).
        forward_delay_s: One-way delay of data packets, seconds.
        reverse_delay_s: One-way delay of feedback packets, seconds.
        schedule: Loss steps; each applies from its start until the next one starts, and
            before the first one nothing is lost. Feedback packets are never lost.
        duration_s: Simulated time to run, seconds.
        seed: Seed of the channel's random loss (``"bernoulli"``).

    Returns:
        The sender's state at each feedback.

    Raises:
        tfrclab.ConfigError: Unknown preset.
        ValueError: A bad loss step (unknown pattern, bad parameter, negative start), a
            negative delay or duration, or a duration over :data:`MAX_CHANNEL_SECONDS`.
    """
    if duration_s > MAX_CHANNEL_SECONDS:
        raise ValueError(
            f"duration_s {duration_s:g}: at most {MAX_CHANNEL_SECONDS:g} s (every feedback "
            "report is kept in memory)"
        )
    steps = [
        (float(start), str(pattern), float(parameter)) for start, pattern, parameter in schedule
    ]
    raw = _native.run_channel(preset, forward_delay_s, reverse_delay_s, steps, duration_s, seed)
    return ChannelRun(
        time_s=_array(raw, "time_s"),
        x_bytes_per_s=_array(raw, "x_bytes_per_s"),
        x_calc_bytes_per_s=_array(raw, "x_calc_bytes_per_s"),
        x_recv_bytes_per_s=_array(raw, "x_recv_bytes_per_s"),
        p=_array(raw, "p"),
        rtt_s=_array(raw, "rtt_s"),
        last_interval_packets=_array(raw, "last_interval_packets"),
        mean_interval_packets=_array(raw, "mean_interval_packets"),
        discount_factor=_array(raw, "discount_factor"),
        open_interval_packets=_array(raw, "open_interval_packets"),
        packets_sent=_int(raw, "packets_sent"),
        packets_delivered=_int(raw, "packets_delivered"),
        segment_size_bytes=_int(raw, "segment_size_bytes"),
    )
