//! The named Python exceptions Rust errors map to (design.md convention 4): `ConfigError` for a
//! TFRC configuration the library cannot run with, `ScenarioError` for a scenario file or table
//! netsim refused. Both derive from `ValueError`: the caller's input is at fault.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use netsim::scenario::ScenarioError as NetsimScenarioError;

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
