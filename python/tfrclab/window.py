"""The measurement window: the part of a run every summary figure covers.

A run records every bin from 0 to its end; a :class:`Window` picks the bins ``[first, last)``
that summaries (tables, ``--json``, sweep rows) add up. The window a scenario asks for
(``[measure] from/to``, or ``--measure-from``/``--measure-to``) is snapped to whole bins:
``from`` and ``to`` are rounded to the nearest bin boundary (``to`` at most the end of the run),
and the window says which times it covers after snapping, so a reader always knows what a number
was averaged over. The last bin of a run may be shorter than the others; :attr:`Window.widths_s`
gives each bin's real width.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["Window"]


@dataclass(frozen=True)
class Window:
    """Bins ``[first, last)`` of a run whose bins are ``bin_s`` wide and which ends at ``end_s``."""

    first: int
    """The first bin in the window."""
    last: int
    """One past the last bin in the window."""
    bin_s: float
    """Width of every bin but perhaps the run's last, in seconds."""
    end_s: float
    """The end of the run, in seconds (the last bin stops there)."""

    @classmethod
    def snap(cls, from_s: float, to_s: float, bin_s: float, end_s: float) -> Window:
        """The window of whole bins nearest to ``[from_s, to_s)``.

        >>> w = Window.snap(50.0, 150.0, 0.01, 150.0)
        >>> (w.first, w.last, w.from_s, w.to_s)
        (5000, 15000, 50.0, 150.0)
        >>> Window.snap(0.004, 1.0, 0.01, 1.0).from_s
        0.0

        Raises:
            ValueError: if the window is empty or outside ``[0, end_s]`` once snapped.
        """
        if bin_s <= 0 or end_s <= 0:
            raise ValueError("a window needs a positive bin width and run length")
        bins = int(np.ceil(end_s / bin_s - 1e-9))
        if not 0.0 <= from_s < end_s:
            raise ValueError(
                f"the measurement window must start before the end of the run ({end_s:g} s), "
                f"got {from_s:g} s"
            )
        if to_s > end_s + 1e-12 or to_s <= from_s:
            raise ValueError(
                f"the measurement window must end after its start ({from_s:g} s) and at most "
                f"at the end of the run ({end_s:g} s), got {to_s:g} s"
            )
        first = min(round(from_s / bin_s), bins - 1)
        last = bins if to_s >= end_s - 1e-12 else max(first + 1, round(to_s / bin_s))
        return cls(first=first, last=min(last, bins), bin_s=bin_s, end_s=end_s)

    @property
    def from_s(self) -> float:
        """Start of the window after snapping, in seconds."""
        return self.first * self.bin_s

    @property
    def to_s(self) -> float:
        """End of the window after snapping, in seconds."""
        return min(self.last * self.bin_s, self.end_s)

    @property
    def length_s(self) -> float:
        """The window's length, in seconds."""
        return self.to_s - self.from_s

    @property
    def whole_run(self) -> bool:
        """Whether the window covers the whole run."""
        return self.first == 0 and self.to_s >= self.end_s - 1e-12

    @property
    def widths_s(self) -> NDArray[np.float64]:
        """Each bin's width in seconds (the run's last bin may be shorter)."""
        starts = np.arange(self.first, self.last, dtype=np.float64) * self.bin_s
        ends = np.minimum(starts + self.bin_s, self.end_s)
        widths: NDArray[np.float64] = ends - starts
        return widths

    def label(self) -> str:
        """The window as people read it, e.g. ``50s-150s``."""
        from tfrclab.units import format_duration

        return f"{format_duration(self.from_s)}-{format_duration(self.to_s)}"

    def take(self, series: NDArray[np.generic]) -> NDArray[np.generic]:
        """The window's bins of a (rows x bins) or (bins,) series."""
        return series[..., self.first : self.last]

    def as_dict(self) -> dict[str, float]:
        """``{"from_s": ..., "to_s": ...}``: the window in JSON output."""
        return {"from_s": self.from_s, "to_s": self.to_s}
