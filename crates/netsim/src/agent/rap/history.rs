//! The RAP source's transmission history and its two loss detectors (ns-2 `rap.cc`:
//! `transmissionHistory_`, `TimerLostPacket`, `AckLostPacket`, `MarkInactive`).
//!
//! Every packet sent is recorded with its send time until it is acknowledged, known to have
//! arrived, or declared lost. ns-2 keeps an unordered list and walks all of it; here the entries
//! stay in sequence (and so send-time) order, which lets each detector stop at the first entry
//! its rule cannot apply to, with the same outcome.

use std::collections::VecDeque;

use tfrc::Time;

use super::LastHole;

/// Whether a packet's loss still counts (ns-2 `RAP_SENT`), or belongs to a cluster already
/// answered by a backoff (`RAP_INACTIVE`). ns-2's third status, `RAP_PURGED`, is an entry about
/// to be removed; here it is removed at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    Sent,
    Inactive,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    seq: u64,
    departure: Time,
    status: Status,
}

/// What one pass of a detector found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Detected {
    /// Packets declared lost (ns-2 `sessionLossCount_` increments), inactive ones included.
    pub lost: u64,
    /// Of those, the ones sent since the last backoff (ns-2 `numLosses`): any means a new
    /// congestion event.
    pub new: u64,
}

/// The packets sent and not yet accounted for, oldest first.
#[derive(Clone, Debug, Default)]
pub(super) struct History {
    entries: VecDeque<Entry>,
}

impl History {
    /// Records packet `seq`, sent at `now` (sequence numbers increase with each call).
    pub fn push(&mut self, seq: u64, now: Time) {
        self.entries.push_back(Entry {
            seq,
            departure: now,
            status: Status::Sent,
        });
    }

    /// Removes packet `seq` on its ACK and returns its send time, or `None` if it is no longer
    /// in the history (already declared lost or received).
    pub fn take(&mut self, seq: u64) -> Option<Time> {
        let i = self.entries.binary_search_by_key(&seq, |e| e.seq).ok()?;
        self.entries.remove(i).map(|e| e.departure)
    }

    /// Timer-based detection: every packet sent at least `timeout_ns` before `now` is lost.
    pub fn timer_losses(&mut self, now: Time, timeout_ns: u64) -> Detected {
        let mut found = Detected::default();
        while let Some(entry) = self.entries.front() {
            if entry.departure.as_nanos().saturating_add(timeout_ns) > now.as_nanos() {
                break;
            }
            found.lost += 1;
            found.new += u64::from(entry.status == Status::Sent);
            self.entries.pop_front();
        }
        found
    }

    /// ACK-based detection against the receiver's hole: a packet at or below `last_recv` has
    /// arrived if [`LastHole::received`] says so, and is lost once `last_recv` is at least 3
    /// above it; either way it leaves the history. Packets in the hole less than 3 below
    /// `last_recv` wait for a later ACK.
    pub fn ack_losses(&mut self, hole: &LastHole) -> Detected {
        let mut found = Detected::default();
        let end = self.entries.partition_point(|e| e.seq <= hole.last_recv);
        let mut kept = 0;
        for i in 0..end {
            let entry = self.entries[i];
            let keep = match hole.received(entry.seq) {
                Some(true) => false,
                _ if hole.last_recv - entry.seq >= 3 => {
                    found.lost += 1;
                    found.new += u64::from(entry.status == Status::Sent);
                    false
                }
                _ => true,
            };
            if keep {
                self.entries[kept] = entry;
                kept += 1;
            }
        }
        self.entries.drain(kept..end);
        found
    }

    /// The cluster rule: every packet now in flight was sent before this backoff, so its loss
    /// will not count again.
    pub fn mark_inactive(&mut self) {
        for entry in &mut self.entries {
            entry.status = Status::Inactive;
        }
    }

    /// Packets in the history.
    pub fn len(&self) -> usize {
        self.entries.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ms: u64) -> Time {
        Time::from_nanos(ms * 1_000_000)
    }

    fn sent(n: u64) -> History {
        let mut h = History::default();
        for seq in 1..=n {
            h.push(seq, t(10 * seq));
        }
        h
    }

    #[test]
    fn take_returns_the_send_time_once() {
        let mut h = sent(5);
        assert_eq!(h.take(3), Some(t(30)));
        assert_eq!(h.take(3), None);
        assert_eq!(h.take(9), None);
        assert_eq!(h.len(), 4);
    }

    #[test]
    fn timer_detection_takes_everything_older_than_the_timeout() {
        let mut h = sent(5);
        // At 45 ms with a 20 ms timeout, packets sent at 10, 20 (<= 25 ms) are lost.
        assert_eq!(
            h.timer_losses(t(45), 20_000_000),
            Detected { lost: 2, new: 2 }
        );
        assert_eq!(h.len(), 3);
        // Exactly at the timeout counts (ns-2 compares with <=).
        assert_eq!(
            h.timer_losses(t(50), 20_000_000),
            Detected { lost: 1, new: 1 }
        );
    }

    #[test]
    fn ack_detection_needs_three_above_and_purges_the_received() {
        // Packets 1..=8 sent; 1, 2 acked; 3 lost; 4.. arrive.
        let mut h = sent(8);
        h.take(1);
        h.take(2);
        let mut hole = LastHole::default();
        for seq in [1, 2, 4, 5] {
            hole.on_arrival(seq);
            h.take(seq);
        }
        // last_recv = 5: 5 - 3 = 2 < 3, packet 3 waits.
        assert_eq!(h.ack_losses(&hole), Detected::default());
        assert_eq!(h.len(), 4); // 3, 6, 7, 8
        hole.on_arrival(6);
        h.take(6);
        assert_eq!(h.ack_losses(&hole), Detected { lost: 1, new: 1 });
        assert_eq!(h.len(), 2); // 7, 8
    }

    #[test]
    fn received_packets_whose_ack_was_lost_leave_quietly() {
        let mut h = sent(4);
        let mut hole = LastHole::default();
        for seq in 1..=4 {
            hole.on_arrival(seq);
        }
        h.take(4); // only the last ACK arrived
        assert_eq!(h.ack_losses(&hole), Detected::default());
        assert_eq!(h.len(), 0);
    }

    #[test]
    fn inactive_losses_are_counted_but_not_new() {
        let mut h = sent(10);
        h.mark_inactive();
        h.push(11, t(110));
        let found = h.timer_losses(t(200), 50_000_000);
        assert_eq!(found, Detected { lost: 11, new: 1 });
    }

    proptest::proptest! {
        /// With data delivered in order (any packets dropped) and every ACK delivered, the
        /// ACK-based detector declares lost exactly the dropped packets with a received packet
        /// at least 3 above them, each once, and keeps the others waiting.
        #[test]
        fn ack_detection_finds_exactly_the_losses_three_below(
            dropped in proptest::collection::vec(proptest::bool::weighted(0.3), 1..200)
        ) {
            let n = dropped.len() as u64;
            let mut h = sent(n);
            let mut hole = LastHole::default();
            let mut declared = 0;
            let mut highest = 0;
            for seq in (1..=n).filter(|&s| !dropped[s as usize - 1]) {
                hole.on_arrival(seq);
                proptest::prop_assert!(h.take(seq).is_some());
                let found = h.ack_losses(&hole);
                proptest::prop_assert_eq!(found.lost, found.new);
                declared += found.lost;
                highest = seq;
            }
            let expected = (1..=n)
                .filter(|&s| dropped[s as usize - 1] && highest >= s + 3)
                .count() as u64;
            let received = dropped.iter().filter(|&&d| !d).count() as u64;
            proptest::prop_assert_eq!(declared, expected);
            proptest::prop_assert_eq!(h.len() as u64, n - received - declared);
        }
    }
}
