"""Scenario: loading, checking, dotted-path changes, and errors that name the field."""

from __future__ import annotations

import pytest

import tfrclab
from conftest import REPO_ROOT, SMALL_SCENARIO, small_scenario_dict
from tfrclab import Scenario, ScenarioError
from tfrclab.scenario import parse_path, parse_value

DUMBBELL = REPO_ROOT / "scenarios" / "examples" / "dumbbell.toml"


def test_load_keeps_the_file_text_and_reads_headline_values() -> None:
    s = Scenario.load(DUMBBELL)
    assert s.toml == DUMBBELL.read_text()
    assert s.name == "dumbbell"
    assert s.duration_s == 60.0
    assert s.bin_s == 0.1
    assert s.seed == 1
    assert len(s.flow_names) == 16
    assert s.get("topology.bottleneck.rate") == "15Mbps"
    assert s.source == str(DUMBBELL)


def test_from_dict_and_from_toml_agree() -> None:
    a = Scenario.from_toml(SMALL_SCENARIO)
    b = Scenario.from_dict(small_scenario_dict())
    assert a.tables == b.tables
    assert a.flow_names == b.flow_names == ["cbr0", "cbr1"]


def test_with_sets_nested_keys_array_items_and_the_topology_shorthand() -> None:
    s = Scenario.from_toml(SMALL_SCENARIO)
    t = s.with_(
        **{
            "topology.bottleneck.rate": "3Mbps",
            "flows.0.rate": "500kbps",
            "losses[0].p": 0.05,
            "access.rate": "50Mbps",
            "monitor.bin": "50ms",
        }
    )
    assert t.get("topology.bottleneck.rate") == "3Mbps"
    assert t.get("flows[0].rate") == "500kbps"
    assert t.get("losses.0.p") == 0.05
    assert t.get("topology.access.rate") == "50Mbps"
    assert t.bin_s == 0.05
    # The original is unchanged.
    assert s.get("topology.bottleneck.rate") == "2Mbps"
    assert s.bin_s == 0.1


def test_with_creates_missing_tables() -> None:
    tables = small_scenario_dict()
    del tables["monitor"]
    s = Scenario.from_dict(tables)
    assert s.with_(**{"monitor.bin": "20ms"}).bin_s == 0.02


def test_unknown_key_is_refused_by_netsim_with_a_suggestion() -> None:
    s = Scenario.from_toml(SMALL_SCENARIO)
    with pytest.raises(ScenarioError) as info:
        s.with_(**{"topology.bottleneck.rtae": "3Mbps"})
    err = info.value
    assert err.path == "topology.bottleneck.rtae"
    assert err.kind == "unknown_key"
    assert err.suggestion == "rate"
    assert str(err).startswith("topology.bottleneck.rtae: unknown key")


def test_impossible_value_names_the_field() -> None:
    s = Scenario.from_toml(SMALL_SCENARIO)
    with pytest.raises(ScenarioError) as info:
        s.with_(**{"bottleneck.rate": "fast"})
    assert info.value.path == "topology.bottleneck.rate"
    assert info.value.found == '"fast"'
    assert info.value.expected is not None
    with pytest.raises(ScenarioError, match=r"losses\[0\]"):
        s.with_(**{"losses.0.p": 1.5})


@pytest.mark.parametrize(
    ("path", "where"),
    [
        ("flows.5.rate", "flows[5]"),
        ("duration.x", "duration.x"),
        ("flows.x", "flows.x"),
    ],
)
def test_paths_that_lead_nowhere(path: str, where: str) -> None:
    s = Scenario.from_toml(SMALL_SCENARIO)
    with pytest.raises(ScenarioError) as info:
        s.with_(**{path: 1})
    assert info.value.path == where
    assert str(info.value).startswith(where)


def test_malformed_scenarios() -> None:
    with pytest.raises(ScenarioError) as info:
        Scenario.from_toml("duration = ")
    assert info.value.kind == "syntax"
    assert info.value.path is None
    with pytest.raises(ScenarioError) as info:
        Scenario.from_toml('duration = "1s"')
    assert info.value.kind == "missing"
    assert info.value.path == "topology"
    with pytest.raises(ScenarioError, match="flows"):
        Scenario.from_dict({**small_scenario_dict(), "flows": [{"kind": "warp"}]})


def test_scenario_error_is_a_value_error_exported_at_top_level() -> None:
    assert issubclass(tfrclab.ScenarioError, ValueError)
    assert tfrclab.ScenarioError is ScenarioError


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("a", ["a"]),
        ("a.b.c", ["a", "b", "c"]),
        ("flows.0.rate", ["flows", 0, "rate"]),
        ("flows[12].rate", ["flows", 12, "rate"]),
        ('x."a.b"[3]', ["x", "a.b", 3]),
    ],
)
def test_parse_path(text: str, parts: list[str | int]) -> None:
    assert parse_path(text) == parts


@pytest.mark.parametrize("text", ["", ".", "a.", "a..b", "a[x]", "a[1"])
def test_parse_path_refuses_malformed_paths(text: str) -> None:
    with pytest.raises(ScenarioError):
        parse_path(text)


def test_parse_value() -> None:
    assert parse_value("15Mbps") == "15Mbps"
    assert parse_value('"15Mbps"') == "15Mbps"
    assert parse_value("0.5") == 0.5
    assert parse_value("[1, 2]") == [1, 2]
    assert parse_value("false") is False
