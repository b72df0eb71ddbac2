"""Option values and options several ``tfrclab`` commands share.

Each value parser raises ValueError with a message naming the option and what it expects (wrap
it in :func:`tfrclab.cli.parser.argument_type`); :func:`add_set_option` and
:func:`add_measure_options` add ``--set`` and ``--measure-from``/``--measure-to`` to a command.
"""

from __future__ import annotations

import argparse

from tfrclab.cli.parser import argument_type
from tfrclab.units import parse_duration

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = [
    "PRESETS",
    "acks_per_packet",
    "add_measure_options",
    "add_set_option",
    "job_count",
    "loss_event_rate",
    "positive_duration",
    "seed_list",
    "seed_number",
    "set_pair",
    "vary_axis",
    "window_seconds",
    "window_time",
    "zip_axis",
]

PRESETS = ("floyd2000", "rfc5348")
"""The TFRC presets the commands accept."""


def positive_duration(text: str) -> float:
    """A duration above 0 in seconds (``--rtt``, ``--duration``)."""
    seconds = parse_duration(text)
    if seconds <= 0:
        raise ValueError(f"duration {text!r} must be positive")
    return seconds


def _number(text: str, what: str, expected: str, in_range: Callable[[float], bool]) -> float:
    """Parse ``text`` as a float and check it, with errors that name ``what`` and ``expected``."""
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"invalid {what} {text!r}: expected {expected}") from None
    if not in_range(value):
        raise ValueError(f"{what} must be {expected}, got {text}")
    return value


def loss_event_rate(text: str) -> float:
    """``equation --p``: a loss event rate in (0, 1]."""
    return _number(text, "loss event rate p", "a number in (0, 1]", lambda p: 0.0 < p <= 1.0)


def acks_per_packet(text: str) -> float:
    """``equation --b``: packets per ACK, a finite number >= 1."""
    return _number(
        text, "b (packets per ACK)", "a finite number >= 1", lambda b: 1.0 <= b < float("inf")
    )


def _whole_number(text: str, what: str, minimum: int) -> int:
    """``text`` as a whole number >= ``minimum``, or ValueError naming ``what``."""
    try:
        value = int(text)
    except ValueError:
        value = minimum - 1
    if value < minimum:
        raise ValueError(f"invalid {what} {text!r}: expected a whole number >= {minimum}")
    return value


def seed_number(text: str) -> int:
    """A ``--seed``: a whole number from 0 to 2^64-1 (netsim's seed)."""
    seed = _whole_number(text, "seed", 0)
    if seed >= 2**64:
        raise ValueError(f"invalid seed {text!r}: expected a whole number from 0 to 2^64-1")
    return seed


def job_count(text: str) -> int:
    """``--jobs``: a whole number >= 1."""
    return _whole_number(text, "--jobs", 1)


def vary_axis(text: str) -> tuple[str, tuple[Any, ...]]:
    """A ``--vary PATH=V1,V2,...``: the path and its values."""
    from tfrclab.sweep import parse_vary

    path, values = parse_vary(text)
    return path, tuple(values)


def zip_axis(text: str) -> tuple[str, tuple[Any, ...]]:
    """A ``--zip PATH=V1,V2,...``: the path and its values."""
    from tfrclab.sweep import parse_vary

    path, values = parse_vary(text, option="--zip")
    return path, tuple(values)


def seed_list(text: str) -> list[int]:
    """``--seeds``: ``1-30`` or ``1,2,7``."""
    from tfrclab.sweep import parse_seeds

    return parse_seeds(text)


def set_pair(text: str) -> tuple[str, Any]:
    """Read a ``--set path=value`` argument."""
    from tfrclab.scenario import parse_value

    path, sep, value = text.partition("=")
    if not sep or not path.strip():
        raise ValueError(f"{text!r}: expected PATH=VALUE, e.g. topology.bottleneck.rate=30Mbps")
    return path.strip(), parse_value(value.strip())


def window_time(text: str) -> str:
    """A ``--measure-from``/``--measure-to`` value: a duration, kept as text for the scenario."""
    if parse_duration(text) < 0:
        raise ValueError(f"a measurement time is not negative, got {text!r}")
    return text


def window_seconds(text: str) -> float:
    """A measurement time (:func:`window_time`) in seconds."""
    return parse_duration(window_time(text))


def add_measure_options(parser: argparse.ArgumentParser, to_seconds: bool) -> None:
    """``--measure-from``/``--measure-to``: the measurement window (``[measure]`` in files)."""
    convert = argument_type(window_seconds if to_seconds else window_time)
    dest = "_s" if to_seconds else ""
    parser.add_argument(
        "--measure-from",
        dest=f"measure_from{dest}",
        type=convert,
        default=None,
        metavar="TIME",
        help="summarize from this simulated time on, e.g. 50s (default: the scenario's "
        "[measure] from, else 0s)",
    )
    parser.add_argument(
        "--measure-to",
        dest=f"measure_to{dest}",
        type=convert,
        default=None,
        metavar="TIME",
        help="summarize up to this time (default: the scenario's [measure] to, else the end)",
    )


def add_set_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--set PATH=VALUE`` (repeatable) to ``parser``."""
    parser.add_argument(
        "--set",
        type=argument_type(set_pair),
        action="append",
        default=[],
        metavar="PATH=VALUE",
        help="change a scenario value, e.g. topology.bottleneck.rate=30Mbps or flows.0.rate=2Mbps "
        "(repeatable; see docs/getting-started.md)",
    )
