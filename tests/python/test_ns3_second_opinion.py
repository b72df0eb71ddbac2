"""scripts/ns3_second_opinion.py: ns-3.37's TCP on the twin study's single-flow cells."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from conftest import load_script
from tfrclab.ns2.crosscheck import compare
from tfrclab.twin import TOLERANCES, decide


@pytest.fixture(scope="module")
def ns3() -> ModuleType:
    module: ModuleType = load_script("ns3_second_opinion")
    return module


def _cell(ns3: ModuleType, label: str) -> object:
    return dict(ns3.single_flow_cells("30s"))[label]


def test_the_cells_are_the_twin_studys_single_flows_under_droptail(ns3: ModuleType) -> None:
    labels = [label for label, _ in ns3.single_flow_cells("30s")]
    assert len(labels) == 12
    assert all("droptail" in label and "+" not in label for label in labels)
    args = ns3.cell_arguments(_cell(ns3, "20mbps-40ms:bbr/droptail-2bdp"))
    assert args == {
        "tcp": "bbr",
        "flows": 1,
        "rate": "20Mbps",
        "delay_ms": pytest.approx(20.0),
        "access_delay_ms": pytest.approx(0.1),
        "queue": 134,
        "duration": 30.0,
    }
    assert ns3.cell_arguments(_cell(ns3, "sack/droptail-0.5bdp"))["tcp"] == "reno"


def test_cells_ns3_cannot_run_are_refused_naming_why(ns3: ModuleType) -> None:
    sys_cells = dict(ns3.twin_cells("30s"))
    with pytest.raises(ValueError, match="queue: ns-3 runs droptail cells only, found red"):
        ns3.cell_arguments(sys_cells["cubic/red-2bdp"])
    with pytest.raises(ValueError, match="TCP flows of one variant"):
        ns3.cell_arguments(sys_cells["cubic+tfrc/droptail-2bdp"])


def test_a_runs_json_gives_the_twins_metrics(ns3: ModuleType) -> None:
    output = {
        "window_s": [5, 30],
        "arrivals": 2000,
        "drops": 10,
        "mean_queue": 12.5,
        "departed_bytes": [25_000_000, 37_500_000],
    }
    metrics = ns3.ns3_metrics(output, 20e6)
    assert metrics == {
        "throughput/tcp": pytest.approx(10e6),
        "utilization": pytest.approx(1.0),
        "drop_rate": pytest.approx(0.005),
        "mean_queue": 12.5,
    }


def test_ns3s_cubic_fills_the_link_as_netsims_does(ns3: ModuleType, tmp_path: Path) -> None:
    why = ns3.ns3_missing()
    if why is not None:
        pytest.skip(why)
    binary = ns3.build(tmp_path)
    assert ns3.build(tmp_path) == binary  # built once per source
    scenario = _cell(ns3, "20mbps-40ms:cubic/droptail-0.5bdp").with_(duration="12s")
    row = ns3.compare_cell(scenario, [1, 2], binary, None, start_s=4.0)
    runs = row["ns3"]
    for run in runs:
        assert 0.95 < run["utilization"] <= 1.001
        assert 0.0 < run["drop_rate"] < 0.01
        assert 0.0 < run["mean_queue"] <= 33
    utilization = row["comparisons"]["utilization"]
    assert utilization["ns3_vs_netsim"] == "agree"
    # The verdict is the twin's: a run far off would differ.
    far = compare("utilization", [0.5, 0.52], [1.0, 1.0], TOLERANCES["utilization"])
    assert decide(far, TOLERANCES["utilization"]) == "differ"


def test_the_table_prints_three_means_and_the_verdicts(ns3: ModuleType) -> None:
    rows = {
        "bbr/droptail-0.5bdp": {
            "comparisons": {
                "drop_rate": {
                    "netsim": 0.0,
                    "ns3": 0.00128,
                    "kernel": 0.0,
                    "ns3_vs_netsim": "inconclusive",
                    "ns3_vs_kernel": "differ",
                    "netsim_vs_kernel": "agree",
                },
                "mean_queue": {"netsim": 6.5, "ns3": 5.1, "ns3_vs_netsim": "agree"},
            }
        }
    }
    lines = ns3.table(rows).splitlines()
    assert lines[2] == "| bbr/droptail-0.5bdp | drop % | 0.000 | 0.128 | 0.000 | i | **D** | a |"
    assert lines[3] == "| bbr/droptail-0.5bdp | queue | 6.5 | 5.1 | - | a | - | - |"
