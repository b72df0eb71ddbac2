"""``tfrclab twin``: one dumbbell scenario in netsim and on the testbed, compared metric by metric.

The testbed side runs every TCP flow as a kernel TCP connection with its congestion control set
per socket (netsim's ``reno``, ``newreno`` and ``sack`` are Linux's ``reno``, which recovers with
SACK; ``cubic`` and ``bbr`` are themselves) and every TFRC flow as ``tfrc-udp`` (``tfrclab
send``/``recv``) with the same preset and packet size, through the relay with the scenario's
bottleneck rate, one-way delay (bottleneck plus both access links) and queue, each flow starting
when netsim drew its start for the same seed. Both sides are measured alike over the same window
(from ``--from``, 5 s by default, to the end; testbed time counts from the first data packet):
per-class throughput (mean per flow), the TFRC/TCP ratio, bottleneck utilization, drop rate and
time-averaged queue. Each metric's netsim and testbed means over the seeds are compared with
Welch's 95% interval of their difference (:func:`tfrclab.ns2.crosscheck.compare`) and decided on
that interval (:func:`decide`): *agree* when it lies within the metric's tolerance, *differ*
when it lies outside, *inconclusive* when it crosses the line. Kernel TCP's state
(``TCP_INFO``: cwnd, RTT, pacing rate) is sampled every 100 ms and written beside netsim's
traces.

Bounded: the testbed runs in real time (seeds x duration, said before it starts), the relay
carries at most 100 Mb/s (docs/testbed.md), and it needs root, /dev/net/tun and iproute2.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tfrclab.scenario import Scenario, expand_flows
from tfrclab.testbed.timing import RelayTiming, cpu_steal_s, relay_timing
from tfrclab.units import parse_duration

__all__ = [
    "EPISODE_GAP_RTTS",
    "KERNEL_CC",
    "MAX_RATE_BPS",
    "TwinError",
    "TwinFlow",
    "TwinPlan",
    "TwinReport",
    "decide",
    "lone_tcp_flow",
    "loss_episode_period",
    "netsim_metrics",
    "plan",
    "plot_tcp",
    "testbed_available",
    "twin",
]

#: The kernel congestion control standing in for each netsim TCP variant.
KERNEL_CC: Mapping[str, str] = {
    "reno": "reno",
    "newreno": "reno",
    "sack": "reno",
    "cubic": "cubic",
    "bbr": "bbr",
}
#: The most the relay carries (docs/testbed.md, "Limits").
MAX_RATE_BPS = 100e6
#: The longest twin run, in seconds of real time per seed.
MAX_DURATION_S = 600.0
#: The most times a seed's testbed run is repeated when its relay was disturbed.
MAX_RETRIES = 5
#: tfrc-udp's presets.
TFRC_PRESETS = ("floyd2000", "rfc5348")
#: IP and UDP headers: a netsim TFRC packet of ``size`` bytes is a ``size - 28`` datagram.
UDP_IP_BYTES = 28
#: Metrics and their tolerance (relative to the larger mean).
TOLERANCES: Mapping[str, float] = {
    "throughput/tcp": 0.10,
    "throughput/tfrc": 0.20,
    "tfrc_over_tcp": 0.20,
    "utilization": 0.05,
    "drop_rate": 0.25,
    "mean_queue": 0.25,
    "sawtooth_period_s": 0.10,
}
#: A loss episode (one tooth of a lone TCP flow's sawtooth) ends where the next drop comes more
#: than this many base RTTs later: a window's overflow is dropped within one RTT, at most three
#: base RTTs with two BDP queued, and the flow cuts its window once for it.
EPISODE_GAP_RTTS = 4.0
_FIRST_PORT = 5101
_BIN_S = 0.1


class TwinError(ValueError):
    """The scenario has no testbed twin; the message names the key."""


@dataclass(frozen=True)
class TwinFlow:
    """One flow as both sides run it."""

    name: str
    kind: str
    """``"tcp"`` or ``"tfrc"``."""
    cc: str | None
    """The kernel congestion control (TCP)."""
    preset: str | None
    """tfrc-udp's preset (TFRC)."""
    size: int | None
    """tfrc-udp's datagram size in bytes (TFRC)."""
    port: int


@dataclass(frozen=True)
class TwinPlan:
    """What the relay emulates and which flows run."""

    rate: str
    rate_bps: float
    delay_s: float
    queue: Mapping[str, Any]
    duration_s: float
    flows: tuple[TwinFlow, ...]

    def real_time_s(self, seeds: int) -> float:
        """The testbed's real time for ``seeds`` runs (each: the run, 10 s to start and stop)."""
        return seeds * (self.duration_s + 10.0)

    @property
    def episode_gap_s(self) -> float:
        """The silence (s) that separates two loss episodes: :data:`EPISODE_GAP_RTTS` base RTTs."""
        return EPISODE_GAP_RTTS * 2 * self.delay_s


def decide(comparison: Any, tolerance: float) -> str:
    """The twin verdict of a :class:`~tfrclab.ns2.crosscheck.Comparison`, on its interval.

    *agree* when the whole 95% interval of the difference lies within ``tolerance`` times the
    larger mean (or the metric's absolute floor, :data:`tfrclab.ns2.crosscheck.FLOORS`),
    *differ* when it lies wholly outside, *inconclusive* when it crosses the line (more seeds
    decide). One seed per side has no interval: its difference alone decides.
    """
    from tfrclab.ns2.crosscheck import FLOORS

    scale = max(abs(comparison.mean_tfrclab), abs(comparison.mean_ns2))
    if not math.isfinite(scale):
        return "inconclusive"
    line = max(tolerance * scale, FLOORS.get(comparison.metric.split("/")[0], 0.0))
    low, high = comparison.ci_low, comparison.ci_high
    if -line <= low and high <= line:
        return "agree"
    if low > line or high < -line:
        return "differ"
    return "inconclusive"


@dataclass
class TwinReport:
    """Per-seed metrics of both sides and their comparisons."""

    seeds: list[int]
    window_s: tuple[float, float]
    netsim: list[dict[str, float]] = field(default_factory=list)
    testbed: list[dict[str, float]] = field(default_factory=list)
    comparisons: list[Any] = field(default_factory=list)
    #: The testbed's kernel settings (``net.*`` sysctls), empty when it ran the defaults.
    sysctls: dict[str, str] = field(default_factory=dict)
    #: Per seed, how late the relay delivered the kept testbed run's packets
    #: (:meth:`RelayTiming.as_dict`, with ``seed`` and ``runs``: how many runs it took).
    relay: list[dict[str, Any]] = field(default_factory=list)

    @property
    def disturbed_seeds(self) -> list[int]:
        """The seeds whose kept testbed run had the relay disturbed (every retry too)."""
        return [r["seed"] for r in self.relay if r["disturbed"]]

    @property
    def verdict(self) -> str:
        """``differ`` when a metric differs, else ``inconclusive`` when one is, else ``agree``."""
        verdicts = {c.verdict for c in self.comparisons}
        for worst in ("differ", "inconclusive"):
            if worst in verdicts:
                return worst
        return "agree"

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "seeds": self.seeds,
            "window_s": list(self.window_s),
            "netsim": self.netsim,
            "testbed": self.testbed,
            "comparisons": [c.as_dict() for c in self.comparisons],
            "verdict": self.verdict,
            "sysctls": self.sysctls,
            "relay": self.relay,
        }

    def table(self) -> str:
        """A Markdown table of the comparisons.

        Per metric: the two means, the difference's 95% interval, the tolerance and the verdict;
        above it, the testbed's kernel settings when it did not run the defaults, and each seed
        whose testbed run kept a disturbed relay (its timing was not the emulated link's).
        """
        lines = []
        if self.sysctls:
            settings = ", ".join(f"`{k}={v}`" for k, v in self.sysctls.items())
            lines += [f"The testbed's kernels ran with {settings}.", ""]
        for r in self.relay:
            if r["disturbed"]:
                lines += [
                    f"Seed {r['seed']}'s testbed run is not the emulated link's timing: "
                    f"{RelayTiming.from_dict(r).describe()}, in all {r['runs']} run(s). Its "
                    "metrics are kept; rerun it on a quieter machine.",
                    "",
                ]
        lines += [
            "| metric | netsim | testbed | difference (95% CI) | tolerance | verdict |",
            "|---|---|---|---|---|---|",
        ]
        for c in self.comparisons:
            lines.append(
                f"| {c.metric} | {_fmt(c.mean_tfrclab)} | {_fmt(c.mean_ns2)} | "
                f"{_fmt(c.difference)} ({_fmt(c.ci_low)}, {_fmt(c.ci_high)}) | "
                f"{TOLERANCES[c.metric]:.0%} | {c.verdict} |"
            )
        return "\n".join(lines)


def _fmt(value: float) -> str:
    if not math.isfinite(value):
        return "n/a"
    if abs(value) >= 1e5:
        return f"{value / 1e6:.3f}M"
    return f"{value:.4g}"


def _seconds(text: Any, key: str) -> float:
    """A scenario duration (``"50ms"``) in seconds, or :class:`TwinError` naming ``key``."""
    try:
        return parse_duration(str(text))
    except ValueError as err:
        raise TwinError(f"{key}: {err}") from None


def plan(scenario: Scenario, rate_bps: float | None = None) -> TwinPlan:
    """The testbed twin of ``scenario``, or :class:`TwinError` naming what has none.

    ``rate_bps`` is the bottleneck's rate as netsim read it (the results' ``rate_bps``).
    """
    topology = scenario.tables.get("topology", {})
    if topology.get("kind") != "dumbbell":
        raise TwinError(
            f'topology.kind: expected "dumbbell" (the relay emulates one bottleneck), '
            f"found {topology.get('kind')!r}"
        )
    bottleneck = topology.get("bottleneck", {})
    access = topology.get("access", {})
    if "rtt" in access:
        raise TwinError("topology.access.rtt: the relay's path has one delay; give access.delay")
    one_way = _seconds(bottleneck.get("delay", "0s"), "topology.bottleneck.delay")
    one_way += 2 * _seconds(access.get("delay", "0s"), "topology.access.delay")
    rate = str(bottleneck.get("rate", ""))
    if rate_bps is not None and rate_bps > MAX_RATE_BPS:
        raise TwinError(
            f"topology.bottleneck.rate: expected at most 100 Mb/s (what the relay carries), "
            f"found {rate}"
        )
    if "loss" in scenario.tables or "losses" in scenario.tables:
        raise TwinError("losses: loss models have no twin yet (the relay has --loss only)")
    duration = scenario.duration_s
    if duration > MAX_DURATION_S:
        raise TwinError(
            f"duration: expected at most {MAX_DURATION_S:g}s of real time per seed, "
            f"found {duration:g}s"
        )
    flows = []
    names = scenario.flow_names
    for index, ((table, path), name) in enumerate(
        zip(expand_flows(scenario.tables.get("flows", [])), names, strict=True)
    ):
        kind = table.get("kind")
        for key in ("stop", "on_off", "reverse", "from", "to", "max_packets"):
            if key in table:
                raise TwinError(f"{path}.{key}: not supported by twin yet")
        port = _FIRST_PORT + index
        if kind == "tcp":
            variant = str(table.get("variant", "sack"))
            cc = KERNEL_CC.get(variant)
            if cc is None:
                raise TwinError(
                    f"{path}.variant: {variant!r} has no kernel counterpart "
                    f"(twin runs {', '.join(KERNEL_CC)})"
                )
            flows.append(TwinFlow(name, "tcp", cc, None, None, port))
        elif kind == "tfrc":
            preset = str(table.get("preset", "rfc5348"))
            if preset not in TFRC_PRESETS:
                raise TwinError(
                    f"{path}.preset: tfrc-udp has {', '.join(TFRC_PRESETS)}, found {preset!r}"
                )
            if table.get("loss_event_round_check", False):
                raise TwinError(
                    f"{path}.loss_event_round_check: the wire format carries no sender round, "
                    "so tfrc-udp cannot run the check"
                )
            size = table.get("size")
            datagram = None
            if size is not None:
                text = str(size)
                if not text.endswith("B") or not text[:-1].isdigit():
                    raise TwinError(f'{path}.size: expected bytes such as "1028B", found {size!r}')
                datagram = int(text[:-1]) - UDP_IP_BYTES
            flows.append(TwinFlow(name, "tfrc", None, preset, datagram, port))
        else:
            raise TwinError(f"{path}.kind: {kind!r} has no testbed twin (tcp and tfrc have)")
    if not flows:
        raise TwinError("flows: expected at least one tcp or tfrc flow")
    return TwinPlan(rate, rate_bps or math.nan, one_way, bottleneck.get("queue", {}),
                    duration, tuple(flows))  # fmt: skip


def loss_episode_period(
    drop_times_s: np.ndarray, start_s: float, end_s: float, gap_s: float
) -> float:
    """The mean time (s) between the loss episodes that begin in ``[start_s, end_s)``.

    An episode begins at a drop more than ``gap_s`` after the drop before it (earlier drops
    count too, so an episode begun before the window does not begin again inside it). For one
    TCP flow alone this is its sawtooth's period: one window cut per episode. NaN with fewer
    than three episodes in the window (two periods).
    """
    drops = np.sort(np.asarray(drop_times_s, dtype=np.float64))
    gaps = np.diff(drops, prepend=-np.inf)
    starts = drops[gaps > gap_s]
    inside = starts[(starts >= start_s) & (starts < end_s)]
    if inside.size < 3:
        return math.nan
    return float((inside[-1] - inside[0]) / (inside.size - 1))


def _class_metrics(
    bits: Mapping[str, np.ndarray],
    kinds: Mapping[str, str],
    span_s: float,
    rate_bps: float,
    arrivals: float,
    drops: float,
    mean_queue: float,
    sawtooth_period_s: float | None,
) -> dict[str, float]:
    """The compared metrics from each flow's delivered bits in the window.

    ``sawtooth_period_s`` is given (NaN allowed) when the scenario's one flow is a loss-based
    TCP (:func:`lone_tcp_flow`).
    """
    rates = {name: float(v.sum()) / span_s for name, v in bits.items()}
    per_class: dict[str, list[float]] = {}
    for name, rate in rates.items():
        per_class.setdefault(kinds[name], []).append(rate)
    out = {f"throughput/{k}": float(np.mean(v)) for k, v in sorted(per_class.items())}
    if "tcp" in per_class and "tfrc" in per_class:
        tcp = out["throughput/tcp"]
        out["tfrc_over_tcp"] = out["throughput/tfrc"] / tcp if tcp > 0 else math.nan
    out["utilization"] = sum(rates.values()) / rate_bps
    out["drop_rate"] = drops / arrivals if arrivals else 0.0
    out["mean_queue"] = mean_queue
    if sawtooth_period_s is not None:
        out["sawtooth_period_s"] = sawtooth_period_s
    return out


def lone_tcp_flow(flows: Sequence[TwinFlow]) -> str | None:
    """The name of the plan's only flow when it is a loss-based TCP, else None.

    Its window's sawtooth is compared (``sawtooth_period_s``). BBR's window follows its
    model, not its losses, so it has no sawtooth to compare.
    """
    if len(flows) != 1 or flows[0].kind != "tcp" or flows[0].cc == "bbr":
        return None
    return flows[0].name


def netsim_metrics(
    scenario: Scenario, seed: int, start_s: float, pcap_dir: Path | None = None
) -> tuple[dict[str, float], dict[str, float], float, Any]:
    """The netsim run of ``scenario`` with ``seed``, measured from ``start_s`` to the end.

    With ``pcap_dir``, the senders' access links are captured there in both directions
    (:func:`sender_links`), as tcpdump on the testbed's side a sees them; a capture never
    changes the run. Returns the metrics, each flow's drawn start (s), the bottleneck's rate
    (bit/s) and the result (for its traces).
    """
    from tfrclab import simulate

    twin_plan = plan(scenario)
    lone = lone_tcp_flow(twin_plan.flows)
    if lone is not None:
        # Only records: every other result is the same with or without it.
        monitor = scenario.tables.get("monitor", {})
        logged = list(monitor.get("drop_log", []))
        scenario = scenario.with_(monitor={**monitor, "drop_log": [*logged, lone]})
    if pcap_dir is not None:
        scenario = scenario.with_(monitor={**scenario.tables.get("monitor", {}),
                                           "pcap": sender_links(scenario)})  # fmt: skip
    result = simulate.run(scenario, seed, pcap_dir=pcap_dir)
    bin_s = result.info.bin_s
    first, last = round(start_s / bin_s), round(scenario.duration_s / bin_s)
    received = result.flow_bins["received_bytes"].astype(np.float64) * 8
    names = [str(n) for n in result.flows["name"]]
    kinds = dict(zip(names, (str(k) for k in result.flows["kind"]), strict=True))
    bits = {name: received[i, first:last] for i, name in enumerate(names)}
    links = result.links
    binned = list(links["name"][links["binned"]])
    row = binned.index("bottleneck")
    rate_bps = float(links["rate_bps"][links["name"] == "bottleneck"].iloc[0])
    link = {k: np.asarray(v[row], dtype=np.float64) for k, v in result.link_bins.items()
            if k in ("arrivals", "drops", "mean_queue_packets")}  # fmt: skip
    span = (last - first) * bin_s
    period = None
    if lone is not None:
        drops = result.drop_send_times(lone)
        period = loss_episode_period(drops, first * bin_s, last * bin_s, twin_plan.episode_gap_s)
    metrics = _class_metrics(
        bits,
        kinds,
        span,
        rate_bps,
        float(link["arrivals"][first:last].sum()),
        float(link["drops"][first:last].sum()),
        float(link["mean_queue_packets"][first:last].mean()),
        period,
    )
    starts = dict(zip(names, (float(s) for s in result.flows["start_s"]), strict=True))
    return metrics, starts, rate_bps, result


def sender_links(scenario: Scenario) -> list[str]:
    """The dumbbell's left access links, both directions: where its senders' packets start.

    A twin's flows all run from the left hosts (``plan`` refuses ``reverse``), so these carry
    what the testbed's side a carries.
    """
    topology = scenario.tables.get("topology", {})
    hosts = int(topology.get("left_hosts", topology.get("hosts", 1)))
    return [name for i in range(hosts)
            for name in (f"left{i}->router_left", f"router_left->left{i}")]  # fmt: skip


def capture_notes(traces: Sequence[Mapping[str, Any]]) -> list[str]:
    """What to tell of netsim's capture files (``Result.traces``): those cut short or failed."""
    notes = []
    for trace in traces:
        if trace["error"] is not None:
            notes.append(f"netsim's capture {trace['path']}: {trace['error']}")
        elif trace["over_limit"]:
            notes.append(
                f"netsim's capture {trace['path']} stopped at monitor.trace_limit = "
                f"{trace['limit']}: {trace['over_limit']} packets not written"
            )
    return notes


def testbed_available() -> str | None:
    """None when the testbed can run here, else why not."""
    if os.geteuid() != 0:
        return "the testbed needs root (network namespaces)"
    if not os.path.exists("/dev/net/tun"):
        return "the testbed needs /dev/net/tun"
    if shutil.which("ip") is None:
        return "the testbed needs iproute2's ip"
    return None


def _time_average_queue(records: np.ndarray, t0_ns: int, start_s: float, end_s: float) -> float:
    """The relay queue's time average (packets) over the window, from ``qlen`` at each event."""
    from tfrclab.testbed.log import FORWARD

    fwd = records[records["dir"] == FORWARD]
    t = (fwd["t_ns"].astype(np.int64) - t0_ns) / 1e9
    q = fwd["qlen"].astype(np.float64)
    inside = (t >= start_s) & (t < end_s)
    if not inside.any():
        return 0.0
    ts = np.append(t[inside], end_s)
    return float((q[inside] * np.diff(ts)).sum() / max(end_s - ts[0], 1e-9))


def testbed_metrics(
    twin_plan: TwinPlan,
    starts: Mapping[str, float],
    out: Path,
    seed: int,
    start_s: float,
    capture: bool,
    sysctls: Mapping[str, str] | None,
) -> tuple[dict[str, float], RelayTiming]:
    """One testbed run of the plan, each flow starting at ``starts`` (s), written to ``out``.

    With ``capture``, tcpdump records side a into ``out/capture.pcap``
    (:mod:`tfrclab.testbed.capture`). ``sysctls`` (checked ``net.*`` settings,
    :mod:`tfrclab.testbed.sysctl`) are set in both namespaces before any flow starts.
    Returns the metrics and how late the relay delivered the run's packets.
    """
    from tfrclab.testbed import capture as pcap
    from tfrclab.testbed import emulator, read_log
    from tfrclab.testbed.log import ARRIVE, DEPART, DROP_QUEUE, FORWARD
    from tfrclab.testbed.sysctl import apply_sysctls

    out.mkdir(parents=True, exist_ok=True)
    log_path = out / "relay.log"
    steal_before = cpu_steal_s()
    duration = twin_plan.duration_s
    python = [sys.executable, "-m"]
    with emulator.Testbed(
        rate=twin_plan.rate,
        delay=f"{twin_plan.delay_s * 1e3:g}ms",
        queue=dict(twin_plan.queue),
        log=log_path,
        seed=seed,
    ) as tb:
        apply_sysctls(tb, sysctls or {})
        tcpdump = pcap.start(tb, out / "capture.pcap") if capture else None
        peer = tb.address("b")
        receivers = []
        for flow in twin_plan.flows:
            if flow.kind == "tcp":
                cmd = [*python, "tfrclab.testbed", "tcp-recv", "--port", str(flow.port),
                       "--limit", str(duration + 30)]  # fmt: skip
            else:
                cmd = [*python, "tfrclab", "recv", "--bind", f"{peer}:{flow.port}", "--duration",
                       f"{duration + 5:g}s", "--preset", str(flow.preset)]  # fmt: skip
            receivers.append(tb.popen("b", cmd, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL))  # fmt: skip
        time.sleep(0.5)
        senders = []
        began = time.monotonic()
        for flow in sorted(twin_plan.flows, key=lambda f: starts[f.name]):
            wait = began + starts[flow.name] - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            seconds = max(duration - starts[flow.name], 1.0)
            if flow.kind == "tcp":
                cmd = [*python, "tfrclab.testbed", "tcp-send", peer, "--port", str(flow.port),
                       "--seconds", f"{seconds:.3f}", "--cc", str(flow.cc), "--info-every",
                       "0.1", "--info-out", str(out / f"tcp_info-{flow.name}.jsonl")]  # fmt: skip
            else:
                cmd = [*python, "tfrclab", "send", "--to", f"{peer}:{flow.port}", "--duration",
                       f"{seconds:.3f}s", "--preset", str(flow.preset), "--out",
                       str(out / f"tfrc-{flow.name}"), "--force"]  # fmt: skip
                if flow.size is not None:
                    cmd += ["--size", f"{flow.size}B"]
            senders.append((flow, tb.popen("a", cmd, stdout=subprocess.PIPE,
                                           stderr=subprocess.PIPE)))  # fmt: skip
        for flow, proc in senders:
            _, err = proc.communicate(timeout=duration + 60)
            if proc.returncode != 0:
                raise RuntimeError(
                    f"{flow.name}: the testbed sender failed: "
                    f"{err.decode(errors='replace').strip()[-400:]}"
                )
        for proc in receivers:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.communicate(timeout=30)
        pcap.stop(tcpdump)
    r = read_log(log_path).records
    fwd = r[r["dir"] == FORWARD]
    data = fwd[(fwd["proto"] == 6) | (fwd["proto"] == 17)]
    t0 = int(data["t_ns"][data["event"] == ARRIVE].min())
    t = (data["t_ns"].astype(np.int64) - t0) / 1e9
    window = (t >= start_s) & (t < duration)
    by_port = {f.port: f for f in twin_plan.flows}
    bits: dict[str, np.ndarray] = {}
    for port, flow in by_port.items():
        mine = window & (data["dport"] == port) & (data["event"] == DEPART)
        proto = 6 if flow.kind == "tcp" else 17
        mine &= data["proto"] == proto
        bits[flow.name] = data["size"][mine].astype(np.float64) * 8
    arrivals = float((window & (data["event"] == ARRIVE)).sum())
    dropped = data["event"] == DROP_QUEUE
    drops = float((window & dropped).sum())
    kinds = {f.name: f.kind for f in twin_plan.flows}
    period = None
    if lone_tcp_flow(twin_plan.flows) is not None:
        tcp_drops = t[dropped & (data["proto"] == 6)]
        period = loss_episode_period(tcp_drops, start_s, duration, twin_plan.episode_gap_s)
    metrics = _class_metrics(
        bits,
        kinds,
        duration - start_s,
        twin_plan.rate_bps,
        arrivals,
        drops,
        _time_average_queue(r, t0, start_s, duration),
        period,
    )
    steal_after = cpu_steal_s()
    steal = None if steal_before is None or steal_after is None else steal_after - steal_before
    return metrics, dataclasses.replace(relay_timing(r), steal_s=steal)


def twin(
    scenario: Scenario,
    seeds: Sequence[int],
    out: Path,
    start_s: float = 5.0,
    progress: Callable[[str], None] | None = None,
    capture: bool = False,
    sysctls: Mapping[str, str] | None = None,
    retries: int = 1,
) -> TwinReport:
    """Runs ``scenario`` with each seed in netsim and on the testbed, and compares them.

    A testbed run whose relay was disturbed (:mod:`tfrclab.testbed.timing`: more than 1% of
    its packets delivered over 1 ms late) is run again, up to ``retries`` times; the last run
    is kept, and the report names a seed that stayed disturbed (:attr:`TwinReport.relay`).

    ``sysctls`` are kernel settings for the testbed's side (``net.*`` keys, set in both of its
    namespaces: :mod:`tfrclab.testbed.sysctl`), e.g. ``{"net.ipv4.tcp_comp_sack_nr": "0"}`` to
    switch the kernel receiver's SACK compression off; netsim's side is the scenario as it is,
    so change the same feature there in the scenario. The report records them.

    With ``capture``, each seed's directory also gets the packets on both sides:
    ``capture.pcap`` (tcpdump on the testbed's side a, headers only) and ``netsim-pcap/``
    (netsim's sender access links, :func:`sender_links`), for Wireshark or a replay such as
    ``scripts/rate_samples.py``.

    Raises:
        TwinError: the scenario has no twin (the message names the key).
        RuntimeError: the testbed cannot run here, tcpdump is missing for ``capture``, or a
            sender failed.
        ValueError: a ``sysctls`` key or value is not a plain ``net.*`` setting.
    """
    from tfrclab.ns2.crosscheck import compare
    from tfrclab.testbed.capture import tcpdump_missing
    from tfrclab.testbed.sysctl import check_sysctls

    if not 0 <= start_s < scenario.duration_s - 1:
        raise TwinError(f"--from: expected 0 to {scenario.duration_s - 1:g} s, found {start_s:g}")
    if not 0 <= retries <= MAX_RETRIES:
        raise TwinError(f"--retries: expected 0 to {MAX_RETRIES}, found {retries}")
    plan(scenario)  # refuse what has no twin before any work
    settings = check_sysctls(sysctls)
    why = testbed_available() or (tcpdump_missing() if capture else None)
    if why is not None:
        raise RuntimeError(why)
    say = progress or (lambda _: None)
    report = TwinReport(list(seeds), (start_s, scenario.duration_s), sysctls=settings)
    runs = []
    for seed in seeds:
        pcaps = out / f"seed-{seed}" / "netsim-pcap" if capture else None
        metrics, starts, rate_bps, result = netsim_metrics(scenario, seed, start_s, pcaps)
        for note in capture_notes(result.traces):
            say(f"seed {seed}: {note}")
        runs.append((seed, metrics, starts, result))
    twin_plan = plan(scenario, rate_bps)
    for seed, metrics, starts, result in runs:
        say(f"seed {seed}: testbed, {twin_plan.duration_s:g} s of real time")
        directory = out / f"seed-{seed}"
        for run in range(1, retries + 2):
            tb, timing = testbed_metrics(
                twin_plan, starts, directory, seed, start_s, capture, settings
            )
            if not timing.disturbed:
                break
            if run <= retries:
                say(f"seed {seed}: {timing.describe()}: running it again ({run} of {retries})")
            else:
                say(f"seed {seed}: {timing.describe()} in every run: kept, and marked")
        report.relay.append({"seed": seed, "runs": run, **timing.as_dict()})
        _write_netsim_traces(result, directory)
        report.netsim.append(metrics)
        report.testbed.append(tb)
    for metric in TOLERANCES:
        if metric not in report.netsim[0]:
            continue
        ours = [m.get(metric, math.nan) for m in report.netsim]
        theirs = [m.get(metric, math.nan) for m in report.testbed]
        comparison = compare(metric, ours, theirs, TOLERANCES[metric])
        verdict = decide(comparison, TOLERANCES[metric])
        report.comparisons.append(dataclasses.replace(comparison, verdict=verdict))
    out.mkdir(parents=True, exist_ok=True)
    (out / "twin.json").write_text(json.dumps(report.as_dict(), indent=2, default=float) + "\n")
    (out / "twin.md").write_text(report.table() + "\n")
    return report


def _write_netsim_traces(result: Any, directory: Path) -> None:
    """Write netsim's TCP state traces beside the kernel's TCP_INFO, and draw them together.

    ``netsim_trace-FLOW.csv`` (cwnd, srtt, ... per bin) and ``tcp.png`` (:func:`plot_tcp`).
    """
    directory.mkdir(parents=True, exist_ok=True)
    traces = {}
    for i, kind in enumerate(result.flows["kind"]):
        if kind != "tcp":
            continue
        name = str(result.flows["name"].iloc[i])
        trace = result.trace(i)
        trace.to_csv(directory / f"netsim_trace-{name}.csv")
        traces[name] = (float(result.flows["start_s"].iloc[i]), trace)
    if traces:
        plot_tcp(directory, traces)


def _kernel_samples(path: Path) -> dict[str, np.ndarray]:
    """A ``tcp_info-FLOW.jsonl`` file as arrays by field (empty when it is missing)."""
    if not path.exists():
        return {}
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    if not rows:
        return {}
    return {key: np.array([row[key] for row in rows], dtype=np.float64) for key in rows[0]}


def plot_tcp(directory: Path, traces: Mapping[str, tuple[float, Any]]) -> Path:
    """Draw each TCP flow's cwnd and smoothed RTT, the kernel's beside netsim's.

    From each flow's start: cwnd (packets) and RTT (ms), the kernel's ``TCP_INFO`` samples and
    netsim's state trace, into ``directory/tcp.png``. Where a flow is BBR on both sides, a third
    panel shows its bandwidth estimate (segments/s: netsim's ``bbr_bw``, the kernel's
    ``TCP_CC_INFO`` bytes/s over its MSS).
    """
    from matplotlib.figure import Figure

    kernels = {name: _kernel_samples(directory / f"tcp_info-{name}.jsonl") for name in traces}

    def is_bbr(name: str) -> bool:
        trace = traces[name][1]
        return "bbr_bw" in kernels[name] and "bbr_bw" in trace and trace["bbr_bw"].max() > 0

    panels = 3 if any(is_bbr(name) for name in traces) else 2
    figure = Figure(figsize=(4.5 * panels, 2.6 * len(traces)), layout="constrained")
    axes = figure.subplots(len(traces), panels, squeeze=False)
    for row, (name, (start_s, trace)) in enumerate(sorted(traces.items())):
        kernel = dict(kernels[name])
        if is_bbr(name) and "snd_mss" in kernel:
            kernel["bbr_segments"] = kernel["bbr_bw"] / np.maximum(kernel["snd_mss"], 1.0)
        t = trace.index.to_numpy() - start_s
        shown = [("cwnd", "cwnd", 1.0, "packets"), ("srtt", "rtt_us", 1e-3, "ms")]
        if is_bbr(name):
            shown.append(("bbr_bw", "bbr_segments", 1.0, "segments/s"))
        for col, (ours, kernel_field, scale, unit) in enumerate(shown):
            ax = axes[row, col]
            values = trace[ours].to_numpy() * (1e3 if ours == "srtt" else 1.0)
            ax.plot(t, values, color="C0", linewidth=1.0, label="netsim")
            if kernel_field in kernel:
                ax.plot(kernel["t"], kernel[kernel_field] * scale, color="C3", linewidth=1.0,
                        label="kernel")  # fmt: skip
            ax.set_title(f"{name}: {ours} ({unit})")
            ax.set_xlabel("time since the flow's start (s)")
            ax.grid(visible=True, alpha=0.3)
            ax.legend(loc="upper right", fontsize="small")
        for col in range(len(shown), panels):
            axes[row, col].set_visible(False)
    path = directory / "tcp.png"
    figure.savefig(path, dpi=100)
    return path
