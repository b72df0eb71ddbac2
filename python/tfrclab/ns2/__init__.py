"""Cross-checking tfrclab against ns-2.35: export a scenario as a Tcl script, run both.

- :func:`resolve` (``plan.py``): the scenario with netsim's draws for one seed;
- :func:`export_tcl` (``export.py``): the ns-2.35 script;
- :mod:`tfrclab.ns2.output`: the script's output read back, and the same series from a run;
- :mod:`tfrclab.ns2.crosscheck`: both simulators over seeds, metrics and verdicts.

docs/crosscheck.md describes what is exported and how the two compare.
"""

from __future__ import annotations

from tfrclab.ns2.export import export_tcl
from tfrclab.ns2.plan import ExportError, Plan, resolve

__all__ = ["ExportError", "Plan", "export_tcl", "resolve"]
