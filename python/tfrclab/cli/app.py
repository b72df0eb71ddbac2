"""The ``tfrclab`` command: its parser and :func:`main`.

Each command's subparser is added by its module's ``register``; :func:`main` turns every input
error into one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading

from tfrclab import ConfigError, ControllerError, ScenarioError, __version__
from tfrclab._native import build as native_build
from tfrclab.cli.parser import Parser, reset_terminal_columns

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

__all__ = ["COMMAND_MODULES", "build_parser", "main", "version_line"]


def version_line() -> str:
    """What ``tfrclab --version`` prints: the version and how the native module was built.

    The build is ``profile-guided``, ``plain`` or ``instrumented`` (the one that records the
    profile): the speed differs, the results do not.
    """
    return f"tfrclab {__version__} ({native_build()} build)"


COMMAND_MODULES: dict[str, str] = {
    "run": "tfrclab.cli.run",
    "sweep": "tfrclab.cli.sweep",
    "plot": "tfrclab.cli.plot",
    "summary": "tfrclab.cli.summary",
    "equation": "tfrclab.cli.equation",
    "examples": "tfrclab.cli.examples",
    "demo": "tfrclab.cli.demo",
    "export": "tfrclab.ns2.cli",
    "crosscheck": "tfrclab.ns2.cli",
    "reproduce": "tfrclab.reproduce.cli",
    "send": "tfrclab.cli.transport",
    "recv": "tfrclab.cli.transport",
    "testbed": "tfrclab.testbed.cli",
    "fluid": "tfrclab.cli.fluid",
    "twin": "tfrclab.cli.twin",
    "evaluate": "tfrclab.evaluate.cli",
}
"""Each command and the module whose ``register`` adds it, in the order ``--help`` lists them.

:func:`main` imports only the module of the command it runs: building every subparser took a
third of ``tfrclab --version``'s time (about 9 ms of 30), paid again by every ``tfrclab run``.
A test checks this table against the commands the modules register."""


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser of the ``tfrclab`` command, with one subparser per command.

    With ``command`` (a key of :data:`COMMAND_MODULES`), only the module that registers it is
    imported and registered: the parser then parses that command's arguments exactly as the
    whole one does (argparse hands everything after a command's name to its subparser), and
    ``--help`` and unknown commands need the whole parser.
    """
    from importlib import import_module

    reset_terminal_columns()
    parser = Parser(
        prog="tfrclab",
        description="A toolkit for TCP-friendly congestion control (TFRC, RFC 5348).",
    )
    parser.add_argument("--version", action="version", version=version_line())
    commands = parser.add_subparsers(title="commands", dest="command", required=True)
    # Modules in the order of their first command; a module registers all of its commands.
    modules = dict.fromkeys(COMMAND_MODULES.values())
    for module in modules if command is None else (COMMAND_MODULES[command],):
        import_module(module).register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``tfrclab`` command with ``argv`` (default: ``sys.argv[1:]``).

    Returns:
        The exit status: 0 on success, 2 for bad arguments, 1 for failures while running.
    """
    # numpy's OpenBLAS starts a thread per core when imported, and those threads take CPU from
    # the simulation (0.1-0.15 s of a 0.8 s fig09 run on 2 cores). No command does linear
    # algebra; a value the user set is kept. Sweep workers inherit it.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    arguments = sys.argv[1:] if argv is None else list(argv)
    first = arguments[0] if arguments else None
    parser = build_parser(first if first in COMMAND_MODULES else None)
    try:
        args = parser.parse_args(arguments)
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 2)
    handler: Callable[[argparse.Namespace], int] = args.handler

    # SIGTERM ends a command like Ctrl-C: sweeps stop their workers, nothing half-written stays.
    # Only the first of them interrupts: later ones (a second Ctrl-C, a storm of signals) are
    # ignored while the command cleans up and says so, and, for the program's own command
    # line (``argv`` None), until the process exits.
    main_thread = threading.current_thread() is threading.main_thread()
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    if main_thread:
        for sig in previous:
            signal.signal(sig, _interrupt)
    try:
        return handler(args)
    except ScenarioError as err:
        one_line = " ".join(str(err).split())
        print(f"tfrclab {args.command}: error: {one_line}", file=sys.stderr)
        return 2
    except ControllerError as err:
        print(f"tfrclab {args.command}: error: {' '.join(str(err).split())}", file=sys.stderr)
        return 1
    except (ConfigError, ValueError, KeyError) as err:
        text = str(err.args[0]) if isinstance(err, KeyError) and err.args else str(err)
        print(f"tfrclab {args.command}: error: {' '.join(text.split())}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"tfrclab {args.command}: interrupted", file=sys.stderr)
        if main_thread and argv is None and hasattr(signal, "pthread_sigmask"):
            # The interpreter restores the default handlers as it shuts down, where one more
            # signal would still kill the process: hold them back until it has exited.
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        return 130
    except BrokenPipeError:
        # The reader went away (``tfrclab summary DIR | head``): not an error. Point stdout at
        # nothing so that the interpreter's final flush does not complain again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except (RuntimeError, OSError) as err:
        if isinstance(err, OSError):
            print(f"tfrclab {args.command}: error: {err}", file=sys.stderr)
            return 1
        if not _is_sweep_error(err):
            raise
        print(f"tfrclab {args.command}: error: {' '.join(str(err).split())}", file=sys.stderr)
        return 1
    finally:
        if main_thread and argv is not None:
            for sig, handler_before in previous.items():
                signal.signal(sig, handler_before)


def _is_sweep_error(err: BaseException) -> bool:
    """Whether ``err`` is a :class:`tfrclab.sweep.SweepError`.

    Checked without importing the sweep module (and so pandas) for commands that never load it.
    """
    sweep = sys.modules.get("tfrclab.sweep")
    return sweep is not None and isinstance(err, sweep.SweepError)


def _interrupt(_signum: int, _frame: object) -> None:
    """The first SIGINT or SIGTERM: ignore the next ones, and end the command."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        # A Python handler that does nothing, not SIG_IGN: a signal already caught by the
        # interpreter and not yet handled would then raise "ignored due to race condition".
        signal.signal(sig, _ignore)
    raise KeyboardInterrupt


def _ignore(_signum: int, _frame: object) -> None:
    """A signal after the first interrupt: the command is already ending."""
