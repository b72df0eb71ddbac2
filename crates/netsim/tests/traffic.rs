//! The ON/OFF sources and the ping probe through the simulator (issue 5, tests 4 and 6):
//! scenario files run through `netsim::scenario::run`.

mod common;

use common::{last, simulate, state};
use netsim::results::Results;
use netsim::scenario::Scenario;

/// The mean rate of floyd2000's ON/OFF sources: 500 kb/s · 1 s / (1 s + 2 s).
const FLOYD2000_MEAN_BPS: f64 = 500_000.0 / 3.0;

/// `n` ON/OFF flows of `kind` with floyd2000's parameters (ON 1 s, OFF 2 s, 500 kb/s while ON,
/// 1000-byte packets, the default size) from one host to another across a 100 Mb/s dumbbell whose
/// queues never overflow, so the offered load is delivered whole.
fn on_off_load(kind: &str, n: usize, duration: &str) -> String {
    format!(
        r#"
duration = "{duration}"
[monitor]
bin = "10s"
[topology]
kind = "dumbbell"
hosts = 1
bottleneck = {{ rate = "100Mbps", delay = "10ms", queue = {{ kind = "droptail", limit = 100000 }} }}
access = {{ queue = {{ kind = "droptail", limit = 100000 }} }}
[[flows]]
name = "src"
count = {n}
kind = "{kind}"
rate = "500kbps"
on = "1s"
off = "2s"
"#
    )
}

/// The aggregate rate the bottleneck carried, in bits per second over the run, checking on the
/// way that nothing was dropped and that every flow's trace agrees with its monitor.
fn aggregate_bps(results: &Results, kind: &str) -> f64 {
    let bottleneck = results.link("bottleneck").unwrap();
    assert_eq!(bottleneck.record.totals.queue_drops, 0);
    for flow in &results.flows {
        assert_eq!(flow.kind, kind);
        let totals = &flow.record.totals;
        assert_eq!(totals.packets_dropped, 0);
        // Packets still in flight at the end: at most a few of each flow's.
        assert!(totals.packets_sent - totals.packets_received <= 2);
        assert_eq!(last(flow, "packets_sent"), totals.packets_sent as f64);
        assert_eq!(totals.bytes_sent, totals.packets_sent * 1000);
        // At least one burst began, and no burst is empty.
        let bursts = last(flow, "bursts");
        assert!(bursts >= 1.0 && bursts <= totals.packets_sent as f64);
        let on = state(flow, "on");
        assert!(on.iter().all(|&x| x == 0.0 || x == 1.0));
    }
    bottleneck.record.totals.bytes_departed as f64 * 8.0 / results.duration.as_secs_f64()
}

// ---- Test 4: the aggregate of N ON/OFF sources has mean rate N·rate·ON/(ON + OFF) ----

#[test]
fn twenty_pareto_sources_carry_n_rate_on_over_on_plus_off() {
    // 20 sources for 3000 s (~20 000 ON/OFF cycles; ~2 s in debug). Heavy tails converge
    // slowly: over 100 seeds of this setting the error was within 5% for 92 of them (the
    // sources alone, agent::onoff's exploration); the ignored test below runs 20 000 s for 5
    // seeds. Seed 1 measures -1.2% (3 294 157 b/s for 3 333 333), mean burst 60.8 packets.
    let results = simulate(&on_off_load("pareto", 20, "3000s"), 1);
    let measured = aggregate_bps(&results, "pareto");
    let expected = 20.0 * FLOYD2000_MEAN_BPS;
    let error = measured / expected - 1.0;
    eprintln!("pareto: {measured:.0} b/s vs {expected:.0}: {error:+.4}");
    assert!(
        error.abs() < 0.05,
        "{measured} b/s vs {expected}: {error:+.4}"
    );
    // ON periods: bursts average 1 s / 16 ms = 62.5 packets; heavy tails make the sample mean
    // of ~1000 bursts per source noisy, so only the aggregate is checked.
    let packets: f64 = results.flows.iter().map(|f| last(f, "packets_sent")).sum();
    let bursts: f64 = results.flows.iter().map(|f| last(f, "bursts")).sum();
    let burst = packets / bursts;
    eprintln!("pareto: mean burst {burst:.2} packets");
    assert!((burst / 62.5 - 1.0).abs() < 0.1, "mean burst {burst}");
}

#[test]
fn twenty_exponential_sources_carry_n_rate_on_over_on_plus_off() {
    // 1000 s: every one of 200 seeds was within 5% (the sources alone); seed 1 measures +0.65%.
    let results = simulate(&on_off_load("exponential", 20, "1000s"), 1);
    let measured = aggregate_bps(&results, "exponential");
    let expected = 20.0 * FLOYD2000_MEAN_BPS;
    let error = measured / expected - 1.0;
    eprintln!("exponential: {measured:.0} b/s vs {expected:.0}: {error:+.4}");
    assert!(
        error.abs() < 0.05,
        "{measured} b/s vs {expected}: {error:+.4}"
    );
}

/// Run with `cargo test --release -p netsim --test traffic -- --ignored` (~20 s). Measured:
/// -0.4%, -1.5%, +0.8%, -2.1%, -1.5% for seeds 1 to 5.
#[test]
#[ignore = "long run: 5 seeds of 20 Pareto sources for 20 000 s"]
fn pareto_aggregate_over_a_long_run_for_several_seeds() {
    for seed in 1..=5 {
        let results = simulate(&on_off_load("pareto", 20, "20000s"), seed);
        let measured = aggregate_bps(&results, "pareto");
        let error = measured / (20.0 * FLOYD2000_MEAN_BPS) - 1.0;
        eprintln!("seed {seed}: {measured:.0} b/s, {error:+.4}");
        assert!(error.abs() < 0.05, "seed {seed}: {error:+.4}");
    }
}

#[test]
fn on_off_sources_wait_interval_plus_off_before_their_first_packet() {
    // A Pareto OFF time is at least 2 s·(1.5-1)/1.5 = 0.667 s, so nothing is sent in the first
    // 0.68 s (16 ms + 0.667 s) of any source, and every source has sent by the end.
    let text = on_off_load("pareto", 20, "100s").replace("bin = \"10s\"", "bin = \"20ms\"");
    let results = simulate(&text, 3);
    for flow in &results.flows {
        let sent = &flow.record.bins.sent_packets.to_vec();
        assert!(sent[..34].iter().all(|&n| n == 0), "{}", flow.name);
        assert!(flow.record.totals.packets_sent > 0);
    }
}

// ---- Test 6: the ping probe measures propagation plus queueing delay ----

/// A ping probe across a dumbbell with a 10 Mb/s, 20 ms bottleneck (access links 100 Mb/s, 1 ms)
/// and `extra` flows after it.
fn ping_path(duration: &str, ping: &str, extra: &str) -> String {
    format!(
        r#"
duration = "{duration}"
[monitor]
bin = "100ms"
[topology]
kind = "dumbbell"
hosts = 1
bottleneck = {{ rate = "10Mbps", delay = "20ms", queue = {{ kind = "droptail", limit = 1000 }} }}
access = {{ delay = "1ms" }}
[[flows]]
name = "ping"
kind = "ping"
{ping}
{extra}
"#
    )
}

#[test]
fn ping_on_an_idle_path_measures_the_base_rtt_exactly() {
    for (keys, size) in [("", 64u64), ("size = \"1000B\"\ninterval = \"50ms\"", 1000)] {
        let results = simulate(&ping_path("10s", keys, ""), 1);
        let ping = results.flow("ping").unwrap();
        // Propagation 2·(1 + 20 + 1) ms, and the probe serialized on three links each way.
        let serialization = 2.0 * (size as f64 * 8.0) * (2.0 / 100e6 + 1.0 / 10e6);
        let base = ping.base_rtt.as_secs_f64();
        assert!((base - 0.044 - serialization).abs() < 1e-8, "{base}");
        assert_eq!(last(ping, "rtt_min_s"), base);
        assert_eq!(last(ping, "rtt_max_s"), base);
        let sent = last(ping, "probes_sent");
        let expected = if size == 64 { 100.0 } else { 200.0 };
        assert_eq!(sent, expected);
        // The last probe (0.1 s before the end) is back too, ~44 ms later; none lost.
        assert_eq!(last(ping, "echoes_received"), sent);
        assert_eq!(last(ping, "lost"), 0.0);
        let echoes = state(ping, "echoes_received");
        let sum = state(ping, "rtt_sum_s");
        assert!((sum[sum.len() - 1] / echoes[echoes.len() - 1] - base).abs() < 1e-12);
        // The forward monitor counts the probes, the reverse one the echoes.
        assert_eq!(ping.record.totals.bytes_sent, sent as u64 * size);
        assert_eq!(ping.record.totals.reverse_packets_received, sent as u64);
    }
}

#[test]
fn ping_rtt_minus_base_is_the_standing_queueing_delay() {
    // A burst of 50 packets of 1000 B (CBR at 100 Mb/s, max_packets 50) fills the bottleneck
    // queue; a CBR at the bottleneck's rate less the probes' own load (10 Mb/s - 64 B / 100 ms)
    // then keeps the link busy without letting the backlog drain or grow, so it stands at
    // about 50 packets: 50 · 0.8 ms = 40 ms of queueing delay, within one packet time (the
    // packet in service and the phase of the arrivals).
    let extra = r#"
[[flows]]
name = "burst"
kind = "cbr"
rate = "100Mbps"
max_packets = 50
[[flows]]
name = "fill"
kind = "cbr"
rate = "9994880bps"
"#;
    let text = ping_path("20s", "start = \"1s\"", extra);
    let results = simulate(&text, 1);
    let ping = results.flow("ping").unwrap();
    let bottleneck = results.link("bottleneck").unwrap();
    assert_eq!(bottleneck.record.totals.queue_drops, 0);
    let base = ping.base_rtt.as_secs_f64();
    let packet_time = 0.0008;
    let (min, max) = (
        last(ping, "rtt_min_s") - base,
        last(ping, "rtt_max_s") - base,
    );
    eprintln!("standing queue: RTT - base in [{min:.6}, {max:.6}] s");
    assert!(
        min > 0.040 - packet_time && max < 0.040 + packet_time,
        "{min} {max}"
    );
    assert_eq!(last(ping, "lost"), 0.0);
    assert_eq!(last(ping, "echoes_received"), 190.0);

    // Bin by bin, the mean RTT minus base is the queue the monitor saw in bytes over the link
    // rate, plus on average half the service time of the packet in service.
    let echoes = state(ping, "echoes_received");
    let sums = state(ping, "rtt_sum_s");
    let queue = &bottleneck.record.bins.mean_queue_bytes;
    let mut checked = 0;
    let mut worst: f64 = 0.0;
    for k in 20..echoes.len() {
        let n = echoes[k] - echoes[k - 1];
        if n == 0.0 {
            continue;
        }
        let rtt = (sums[k] - sums[k - 1]) / n;
        let monitored = queue[k] * 8.0 / 10e6 + packet_time / 2.0;
        worst = f64::max(worst, (rtt - base - monitored).abs());
        assert!(
            (rtt - base - monitored).abs() < packet_time,
            "bin {k}: {} vs {monitored}",
            rtt - base
        );
        checked += 1;
    }
    eprintln!("standing queue: {checked} bins, largest |RTT - base - monitored| {worst:.6} s");
    assert!(checked > 150, "{checked}");
}

#[test]
fn ping_rtt_follows_a_growing_queue() {
    // A CBR 5% above the bottleneck's rate grows the queue by 0.5 Mb/s: the probe's queueing
    // delay rises by 50 ms per second, tracking the monitored queue.
    let extra = "[[flows]]\nname = \"over\"\nkind = \"cbr\"\nrate = \"10.5Mbps\"\n";
    let results = simulate(&ping_path("10s", "", extra), 1);
    let ping = results.flow("ping").unwrap();
    let base = ping.base_rtt.as_secs_f64();
    let rtt = state(ping, "rtt_s");
    let queue = &results
        .link("bottleneck")
        .unwrap()
        .record
        .bins
        .mean_queue_bytes;
    for k in [20, 50, 90] {
        let monitored = queue[k] * 8.0 / 10e6;
        // The latest sample of bin k came from a probe sent up to one RTT earlier, when the
        // queue was shorter by up to 50 ms/s times that; allow that and a packet time.
        let slack = 0.05 * (rtt[k] + 0.1) + 0.0008;
        assert!(
            (rtt[k] - base - monitored).abs() < slack,
            "bin {k}: {} vs {monitored}",
            rtt[k] - base
        );
    }
    assert!(rtt[90] - rtt[20] > 0.3);
}

#[test]
fn ping_counts_probes_lost_on_the_path() {
    // 20% Bernoulli loss on the bottleneck, forward only (echoes come back on the reverse link):
    // about a fifth of 10 000 probes are lost, every other one is echoed.
    let losses = "[[losses]]\nlink = \"bottleneck\"\nkind = \"bernoulli\"\np = 0.2\n";
    let results = simulate(&ping_path("1000s", "timeout = \"1s\"", losses), 1);
    let ping = results.flow("ping").unwrap();
    let (sent, echoed, lost) = (
        last(ping, "probes_sent"),
        last(ping, "echoes_received"),
        last(ping, "lost"),
    );
    assert_eq!(sent, 10_000.0);
    assert_eq!(last(ping, "late"), 0.0);
    // The probes of the last second are neither back nor timed out yet at the end.
    assert!(sent - echoed - lost <= 10.0);
    assert_eq!(ping.record.totals.packets_dropped as f64, lost);
    let rate = lost / sent;
    assert!((rate - 0.2).abs() < 0.015, "{rate}");
}

#[test]
fn late_echoes_are_counted_and_still_measured() {
    // A timeout shorter than the base RTT (~44 ms): every probe is declared lost, then echoed.
    let results = simulate(&ping_path("2s", "timeout = \"40ms\"", ""), 1);
    let ping = results.flow("ping").unwrap();
    assert_eq!(last(ping, "probes_sent"), 20.0);
    assert_eq!(last(ping, "lost"), 20.0);
    assert_eq!(last(ping, "late"), 20.0);
    assert_eq!(last(ping, "echoes_received"), 20.0);
    assert_eq!(last(ping, "rtt_s"), ping.base_rtt.as_secs_f64());
}

// ---- Determinism and scenario errors ----

#[test]
fn runs_are_deterministic() {
    let text = on_off_load("pareto", 5, "200s")
        + "[[flows]]\nname = \"probe\"\nkind = \"ping\"\n[[flows]]\nkind = \"exponential\"\n";
    let a = simulate(&text, 7);
    let b = simulate(&text, 7);
    assert_eq!(a, b);
    let c = simulate(&text, 8);
    assert_ne!(a.flows[0].record.totals, c.flows[0].record.totals);
}

/// The error a flow table with `keys` gives.
fn flow_error(keys: &str) -> String {
    let text = format!(
        "duration = \"1s\"\n[topology]\nkind = \"dumbbell\"\nhosts = 1\n\
         bottleneck = {{ rate = \"1Mbps\", delay = \"1ms\" }}\n[[flows]]\n{keys}\n"
    );
    match Scenario::from_toml_str(&text) {
        Ok(_) => panic!("accepted: {keys}"),
        Err(error) => error.to_string(),
    }
}

#[test]
fn scenario_errors_name_the_key() {
    let cases = [
        (
            "kind = \"pareto\"\nshape = 1.0",
            "flows[0].shape: expected a finite Pareto shape above 1, found 1.0",
        ),
        (
            "kind = \"pareto\"\nshape = 0.5",
            "flows[0].shape: expected a finite Pareto shape above 1, found 0.5",
        ),
        (
            "kind = \"pareto\"\nrate = \"0bps\"",
            "flows[0].rate: expected a rate above 0, found \"0bps\"",
        ),
        (
            "kind = \"exponential\"\non = \"0s\"",
            "flows[0].on: expected a mean ON time above 0, found \"0s\"",
        ),
        ("kind = \"exponential\"\nshape = 1.5", "flows[0].shape"),
        ("kind = \"pareto\"\non = 1", "flows[0].on"),
        ("kind = \"pareto\"\nsize = 0", "flows[0].size"),
        (
            "kind = \"ping\"\ninterval = \"0s\"",
            "flows[0].interval: expected a duration above 0, found \"0s\"",
        ),
        (
            "kind = \"ping\"\ntimeout = \"0ms\"",
            "flows[0].timeout: expected a duration above 0, found \"0ms\"",
        ),
        ("kind = \"ping\"\nrate = \"1Mbps\"", "flows[0].rate"),
    ];
    for (keys, expected) in cases {
        let message = flow_error(keys);
        assert!(message.contains(expected), "{keys}: {message}");
    }
}

#[test]
fn defaults_are_ns2s_but_the_packet_size() {
    let text = "duration = \"1s\"\n[topology]\nkind = \"dumbbell\"\nhosts = 1\n\
                bottleneck = { rate = \"1Mbps\", delay = \"1ms\" }\n\
                [[flows]]\nkind = \"pareto\"\n[[flows]]\nkind = \"exponential\"\n\
                [[flows]]\nkind = \"ping\"\n";
    let scenario = Scenario::from_toml_str(text).unwrap();
    let flows = &scenario.flows;
    use netsim::agent::{AgentConfig, OnOffConfig, OnOffDistribution, PingConfig};
    let pareto = OnOffConfig {
        size_bytes: 1000,
        ..OnOffConfig::pareto()
    };
    assert_eq!(flows[0].agent, AgentConfig::OnOff(pareto));
    assert_eq!(
        pareto.distribution,
        OnOffDistribution::Pareto { shape: 1.5 }
    );
    assert_eq!(pareto.rate_bps, 64_000);
    let exponential = OnOffConfig {
        size_bytes: 1000,
        ..OnOffConfig::exponential()
    };
    assert_eq!(flows[1].agent, AgentConfig::OnOff(exponential));
    assert_eq!(flows[2].agent, AgentConfig::Ping(PingConfig::default()));
    assert_eq!(
        [flows[0].name.as_str(), &flows[1].name, &flows[2].name],
        ["pareto0", "exponential0", "ping0"]
    );
}
