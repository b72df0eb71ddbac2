//! The simulated packet: a small value type moved (never shared) from agent to link to agent.

use tfrc::Time;

/// A TFRC data packet as the simulator carries it: the fields of `tfrc::DataHeader`, the RTT in
/// whole nanoseconds (8 bytes where a `Duration` takes 16, so that a packet stays 72 bytes), and
/// the sender's feedback round (`tfrc::Sender::round`), which ns-2's loss-event round check
/// reads and the wire format does not carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TfrcData {
    /// The sequence number.
    pub seq: u64,
    /// The sender's clock when the packet was sent.
    pub timestamp: Time,
    /// The sender's RTT estimate, nanoseconds (saturating).
    pub rtt_ns: u64,
    /// The sender's feedback round when the packet was sent.
    pub round: u32,
}

impl TfrcData {
    /// `header` sent in feedback `round`.
    pub fn new(header: &tfrc::DataHeader, round: u32) -> TfrcData {
        TfrcData {
            seq: header.seq,
            timestamp: header.timestamp,
            rtt_ns: tfrc::time::duration_nanos(header.rtt),
            round,
        }
    }

    /// The header the receiver reads.
    pub fn header(&self) -> tfrc::DataHeader {
        tfrc::DataHeader {
            seq: self.seq,
            timestamp: self.timestamp,
            rtt: std::time::Duration::from_nanos(self.rtt_ns),
        }
    }
}

/// A flow's index in the scenario (stable: it also names the flow's RNG stream).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FlowId(pub u32);

/// A node's index in the topology.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub u32);

/// What a packet carries beyond its size: the protocol header of the agent that sent it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Payload {
    /// A constant-bit-rate data packet (the built-in CBR source).
    Cbr,
    /// A TFRC data packet.
    TfrcData(TfrcData),
    /// A TFRC feedback packet.
    TfrcFeedback(tfrc::FeedbackHeader),
    /// A TCP data packet (ns-2 one-way TCP).
    TcpData(crate::agent::tcp::TcpData),
    /// A TCP acknowledgement, with SACK blocks from a SACK receiver.
    TcpAck(crate::agent::tcp::TcpAck),
    /// A RAP data packet.
    RapData(crate::agent::rap::RapData),
    /// A RAP acknowledgement with the receiver's last hole.
    RapAck(crate::agent::rap::RapAck),
    /// A data packet of a Pareto or exponential ON/OFF source.
    OnOff,
    /// A ping probe.
    Ping(crate::agent::ping::PingHeader),
    /// A ping probe's echo.
    PingEcho(crate::agent::ping::PingHeader),
    /// A TEAR data packet.
    TearData(crate::agent::tear::TearData),
    /// A TEAR feedback packet.
    TearFeedback(crate::agent::tear::TearFeedback),
}

/// One packet in flight. Copy-sized: no heap allocation per packet.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Packet {
    /// The flow this packet belongs to (data and its feedback share the flow's id).
    pub flow: FlowId,
    /// Per-flow, per-direction sequence number (+1 per packet sent).
    pub seq: u64,
    /// Size on the wire in bytes, headers included.
    pub size_bytes: u32,
    /// Where the packet is headed; links forward by this.
    pub dst: NodeId,
    /// When the sending agent emitted it.
    pub sent_at: Time,
    /// Whether the packet travels from the flow's receiver back to its sender (ACKs, feedback).
    pub reverse: bool,
    /// ECN-capable transport: a RED queue with marking on may mark instead of drop.
    pub ecn_capable: bool,
    /// Congestion Experienced, set by a marking queue.
    pub ecn_ce: bool,
    /// The protocol header.
    pub payload: Payload,
}

impl Packet {
    /// A forward-direction packet of `flow` to `dst`, sent at `sent_at`, without ECN.
    pub fn new(
        flow: FlowId,
        seq: u64,
        size_bytes: u32,
        dst: NodeId,
        sent_at: Time,
        payload: Payload,
    ) -> Packet {
        Packet {
            flow,
            seq,
            size_bytes,
            dst,
            sent_at,
            reverse: false,
            ecn_capable: false,
            ecn_ce: false,
            payload,
        }
    }
}

/// A 1000-byte-class CBR packet of flow 0 to node 1, for unit tests.
#[cfg(test)]
pub(crate) fn test_packet(seq: u64, size_bytes: u32) -> Packet {
    Packet::new(
        FlowId(0),
        seq,
        size_bytes,
        NodeId(1),
        Time::ZERO,
        Payload::Cbr,
    )
}

#[cfg(test)]
mod size_tests {
    /// TCP headers must not make every packet larger than the TFRC headers already do.
    #[test]
    fn packets_stay_small() {
        assert!(std::mem::size_of::<super::Payload>() <= 40);
        assert!(std::mem::size_of::<super::Packet>() <= 72);
    }
}
