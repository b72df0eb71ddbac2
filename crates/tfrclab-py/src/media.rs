//! Media sessions from Python: a `tfrc-udp` sender or receiver whose loop runs on a thread of
//! its own for as long as the application keeps it open, while the application pushes its own
//! payloads (with deadlines and priorities), reads the allowed rate and the live statistics,
//! and takes deliveries with their sender timestamps. `tfrclab.media` wraps these classes.

use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use tfrc::time::duration_from_secs;
use tfrc::TfrcConfig;
use tfrc_udp::{
    BackgroundReceiver, BackgroundSender, Expired, QueueError, RateChange, ReceivedPayload,
    ReceiverHandle, ReceiverOptions, SendOptions, SenderHandle, SenderOptions, UdpReceiver,
    UdpSender, PRIORITY_LEVELS,
};

use crate::errors::{config_error, QueueFull};
use crate::transport::{receiver_report_dict, sender_report_dict, transport_error, wildcard_for};

/// How long a blocking wait runs between looks at Python's signal handlers.
const WAIT_SLICE: Duration = Duration::from_millis(100);

/// A mutex's contents even if a thread panicked holding it (each holds a channel end,
/// consistent between operations).
fn locked<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// An error if a session's loop is no longer running: OSError with the loop's error if it
/// failed, RuntimeError if it was closed.
fn closed_error<R>(outcome: Result<R, tfrc_udp::TransportError>) -> PyErr {
    match outcome {
        Err(err) => PyOSError::new_err(err.to_string()),
        Ok(_) => PyRuntimeError::new_err("the session is closed"),
    }
}

fn check_deadline(deadline_s: Option<f64>) -> PyResult<Option<Duration>> {
    match deadline_s {
        None => Ok(None),
        Some(s) if s.is_finite() && (0.0..=3600.0).contains(&s) => Ok(Some(duration_from_secs(s))),
        Some(s) => Err(PyValueError::new_err(format!(
            "deadline_s: expected 0 to 3600 s, found {s}"
        ))),
    }
}

fn rate_change_dict<'py>(py: Python<'py>, c: &RateChange) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("time_s", c.time.as_secs_f64())?;
    d.set_item("rate_bps", c.x_bytes_per_s * 8.0)?;
    d.set_item("p", c.p)?;
    d.set_item("rtt_s", c.rtt_s)?;
    Ok(d)
}

fn expired_dict<'py>(py: Python<'py>, e: &Expired) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("ticket", e.ticket)?;
    d.set_item("priority", e.priority)?;
    d.set_item("group", e.group)?;
    d.set_item("queued_s", e.queued.as_secs_f64())?;
    d.set_item("deadline_s", e.deadline.as_secs_f64())?;
    d.set_item("dropped_s", e.dropped.as_secs_f64())?;
    Ok(d)
}

/// A TFRC sender of the application's own payloads, its loop on a thread of its own.
#[pyclass(module = "tfrclab._native")]
pub(crate) struct MediaSender {
    handle: SenderHandle,
    session: BackgroundSender,
    rate_changes: Mutex<Receiver<RateChange>>,
    expirations: Mutex<Receiver<Expired>>,
    local_addr: String,
    peer: String,
}

impl MediaSender {
    /// An error if the loop no longer runs (closed, or ended on a socket error).
    fn check_running(&self) -> PyResult<()> {
        if self.session.is_running() {
            return Ok(());
        }
        Err(closed_error(self.session.close()))
    }
}

#[pymethods]
impl MediaSender {
    /// Binds a socket (`bind`, by default the wildcard of `to`'s family) and starts sending to
    /// `to` (see `tfrclab.media.Sender`).
    #[new]
    #[pyo3(signature = (to, preset = "rfc5348", size_bytes = 1000, bind = None,
                        queue_packets = 256, oscillation_prevention = None))]
    fn new(
        py: Python<'_>,
        to: &str,
        preset: &str,
        size_bytes: u32,
        bind: Option<&str>,
        queue_packets: usize,
        oscillation_prevention: Option<bool>,
    ) -> PyResult<Self> {
        let mut config = TfrcConfig::preset(preset).map_err(config_error)?;
        config.segment_size_bytes = size_bytes;
        if let Some(on) = oscillation_prevention {
            config.oscillation_prevention = on;
        }
        let mut options = SenderOptions::new(config);
        options.queue_packets = queue_packets;
        let bind = match bind {
            Some(b) => b.to_owned(),
            None => wildcard_for(py, to)?,
        };
        let sender = py
            .detach(|| UdpSender::bind(bind.as_str(), to, options))
            .map_err(transport_error)?;
        let session = BackgroundSender::spawn(sender).map_err(transport_error)?;
        let handle = session.handle().clone();
        Ok(MediaSender {
            rate_changes: Mutex::new(handle.rate_changes()),
            expirations: Mutex::new(handle.expirations()),
            local_addr: session.local_addr().to_string(),
            peer: session.peer().to_string(),
            handle,
            session,
        })
    }

    /// The socket's address.
    #[getter]
    fn local_addr(&self) -> &str {
        &self.local_addr
    }

    /// Where the payloads go.
    #[getter]
    fn peer(&self) -> &str {
        &self.peer
    }

    /// Queues `payload`; its ticket. Raises `QueueFull` when the queue holds its bound (the
    /// payload is dropped and counted), ValueError for a payload larger than one datagram or
    /// an option out of range, OSError if the session's loop failed, RuntimeError once closed.
    #[pyo3(signature = (payload, deadline_s = None, priority = 0, group = None))]
    fn send(
        &self,
        payload: &[u8],
        deadline_s: Option<f64>,
        priority: u8,
        group: Option<u64>,
    ) -> PyResult<u64> {
        self.check_running()?;
        let options = SendOptions {
            deadline: check_deadline(deadline_s)?,
            priority,
            group,
        };
        self.handle
            .send_with(payload.to_vec(), options)
            .map_err(|err| match err {
                QueueError::Full => QueueFull::new_err(err.to_string()),
                QueueError::TooLarge { max } => PyValueError::new_err(format!(
                    "payload: expected at most {max} bytes (one datagram), found {}",
                    payload.len()
                )),
                QueueError::BadPriority { .. } | QueueError::BadDeadline => {
                    PyValueError::new_err(err.to_string())
                }
            })
    }

    /// Removes queued payloads of priority below `below` (all of them when None); how many.
    #[pyo3(signature = (below = None))]
    fn flush(&self, below: Option<u8>) -> PyResult<usize> {
        match below {
            None => Ok(self.handle.flush()),
            Some(level) if usize::from(level) <= PRIORITY_LEVELS => {
                Ok(self.handle.flush_below(level))
            }
            Some(level) => Err(PyValueError::new_err(format!(
                "below: expected 0 to {PRIORITY_LEVELS}, found {level}"
            ))),
        }
    }

    /// Now on the sender's clock, seconds (the clock of the statistics' `time_s` and of the
    /// receiver's `sent_s`).
    #[getter]
    fn now_s(&self) -> f64 {
        self.session.clock().now().as_secs_f64()
    }

    /// The allowed sending rate X, bits/s.
    #[getter]
    fn allowed_rate_bps(&self) -> f64 {
        self.handle.allowed_rate_bytes_per_s() * 8.0
    }

    /// Payloads waiting in the queue.
    #[getter]
    fn queued(&self) -> usize {
        self.handle.queued()
    }

    /// The live statistics (the report's layout).
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        sender_report_dict(py, &self.handle.stats())
    }

    /// The rate changes since the last call (at most 64 kept unread).
    fn rate_changes<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let changes: Vec<RateChange> = locked(&self.rate_changes).try_iter().collect();
        changes.iter().map(|c| rate_change_dict(py, c)).collect()
    }

    /// Waits up to `timeout_s` (forever when None) for the next rate change, the GIL
    /// released; None on timeout.
    #[pyo3(signature = (timeout_s = None))]
    fn wait_rate_change<'py>(
        &self,
        py: Python<'py>,
        timeout_s: Option<f64>,
    ) -> PyResult<Option<Bound<'py, PyDict>>> {
        let got = wait(py, timeout_s, &|| self.check_running(), |slice| {
            locked(&self.rate_changes).recv_timeout(slice)
        })?;
        got.map(|c| rate_change_dict(py, &c)).transpose()
    }

    /// The payloads dropped at their deadline since the last call (at most 1024 kept unread;
    /// the count is in the statistics).
    fn expired<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let gone: Vec<Expired> = locked(&self.expirations).try_iter().collect();
        gone.iter().map(|e| expired_dict(py, e)).collect()
    }

    /// Whether the session is closed (or its loop ended on an error).
    #[getter]
    fn closed(&self) -> bool {
        !self.session.is_running()
    }

    /// Stops the loop (payloads still queued are not sent) and returns the final report.
    /// Raises OSError if the loop had failed. Closing again returns the same report.
    fn close<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let report = py
            .detach(|| self.session.close())
            .map_err(|err| PyOSError::new_err(err.to_string()))?;
        sender_report_dict(py, &report)
    }
}

/// Waits for `next` in slices of [`WAIT_SLICE`], the GIL released, running Python's signal
/// handlers and `alive` between slices; None after `timeout_s` (None: no limit) or when the
/// channel is disconnected.
fn wait<T: Send>(
    py: Python<'_>,
    timeout_s: Option<f64>,
    alive: &dyn Fn() -> PyResult<()>,
    next: impl Fn(Duration) -> Result<T, RecvTimeoutError> + Sync,
) -> PyResult<Option<T>> {
    let limit = match timeout_s {
        None => None,
        Some(s) if s.is_finite() && s >= 0.0 => {
            Some(std::time::Instant::now() + duration_from_secs(s))
        }
        Some(s) => {
            return Err(PyValueError::new_err(format!(
                "timeout_s: expected a duration of 0 s or more, found {s}"
            )))
        }
    };
    loop {
        let slice = match limit {
            None => WAIT_SLICE,
            Some(at) => at
                .saturating_duration_since(std::time::Instant::now())
                .min(WAIT_SLICE),
        };
        match py.detach(|| next(slice)) {
            Ok(item) => return Ok(Some(item)),
            Err(RecvTimeoutError::Disconnected) => return Ok(None),
            Err(RecvTimeoutError::Timeout) => {}
        }
        py.check_signals()?;
        alive()?;
        if limit.is_some_and(|at| std::time::Instant::now() >= at) {
            return Ok(None);
        }
    }
}

/// The fields of a delivery, in `tfrclab.media.Delivery`'s order.
type DeliveryTuple<'py> = (u64, Bound<'py, PyBytes>, f64, f64, u64, bool, u64, f64);

fn delivery_tuple<'py>(py: Python<'py>, d: &ReceivedPayload) -> DeliveryTuple<'py> {
    (
        d.seq,
        PyBytes::new(py, &d.payload),
        d.sent.as_secs_f64(),
        d.arrival.as_secs_f64(),
        d.gap,
        d.late,
        d.lost_total,
        d.p,
    )
}

/// A TFRC receiver handing payloads to the application, its loop on a thread of its own.
#[pyclass(module = "tfrclab._native")]
pub(crate) struct MediaReceiver {
    handle: ReceiverHandle,
    session: BackgroundReceiver,
    local_addr: String,
}

#[pymethods]
impl MediaReceiver {
    /// Binds `bind` and starts receiving (see `tfrclab.media.Receiver`).
    #[new]
    // The default (4096 payloads) is written out: pyo3 shows a named constant as `...`.
    #[pyo3(signature = (bind, preset = "rfc5348", max_pending = 4096))]
    fn new(py: Python<'_>, bind: &str, preset: &str, max_pending: usize) -> PyResult<Self> {
        let config = TfrcConfig::preset(preset).map_err(config_error)?;
        let receiver = py
            .detach(|| UdpReceiver::bind(bind, ReceiverOptions::new(config)))
            .map_err(transport_error)?;
        let session = BackgroundReceiver::spawn(receiver, max_pending).map_err(transport_error)?;
        Ok(MediaReceiver {
            handle: session.handle().clone(),
            local_addr: session.local_addr().to_string(),
            session,
        })
    }

    /// The socket's address.
    #[getter]
    fn local_addr(&self) -> &str {
        &self.local_addr
    }

    /// The next payload as a tuple (seq, payload, sent_s, arrival_s, gap, late, lost_total,
    /// p), waiting up to `timeout_s` (forever when None) with the GIL released; None on
    /// timeout or once closed and drained.
    #[pyo3(signature = (timeout_s = None))]
    fn recv<'py>(
        &self,
        py: Python<'py>,
        timeout_s: Option<f64>,
    ) -> PyResult<Option<DeliveryTuple<'py>>> {
        // The loop's end disconnects the channel once what it held was taken: no liveness
        // check is needed between slices.
        let got = wait(py, timeout_s, &|| Ok(()), |slice| {
            self.session.recv_timeout(slice)
        })?;
        Ok(got.map(|d| delivery_tuple(py, &d)))
    }

    /// Every payload pending now, without waiting (at most `limit`).
    #[pyo3(signature = (limit = 4096))]
    fn drain<'py>(&self, py: Python<'py>, limit: usize) -> Vec<DeliveryTuple<'py>> {
        let mut out = Vec::new();
        while out.len() < limit {
            match self.session.try_recv() {
                Ok(d) => out.push(delivery_tuple(py, &d)),
                Err(TryRecvError::Empty | TryRecvError::Disconnected) => break,
            }
        }
        out
    }

    /// The live statistics (the report's layout), with `overflow`: payloads dropped because
    /// the application left `max_pending` unread.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = receiver_report_dict(py, &self.handle.stats())?;
        d.set_item("overflow", self.session.overflow())?;
        Ok(d)
    }

    /// Whether the session is closed (or its loop ended on an error).
    #[getter]
    fn closed(&self) -> bool {
        !self.session.is_running()
    }

    /// Stops the loop and returns the final report (payloads still pending stay readable).
    /// Raises OSError if the loop had failed. Closing again returns the same report.
    fn close<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let (report, overflow) = py.detach(|| (self.session.close(), self.session.overflow()));
        let report = report.map_err(|err| PyOSError::new_err(err.to_string()))?;
        let d = receiver_report_dict(py, &report)?;
        d.set_item("overflow", overflow)?;
        Ok(d)
    }
}
