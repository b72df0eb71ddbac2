"""The rich consoles the commands print tables (stdout) and progress (stderr) on."""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["stderr_console", "stdout_console"]


def stdout_console() -> Console:
    """A console for tables on stdout: at least 110 columns wide when not a terminal."""
    from rich.console import Console

    class StdoutConsole(Console):
        def on_broken_pipe(self) -> None:
            # rich exits with status 1 when the reader goes away; for us that is not an error.
            raise BrokenPipeError

    console = StdoutConsole(highlight=False)
    if not console.is_terminal:
        console = StdoutConsole(highlight=False, width=max(110, console.width))
    return console


def stderr_console() -> Console:
    """A console for progress and notes on stderr."""
    from rich.console import Console

    return Console(stderr=True)
