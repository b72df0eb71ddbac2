//! The radix heap event queue: a monotone priority queue (Ahuja, Mehlhorn, Orlin and Tarjan,
//! "Faster algorithms for the shortest path problem", JACM 37(2), 1990) over the packed
//! (time, sequence number) key of [`super::heap`], with the two earliest events held apart.
//!
//! Every filed key is above `last`, the key of the last popped event, and lies in the bucket
//! named by the highest base-16 digit in which it differs from `last` and by its own value of
//! that digit (the original radix heap splits by bits; digits of four bits make an event move
//! at most 32 times instead of 128, and a quarter as often over a given spread of pending
//! times, for 16 times the buckets). A bucket holds the keys that agree with `last` above
//! its digit and have its value there, a contiguous key range; every key in a lower bucket is
//! below every key in a higher one, and the lowest non-empty bucket holds the minimum. When an
//! event with key `k` is popped, `last` becomes `k`: the buckets below `k`'s bucket (relative
//! to the old `last`) are empty, the others keep their meaning, and only the events of `k`'s
//! own bucket have to be filed again, each into a strictly lower bucket. So a pop costs
//! amortised O(1) moves plus a scan of one short bucket, with sequential memory access.
//!
//! The two earliest pending events are kept outside the buckets, in `first` and `second`, so
//! that [`RadixQueue::peek_time`] and [`RadixQueue::peek_two`] are exact and cost nothing; a
//! pop refills `second` with the least filed event. Where that is was mostly found already: a
//! redistribution notes the two least keys it moved, and a push keeps those notes up to date,
//! so only a pop that follows neither scans the lowest non-empty bucket.
//!
//! The radix order needs every filed key above `last`. A push below it (earlier than the last
//! popped time, or a reserved sequence number used at the last popped time) is legal in the
//! [`super::EventQueue`] API but never done by the engine; such events go into a small binary
//! heap aside, all of whose keys are below every bucket's, so its top is compared first.

use std::collections::BinaryHeap;

use tfrc::Time;

use super::heap::Entry;

/// Bits per digit: the key is read in base 16.
const DIGIT: u32 = 4;
/// Digits in a key.
const LEVELS: usize = 128 / DIGIT as usize;
/// Buckets: one per (digit position, digit value).
const BUCKETS: usize = LEVELS << DIGIT;
/// Room, in entries, a bucket may keep beyond twice what it holds when the memory sweep runs.
const KEEP: usize = 8;
/// The fewest pops between two memory sweeps.
const SWEEP_MIN: u64 = 4096;

/// The bucket of `key` relative to `last` (`key > last`): the highest base-16 digit in which
/// they differ, and `key`'s value of that digit, so that bucket order is key order.
#[inline]
fn bucket_of(key: u128, last: u128) -> usize {
    debug_assert!(key > last);
    let level = (127 - (key ^ last).leading_zeros()) / DIGIT;
    let digit = (key >> (level * DIGIT)) as usize & ((1 << DIGIT) - 1);
    ((level as usize) << DIGIT) | digit
}

/// Which buckets hold events: one bit per bucket, and one bit per word of those for the words
/// that are not zero, so that the lowest non-empty bucket is two `trailing_zeros` away.
#[derive(Clone, Debug, Default)]
struct Occupancy {
    words: [u64; BUCKETS / 64],
    summary: u8,
}

impl Occupancy {
    #[inline]
    fn set(&mut self, b: usize) {
        self.words[b >> 6] |= 1 << (b & 63);
        self.summary |= 1 << (b >> 6);
    }

    #[inline]
    fn clear(&mut self, b: usize) {
        let word = &mut self.words[b >> 6];
        *word &= !(1 << (b & 63));
        if *word == 0 {
            self.summary &= !(1 << (b >> 6));
        }
    }

    #[inline]
    fn contains(&self, b: usize) -> bool {
        self.words[b >> 6] & (1 << (b & 63)) != 0
    }

    /// The lowest non-empty bucket.
    #[inline]
    fn lowest(&self) -> Option<usize> {
        if self.summary == 0 {
            return None;
        }
        let w = self.summary.trailing_zeros() as usize;
        Some((w << 6) | self.words[w].trailing_zeros() as usize)
    }
}

/// Where a filed event lies, with its key.
#[derive(Clone, Copy, Debug)]
struct Mark {
    key: u128,
    bucket: usize,
    at: usize,
}

/// A priority queue of events keyed by (time, sequence number), pop order identical to
/// [`super::heap::HeapQueue`]: a radix heap, amortised O(1) per push and pop when keys come
/// in nearly increasing order, as a simulation's do. The sequence number is a counter of
/// insertions, so ties in time break first-scheduled-first.
///
/// Memory: a bucket emptied by a redistribution keeps its allocation for reuse, and every
/// `max(4096, pending)` pops a sweep shrinks each bucket to at most twice what it holds plus a
/// few entries, so the room kept after the pending set shrinks is bounded by about twice the
/// current pending count plus 4096 entries.
#[derive(Debug)]
pub struct RadixQueue<E> {
    /// The earliest pending event.
    first: Option<Entry<E>>,
    /// The earliest pending event after `first`.
    second: Option<Entry<E>>,
    /// `buckets[b]` holds, in no order, the filed events whose key is above `last` and differs
    /// from it first at bit `b`.
    buckets: Vec<Vec<Entry<E>>>,
    /// Which buckets are not empty.
    occupied: Occupancy,
    /// When known: the filed event with the least key (in the lowest non-empty bucket), so
    /// that refilling `second` needs no scan.
    least: Option<Mark>,
    /// When known (and `least` is): the filed event with the least key after `least`'s.
    runner: Option<Mark>,
    /// Filed events whose key is not above `last` (pushed earlier than the last popped).
    below: BinaryHeap<Entry<E>>,
    /// The key of the last popped event that was above its predecessor (0 before any pop).
    last: u128,
    len: usize,
    next_seq: u64,
    /// Pops since the last memory sweep.
    since_sweep: u64,
}

impl<E> Default for RadixQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> RadixQueue<E> {
    /// An empty queue.
    pub fn new() -> Self {
        RadixQueue {
            first: None,
            second: None,
            buckets: (0..BUCKETS).map(|_| Vec::new()).collect(),
            occupied: Occupancy::default(),
            least: None,
            runner: None,
            below: BinaryHeap::new(),
            last: 0,
            len: 0,
            next_seq: 0,
            since_sweep: 0,
        }
    }

    /// An empty queue. The capacity is accepted for the common API and not used: how pending
    /// events spread over the buckets depends on their times, so the buckets grow on demand
    /// (and keep their room for reuse).
    pub fn with_capacity(_capacity: usize) -> Self {
        Self::new()
    }

    /// Schedules `event` at `time` (any time, also one earlier than the last popped).
    pub fn push(&mut self, time: Time, event: E) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.insert(Entry::new(time, seq, event));
    }

    /// Takes the next sequence number without scheduling anything: an event pushed later with
    /// [`RadixQueue::push_reserved`] and this number ranks, among events at its time, as if it
    /// had been pushed now.
    pub fn reserve_seq(&mut self) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        seq
    }

    /// Schedules `event` at `time` with a sequence number from [`RadixQueue::reserve_seq`]
    /// (each reserved number used at most once).
    pub fn push_reserved(&mut self, time: Time, seq: u64, event: E) {
        debug_assert!(seq < self.next_seq, "a sequence number not reserved");
        self.insert(Entry::new(time, seq, event));
    }

    /// Removes and returns the earliest event (first scheduled among equal times).
    pub fn pop(&mut self) -> Option<(Time, E)> {
        let entry = self.first.take()?;
        self.len -= 1;
        self.first = self.second.take();
        if entry.key > self.last {
            // Everything filed is above `entry`, so the buckets below its own (relative to the
            // old `last`) are empty and only that bucket changes meaning.
            let b = bucket_of(entry.key, self.last);
            self.last = entry.key;
            if self.occupied.contains(b) {
                self.redistribute(b);
            }
        }
        if self.first.is_some() {
            self.second = self.take_min();
        }
        self.since_sweep += 1;
        if self.since_sweep >= SWEEP_MIN.max(self.len as u64) {
            self.sweep();
        }
        Some((entry.time(), entry.event))
    }

    /// The time of the earliest pending event.
    pub fn peek_time(&self) -> Option<Time> {
        self.first.as_ref().map(Entry::time)
    }

    /// The earliest pending event and the one after it (both exact), without removing them.
    pub fn peek_two(&self) -> (Option<&E>, Option<&E>) {
        (
            self.first.as_ref().map(|e| &e.event),
            self.second.as_ref().map(|e| &e.event),
        )
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

    /// Adds `entry`, keeping `first` and `second` the two earliest.
    fn insert(&mut self, entry: Entry<E>) {
        self.len += 1;
        let Some(first) = &mut self.first else {
            self.first = Some(entry);
            return;
        };
        let mut entry = entry;
        if entry.key < first.key {
            std::mem::swap(first, &mut entry);
        }
        match &mut self.second {
            None => self.second = Some(entry),
            Some(second) if entry.key < second.key => {
                // The old second is below everything filed: it becomes the minimum there.
                std::mem::swap(second, &mut entry);
                self.file_least(entry);
            }
            Some(_) => self.file(entry),
        }
    }

    /// Puts `entry` in its bucket, or aside when it is not above `last`, keeping `least` and
    /// `runner` exact.
    #[inline]
    fn file(&mut self, entry: Entry<E>) {
        if entry.key <= self.last {
            self.below.push(entry);
            return;
        }
        let mark = self.put(entry);
        match self.least {
            Some(least) if mark.key < least.key => {
                self.runner = Some(least);
                self.least = Some(mark);
            }
            Some(_) => {
                if matches!(self.runner, Some(runner) if mark.key < runner.key) {
                    self.runner = Some(mark);
                }
            }
            // The only event of a new lowest bucket is the least filed.
            None if self.buckets[mark.bucket].len() == 1
                && self.occupied.lowest() == Some(mark.bucket) =>
            {
                self.least = Some(mark);
            }
            None => {}
        }
    }

    /// Files `entry`, whose key is below every filed key (a second displaced by a push).
    fn file_least(&mut self, entry: Entry<E>) {
        if entry.key <= self.last {
            self.below.push(entry);
            return;
        }
        let mark = self.put(entry);
        self.runner = self.least;
        self.least = Some(mark);
    }

    /// Appends `entry` (key above `last`) to its bucket.
    #[inline]
    fn put(&mut self, entry: Entry<E>) -> Mark {
        let bucket = bucket_of(entry.key, self.last);
        self.occupied.set(bucket);
        let list = &mut self.buckets[bucket];
        let mark = Mark {
            key: entry.key,
            bucket,
            at: list.len(),
        };
        list.push(entry);
        mark
    }

    /// Files the events of bucket `b` again after `last` moved up to a key in `b`'s range:
    /// each goes to a strictly lower bucket. The emptied bucket keeps its room. The buckets
    /// below `b` were empty, so the two least keys moved are the two least filed.
    fn redistribute(&mut self, b: usize) {
        let mut moving = std::mem::take(&mut self.buckets[b]);
        let last = self.last;
        self.occupied.clear(b);
        let none = Mark {
            key: u128::MAX,
            bucket: 0,
            at: 0,
        };
        let (mut least, mut runner) = (none, none);
        let mut moved = 0usize;
        for entry in moving.drain(..) {
            if entry.key > last {
                let to = bucket_of(entry.key, last);
                let list = &mut self.buckets[to];
                let mark = Mark {
                    key: entry.key,
                    bucket: to,
                    at: list.len(),
                };
                list.push(entry);
                self.occupied.set(to);
                if mark.key < least.key {
                    runner = least;
                    least = mark;
                } else if mark.key < runner.key {
                    runner = mark;
                }
                moved += 1;
            } else {
                // Only a key pushed twice (a reserved number used again) can equal `last`.
                self.below.push(entry);
            }
        }
        self.least = (moved >= 1).then_some(least);
        self.runner = (moved >= 2).then_some(runner);
        self.buckets[b] = moving;
    }

    /// Removes and returns the earliest filed event: the top of the events aside (all below
    /// `last`) or else the minimum of the lowest non-empty bucket.
    fn take_min(&mut self) -> Option<Entry<E>> {
        if let Some(entry) = self.below.pop() {
            return Some(entry);
        }
        let b = self.occupied.lowest()?;
        let list = &mut self.buckets[b];
        let (at, next) = match self.least.take() {
            Some(least) => {
                debug_assert_eq!(least.bucket, b);
                (least.at, self.runner.take())
            }
            None => {
                // The least and the runner-up of the lowest bucket: the two least filed.
                let (mut at, mut min) = (0, list[0].key);
                let (mut second, mut second_key) = (usize::MAX, u128::MAX);
                for (i, entry) in list.iter().enumerate().skip(1) {
                    if entry.key < min {
                        (second, second_key) = (at, min);
                        (at, min) = (i, entry.key);
                    } else if entry.key < second_key {
                        (second, second_key) = (i, entry.key);
                    }
                }
                let next = (second != usize::MAX).then_some(Mark {
                    key: second_key,
                    bucket: b,
                    at: second,
                });
                (at, next)
            }
        };
        let end = list.len() - 1;
        let entry = list.swap_remove(at);
        if list.is_empty() {
            self.occupied.clear(b);
        }
        // The runner-up becomes the least; `swap_remove` moved the bucket's last event.
        self.least = next.map(|mark| {
            if mark.bucket == b && mark.at == end {
                Mark { at, ..mark }
            } else {
                mark
            }
        });
        self.runner = None;
        Some(entry)
    }

    /// Gives back the room of buckets that hold far less than they once did.
    fn sweep(&mut self) {
        self.since_sweep = 0;
        for bucket in &mut self.buckets {
            if bucket.capacity() > 2 * bucket.len() + KEEP {
                bucket.shrink_to(bucket.len() + KEEP);
            }
        }
        if self.below.capacity() > 2 * self.below.len() + KEEP {
            self.below.shrink_to(self.below.len() + KEEP);
        }
    }

    /// Room kept, in entries, over all buckets and the heap aside (for the memory test).
    #[cfg(test)]
    fn room(&self) -> usize {
        self.buckets.iter().map(Vec::capacity).sum::<usize>() + self.below.capacity()
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::heap::HeapQueue;
    use super::*;
    use crate::rng::{stream, uniform};

    /// One step of a workload run on the radix heap and the binary heap side by side; times are
    /// relative to the last popped time.
    #[derive(Clone, Debug)]
    enum Op {
        Pop,
        /// At now + delay (0: at the last popped time, after it in order).
        Push(u64),
        /// At now - back (saturating): before the last popped event.
        PushPast(u64),
        /// Takes a sequence number for later.
        Reserve,
        /// Uses the reserved number at this index (modulo how many are held) at now + delay:
        /// an old number, so with delay 0 the key can fall below the last popped one.
        PushReserved(usize, u64),
        /// Several events at now + delay.
        Burst(u8, u64),
    }

    fn delay() -> impl Strategy<Value = u64> {
        prop_oneof![
            2 => Just(0u64),
            3 => 0u64..10_000,
            2 => (0u64..3).prop_map(|k| k * 1_000_000),
            2 => 0u64..1_000_000_000,
            1 => Just(u64::MAX / 4),
        ]
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            8 => Just(Op::Pop),
            5 => delay().prop_map(Op::Push),
            1 => (0u64..5_000_000).prop_map(Op::PushPast),
            2 => Just(Op::Reserve),
            2 => (any::<usize>(), delay()).prop_map(|(i, d)| Op::PushReserved(i, d)),
            1 => (1u8..40, delay()).prop_map(|(n, d)| Op::Burst(n, d)),
        ]
    }

    /// Both queues side by side, compared after every operation.
    struct Pair {
        radix: RadixQueue<u64>,
        heap: HeapQueue<u64>,
        now: u64,
        next_id: u64,
        reserved: Vec<u64>,
    }

    impl Pair {
        fn new() -> Self {
            Pair {
                radix: RadixQueue::new(),
                heap: HeapQueue::new(),
                now: 0,
                next_id: 0,
                reserved: Vec::new(),
            }
        }

        fn push(&mut self, time: u64) {
            let t = Time::from_nanos(time);
            self.radix.push(t, self.next_id);
            self.heap.push(t, self.next_id);
            self.next_id += 1;
        }

        fn apply(&mut self, op: &Op) -> Result<(), TestCaseError> {
            match *op {
                Op::Pop => {
                    let got = self.radix.pop();
                    prop_assert_eq!(got, self.heap.pop());
                    if let Some((t, _)) = got {
                        self.now = t.as_nanos();
                    }
                }
                Op::Push(d) => self.push(self.now.saturating_add(d)),
                Op::PushPast(back) => self.push(self.now.saturating_sub(back)),
                Op::Reserve => {
                    let seq = self.radix.reserve_seq();
                    prop_assert_eq!(seq, self.heap.reserve_seq());
                    self.reserved.push(seq);
                }
                Op::PushReserved(i, d) => {
                    if !self.reserved.is_empty() {
                        let seq = self.reserved.swap_remove(i % self.reserved.len());
                        let t = Time::from_nanos(self.now.saturating_add(d));
                        self.radix.push_reserved(t, seq, self.next_id);
                        self.heap.push_reserved(t, seq, self.next_id);
                        self.next_id += 1;
                    }
                }
                Op::Burst(n, d) => {
                    for _ in 0..n {
                        self.push(self.now.saturating_add(d));
                    }
                }
            }
            self.check()
        }

        fn check(&mut self) -> Result<(), TestCaseError> {
            prop_assert_eq!(self.radix.len(), self.heap.len());
            prop_assert_eq!(self.radix.is_empty(), self.heap.is_empty());
            prop_assert_eq!(self.radix.scheduled(), self.heap.scheduled());
            // The heap's second is the earlier child of its root: exact too, also while the
            // vacancy of a pop is pending (before the peek of the time fills it).
            prop_assert_eq!(self.radix.peek_two(), self.heap.peek_two());
            prop_assert_eq!(self.radix.peek_time(), self.heap.peek_time());
            Ok(())
        }

        fn drain(&mut self) -> Result<(), TestCaseError> {
            while !self.heap.is_empty() {
                self.apply(&Op::Pop)?;
            }
            prop_assert_eq!(self.radix.pop(), None);
            Ok(())
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn same_order_and_peeks_as_the_binary_heap(ops in proptest::collection::vec(op(), 0..2000)) {
            let mut pair = Pair::new();
            for op in &ops {
                pair.apply(op)?;
            }
            pair.drain()?;
        }
    }

    /// The engine's pattern at scale: thousands of pending events; each pop schedules an
    /// arrival, sometimes a transmission end under a number reserved earlier (at a strictly
    /// later time), sometimes a timer; now and then a push in the past or at the popped time
    /// under an old number.
    #[test]
    fn engine_like_load_matches_the_binary_heap() {
        let mut rng = stream(11, "radix-engine-like");
        let mut pair = Pair::new();
        for _ in 0..4_000 {
            let t = (uniform(&mut rng) * 1e8) as u64;
            pair.push(t);
        }
        for _ in 0..150_000 {
            pair.apply(&Op::Pop).unwrap();
            let u = uniform(&mut rng);
            let small = (uniform(&mut rng) * 20_000.0) as u64;
            let op = if u < 0.4 {
                Op::Push(8_000 + small)
            } else if u < 0.6 {
                Op::Reserve
            } else if u < 0.8 {
                Op::PushReserved((uniform(&mut rng) * 1e6) as usize, 1 + small)
            } else if u < 0.95 {
                Op::Push((uniform(&mut rng) * 2e8) as u64)
            } else if u < 0.97 {
                Op::PushReserved((uniform(&mut rng) * 1e6) as usize, 0)
            } else if u < 0.98 {
                Op::PushPast(small)
            } else {
                Op::Burst(3, 0)
            };
            pair.apply(&op).unwrap();
            if pair.heap.len() < 3_000 {
                pair.apply(&Op::Push(small)).unwrap();
            }
        }
        pair.drain().unwrap();
    }

    #[test]
    fn a_key_pushed_twice_does_not_panic() {
        // Misuse (a reserved number used twice at one time): both copies come out, nothing
        // panics.
        let mut q = RadixQueue::new();
        let seq = q.reserve_seq();
        q.push(Time::from_nanos(1), 10);
        q.push(Time::from_nanos(2), 20);
        q.push(Time::from_nanos(3), 30);
        q.push_reserved(Time::from_nanos(5), seq, 1);
        q.push_reserved(Time::from_nanos(5), seq, 2);
        q.push(Time::from_nanos(7), 40);
        let mut got: Vec<u64> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        got[3..5].sort();
        assert_eq!(got, [10, 20, 30, 1, 2, 40]);
    }

    #[test]
    fn room_shrinks_after_a_burst() {
        // A burst of 100k events spread over a second, drained, then a small steady load: the
        // buckets the burst went through give their room back.
        let mut q = RadixQueue::new();
        for i in 0..100_000u64 {
            q.push(Time::from_nanos(i * 7_919 % 1_000_000_000), i);
        }
        assert!(q.room() >= 100_000 - 2, "room {}", q.room());
        while q.len() > 10 {
            q.pop();
        }
        for i in 0..3 * SWEEP_MIN {
            let (now, e) = q.pop().unwrap();
            q.push(now + std::time::Duration::from_nanos(1 + i % 1000), e);
        }
        assert_eq!(q.len(), 10);
        assert!(
            q.room() <= 2 * 10 + (BUCKETS + 1) * KEEP,
            "room {} after shrinking to 10 pending",
            q.room()
        );
    }

    #[test]
    fn bucket_order() {
        // Keys in a lower bucket are below keys in a higher one: (digit position, digit).
        let last = 0x1b0u128;
        assert_eq!(bucket_of(0x1b1, last), 1);
        assert_eq!(bucket_of(0x1bf, last), 15);
        assert_eq!(bucket_of(0x1c0, last), 16 + 12);
        assert_eq!(bucket_of(0x200, last), 32 + 2);
        assert_eq!(bucket_of(u128::MAX, last), BUCKETS - 1);
    }
}
