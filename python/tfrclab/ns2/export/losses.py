"""Loss models as ns-2.35 error models at a link's head (queue/errmodel.cc, ns-errmodel.tcl)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tfrclab.ns2.export.tcl import NEVER, tcl_number
from tfrclab.ns2.plan import ExportError, LinkPlan, LossPlan, Plan, Refusals
from tfrclab.ns2.two_state import two_state_tcl
from tfrclab.ns2.values import duration_s

__all__ = ["insert_losses"]


def _loss_model(loss: LossPlan, table: Mapping[str, Any], name: str, path: str) -> list[str]:
    """Tcl creating one ErrorModel (queue/errmodel.cc) in packets, named ``name``."""
    kind = table.get("kind")
    if kind == "bernoulli":
        # ErrorModel with a uniform ranvar drops when u < rate_ (its own RNG stream).
        seed_var = f"rng_{name}"
        return [
            f"set {name} [new ErrorModel]",
            f"${name} unit pkt",
            f"${name} set rate_ {tcl_number(float(table['p']))}",
            f"set {seed_var} [new RNG]",
            f"${seed_var} seed [expr {{$tfrclab_seed * 1000 + {loss.index * 37 + len(name)}}}]",
            f"set rv_{name} [new RandomVariable/Uniform]",
            f"$rv_{name} use-rng ${seed_var}",
            f"${name} ranvar $rv_{name}",
        ]
    if kind == "periodic":
        # PeriodicErrorModel counts arrivals from 1: the first drop at cnt_ >= offset_, then
        # every period_-th. tfrclab drops index n (from 0) when n mod every = phase mod every.
        every = int(table["every"])
        phase = int(table.get("phase", 0)) % every
        return [
            f"set {name} [new ErrorModel/Periodic]",
            f"${name} unit pkt",
            f"${name} set period_ {every}",
            f"${name} set offset_ {phase + 1}",
            f"${name} set burstlen_ 0",
            f"${name} set default_drop_ 0",
        ]
    if kind == "gilbert_elliott" and table.get("sojourn") == "time":
        seed = f"$tfrclab_seed * 1000 + {loss.index * 37 + len(name)}"
        return two_state_tcl(table, name, seed, path)
    if kind == "list":
        # ListErrorModel counts arrivals from 0 and needs its list sorted.
        indices = " ".join(str(int(i)) for i in sorted(table["indices"]))
        return [
            f"set {name} [new ErrorModel/List]",
            f"${name} unit pkt",
            f"${name} droplist {{{indices}}}",
        ]
    raise ExportError(f"{path}.kind: {kind!r} has no ns-2 error model in the export")


def _retire(table: Mapping[str, Any], name: str, path: str) -> str:
    """Tcl that stops an inserted model from dropping (a schedule's step ends)."""
    kind = table.get("kind")
    if kind == "bernoulli":
        return f"${name} set enable_ 0"
    if kind == "periodic":
        # PeriodicErrorModel::corrupt ignores enable_; a period it never reaches retires it.
        return f"${name} set period_ {NEVER}; ${name} set offset_ {NEVER}"
    raise ExportError(f"{path}.kind: {kind!r} cannot end inside a schedule in ns-2")


def insert_losses(plan: Plan, lines: list[str], refusals: Refusals) -> None:
    """Loss models at the link head (before the queue), after the link's in-snoop.

    What ns-2 cannot run goes to ``refusals``, every loss model checked.
    """
    on_link: dict[int, list[LossPlan]] = {}
    for loss in plan.losses:
        on_link.setdefault(loss.link, []).append(loss)
    for link_index, losses in on_link.items():
        link = plan.links[link_index]
        per_flow: dict[int, int] = {}
        for loss in losses:
            path = f"losses[{loss.index}]"
            flow_name = loss.table.get("flow")
            if flow_name is not None:
                others = [
                    f.name
                    for f in plan.flows
                    if f.name != flow_name
                    and (link_index in f.data_links or link_index in f.reply_links)
                ]
                if others:
                    with refusals.part():
                        per_flow[loss.index] = _flow_filter(plan, loss, link, path)
            if loss.table.get("kind") == "schedule" and len(losses) > 1:
                refusals.refuse(f"{path}: a schedule must be the only loss model on its link")
        # The first model in file order must see packets first: insert the last one first.
        for loss in reversed(losses):
            with refusals.part():
                _insert(loss, link_index, lines, refusals, per_flow.get(loss.index))


_FID_BOTH_WAYS = ("tcp", "gaimd", "rap", "ping")
"""Flow kinds whose packets back carry the flow's ``fid_`` in the export (tcp-sink.cc copies the
data packet's flow id into its ACK; RAP and ping agents get the flow's ``fid_`` at both ends)."""


def _flow_filter(plan: Plan, loss: LossPlan, link: LinkPlan, path: str) -> int:
    """The flow id an ns-2 ``ErrorModule Fid`` must pass to a flow's loss model on a shared link.

    netsim's ``flow`` key lets only that flow's packets, both ways, meet the model; ns-2's
    ``ErrorModule`` (tcl/lib/ns-errmodel.tcl) classifies by flow id and passes the others
    untouched and undrawn. Its packets back are classified too only where they carry the flow's
    id (:data:`_FID_BOTH_WAYS`); a schedule's steps are not wrapped.

    Raises:
        ExportError: for a schedule, or a flow whose packets back cross the link without its id.
    """
    flow = next(f for f in plan.flows if f.name == loss.table["flow"])
    if loss.table.get("kind") == "schedule":
        raise ExportError(
            f"{path}.flow: a schedule for one flow on {link.name!r}, which other flows cross, "
            "is not exported"
        )
    if link.index in flow.reply_links and flow.kind not in _FID_BOTH_WAYS:
        raise ExportError(
            f"{path}.flow: {flow.name!r}'s packets back cross {link.name!r} without its flow id "
            "in ns-2, so a per-flow error module cannot find them"
        )
    return flow.index


def _insert(
    loss: LossPlan, link_index: int, lines: list[str], refusals: Refusals, fid: int | None = None
) -> None:
    """Tcl creating one ``[[losses]]`` table's model(s) and inserting it on its link.

    With ``fid`` the model sits in an ``ErrorModule Fid`` that hands it only that flow's
    packets and passes the others (:func:`_flow_filter`).
    """
    path = f"losses[{loss.index}]"
    if loss.table.get("kind") != "schedule":
        name = f"em{loss.index}"
        lines += _loss_model(loss, loss.table, name, path)
        if fid is not None:
            lines += [
                f"set fem{loss.index} [new ErrorModule Fid]",
                f"$fem{loss.index} insert ${name}",
                f"$fem{loss.index} bind ${name} {fid}",
                f"$fem{loss.index} default pass",
            ]
            name = f"fem{loss.index}"
        lines.append(f"tfrclab_insert_loss {link_index} ${name}")
        return
    steps = loss.table.get("steps", [])
    previous: tuple[Mapping[str, Any], str, str] | None = None
    for j, step in enumerate(steps):
        name = f"em{loss.index}_{j}"
        step_path = f"{path}.steps[{j}]"
        with refusals.part():
            if step.get("sojourn") == "time":
                # ns-2's TwoState timer starts at setup, not at the step's start.
                raise ExportError(
                    f"{step_path}.sojourn: ns-2's ErrorModel/TwoState in time starts its "
                    "stays when the script is set up, not at a schedule step"
                )
            lines += _loss_model(loss, step, name, step_path)
            at = duration_s(step["at"])
            action = f"tfrclab_insert_loss {link_index} ${name}"
            if previous is not None:
                action = _retire(*previous) + "; " + action
            if at == 0:
                lines.append(action)
            else:
                lines.append(f'$ns at {tcl_number(at)} "{action}"')
        previous = (step, name, step_path)
