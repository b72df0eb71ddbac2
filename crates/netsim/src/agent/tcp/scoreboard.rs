//! The SACK sender's scoreboard (ns-2 `tcp/scoreboard.cc`; RFC 6675 §3): for each packet above
//! the cumulative ACK up to the highest one SACKed (or retransmitted), whether the receiver has
//! SACKed it and whether it was retransmitted in the current recovery (with RACK, until it is
//! delivered, as Linux keeps its SACKED_RETRANS bit across recoveries).
//!
//! The packets are a ring starting just above the cumulative ACK, so advancing the ACK and
//! adding SACK blocks cost O(1) per packet and nothing is allocated in steady state.

use std::collections::VecDeque;

use super::header::SackBlock;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Slot {
    sacked: bool,
    retransmitted: bool,
    /// RACK (RFC 8985) found this transmission lost: it needs sending again.
    rack_lost: bool,
}

/// SACK state of the packets above the cumulative ACK.
#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    /// Sequence number of `slots[0]` (the cumulative ACK + 1 when non-empty).
    first: i64,
    slots: VecDeque<Slot>,
    /// The highest SACKed sequence number, if any.
    high_sacked: Option<i64>,
}

impl Scoreboard {
    /// An empty scoreboard.
    pub fn new() -> Scoreboard {
        Scoreboard::default()
    }

    /// Forgets everything (after a timeout, or when recovery ends without RACK; ns-2
    /// `ClearScoreBoard`).
    pub fn clear(&mut self) {
        self.slots.clear();
        self.high_sacked = None;
    }

    /// Whether nothing is recorded.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Drops packets up to `cum_ack` and records `blocks`. Returns whether anything changed:
    /// the left edge moved or some packet became SACKed (ns-2 `UpdateScoreBoard` and
    /// `CheckUpdate`; RFC 6675's "new SACK information").
    pub fn update(&mut self, cum_ack: i64, blocks: &[SackBlock]) -> bool {
        let mut changed = self.advance(cum_ack);
        for block in blocks {
            let left = i64::from(block.left).max(cum_ack + 1);
            let right = i64::from(block.right);
            if right <= left {
                continue;
            }
            if self.slots.is_empty() {
                self.first = cum_ack + 1;
            }
            while self.first > left {
                self.slots.push_front(Slot::default());
                self.first -= 1;
            }
            self.extend_to(right - 1);
            for seq in left..right {
                let slot = &mut self.slots[(seq - self.first) as usize];
                if !slot.sacked {
                    slot.sacked = true;
                    changed = true;
                }
                // A SACKed packet needs no retransmission (ns-2 clears the flag too).
                slot.retransmitted = false;
            }
            self.high_sacked = Some(self.high_sacked.map_or(right - 1, |h| h.max(right - 1)));
        }
        changed
    }

    /// Removes packets at or below `cum_ack`; whether any was removed.
    fn advance(&mut self, cum_ack: i64) -> bool {
        let mut changed = false;
        while !self.slots.is_empty() && self.first <= cum_ack {
            self.slots.pop_front();
            self.first += 1;
            changed = true;
        }
        if self.slots.is_empty() {
            self.first = cum_ack + 1;
            self.high_sacked = None;
        }
        if self.high_sacked.is_some_and(|h| h <= cum_ack) {
            self.high_sacked = None;
        }
        changed
    }

    /// Grows the ring so that it covers `seq`.
    fn extend_to(&mut self, seq: i64) {
        while self.first + (self.slots.len() as i64) <= seq {
            self.slots.push_back(Slot::default());
        }
    }

    /// Marks `seq` (above the cumulative ACK, not SACKed) lost by RACK (RFC 8985 §6.2): its
    /// last transmission, retransmission or not, is lost and it is due again.
    pub fn mark_rack_lost(&mut self, seq: i64) {
        if let Some(slot) = self.slot_mut(seq) {
            slot.rack_lost = true;
            slot.retransmitted = false;
        }
    }

    /// The slot of `seq` (above the cumulative ACK), the ring grown to hold it; `None` below
    /// the ring.
    fn slot_mut(&mut self, seq: i64) -> Option<&mut Slot> {
        if self.slots.is_empty() {
            self.first = seq;
        }
        if seq < self.first {
            return None;
        }
        self.extend_to(seq);
        self.slots.get_mut((seq - self.first) as usize)
    }

    /// Whether RACK found `seq`'s last transmission lost.
    pub fn is_rack_lost(&self, seq: i64) -> bool {
        self.slot(seq).is_some_and(|s| s.rack_lost)
    }

    /// The lowest packet RACK found lost and not sent again since.
    pub fn next_rack_lost(&self) -> Option<i64> {
        self.slots
            .iter()
            .position(|s| s.rack_lost && !s.retransmitted && !s.sacked)
            .map(|i| self.first + i as i64)
    }

    /// Whether a packet RACK found lost is neither SACKed nor acknowledged yet, sent again or
    /// not: Linux's `tp->lost_out > 0`, which counts a lost packet until it is delivered.
    pub fn any_rack_lost(&self) -> bool {
        self.slots.iter().any(|s| s.rack_lost && !s.sacked)
    }

    /// Marks `seq` (above the cumulative ACK) as retransmitted in this recovery.
    pub fn mark_retransmitted(&mut self, seq: i64) {
        if let Some(slot) = self.slot_mut(seq) {
            slot.retransmitted = true;
        }
    }

    /// How many packets are SACKed.
    pub fn sacked_count(&self) -> i64 {
        self.slots.iter().filter(|s| s.sacked).count() as i64
    }

    /// Marks `seq` retransmitted when the ring may be empty (a tail loss probe, sent with
    /// nothing SACKed): the ring then starts just above `cum_ack`, as after an ACK, so that
    /// the packets below `seq` keep their slots.
    pub fn mark_retransmitted_above(&mut self, cum_ack: i64, seq: i64) {
        if self.slots.is_empty() {
            self.first = cum_ack + 1;
        }
        if seq >= self.first {
            self.extend_to(seq);
            self.slots[(seq - self.first) as usize].retransmitted = true;
        }
    }

    /// The highest SACKed packet.
    pub fn high_sacked(&self) -> Option<i64> {
        self.high_sacked
    }

    /// Whether `seq` is SACKed.
    pub fn is_sacked(&self, seq: i64) -> bool {
        self.slot(seq).is_some_and(|s| s.sacked)
    }

    /// Whether `seq` was retransmitted in this recovery.
    pub fn is_retransmitted(&self, seq: i64) -> bool {
        self.slot(seq).is_some_and(|s| s.retransmitted)
    }

    fn slot(&self, seq: i64) -> Option<Slot> {
        if seq < self.first {
            return None;
        }
        self.slots.get((seq - self.first) as usize).copied()
    }

    /// ns-2 Sack1's `GetNextRetran`: the lowest packet below the highest SACKed one that is
    /// neither SACKed nor retransmitted (every hole below a SACK counts as lost).
    pub fn next_retransmission(&self) -> Option<i64> {
        let high = self.high_sacked?;
        (self.first..high).find(|&seq| {
            let slot = self.slots[(seq - self.first) as usize];
            !slot.sacked && !slot.retransmitted
        })
    }

    /// RFC 6675 `IsLost` for every packet at once: packets below the returned sequence number
    /// have at least `dup_thresh` SACKed packets above them (in packets, the "DupThresh
    /// discontiguous SACKed segments" and "(DupThresh-1)·SMSS SACKed bytes" tests agree), and
    /// are lost; `None` when fewer than `dup_thresh` packets are SACKed.
    pub fn lost_below(&self, dup_thresh: u32) -> Option<i64> {
        let mut count = 0;
        for (i, slot) in self.slots.iter().enumerate().rev() {
            if slot.sacked {
                count += 1;
                if count >= dup_thresh {
                    return Some(self.first + i as i64);
                }
            }
        }
        None
    }

    /// RFC 6675 `SetPipe` over the packets `cum_ack+1 ..= high_data`: each one not SACKed
    /// counts once if not lost, and once more if retransmitted. Lost: found so by RACK, or
    /// (with `dup_thresh`) by `IsLost`; without it only RACK's marks count (Linux's
    /// `tcp_packets_in_flight` with RACK on).
    pub fn pipe(&self, cum_ack: i64, high_data: i64, dup_thresh: Option<u32>) -> i64 {
        let lost_below = dup_thresh.and_then(|t| self.lost_below(t));
        let mut pipe = 0;
        for seq in cum_ack + 1..=high_data {
            let slot = self.slot(seq).unwrap_or_default();
            if slot.sacked {
                continue;
            }
            if lost_below.is_none_or(|l| seq >= l) && !slot.rack_lost {
                pipe += 1;
            }
            if slot.retransmitted {
                pipe += 1;
            }
        }
        pipe
    }

    /// The lowest packet at or above `from` and below the highest SACKed one that is not
    /// SACKed (RFC 6675 `NextSeg` rules 1 and 3 walk these).
    pub fn next_unsacked(&self, from: i64) -> Option<i64> {
        let high = self.high_sacked?;
        (from.max(self.first)..high).find(|&seq| !self.is_sacked(seq))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(left: u32, right: u32) -> SackBlock {
        SackBlock { left, right }
    }

    #[test]
    fn blocks_mark_packets_and_the_ack_advances_the_left_edge() {
        let mut sb = Scoreboard::new();
        // Packet 5 lost, 6..8 arrived.
        assert!(sb.update(4, &[block(6, 9)]));
        assert!(!sb.is_sacked(5));
        assert!(sb.is_sacked(6) && sb.is_sacked(8));
        assert_eq!(sb.high_sacked(), Some(8));
        // The same information again changes nothing: not a counted dupack.
        assert!(!sb.update(4, &[block(6, 9)]));
        assert!(sb.update(4, &[block(6, 10)]));
        assert_eq!(sb.next_retransmission(), Some(5));
        sb.mark_retransmitted(5);
        assert_eq!(sb.next_retransmission(), None);
        // The retransmission arrives: the ACK covers everything.
        assert!(sb.update(9, &[]));
        assert!(sb.is_empty());
        assert_eq!(sb.high_sacked(), None);
    }

    #[test]
    fn several_holes_are_retransmitted_lowest_first_and_once() {
        let mut sb = Scoreboard::new();
        // 10 lost, 11 ok, 12 and 13 lost, 14..15 ok.
        sb.update(9, &[block(14, 16), block(11, 12)]);
        assert_eq!(sb.next_retransmission(), Some(10));
        sb.mark_retransmitted(10);
        assert_eq!(sb.next_retransmission(), Some(12));
        sb.mark_retransmitted(12);
        assert_eq!(sb.next_retransmission(), Some(13));
        sb.mark_retransmitted(13);
        assert_eq!(sb.next_retransmission(), None);
        // Stale blocks below the ACK are ignored.
        assert!(!sb.update(9, &[block(3, 8)]));
    }

    #[test]
    fn rfc6675_is_lost_and_pipe() {
        let mut sb = Scoreboard::new();
        // ACK 0; packets 1, 2 missing; 3, 4, 5 SACKed; 6 missing; 7 SACKed; sent up to 9.
        sb.update(0, &[block(7, 8), block(3, 6)]);
        // Four SACKed packets: everything below the 3rd highest SACKed (4) is lost.
        assert_eq!(sb.lost_below(3), Some(4));
        // Pipe over 1..=9: 1, 2 lost (0); 6 has only one SACKed above it (1); 8, 9 (2).
        assert_eq!(sb.pipe(0, 9, Some(3)), 3);
        sb.mark_retransmitted(1);
        assert_eq!(sb.pipe(0, 9, Some(3)), 4);
        assert_eq!(sb.next_unsacked(2), Some(2));
        assert_eq!(sb.next_unsacked(3), Some(6));
        assert_eq!(sb.next_unsacked(7), None);
        // A retransmission beyond the highest SACK (the rescue) is remembered.
        sb.mark_retransmitted(9);
        assert!(sb.is_retransmitted(9));
        assert_eq!(sb.pipe(0, 9, Some(3)), 5);
    }

    #[test]
    fn a_lost_packet_stays_lost_until_delivered_as_linuxs_lost_out() {
        let mut sb = Scoreboard::new();
        sb.update(2, &[block(5, 8)]);
        assert!(!sb.any_rack_lost());
        sb.mark_rack_lost(3);
        sb.mark_rack_lost(4);
        assert!(sb.any_rack_lost());
        // Sent again, neither is due any more, but both are lost until delivered.
        sb.mark_retransmitted(3);
        sb.mark_retransmitted(4);
        assert_eq!(sb.next_rack_lost(), None);
        assert!(sb.any_rack_lost());
        sb.update(3, &[block(4, 8)]);
        assert!(!sb.any_rack_lost(), "3 acknowledged, 4 SACKed");
    }

    #[test]
    fn a_probe_on_an_empty_board_keeps_the_packets_below_it() {
        let mut sb = Scoreboard::new();
        sb.mark_retransmitted_above(7, 9);
        assert!(sb.is_retransmitted(9) && !sb.is_retransmitted(8));
        // 8 has a slot: RACK can mark it lost when 9's SACK arrives.
        sb.update(7, &[block(9, 10)]);
        sb.mark_rack_lost(8);
        assert_eq!(sb.next_rack_lost(), Some(8));
    }
}
