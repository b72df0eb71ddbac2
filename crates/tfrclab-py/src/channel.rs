//! The `tfrc` crate's entry points: the throughput equation and one TFRC flow over the scripted
//! channel of `tfrc::harness` (the `tfrclab demo` run). Results cross as numpy arrays, one
//! float64 column per record field.

use numpy::IntoPyArray;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use tfrc::equation::{throughput_bytes_per_s, EquationShape};
use tfrc::harness::{ChannelConfig, FeedbackRecord, Harness, LossPattern, LossSchedule};
use tfrc::time::{duration_from_secs, Time};
use tfrc::TfrcConfig;

use crate::errors::config_error;

/// The allowed rate X in bytes/s from the TCP throughput equation (RFC 5348 §3.1).
///
/// `t_rto_s=None` uses t_RTO = 4R; `cap_rto_term` caps 3*sqrt(3bp/8) at 1 (ns-2). p = 0 gives
/// infinity; the Python wrapper `tfrclab.equation.allowed_rate` checks the ranges.
#[pyfunction]
#[pyo3(signature = (size_bytes, rtt_s, p, b = 1.0, t_rto_s = None, cap_rto_term = false))]
pub(crate) fn equation(
    size_bytes: f64,
    rtt_s: f64,
    p: f64,
    b: f64,
    t_rto_s: Option<f64>,
    cap_rto_term: bool,
) -> f64 {
    let shape = EquationShape { b, cap_rto_term };
    throughput_bytes_per_s(shape, size_bytes, rtt_s, t_rto_s.unwrap_or(4.0 * rtt_s), p)
}

/// A result column: its name and how to read it from a record.
type Column = (&'static str, fn(&FeedbackRecord) -> f64);

/// The float64 columns of a run's result, in order.
const COLUMNS: [Column; 10] = [
    ("time_s", |r| r.time.as_secs_f64()),
    ("x_bytes_per_s", |r| r.x_bytes_per_s),
    ("x_calc_bytes_per_s", |r| r.x_calc_bytes_per_s),
    ("x_recv_bytes_per_s", |r| r.x_recv_bytes_per_s),
    ("p", |r| r.p),
    ("rtt_s", |r| r.rtt_s),
    ("last_interval_packets", |r| r.last_interval_packets),
    ("mean_interval_packets", |r| r.mean_interval_packets),
    ("discount_factor", |r| r.discount_factor),
    ("open_interval_packets", |r| r.open_interval_packets),
];

/// The pattern names `run_channel` accepts, for error messages.
const PATTERN_NAMES: &str = "\"none\", \"all\", \"periodic\" or \"bernoulli\"";

/// One schedule entry's loss pattern from its name and parameter.
fn loss_pattern(name: &str, parameter: f64) -> PyResult<LossPattern> {
    match name {
        "none" => Ok(LossPattern::None),
        "all" => Ok(LossPattern::All),
        "periodic" => {
            if !(parameter.is_finite() && parameter >= 1.0 && parameter.fract() == 0.0) {
                return Err(PyValueError::new_err(format!(
                    "periodic loss needs a whole number `every` >= 1 (one packet dropped in \
                     every `every`), got {parameter}"
                )));
            }
            let every = parameter as u64;
            // Drop the every-th packet (sequence numbers every-1, 2*every-1, ...), not the first.
            Ok(LossPattern::Periodic {
                every,
                phase: every - 1,
            })
        }
        "bernoulli" => {
            if !(0.0..=1.0).contains(&parameter) {
                return Err(PyValueError::new_err(format!(
                    "bernoulli loss needs a drop probability p in [0, 1], got {parameter}"
                )));
            }
            Ok(LossPattern::Bernoulli { p: parameter })
        }
        other => Err(PyValueError::new_err(format!(
            "unknown loss pattern {other:?}: expected {PATTERN_NAMES}"
        ))),
    }
}

/// A data-loss schedule from `(start_s, pattern, parameter)` entries (any order: the schedule
/// sorts them by start time).
fn loss_schedule(entries: &[(f64, String, f64)]) -> PyResult<LossSchedule> {
    let steps = entries
        .iter()
        .map(|(start_s, name, parameter)| {
            let start = Time::from_secs_f64(seconds("schedule start time", *start_s)?);
            Ok((start, loss_pattern(name, *parameter)?))
        })
        .collect::<PyResult<Vec<_>>>()?;
    Ok(LossSchedule::new(steps))
}

/// A non-negative, finite number of seconds, or a ValueError naming the argument.
fn seconds(name: &str, value: f64) -> PyResult<f64> {
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        Err(PyValueError::new_err(format!(
            "{name} must be a finite, non-negative number of seconds, got {value}"
        )))
    }
}

/// What a finished run hands back across the GIL boundary.
struct RunOutput {
    columns: Vec<Vec<f64>>,
    packets_sent: u64,
    packets_delivered: u64,
}

/// Runs one TFRC flow over the scripted channel of `tfrc::harness` and returns its feedback
/// records as columns.
///
/// `schedule` lists `(start_s, pattern, parameter)` for the data direction: pattern "none",
/// "all", "periodic" (parameter: drop one packet in every `parameter`) or "bernoulli"
/// (parameter: drop probability). Before the first entry nothing is lost; feedback is never
/// lost. The result maps each record field to a float64 array (see `COLUMNS`) plus the scalars
/// `packets_sent`, `packets_delivered` and `segment_size_bytes`. The GIL is released while the
/// simulation runs.
#[pyfunction]
#[pyo3(signature = (preset, forward_delay_s, reverse_delay_s, schedule, duration_s, seed = 0))]
pub(crate) fn run_channel<'py>(
    py: Python<'py>,
    preset: &str,
    forward_delay_s: f64,
    reverse_delay_s: f64,
    schedule: Vec<(f64, String, f64)>,
    duration_s: f64,
    seed: u64,
) -> PyResult<Bound<'py, PyDict>> {
    let config = TfrcConfig::preset(preset).map_err(config_error)?;
    let segment_size_bytes = config.segment_size_bytes;
    let channel = ChannelConfig {
        forward_delay: duration_from_secs(seconds("forward_delay_s", forward_delay_s)?),
        reverse_delay: duration_from_secs(seconds("reverse_delay_s", reverse_delay_s)?),
        data_loss: loss_schedule(&schedule)?,
        feedback_loss: LossSchedule::constant(LossPattern::None),
        seed,
    };
    let end = Time::from_secs_f64(seconds("duration_s", duration_s)?);

    let output = py
        .detach(move || -> Result<RunOutput, tfrc::ConfigError> {
            let mut harness = Harness::new(config, channel)?;
            harness.run_until(end);
            let records = harness.records();
            Ok(RunOutput {
                columns: COLUMNS
                    .iter()
                    .map(|(_, field)| records.iter().map(field).collect())
                    .collect(),
                packets_sent: harness.packets_sent(),
                packets_delivered: harness.packets_delivered(),
            })
        })
        .map_err(config_error)?;

    let result = PyDict::new(py);
    for ((name, _), column) in COLUMNS.iter().zip(output.columns) {
        result.set_item(*name, column.into_pyarray(py))?;
    }
    result.set_item("packets_sent", output.packets_sent)?;
    result.set_item("packets_delivered", output.packets_delivered)?;
    result.set_item("segment_size_bytes", segment_size_bytes)?;
    Ok(result)
}
