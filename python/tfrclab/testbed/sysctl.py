"""Kernel settings for a testbed run: ``net.*`` sysctls set in both of the testbed's namespaces.

Linux keeps its TCP settings per network namespace (``net.ipv4.tcp_*``), so a run can switch a
kernel feature off for its own sender and receiver without touching the host: SACK
(``net.ipv4.tcp_sack=0``) for the floyd2000 mixed experiment, or SACK compression
(``net.ipv4.tcp_comp_sack_nr=0``, the receiver's held ACKs, docs/tcp.md "SACK compression") for
a twin. Only ``net.*`` keys with a plain value are accepted, checked before any run starts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["apply_sysctls", "check_sysctls", "parse_sysctl", "sysctl_argument"]


def check_sysctls(settings: Mapping[str, str] | None) -> dict[str, str]:
    """``settings`` as a plain dict, or :class:`ValueError` naming the first bad key or value.

    A key must be ``net.`` followed by letters, digits, dots and underscores; a value, letters
    and digits (spaces between them allowed, as in ``tcp_rmem``'s ``"4096 131072 6291456"``).
    """
    checked = {}
    for key, value in (settings or {}).items():
        if not (key.startswith("net.") and key.replace(".", "").replace("_", "").isalnum()):
            raise ValueError(f"sysctls: expected net.* keys, found {key!r}")
        if not str(value).replace(" ", "").isalnum():
            raise ValueError(f"sysctls: {key}: expected a plain value, found {value!r}")
        checked[key] = str(value)
    return checked


def parse_sysctl(text: str) -> tuple[str, str]:
    """``KEY=VALUE`` from a command line as a checked pair, or :class:`ValueError` saying why."""
    key, sep, value = text.partition("=")
    if not sep:
        raise ValueError(f"expected KEY=VALUE (e.g. net.ipv4.tcp_comp_sack_nr=0), found {text!r}")
    ((key, value),) = check_sysctls({key.strip(): value.strip()}).items()
    return key, value


def sysctl_argument(text: str) -> tuple[str, str]:
    """:func:`parse_sysctl` as an argparse ``type``: a bad setting is a usage error saying why."""
    import argparse

    try:
        return parse_sysctl(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def apply_sysctls(testbed: Any, settings: Mapping[str, str]) -> None:
    """Set checked ``settings`` in both namespaces of a running ``Testbed``, before any flow."""
    for side in ("a", "b"):
        for key, value in settings.items():
            testbed.run(side, ["sysctl", "-q", "-w", f"{key}={value}"], check=True)
