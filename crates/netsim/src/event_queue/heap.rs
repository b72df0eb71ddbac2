//! The binary-heap event queue, which [`super::EventQueue`] wraps (see the module documentation
//! of `event_queue` for why a heap and not the calendar queue).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use tfrc::Time;

/// One scheduled event with its ordering key: (time, sequence number) packed into one `u128`,
/// time in the high half, so that one integer comparison orders two entries. Shared with the
/// radix heap, which files these entries by their key and keeps a binary heap of them aside.
#[derive(Debug)]
pub(super) struct Entry<E> {
    /// `time_ns << 64 | seq`.
    pub(super) key: u128,
    pub(super) event: E,
}

impl<E> Entry<E> {
    pub(super) fn new(time: Time, seq: u64, event: E) -> Self {
        Entry {
            key: (u128::from(time.as_nanos()) << 64) | u128::from(seq),
            event,
        }
    }

    pub(super) fn time(&self) -> Time {
        Time::from_nanos((self.key >> 64) as u64)
    }
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

impl<E> Eq for Entry<E> {}

impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<E> Ord for Entry<E> {
    /// Reversed, so that the standard max-heap pops the earliest (time, seq) first.
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.cmp(&self.key)
    }
}

/// A priority queue of events keyed by (time, sequence number): a binary heap, O(log n) per
/// push and pop whatever the distribution of times. The sequence number is a counter of
/// insertions, so ties in time break first-scheduled-first.
#[derive(Debug)]
pub struct HeapQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    next_seq: u64,
}

impl<E> Default for HeapQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> HeapQueue<E> {
    /// An empty queue.
    pub fn new() -> Self {
        HeapQueue {
            heap: BinaryHeap::new(),
            next_seq: 0,
        }
    }

    /// An empty queue with room for `capacity` pending events before it reallocates.
    pub fn with_capacity(capacity: usize) -> Self {
        HeapQueue {
            heap: BinaryHeap::with_capacity(capacity),
            next_seq: 0,
        }
    }

    /// Schedules `event` at `time` (any time, also one earlier than the last popped).
    pub fn push(&mut self, time: Time, event: E) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry::new(time, seq, event));
    }

    /// Takes the next sequence number without scheduling anything: an event pushed later with
    /// [`HeapQueue::push_reserved`] and this number ranks, among events at its time, as if it
    /// had been pushed now.
    pub fn reserve_seq(&mut self) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        seq
    }

    /// Schedules `event` at `time` with a sequence number from [`HeapQueue::reserve_seq`]
    /// (each reserved number used at most once).
    pub fn push_reserved(&mut self, time: Time, seq: u64, event: E) {
        debug_assert!(seq < self.next_seq, "a sequence number not reserved");
        self.heap.push(Entry::new(time, seq, event));
    }

    /// Removes and returns the earliest event (first scheduled among equal times).
    pub fn pop(&mut self) -> Option<(Time, E)> {
        self.heap.pop().map(|entry| (entry.time(), entry.event))
    }

    /// The time of the earliest pending event.
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(Entry::time)
    }

    /// The earliest pending event and the one after it (the earlier of the root's two
    /// children), without removing them.
    pub fn peek_two(&self) -> (Option<&E>, Option<&E>) {
        let entries = self.heap.as_slice();
        let second = match entries {
            [_, left, right, ..] => Some(if left > right { left } else { right }),
            [_, only] => Some(only),
            _ => None,
        };
        (entries.first().map(|e| &e.event), second.map(|e| &e.event))
    }

    /// Pending events.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Events scheduled since construction (the next sequence number).
    pub fn scheduled(&self) -> u64 {
        self.next_seq
    }
}
