"""tfrclab: a toolkit for TCP-friendly congestion control (TFRC, RFC 5348).

The protocol and the simulations run in Rust (the private extension module ``tfrclab._native``);
this package is the front door: typed wrappers, scenarios and results, the papers' metrics and
models, figures, sweeps and the ``tfrclab`` CLI.

>>> import tfrclab
>>> scenario = tfrclab.Scenario.load("scenarios/examples/dumbbell.toml")  # doctest: +SKIP
>>> result = tfrclab.run(scenario, seed=1)  # doctest: +SKIP
>>> result.flows[["name", "throughput_bits_per_s"]]  # doctest: +SKIP
"""

# Only the extension module is imported eagerly: every other public name is loaded on first use
# (module ``__getattr__``, PEP 562), so ``import tfrclab`` and ``tfrclab --version`` do not pay
# for numpy, pandas and pyarrow.
from __future__ import annotations

from importlib import import_module

from tfrclab._native import ConfigError, ControllerError, CostError, ScenarioError
from tfrclab._native import version as _native_version

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from tfrclab import metrics, models
    from tfrclab.channel import ChannelRun, LossStep, run_channel
    from tfrclab.equation import throughput_bytes_per_s, throughput_packets_per_s
    from tfrclab.result import Result, RunInfo
    from tfrclab.scenario import Scenario
    from tfrclab.simulate import estimate, run

__version__: str = _native_version()

__all__ = [
    "ChannelRun",
    "ConfigError",
    "ControllerError",
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

_LAZY: dict[str, tuple[str, str | None]] = {
    "ChannelRun": ("tfrclab.channel", "ChannelRun"),
    "LossStep": ("tfrclab.channel", "LossStep"),
    "run_channel": ("tfrclab.channel", "run_channel"),
    "throughput_bytes_per_s": ("tfrclab.equation", "throughput_bytes_per_s"),
    "throughput_packets_per_s": ("tfrclab.equation", "throughput_packets_per_s"),
    "Result": ("tfrclab.result", "Result"),
    "RunInfo": ("tfrclab.result", "RunInfo"),
    "Scenario": ("tfrclab.scenario", "Scenario"),
    "estimate": ("tfrclab.simulate", "estimate"),
    "run": ("tfrclab.simulate", "run"),
    "metrics": ("tfrclab.metrics", None),
    "models": ("tfrclab.models", None),
}
"""Public names loaded on first use: the module that defines each, and its name there (None:
the name is the module itself)."""


def __getattr__(name: str) -> object:
    """Load a public name of the package on first use (PEP 562)."""
    try:
        module_name, attribute = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'tfrclab' has no attribute {name!r}") from None
    module = import_module(module_name)
    value = module if attribute is None else getattr(module, attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
