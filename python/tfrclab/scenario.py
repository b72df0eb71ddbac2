"""Scenarios: netsim simulations described as TOML tables (docs/scenario.md lists every key).

A :class:`Scenario` holds the scenario's tables as plain Python values (``dict``, ``list``,
``str``, numbers) and is checked by netsim itself when it is built, so every error is the
simulator's own, one line naming the field (``tfrclab.ScenarioError``, with ``.path``).
Scenarios are immutable: :meth:`Scenario.with_` returns a changed copy.

Paths
-----
:meth:`Scenario.with_` and ``tfrclab run --set`` address values by dotted paths into the tables:

- ``topology.bottleneck.rate``: keys of nested tables, separated by dots;
- ``flows.0.rate`` or ``flows[0].rate``: item 0 of the array of tables ``[[flows]]`` (indices
  count from 0, as in the simulator's error messages);
- ``bottleneck.rate``: a path whose first key is not a key of the document but is a key of its
  ``[topology]`` table is looked up there (so ``bottleneck.rate`` means
  ``topology.bottleneck.rate``);
- ``"a.b".c``: a key holding a dot is written in double quotes.

Setting a key that is absent creates it (and any tables on the way); netsim then refuses keys
its schema does not know, naming them. An index past the end of an array, or a path through a
value that is not a table, raises :class:`ScenarioError` naming the path.
"""

from __future__ import annotations

import copy
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tfrclab import _native
from tfrclab._native import ScenarioError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

__all__ = [
    "MAX_SCENARIO_BYTES",
    "Scenario",
    "ScenarioError",
    "expand_flows",
    "parse_path",
    "parse_value",
    "read_scenario_text",
]

_SEGMENT = re.compile(r'\s*(?:"(?P<quoted>(?:[^"\\]|\\.)*)"|(?P<bare>[^.\[\]"]+))')
_INDEX = re.compile(r"\[(?P<index>\d+)\]")


def _scenario_error(
    message: str, path: str, expected: str | None = None, found: str | None = None
) -> ScenarioError:
    """A :class:`ScenarioError` raised by the Python layer, with the same attributes."""
    err = ScenarioError(message)
    err.kind = "invalid"
    err.path = path
    err.expected = expected
    err.found = found
    err.suggestion = None
    return err


MAX_SCENARIO_BYTES = 16 * 2**20
"""The largest scenario file read (a guard against reading a device or a huge file by
mistake; real scenarios are a few kilobytes)."""


def read_scenario_text(path: Path) -> str:
    """The text of the scenario file at ``path``.

    Raises:
        OSError: if it cannot be read.
        ValueError: if it is not a regular file, is larger than :data:`MAX_SCENARIO_BYTES`,
            or is not UTF-8 text.
    """
    if not path.is_file():
        if not path.exists():
            raise FileNotFoundError(2, "No such file or directory", str(path))
        raise ValueError(f"{path}: not a scenario file (a regular TOML file is expected)")
    size = path.stat().st_size
    if size > MAX_SCENARIO_BYTES:
        raise ValueError(
            f"{path}: {size} bytes, larger than a scenario file may be "
            f"({MAX_SCENARIO_BYTES // 2**20} MiB)"
        )
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a text file (UTF-8 TOML expected)") from None


def expand_flows(tables: Sequence[Mapping[str, Any]]) -> list[tuple[Mapping[str, Any], str]]:
    """Each flow's ``[[flows]]`` table and its path, in result order (``count`` expanded).

    Results hold one row per flow after ``count`` expansion; this says which table each row
    came from, for reading the keys the results do not carry.

    >>> [path for _, path in expand_flows([{"kind": "tcp", "count": 2}, {"kind": "tfrc"}])]
    ['flows[0]', 'flows[0]', 'flows[1]']
    """
    out: list[tuple[Mapping[str, Any], str]] = []
    for i, table in enumerate(tables):
        for _ in range(int(table.get("count", 1))):
            out.append((table, f"flows[{i}]"))
    return out


def parse_path(path: str) -> list[str | int]:
    """Split a dotted path into keys (str) and array indices (int).

    >>> parse_path("topology.bottleneck.rate")
    ['topology', 'bottleneck', 'rate']
    >>> parse_path("flows.0.rate")
    ['flows', 0, 'rate']
    >>> parse_path('flows[1]."odd.key"')
    ['flows', 1, 'odd.key']

    Raises:
        ScenarioError: if the path is empty or malformed.
    """
    parts: list[str | int] = []
    rest = path.strip()
    expect_segment = True
    while rest:
        if expect_segment:
            match = _SEGMENT.match(rest)
            if match is None:
                break
            quoted = match.group("quoted")
            if quoted is not None:
                parts.append(quoted.replace('\\"', '"').replace("\\\\", "\\"))
            else:
                bare = match.group("bare").strip()
                parts.append(int(bare) if bare.isdigit() else bare)
            rest = rest[match.end() :]
            expect_segment = False
            continue
        index = _INDEX.match(rest)
        if index is not None:
            parts.append(int(index.group("index")))
            rest = rest[index.end() :]
        elif rest.startswith("."):
            rest = rest[1:]
            expect_segment = True
        else:
            break
    if not parts or rest or expect_segment:
        raise _scenario_error(
            f"{path!r}: not a path; expected keys separated by dots, like "
            "topology.bottleneck.rate or flows.0.rate",
            path,
            expected="a dotted path",
            found=repr(path),
        )
    return parts


def parse_value(text: str) -> Any:
    """Read a ``--set`` value: a TOML value if it is one, else the text as a string.

    >>> parse_value("30Mbps")
    '30Mbps'
    >>> parse_value("100")
    100
    >>> parse_value("true")
    True
    >>> parse_value('{ uniform = ["1ms", "3ms"] }')
    {'uniform': ['1ms', '3ms']}

    Raises:
        ValueError: if the text holds a line break (one value is one line; anything after the
            break would otherwise be read as more TOML, or lost).
    """
    if "\n" in text or "\r" in text:
        raise ValueError(f"{text!r}: a value must be on one line")
    try:
        return tomllib.loads(f"value = {text}")["value"]
    except tomllib.TOMLDecodeError:
        return text


def _format_path(parts: list[str | int]) -> str:
    """A path as netsim writes it in messages: ``flows[0].rate``."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            key = part if re.fullmatch(r"[A-Za-z0-9_-]+", part) else f'"{part}"'
            out += f".{key}" if out else key
    return out


def _set(document: dict[str, Any], parts: list[str | int], value: Any) -> None:
    """Set ``value`` at ``parts`` in ``document`` (in place), creating missing tables."""
    node: Any = document
    for depth, part in enumerate(parts):
        last = depth == len(parts) - 1
        where = _format_path(parts[: depth + 1])
        if isinstance(part, int):
            if not isinstance(node, list):
                raise _scenario_error(
                    f"{where}: {_format_path(parts[:depth]) or '(top level)'} is not an array",
                    where,
                    expected="an array",
                )
            if part >= len(node):
                raise _scenario_error(
                    f"{where}: no such item; the array has {len(node)} item(s) in the file",
                    where,
                    expected=f"an index below {len(node)}",
                    found=str(part),
                )
        elif not isinstance(node, dict):
            parent = _format_path(parts[:depth]) or "(top level)"
            raise _scenario_error(
                f"{where}: {parent} is not a table, so it has no key {part!r}",
                where,
                expected="a path through tables",
            )
        if last:
            node[part] = value
        elif isinstance(node, dict) and part not in node:
            node[part] = {}
            node = node[part]
        else:
            node = node[part]


def _link_text(link: Mapping[str, Any]) -> str:
    """A link's rate, delay and queue discipline as written (``10Mbps 10ms droptail``)."""
    queue = link.get("queue")
    kind = queue.get("kind", "droptail") if isinstance(queue, Mapping) else "droptail"
    return f"{link.get('rate', '?')} {link.get('delay', '?')} {kind}"


def _topology_text(topology: Mapping[str, Any]) -> str:
    """The topology in a few words, as written (for :meth:`Scenario.__repr__`)."""
    kind = topology.get("kind", "?")
    if kind == "dumbbell":
        if "hosts" in topology:
            hosts = f"{topology['hosts']} hosts"
        else:
            hosts = f"{topology.get('left_hosts')}+{topology.get('right_hosts')} hosts"
        return f"dumbbell of {hosts}, bottleneck {_link_text(topology.get('bottleneck', {}))}"
    if kind == "parking_lot":
        hops = topology.get("hops")
        return f"parking lot of {hops} hops, each {_link_text(topology.get('hop', {}))}"
    nodes, links = len(topology.get("nodes", [])), len(topology.get("links", []))
    return f"{kind} of {nodes} nodes and {links} links"


def _named_controllers(tables: dict[str, Any]) -> dict[str, Any]:
    """``tables`` with each flow's ``controller`` class replaced by its name.

    The class is registered (:func:`tfrclab.controllers.register`) so that netsim finds it.
    """
    flows = tables.get("flows")
    if isinstance(flows, list) and any(
        isinstance(flow, dict) and isinstance(flow.get("controller"), type) for flow in flows
    ):
        from tfrclab.controllers import register

        for flow in flows:
            if isinstance(flow, dict) and isinstance(flow.get("controller"), type):
                flow["controller"] = register(flow["controller"])
    return tables


@dataclass(frozen=True)
class Scenario:
    """A checked scenario: its tables, and the TOML text the simulator reads.

    Build one with :meth:`load`, :meth:`from_toml` or :meth:`from_dict`; each checks the
    scenario with netsim and raises :class:`ScenarioError` naming the field at fault.

    >>> s = Scenario.from_dict({
    ...     "duration": "2s",
    ...     "topology": {"kind": "dumbbell", "hosts": 1,
    ...                  "bottleneck": {"rate": "10Mbps", "delay": "10ms"}},
    ...     "flows": [{"kind": "cbr", "rate": "1Mbps"}],
    ... })
    >>> s.duration_s, s.seed, s.flow_names
    (2.0, 1, ['cbr0'])
    >>> s.with_(**{"bottleneck.rate": "30Mbps"}).get("topology.bottleneck.rate")
    '30Mbps'
    """

    tables: Mapping[str, Any]
    """The scenario's tables as plain Python values (treat as read-only)."""
    toml: str
    """The TOML text the simulator reads (the file's own text when loaded unchanged)."""
    source: str = "<dict>"
    """Where the scenario came from (a file path, or ``<dict>``)."""
    _info: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def __repr__(self) -> str:
        """One line: name, source, length, seed, window, topology and flows, as written.

        >>> Scenario.from_dict({
        ...     "name": "small", "duration": "2s", "measure": {"from": "500ms"},
        ...     "topology": {"kind": "dumbbell", "hosts": 2,
        ...                  "bottleneck": {"rate": "10Mbps", "delay": "10ms"}},
        ...     "flows": [{"kind": "tcp", "variant": "reno", "count": 2},
        ...               {"kind": "tfrc", "preset": "floyd2000"}],
        ... })
        <Scenario 'small' (<dict>): 2s, seed 1, window 500ms-2s; dumbbell of 2 hosts, bottleneck 10Mbps 10ms droptail; 3 flows: 2 tcp/reno, 1 tfrc (floyd2000)>
        """  # noqa: E501
        return f"<Scenario {self.name!r} ({self.source}): {self._headline()}>"

    def _repr_html_(self) -> str:
        """For notebooks: the headline, one row per ``[[flows]]`` table, and the TOML folded."""
        from html import escape

        from tfrclab.sweep import written

        keys = ("count", "name", "kind", "variant", "preset", "start", "stop")
        rows = "".join(
            "<tr>"
            + "".join(
                f"<td>{escape(written(table[key])) if key in table else default}</td>"
                for key, default in zip(keys, ("1", "", "", "", "", "0s", ""), strict=True)
            )
            + "</tr>"
            for table in self.tables.get("flows", [])
        )
        head = "".join(f"<th>{key}</th>" for key in keys)
        description = self.tables.get("description")
        return (
            f"<p><b>{escape(self.name or 'scenario')}</b> ({escape(self.source)})"
            + (f": {escape(str(description))}" if description else "")
            + f"</p><p>{escape(self._headline())}</p>"
            + (f"<table><tr>{head}</tr>{rows}</table>" if rows else "")
            + "<details><summary>TOML</summary>"
            + f"<pre>{escape(self.toml)}</pre></details>"
        )

    def _headline(self) -> str:
        """Length, seed, window, topology and flows, with values as the file writes them."""
        from tfrclab.units import format_duration

        parts = [format_duration(self.duration_s), f"seed {self.seed}"]
        if "measure" in self.tables:
            parts.append("window " + "-".join(format_duration(t) for t in self.measure_s))
        text = ", ".join(parts) + "; " + _topology_text(self.tables.get("topology", {}))
        counts: dict[str, int] = {}
        for table, _ in expand_flows(self.tables.get("flows", [])):
            label = str(table["kind"]) + (f"/{table['variant']}" if "variant" in table else "")
            if "preset" in table:
                label += f" ({table['preset']})"
            counts[label] = counts.get(label, 0) + 1
        shown = ", ".join(f"{n} {label}" for label, n in counts.items())
        return text + f"; {sum(counts.values())} flows" + (f": {shown}" if shown else "")

    @classmethod
    def load(cls, path: str | Path) -> Scenario:
        """Read and check the scenario file at ``path``.

        Raises:
            OSError: if the file cannot be read.
            ValueError: if it is not a regular file, too large, or not UTF-8 text.
            ScenarioError: if netsim refuses it (malformed TOML, unknown key, bad value).
        """
        path = Path(path)
        text = read_scenario_text(path)
        if "controller" in text:
            # A Python controller's module may sit beside the scenario file.
            from tfrclab.controllers import add_search_dir

            add_search_dir(path.parent)
        return cls.from_toml(text, source=str(path))

    @classmethod
    def from_toml(cls, text: str, source: str = "<string>") -> Scenario:
        """Check scenario TOML text; the text itself is what the simulator will read."""
        info = _native.check_scenario(text)
        try:
            tables = tomllib.loads(text)
        except tomllib.TOMLDecodeError as err:  # pragma: no cover - netsim refuses it first
            raise _scenario_error(f"invalid TOML: {err}", "", expected="TOML") from None
        return cls(tables=tables, toml=text, source=source, _info=info)

    @classmethod
    def from_dict(cls, tables: Mapping[str, Any], source: str = "<dict>") -> Scenario:
        """Check a scenario given as nested dicts and lists (the TOML document's tables)."""
        tables = _named_controllers(copy.deepcopy(dict(tables)))
        try:
            import tomli_w  # here only: a run of a file as it is (no --set) never writes TOML

            text = tomli_w.dumps(tables)
        except (TypeError, ValueError) as err:
            raise _scenario_error(
                f"(top level): cannot be written as TOML: {err}", "", expected="TOML values"
            ) from None
        info = _native.check_scenario(text)
        return cls(tables=tables, toml=text, source=source, _info=info)

    def to_dict(self) -> dict[str, Any]:
        """A deep copy of the tables, free to change."""
        return copy.deepcopy(dict(self.tables))

    def resolve(self, path: str) -> list[str | int]:
        """The keys and indices ``path`` names (see the module documentation)."""
        parts = parse_path(path)
        first = parts[0]
        topology = self.tables.get("topology")
        if (
            isinstance(first, str)
            and first not in self.tables
            and isinstance(topology, dict)
            and first in topology
        ):
            parts = ["topology", *parts]
        return parts

    def get(self, path: str) -> Any:
        """The value at ``path``.

        Raises:
            KeyError: if there is none.
        """
        node: Any = self.tables
        for part in self.resolve(path):
            try:
                node = node[part]
            except (KeyError, IndexError, TypeError):
                raise KeyError(path) from None
        return node

    def with_(self, **changes: Any) -> Scenario:
        """A copy with the values at the given paths replaced, checked by netsim.

        Paths are the keyword names (``scenario.with_(duration="10s")``; use
        ``**{"topology.bottleneck.rate": "30Mbps"}`` for dotted paths).

        Raises:
            ScenarioError: if a path is malformed or leads nowhere, or netsim refuses the
                result (an unknown key, an impossible value), naming the field.
        """
        tables = self.to_dict()
        for path, value in changes.items():
            _set(tables, self.resolve(path), copy.deepcopy(value))
        return Scenario.from_dict(tables, source=self.source)

    @property
    def name(self) -> str:
        """The scenario's ``name`` (may be empty)."""
        return str(self._info["name"])

    @property
    def duration_s(self) -> float:
        """Simulated time to run, in seconds."""
        return int(self._info["duration_ns"]) / 1e9

    @property
    def measure_s(self) -> tuple[float, float]:
        """The measurement window ``[measure] (from, to)`` in seconds (the whole run if unset)."""
        return int(self._info["measure_from_ns"]) / 1e9, int(self._info["measure_to_ns"]) / 1e9

    @property
    def bin_s(self) -> float:
        """Width of the monitors' bins, in seconds."""
        return int(self._info["bin_ns"]) / 1e9

    @property
    def seed(self) -> int:
        """The scenario's own seed (used when a run is given none)."""
        return int(self._info["seed"])

    @property
    def flow_names(self) -> list[str]:
        """The flows' names, ``count`` expanded, in scenario order."""
        return [str(name) for name in self._info["flow_names"]]
