"""``tfrclab examples``: copy the shipped scenario files into a directory."""

from __future__ import annotations

import sys
from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    import argparse
    from typing import Any

__all__ = ["register"]


def _cmd_examples(args: argparse.Namespace) -> int:
    from tfrclab.examples import copy_scenarios
    from tfrclab.outdir import check_directory_writable

    check_directory_writable(args.dir, "")
    copied = copy_scenarios(args.dir, force=args.force)
    for path in copied:
        print(path)
    print(
        f"{len(copied)} scenario files in {args.dir}; try: tfrclab run "
        f"{args.dir / 'examples' / 'dumbbell.toml'}",
        file=sys.stderr,
    )
    return 0


def register(commands: Any) -> None:
    """Add ``examples`` to the ``tfrclab`` command's subparsers."""
    examples = commands.add_parser(
        "examples",
        help="copy the example and paper scenario files into a directory",
        description="Copy the scenario files shipped with tfrclab (examples/, papers/<paper>/, "
        "crosscheck/) into DIR, to run and edit.",
    )
    examples.add_argument(
        "dir",
        type=Path,
        nargs="?",
        default=Path("tfrclab-scenarios"),
        help="where to put them (default ./tfrclab-scenarios; must be new or empty)",
    )
    examples.add_argument(
        "--force", action="store_true", help="overwrite files of the same name in DIR"
    )
    examples.set_defaults(handler=_cmd_examples)
