//! Helpers shared by the integration tests that run scenario texts and read the results.
#![allow(dead_code)] // each test file uses its own subset

use netsim::results::{FlowResult, Results};
use netsim::scenario::{run, Scenario};

/// Parses `text` and runs it with `seed`, panicking with the error and the text on failure.
pub fn simulate(text: &str, seed: u64) -> Results {
    let scenario = Scenario::from_toml_str(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    run(&scenario, seed).unwrap()
}

/// One field of a flow's state trace, one value per bin.
pub fn state(flow: &FlowResult, field: &str) -> Vec<f64> {
    let state = &flow.record.state;
    let i = state
        .fields
        .iter()
        .position(|f| *f == field)
        .unwrap_or_else(|| panic!("no field {field} in {:?}", state.fields));
    state.values().swap_remove(i)
}

/// The last value of a state field (the run's final value of a cumulative counter).
pub fn last(flow: &FlowResult, field: &str) -> f64 {
    *state(flow, field).last().expect("at least one bin")
}

/// The arithmetic mean.
pub fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

/// Coefficient of variation (population standard deviation / mean).
pub fn cov(samples: &[f64]) -> f64 {
    let m = mean(samples);
    let var = samples.iter().map(|x| (x - m).powi(2)).sum::<f64>() / samples.len() as f64;
    var.sqrt() / m
}

/// One flow `f` from `a` to `b` over a 100 Mb/s link named `ab` with 50 ms each way (R = 100.1
/// ms with serialization), and a queue that never overflows, so that only loss models drop: the setting of floyd2000 Appendix A
/// and of yang2001's loss-model experiments. `flow` holds the flow's protocol keys (`kind` and
/// its own keys); `extra` is appended after them (more flow keys, then `[[losses]]` tables).
pub fn two_nodes(duration: &str, bin: &str, flow: &str, extra: &str) -> String {
    two_nodes_over("100Mbps", "50ms", 100_000, duration, bin, flow, extra)
}

/// [`two_nodes`] over a link `ab` of the given rate, one-way delay and DropTail limit (packets).
pub fn two_nodes_over(
    rate: &str,
    delay: &str,
    limit: u32,
    duration: &str,
    bin: &str,
    flow: &str,
    extra: &str,
) -> String {
    format!(
        r#"
duration = "{duration}"
[monitor]
bin = "{bin}"
[topology]
kind = "graph"
nodes = ["a", "b"]
[[topology.links]]
from = "a"
to = "b"
name = "ab"
rate = "{rate}"
delay = "{delay}"
queue = {{ kind = "droptail", limit = {limit} }}
[[flows]]
name = "f"
from = "a"
to = "b"
{flow}
{extra}
"#
    )
}

/// One flow `f` across a one-pair dumbbell whose bottleneck is `rate`, `delay` one way, with a queue of
/// `limit` packets; `flow` holds the flow's own keys.
pub fn one_flow(
    rate: &str,
    delay: &str,
    limit: u32,
    duration: &str,
    bin: &str,
    flow: &str,
) -> String {
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

/// A `[[losses]]` table dropping each packet on [`two_nodes`]'s link `ab` with probability `p`.
pub fn bernoulli_on_ab(p: f64) -> String {
    format!("[[losses]]\nlink = \"ab\"\nkind = \"bernoulli\"\np = {p}\n")
}

/// One flow alone on [`two_nodes`]'s path (RTT 100.1 ms, never queueing), with a
/// Bernoulli loss model on its data direction.
pub fn lossy_path(agent: &str, p: f64, seconds: u64, bin: &str) -> String {
    two_nodes(&format!("{seconds}s"), bin, agent, &bernoulli_on_ab(p))
}

/// A flow's per-bin sending rates in packets per bin, from bin `from_bin` on.
pub fn sent_per_bin(flow: &FlowResult, from_bin: usize) -> Vec<f64> {
    flow.record.bins.sent_packets.to_vec()[from_bin..]
        .iter()
        .map(|&n| f64::from(n))
        .collect()
}

/// CoV_time (yang2001 §III-A): the coefficient of variation of the flow's sending rate sampled
/// once per RTT (bins of 100 ms on a path of RTT 100 ms), after a 20 s warm-up, averaged over
/// seeds.
pub fn cov_time(agent: &str, seeds: std::ops::RangeInclusive<u64>) -> f64 {
    let runs: Vec<f64> = seeds
        .map(|seed| {
            let results = simulate(&lossy_path(agent, 0.01, 320, "100ms"), seed);
            cov(&sent_per_bin(results.flow("f").expect("the flow"), 200))
        })
        .collect();
    runs.iter().sum::<f64>() / runs.len() as f64
}
