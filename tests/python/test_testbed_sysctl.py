"""Kernel settings for testbed runs (:mod:`tfrclab.testbed.sysctl`).

Checked before any run, set in both namespaces, and not on the host. The last test needs root
(the testbed).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tfrclab.testbed.sysctl import apply_sysctls, check_sysctls, parse_sysctl
from tfrclab.twin import TwinReport, testbed_available

BASE = Path(__file__).resolve().parents[2] / "python/tfrclab/scenarios/twin/cubic-tfrc.toml"


def test_plain_net_settings_pass_and_anything_else_is_named() -> None:
    assert check_sysctls(None) == {}
    assert check_sysctls({"net.ipv4.tcp_comp_sack_nr": 0}) == {"net.ipv4.tcp_comp_sack_nr": "0"}
    assert check_sysctls({"net.ipv4.tcp_rmem": "4096 131072 6291456"})
    with pytest.raises(ValueError, match=r"expected net\.\* keys, found 'kernel\.panic'"):
        check_sysctls({"kernel.panic": "1"})
    with pytest.raises(ValueError, match=r"expected net\.\* keys"):
        check_sysctls({"net.ipv4/../../x": "1"})
    with pytest.raises(ValueError, match=r"net\.ipv4\.tcp_sack: expected a plain value"):
        check_sysctls({"net.ipv4.tcp_sack": "0; reboot"})


def test_a_command_line_setting_is_key_equals_value() -> None:
    assert parse_sysctl(" net.ipv4.tcp_sack = 0 ") == ("net.ipv4.tcp_sack", "0")
    with pytest.raises(ValueError, match="expected KEY=VALUE"):
        parse_sysctl("net.ipv4.tcp_sack")
    with pytest.raises(ValueError, match="expected net"):
        parse_sysctl("vm.swappiness=1")


class _Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, list[str], bool]] = []

    def run(self, side: str, cmd: list[str], check: bool = False) -> Any:
        self.calls.append((side, cmd, check))


def test_each_setting_is_written_in_both_namespaces_and_a_failure_is_raised() -> None:
    testbed = _Recorder()
    apply_sysctls(testbed, {"net.ipv4.tcp_comp_sack_nr": "0", "net.ipv4.tcp_sack": "1"})
    assert testbed.calls == [
        (side, ["sysctl", "-q", "-w", setting], True)
        for side in ("a", "b")
        for setting in ("net.ipv4.tcp_comp_sack_nr=0", "net.ipv4.tcp_sack=1")
    ]


def test_the_twin_table_says_which_kernel_settings_ran() -> None:
    assert TwinReport([1], (5.0, 30.0)).table().startswith("| metric |")
    report = TwinReport([1], (5.0, 30.0), sysctls={"net.ipv4.tcp_comp_sack_nr": "0"})
    assert report.table().startswith("The testbed's kernels ran with `net.ipv4.tcp_comp_sack_nr=0`")
    assert report.as_dict()["sysctls"] == {"net.ipv4.tcp_comp_sack_nr": "0"}


@pytest.mark.parametrize(
    ("setting", "message"),
    [("kernel.panic=1", "expected net.* keys"), ("net.ipv4.tcp_sack", "expected KEY=VALUE")],
)
def test_the_twin_command_refuses_a_bad_setting_before_any_run(
    tmp_path: Path, setting: str, message: str
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tfrclab", "twin", str(BASE), "--out", str(tmp_path / "o"),
         "--sysctl", setting],
        capture_output=True,
        text=True,
        timeout=60,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert message in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "o").exists()


CAN_RUN = testbed_available() is None and shutil.which("ip") is not None


@pytest.mark.skipif(not CAN_RUN, reason="the testbed needs root, /dev/net/tun and iproute2")
def test_a_setting_reaches_both_namespaces_and_not_the_host() -> None:
    from tfrclab.testbed.emulator import Testbed

    key = "net.ipv4.tcp_comp_sack_nr"
    read = ["sysctl", "-n", key]
    host = subprocess.run(read, capture_output=True, text=True, check=True).stdout.strip()
    wanted = "0" if host != "0" else "7"
    with Testbed(rate="10Mb/s", delay="5ms", queue={"kind": "droptail", "limit": 10}) as tb:
        apply_sysctls(tb, check_sysctls({key: wanted}))
        for side in ("a", "b"):
            assert tb.run(side, read, check=True).stdout.strip() == wanted
        assert subprocess.run(read, capture_output=True, text=True).stdout.strip() == host
