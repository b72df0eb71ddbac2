"""Running a scenario: :func:`run` steps the native simulation and builds a :class:`Result`.

The simulation runs in Rust with the GIL released. With a ``progress`` callback it is stepped
in slices of simulated time and the callback is told how far it got after each; stepping gives
the same results, bit for bit, as one uninterrupted run (netsim processes the same events in the
same order either way).

Before anything runs, netsim estimates what the run will cost (:func:`estimate`); a run
expected to take more than about 10 minutes of wall time or 4 GiB of memory is refused with
:class:`~tfrclab.CostError` unless ``force=True``; so is one whose trace files (``pcap_dir``,
``ns2_trace``) will not fit the free disk where they go (:func:`tfrclab.room.check_disk`, as
``tfrclab run`` checks them). Ctrl-C interrupts a run within a few tens of
milliseconds in every mode (``KeyboardInterrupt``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tfrclab import _native
from tfrclab.result import Result
from tfrclab.scenario import Scenario

__all__ = ["ProgressCallback", "estimate", "run"]

ProgressCallback = Callable[[float, float], None]
"""Called as ``progress(simulated_s, end_s)`` after each slice of a run."""

DEFAULT_STEPS = 100
"""How many slices a run with a progress callback is cut into (at most)."""


def run(
    scenario: Scenario | str | Path,
    seed: int | None = None,
    *,
    progress: ProgressCallback | None = None,
    steps: int = DEFAULT_STEPS,
    force: bool = False,
    pcap_dir: str | Path | None = None,
    ns2_trace: str | Path | None = None,
) -> Result:
    """Run ``scenario`` seeded with ``seed`` (default: the scenario's own) to its end.

    ``scenario`` may be a :class:`Scenario` or the path of a scenario file. With ``progress``,
    the run is cut into ``steps`` slices of simulated time and ``progress(t_s, end_s)`` is
    called after each. The same scenario and seed always give the same result. A run whose
    estimate (:func:`estimate`) is over the budget is refused unless ``force`` is true, and so
    is one whose trace files will not fit the free disk of their file system.
    With ``pcap_dir`` a pcap file per link of ``monitor.pcap`` (every link without it) is
    written into that directory as the run goes; with ``ns2_trace`` an ns-2 trace file of the
    links of ``monitor.ns2_trace`` (docs/traces.md). :attr:`Result.traces` says what each
    wrote, and whether it hit ``monitor.trace_limit`` or a write error.

    >>> s = Scenario.from_dict({
    ...     "duration": "1s",
    ...     "topology": {"kind": "dumbbell", "hosts": 1,
    ...                  "bottleneck": {"rate": "10Mbps", "delay": "10ms"}},
    ...     "flows": [{"kind": "cbr", "rate": "1Mbps", "size": "1000B"}],
    ... })
    >>> r = run(s, seed=7)
    >>> int(r.flows.loc[0, "packets_sent"]), r.info.seed
    (125, 7)

    Raises:
        ScenarioError: if the scenario is refused (naming the field).
        CostError: if the run would cost more than the budget, or its trace files more than
            the free disk, and ``force`` is false (a ScenarioError naming the costliest part,
            or the trace files and the space free).
        MemoryError: if the monitors' series for the whole run cannot be had.
        OSError: if a trace file or directory cannot be created.
        KeyboardInterrupt: on Ctrl-C, within a few tens of milliseconds.
        ValueError: if ``steps`` is below 1.
    """
    if not isinstance(scenario, Scenario):
        scenario = Scenario.load(scenario)
    if steps < 1:
        raise ValueError(f"steps must be at least 1, got {steps}")
    if not force:
        _check_trace_disk(scenario, pcap_dir, ns2_trace)
    # CPU times are the calling thread's: the native calls run on it (with the GIL released).
    building = time.thread_time()
    simulation = _native.Simulation(scenario.toml, seed, force, pcap_dir, ns2_trace)
    setup_cpu = time.thread_time() - building
    end_ns = simulation.end_ns
    wall = cpu = 0.0
    if progress is None:
        started, started_cpu = time.perf_counter(), time.thread_time()
        simulation.run_until(end_ns)
        wall, cpu = time.perf_counter() - started, time.thread_time() - started_cpu
    else:
        for k in range(1, steps + 1):
            until = end_ns * k // steps
            started, started_cpu = time.perf_counter(), time.thread_time()
            simulation.run_until(until)
            wall += time.perf_counter() - started
            cpu += time.thread_time() - started_cpu
            progress(until / 1e9, end_ns / 1e9)
    # wall and cpu cover the stepping calls only: the simulation itself, not building the
    # records.
    raw = simulation.finish()
    result = Result.from_native(
        raw, wall_seconds=wall, cpu_seconds=cpu, setup_cpu_seconds=setup_cpu
    )
    result.traces = list(raw["traces"])
    return result


def _check_trace_disk(
    scenario: Scenario, pcap_dir: str | Path | None, ns2_trace: str | Path | None
) -> None:
    """Refuse trace files that will not fit the free disk (before anything is written).

    Over the budget, netsim's own refusal (naming the costliest parts) comes first: it is left
    to the simulation's constructor.
    """
    traces = [
        (what, Path(given), kind)
        for what, given, kind in (
            ("pcap_dir", pcap_dir, "pcap"),
            ("ns2_trace", ns2_trace, "ns2_trace"),
        )
        if given is not None
    ]
    if not traces:
        return
    from tfrclab.room import check_disk, trace_destinations

    cost, destinations = trace_destinations(scenario, traces)
    if cost["refusal"] is None:
        check_disk(destinations)


def estimate(scenario: Scenario | str | Path) -> dict[str, Any]:
    """What running ``scenario`` will cost, without running it.

    Returns a dict: ``events_per_s`` (events per simulated second), ``events``, ``wall_s``
    (expected wall time on this machine), ``memory_bytes``, ``disk_bytes`` (the trace
    files ``monitor.pcap`` and ``monitor.ns2_trace`` name), ``bins``, ``flows``,
    ``binned_links`` (links with per-bin series), ``state_fields`` (the flows' traced state
    fields, all together), ``parts``
    (costliest first: ``path`` such as ``flows[0]`` or ``monitor.bin``, ``events_per_s``,
    ``memory_bytes``, ``disk_bytes``, ``hint``), ``budget`` (``wall_s``, ``memory_bytes``),
    ``events_per_wall_s`` (the calibration) and ``refusal`` (why :func:`run` would refuse it
    without ``force``, or None).

    >>> s = Scenario.from_dict({
    ...     "duration": "1s",
    ...     "topology": {"kind": "dumbbell", "hosts": 1,
    ...                  "bottleneck": {"rate": "10Mbps", "delay": "10ms"}},
    ...     "flows": [{"kind": "cbr", "rate": "1Mbps", "size": "1000B"}],
    ... })
    >>> cost = estimate(s)
    >>> 300 < cost["events"] < 1500, cost["refusal"] is None
    (True, True)

    Raises:
        ScenarioError: if the scenario is refused (naming the field).
    """
    if not isinstance(scenario, Scenario):
        scenario = Scenario.load(scenario)
    return _native.estimate(scenario.toml)
