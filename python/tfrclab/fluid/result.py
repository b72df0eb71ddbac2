"""A fluid run as a :class:`tfrclab.Result`, and a fluid model read from a scenario file.

The fluid run's per-bin amounts are fractions of packets; the Result holds whole packets, so
each series is the difference of the floored running total (totals stay exact to one packet).
The one binned link is ``bottleneck``; "received" is what left the buffer.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from tfrclab import metrics
from tfrclab.fluid.model import FluidFlow, FluidModel, check_seed
from tfrclab.fluid.solver import FLOW_FIELDS, FluidRun
from tfrclab.result import Result, RunInfo
from tfrclab.scenario import Scenario, expand_flows
from tfrclab.units import parse_size

__all__ = [
    "TCP_AS_RENO",
    "loss_event_note",
    "model_from_scenario",
    "out_of_scope",
    "to_result",
]

TCP_AS_RENO = ("reno", "newreno", "sack", "tahoe")
"""TCP variants the fluid model runs with Reno's equations (the fluid model has no
per-packet recovery, so these differ only in ways it cannot show)."""


def _whole(amounts: NDArray[np.float64]) -> NDArray[np.int64]:
    """Per-bin whole packets whose running total is the floored running total of ``amounts``."""
    total = np.floor(np.cumsum(amounts, axis=-1) + 1e-9).astype(np.int64)
    return np.diff(total, axis=-1, prepend=0)


def to_result(run: FluidRun, scenario_toml: str = "") -> Result:
    """The :class:`tfrclab.Result` of a fluid run (same tables as a packet run's)."""
    m = run.model
    n = len(m.flows)
    bins = m.bins
    duration_s = bins * m.bin_s
    size = m.packet_bytes
    sent = _whole(run.sent)
    received = _whole(run.delivered)
    dropped = _whole(run.dropped)
    flow_bins = {
        "sent_packets": sent,
        "sent_bytes": sent * size,
        "received_packets": received,
        "received_bytes": received * size,
        "dropped_packets": dropped,
        "dropped_bytes": dropped * size,
        "loss_events": run.loss_events,
    }
    totals = {key: values.sum(axis=1) for key, values in flow_bins.items()}
    zeros = np.zeros(n, dtype=np.int64)
    flows: dict[str, Any] = {
        "id": np.arange(n, dtype=np.int64),
        "name": m.flow_names,
        "kind": ["tcp" if f.kind != "tfrc" else "tfrc" for f in m.flows],
        "variant": [f.kind if f.kind != "tfrc" else "" for f in m.flows],
        "from": [f"left{k}" for k in range(n)],
        "to": [f"right{k}" for k in range(n)],
        "start_s": np.asarray([f.start_s for f in m.flows], dtype=np.float64),
        "stop_s": np.asarray(
            [math.nan if f.stop_s is None else f.stop_s for f in m.flows], dtype=np.float64
        ),
        "base_rtt_s": np.asarray([f.rtt_s for f in m.flows], dtype=np.float64),
        "loss_event_rtt_s": np.asarray([f.rtt_s for f in m.flows], dtype=np.float64),
        "group": [f.group for f in m.flows],
        "background": np.asarray([f.background for f in m.flows], dtype=bool),
        "packets_sent": totals["sent_packets"],
        "bytes_sent": totals["sent_bytes"],
        "packets_received": totals["received_packets"],
        "bytes_received": totals["received_bytes"],
        "packets_dropped": totals["dropped_packets"],
        "bytes_dropped": totals["dropped_bytes"],
        "loss_events": totals["loss_events"],
        "reverse_packets_sent": zeros,
        "reverse_packets_received": zeros,
        "reverse_packets_dropped": zeros,
        "path": [["bottleneck"] for _ in range(n)],
    }
    flows["throughput_bits_per_s"] = flows["bytes_received"].astype(np.float64) * 8 / duration_s
    flows["send_rate_bits_per_s"] = flows["bytes_sent"].astype(np.float64) * 8 / duration_s
    flows["packet_loss_rate"] = metrics.packet_loss_rate(
        flows["packets_dropped"], flows["packets_sent"]
    )
    flows["loss_event_rate"] = metrics.loss_event_rate(flows["loss_events"], flows["packets_sent"])
    departures = received.sum(axis=0)
    arrivals = _whole(run.arrivals)
    drops = dropped.sum(axis=0)
    capacity_per_bin = m.capacity_pps * m.bin_s
    utilization = np.minimum(run.delivered.sum(axis=0) / capacity_per_bin, 1.0)
    busy = float(utilization.sum() * m.bin_s)
    total_arrivals = int(arrivals.sum())
    links: dict[str, Any] = {
        "name": ["bottleneck"],
        "from": ["router_left"],
        "to": ["router_right"],
        "rate_bps": np.asarray([int(m.capacity_bps)], dtype=np.int64),
        "delay_s": np.asarray([min(f.rtt_s for f in m.flows) / 2], dtype=np.float64),
        "binned": np.asarray([True]),
        "arrivals": np.asarray([total_arrivals], dtype=np.int64),
        "queue_drops": np.asarray([int(drops.sum())], dtype=np.int64),
        "loss_model_drops": np.zeros(1, dtype=np.int64),
        "departures": np.asarray([int(departures.sum())], dtype=np.int64),
        "bytes_departed": np.asarray([int(departures.sum()) * size], dtype=np.int64),
        "max_queue_packets": np.asarray([math.ceil(run.queue_max.max())], dtype=np.int64),
        "early_drops": np.zeros(1, dtype=np.int64),
        "forced_drops": np.zeros(1, dtype=np.int64),
        "marks": np.zeros(1, dtype=np.int64),
        "busy_s": np.asarray([busy]),
        "utilization": np.asarray([busy / duration_s]),
        "drop_rate": np.asarray([drops.sum() / total_arrivals if total_arrivals else 0.0]),
        "mean_queue_packets": np.asarray([float(run.queue_mean.mean())]),
        "queue_kind": ["droptail"],
        "limit_packets": np.asarray([round(m.buffer_packets)], dtype=np.int64),
        "limit_bytes": np.asarray([-1], dtype=np.int64),
        "red_min_th": np.asarray([math.nan]),
        "red_max_th": np.asarray([math.nan]),
        "red_in_bytes": np.asarray([False]),
    }
    link_bins = {
        "mean_queue_packets": run.queue_mean[None, :],
        "mean_queue_bytes": run.queue_mean[None, :] * size,
        "max_queue_packets": np.ceil(run.queue_max - 1e-9).astype(np.int64)[None, :],
        "arrivals": arrivals[None, :],
        "drops": drops[None, :],
        "departures": departures[None, :],
        "departed_bytes": (departures * size)[None, :],
        "utilization": utilization[None, :],
        "red_average": np.full((1, bins), math.nan),
    }
    states: list[tuple[tuple[str, ...], NDArray[np.float64]]] = [
        (FLOW_FIELDS, run.states[k]) for k in range(n)
    ]
    info = RunInfo(
        scenario_toml=scenario_toml,
        seed=m.seed,
        version="fluid",
        duration_ns=round(duration_s * 1e9),
        bin_ns=round(m.bin_s * 1e9),
        events=m.steps,
        wall_seconds=run.wall_seconds,
        measure_from_ns=round(m.measure_from_s * 1e9),
        measure_to_ns=round(duration_s * 1e9),
        reference_group=_reference_group(scenario_toml),
    )
    return Result(info, flows, links, flow_bins, link_bins, states)


def _reference_group(scenario_toml: str) -> str:
    """The scenario's ``[measure] reference_group`` ("" when it names none)."""
    if not scenario_toml:
        return ""
    measure = Scenario.from_toml(scenario_toml).tables.get("measure", {})
    return str(measure.get("reference_group", "")) if isinstance(measure, dict) else ""


def loss_event_note(result: Result) -> str:
    """Why a fluid result's loss event rates exceed its loss rates, or "" where none does.

    In the fluid model every flow sending while the buffer overflows sees the loss and reacts
    (one window cut, one TFRC loss event), however little of its fluid was dropped: a loss
    event may lose a fraction of a packet, which packets cannot (docs/fluid.md). A flow
    sending little then has more loss events than lost packets.
    """
    flows = result.flows
    above = flows[flows["loss_event_rate"] > flows["packet_loss_rate"]]
    if above.empty:
        return ""
    names = ", ".join(str(name) for name in above["name"])
    fewest = float((above["packets_dropped"] / above["loss_events"]).min())
    return (
        f"the loss event rate (LER) of {names} is above its loss rate: in the fluid model "
        "every flow sending while the buffer overflows sees a loss event, however little of "
        f"it is dropped (here as little as {fewest:.2f} packets per event; docs/fluid.md)"
    )


def out_of_scope(scenario: Scenario) -> None:
    """Raise ValueError naming the first part of ``scenario`` the fluid model cannot run.

    The fluid model (docs/fluid.md) is one DropTail bottleneck on a dumbbell, crossed left to
    right by long-lived TCP and TFRC flows of one packet size, its only losses the buffer's
    overflows. This checks what the file says; :func:`model_from_scenario` checks the rest
    (the queue, each flow's kind, path and size) on the topology netsim builds.
    """
    if scenario.get("topology.kind") != "dumbbell":
        raise ValueError("topology.kind: the fluid model needs a dumbbell")
    losses = scenario.tables.get("losses", [])
    if losses:
        raise ValueError(
            f"losses[0]: the fluid model has no loss models (its only losses are the "
            f"buffer's overflows), got {losses[0].get('kind', 'one')} on {losses[0].get('link')}"
        )
    for table, where in expand_flows(scenario.tables.get("flows", [])):
        if "on_off" in table:
            raise ValueError(
                f"{where}.on_off: the fluid model has no ON/OFF flows (its flows send from "
                "start to stop)"
            )


def model_from_scenario(
    scenario: Scenario, seed: int | None = None, step_s: float | None = None
) -> FluidModel:
    """The fluid model of a dumbbell scenario: its bottleneck, and its TCP and TFRC flows.

    The packet simulator resolves the topology for a moment (so random RTTs and start times
    are drawn exactly as a packet run with the same seed draws them).

    Raises:
        ValueError: for a seed out of range, or naming the field the fluid model cannot
            represent (see :func:`out_of_scope`; a step that does not divide the bin).
    """
    from tfrclab import simulate

    if seed is not None:
        check_seed(seed)
    out_of_scope(scenario)
    tables = scenario.to_dict()
    tables.pop("measure", None)
    tables["duration"] = "1ms"
    tables.setdefault("monitor", {})["bin"] = "1ms"
    probe = simulate.run(Scenario.from_dict(tables, source=scenario.source), seed=seed)
    links = probe.links
    bottleneck = links[links["name"] == "bottleneck"].iloc[0]
    if str(bottleneck["queue_kind"]) != "droptail":
        raise ValueError(
            "topology.bottleneck.queue: the fluid model has a DropTail buffer only, got "
            f"{bottleneck['queue_kind']}"
        )
    rates = dict(zip(links["name"], links["rate_bps"], strict=True))
    size = None
    flows: list[FluidFlow] = []
    expanded = expand_flows(scenario.tables.get("flows", []))
    for (_, row), (table, where) in zip(probe.flows.iterrows(), expanded, strict=True):
        kind, variant = str(row["kind"]), str(row["variant"]).lower()
        if kind == "tcp" and variant in TCP_AS_RENO:
            fluid_kind = "reno"
        elif kind == "tcp" and variant == "vegas":
            fluid_kind = "vegas"
        elif kind == "tfrc":
            fluid_kind = "tfrc"
        else:
            raise ValueError(
                f"{where}.kind: the fluid model has TCP (reno, newreno, sack, tahoe, vegas) "
                f"and TFRC flows, got {kind} {variant}".rstrip()
            )
        path = [str(link) for link in row["path"]]
        if "bottleneck" not in path:
            raise ValueError(
                f"{where}: flow {row['name']} does not cross the bottleneck left to right; "
                "the fluid model has one forward bottleneck that every flow crosses"
            )
        for link in path:
            if link != "bottleneck" and rates[link] < bottleneck["rate_bps"]:
                raise ValueError(
                    f"topology.access.rate: link {link} of flow {row['name']} is slower than "
                    "the bottleneck; the fluid model has one bottleneck"
                )
        this = parse_size(str(table.get("size", "1000B")))
        if size is not None and this != size:
            raise ValueError(f"{where}.size: the fluid model needs one packet size")
        size = this
        stop = float(row["stop_s"])
        window = table.get("window")
        flows.append(
            FluidFlow(
                kind=fluid_kind,  # type: ignore[arg-type]
                rtt_s=float(row["base_rtt_s"]),
                name=str(row["name"]),
                start_s=float(row["start_s"]),
                stop_s=None if math.isnan(stop) else stop,
                max_window=float(window) if window is not None else None,
                group=str(row["group"]),
                background=bool(row["background"]),
            )
        )
    packet_bytes = size or 1000
    limit = int(bottleneck["limit_packets"])
    if limit < 0:
        limit = max(1, int(bottleneck["limit_bytes"]) // packet_bytes)
    bin_s = scenario.bin_s
    if step_s is None:
        target = min(0.001, min(f.rtt_s for f in flows) / 8)
        step_s = bin_s / math.ceil(bin_s / target)
    return FluidModel(
        capacity_bps=float(bottleneck["rate_bps"]),
        buffer_packets=float(limit),
        flows=tuple(flows),
        packet_bytes=packet_bytes,
        duration_s=scenario.duration_s,
        step_s=step_s,
        bin_s=bin_s,
        name=scenario.name,
        measure_from_s=scenario.measure_s[0],
        seed=scenario.seed if seed is None else seed,
    )
