//! ns-2's packet trace format (ns-2.35 `trace/trace.cc`, `Trace::format` without
//! `show_tcphdr_`), one line per event on a traced link:
//!
//! ```text
//! event time from to type size flags fid src.port dst.port seq pktid
//! +     0.1  0    1  tcp  1040 ------- 1   0.1      4.1      12  113
//! ```
//!
//! `event` is `+` (offered to the link's queue), `-` (transmission starts), `r` (received at
//! the far end), `d` (dropped); `time` is in seconds rounded half-up to the microsecond and
//! printed as `%.15g` (`BaseTrace::round`, `TIME_FORMAT`); `from` and `to` are the link's
//! nodes. The column mapping from netsim packets is in `docs/traces.md`.

use std::io::{self, Write};

use tfrc::Time;

use crate::packet::{Packet, Payload};

/// One of ns-2's four link events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ns2Event {
    /// `+`: the packet is offered to the link (before its loss models and queue).
    Enqueue,
    /// `-`: the link starts transmitting the packet.
    Dequeue,
    /// `r`: the packet reaches the link's far end.
    Receive,
    /// `d`: the link's queue or a loss model dropped the packet.
    Drop,
}

impl Ns2Event {
    fn code(self) -> char {
        match self {
            Ns2Event::Enqueue => '+',
            Ns2Event::Dequeue => '-',
            Ns2Event::Receive => 'r',
            Ns2Event::Drop => 'd',
        }
    }
}

/// What an ns-2 line needs about the packet's flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ns2Flow {
    /// The flow's index: ns-2's `fid` and the port of both its agents.
    pub flow: u32,
    /// The source's node.
    pub from: u32,
    /// The sink's node.
    pub to: u32,
    /// The ns-2 type name of the flow's ON/OFF data packets (`exp` or `pareto`).
    pub onoff_name: &'static str,
    /// The number of flows, for packet ids.
    pub flows: u32,
}

/// ns-2's name for the packet's type (`packet_info` names in ns-2.35 `common/packet.h`).
pub fn type_name(payload: &Payload, onoff_name: &'static str) -> &'static str {
    match payload {
        Payload::Cbr => "cbr",
        Payload::TfrcData(..) => "tcpFriend",
        Payload::TfrcFeedback(_) => "tcpFriendCtl",
        Payload::TcpData(_) => "tcp",
        Payload::TcpAck(_) => "ack",
        Payload::RapData(_) => "rap_data",
        Payload::RapAck(_) => "rap_ack",
        Payload::OnOff => onoff_name,
        Payload::Ping(_) | Payload::PingEcho(_) => "ping",
        // ns-2.35 has no TEAR; these names are netsim's.
        Payload::TearData(_) => "tear",
        Payload::TearFeedback(_) => "tearAck",
    }
}

/// The `seq` column: the protocol's own sequence number where ns-2's `get_seqno` reads one
/// (TCP seqno or ACK number, TFRC and RAP seqno), else the packet's per-direction count.
pub fn seqno(packet: &Packet) -> i64 {
    match &packet.payload {
        Payload::TcpData(data) => data.seqno,
        Payload::TcpAck(ack) => ack.seqno(),
        Payload::TfrcData(data) => data.seq as i64,
        Payload::RapData(data) => data.seq as i64,
        Payload::RapAck(ack) => ack.seq as i64,
        _ => packet.seq as i64,
    }
}

/// The packet id: unique per packet and the same on every hop (ns-2's `uid`), made from the
/// packet's flow, direction and per-direction count.
pub fn packet_id(packet: &Packet, flows: u32) -> u64 {
    (packet
        .seq
        .wrapping_mul(u64::from(flows.max(1)))
        .wrapping_add(u64::from(packet.flow.0)))
    .wrapping_mul(2)
    .wrapping_add(u64::from(packet.reverse))
}

/// Writes `time` as ns-2 does: rounded half-up to the microsecond, `%.15g` (no trailing
/// zeros, no decimal point for whole seconds, and C's exponent form below 10^-4 s: `5e-05`).
pub fn write_time(out: &mut impl Write, time: Time) -> io::Result<()> {
    let micros = (time.as_nanos() + 500) / 1000;
    let (secs, frac) = (micros / 1_000_000, micros % 1_000_000);
    if frac == 0 {
        return write!(out, "{secs}");
    }
    if micros < 10 {
        return write!(out, "{micros}e-06");
    }
    if micros < 100 {
        let (tens, units) = (micros / 10, micros % 10);
        return if units == 0 {
            write!(out, "{tens}e-05")
        } else {
            write!(out, "{tens}.{units}e-05")
        };
    }
    let mut digits = format!("{frac:06}");
    while digits.ends_with('0') {
        digits.pop();
    }
    write!(out, "{secs}.{digits}")
}

/// Writes one trace line for `packet` on the link `link_from -> link_to`.
pub fn write_line(
    out: &mut impl Write,
    event: Ns2Event,
    time: Time,
    link_from: u32,
    link_to: u32,
    packet: &Packet,
    flow: &Ns2Flow,
) -> io::Result<()> {
    let mut flags = *b"-------";
    if packet.ecn_ce {
        flags[4] = b'E';
    }
    if packet.ecn_capable {
        flags[6] = b'N';
    }
    // TCP's ECN-Echo and CWR, where ns-2 shows `ecnecho_` and `cong_action_`.
    match packet.payload {
        Payload::TcpAck(ack) if ack.ece() => flags[0] = b'C',
        Payload::TcpData(data) if data.cwr => flags[2] = b'A',
        _ => {}
    }
    let flags = std::str::from_utf8(&flags).unwrap_or("-------");
    let (src, dst) = if packet.reverse {
        (flow.to, flow.from)
    } else {
        (flow.from, flow.to)
    };
    write!(out, "{} ", event.code())?;
    write_time(out, time)?;
    writeln!(
        out,
        " {link_from} {link_to} {} {} {flags} {} {src}.{} {dst}.{} {} {}",
        type_name(&packet.payload, flow.onoff_name),
        packet.size_bytes,
        flow.flow,
        flow.flow,
        flow.flow,
        seqno(packet),
        packet_id(packet, flow.flows),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::tcp::TcpData;
    use crate::packet::{FlowId, NodeId};

    fn time_text(nanos: u64) -> String {
        let mut out = Vec::new();
        write_time(&mut out, Time::from_nanos(nanos)).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn times_print_like_ns2s_rounded_g_format() {
        assert_eq!(time_text(0), "0");
        assert_eq!(time_text(5_168_000), "0.005168");
        assert_eq!(time_text(5_167_500), "0.005168", "half rounds up");
        assert_eq!(time_text(5_167_499), "0.005167");
        assert_eq!(time_text(1_500_000_000), "1.5");
        assert_eq!(time_text(2_000_000_400), "2");
        assert_eq!(time_text(123_000_001_000), "123.000001");
        // printf's %g switches to the exponent form below 1e-4.
        assert_eq!(time_text(5_000), "5e-06");
        assert_eq!(time_text(50_000), "5e-05");
        assert_eq!(time_text(12_000), "1.2e-05");
        assert_eq!(time_text(99_000), "9.9e-05");
        assert_eq!(time_text(100_000), "0.0001");
    }

    #[test]
    fn a_line_has_ns2s_twelve_columns() {
        let mut packet = Packet::new(
            FlowId(1),
            12,
            1040,
            NodeId(4),
            Time::ZERO,
            Payload::TcpData(TcpData::plain(9)),
        );
        packet.ecn_capable = true;
        let flow = Ns2Flow {
            flow: 1,
            from: 0,
            to: 4,
            onoff_name: "exp",
            flows: 3,
        };
        let mut out = Vec::new();
        write_line(
            &mut out,
            Ns2Event::Dequeue,
            Time::from_nanos(100_000_000),
            2,
            3,
            &packet,
            &flow,
        )
        .unwrap();
        let line = String::from_utf8(out).unwrap();
        assert_eq!(line, "- 0.1 2 3 tcp 1040 ------N 1 0.1 4.1 9 74\n");
        assert_eq!(line.split_whitespace().count(), 12);
        // CWR on data shows as `A`, ECN-Echo on an ACK as `C`.
        let mut data = TcpData::plain(9);
        data.cwr = true;
        packet.payload = Payload::TcpData(data);
        let mut ack = crate::agent::tcp::TcpAck::cumulative(9);
        ack.set_ece(true);
        let mut ack_packet = packet;
        ack_packet.payload = Payload::TcpAck(ack);
        for (p, flags) in [(&packet, "--A---N"), (&ack_packet, "C-----N")] {
            let mut out = Vec::new();
            write_line(&mut out, Ns2Event::Dequeue, Time::ZERO, 2, 3, p, &flow).unwrap();
            let line = String::from_utf8(out).unwrap();
            assert_eq!(line.split_whitespace().nth(6), Some(flags), "{line}");
        }
    }
}
