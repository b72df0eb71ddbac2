"""When the sender's kernel takes in each ACK, against when the relay delivered it.

Kernel BBR's bandwidth estimate runs about 1.2% above the bottleneck's rate on the testbed
while netsim's is exact (docs/twin.md). Its rate samples divide the data delivered by the time
between two ACKs as the sender's TCP saw them: ``tp->tcp_mstamp``, refreshed in
``tcp_rcv_established`` (tcp_input.c) just after the ``tcp:tcp_probe`` tracepoint fires. This
script records that tracepoint on ``CLOCK_MONOTONIC`` (the relay's clock) while ``tfrclab twin``
runs a cell, pairs each ACK the relay delivered towards the sender with the moment the
sender's TCP processed it, and says:

- how long each ACK took from the relay's write to the sender's TCP (percentiles), and in
  which context it was processed (the share outside a softirq, by the trace line's flags, and
  how many processes it was processed in);
- the 10-round max filter of delivery rates over windows of ACKs spanning about one RTT, with
  the same ACKs timed at the relay and at the sender's TCP, beside the kernel's own estimate
  (``TCP_CC_INFO``) and the line rate.

    scripts/ack_timing.py run CELL.toml --seeds 1-2 --out DIR   # root: the testbed
    scripts/ack_timing.py analyze DIR
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

TRACING = Path("/sys/kernel/tracing")
PROBE = TRACING / "events/tcp/tcp_probe"

#: One tcp_probe line: task-pid, cpu, the irq-info flags, the time (s), then its fields.
_LINE = re.compile(
    r"^\s*(?P<task>.+?)-(?P<pid>\d+)\s+\[\d+\]\s+(?P<flags>\S+)\s+(?P<t>\d+\.\d+): tcp_probe: "
    r".*?src=[\d.]+:(?P<sport>\d+) dest=[\d.]+:(?P<dport>\d+) .*?data_len=(?P<len>\d+) "
    r"snd_nxt=0x(?P<nxt>[0-9a-f]+) snd_una=0x(?P<una>[0-9a-f]+)"
)


@dataclass(frozen=True)
class Probe:
    """The tcp_probe events of one direction of one connection, in time order."""

    t_ns: np.ndarray
    """CLOCK_MONOTONIC, ns (the trace prints microseconds)."""
    snd_una: np.ndarray
    """The socket's snd_una before the segment was processed, unwrapped (bytes)."""
    softirq: np.ndarray
    """True where the segment was processed in a softirq, False in process context."""
    pid: np.ndarray


def parse_probe(lines: Sequence[str], port: int, data: bool = False) -> Probe:
    """The tcp_probe events of the connection to the receiver's ``port``.

    The tracepoint names the socket's own address as ``src``: the sender's events (pure ACKs
    arriving) have ``dest`` at ``port``, the receiver's (data arriving; with ``data``) have
    ``src`` there.
    """
    t, una, soft, pid = [], [], [], []
    for line in lines:
        m = _LINE.match(line)
        if m is None or (int(m["len"]) > 0) != data:
            continue
        if int(m["sport" if data else "dport"]) != port:
            continue
        t.append(round(float(m["t"]) * 1e9))
        una.append(int(m["una"], 16))
        # irq-info flags: irqs-off, need-resched, hardirq/softirq, preempt depth, ...
        flags = m["flags"]
        soft.append(len(flags) > 2 and flags[2] in "sH")
        pid.append(int(m["pid"]))
    raw = np.array(una, dtype=np.int64)
    step = np.diff(raw, prepend=raw[:1]) if len(raw) else raw
    step = np.where(step < -(1 << 31), step + (1 << 32), step)
    return Probe(
        t_ns=np.array(t, dtype=np.int64),
        snd_una=(raw[:1] + np.cumsum(step)) if len(raw) else raw,
        softirq=np.array(soft, dtype=bool),
        pid=np.array(pid, dtype=np.int64),
    )


def pair_in_order(sent_ns: np.ndarray, seen_ns: np.ndarray, max_shift: int = 8) -> int:
    """The shift k pairing ``seen_ns[i]`` with ``sent_ns[i + k]`` whose delays spread least.

    Both are one stream of packets in the order sent (no reordering between the relay and the
    host); the relay also logs packets the tracepoint does not see (the handshake's), so the
    streams can start a few packets apart. Only shifts leaving every delay non-negative count.
    """
    best, best_spread = 0, float("inf")
    for k in range(-max_shift, max_shift + 1):
        n = min(len(seen_ns), len(sent_ns) - k) if k >= 0 else min(len(seen_ns) + k, len(sent_ns))
        if n < 10:
            continue
        a = seen_ns[:n] if k >= 0 else seen_ns[-k : -k + n]
        b = sent_ns[k : k + n] if k >= 0 else sent_ns[:n]
        delay = a - b
        if delay.min() < 0:
            continue
        spread = float(np.percentile(delay, 90) - np.percentile(delay, 10))
        if spread < best_spread:
            best, best_spread = k, spread
    if best_spread == float("inf"):
        raise ValueError("no shift pairs the two streams with non-negative delays")
    return best


def windowed_rates(
    t_ns: np.ndarray, delivered: np.ndarray, span_ns: int, max_step: float = float("inf")
) -> np.ndarray:
    """Delivery rates over windows of ACKs spanning at least ``span_ns``, bytes/s.

    Per ACK i: the bytes delivered since the latest ACK at least ``span_ns`` earlier, over the
    time between the two (NaN where no ACK is that early). ``delivered`` counts cumulatively
    acked bytes, so a window holding an ACK that delivered nothing (a duplicate ACK) or more
    than ``max_step`` (the end of a recovery, where SACKed data is counted at once) is NaN:
    the kernel counts SACKed data when it is SACKed, which snd_una cannot show.
    """
    j = np.searchsorted(t_ns, t_ns - span_ns, side="right") - 1
    step = np.diff(delivered, prepend=delivered[:1])
    bad = np.cumsum((step <= 0) | (step > max_step))
    ok = j >= 0
    jj = np.where(ok, j, 0)
    ok &= bad - bad[jj] == 0
    out = np.full(len(t_ns), np.nan)
    out[ok] = (delivered[ok] - delivered[jj[ok]]) / ((t_ns[ok] - t_ns[jj[ok]]) / 1e9)
    return out


def max_filter(t_ns: np.ndarray, rates: np.ndarray, window_ns: int) -> np.ndarray:
    """Per sample, the highest rate in the ``window_ns`` before it (BBR's 10-round filter)."""
    out = np.empty(len(rates))
    lo = 0
    for i in range(len(rates)):
        while t_ns[i] - t_ns[lo] > window_ns:
            lo += 1
        out[i] = np.nanmax(rates[lo : i + 1]) if np.isfinite(rates[lo : i + 1]).any() else np.nan
    return out


def analyze_seed(directory: Path, port: int, line_bytes_per_s: float, rtt_s: float) -> dict:
    """The pairing, delays, contexts and filtered rates of one seed's run."""
    from tfrclab.testbed.log import DEPART, REVERSE, read_log

    log = read_log(directory / "relay.log")
    r = log.records
    acks = r[(r["dir"] == REVERSE) & (r["event"] == DEPART) & (r["proto"] == 6)]
    acks = acks[acks["sport"] == port]
    sent = log.start_monotonic_ns + acks["t_ns"].astype(np.int64)
    lines = (directory / "tcp_probe.txt").read_text(errors="replace").splitlines()
    probe = parse_probe(lines, port)
    k = pair_in_order(sent, probe.t_ns)
    n = min(len(probe.t_ns), len(sent) - k) if k >= 0 else min(len(probe.t_ns) + k, len(sent))
    seen = probe.t_ns[:n] if k >= 0 else probe.t_ns[-k : -k + n]
    relay = sent[k : k + n] if k >= 0 else sent[:n]
    offset = 0 if k >= 0 else -k
    soft = probe.softirq[offset : offset + n]
    una = probe.snd_una[offset : offset + n]
    # The ACK processed at i has moved snd_una to what the next event found.
    delivered = np.append(una[1:], una[-1]).astype(float)
    t0 = log.start_monotonic_ns + int(r["t_ns"][0])
    inside = (relay - t0 >= 5e9) & (relay - t0 < 30e9)
    delay_us = (seen - relay)[inside] / 1e3
    span, window = int(rtt_s * 1e9), int(10 * rtt_s * 1e9)
    filtered = {}
    for name, times in (("relay", relay), ("sender TCP", seen)):
        rates = windowed_rates(times, delivered, span, max_step=4 * 1448)
        peak = max_filter(times, rates, window)
        filtered[name] = float(np.nanmedian(peak[inside]) / line_bytes_per_s)
    kernel = []
    for path in directory.glob("tcp_info-*.jsonl"):
        for row in map(json.loads, path.read_text().splitlines()):
            if 5.0 <= row.get("t", 0.0) < 30.0 and row.get("bbr_bw", 0.0) > 0:
                kernel.append(row["bbr_bw"])
    return {
        "acks_relay": len(sent),
        "acks_traced": len(probe.t_ns),
        "shift": k,
        "delay_us": {q: float(np.percentile(delay_us, q)) for q in (1, 10, 50, 90, 99, 99.9)}
        | {"max": float(delay_us.max())},
        "outside_softirq": float(1.0 - soft[inside].mean()),
        "processing_pids": len(set(probe.pid[offset : offset + n][inside].tolist())),
        "late_over_100us": float((delay_us > 100).mean()),
        "max_filtered_over_line": filtered,
        "kernel_bbr_bw_over_line": (
            float(statistics.median(kernel) / line_bytes_per_s) if kernel else float("nan")
        ),
    }


def run(scenario: Path, seeds: str, out: Path) -> None:
    """``tfrclab twin`` with tcp_probe traced on CLOCK_MONOTONIC into each seed's directory."""
    out.mkdir(parents=True, exist_ok=True)
    for seed in seeds.split(","):
        clock = (TRACING / "trace_clock").read_text()
        (TRACING / "trace_clock").write_text("mono")
        (TRACING / "trace").write_text("")
        (PROBE / "enable").write_text("1")
        sink = open(out / f"tcp_probe-seed-{seed}.txt", "w")  # noqa: SIM115
        reader = subprocess.Popen(["cat", str(TRACING / "trace_pipe")], stdout=sink)
        try:
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "tfrclab",
                    "twin",
                    str(scenario),
                    "--seeds",
                    seed,
                    "--out",
                    str(out),
                ],
                check=False,
            )
        finally:
            (PROBE / "enable").write_text("0")
            reader.terminate()
            reader.wait()
            sink.close()
            current = clock.split("[")[1].split("]")[0] if "[" in clock else "local"
            (TRACING / "trace_clock").write_text(current)
        (out / f"tcp_probe-seed-{seed}.txt").rename(out / f"seed-{seed}" / "tcp_probe.txt")


def main(argv: list[str] | None = None) -> int:
    """``run`` a cell with the tracepoint recorded, or ``analyze`` a run's directory."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run a twin cell with tcp_probe traced (root)")
    r.add_argument("scenario", type=Path)
    r.add_argument("--seeds", default="1", help="comma-separated, e.g. 1,2")
    r.add_argument("--out", type=Path, required=True)
    a = sub.add_parser("analyze", help="pair and summarize a run's directory")
    a.add_argument("out", type=Path)
    a.add_argument("--port", type=int, default=None, help="the TCP flow's port (the first)")
    a.add_argument("--rate", type=float, default=20e6, help="line rate, bit/s")
    a.add_argument("--rtt", type=float, default=0.0404, help="the window span, s")
    args = parser.parse_args(argv)
    if args.command == "run":
        run(args.scenario, args.seeds, args.out)
        return 0
    line = args.rate / 8 / 1500 * 1448
    for seed_dir in sorted(args.out.glob("seed-*")):
        port = args.port or _first_tcp_port(seed_dir)
        summary = analyze_seed(seed_dir, port, line, args.rtt)
        print(seed_dir.name, json.dumps(summary, indent=1))
    return 0


def _first_tcp_port(directory: Path) -> int:
    """The lowest destination port of a TCP flow in the relay's log (forward direction)."""
    from tfrclab.testbed.log import FORWARD, read_log

    r = read_log(directory / "relay.log").records
    tcp = r[(r["dir"] == FORWARD) & (r["proto"] == 6)]
    return int(np.bincount(tcp["dport"]).argmax())


if __name__ == "__main__":
    raise SystemExit(main())
