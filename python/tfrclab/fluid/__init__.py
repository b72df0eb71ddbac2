"""Fluid (delay-differential) models of Reno, Vegas and TFRC sharing one FIFO buffer.

After Garcia Berumen & Marot (Bonald's window equations for Reno and Vegas, Barbera et al.'s
rate equations for TFRC). :class:`FluidModel` is the input, :func:`solve` integrates it,
:func:`to_result` turns a run into the :class:`tfrclab.Result` a packet run gives, so metrics,
figures and ``tfrclab plot`` read both. See docs/fluid.md.
"""

from __future__ import annotations

from tfrclab._lazy import lazy_exports

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from tfrclab.fluid.model import FluidFlow, FluidModel
    from tfrclab.fluid.solver import FluidRun, solve

# Imported when first used: the solver needs numpy, and the CLI's `fluid` command
# (tfrclab.cli.fluid) registers at every start without it.
__getattr__ = lazy_exports(
    __name__,
    {"FluidFlow": "model", "FluidModel": "model", "FluidRun": "solver", "solve": "solver"},
)

__all__ = ["FluidFlow", "FluidModel", "FluidRun", "solve"]
