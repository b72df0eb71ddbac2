"""Human-unit parsing shared by the CLI and scenario files."""

from __future__ import annotations

import pytest

from tfrclab.units import format_duration, parse_duration, parse_size


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("100ms", 0.1),
        ("0.1s", 0.1),
        ("1s", 1.0),
        ("250us", 250e-6),
        ("250µs", 250e-6),
        ("5ns", 5e-9),
        ("2min", 120.0),
        ("1h", 3600.0),
        (" 50 ms ", 0.05),
        ("1e2ms", 0.1),
        (".5s", 0.5),
        ("0s", 0.0),
    ],
)
def test_parse_duration(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds, rel=1e-12)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("100", "needs a unit"),
        ("100xs", "unknown unit"),
        ("ms", "expected a number"),
        ("", "expected a number"),
        ("-1s", "negative"),
        ("1e400s", "not finite"),
        ("1.2.3s", "expected a number"),
    ],
)
def test_parse_duration_rejects(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_duration(text)


@pytest.mark.parametrize(
    ("text", "size"),
    [("1000", 1000), ("1000B", 1000), ("1.5KB", 1500), ("4KiB", 4096), (" 576 B", 576)],
)
def test_parse_size(text: str, size: int) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["-5", "0", "0B", "1.5", "12parsecs", "B", "1e400"])
def test_parse_size_rejects(text: str) -> None:
    with pytest.raises(ValueError, match="size"):
        parse_size(text)


@pytest.mark.parametrize("seconds", [0.1, 1.0, 250e-6, 5e-9, 42.0, 0.0375])
def test_format_duration_round_trips(seconds: float) -> None:
    assert parse_duration(format_duration(seconds)) == pytest.approx(seconds, rel=1e-6)
