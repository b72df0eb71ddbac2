"""pcap and ns-2 traces of a short dumbbell run (TCP SACK, TFRC, CBR) read by users' tools.

tshark opens every capture without malformed packets or expert errors, its TCP analysis finds
the retransmissions the TCP sender counted, the Lua dissector (contrib/wireshark/tfrc.lua)
decodes TFRC's sequence numbers, receive rate and loss event rate as the run had them, and the
classic ns-2 awk throughput one-liner on the ns-2 trace gives the flow's simulated throughput.
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tfrclab.cli import main
from tfrclab.result import Result
from tfrclab.scenario import Scenario
from tfrclab.simulate import run

REPO = Path(__file__).resolve().parents[2]
DISSECTOR = REPO / "contrib" / "wireshark" / "tfrc.lua"
DURATION_S = 10

SCENARIO = f"""
name = "traces"
duration = "{DURATION_S}s"
[monitor]
bin = "100ms"
pcap = ["bottleneck", "left0->router_left", "router_left->left0", "left1->router_left",
        "router_left->left1", "right1->router_right"]
ns2_trace = ["router_right->right0"]
[topology]
kind = "dumbbell"
hosts = 3
[topology.bottleneck]
rate = "2Mbps"
delay = "20ms"
queue = {{ kind = "droptail", limit = 15 }}
[topology.access]
rate = "100Mbps"
delay = "2ms"
[[flows]]
kind = "tcp"
variant = "sack"
[[flows]]
kind = "tfrc"
[[flows]]
kind = "cbr"
rate = "300kbps"
"""

needs_tshark = pytest.mark.skipif(
    shutil.which("tshark") is None or shutil.which("mergecap") is None,
    reason="tshark and mergecap (Debian package tshark) are not installed",
)


@pytest.fixture(scope="module")
def traced(tmp_path_factory: pytest.TempPathFactory) -> tuple[Result, Path]:
    """One run with every trace written; the result and the directory holding the traces."""
    out = tmp_path_factory.mktemp("traces")
    result = run(Scenario.from_toml(SCENARIO), pcap_dir=out / "pcap", ns2_trace=out / "run.tr")
    return result, out


@functools.cache
def _dissector_loads() -> bool:
    """Whether this tshark runs Lua plugins (the TFRC dissector registers its fields)."""
    done = subprocess.run(
        ["tshark", "-G", "fields", "-X", f"lua_script:{DISSECTOR}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return "\ttfrc.seq\t" in done.stdout


@pytest.fixture
def dissector() -> None:
    """Skip unless tshark can load contrib/wireshark/tfrc.lua."""
    if not _dissector_loads():
        pytest.skip("this tshark does not run Lua plugins (the TFRC dissector)")


def _state(result: Result, flow: int, field: str) -> float:
    fields, values = result.states[flow]
    return float(values[fields.index(field)][-1])


def _tshark(*args: str | Path) -> str:
    command = ["tshark", "-X", f"lua_script:{DISSECTOR}", *map(str, args)]
    done = subprocess.run(command, capture_output=True, text=True, check=True, timeout=60)
    return done.stdout


def _fields(capture: Path, display_filter: str, *fields: str) -> list[list[str]]:
    args: list[str] = ["-r", str(capture), "-Y", display_filter, "-T", "fields"]
    for field in fields:
        args += ["-e", field]
    return [line.split("\t") for line in _tshark(*args).splitlines() if line]


def _first_host_both_ways(pcaps: Path, merged: Path) -> Path:
    """``merged``: the first left host's access link, both directions, in one capture."""
    sides = [pcaps / "left0-_router_left.pcap", pcaps / "router_left-_left0.pcap"]
    subprocess.run(["mergecap", "-w", merged, *sides], check=True, timeout=60)
    return merged


def test_every_traced_link_wrote_within_its_cap(traced: tuple[Result, Path]) -> None:
    result, out = traced
    assert {t["link"] for t in result.traces if t["kind"] == "pcap"} == {
        "bottleneck",
        "left0->router_left",
        "router_left->left0",
        "left1->router_left",
        "router_left->left1",
        "right1->router_right",
    }
    for trace in result.traces:
        assert trace["error"] is None
        assert trace["over_limit"] == 0
        assert 0 < trace["written"] <= trace["limit"]
        assert Path(trace["path"]).is_file()
    assert (out / "pcap" / "bottleneck.pcap").stat().st_size > 24


@needs_tshark
@pytest.mark.usefixtures("dissector")
def test_captures_open_in_tshark_without_malformed_packets(traced: tuple[Result, Path]) -> None:
    _, out = traced
    for capture in sorted((out / "pcap").glob("*.pcap")):
        # A malformed packet is an expert error (group Malformed): one pass finds both.
        summary = _tshark("-r", capture, "-q", "-z", "expert")
        assert "Errors (" not in summary, f"{capture.name}: {summary}"
        assert "Malformed" not in summary, f"{capture.name}: {summary}"
    hierarchy = _tshark("-r", out / "pcap" / "bottleneck.pcap", "-q", "-z", "io,phs")
    for protocol in ("ip", "tcp", "udp", "tfrc", "data"):
        assert f" {protocol} " in hierarchy, hierarchy


@needs_tshark
@pytest.mark.usefixtures("dissector")
def test_tshark_finds_the_retransmissions_the_sender_counted(
    traced: tuple[Result, Path], tmp_path: Path
) -> None:
    result, out = traced
    both = _first_host_both_ways(out / "pcap", tmp_path / "tcp0.pcap")
    retransmitted = _fields(
        both, "tcp.analysis.retransmission || tcp.analysis.fast_retransmission", "frame.number"
    )
    counted = _state(result, 0, "retransmits")
    assert counted > 0, "the run must lose and retransmit packets"
    assert len(retransmitted) == counted
    # Each lost packet was sent again, so tshark sees at least as many retransmissions.
    assert len(retransmitted) >= int(result.flows.loc[0, "packets_dropped"])
    data = _fields(both, "tcp.len > 0", "tcp.seq")
    assert len(data) + 1 == int(result.flows.loc[0, "packets_sent"]), "data plus the SYN"
    sacks = _fields(both, "tcp.options.sack_le", "tcp.options.sack_le")
    assert sacks, "the SACK receiver's blocks are in the ACKs"


@needs_tshark
@pytest.mark.usefixtures("dissector")
def test_the_lua_dissector_decodes_tfrc_as_the_run_had_it(traced: tuple[Result, Path]) -> None:
    result, out = traced
    pcaps = out / "pcap"
    seqs = [
        int(row[0])
        for row in _fields(pcaps / "left1-_router_left.pcap", "tfrc.type == 1", "tfrc.seq")
    ]
    sent = int(result.flows.loc[1, "packets_sent"])
    assert sorted(seqs) == list(range(sent))

    feedback = _fields(
        pcaps / "right1-_router_right.pcap", "tfrc.type == 2", "tfrc.x_recv", "tfrc.p"
    )
    assert len(feedback) == _state(result, 1, "rx_feedback_sent")
    # The last report the sender got is what its state holds at the end of the run.
    to_sender = _fields(
        pcaps / "router_left-_left1.pcap", "tfrc.type == 2", "tfrc.x_recv", "tfrc.p"
    )
    reports = np.array([(float(x) * 8, float(p)) for x, p in to_sender])
    final = np.array([_state(result, 1, "x_recv_bps"), _state(result, 1, "p")])
    # tshark prints doubles to 15 significant digits.
    assert np.isclose(reports, final, rtol=1e-12, atol=0).all(axis=1).any(), (final, reports[-3:])
    assert _state(result, 1, "p") > 0, "the run must have loss events"
    assert np.all(reports >= 0)
    assert np.all(reports[:, 1] <= 1)


EVERY_PROTOCOL = """
duration = "4s"
[monitor]
pcap = ["bottleneck", "bottleneck_reverse"]
[topology]
kind = "dumbbell"
hosts = 11
[topology.bottleneck]
rate = "5Mbps"
delay = "20ms"
queue = { kind = "red", preset = "ns2_2000", limit = 30 }
[topology.access]
rate = "100Mbps"
delay = "2ms"
[[flows]]
kind = "tcp"
variant = "vegas"
[[flows]]
kind = "tcp"
variant = "newreno"
preset = "ns2_2000"
[[flows]]
kind = "gaimd"
[[flows]]
kind = "rap"
[[flows]]
kind = "tear"
[[flows]]
kind = "ping"
[[flows]]
kind = "pareto"
rate = "500kbps"
[[flows]]
kind = "exponential"
rate = "500kbps"
[[flows]]
kind = "web"
load = "1Mbps"
[[flows]]
kind = "short_tcp"
reverse = true
load = "1Mbps"
packets = { kind = "uniform", min = 0, max = 20 }
[[flows]]
kind = "tfrc"
"""


@needs_tshark
@pytest.mark.usefixtures("dissector")
def test_every_protocol_is_captured_as_plain_tcp_udp_or_tfrc(tmp_path: Path) -> None:
    result = run(Scenario.from_toml(EVERY_PROTOCOL), pcap_dir=tmp_path)
    assert all(t["error"] is None for t in result.traces)
    allowed = {"raw", "ip", "tcp", "udp", "data", "tfrc", "_ws.lua.fake"}
    for capture in sorted(tmp_path.glob("*.pcap")):
        bad = _fields(capture, "_ws.malformed || _ws.expert.severity >= error", "frame.number")
        assert bad == [], f"{capture.name}: malformed or error frames {bad[:5]}"
        hierarchy = _tshark("-r", capture, "-q", "-z", "io,phs")
        # Payload zeros must not be taken for a protocol that owns a port.
        seen = {line.split()[0] for line in hierarchy.splitlines() if "frames:" in line}
        assert seen <= allowed, f"{capture.name}: {seen - allowed}"


def test_the_classic_awk_throughput_one_liner_gives_the_flows_throughput(
    traced: tuple[Result, Path],
) -> None:
    result, out = traced
    awk = shutil.which("awk")
    if awk is None:
        pytest.skip("awk is not installed")
    program = (
        '$1 == "r" && $5 == "tcp" && $8 == 0 { bytes += $6 } '
        f'END {{ printf "%.3f\\n", bytes * 8 / {DURATION_S} }}'
    )
    done = subprocess.run(
        [awk, program, out / "run.tr"], capture_output=True, text=True, check=True, timeout=60
    )
    throughput = float(result.summary().flows.loc[0, "throughput_bits_per_s"])
    assert float(done.stdout) == pytest.approx(throughput, rel=1e-9)
    lines = (out / "run.tr").read_text().splitlines()
    assert all(len(line.split(" ")) == 12 for line in lines)
    assert {line[0] for line in lines} <= set("+-rd")


NS2_SCRIPT = """
set ns [new Simulator]
set tf [open [lindex $argv 0] w]
$ns trace-all $tf
set n0 [$ns node]; set n1 [$ns node]; set n2 [$ns node]
$ns duplex-link $n0 $n1 100Mb 2ms DropTail
$ns duplex-link $n1 $n2 2Mb 20ms DropTail
$ns queue-limit $n1 $n2 15
set tcp [new Agent/TCP/Sack1]; $ns attach-agent $n0 $tcp
set sink [new Agent/TCPSink/Sack1]; $ns attach-agent $n2 $sink; $ns connect $tcp $sink
set ftp [new Application/FTP]; $ftp attach-agent $tcp
set tfrc [new Agent/TFRC]; $tfrc set fid_ 1; $ns attach-agent $n0 $tfrc
set tfrcsink [new Agent/TFRCSink]; $ns attach-agent $n2 $tfrcsink; $ns connect $tfrc $tfrcsink
set udp [new Agent/UDP]; $udp set fid_ 2; $ns attach-agent $n0 $udp
set null [new Agent/Null]; $ns attach-agent $n2 $null; $ns connect $udp $null
set cbr [new Application/Traffic/CBR]; $cbr attach-agent $udp; $cbr set rate_ 300kb
$ns at 0.0 "$ftp start"; $ns at 0.0 "$tfrc start"; $ns at 0.0 "$cbr start"
$ns at 2.0 "$ns flush-trace; close $tf; exit 0"
$ns run
"""

# What each of ns-2's twelve columns looks like (ns-2.35 Trace::format, %.15g times).
NS2_COLUMNS = [
    r"[-+rd]",
    r"\d+(\.\d{1,6})?|\d(\.\d)?e-0[56]",
    r"\d+",
    r"\d+",
    r"[A-Za-z_]+",
    r"\d+",
    r"[-CPAEFN]{7}",
    r"\d+",
    r"\d+\.\d+",
    r"\d+\.\d+",
    r"-?\d+",
    r"\d+",
]


def _column_shapes(lines: list[str]) -> set[str]:
    types = set()
    for line in lines:
        columns = line.split(" ")
        assert len(columns) == len(NS2_COLUMNS), line
        for column, pattern in zip(columns, NS2_COLUMNS, strict=True):
            assert re.fullmatch(pattern, column), f"{column!r} in {line!r}"
        types.add(columns[4])
    return types


@pytest.mark.skipif(shutil.which("ns") is None, reason="ns-2 (`ns`) is not installed")
def test_ns2_trace_lines_look_like_ns2s_own(tmp_path: Path) -> None:
    script = tmp_path / "trace.tcl"
    script.write_text(NS2_SCRIPT)
    theirs = tmp_path / "ns2.tr"
    subprocess.run(["ns", str(script), str(theirs)], check=True, timeout=60, capture_output=True)
    ours = tmp_path / "ours.tr"
    text = SCENARIO.replace('duration = "10s"', 'duration = "2s"').replace(
        'ns2_trace = ["router_right->right0"]', 'ns2_trace = "all"'
    )
    run(Scenario.from_toml(text), ns2_trace=ours)
    their_types = _column_shapes(theirs.read_text().splitlines())
    our_types = _column_shapes(ours.read_text().splitlines())
    assert our_types == their_types == {"tcp", "ack", "tcpFriend", "tcpFriendCtl", "cbr"}


def test_run_writes_traces_from_the_command_line(tmp_path: Path, capsys: Any) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text(SCENARIO.replace('duration = "10s"', 'duration = "2s"'))
    pcaps = tmp_path / "pcap"
    status = main(
        [
            "run",
            str(scenario),
            "--quiet",
            "--pcap",
            str(pcaps),
            "--ns2-trace",
            str(tmp_path / "t.tr"),
            "--set",
            "monitor.trace_limit=20",
        ]
    )
    assert status == 0
    assert (pcaps / "bottleneck.pcap").is_file()
    assert (tmp_path / "t.tr").read_text().count("\n") == 20
    err = capsys.readouterr().err
    assert "stopped at monitor.trace_limit = 20" in err


def test_trace_keys_without_a_destination_write_nothing_and_say_so(
    tmp_path: Path, capsys: Any
) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text(SCENARIO.replace('duration = "10s"', 'duration = "1s"'))
    assert main(["run", str(scenario), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "monitor.pcap chooses links; pass --pcap DIR" in err
    assert "monitor.ns2_trace chooses links; pass --ns2-trace FILE" in err
    assert list(tmp_path.iterdir()) == [scenario]


def test_traces_inside_the_run_directory_are_refused(tmp_path: Path, capsys: Any) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text(SCENARIO)
    out = tmp_path / "run"
    status = main(["run", str(scenario), "--quiet", "--out", str(out), "--pcap", str(out / "p")])
    assert status == 2
    assert "--pcap" in capsys.readouterr().err
    assert not out.exists()


def test_an_unwritable_pcap_directory_is_a_clear_error(tmp_path: Path, capsys: Any) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text(SCENARIO)
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    # Refused before the run, as a bad argument.
    status = main(["run", str(scenario), "--quiet", "--pcap", str(blocker / "pcap")])
    assert status == 2
    err = capsys.readouterr().err
    assert f"--pcap {blocker / 'pcap'}: cannot write there" in err
    with pytest.raises(OSError, match="cannot write"):
        run(Scenario.from_toml(SCENARIO), ns2_trace=blocker / "run.tr")


def test_an_unknown_link_names_the_field_and_lists_the_links(tmp_path: Path, capsys: Any) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text(SCENARIO.replace('"bottleneck", "left0', '"botleneck", "left0'))
    status = main(["run", str(scenario), "--quiet", "--pcap", str(tmp_path / "pcap")])
    assert status == 2
    err = capsys.readouterr().err
    assert "monitor.pcap[0]" in err
    assert "bottleneck_reverse" in err
    assert "botleneck" in err


LINUX_TCP = """
duration = "6s"
[monitor]
pcap = ["left0->router_left", "router_left->left0"]
[topology]
kind = "dumbbell"
hosts = 1
[topology.bottleneck]
rate = "10Mbps"
delay = "20ms"
queue = { kind = "droptail", limit = 20 }
[[flows]]
kind = "tcp"
variant = "cubic"
preset = "linux"
"""


@needs_tshark
def test_a_linux_tcp_capture_has_whole_segments_as_the_kernels_has(tmp_path: Path) -> None:
    """The linux preset's 52-byte headers: 12 option bytes, so each payload is one mss."""
    result = run(Scenario.from_toml(LINUX_TCP), pcap_dir=tmp_path / "pcap")
    both = _first_host_both_ways(tmp_path / "pcap", tmp_path / "tcp0.pcap")
    data = _fields(both, "tcp.len > 0", "tcp.len", "tcp.hdr_len", "ip.len", "tcp.seq")
    assert {tuple(row[:3]) for row in data} == {("1448", "32", "1500")}
    assert len(data) + 1 == int(result.flows.loc[0, "packets_sent"]), "data plus the SYN"
    syn = _fields(both, "tcp.flags.syn == 1", "tcp.len", "tcp.hdr_len", "ip.len")
    assert syn == [["0", "32", "52"]]
    # Each segment ends where the next new one begins: a resend is a segment below the
    # highest byte sent, as many as the sender counted.
    highest, resent = 0, 0
    for _, _, _, seq in data:
        resent += int(seq) < highest
        highest = max(highest, int(seq) + 1448)
    counted = _state(result, 0, "retransmits")
    assert counted > 0, "the run must lose and retransmit packets"
    assert resent == counted
    # tshark's analysis reads each of them as a retransmission (one sent within a few ms of
    # new data as out of order, as it would on a real capture) and nothing else.
    flagged = _fields(
        both,
        "tcp.len > 0 && (tcp.analysis.retransmission || tcp.analysis.out_of_order)",
        "frame.number",
    )
    assert len(flagged) == counted
    summary = _tshark("-r", both, "-q", "-z", "expert")
    for complaint in ("Errors (", "Malformed", "NOP", "not captured", "overlap"):
        assert complaint not in summary, summary
