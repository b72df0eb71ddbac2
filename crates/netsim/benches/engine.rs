//! The bare event loop: the classic "hold" model (pop the earliest event, schedule one an
//! increment later) on the simulator's loads, at several numbers of pending events, for the
//! three event queues: the binary heap (`HeapQueue`), the calendar queue (`CalendarQueue`) and
//! the radix heap (`RadixQueue`, which `EventQueue` wraps), reporting events per second. Run
//! with `cargo bench -p netsim --bench engine` (about a minute).
//!
//! Loads (increment distributions):
//! - `exp`: exponential, mean 1 ms;
//! - `mix`: the simulator's mix: 45% 0.8 ms (a 1000 B packet on 10 Mb/s), 45% 50 ms
//!   (propagation), 10% uniform in 0-1 s (timers);
//! - `ties`: 0, 1 or 2 ms, with every pending time on the 1 ms grid, so thousands of events
//!   share each instant.
//!
//! Each benchmark fills its queue from the load's stationary distribution of time-to-go (`ties`:
//! from the increments themselves, to keep the grid), runs `pending` holds untimed to settle, then
//! times batches of [`HOLDS`] holds on the same queue. Increments come from a fixed-seed
//! xoshiro256++ stream, drawn into a table beforehand so the timing is the queue's alone.

// criterion's group macros generate undocumented public functions.
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, SamplingMode, Throughput};
use netsim::event_queue::calendar::CalendarQueue;
use netsim::event_queue::heap::HeapQueue;
use netsim::event_queue::load::Load;
use netsim::event_queue::radix::RadixQueue;
use netsim::rng::{exponential, stream, uniform, SimRng};
use netsim::Time;

/// Holds per timed iteration.
const HOLDS: u64 = 10_000;
/// Increments drawn per load and cycled through (a power of two).
const TABLE: usize = 1 << 16;
const PENDING: [usize; 4] = [64, 1024, 16_384, 100_000];

/// The operations the hold loop needs, for every implementation.
trait Queue {
    fn make(capacity: usize) -> Self;
    fn push(&mut self, time: Time, event: u64);
    fn pop(&mut self) -> Option<(Time, u64)>;
}

macro_rules! impl_queue {
    ($queue:ident) => {
        impl Queue for $queue<u64> {
            fn make(capacity: usize) -> Self {
                $queue::with_capacity(capacity)
            }
            fn push(&mut self, time: Time, event: u64) {
                $queue::push(self, time, event)
            }
            fn pop(&mut self) -> Option<(Time, u64)> {
                $queue::pop(self)
            }
        }
    };
}

impl_queue!(HeapQueue);
impl_queue!(CalendarQueue);
impl_queue!(RadixQueue);

/// The benchmark's own use of the shared loads: the steady-state fill.
trait Fill {
    fn fill(self, rng: &mut SimRng) -> u64;
}

impl Fill for Load {
    /// The time-to-go of a pending event in the steady state of the hold model (the residual
    /// life of a renewal process: a length-biased increment, times a uniform fraction), except
    /// for `ties`, whose fill stays on the 1 ms grid.
    fn fill(self, rng: &mut SimRng) -> u64 {
        match self {
            Load::Exp => exponential(rng, 1e6) as u64,
            Load::Mix => {
                // Length-biased: each part weighted by probability times mean.
                let (short, prop, timer) = (0.45 * 0.8e6, 0.45 * 50e6, 0.1 * 0.5e9);
                let u = uniform(rng) * (short + prop + timer);
                let length = if u < short {
                    0.8e6
                } else if u < short + prop {
                    50e6
                } else {
                    // Density proportional to x on [0, 1 s].
                    uniform(rng).sqrt() * 1e9
                };
                (uniform(rng) * length) as u64
            }
            Load::Ties => self.increment(rng),
        }
    }
}

/// A queue of `pending` events in the load's steady state, and where in `table` to go on.
fn settled<Q: Queue>(load: Load, pending: usize, table: &[u64]) -> (Q, usize) {
    let mut rng = stream(pending as u64, load.name());
    let mut queue = Q::make(pending + 1);
    for i in 0..pending as u64 {
        queue.push(Time::from_nanos(load.fill(&mut rng)), i);
    }
    let mut at = 0;
    for _ in 0..pending {
        at = hold_once(&mut queue, table, at);
    }
    (queue, at)
}

/// Pops the earliest event and schedules it again at its time plus the next increment.
#[inline]
fn hold_once<Q: Queue>(queue: &mut Q, table: &[u64], at: usize) -> usize {
    let (now, event) = queue.pop().unwrap();
    queue.push(now + Duration::from_nanos(table[at]), black_box(event));
    (at + 1) & (TABLE - 1)
}

fn bench_one<Q: Queue>(c: &mut Criterion, load: Load, name: &str, table: &[u64]) {
    let mut group = c.benchmark_group(format!("hold_{}/{name}", load.name()));
    group.throughput(Throughput::Elements(HOLDS));
    group.sampling_mode(SamplingMode::Flat);
    for pending in PENDING {
        let (mut queue, mut at) = settled::<Q>(load, pending, table);
        group.bench_function(format!("{pending}"), |b| {
            b.iter(|| {
                for _ in 0..HOLDS {
                    at = hold_once(&mut queue, table, at);
                }
            })
        });
    }
    group.finish();
}

fn hold(c: &mut Criterion) {
    for load in [Load::Exp, Load::Mix, Load::Ties] {
        let mut rng = stream(1, &format!("bench:{}", load.name()));
        let table: Vec<u64> = (0..TABLE).map(|_| load.increment(&mut rng)).collect();
        bench_one::<HeapQueue<u64>>(c, load, "heap", &table);
        bench_one::<CalendarQueue<u64>>(c, load, "calendar", &table);
        bench_one::<RadixQueue<u64>>(c, load, "radix", &table);
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_millis(1200));
    targets = hold
}
criterion_main!(benches);
