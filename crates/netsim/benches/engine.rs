//! The bare event loop: the classic "hold" model (pop the earliest event, schedule one a random
//! exponential time later) at several queue sizes, reporting events per second. Run with
//! `cargo bench -p netsim --bench engine`.

// criterion's group macros generate undocumented public functions.
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use netsim::event_queue::EventQueue;
use netsim::rng::{exponential, stream};
use netsim::Time;

const HOLDS: u64 = 100_000;

fn hold(c: &mut Criterion) {
    let mut group = c.benchmark_group("event_loop_hold");
    group.throughput(Throughput::Elements(HOLDS));
    for pending in [64usize, 1024, 16_384] {
        group.bench_function(format!("pending_{pending}"), |b| {
            b.iter(|| {
                let mut rng = stream(1, "bench");
                let mut queue = EventQueue::with_capacity(pending + 1);
                for i in 0..pending {
                    queue.push(Time::from_nanos(i as u64 * 1000), i as u64);
                }
                for _ in 0..HOLDS {
                    let (now, event) = queue.pop().unwrap();
                    let delay = Duration::from_nanos((exponential(&mut rng, 1e6)) as u64);
                    queue.push(now + delay, black_box(event));
                }
                black_box(queue.len())
            })
        });
    }
    group.finish();
}

criterion_group!(benches, hold);
criterion_main!(benches);
