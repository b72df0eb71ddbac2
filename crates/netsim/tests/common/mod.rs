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
pub fn state<'a>(flow: &'a FlowResult, field: &str) -> &'a [f64] {
    let state = &flow.record.state;
    let i = state
        .fields
        .iter()
        .position(|f| *f == field)
        .unwrap_or_else(|| panic!("no field {field} in {:?}", state.fields));
    &state.values[i]
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
