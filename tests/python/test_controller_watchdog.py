"""The watchdog of controller callbacks (docs/controllers.md, "Endless loops").

A controller callback that never returns ends the run, never hangs it: a Python one with
``tfrclab.ControllerError`` naming the controller, the callback, the simulated time and the
limit (through the API, ``tfrclab run`` and a parallel sweep); a Python one that will not stop
(it swallows the watchdog's exception, or sleeps in C) and a native plugin that never returns
end the process with exit status 3 and that error on stderr (a sweep's worker, which the
sweep then reports). Every such run is made in a subprocess with a timeout, so that a
regression fails here instead of hanging the suite.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from test_controller_plugins import native, plugins  # noqa: F401 (a fixture)
from test_controllers import measured, path_with
from tfrclab import Scenario, ScenarioError
from tfrclab.simulate import run

LOOPING = """\
import time


class Loops:
    def cong_avoid(self, state, ack):
        if state.now > 0.2:
            while True:
                pass
        return None

    def ssthresh(self, state, reduction):
        return None


class Swallows(Loops):
    def cong_avoid(self, state, ack):
        while state.now > 0.2:
            try:
                while True:
                    pass
            except BaseException:
                pass
        return None


class Sleeps(Loops):
    def cong_avoid(self, state, ack):
        if state.now > 0.2:
            time.sleep(600)
        return None


class Unmade(Loops):
    def __init__(self):
        while True:
            pass
"""

#: The watchdog's limit in these tests (seconds of wall time).
LIMIT = 0.5
#: Longest any of these subprocesses may take before the test fails as a hang: the
#: interpreter's start and the scenario's load on a loaded machine, plus the limit.
TIMEOUT = 120


@pytest.fixture(scope="module")
def looping(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory with the looping controllers' module."""
    directory = tmp_path_factory.mktemp("watchdog")
    (directory / "loopcc.py").write_text(LOOPING)
    return directory


def scenario(directory: Path, controller: str, limit: str = f'"{LIMIT}s"') -> Path:
    """A 5 s scenario file in ``directory`` whose flow runs ``controller`` under ``limit``."""
    path = directory / f"{controller.replace(':', '_').replace('/', '_')[-60:]}.toml"
    flow = f'kind = "tcp"\nvariant = "newreno"\ncontroller = "{controller}"\n'
    path.write_text(path_with(f"{flow}controller_limit = {limit}", duration="5s"))
    return path


def python(*args: str, cwd: Path) -> tuple[subprocess.CompletedProcess[str], float]:
    """Runs this interpreter with ``args`` in ``cwd``; the process and its wall time."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True,
        timeout=TIMEOUT,
    )  # fmt: skip
    return done, time.monotonic() - started


def overran(name: str, callback: str) -> str:
    """The start of the error of controller ``name`` stopped in ``callback``."""
    return f'congestion controller "{name}" failed in {callback} at t = '


STOPPED = f"did not return within its limit of {LIMIT} s of wall time"


def test_a_python_callback_that_never_returns_ends_the_run_with_a_controller_error(
    looping: Path,
) -> None:
    path = scenario(looping, "loopcc:Loops")
    code = (
        "import sys, time\n"
        "from tfrclab import ControllerError, Scenario\n"
        "from tfrclab.simulate import run\n"
        "started = time.monotonic()\n"
        "try:\n"
        f"    run(Scenario.load({str(path)!r}))\n"
        "except ControllerError as err:\n"
        "    print(f'{time.monotonic() - started:.3f}', err)\n"
        "    sys.exit(0)\n"
        "sys.exit('the run ended without an error')\n"
    )
    done, _ = python("-c", code, cwd=looping)
    assert done.returncode == 0, done.stderr
    took, message = done.stdout.split(" ", 1)
    assert overran("loopcc:Loops", "cong_avoid") in message
    assert STOPPED in message
    assert "t = 0.000000 s" not in message
    # The limit passed, and the watchdog acted within its tick and some scheduling slack.
    assert LIMIT <= float(took) < LIMIT + 5, took


def test_a_constructor_that_never_returns_fails_the_run_in_init_once(looping: Path) -> None:
    done, _ = python("-m", "tfrclab", "run", str(scenario(looping, "loopcc:Unmade")), "--quiet",
                     cwd=looping)  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert overran("loopcc:Unmade", "__init__") + "0.000000 s" in done.stderr
    assert STOPPED in done.stderr
    # The scenario's checks made the first instance; the run's failed at once, not after
    # waiting out the limit again.
    assert "(in an earlier instance)" in done.stderr


def test_cli_run_and_a_parallel_sweep_report_the_looping_controller(
    looping: Path, tmp_path: Path
) -> None:
    path = scenario(looping, "loopcc:Loops")
    done, _ = python("-m", "tfrclab", "run", str(path), "--quiet", cwd=looping)
    assert done.returncode == 1
    assert done.stderr.startswith(
        'tfrclab run: error: flow "f": ' + overran("loopcc:Loops", "cong_avoid")
    )
    assert STOPPED in done.stderr
    assert "Traceback" not in done.stderr
    out = tmp_path / "sweep"
    done, _ = python("-m", "tfrclab", "sweep", str(path), "--seeds", "1-2", "--jobs", "2",
                     "--out", str(out), "--quiet", cwd=looping)  # fmt: skip
    assert done.returncode == 1
    assert done.stderr.startswith("tfrclab sweep: error: run ")
    assert "(seed " in done.stderr
    assert overran("loopcc:Loops", "cong_avoid") in done.stderr
    assert STOPPED in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("name", ["Swallows", "Sleeps"])
def test_a_python_callback_that_will_not_stop_ends_the_process(looping: Path, name: str) -> None:
    done, took = python("-m", "tfrclab", "run", str(scenario(looping, f"loopcc:{name}")),
                        "--quiet", cwd=looping)  # fmt: skip
    assert done.returncode == 3, done.stderr
    assert (
        f'congestion controller "loopcc:{name}" did not return from cong_avoid (called at t = '
        in done.stderr
    )
    assert "it was asked to stop and is still running 1 s later" in done.stderr
    assert "exit status 3" in done.stderr
    assert took < TIMEOUT / 2


def test_a_native_plugin_that_never_returns_ends_the_process(
    plugins: Path,  # noqa: F811 (the fixture)
    tmp_path: Path,
) -> None:
    name = native(plugins, "misbehave_controller", "?fail=hang&after=50")
    done, _ = python("-m", "tfrclab", "run", str(scenario(tmp_path, name)), "--quiet",
                     cwd=tmp_path)  # fmt: skip
    assert done.returncode == 3, done.stderr
    assert f'congestion controller "{name}" did not return from cong_avoid (called at t = 0.' in (
        done.stderr
    )
    assert f"within its limit of {LIMIT} s of wall time" in done.stderr
    assert "native code cannot be stopped safely" in done.stderr
    assert "Traceback" not in done.stderr
    # In a sweep the worker dies; the sweep retries the run once, then reports it.
    done, _ = python("-m", "tfrclab", "sweep", str(scenario(tmp_path, name)), "--seeds", "1-2",
                     "--jobs", "2", "--out", str(tmp_path / "sweep"), "--quiet",
                     cwd=tmp_path)  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "failed twice: its worker process died" in done.stderr
    assert "a congestion controller's callback that never returned" in done.stderr
    assert "the watchdog ends the process with exit status 3" in done.stderr


def test_a_run_within_the_limit_is_the_same_with_the_watchdog_off() -> None:
    flow = 'kind = "tcp"\nvariant = "reno"\ncontroller = "tfrclab.controllers.delay:DelayBased"'
    on = run(Scenario.from_toml(path_with(flow, duration="10s")))
    off = run(Scenario.from_toml(path_with(f'{flow}\ncontroller_limit = "0s"', duration="10s")))
    assert measured(on).equals(measured(off))


def test_a_limit_without_a_controller_is_refused() -> None:
    with pytest.raises(ScenarioError) as caught:
        Scenario.from_toml(path_with('kind = "tcp"\ncontroller_limit = "1s"'))
    assert caught.value.path == "flows[0].controller_limit"
    assert "a `controller` on this flow" in str(caught.value)
