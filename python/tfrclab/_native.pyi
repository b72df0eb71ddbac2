"""Type stubs for the private extension module built from crates/tfrclab-py."""

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

__all__ = ["ConfigError", "equation", "run_channel", "version"]

class ConfigError(ValueError):
    """A TFRC configuration the library cannot run with, such as an unknown preset name."""

def equation(
    size_bytes: float,
    rtt_s: float,
    p: float,
    b: float = 1.0,
    t_rto_s: float | None = None,
    cap_rto_term: bool = False,
) -> float:
    """The allowed rate X in bytes/s from the TCP throughput equation (RFC 5348 §3.1)."""

def run_channel(
    preset: str,
    forward_delay_s: float,
    reverse_delay_s: float,
    schedule: Sequence[tuple[float, str, float]],
    duration_s: float,
    seed: int = 0,
) -> dict[str, NDArray[np.float64] | int]:
    """Run one TFRC flow over the scripted channel and return its feedback records as columns.

    Schedule entries are ``(start_s, pattern, parameter)`` with pattern "none", "all",
    "periodic" (parameter: drop one packet in every ``parameter``) or "bernoulli" (parameter:
    drop probability). The result has one float64 array per record field (time_s,
    x_bytes_per_s, x_calc_bytes_per_s, x_recv_bytes_per_s, p, rtt_s, last_interval_packets,
    mean_interval_packets, discount_factor, open_interval_packets) and the ints packets_sent,
    packets_delivered and segment_size_bytes. Releases the GIL while simulating.
    """

def version() -> str:
    """The version of the tfrclab crates this module was built from."""
