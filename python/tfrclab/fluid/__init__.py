"""Fluid (delay-differential) models of Reno, Vegas and TFRC sharing one FIFO buffer.

After Garcia Berumen & Marot (Bonald's window equations for Reno and Vegas, Barbera et al.'s
rate equations for TFRC). :class:`FluidModel` is the input, :func:`solve` integrates it,
:func:`to_result` turns a run into the :class:`tfrclab.Result` a packet run gives, so metrics,
figures and ``tfrclab plot`` read both. See docs/fluid.md.
"""

from tfrclab.fluid.model import FluidFlow, FluidModel
from tfrclab.fluid.solver import FluidRun, solve

__all__ = ["FluidFlow", "FluidModel", "FluidRun", "solve"]
