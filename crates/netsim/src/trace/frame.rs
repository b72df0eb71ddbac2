//! Real IPv4/TCP/UDP bytes for a simulated packet, so that Wireshark and tshark analyse a
//! capture of a simulated link as they would a real one.
//!
//! - IPv4 (RFC 791): addresses from [`super::address`], identification = the packet's
//!   per-direction sequence number (low 16 bits), DF set, TTL 64, the ECN field from the
//!   packet's ECN state (RFC 3168 §5: ECT(0) when ECN-capable, CE when marked).
//! - TCP (RFC 793) for TCP data and ACKs: netsim's TCP counts packets, so sequence numbers
//!   become bytes with the flow's segment size (data size - header): the initial sequence
//!   number is 0, the first data packet starts at byte 1 and packet `k` at
//!   `1 + (k - k0)·mss`, where `k0` is 1 for a TCP that opens with a SYN (packet 0, sent with
//!   the SYN flag at sequence number 0) and 0 otherwise; an ACK of packet `a` (the highest
//!   in-order one) acknowledges the byte after it; SACK blocks (RFC 2018) are the ACK's blocks
//!   in the same units. Window 65535, no FIN (one-way TCP has no SYN-ACK or close). A data
//!   segment's TCP header is as long as the flow's header size leaves it (`header_size` - 20
//!   bytes of IPv4, from 20 to 60 bytes): the `linux` preset's 52-byte headers give 12 bytes
//!   of options, a timestamp as the kernel's (RFC 7323; TSval the send time in ms, TSecr 0:
//!   netsim models no echo), and the payload is then exactly the segment size the sequence
//!   numbers count; a SYN has the same header and no payload.
//! - UDP (RFC 768) for everything else. TFRC data and feedback carry the `tfrc` crate's wire
//!   format ([`tfrc::wire`]), the bytes a UDP transport sends; other protocols carry zeros.
//!
//! The frame is as long as the simulated packet, padded with zeros. Where the headers do not
//! fit in the simulated size (a 40-byte TCP ACK with SACK blocks, a TFRC feedback packet
//! smaller than 20 + 8 + 34 bytes, any packet smaller than its headers) the frame is as long as
//! its headers instead; frames stop at IPv4's 65535 bytes.

use tfrc::wire::{DATA_HEADER_LEN, FEEDBACK_LEN};

use super::address::{node_ipv4, sink_port, tcp_source_port, udp_source_port};
use crate::agent::tcp::{TcpAck, TcpData};
use crate::packet::{Packet, Payload};

/// IPv4 header length (no options).
pub const IPV4_HEADER_LEN: usize = 20;
/// TCP header length without options.
pub const TCP_HEADER_LEN: usize = 20;
/// The most option bytes a TCP header holds (its data offset is 4 bits of 32-bit words).
const MAX_TCP_OPTIONS: usize = 40;
/// UDP header length.
pub const UDP_HEADER_LEN: usize = 8;
/// The longest frame written: IPv4's total length is 16 bits.
pub const MAX_FRAME_LEN: usize = 65_535;
/// The TCP window advertised in every segment (no window scaling).
const TCP_WINDOW: u16 = 65_535;

/// What the frame builder needs to know about a flow besides the packet itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowAddressing {
    /// The flow's index.
    pub flow: u32,
    /// The source's node.
    pub from: u32,
    /// The sink's node.
    pub to: u32,
    /// Bytes of payload per TCP data packet (data size - header), for byte sequence numbers.
    pub mss: u32,
    /// Whether the flow's TCP opens with a SYN (packet 0).
    pub syn: bool,
    /// Bytes of TCP options in a data segment (a multiple of 4, at most 40): what the flow's
    /// TCP/IP header size has beyond 40 bytes, so the payload is `mss` bytes.
    pub data_options: u8,
}

impl FlowAddressing {
    /// The option bytes a data segment carries for a TCP/IP header of `header_bytes`.
    pub fn data_options_for(header_bytes: u32) -> u8 {
        let over = header_bytes.saturating_sub((IPV4_HEADER_LEN + TCP_HEADER_LEN) as u32);
        (over.min(MAX_TCP_OPTIONS as u32) / 4 * 4) as u8
    }
}

/// Writes the IP frame for `packet` of `flow` into `buf` (cleared first) and returns the length
/// the packet had on the simulated wire.
pub fn build(packet: &Packet, flow: &FlowAddressing, buf: &mut Vec<u8>) -> u32 {
    buf.clear();
    let (src, dst) = if packet.reverse {
        (flow.to, flow.from)
    } else {
        (flow.from, flow.to)
    };
    let size = packet.size_bytes as usize;
    let fid = flow.flow;
    let (protocol, transport_len) = match &packet.payload {
        Payload::TcpData(data) => {
            let (sport, dport) = (tcp_source_port(data.conn.get()), sink_port(fid, false));
            push_ipv4_placeholder(buf);
            // Linux's timestamp clock ticks in milliseconds (RFC 7323 §5.4); it wraps.
            let sent_ms = (packet.sent_at.as_nanos() / 1_000_000) as u32;
            let header = tcp_data(buf, data, flow, (sport, dport), sent_ms);
            (6u8, size.saturating_sub(IPV4_HEADER_LEN).max(header))
        }
        Payload::TcpAck(ack) => {
            let (sport, dport) = (sink_port(fid, false), tcp_source_port(ack.conn.get()));
            push_ipv4_placeholder(buf);
            let header = tcp_ack(buf, ack, flow, sport, dport);
            (6u8, (size.saturating_sub(IPV4_HEADER_LEN)).max(header))
        }
        payload => {
            let tfrc = matches!(payload, Payload::TfrcData(..) | Payload::TfrcFeedback(_));
            let (sport, dport) = (udp_source_port(fid), sink_port(fid, tfrc));
            let (sport, dport) = if packet.reverse {
                (dport, sport)
            } else {
                (sport, dport)
            };
            push_ipv4_placeholder(buf);
            buf.extend_from_slice(&sport.to_be_bytes());
            buf.extend_from_slice(&dport.to_be_bytes());
            buf.extend_from_slice(&[0; 4]); // length and checksum, filled below
            let body = IPV4_HEADER_LEN + UDP_HEADER_LEN;
            let min = match payload {
                Payload::TfrcData(data) => {
                    let header = data.header();
                    buf.resize(body + DATA_HEADER_LEN, 0);
                    // The buffer is exactly the header's length: emit cannot fail. The flow's
                    // number stands for the transport's session identifier.
                    let _ = header.emit(u64::from(fid), &mut buf[body..]);
                    DATA_HEADER_LEN
                }
                Payload::TfrcFeedback(header) => {
                    buf.resize(body + FEEDBACK_LEN, 0);
                    let _ = header.emit(u64::from(fid), &mut buf[body..]);
                    FEEDBACK_LEN
                }
                _ => 0,
            };
            let len = size
                .saturating_sub(IPV4_HEADER_LEN)
                .max(UDP_HEADER_LEN + min);
            (17u8, len)
        }
    };
    let total = (IPV4_HEADER_LEN + transport_len).min(MAX_FRAME_LEN);
    buf.resize(total, 0);
    let ecn = match (packet.ecn_capable, packet.ecn_ce) {
        (_, true) => 0b11,
        (true, false) => 0b10,
        (false, false) => 0,
    };
    let ip = [
        0x45,
        ecn,
        (total >> 8) as u8,
        total as u8,
        (packet.seq >> 8) as u8,
        packet.seq as u8,
        0x40, // don't fragment
        0,
        64,
        protocol,
        0,
        0,
    ];
    buf[..12].copy_from_slice(&ip);
    buf[12..16].copy_from_slice(&node_ipv4(src).octets());
    buf[16..20].copy_from_slice(&node_ipv4(dst).octets());
    let ip_sum = checksum(0, &buf[..IPV4_HEADER_LEN]);
    buf[10..12].copy_from_slice(&ip_sum.to_be_bytes());
    let segment_len = total - IPV4_HEADER_LEN;
    if protocol == 17 {
        buf[24..26].copy_from_slice(&(segment_len as u16).to_be_bytes());
    }
    // Pseudo-header (RFC 793 §3.1, RFC 768): addresses, protocol, segment length.
    let mut pseudo = [0u8; 12];
    pseudo[..8].copy_from_slice(&buf[12..20]);
    pseudo[9] = protocol;
    pseudo[10..12].copy_from_slice(&(segment_len as u16).to_be_bytes());
    let sum = checksum(sum_words(0, &pseudo), &buf[IPV4_HEADER_LEN..]);
    let at = IPV4_HEADER_LEN + if protocol == 6 { 16 } else { 6 };
    // UDP sends an all-zero checksum as all ones (RFC 768).
    let sum = if protocol == 17 && sum == 0 {
        0xFFFF
    } else {
        sum
    };
    buf[at..at + 2].copy_from_slice(&sum.to_be_bytes());
    packet.size_bytes
}

fn push_ipv4_placeholder(buf: &mut Vec<u8>) {
    buf.extend_from_slice(&[0; IPV4_HEADER_LEN]);
}

/// The first byte of packet `k` (wrapping modulo 2^32 as TCP does).
fn byte_seq(k: i64, flow: &FlowAddressing) -> u32 {
    let first = i64::from(flow.syn);
    (1i64.wrapping_add(k.wrapping_sub(first).wrapping_mul(i64::from(flow.mss)))) as u32
}

/// TCP flags: SYN, ACK, and ECN's ECN-Echo and CWR (RFC 3168 §6.1).
const SYN: u8 = 0x02;
const ACK: u8 = 0x10;
const ECE: u8 = 0x40;
const CWR: u8 = 0x80;

fn tcp_header(
    buf: &mut Vec<u8>,
    sport: u16,
    dport: u16,
    seq: u32,
    ack: u32,
    flags: u8,
    options: &[u8],
) {
    buf.extend_from_slice(&sport.to_be_bytes());
    buf.extend_from_slice(&dport.to_be_bytes());
    buf.extend_from_slice(&seq.to_be_bytes());
    buf.extend_from_slice(&ack.to_be_bytes());
    let words = (TCP_HEADER_LEN + options.len()) / 4;
    buf.push((words as u8) << 4);
    buf.push(flags);
    buf.extend_from_slice(&TCP_WINDOW.to_be_bytes());
    buf.extend_from_slice(&[0; 4]); // checksum, urgent pointer
    buf.extend_from_slice(options);
}

/// `len` bytes of TCP options (a multiple of 4) in `room`: with 12 or more, two NOPs and a
/// timestamp option (RFC 7323 §3: TSval the send time in ms, TSecr 0 as netsim models no
/// echo), as Linux's segments carry; the rest an end-of-list and zeros (RFC 9293 §3.2).
fn data_options(room: &mut [u8; MAX_TCP_OPTIONS], len: u8, sent_ms: u32) -> &[u8] {
    let len = usize::from(len).min(MAX_TCP_OPTIONS) / 4 * 4;
    room.fill(0);
    if len >= 12 {
        room[..4].copy_from_slice(&[1, 1, 8, 10]);
        room[4..8].copy_from_slice(&sent_ms.to_be_bytes());
    }
    &room[..len]
}

/// A data segment: sequence number from the packet number, acknowledging the receiver's
/// (empty) stream at 1, with the flow's option bytes ([`data_options`]); packet 0 of a TCP
/// with a SYN is the SYN, at 0 (a header as long, so its `header_size` bytes carry no
/// payload). Returns the TCP header length.
fn tcp_data(
    buf: &mut Vec<u8>,
    data: &TcpData,
    flow: &FlowAddressing,
    ports: (u16, u16),
    sent_ms: u32,
) -> usize {
    let (sport, dport) = ports;
    let mut room = [0u8; MAX_TCP_OPTIONS];
    let options = data_options(&mut room, flow.data_options, sent_ms);
    if flow.syn && data.seqno == 0 {
        tcp_header(buf, sport, dport, 0, 0, SYN, options);
    } else {
        let flags = if data.cwr { ACK | CWR } else { ACK };
        tcp_header(
            buf,
            sport,
            dport,
            byte_seq(data.seqno, flow),
            1,
            flags,
            options,
        );
    }
    TCP_HEADER_LEN + options.len()
}

/// An ACK with its SACK option (two NOPs, kind 5, 8 bytes per block); returns the TCP header
/// length.
fn tcp_ack(
    buf: &mut Vec<u8>,
    ack: &TcpAck,
    flow: &FlowAddressing,
    sport: u16,
    dport: u16,
) -> usize {
    let blocks = ack.blocks();
    let mut options = Vec::with_capacity(4 + 8 * blocks.len());
    if !blocks.is_empty() {
        options.extend_from_slice(&[1, 1, 5, (2 + 8 * blocks.len()) as u8]);
        for block in blocks {
            options.extend_from_slice(&byte_seq(i64::from(block.left), flow).to_be_bytes());
            options.extend_from_slice(&byte_seq(i64::from(block.right), flow).to_be_bytes());
        }
    }
    let next = byte_seq(ack.seqno().saturating_add(1), flow);
    let flags = if ack.ece() { ACK | ECE } else { ACK };
    tcp_header(buf, sport, dport, 1, next, flags, &options);
    TCP_HEADER_LEN + options.len()
}

/// Adds `data` as big-endian 16-bit words to `sum` (odd length padded with a zero byte).
fn sum_words(mut sum: u32, data: &[u8]) -> u32 {
    let mut chunks = data.chunks_exact(2);
    for pair in &mut chunks {
        sum = sum.wrapping_add(u32::from(u16::from_be_bytes([pair[0], pair[1]])));
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    if let [last] = chunks.remainder() {
        sum = sum.wrapping_add(u32::from(*last) << 8);
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    sum
}

/// The Internet checksum (RFC 1071) of `data`, continuing from a partial sum.
fn checksum(partial: u32, data: &[u8]) -> u16 {
    let mut sum = sum_words(partial, data);
    while sum >> 16 != 0 {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    !(sum as u16)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::tcp::SackBlock;
    use crate::packet::{FlowId, NodeId, TfrcData};
    use proptest::prelude::*;
    use std::time::Duration;
    use tfrc::{DataHeader, FeedbackHeader, Time};

    const FLOW: FlowAddressing = FlowAddressing {
        flow: 3,
        from: 0,
        to: 5,
        mss: 960,
        syn: false,
        data_options: 0,
    };

    fn packet(size: u32, payload: Payload, reverse: bool) -> Packet {
        let mut p = Packet::new(FlowId(3), 7, size, NodeId(5), Time::ZERO, payload);
        p.reverse = reverse;
        p
    }

    fn u16_at(buf: &[u8], at: usize) -> u16 {
        u16::from_be_bytes([buf[at], buf[at + 1]])
    }

    fn u32_at(buf: &[u8], at: usize) -> u32 {
        u32::from_be_bytes(buf[at..at + 4].try_into().unwrap())
    }

    #[test]
    fn a_tcp_data_segment_has_byte_sequence_numbers_and_the_simulated_size() {
        let mut buf = Vec::new();
        let p = packet(1000, Payload::TcpData(TcpData::plain(4)), false);
        assert_eq!(build(&p, &FLOW, &mut buf), 1000);
        assert_eq!(buf.len(), 1000);
        assert_eq!(u16_at(&buf, 2), 1000);
        assert_eq!(buf[9], 6);
        assert_eq!(&buf[12..16], &[10, 0, 0, 1]);
        assert_eq!(&buf[16..20], &[10, 0, 0, 6]);
        assert_eq!(u32_at(&buf, 24), 1 + 4 * 960);
        assert_eq!(checksum(0, &buf[..20]), 0, "IPv4 header checksum verifies");
    }

    #[test]
    fn a_sack_ack_carries_its_blocks_and_grows_past_forty_bytes() {
        let mut ack = TcpAck::cumulative(9);
        ack.sack[0] = SackBlock {
            left: 11,
            right: 14,
        };
        ack.sack_len = 1;
        let mut buf = Vec::new();
        build(&packet(40, Payload::TcpAck(ack), true), &FLOW, &mut buf);
        assert_eq!(buf.len(), 40 + 12);
        assert_eq!(&buf[12..16], &[10, 0, 0, 6], "ACKs come from the sink");
        assert_eq!(u32_at(&buf, 28), 1 + 10 * 960);
        assert_eq!(buf[32] >> 4, 8, "data offset: 20 + 12 option bytes");
        assert_eq!(&buf[40..44], &[1, 1, 5, 10]);
        assert_eq!(u32_at(&buf, 44), 1 + 11 * 960);
        assert_eq!(u32_at(&buf, 48), 1 + 14 * 960);
    }

    #[test]
    fn tfrc_packets_carry_the_wire_format_on_the_dissector_ports() {
        let header = DataHeader {
            seq: 42,
            timestamp: Time::from_nanos(5),
            rtt: Duration::from_millis(80),
        };
        let mut buf = Vec::new();
        build(
            &packet(1000, Payload::TfrcData(TfrcData::new(&header, 0)), false),
            &FLOW,
            &mut buf,
        );
        assert_eq!(buf.len(), 1000);
        assert_eq!(buf[9], 17);
        assert_eq!(u16_at(&buf, 22), 50_003);
        assert_eq!(u16_at(&buf, 24), 980);
        let (parsed, _) = DataHeader::parse(&buf[28..]).unwrap();
        assert_eq!(parsed, header);

        let feedback = FeedbackHeader {
            timestamp_echo: Time::from_nanos(9),
            t_delay: Duration::from_micros(3),
            x_recv_bytes_per_s: 125_000.0,
            p: 0.01,
        };
        build(
            &packet(40, Payload::TfrcFeedback(feedback), true),
            &FLOW,
            &mut buf,
        );
        assert_eq!(
            buf.len(),
            20 + 8 + 42,
            "the feedback does not fit in 40 bytes"
        );
        assert_eq!(
            u16_at(&buf, 20),
            50_003,
            "feedback leaves from the TFRC port"
        );
        assert_eq!(FeedbackHeader::parse(&buf[28..]).unwrap(), feedback);
    }

    #[test]
    fn udp_and_tcp_checksums_verify() {
        let mut buf = Vec::new();
        for p in [
            packet(210, Payload::Cbr, false),
            packet(1000, Payload::TcpData(TcpData::plain(1)), false),
        ] {
            build(&p, &FLOW, &mut buf);
            let mut pseudo = [0u8; 12];
            pseudo[..8].copy_from_slice(&buf[12..20]);
            pseudo[9] = buf[9];
            pseudo[10..12].copy_from_slice(&((buf.len() - 20) as u16).to_be_bytes());
            assert_eq!(checksum(sum_words(0, &pseudo), &buf[20..]), 0);
        }
    }

    #[test]
    fn a_linux_segment_carries_its_option_bytes_so_its_payload_is_the_mss() {
        // The linux preset: 1500 bytes on the wire, 52 of them TCP/IP headers, 1448 of data.
        let flow = FlowAddressing {
            mss: 1448,
            data_options: FlowAddressing::data_options_for(52),
            ..FLOW
        };
        assert_eq!(flow.data_options, 12);
        let mut buf = Vec::new();
        let p = packet(1500, Payload::TcpData(TcpData::plain(2)), false);
        assert_eq!(build(&p, &flow, &mut buf), 1500);
        assert_eq!(buf.len(), 1500);
        let tcp_len = usize::from(buf[32] >> 4) * 4;
        assert_eq!(tcp_len, 32);
        assert_eq!(buf.len() - 20 - tcp_len, 1448, "the payload is one mss");
        // The next segment starts where this one's payload ends.
        assert_eq!(u32_at(&buf, 24), 1 + 2 * 1448);
        assert_eq!(&buf[40..44], &[1, 1, 8, 10], "two NOPs and a timestamp");
        assert_eq!(u32_at(&buf, 44), 0, "sent at 0 ms");
        assert_eq!(u32_at(&buf, 48), 0, "no echo");
        let mut later = packet(1500, Payload::TcpData(TcpData::plain(3)), false);
        later.sent_at = Time::from_nanos(4_321_999_999);
        build(&later, &flow, &mut buf);
        assert_eq!(u32_at(&buf, 44), 4321);
        // Fewer than 12 option bytes hold no timestamp: an end-of-list and padding.
        let short = FlowAddressing {
            data_options: 8,
            ..flow
        };
        build(&later, &short, &mut buf);
        assert_eq!((buf[32] >> 4, &buf[40..48]), (7, &[0u8; 8][..]));
        // The linux flow's 52-byte SYN is all headers.
        let syn = FlowAddressing { syn: true, ..flow };
        build(
            &packet(52, Payload::TcpData(TcpData::plain(0)), false),
            &syn,
            &mut buf,
        );
        assert_eq!((buf.len(), buf[32] >> 4, buf[33]), (52, 8, SYN));
        // ns-2's 40-byte headers carry none; over-long ones stop at 40 option bytes.
        assert_eq!(FlowAddressing::data_options_for(40), 0);
        assert_eq!(FlowAddressing::data_options_for(28), 0);
        assert_eq!(FlowAddressing::data_options_for(54), 12);
        assert_eq!(FlowAddressing::data_options_for(500), 40);
    }

    #[test]
    fn with_a_syn_packet_zero_is_the_syn_and_data_starts_at_byte_one() {
        let flow = FlowAddressing { syn: true, ..FLOW };
        let mut buf = Vec::new();
        build(
            &packet(40, Payload::TcpData(TcpData::plain(0)), false),
            &flow,
            &mut buf,
        );
        assert_eq!((u32_at(&buf, 24), buf[33]), (0, SYN));
        build(
            &packet(1000, Payload::TcpData(TcpData::plain(1)), false),
            &flow,
            &mut buf,
        );
        assert_eq!((u32_at(&buf, 24), buf[33]), (1, ACK));
        build(
            &packet(40, Payload::TcpAck(TcpAck::cumulative(0)), true),
            &flow,
            &mut buf,
        );
        assert_eq!(u32_at(&buf, 28), 1, "the ACK of the SYN");
        build(
            &packet(40, Payload::TcpAck(TcpAck::cumulative(2)), true),
            &flow,
            &mut buf,
        );
        assert_eq!(u32_at(&buf, 28), 1 + 2 * 960);
    }

    fn payload_strategy() -> impl Strategy<Value = Payload> {
        let sack = (any::<u32>(), any::<u32>()).prop_map(|(left, right)| SackBlock { left, right });
        prop_oneof![
            Just(Payload::Cbr),
            Just(Payload::OnOff),
            any::<i64>().prop_map(|k| Payload::TcpData(TcpData::plain(k))),
            (any::<i64>(), proptest::collection::vec(sack, 0..=3)).prop_map(|(a, blocks)| {
                let mut ack = TcpAck::cumulative(a);
                ack.sack_len = blocks.len() as u8;
                ack.sack[..blocks.len()].copy_from_slice(&blocks);
                Payload::TcpAck(ack)
            }),
            (any::<u64>(), any::<u64>()).prop_map(|(seq, ns)| {
                let header = DataHeader {
                    seq,
                    timestamp: Time::from_nanos(ns),
                    rtt: Duration::from_nanos(ns / 3),
                };
                Payload::TfrcData(TfrcData::new(&header, 0))
            }),
            (0.0..1e12f64, 0.0..=1.0f64).prop_map(|(x, p)| Payload::TfrcFeedback(FeedbackHeader {
                timestamp_echo: Time::from_nanos(7),
                t_delay: Duration::from_nanos(3),
                x_recv_bytes_per_s: x,
                p,
            })),
        ]
    }

    proptest! {
        /// Any packet gives a well-formed IPv4 frame: the simulated length (or its headers'
        /// when they do not fit, at most 65535), a verifying header checksum, and the IP total
        /// length equal to the frame's.
        #[test]
        fn any_packet_makes_a_well_formed_frame(
            size in prop_oneof![1u32..100, 1u32..200_000],
            seq in any::<u64>(),
            reverse in any::<bool>(),
            syn in any::<bool>(),
            mss in 1u32..70_000,
            data_options in prop_oneof![Just(0u8), Just(12u8), Just(40u8)],
            payload in payload_strategy(),
        ) {
            let flow = FlowAddressing { syn, mss, data_options, ..FLOW };
            let mut p = packet(size, payload, reverse);
            p.seq = seq;
            let mut buf = Vec::new();
            prop_assert_eq!(build(&p, &flow, &mut buf), size);
            let headers = IPV4_HEADER_LEN + match &p.payload {
                Payload::TcpData(_) => TCP_HEADER_LEN + usize::from(data_options),
                Payload::TcpAck(ack) if !ack.blocks().is_empty() => {
                    TCP_HEADER_LEN + 4 + 8 * ack.blocks().len()
                }
                Payload::TcpAck(_) => TCP_HEADER_LEN,
                Payload::TfrcData(..) => UDP_HEADER_LEN + DATA_HEADER_LEN,
                Payload::TfrcFeedback(_) => UDP_HEADER_LEN + FEEDBACK_LEN,
                _ => UDP_HEADER_LEN,
            };
            // As long as the packet, or as its headers where they do not fit; at most 65535.
            prop_assert_eq!(buf.len(), (size as usize).max(headers).min(MAX_FRAME_LEN));
            prop_assert_eq!(usize::from(u16_at(&buf, 2)), buf.len());
            prop_assert_eq!(checksum(0, &buf[..IPV4_HEADER_LEN]), 0);
        }
    }

    #[test]
    fn ecn_state_sets_the_ip_ecn_field() {
        let mut buf = Vec::new();
        let mut p = packet(500, Payload::Cbr, false);
        p.ecn_capable = true;
        build(&p, &FLOW, &mut buf);
        assert_eq!(buf[1], 0b10);
        p.ecn_ce = true;
        build(&p, &FLOW, &mut buf);
        assert_eq!(buf[1], 0b11);
    }

    #[test]
    fn ece_and_cwr_set_the_tcp_flags() {
        // The flags byte is the TCP header's 14th, after the 20-byte IPv4 header.
        let flags = |payload: Payload| {
            let mut buf = Vec::new();
            build(&packet(1000, payload, false), &FLOW, &mut buf);
            buf[IPV4_HEADER_LEN + 13]
        };
        let mut data = TcpData::plain(3);
        assert_eq!(flags(Payload::TcpData(data)), ACK);
        data.cwr = true;
        assert_eq!(flags(Payload::TcpData(data)), ACK | CWR);
        let mut ack = TcpAck::cumulative(3);
        assert_eq!(flags(Payload::TcpAck(ack)), ACK);
        ack.set_ece(true);
        assert_eq!(flags(Payload::TcpAck(ack)), ACK | ECE);
    }
}
