//! RAP through the simulator (issue 5, test 3, and the RAP parts of the issue): scenario files
//! run through `netsim::scenario::run`, checked against what ns-2's `rap.cc` must do.

mod common;

use common::{cov, last, mean, one_flow, sent_per_bin, simulate, state, two_nodes};
use netsim::results::FlowResult;
use netsim::scenario::Scenario;

/// A `[[losses]]` table dropping every `every`-th packet on `two_nodes`'s link `ab`.
fn periodic_on_ab(every: u32) -> String {
    format!(
        "[[losses]]\nlink = \"ab\"\nkind = \"periodic\"\nevery = {every}\nphase = {}\n",
        every - 1
    )
}

/// The bins (indices) at whose end the flow's backoff counter had just grown by one.
fn backoff_bins(flow: &FlowResult) -> Vec<usize> {
    let losses = state(flow, "losses");
    (1..losses.len())
        .filter(|&i| losses[i] > losses[i - 1])
        .collect()
}

/// The least-squares slope of `y` against `x`.
fn slope(x: &[f64], y: &[f64]) -> f64 {
    let (mx, my) = (mean(x), mean(y));
    let sxy: f64 = x.iter().zip(y).map(|(a, b)| (a - mx) * (b - my)).sum();
    let sxx: f64 = x.iter().map(|a| (a - mx).powi(2)).sum();
    sxy / sxx
}

// ---- Test 3: the AIMD sawtooth under periodic loss ----

#[test]
fn coarse_grain_rap_under_periodic_loss_shows_the_aimd_sawtooth() {
    let text = two_nodes("120s", "10ms", "kind = \"rap\"", &periodic_on_ab(200));
    let results = simulate(&text, 1);
    let f = results.flow("f").unwrap();
    let bin = 0.01;
    let ipg = state(f, "ipg_s");
    let srtt = state(f, "srtt_s");
    let backoffs = backoff_bins(f);
    // Every backoff is a single step in the counter (one per periodic loss: no clusters).
    let losses = state(f, "losses");
    assert!(backoffs.iter().all(|&i| losses[i] - losses[i - 1] == 1.0));
    // After the warm-up (ns-2's 2 s initial gap and SRTT), cycles between backoffs.
    let cycles: Vec<(usize, usize)> = backoffs
        .windows(2)
        .map(|w| (w[0], w[1]))
        .filter(|&(a, _)| a as f64 * bin > 20.0)
        .collect();
    assert!(cycles.len() >= 30, "{} cycles", cycles.len());

    // Halving per loss: the rate at the end of a backoff's bin over the one before it. A step
    // may fall in the same bin before the backoff (one in ten at 10 ms bins and a ~100 ms
    // SRTT), which puts that ratio at 0.5·(1 + 1/W) for a rate of W packets per SRTT.
    let ratios: Vec<f64> = backoffs
        .iter()
        .filter(|&&i| i as f64 * bin > 20.0)
        .map(|&i| ipg[i - 1] / ipg[i])
        .collect();
    let mean_ratio = mean(&ratios);
    println!(
        "rate after/before a backoff: mean {mean_ratio:.4}, {} backoffs",
        ratios.len()
    );
    assert!((mean_ratio - 0.5).abs() < 0.01, "{mean_ratio}");
    assert!(
        ratios.iter().all(|r| (0.5 - 1e-12..=0.6).contains(r)),
        "{ratios:?}"
    );

    // +1 packet per SRTT per SRTT: within each cycle, the rate in packets per SRTT against
    // time in SRTTs, from the backoff's bin to the bin before the next.
    let mut slopes = Vec::new();
    for &(a, b) in &cycles {
        let x: Vec<f64> = (a..b).map(|i| i as f64 * bin / srtt[i]).collect();
        let y: Vec<f64> = (a..b).map(|i| srtt[i] / ipg[i]).collect();
        slopes.push(slope(&x, &y));
    }
    let mean_slope = mean(&slopes);
    println!(
        "increase: {mean_slope:.4} packets/SRTT per SRTT over {} cycles (CoV {:.3}); srtt {:.4} s",
        slopes.len(),
        cov(&slopes),
        last(f, "srtt_s")
    );
    assert!((mean_slope - 1.0).abs() < 0.05, "{mean_slope}");
}

/// One RAP flow across a dumbbell whose DropTail bottleneck is `rate`, `delay` one way, with a
/// queue of `limit` packets; `flow` holds the flow's own keys.
fn dumbbell(rate: &str, delay: &str, limit: u32, duration: &str, bin: &str, flow: &str) -> String {
    one_flow(
        rate,
        delay,
        limit,
        duration,
        bin,
        &format!("kind = \"rap\"\n{flow}"),
    )
}

#[test]
fn fine_grain_damps_the_rate_as_the_queue_builds() {
    // One flow alone on a 1 Mb/s, 20 ms DropTail bottleneck with 50 packets of buffer: the
    // queue (up to 200 ms) raises the short-term RTT above the long-term one long before it
    // overflows, and fine grain stretches the gap by FRTT/XRTT.
    let run = |fine: bool| {
        let text = dumbbell(
            "1Mbps",
            "20ms",
            50,
            "200s",
            "100ms",
            &format!("fine_grain = {fine}"),
        );
        simulate(&text, 1)
    };
    let (coarse, fine) = (run(false), run(true));
    let measure = |results: &netsim::results::Results| {
        let f = results.flow("f").unwrap();
        let bottleneck = &results.link("bottleneck").unwrap().record.totals;
        (
            cov(&sent_per_bin(f, 400)),
            bottleneck.queue_drops,
            last(f, "losses"),
            bottleneck.utilization,
        )
    };
    let (coarse_cov, coarse_drops, coarse_backoffs, coarse_util) = measure(&coarse);
    let (fine_cov, fine_drops, fine_backoffs, fine_util) = measure(&fine);
    println!(
        "sent-rate CoV (100 ms bins): coarse {coarse_cov:.3}, fine {fine_cov:.3}; drops {coarse_drops} vs {fine_drops}; backoffs {coarse_backoffs} vs {fine_backoffs}; utilization {coarse_util:.3} vs {fine_util:.3}"
    );
    assert_eq!(coarse.flow("f").unwrap().variant, "coarse");
    assert_eq!(fine.flow("f").unwrap().variant, "fine");
    // Fine grain's sent rate oscillates markedly less, and it overflows the queue less often.
    assert!(fine_cov < 0.7 * coarse_cov, "{fine_cov} vs {coarse_cov}");
    assert!(
        fine_drops * 2 < coarse_drops,
        "{fine_drops} vs {coarse_drops}"
    );
    assert!(fine_backoffs < coarse_backoffs);
    // Both keep the link busy.
    assert!(coarse_util > 0.9 && fine_util > 0.9);
    // In fine mode the gap waited is IPG·FRTT/XRTT: longer than the IPG whenever FRTT > XRTT.
    let f = fine.flow("f").unwrap();
    let (ipg, gap) = (state(f, "ipg_s"), state(f, "gap_s"));
    let (frtt, xrtt) = (state(f, "frtt_s"), state(f, "xrtt_s"));
    let mut stretched = 0;
    for i in 0..ipg.len() {
        assert!((gap[i] - ipg[i] * frtt[i] / xrtt[i]).abs() <= 1e-9 * gap[i]);
        stretched += usize::from(frtt[i] > xrtt[i] && gap[i] > ipg[i]);
    }
    assert!(stretched > 100, "{stretched} bins");
    let c = coarse.flow("f").unwrap();
    assert_eq!(state(c, "gap_s"), state(c, "ipg_s"));
}

// ---- Loss detection ----

#[test]
fn a_cluster_of_losses_gives_one_backoff() {
    // Five consecutive data packets dropped at once, nothing else.
    let losses =
        "[[losses]]\nlink = \"ab\"\nkind = \"list\"\nindices = [3000, 3001, 3002, 3003, 3004]\n";
    let results = simulate(&two_nodes("30s", "10ms", "kind = \"rap\"", losses), 1);
    let f = results.flow("f").unwrap();
    assert!(f.record.totals.packets_sent > 3100);
    assert_eq!(f.record.totals.packets_dropped, 5);
    assert_eq!(last(f, "packets_lost"), 5.0);
    assert_eq!(last(f, "losses"), 1.0);
    // The single backoff halved the rate once (a step in the same bin would add up to 10%).
    let i = backoff_bins(f)[0];
    let ipg = state(f, "ipg_s");
    let ratio = ipg[i - 1] / ipg[i];
    assert!((0.5..0.55).contains(&ratio), "{ratio}");
    // The same five losses spread one SRTT apart and more are five congestion events.
    let spread =
        "[[losses]]\nlink = \"ab\"\nkind = \"list\"\nindices = [3000, 3300, 3600, 3900, 4200]\n";
    let results = simulate(&two_nodes("30s", "10ms", "kind = \"rap\"", spread), 1);
    let f = results.flow("f").unwrap();
    assert_eq!(last(f, "losses"), 5.0);
}

#[test]
fn the_timer_detects_losses_when_acks_stop() {
    // Everything is dropped from 20 s on: no ACK comes back, only the timer can see losses.
    let outage = "[[losses]]\nlink = \"ab\"\nkind = \"schedule\"\n[[losses.steps]]\nat = \"20s\"\nkind = \"bernoulli\"\np = 1.0\n";
    let results = simulate(&two_nodes("30s", "100ms", "kind = \"rap\"", outage), 1);
    let f = results.flow("f").unwrap();
    let (losses, acks, rate) = (state(f, "losses"), state(f, "acks"), state(f, "rate_bps"));
    let before = 199; // the bin ending at 20 s
    assert_eq!(losses[before], 0.0);
    assert_eq!(acks[before + 5], *acks.last().unwrap());
    let backoffs = last(f, "losses");
    let srtt = last(f, "srtt_s");
    let floor_bps = 512.0 * 8.0 / srtt;
    println!(
        "after the outage: {backoffs} backoffs, rate {:.0} -> {:.0} b/s (one packet per SRTT: {floor_bps:.0})",
        rate[before],
        rate.last().unwrap()
    );
    assert!(backoffs >= 5.0, "{backoffs}");
    assert!(*rate.last().unwrap() < rate[before] / 8.0);
    // ns-2's step still adds a packet per SRTT whenever a packet left in the step, so the rate
    // hovers around one packet per SRTT instead of falling to nothing.
    assert!(*rate.last().unwrap() < 2.0 * floor_bps);
}

// ---- ns-2's shared-first-sample bug ----

/// Two RAP flows on a dumbbell with 2 hosts, `a` starting at 5 s and `b` at 0 s, both with
/// `shared_first_sample = {shared}`.
fn two_flows(shared: bool) -> netsim::results::Results {
    let text = format!(
        r#"
duration = "8s"
[monitor]
bin = "10ms"
[topology]
kind = "dumbbell"
hosts = 2
bottleneck = {{ rate = "10Mbps", delay = "20ms" }}
[[flows]]
name = "a"
kind = "rap"
start = "5s"
shared_first_sample = {shared}
[[flows]]
name = "b"
kind = "rap"
start = "0s"
shared_first_sample = {shared}
"#
    );
    simulate(&text, 1)
}

#[test]
fn shared_first_sample_starts_every_source_but_the_first_from_two_seconds() {
    // One second after each start, the first ACK's sample is the only one (the second packet
    // leaves 2 s after the start, as ns-2's initial gap is 2 s). The samples exceed the base
    // RTT by the other flow's queueing at the bottleneck (well under a millisecond).
    let srtt_after_first_ack = |results: &netsim::results::Results, name: &str, start_s: f64| {
        let f = results.flow(name).unwrap();
        (
            state(f, "srtt_s")[((start_s + 1.0) / 0.01) as usize],
            f.base_rtt.as_secs_f64(),
        )
    };
    let fixed = two_flows(false);
    for (name, start) in [("a", 5.0), ("b", 0.0)] {
        let (srtt, rtt) = srtt_after_first_ack(&fixed, name, start);
        assert!((srtt - rtt).abs() < 1e-3, "{name}: {srtt} vs {rtt}");
    }
    let buggy = two_flows(true);
    // b takes the simulation's first sample (it started first, though listed second).
    let (srtt_b, rtt_b) = srtt_after_first_ack(&buggy, "b", 0.0);
    assert!((srtt_b - rtt_b).abs() < 1e-3, "{srtt_b} vs {rtt_b}");
    // a starts from SRTT = 2 s and moves half-way to its sample.
    let (srtt_a, rtt_a) = srtt_after_first_ack(&buggy, "a", 5.0);
    assert!(
        (srtt_a - (2.0 + 0.5 * (rtt_a - 2.0))).abs() < 1e-3,
        "{srtt_a}"
    );
    // So its first gap (IPG = SRTT at the first ACK) is ten times too long.
    let a = buggy.flow("a").unwrap();
    assert!((state(a, "ipg_s")[600] - srtt_a).abs() < 1e-9);
    // Until a starts, the option changes nothing for b.
    let b_srtt = |results: &netsim::results::Results| {
        state(results.flow("b").unwrap(), "srtt_s")[..500].to_vec()
    };
    assert!(b_srtt(&fixed) == b_srtt(&buggy));
}

// ---- Sizes, determinism, scenario errors ----

#[test]
fn packet_sizes_follow_the_preset() {
    for (preset, data, ack) in [("ns2", 512, 44), ("hassan", 100, 40)] {
        let flow = format!("kind = \"rap\"\npreset = \"{preset}\"");
        let results = simulate(&two_nodes("10s", "1s", &flow, ""), 1);
        let f = results.flow("f").unwrap();
        let t = &f.record.totals;
        assert_eq!(t.bytes_sent, t.packets_sent * data, "{preset}");
        assert_eq!(t.reverse_packets_received, last(f, "acks") as u64);
        // The base RTT counts a data packet forward and an ACK back at 100 Mb/s.
        let serialization = (data + ack) as f64 * 8.0 / 100e6;
        assert!(
            (f.base_rtt.as_secs_f64() - 0.1 - serialization).abs() < 1e-9,
            "{preset}"
        );
    }
}

#[test]
fn runs_are_deterministic_and_overhead_draws_from_the_seed() {
    let text = two_nodes(
        "20s",
        "100ms",
        "kind = \"rap\"\noverhead = \"5ms\"\nfine_grain = true",
        &periodic_on_ab(100),
    );
    let (a, b, c) = (simulate(&text, 1), simulate(&text, 1), simulate(&text, 2));
    assert_eq!(a.flows, b.flows);
    assert_eq!(a.links, b.links);
    assert_ne!(a.flows[0].record.state, c.flows[0].record.state);
}

#[test]
fn scenario_errors_name_the_key() {
    let error = |flow: &str| {
        let text = two_nodes("1s", "100ms", &format!("kind = \"rap\"\n{flow}"), "");
        Scenario::from_toml_str(&text).unwrap_err().to_string()
    };
    assert_eq!(
        error("beta = 2"),
        "flows[0].beta: expected a number in (0, 1), found 2"
    );
    assert_eq!(
        error("ipg = \"0s\""),
        "flows[0].ipg: expected a duration above 0, found \"0s\""
    );
    assert!(error("preset = \"ns3\"").starts_with("flows[0].preset: expected one of"));
    assert!(error("fine_grain = \"yes\"").starts_with("flows[0].fine_grain: expected"));
    assert!(error("ack_size = \"0B\"").starts_with("flows[0].ack_size: expected a packet size"));
    assert!(error("window = 20").starts_with("flows[0].window"));
}
