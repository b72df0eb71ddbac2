"""Per-event cost of a congestion controller written in Python against the built-in one.

Usage: ``.venv/bin/python scripts/controller_cost.py [SECONDS]`` (default 120 simulated
seconds). One Reno flow (``ns2_2000`` preset, 100-packet window, 1% random loss) over 10 Mb/s
is run three ways that give identical results: the built-in Reno, the native ``reno``
controller through the controller interface, and Reno written in Python (GAIMD with alpha 1,
beta 1/2, :mod:`tfrclab.controllers.gaimd`). Each run's wall time is the best of five; the
difference, divided by the number of controller calls (counted in a separate run), is the cost
of one call. docs/controllers.md quotes the figures.
"""

from __future__ import annotations

import sys
from typing import Any

import pandas as pd

from tfrclab import Scenario, run
from tfrclab.controllers import register
from tfrclab.controllers.gaimd import Gaimd


class PythonReno(Gaimd):
    """Reno as GAIMD(1, 1/2): the built-in Reno's window, in Python."""

    alpha = 1.0
    beta = 0.5


class CountingReno(PythonReno):
    """PythonReno that counts its calls."""

    calls = 0

    def cong_avoid(self, state: Any, ack: Any) -> tuple[float, float]:
        """Count, then grow."""
        CountingReno.calls += 1
        return super().cong_avoid(state, ack)

    def ssthresh(self, state: Any, reduction: str) -> tuple[float, float]:
        """Count, then cut."""
        CountingReno.calls += 1
        return super().ssthresh(state, reduction)


def scenario(seconds: int, controller: str | None) -> Scenario:
    """The flow, with ``controller`` (None: the built-in Reno)."""
    line = f'controller = "{controller}"' if controller else ""
    return Scenario.from_toml(f"""\
duration = "{seconds}s"
[topology]
kind = "dumbbell"
hosts = 1
bottleneck = {{ rate = "10Mbps", delay = "20ms", queue = {{ kind = "droptail", limit = 50 }} }}
[[flows]]
name = "f"
kind = "tcp"
variant = "reno"
preset = "ns2_2000"
window = 100
{line}
[[losses]]
link = "bottleneck"
kind = "bernoulli"
p = 0.01
""")


def main() -> int:
    """Run the three ways and print the per-call costs."""
    seconds = int(sys.argv[1]) if len(sys.argv) > 1 else 120
    ways = {
        "built-in": None,
        "native controller": "reno",
        "Python controller": register(PythonReno),
    }
    walls: dict[str, float] = {}
    flows: dict[str, pd.DataFrame] = {}
    events = 0
    for label, controller in ways.items():
        s = scenario(seconds, controller)
        results = [run(s) for _ in range(5)]
        walls[label] = min(r.info.wall_seconds for r in results)
        flows[label] = results[0].flows.drop(columns=["kind", "variant"])
        events = results[0].info.events
    for label in ways:
        pd.testing.assert_frame_equal(flows["built-in"], flows[label])
    run(scenario(seconds, register(CountingReno)))
    calls = CountingReno.calls
    print(f"{seconds} s simulated, {events} events, {calls} controller calls (same results)")
    for label, wall in walls.items():
        extra = (wall - walls["built-in"]) / calls * 1e9
        print(f"{label:>18}: {wall * 1e3:8.1f} ms, {extra:+7.0f} ns per controller call")
    return 0


if __name__ == "__main__":
    sys.exit(main())
