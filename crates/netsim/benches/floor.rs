//! The floor under the engine's cost per event, printed as figures (not a timed test):
//! floyd2000 Fig. 9's simulation loop against a minimal event loop with as many events and as
//! many events pending, whose handler only schedules the next one, so that the engine's cost per
//! event reads against what its event queue alone and a cache miss cost on this machine.
//!
//! - `fig09`: the loop of `scenarios/papers/floyd2000/fig09.toml` (seed 1), nanoseconds per
//!   event over its events;
//! - `queue`: the engine's [`EventQueue`] holding fig09's mean population of pending events
//!   ([`PENDING`]), run for fig09's number of events as the engine runs it: peek at the next
//!   time, pop, and push the event back at that time plus an increment of the simulator's mix
//!   (`Load::Mix`, drawn into a table beforehand);
//! - `queue + 4 lines in W`: the same handler also adds one to a word in each of [`LINES`]
//!   cache lines picked at random (an inline xorshift) in a working set of W bytes, the way an
//!   event reads and writes its link, packet, agent and monitor: in the first-level cache
//!   (16 KiB), the second (256 KiB) or memory (64 MiB). The lines' addresses do not depend on
//!   one another, so the processor may overlap their misses, as it may the engine's.
//!
//! Rounds alternate the loops ([`ROUNDS`]; the median and the minimum of each are printed).
//! Run with `cargo bench -p netsim --bench floor` (about half a minute); `cargo test --benches`
//! runs a short smoke version without fig09.

use std::hint::black_box;
use std::time::{Duration, Instant};

use netsim::event_queue::load::Load;
use netsim::event_queue::EventQueue;
use netsim::rng::stream;
use netsim::Time;

/// fig09's mean number of pending events (counted at every pop; docs/performance.md).
const PENDING: u64 = 92;
/// Cache lines an event of the `queue + lines` loops touches.
const LINES: usize = 4;
/// Rounds of every loop, alternating.
const ROUNDS: usize = 5;
/// Increments drawn beforehand and cycled through (a power of two).
const TABLE: usize = 1 << 16;

/// One cache line of a working set.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line {
    count: u64,
}

/// A minimal event loop: a queue of [`PENDING`] events in the steady state of the hold model
/// and the table of increments it draws from.
struct Floor {
    queue: EventQueue<u64>,
    increments: Vec<u64>,
    at: usize,
}

impl Floor {
    fn new() -> Self {
        let mut rng = stream(1, "bench:floor");
        let increments: Vec<u64> = (0..TABLE).map(|_| Load::Mix.increment(&mut rng)).collect();
        let mut queue = EventQueue::with_capacity(PENDING as usize + 1);
        for (event, &increment) in increments.iter().enumerate().take(PENDING as usize) {
            queue.push(Time::from_nanos(increment), event as u64);
        }
        let mut floor = Floor {
            queue,
            increments,
            at: PENDING as usize,
        };
        // Settle: every event rescheduled a few times over.
        floor.run(16 * PENDING, &mut [], 0);
        floor
    }

    /// Runs `events` events; each also adds one to `lines_per_event` random lines of `state`
    /// (a power of two of them, so that a mask picks one).
    fn run(&mut self, events: u64, state: &mut [Line], lines_per_event: usize) {
        assert!(lines_per_event == 0 || state.len().is_power_of_two());
        let mask = state.len().wrapping_sub(1) as u64;
        let mut x = 0x9e37_79b9_7f4a_7c15_u64;
        for _ in 0..events {
            let now = self.queue.peek_time().expect("the population stays");
            let (_, event) = self.queue.pop().expect("peeked");
            for _ in 0..lines_per_event {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let line = &mut state[(x & mask) as usize];
                line.count = line.count.wrapping_add(1);
            }
            let next = now + Duration::from_nanos(self.increments[self.at]);
            self.at = (self.at + 1) & (TABLE - 1);
            self.queue.push(next, black_box(event));
        }
    }
}

/// Nanoseconds per event of one timed call of `f`, which runs `events` events.
fn nanos_per_event(events: u64, f: impl FnOnce()) -> f64 {
    let start = Instant::now();
    f();
    start.elapsed().as_secs_f64() * 1e9 / events as f64
}

/// fig09 loaded from the repository's scenario file, ready to run.
fn fig09() -> netsim::sim::Simulation {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/papers/floyd2000/fig09.toml");
    let text = std::fs::read_to_string(&path).expect("fig09.toml");
    let scenario = netsim::scenario::Scenario::from_toml_str(&text).expect("fig09 parses");
    scenario.simulation(1).expect("fig09 builds")
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` runs this as a smoke test.
    let quick = !std::env::args().any(|a| a == "--bench");
    let (events, rounds) = if quick {
        (20_000, 1)
    } else {
        let mut sim = fig09();
        sim.run_until(sim.end());
        (sim.events_processed(), ROUNDS)
    };
    let sets: [(&str, usize); 3] = [
        ("16 KiB", 16 << 10),
        ("256 KiB", 256 << 10),
        ("64 MiB", 64 << 20),
    ];
    let mut states: Vec<Vec<Line>> = sets
        .iter()
        .map(|&(_, bytes)| vec![Line { count: 0 }; bytes / std::mem::size_of::<Line>()])
        .collect();
    let mut names = vec![String::from("queue")];
    names.extend(
        sets.iter()
            .map(|(name, _)| format!("queue + {LINES} lines in {name}")),
    );
    if !quick {
        names.insert(0, String::from("fig09"));
    }
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
    for _ in 0..rounds {
        let mut k = 0;
        if !quick {
            let mut sim = fig09();
            samples[k].push(nanos_per_event(events, || sim.run_until(sim.end())));
            assert_eq!(sim.events_processed(), events);
            k += 1;
        }
        let mut floor = Floor::new();
        samples[k].push(nanos_per_event(events, || floor.run(events, &mut [], 0)));
        for state in &mut states {
            k += 1;
            let mut floor = Floor::new();
            samples[k].push(nanos_per_event(events, || floor.run(events, state, LINES)));
        }
    }
    println!("{events} events, {PENDING} pending, {rounds} rounds alternating: ns per event");
    println!("{:<30} {:>8} {:>8}", "loop", "median", "minimum");
    for (name, mut values) in names.iter().zip(samples) {
        values.sort_by(f64::total_cmp);
        let median = values[values.len() / 2];
        println!("{name:<30} {median:>8.1} {:>8.1}", values[0]);
    }
    black_box(&states);
}
