//! # tfrclab-py: the private extension module `tfrclab._native`
//!
//! Thin PyO3 bindings over the `tfrc` and `netsim` crates. They convert arguments and results
//! and check that values cross the boundary in range; every rule of the protocols and of the
//! simulator lives in those crates, and the typed, documented API users see lives in the Python
//! package `tfrclab`, which wraps these functions. Results cross as numpy arrays; the GIL is
//! released while simulating.
//!
//! - `channel`: the throughput equation and one TFRC flow over a scripted channel;
//! - `simulation`: netsim scenario runs;
//! - `controller`: congestion controllers written in Python, for netsim's TCP senders;
//! - `transport`: TFRC sessions over real UDP sockets (`tfrc-udp`);
//! - `events`: tfrc-udp's event log forwarded to a Python callable;
//! - `media`: long-lived `tfrc-udp` senders and receivers of the application's own payloads;
//! - `testbed`: the link emulator's relay (crate `testbed`);
//! - `units`: netsim's parsers of durations, rates and sizes;
//! - `errors`: the named exceptions Rust errors map to.

use pyo3::prelude::*;

mod channel;
mod controller;
mod errors;
mod events;
mod media;
mod simulation;
mod testbed;
mod transport;
mod units;

/// The version of the tfrclab crates this module was built from.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// How this module was built, as scripts/install.sh says while compiling it
/// (`TFRCLAB_PGO_BUILD`): `"profile-guided"` (built with a training profile), `"instrumented"`
/// (the build that records the profile, slower) or `"plain"`. Performance figures depend on
/// it; results do not (docs/performance.md).
#[pyfunction]
fn build() -> &'static str {
    match option_env!("TFRCLAB_PGO_BUILD") {
        Some("profile-guided") => "profile-guided",
        Some("instrumented") => "instrumented",
        _ => "plain",
    }
}

/// Private bindings of tfrclab; use the `tfrclab` package instead.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("ConfigError", py.get_type::<errors::ConfigError>())?;
    let scenario_error = py.get_type::<errors::ScenarioError>();
    for attribute in errors::SCENARIO_ERROR_ATTRIBUTES {
        scenario_error.setattr(attribute, py.None())?;
    }
    m.add("ScenarioError", scenario_error)?;
    let cost_error = py.get_type::<errors::CostError>();
    cost_error.setattr("estimate", py.None())?;
    m.add("CostError", cost_error)?;
    m.add("ControllerError", py.get_type::<errors::ControllerError>())?;
    m.add_class::<controller::PyState>()?;
    m.add_class::<controller::PyAck>()?;
    controller::register();
    m.add_function(wrap_pyfunction!(channel::equation, m)?)?;
    m.add_function(wrap_pyfunction!(channel::run_channel, m)?)?;
    m.add_function(wrap_pyfunction!(simulation::check_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(simulation::estimate, m)?)?;
    m.add_function(wrap_pyfunction!(simulation::decode_state, m)?)?;
    m.add_class::<simulation::Simulation>()?;
    m.add_function(wrap_pyfunction!(units::quantity, m)?)?;
    m.add_function(wrap_pyfunction!(simulation::queue_buffers, m)?)?;
    m.add_function(wrap_pyfunction!(simulation::on_off_schedules, m)?)?;
    m.add_function(wrap_pyfunction!(simulation::web_variables, m)?)?;
    m.add_function(wrap_pyfunction!(transport::run_send, m)?)?;
    m.add_function(wrap_pyfunction!(transport::run_recv, m)?)?;
    m.add("QueueFull", py.get_type::<errors::QueueFull>())?;
    m.add_class::<media::MediaSender>()?;
    m.add_class::<media::MediaReceiver>()?;
    m.add_function(wrap_pyfunction!(events::set_event_handler, m)?)?;
    m.add_function(wrap_pyfunction!(events::flush_events, m)?)?;
    m.add_function(wrap_pyfunction!(testbed::testbed_check, m)?)?;
    m.add_function(wrap_pyfunction!(testbed::testbed_relay, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(build, m)?)?;
    Ok(())
}
