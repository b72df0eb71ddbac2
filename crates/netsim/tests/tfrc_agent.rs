//! The TFRC agent through the simulator (issue 4, TFRC part; docs/tfrc.md "In the simulator"):
//! floyd2000 Figs. 19 and 20 with drops forced by loss models, a greedy flow filling an
//! uncongested path, DropTail-congested flows against the equation, the application-limited
//! source and its data-limited rules, ECN, determinism, and CoV_time at 1% Bernoulli loss
//! (yang2001). Every run is a scenario TOML string through `netsim::scenario::run`.
//!
//! The measurements read the per-bin state trace (`x_bps`, `p`, `rtt_s`, ... sampled at the
//! end of each bin) and the flow monitor's binned counts. Measured values are quoted next to
//! each tolerance; run with `--nocapture` to see them printed.

mod common;

use common::{mean, simulate as run_toml, state as column};
use netsim::results::FlowResult;
use netsim::scenario::Scenario;
use tfrc::equation::throughput_bytes_per_s;
use tfrc::TfrcConfig;

/// [`common::two_nodes`] with a TFRC flow of `preset`.
fn two_nodes(preset: &str, duration_s: f64, bin: &str, extra: &str) -> String {
    let flow = format!("kind = \"tfrc\"\npreset = \"{preset}\"");
    common::two_nodes(&format!("{duration_s}s"), bin, &flow, extra)
}

/// `n` TFRC flows with random starts in the first second on a dumbbell whose bottleneck (20 ms
/// each way) has a DropTail queue of `limit` packets; 80 ms propagation round trip per pair.
fn dumbbell(flows: usize, preset: &str, rate: &str, limit: u32, duration_s: f64) -> String {
    format!(
        r#"
duration = "{duration_s}s"
[monitor]
bin = "100ms"
[topology]
kind = "dumbbell"
hosts = {flows}
bottleneck = {{ rate = "{rate}", delay = "20ms", queue = {{ kind = "droptail", limit = {limit} }} }}
access = {{ rate = "100Mbps", rtt = "80ms" }}
[[flows]]
kind = "tfrc"
preset = "{preset}"
count = {flows}
start = {{ uniform = ["0s", "1s"] }}
"#
    )
}

/// X in packets (of 1000 bytes) per RTT, per bin.
fn packets_per_rtt(flow: &FlowResult) -> Vec<f64> {
    column(flow, "x_bps")
        .iter()
        .zip(column(flow, "rtt_s"))
        .map(|(x, r)| x / 8000.0 * r)
        .collect()
}

/// Issue test 7, Fig. 19 (floyd2000 §4.1, Appendix A.1): every 100th packet lost until 10 s,
/// then none. The rate holds until the open loss interval outgrows the average, then rises by
/// at most 0.14 packets/RTT per RTT while the history is undiscounted (paper: 0.12 simulated,
/// 0.14 bound for eq. (1); we measure 0.127), and faster once discounting starts (paper: up to
/// 0.28-0.29; we measure 0.30; crates/tfrc's harness test 0.30).
#[test]
fn fig19_rate_rises_slowly_after_congestion_ends() {
    let losses = r#"
[[losses]]
link = "ab"
kind = "schedule"
[[losses.steps]]
at = "0s"
kind = "periodic"
every = 100
phase = 99
[[losses.steps]]
at = "10s"
kind = "list"
indices = []
"#;
    // Bins of 100 ms, one RTT: X changes once per report, and reports come one R = 100.1 ms
    // apart after the losses stop, so consecutive samples are consecutive reports (or equal).
    let results = run_toml(&two_nodes("floyd2000", 16.0, "100ms", losses), 1);
    let flow = results.flow("f").unwrap();
    let x = packets_per_rtt(flow);
    let p = column(flow, "p");
    let discount = column(flow, "rx_discount_factor");
    let open = column(flow, "rx_open_interval_packets");
    let (from, to) = (90, 160);

    // Before 10 s p is exactly 0.01 (periodic loss) and X flat.
    assert!(p[80..100].iter().all(|&v| v == 0.01), "{:?}", &p[80..100]);
    let x_flat = x[99];
    assert!(x[80..100].iter().all(|&v| (v - x_flat).abs() < 1e-9));
    // No rise before the open interval exceeds the average of 100 packets. (I_0 only grows
    // after 10 s, so if it exceeds 100 when the report is sent it does at the sample too.)
    for k in from..to {
        if x[k] > x_flat + 1e-9 {
            assert!(open[k] > 100.0, "rose at bin {k} with I_0 = {}", open[k]);
        }
    }
    // Rises per RTT, split by whether the receiver's history was discounted. The discount
    // factor only falls once the losses have stopped, so DF = 1 at a sample means DF = 1 when
    // the report behind it was sent.
    let rises = |keep: &dyn Fn(usize) -> bool| {
        (from + 1..to)
            .filter(|&k| keep(k))
            .map(|k| x[k] - x[k - 1])
            .fold(f64::NEG_INFINITY, f64::max)
    };
    let undiscounted = rises(&|k| discount[k] == 1.0);
    let discounted = rises(&|k| discount[k - 1] < 1.0);
    println!("fig19: undiscounted rise {undiscounted:.3}, discounted {discounted:.3} pkts/RTT/RTT");
    assert!((0.10..=0.14).contains(&undiscounted), "{undiscounted}");
    assert!((0.2..=0.327).contains(&discounted), "{discounted}");
    // The rate keeps rising: about double by 16 s.
    assert!(x[159] > 1.8 * x_flat, "{} vs {x_flat}", x[159]);
}

/// RTTs of persistent congestion before X halves, from periodic loss of one in `every` held long
/// enough for the history to be uniform, then every other packet lost (one loss event per RTT,
/// each reported at once). As in crates/tfrc's harness test, the count is the number of reports
/// that raised p, up to and including the one that halved X; 5 ms bins keep them apart.
fn rtts_to_halve(every: u64) -> usize {
    let warmup = 10.0 + every as f64 * 0.06;
    let losses = format!(
        r#"
[[losses]]
link = "ab"
kind = "schedule"
[[losses.steps]]
at = "0s"
kind = "periodic"
every = {every}
phase = {}
[[losses.steps]]
at = "{warmup}s"
kind = "periodic"
every = 2
phase = 1
"#,
        every - 1
    );
    let results = run_toml(&two_nodes("floyd2000", warmup + 5.0, "5ms", &losses), 1);
    let flow = results.flow("f").unwrap();
    let x = column(flow, "x_bps");
    let p = column(flow, "p");
    let onset = (warmup / 0.005).round() as usize;
    let (x0, p0) = (x[onset - 1], p[onset - 1]);
    let halved = (onset..x.len())
        .find(|&k| x[k] <= 0.5 * x0)
        .expect("X never halved");
    (onset..=halved)
        .filter(|&k| p[k] > p[k - 1].max(p0))
        .count()
}

/// Issue test 7, Figs. 20-21 (floyd2000 §4.1, Appendix A.2): under persistent congestion the
/// rate halves after 5 (+-1) RTTs from 1% loss, at least 5 from lower rates, 3-8 over the
/// range. Measured: 6, 6, 6, 6, 6, 5 for 1/1000 .. 1/20 (the harness gives 5, 6, 6, 6, 5, 5).
#[test]
fn fig20_rate_halves_after_about_five_rtts_of_persistent_congestion() {
    let mut measured = Vec::new();
    for every in [1000, 500, 200, 100, 50, 20] {
        let rtts = rtts_to_halve(every);
        measured.push(rtts);
        assert!((3..=8).contains(&rtts), "1/{every}: {rtts}");
        if every >= 200 {
            assert!(rtts >= 5, "1/{every}: {rtts}");
        }
        if every == 100 {
            assert!((4..=6).contains(&rtts), "1/100: {rtts}");
        }
    }
    println!("fig20: RTTs to halve for 1/1000 .. 1/20: {measured:?}");
}

/// A greedy flow alone on a 10 Mb/s bottleneck (DropTail, 100 packets) fills it: slow start's
/// overshoot costs a few drops, then the rate climbs back as the loss history ages (RFC 5348),
/// and from 15 s the bottleneck carries the flow at its full rate (measured: 100.0%).
#[test]
fn greedy_flow_fills_an_uncongested_bottleneck() {
    let results = run_toml(&dumbbell(1, "rfc5348", "10Mbps", 100, 30.0), 1);
    let flow = &results.flows[0];
    assert_eq!(
        (flow.kind.as_str(), flow.variant.as_str()),
        ("tfrc", "rfc5348")
    );
    let late: u64 = flow.record.bins.received_bytes.to_vec()[150..].iter().sum();
    let rate_bps = late as f64 * 8.0 / 15.0;
    println!("uncongested: {:.3} of the bottleneck", rate_bps / 10e6);
    assert!(rate_bps >= 0.98 * 10e6, "{rate_bps}");
    let bottleneck = results.link("bottleneck").unwrap();
    let busy = &bottleneck.record.bins.utilization[150..];
    assert!(busy.iter().all(|&u| u > 0.99), "{busy:?}");
    // Reports flow back: one per RTT or so (R is about 90-180 ms here).
    let reports = flow.record.totals.reverse_packets_received;
    assert!((150..=400).contains(&reports), "{reports}");
}

/// DropTail-congested flows send at the equation's rate for their own p and R: for each flow,
/// the long-run throughput over X(p, R, t_RTO) with the run's mean of the sender's p, R and
/// t_RTO lies within 10% (measured 0.998-1.044 over 1, 4 and 8 flows), and within 20% using the
/// monitor's loss event rate (loss events per packet, grouped by the base RTT; measured
/// 0.99-1.12) instead of the sender's estimate.
#[test]
fn droptail_congested_flows_follow_the_equation() {
    for (flows, preset, rate, limit) in [
        (1, "rfc5348", "2Mbps", 20),
        (1, "floyd2000", "2Mbps", 20),
        (4, "rfc5348", "4Mbps", 30),
        (8, "floyd2000", "4Mbps", 30),
    ] {
        let results = run_toml(&dumbbell(flows, preset, rate, limit, 60.0), 1);
        let shape = TfrcConfig::preset(preset).unwrap().equation;
        let from = 200; // skip 20 s of start-up
        for flow in &results.flows {
            let received = &flow.record.bins.received_bytes.to_vec()[from..];
            let throughput = received.iter().sum::<u64>() as f64 / (received.len() as f64 * 0.1);
            let p = mean(&column(flow, "p")[from..]);
            let rtt = mean(&column(flow, "rtt_s")[from..]);
            let t_rto = mean(&column(flow, "t_rto_s")[from..]);
            let by_sender = throughput / throughput_bytes_per_s(shape, 1000.0, rtt, t_rto, p);
            let p_monitor = flow.record.totals.loss_event_rate();
            let by_monitor =
                throughput / throughput_bytes_per_s(shape, 1000.0, rtt, t_rto, p_monitor);
            println!(
                "{flows} x {preset} {}: {throughput:.0} B/s, p {p:.5} (monitor {p_monitor:.5}), \
                 R {rtt:.4}: ratio {by_sender:.3} (monitor {by_monitor:.3})",
                flow.name
            );
            assert!(p > 0.0005, "{}: not congested", flow.name);
            assert!(
                (0.9..=1.1).contains(&by_sender),
                "{}: {by_sender}",
                flow.name
            );
            assert!(
                (0.8..=1.2).contains(&by_monitor),
                "{}: {by_monitor}",
                flow.name
            );
        }
    }
}

/// Cumulative data sent never runs ahead of the data the application produced (one packet at
/// the start, then one per interval): the send buffer is the only source of packets.
fn assert_never_ahead_of_the_application(flow: &FlowResult, app_bps: f64) {
    let interval = 8000.0 / app_bps;
    let mut sent = 0u64;
    for (k, &bytes) in flow.record.bins.sent_bytes.to_vec().iter().enumerate() {
        sent += bytes;
        let end = (k + 1) as f64 * 0.1;
        let produced = ((end / interval).ceil() as u64 + 1) * 1000;
        assert!(
            sent <= produced,
            "bin {k}: {sent} sent, {produced} produced"
        );
    }
}

/// An application-limited source sends what its application produces and no more, and obeys
/// RFC 5348's data-limited rules (§4.3 step 4, §8): while data-limited its allowed rate X is
/// bounded by twice the largest receive rate reported, not by the equation.
#[test]
fn application_limited_source_obeys_the_data_limited_rules() {
    // 200 kb/s of data over a path with 1% loss: the equation allows about 1.1 Mb/s.
    let extra = format!("app_rate = \"200kbps\"\n{}", common::bernoulli_on_ab(0.01));
    let results = run_toml(&two_nodes("rfc5348", 60.0, "100ms", &extra), 1);
    let flow = results.flow("f").unwrap();
    assert_never_ahead_of_the_application(flow, 200e3);
    let from = 100;
    let sent = &flow.record.bins.sent_bytes.to_vec()[from..];
    let rate = sent.iter().sum::<u64>() as f64 * 8.0 / (sent.len() as f64 * 0.1);
    // The sender keeps up: everything the application produced went out (measured: exactly).
    assert!((rate / 200e3 - 1.0).abs() < 0.01, "{rate}");
    let buffered = column(flow, "app_buffer_packets");
    assert!(buffered[from..].iter().all(|&b| b <= 1.0));
    // X stays within 2.5x the application rate (2 max X_recv plus measurement noise;
    // measured: at most 480 kb/s) though X_calc is about 5x it (measured mean 1.09 Mb/s).
    let x = column(flow, "x_bps");
    let x_max = x[from..].iter().copied().fold(0.0, f64::max);
    let x_calc = mean(&column(flow, "x_calc_bps")[from..]);
    println!("app-limited: sent {rate:.0} b/s, X max {x_max:.0}, X_calc mean {x_calc:.0}");
    assert!(x_max <= 2.5 * 200e3, "{x_max}");
    assert!(x_calc >= 4.0 * 200e3, "{x_calc}");
    // In no one-second window (after the start-up backlog) does it exceed the application's
    // rate by more than one packet.
    for window in flow.record.bins.sent_bytes.to_vec()[from..].windows(10) {
        assert!(window.iter().sum::<u64>() <= 25_000 + 1000);
    }
}

/// An application faster than the network allows: the sender is network-limited, X follows
/// X_calc, and the backlog grows in the send buffer.
#[test]
fn application_faster_than_the_network_builds_a_backlog() {
    let extra = format!("app_rate = \"2Mbps\"\n{}", common::bernoulli_on_ab(0.02));
    let results = run_toml(&two_nodes("rfc5348", 30.0, "100ms", &extra), 1);
    let flow = results.flow("f").unwrap();
    assert_never_ahead_of_the_application(flow, 2e6);
    let from = 100;
    let x = mean(&column(flow, "x_bps")[from..]);
    let x_calc = mean(&column(flow, "x_calc_bps")[from..]);
    assert!((x / x_calc - 1.0).abs() < 0.05, "{x} vs {x_calc}");
    assert!(x < 0.5 * 2e6);
    let buffered = column(flow, "app_buffer_packets");
    assert!(buffered[299] > buffered[150] + 1000.0, "{}", buffered[299]);
}

/// With `ecn = true` over a marking RED queue the flow is controlled by marks: the receiver
/// counts loss events although (almost) nothing is dropped.
#[test]
fn ecn_marks_drive_the_loss_event_rate() {
    let text = r#"
duration = "30s"
[topology]
kind = "dumbbell"
hosts = 2
bottleneck = { rate = "2Mbps", delay = "20ms", queue = { kind = "red", ecn = true, mean_packet_size = 1000 } }
access = { rate = "100Mbps", rtt = "80ms" }
[[flows]]
kind = "tfrc"
count = 2
ecn = true
start = { uniform = ["0s", "1s"] }
"#;
    let results = run_toml(text, 1);
    let queue = &results.link("bottleneck").unwrap().queue;
    assert!(queue.marks > 20, "{queue:?}");
    for flow in &results.flows {
        let events = column(flow, "rx_loss_events");
        assert!(events[events.len() - 1] > 10.0, "{}", flow.name);
        let p = column(flow, "p");
        assert!(p[p.len() - 1] > 0.0);
        // Marks replace most drops (slow start's overshoot can still overflow the queue).
        let totals = &flow.record.totals;
        assert!(
            totals.packets_dropped * 10 < totals.packets_sent,
            "{totals:?}"
        );
    }
}

/// Determinism: the same scenario and seed give the same results, bit for bit; another seed
/// (other start times, other dither) gives others.
#[test]
fn runs_are_deterministic() {
    let text = dumbbell(4, "floyd2000", "4Mbps", 30, 20.0)
        .replace("count = 4", "count = 4\ndither_fraction = 0.1");
    let a = run_toml(&text, 3);
    let b = run_toml(&text, 3);
    let c = run_toml(&text, 4);
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
    assert_ne!(format!("{a:?}"), format!("{c:?}"));
}

/// Scenario errors inside a TFRC flow name the key.
#[test]
fn scenario_errors_name_the_tfrc_key() {
    let base = two_nodes("rfc5348", 1.0, "100ms", "");
    for (extra, expected) in [
        (
            "ndupack = 0",
            "flows[0].ndupack: expected at least 1, found 0",
        ),
        (
            "app_rate = \"0bps\"",
            "flows[0].app_rate: expected a rate above 0, found 0bps",
        ),
        (
            "segmnt_size = 1000",
            "flows[0].segmnt_size: unknown key; did you mean `segment_size`?",
        ),
    ] {
        let text = format!("{base}{extra}\n");
        let error = Scenario::from_toml_str(&text).unwrap_err().to_string();
        assert!(error.starts_with(expected), "{error}");
    }
    let text = base.replace("rfc5348", "floyd2001");
    let error = Scenario::from_toml_str(&text).unwrap_err().to_string();
    assert!(
        error.starts_with(
            r#"flows[0].preset: expected one of "rfc5348", "floyd2000" (did you mean "floyd2000"?)"#
        ),
        "{error}"
    );
}

/// CoV_time (yang2001 §III: the coefficient of variation of the sending rate sampled over
/// consecutive RTT-long intervals) of a floyd2000 TFRC flow at 1% Bernoulli loss and RTT
/// 100 ms, averaged over 4 seeds after 20 s of warm-up. yang2001 reports 0.23; the issue asks
/// for 0.15-0.35. Measured: 0.217, 0.193, 0.246, 0.201, mean 0.214 (rfc5348: mean 0.234).
#[test]
fn cov_time_at_one_percent_loss() {
    let losses = common::bernoulli_on_ab(0.01);
    for preset in ["floyd2000", "rfc5348"] {
        let text = two_nodes(preset, 200.0, "100ms", &losses);
        let covs: Vec<f64> = (1..=4)
            .map(|seed| {
                let results = run_toml(&text, seed);
                let flow = results.flow("f").unwrap();
                let per_rtt: Vec<f64> = flow.record.bins.sent_packets.to_vec()[200..]
                    .iter()
                    .map(|&n| f64::from(n))
                    .collect();
                let m = mean(&per_rtt);
                let var =
                    per_rtt.iter().map(|v| (v - m).powi(2)).sum::<f64>() / per_rtt.len() as f64;
                var.sqrt() / m
            })
            .collect();
        let cov = mean(&covs);
        println!("CoV_time {preset}: {covs:.3?}, mean {cov:.3}");
        assert!((0.15..=0.35).contains(&cov), "{preset}: {cov}");
    }
}

/// The E[1/theta_hat] trace fields (Rhee & Xu 2005 §5.3): under periodic loss of one packet in
/// 50 every loss interval is 50 packets, so once the history is full every sample of
/// 1/theta_hat is 1/50, one sample per loss event. Read as Python does: the difference of the
/// cumulative sums over a window divided by the difference of the counts.
#[test]
fn inverse_theta_hat_is_sampled_once_per_loss_event() {
    let losses = r#"
[[losses]]
link = "ab"
kind = "periodic"
every = 50
phase = 49
"#;
    let results = run_toml(&two_nodes("floyd2000", 30.0, "1s", losses), 1);
    let flow = results.flow("f").unwrap();
    let sum = column(flow, "rx_inv_theta_hat_sum");
    let samples = column(flow, "rx_inv_theta_hat_samples");
    let events = column(flow, "rx_loss_events");
    let (from, to) = (10, 29);
    assert_eq!(samples[to], events[to]);
    let n = samples[to] - samples[from];
    assert!(n > 10.0, "{n} loss events in the window");
    let mean_inverse = (sum[to] - sum[from]) / n;
    println!("E[1/theta_hat] under 1-in-50 periodic loss: {mean_inverse:.6} over {n} events");
    assert!((mean_inverse - 0.02).abs() < 1e-9, "{mean_inverse}");
}
