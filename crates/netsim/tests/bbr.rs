//! BBR through the simulator: one flow alone finds the bottleneck's rate, drains STARTUP's
//! queue and keeps the queue small while it fills the link, probes the RTT every 10 s (the
//! min-RTT filter's window), cycles its pacing gain, and under a shallow buffer keeps its rate
//! regardless of losses (BBR v1 does not back off on loss; Cardwell et al. 2016).

mod common;

use common::{last, mean, one_flow, simulate, state};

const BIN_S: f64 = 0.05;

/// One BBR flow (the `linux` preset) alone on a 10 Mb/s bottleneck with 20 ms one-way delay
/// (R about 50 ms) and a DropTail buffer of `limit` packets, for `seconds`.
fn alone(limit: u32, seconds: u32) -> netsim::results::Results {
    let flow = "kind = \"tcp\"\nvariant = \"bbr\"\npreset = \"linux\"";
    let text = one_flow(
        "10Mbps",
        "20ms",
        limit,
        &format!("{seconds}s"),
        "50ms",
        flow,
    );
    simulate(&text, 1)
}

/// Goodput (received payload and headers) in bits per second from `from_s` to the end.
fn throughput_bps(flow: &netsim::results::FlowResult, from_s: f64) -> f64 {
    let received = flow.record.bins.received_bytes.to_vec();
    let from = (from_s / BIN_S) as usize;
    let bytes: u64 = received[from..].iter().sum();
    bytes as f64 * 8.0 / ((received.len() - from) as f64 * BIN_S)
}

/// The times (s) at which the flow entered PROBE_RTT (mode 3).
fn probe_rtt_entries(flow: &netsim::results::FlowResult) -> Vec<f64> {
    let mode = state(flow, "bbr_mode");
    mode.windows(2)
        .enumerate()
        .filter(|(_, w)| w[1] == 3.0 && w[0] != 3.0)
        .map(|(i, _)| (i + 1) as f64 * BIN_S)
        .collect()
}

#[test]
fn one_flow_fills_the_link_with_a_small_queue_and_probes_the_rtt_every_ten_seconds() {
    let results = alone(100, 35);
    let f = results.flow("f").unwrap();
    // The bandwidth estimate is the bottleneck's rate: 10 Mb/s of 1500-byte packets.
    let bw = state(f, "bbr_bw");
    let steady = &bw[(5.0 / BIN_S) as usize..];
    for &b in steady {
        assert!((b / (1e7 / 12_000.0) - 1.0).abs() < 0.02, "{b}");
    }
    // The link stays full but for PROBE_RTT's dips (about 200 ms at 4 packets every 10 s).
    let bps = throughput_bps(f, 5.0);
    assert!(bps > 0.95 * 1e7 && bps <= 1e7, "{bps}");
    let entries = probe_rtt_entries(f);
    assert_eq!(entries.len(), 3, "{entries:?}");
    for pair in entries.windows(2) {
        let gap = pair[1] - pair[0];
        assert!((10.0..11.0).contains(&gap), "{entries:?}");
    }
    // STARTUP overflows the buffer once; after DRAIN the queue stays well below one BDP
    // (42 packets) and nothing is dropped.
    let bottleneck = results.link("bottleneck").unwrap();
    let drops = &bottleneck.record.bins.drops[(5.0 / BIN_S) as usize..];
    assert_eq!(drops.iter().sum::<u32>(), 0);
    let queue = &bottleneck.record.bins.mean_queue_packets[(5.0 / BIN_S) as usize..];
    assert!(mean(queue) < 20.0, "mean queue {}", mean(queue));
    // The gain cycle: 5/4 and 3/4 phases between the cruising ones.
    let gains = state(f, "pacing_gain");
    assert!(gains.contains(&1.25) && gains.contains(&0.75) && gains.contains(&1.0));
    assert_eq!(last(f, "timeouts"), 0.0);
}

#[test]
fn a_shallow_buffer_costs_bbr_losses_but_not_its_rate() {
    // A buffer of 5 packets, an eighth of the BDP: BBR v1 keeps pacing at its bandwidth
    // estimate through the losses its probing causes (unlike a loss-based TCP, whose window
    // falls to 0.7 of itself each time: 9.8 against 9.3 Mb/s here).
    let results = alone(5, 30);
    let f = results.flow("f").unwrap();
    assert!(last(f, "retransmits") > 50.0);
    let bps = throughput_bps(f, 5.0);
    assert!(bps > 0.9 * 1e7, "{bps}");
    let cubic = simulate(
        &one_flow(
            "10Mbps",
            "20ms",
            5,
            "30s",
            "50ms",
            "kind = \"tcp\"\nvariant = \"cubic\"\npreset = \"linux\"",
        ),
        1,
    );
    let cubic_bps = throughput_bps(cubic.flow("f").unwrap(), 5.0);
    assert!(bps > 1.03 * cubic_bps, "bbr {bps}, cubic {cubic_bps}");
}

#[test]
fn bbr_needs_rfc6675_recovery() {
    let text = one_flow(
        "10Mbps",
        "20ms",
        100,
        "1s",
        "50ms",
        "kind = \"tcp\"\nvariant = \"bbr\"\npreset = \"ns2_35\"",
    );
    let error = netsim::scenario::Scenario::from_toml_str(&text).unwrap_err();
    assert!(error.to_string().contains("sack_recovery"), "{error}");
}
