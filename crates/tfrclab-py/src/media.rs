//! Media sessions from Python: a `tfrc-udp` sender or receiver whose loop runs on a thread of
//! its own for as long as the application keeps it open, while the application pushes its own
//! payloads (with deadlines and priorities), reads the allowed rate and the live statistics,
//! and takes deliveries with their sender timestamps. `tfrclab.media` wraps these classes.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use tfrc::time::duration_from_secs;
use tfrc::TfrcConfig;
use tfrc_udp::{
    Expired, QueueError, RateChange, ReceiverHandle, ReceiverOptions, ReceiverReport, SendOptions,
    SenderHandle, SenderOptions, SenderReport, TransportError, UdpReceiver, UdpSender,
    PRIORITY_LEVELS,
};

use crate::errors::{config_error, QueueFull};
use crate::transport::{receiver_report_dict, sender_report_dict, transport_error, wildcard_for};

/// How long one call of the session's loop runs before the thread looks at its close flag (a
/// close wakes the loop at once; this only bounds a loop nobody closes).
const LOOP_SLICE: Duration = Duration::from_secs(3600);

/// How long a blocking wait runs between looks at Python's signal handlers.
const WAIT_SLICE: Duration = Duration::from_millis(100);

/// The most deliveries a receiver may be told to hold (64 Ki payloads of up to 64 KiB).
const MAX_PENDING: usize = 1 << 16;

/// A mutex's contents even if a thread panicked holding it (each holds a channel end or a
/// thread handle, consistent between operations).
fn locked<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A session loop's thread and the final report it hands back.
struct Worker<R> {
    thread: Mutex<Option<JoinHandle<Result<R, TransportError>>>>,
    outcome: Mutex<Option<Result<R, String>>>,
    closing: Arc<AtomicBool>,
}

impl<R: Copy + Send + 'static> Worker<R> {
    fn new(thread: JoinHandle<Result<R, TransportError>>, closing: Arc<AtomicBool>) -> Self {
        Worker {
            thread: Mutex::new(Some(thread)),
            outcome: Mutex::new(None),
            closing,
        }
    }

    /// Joins the thread (after `stop` woke it) and keeps its outcome; the outcome.
    fn join(&self, py: Python<'_>, stop: impl FnOnce()) -> Result<R, String> {
        if let Some(thread) = locked(&self.thread).take() {
            self.closing.store(true, Ordering::Release);
            stop();
            let outcome = py.detach(|| match thread.join() {
                Ok(Ok(report)) => Ok(report),
                Ok(Err(err)) => Err(err.to_string()),
                Err(_) => Err("the session's thread panicked".to_owned()),
            });
            *locked(&self.outcome) = Some(outcome);
        }
        locked(&self.outcome)
            .clone()
            .unwrap_or_else(|| Err("the session was never started".to_owned()))
    }

    /// An error if the loop ended on its own (a socket error): the session cannot go on.
    fn check_running(&self, py: Python<'_>, stop: impl FnOnce()) -> PyResult<()> {
        let finished = locked(&self.thread)
            .as_ref()
            .is_none_or(|t| t.is_finished());
        if !finished {
            return Ok(());
        }
        match self.join(py, stop) {
            Err(message) => Err(PyOSError::new_err(message)),
            Ok(_) => Err(PyRuntimeError::new_err("the session is closed")),
        }
    }
}

/// Runs a session loop in slices until `closing`.
fn run_loop<S, R>(
    mut session: S,
    closing: Arc<AtomicBool>,
    mut step: impl FnMut(&mut S) -> Result<(), TransportError>,
    report: impl Fn(&S) -> R,
) -> Result<R, TransportError> {
    while !closing.load(Ordering::Acquire) {
        step(&mut session)?;
    }
    Ok(report(&session))
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
    d.set_item("queued_s", e.queued.as_secs_f64())?;
    d.set_item("deadline_s", e.deadline.as_secs_f64())?;
    d.set_item("dropped_s", e.dropped.as_secs_f64())?;
    Ok(d)
}

/// A TFRC sender of the application's own payloads, its loop on a thread of its own.
#[pyclass(module = "tfrclab._native")]
pub(crate) struct MediaSender {
    handle: SenderHandle,
    worker: Worker<SenderReport>,
    rate_changes: Mutex<Receiver<RateChange>>,
    expirations: Mutex<Receiver<Expired>>,
    local_addr: String,
    peer: String,
}

impl MediaSender {
    fn stop(&self) -> impl FnOnce() + '_ {
        || self.handle.stop()
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
        let handle = sender.handle();
        let local_addr = sender.local_addr().map_err(transport_error)?.to_string();
        let peer = sender.peer().to_string();
        let rate_changes = Mutex::new(handle.rate_changes());
        let expirations = Mutex::new(handle.expirations());
        let closing = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&closing);
        let thread = std::thread::Builder::new()
            .name("tfrc-udp sender".into())
            .spawn(move || run_loop(sender, flag, |s| s.run_for(LOOP_SLICE), UdpSender::report))
            .map_err(|err| PyOSError::new_err(format!("starting the sender's thread: {err}")))?;
        Ok(MediaSender {
            handle,
            worker: Worker::new(thread, closing),
            rate_changes,
            expirations,
            local_addr,
            peer,
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
    #[pyo3(signature = (payload, deadline_s = None, priority = 0))]
    fn send(
        &self,
        py: Python<'_>,
        payload: &[u8],
        deadline_s: Option<f64>,
        priority: u8,
    ) -> PyResult<u64> {
        self.worker.check_running(py, self.stop())?;
        let options = SendOptions {
            deadline: check_deadline(deadline_s)?,
            priority,
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

    /// The live statistics (the report's layout, as of the loop's last pass).
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
        let got = wait(py, &self.rate_changes, timeout_s, || {
            self.worker.check_running(py, self.stop())
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
        locked(&self.worker.thread)
            .as_ref()
            .is_none_or(|t| t.is_finished())
    }

    /// Stops the loop (payloads still queued are not sent) and returns the final report.
    /// Raises OSError if the loop had failed. Closing again returns the same report.
    fn close<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let report = self
            .worker
            .join(py, self.stop())
            .map_err(PyOSError::new_err)?;
        sender_report_dict(py, &report)
    }
}

impl Drop for MediaSender {
    fn drop(&mut self) {
        self.worker.closing.store(true, Ordering::Release);
        self.handle.stop();
    }
}

/// Waits on `channel` in slices of [`WAIT_SLICE`], the GIL released, running Python's signal
/// handlers and `alive` between slices.
fn wait<T: Send>(
    py: Python<'_>,
    channel: &Mutex<Receiver<T>>,
    timeout_s: Option<f64>,
    alive: impl Fn() -> PyResult<()>,
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
        let got = py.detach(|| locked(channel).recv_timeout(slice));
        match got {
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

/// One payload as the receiver's thread hands it over.
struct Arrival {
    seq: u64,
    payload: Vec<u8>,
    sent_ns: u64,
    arrival_ns: u64,
    gap: u64,
    late: bool,
    lost_total: u64,
    p: f64,
}

/// The fields of a delivery, in `tfrclab.media.Delivery`'s order.
type DeliveryTuple<'py> = (u64, Bound<'py, PyBytes>, f64, f64, u64, bool, u64, f64);

fn delivery_tuple<'py>(py: Python<'py>, a: &Arrival) -> DeliveryTuple<'py> {
    (
        a.seq,
        PyBytes::new(py, &a.payload),
        a.sent_ns as f64 * 1e-9,
        a.arrival_ns as f64 * 1e-9,
        a.gap,
        a.late,
        a.lost_total,
        a.p,
    )
}

/// A TFRC receiver handing payloads to the application, its loop on a thread of its own.
#[pyclass(module = "tfrclab._native")]
pub(crate) struct MediaReceiver {
    handle: ReceiverHandle,
    worker: Worker<ReceiverReport>,
    deliveries: Mutex<Receiver<Arrival>>,
    overflow: Arc<AtomicU64>,
    local_addr: String,
}

impl MediaReceiver {
    fn stop(&self) -> impl FnOnce() + '_ {
        || self.handle.stop()
    }
}

#[pymethods]
impl MediaReceiver {
    /// Binds `bind` and starts receiving (see `tfrclab.media.Receiver`).
    #[new]
    // The default (4096 deliveries) is written out: pyo3 shows a named constant as `...`.
    #[pyo3(signature = (bind, preset = "rfc5348", max_pending = 4096))]
    fn new(py: Python<'_>, bind: &str, preset: &str, max_pending: usize) -> PyResult<Self> {
        if max_pending == 0 || max_pending > MAX_PENDING {
            return Err(PyValueError::new_err(format!(
                "max_pending: expected 1 to {MAX_PENDING}, found {max_pending}"
            )));
        }
        let config = TfrcConfig::preset(preset).map_err(config_error)?;
        let receiver = py
            .detach(|| UdpReceiver::bind(bind, ReceiverOptions::new(config)))
            .map_err(transport_error)?;
        let handle = receiver.handle();
        let local_addr = receiver.local_addr().map_err(transport_error)?.to_string();
        let (tx, rx): (SyncSender<Arrival>, _) = mpsc::sync_channel(max_pending);
        let overflow = Arc::new(AtomicU64::new(0));
        let dropped = Arc::clone(&overflow);
        let closing = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&closing);
        let thread = std::thread::Builder::new()
            .name("tfrc-udp receiver".into())
            .spawn(move || {
                let mut deliver = |d: &tfrc_udp::Delivery<'_>| {
                    let arrival = Arrival {
                        seq: d.seq,
                        payload: d.payload.to_vec(),
                        sent_ns: d.sent.as_nanos(),
                        arrival_ns: d.arrival.as_nanos(),
                        gap: d.gap,
                        late: d.late,
                        lost_total: d.lost_total,
                        p: d.p,
                    };
                    if let Err(TrySendError::Full(_)) = tx.try_send(arrival) {
                        // The application is not reading: the payload is counted, not kept.
                        dropped.fetch_add(1, Ordering::Relaxed);
                    }
                };
                run_loop(
                    receiver,
                    flag,
                    |r| r.run_for(LOOP_SLICE, &mut deliver),
                    UdpReceiver::report,
                )
            })
            .map_err(|err| PyOSError::new_err(format!("starting the receiver's thread: {err}")))?;
        Ok(MediaReceiver {
            handle,
            worker: Worker::new(thread, closing),
            deliveries: Mutex::new(rx),
            overflow,
            local_addr,
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
        if let Ok(a) = locked(&self.deliveries).try_recv() {
            return Ok(Some(delivery_tuple(py, &a)));
        }
        let got = wait(py, &self.deliveries, timeout_s, || {
            self.worker.check_running(py, self.stop())
        });
        match got {
            Ok(a) => Ok(a.map(|a| delivery_tuple(py, &a))),
            // Closed: what is still pending is handed over first.
            Err(err) if err.is_instance_of::<PyRuntimeError>(py) => Ok(locked(&self.deliveries)
                .try_recv()
                .ok()
                .map(|a| delivery_tuple(py, &a))),
            Err(err) => Err(err),
        }
    }

    /// Every payload pending now, without waiting (at most `limit`).
    #[pyo3(signature = (limit = 4096))]
    fn drain<'py>(&self, py: Python<'py>, limit: usize) -> Vec<DeliveryTuple<'py>> {
        let rx = locked(&self.deliveries);
        rx.try_iter()
            .take(limit)
            .map(|a| delivery_tuple(py, &a))
            .collect()
    }

    /// The live statistics (the report's layout, as of the loop's last pass), with
    /// `overflow`: payloads dropped because the application left `max_pending` unread.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = receiver_report_dict(py, &self.handle.stats())?;
        d.set_item("overflow", self.overflow.load(Ordering::Relaxed))?;
        Ok(d)
    }

    /// Whether the session is closed (or its loop ended on an error).
    #[getter]
    fn closed(&self) -> bool {
        locked(&self.worker.thread)
            .as_ref()
            .is_none_or(|t| t.is_finished())
    }

    /// Stops the loop and returns the final report (payloads still pending stay readable).
    /// Raises OSError if the loop had failed. Closing again returns the same report.
    fn close<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let report = self
            .worker
            .join(py, self.stop())
            .map_err(PyOSError::new_err)?;
        let d = receiver_report_dict(py, &report)?;
        d.set_item("overflow", self.overflow.load(Ordering::Relaxed))?;
        Ok(d)
    }
}

impl Drop for MediaReceiver {
    fn drop(&mut self) {
        self.worker.closing.store(true, Ordering::Release);
        self.handle.stop();
    }
}
