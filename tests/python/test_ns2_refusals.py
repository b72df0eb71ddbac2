"""``export ns2`` lists every part of a scenario ns-2.35 cannot run, at once, by its keys."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tfrclab.cli import main
from tfrclab.ns2 import ExportError, export_tcl, resolve
from tfrclab.scenario import Scenario


def _scenario(flows: list[dict[str, Any]], **extra: Any) -> Scenario:
    tables: dict[str, Any] = {
        "duration": "2s",
        "monitor": {"bin": "100ms"},
        "topology": {
            "kind": "dumbbell",
            "hosts": 4,
            "bottleneck": {
                "rate": "10Mbps",
                "delay": "10ms",
                "queue": {"kind": "red", "min_th": 0, "max_th": 15},
            },
        },
        "flows": flows,
    }
    tables.update(extra)
    return Scenario.from_dict(tables)


FLOWS: list[dict[str, Any]] = [
    {"kind": "tcp", "variant": "reno", "preset": "ns2_2000"},
    {"kind": "tcp", "variant": "cubic", "preset": "linux", "count": 2},
    {"kind": "tfrc", "preset": "floyd2000", "rate_scale": 2, "rto": "four_r"},
    {"kind": "cbr", "rate": "1Mbps", "host_jitter": "1ms"},
]
EXPECTED = [
    "topology.bottleneck.queue.min_th: 0",
    "flows[1].preset: 'linux'",
    "flows[1].variant: 'cubic'",
    "flows[2].rate_scale",
    "flows[2].rto",
    "flows[3].host_jitter",
]


def test_every_refusal_is_listed_once_in_the_keys_written() -> None:
    with pytest.raises(ExportError) as caught:
        export_tcl(resolve(_scenario(FLOWS)))
    refusals = caught.value.refusals
    assert len(refusals) == len(EXPECTED)
    for refusal, start in zip(refusals, EXPECTED, strict=True):
        assert refusal.startswith(start)
    # The count-expanded flows (flows[1] twice) are listed once.
    assert str(caught.value).startswith("ns-2.35 cannot run 6 parts of the scenario: ")


def test_one_refusal_reads_as_before() -> None:
    flows = [{"kind": "tcp", "variant": "cubic", "preset": "ns2_35"}]
    tables = _scenario(flows).to_dict()
    del tables["topology"]["bottleneck"]["queue"]
    with pytest.raises(ExportError) as caught:
        export_tcl(resolve(Scenario.from_dict(tables)))
    assert str(caught.value).startswith("flows[0].variant: 'cubic' has no ns-2.35 export")


def test_routing_refusals_join_the_exporters() -> None:
    link = {"rate": "10Mbps", "delay": "1ms"}
    square = Scenario.from_dict(
        {
            "duration": "1s",
            "topology": {
                "kind": "graph",
                "nodes": ["a", "b", "c", "d", "host"],
                "links": [
                    {"from": "a", "to": "b", **link},
                    {"from": "b", "to": "c", **link},
                    {"from": "a", "to": "d", **link},
                    {"from": "d", "to": "c", **link},
                    {"from": "host", "to": "a", **link},
                ],
            },
            "flows": [
                {"kind": "cbr", "rate": "1Mbps", "from": "host", "to": "c"},
                {"kind": "tear", "from": "host", "to": "b"},
            ],
        }
    )
    with pytest.raises(ExportError, match="several shortest paths"):
        resolve(square)  # strict: the routing alone
    plan = resolve(square, strict=False)
    assert len(plan.refusals) == 1
    with pytest.raises(ExportError) as caught:
        export_tcl(plan)
    assert [r.split(":")[0] for r in caught.value.refusals] == ["topology", "flows[1].kind"]


def test_schedule_steps_are_each_checked() -> None:
    steps = [
        {"at": "0s", "kind": "gilbert_elliott", "p_good_to_bad": 0.1, "p_bad_to_good": 0.5},
        {"at": "1s", "kind": "bernoulli", "p": 0.01},
        {"at": "1.5s", "kind": "gilbert_elliott", "p_good_to_bad": 0.1, "p_bad_to_good": 0.5},
    ]
    losses = [{"link": "bottleneck", "kind": "schedule", "steps": steps}]
    flows = [{"kind": "cbr", "rate": "1Mbps"}]
    tables = _scenario(flows, losses=losses).to_dict()
    del tables["topology"]["bottleneck"]["queue"]
    with pytest.raises(ExportError) as caught:
        export_tcl(resolve(Scenario.from_dict(tables)))
    paths = [r.split(":")[0] for r in caught.value.refusals]
    assert "losses[0].steps[0].kind" in paths
    assert "losses[0].steps[2].kind" in paths


def test_cli_lists_them_all_on_one_line_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "many.toml"
    path.write_text(_scenario(FLOWS).toml, encoding="utf-8")
    assert main(["export", "ns2", str(path), "-o", str(tmp_path / "x.tcl")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    for start in EXPECTED:
        assert start in err
    assert not (tmp_path / "x.tcl").exists()
