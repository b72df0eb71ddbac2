"""The fluid model's input: one FIFO bottleneck and the flows that share it.

A :class:`FluidModel` is the whole specification of a fluid run (Garcia Berumen & Marot §2.3: one
buffer, any number of Reno, Vegas and TFRC flows, each with its own propagation delay). Every
field is checked on construction and a bad one raises ``ValueError`` naming it; the limits
(:data:`MAX_STEPS`, :data:`MAX_FLOWS`) keep a run bounded in time and memory.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "KINDS",
    "MAX_BINS",
    "MAX_FLOWS",
    "MAX_SEED",
    "MAX_STEPS",
    "FluidFlow",
    "FluidModel",
    "check_seed",
]

KINDS = ("reno", "vegas", "tfrc")
"""The flow kinds the fluid model has equations for."""

MAX_STEPS = 20_000_000
"""Most integration steps one run may take (duration / step): about three minutes of Python."""

MAX_FLOWS = 64
"""Most flows one model may hold."""

MAX_BINS = 2_000_000
"""Most monitor bins one run may record (duration / bin)."""

Kind = Literal["reno", "vegas", "tfrc"]


MAX_SEED = 2**64 - 1
"""The largest seed (the packet simulator's seeds are 64-bit, and a fluid run may be compared
with a packet run of the same seed)."""


def check_seed(seed: object) -> None:
    """Raise ValueError unless ``seed`` is a whole number from 0 to :data:`MAX_SEED`."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise ValueError(f"seed must be a whole number from 0 to 2^64-1, got {seed!r}")


def _positive(name: str, value: float, high: float = math.inf) -> None:
    """Raise ValueError unless ``0 < value <= high`` and finite."""
    if not (isinstance(value, (int, float)) and math.isfinite(value) and 0 < value <= high):
        limit = "" if math.isinf(high) else f" and at most {high:g}"
        raise ValueError(f"{name} must be a number above 0{limit}, got {value!r}")


def _non_negative(name: str, value: float) -> None:
    """Raise ValueError unless ``value`` is finite and at least 0."""
    if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
        raise ValueError(f"{name} must be a number of at least 0, got {value!r}")


@dataclass(frozen=True)
class FluidFlow:
    """One flow of the fluid model: its kind, round-trip propagation delay and lifetime."""

    kind: Kind
    """``reno`` or ``vegas`` (window equations after Bonald 1998), ``tfrc`` (rate equations
    after Barbera et al. 2005)."""
    rtt_s: float
    """Round-trip propagation delay tau (no queueing), in seconds; half of it lies between
    the sender and the buffer, half between the buffer and the sender via the receiver."""
    name: str = ""
    """The flow's name in results (default: kind and index)."""
    start_s: float = 0.0
    """When the first connection starts."""
    stop_s: float | None = None
    """When the flow stops sending for good (None: at the end of the run)."""
    restart_mean_s: float | None = None
    """Mean of the exponential connection durations (Berumen §3.2): each connection lasts an
    exponential time, then a new one starts from slow start. None: one infinite connection."""
    off_mean_s: float = 0.0
    """Mean of the exponential idle time between two connections (0: restart at once)."""
    max_window: float | None = None
    """The receiver's window (packets) capping a TCP window, W_max of Bonald's eq. (8) being
    where losses cut it; None: no cap."""
    alpha: float = 1.0
    """Vegas: add one packet per RTT while diff < alpha (Berumen eq. 7)."""
    beta: float = 3.0
    """Vegas: remove one packet per RTT while diff > beta."""
    gamma: float = 1.0
    """Vegas: leave slow start once diff > gamma (Brakmo et al. 1994; ns-2's default 1)."""
    increase_limit: bool = True
    """TFRC: keep Berumen eq. 9's ``min(X + s/R, ...)``, a rise of at most one packet per RTT
    per report (Barbera et al.'s model); False drops it, as RFC 5348 §4.3 has no such term."""
    group: str = ""
    """The group results pool the flow in (the scenario's ``group``; "": its protocol)."""
    background: bool = False
    """Whether results treat the flow as background traffic (the scenario's ``background``)."""

    def check(self, where: str) -> None:
        """Raise ValueError naming ``where`` and the field when a value is out of range."""
        if self.kind not in KINDS:
            raise ValueError(f"{where}.kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        _positive(f"{where}.rtt_s", self.rtt_s, high=100.0)
        _non_negative(f"{where}.start_s", self.start_s)
        if self.stop_s is not None:
            _positive(f"{where}.stop_s", self.stop_s)
            if self.stop_s <= self.start_s:
                raise ValueError(f"{where}.stop_s must be after start_s ({self.start_s:g})")
        if self.restart_mean_s is not None:
            _positive(f"{where}.restart_mean_s", self.restart_mean_s)
        _non_negative(f"{where}.off_mean_s", self.off_mean_s)
        if self.max_window is not None:
            _positive(f"{where}.max_window", self.max_window)
        _positive(f"{where}.alpha", self.alpha)
        _positive(f"{where}.beta", self.beta)
        _positive(f"{where}.gamma", self.gamma)
        if self.beta < self.alpha:
            raise ValueError(f"{where}.beta must be at least alpha ({self.alpha:g})")


@dataclass(frozen=True)
class FluidModel:
    """A FIFO DropTail bottleneck of capacity C and buffer B shared by fluid flows.

    >>> m = FluidModel(capacity_bps=5e6, buffer_packets=100, flows=(FluidFlow("reno", 0.2),))
    >>> m.capacity_pps, m.steps
    (625.0, 100000)
    """

    capacity_bps: float
    """Bottleneck capacity C, bits per second."""
    buffer_packets: float
    """Buffer size B, packets (Berumen eq. 11: losses only while q = B)."""
    flows: tuple[FluidFlow, ...]
    packet_bytes: int = 1000
    """The packet size s, bytes (every flow's)."""
    duration_s: float = 100.0
    step_s: float = 0.001
    """The fixed integration step; at most a quarter of the smallest round-trip delay."""
    bin_s: float = 0.1
    """The width of the recorded bins (a whole number of steps)."""
    gamma: float = 0.5
    """The multiplicative decrease of a TCP window on a loss (Berumen eq. 8)."""
    name: str = "fluid"
    measure_from_s: float = 0.0
    """Start of the measurement window the summaries use."""
    seed: int = 1
    """Seeds the exponential connection durations (the only randomness)."""

    def __post_init__(self) -> None:
        _positive("capacity_bps", self.capacity_bps, high=1e12)
        _positive("buffer_packets", self.buffer_packets, high=1e7)
        if not isinstance(self.packet_bytes, int) or not 1 <= self.packet_bytes <= 65535:
            raise ValueError(
                f"packet_bytes must be an integer in [1, 65535], got {self.packet_bytes!r}"
            )
        _positive("duration_s", self.duration_s, high=1e6)
        _positive("step_s", self.step_s, high=1.0)
        _positive("bin_s", self.bin_s, high=self.duration_s)
        _positive("gamma", self.gamma, high=1.0)
        _non_negative("measure_from_s", self.measure_from_s)
        if self.measure_from_s >= self.duration_s:
            raise ValueError(f"measure_from_s must be below duration_s ({self.duration_s:g})")
        check_seed(self.seed)
        if not self.flows:
            raise ValueError("flows must hold at least one flow")
        if len(self.flows) > MAX_FLOWS:
            raise ValueError(f"flows: at most {MAX_FLOWS} flows, got {len(self.flows)}")
        for k, flow in enumerate(self.flows):
            flow.check(f"flows[{k}]")
        smallest = min(f.rtt_s for f in self.flows)
        if self.step_s > smallest / 4:
            raise ValueError(
                f"step_s must be at most a quarter of the smallest rtt_s ({smallest:g} s), "
                f"got {self.step_s:g}"
            )
        ratio = self.bin_s / self.step_s
        if abs(ratio - round(ratio)) > 1e-6 * ratio:
            raise ValueError(
                f"bin_s must be a whole number of steps ({self.step_s:g} s), got {self.bin_s:g}"
            )
        if self.steps > MAX_STEPS:
            raise ValueError(
                f"duration_s / step_s is {self.steps} steps, above the limit of {MAX_STEPS}: "
                "shorten the run or lengthen the step"
            )
        if self.bins > MAX_BINS:
            raise ValueError(f"duration_s / bin_s is {self.bins} bins, above {MAX_BINS}")
        names = self.flow_names
        if len(set(names)) != len(names):
            raise ValueError(f"flows: names must be unique, got {names}")

    @property
    def capacity_pps(self) -> float:
        """C in packets per second."""
        return self.capacity_bps / (8.0 * self.packet_bytes)

    @property
    def steps(self) -> int:
        """Integration steps in the run."""
        return round(self.duration_s / self.step_s)

    @property
    def steps_per_bin(self) -> int:
        """Integration steps per recorded bin."""
        return round(self.bin_s / self.step_s)

    @property
    def bins(self) -> int:
        """Recorded bins (the last one may be partial and is dropped)."""
        return self.steps // self.steps_per_bin

    @property
    def flow_names(self) -> list[str]:
        """Each flow's name (its own, or kind and index)."""
        return [f.name or f"{f.kind}{k}" for k, f in enumerate(self.flows)]

    def with_step(self, step_s: float) -> FluidModel:
        """The same model integrated with another step (for convergence checks)."""
        from dataclasses import replace

        return replace(self, step_s=step_s)
