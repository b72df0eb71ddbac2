//! The TCP headers netsim's one-way TCP agents carry (ns-2 `hdr_tcp`, reduced to what the
//! one-way agents read): a data packet's sequence number, an ACK's cumulative sequence number
//! and up to [`MAX_SACK_BLOCKS`] SACK blocks. Both are small `Copy` values so that
//! [`crate::packet::Packet`] stays allocation-free and no larger than the TFRC headers make it.

/// The most SACK blocks an ACK can carry (ns-2's `NSA` is 3 for `Agent/TCPSink/Sack1`; RFC 2018
/// allows 3 with timestamps, 4 without).
pub const MAX_SACK_BLOCKS: usize = 3;

/// A connection's id within one flow: 24 bits, so that [`TcpAck`] stays 32 bytes and
/// [`crate::packet::Payload`] 40 (`packets_stay_small`); a flow opens at most
/// [`ConnId::MAX`] + 1 connections.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ConnId([u8; 3]);

impl ConnId {
    /// The largest id, 2^24 - 1.
    pub const MAX: u32 = (1 << 24) - 1;

    /// The id `n`, which must be at most [`ConnId::MAX`] (higher bits are dropped).
    pub fn new(n: u32) -> ConnId {
        let [a, b, c, _] = n.to_le_bytes();
        ConnId([a, b, c])
    }

    /// The id as a number.
    pub fn get(self) -> u32 {
        let [a, b, c] = self.0;
        u32::from_le_bytes([a, b, c, 0])
    }
}

/// A TCP data packet: its sequence number in packets (ns-2 `hdr_tcp::seqno_`, +1 per packet,
/// from 0; with `syn` packet 0 is the 40-byte SYN), and, for the many short connections one
/// flow multiplexes (web traffic, short TCP flows: `agent/tcp_pool.rs`), the connection's id
/// and the length of its message.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpData {
    /// Sequence number, in packets.
    pub seqno: i64,
    /// The connection within the flow (0 for a plain `tcp` flow, which has only one).
    pub conn: ConnId,
    /// Data packets the connection carries in all (the SYN excluded), so that the receiving
    /// pool knows when the message is complete, as a FIN would tell; 0 for a plain flow
    /// (unbounded).
    pub msg_len: u32,
    /// The CWR flag (RFC 3168 §6.1.2): the sender reduced its window on an ECN-Echo, so the
    /// receiver may stop echoing.
    pub cwr: bool,
}

impl TcpData {
    /// Packet `seqno` of a plain flow (connection 0, no message length).
    pub fn plain(seqno: i64) -> TcpData {
        TcpData {
            seqno,
            ..TcpData::default()
        }
    }
}

/// One SACK block: packets `left..right` (right exclusive, as ns-2's `sa_left`/`sa_right`) have
/// arrived above the cumulative ACK.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackBlock {
    /// First packet of the block.
    pub left: u32,
    /// One past the last packet of the block.
    pub right: u32,
}

/// A TCP acknowledgement (ns-2 one-way sinks): the highest in-order sequence number received
/// (`Acker::Seqno()`, i.e. the next expected minus 1, so -1 before packet 0 arrives), and the
/// SACK blocks, most recent first (RFC 2018 §4). The ACK number is 32 bits (like ns-2's `int`),
/// which keeps [`crate::packet::Payload`] at 40 bytes: a flow may send up to 2^31 - 1 packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpAck {
    /// The highest in-order sequence number received.
    pub ack: i32,
    /// SACK blocks; only the first `sack_len` are meaningful.
    pub sack: [SackBlock; MAX_SACK_BLOCKS],
    /// How many SACK blocks the ACK carries (0 from a non-SACK sink) in the low bits, and the
    /// ECN-Echo flag in bit [`TcpAck::ECE`] (kept in the same byte so that the header stays 32
    /// bytes); read them with [`TcpAck::blocks`] and [`TcpAck::ece`].
    pub sack_len: u8,
    /// The connection acknowledged (see [`TcpData::conn`]; 0 for a plain flow).
    pub conn: ConnId,
}

impl TcpAck {
    /// The bit of [`TcpAck::sack_len`] that carries ECN-Echo (RFC 3168 §6.1.3: the receiver
    /// saw a CE mark and has not yet seen the sender's CWR).
    pub const ECE: u8 = 0x80;

    /// A plain cumulative ACK without SACK blocks.
    pub fn cumulative(ack: i64) -> TcpAck {
        TcpAck {
            ack: ack.clamp(-1, i64::from(i32::MAX)) as i32,
            sack: [SackBlock::default(); MAX_SACK_BLOCKS],
            sack_len: 0,
            conn: ConnId::default(),
        }
    }

    /// The ACK number as a sequence number.
    pub fn seqno(&self) -> i64 {
        i64::from(self.ack)
    }

    /// The SACK blocks carried.
    pub fn blocks(&self) -> &[SackBlock] {
        &self.sack[..usize::from(self.sack_len & !TcpAck::ECE).min(MAX_SACK_BLOCKS)]
    }

    /// Whether the ACK carries ECN-Echo.
    pub fn ece(&self) -> bool {
        self.sack_len & TcpAck::ECE != 0
    }

    /// Sets or clears ECN-Echo, leaving the SACK block count alone.
    pub fn set_ece(&mut self, ece: bool) {
        self.sack_len = (self.sack_len & !TcpAck::ECE) | if ece { TcpAck::ECE } else { 0 };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connection_ids_hold_24_bits() {
        for n in [0, 1, 0xabcdef, ConnId::MAX] {
            assert_eq!(ConnId::new(n).get(), n);
        }
        assert_eq!(ConnId::new(ConnId::MAX + 1).get(), 0);
        assert_eq!(TcpData::plain(7).conn, ConnId::default());
        assert_eq!(std::mem::size_of::<TcpAck>(), 32);
    }

    #[test]
    fn ece_shares_a_byte_with_the_block_count() {
        let mut ack = TcpAck::cumulative(5);
        ack.sack_len = 2;
        assert!(!ack.ece());
        ack.set_ece(true);
        assert!(ack.ece());
        assert_eq!(ack.blocks().len(), 2);
        ack.set_ece(false);
        assert_eq!(ack.sack_len, 2);
    }
}
