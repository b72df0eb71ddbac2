"""Package attributes imported on first use (PEP 562).

Importing a package's light submodule, as the CLI does for every command at start-up, then
does not import its heavy ones (numpy, through a log reader or a solver), so
``tfrclab --version`` stays fast.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from typing import Any


def lazy_exports(package: str, homes: dict[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``.

    It imports each public name from the submodule ``homes`` gives for it when first asked
    for, then keeps it in the package.
    """

    def attribute(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{home}"), name)
        setattr(sys.modules[package], name, value)
        return value

    return attribute
