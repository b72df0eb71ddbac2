"""Link buffers in packets, and a warning when a change shrinks one without saying so.

RED in ns-2.35's byte mode (the ``ns2_35`` preset) counts ``limit`` in units of
``mean_pktsize`` (500 B): ``limit = 100`` holds 50,000 bytes, only 50 packets of 1000 B. Swapping
a DropTail queue for such a RED queue with ``--set`` therefore halves the buffer while the number
looks the same; :func:`smaller_buffers` says so before the run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tfrclab import _native
from tfrclab.scenario import Scenario

__all__ = ["Buffer", "buffers", "smaller_buffers"]


@dataclass(frozen=True)
class Buffer:
    """A link's queue as the scenario builds it."""

    link: str
    """The link's name."""
    kind: str
    """``droptail`` or ``red``."""
    limit_packets: int | None
    """The buffer in packets, when it is counted in packets."""
    limit_bytes: int | None
    """The buffer in bytes, when it is counted in bytes."""
    data_bytes: float
    """The mean data packet size of the flows crossing the link (NaN if none does)."""

    @property
    def packets(self) -> float:
        """The buffer in packets of the data crossing the link (NaN if that is unknown)."""
        if self.limit_packets is not None:
            return float(self.limit_packets)
        if self.limit_bytes is None or not self.data_bytes > 0:
            return math.nan
        return self.limit_bytes / self.data_bytes

    def describe(self) -> str:
        """E.g. ``RED, 50000 B (50 packets of 1000 B)`` or ``DropTail, 99 packets``."""
        kind = {"red": "RED", "droptail": "DropTail"}.get(self.kind, self.kind)
        if self.limit_packets is not None:
            return f"{kind}, {self.limit_packets} packets"
        return (
            f"{kind}, {self.limit_bytes} B ({self.packets:.0f} packets of {self.data_bytes:.0f} B)"
        )


def buffers(scenario: Scenario) -> dict[str, Buffer]:
    """Every link's buffer, by link name, as netsim builds the scenario (nothing runs)."""
    out = {}
    for name, kind, packets, limit_bytes, data_bytes in _native.queue_buffers(scenario.toml):
        out[name] = Buffer(
            link=name,
            kind=kind,
            limit_packets=packets if packets >= 0 else None,
            limit_bytes=limit_bytes if limit_bytes >= 0 else None,
            data_bytes=data_bytes,
        )
    return out


def smaller_buffers(before: Scenario, after: Scenario) -> list[str]:
    """One line per link whose changed queue holds fewer packets of its data than before.

    Only links whose discipline changed are compared (a smaller limit asked for explicitly on
    the same discipline is what the user wanted).
    """
    old, new = buffers(before), buffers(after)
    lines = []
    for name, buffer in new.items():
        previous = old.get(name)
        if previous is None or previous.kind == buffer.kind:
            continue
        if buffer.packets < previous.packets:
            lines.append(
                f"link {name}: the new queue holds fewer packets than the one it replaced: "
                f"{buffer.describe()} instead of {previous.describe()}; a byte-mode RED limit "
                "counts units of mean_pktsize (docs/queues.md)"
            )
    return lines
