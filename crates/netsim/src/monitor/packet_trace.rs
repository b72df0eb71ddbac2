//! The optional per-packet trace: one record per packet event (sent, enqueued, dropped,
//! transmission start, delivered), in the spirit of an ns-2 trace file, for debugging and for
//! figures that need individual packets. Off by default; the engine creates one only when a
//! scenario asks, and it keeps at most `limit` records so memory stays bounded.

use tfrc::Time;

use super::DropCause;

/// What happened to a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PacketEvent {
    /// The agent emitted the packet at its node.
    Sent,
    /// The packet joined a link's waiting queue.
    Enqueued,
    /// The packet was lost, and where.
    Dropped(DropCause),
    /// A link's transmitter started sending the packet.
    TransmissionStart,
    /// The packet reached its destination agent.
    Delivered,
}

/// One packet event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PacketRecord {
    /// When it happened.
    pub time: Time,
    /// What happened.
    pub event: PacketEvent,
    /// The link's index, for link events (`None` for `Sent` and `Delivered`).
    pub link: Option<u32>,
    /// The node where it happened (for a link event, the link's sending node).
    pub node: u32,
    /// The packet's flow.
    pub flow: u32,
    /// The packet's per-flow, per-direction sequence number.
    pub seq: u64,
    /// The packet's size on the wire.
    pub size_bytes: u32,
    /// Whether the packet travels the reverse direction (ACKs, feedback).
    pub reverse: bool,
}

/// A bounded log of packet events: keeps the first `limit` records and only counts the rest, so
/// a long run cannot exhaust memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PacketTrace {
    limit: usize,
    records: Vec<PacketRecord>,
    overflowed: u64,
}

impl PacketTrace {
    /// An empty trace keeping at most `limit` records (0 keeps none and counts everything as
    /// overflow). Nothing is reserved up front: the limit may be far above what a run produces.
    pub fn new(limit: usize) -> PacketTrace {
        PacketTrace {
            limit,
            records: Vec::new(),
            overflowed: 0,
        }
    }

    /// Logs `record`, or counts it in [`overflowed`](PacketTrace::overflowed) once the trace
    /// holds `limit` records.
    pub fn record(&mut self, record: PacketRecord) {
        if self.records.len() < self.limit {
            self.records.push(record);
        } else {
            self.overflowed = self.overflowed.saturating_add(1);
        }
    }

    /// The records kept, in the order logged.
    pub fn records(&self) -> &[PacketRecord] {
        &self.records
    }

    /// How many records arrived after the trace was full and were not kept.
    pub fn overflowed(&self) -> u64 {
        self.overflowed
    }

    /// The most records the trace keeps.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// The records kept, by value.
    pub fn into_records(self) -> Vec<PacketRecord> {
        self.records
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(seq: u64, event: PacketEvent) -> PacketRecord {
        PacketRecord {
            time: Time::from_nanos(seq * 10),
            event,
            link: Some(2),
            node: 1,
            flow: 0,
            seq,
            size_bytes: 1000,
            reverse: false,
        }
    }

    #[test]
    fn keeps_the_first_records_up_to_the_limit_and_counts_the_rest() {
        let mut t = PacketTrace::new(3);
        assert_eq!(t.limit(), 3);
        t.record(rec(0, PacketEvent::Sent));
        t.record(rec(1, PacketEvent::Enqueued));
        assert_eq!(t.records().len(), 2);
        assert_eq!(t.overflowed(), 0);
        t.record(rec(2, PacketEvent::Dropped(DropCause::Queue)));
        t.record(rec(3, PacketEvent::TransmissionStart));
        t.record(rec(4, PacketEvent::Delivered));
        assert_eq!(t.overflowed(), 2);
        let seqs: Vec<u64> = t.records().iter().map(|r| r.seq).collect();
        assert_eq!(seqs, vec![0, 1, 2]);
        assert_eq!(t.records()[2].event, PacketEvent::Dropped(DropCause::Queue));
        let kept = t.into_records();
        assert_eq!(kept.len(), 3);
        assert_eq!(kept[1], rec(1, PacketEvent::Enqueued));
    }

    #[test]
    fn a_zero_limit_keeps_nothing() {
        let mut t = PacketTrace::new(0);
        t.record(rec(0, PacketEvent::Sent));
        assert!(t.records().is_empty());
        assert_eq!(t.overflowed(), 1);
        assert!(t.into_records().is_empty());
    }
}
