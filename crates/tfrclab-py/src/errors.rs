//! The named Python exceptions Rust errors map to (design.md convention 4): `ConfigError` for a
//! TFRC configuration the library cannot run with, `ScenarioError` for a scenario file or table
//! netsim refused. Both derive from `ValueError`: the caller's input is at fault.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use netsim::scenario::{CostError as NetsimCostError, ScenarioError as NetsimScenarioError};

pyo3::create_exception!(
    tfrclab,
    ConfigError,
    PyValueError,
    "A TFRC configuration the library cannot run with, such as an unknown preset name."
);

pyo3::create_exception!(
    tfrclab,
    ScenarioError,
    PyValueError,
    "A scenario netsim refused. `str(err)` is one line naming the field at fault; the attributes \
     `kind` (\"syntax\", \"invalid\", \"missing\" or \"unknown_key\"), `path` (as written in the \
     file, e.g. `flows[2].start`; None for a syntax error), `expected`, `found` and `suggestion` \
     hold its parts (None where they do not apply)."
);

pyo3::create_exception!(
    tfrclab,
    CostError,
    ScenarioError,
    "A scenario refused before it runs because its run would cost more than the budget (about 10 \
     minutes of wall time or 4 GiB of memory): `str(err)` is one line naming the parts of the \
     scenario that dominate and how to lower them; `kind` is \"cost\", `path` the costliest \
     part (e.g. `flows[0]` or `monitor.bin`) and `estimate` the estimate as `tfrclab.estimate` \
     gives it. Run anyway with `force=True`."
);

pyo3::create_exception!(
    tfrclab,
    QueueFull,
    pyo3::exceptions::PyBufferError,
    "A media sender's payload queue holds its bound: the payload was dropped (and counted in \
     the statistics' `queue_drops`). An encoder that sees it is producing faster than the \
     allowed rate."
);

pyo3::create_exception!(
    tfrclab,
    ControllerError,
    pyo3::exceptions::PyRuntimeError,
    "A congestion controller (a scenario's `controller`, docs/controllers.md) misbehaved during \
     a run: it raised, returned something other than None or (cwnd, ssthresh[, pacing_rate]), or \
     a window that is not a finite number of at least one packet, or a callback did not return \
     within the flow's `controller_limit` of wall time. `str(err)` names the flow, the \
     controller, the callback and the simulated time; the run's results are discarded."
);

/// The attributes a `ScenarioError` carries, each None on the class so that every instance has
/// them (set per instance by [`scenario_error`]).
pub(crate) const SCENARIO_ERROR_ATTRIBUTES: [&str; 5] =
    ["kind", "path", "expected", "found", "suggestion"];

/// Converts the `tfrc` crate's configuration error into `tfrclab.ConfigError`, keeping its
/// message.
pub(crate) fn config_error(err: tfrc::ConfigError) -> PyErr {
    ConfigError::new_err(err.to_string())
}

/// Converts netsim's scenario error into `tfrclab.ScenarioError`: the one-line message, plus its
/// parts as attributes.
pub(crate) fn scenario_error(py: Python<'_>, err: &NetsimScenarioError) -> PyErr {
    let (kind, expected, found, suggestion) = match err {
        NetsimScenarioError::Syntax { .. } => ("syntax", None, None, None),
        NetsimScenarioError::Invalid {
            expected, found, ..
        } => (
            "invalid",
            Some(expected.as_str()),
            Some(found.as_str()),
            None,
        ),
        NetsimScenarioError::Missing { expected, .. } => {
            ("missing", Some(expected.as_str()), None, None)
        }
        NetsimScenarioError::UnknownKey { suggestion, .. } => {
            ("unknown_key", None, None, suggestion.as_deref())
        }
        // A variant added later: the message still names the field.
        _ => ("other", None, None, None),
    };
    let py_err = ScenarioError::new_err(err.to_string());
    let value = py_err.value(py);
    let attributes = [
        ("kind", Some(kind)),
        ("path", err.path()),
        ("expected", expected),
        ("found", found),
        ("suggestion", suggestion),
    ];
    for (name, attribute) in attributes {
        if let Err(set_failed) = value.setattr(name, attribute) {
            return set_failed;
        }
    }
    py_err
}

/// Converts netsim's cost refusal into `tfrclab.CostError` (a `ScenarioError`): the one-line
/// message, `kind` "cost", `path` the costliest part and `estimate` the estimate's dict.
pub(crate) fn cost_error(py: Python<'_>, err: &NetsimCostError, estimate: Py<PyAny>) -> PyErr {
    let py_err = CostError::new_err(err.to_string());
    let value = py_err.value(py);
    let attributes: [(&str, Option<&str>); 5] = [
        ("kind", Some("cost")),
        ("path", Some(&err.path)),
        ("expected", None),
        ("found", None),
        ("suggestion", None),
    ];
    for (name, attribute) in attributes {
        if let Err(set_failed) = value.setattr(name, attribute) {
            return set_failed;
        }
    }
    if let Err(set_failed) = value.setattr("estimate", estimate) {
        return set_failed;
    }
    py_err
}
