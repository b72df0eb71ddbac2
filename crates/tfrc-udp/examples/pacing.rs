//! Pacing benchmark: how close a greedy [`UdpSender`] keeps to its intended inter-packet gap at
//! 1, 10 and 100 Mb/s over loopback, and what it costs in sender CPU.
//!
//! The sender runs at a fixed rate (no receiver feedback: a sink drains the packets, and the
//! nofeedback timer is set beyond the run), so the intended gap is s/X throughout. For each rate
//! and spin setting it prints the median and 99th percentile of |actual - intended| gap, the
//! achieved rate, and the loop thread's CPU time per Mb/s sent.
//!
//! ```text
//! cargo run --release -p tfrc-udp --example pacing [-- SECONDS [SPIN_US ...]]
//! ```

use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use tfrc::config::RateBeforeFeedback;
use tfrc::TfrcConfig;
use tfrc_udp::{SenderOptions, Source, UdpSender};

const PACKET: u32 = 1000;

fn main() {
    let mut args = std::env::args().skip(1);
    let seconds: f64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(2.0);
    let spins: Vec<u64> = {
        let given: Vec<u64> = args.filter_map(|a| a.parse().ok()).collect();
        if given.is_empty() {
            vec![0, 20]
        } else {
            given
        }
    };
    println!(
        "{:>8} {:>7} {:>9} {:>10} {:>10} {:>9} {:>11}",
        "Mb/s", "spin_us", "packets", "median_us", "p99_us", "got_Mb/s", "cpu_%/Mb/s"
    );
    for mbps in [1.0, 10.0, 100.0] {
        for &spin in &spins {
            run(mbps, Duration::from_micros(spin), seconds);
        }
    }
}

fn run(mbps: f64, spin: Duration, seconds: f64) {
    let sink = UdpSocket::bind("127.0.0.1:0").unwrap();
    sink.set_read_timeout(Some(Duration::from_millis(50)))
        .unwrap();
    let addr = sink.local_addr().unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let drain = {
        let done = Arc::clone(&done);
        thread::spawn(move || {
            let mut buf = [0u8; 2048];
            while !done.load(Ordering::Relaxed) {
                let _ = sink.recv_from(&mut buf);
            }
        })
    };

    let rate = mbps * 1e6 / 8.0;
    let mut config = TfrcConfig::rfc5348();
    config.segment_size_bytes = PACKET;
    config.rate_before_feedback = RateBeforeFeedback::BytesPerSecond(rate);
    config.initial_nofeedback = Duration::from_secs(3600);
    let mut options = SenderOptions::new(config);
    options.source = Source::Greedy;
    options.spin = spin;
    options.send_log = (rate / f64::from(PACKET) * seconds * 1.2) as usize + 16;
    let mut tx = UdpSender::bind("127.0.0.1:0", addr, options).unwrap();
    tx.run_for(Duration::from_secs_f64(seconds)).unwrap();
    done.store(true, Ordering::Relaxed);
    drain.join().unwrap();

    let intended_us = f64::from(PACKET) / rate * 1e6;
    let times = tx.send_times();
    let mut errors: Vec<f64> = times
        .windows(2)
        .map(|w| {
            let gap_us = (w[1].as_nanos() - w[0].as_nanos()) as f64 * 1e-3;
            (gap_us - intended_us).abs()
        })
        .collect();
    errors.sort_by(f64::total_cmp);
    let pct = |q: f64| {
        if errors.is_empty() {
            f64::NAN
        } else {
            errors[((errors.len() - 1) as f64 * q).round() as usize]
        }
    };
    let report = tx.report();
    let got_mbps = report.bytes_sent as f64 * 8.0 / seconds / 1e6;
    let cpu_pct_per_mbps = report.cpu_s / seconds * 100.0 / got_mbps;
    println!(
        "{:>8} {:>7} {:>9} {:>10.1} {:>10.1} {:>9.2} {:>11.3}",
        mbps,
        spin.as_micros(),
        report.packets_sent,
        pct(0.5),
        pct(0.99),
        got_mbps,
        cpu_pct_per_mbps
    );
}
