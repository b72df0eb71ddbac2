"""floyd2000's real-network experiments (§4.3) on the link-emulator testbed.

Two experiments, each a set of bounded runs of real stacks through :class:`Testbed`:

- **oscillation** (Figs. 3-4): one greedy TFRC flow (``tfrclab send``, the ``tfrc-udp``
  transport, preset ``floyd2000``: RTT EWMA weight 0.05 as in Fig. 3) over a 10 Mb/s link
  with DropTail buffers of 2-64 packets, with the sqrt(RTT) inter-packet spacing (RFC 5348
  §4.5, the paper's §3.4) off and on. Measured: the CoV of its send rate (the relay's
  arrivals) at several timescales.
- **mixed** (Figs. 15-17 analogue): one TFRC flow and three kernel TCP bulk transfers
  (``TCP_CONGESTION`` reno or cubic) through 10 Mb/s, 50 ms, DropTail or RED. Measured from
  the relay's log: each flow's share of the link, TFRC's throughput over the TCPs' mean, the
  equivalence ratio of TFRC with each TCP and the CoVs, across timescales
  (:mod:`tfrclab.metrics`).

Each run leaves a directory: ``relay.log`` (the relay's per-packet log), ``capture.pcap``
(tcpdump in side a: the packets as the senders put them on the link and the returning
ACKs and feedback, headers only; Wireshark reads it), ``tfrc-send`` (the TFRC sender's
trace) and ``result.json`` (the measures). :func:`mixed_netsim` runs the same mixed
scenario in the simulator for the side-by-side table. Needs root (see docs/testbed.md).
"""

from __future__ import annotations

import contextlib
import json
import math
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tfrclab import metrics
from tfrclab.outdir import write_text_atomically
from tfrclab.testbed import capture
from tfrclab.testbed.emulator import Testbed
from tfrclab.testbed.log import ARRIVE, DEPART, FORWARD, PacketLog, flows, read_log
from tfrclab.testbed.sysctl import apply_sysctls, check_sysctls

__all__ = [
    "BUFFERS",
    "LINK_BPS",
    "LINK_DELAY",
    "LINK_RATE",
    "TIMESCALES_S",
    "MixedCell",
    "flow_series",
    "mixed_netsim",
    "mixed_run",
    "oscillation_netsim",
    "oscillation_run",
    "summarize_mixed",
]

#: The bottleneck of both experiments: its rate and one-way delay.
LINK_RATE, LINK_DELAY = "10Mb/s", "50ms"
#: The same rate in bit/s.
LINK_BPS = 10e6
#: Figs. 3-4's buffer sizes, packets.
BUFFERS = (2, 8, 32, 64)
#: The timescales (s) of the CoV and equivalence measures (the paper's axes: 0.2-10 s).
TIMESCALES_S = (0.2, 0.5, 1.0, 2.0, 5.0, 10.0)
#: The finest bin of the per-flow series read from the log.
BIN_S = 0.1
#: Seconds left out at the start of each run (slow start, TFRC's start-up).
WARMUP_S = 5.0
#: The queues of the mixed experiment: DropTail of 50 packets, and RED with floyd2000's
#: 2000-era parameters (min_th 5, max_th 15) in a 50-packet buffer.
QUEUES: Mapping[str, Any] = {
    "droptail": "droptail:50",
    "red": {"kind": "red", "preset": "ns2_2000", "limit": 50},
}
TFRC_PORT = 5001
TCP_PORTS = (5101, 5102, 5103)


def _check_run(seconds: float, buffer: int = 1) -> None:
    """Refuse a run that cannot be measured or would not be bounded, naming the argument."""
    if not WARMUP_S + 4.0 <= seconds <= 3600.0:
        raise ValueError(f"seconds: expected {WARMUP_S + 4:g} to 3600, found {seconds!r}")
    if not 1 <= buffer <= 100_000:
        raise ValueError(f"buffer: expected 1 to 100000 packets, found {buffer!r}")


def _python(*args: str) -> list[str]:
    return [sys.executable, "-m", *args]


def _tfrc_pair(
    tb: Testbed, out: Path, seconds: float, spacing: bool | None, size: int | None = None
) -> tuple[subprocess.Popen[Any], subprocess.Popen[Any]]:
    """Start a TFRC receiver in b and a greedy floyd2000 sender in a (trace to out/tfrc-send).

    ``size`` is the datagram size (``tfrclab send --size``, bytes; default its 1000).
    """
    address = f"{tb.address('b')}:{TFRC_PORT}"
    recv = tb.popen(
        "b",
        _python("tfrclab", "recv", "--bind", address, "--duration", f"{seconds + 3}s",
                "--preset", "floyd2000"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    cmd = ["tfrclab", "send", "--to", address, "--duration", f"{seconds}s"]
    cmd += ["--preset", "floyd2000", "--out", str(out / "tfrc-send"), "--force"]
    if spacing is not None:
        cmd += ["--sqrt-rtt-spacing", "on" if spacing else "off"]
    if size is not None:
        cmd += ["--size", f"{size}B"]
    send = tb.popen("a", _python(*cmd), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return recv, send


def flow_series(
    log: PacketLog, event: int = DEPART, bin_s: float = BIN_S
) -> tuple[float, dict[str, np.ndarray]]:
    """Bits per bin of each forward flow, keyed ``udp:PORT`` or ``tcp:PORT`` (destination port).

    ``event`` is :data:`DEPART` (what the link carried) or :data:`ARRIVE` (what the sender
    sent). Bins start at the first forward arrival of any flow; returns that time (relay s).
    """
    r = log.records
    fwd = r[(r["dir"] == FORWARD) & ((r["proto"] == 6) | (r["proto"] == 17))]
    if len(fwd) == 0:
        return 0.0, {}
    t0 = float(fwd["t_ns"].min()) / 1e9
    picked = fwd[fwd["event"] == event]
    nbins = math.ceil((float(fwd["t_ns"].max()) / 1e9 - t0) / bin_s) + 1
    series: dict[str, np.ndarray] = {}
    for proto, name in ((17, "udp"), (6, "tcp")):
        mine = picked[picked["proto"] == proto]
        for port in np.unique(mine["dport"]):
            rec = mine[mine["dport"] == port]
            # Only the flows with data (TCP's pure ACKs go the other way; SYNs are tiny).
            if int(rec["size"].sum()) < 100_000:
                continue
            k = ((rec["t_ns"] / 1e9 - t0) // bin_s).astype(np.int64)
            bits = np.bincount(k, weights=rec["size"].astype(np.float64) * 8, minlength=nbins)
            series[f"{name}:{int(port)}"] = bits[:nbins]
    return t0, series


def _window(bits: np.ndarray, start_s: float, end_s: float, bin_s: float = BIN_S) -> np.ndarray:
    return bits[round(start_s / bin_s) : round(end_s / bin_s)]


def _covs(bits: np.ndarray, span_s: float, bin_s: float = BIN_S) -> dict[str, float]:
    """CoV of the rate at each timescale that fits at least 4 samples into the window."""
    out: dict[str, float] = {}
    for ts in TIMESCALES_S:
        if span_s / ts >= 4:
            out[f"{ts:g}"] = float(metrics.cov(metrics.send_rate(bits, bin_s, ts)))
    return out


def oscillation_run(
    out: str | Path, buffer: int, spacing: bool, seconds: float = 60.0, seed: int = 1
) -> dict[str, Any]:
    """One run of Figs. 3-4: a greedy TFRC flow over 10 Mb/s, DropTail of ``buffer`` packets.

    ``spacing`` turns the sqrt(RTT) inter-packet spacing on or off. Returns (and writes to
    ``out/result.json``) the send rate's mean and CoV per timescale over ``[WARMUP_S,
    seconds)`` of the flow, the rate series at 1 s, drops, the relay's lateness and the file
    names.
    """
    _check_run(seconds, buffer)
    directory = Path(out)
    directory.mkdir(parents=True, exist_ok=True)
    log_path = directory / "relay.log"
    with Testbed(
        queue=f"droptail:{buffer}", seed=seed, log=log_path, rate=LINK_RATE, delay=LINK_DELAY
    ) as tb:
        tcpdump = capture.start(tb, directory / "capture.pcap")
        recv, send = _tfrc_pair(tb, directory, seconds, spacing)
        _, err = send.communicate(timeout=seconds + 30)
        recv.wait(timeout=10)
        capture.stop(tcpdump)
        if send.returncode != 0:
            raise RuntimeError(f"tfrclab send failed: {err.decode(errors='replace')[-500:]}")
    log = read_log(log_path)
    _, sent = flow_series(log, ARRIVE)
    bits = _window(sent.get(f"udp:{TFRC_PORT}", np.zeros(0)), WARMUP_S, seconds)
    span = len(bits) * BIN_S
    report = tb.report or {}
    result = {
        "experiment": "oscillation",
        "buffer_packets": buffer,
        "sqrt_rtt_spacing": spacing,
        "seconds": seconds,
        "seed": seed,
        "window_s": [WARMUP_S, seconds],
        "mean_send_rate_bps": float(bits.sum() / span) if span else float("nan"),
        "cov": _covs(bits, span),
        "rate_1s_bps": metrics.send_rate(bits, BIN_S, 1.0).tolist(),
        "queue_drops": int(report.get("forward", {}).get("queue_drops", 0)),
        "lateness_p99_us": report.get("forward", {}).get("lateness_p99_us"),
        "files": _files(directory),
    }
    write_text_atomically(directory / "result.json", json.dumps(result, indent=2) + "\n")
    return result


def _files(directory: Path) -> dict[str, str]:
    names = ("relay.log", "capture.pcap", "tfrc-send")
    return {n: n for n in names if (directory / n).exists()}


def mixed_run(
    out: str | Path,
    cc: str,
    queue: str,
    seconds: float = 60.0,
    seed: int = 1,
    sysctls: Mapping[str, str] | None = None,
    tfrc_size: int | None = None,
) -> dict[str, Any]:
    """One run of the Figs. 15-17 analogue: 1 TFRC + 3 kernel TCP (``cc``) through ``queue``.

    ``queue`` is a key of :data:`QUEUES`. ``sysctls`` (e.g. ``{"net.ipv4.tcp_sack": "0"}``)
    are set in both namespaces before any flow starts (the ``net.*`` TCP settings are per
    namespace), to switch Linux TCP features off. Halfway through, the kernel's smoothed RTT
    of each TCP connection is read (``ss -ti``) beside TFRC's own R (its trace). Returns (and
    writes to ``out/result.json``) :func:`summarize_mixed` of the relay's log, with the relay's
    per-flow table, lateness, the RTTs and the file names. ``tfrc_size`` is the TFRC datagram
    size in bytes (default 1000, 1028 on the wire; 1472 gives TCP's 1500-byte packets).
    """
    if queue not in QUEUES:
        raise ValueError(f"queue: expected one of {', '.join(QUEUES)}, found {queue!r}")
    _check_run(seconds)
    settings = check_sysctls(sysctls)
    directory = Path(out)
    directory.mkdir(parents=True, exist_ok=True)
    log_path = directory / "relay.log"
    with Testbed(
        queue=QUEUES[queue], seed=seed, log=log_path, rate=LINK_RATE, delay=LINK_DELAY
    ) as tb:
        apply_sysctls(tb, settings)
        tcpdump = capture.start(tb, directory / "capture.pcap")
        receivers = [
            tb.popen("b", _python("tfrclab.testbed", "tcp-recv", "--port", str(port),
                                  "--limit", str(seconds + 30)), stdout=subprocess.PIPE)
            for port in TCP_PORTS
        ]  # fmt: skip
        recv, send = _tfrc_pair(tb, directory, seconds, None, tfrc_size)
        senders = [
            tb.popen("a", _python("tfrclab.testbed", "tcp-send", tb.address("b"), "--port",
                                  str(port), "--seconds", str(seconds), "--cc", cc),
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            for port in TCP_PORTS
        ]  # fmt: skip
        time.sleep(seconds / 2)
        tcp_srtt_ms = _tcp_srtt_ms(tb.run("a", ["ss", "-tin", "state", "established"]).stdout)
        for proc in senders:
            _, err = proc.communicate(timeout=seconds + 30)
            if proc.returncode != 0:
                raise RuntimeError(f"tcp-send failed: {err.decode(errors='replace')[-500:]}")
        send.communicate(timeout=30)
        for proc in (*receivers, recv):
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.communicate(timeout=30)
        capture.stop(tcpdump)
    log = read_log(log_path)
    result = summarize_mixed(log, seconds)
    report = tb.report or {}
    result.update(
        {
            "experiment": "mixed",
            "seed": seed,
            "cc": cc,
            "queue": queue,
            "relay_flows": flows(log).to_dict(orient="records"),
            "lateness_p99_us": report.get("forward", {}).get("lateness_p99_us"),
            "sysctls": settings,
            "tfrc_size": tfrc_size,
            "tcp_srtt_ms_midway": tcp_srtt_ms,
            "tfrc_rtt_ms_median": _tfrc_rtt_ms(directory / "tfrc-send"),
            "files": _files(directory),
        }
    )
    text = json.dumps(result, indent=2, default=float) + "\n"
    write_text_atomically(directory / "result.json", text)
    return result


def _tcp_srtt_ms(ss_output: str) -> list[float]:
    """The smoothed RTTs (ms) in ``ss -ti`` output (``rtt:SRTT/RTTVAR``), one per connection."""
    found = []
    for word in ss_output.split():
        if word.startswith("rtt:"):
            with contextlib.suppress(ValueError):
                found.append(float(word[4:].split("/")[0]))
    return found


def _tfrc_rtt_ms(trace_dir: Path) -> float | None:
    """The median of the TFRC sender's R (ms) over the second half of its trace, if any."""
    with contextlib.suppress(OSError, KeyError, ValueError, ImportError):
        import pandas as pd

        rtt = pd.read_parquet(trace_dir / "flow_bins.parquet")["rtt_s"].to_numpy()
        late = rtt[len(rtt) // 2 :]
        return float(np.median(late) * 1e3) if len(late) else None
    return None


def summarize_mixed(
    series: PacketLog | Mapping[str, np.ndarray],
    seconds: float,
    bin_s: float = BIN_S,
    link_bps: float = LINK_BPS,
) -> dict[str, Any]:
    """The Figs. 15-17 measures of one TFRC and several TCP flows' delivered bits per bin.

    ``series`` is a relay log (read with :func:`flow_series`) or bits per bin by flow name,
    the TFRC flow's name starting with ``udp`` (the simulator's, renamed). Over ``[WARMUP_S,
    seconds)``: each flow's throughput and share of ``link_bps``; TFRC's throughput over the
    TCPs' mean (normalized throughput, Fig. 15); per timescale, TFRC's mean equivalence ratio
    with each TCP (Fig. 16) and the CoVs of TFRC and of the TCPs' mean (Fig. 17).
    """
    named = flow_series(series, DEPART, bin_s)[1] if isinstance(series, PacketLog) else series
    bits = {k: _window(v, WARMUP_S, seconds, bin_s) for k, v in named.items()}
    tfrc = [k for k in bits if k.startswith("udp")]
    tcps = sorted(k for k in bits if k.startswith("tcp"))
    if len(tfrc) != 1 or not tcps:
        raise ValueError(f"expected one TFRC (udp) flow and TCP flows, found {sorted(bits)}")
    span = min(len(v) for v in bits.values()) * bin_s
    bits = {k: v[: round(span / bin_s)] for k, v in bits.items()}
    x = bits[tfrc[0]]
    rates = {k: float(v.sum() / span) for k, v in bits.items()}
    tcp_mean = float(np.mean([rates[k] for k in tcps]))
    equivalence: dict[str, float] = {}
    cov_tfrc: dict[str, float] = {}
    cov_tcp: dict[str, float] = {}
    for ts in TIMESCALES_S:
        if span / ts < 4:
            continue
        rx = metrics.send_rate(x, bin_s, ts)
        ry = [metrics.send_rate(bits[k], bin_s, ts) for k in tcps]
        equivalence[f"{ts:g}"] = float(np.mean([metrics.equivalence_ratio(rx, r) for r in ry]))
        cov_tfrc[f"{ts:g}"] = float(metrics.cov(rx))
        cov_tcp[f"{ts:g}"] = float(np.mean([metrics.cov(r) for r in ry]))
    return {
        "seconds": seconds,
        "window_s": [WARMUP_S, WARMUP_S + span],
        "throughput_bps": rates,
        "share_of_link": {k: v / link_bps for k, v in rates.items()},
        "total_share": sum(rates.values()) / link_bps,
        "tfrc_over_tcp_mean": rates[tfrc[0]] / tcp_mean if tcp_mean > 0 else float("nan"),
        "equivalence": equivalence,
        "cov_tfrc": cov_tfrc,
        "cov_tcp_mean": cov_tcp,
    }


@dataclass(frozen=True)
class MixedCell:
    """One cell of the mixed experiment: the TCP congestion control and the queue."""

    cc: str
    queue: str

    @property
    def label(self) -> str:
        """``reno-droptail`` and so on."""
        return f"{self.cc}-{self.queue}"


#: The netsim TCP standing in for Linux's reno: SACK (Linux runs SACK recovery under every
#: congestion control); netsim has no CUBIC, so cubic cells have no simulator counterpart.
_NETSIM_TCP = {"reno": "sack"}


def _netsim_scenario(queue: str | Mapping[str, Any], seconds: float, **changes: Any) -> Any:
    """``floyd2000/testbed-mixed.toml`` with the relay's queue table and ``changes``."""
    from tfrclab.reproduce.registry import scenario_path
    from tfrclab.scenario import Scenario
    from tfrclab.testbed.config import queue_table

    scenario = Scenario.load(scenario_path("floyd2000/testbed-mixed.toml"))
    table = {"duration": f"{seconds + 1:g}s", "topology.bottleneck.queue": queue_table(queue)}
    return scenario.with_(**table, **changes)


def mixed_netsim(cell: MixedCell, seconds: float = 60.0, seed: int = 1) -> dict[str, Any] | None:
    """The mixed scenario in netsim (``floyd2000/testbed-mixed.toml``), measured as the testbed.

    The same link and queue table as the relay's; delivered bytes per bin instead of the
    relay's departures. None for a congestion control netsim does not have (cubic).
    """
    from tfrclab import simulate

    variant = _NETSIM_TCP.get(cell.cc)
    if variant is None:
        return None
    scenario = _netsim_scenario(QUEUES[cell.queue], seconds, **{"flows[0].variant": variant})
    result = simulate.run(scenario, seed)
    kinds = list(result.flows["kind"])
    received = result.flow_bins["received_bytes"].astype(np.float64) * 8
    series = {(f"udp:{i}" if k == "tfrc" else f"tcp:{i}"): received[i] for i, k in enumerate(kinds)}
    return summarize_mixed(series, seconds, result.info.bin_s)


def oscillation_netsim(
    buffer: int, spacing: bool, seconds: float = 60.0, seed: int = 1
) -> dict[str, Any]:
    """Figs. 3-4's run in netsim: the TFRC flow of ``testbed-mixed.toml`` alone.

    Returns the send rate's mean and CoV per timescale over ``[WARMUP_S, seconds)``, as
    :func:`oscillation_run` measures the testbed's.
    """
    from tfrclab import simulate

    tfrc: dict[str, Any] = {"kind": "tfrc", "preset": "floyd2000", "size": "1028B"}
    tfrc["oscillation_prevention"] = spacing
    scenario = _netsim_scenario(f"droptail:{buffer}", seconds, flows=[tfrc])
    result = simulate.run(scenario, seed)
    bin_s = result.info.bin_s
    sent = result.flow_bins["sent_bytes"][0].astype(np.float64) * 8
    bits = _window(sent, WARMUP_S, seconds, bin_s)
    span = len(bits) * bin_s
    return {
        "mean_send_rate_bps": float(bits.sum() / span) if span else float("nan"),
        "cov": _covs(bits, span, bin_s),
        "rate_1s_bps": metrics.send_rate(bits, bin_s, 1.0).tolist(),
    }
