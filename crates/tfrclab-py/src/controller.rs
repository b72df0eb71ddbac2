//! Python congestion controllers (docs/controllers.md): a scenario's `controller =
//! "module:Class"` resolved by `tfrclab.controllers.load_class`, one instance of the class per
//! TCP sender, and netsim's controller callbacks (`pkts_acked`, `cong_avoid`, `ssthresh`,
//! `set_state`) forwarded to its methods with the GIL taken for each call. Whatever the Python
//! code does wrong (raises, returns a wrong type, a NaN or negative window) becomes the
//! controller's error, which ends the run (`tfrclab.ControllerError`), never a panic.
//!
//! A callback (or the constructor) that runs past the flow's `controller_limit` is stopped by
//! netsim's watchdog (`netsim::agent::tcp::controller::watchdog`): from its own thread, with
//! the GIL, it raises `_WatchdogStop` in the simulating thread with CPython's
//! `PyThreadState_SetAsyncExc` (the interpreter switches threads every 5 ms, so the watchdog
//! gets the GIL while Python code loops); the call's end, under the GIL too, reports the
//! overrun as the controller's error and withdraws the exception if it was not raised yet, so
//! that it can never hit other code. Python code stuck in C that never returns to the
//! interpreter is ended as native code is, after the watchdog's grace period.

use std::os::raw::c_long;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyList, PyTuple};

use netsim::agent::tcp::controller::watchdog::{Callback, Overrun, Stop, Watch};
use netsim::agent::tcp::controller::{
    AckSample as NativeAckSample, CaState, CcResult, CcState, CcWindow, CongestionControl,
    ControllerFactory, ControllerResolver, Reduction,
};
use netsim::agent::TcpConfig;
use tfrc::Time;

pyo3::create_exception!(
    tfrclab,
    _WatchdogStop,
    pyo3::exceptions::PyBaseException,
    "Raised by the watchdog inside a controller callback that ran past its `controller_limit` \
     (a BaseException, so that `except Exception` in the controller does not swallow it); the \
     run then ends with `tfrclab.ControllerError`."
);

/// The state of the sender a Python controller sees (netsim's `CcState`): packet counts in
/// packets of `packet_bytes`, times in seconds.
#[pyclass(frozen, module = "tfrclab._native", name = "ControllerState")]
pub(crate) struct PyState {
    /// The simulated time of the event, seconds.
    #[pyo3(get)]
    now: f64,
    /// The congestion window, packets.
    #[pyo3(get)]
    cwnd: f64,
    /// The slow-start threshold, packets.
    #[pyo3(get)]
    ssthresh: f64,
    /// min(cwnd + Reno's recovery inflation, window): what ns-2's reductions start from.
    #[pyo3(get)]
    win: f64,
    /// The receiver window (the scenario's `window`), packets.
    #[pyo3(get)]
    window: u32,
    /// Packets sent and not cumulatively acknowledged.
    #[pyo3(get)]
    flight: u64,
    /// The highest cumulative ACK (-1 before any).
    #[pyo3(get)]
    highest_ack: i64,
    /// The highest sequence number sent (-1 before any).
    #[pyo3(get)]
    max_sent: i64,
    /// In loss recovery.
    #[pyo3(get)]
    in_recovery: bool,
    /// No reduction has happened yet on this connection.
    #[pyo3(get)]
    first_reduction: bool,
    /// The last congestion response was a retransmission timeout.
    #[pyo3(get)]
    after_timeout: bool,
    /// Everything the application supplied has been sent.
    #[pyo3(get)]
    app_limited: bool,
    /// The smoothed RTT in seconds (0 before the first sample).
    #[pyo3(get)]
    srtt: f64,
    /// Payload bytes per packet.
    #[pyo3(get)]
    packet_bytes: u32,
}

impl PyState {
    fn new(state: &CcState) -> PyState {
        PyState {
            now: state.now.as_secs_f64(),
            cwnd: state.cwnd,
            ssthresh: state.ssthresh,
            win: state.win,
            window: state.window,
            flight: state.flight,
            highest_ack: state.highest_ack,
            max_sent: state.max_sent,
            in_recovery: state.in_recovery,
            first_reduction: state.first_reduction,
            after_timeout: state.after_timeout,
            app_limited: state.app_limited,
            srtt: state.srtt,
            packet_bytes: state.packet_bytes,
        }
    }
}

/// What an ACK that moved the cumulative ACK tells a Python controller.
#[pyclass(frozen, module = "tfrclab._native", name = "AckSample")]
pub(crate) struct PyAck {
    /// Packets newly acknowledged (at `cong_avoid` under the `linux` preset: newly delivered,
    /// SACKed ones included; docs/controllers.md).
    #[pyo3(get)]
    acked: u32,
    /// Payload bytes newly acknowledged.
    #[pyo3(get)]
    acked_bytes: u64,
    /// The RTT of the newest packet acknowledged, seconds; None when it was retransmitted.
    #[pyo3(get)]
    rtt: Option<f64>,
    /// The ACK carried ECN-Echo (the flow's `ecn` is on and a router marked a packet).
    #[pyo3(get)]
    ece: bool,
}

impl PyAck {
    fn new(ack: &NativeAckSample) -> PyAck {
        PyAck {
            acked: ack.acked,
            acked_bytes: ack.acked_bytes,
            rtt: ack.rtt.map(|d| d.as_secs_f64()),
            ece: ack.ece,
        }
    }
}

/// One line for a Python exception: its type, message and the innermost frame's file and line
/// (the user's code), without the traceback.
fn describe(py: Python<'_>, err: &PyErr) -> String {
    let kind = err
        .get_type(py)
        .name()
        .map_or_else(|_| "exception".to_string(), |n| n.to_string());
    let message = err
        .value(py)
        .str()
        .map_or_else(|_| String::new(), |s| s.to_string());
    let mut place = String::new();
    if let Some(mut tb) = err.traceback(py) {
        while let Ok(next) = tb.getattr("tb_next") {
            match next.cast_into::<pyo3::types::PyTraceback>() {
                Ok(next) => tb = next,
                Err(_) => break,
            }
        }
        let file = tb
            .getattr("tb_frame")
            .and_then(|f| f.getattr("f_code"))
            .and_then(|c| c.getattr("co_filename"))
            .and_then(|f| f.extract::<String>());
        let line = tb.getattr("tb_lineno").and_then(|l| l.extract::<u32>());
        if let (Ok(file), Ok(line)) = (file, line) {
            place = format!(" ({file}:{line})");
        }
    }
    if message.is_empty() {
        format!("raised {kind}{place}")
    } else {
        format!("raised {kind}: {message}{place}")
    }
}

/// A callback's return value as a window: None keeps the window, a tuple or list of two or
/// three numbers sets (cwnd, ssthresh[, pacing_rate]).
fn window(value: &Bound<'_, PyAny>) -> CcResult {
    if value.is_none() {
        return Ok(None);
    }
    let wrong = || {
        let kind = value
            .get_type()
            .name()
            .map_or_else(|_| "?".to_string(), |n| n.to_string());
        format!(
            "returned {kind} {}; expected None or (cwnd, ssthresh) or (cwnd, ssthresh, \
             pacing_rate) as numbers",
            value
                .repr()
                .map_or_else(|_| String::new(), |r| r.to_string())
                .chars()
                .take(80)
                .collect::<String>()
        )
    };
    let items: Vec<Bound<'_, PyAny>> = if let Ok(tuple) = value.cast::<PyTuple>() {
        tuple.iter().collect()
    } else if let Ok(list) = value.cast::<PyList>() {
        list.iter().collect()
    } else {
        return Err(wrong());
    };
    if !(2..=3).contains(&items.len()) {
        return Err(wrong());
    }
    let mut numbers = Vec::with_capacity(3);
    for item in &items {
        if item.is_instance_of::<PyBool>() {
            return Err(wrong());
        }
        numbers.push(item.extract::<f64>().map_err(|_| wrong())?);
    }
    Ok(Some(CcWindow {
        cwnd: numbers[0],
        ssthresh: numbers[1],
        pacing_rate: numbers.get(2).copied(),
    }))
}

/// The watch of one Python controller instance: the watchdog's handle, and the thread its
/// callbacks run on (CPython's thread identifier, set at each call), for the interrupt.
#[derive(Debug)]
struct PyWatch {
    watch: Watch,
    thread: Arc<AtomicU64>,
}

impl PyWatch {
    /// A watch of `name`'s callbacks bounded to `limit` (none when `limit` is zero).
    fn new(name: &str, limit: Duration) -> Option<PyWatch> {
        let thread = Arc::new(AtomicU64::new(0));
        let target = Arc::clone(&thread);
        let stop = Stop::Interrupt(Box::new(move |overrun: &Overrun| {
            Python::attach(|py| {
                // Under the GIL, as `run` begins and ends calls: the call cannot end between
                // this check and the exception.
                if overrun.still_running() {
                    let id = target.load(Ordering::Relaxed);
                    let kind = py.get_type::<_WatchdogStop>();
                    set_async_exc(id, kind.as_ptr());
                }
            });
        }));
        Watch::new(name, limit, stop).map(|watch| PyWatch { watch, thread })
    }

    /// Runs `body` (with the GIL held) as a watched call of `callback` at `now`: if the
    /// watchdog found it over its limit, the overrun is the result, and an exception it had
    /// not yet delivered is withdrawn.
    fn run<T>(
        watch: Option<&PyWatch>,
        _py: Python<'_>,
        callback: Callback,
        now: Time,
        body: impl FnOnce() -> Result<T, String>,
    ) -> Result<T, String> {
        let Some(this) = watch else {
            return body();
        };
        let id = current_thread();
        this.thread.store(id, Ordering::Relaxed);
        let call = this.watch.begin(callback, now);
        let result = body();
        if let Err(overrun) = this.watch.end(call) {
            // Raised, it was already turned into the body's error, dropped here.
            set_async_exc(id, std::ptr::null_mut());
            return Err(overrun);
        }
        result
    }
}

/// CPython's identifier of the calling thread.
#[allow(unsafe_code)]
#[allow(clippy::useless_conversion)] // c_ulong is u64 here, u32 on other platforms.
fn current_thread() -> u64 {
    // SAFETY: `PyThread_get_thread_ident` takes nothing and only reads the thread's id.
    u64::from(unsafe { pyo3::ffi::PyThread_get_thread_ident() })
}

/// Asks CPython to raise `kind` (null: nothing, withdrawing a pending one) in the thread `id`
/// when it next runs Python code. The caller holds the GIL.
#[allow(unsafe_code)]
fn set_async_exc(id: u64, kind: *mut pyo3::ffi::PyObject) {
    // SAFETY: the GIL is held (both callers are inside `Python::attach`); `kind` is null or an
    // exception type that lives as long as the module; an unknown id modifies nothing.
    // CPython takes the id as an unsigned long, which pyo3 declares as a long: the bits are
    // passed through unchanged.
    unsafe {
        pyo3::ffi::PyThreadState_SetAsyncExc(id as c_long, kind);
    }
}

/// One Python controller instance.
#[derive(Debug)]
struct PyController {
    name: String,
    object: Py<PyAny>,
    /// Whether the class defines the optional callbacks.
    has_pkts_acked: bool,
    has_set_state: bool,
    /// Bounds each callback's wall time (`None`: the limit is off).
    watch: Option<PyWatch>,
}

impl PyController {
    /// Calls `method` with the state (and `extra`, a second argument) and reads the window it
    /// returns.
    fn call(&self, method: Callback, state: &CcState, extra: Extra<'_>) -> CcResult {
        Python::attach(|py| {
            PyWatch::run(self.watch.as_ref(), py, method, state.now, || {
                let object = self.object.bind(py);
                let state =
                    Bound::new(py, PyState::new(state)).map_err(|err| describe(py, &err))?;
                let value = match extra {
                    Extra::Ack(ack) => {
                        let ack =
                            Bound::new(py, PyAck::new(ack)).map_err(|err| describe(py, &err))?;
                        object.call_method1(method.name(), (state, ack))
                    }
                    Extra::Name(name) => object.call_method1(method.name(), (state, name)),
                }
                .map_err(|err| describe(py, &err))?;
                window(&value)
            })
        })
    }
}

/// A callback's second argument.
enum Extra<'a> {
    /// The ACK (`pkts_acked`, `cong_avoid`).
    Ack(&'a NativeAckSample),
    /// The reduction or the new state, by name (`ssthresh`, `set_state`).
    Name(&'static str),
}

impl CongestionControl for PyController {
    fn name(&self) -> &str {
        &self.name
    }

    fn pkts_acked(&mut self, state: &CcState, ack: &NativeAckSample) -> CcResult {
        if !self.has_pkts_acked {
            return Ok(None);
        }
        self.call(Callback::PktsAcked, state, Extra::Ack(ack))
    }

    fn cong_avoid(&mut self, state: &CcState, ack: &NativeAckSample) -> CcResult {
        self.call(Callback::CongAvoid, state, Extra::Ack(ack))
    }

    fn ssthresh(&mut self, state: &CcState, reduction: Reduction) -> CcResult {
        self.call(Callback::Ssthresh, state, Extra::Name(reduction.name()))
    }

    fn set_state(&mut self, state: &CcState, new_state: CaState) -> CcResult {
        if !self.has_set_state {
            return Ok(None);
        }
        self.call(Callback::SetState, state, Extra::Name(new_state.name()))
    }
}

/// Makes one instance of a Python controller class per sender.
#[derive(Debug)]
struct PyFactory {
    name: String,
    class: Py<PyAny>,
}

/// The classes whose constructor the watchdog stopped, with that error: every later instance
/// of one fails with it at once, so that the instances a scenario's checks make (each parse of
/// it makes one per flow before its run makes its own) do not each wait out the limit. Each
/// class is held, so that its identity cannot be reused by another; a class defined anew (a
/// fixed one, under the same name) is another object and starts clean.
static OVERRAN: Mutex<Vec<(Py<PyAny>, String)>> = Mutex::new(Vec::new());

impl ControllerFactory for PyFactory {
    fn build(
        &self,
        _config: &TcpConfig,
        limit: Duration,
    ) -> Result<Box<dyn CongestionControl>, String> {
        let watch = PyWatch::new(&self.name, limit);
        Python::attach(|py| {
            let overran = OVERRAN.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some((_, reason)) = overran.iter().find(|(class, _)| class.is(&self.class)) {
                return Err(format!("{reason} (in an earlier instance)"));
            }
            drop(overran);
            let made = PyWatch::run(watch.as_ref(), py, Callback::Init, Time::ZERO, || {
                self.class
                    .bind(py)
                    .call0()
                    .map_err(|err| describe(py, &err))
            });
            let object = match made {
                Err(reason) if watch.as_ref().is_some_and(|w| w.watch.overran()) => {
                    OVERRAN
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push((self.class.clone_ref(py), reason.clone()));
                    return Err(reason);
                }
                made => made?,
            };
            let callable = |name: &str| {
                object
                    .getattr(name)
                    .is_ok_and(|attribute| attribute.is_callable())
            };
            for required in ["cong_avoid", "ssthresh"] {
                if !callable(required) {
                    return Err(format!("the class defines no method {required}()"));
                }
            }
            Ok(Box::new(PyController {
                name: self.name.clone(),
                has_pkts_acked: callable("pkts_acked"),
                has_set_state: callable("set_state"),
                object: object.unbind(),
                watch,
            }) as Box<dyn CongestionControl>)
        })
    }
}

/// Resolves `"module:Class"` with `tfrclab.controllers.load_class`.
struct PyResolver;

impl ControllerResolver for PyResolver {
    fn resolve(&self, name: &str) -> Result<Arc<dyn ControllerFactory>, String> {
        Python::attach(|py| {
            let class = py
                .import("tfrclab.controllers")
                .and_then(|module| module.call_method1("load_class", (name,)))
                .map_err(|err| {
                    let message = err
                        .value(py)
                        .str()
                        .map_or_else(|_| describe(py, &err), |s| s.to_string());
                    message
                })?;
            Ok(Arc::new(PyFactory {
                name: name.to_string(),
                class: class.unbind(),
            }) as Arc<dyn ControllerFactory>)
        })
    }
}

/// Registers the resolver of Python controllers for this process (once; later calls keep it).
pub(crate) fn register() {
    netsim::agent::tcp::controller::set_controller_resolver(Box::new(PyResolver));
}
