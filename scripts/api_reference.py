"""Generate docs/api.md, the API reference of the tfrclab Python package, from its docstrings.

Usage: ``.venv/bin/python scripts/api_reference.py [--check]``. Without ``--check`` it writes
docs/api.md; with it, it exits with status 1 if the committed file is out of date (the test
suite runs the same comparison). Every public name (``__all__``) of the modules below gets its
signature and its docstring, verbatim.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from pathlib import Path
from types import ModuleType

MODULES = (
    "tfrclab",
    "tfrclab.scenario",
    "tfrclab.simulate",
    "tfrclab.controllers",
    "tfrclab.result",
    "tfrclab.summary",
    "tfrclab.window",
    "tfrclab.metrics",
    "tfrclab.loss_events",
    "tfrclab.models",
    "tfrclab.sweep",
    "tfrclab.figures",
    "tfrclab.report",
    "tfrclab.outdir",
    "tfrclab.buffers",
    "tfrclab.examples",
    "tfrclab.channel",
    "tfrclab.equation",
    "tfrclab.units",
    "tfrclab.transport",
    "tfrclab.media",
    "tfrclab.testbed",
    "tfrclab.reproduce.registry",
    "tfrclab.reproduce.claims",
    "tfrclab.reproduce.runner",
    "tfrclab.reproduce.sensitivity",
)
"""The modules documented, in order."""

OUTPUT = Path(__file__).resolve().parents[1] / "docs" / "api.md"

HEADER = """\
# tfrclab Python API reference

Generated from the docstrings by `scripts/api_reference.py`; do not edit by hand (the test
suite checks that this file is up to date: run `.venv/bin/python scripts/api_reference.py`
after changing a docstring). Start with [getting-started.md](getting-started.md).
"""


def _doc(obj: object) -> str:
    return inspect.cleandoc(inspect.getdoc(obj) or "(undocumented)")


def _signature(obj: object) -> str:
    try:
        return str(inspect.signature(obj))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return ""


def _names(module: ModuleType) -> list[str]:
    names = getattr(module, "__all__", None)
    if names is None:
        return []
    return [n for n in names if not n.startswith("_")]


def _member(module: ModuleType, name: str, out: list[str]) -> None:
    obj = getattr(module, name)
    if inspect.ismodule(obj):
        return
    qualified = f"{module.__name__}.{name}"
    if inspect.isclass(obj):
        out.append(f"### class `{qualified}`\n")
        out.append(_doc(obj) + "\n")
        for attr, value in sorted(vars(obj).items()):
            if attr.startswith("_"):
                continue
            if isinstance(value, property):
                out.append(f"#### `{name}.{attr}` (property)\n")
                out.append(_doc(value) + "\n")
            elif isinstance(value, classmethod | staticmethod):
                func = value.__func__
                out.append(f"#### `{name}.{attr}{_signature(func)}` (class method)\n")
                out.append(_doc(func) + "\n")
            elif inspect.isfunction(value):
                out.append(f"#### `{name}.{attr}{_signature(value)}`\n")
                out.append(_doc(value) + "\n")
        out.append("")
    elif inspect.isfunction(obj) or inspect.isbuiltin(obj):
        out.append(f"### `{qualified}{_signature(obj)}`\n")
        out.append(_doc(obj) + "\n")
    else:
        out.append(f"### `{qualified}`\n")
        out.append(f"`{obj!r}`\n" if len(repr(obj)) < 300 else "(a constant)\n")


def render() -> str:
    """The whole reference as Markdown."""
    out = [HEADER]
    for name in MODULES:
        module = importlib.import_module(name)
        out.append(f"## `{name}`\n")
        out.append(_doc(module) + "\n")
        if name == "tfrclab":
            continue  # its names are re-exports, documented in their own modules
        for member in _names(module):
            _member(module, member, out)
    return "\n".join(out).rstrip() + "\n"


def main(argv: list[str]) -> int:
    """Write docs/api.md, or with ``--check`` report whether it is up to date."""
    text = render()
    if "--check" in argv:
        if not OUTPUT.exists() or OUTPUT.read_text(encoding="utf-8") != text:
            print(f"{OUTPUT} is out of date: run scripts/api_reference.py", file=sys.stderr)
            return 1
        return 0
    OUTPUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUTPUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
