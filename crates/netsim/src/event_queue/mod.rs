//! The pending-event set: events ordered by (time, insertion sequence), so that events due at
//! the same instant run in the order they were scheduled, on every machine and every run.
//!
//! Three implementations order by exactly the same key and accept pushes at any time, also
//! earlier than the last popped one: a binary heap (`heap`), a calendar queue (Brown 1988,
//! `calendar`) and a radix heap (Ahuja et al. 1990, `radix`). In isolation (the hold model of
//! `benches/engine.rs`, 1k-16k pending events) the calendar queue is 1.1-1.8x faster than the
//! heap. But the engine keeps few events pending: a link holds at most two (the next arrival at
//! the far end, its propagation pipe being a FIFO, and the end of its transmission when a packet
//! waits), so 32 flows on a dumbbell keep about a hundred. In the whole simulator
//! (`benches/network.rs`) the heap is faster than the calendar queue: 19.5 vs 15.0 M events/s on
//! the bare loop, 8.3 vs 6.4 with 32 CBR flows on a RED dumbbell, 0.56 vs 0.54 with 1024 flows.
//!
//! The radix heap was built for thousands pending: 2048 flows on a 1 Gb/s dumbbell keep about
//! 4400 events, and there a heap pop sifts through 12 levels of 32-byte entries, many of them
//! cache misses. It pops in exactly the heap's order, but it is not faster, so [`EventQueue`]
//! stays the heap. Measured with callgrind (the simulation loop only, `run_until_at_most`; D1
//! 32 KiB, LL 512 KiB) on a 3 s run of 2048 flows (1.85 M events): heap 2.970 G instructions,
//! 34.1 M D1 and 22.0 M LL read misses, 10.1 M D1 and 8.0 M LL write misses; radix heap
//! 3.032 G (+2%), 27.9 M (-18%) and 20.5 M (-7%) read misses, 12.8 M and 9.2 M write misses
//! (an event is written again every time its bucket is redistributed), about as many LL misses
//! in all. Splitting by bits as the original radix heap does, not by base-16 digits, took
//! 3.241 G. On floyd2000 fig09 (32 flows, 1.74 M events) the radix heap takes 13% more
//! instructions (2.516 vs 2.229 G). Timed alternately on a shared machine (CPU seconds, five
//! pairs, 2048 flows for 10 s) it was 2.89 vs 3.13 s for the heap in one series and 2.96 vs 2.63
//! in the next: within the noise. Choosing the radix heap for large capacity hints only (an
//! enum inside `EventQueue`) cost fig09 4% more instructions for the dispatch, and the radix
//! heap's own 3.14 G at 2048 flows. In the hold model (M holds/s, radix vs heap, one run) the
//! radix heap is slower at 64 pending (exp 11.8 vs 23.4, mix 18.1 vs 25.3, ties 14.9 vs 35.2),
//! about level at 16k with exp and ties (mix 14.1 vs 8.2), and faster at 100k (exp 10.7 vs 5.0,
//! mix 12.3 vs 3.8, ties 6.3 vs 5.6); the calendar queue is the fastest up to 16k.
//!
//! The engine also looks at the next two events without popping them ([`EventQueue::peek_two`]),
//! to ask the processor for their links' and agents' state while it handles the current event
//! (`crate::prefetch`). A 4-ary heap with the keys packed into `u128`s apart from the events was
//! tried as well: fig09's whole run took 14% more instructions with it than with the standard
//! library's binary heap (which sifts a hole to the bottom and back up, without bounds checks),
//! for no time gained on this machine, so the binary heap stays; its entries order by the same
//! packed key, one 128-bit comparison instead of two (3% fewer instructions on fig09).
//!
//! A pop leaves its entry at the root, marked stale, and the next push replaces it and sifts
//! down (the standard heap's `peek_mut`): the engine pushes an event while handling most events
//! it pops, so a pop and a push mostly cost one pass down the heap instead of a pass down and
//! two up. Callgrind on the loop of the fat-LTO build: fig09 1.884 G to 1.822 G instructions
//! (-3.3%), 2048 flows over 3 s 2.620 G to 2.286 G (-12.7%); fig09's loop CPU, 7 alternating
//! runs, median 0.287 s to 0.260 s. A heap of our own that left the vacancy of a pop at a leaf
//! for the next push to fill took 1.9% more instructions on fig09 than the standard one (its
//! bounds checks, where the standard heap's are proven away with unsafe code), and a 4-ary heap
//! of our own with the same stale root 15% more (fig09's whole loop: 1.988 G against 1.726 G).

#[doc(hidden)]
pub mod calendar;
#[doc(hidden)]
pub mod heap;
#[doc(hidden)]
pub mod load;
#[doc(hidden)]
pub mod radix;

use tfrc::Time;

/// A priority queue of events keyed by (time, sequence number). The sequence number is a
/// counter of insertions, so ties in time break first-scheduled-first, exactly and always.
///
/// It is a binary heap: O(log n) per push and pop, which on the engine's small pending sets
/// beats the calendar queue's O(1) (module documentation).
#[derive(Debug)]
pub struct EventQueue<E> {
    inner: heap::HeapQueue<E>,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    /// An empty queue.
    pub fn new() -> Self {
        EventQueue {
            inner: heap::HeapQueue::new(),
        }
    }

    /// An empty queue with room for `capacity` pending events before it reallocates.
    pub fn with_capacity(capacity: usize) -> Self {
        EventQueue {
            inner: heap::HeapQueue::with_capacity(capacity),
        }
    }

    /// Schedules `event` at `time` (any time, also one earlier than the last popped).
    pub fn push(&mut self, time: Time, event: E) {
        self.inner.push(time, event);
    }

    /// Takes the next sequence number without scheduling anything, for an event that may be
    /// pushed later (with [`EventQueue::push_reserved`]) but must rank among equal-time events
    /// as if it had been pushed now: a link's transmission end, decided when the transmission
    /// starts but scheduled only if a packet comes to wait for it.
    pub fn reserve_seq(&mut self) -> u64 {
        self.inner.reserve_seq()
    }

    /// Schedules `event` at `time` under a number from [`EventQueue::reserve_seq`], used once.
    pub fn push_reserved(&mut self, time: Time, seq: u64, event: E) {
        self.inner.push_reserved(time, seq, event);
    }

    /// Removes and returns the earliest event (first scheduled among equal times).
    pub fn pop(&mut self) -> Option<(Time, E)> {
        self.inner.pop()
    }

    /// The time of the earliest pending event.
    pub fn peek_time(&mut self) -> Option<Time> {
        self.inner.peek_time()
    }

    /// The earliest pending event and the one after it, left in place: what the engine will
    /// handle next, so that it can ask for their state ahead of time.
    pub fn peek_two(&self) -> (Option<&E>, Option<&E>) {
        self.inner.peek_two()
    }

    /// Pending events.
    pub fn len(&self) -> usize {
        self.inner.len()
    }

    /// Whether nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }

    /// Events scheduled since construction (the next sequence number).
    pub fn scheduled(&self) -> u64 {
        self.inner.scheduled()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::calendar::CalendarQueue;
    use super::heap::HeapQueue;
    use super::load::Load;
    use super::radix::RadixQueue;
    use super::EventQueue;
    use crate::rng::{stream, SimRng};
    use tfrc::Time;

    /// The reference: a sorted map from (time, seq) to the event, and the last popped time.
    #[derive(Default)]
    struct Model {
        map: BTreeMap<(u64, u64), u64>,
        next_seq: u64,
        now: u64,
    }

    impl Model {
        fn push(&mut self, time: u64, event: u64) {
            self.map.insert((time, self.next_seq), event);
            self.next_seq += 1;
        }

        fn pop(&mut self) -> Option<(u64, u64)> {
            let ((time, _), event) = self.map.pop_first()?;
            self.now = time;
            Some((time, event))
        }

        fn peek_time(&self) -> Option<u64> {
            self.map.keys().next().map(|&(time, _)| time)
        }
    }

    /// One step of a generated workload; push times are relative to the last popped time.
    #[derive(Clone, Debug)]
    enum Op {
        Pop,
        /// At now + delay.
        Push(u64),
        /// At now - back (saturating): earlier than the last popped time.
        PushPast(u64),
        /// Several events at now + delay.
        Burst(u8, u64),
    }

    const FAR: u64 = 1_000_000_000_000_000; // 1e15 ns

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            6 => Just(Op::Pop),
            3 => (0u64..3).prop_map(|k| Op::Push(k * 1_000_000)),
            3 => (0u64..2_000_000).prop_map(Op::Push),
            1 => Just(Op::Push(FAR)),
            1 => (0..FAR).prop_map(Op::Push),
            1 => (0u64..5_000_000).prop_map(Op::PushPast),
            1 => (1u8..60, 0u64..3).prop_map(|(n, k)| Op::Burst(n, k * 1000)),
        ]
    }

    /// A hold-model increment: ties, short, long and far-future delays.
    fn increment() -> impl Strategy<Value = u64> {
        prop_oneof![
            3 => (0u64..3).prop_map(|k| k * 1_000_000),
            3 => 0u64..2_000_000,
            2 => Just(800_000u64),
            2 => Just(50_000_000u64),
            1 => 0u64..1_000_000_000,
            1 => Just(FAR),
        ]
    }

    /// The increment of load `load` of the benchmark (0: exponential, 1: the simulator's mix,
    /// 2: ties).
    fn load_increment(load: usize, rng: &mut SimRng) -> u64 {
        [Load::Exp, Load::Mix, Load::Ties][load.min(2)].increment(rng)
    }

    /// The same tests for every implementation.
    macro_rules! queue_tests {
        ($name:ident, $queue:ident) => {
            mod $name {
                use super::*;

                /// Applies `ops` to a fresh queue and to the model, comparing after each step.
                fn run_ops(ops: &[Op]) -> Result<(), TestCaseError> {
                    let mut q = $queue::new();
                    let mut m = Model::default();
                    let mut id = 0u64;
                    for op in ops {
                        match *op {
                            Op::Pop => {
                                let got = q.pop().map(|(t, e)| (t.as_nanos(), e));
                                prop_assert_eq!(got, m.pop());
                            }
                            Op::Push(delay) => {
                                q.push(Time::from_nanos(m.now + delay), id);
                                m.push(m.now + delay, id);
                                id += 1;
                            }
                            Op::PushPast(back) => {
                                let t = m.now.saturating_sub(back);
                                q.push(Time::from_nanos(t), id);
                                m.push(t, id);
                                id += 1;
                            }
                            Op::Burst(n, delay) => {
                                for _ in 0..n {
                                    q.push(Time::from_nanos(m.now + delay), id);
                                    m.push(m.now + delay, id);
                                    id += 1;
                                }
                            }
                        }
                        prop_assert_eq!(q.len(), m.map.len());
                        prop_assert_eq!(q.is_empty(), m.map.is_empty());
                        prop_assert_eq!(q.scheduled(), m.next_seq);
                        prop_assert_eq!(q.peek_time().map(Time::as_nanos), m.peek_time());
                    }
                    while let Some(expected) = m.pop() {
                        prop_assert_eq!(q.pop().map(|(t, e)| (t.as_nanos(), e)), Some(expected));
                    }
                    prop_assert!(q.pop().is_none());
                    prop_assert!(q.peek_time().is_none());
                    Ok(())
                }

                /// The hold model: fills with `initial` times, then pops one and pushes one at
                /// the popped time plus each increment in turn, comparing every pop.
                fn run_hold(initial: &[u64], increments: &[u64]) -> Result<(), TestCaseError> {
                    let mut q = $queue::with_capacity(initial.len());
                    let mut m = Model::default();
                    for (id, &t) in (0u64..).zip(initial) {
                        q.push(Time::from_nanos(t), id);
                        m.push(t, id);
                    }
                    for (id, &inc) in (initial.len() as u64..).zip(increments) {
                        let got = q.pop().map(|(t, e)| (t.as_nanos(), e));
                        prop_assert_eq!(got, m.pop());
                        let Some((now, _)) = got else { break };
                        q.push(Time::from_nanos(now + inc), id);
                        m.push(now + inc, id);
                        prop_assert_eq!(q.peek_time().map(Time::as_nanos), m.peek_time());
                    }
                    while let Some(expected) = m.pop() {
                        prop_assert_eq!(q.pop().map(|(t, e)| (t.as_nanos(), e)), Some(expected));
                    }
                    prop_assert!(q.is_empty());
                    Ok(())
                }

                /// The benchmark's loads, smaller and shorter, against the model.
                fn run_load(load: usize, pending: usize, holds: usize) {
                    let mut rng = stream(load as u64, "event-queue-test");
                    let initial: Vec<u64> =
                        (0..pending).map(|_| load_increment(load, &mut rng)).collect();
                    let increments: Vec<u64> =
                        (0..holds).map(|_| load_increment(load, &mut rng)).collect();
                    run_hold(&initial, &increments).unwrap();
                }

                #[test]
                fn earliest_first_and_ties_in_insertion_order() {
                    let mut q = $queue::new();
                    q.push(Time::from_nanos(20), "c");
                    q.push(Time::from_nanos(10), "a");
                    q.push(Time::from_nanos(20), "d");
                    q.push(Time::from_nanos(10), "b");
                    assert_eq!(q.peek_time(), Some(Time::from_nanos(10)));
                    let order: Vec<_> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
                    assert_eq!(order, ["a", "b", "c", "d"]);
                    assert!(q.is_empty());
                    assert_eq!(q.scheduled(), 4);
                }

                #[test]
                fn extreme_times() {
                    let times = [u64::MAX, 0, FAR, u64::MAX, 1, 0, u64::MAX - 1, FAR];
                    let mut q = $queue::default();
                    for (i, &t) in times.iter().enumerate() {
                        q.push(Time::from_nanos(t), i);
                    }
                    let got: Vec<(u64, usize)> =
                        std::iter::from_fn(|| q.pop().map(|(t, i)| (t.as_nanos(), i))).collect();
                    let mut expected: Vec<(u64, usize)> = times.iter().copied().zip(0..).collect();
                    expected.sort();
                    assert_eq!(got, expected);
                }

                #[test]
                fn grows_then_drains_to_empty() {
                    // Ten thousand events, then a hold period, then everything popped: the
                    // calendar resizes up and back down.
                    let mut rng = stream(3, "grow");
                    let initial: Vec<u64> = (0..10_000).map(|_| load_increment(1, &mut rng)).collect();
                    let increments: Vec<u64> = (0..5_000).map(|_| load_increment(0, &mut rng)).collect();
                    run_hold(&initial, &increments).unwrap();
                }

                #[test]
                fn changing_load_keeps_order() {
                    // Dense times first (1 ns apart), then second-long increments, then ties:
                    // the calendar has to re-estimate its width without a size change.
                    let initial: Vec<u64> = (0..2_000).collect();
                    let mut increments = vec![1_000_000_000; 20_000];
                    increments.extend((0..20_000u64).map(|i| (i % 3) * 1_000_000));
                    increments.extend((0..20_000u64).map(|i| i % 7));
                    run_hold(&initial, &increments).unwrap();
                }

                #[test]
                fn exponential_load() {
                    run_load(0, 3_000, 30_000);
                }

                #[test]
                fn simulator_mix_load() {
                    run_load(1, 3_000, 30_000);
                }

                #[test]
                fn ties_load() {
                    run_load(2, 3_000, 30_000);
                }

                proptest! {
                    #[test]
                    fn pops_in_time_then_insertion_order(
                        times in proptest::collection::vec(0u64..50, 0..200)
                    ) {
                        let mut q = $queue::new();
                        for (i, &t) in times.iter().enumerate() {
                            q.push(Time::from_nanos(t), i);
                        }
                        let mut expected: Vec<(u64, usize)> = times.iter().copied().zip(0..).collect();
                        expected.sort();
                        let got: Vec<(u64, usize)> =
                            std::iter::from_fn(|| q.pop().map(|(t, i)| (t.as_nanos(), i))).collect();
                        prop_assert_eq!(got, expected);
                    }

                    #[test]
                    fn interleaved_pushes_and_pops_match_the_reference(
                        ops in proptest::collection::vec(op(), 0..1500)
                    ) {
                        run_ops(&ops)?;
                    }

                    #[test]
                    fn hold_model_matches_the_reference(
                        initial in proptest::collection::vec(
                            prop_oneof![0u64..3_000_000, (0u64..3).prop_map(|k| k * 1_000_000)],
                            1..400,
                        ),
                        increments in proptest::collection::vec(increment(), 0..1500),
                    ) {
                        run_hold(&initial, &increments)?;
                    }
                }
            }
        };
    }

    queue_tests!(event_queue, EventQueue);
    queue_tests!(calendar_queue, CalendarQueue);
    queue_tests!(heap_queue, HeapQueue);
    queue_tests!(radix_queue, RadixQueue);

    /// `peek_two` gives the next two pops, ties included, and leaves them queued.
    #[test]
    fn peek_two_gives_the_next_two_pops() {
        let mut q = EventQueue::new();
        assert_eq!(q.peek_two(), (None, None));
        let mut rng = stream(9, "peek-two");
        for id in 0..500u64 {
            q.push(Time::from_nanos(load_increment(2, &mut rng)), id);
        }
        let mut popped = Vec::new();
        while let (Some(&first), second) = q.peek_two() {
            let second = second.copied();
            assert_eq!(q.pop().map(|(_, e)| e), Some(first));
            assert_eq!(q.peek_two().0.copied(), second);
            popped.push(first);
        }
        assert_eq!(popped.len(), 500);
        assert_eq!(q.peek_two(), (None, None));
    }

    /// A reserved sequence number ranks an event pushed later as if it had been pushed when
    /// the number was taken.
    #[test]
    fn reserved_numbers_keep_their_rank_among_equal_times() {
        let mut q = EventQueue::new();
        let t = Time::from_nanos(10);
        q.push(t, "first");
        let seq = q.reserve_seq();
        q.push(t, "third");
        q.push(Time::from_nanos(5), "earlier");
        q.push_reserved(t, seq, "second");
        let order: Vec<&str> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, ["earlier", "first", "second", "third"]);
        assert_eq!(q.scheduled(), 4, "a reserved number is taken once");
    }
}
