//! TEAR through the simulator (issue 5, tests 1 and 2): smoothness at 1% Bernoulli loss and
//! aggressiveness after a step from 4% to 1% periodic loss against yang2001 (Table I, Fig. 6,
//! Fig. 23), the response to 100% forward loss with and without the receiver's timeout
//! (yang2001 Fig. 17), plus determinism, scenario errors and an uncongested path. Each runs a
//! scenario file through `netsim::scenario::run`.
//!
//! The measured figures are printed (`cargo test -p netsim --release --test tear --
//! --nocapture`) and quoted in docs/tear.md.

mod common;

use common::{cov_time, last, mean, simulate, state, two_nodes, two_nodes_over};
use netsim::results::FlowResult;
use netsim::scenario::Scenario;

/// TEAR with the defaults (yang2001's version, with the receiver timeout).
const TEAR: &str = r#"kind = "tear""#;

/// TFRC as in the paper's ns-2 code (the same as tests/models.rs).
const TFRC: &str = r#"kind = "tfrc"
preset = "floyd2000""#;

/// A `[[losses]]` schedule on [`two_nodes`]'s link `ab`: `before` until `at`, then `after`
/// (each a model's keys, e.g. `kind = "periodic"\nevery = 25`).
fn step(at: &str, before: &str, after: &str) -> String {
    format!(
        "[[losses]]\nlink = \"ab\"\nkind = \"schedule\"\n\
         [[losses.steps]]\nat = \"0s\"\n{before}\n\
         [[losses.steps]]\nat = \"{at}\"\n{after}\n"
    )
}

/// Packets sent in each bin, as floats.
fn sent(flow: &FlowResult) -> Vec<f64> {
    flow.record
        .bins
        .sent_packets
        .to_vec()
        .iter()
        .map(|&n| f64::from(n))
        .collect()
}

/// The least-squares slope of `y` against its index.
fn slope(y: &[f64]) -> f64 {
    let n = y.len() as f64;
    let mx = (n - 1.0) / 2.0;
    let my = mean(y);
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, v) in y.iter().enumerate() {
        let dx = i as f64 - mx;
        sxy += dx * (v - my);
        sxx += dx * dx;
    }
    sxy / sxx
}

/// Issue 5, test 1 (smoothness): CoV_time of the per-RTT sending rate at 1% Bernoulli loss,
/// measured as tests/models.rs measures TCP, GAIMD and TFRC (100 ms bins on the 100 ms path,
/// 20 s warm-up, 320 s, 8 seeds). yang2001 Fig. 6 measures 0.22 and predicts 0.21.
#[test]
fn cov_time_at_one_percent_loss_matches_yang2001() {
    let tear = cov_time(TEAR, 1..=8);
    println!("TEAR CoV_time at 1% Bernoulli loss: {tear:.3} (yang2001: 0.22)");
    assert!((0.15..=0.35).contains(&tear), "TEAR CoV_time {tear}");
}

/// The rate increase in packets/RTT per RTT after the loss rate steps from 4% to 1% (periodic,
/// one drop every 25 then every 100 packets) at 60 s: the least-squares slope of the per-RTT
/// packet counts over the first `rtts` RTTs after the step, and the mean rates before the
/// step and at the end, in packets/RTT.
fn aggressiveness(agent: &str, rtts: usize) -> (f64, f64, f64) {
    let losses = step(
        "60s",
        "kind = \"periodic\"\nevery = 25",
        "kind = \"periodic\"\nevery = 100",
    );
    let results = simulate(&two_nodes("110s", "100ms", agent, &losses), 1);
    let rate = sent(results.flow("f").expect("the flow"));
    let before = mean(&rate[400..600]);
    let after = mean(&rate[1000..1100]);
    (slope(&rate[600..600 + rtts]), before, after)
}

/// Issue 5, test 1 (aggressiveness): after the step TEAR's rate rises more slowly than TFRC's
/// (yang2001 Table I: 0.08 against 0.12 packets/RTT per RTT; the analysis bounds TEAR by 1/12).
#[test]
fn tear_is_less_aggressive_than_tfrc_after_a_step_down_in_loss() {
    let (tear, tear_before, tear_after) = aggressiveness(TEAR, 40);
    let (tfrc, tfrc_before, tfrc_after) = aggressiveness(TFRC, 40);
    println!(
        "increase after 4% -> 1% periodic loss, packets/RTT per RTT over 40 RTTs: TEAR {tear:.3} \
         ({tear_before:.1} -> {tear_after:.1} pkt/RTT), TFRC {tfrc:.3} ({tfrc_before:.1} -> \
         {tfrc_after:.1} pkt/RTT)"
    );
    assert!(tear > 0.0 && tear < tfrc, "TEAR {tear}, TFRC {tfrc}");
    assert!(
        tear <= 1.0 / 12.0 + 0.02,
        "TEAR {tear} above yang2001's bound"
    );
    // The new level is higher for both (about twice, as sqrt(4)).
    assert!(tear_after > 1.5 * tear_before && tfrc_after > 1.5 * tfrc_before);
}

/// A run with Bernoulli loss 0.5% until 60 s and 100% from then on (yang2001 Fig. 17), 1 s bins;
/// the sender's rate in bits/s per bin.
fn total_loss(agent: &str) -> (Vec<f64>, FlowResult) {
    let losses = step(
        "60s",
        "kind = \"bernoulli\"\np = 0.005",
        "kind = \"bernoulli\"\np = 1.0",
    );
    let results = simulate(&two_nodes("120s", "1s", agent, &losses), 1);
    let flow = results.flow("f").expect("the flow").clone();
    (state(&flow, "rate_bps").to_vec(), flow)
}

/// Issue 5, test 2: at 100% forward loss the receiver's emulated timeouts (backed off) push
/// ever smaller epochs into the history and feed the lower rate back, so the sender slows down,
/// slowly; without the timeout (the authors' code, preset `ncsu`) nothing reaches the receiver,
/// no feedback comes, and the rate stays flat. The sender's optional no-feedback halving makes
/// even the `ncsu` variant slow down (yang2001's suggestion).
#[test]
fn total_loss_slows_tear_only_through_its_timeout() {
    let (with, flow) = total_loss(TEAR);
    let at_step = with[59];
    println!(
        "100% loss from 60 s, rate in Mb/s at 60, 65, 70, 90, 120 s: {:.3} {:.3} {:.3} {:.3} {:.3} \
         ({} emulated timeouts)",
        at_step / 1e6,
        with[64] / 1e6,
        with[69] / 1e6,
        with[89] / 1e6,
        with[119] / 1e6,
        last(&flow, "rx_timeouts")
    );
    assert!(with[64] < at_step && with[89] < with[69] && with[119] < 0.5 * at_step);
    assert!(with.windows(2).skip(60).all(|w| w[1] <= w[0]), "{with:?}");
    assert!(last(&flow, "rx_timeouts") >= 4.0);

    let (without, flow) = total_loss("kind = \"tear\"\npreset = \"ncsu\"");
    // Feedback still in flight at the step lands in the next bin; then nothing changes.
    assert!(
        without[61..].iter().all(|&r| r == without[60]),
        "{without:?}"
    );
    assert_eq!(last(&flow, "rx_timeouts"), 0.0);

    let (halving, flow) =
        total_loss("kind = \"tear\"\npreset = \"ncsu\"\nnofeedback_halving = true");
    assert!(halving[119] < 0.01 * halving[59], "{halving:?}");
    assert!(last(&flow, "nofeedback_halvings") >= 7.0);
}

/// Same scenario and seed: bit-identical results; the flow is named by kind and preset.
#[test]
fn runs_are_deterministic() {
    let text = two_nodes("20s", "100ms", TEAR, &common::bernoulli_on_ab(0.02));
    let a = simulate(&text, 7);
    let b = simulate(&text, 7);
    assert_eq!(a, b);
    let c = simulate(&text, 8);
    assert_ne!(a.flow("f").unwrap().record, c.flow("f").unwrap().record);
    let f = a.flow("f").unwrap();
    assert_eq!((f.kind.as_str(), f.variant.as_str()), ("tear", "yang2001"));
}

/// Alone on a 10 Mb/s DropTail bottleneck (RTT 40 ms, 50-packet buffer, about one
/// bandwidth-delay product) TEAR fills the link: the queue overflows now and then, the
/// receiver halves its window and the average keeps the rate near the capacity.
#[test]
fn an_uncongested_path_is_filled() {
    let text = two_nodes_over("10Mbps", "20ms", 50, "60s", "1s", "kind = \"tear\"", "");
    let results = simulate(&text, 1);
    let flow = results.flow("f").unwrap();
    let delivered: u64 = flow.record.bins.received_packets.to_vec()[20..]
        .iter()
        .map(|&n| u64::from(n))
        .sum();
    let utilisation = delivered as f64 * 8000.0 / (40.0 * 10e6);
    println!(
        "TEAR alone on 10 Mb/s: utilisation {utilisation:.3}, {} window halvings, {} timeouts",
        last(flow, "rx_loss_reactions"),
        last(flow, "rx_timeouts")
    );
    assert!(utilisation > 0.8, "{utilisation}");
    assert!(last(flow, "rx_loss_reactions") > 0.0);
}

/// Scenario errors name the TEAR key, the expectation and the value.
#[test]
fn scenario_errors_name_the_tear_keys() {
    let cases = [
        (
            "timeout = \"yes\"",
            "flows[0].timeout: expected true or false, found \"yes\"",
        ),
        (
            "feedback = \"per_packet\"",
            "flows[0].feedback: expected one of \"per_rtt\", \"per_round\", found \"per_packet\"",
        ),
        (
            "rtt_ewma_q = 1.5",
            "flows[0].rtt_ewma_q: expected a number in [0, 1), found 1.5",
        ),
        (
            "nofeedback_rtts = 0",
            "flows[0].nofeedback_rtts: expected at least 1, found 0",
        ),
        (
            "epoch = 8",
            "flows[0].epoch: unknown key; did you mean `epochs`?",
        ),
    ];
    for (key, expected) in cases {
        let text = two_nodes("1s", "100ms", &format!("{TEAR}\n{key}"), "");
        let error = Scenario::from_toml_str(&text).unwrap_err().to_string();
        assert_eq!(error, expected, "{key}");
    }
}
