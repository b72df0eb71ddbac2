//! The TCP family and GAIMD through the simulator (issue 4, tests 1, 3, 4 and 6): scenario
//! files run through `netsim::scenario::run`, checked against what the protocols must do.

use netsim::results::{FlowResult, Results};
use netsim::scenario::{run, Scenario};

/// Runs a scenario text with `seed`.
fn simulate(text: &str, seed: u64) -> Results {
    let scenario = Scenario::from_toml_str(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    run(&scenario, seed).unwrap()
}

/// The per-bin series of a flow's state field.
fn state<'a>(flow: &'a FlowResult, field: &str) -> &'a [f64] {
    let state = &flow.record.state;
    let i = state
        .fields
        .iter()
        .position(|f| *f == field)
        .unwrap_or_else(|| panic!("no field {field} in {:?}", state.fields));
    &state.values[i]
}

/// The last value of a cumulative state field.
fn last(flow: &FlowResult, field: &str) -> f64 {
    *state(flow, field).last().unwrap()
}

/// Received data rate in packets per second over bins `from..to`.
fn received_pps(flow: &FlowResult, bin_s: f64, from: usize, to: usize) -> f64 {
    let packets: u32 = flow.record.bins.received_packets[from..to].iter().sum();
    f64::from(packets) / ((to - from) as f64 * bin_s)
}

/// One flow across a dumbbell whose bottleneck is `rate`, `delay` one way, with a queue of
/// `limit` packets; `flow` holds the flow's own keys.
fn one_flow(rate: &str, delay: &str, limit: u32, duration: &str, bin: &str, flow: &str) -> String {
    format!(
        r#"
duration = "{duration}"
[monitor]
bin = "{bin}"
[topology]
kind = "dumbbell"
hosts = 1
bottleneck = {{ rate = "{rate}", delay = "{delay}", queue = {{ kind = "droptail", limit = {limit} }} }}
[[flows]]
name = "f"
{flow}
"#
    )
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
