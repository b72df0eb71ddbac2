//! A TCP sender driven by hand-made ACKs, for the unit tests of the sender and its loss
//! recovery: each ACK arrives 1 ms after the previous event, and what the sender sends in
//! answer is returned as sequence numbers.

use std::time::Duration;

use tfrc::Time;

use super::header::{SackBlock, TcpAck, MAX_SACK_BLOCKS};
use super::{TcpConfig, TcpSender};
use crate::agent::{Agent, Outbox};
use crate::packet::{FlowId, NodeId, Packet, Payload};
use crate::rng::stream;

/// A sender, its outbox and the simulated time.
pub(super) struct Driver {
    pub(super) sender: TcpSender,
    pub(super) out: Outbox,
    pub(super) now: Time,
}

impl Driver {
    /// A started sender with `config`; what it sent at the start is discarded.
    pub(super) fn new(config: TcpConfig) -> Driver {
        let mut d = Driver {
            sender: TcpSender::new(&config, stream(1, "test")),
            out: Outbox::default(),
            now: Time::ZERO,
        };
        d.sender.on_start(Time::ZERO, &mut d.out);
        d.sent();
        d
    }

    /// What the sender sent since the last call.
    pub(super) fn sent(&mut self) -> Vec<i64> {
        self.out
            .drain()
            .map(|o| match o.payload {
                Payload::TcpData(d) => d.seqno,
                other => panic!("{other:?}"),
            })
            .collect()
    }

    /// A cumulative ACK for `ack`, 1 ms on.
    pub(super) fn ack(&mut self, ack: i64) -> Vec<i64> {
        self.sack(ack, &[])
    }

    /// An ACK for `ack` carrying SACK blocks `(first, one past the last)`, 1 ms on.
    pub(super) fn sack(&mut self, ack: i64, blocks: &[(u32, u32)]) -> Vec<i64> {
        self.now += Duration::from_millis(1);
        let mut tcp_ack = TcpAck::cumulative(ack);
        for (slot, &(left, right)) in tcp_ack.sack.iter_mut().zip(blocks) {
            *slot = SackBlock { left, right };
        }
        tcp_ack.sack_len = blocks.len().min(MAX_SACK_BLOCKS) as u8;
        let packet = Packet::new(
            FlowId(0),
            0,
            40,
            NodeId(0),
            Time::ZERO,
            Payload::TcpAck(tcp_ack),
        );
        self.sender.handle_packet(self.now, &packet, &mut self.out);
        self.sent()
    }

    /// The application has more to send (the sender's `on_start` again), now.
    pub(super) fn start(&mut self) -> Vec<i64> {
        self.sender.on_start(self.now, &mut self.out);
        self.sent()
    }

    /// Lets `by` pass, firing the sender's timers that fall due on the way; returns what it
    /// sent.
    pub(super) fn wait(&mut self, by: Duration) -> Vec<i64> {
        let until = self.now + by;
        while let Some(at) = self.sender.poll_timeout().filter(|&at| at <= until) {
            self.now = at.max(self.now);
            self.sender.handle_timeout(self.now, &mut self.out);
        }
        self.now = until;
        self.sent()
    }
}
