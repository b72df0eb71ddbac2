"""How much of the time BBR flows pace in the long-term ("policer") bandwidth mode, inferred.

Linux's BBR v1 (`bbr_lt_bw_sampling` in tcp_bbr.c) switches to a fixed bandwidth estimate and a
pacing gain of 1 for 48 rounds when it sees two consistent lossy intervals. Neither the kernel's
TCP_CC_INFO nor netsim's state trace says so directly; its sign is the bandwidth estimate
exactly unchanged, with every sampled pacing gain 1, for longer than the 10-round max filter can
hold one sample (`--min-span`, 1 s by default at the twin's 40-60 ms RTTs), which normal
PROBE_BW cannot show. docs/twin.md gives the measurement this made (the kernel's and netsim's
4 BBR against 4 TFRC flows).

    scripts/bbr_lt_mode.py kernel DIR    # tcp_info-*.jsonl[.gz] of `tfrclab twin` (0.1 s)
    scripts/bbr_lt_mode.py netsim DIR    # flow_states.parquet of `tfrclab run --out`
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import math
from collections.abc import Sequence
from pathlib import Path


def frozen_fraction(
    times: Sequence[float],
    bandwidth: Sequence[float],
    gain: Sequence[float],
    rto: Sequence[float],
    min_span_s: float = 1.0,
    from_s: float = 5.0,
) -> float:
    """The share of the samples' time (from ``from_s``) spent in the long-term mode's sign.

    That is runs of at least ``min_span_s`` seconds in which the (positive) bandwidth estimate
    stays exactly the same and the pacing gain is 1 while the flow is not stalled: a stall in
    retransmission timeouts freezes the estimate too, so a sample whose retransmission timeout
    is backed off ends a run. Backed off is above twice the flow's least timeout over all its
    samples (a timeout doubles at each backoff; Linux's, SRTT + max(4 RTTVAR, 200 ms), moves
    far less with the RTT on these paths), so that a flow stalled through the whole window, as
    one starved by its company can be, is not read as frozen.
    """
    rows_all = list(zip(times, bandwidth, gain, rto, strict=True))
    kept = [row for row in rows_all if row[0] >= from_s]
    if len(kept) < 2:
        return math.nan
    least = min((r for _, _, _, r in rows_all if r > 0), default=math.inf)
    rows = [(t, b if r <= 2 * least else -1.0, g) for t, b, g, r in kept]
    if len(rows) < 2:
        return math.nan
    steps = sorted(b[0] - a[0] for a, b in itertools.pairwise(rows))
    step = steps[len(steps) // 2]
    covered = 0.0
    i = 0
    while i < len(rows):
        t0, bw0, gain0 = rows[i]
        if gain0 != 1.0 or bw0 <= 0:
            i += 1
            continue
        j = i
        while j + 1 < len(rows) and rows[j + 1][1] == bw0 and rows[j + 1][2] == 1.0:
            j += 1
        span = rows[j][0] - t0 + step
        if span >= min_span_s:
            covered += span
        i = j + 1
    return covered / (rows[-1][0] - rows[0][0] + step)


def kernel_flows(directory: Path, min_span_s: float) -> list[tuple[str, float]]:
    """Each kernel BBR flow's fraction, from the twin's TCP_CC_INFO samples."""
    out = []
    files = sorted(directory.rglob("tcp_info-*.jsonl")) + sorted(
        directory.rglob("tcp_info-*.jsonl.gz")
    )
    for path in files:
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt", encoding="utf-8") as f:
            rows = [json.loads(line) for line in f if line.strip()]
        rows = [r for r in rows if "bbr_bw" in r]
        if rows:
            fraction = frozen_fraction(
                [r["t"] for r in rows],
                [r["bbr_bw"] for r in rows],
                [r["bbr_pacing_gain"] for r in rows],
                [r["rto_us"] for r in rows],
                min_span_s,
            )
            out.append((str(path), fraction))
    return out


def netsim_flows(directory: Path, min_span_s: float, bin_s: float) -> list[tuple[str, float]]:
    """Each netsim BBR flow's fraction, from its state trace (one sample per ``bin_s``)."""
    import pyarrow.parquet as pq

    out = []
    for path in sorted(directory.rglob("flow_states.parquet")):
        table = pq.read_table(path).to_pandas()
        for flow in sorted(table["flow"].unique()):
            states = table[table["flow"] == flow].pivot(
                index="bin", columns="field", values="value"
            )
            if "bbr_bw" not in states:
                continue
            times = [float(b) * bin_s for b in states.index]
            fraction = frozen_fraction(
                times,
                list(states["bbr_bw"]),
                list(states["pacing_gain"]),
                list(states["rto"]),
                min_span_s,
            )
            out.append((f"{path} flow {flow}", fraction))
    return out


def main() -> None:
    """The command line (module documentation)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("side", choices=("kernel", "netsim"))
    parser.add_argument("directory", type=Path)
    parser.add_argument("--min-span", type=float, default=1.0, help="seconds (default 1)")
    parser.add_argument("--bin", type=float, default=0.1, help="netsim's monitor bin, seconds")
    args = parser.parse_args()
    if args.side == "kernel":
        rows = kernel_flows(args.directory, args.min_span)
    else:
        rows = netsim_flows(args.directory, args.min_span, args.bin)
    for name, fraction in rows:
        print(f"{fraction:.3f}  {name}")
    values = [v for _, v in rows if not math.isnan(v)]
    if values:
        mean = sum(values) / len(values)
        print(f"mean {mean:.3f} over {len(values)} flows (runs of {args.min_span:g} s or more)")


if __name__ == "__main__":
    main()
