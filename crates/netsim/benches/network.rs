//! The engine benchmark of the netsim issue, printed as figures (not a timed test):
//! (a) the bare event loop: one CBR flow over one link, so nearly all work is the engine's;
//! (b) 32 randomized CBR flows (16.5 Mb/s offered) through a 15 Mb/s RED dumbbell (ns-2.35
//!     defaults, 100-packet buffer) for 150 simulated seconds, with the monitors on (10 ms bins
//!     for every flow and both bottleneck directions);
//! (c) the same load split over 1024 flows (more pending timers, more state samples);
//! (d) issue 4's target: floyd2000 Fig. 9 (`scenarios/papers/floyd2000/fig09.toml`: 16 SACK +
//!     16 TFRC flows on a 15 Mb/s RED dumbbell, 150 s), whose figure of merit is delivered data
//!     packets per wall-second (target: at least 1 M on one core).
//! For each: events per wall-second, delivered packets per wall-second, and the resident memory
//! sampled every 30 simulated seconds (flat, apart from the per-bin vectors).
//!
//! Run with `cargo bench -p netsim --bench network`.

use std::time::{Duration, Instant};

use netsim::agent::{AgentConfig, CbrConfig};
use netsim::dist::{DurationDist, RateDist};
use netsim::queue::{QueueConfig, RedConfig};
use netsim::sim::{FlowSetup, SimConfig, Simulation};
use netsim::topology::{AccessDelay, DumbbellConfig, LinkParams, Topology};
use netsim::Time;

fn cbr_flow(name: String, from: &str, to: &str, t: &Topology, rate_bps: u64) -> FlowSetup {
    FlowSetup {
        name,
        from: t.node(from).unwrap(),
        to: t.node(to).unwrap(),
        agent: AgentConfig::Cbr(CbrConfig {
            rate_bps,
            size_bytes: 1000,
            random: true,
            max_packets: None,
        }),
        start: DurationDist::Uniform {
            low: Duration::ZERO,
            high: Duration::from_secs(1),
        },
        stop: None,
        on_off: None,
        loss_event_rtt: None,
        host_jitter: Duration::ZERO,
    }
}

/// Resident set size in KiB (Linux), or 0 where /proc is missing.
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn measure(label: &str, mut sim: Simulation, seconds: u64) {
    let start = Instant::now();
    let mut rss = Vec::new();
    for step in 1..=seconds / 30 {
        sim.run_until(Time::from_nanos(step * 30 * 1_000_000_000));
        rss.push(rss_kib() / 1024);
    }
    sim.run_until(sim.end());
    let events = sim.events_processed();
    let results = sim.finish();
    let wall = start.elapsed().as_secs_f64();
    let bins_mib = bin_bytes(&results) as f64 / (1024.0 * 1024.0);
    let delivered: u64 = results
        .flows
        .iter()
        .map(|f| f.record.totals.packets_received)
        .sum();
    println!(
        "{label}: {seconds} s simulated in {wall:.2} s wall; {events} events = {:.2} M events/s; \
         {delivered} packets delivered = {:.2} M packets/s; RSS every 30 s (MiB): {rss:?}, \
         of which the per-bin series at the end: {bins_mib:.0} MiB",
        events as f64 / wall / 1e6,
        delivered as f64 / wall / 1e6,
    );
}

/// Bytes held by the results' per-bin series (the only memory that grows with simulated time).
fn bin_bytes(results: &netsim::results::Results) -> usize {
    let flows: usize = results
        .flows
        .iter()
        .map(|f| {
            let b = &f.record.bins;
            b.sent_packets.stored_bytes()
                + b.received_packets.stored_bytes()
                + b.dropped_packets.stored_bytes()
                + b.loss_events.stored_bytes()
                + b.sent_bytes.stored_bytes()
                + b.received_bytes.stored_bytes()
                + b.dropped_bytes.stored_bytes()
                + f.record.state.blob.len()
        })
        .sum();
    let links: usize = results
        .links
        .iter()
        .map(|l| {
            let b = &l.record.bins;
            8 * (b.mean_queue_packets.len() + b.mean_queue_bytes.len() + b.utilization.len())
                + 8 * b.departed_bytes.len()
                + 4 * (b.max_queue_packets.len()
                    + b.arrivals.len()
                    + b.drops.len()
                    + b.departures.len())
        })
        .sum();
    flows + links
}

fn bare_loop() -> Simulation {
    let mut t = Topology::new();
    let a = t.add_node("a").unwrap();
    let b = t.add_node("b").unwrap();
    t.add_simplex(
        a,
        b,
        1_000_000_000,
        Duration::from_millis(10),
        &QueueConfig::default(),
    )
    .unwrap();
    t.add_simplex(
        b,
        a,
        1_000_000_000,
        Duration::from_millis(10),
        &QueueConfig::default(),
    )
    .unwrap();
    let flows = vec![cbr_flow("cbr".into(), "a", "b", &t, 400_000_000)];
    let config = SimConfig {
        duration: Duration::from_secs(30),
        bin: Duration::from_millis(10),
        packet_trace: None,
        binned_links: None,
    };
    Simulation::new(t, flows, vec![], config, 1).unwrap()
}

/// `flows` randomized CBR flows offering 16.5 Mb/s in all to a 15 Mb/s RED dumbbell (ns-2.35
/// defaults, 100-packet buffer), access delays uniform in 1-3 ms, for `seconds`.
fn red_dumbbell(flows: usize, seconds: u64) -> Simulation {
    let red = QueueConfig::Red(RedConfig::ns2_35().with_ns2_limit(100));
    let bottleneck = LinkParams {
        rate_bps: 15_000_000,
        delay: Duration::from_millis(50),
        queue: red,
    };
    let t = DumbbellConfig {
        left_hosts: flows,
        right_hosts: flows,
        forward: bottleneck.clone(),
        reverse: bottleneck,
        access_rate: RateDist::Fixed(100_000_000),
        access_delay: AccessDelay::PerHost(DurationDist::Uniform {
            low: Duration::from_millis(1),
            high: Duration::from_millis(3),
        }),
        access_queue: QueueConfig::default(),
    }
    .build(1)
    .unwrap();
    let rate = 16_500_000 / flows as u64;
    let flows = (0..flows)
        .map(|i| {
            cbr_flow(
                format!("cbr{i}"),
                &format!("left{i}"),
                &format!("right{i}"),
                &t,
                rate,
            )
        })
        .collect();
    let bottlenecks = ["bottleneck", "bottleneck_reverse"].map(|n| t.link_named(n).unwrap());
    let config = SimConfig {
        duration: Duration::from_secs(seconds),
        bin: Duration::from_millis(10),
        packet_trace: None,
        binned_links: Some(bottlenecks.to_vec()),
    };
    Simulation::new(t, flows, vec![], config, 1).unwrap()
}

/// A scenario file of the repository, loaded as a simulation with `seed`.
fn scenario_file(relative: &str, seed: u64) -> Simulation {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(relative);
    let text = std::fs::read_to_string(&path).unwrap();
    let scenario = netsim::scenario::Scenario::from_toml_str(&text).unwrap();
    scenario.simulation(seed).unwrap()
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` runs this as a smoke test with
    // shorter runs.
    let quick = !std::env::args().any(|a| a == "--bench");
    if quick {
        measure("bare event loop (smoke)", bare_loop(), 30);
        return;
    }
    for seed in 1..=3 {
        measure(
            &format!("floyd2000 fig09, 16 SACK + 16 TFRC, seed {seed}"),
            scenario_file("scenarios/papers/floyd2000/fig09.toml", seed),
            150,
        );
    }
    measure(
        "bare event loop, 1 CBR flow at 400 Mb/s on 1 Gb/s",
        bare_loop(),
        30,
    );
    measure(
        "32 CBR flows, 15 Mb/s RED dumbbell",
        red_dumbbell(32, 150),
        150,
    );
    measure(
        "1024 CBR flows, 15 Mb/s RED dumbbell",
        red_dumbbell(1024, 150),
        150,
    );
}
