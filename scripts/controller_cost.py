"""Per-event cost of a congestion controller, native plugin and Python, against the built-in one.

Usage: ``.venv/bin/python scripts/controller_cost.py [SECONDS] [ROUNDS]`` (default 120 simulated
seconds, 7 rounds). One Reno flow (``ns2_2000`` preset, 100-packet window, 1% random loss) over
10 Mb/s is run four ways that give identical results: the built-in Reno, the built-in ``reno``
controller through the controller interface, the GAIMD plugin as GAIMD(1, 1/2)
(crates/controller-template, built here with ``cargo build --release``, loaded through the C
ABI), and Reno written in Python (GAIMD with alpha 1, beta 1/2,
:mod:`tfrclab.controllers.gaimd`). The ways alternate within each round, so that a change of the
machine's load hits them alike; each way's best and median wall time over the rounds are
printed, with the difference from the built-in one divided by the number of controller calls
(counted in a separate run), and the load average before and after. The plugin and the Python
controller also run with the watchdog off (``controller_limit = "0s"``), and the watchdog's cost
per call is the difference from the same controller watched (the default limit).
docs/controllers.md quotes the figures.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
from pathlib import Path
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


def scenario(seconds: int, controller: str | None, watched: bool = True) -> Scenario:
    """The flow, with ``controller`` (None: the built-in Reno), ``watched`` by the watchdog."""
    line = f'controller = "{controller}"' if controller else ""
    if not watched:
        line += '\ncontroller_limit = "0s"'
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


def plugin() -> str:
    """The GAIMD plugin's ``controller`` value as Reno, built in release first."""
    root = Path(__file__).resolve().parents[1]
    subprocess.run(
        ["cargo", "build", "--release", "--quiet", "--locked", "-p", "controller-template"],
        cwd=root, check=True, timeout=600,
    )  # fmt: skip
    library = root / "target" / "release" / "libgaimd_controller.so"
    return f"native:{library}?alpha=1&beta=0.5"


def main() -> int:
    """Run the four ways in alternation and print the per-call costs."""
    seconds = int(sys.argv[1]) if len(sys.argv) > 1 else 120
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    native, python = plugin(), register(PythonReno)
    ways = {
        "built-in": scenario(seconds, None),
        "native controller": scenario(seconds, "reno"),
        "plugin controller": scenario(seconds, native),
        "plugin, watch off": scenario(seconds, native, watched=False),
        "Python controller": scenario(seconds, python),
        "Python, watch off": scenario(seconds, python, watched=False),
    }
    walls: dict[str, list[float]] = {label: [] for label in ways}
    flows: dict[str, pd.DataFrame] = {}
    events = 0
    load_before = os.getloadavg()
    for _ in range(rounds):
        for label, s in ways.items():
            result = run(s)
            walls[label].append(result.info.wall_seconds)
            flows[label] = result.flows.drop(columns=["kind", "variant"])
            events = result.info.events
    load_after = os.getloadavg()
    for label in ways:
        pd.testing.assert_frame_equal(flows["built-in"], flows[label])
    run(scenario(seconds, register(CountingReno)))
    calls = CountingReno.calls
    print(f"{seconds} s simulated, {events} events, {calls} controller calls (same results)")
    print(f"{rounds} alternating rounds; load average {load_before[0]:.2f} before, "
          f"{load_after[0]:.2f} after")  # fmt: skip
    best0, median0 = min(walls["built-in"]), statistics.median(walls["built-in"])
    for label, times in walls.items():
        best, median = min(times), statistics.median(times)
        print(
            f"{label:>18}: best {best * 1e3:7.1f} ms ({(best - best0) / calls * 1e9:+6.0f} ns "
            f"per call), median {median * 1e3:7.1f} ms "
            f"({(median - median0) / calls * 1e9:+6.0f} ns per call)"
        )
    for way in ("plugin", "Python"):
        on, off = walls[f"{way} controller"], walls[f"{way}, watch off"]
        print(
            f"{'the watch, ' + way:>18}: best {(min(on) - min(off)) / calls * 1e9:+6.1f} ns per "
            f"call, median {(statistics.median(on) - statistics.median(off)) / calls * 1e9:+6.1f}"
            " ns per call"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
