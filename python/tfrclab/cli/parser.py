"""The argparse machinery every ``tfrclab`` command shares: one-line errors, help width.

:class:`Parser` prints an error as one line with exit status 2; :class:`HelpFormatter` reads the
terminal width once per parser (not per option); :func:`argument_type` turns a parser raising
ValueError into an argparse type whose message is the ValueError's.
"""

from __future__ import annotations

import argparse
import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, NoReturn, TypeVar

    T = TypeVar("T")

__all__ = ["HelpFormatter", "Parser", "argument_type", "reset_terminal_columns", "terminal_columns"]


def terminal_columns() -> int:
    """The width argparse formats help for, as ``shutil.get_terminal_size`` finds it.

    Read once per :func:`build_parser` call (see :class:`HelpFormatter`): ``COLUMNS`` if it is
    a positive number, else the width of the terminal on stdout if it reports one, else 80.
    """
    global _columns
    if _columns is None:
        try:
            _columns = int(os.environ.get("COLUMNS", "0"))
        except ValueError:
            _columns = 0
        if _columns <= 0:
            stdout = sys.__stdout__
            try:
                _columns = os.get_terminal_size(stdout.fileno()).columns if stdout else 0
            except (AttributeError, ValueError, OSError):
                _columns = 0
            _columns = _columns or 80
    return _columns


_columns: int | None = None
"""The terminal width :func:`terminal_columns` read for the parser being built (None: not yet)."""


def reset_terminal_columns() -> None:
    """Forget the width read for the last parser, so the next one reads it afresh."""
    global _columns
    _columns = None


class HelpFormatter(argparse.HelpFormatter):
    """argparse's help formatter, with the terminal width read once instead of per formatter.

    argparse makes a formatter for every ``add_argument`` call (to check the metavar), and each
    asks ``shutil`` for the terminal size; across the command's ~200 options that, and importing
    ``shutil`` for it, was a tenth of ``tfrclab --version``'s start-up. The width is argparse's:
    the terminal's less 2.
    """

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        width = terminal_columns() - 2 if width is None else width
        super().__init__(prog, indent_increment, max_help_position, width)


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are a single line on stderr, with exit status 2."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        """Print ``message`` as one line with the program name and exit with status 2."""
        one_line = " ".join(message.split())
        self.exit(2, f"{self.prog}: error: {one_line} (see --help)\n")


def argument_type(parse: Callable[[str], T]) -> Callable[[str], T]:
    """Turn a parser raising ValueError into an argparse type with a readable message."""

    def convert(text: str) -> T:
        try:
            return parse(text)
        except ValueError as err:
            raise argparse.ArgumentTypeError(str(err)) from None

    convert.__name__ = parse.__name__
    return convert
