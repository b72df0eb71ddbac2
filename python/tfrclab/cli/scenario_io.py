"""Reading a scenario file as the commands do, and writing a run directory.

:func:`load_scenario` applies ``--set`` changes (and ``--measure-from``/``--measure-to``, as
:func:`measure_sets` turns them into changes) and names the file when it is not valid TOML;
:func:`write_run` writes a run's Parquet files, scenario and figures atomically.
"""

from __future__ import annotations

import sys

from tfrclab import ScenarioError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence
    from pathlib import Path
    from typing import Any

    from tfrclab.result import Result
    from tfrclab.scenario import Scenario

__all__ = ["load_scenario", "measure_sets", "write_run"]


def load_scenario(path: Path, sets: Sequence[tuple[str, Any]]) -> Scenario:
    """The scenario file at ``path`` with the ``--set`` changes applied (checked by netsim)."""
    from tfrclab.scenario import Scenario, read_scenario_text

    try:
        text = read_scenario_text(path)
    except OSError as err:
        raise ValueError(f"{path}: cannot read the scenario file ({err.strerror})") from None
    if "controller" in text:
        # A controller's module or plugin may sit beside the file, as for Scenario.load.
        from tfrclab.controllers import add_search_dir

        add_search_dir(path.parent)
    try:
        scenario = Scenario.from_toml(text, source=str(path))
    except ScenarioError as err:
        if err.path is None:  # invalid TOML: no field to name, so name the file
            raise ValueError(f"{path}: {' '.join(str(err).split())}") from None
        raise
    if sets:
        changed = scenario.with_(**dict(sets))
        if any("queue" in str(key) for key, _ in sets):
            from tfrclab.buffers import smaller_buffers

            for warning in smaller_buffers(scenario, changed):
                print(f"tfrclab: warning: {warning}", file=sys.stderr)
        scenario = changed
    return scenario


def measure_sets(args: argparse.Namespace) -> list[tuple[str, Any]]:
    """``--measure-from``/``--measure-to`` as scenario changes (``measure.from``/``to``)."""
    sets: list[tuple[str, Any]] = []
    if args.measure_from is not None:
        sets.append(("measure.from", args.measure_from))
    if args.measure_to is not None:
        sets.append(("measure.to", args.measure_to))
    return sets


def write_run(result: Result, out: Path) -> list[Path]:
    """Write the result's Parquet files, scenario and figures into ``out``, atomically.

    Everything is written into a temporary sibling directory that is renamed into place once
    complete, so ``out`` is never seen half-written: an interrupted write leaves the previous
    contents (or nothing) and a hidden ``.NAME.partial-*`` directory, removed by the next write.
    """
    from tfrclab.figures import plot_run
    from tfrclab.outdir import replace_directory

    def write(tmp: Path) -> list[Path]:
        result.to_parquet(tmp)
        return [out / figure.name for figure in plot_run(result, tmp)]

    return replace_directory(out, write)
