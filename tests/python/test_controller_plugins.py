"""Native controller plugins from Python (docs/controllers.md, "Native plugins").

The example plugins (crates/controller-template, crates/controller-delay) are built with cargo
and named as ``controller = "native:PATH"``. Each gives its Python twin's results
(``tfrclab.controllers.gaimd``, ``tfrclab.controllers.delay``) bit for bit; a user controller,
Python or native, goes through ``tfrclab evaluate``; sweep workers load a plugin, found beside
the scenario file by a relative path as in this process; a panicking
plugin ends the run with a ``ControllerError`` naming it, and a missing one is refused with the
scenario.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from test_controllers import measured, path_with
from test_evaluate import TINY
from tfrclab import ControllerError, Scenario, ScenarioError, sweep
from tfrclab.cli import main
from tfrclab.evaluate import battery
from tfrclab.evaluate.criteria import CRITERIA
from tfrclab.simulate import run

ROOT = Path(__file__).resolve().parents[2]
#: Where the plugins are built (the target directory crates/netsim/tests/controller_plugin.rs
#: uses too, apart from cargo test's own so that neither waits on the other's lock).
TARGET = ROOT / "target" / "controller-plugins" / "plain"


@pytest.fixture(scope="module")
def plugins() -> Path:
    """The debug build directory of the example and fixture plugins, built first."""
    if shutil.which("cargo") is None:
        pytest.skip("the plugins need cargo")
    packages = ["controller-template", "controller-delay", "controller-misbehave"]
    subprocess.run(
        ["cargo", "build", "--quiet", "--locked", "--target-dir", str(TARGET)]
        + [arg for p in packages for arg in ("-p", p)],
        cwd=ROOT, check=True, capture_output=True, timeout=600,
    )  # fmt: skip
    return TARGET / "debug"


def native(plugins: Path, name: str, params: str = "") -> str:
    """The ``controller`` value of plugin library ``name`` with ``params``."""
    return f"native:{plugins / f'lib{name}.so'}{params}"


def same(a: object, b: object) -> None:
    """Both runs measured exactly the same, every flow number and every per-bin series."""
    pd.testing.assert_frame_equal(measured(a), measured(b))
    for key, series in a.flow_bins.items():  # type: ignore[attr-defined]
        np.testing.assert_array_equal(series, b.flow_bins[key], err_msg=key)  # type: ignore[attr-defined]


@pytest.mark.parametrize(("cls", "params"), [("Gaimd", ""), ("GaimdPaper", "?rule=paper")])
def test_the_native_gaimd_gives_the_python_gaimd_results(
    plugins: Path, cls: str, params: str
) -> None:
    flow = 'kind = "tcp"\nvariant = "reno"\npreset = "ns2_2000"\nwindow = 100\n'
    python = run(
        Scenario.from_toml(path_with(f'{flow}controller = "tfrclab.controllers.gaimd:{cls}"'))
    )
    plugin = run(
        Scenario.from_toml(
            path_with(f'{flow}controller = "{native(plugins, "gaimd_controller", params)}"')
        )
    )
    assert int(python.flows.loc[0, "packets_sent"]) > 10_000
    same(python, plugin)


@pytest.mark.parametrize(("limit", "loss"), [(200, 0.0), (25, 0.01)])
def test_the_native_delay_based_controller_gives_the_python_results(
    plugins: Path, limit: int, loss: float
) -> None:
    def one(controller: str) -> object:
        flow = f'kind = "tcp"\nvariant = "newreno"\ncontroller = "{controller}"'
        return run(Scenario.from_toml(path_with(flow, duration="30s", limit=limit, loss=loss)))

    python = one("tfrclab.controllers.delay:DelayBased")
    plugin = one(native(plugins, "delay_controller"))
    assert int(python.flows.loc[0, "packets_sent"]) > 5_000  # type: ignore[attr-defined]
    same(python, plugin)


USER_CC = """\
class HalfReno:
    '''AIMD(0.5, 1/2): half Reno's growth.'''

    def cong_avoid(self, state, ack):
        if state.cwnd < state.ssthresh:
            return state.cwnd + ack.acked, state.ssthresh
        return state.cwnd + 0.5 * ack.acked / state.cwnd, state.ssthresh

    def ssthresh(self, state, reduction):
        half = max(state.win / 2, 2)
        return (half, half) if reduction == "recovery" else (1, half)
"""


@pytest.mark.parametrize("kind", ["python", "native"])
def test_a_user_controller_goes_through_evaluate(
    plugins: Path,
    kind: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(battery, "QUICK", TINY)
    if kind == "python":
        (tmp_path / "usercc.py").write_text(USER_CC, encoding="utf-8")
        monkeypatch.syspath_prepend(str(tmp_path))
        controller = "usercc:HalfReno"
    else:
        controller = native(plugins, "delay_controller", "?alpha=1&beta=3")
    algo = f"tcp:variant=newreno,controller={controller}"
    out = tmp_path / "card"
    started = time.perf_counter()
    assert main(["evaluate", algo, "--quick", "--quiet", "--out", str(out)]) == 0
    assert time.perf_counter() - started < 60
    assert f"{algo}:" in capsys.readouterr().out
    card = json.loads((out / "scorecard.json").read_text(encoding="utf-8"))
    assert card["algorithm"]["table"]["controller"] == controller
    assert {row["criterion"] for row in card["rows"]} == {c.id for c in CRITERIA}
    assert card["counts"]["meets"] > 0
    assert controller in (out / "scorecard.md").read_text(encoding="utf-8")


def test_a_panicking_plugin_ends_the_run_with_a_controller_error(
    plugins: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    controller = native(plugins, "misbehave_controller", "?fail=panic&after=50")
    text = path_with(f'kind = "tcp"\nvariant = "sack"\ncontroller = "{controller}"', duration="10s")
    with pytest.raises(ControllerError) as caught:
        run(Scenario.from_toml(text))
    message = str(caught.value)
    assert f'flow "f": congestion controller "{controller}" failed in cong_avoid at t = ' in message
    assert "panicked: cong_avoid blew up after 50 calls" in message
    path = tmp_path / "panics.toml"
    path.write_text(text, encoding="utf-8")
    assert main(["run", str(path), "--quiet"]) == 1
    assert "panicked: cong_avoid blew up" in capsys.readouterr().err


def test_a_missing_plugin_is_refused_with_the_scenario(tmp_path: Path) -> None:
    text = path_with(f'kind = "tcp"\ncontroller = "native:{tmp_path / "libnone.so"}"')
    with pytest.raises(ScenarioError) as caught:
        Scenario.from_toml(text)
    assert caught.value.path == "flows[0].controller"
    assert "no such file" in str(caught.value)


def test_a_relative_plugin_path_is_found_beside_the_scenario_file(
    plugins: Path, tmp_path: Path
) -> None:
    (tmp_path / "lib").mkdir()
    shutil.copy(plugins / "libdelay_controller.so", tmp_path / "lib")
    path = tmp_path / "relative.toml"
    flow = 'kind = "tcp"\nvariant = "newreno"\ncontroller = "native:lib/libdelay_controller.so"'
    path.write_text(path_with(flow, duration="5s"), encoding="utf-8")
    assert not (Path.cwd() / "lib" / "libdelay_controller.so").exists()
    relative = run(Scenario.load(path), seed=1)
    absolute = run(
        Scenario.from_toml(path.read_text().replace("native:lib/", f"native:{tmp_path}/lib/")),
        seed=1,
    )
    same(relative, absolute)
    missing = tmp_path / "missing.toml"
    missing.write_text(path_with('kind = "tcp"\ncontroller = "native:lib/libnone.so"'))
    with pytest.raises(ScenarioError) as caught:
        Scenario.load(missing)
    assert caught.value.path == "flows[0].controller"
    text = str(caught.value)
    assert f"{tmp_path} (a scenario file's directory)" in text, text
    assert f"nor in {Path.cwd()} (the current directory)" in text, text


def test_sweep_workers_load_the_plugin(plugins: Path, tmp_path: Path) -> None:
    path = tmp_path / "delay.toml"
    # Relative to the scenario's directory, which the workers must inherit.
    shutil.copy(plugins / "libdelay_controller.so", tmp_path)
    controller = "native:libdelay_controller.so"
    path.write_text(
        path_with(f'kind = "tcp"\nvariant = "newreno"\ncontroller = "{controller}"', duration="5s"),
        encoding="utf-8",
    )
    out = tmp_path / "sweep"
    argv = ["sweep", str(path), "--seeds", "1-2", "--jobs", "2", "--out", str(out), "--quiet"]
    assert main(argv) == 0
    runs = sweep.load(out)
    assert len(runs) == 2
    alone = run(Scenario.load(path), seed=1)
    # Each worker loaded the library and ran what a run in this process runs.
    first = runs[runs["seed"] == 1]
    assert int(first["packets_sent"].iloc[0]) == int(alone.flows.loc[0, "packets_sent"])
