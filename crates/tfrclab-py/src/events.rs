//! tfrc-udp's events (its `tracing` feature, crate `tfrc_udp::event_log`) forwarded to a Python
//! callable, which `tfrclab.media.log_events` points at Python's `logging`.
//!
//! A session's loop must never wait for the GIL (it paces packets to the microsecond), so the
//! subscriber only puts each event into a bounded channel; a forwarding thread of its own takes
//! the GIL and calls the handler. Events beyond the channel's bound are counted and dropped.
//! Nothing is installed until the first call of [`set_event_handler`] (off by default).

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::mpsc::{self, SyncSender, TrySendError};
use std::sync::{Mutex, OnceLock};

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use tfrc_udp::event_log::{EventSubscriber, FieldValue, LoggedEvent};
use tracing::Level;

/// Events waiting for the forwarding thread at most.
const CHANNEL_DEPTH: usize = 1 << 16;

/// The forwarding channel, once installed.
static FORWARD: OnceLock<SyncSender<LoggedEvent>> = OnceLock::new();
/// The Python callable events go to (None: dropped at the subscriber).
static HANDLER: Mutex<Option<Py<PyAny>>> = Mutex::new(None);
/// The least severe level forwarded: 0 off, 1 error, 2 warn, 3 info, 4 debug, 5 trace.
static LEVEL: AtomicU8 = AtomicU8::new(0);
/// Events dropped because the forwarding channel was full.
static DROPPED: AtomicU64 = AtomicU64::new(0);
/// Events put into the channel, and events the forwarding thread has finished with.
static ENQUEUED: AtomicU64 = AtomicU64::new(0);
static FORWARDED: AtomicU64 = AtomicU64::new(0);

fn level_rank(level: Level) -> u8 {
    match level {
        Level::ERROR => 1,
        Level::WARN => 2,
        Level::INFO => 3,
        Level::DEBUG => 4,
        Level::TRACE => 5,
    }
}

fn current_handler() -> std::sync::MutexGuard<'static, Option<Py<PyAny>>> {
    HANDLER.lock().unwrap_or_else(|e| e.into_inner())
}

/// Calls the handler with `(level, target, event, fields)` for each event from the channel,
/// counting each one done (for [`flush_events`]).
fn forward_loop(events: mpsc::Receiver<LoggedEvent>) {
    for event in events {
        forward_one(&event);
        FORWARDED.fetch_add(1, Ordering::Release);
    }
}

/// Calls the handler (if any) with one event.
fn forward_one(event: &LoggedEvent) {
    if current_handler().is_none() {
        return;
    }
    Python::attach(|py| {
        let Some(callable) = current_handler().as_ref().map(|h| h.clone_ref(py)) else {
            return;
        };
        let fields = PyDict::new(py);
        for (name, value) in &event.fields {
            let set = match value {
                FieldValue::Float(v) => fields.set_item(name, v),
                FieldValue::Unsigned(v) => fields.set_item(name, v),
                FieldValue::Signed(v) => fields.set_item(name, v),
                FieldValue::Bool(v) => fields.set_item(name, v),
                FieldValue::Text(v) => fields.set_item(name, v),
            };
            if let Err(err) = set {
                err.write_unraisable(py, None);
            }
        }
        let args = (
            event.level.as_str(),
            event.target,
            event.name.as_str(),
            fields,
        );
        if let Err(err) = callable.call1(py, args) {
            // The handler's own failure is reported as Python reports one in a callback
            // it cannot raise into; the session goes on.
            err.write_unraisable(py, Some(callable.bind(py)));
        }
    });
}

/// Installs the global subscriber and the forwarding thread (once).
fn install() -> PyResult<()> {
    if FORWARD.get().is_some() {
        return Ok(());
    }
    let (tx, rx) = mpsc::sync_channel(CHANNEL_DEPTH);
    let subscriber = EventSubscriber::new(Level::TRACE, |event: &LoggedEvent| {
        if level_rank(event.level) > LEVEL.load(Ordering::Relaxed) {
            return;
        }
        if let Some(forward) = FORWARD.get() {
            match forward.try_send(event.clone()) {
                Ok(()) => {
                    ENQUEUED.fetch_add(1, Ordering::AcqRel);
                }
                Err(TrySendError::Full(_)) => {
                    DROPPED.fetch_add(1, Ordering::Relaxed);
                }
                Err(TrySendError::Disconnected(_)) => {}
            }
        }
    });
    tracing::subscriber::set_global_default(subscriber).map_err(|_| {
        PyRuntimeError::new_err(
            "another tracing subscriber is installed in this process: tfrc-udp's events go to it",
        )
    })?;
    std::thread::Builder::new()
        .name("tfrc-udp events".into())
        .spawn(move || forward_loop(rx))
        .map_err(|err| PyRuntimeError::new_err(format!("starting the events thread: {err}")))?;
    let _ = FORWARD.set(tx);
    Ok(())
}

/// Sends tfrc-udp's events at `level` ("error", "warn", "info", "debug", "trace") and more
/// severe to `handler(level, target, event, fields)`, called on a thread of its own; `None`
/// stops forwarding. Returns how many events were dropped so far because the handler fell
/// 65,536 events behind.
#[pyfunction]
#[pyo3(signature = (handler, level = "debug"))]
pub(crate) fn set_event_handler(handler: Option<Bound<'_, PyAny>>, level: &str) -> PyResult<u64> {
    let rank = match level {
        "error" => 1,
        "warn" => 2,
        "info" => 3,
        "debug" => 4,
        "trace" => 5,
        other => {
            return Err(PyValueError::new_err(format!(
                "level: expected error, warn, info, debug or trace, found {other:?}"
            )))
        }
    };
    match handler {
        None => {
            LEVEL.store(0, Ordering::Relaxed);
            *current_handler() = None;
        }
        Some(callable) => {
            if !callable.is_callable() {
                return Err(PyValueError::new_err(
                    "handler: expected a callable or None",
                ));
            }
            install()?;
            *current_handler() = Some(callable.unbind());
            LEVEL.store(rank, Ordering::Relaxed);
        }
    }
    Ok(DROPPED.load(Ordering::Relaxed))
}

/// Waits (the GIL released) until every event emitted before the call has been handed to the
/// handler, at most `timeout_s`; whether it got there.
#[pyfunction]
#[pyo3(signature = (timeout_s = 2.0))]
pub(crate) fn flush_events(py: Python<'_>, timeout_s: f64) -> PyResult<bool> {
    if !(timeout_s.is_finite() && timeout_s >= 0.0) {
        return Err(PyValueError::new_err(format!(
            "timeout_s: expected a duration of 0 s or more, found {timeout_s}"
        )));
    }
    let target = ENQUEUED.load(Ordering::Acquire);
    let limit = std::time::Instant::now() + tfrc::time::duration_from_secs(timeout_s);
    Ok(py.detach(|| loop {
        if FORWARDED.load(Ordering::Acquire) >= target {
            return true;
        }
        if std::time::Instant::now() >= limit {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }))
}
