//! Times a flood of feedback within two RTTs (issue 13, item 8): one data packet goes out, the
//! first report sets R = 100 ms, then `N` reports (default 160,000) arrive within the next
//! 200 ms, each echoing that packet with a t_delay that keeps the sample at 100 ms and an X_recv
//! that falls by 1 B/s per report (the worst case for a set that keeps the largest rate).
//! `cargo run --release -p tfrc --example feedback_flood [N]`; prints N, the wall time and X.

use std::time::{Duration, Instant};

use tfrc::{FeedbackHeader, Sender, TfrcConfig, Time};

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|arg| arg.parse().ok())
        .unwrap_or(160_000);
    let rtt = Duration::from_millis(100);
    let mut sender = Sender::new(TfrcConfig::default(), Time::ZERO).expect("default config");
    let sent = sender
        .poll_transmit(Time::ZERO, true)
        .expect("first packet");
    let report = |now: Time, x_recv: f64| FeedbackHeader {
        timestamp_echo: sent.timestamp,
        t_delay: now.saturating_since(sent.timestamp).saturating_sub(rtt),
        x_recv_bytes_per_s: x_recv,
        p: 0.01,
    };
    let first = Time::ZERO + rtt;
    let _ = sender.handle_feedback(first, &report(first, 1e9));
    let start = Instant::now();
    for i in 0..n {
        // n reports spread evenly over the next 2 RTTs (at least 1 ns apart while n < 2e8).
        let now = first + Duration::from_nanos(1 + i * 200_000_000 / n.max(1));
        let _ = sender.handle_feedback(now, &report(now, 1e9 - i as f64));
    }
    let elapsed = start.elapsed();
    println!(
        "reports {n}\twall_s {:.3}\tx_bytes_per_s {:.1}",
        elapsed.as_secs_f64(),
        sender.stats().x_bytes_per_s
    );
}
