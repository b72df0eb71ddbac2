//! The link emulator's relay (crate `testbed`, docs/testbed.md): checking a relay configuration
//! and running the relay with the GIL released. `tfrclab.testbed` runs it in a subprocess.

use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use testbed::pipe::PipeStats;
use testbed::{Relay, RelayConfig, StopReason};

use crate::errors::scenario_error;

/// Checks a relay configuration (TOML text, docs/testbed.md); raises `ScenarioError` naming the
/// key at fault.
#[pyfunction]
pub(crate) fn testbed_check(py: Python<'_>, config: &str) -> PyResult<()> {
    RelayConfig::from_toml_str(config).map_err(|e| scenario_error(py, &e))?;
    Ok(())
}

/// Creates the relay's two TUN devices, calls `ready(start_monotonic_ns)`, then forwards packets
/// (GIL released) until standard input becomes readable or reaches end of file, or the
/// configuration's `max_duration` passes. Returns the run's counters as a dict. Raises
/// `ScenarioError` for a bad configuration and `OSError` when a device cannot be created (not
/// root, no /dev/net/tun, a name in use).
#[pyfunction]
pub(crate) fn testbed_relay<'py>(
    py: Python<'py>,
    config: &str,
    ready: Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyDict>> {
    let config = RelayConfig::from_toml_str(config).map_err(|e| scenario_error(py, &e))?;
    let relay = Relay::open(config).map_err(|e| PyOSError::new_err(e.to_string()))?;
    let start = relay.start_monotonic_ns();
    ready.call1((start,))?;
    let report = py
        .detach(move || relay.run(std::io::stdin()))
        .map_err(|e| PyOSError::new_err(format!("relay: {e}")))?;
    let result = PyDict::new(py);
    result.set_item("forward", pipe_stats(py, &report.forward)?)?;
    result.set_item("reverse", pipe_stats(py, &report.reverse)?)?;
    result.set_item("elapsed_s", report.elapsed.as_secs_f64())?;
    let stopped = match report.stopped {
        StopReason::Requested => "requested",
        StopReason::MaxDuration => "max_duration",
    };
    result.set_item("stopped", stopped)?;
    result.set_item("start_monotonic_ns", start)?;
    result.set_item("log_records", report.log_records)?;
    result.set_item("log_records_dropped", report.log_records_dropped)?;
    result.set_item("log_error", report.log_error)?;
    result.set_item("wakeups", report.wakeups)?;
    Ok(result)
}

/// One direction's counters, with lateness quantiles in µs (None when nothing departed).
fn pipe_stats<'py>(py: Python<'py>, stats: &PipeStats) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("arrivals", stats.arrivals)?;
    d.set_item("loss_drops", stats.loss_drops)?;
    d.set_item("queue_drops", stats.queue_drops)?;
    d.set_item("marks", stats.marks)?;
    d.set_item("departures", stats.departures)?;
    d.set_item("departed_bytes", stats.departed_bytes)?;
    d.set_item("write_errors", stats.write_errors)?;
    d.set_item("max_queue_packets", stats.max_queue_packets)?;
    d.set_item("lateness_p50_us", stats.lateness.quantile_us(0.5))?;
    d.set_item("lateness_p99_us", stats.lateness.quantile_us(0.99))?;
    d.set_item("lateness_max_us", stats.lateness.max_ns() as f64 / 1000.0)?;
    Ok(d)
}
