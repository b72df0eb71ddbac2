//! The binary-heap event queue, which [`super::EventQueue`] wraps (see the module documentation
//! of `event_queue` for why a heap and not the calendar queue).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use tfrc::Time;

/// One scheduled event with its ordering key: (time, sequence number) packed into one `u128`,
/// time in the high half, so that one integer comparison orders two entries. Shared with the
/// radix heap, which files these entries by their key and keeps a binary heap of them aside.
#[derive(Clone, Copy, Debug)]
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
///
/// A pop leaves the popped entry at the root, marked stale, because the engine pushes an event
/// while handling most events it pops (an arrival re-arms its link, a packet's next hop): that
/// push replaces the stale root and sifts down from it, one pass where a pop and a push take
/// two. A stale root no push replaced is removed at the next pop or peek. Keys are unique, so
/// the heap's shape never changes which event comes next.
#[derive(Debug)]
pub struct HeapQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    /// Whether the root was popped already (see above).
    stale_top: bool,
    next_seq: u64,
}

impl<E: Copy> Default for HeapQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> HeapQueue<E> {
    /// An empty queue.
    pub fn new() -> Self {
        Self::with_capacity(0)
    }

    /// An empty queue with room for `capacity` pending events before it reallocates.
    pub fn with_capacity(capacity: usize) -> Self {
        HeapQueue {
            heap: BinaryHeap::with_capacity(capacity),
            stale_top: false,
            next_seq: 0,
        }
    }

    /// Schedules `event` at `time` (any time, also one earlier than the last popped).
    pub fn push(&mut self, time: Time, event: E) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.insert(Entry::new(time, seq, event));
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
        self.insert(Entry::new(time, seq, event));
    }

    /// Removes and returns the earliest event (first scheduled among equal times).
    pub fn pop(&mut self) -> Option<(Time, E)> {
        self.drop_stale();
        let top = *self.heap.peek()?;
        self.stale_top = true;
        Some((top.time(), top.event))
    }

    /// The time of the earliest pending event.
    pub fn peek_time(&mut self) -> Option<Time> {
        self.drop_stale();
        self.heap.peek().map(Entry::time)
    }

    /// The earliest pending event and the one after it, without removing them.
    pub fn peek_two(&self) -> (Option<&E>, Option<&E>) {
        let entries = self.heap.as_slice();
        // The max-heap order is reversed: `a > b` means `a` comes first.
        fn earlier<'a, E>(
            a: Option<&'a Entry<E>>,
            b: Option<&'a Entry<E>>,
        ) -> Option<&'a Entry<E>> {
            match (a, b) {
                (Some(x), Some(y)) => Some(if x > y { x } else { y }),
                (x, None) => x,
                (None, y) => y,
            }
        }
        if !self.stale_top {
            let second = earlier(entries.get(1), entries.get(2));
            return (entries.first().map(|e| &e.event), second.map(|e| &e.event));
        }
        // The root is stale: the next is the earlier of its children, and the one after it the
        // earliest of the other child and the next one's children.
        if let [_, left, right, rest @ ..] = entries {
            if rest.len() >= 4 {
                // Both children have both children (the usual case), without the checks below.
                let (at, first, other) = if left > right {
                    (0, left, right)
                } else {
                    (2, right, left)
                };
                let (a, b) = (&rest[at], &rest[at + 1]);
                let nephew = if a > b { a } else { b };
                let second = if other > nephew { other } else { nephew };
                return (Some(&first.event), Some(&second.event));
            }
        }
        let (left, right) = (entries.get(1), entries.get(2));
        let Some(first) = earlier(left, right) else {
            return (None, None);
        };
        let (at, other) = if left.is_some_and(|l| std::ptr::eq(l, first)) {
            (1, right)
        } else {
            (2, left)
        };
        let second = earlier(
            other,
            earlier(entries.get(2 * at + 1), entries.get(2 * at + 2)),
        );
        (Some(&first.event), second.map(|e| &e.event))
    }

    /// Pending events.
    pub fn len(&self) -> usize {
        self.heap.len() - usize::from(self.stale_top)
    }

    /// Whether nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Events scheduled since construction (the next sequence number).
    pub fn scheduled(&self) -> u64 {
        self.next_seq
    }

    /// Adds `entry`: in place of a stale root if there is one, else at the end.
    fn insert(&mut self, entry: Entry<E>) {
        if self.stale_top {
            self.stale_top = false;
            if let Some(mut top) = self.heap.peek_mut() {
                *top = entry;
                return;
            }
        }
        self.heap.push(entry);
    }

    /// Removes a stale root.
    fn drop_stale(&mut self) {
        if self.stale_top {
            self.stale_top = false;
            self.heap.pop();
        }
    }
}
