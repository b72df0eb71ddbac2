"""``tfrclab fluid``: run a dumbbell scenario as a fluid model, or beside the packet simulator.

``tfrclab fluid SCENARIO --out DIR`` writes the same files a packet run writes (Parquet,
scenario.toml, run.json, rate and queue figures), so ``tfrclab summary`` and ``plot`` read it;
``--compare`` also runs the packets and prints both side by side (and ``DIR/compare.png``).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["register"]


def register(commands: Any) -> None:
    """Add ``fluid`` to the ``tfrclab`` command's subparsers."""
    # The seed is read as `tfrclab run` reads it (0 to 2^64-1, the same message).
    from tfrclab.cli.options import seed_number
    from tfrclab.cli.parser import argument_type

    fluid = commands.add_parser(
        "fluid",
        help="run a dumbbell scenario as a fluid (delay-differential) model",
        description="Integrate the fluid model of a dumbbell scenario (Reno, Vegas and TFRC "
        "flows on a DropTail bottleneck; docs/fluid.md) and print its summary; with --out, "
        "write the same Parquet files and figures as `tfrclab run`. --compare also runs the "
        "packet simulator on the scenario and tabulates both.",
    )
    fluid.add_argument("scenario", type=Path, help="scenario file (TOML)")
    fluid.add_argument("--out", type=Path, default=None, help="result directory")
    fluid.add_argument(
        "--seed",
        type=argument_type(seed_number),
        default=None,
        help="seed (default: the scenario's)",
    )
    fluid.add_argument(
        "--step",
        type=float,
        default=None,
        help="integration step in seconds (default: "
        "1 ms, or an eighth of the smallest RTT, dividing the bin)",
    )
    fluid.add_argument(
        "--set", action="append", default=[], metavar="PATH=VALUE", help="change the scenario"
    )
    fluid.add_argument("--compare", action="store_true", help="also run the packet simulator")
    fluid.add_argument("--force", action="store_true", help="replace an existing --out")
    fluid.add_argument("--json", action="store_true", help="print JSON")
    fluid.set_defaults(handler=_cmd_fluid)


def _cmd_fluid(args: argparse.Namespace) -> int:
    from tfrclab.cli.scenario_io import load_scenario, write_run
    from tfrclab.fluid.compare import compare, plot_comparison
    from tfrclab.fluid.result import loss_event_note, model_from_scenario, to_result
    from tfrclab.fluid.solver import solve
    from tfrclab.outdir import check_run_out
    from tfrclab.scenario import parse_value

    sets = []
    for item in args.set:
        if "=" not in item:
            raise ValueError(f"--set expects PATH=VALUE, got {item!r}")
        key, value = item.split("=", 1)
        sets.append((key.strip(), parse_value(value.strip())))
    scenario = load_scenario(args.scenario, sets)
    if args.step is not None and not args.step > 0:
        raise ValueError(f"--step must be above 0, got {args.step!r}")
    if args.out is not None:
        check_run_out(args.out, force=args.force)
    if args.compare:
        comparison = compare(scenario, seed=args.seed)
        result = comparison.fluid
    else:
        model = model_from_scenario(scenario, seed=args.seed, step_s=args.step)
        result = to_result(solve(model), scenario.toml)
    figures = write_run(result, args.out) if args.out is not None else []
    if args.compare and args.out is not None:
        figures.append(plot_comparison(comparison, args.out / "compare.png", scenario.name))
    if args.json:
        payload: dict[str, Any] = {
            "wall_seconds": result.info.wall_seconds,
            "flows": result.flows[
                [
                    "name",
                    "kind",
                    "variant",
                    "throughput_bits_per_s",
                    "packet_loss_rate",
                    "loss_event_rate",
                ]
            ].to_dict("records"),
        }
        if args.compare:
            payload["comparison"] = comparison.rows
        print(json.dumps(payload))
        return 0
    print(
        f"{scenario.name}: fluid model, {result.info.duration_s:g} s in "
        f"{result.info.wall_seconds:.2f} s wall ({result.info.events} steps)"
    )
    if args.compare:
        print(
            f"{'flow':<12}{'kind':<7}{'fluid Mb/s':>11}{'packet Mb/s':>12}"
            f"{'fluid loss':>11}{'packet loss':>12}"
        )
        for row in comparison.rows[:-1]:
            print(
                f"{row['flow']!s:<12}{row['kind']!s:<7}{row['fluid_mbps']:>11.3f}"
                f"{row['packet_mbps']:>12.3f}{row['fluid_loss']:>11.4f}"
                f"{row['packet_loss']:>12.4f}"
            )
        link = comparison.rows[-1]
        print(
            f"bottleneck utilization {link['fluid_utilization']:.3f} (fluid) "
            f"{link['packet_utilization']:.3f} (packets); mean queue "
            f"{link['fluid_mean_queue']:.1f} / {link['packet_mean_queue']:.1f} packets"
        )
    else:
        flows = result.flows
        for name, bps, loss, ler in zip(
            flows["name"],
            flows["throughput_bits_per_s"],
            flows["packet_loss_rate"],
            flows["loss_event_rate"],
            strict=True,
        ):
            print(
                f"{name!s:<12}{float(bps) / 1e6:>9.3f} Mb/s  loss {float(loss):.4f}  "
                f"LER {float(ler):.4f}"
            )
        note = loss_event_note(result)
        if note:
            print(f"note: {note}")
    for figure in figures:
        print(f"figure: {figure}")
    return 0
