//! DropTail: a FIFO that drops the arriving packet when it does not fit (ns-2.35
//! `queue/drop-tail.cc` with `drop_front_` false; the limit's off-by-one is discussed at
//! [`QueueLimit::ns2_droptail`]).

use super::{Enqueued, Fifo, QueueLimit, QueueStats};
use crate::packet::Packet;

/// A DropTail queue's state.
#[derive(Clone, Debug)]
pub struct DropTail {
    fifo: Fifo,
    limit: QueueLimit,
    stats: QueueStats,
}

impl DropTail {
    /// An empty queue with buffer `limit`.
    pub fn new(limit: QueueLimit) -> DropTail {
        DropTail {
            fifo: Fifo::for_limit(limit),
            limit,
            stats: QueueStats::default(),
        }
    }

    /// Offers an arriving packet: it joins the tail if it fits in the buffer, else it is dropped.
    pub fn enqueue(&mut self, packet: Packet) -> Enqueued {
        self.stats.arrivals += 1;
        if self.limit.fits(&self.fifo, &packet) {
            self.fifo.push(packet);
            Enqueued::Accepted
        } else {
            self.stats.forced_drops += 1;
            Enqueued::Dropped(packet)
        }
    }

    /// Offers a packet to the empty queue of an idle transmitter, which would take it back at
    /// once: the counts of [`enqueue`](DropTail::enqueue) and [`dequeue`](DropTail::dequeue)
    /// without storing the packet (most packets on access links). `Ok` holds the packet to
    /// transmit, `Err` the packet dropped because it does not fit in an empty buffer.
    pub fn pass_through(&mut self, packet: Packet) -> Result<Packet, Packet> {
        debug_assert!(self.fifo.is_empty(), "passing a packet by waiting ones");
        self.stats.arrivals += 1;
        if self.limit.fits(&self.fifo, &packet) {
            self.stats.departures += 1;
            Ok(packet)
        } else {
            self.stats.forced_drops += 1;
            Err(packet)
        }
    }

    /// Takes the packet at the head, if any.
    pub fn dequeue(&mut self) -> Option<Packet> {
        let packet = self.fifo.pop()?;
        self.stats.departures += 1;
        Some(packet)
    }

    /// Packets waiting.
    pub fn len_packets(&self) -> usize {
        self.fifo.len()
    }

    /// Bytes waiting.
    pub fn len_bytes(&self) -> u64 {
        self.fifo.bytes()
    }

    /// The buffer size.
    pub fn limit(&self) -> QueueLimit {
        self.limit
    }

    /// Counters since construction.
    pub fn stats(&self) -> QueueStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::test_packet;

    fn packet(seq: u64, size_bytes: u32) -> Packet {
        test_packet(seq, size_bytes)
    }

    #[test]
    fn packet_limit_is_exact_and_fifo_order_kept() {
        let mut q = DropTail::new(QueueLimit::Packets(3));
        for seq in 0..3 {
            assert_eq!(q.enqueue(packet(seq, 1000)), Enqueued::Accepted);
        }
        assert_eq!(q.enqueue(packet(3, 1)), Enqueued::Dropped(packet(3, 1)));
        assert_eq!(q.len_packets(), 3);
        assert_eq!(q.dequeue().map(|p| p.seq), Some(0));
        assert_eq!(q.enqueue(packet(4, 1000)), Enqueued::Accepted);
        let order: Vec<u64> = std::iter::from_fn(|| q.dequeue()).map(|p| p.seq).collect();
        assert_eq!(order, vec![1, 2, 4]);
        assert_eq!(q.stats().forced_drops, 1);
    }

    #[test]
    fn byte_limit_admits_a_small_packet_after_refusing_a_large_one() {
        let mut q = DropTail::new(QueueLimit::Bytes(2500));
        assert_eq!(q.enqueue(packet(0, 1000)), Enqueued::Accepted);
        assert_eq!(q.enqueue(packet(1, 1000)), Enqueued::Accepted);
        assert!(matches!(q.enqueue(packet(2, 1000)), Enqueued::Dropped(_)));
        assert_eq!(q.enqueue(packet(3, 500)), Enqueued::Accepted);
        assert_eq!(q.len_bytes(), 2500);
        assert!(matches!(q.enqueue(packet(4, 1)), Enqueued::Dropped(_)));
    }

    #[test]
    fn passing_through_an_empty_queue_counts_as_enqueue_and_dequeue() {
        for limit in [
            QueueLimit::Packets(1),
            QueueLimit::Packets(0),
            QueueLimit::Bytes(999),
        ] {
            let (mut passed, mut queued) = (DropTail::new(limit), DropTail::new(limit));
            for seq in 0..3 {
                let through = passed.pass_through(packet(seq, 1000));
                let via_fifo = match queued.enqueue(packet(seq, 1000)) {
                    Enqueued::Dropped(p) => Err(p),
                    _ => queued.dequeue().ok_or(packet(seq, 1000)),
                };
                assert_eq!(through, via_fifo, "{limit:?}");
                assert_eq!(passed.stats(), queued.stats(), "{limit:?}");
                assert_eq!(passed.len_packets(), 0);
            }
        }
    }

    #[test]
    fn zero_limit_drops_everything() {
        let mut q = DropTail::new(QueueLimit::Packets(0));
        assert!(matches!(q.enqueue(packet(0, 40)), Enqueued::Dropped(_)));
        assert_eq!(q.dequeue(), None);
    }
}
