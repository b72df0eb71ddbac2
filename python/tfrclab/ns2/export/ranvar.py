"""netsim's random variables as ns-2's RandomVariable classes (tools/ranvar.cc)."""

from __future__ import annotations

from tfrclab.ns2.export.tcl import tcl_number
from tfrclab.ns2.plan import ExportError

__all__ = ["ranvar"]


def ranvar(name: str, variable: tuple[str, tuple[float, ...]], path: str) -> list[str]:
    """Tcl creating ns-2's RandomVariable ``name`` (tools/ranvar.cc) for a netsim variable.

    ns-2's Pareto and ParetoII take the mean (``avg_``): Pareto's scale is avg·(shape-1)/shape,
    ParetoII's avg·(shape-1) (ranvar.cc), so the mean is written back from netsim's scale.
    """
    kind, values = variable
    if kind == "constant":
        settings = [("val_", values[0])]
        cls = "Constant"
    elif kind == "uniform":
        settings = [("min_", values[0]), ("max_", values[1])]
        cls = "Uniform"
    elif kind == "exponential":
        settings = [("avg_", values[0])]
        cls = "Exponential"
    elif kind in ("pareto", "pareto2"):
        scale, shape = values
        if shape <= 1:
            raise ExportError(f"{path}.shape: ns-2's {kind} takes a mean, which needs shape > 1")
        mean = scale * shape / (shape - 1) if kind == "pareto" else scale / (shape - 1)
        settings = [("avg_", mean), ("shape_", shape)]
        cls = "Pareto" if kind == "pareto" else "ParetoII"
    elif kind == "lognormal":
        settings = [("avg_", values[0]), ("std_", values[1])]
        cls = "LogNormal"
    elif kind == "weibull":
        settings = [("scale_", values[0]), ("shape_", values[1])]
        cls = "Weibull"
    else:
        raise ExportError(f"{path}: {kind!r} has no ns-2 RandomVariable")
    lines = [f"set {name} [new RandomVariable/{cls}]"]
    lines += [f"${name} set {key} {tcl_number(float(value))}" for key, value in settings]
    return lines
