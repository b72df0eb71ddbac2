"""No module of python/tfrclab imports another module's underscore names.

An underscore name is private to its module: importing it from elsewhere couples two modules
through something neither documents (``fluid/cli.py`` and ``transport_cli.py`` once imported
``cli.py``'s helpers, and ``cli.py`` imported them back). What modules share is public, with a
docstring. The scan reads every module's source (``ast``): ``from X import _name`` and
``import X._mod`` with X inside tfrclab (absolute or relative), and ``module._name`` on a name
bound to a tfrclab module.

Allowed: the package-private modules ``tfrclab._native`` (the compiled simulator, wrapped by the
public modules), ``tfrclab._process`` (worker pools and process checks for sweeps and
reproductions) and ``tfrclab._lazy`` (lazy package attributes): each is a module of its own
whose names are all for use inside the package, and the underscore keeps them out of the
public API reference. Importing them, or public names from them, is what they are for.
"""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import REPO_ROOT

PACKAGE = REPO_ROOT / "python" / "tfrclab"
PRIVATE_MODULES = {"tfrclab._native", "tfrclab._process", "tfrclab._lazy"}


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _absolute(module: str, level: int, path: Path) -> str:
    """The module an import names, made absolute for relative imports."""
    if not level:
        return module
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    base = parts[: len(parts) - level]
    return ".".join([*base, module] if module else base)


def _module_exists(name: str) -> bool:
    relative = Path(*name.split("."))
    return (PACKAGE.parent / relative).with_suffix(".py").exists() or (
        PACKAGE.parent / relative / "__init__.py"
    ).exists()


def _violations(path: Path, source: str | None = None) -> list[str]:
    """The private imports in ``path`` (or in ``source``, read as if it were at ``path``)."""
    text = path.read_text(encoding="utf-8") if source is None else source
    tree = ast.parse(text)
    where = path.relative_to(PACKAGE).as_posix()
    found: list[str] = []
    modules: set[str] = set()  # local names bound to tfrclab modules
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            source = _absolute(node.module or "", node.level, path)
            if source != "tfrclab" and not source.startswith("tfrclab."):
                continue
            for alias in node.names:
                full = f"{source}.{alias.name}"
                if full in PRIVATE_MODULES or _module_exists(full):
                    modules.add(alias.asname or alias.name)
                    if full in PRIVATE_MODULES:
                        continue
                if _is_private(alias.name) or (
                    any(_is_private(p) for p in source.split(".")) and source not in PRIVATE_MODULES
                ):
                    found.append(f"{where}:{node.lineno}: from {source} import {alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if not alias.name.startswith("tfrclab"):
                    continue
                modules.add(alias.asname or alias.name.split(".")[0])
                private = any(_is_private(p) for p in alias.name.split("."))
                if private and alias.name not in PRIVATE_MODULES:
                    found.append(f"{where}:{node.lineno}: import {alias.name}")
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
            and _is_private(node.attr)
        ):
            found.append(f"{where}:{node.lineno}: {node.value.id}.{node.attr}")
    return found


def test_no_module_imports_another_modules_private_names() -> None:
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) > 50
    found = [line for path in files for line in _violations(path)]
    assert found == []


def test_the_scan_sees_each_form() -> None:
    """The scan is not vacuous: each form of private import it covers is reported."""
    module = PACKAGE / "cli" / "_scan_probe.py"
    source = (
        "from tfrclab.cli.parser import _columns\n"
        "from . import _scan_other\n"
        "import tfrclab._secret\n"
        "from tfrclab.cli import parser\n"
        "parser._columns\n"
        "from tfrclab import _native\n"
        "from tfrclab._native import build\n"
        "_native._private\n"
    )
    assert _violations(module, source) == [
        "cli/_scan_probe.py:1: from tfrclab.cli.parser import _columns",
        "cli/_scan_probe.py:2: from tfrclab.cli import _scan_other",
        "cli/_scan_probe.py:3: import tfrclab._secret",
        "cli/_scan_probe.py:5: parser._columns",
        "cli/_scan_probe.py:8: _native._private",
    ]
