//! Prints what one dependent load costs on this machine for working sets from 16 KiB to 64 MiB:
//! a chase through a random cycle of cache-line-sized slots, so that every load waits for the
//! one before and no prefetcher can guess the next. The simulator's cost per event at many
//! flows is bounded below by such loads (each event reads the state of a flow that no event
//! near it touched), so this is the floor that the scaling figures in `docs/performance.md` are
//! set against: `cargo run --release -p netsim --example memory_latency`.

use std::time::Instant;

/// One cache line: the index of the next slot, padded to 64 bytes.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Slot {
    next: usize,
}

/// Slots in a random cycle over all of `slots` (Sattolo's shuffle of a xorshift stream, fixed
/// seed: the same cycle on every run).
fn random_cycle(slots: usize) -> Vec<Slot> {
    let mut order: Vec<usize> = (0..slots).collect();
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    for i in (1..slots).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let j = (state % i as u64) as usize;
        order.swap(i, j);
    }
    let mut cycle = vec![Slot { next: 0 }; slots];
    for pair in order.windows(2) {
        cycle[pair[0]].next = pair[1];
    }
    cycle[order[slots - 1]].next = order[0];
    cycle
}

/// Nanoseconds per load of a chase through `bytes` of slots (the best of three passes of at
/// least 4 M loads each, after one pass to warm the caches).
fn nanos_per_load(bytes: usize) -> f64 {
    let slots = (bytes / std::mem::size_of::<Slot>()).max(2);
    let cycle = random_cycle(slots);
    let loads = slots.max(4 << 20);
    let mut at = 0;
    for _ in 0..slots {
        at = cycle[at].next;
    }
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        let start = Instant::now();
        for _ in 0..loads {
            at = cycle[at].next;
        }
        best = best.min(start.elapsed().as_secs_f64() * 1e9 / loads as f64);
    }
    std::hint::black_box(at);
    best
}

fn main() {
    println!("working set   ns per dependent load");
    for kib in [16, 256, 512, 1024, 2048, 4096, 8192, 16384, 65536] {
        println!("{kib:>8} KiB   {:8.1}", nanos_per_load(kib << 10));
    }
}
