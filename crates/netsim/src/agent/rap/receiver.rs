//! The RAP sink: acknowledges every data packet at once, describing its newest sequence hole in
//! the ACK (ns-2 `RapAgent::UpdateLastHole` and `SendAck`, used by the sink side of
//! `Agent/RAP`).

use tfrc::Time;

use super::{RapAck, RapConfig};
use crate::agent::{Agent, Outbox};
use crate::packet::{Packet, Payload};

/// The newest hole in the receiver's sequence space: packets `prev_recv + 1 ..= last_miss` are
/// missing, `last_miss + 1 ..= last_recv` have arrived (ns-2 `lastRecv`, `lastMiss`,
/// `prevRecv`). With no hole, `last_miss` and `prev_recv` are 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LastHole {
    /// The highest sequence number received.
    pub last_recv: u64,
    /// The top of the newest hole (0: none).
    pub last_miss: u64,
    /// The packet received just below the newest hole (0: none, or the hole starts at 1).
    pub prev_recv: u64,
}

impl LastHole {
    /// Updates the description for the arrival of packet `seq` (from 1), as ns-2's
    /// `UpdateLastHole`: a jump opens a new hole (forgetting the older one); the next packet in
    /// order extends the received run; a packet filling the hole's top shrinks it from above,
    /// closing it when it was the last missing one; a packet inside the hole becomes the new
    /// bottom edge (the packets below it count as missing from then on); anything else (a
    /// duplicate, or a packet below the hole) changes nothing.
    pub fn on_arrival(&mut self, seq: u64) {
        if seq > self.last_recv + 1 {
            self.prev_recv = self.last_recv;
            self.last_recv = seq;
            self.last_miss = seq - 1;
        } else if seq == self.last_recv + 1 {
            self.last_recv = seq;
        } else if self.last_miss < seq && seq <= self.last_recv {
            // A duplicate of a packet above the hole.
        } else if seq == self.last_miss {
            if self.prev_recv + 1 == seq {
                self.prev_recv = 0;
                self.last_miss = 0;
            } else {
                self.last_miss -= 1;
            }
        } else if self.prev_recv < seq && seq < self.last_miss {
            self.prev_recv = seq;
        }
    }

    /// Whether the history entry `seq` is known to have arrived, by the rule the sender applies
    /// (ns-2 `AckLostPacket`): at or below `last_recv` and either above the hole or its bottom
    /// edge. `None` when `seq` is above `last_recv` (nothing is known yet).
    pub fn received(&self, seq: u64) -> Option<bool> {
        (seq <= self.last_recv).then_some(seq > self.last_miss || seq == self.prev_recv)
    }
}

/// The receiving end of a RAP flow.
#[derive(Clone, Debug)]
pub struct RapSink {
    hole: LastHole,
    ack_bytes: u32,
    acks_sent: u64,
}

impl RapSink {
    /// A sink sending `config.ack_bytes`-byte ACKs.
    pub fn new(config: &RapConfig) -> RapSink {
        RapSink {
            hole: LastHole::default(),
            ack_bytes: config.ack_bytes,
            acks_sent: 0,
        }
    }

    /// The current hole description.
    pub fn hole(&self) -> LastHole {
        self.hole
    }

    /// ACKs sent so far.
    pub fn acks_sent(&self) -> u64 {
        self.acks_sent
    }
}

impl Agent for RapSink {
    /// None: the sink's state is in the ACKs, and the source traces what they carry.
    fn trace_fields(&self) -> &'static [&'static str] {
        &[]
    }

    fn on_start(&mut self, _now: Time, _out: &mut Outbox) {}

    fn on_stop(&mut self, _now: Time, _out: &mut Outbox) {}

    fn handle_packet(&mut self, _now: Time, packet: &Packet, out: &mut Outbox) {
        if let Payload::RapData(data) = packet.payload {
            if data.seq == 0 {
                return; // Sequence numbers start at 1; ns-2 asserts this.
            }
            self.hole.on_arrival(data.seq);
            out.send(
                self.ack_bytes,
                Payload::RapAck(RapAck {
                    seq: data.seq,
                    hole: self.hole,
                }),
            );
            self.acks_sent += 1;
        }
    }

    fn poll_timeout(&self) -> Option<Time> {
        None
    }

    fn handle_timeout(&mut self, _now: Time, _out: &mut Outbox) {}

    fn trace(&self, _values: &mut [f64]) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::rap::RapData;
    use crate::packet::{FlowId, NodeId};
    use proptest::prelude::{Just, Strategy};

    fn hole(last_recv: u64, last_miss: u64, prev_recv: u64) -> LastHole {
        LastHole {
            last_recv,
            last_miss,
            prev_recv,
        }
    }

    fn arrivals(seqs: &[u64]) -> LastHole {
        let mut h = LastHole::default();
        for &s in seqs {
            h.on_arrival(s);
        }
        h
    }

    #[test]
    fn in_order_arrivals_leave_no_hole() {
        assert_eq!(arrivals(&[1, 2, 3, 4]), hole(4, 0, 0));
    }

    #[test]
    fn a_jump_opens_a_hole_and_the_newest_hole_wins() {
        assert_eq!(arrivals(&[1, 2, 5]), hole(5, 4, 2));
        assert_eq!(arrivals(&[1, 2, 5, 6]), hole(6, 4, 2));
        // A second hole replaces the first in the description.
        assert_eq!(arrivals(&[1, 2, 5, 6, 9]), hole(9, 8, 6));
        // A loss of packet 1 itself: the hole is 1..=1 below nothing received.
        assert_eq!(arrivals(&[2, 3]), hole(3, 1, 0));
    }

    #[test]
    fn late_packets_shrink_and_close_the_hole() {
        // Hole 3..=4: 4 arrives late (the top), then 3 closes it.
        assert_eq!(arrivals(&[1, 2, 5, 4]), hole(5, 3, 2));
        assert_eq!(arrivals(&[1, 2, 5, 4, 3]), hole(5, 0, 0));
        // Hole 3..=6: 4 arrives inside it and becomes its bottom edge.
        assert_eq!(arrivals(&[1, 2, 7, 4]), hole(7, 6, 4));
        // Duplicates and packets below the hole change nothing.
        assert_eq!(arrivals(&[1, 2, 7, 4, 7, 1]), hole(7, 6, 4));
    }

    #[test]
    fn received_follows_the_senders_rule() {
        let h = hole(9, 6, 4);
        assert_eq!(h.received(10), None);
        assert_eq!(h.received(9), Some(true));
        assert_eq!(h.received(7), Some(true));
        assert_eq!(h.received(6), Some(false));
        assert_eq!(h.received(5), Some(false));
        assert_eq!(h.received(4), Some(true));
        assert_eq!(h.received(3), Some(false));
        assert_eq!(hole(5, 0, 0).received(1), Some(true));
    }

    #[test]
    fn every_data_packet_is_acked_with_the_hole() {
        let mut sink = RapSink::new(&RapConfig::default());
        let mut out = Outbox::default();
        for seq in [1, 2, 4] {
            let packet = Packet::new(
                FlowId(0),
                seq,
                512,
                NodeId(1),
                Time::ZERO,
                Payload::RapData(RapData { seq }),
            );
            sink.handle_packet(Time::ZERO, &packet, &mut out);
        }
        let acks: Vec<_> = out.packets().to_vec();
        assert_eq!(acks.len(), 3);
        assert!(acks.iter().all(|a| a.size_bytes == 44));
        assert_eq!(
            acks[2].payload,
            Payload::RapAck(RapAck {
                seq: 4,
                hole: hole(4, 3, 2)
            })
        );
        assert_eq!(sink.acks_sent(), 3);
        assert_eq!(sink.hole(), hole(4, 3, 2));
    }

    proptest::proptest! {
        /// Whatever the order and the losses, the description is true: `last_recv` is the
        /// highest arrival, the hole's packets have not arrived, the run above it has.
        #[test]
        fn the_description_is_always_true(
            order in Just((1..=60u64).collect::<Vec<_>>()).prop_shuffle(),
            keep in 1..=60usize,
        ) {
            let mut h = LastHole::default();
            let mut arrived = std::collections::BTreeSet::new();
            for &seq in &order[..keep] {
                h.on_arrival(seq);
                arrived.insert(seq);
                proptest::prop_assert_eq!(Some(&h.last_recv), arrived.iter().next_back());
                if h.last_miss > 0 {
                    proptest::prop_assert!(h.prev_recv < h.last_miss && h.last_miss < h.last_recv);
                    proptest::prop_assert!(h.prev_recv == 0 || arrived.contains(&h.prev_recv));
                    for s in h.prev_recv + 1..=h.last_miss {
                        proptest::prop_assert!(!arrived.contains(&s), "{s} in the hole arrived");
                    }
                    for s in h.last_miss + 1..=h.last_recv {
                        proptest::prop_assert!(arrived.contains(&s), "{s} above the hole missing");
                    }
                } else {
                    proptest::prop_assert_eq!(h.prev_recv, 0);
                }
            }
        }
    }
}
