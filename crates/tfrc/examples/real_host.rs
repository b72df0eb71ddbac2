//! One TFRC flow under real-host timing (`tfrc::real_host`) against the same flow on an ideal
//! host, on the testbed's path (10 Mb/s, 25 ms each way, DropTail 50): start-up queue drops, the
//! largest 50 ms send-rate bin, and a 2 Mb/s application's X, over several seeds.
//! `cargo run --release -p tfrc --example real_host -- [SEEDS] [STALLS_PER_S] [keep-largest]`

use std::time::Duration;

use tfrc::real_host::{
    bytes_between, Application, HostTiming, PathConfig, RealHostConfig, RealHostHarness,
};
use tfrc::{TfrcConfig, Time};

const LINK: f64 = 1.25e6;

fn config(timing: HostTiming, application: Application, loss: f64, seed: u64) -> RealHostConfig {
    // The transport's data-limited rule, or RFC 5348's with `keep-largest` as third argument.
    let rule = if std::env::args().nth(3).as_deref() == Some("keep-largest") {
        tfrc::DataLimitedRule::KeepLargest
    } else {
        tfrc::DataLimitedRule::RecentOnly
    };
    RealHostConfig {
        sender: TfrcConfig {
            data_limited: rule,
            ..TfrcConfig::rfc5348()
        },
        receiver: TfrcConfig::rfc5348(),
        path: PathConfig {
            bottleneck_bytes_per_s: LINK,
            buffer_packets: 50,
            one_way_delay: Duration::from_millis(25),
            loss,
        },
        timing,
        application,
        spoofed: Vec::new(),
        seed,
    }
}

/// The largest send rate over 50 ms bins, as a multiple of the link rate.
fn peak_bin(harness: &RealHostHarness, end_s: f64) -> f64 {
    let bin = 0.05;
    (0..(end_s / bin) as u64)
        .map(|i| {
            let from = Time::from_secs_f64(i as f64 * bin);
            let to = Time::from_secs_f64((i + 1) as f64 * bin);
            bytes_between(harness.sent(), from, to) as f64 / bin / LINK
        })
        .fold(0.0, f64::max)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let seeds: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(5);
    let stall: f64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(0.5);
    println!("timing  seed  greedy: drops 0-10 s  peak 50 ms bin (x link) at 0/10% loss  2 Mb/s app: median X / app rate, max");
    for (name, timing) in [
        ("ideal", HostTiming::ideal()),
        ("real", HostTiming::real(stall)),
        (
            "kernel",
            HostTiming {
                kernel_arrival_stamps: true,
                ..HostTiming::real(stall)
            },
        ),
    ] {
        for seed in 1..=seeds {
            let mut greedy =
                RealHostHarness::new(config(timing.clone(), Application::Greedy, 0.0, seed))
                    .expect("valid configuration");
            greedy.run_until(Time::from_secs_f64(10.0));
            let mut lossy =
                RealHostHarness::new(config(timing.clone(), Application::Greedy, 0.1, seed))
                    .expect("valid configuration");
            lossy.run_until(Time::from_secs_f64(10.0));
            let app_rate = 250_000.0;
            let app = Application::ConstantRate {
                bytes_per_s: app_rate,
            };
            let mut limited = RealHostHarness::new(config(timing.clone(), app, 0.0, seed))
                .expect("valid configuration");
            limited.run_until(Time::from_secs_f64(20.0));
            let mut xs: Vec<f64> = limited
                .records()
                .iter()
                .map(|r| r.x_bytes_per_s / app_rate)
                .collect();
            xs.sort_by(f64::total_cmp);
            let median = xs.get(xs.len() / 2).copied().unwrap_or(0.0);
            let max = xs.last().copied().unwrap_or(0.0);
            println!(
                "{name:6} {seed:4}  {:6}  {:6.2} {:6.2}  {median:6.2} {max:6.2}",
                greedy.queue_drops(),
                peak_bin(&greedy, 10.0),
                peak_bin(&lossy, 10.0),
            );
        }
    }
}
