"""The battery: its network, its runs, and what each run measures.

Every criterion runs on one dumbbell template (:class:`Network`): a bottleneck of 100 Mb/s,
every path's propagation RTT 50 ms (1 Gb/s access links), 1500-byte packets, so a BDP of 417
packets; the queue is the criterion's. tcpeval-01's access-link scenario has this bottleneck
rate; its nine paths of 4-200 ms RTT are replaced by one RTT so that throughput ratios measure
the algorithms, not their RTTs (inter-RTT fairness is not evaluated).

Runs (per seed; X is ALGO or a competitor, C a competitor):

- ``mix/C/QUEUE``: ``flows`` ALGO flows and ``flows`` C flows, starting in the first second,
  over DropTail 0.5 BDP, DropTail 2 BDP and RED (friendliness, harm, smoothness);
- ``solo/X/QUEUE``: 2 x ``flows`` flows of X alone, over the same queues and a deep DropTail of
  4 BDP (fairness, loss, bufferbloat, and the competitor-only baselines of harm);
- ``step/X``: one flow of X alone over DropTail 1 BDP; a CBR of 75% of the link starts at
  ``step_on_s`` and stops at ``step_off_s`` (tcpeval-01's transients, 0 -> 75% -> 0 of cross
  traffic): responsiveness D at the first, aggressiveness I at the second;
- ``blackout/X``: one flow of X alone over DropTail 1 BDP whose every feedback packet is lost
  on the reverse bottleneck from ``blackout_s`` for ``blackout_len_s`` (loss of all feedback).

Each run is measured in the process that made it (:func:`measure_run`): only a few numbers per
flow come back, so runs spread over worker processes cost little to collect.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np

__all__ = [
    "FULL",
    "QUEUES",
    "QUICK",
    "BatteryPlan",
    "Network",
    "Run",
    "build_runs",
    "measure_run",
    "run_all",
]

RunKind = Literal["long", "step", "blackout"]

QUEUES: Mapping[str, tuple[str, float, str]] = {
    "droptail-0.5bdp": ("droptail", 0.5, "DropTail, 0.5 BDP"),
    "droptail-2bdp": ("droptail", 2.0, "DropTail, 2 BDP"),
    "red": ("red", 2.0, "adaptive RED, 2 BDP buffer"),
    "droptail-4bdp": ("droptail", 4.0, "DropTail, 4 BDP (deep)"),
}
"""The bottleneck queues: kind, buffer in BDPs, and a label. tcpeval-01's delay/throughput
trade-off spans DropTail buffers of 10-200% BDP; RED is RFC 9743's AQM case (its other AQMs,
FQ-CoDel, PIE and L4S, are not in netsim)."""

MIX_QUEUES = ("droptail-0.5bdp", "droptail-2bdp", "red")
SOLO_QUEUES = ("droptail-0.5bdp", "droptail-2bdp", "red", "droptail-4bdp")

CROSS_SHARE = 0.75
"""The CBR cross traffic of the step runs, as a share of the link (tcpeval-01's transients:
cross traffic of 75 Mb/s on 100)."""


@dataclass(frozen=True)
class Network:
    """The dumbbell template every run uses (module documentation)."""

    rate_bps: float = 20e6
    rtt_s: float = 0.05
    bottleneck_delay_s: float = 0.01
    packet_bytes: int = 1500
    access_rate: str = "1Gbps"
    bin_s: float = 0.01

    @property
    def bdp_packets(self) -> int:
        """The bandwidth-delay product in packets (at least 1)."""
        return max(1, round(self.rate_bps * self.rtt_s / (8 * self.packet_bytes)))

    def buffer_packets(self, queue: str) -> int:
        """The buffer of ``queue`` in packets."""
        return max(1, round(QUEUES[queue][1] * self.bdp_packets))

    def queue_table(self, queue: str) -> dict[str, Any]:
        """The scenario's ``queue`` table for ``queue``."""
        kind = QUEUES[queue][0]
        if kind == "red":
            # Adaptive RED (Floyd, Gummadi, Shenker 2001) in packet mode, thresholds for the
            # link (max(5, 5 ms of packets / 2) and 3x that), the buffer as given.
            return {
                "kind": "red",
                "preset": "adaptive",
                "mean_packet_size": f"{self.packet_bytes}B",
                "limit": self.buffer_packets(queue),
            }
        return {"kind": "droptail", "limit": self.buffer_packets(queue)}

    def describe_queue(self, queue: str) -> str:
        """``DropTail, 2 BDP (833 packets)``."""
        return f"{QUEUES[queue][2]} ({self.buffer_packets(queue)} packets)"

    def describe(self) -> str:
        """One line: the dumbbell's rate, RTT, packets and BDP."""
        return (
            f"dumbbell, bottleneck {self.rate_bps / 1e6:g} Mb/s, every path's RTT "
            f"{self.rtt_s * 1e3:g} ms, {self.packet_bytes}-byte packets, BDP "
            f"{self.bdp_packets} packets"
        )

    def scenario(
        self,
        flows: list[dict[str, Any]],
        queue: str,
        duration_s: float,
        measure_from_s: float = 0.0,
        losses: Sequence[Mapping[str, Any]] = (),
    ) -> dict[str, Any]:
        """A scenario's tables: this dumbbell with ``queue``, ``flows`` and ``losses``."""
        hosts = sum(int(f.get("count", 1)) for f in flows)
        tables: dict[str, Any] = {
            "duration": f"{duration_s:g}s",
            "monitor": {"bin": f"{self.bin_s * 1e3:g}ms"},
            "measure": {"from": f"{measure_from_s:g}s"},
            "topology": {
                "kind": "dumbbell",
                "hosts": hosts,
                "bottleneck": {
                    "rate": f"{self.rate_bps:g}bps",
                    "delay": f"{self.bottleneck_delay_s * 1e3:g}ms",
                    "queue": self.queue_table(queue),
                },
                "access": {"rate": self.access_rate, "rtt": f"{self.rtt_s * 1e3:g}ms"},
            },
            "flows": flows,
        }
        if losses:
            tables["losses"] = [dict(loss) for loss in losses]
        return tables


@dataclass(frozen=True)
class BatteryPlan:
    """How long and how often the battery runs (``quick``, ``full``, or a test's own)."""

    name: str
    seeds: tuple[int, ...]
    network: Network = field(default_factory=Network)
    flows: int = 2
    """Flows per class in the mixed runs (the solo runs have twice as many)."""
    long_s: float = 200.0
    """Length of the mixed and solo runs."""
    warmup_s: float = 20.0
    """Where their measurement window starts (it runs to the end)."""
    timescales: tuple[float, ...] = (0.2, 1.0, 10.0)
    """The timescales of the send rate's CoV (floyd2000 §4.1.1: 0.2 to 10 s)."""
    step_on_s: float = 20.0
    step_off_s: float = 30.0
    step_end_s: float = 35.0
    blackout_s: float = 15.0
    blackout_len_s: float = 5.0
    blackout_end_s: float = 22.0

    def with_seeds(self, seeds: Iterable[int]) -> BatteryPlan:
        """The same plan over other seeds."""
        return replace(self, seeds=tuple(seeds))

    def describe(self) -> str:
        """One line: seeds, run lengths and the network."""
        seeds = self.seeds
        shown = f"seed {seeds[0]}" if len(seeds) == 1 else f"{len(seeds)} seeds"
        return (
            f"{self.name}: {shown}; mixed and solo runs of {self.long_s:g} s measured from "
            f"{self.warmup_s:g} s, {self.flows} + {self.flows} flows; {self.network.describe()}"
        )

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        n = self.network
        return {
            "name": self.name,
            "seeds": list(self.seeds),
            "flows_per_class": self.flows,
            "long_s": self.long_s,
            "warmup_s": self.warmup_s,
            "timescales_s": list(self.timescales),
            "step_on_s": self.step_on_s,
            "step_off_s": self.step_off_s,
            "step_end_s": self.step_end_s,
            "blackout_s": self.blackout_s,
            "blackout_len_s": self.blackout_len_s,
            "network": {
                "rate_bps": n.rate_bps,
                "rtt_s": n.rtt_s,
                "packet_bytes": n.packet_bytes,
                "bdp_packets": n.bdp_packets,
                "buffers_packets": {q: n.buffer_packets(q) for q in QUEUES},
            },
        }


QUICK = BatteryPlan(name="quick", seeds=tuple(range(1, 6)), long_s=60.0, warmup_s=10.0)
"""``--quick``: 5 seeds, 60-second mixed and solo runs (timed in docs/evaluation.md)."""

FULL = BatteryPlan(name="full", seeds=tuple(range(1, 21)), long_s=200.0)
"""The full battery: 20 seeds, 200-second mixed and solo runs."""


@dataclass(frozen=True)
class Run:
    """One simulation of the battery."""

    key: str
    """``mix/cubic/red``, ``solo/algo/droptail-4bdp``, ``step/reno``, ``blackout/algo``."""
    kind: RunKind
    toml: str
    seed: int
    params: Mapping[str, Any]
    """What :func:`measure_run` needs: the window, the step times, the RTT, the link rate."""


def _flow(table: Mapping[str, Any], name: str, count: int, spread_s: float = 1.0) -> dict[str, Any]:
    """``table`` as ``count`` flows called ``name``, starting uniformly in [0, spread)."""
    flow = dict(table)
    flow["name"] = name
    flow["count"] = count
    flow["start"] = {"uniform": ["0s", f"{spread_s:g}s"]} if spread_s > 0 else "0s"
    return flow


def build_runs(
    algo: Mapping[str, Any], competitors: Sequence[tuple[str, Mapping[str, Any]]], plan: BatteryPlan
) -> list[Run]:
    """Every run of the battery for ALGO's flow table and the competitors', over the seeds.

    The scenarios are checked by netsim here, before any run.
    """
    from tfrclab.scenario import Scenario

    net = plan.network
    tables: list[tuple[str, RunKind, dict[str, Any], dict[str, Any]]] = []
    long_params: dict[str, Any] = {
        "from_s": plan.warmup_s,
        "to_s": plan.long_s,
        "rate_bps": net.rate_bps,
        "timescales": list(plan.timescales),
    }
    classes = [("algo", algo), *competitors]
    for name, table in competitors:
        for queue in MIX_QUEUES:
            flows = [_flow(algo, "algo", plan.flows), _flow(table, "ref", plan.flows)]
            tables.append(
                (
                    f"mix/{name}/{queue}",
                    "long",
                    net.scenario(flows, queue, plan.long_s, plan.warmup_s),
                    long_params,
                )
            )
    for name, table in classes:
        for queue in SOLO_QUEUES:
            flows = [_flow(table, "algo" if name == "algo" else "ref", 2 * plan.flows)]
            tables.append(
                (
                    f"solo/{name}/{queue}",
                    "long",
                    net.scenario(flows, queue, plan.long_s, plan.warmup_s),
                    long_params,
                )
            )
    cross = {
        "kind": "cbr",
        "name": "cross",
        "rate": f"{CROSS_SHARE * net.rate_bps:g}bps",
        "size": f"{net.packet_bytes}B",
        "random": True,
        "start": f"{plan.step_on_s:g}s",
        "stop": f"{plan.step_off_s:g}s",
    }
    step_params: dict[str, Any] = {
        "on_s": plan.step_on_s,
        "off_s": plan.step_off_s,
        "rtt_s": net.rtt_s,
        "rate_bps": net.rate_bps,
        "packet_bytes": float(net.packet_bytes),
    }
    blackout_params: dict[str, Any] = {
        "from_s": plan.blackout_s,
        "to_s": plan.blackout_s + plan.blackout_len_s,
        "rtt_s": net.rtt_s,
    }
    for name, table in classes:
        flows = [_flow(table, "x", 1, spread_s=0.0), cross]
        tables.append(
            (
                f"step/{name}",
                "step",
                _one_bdp(net, flows, plan.step_end_s),
                step_params,
            )
        )
        blackout = {
            "link": "bottleneck_reverse",
            "flow": "x",
            "kind": "schedule",
            "steps": [
                {"at": f"{plan.blackout_s:g}s", "kind": "bernoulli", "p": 1.0},
                {
                    "at": f"{plan.blackout_s + plan.blackout_len_s:g}s",
                    "kind": "bernoulli",
                    "p": 0.0,
                },
            ],
        }
        tables.append(
            (
                f"blackout/{name}",
                "blackout",
                _one_bdp(
                    net, [_flow(table, "x", 1, spread_s=0.0)], plan.blackout_end_s, [blackout]
                ),
                blackout_params,
            )
        )
    runs: list[Run] = []
    for key, kind, scenario_tables, params in tables:
        scenario = Scenario.from_dict(scenario_tables, source=key)
        runs.extend(Run(key, kind, scenario.toml, seed, dict(params)) for seed in plan.seeds)
    return runs


def _one_bdp(
    net: Network,
    flows: list[dict[str, Any]],
    duration_s: float,
    losses: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """The dumbbell with a DropTail of 1 BDP (the step and blackout runs)."""
    tables = net.scenario(flows, "droptail-2bdp", duration_s, 0.0, losses)
    tables["topology"]["bottleneck"]["queue"] = {"kind": "droptail", "limit": net.bdp_packets}
    return tables


# ---------------------------------------------------------------------------------------------
# Measuring one run (in the process that ran it)


def _trailing_rate(per_bin: np.ndarray, bin_s: float, window_s: float) -> np.ndarray:
    """Bytes per bin as bits/s over the trailing ``window_s``, one value at each bin's end."""
    k = max(1, round(window_s / bin_s))
    sums = np.convolve(per_bin.astype(float), np.ones(k))[: per_bin.size]
    return sums * 8.0 / (k * bin_s)


def measure_run(kind: RunKind, toml: str, seed: int, params: Mapping[str, Any]) -> dict[str, Any]:
    """Run one scenario and return what the criteria read from it (plain values)."""
    from tfrclab import metrics
    from tfrclab.scenario import Scenario
    from tfrclab.simulate import run

    result = run(Scenario.from_toml(toml), seed)
    bin_s = result.info.bin_s
    names = [str(n) for n in result.flows["name"]]
    sent = result.flow_bins["sent_bytes"]
    if kind == "long":
        first = round(params["from_s"] / bin_s)
        last = round(params["to_s"] / bin_s)
        length = (last - first) * bin_s
        received = result.flow_bins["received_bytes"][:, first:last].sum(axis=1)
        row = result.binned_links.index("bottleneck")
        links = result.link_bins
        arrivals = float(links["arrivals"][row, first:last].sum())
        drops = float(links["drops"][row, first:last].sum())
        window = sent[:, first:last]
        covs = [
            [float(metrics.cov_at_timescale(window[i], bin_s, ts)) for ts in params["timescales"]]
            for i in range(len(names))
        ]
        return {
            "names": names,
            "throughput_bps": (received * 8.0 / length).tolist(),
            "cov": covs,
            "queue_delay_s": float(links["mean_queue_bytes"][row, first:last].mean())
            * 8.0
            / params["rate_bps"],
            "drop_rate": drops / arrivals if arrivals else math.nan,
        }
    x = names.index("x")
    if kind == "step":
        return _measure_step(result, sent[x], params)
    first, last = round(params["from_s"] / bin_s), round(params["to_s"] / bin_s)
    before = sent[x, max(0, first - (last - first)) : first].astype(float)
    tail = sent[x, last - max(1, round(2.0 / bin_s)) : last].astype(float)
    rate_before = before.sum() / (before.size * bin_s) if before.size else math.nan
    rate_tail = tail.sum() / (tail.size * bin_s)
    return {"rate_ratio": rate_tail / rate_before if rate_before > 0 else math.nan}


DRAIN_RTTS = 4
"""Aggressiveness is read from this many base RTTs after the cross traffic stops: by then the
queue it left (at most 1 BDP, draining at 75% of the link) is gone, so the rate times the base
RTT is the flow's window, not an ACK clock sped up by a shrinking queue."""

I_RTTS = 20
"""Aggressiveness is the window's increase over this many RTTs, per RTT."""


def _measure_step(result: Any, sent: np.ndarray, params: Mapping[str, Any]) -> dict[str, Any]:
    """Responsiveness D and aggressiveness I of the flow ``x`` of a step run.

    The send rate is taken over a trailing base RTT at the end of each bin. D
    (:func:`tfrclab.metrics.responsiveness`): from the first drop at the bottleneck after the
    cross traffic starts, the RTTs until the rate is at most half its mean over the 2 s before;
    an RTT is the base RTT plus the mean queueing delay of the second after that drop (the
    queue is full then: RTTs as the flow lives them, floyd2000 App. A.2's unit). I: the
    window (rate x base RTT, in packets of the network's size) from :data:`DRAIN_RTTS` base
    RTTs after the cross traffic stops, its increase per RTT over :data:`I_RTTS` RTTs as the
    least-squares slope of every bin's value (floyd2000's I; the two end points of
    :func:`tfrclab.metrics.aggressiveness` count whole packets, which over 20 RTTs is a step
    of 0.05 packets/RTT per RTT, as large as the differences looked for).
    """
    from tfrclab import metrics

    bin_s = result.info.bin_s
    rtt = float(params["rtt_s"])
    rate = _trailing_rate(sent, bin_s, rtt)
    times = (np.arange(rate.size) + 1) * bin_s
    row = result.binned_links.index("bottleneck")
    drops = result.link_bins["drops"][row]
    queue_s = result.link_bins["mean_queue_bytes"][row] * 8.0 / params["rate_bps"]
    starts = np.arange(drops.size) * bin_s
    after = np.flatnonzero((drops > 0) & (starts >= params["on_s"]))
    before = (times > params["on_s"] - 2.0) & (times <= params["on_s"])
    pre = float(rate[before].mean()) if before.any() else math.nan
    d = math.nan
    if after.size:
        onset = float(starts[after[0]])
        lived = rtt + float(queue_s[after[0] : after[0] + max(1, round(1.0 / bin_s))].mean())
        d = metrics.responsiveness(times, rate, onset, lived, baseline_s=2.0)
    start = params["off_s"] + DRAIN_RTTS * rtt
    span = (times > start) & (times <= start + I_RTTS * rtt + 1e-9)
    i = math.nan
    if np.count_nonzero(span) >= 2:
        window = rate[span] * rtt / (8.0 * params["packet_bytes"])
        i = float(np.polyfit((times[span] - start) / rtt, window, 1)[0])
    return {"d_rtts": d, "i_pkts": i, "pre_share": pre / params["rate_bps"]}


def _measure(run: Run) -> dict[str, Any]:
    """:func:`measure_run` of ``run`` (a worker's task)."""
    return measure_run(run.kind, run.toml, run.seed, run.params)


def run_all(
    runs: Sequence[Run],
    jobs: int = 1,
    progress: Callable[[str], None] | None = None,
    *,
    executor: str = "local",
    scheduler: str | None = None,
) -> dict[tuple[str, int], dict[str, Any]]:
    """Every run's measurements, by (key, seed).

    With the ``local`` executor, ``jobs`` > 1 runs them in worker processes; with ``dask`` each
    run is a task of the ``dask.distributed`` cluster at ``scheduler`` (its workers need
    tfrclab installed; without an address, a local cluster of ``jobs`` processes), as
    ``tfrclab sweep`` does. Either way the results are the same, bit for bit.
    """
    say = progress if progress is not None else (lambda _line: None)
    out: dict[tuple[str, int], dict[str, Any]] = {}
    total = len(runs)
    step = max(1, total // 10)

    def done(run: Run, measured: dict[str, Any]) -> None:
        out[(run.key, run.seed)] = measured
        if len(out) % step == 0 or len(out) == total:
            say(f"{len(out)}/{total} runs done")

    if executor == "dask":
        for run, measured in _on_dask(runs, jobs, scheduler):
            done(run, measured)
        return out
    if jobs <= 1:
        for run in runs:
            done(run, _measure(run))
        return out
    import concurrent.futures as cf

    from tfrclab._process import worker_pool

    with worker_pool(min(jobs, total)) as pool:
        futures = {pool.submit(_measure, run): run for run in runs}
        try:
            for future in cf.as_completed(futures):
                done(futures[future], future.result())
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise
    return out


def _on_dask(
    runs: Sequence[Run], jobs: int, scheduler: str | None
) -> Iterator[tuple[Run, dict[str, Any]]]:
    """Each run and its measurements, measured on a ``dask.distributed`` cluster as they finish."""
    import distributed

    from tfrclab.sweep import dask_client

    # distributed is only partly typed: its calls are made through Any.
    dist: Any = distributed
    with dask_client(jobs, scheduler) as client:
        futures = {client.submit(_measure, run, pure=False): run for run in runs}
        for future in dist.as_completed(futures):
            yield futures[future], future.result()
