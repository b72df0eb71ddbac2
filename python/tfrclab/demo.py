"""The Fig. 2 scenario of Floyd, Handley, Padhye and Widmer, SIGCOMM 2000.

One TFRC flow over a channel with R = 100 ms and periodic loss: 1% until 6 s, 10% until 9 s,
then 0.5%. The figure has the paper's three panels: the most recent and the average loss
interval, the loss event rate p and sqrt(p), and the sender's allowed rate X.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from tfrclab.channel import ChannelRun, LossStep, Preset, run_channel

FIG2_SCHEDULE: tuple[LossStep, ...] = (
    LossStep.periodic(0.0, 0.01),
    LossStep.periodic(6.0, 0.10),
    LossStep.periodic(9.0, 0.005),
)
"""Floyd 2000 Fig. 2: periodic loss at 1% until 6 s, 10% until 9 s, then 0.5%."""

FIG2_ONE_WAY_DELAY_S = 0.05
"""Half of Fig. 2's round-trip time R = 100 ms, in each direction."""


@dataclass(frozen=True)
class DemoResult:
    """What :func:`run_demo` produced: the run, its table, and the figure's path."""

    run: ChannelRun
    table: str
    figure: Path


def run_fig2(preset: Preset | str = "floyd2000", duration_s: float = 15.0) -> ChannelRun:
    """Run the Fig. 2 scenario for ``duration_s`` seconds with the given TFRC preset."""
    return run_channel(
        preset=preset,
        forward_delay_s=FIG2_ONE_WAY_DELAY_S,
        reverse_delay_s=FIG2_ONE_WAY_DELAY_S,
        schedule=FIG2_SCHEDULE,
        duration_s=duration_s,
    )


def format_table(run: ChannelRun, step_s: float = 0.5, duration_s: float | None = None) -> str:
    """A fixed-width table of the sender's state every ``step_s`` seconds.

    Each row shows the latest feedback at or before its time: the loss event rate p, the most
    recent and the average loss interval, the sender's allowed rate X and the receive rate
    X_recv it reported. Rows before the first feedback show dashes.
    """
    end = duration_s if duration_s is not None else (float(run.time_s[-1]) if len(run) else 0.0)
    columns = ("t (s)", "p", "last I", "avg I", "X (pkt/s)", "X_recv (pkt/s)")
    widths = (6, 7, 7, 7, 10, 14)
    header = "  ".join(f"{name:>{width}}" for name, width in zip(columns, widths, strict=True))
    lines = [header, "-" * len(header)]
    s = run.segment_size_bytes
    for k in range(1, math.floor(end / step_s + 1e-9) + 1):
        t = k * step_s
        i = run.index_at(t)
        if i is None:
            cells = [f"{t:.1f}"] + ["-"] * (len(columns) - 1)
        else:
            cells = [
                f"{t:.1f}",
                f"{run.p[i]:.4f}",
                f"{run.last_interval_packets[i]:.1f}",
                f"{run.mean_interval_packets[i]:.1f}",
                f"{run.x_bytes_per_s[i] / s:.1f}",
                f"{run.x_recv_bytes_per_s[i] / s:.1f}",
            ]
        lines.append("  ".join(f"{c:>{w}}" for c, w in zip(cells, widths, strict=True)))
    return "\n".join(lines)


def plot_fig2(run: ChannelRun, path: Path, title: str) -> Path:
    """Draw the three panels of Floyd 2000 Fig. 2 for ``run`` into a PNG at ``path``."""
    figure = Figure(figsize=(8, 8), layout="constrained")
    top, middle, bottom = figure.subplots(3, 1, sharex=True)
    t = run.time_s
    steps = {"drawstyle": "steps-post", "linewidth": 1.2}

    top.plot(t, run.last_interval_packets, label="most recent loss interval", **steps)
    top.plot(t, run.mean_interval_packets, label="average loss interval", **steps)
    top.set_ylabel("loss interval (packets)")

    middle.plot(t, run.p, label="loss event rate p", **steps)
    middle.plot(t, np.sqrt(run.p), label="sqrt(p)", **steps)
    middle.set_ylabel("loss event rate")

    bottom.plot(t, run.x_bytes_per_s / 1000, label="sending rate X", color="C2", **steps)
    bottom.set_ylabel("X (KB/s)")
    bottom.set_xlabel("time (s)")

    for axes in (top, middle, bottom):
        for step in FIG2_SCHEDULE[1:]:
            axes.axvline(step.start_s, color="0.6", linestyle=":", linewidth=1)
        axes.grid(visible=True, alpha=0.3)
        axes.legend(loc="upper right", fontsize="small")
    top.set_title(title)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    return path


def run_demo(
    out_dir: Path, preset: Preset | str = "floyd2000", duration_s: float = 15.0
) -> DemoResult:
    """Run Fig. 2, write ``fig2_<preset>.png`` under ``out_dir`` and build the table."""
    run = run_fig2(preset, duration_s)
    title = (
        f"Floyd 2000 Fig. 2 ({preset}): R = 100 ms, periodic loss 1% -> 10% at 6 s -> 0.5% at 9 s"
    )
    figure = plot_fig2(run, out_dir / f"fig2_{preset}.png", title)
    return DemoResult(run=run, table=format_table(run, duration_s=duration_s), figure=figure)
