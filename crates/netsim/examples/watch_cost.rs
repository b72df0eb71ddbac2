//! The watchdog's cost per controller call, alone (docs/controllers.md, "Cost"): times
//! `Watch::begin` and `Watch::end` around an empty call against the empty call alone, in
//! alternating rounds, so that the end-to-end figure of scripts/controller_cost.py (whose noise
//! on a shared machine is larger than this cost) has a bound measured apart:
//! `cargo run --release -p netsim --example watch_cost [CALLS] [ROUNDS]`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use netsim::agent::tcp::controller::watchdog::{Callback, Stop, Watch};
use tfrc::Time;

/// `calls` empty calls, each bracketed by the watch when there is one; the wall time.
fn time_calls(watch: Option<&Watch>, calls: u64) -> Duration {
    let started = Instant::now();
    for i in 0..calls {
        let call = watch.map(|w| w.begin(Callback::CongAvoid, Time::from_nanos(i)));
        black_box(i);
        if let (Some(w), Some(call)) = (watch, call) {
            black_box(w.end(call)).ok();
        }
    }
    started.elapsed()
}

fn main() {
    let mut args = std::env::args().skip(1);
    let calls: u64 = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(20_000_000);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(9);
    let watch = Watch::new("cost", Duration::from_secs(5), Stop::Exit).expect("a limit");
    let (mut on, mut off) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        off.push(time_calls(black_box(None), calls));
        on.push(time_calls(black_box(Some(&watch)), calls));
    }
    on.sort();
    off.sort();
    let per_call = |d: Duration| d.as_secs_f64() / calls as f64 * 1e9;
    let (best, median) = (per_call(on[0]) - per_call(off[0]), {
        per_call(on[rounds / 2]) - per_call(off[rounds / 2])
    });
    println!(
        "{calls} calls x {rounds} alternating rounds: the watch adds {best:.2} ns per call (best), \
         {median:.2} ns (median); the empty call alone {:.2} ns",
        per_call(off[0])
    );
}
