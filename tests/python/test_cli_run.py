"""``tfrclab run``, ``plot`` and ``summary``.

The tables, the --json contract, output files and one-line errors with exit status 2.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import tfrclab
from conftest import REPO_ROOT, SMALL_SCENARIO, run_cli
from tfrclab.cli import main

DUMBBELL = REPO_ROOT / "scenarios" / "examples" / "dumbbell.toml"

# The --json contract of issue 6: these keys with these types (more keys are allowed).
TOP = {
    "version": str,
    "seed": int,
    "sim_seconds": float,
    "wall_seconds": float,
    "events": int,
    "flows": list,
    "links": list,
}
FLOW = {
    "id": int,
    "name": str,
    "kind": str,
    "variant": str,
    "throughput_bits_per_s": float,
    "packets_sent": int,
    "packet_loss_rate": float,
    "loss_event_rate": float,
}
LINK = {"name": str, "utilization": float, "drop_rate": float, "mean_queue_packets": float}


def check_contract(obj: dict[str, Any]) -> None:
    """Validate a ``run --json`` object against the contract."""
    for schema, value in (
        [(TOP, obj)] + [(FLOW, f) for f in obj["flows"]] + [(LINK, link) for link in obj["links"]]
    ):
        assert isinstance(value, dict)
        for key, kind in schema.items():
            assert key in value, f"missing {key}"
            assert isinstance(value[key], kind), f"{key}: {type(value[key])} is not {kind}"
            if kind is int:
                assert not isinstance(value[key], bool)
    for flow in obj["flows"]:
        assert 0.0 <= flow["packet_loss_rate"] <= 1.0
        assert 0.0 <= flow["loss_event_rate"] <= flow["packet_loss_rate"]
        assert flow["throughput_bits_per_s"] >= 0
    for link in obj["links"]:
        assert 0.0 <= link["utilization"] <= 1.0
        assert 0.0 <= link["drop_rate"] <= 1.0


@pytest.fixture(scope="module")
def small_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("scenario") / "small.toml"
    path.write_text(SMALL_SCENARIO)
    return path


def test_run_json_subprocess_is_exactly_one_object(small_file: Path) -> None:
    result = run_cli("run", str(small_file), "--seed", "4", "--json")
    assert result.returncode == 0, result.stderr
    obj = json.loads(result.stdout)  # the whole of stdout is one JSON document
    check_contract(obj)
    assert obj["seed"] == 4
    assert obj["sim_seconds"] == 3.0
    assert obj["version"] == tfrclab.__version__
    assert [f["name"] for f in obj["flows"]] == ["cbr0", "cbr1"]
    assert [f["id"] for f in obj["flows"]] == [0, 1]
    # The loop's CPU time (one thread: at most its wall time) and the set-up's, for
    # scripts/bench_peers.py.
    assert 0.0 < obj["cpu_seconds"] <= obj["wall_seconds"] + 1e-3
    assert 0.0 < obj["setup_cpu_seconds"] < 10.0
    # The numbers are the API's.
    api = tfrclab.run(tfrclab.Scenario.load(small_file), seed=4)
    assert obj["events"] == api.info.events
    assert [f["packets_sent"] for f in obj["flows"]] == list(api.flows["packets_sent"])


def test_run_json_of_the_example_dumbbell(capsys: pytest.CaptureFixture[str]) -> None:
    # The example measures from 20 s: a 5 s run must move the window too, or it is refused.
    assert main(["run", str(DUMBBELL), "--json", "--set", "duration=5s"]) == 2
    assert "measure.from" in capsys.readouterr().err
    args = ["run", str(DUMBBELL), "--json", "--set", "duration=5s", "--measure-from", "2s"]
    assert main(args) == 0
    obj = json.loads(capsys.readouterr().out)
    check_contract(obj)
    assert obj["window"] == {"from_s": 2.0, "to_s": 5.0}
    assert len(obj["flows"]) == 16
    assert {link["name"] for link in obj["links"]} >= {"bottleneck", "bottleneck_reverse"}


def test_run_writes_tables_parquet_and_figures(
    small_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    assert main(["run", str(small_file), "--out", str(out), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "cbr0" in text
    assert "bottleneck" in text
    assert f"figure: {out / 'rates.png'}" in text
    assert f"figure: {out / 'queue.png'}" in text
    for name in ("rates.png", "queue.png", "flows.parquet", "run.json", "scenario.toml"):
        assert (out / name).stat().st_size > 0
    assert (out / "rates.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    back = tfrclab.Result.from_parquet(out)
    assert back.equals(tfrclab.run(tfrclab.Scenario.load(small_file)))
    assert (out / "scenario.toml").read_text() == SMALL_SCENARIO

    # plot and summary read the directory back.
    (out / "rates.png").unlink()
    assert main(["plot", str(out)]) == 0
    assert (out / "rates.png").exists()
    assert main(["summary", str(out)]) == 0
    assert "cbr1" in capsys.readouterr().out
    assert main(["summary", str(out), "--json"]) == 0
    check_contract(json.loads(capsys.readouterr().out))


def test_set_changes_the_run(small_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(small_file), "--json", "--set", "duration=1s"]) == 0
    assert json.loads(capsys.readouterr().out)["sim_seconds"] == 1.0
    assert main(["run", str(small_file), "--json"]) == 0
    before = json.loads(capsys.readouterr().out)["flows"]
    # flows.0 is the first [[flows]] table: its count = 2 flows both change.
    assert main(["run", str(small_file), "--json", "--set", "flows.0.rate=100kbps"]) == 0
    after = json.loads(capsys.readouterr().out)["flows"]
    for b, a in zip(before, after, strict=True):
        assert a["packets_sent"] < b["packets_sent"] / 5


@pytest.mark.parametrize(
    ("args", "message"),
    [
        # An unknown --set path: netsim names it and suggests the known key.
        (["--set", "topology.bottleneck.rtae=3Mbps"], "topology.bottleneck.rtae: unknown key"),
        (["--set", "flows.7.rate=1Mbps"], "flows[7]: no such item"),
        (["--set", "duration.seconds=3"], "duration.seconds: duration is not a table"),
        # Impossible values.
        (["--set", "bottleneck.rate=-3Mbps"], "topology.bottleneck.rate: expected"),
        (["--set", "losses.0.p=1.5"], "losses[0]"),
        (["--set", "duration=0s"], "duration: expected a duration above 0"),
        (["--set", "flows.0.kind=warp"], "flows[0].kind"),
        # Malformed arguments.
        (["--set", "no-equals-sign"], "expected PATH=VALUE"),
        (["--seed", "-1"], "invalid seed"),
    ],
)
def test_bad_input_is_one_line_exit_2(small_file: Path, args: list[str], message: str) -> None:
    result = run_cli("run", str(small_file), *args)
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("tfrclab run: error: ")
    assert message in lines[0]
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('duration = "1s"\n[topology\n', "invalid TOML: line 2"),
        ('duration = "1s"\n', "topology: missing"),
        (SMALL_SCENARIO.replace('rate = "2Mbps"', 'rate = "2 Mbit"'), "topology.bottleneck.rate"),
        (SMALL_SCENARIO.replace("hosts = 2", "hosts = 2\nhost = 3"), "topology.host: unknown"),
    ],
)
def test_malformed_scenarios_exit_2(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    result = run_cli("run", str(path))
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_missing_files_and_directories(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(tmp_path / "nowhere.toml")]) == 2
    assert "cannot read the scenario file" in capsys.readouterr().err
    assert main(["plot", str(tmp_path)]) == 2
    assert "neither a complete run directory" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["flows", "flow_bins", "link_bins", "flow_states"])
def test_a_run_file_that_does_not_match_the_others_is_named(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import pyarrow.parquet as pq

    scenario, out = tmp_path / "small.toml", tmp_path / "run"
    scenario.write_text(SMALL_SCENARIO)
    assert main(["run", str(scenario), "--quiet", "--out", str(out)]) == 0
    path = out / f"{name}.parquet"
    table = pq.read_table(path)
    pq.write_table(table.slice(0, table.num_rows - 1), path)
    capsys.readouterr()
    assert main(["summary", str(out)]) == 2
    err = capsys.readouterr().err
    named = "flow_bins" if name == "flows" else name  # the rows that no longer fit
    assert f"{out / named}.parquet: " in err, err


def test_a_malformed_sweep_manifest_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tfrclab import sweep

    manifest = {"format": sweep.FORMAT_VERSION, "scenario": SMALL_SCENARIO, "vary": 5, "seeds": [1]}
    (tmp_path / "sweep.json").write_text(json.dumps(manifest))
    assert main(["summary", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'sweep.json'}: malformed axes or seeds" in err, err


def test_invalid_toml_names_the_scenario_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "broken.toml"
    path.write_text("duration = \n")
    assert main(["run", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"tfrclab run: error: {path}: invalid TOML"), err


def test_a_missing_run_file_is_named_as_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario, out = tmp_path / "small.toml", tmp_path / "run"
    scenario.write_text(SMALL_SCENARIO)
    assert main(["run", str(scenario), "--quiet", "--out", str(out)]) == 0
    (out / "link_bins.parquet").unlink()
    capsys.readouterr()
    assert main(["summary", str(out)]) == 1
    err = capsys.readouterr().err
    assert "missing: not a complete run directory" in err, err
    assert str(out / "link_bins.parquet") in err
