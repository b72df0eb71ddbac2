"""Example: sweep the dumbbell's bottleneck rate; fairness and CoV against it, with a figure."""

# %% [markdown]
# # A sweep with a figure: fairness and smoothness against the bottleneck rate
#
# A notebook-style script (cells marked `# %%`; it runs as a plain script too):
#
#     .venv/bin/python docs/examples/sweep_fairness.py --out out/example
#
# It takes the example dumbbell (`scenarios/examples/dumbbell.toml`), sweeps the bottleneck
# rate over several seeds with `tfrclab.sweep`, and computes from the results the papers'
# metrics: Jain's fairness index among the flows (Yang 2001 eq. 3), the CoV of the aggregate
# delivered rate at several timescales (Floyd 2000 §4.1.1, applied to what arrives) and the
# bottleneck's drop rate (Floyd 2000 Table 25). `--quick` runs a small version (the test suite
# runs it).

# %%
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

import tfrclab
from tfrclab import metrics
from tfrclab.sweep import Grid, load, param_column, run_sweep, summarize

REPO = Path(__file__).resolve().parents[2]

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--out", type=Path, default=REPO / "out" / "example")
parser.add_argument("--quick", action="store_true", help="a short, small sweep")
args = parser.parse_args()

# %% [markdown]
# ## The scenario and the grid
# `with_` changes values by dotted path; here a shorter run for the example.

# %%
base = tfrclab.Scenario.load(REPO / "scenarios" / "examples" / "dumbbell.toml")
base = base.with_(
    duration="8s" if args.quick else "30s",
    **{"flows.0.start": "0s", "measure.from": "2s"},  # the example measures from 20 s
)
rates = ["10Mbps", "15Mbps", "20Mbps"] if not args.quick else ["10Mbps", "20Mbps"]
seeds = (1, 2, 3) if not args.quick else (1, 2)
grid = Grid(scenario=base, vary=(("topology.bottleneck.rate", tuple(rates)),), seeds=seeds)
print(f"{len(grid.tasks())} runs")

# %% [markdown]
# ## Run the sweep (resumable: rerunning skips finished runs)

# %%
runs = run_sweep(grid, args.out / "sweep", jobs=1)
# Rows cover the measurement window (here from 2 s); the rate column is typed (bits/s).
print(runs.groupby("topology.bottleneck.rate")["throughput_bits_per_s"].describe())
# Per protocol, mean and 95% confidence interval over seeds:
classes = load(args.out / "sweep", "classes")
print(
    summarize(classes, ["topology.bottleneck.rate"])[
        [
            "topology.bottleneck.rate",
            "class",
            "normalized_throughput",
            "normalized_throughput_ci",
            "friendliness_ratio",
        ]
    ]
)

# %% [markdown]
# ## Metrics per run
# Jain's index over the flows' throughputs in the window; for the CoV we need the per-bin
# series, so each run is redone through the API (runs are deterministic: the same numbers as
# in the sweep; `--series` would have kept them in the sweep instead).

# %%
rows = []
for rate in rates:
    for seed in seeds:
        result = tfrclab.run(base.with_(**{"topology.bottleneck.rate": rate}), seed=seed)
        window = result.summary()  # the scenario's measurement window
        throughput = window.flows["throughput_bits_per_s"].to_numpy()
        aggregate = result.flow_bins["received_bytes"].sum(axis=0) * 8.0  # bits per bin
        start = window.window.from_s
        row = {
            "rate": rate,
            "seed": seed,
            "jain": metrics.fairness_index(throughput),
            "drop_rate": float(result.links.set_index("name").loc["bottleneck", "drop_rate"]),
        }
        for timescale in (0.1, 0.5, 1.0):
            row[f"cov_{timescale:g}s"] = metrics.cov_at_timescale(
                aggregate, result.info.bin_s, timescale, start_s=start
            )
        rows.append(row)
table = pd.DataFrame(rows)
summary = table.groupby("rate", sort=False).mean(numeric_only=True)
print(summary.drop(columns="seed"))

# The sweep and the API agree on the throughput, run for run.
check = runs.groupby(["topology.bottleneck.rate", "seed"])["throughput_bits_per_s"].apply(
    lambda x: metrics.fairness_index(x.to_numpy())
)
np.testing.assert_allclose(
    [check[(typed, s)] for typed in param_column(rates) for s in seeds],
    table["jain"].to_numpy(),
    rtol=1e-12,
)

# %% [markdown]
# ## The figure

# %%
figure = Figure(figsize=(9, 4), layout="constrained")
left, right = figure.subplots(1, 2)
x = np.arange(len(rates))
left.bar(x, summary["jain"], color="C0")
left.set_xticks(x, rates)
left.set_ylim(0, 1.05)
left.set_xlabel("bottleneck rate")
left.set_ylabel("Jain's fairness index (mean over seeds)")
for timescale in (0.1, 0.5, 1.0):
    right.plot(x, summary[f"cov_{timescale:g}s"], marker="o", label=f"{timescale:g} s")
right.set_xticks(x, rates)
right.set_xlabel("bottleneck rate")
right.set_ylabel("CoV of the aggregate delivered rate")
right.legend(title="timescale")
for axes in (left, right):
    axes.grid(visible=True, alpha=0.3)
path = args.out / "fairness_and_cov.png"
path.parent.mkdir(parents=True, exist_ok=True)
figure.savefig(path, dpi=110)
print(f"figure: {path}")
