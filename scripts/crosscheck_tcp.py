"""TCP's loss recovery in both simulators, seed by seed (docs/crosscheck.md, known differences).

Usage: ``python scripts/crosscheck_tcp.py reno-bernoulli --seeds 1-200 [--from 10 --to 60]``
(a scenario under scenarios/crosscheck/, or a path; needs ns-2's ``ns`` on PATH).

For every seed it runs the scenario in netsim and the exported script in ns-2.35, and counts
over the window, summed over the TCP flows: retransmit timeouts, fast retransmits,
retransmitted and sent data packets, and the window sampled every 100 ms, next to the
cross-check's own metrics (``cov_1s``, ``drop_rate``). netsim's counts come from the flows'
state trace (``Result.trace``: ``timeouts``, ``fast_retransmits``, ``retransmits``,
``packets_sent``, ``cwnd``); ns-2's from the agents' counters, read by a probe added to the
exported script: ``nrexmit_`` (timeouts with data outstanding, tcp.cc ``timeout()``),
``ncwndcuts_`` (every ``slowdown()``: a fast retransmit or a timeout, so fast retransmits are
``ncwndcuts_ - nrexmit_``), ``nrexmitpack_``, ``ndatapack_`` and ``cwnd_``. It prints one row
per seed, then each count's mean over seeds in both with Welch's p-value, and per dropped
packet.
"""

from __future__ import annotations

import argparse
import math
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from tfrclab.ns2.cli import parse_seeds
from tfrclab.ns2.crosscheck import run_ns2, seed_metrics, t_quantile
from tfrclab.ns2.export import export_tcl
from tfrclab.ns2.output import from_result, read_output
from tfrclab.ns2.plan import resolve
from tfrclab.scenario import Scenario
from tfrclab.simulate import run

ROOT = Path(__file__).resolve().parents[1] / "scenarios" / "crosscheck"
PROBE_S = 0.1
"""ns-2's counters are read every PROBE_S; netsim's at the end of each bin."""
COUNTS = ("timeouts", "fast_retransmits", "retransmits", "sent")

_PROBE = """
proc tfrclab_tcp_probe {} {
    global ns src tcp_flows
    set t [$ns now]
    foreach k $tcp_flows {
        set s $src($k)
        puts "P $t $k [$s set nrexmit_] [$s set ncwndcuts_] [$s set nrexmitpack_] \\
[$s set ndatapack_] [$s set cwnd_]"
    }
}
for {set k 1} {$k <= %(probes)d} {incr k} {
    $ns at [expr {$k * %(step)s}] tfrclab_tcp_probe
}
"""


def _netsim(scenario: Scenario, seed: int, tcp: list[int], start: float, end: float):
    result = run(scenario, seed=seed)
    counts = dict.fromkeys(COUNTS, 0.0)
    cwnd: list[float] = []
    columns = {"timeouts": "timeouts", "fast_retransmits": "fast_retransmits",
               "retransmits": "retransmits", "sent": "packets_sent"}  # fmt: skip
    for k in tcp:
        trace = result.trace(k)
        t = trace.index.to_numpy()  # the end of each bin
        i0, i1 = (int(np.argmin(np.abs(t - x))) for x in (start, end))
        for name, column in columns.items():
            values = trace[column].to_numpy()
            counts[name] += float(values[i1] - (values[i0] if start > 0 else 0))
        cwnd += trace["cwnd"].to_numpy()[i0 + 1 : i1 + 1].tolist()
    return result, counts, cwnd


def _ns2(script: str, tcp: list[int], start: float, end: float):
    probe = _PROBE % {"step": PROBE_S, "probes": round(end / PROBE_S)}
    script = script.replace("\n$ns run\n", f"\nset tcp_flows {{{' '.join(map(str, tcp))}}}\n"
                            f"{probe}\n$ns run\n")  # fmt: skip
    output = run_ns2(script)
    rows = np.array(
        [[float(v) for v in line.split()[1:]] for line in output.splitlines()
         if line.startswith("P ")]
    )  # fmt: skip
    counts = dict.fromkeys(COUNTS, 0.0)
    cwnd: list[float] = []
    for k in tcp:
        mine = rows[rows[:, 1] == k]
        t = mine[:, 0]
        i0, i1 = (int(np.argmin(np.abs(t - x))) for x in (start, end))
        d = mine[i1] - (mine[i0] if start > 0 else 0 * mine[i0])
        counts["timeouts"] += d[2]
        counts["fast_retransmits"] += d[3] - d[2]
        counts["retransmits"] += d[4]
        counts["sent"] += d[5]
        cwnd += mine[i0 + 1 : i1 + 1, 6].tolist()
    return output, counts, cwnd


def one_seed(scenario: Scenario, seed: int, start: float, end: float) -> dict[str, dict]:
    """Both simulators' counts, window samples and cross-check metrics for one seed."""
    plan = resolve(scenario, seed)
    tcp = [f.index for f in plan.flows if f.kind == "tcp"]
    result, mine, my_cwnd = _netsim(scenario, seed, tcp, start, end)
    output, theirs, their_cwnd = _ns2(export_tcl(plan, 1.0), tcp, start, end)
    mine.update(seed_metrics(plan, from_result(result, plan, 1.0), start, end))
    theirs.update(seed_metrics(plan, read_output(output, plan), start, end))
    return {"tfrclab": {**mine, "cwnd": my_cwnd}, "ns2": {**theirs, "cwnd": their_cwnd}}


def _welch_p(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided p-value of Welch's t (normal tail past 30 degrees of freedom)."""
    va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
    if va + vb == 0:
        return 1.0
    t = abs(a.mean() - b.mean()) / math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / (a.size - 1) + vb**2 / (b.size - 1))
    lo, hi = 0.5, 1.0 - 1e-12
    for _ in range(60):  # invert the quantile function: P(T <= t)
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if t_quantile(mid, df) < t else (lo, mid)
    return 2 * (1 - lo)


def main() -> None:
    """Run every seed and print the per-seed rows and the summary."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("scenario")
    parser.add_argument("--seeds", type=parse_seeds, default=parse_seeds("1-40"))
    parser.add_argument("--from", dest="start", type=float, default=10.0)
    parser.add_argument("--to", dest="end", type=float, default=60.0)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    path = Path(args.scenario)
    scenario = Scenario.load(path if path.suffix == ".toml" else ROOT / f"{path}.toml")
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        runs = list(pool.map(lambda s: one_seed(scenario, s, args.start, args.end), args.seeds))
    cov = next(k for k in runs[0]["tfrclab"] if k.startswith("cov_1s/"))
    head = f"{cov:>16} {'TO':>4} {'FR':>4} {'rexmit':>6} {'sent':>6} {'cwnd':>5}"
    print(f"seed | tfrclab {head} | ns-2 {head}")
    for seed, r in zip(args.seeds, runs, strict=True):
        cells = [
            f"{x[cov]:16.3f} {x['timeouts']:4.0f} {x['fast_retransmits']:4.0f} "
            f"{x['retransmits']:6.0f} {x['sent']:6.0f} {np.mean(x['cwnd']):5.1f}"
            for x in (r["tfrclab"], r["ns2"])
        ]
        print(f"{seed:4d} |         {cells[0]} |      {cells[1]}")
    n = len(runs)
    print(f"\nmean over {n} seeds ± standard error; p: Welch's two-sided test")
    print(f"{'':24} {'tfrclab':>18} {'ns-2':>18} {'p':>6}")
    for key in (cov, "drop_rate", *COUNTS):
        a = np.array([r["tfrclab"][key] for r in runs])
        b = np.array([r["ns2"][key] for r in runs])
        se = [x.std(ddof=1) / math.sqrt(n) if n > 1 else 0.0 for x in (a, b)]
        p = _welch_p(a, b) if n > 1 else math.nan
        print(f"{key:24} {a.mean():10.4g} ±{se[0]:<7.2g} {b.mean():10.4g} ±{se[1]:<7.2g} {p:6.3f}")
    print("\nper dropped packet (drops = drop_rate x sent)")
    for side in ("tfrclab", "ns2"):
        drops = sum(r[side]["drop_rate"] * r[side]["sent"] for r in runs)
        per = {k: sum(r[side][k] for r in runs) / drops for k in COUNTS[:3]}
        cwnd = np.concatenate([r[side]["cwnd"] for r in runs])
        pct = np.percentile(cwnd, [10, 50, 90])
        print(
            f"{side:8} " + " ".join(f"{k} {v:.4f}" for k, v in per.items())
            + f" | cwnd mean {cwnd.mean():.2f} sd {cwnd.std():.2f} p10/50/90 "
            + "/".join(f"{v:.1f}" for v in pct)
        )  # fmt: skip


if __name__ == "__main__":
    main()
