"""Cross-checking tfrclab against ns-2.35: export a scenario as a Tcl script, run both.

- :func:`resolve` (``plan.py``): the scenario with netsim's draws for one seed;
- :func:`export_tcl` (the ``export`` package): the ns-2.35 script;
- :mod:`tfrclab.ns2.output`: the script's output read back, and the same series from a run;
- :mod:`tfrclab.ns2.crosscheck`: both simulators over seeds, metrics and verdicts.

docs/crosscheck.md describes what is exported and how the two compare.
"""

from __future__ import annotations

from importlib import import_module

# Loaded on first use (PEP 562): the ``tfrclab`` parser imports tfrclab.ns2.cli, and with it
# this package, for every command, ``--version`` included.
TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from tfrclab.ns2.export import export_tcl
    from tfrclab.ns2.plan import ExportError, Plan, resolve

__all__ = ["ExportError", "Plan", "export_tcl", "resolve"]

_LAZY = {
    "export_tcl": "tfrclab.ns2.export",
    "ExportError": "tfrclab.ns2.plan",
    "Plan": "tfrclab.ns2.plan",
    "resolve": "tfrclab.ns2.plan",
}


def __getattr__(name: str) -> object:
    """Load a public name of the package on first use."""
    if name not in _LAZY:
        raise AttributeError(f"module 'tfrclab.ns2' has no attribute {name!r}")
    value = getattr(import_module(_LAZY[name]), name)
    globals()[name] = value
    return value
