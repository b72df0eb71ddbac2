"""Whether a testbed run kept the emulated link's timing: the relay's late deliveries.

The relay forwards packets in user space at real-time priority, but a machine that stalls it
(a virtual machine's CPU taken away, a burst of interrupts) makes it deliver packets late and
in bunches: the link's timing is then not the one emulated, and the kernel's TCP answers the
bunches. Measured on this project's 2-core machines (2026-11-30, 12 s CUBIC runs at 10 Mb/s):
a quiet run delivers 0.13-0.16% of its packets more than 1 ms late; two runs disturbed by
something else on the machine, 4.8% and 15%, and the second's 6-15 ms gaps between ACKs hid
HyStart's ACK train from the kernel, whose slow start then ran to 310 packets where the quiet
runs (and netsim) leave it at 124-127. So a twin checks every testbed run with
:func:`relay_timing` and runs a disturbed one again (:func:`tfrclab.twin.twin`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

#: A delivery later than this (s) is late: about one 1500-byte packet's time at 10 Mb/s, and
#: half of the 2 ms gap that ends HyStart's ACK train in Linux's CUBIC.
LATE_S = 1e-3
#: A run whose share of late deliveries exceeds this is disturbed: six times the worst quiet
#: run measured (0.16%), a third of the mildest disturbed one (4.8%).
DISTURBED_FRACTION = 0.01


@dataclass(frozen=True)
class RelayTiming:
    """How late the relay delivered one run's packets (both directions)."""

    #: Packets delivered.
    deliveries: int
    #: Of them, delivered more than :data:`LATE_S` late.
    late: int
    #: The 99th percentile of the lateness (s).
    p99_s: float
    #: The largest lateness (s).
    max_s: float
    #: CPU time the hypervisor took from this machine during the run (s, all CPUs: the
    #: ``steal`` of ``/proc/stat``); ``None`` where it was not measured.
    steal_s: float | None = None

    @property
    def late_fraction(self) -> float:
        """The share of deliveries more than :data:`LATE_S` late (0 with none)."""
        return self.late / self.deliveries if self.deliveries else 0.0

    @property
    def disturbed(self) -> bool:
        """Whether the share of late deliveries exceeds :data:`DISTURBED_FRACTION`."""
        return self.late_fraction > DISTURBED_FRACTION

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready dict, with the late share and the judgement."""
        return {
            "deliveries": self.deliveries,
            "late": self.late,
            "late_fraction": self.late_fraction,
            "late_p99_s": self.p99_s,
            "late_max_s": self.max_s,
            "disturbed": self.disturbed,
            "steal_s": self.steal_s,
        }

    @classmethod
    def from_dict(cls, row: dict[str, Any]) -> RelayTiming:
        """The timing :meth:`as_dict` wrote (other keys in ``row`` are ignored)."""
        return cls(
            row["deliveries"], row["late"], row["late_p99_s"], row["late_max_s"], row["steal_s"]
        )

    def describe(self) -> str:
        """One phrase: the late share, the 99th percentile, the worst lateness, the steal."""
        steal = (
            f"; the hypervisor took {self.steal_s * 1e3:.0f} ms of CPU during the run"
            if self.steal_s
            else ""
        )
        return (
            f"the relay delivered {100 * self.late_fraction:.2f}% of {self.deliveries} packets "
            f"more than {LATE_S * 1e3:g} ms late (99th percentile {self.p99_s * 1e3:.2f} ms, "
            f"worst {self.max_s * 1e3:.1f} ms{steal})"
        )


def cpu_steal_s() -> float | None:
    """The CPU time stolen from this (virtual) machine since it booted (s, all CPUs).

    ``None`` where ``/proc/stat`` does not say (not Linux, or a kernel without the field).
    """
    import os

    try:
        with open("/proc/stat", encoding="ascii") as f:
            fields = f.readline().split()
        return int(fields[8]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def relay_timing(records: np.ndarray) -> RelayTiming:
    """The lateness of the departures among a relay log's ``records`` (:mod:`.log`)."""
    from tfrclab.testbed.log import DEPART

    late_ns = records["late_ns"][records["event"] == DEPART].astype(np.int64)
    if len(late_ns) == 0:
        return RelayTiming(0, 0, 0.0, 0.0)
    return RelayTiming(
        deliveries=len(late_ns),
        late=int((late_ns > LATE_S * 1e9).sum()),
        p99_s=float(np.percentile(late_ns, 99)) / 1e9,
        max_s=float(late_ns.max()) / 1e9,
    )
