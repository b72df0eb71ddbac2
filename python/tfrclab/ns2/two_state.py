"""The time-based Gilbert-Elliott loss model as ns-2.35's ``ErrorModel/TwoState``, ``unit time``.

netsim's ``kind = "gilbert_elliott"`` with ``sojourn = "time"`` mirrors ns-2's two-state model
in time (``queue/errmodel.cc``, ``TwoStateErrorModel::transitionState``): Good first, each stay
drawn from ``ranvar 0`` (Good) or ``ranvar 1`` (Bad), every packet of Bad dropped. ns-2 starts
the timer when both random variables are set, which the model's constructor does at setup (time
0: ``new ErrorModel/TwoState $rv0 $rv1 time``, ``tcl/lib/ns-errmodel.tcl``), so the stays begin
where netsim's do; the unit is set before the random variables, or ns-2 would count packets.
The draws are ns-2's own (its RNG, seeded from the run's seed), so the two simulators agree in
distribution, not stay by stay.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tfrclab.ns2.plan import ExportError
from tfrclab.ns2.values import duration_s

__all__ = ["two_state_tcl"]


def _ranvar(name: str, value: Any, rng: str, path: str) -> list[str]:
    """Tcl creating the ns-2 RandomVariable ``name`` for a scenario's (random) duration."""
    if isinstance(value, str):
        return [
            f"set {name} [new RandomVariable/Constant]",
            f"${name} set val_ {duration_s(value)!r}",
        ]
    if isinstance(value, Mapping) and set(value) == {"exponential"}:
        mean = duration_s(value["exponential"])
        return [
            f"set {name} [new RandomVariable/Exponential]",
            f"${name} set avg_ {mean!r}",
            f"${name} use-rng ${rng}",
        ]
    if isinstance(value, Mapping) and set(value) == {"uniform"}:
        low, high = (duration_s(v) for v in value["uniform"])
        return [
            f"set {name} [new RandomVariable/Uniform]",
            f"${name} set min_ {low!r}",
            f"${name} set max_ {high!r}",
            f"${name} use-rng ${rng}",
        ]
    raise ExportError(f"{path}: expected a duration, uniform or exponential, found {value!r}")


def two_state_tcl(table: Mapping[str, Any], name: str, seed: str, path: str) -> list[str]:
    """Tcl creating ``ErrorModel/TwoState`` ``name`` in time units for a time-based table.

    ``seed`` is a Tcl expression for the RNG's seed. ns-2 drops every packet of Bad and none of
    Good, so other loss probabilities are refused, naming the key.
    """
    for key, ns2 in (("loss_in_good", 0.0), ("loss_in_bad", 1.0)):
        if float(table.get(key, ns2)) != ns2:
            raise ExportError(
                f"{path}.{key}: ns-2's ErrorModel/TwoState drops "
                f"{'none' if ns2 == 0 else 'all'} of the packets of that state; "
                f"expected {ns2:g}, found {table[key]}"
            )
    rng = f"rng_{name}"
    lines = [f"set {rng} [new RNG]", f"${rng} seed [expr {{{seed}}}]"]
    lines += _ranvar(f"rv0_{name}", table["good"], rng, f"{path}.good")
    lines += _ranvar(f"rv1_{name}", table["bad"], rng, f"{path}.bad")
    # ns-lib's init: `unit` first, then both ranvars, the second starting the timer.
    lines.append(f"set {name} [new ErrorModel/TwoState $rv0_{name} $rv1_{name} time]")
    return lines
