"""tfrclab: a toolkit for TCP-friendly congestion control (TFRC, RFC 5348).

The protocol and the simulations run in Rust (the private extension module ``tfrclab._native``);
this package is the front door: typed wrappers, scenarios and results, the papers' metrics and
models, figures, sweeps and the ``tfrclab`` CLI.

>>> import tfrclab
>>> scenario = tfrclab.Scenario.load("scenarios/examples/dumbbell.toml")  # doctest: +SKIP
>>> result = tfrclab.run(scenario, seed=1)  # doctest: +SKIP
>>> result.flows[["name", "throughput_bits_per_s"]]  # doctest: +SKIP
"""

from tfrclab import metrics, models
from tfrclab._native import ConfigError, CostError, ScenarioError
from tfrclab._native import version as _native_version
from tfrclab.channel import ChannelRun, LossStep, run_channel
from tfrclab.equation import throughput_bytes_per_s, throughput_packets_per_s
from tfrclab.result import Result, RunInfo
from tfrclab.scenario import Scenario
from tfrclab.simulate import estimate, run

__version__: str = _native_version()

__all__ = [
    "ChannelRun",
    "ConfigError",
    "CostError",
    "LossStep",
    "Result",
    "RunInfo",
    "Scenario",
    "ScenarioError",
    "__version__",
    "estimate",
    "metrics",
    "models",
    "run",
    "run_channel",
    "throughput_bytes_per_s",
    "throughput_packets_per_s",
]
