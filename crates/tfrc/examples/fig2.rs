//! Prints the floyd2000 Fig. 2 run (periodic loss 1% -> 10% at 6 s -> 0.5% at 9 s, R = 100 ms)
//! as one line per feedback: `cargo run -p tfrc --example fig2 [rfc5348|floyd2000]`.

use tfrc::harness::{ChannelConfig, Harness};
use tfrc::{TfrcConfig, Time};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let preset = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "floyd2000".into());
    let mut harness = Harness::new(TfrcConfig::preset(&preset)?, ChannelConfig::fig2())?;
    harness.run_until(Time::from_secs_f64(15.0));
    println!("time_s\tp\tI_last\tI_mean\tX_pkts_per_rtt\tR_ms");
    for r in harness.records() {
        println!(
            "{:.3}\t{:.5}\t{:.1}\t{:.1}\t{:.3}\t{:.2}",
            r.time.as_secs_f64(),
            r.p,
            r.last_interval_packets,
            r.mean_interval_packets,
            r.x_bytes_per_s / 1000.0 * r.rtt_s,
            r.rtt_s * 1e3
        );
    }
    Ok(())
}
