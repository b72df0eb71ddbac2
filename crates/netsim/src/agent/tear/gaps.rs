//! Loss detection at the TEAR receiver: a sequence gap counts as lost once `dupthresh` packets
//! with higher sequence numbers have arrived after it (the receiver's view of TCP's three
//! duplicate ACKs; protocols.md §3 step 2, an assumption marked *). A late packet that fills a
//! pending gap is not a loss.

use std::collections::VecDeque;

/// At most this many pending gaps are tracked; beyond it the oldest is declared lost at once
/// (a bound on memory under pathological reordering, never reached on FIFO paths).
const MAX_PENDING: usize = 1024;

/// A run of missing sequence numbers `start..end` and how many later packets arrived since.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Gap {
    start: u64,
    end: u64,
    later: u32,
}

/// What one arrival revealed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Arrival {
    /// The packet was already received (or is older than anything tracked): ignore it.
    pub duplicate: bool,
    /// Gaps confirmed lost by this arrival, merged: the lowest lost seq, the highest lost seq,
    /// the number of packets lost and the longest single run of them.
    pub lost: Option<Lost>,
    /// Gaps remain unconfirmed after this arrival (TCP would be seeing duplicate ACKs).
    pub pending: bool,
}

/// The losses one arrival confirmed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lost {
    /// The lowest lost sequence number.
    pub first: u64,
    /// The highest lost sequence number.
    pub last: u64,
    /// Packets lost.
    pub count: u64,
    /// The longest run of consecutive lost packets.
    pub longest_run: u64,
}

/// The receiver's record of the sequence space.
#[derive(Clone, Debug)]
pub struct Gaps {
    dupthresh: u32,
    /// One past the highest sequence number seen; 0 before any arrival.
    next: u64,
    pending: VecDeque<Gap>,
}

impl Gaps {
    /// An empty record confirming gaps after `dupthresh` later arrivals (at least 1).
    pub fn new(dupthresh: u32) -> Gaps {
        Gaps {
            dupthresh: dupthresh.max(1),
            next: 0,
            pending: VecDeque::new(),
        }
    }

    /// One past the highest sequence number seen.
    pub fn next(&self) -> u64 {
        self.next
    }

    /// Records the arrival of `seq`.
    pub fn on_arrival(&mut self, seq: u64) -> Arrival {
        if seq >= self.next {
            if seq > self.next {
                self.pending.push_back(Gap {
                    start: self.next,
                    end: seq,
                    later: 0,
                });
            }
            self.next = seq + 1;
        } else if !self.fill(seq) {
            return Arrival {
                duplicate: true,
                ..Arrival::default()
            };
        }
        for gap in self.pending.iter_mut().filter(|gap| gap.end <= seq) {
            gap.later += 1;
        }
        let mut lost: Option<Lost> = None;
        while let Some(&gap) = self.pending.front() {
            let overflow = self.pending.len() > MAX_PENDING;
            if gap.later < self.dupthresh && !overflow {
                break;
            }
            self.pending.pop_front();
            let run = gap.end - gap.start;
            lost = Some(match lost {
                None => Lost {
                    first: gap.start,
                    last: gap.end - 1,
                    count: run,
                    longest_run: run,
                },
                Some(l) => Lost {
                    first: l.first,
                    last: gap.end - 1,
                    count: l.count + run,
                    longest_run: l.longest_run.max(run),
                },
            });
        }
        Arrival {
            duplicate: false,
            lost,
            pending: !self.pending.is_empty(),
        }
    }

    /// A late `seq` below `next`: takes it out of its pending gap, splitting the gap if needed.
    /// False if it is in no gap (a duplicate, or a packet of a gap already declared lost).
    fn fill(&mut self, seq: u64) -> bool {
        let Some(i) = self
            .pending
            .iter()
            .position(|gap| gap.start <= seq && seq < gap.end)
        else {
            return false;
        };
        let gap = self.pending[i];
        let before = Gap { end: seq, ..gap };
        let after = Gap {
            start: seq + 1,
            ..gap
        };
        self.pending.remove(i);
        // `after` first so that `before` ends up in front of it.
        if after.start < after.end {
            self.pending.insert(i, after);
        }
        if before.start < before.end {
            self.pending.insert(i, before);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arrive(gaps: &mut Gaps, seqs: &[u64]) -> Vec<Arrival> {
        seqs.iter().map(|&s| gaps.on_arrival(s)).collect()
    }

    #[test]
    fn a_gap_is_lost_after_three_later_arrivals() {
        let mut gaps = Gaps::new(3);
        let a = arrive(&mut gaps, &[0, 1, 3, 4]);
        assert!(a.iter().all(|a| a.lost.is_none()));
        assert!(a[2].pending && a[3].pending && !a[1].pending);
        let a = gaps.on_arrival(5);
        assert_eq!(
            a.lost,
            Some(Lost {
                first: 2,
                last: 2,
                count: 1,
                longest_run: 1
            })
        );
        assert!(!a.pending);
        assert_eq!(gaps.next(), 6);
    }

    #[test]
    fn a_run_is_reported_whole_and_runs_are_confirmed_in_order() {
        let mut gaps = Gaps::new(1);
        gaps.on_arrival(0);
        let a = gaps.on_arrival(4);
        assert_eq!(a.lost.map(|l| (l.first, l.last, l.count)), Some((1, 3, 3)));
        let mut gaps = Gaps::new(2);
        arrive(&mut gaps, &[0, 4]);
        let a = gaps.on_arrival(7);
        assert_eq!(
            a.lost,
            Some(Lost {
                first: 1,
                last: 3,
                count: 3,
                longest_run: 3
            })
        );
        assert!(a.pending, "5 and 6 have one later arrival");
        let a = gaps.on_arrival(8);
        assert_eq!(a.lost.map(|l| (l.first, l.count)), Some((5, 2)));
    }

    #[test]
    fn a_late_packet_fills_its_gap_and_duplicates_are_ignored() {
        let mut gaps = Gaps::new(3);
        arrive(&mut gaps, &[0, 4]);
        assert!(!gaps.on_arrival(2).duplicate);
        // 1 and 3 remain, each with one later arrival (4), and 2 counted for 1.
        let a = arrive(&mut gaps, &[5, 6]);
        assert_eq!(a[0].lost.map(|l| (l.first, l.count)), Some((1, 1)));
        assert_eq!(a[1].lost.map(|l| (l.first, l.count)), Some((3, 1)));
        assert!(gaps.on_arrival(2).duplicate);
        assert!(gaps.on_arrival(1).duplicate, "already declared lost");
        assert!(gaps.on_arrival(6).duplicate);
    }
}
