"""The scenario files shipped with the package: examples, the papers' setups, cross-checks.

They live in the package (``tfrclab/scenarios``), so a ``pip install``-ed tfrclab has them too;
:func:`copy_scenarios` (``tfrclab examples DIR``) copies them out to run and edit.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # importlib.resources.abc only exists from Python 3.11 on
    from importlib.abc import Traversable

__all__ = ["copy_scenarios", "scenario_files"]


def _root() -> Traversable:
    return resources.files("tfrclab") / "scenarios"


def scenario_files() -> list[str]:
    """The shipped scenario files, as paths relative to the scenario folder, sorted.

    >>> "examples/dumbbell.toml" in scenario_files()
    True
    """
    found: list[str] = []

    def walk(node: Traversable, prefix: str) -> None:
        for child in node.iterdir():
            name = f"{prefix}{child.name}"
            if child.is_dir():
                walk(child, f"{name}/")
            elif child.name.endswith(".toml"):
                found.append(name)

    walk(_root(), "")
    return sorted(found)


def copy_scenarios(directory: Path, force: bool = False) -> list[Path]:
    """Copy every shipped scenario file into ``directory`` (created); returns the new paths.

    Raises:
        ValueError: if a file of the same name exists there and ``force`` is false (nothing
            is copied then).
    """
    targets = [(name, directory / name) for name in scenario_files()]
    if not force:
        existing = [str(target) for _, target in targets if target.exists()]
        if existing:
            raise ValueError(
                f"{existing[0]} exists ({len(existing)} of the files do); pass --force to "
                "overwrite them, or choose another directory"
            )
    root = _root()
    for name, target in targets:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text((root / name).read_text(encoding="utf-8"), encoding="utf-8")
    return [target for _, target in targets]
