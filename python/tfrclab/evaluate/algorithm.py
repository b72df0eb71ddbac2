"""ALGO and its competitors: the flow tables the battery runs.

ALGO is one flow kind with its knobs, written either as a shorthand ``KIND[:KEY=VALUE,...]``
(``tfrc:preset=rfc5348``, ``gaimd:alpha=0.31,beta=0.875``, ``tcp:variant=cubic``), as a TOML
table (``'{ kind = "rap", fine_grain = true }'`` or ``'kind = "tear"'`` with more lines), or as
the path of a TOML file holding such a table or one ``[[flows]]`` table. Values are TOML values
where they parse as one (``0.31``, ``true``, ``"1500B"``), else strings (``preset=rfc5348``).
Every knob is checked by netsim as a scenario key of that kind (docs/scenario.md); a mistake is
one line naming the knob, never a traceback.

The battery places the flows itself, so the keys that say how many flows run, where and when
(``name``, ``count``, ``from``, ``to``, ``reverse``, ``start``, ``stop``, ``on_off``) are
refused. Knobs left out take the *evaluation defaults*, which put ALGO on the competitors'
footing (1500-byte packets on the wire, the kernel's TCP machinery): see :data:`DEFAULTS`.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

__all__ = [
    "BATTERY_KEYS",
    "COMPETITORS",
    "DEFAULTS",
    "KINDS",
    "Algorithm",
    "parse_algorithm",
    "parse_competitors",
]

KINDS = ("tcp", "gaimd", "tfrc", "tear", "rap", "cbr")
"""The flow kinds ALGO may be (``cbr``, which never backs off, is the battery's own check)."""

BATTERY_KEYS = ("name", "count", "from", "to", "reverse", "start", "stop", "on_off")
"""Keys the battery sets for every flow (how many, where, when)."""

HOST_JITTER = "1ms"
"""Every flow's ``host_jitter`` unless ALGO sets its own: real hosts' send-time noise, which
removes DropTail phase effects between flows of equal RTT (docs/scenario.md, "Host jitter")."""

DEFAULTS: Mapping[str, Mapping[str, Any]] = {
    # The kernel's TCP, as the competitors run it (docs/tcp.md, "The linux preset").
    "tcp": {"preset": "linux"},
    # GAIMD on SACK recovery like the competitors, but with the rfc preset and an ACK per
    # packet: the linux preset counts acked segments (RFC 3465), which leaves no room for
    # alpha (its window grows one packet per RTT whatever alpha is), and ns-2-style counting
    # under delayed ACKs would halve alpha. 1460 + 40 header bytes = 1500 on the wire.
    "gaimd": {"preset": "rfc", "ack": "immediate", "recovery": "sack", "size": "1460B"},
    # Rate-based kinds: the competitors' 1500 bytes on the wire, so that per-packet loss
    # probabilities weigh bytes alike (a 1000-byte TFRC flow gets 2/3 of the bytes at the
    # same loss event rate).
    "tfrc": {"size": "1500B"},
    "tear": {"size": "1500B"},
    "rap": {"size": "1500B"},
    "cbr": {"size": "1500B"},
}
"""The evaluation defaults per kind, applied where ALGO leaves the knob out (plus
:data:`HOST_JITTER`)."""

COMPETITORS: Mapping[str, Mapping[str, Any]] = {
    # Linux's "reno" module: RFC 5681 congestion control recovering with SACK (RFC 6675), which
    # is netsim's sack variant under the linux preset (docs/twin.md maps them the same way).
    "reno": {"kind": "tcp", "variant": "sack", "preset": "linux"},
    "newreno": {"kind": "tcp", "variant": "newreno", "preset": "linux"},
    # RFC 9438, as an unconfigured Linux socket under net.ipv4.tcp_congestion_control = cubic.
    "cubic": {"kind": "tcp", "variant": "cubic", "preset": "linux"},
    "bbr": {"kind": "tcp", "variant": "bbr", "preset": "linux"},
}
"""The competitors ``--against`` may name, each the kernel's TCP (the ``linux`` preset)."""


@dataclass(frozen=True)
class Algorithm:
    """A flow kind with its knobs, as the battery runs it."""

    label: str
    """A short name for tables and file names (``tfrc:preset=rfc5348``)."""
    table: Mapping[str, Any]
    """The flow table: ``kind``, the given knobs and the evaluation defaults."""
    given: Mapping[str, Any] = field(default_factory=dict)
    """The kind and knobs as written."""

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: the label, the knobs given and the table run."""
        return {"label": self.label, "given": dict(self.given), "table": dict(self.table)}


def _shorthand(text: str) -> dict[str, Any]:
    """``KIND[:KEY=VALUE,...]`` as a flow table."""
    from tfrclab.scenario import parse_value

    kind, colon, rest = text.partition(":")
    table: dict[str, Any] = {"kind": kind.strip()}
    if colon and not rest.strip():
        raise ValueError(f"ALGO {text!r}: nothing after ':'; write KIND:KEY=VALUE,...")
    from tfrclab.sweep import split_values

    for item in split_values(rest) if rest.strip() else []:
        key, equals, value = item.partition("=")
        key = key.strip()
        if not key:
            raise ValueError(f"ALGO {text!r}: an empty knob in {item!r}; write KEY=VALUE")
        if not equals or not value.strip():
            raise ValueError(f"ALGO {text!r}: knob {key!r} has no value; write {key}=VALUE")
        if key in table:
            raise ValueError(f"ALGO {text!r}: knob {key!r} is given twice")
        table[key] = parse_value(value.strip())
    return table


def _toml(text: str, where: str) -> dict[str, Any]:
    """A TOML table (inline ``{...}``, a document, or a document with one ``[[flows]]``)."""
    source = f"algo = {text.strip()}" if text.strip().startswith("{") else text
    try:
        document = tomllib.loads(source)
    except tomllib.TOMLDecodeError as err:
        raise ValueError(f"ALGO {where}: not a TOML table ({err})") from None
    table = document.get("algo", document) if text.strip().startswith("{") else document
    if "flows" in table:
        flows = table["flows"]
        if not isinstance(flows, list) or len(flows) != 1 or not isinstance(flows[0], dict):
            raise ValueError(f"ALGO {where}: expected exactly one [[flows]] table")
        table = flows[0]
    if not isinstance(table, dict):
        raise ValueError(f"ALGO {where}: expected a table of flow keys")
    return dict(table)


def _label(table: Mapping[str, Any]) -> str:
    from tfrclab.sweep import written

    knobs = ",".join(f"{k}={written(v)}" for k, v in table.items() if k != "kind")
    return f"{table['kind']}:{knobs}" if knobs else str(table["kind"])


def _check_kind(table: Mapping[str, Any], where: str) -> str:
    kind = table.get("kind")
    if kind is None:
        raise ValueError(f"ALGO {where}: no kind; expected one of {', '.join(KINDS)}")
    if not isinstance(kind, str) or kind not in KINDS:
        raise ValueError(f"ALGO {where}: unknown kind {kind!r}; expected one of {', '.join(KINDS)}")
    return kind


def with_defaults(table: Mapping[str, Any]) -> dict[str, Any]:
    """``table`` with the evaluation defaults of its kind where it leaves a knob out."""
    out = {"kind": table["kind"], **DEFAULTS.get(str(table["kind"]), {})}
    out.update({k: v for k, v in table.items() if k != "kind"})
    out.setdefault("host_jitter", HOST_JITTER)
    return out


def check_flow(table: Mapping[str, Any], where: str) -> None:
    """Have netsim check ``table`` as a flow on a small dumbbell; a ValueError naming the knob."""
    from tfrclab.scenario import Scenario, ScenarioError

    probe = {
        "duration": "1s",
        "topology": {
            "kind": "dumbbell",
            "hosts": 1,
            "bottleneck": {"rate": "10Mbps", "delay": "10ms"},
        },
        "flows": [dict(table)],
    }
    try:
        Scenario.from_dict(probe)
    except ScenarioError as err:
        text = " ".join(str(err).split()).replace("flows[0].", "", 1)
        if text.startswith("flows[0]: "):
            text = text[len("flows[0]: ") :]
        raise ValueError(f"ALGO {where}: {text}") from None


def parse_algorithm(text: str) -> Algorithm:
    """ALGO as written on the command line (module documentation).

    >>> parse_algorithm("gaimd:alpha=0.31,beta=0.875").table["alpha"]
    0.31
    >>> parse_algorithm("tfrc:preset=rfc5348").label
    'tfrc:preset=rfc5348'

    Raises:
        ValueError: one line naming what is wrong (the kind, a knob, its value).
    """
    stripped = text.strip()
    if not stripped:
        raise ValueError("ALGO is empty; write KIND[:KEY=VALUE,...], e.g. tfrc:preset=rfc5348")
    where = repr(stripped)
    path = Path(stripped)
    if stripped.endswith(".toml"):
        try:
            given = _toml(path.read_text(encoding="utf-8"), str(path))
        except OSError as err:
            raise ValueError(f"ALGO {stripped}: cannot read it ({err.strerror or err})") from None
    elif stripped.startswith("{") or "\n" in stripped or stripped.startswith("kind"):
        given = _toml(stripped, where)
    else:
        given = _shorthand(stripped)
    kind = _check_kind(given, where)
    battery = [key for key in BATTERY_KEYS if key in given]
    if battery:
        raise ValueError(
            f"ALGO {where}: {battery[0]!r} is set by the battery (each criterion places its "
            "own flows); leave it out"
        )
    table = with_defaults(given)
    check_flow(table, where)
    return Algorithm(
        label=_label(given),
        table=table,
        given={"kind": kind, **{k: v for k, v in given.items() if k != "kind"}},
    )


def parse_competitors(text: str) -> list[tuple[str, dict[str, Any]]]:
    """``--against``: competitor names separated by commas, each with its flow table.

    >>> [name for name, _ in parse_competitors("reno,cubic")]
    ['reno', 'cubic']

    Raises:
        ValueError: for an unknown or repeated name, or none.
    """
    names = [name.strip().lower() for name in text.split(",") if name.strip()]
    if not names:
        raise ValueError(f"--against {text!r}: no competitor; e.g. reno,cubic")
    out: list[tuple[str, dict[str, Any]]] = []
    for name in names:
        if name not in COMPETITORS:
            raise ValueError(
                f"--against: unknown competitor {name!r}; expected some of {', '.join(COMPETITORS)}"
            )
        if any(name == seen for seen, _ in out):
            raise ValueError(f"--against: {name!r} is named twice")
        out.append((name, with_defaults(COMPETITORS[name])))
    return out
