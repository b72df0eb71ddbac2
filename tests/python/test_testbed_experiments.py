"""floyd2000's testbed experiments: the measures, the registry entries and short real runs.

The runs through the testbed need root and /dev/net/tun (CI runs as root) and skip, saying why;
the registry's checks and the measures on synthetic data run anywhere.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tfrclab.reproduce import floyd2000_testbed
from tfrclab.reproduce.registry import experiments
from tfrclab.reproduce.runner import run_experiment
from tfrclab.testbed import emulator, read_log
from tfrclab.testbed import experiments as tbx
from tfrclab.testbed.log import ARRIVE, DEPART, RECORD, PacketLog

CAN_RUN = os.geteuid() == 0 and os.path.exists("/dev/net/tun") and shutil.which("ip") is not None
needs_root = pytest.mark.skipif(
    not CAN_RUN, reason="the testbed needs root, /dev/net/tun and iproute2's ip"
)
IDS = ("floyd2000/testbed-fig03-04", "floyd2000/testbed-fig15-17")


def _log(rows: list[tuple[float, int, int, int, int]]) -> PacketLog:
    """A relay log of (t_s, proto, dport, size, event) forward records."""
    records = np.zeros(len(rows), dtype=RECORD)
    for k, (t, proto, dport, size, event) in enumerate(rows):
        records[k]["t_ns"] = int(t * 1e9)
        records[k]["proto"] = proto
        records[k]["dport"] = dport
        records[k]["size"] = size
        records[k]["event"] = event
    return PacketLog(records=records, start_monotonic_ns=0)


def test_flow_series_bins_each_data_flow_by_destination_port() -> None:
    rows = []
    for n in range(2000):  # 1 ms apart: 2 s; UDP 1028 B, TCP 1500 B, every packet departs
        t = n * 0.001
        rows += [(t, 17, 5001, 1028, ARRIVE), (t + 0.0005, 17, 5001, 1028, DEPART)]
        rows += [(t, 6, 5101, 1500, ARRIVE), (t + 0.0005, 6, 5101, 1500, DEPART)]
    rows.append((0.5, 6, 5999, 60, DEPART))  # a lone SYN is no data flow
    t0, series = tbx.flow_series(_log(rows), DEPART, 0.1)
    assert t0 == 0.0
    assert sorted(series) == ["tcp:5101", "udp:5001"]
    np.testing.assert_allclose(series["udp:5001"][1:19], 100 * 1028 * 8)
    np.testing.assert_allclose(series["tcp:5101"][1:19], 100 * 1500 * 8)


def test_summarize_mixed_shares_equivalence_and_cov() -> None:
    bins = int(30 / tbx.BIN_S)
    steady = np.full(bins, 1e6 * tbx.BIN_S)  # 1 Mb/s
    alternating = np.tile([0.5e6, 2.5e6], bins // 2) * tbx.BIN_S  # mean 1.5 Mb/s, CoV 2/3
    series = {"udp:1": steady, "tcp:2": alternating, "tcp:3": alternating, "tcp:4": alternating}
    out = tbx.summarize_mixed(series, 30.0, link_bps=5.5e6)
    assert out["total_share"] == pytest.approx(1.0)
    assert out["tfrc_over_tcp_mean"] == pytest.approx(1 / 1.5)
    assert out["cov_tfrc"]["0.2"] == pytest.approx(0.0)
    assert out["cov_tcp_mean"]["0.2"] == pytest.approx(0.0)  # averaged over 2 bins: flat
    assert out["equivalence"]["1"] == pytest.approx(1 / 1.5)
    with pytest.raises(ValueError, match="one TFRC"):
        tbx.summarize_mixed({"tcp:2": steady}, 30.0)


def test_oscillation_scenario_in_netsim_measures_the_send_rate() -> None:
    out = tbx.oscillation_netsim(64, True, seconds=20.0)
    assert 0.5 * tbx.LINK_BPS < out["mean_send_rate_bps"] <= 1.01 * tbx.LINK_BPS
    assert set(out["cov"]) == {"0.2", "0.5", "1", "2"}
    assert len(out["rate_1s_bps"]) == 15


def test_runs_refuse_bad_arguments_naming_them(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="queue"):
        tbx.mixed_run(tmp_path, "reno", "sfq", 20.0)
    with pytest.raises(ValueError, match="seconds"):
        tbx.mixed_run(tmp_path, "reno", "droptail", 5.0)
    with pytest.raises(ValueError, match="sysctls: expected net"):
        tbx.mixed_run(tmp_path, "reno", "droptail", 20.0, sysctls={"kernel.panic": "1"})
    with pytest.raises(ValueError, match=r"sysctls: net\.ipv4\.tcp_sack"):
        tbx.mixed_run(tmp_path, "reno", "droptail", 20.0, sysctls={"net.ipv4.tcp_sack": "0; x"})
    with pytest.raises(ValueError, match="buffer"):
        tbx.oscillation_run(tmp_path, 0, True, 20.0)
    assert not (tmp_path / "relay.log").exists()


def test_registered_with_claims_and_a_testbed_kind() -> None:
    chosen = experiments(list(IDS))
    assert [e.id for e in chosen] == list(IDS)
    for e in chosen:
        assert e.kind == "testbed"
        assert e.claims
        assert e.quick.duration_s is not None
        assert e.full.duration_s is not None
        assert e.quick.duration_s <= e.full.duration_s


def test_without_root_every_claim_is_not_comparable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(floyd2000_testbed, "_unavailable", lambda: "the testbed needs root")
    for e in experiments(list(IDS)):
        outcome = run_experiment(e, tmp_path, quick=True)
        assert {r.verdict for r in outcome.results} == {"not comparable"}
        assert all("needs root" in r.reason for r in outcome.results)
        assert outcome.figure.is_file()
        assert not (tmp_path / e.id / "runs").exists()


def test_mixed_scenario_in_netsim_fills_the_link() -> None:
    out = tbx.mixed_netsim(tbx.MixedCell("reno", "droptail"), seconds=15.0)
    assert out is not None
    assert 0.9 <= out["total_share"] <= 1.01  # 1.0 give or take the bytes in flight at the ends
    assert tbx.mixed_netsim(tbx.MixedCell("cubic", "droptail"), seconds=15.0) is None


@needs_root
def test_short_mixed_run_shares_sum_to_the_link_rate_and_pcap_is_written(tmp_path: Path) -> None:
    result = tbx.mixed_run(tmp_path, "reno", "droptail", seconds=15.0)
    assert sorted(result["throughput_bps"]) == ["tcp:5101", "tcp:5102", "tcp:5103", "udp:5001"]
    assert 0.9 <= result["total_share"] <= 1.01
    assert all(share > 0.02 for share in result["share_of_link"].values())
    assert json.loads((tmp_path / "result.json").read_text())["cc"] == "reno"
    if shutil.which("tcpdump") is None:
        pytest.skip("tcpdump is not installed: no pcap")
    pcap = tmp_path / "capture.pcap"
    assert result["files"]["capture.pcap"] == "capture.pcap"
    magic = pcap.read_bytes()[:4]
    assert magic in (b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d")  # nanosecond pcap, either order
    if shutil.which("tshark") is not None:
        done = subprocess.run(
            ["tshark", "-r", str(pcap), "-Y", "udp.dstport == 5001"],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        # The capture holds every TFRC datagram the run sent: at least those the relay
        # delivered in the measured window (1028 bytes each on the wire). TFRC's own share
        # varies from run to run (a fixed count failed one run in which it got 5% of the link).
        start, end = result["window_s"]
        delivered = result["throughput_bps"]["udp:5001"] * (end - start) / 8 / 1028
        assert len(done.stdout.splitlines()) >= delivered > 100


@needs_root
def test_tfrc_follows_the_emulated_capacity_within_10_percent(tmp_path: Path) -> None:
    # One greedy TFRC flow (tfrc-udp, RFC 5348) through 4 Mb/s, 10 ms each way, DropTail 50:
    # its delivered rate over 20 s after a 5 s start-up is the link's rate within 10%.
    log = tmp_path / "relay.log"
    with emulator.Testbed(rate="4Mb/s", delay="10ms", queue="droptail:50", log=log) as tb:
        address = f"{tb.address('b')}:{tbx.TFRC_PORT}"
        module = [sys.executable, "-m", "tfrclab"]
        recv = tb.popen("b", [*module, "recv", "--bind", address, "--duration", "28s"])
        send = tb.run("a", [*module, "send", "--to", address, "--duration", "25s"], timeout=60)
        assert send.returncode == 0, send.stderr
        recv.wait(timeout=10)
    _, series = tbx.flow_series(read_log(log), DEPART, 0.1)
    bits = series[f"udp:{tbx.TFRC_PORT}"][50:250]
    rate = bits.sum() / 20.0
    assert abs(rate / 4e6 - 1) <= 0.10, rate


def test_send_turns_the_sqrt_rtt_spacing_off_and_says_so(tmp_path: Path) -> None:
    from conftest import run_cli
    from tfrclab import transport

    # No receiver is needed: the sender runs on its nofeedback timer for the one second.
    session = transport.send("127.0.0.1:9", 1.0, oscillation_prevention=False)
    assert session.options["oscillation_prevention"] is False
    assert "oscillation_prevention" not in transport.send("127.0.0.1:9", 1.0).options
    done = run_cli("send", "--to", "127.0.0.1:9", "--duration", "1s", "--sqrt-rtt-spacing", "no")
    assert done.returncode == 2
    assert "--sqrt-rtt-spacing" in done.stderr
    out = tmp_path / "trace"
    done = run_cli("send", "--to", "127.0.0.1:9", "--duration", "1s", "--sqrt-rtt-spacing", "off",
                   "--out", str(out))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert transport.load_trace(out).meta["options"]["oscillation_prevention"] is False


def test_kernel_srtt_is_read_from_ss_output() -> None:
    out = (
        "ESTAB 0 0 10.0.0.1:40000 10.0.0.2:5101\n\t cubic wscale:7,7 rto:336 "
        "rtt:131.2/4.1 ato:40 mss:1448\nESTAB 0 0 10.0.0.1:40002 10.0.0.2:5102\n\t "
        "rtt:129/2 bytes_sent:1\n"
    )
    assert tbx._tcp_srtt_ms(out) == [131.2, 129.0]
    assert tbx._tcp_srtt_ms("") == []
