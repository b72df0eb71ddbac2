"""tfrclab: a toolkit for TCP-friendly congestion control (TFRC, RFC 5348).

The protocol and the simulations run in Rust (the private extension module ``tfrclab._native``);
this package is the front door: typed wrappers, experiments, figures and the ``tfrclab`` CLI.
"""

from tfrclab._native import ConfigError
from tfrclab._native import version as _native_version
from tfrclab.channel import ChannelRun, LossStep, run_channel
from tfrclab.equation import throughput_bytes_per_s, throughput_packets_per_s

__version__: str = _native_version()

__all__ = [
    "ChannelRun",
    "ConfigError",
    "LossStep",
    "__version__",
    "run_channel",
    "throughput_bytes_per_s",
    "throughput_packets_per_s",
]
