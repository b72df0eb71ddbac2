"""The ``tfrclab`` command line: a thin layer over the same API user scripts call.

One module per command group: ``run`` (one scenario), ``sweep`` (a grid of changes times
seeds), ``plot`` and ``summary`` (of a run or sweep directory), ``equation``, ``examples``,
``demo`` (Floyd 2000 Fig. 2 over the scripted channel), ``transport`` (``send``, ``recv``),
``fluid`` and ``twin``; the commands of ``ns2``, ``reproduce``, ``testbed`` and ``evaluate``
live in those packages. The helpers they share are public here: ``parser`` (one-line errors,
help width), ``options`` (option values, ``--set``, the measurement window), ``consoles`` and
``scenario_io`` (reading a scenario with ``--set``, writing a run directory); :mod:`app` builds
the parser and runs :func:`main`.

Errors in the input (an unknown option, a malformed scenario, an unknown ``--set`` path, an
impossible value, a duration without a unit, ...) print one line on stderr naming the field and
exit with status 2; failures while running (a file that cannot be written) print one line and
exit with status 1. Neither prints a traceback.
"""

from tfrclab.cli.app import build_parser, main, version_line

__all__ = ["build_parser", "main", "version_line"]
