//! The calendar queue (R. Brown, "Calendar queues: a fast O(1) priority queue implementation
//! for the simulation event set problem", CACM 31(10), 1988), with the resizing of the paper and
//! a cost-triggered re-estimate of the bucket width in the spirit of Oh and Ahn's dynamic
//! calendar queue (1997).
//!
//! Time is cut into buckets of width `2^shift` ns; the "virtual bucket" of a time is
//! `time >> shift`, and virtual bucket `v` lives in the array slot `v mod nbuckets` (a year is
//! `nbuckets` consecutive virtual buckets). Every slot holds its events sorted by
//! (time, sequence number), earliest first, in a `VecDeque`, so popping takes the front and a
//! push that is the latest of its slot (the common case, and always the case for a tie, since
//! the sequence number only grows) is a `push_back`.
//!
//! The queue keeps `cur`, the virtual bucket of its earliest event, up to date after every
//! operation, so `peek_time` is O(1) and `pop` takes the front of one slot, then walks forward
//! to the next non-empty virtual bucket. When a whole year passes without finding one (every
//! pending event is more than a year ahead), a direct search over the slot fronts finds the
//! minimum, as in the paper.
//!
//! Resizing: the slot count doubles when more than twice as many events as slots are pending
//! and halves when fewer than half as many are. Each resize sorts the pending events and sets
//! the width to three times the mean separation of the earliest ones (separations above twice
//! the mean left out, as Brown does), rounded to a power of two. Because a steady population
//! never resizes, the queue also counts its work (slots stepped over by `pop`, events shifted
//! by an insertion in the middle of a slot) and, when a window of operations averaged more than
//! `COST_LIMIT` per pop, rebuilds at the same size with a fresh width estimate.

use std::collections::VecDeque;

use tfrc::Time;

/// One scheduled event with its ordering key.
#[derive(Debug)]
struct Entry<E> {
    time: u64,
    seq: u64,
    event: E,
}

impl<E> Entry<E> {
    fn key(&self) -> (u64, u64) {
        (self.time, self.seq)
    }
}

/// The fewest slots the calendar shrinks to (a power of two).
const MIN_BUCKETS: usize = 16;
/// The width of an empty queue: 2^20 ns, about a millisecond.
const INITIAL_SHIFT: u32 = 20;
/// How many of the earliest events the width estimate looks at (more when they are all ties).
const SAMPLE: usize = 32;
/// Average work per pop (slots stepped plus events shifted) above which the width is
/// re-estimated.
const COST_LIMIT: u64 = 8;
/// The most room an emptied slot keeps.
const KEEP_CAPACITY: usize = 64;
/// The fewest pops in a cost window.
const MIN_WINDOW: u64 = 256;
/// The most a cost window grows to, as a multiple of its base, after rebuilds that did not
/// change the width.
const MAX_BACKOFF: u64 = 64;

/// A priority queue of events keyed by (time, sequence number): a calendar queue, O(1)
/// expected per push and pop when the width suits the pending times. The sequence number is a
/// counter of insertions, so ties in time break first-scheduled-first.
///
/// A push earlier than the earliest pending event (including one earlier than the last popped
/// time) is ordered correctly; it moves the calendar's position back to that event's bucket,
/// so the next pop may walk forward over up to one year of empty buckets (then falls back to a
/// direct search), no more.
#[derive(Debug)]
pub struct CalendarQueue<E> {
    /// Slot `v & mask` holds the events of every virtual bucket `v`, earliest (time, seq) first.
    buckets: Vec<VecDeque<Entry<E>>>,
    /// `buckets.len() - 1`; the length is a power of two.
    mask: usize,
    /// The bucket width is `1 << shift` nanoseconds.
    shift: u32,
    /// When non-empty: the virtual bucket of the earliest pending event, which is the front of
    /// slot `cur & mask`.
    cur: u64,
    len: usize,
    next_seq: u64,
    /// Work done since the window opened.
    cost: u64,
    /// Pops since the window opened.
    pops: u64,
    /// Multiplier of the window length, doubled by every rebuild that kept the width.
    backoff: u64,
}

impl<E> Default for CalendarQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> CalendarQueue<E> {
    /// An empty queue.
    pub fn new() -> Self {
        Self::with_capacity(0)
    }

    /// An empty queue; `capacity` is a sizing hint (the slot array reserves room for the slot
    /// count that many pending events would need). The calendar still grows and shrinks with
    /// its contents.
    pub fn with_capacity(capacity: usize) -> Self {
        let mut buckets = Vec::with_capacity((capacity / 2).max(MIN_BUCKETS).next_power_of_two());
        buckets.resize_with(MIN_BUCKETS, VecDeque::new);
        CalendarQueue {
            buckets,
            mask: MIN_BUCKETS - 1,
            shift: INITIAL_SHIFT,
            cur: 0,
            len: 0,
            next_seq: 0,
            cost: 0,
            pops: 0,
            backoff: 1,
        }
    }

    /// Schedules `event` at `time` (any time, also one earlier than the last popped).
    pub fn push(&mut self, time: Time, event: E) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.insert(Entry {
            time: time.as_nanos(),
            seq,
            event,
        });
        if self.len > 2 * self.buckets.len() {
            self.rebuild(self.buckets.len() * 2);
        }
    }

    /// Removes and returns the earliest event (first scheduled among equal times).
    pub fn pop(&mut self) -> Option<(Time, E)> {
        if self.len == 0 {
            return None;
        }
        let bucket = &mut self.buckets[self.cur as usize & self.mask];
        let entry = bucket
            .pop_front()
            .expect("the current slot holds the earliest event");
        if bucket.is_empty() && bucket.capacity() > KEEP_CAPACITY {
            // A slot that held a crowd of ties gives its memory back, or over a long run every
            // slot would keep the largest crowd it ever held.
            *bucket = VecDeque::new();
        }
        self.len -= 1;
        if self.len > 0 {
            self.advance();
        }
        self.pops += 1;
        if self.len < self.buckets.len() / 2 && self.buckets.len() > MIN_BUCKETS {
            self.rebuild(self.buckets.len() / 2);
        } else if self.pops >= self.window() {
            self.end_window();
        }
        Some((Time::from_nanos(entry.time), entry.event))
    }

    /// The time of the earliest pending event.
    pub fn peek_time(&self) -> Option<Time> {
        if self.len == 0 {
            return None;
        }
        self.buckets[self.cur as usize & self.mask]
            .front()
            .map(|entry| Time::from_nanos(entry.time))
    }

    /// Pending events.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Events scheduled since construction (the next sequence number).
    pub fn scheduled(&self) -> u64 {
        self.next_seq
    }

    /// Files `entry` in its slot, keeping the slot sorted and `cur` at the earliest event.
    fn insert(&mut self, entry: Entry<E>) {
        let vb = entry.time >> self.shift;
        if self.len == 0 || vb < self.cur {
            self.cur = vb;
        }
        let bucket = &mut self.buckets[vb as usize & self.mask];
        let key = entry.key();
        match bucket.back() {
            Some(last) if last.key() > key => {
                let at = bucket.partition_point(|e| e.key() < key);
                self.cost += (bucket.len() - at) as u64;
                bucket.insert(at, entry);
            }
            _ => bucket.push_back(entry),
        }
        self.len += 1;
    }

    /// Moves `cur` forward to the virtual bucket of the earliest event (the queue is not
    /// empty, and no event lies before `cur`).
    fn advance(&mut self) {
        for _ in 0..self.buckets.len() {
            if let Some(front) = self.buckets[self.cur as usize & self.mask].front() {
                if front.time >> self.shift == self.cur {
                    return;
                }
            }
            self.cur += 1;
            self.cost += 1;
        }
        // A whole year without an event in it: find the earliest directly.
        self.cost += self.buckets.len() as u64;
        let earliest = self
            .buckets
            .iter()
            .filter_map(|bucket| bucket.front().map(Entry::key))
            .min()
            .expect("the queue is not empty");
        self.cur = earliest.0 >> self.shift;
    }

    /// Pops per cost window.
    fn window(&self) -> u64 {
        (self.buckets.len() as u64 * 2).max(MIN_WINDOW) * self.backoff
    }

    /// Closes a cost window: re-estimates the width when the pops were too expensive.
    fn end_window(&mut self) {
        if self.cost > COST_LIMIT * self.pops {
            let before = self.shift;
            self.rebuild(self.buckets.len());
            if self.shift == before {
                self.backoff = (self.backoff * 2).min(MAX_BACKOFF);
            }
        } else {
            self.cost = 0;
            self.pops = 0;
        }
    }

    /// Re-files every pending event into `nbuckets` slots (a power of two) with a freshly
    /// estimated width.
    fn rebuild(&mut self, nbuckets: usize) {
        let mut all = Vec::with_capacity(self.len);
        for bucket in &mut self.buckets {
            all.extend(bucket.drain(..));
        }
        // The keys are unique, so the unstable sort is deterministic.
        all.sort_unstable_by_key(Entry::key);
        if let Some(shift) = width_shift(&all) {
            if shift != self.shift {
                self.backoff = 1;
            }
            self.shift = shift;
        }
        self.buckets.resize_with(nbuckets, VecDeque::new);
        self.mask = nbuckets - 1;
        if let Some(first) = all.first() {
            self.cur = first.time >> self.shift;
        }
        for entry in all {
            let vb = entry.time >> self.shift;
            self.buckets[vb as usize & self.mask].push_back(entry);
        }
        self.cost = 0;
        self.pops = 0;
    }
}

/// The bucket width for events sorted by (time, seq), as a power-of-two exponent: three times
/// the mean separation of the earliest [`SAMPLE`] events, leaving out separations above twice
/// the mean (Brown's estimate). When those events are all ties the sample doubles until it
/// spans some time; `None` when it never does (fewer than two distinct times: any width works).
fn width_shift<E>(sorted: &[Entry<E>]) -> Option<u32> {
    let n = sorted.len();
    if n < 2 {
        return None;
    }
    let mut k = SAMPLE.min(n);
    while sorted[k - 1].time == sorted[0].time && k < n {
        k = (2 * k).min(n);
    }
    let span = sorted[k - 1].time - sorted[0].time;
    if span == 0 {
        return None;
    }
    let mean = span / (k as u64 - 1);
    let (sum, count) = sorted[..k]
        .windows(2)
        .map(|pair| pair[1].time - pair[0].time)
        .filter(|&sep| sep <= mean.saturating_mul(2))
        .fold((0u64, 0u64), |(sum, count), sep| (sum + sep, count + 1));
    // Ties make the trimmed mean zero when the only separations are the gaps between groups:
    // fall back to the plain mean, which reflects how densely the events are packed.
    let separation = if sum > 0 { sum / count } else { mean };
    let width = separation.saturating_mul(3).max(1);
    // The nearest power of two.
    let below = 63 - width.leading_zeros();
    let round_up = below < 63 && width - (1 << below) > (1 << below) / 2;
    Some(below + u32::from(round_up))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn width_follows_the_load_without_a_size_change() {
        // Events 1 us apart, then a steady population whose increments spread over 1 s (so
        // about 1 ms apart): the width has to grow by orders of magnitude although the size
        // never changes.
        let mut q = CalendarQueue::new();
        for i in 0..1_000u64 {
            q.push(Time::from_nanos(i * 1_000), i);
        }
        let dense = q.shift;
        for i in 0..50_000u64 {
            let (now, _) = q.pop().unwrap();
            let increment = 1 + i * 7_919_993 % 1_000_000_000;
            q.push(now + std::time::Duration::from_nanos(increment), i);
        }
        assert!(
            q.shift >= dense + 8,
            "width 2^{} after 2^{}",
            q.shift,
            dense
        );
        assert_eq!(q.len(), 1_000);
    }

    #[test]
    fn width_estimate() {
        let entries = |times: &[u64]| -> Vec<Entry<()>> {
            (0u64..)
                .zip(times)
                .map(|(seq, &time)| Entry {
                    time,
                    seq,
                    event: (),
                })
                .collect()
        };
        // Mean separation 1000 ns: width 3000, nearest power of two 2048.
        let spaced: Vec<u64> = (0..100).map(|i| i * 1000).collect();
        assert_eq!(width_shift(&entries(&spaced)), Some(11));
        // A far outlier is left out of the mean: 31 separations of 1000 ns and one of 1 s.
        let mut outlier: Vec<u64> = (0..31).map(|i| i * 1000).collect();
        outlier.push(1_000_000_000);
        assert_eq!(width_shift(&entries(&outlier)), Some(11));
        // All ties: no estimate.
        assert_eq!(width_shift(&entries(&[5; 100])), None);
        // Two groups of ties: the plain mean over the sample that first spans some time.
        let mut groups = vec![0; 100];
        groups.extend([1_000_000; 100]);
        assert_eq!(width_shift(&entries(&groups)), Some(14));
    }
}
