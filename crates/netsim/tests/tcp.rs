//! The TCP family and GAIMD through the simulator (issue 4, tests 1, 3, 4 and 6): scenario
//! files run through `netsim::scenario::run`, checked against what the protocols must do.

mod common;

use common::{last, one_flow, simulate, state};
use netsim::results::FlowResult;
use netsim::scenario::Scenario;

/// Received data rate in packets per second over bins `from..to`.
fn received_pps(flow: &FlowResult, bin_s: f64, from: usize, to: usize) -> f64 {
    let packets: u32 = flow.record.bins.received_packets.to_vec()[from..to]
        .iter()
        .sum();
    f64::from(packets) / ((to - from) as f64 * bin_s)
}

// ---- Test 1: slow start doubles cwnd per RTT; steady throughput is min(bottleneck, W/RTT) ----

#[test]
fn slow_start_doubles_the_window_every_rtt() {
    for variant in ["tahoe", "reno", "newreno", "sack"] {
        let flow = format!(
            "kind = \"tcp\"\nvariant = \"{variant}\"\npreset = \"ns2_2000\"\nwindow = 1000"
        );
        let results = simulate(&one_flow("10Mbps", "50ms", 1000, "1s", "5ms", &flow), 1);
        let f = results.flow("f").unwrap();
        let rtt = f.base_rtt.as_secs_f64();
        let cwnd = state(f, "cwnd");
        for k in 0..5 {
            // Half-way through round k the window is 2^k (initial window 1, an ACK per packet).
            let bin = ((k as f64 + 0.5) * rtt / 0.005) as usize;
            assert_eq!(cwnd[bin], f64::from(1 << k), "{variant}: round {k}");
        }
        assert_eq!(last(f, "timeouts"), 0.0);
        assert_eq!(last(f, "retransmits"), 0.0);
    }
}

#[test]
fn steady_throughput_is_the_window_over_the_rtt_or_the_bottleneck() {
    // Window-limited: 20 packets per RTT (~101 ms) is ~1.6 Mb/s through a 10 Mb/s bottleneck.
    let flow = "kind = \"tcp\"\nvariant = \"reno\"\npreset = \"ns2_2000\"";
    let results = simulate(&one_flow("10Mbps", "50ms", 100, "20s", "100ms", flow), 1);
    let f = results.flow("f").unwrap();
    let expected = 20.0 / f.base_rtt.as_secs_f64();
    let measured = received_pps(f, 0.1, 100, 200);
    assert!(
        (measured / expected - 1.0).abs() < 0.01,
        "window-limited: {measured} pkt/s, expected {expected}"
    );
    // Bottleneck-limited: a 100-packet window over a 2 Mb/s path (250 pkt/s, BDP ~25 packets)
    // with room for the rest in the queue: the link runs full, nothing is lost.
    let flow = "kind = \"tcp\"\nvariant = \"sack\"\npreset = \"ns2_35\"\nwindow = 100\nuse_headers = false";
    let results = simulate(&one_flow("2Mbps", "50ms", 200, "20s", "100ms", flow), 1);
    let f = results.flow("f").unwrap();
    let measured = received_pps(f, 0.1, 100, 200);
    assert!(
        (measured / 250.0 - 1.0).abs() < 0.01,
        "bottleneck-limited: {measured} pkt/s"
    );
    assert_eq!(f.record.totals.packets_dropped, 0);
    assert_eq!(last(f, "timeouts"), 0.0);
}

// ---- Test 3: Fall & Floyd (1996), one to four drops from one window ----

/// What one Fall & Floyd run shows: timeouts, recovery entries, the smallest cwnd after the
/// drops, and how long after the first drop the whole window (packets 100-119) was acked.
#[derive(Debug)]
struct Recovery {
    timeouts: f64,
    fast_retransmits: f64,
    min_cwnd: f64,
    recovery_s: f64,
    rtt_s: f64,
}

/// One flow with a 20-packet window on a 10 Mb/s, 50 ms path (never congested) loses the
/// arrivals 100, 102, .. (the first `drops`) at the bottleneck: packets of one window.
fn fall_floyd(variant: &str, drops: usize) -> Recovery {
    fall_floyd_with(variant, drops, "")
}

/// [`fall_floyd`] with extra flow keys.
fn fall_floyd_with(variant: &str, drops: usize, extra: &str) -> Recovery {
    fall_floyd_flow(
        &format!("kind = \"tcp\"\nvariant = \"{variant}\"\npreset = \"ns2_2000\"\n{extra}"),
        drops,
    )
}

/// [`fall_floyd`] for a flow given by its protocol keys.
fn fall_floyd_flow(flow: &str, drops: usize) -> Recovery {
    let indices: Vec<String> = (0..drops).map(|i| (100 + 2 * i).to_string()).collect();
    let text = format!(
        r#"
duration = "6s"
[monitor]
bin = "5ms"
[topology]
kind = "dumbbell"
hosts = 1
bottleneck = {{ rate = "10Mbps", delay = "50ms" }}
[[flows]]
name = "f"
{flow}
[[losses]]
link = "bottleneck"
flow = "f"
kind = "list"
indices = [{}]
"#,
        indices.join(", ")
    );
    let results = simulate(&text, 1);
    let f = results.flow("f").unwrap();
    let sent = state(f, "packets_sent");
    let acked = state(f, "acked");
    let first_drop = sent.iter().position(|&s| s > 100.0).unwrap();
    let done = acked.iter().position(|&a| a >= 119.0).unwrap();
    Recovery {
        timeouts: last(f, "timeouts"),
        fast_retransmits: last(f, "fast_retransmits"),
        min_cwnd: state(f, "cwnd")[first_drop..]
            .iter()
            .cloned()
            .fold(f64::MAX, f64::min),
        recovery_s: (done - first_drop) as f64 * 0.005,
        rtt_s: f.base_rtt.as_secs_f64(),
    }
}

#[test]
fn fall_floyd_tahoe_slow_starts_after_each_loss_event() {
    for drops in 1..=4 {
        let r = fall_floyd("tahoe", drops);
        assert_eq!(r.fast_retransmits, 1.0, "{drops} drops: {r:?}");
        assert_eq!(r.timeouts, 0.0, "{drops} drops: {r:?}");
        assert_eq!(r.min_cwnd, 1.0, "{drops} drops: {r:?}");
    }
}

#[test]
fn fall_floyd_reno_recovers_one_drop_but_times_out_with_three_or_more() {
    let one = fall_floyd("reno", 1);
    assert_eq!((one.fast_retransmits, one.timeouts), (1.0, 0.0), "{one:?}");
    assert!(one.min_cwnd >= 10.0, "halved, not slow start: {one:?}");
    assert!(one.recovery_s < 2.5 * one.rtt_s, "{one:?}");
    for drops in 3..=4 {
        let r = fall_floyd("reno", drops);
        assert!(r.timeouts >= 1.0, "{drops} drops: {r:?}");
    }
}

/// GAIMD's `recovery`: three drops from one window time out on Reno, as Reno does, and are
/// repaired within the window on SACK.
#[test]
fn gaimd_recovers_as_its_recovery_machinery_does() {
    let gaimd = |recovery: &str| {
        fall_floyd_flow(&format!("kind = \"gaimd\"\nrecovery = \"{recovery}\""), 3)
    };
    let reno = gaimd("reno");
    assert!(reno.timeouts >= 1.0, "{reno:?}");
    let sack = gaimd("sack");
    assert_eq!(
        (sack.fast_retransmits, sack.timeouts),
        (1.0, 0.0),
        "{sack:?}"
    );
    // About 3 RTTs for the window to be acked, like TCP SACK's 0.2-0.3 s, against Reno's 0.7 s.
    assert!(sack.recovery_s < 3.0 * sack.rtt_s, "{sack:?}");
    assert!(sack.recovery_s < reno.recovery_s, "{sack:?} {reno:?}");
}

#[test]
fn fall_floyd_newreno_recovers_one_drop_per_rtt_without_a_timeout() {
    let runs: Vec<Recovery> = (1..=4).map(|d| fall_floyd("newreno", d)).collect();
    for (i, r) in runs.iter().enumerate() {
        assert_eq!(
            (r.fast_retransmits, r.timeouts),
            (1.0, 0.0),
            "{} drops: {r:?}",
            i + 1
        );
        assert!(r.min_cwnd >= 5.0, "{} drops: {r:?}", i + 1);
    }
    // Each further drop costs about one more RTT.
    let rtt = runs[0].rtt_s;
    for pair in runs.windows(2) {
        let extra = pair[1].recovery_s - pair[0].recovery_s;
        assert!(
            (0.7 * rtt..1.3 * rtt).contains(&extra),
            "{extra} s: {runs:?}"
        );
    }
}

#[test]
fn fall_floyd_sack_recovers_all_drops_in_about_one_rtt() {
    for recovery in ["sack1", "rfc6675"] {
        let runs: Vec<Recovery> = (1..=4)
            .map(|d| fall_floyd_with("sack", d, &format!("sack_recovery = \"{recovery}\"")))
            .collect();
        for (i, r) in runs.iter().enumerate() {
            assert_eq!(
                (r.fast_retransmits, r.timeouts),
                (1.0, 0.0),
                "{recovery}, {} drops: {r:?}",
                i + 1
            );
            // Sack1's pipe must drain to the halved window before the second hole is resent
            // (about half an RTT here); all holes are then resent within that RTT.
            assert!(
                r.recovery_s <= runs[0].recovery_s + r.rtt_s,
                "{recovery}: {runs:?}"
            );
        }
        // NewReno needs three more RTTs for four drops; SACK does far better.
        let newreno = fall_floyd("newreno", 4);
        assert!(
            runs[3].recovery_s < newreno.recovery_s - 1.5 * newreno.rtt_s,
            "{recovery}: {runs:?} vs NewReno {newreno:?}"
        );
    }
}

// ---- Test 4: Vegas alone keeps between alpha and beta packets queued, without loss ----

#[test]
fn vegas_alone_keeps_alpha_to_beta_packets_queued_without_loss() {
    let flow = "kind = \"tcp\"\nvariant = \"vegas\"\npreset = \"ns2_2000\"\nwindow = 100";
    let results = simulate(&one_flow("2.5Mbps", "30ms", 50, "60s", "1s", flow), 1);
    let f = results.flow("f").unwrap();
    let link = results.link("bottleneck").unwrap();
    // Steady state: the second half of the run.
    let queue = &link.record.bins.mean_queue_packets[30..60];
    let mean = queue.iter().sum::<f64>() / queue.len() as f64;
    assert!((1.0..=3.0).contains(&mean), "mean queue {mean} packets");
    let drops: u32 = link.record.bins.drops[30..60].iter().sum();
    assert_eq!(drops, 0);
    assert_eq!(f.record.totals.packets_dropped, 0);
    let diff = state(f, "vegas_diff")[30..60].to_vec();
    assert!(diff.iter().all(|d| (1.0..=3.0).contains(d)), "{diff:?}");
    // And the link is used: Vegas does not starve itself.
    let utilization = &link.record.bins.utilization[30..60];
    assert!(utilization.iter().all(|&u| u > 0.95), "{utilization:?}");
}

// ---- Test 6: two Reno flows with equal RTTs share a DropTail bottleneck fairly ----

#[test]
fn two_reno_flows_share_a_droptail_bottleneck_fairly() {
    let text = r#"
duration = "100s"
[monitor]
bin = "1s"
[topology]
kind = "dumbbell"
hosts = 2
bottleneck = { rate = "5Mbps", delay = "20ms", queue = { kind = "droptail", limit = 30 } }
access = { rate = "100Mbps", delay = "5ms" }
[[flows]]
kind = "tcp"
variant = "reno"
preset = "ns2_35"
window = 1000
count = 2
start = { uniform = ["0s", "1s"] }
"#;
    let results = simulate(text, 1);
    let rates: Vec<f64> = results
        .flows
        .iter()
        .map(|f| f.record.totals.bytes_received as f64)
        .collect();
    let sum: f64 = rates.iter().sum();
    let squares: f64 = rates.iter().map(|r| r * r).sum();
    let jain = sum * sum / (rates.len() as f64 * squares);
    assert!(jain >= 0.9, "Jain's index {jain}: {rates:?}");
    // Both saw losses and the link stayed busy.
    for f in &results.flows {
        assert!(f.record.totals.packets_dropped > 0, "{}", f.name);
    }
    let bottleneck = results.link("bottleneck").unwrap();
    assert!(bottleneck.record.totals.utilization > 0.9);
}

// ---- Scenario keys ----

#[test]
fn tcp_keys_are_checked_with_path_naming_errors() {
    let base = one_flow("1Mbps", "10ms", 50, "1s", "100ms", "kind = \"tcp\"");
    let error = |extra: &str| -> String {
        let text = format!("{base}{extra}\n");
        match Scenario::from_toml_str(&text) {
            Ok(_) => panic!("accepted: {extra}"),
            Err(e) => e.to_string(),
        }
    };
    let e = error("variant = \"sak\"");
    assert!(
        e.contains("flows[0].variant") && e.contains("did you mean \"sack\""),
        "{e}"
    );
    let e = error("preset = \"ns2_2001\"");
    assert!(
        e.contains("flows[0].preset") && e.contains("did you mean"),
        "{e}"
    );
    let e = error("windw = 10");
    assert!(e.contains("flows[0].windw") && e.contains("window"), "{e}");
    let e = error("decrease = 1.5");
    assert!(
        e.contains("flows[0].decrease") && e.contains("(0, 1)"),
        "{e}"
    );
    let e = error("max_sack_blocks = 4");
    assert!(e.contains("flows[0].max_sack_blocks"), "{e}");
    let gaimd = base.replace("kind = \"tcp\"", "kind = \"gaimd\"");
    let e = match Scenario::from_toml_str(&format!("{gaimd}beta = 1.0\n")) {
        Ok(_) => panic!("accepted beta = 1"),
        Err(e) => e.to_string(),
    };
    assert!(e.contains("flows[0].beta"), "{e}");
    // GAIMD takes no SACK keys, and runs only on a recovery it knows.
    assert!(Scenario::from_toml_str(&format!("{gaimd}sack_recovery = \"sack1\"\n")).is_err());
    let e = match Scenario::from_toml_str(&format!("{gaimd}recovery = \"vegas\"\n")) {
        Ok(_) => panic!("accepted recovery = vegas"),
        Err(e) => e.to_string(),
    };
    assert!(
        e.contains("flows[0].recovery") && e.contains("\"sack\""),
        "{e}"
    );

    // Kinds and variants reach the results.
    let results = simulate(&format!("{gaimd}rule = \"paper\"\n"), 1);
    let f = results.flow("f").unwrap();
    assert_eq!((f.kind.as_str(), f.variant.as_str()), ("gaimd", "paper"));
    assert!(f.record.totals.packets_received > 0);
}

#[test]
fn runs_are_deterministic_and_seeds_matter_with_overhead() {
    let flow = "kind = \"tcp\"\nvariant = \"reno\"\npreset = \"ns2_2000\"\nwindow = 100\noverhead = \"2ms\"";
    let text = one_flow("2Mbps", "20ms", 20, "10s", "100ms", flow);
    let a = simulate(&text, 3);
    assert_eq!(a, simulate(&text, 3));
    assert_ne!(a.flows[0].record, simulate(&text, 4).flows[0].record);
}

// ---- The linux preset (docs/tcp.md, "The linux preset") ----

#[test]
fn the_linux_preset_grows_by_packets_acked_and_sends_1500_byte_packets() {
    // Slow start from an initial window of 10 with delayed ACKs: Linux grows by the packets each
    // ACK covers, so the window still doubles per RTT (the rfc preset's one-per-ACK growth
    // gives about 1.5x per RTT).
    let window_after = |preset: &str| {
        let flow = format!("kind = \"tcp\"\nvariant = \"sack\"\npreset = \"{preset}\"");
        let results = simulate(&one_flow("1Gbps", "50ms", 10_000, "0.8s", "10ms", &flow), 1);
        let f = results.flow("f").unwrap();
        let totals = &f.record.totals;
        (
            state(f, "cwnd"),
            totals.bytes_sent as f64 / totals.packets_sent as f64,
        )
    };
    let (linux, linux_bytes) = window_after("linux");
    let (rfc, _) = window_after("rfc");
    // The SYN exchange takes one RTT (about 100 ms); four RTTs of slow start later:
    let bin = 55;
    assert!(linux[bin] >= 0.8 * 10.0 * 16.0, "linux {}", linux[bin]);
    assert!(
        rfc[bin] < 0.6 * linux[bin],
        "rfc {} vs linux {}",
        rfc[bin],
        linux[bin]
    );
    // 1448 bytes of payload and 52 of TCP/IP header (the SYN is 52 bytes and pulls the mean
    // down by a few bytes).
    assert!((linux_bytes - 1500.0).abs() < 5.0, "{linux_bytes}");
}

#[test]
fn quick_acks_answer_the_first_packets_at_once() {
    // With delayed ACKs every second packet is acked; in quick-ACK mode the first 16 each are
    // (the receive window's growth, which acks more at once, is off here).
    let acks = |quick: u32| {
        let flow = format!(
            "kind = \"tcp\"\nvariant = \"sack\"\npreset = \"linux\"\nquick_acks = {quick}\nrcv_window_growth = false\nmax_packets = 40\nsyn = false"
        );
        let results = simulate(&one_flow("1Gbps", "50ms", 10_000, "3s", "10ms", &flow), 1);
        let f = results.flow("f").unwrap();
        f.record.totals.reverse_packets_sent
    };
    let (none, sixteen) = (acks(0), acks(16));
    // 40 packets: about 20 delayed ACKs (one more when the timer flushes an odd packet); with
    // quick ACKs 16 for the first 16 and about 12 for the other 24.
    assert!((20..=22).contains(&none), "{none} ACKs without quick ACKs");
    assert!(
        (27..=29).contains(&sixteen),
        "{sixteen} ACKs with quick ACKs"
    );
}
