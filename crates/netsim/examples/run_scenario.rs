//! Runs a scenario file to its end and prints its event count, the simulation loop's wall and
//! CPU time and a digest of every result (the `Debug` text of [`netsim::results::Results`],
//! hashed), so that a change to the engine can be checked to leave results bit-identical and
//! timed without the Python layer: `cargo run --release -p netsim --example run_scenario -- FILE`.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::time::Instant;

use netsim::scenario::Scenario;

/// This thread's CPU time in nanoseconds (Linux `schedstat`; 0 where it cannot be read), so
/// that timings on a shared machine count only this thread's work.
fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: run_scenario SCENARIO.toml");
        std::process::exit(2);
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(error) => {
            eprintln!("{path}: {error}");
            std::process::exit(2);
        }
    };
    // A relative controller plugin path is looked for in the file's directory first
    // (docs/controllers.md), as `tfrclab.Scenario.load` arranges it; no thread runs yet.
    if let Some(dir) = std::path::Path::new(&path).parent() {
        let dir = if dir.as_os_str().is_empty() {
            std::path::Path::new(".")
        } else {
            dir
        };
        let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        std::env::set_var(netsim::agent::tcp::controller::PLUGIN_PATH_VAR, dir);
    }
    let scenario = match Scenario::from_toml_str(&text) {
        Ok(scenario) => scenario,
        Err(error) => {
            eprintln!("{path}: {error}");
            std::process::exit(2);
        }
    };
    let mut simulation = match scenario.simulation(scenario.seed) {
        Ok(simulation) => simulation,
        Err(error) => {
            eprintln!("{path}: {error}");
            std::process::exit(2);
        }
    };
    if let Err(error) = simulation.try_reserve_monitors() {
        eprintln!("{path}: {error}");
        std::process::exit(2);
    }
    let started = Instant::now();
    let cpu_started = thread_cpu_ns();
    let end = simulation.end();
    simulation.run_until(end);
    let wall_s = started.elapsed().as_secs_f64();
    let loop_s = (thread_cpu_ns() - cpu_started) as f64 * 1e-9;
    if let Some(failure) = simulation.agent_failure() {
        eprintln!("{path}: {failure}");
        std::process::exit(1);
    }
    let results = simulation.finish();
    let mut hasher = DefaultHasher::new();
    format!("{results:?}").hash(&mut hasher);
    let delivered: u64 = results
        .flows
        .iter()
        .map(|f| f.record.totals.packets_received)
        .sum();
    println!(
        "{path}: events {} delivered {delivered} events/packet {:.3} wall {wall_s:.3} s \
         cpu {loop_s:.3} s cpu ns/event {:.1} digest {:016x}",
        results.events,
        results.events as f64 / delivered.max(1) as f64,
        1e9 * loop_s / results.events.max(1) as f64,
        hasher.finish()
    );
}
