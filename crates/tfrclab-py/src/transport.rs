//! `tfrc-udp` sessions from Python: `run_send` and `run_recv` run a TFRC sender or receiver over
//! a real UDP socket for a while, with the GIL released, calling back with each per-interval
//! sample and returning them all with the session's counters. Ctrl-C ends a session early (the
//! result says so) instead of losing what it measured.

use std::time::Duration;

use pyo3::exceptions::{PyKeyboardInterrupt, PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use tfrc::time::duration_from_secs;
use tfrc::{TfrcConfig, Time};
use tfrc_udp::samples::MAX_SAMPLES;
use tfrc_udp::{
    InputStats, ReceiverOptions, ReceiverReport, ReceiverSample, SenderOptions, SenderReport,
    SenderSample, Source, TransportError, UdpReceiver, UdpSender,
};

use crate::errors::config_error;

/// How long the session runs between looks at Python's signal handlers.
const SLICE: Duration = Duration::from_millis(100);

/// The longest session (the crate's 24 hours).
const MAX_DURATION_S: f64 = 24.0 * 3600.0;

/// A transport error as a Python exception: a bad option is a `ValueError` naming it, a failed
/// system call an `OSError` naming the step.
pub(crate) fn transport_error(err: TransportError) -> PyErr {
    match err {
        TransportError::Option(err) => {
            // Named as the Python argument that set it.
            let name = match err.field {
                "segment_size_bytes" => "size_bytes",
                "app_rate" => "app_rate_bps",
                "stats_interval" => "stats_interval_s",
                other => other,
            };
            PyValueError::new_err(format!(
                "{name}: expected {}, found {}",
                err.expected, err.found
            ))
        }
        other => PyOSError::new_err(other.to_string()),
    }
}

fn check_duration(duration_s: f64) -> PyResult<Duration> {
    if !(duration_s.is_finite() && duration_s > 0.0 && duration_s <= MAX_DURATION_S) {
        return Err(PyValueError::new_err(format!(
            "duration: expected more than 0 s and at most 24 h, found {duration_s} s"
        )));
    }
    Ok(duration_from_secs(duration_s))
}

/// The sampling interval, checked against the session's duration: a session keeps at most
/// `MAX_SAMPLES` samples, so every interval it runs is reported.
fn check_interval(interval_s: f64, duration_s: f64) -> PyResult<Duration> {
    if !(interval_s.is_finite() && interval_s > 0.0) {
        return Err(PyValueError::new_err(format!(
            "stats_interval_s: expected a positive duration, found {interval_s} s"
        )));
    }
    if duration_s / interval_s > MAX_SAMPLES as f64 {
        return Err(PyValueError::new_err(format!(
            "stats_interval_s: expected at least duration/{MAX_SAMPLES} = {} s (a session keeps \
             at most {MAX_SAMPLES} samples), found {interval_s} s",
            duration_s / MAX_SAMPLES as f64
        )));
    }
    Ok(duration_from_secs(interval_s))
}

fn sender_sample<'py>(py: Python<'py>, s: &SenderSample) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("time_s", s.time_s)?;
    d.set_item("sent_packets", s.sent_packets)?;
    d.set_item("sent_bytes", s.sent_bytes)?;
    d.set_item("queue_drops", s.queue_drops)?;
    d.set_item("queue_expired", s.queue_expired)?;
    d.set_item("x_bytes_per_s", s.x_bytes_per_s)?;
    d.set_item("x_recv_bytes_per_s", s.x_recv_bytes_per_s)?;
    d.set_item("p", s.p)?;
    d.set_item("rtt_s", s.rtt_s)?;
    d.set_item("feedback_accepted", s.feedback_accepted)?;
    d.set_item("feedback_rejected", s.feedback_rejected)?;
    d.set_item("input_dropped", s.input_dropped)?;
    d.set_item("nofeedback_expiries", s.nofeedback_expiries)?;
    Ok(d)
}

fn receiver_sample<'py>(py: Python<'py>, s: &ReceiverSample) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("time_s", s.time_s)?;
    d.set_item("received_packets", s.received_packets)?;
    d.set_item("received_bytes", s.received_bytes)?;
    d.set_item("lost_packets", s.lost_packets)?;
    d.set_item("loss_events", s.loss_events)?;
    d.set_item("p", s.p)?;
    d.set_item("x_recv_bytes_per_s", s.x_recv_bytes_per_s)?;
    d.set_item("rtt_s", s.rtt_s)?;
    d.set_item("feedback_sent", s.feedback_sent)?;
    d.set_item("input_dropped", s.input_dropped)?;
    Ok(d)
}

fn input_dict<'py>(py: Python<'py>, input: &InputStats) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("datagrams", input.datagrams)?;
    d.set_item("foreign_source", input.foreign_source)?;
    d.set_item("wrong_kind", input.wrong_kind)?;
    d.set_item("other_session", input.other_session)?;
    d.set_item("socket_errors", input.socket_errors)?;
    d.set_item("truncated", input.wire.truncated)?;
    d.set_item("bad_version", input.wire.bad_version)?;
    d.set_item("bad_type", input.wire.bad_type)?;
    d.set_item("bad_field", input.wire.bad_field)?;
    d.set_item("bad_length", input.wire.bad_length)?;
    d.set_item("malformed_other", input.wire.other)?;
    d.set_item("dropped", input.dropped())?;
    Ok(d)
}

/// A sender's counters as a dict: its totals, X, X_calc, X_recv, p, R and t_RTO, the
/// application queue's counters and the `input` ledger.
pub(crate) fn sender_report_dict<'py>(
    py: Python<'py>,
    report: &SenderReport,
) -> PyResult<Bound<'py, PyDict>> {
    let r = PyDict::new(py);
    r.set_item("time_s", report.time.as_secs_f64())?;
    r.set_item("packets_sent", report.packets_sent)?;
    r.set_item("bytes_sent", report.bytes_sent)?;
    r.set_item("send_errors", report.send_errors)?;
    r.set_item(
        "last_send_error",
        report
            .last_send_errno
            .map(|code| std::io::Error::from_raw_os_error(code).to_string()),
    )?;
    r.set_item("queue_drops", report.queue_drops)?;
    r.set_item("queued", report.queued)?;
    let queue = &report.queue;
    r.set_item("queue_accepted", queue.queued)?;
    r.set_item("queue_expired", queue.expired)?;
    r.set_item("queue_flushed", queue.flushed)?;
    r.set_item("queue_sent", queue.sent)?;
    r.set_item("cpu_s", report.cpu_s)?;
    let tfrc = &report.tfrc;
    r.set_item("x_bytes_per_s", tfrc.x_bytes_per_s)?;
    r.set_item("x_calc_bytes_per_s", tfrc.x_calc_bytes_per_s)?;
    r.set_item("x_recv_bytes_per_s", tfrc.x_recv_bytes_per_s)?;
    r.set_item("p", tfrc.p)?;
    r.set_item("rtt_s", tfrc.rtt_s)?;
    r.set_item("t_rto_s", tfrc.t_rto_s)?;
    r.set_item("slow_start", tfrc.slow_start)?;
    r.set_item("nofeedback_expiries", tfrc.nofeedback_expiries)?;
    let feedback = &tfrc.feedback;
    r.set_item("feedback_accepted", feedback.accepted)?;
    r.set_item("feedback_bad_field", feedback.bad_field)?;
    r.set_item("feedback_echo_from_future", feedback.echo_from_future)?;
    r.set_item("feedback_replayed", feedback.replayed)?;
    r.set_item("feedback_unknown_echo", feedback.unknown_echo)?;
    r.set_item(
        "feedback_delay_exceeds_elapsed",
        feedback.delay_exceeds_elapsed,
    )?;
    r.set_item("input", input_dict(py, &report.input)?)?;
    Ok(r)
}

/// A receiver's counters as a dict: its totals over all sessions, p, X_recv and R of the
/// current one, and the `input` ledger.
pub(crate) fn receiver_report_dict<'py>(
    py: Python<'py>,
    report: &ReceiverReport,
) -> PyResult<Bound<'py, PyDict>> {
    let r = PyDict::new(py);
    r.set_item("time_s", report.time.as_secs_f64())?;
    r.set_item("sessions", report.sessions)?;
    r.set_item("peer_changes", report.peer_changes)?;
    r.set_item("packets_received", report.packets_received)?;
    r.set_item("bytes_received", report.bytes_received)?;
    r.set_item("packets_lost", report.packets_lost)?;
    r.set_item("feedback_sent", report.feedback_sent)?;
    r.set_item("send_errors", report.send_errors)?;
    r.set_item("p", report.tfrc.p)?;
    r.set_item("x_recv_bytes_per_s", report.tfrc.x_recv_bytes_per_s)?;
    r.set_item("rtt_s", report.tfrc.rtt_s)?;
    r.set_item("loss_events", report.tfrc.loss_events)?;
    r.set_item("peer", report.peer.map(|p| p.to_string()))?;
    r.set_item("input", input_dict(py, &report.input)?)?;
    Ok(r)
}

/// A session `drive` can step: a sender or a receiver.
trait Session: Send {
    /// The session's clock (zero when the session was made; its sample intervals start there).
    fn now(&self) -> Time;
    /// Runs until `end` on the session's clock (or until stopped).
    fn step(&mut self, end: Time) -> Result<(), TransportError>;
    /// Samples taken so far.
    fn sample_count(&self) -> usize;
    /// Sample `i` as a dict.
    fn sample<'py>(&self, py: Python<'py>, i: usize) -> PyResult<Bound<'py, PyDict>>;
}

impl Session for UdpSender {
    fn now(&self) -> Time {
        self.clock().now()
    }
    fn step(&mut self, end: Time) -> Result<(), TransportError> {
        self.run_until(end)
    }
    fn sample_count(&self) -> usize {
        self.samples().len()
    }
    fn sample<'py>(&self, py: Python<'py>, i: usize) -> PyResult<Bound<'py, PyDict>> {
        sender_sample(py, &self.samples()[i])
    }
}

impl Session for UdpReceiver {
    fn now(&self) -> Time {
        self.clock().now()
    }
    fn step(&mut self, end: Time) -> Result<(), TransportError> {
        // Payloads are counted, not kept: the Python session measures the flow.
        self.run_until(end, &mut |_| {})
    }
    fn sample_count(&self) -> usize {
        self.samples().len()
    }
    fn sample<'py>(&self, py: Python<'py>, i: usize) -> PyResult<Bound<'py, PyDict>> {
        receiver_sample(py, &self.samples()[i])
    }
}

/// Runs `session` in slices of [`SLICE`] with the GIL released until `duration` on its own clock
/// (so the session ends exactly where its last statistics interval does, and no packet falls
/// after the last sample), handing each new sample to `on_sample` (and `list`) after each slice
/// and running Python's signal handlers. Returns whether Ctrl-C ended it early.
fn drive<'py>(
    py: Python<'py>,
    session: &mut impl Session,
    on_sample: Option<&Bound<'py, PyAny>>,
    duration: Duration,
    list: &Bound<'py, PyList>,
) -> PyResult<bool> {
    let end = Time::ZERO + duration;
    let mut seen = 0;
    loop {
        let now = session.now();
        if now >= end {
            return Ok(false);
        }
        let slice_end = end.min(now + SLICE);
        py.detach(|| session.step(slice_end))
            .map_err(transport_error)?;
        let count = session.sample_count();
        for i in seen..count {
            let d = session.sample(py, i)?;
            list.append(&d)?;
            if let Some(callback) = on_sample {
                callback.call1((d,))?;
            }
        }
        seen = count;
        if let Err(err) = py.check_signals() {
            if err.is_instance_of::<PyKeyboardInterrupt>(py) {
                return Ok(true);
            }
            return Err(err);
        }
    }
}

/// The address family's wildcard for a socket that sends to `to`.
pub(crate) fn wildcard_for(py: Python<'_>, to: &str) -> PyResult<String> {
    let resolved = py
        .detach(|| std::net::ToSocketAddrs::to_socket_addrs(to))
        .map_err(|err| PyValueError::new_err(format!("to: cannot resolve {to:?}: {err}")))?
        .next()
        .ok_or_else(|| PyValueError::new_err(format!("to: {to:?} has no address")))?;
    Ok(if resolved.is_ipv4() {
        "0.0.0.0:0"
    } else {
        "[::]:0"
    }
    .to_owned())
}

/// Sends a TFRC flow to `to` for `duration_s` seconds (see the stub for the arguments and the
/// result's layout). `app_rate_bps=None` sends greedily. `oscillation_prevention` overrides the
/// preset's sqrt(RTT) inter-packet spacing (RFC 5348 §4.5; Floyd et al. 2000 §3.4, Figs. 3-4);
/// `None` keeps the preset's.
#[pyfunction]
#[pyo3(signature = (to, duration_s, preset = "rfc5348", size_bytes = 1000, app_rate_bps = None,
                    bind = None, stats_interval_s = 1.0, on_sample = None,
                    oscillation_prevention = None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_send<'py>(
    py: Python<'py>,
    to: &str,
    duration_s: f64,
    preset: &str,
    size_bytes: u32,
    app_rate_bps: Option<f64>,
    bind: Option<&str>,
    stats_interval_s: f64,
    on_sample: Option<&Bound<'py, PyAny>>,
    oscillation_prevention: Option<bool>,
) -> PyResult<Bound<'py, PyDict>> {
    let duration = check_duration(duration_s)?;
    let mut config = TfrcConfig::preset(preset).map_err(config_error)?;
    config.segment_size_bytes = size_bytes;
    if let Some(on) = oscillation_prevention {
        config.oscillation_prevention = on;
    }
    let mut options = SenderOptions::new(config);
    options.stats_interval = check_interval(stats_interval_s, duration_s)?;
    options.source = match app_rate_bps {
        None => Source::Greedy,
        Some(bps) => Source::ConstantRate {
            bytes_per_s: bps / 8.0,
        },
    };
    let bind = match bind {
        Some(b) => b.to_owned(),
        None => wildcard_for(py, to)?,
    };
    let mut sender = py
        .detach(|| UdpSender::bind(bind.as_str(), to, options))
        .map_err(transport_error)?;
    let out = PyDict::new(py);
    out.set_item("role", "send")?;
    out.set_item(
        "local_addr",
        sender.local_addr().map_err(transport_error)?.to_string(),
    )?;
    out.set_item("peer", sender.peer().to_string())?;
    let list = PyList::empty(py);
    let interrupted = drive(py, &mut sender, on_sample, duration, &list)?;
    let report = sender.report();
    out.set_item("interrupted", interrupted)?;
    out.set_item("samples", list)?;
    let r = sender_report_dict(py, &report)?;
    out.set_item("report", r)?;
    Ok(out)
}

/// Receives a TFRC flow on `bind` for `duration_s` seconds (see the stub).
#[pyfunction]
#[pyo3(signature = (bind, duration_s, preset = "rfc5348", stats_interval_s = 1.0,
                    on_sample = None))]
pub(crate) fn run_recv<'py>(
    py: Python<'py>,
    bind: &str,
    duration_s: f64,
    preset: &str,
    stats_interval_s: f64,
    on_sample: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let duration = check_duration(duration_s)?;
    let config = TfrcConfig::preset(preset).map_err(config_error)?;
    let mut options = ReceiverOptions::new(config);
    options.stats_interval = check_interval(stats_interval_s, duration_s)?;
    let mut receiver = py
        .detach(|| UdpReceiver::bind(bind, options))
        .map_err(transport_error)?;
    let out = PyDict::new(py);
    out.set_item("role", "recv")?;
    out.set_item(
        "local_addr",
        receiver.local_addr().map_err(transport_error)?.to_string(),
    )?;
    let list = PyList::empty(py);
    let interrupted = drive(py, &mut receiver, on_sample, duration, &list)?;
    let report = receiver.report();
    out.set_item("peer", report.peer.map(|p| p.to_string()))?;
    out.set_item("interrupted", interrupted)?;
    out.set_item("samples", list)?;
    let r = receiver_report_dict(py, &report)?;
    out.set_item("report", r)?;
    Ok(out)
}
