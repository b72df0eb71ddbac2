//! The watchdog of user controllers' callbacks (docs/controllers.md, "Endless loops"): a
//! callback that does not return within its wall-time limit (the flow's `controller_limit`,
//! [`DEFAULT_LIMIT`] unless set; zero turns the watch off) ends the run, never hangs it.
//!
//! A controller that can loop (a plugin, a Python class) holds a [`Watch`]. Each callback
//! costs two atomic stores on it ([`Watch::begin`], [`Watch::end`]): no clock is read and no
//! timer armed per call. One thread per process, started with the first watch, wakes every
//! [`TICK`] and counts how many ticks each callback has been seen in; a callback seen over its
//! limit is stopped as its [`Stop`] says: one that can be asked to stop (a Python callback:
//! an asynchronous exception) is asked, and its `end` then reports the overrun as the
//! controller's error; one that cannot (native code, or code that ignores the request for
//! [`GRACE`]) gets the error printed on stderr and the process ended with [`EXIT_STATUS`],
//! because a thread stuck in it can never be reclaimed and the run would hang forever.
//!
//! Counting ticks rather than reading clocks also means a process that was suspended
//! (Ctrl-Z, a laptop's sleep) is not taken for an overrun when it resumes. A callback that
//! returns within the limit is never touched, so a run that finishes is the same with the
//! watch on or off.

use std::fmt;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use tfrc::Time;

/// The wall-time limit of one callback when a flow sets no `controller_limit`: long enough
/// that no callback doing congestion control on a loaded machine comes near it, short enough
/// that a stuck run ends within seconds.
pub const DEFAULT_LIMIT: Duration = Duration::from_secs(5);

/// How often the watchdog looks at the callbacks in progress: a callback is stopped between
/// its limit and one tick later (scheduling delays aside).
pub const TICK: Duration = Duration::from_millis(100);

/// How long a callback asked to stop (a Python one) may take to stop before the process is
/// ended as for native code.
pub const GRACE: Duration = Duration::from_secs(1);

/// The exit status of a process the watchdog ends (distinct from 1, an error, and 2, a
/// usage error, of the command-line tools).
pub const EXIT_STATUS: i32 = 3;

/// The callbacks a watch names in its messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Callback {
    /// A Python class's constructor.
    Init,
    /// A plugin's `create`.
    Create,
    /// A plugin's `destroy`.
    Destroy,
    /// `pkts_acked`.
    PktsAcked,
    /// `cong_avoid`.
    CongAvoid,
    /// `ssthresh`.
    Ssthresh,
    /// `set_state`.
    SetState,
}

impl Callback {
    /// Every callback, in the order of their codes.
    const ALL: [Callback; 7] = [
        Callback::Init,
        Callback::Create,
        Callback::Destroy,
        Callback::PktsAcked,
        Callback::CongAvoid,
        Callback::Ssthresh,
        Callback::SetState,
    ];

    /// The callback's name, as error messages give it.
    pub fn name(self) -> &'static str {
        match self {
            Callback::Init => "__init__",
            Callback::Create => "create",
            Callback::Destroy => "destroy",
            Callback::PktsAcked => "pkts_acked",
            Callback::CongAvoid => "cong_avoid",
            Callback::Ssthresh => "ssthresh",
            Callback::SetState => "set_state",
        }
    }
}

/// What the watchdog does with a callback over its limit.
pub enum Stop {
    /// Nothing can stop it (native code): print the error and end the process.
    Exit,
    /// Call this, on a thread of its own, once, to ask the callback to stop (it checks
    /// [`Overrun::still_running`] first); if the callback is still running [`GRACE`] later,
    /// end the process as for [`Stop::Exit`].
    Interrupt(Box<dyn Fn(&Overrun) + Send + Sync>),
}

impl fmt::Debug for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Stop::Exit => "Exit",
            Stop::Interrupt(_) => "Interrupt",
        })
    }
}

/// A callback the watchdog found over its limit, as [`Stop::Interrupt`]'s function sees it.
pub struct Overrun {
    slot: Arc<Slot>,
    call: u64,
}

impl Overrun {
    /// Whether that callback is still running (it may have returned since the watchdog saw
    /// it). A caller that only interrupts while this holds, and that holds the same lock the
    /// callback's [`Watch::begin`] and [`Watch::end`] run under (Python's GIL), cannot hit the
    /// next callback instead.
    pub fn still_running(&self) -> bool {
        self.slot.call.load(Ordering::Acquire) == self.call
    }
}

/// One controller's watch: the callback in progress, if any, for the watchdog thread to see.
#[derive(Debug)]
struct Slot {
    /// The controller's name.
    controller: String,
    /// The limit of one callback.
    limit: Duration,
    stop: Stop,
    /// Odd while a callback runs; each `begin` and each `end` adds one.
    call: AtomicU64,
    /// The running callback's [`Callback`] code.
    callback: AtomicU8,
    /// The running callback's simulated time, nanoseconds.
    at_ns: AtomicU64,
    /// The call the watchdog found over its limit (0: none).
    overrun: AtomicU64,
    /// The watchdog thread's own: the call it saw last, and for how many ticks since.
    seen_call: AtomicU64,
    seen_ticks: AtomicU32,
}

/// The watch of one controller instance, registered with the process's watchdog while it
/// lives. Callbacks are bracketed with [`begin`](Watch::begin) and [`end`](Watch::end).
#[derive(Debug)]
pub struct Watch {
    slot: Arc<Slot>,
}

impl Watch {
    /// A watch of the controller `controller` whose callbacks may each run for `limit` of
    /// wall time, stopped as `stop` says; `None` when `limit` is zero (no watch).
    pub fn new(controller: &str, limit: Duration, stop: Stop) -> Option<Watch> {
        if limit.is_zero() {
            return None;
        }
        let slot = Arc::new(Slot {
            controller: controller.to_string(),
            limit,
            stop,
            call: AtomicU64::new(0),
            callback: AtomicU8::new(0),
            at_ns: AtomicU64::new(0),
            overrun: AtomicU64::new(0),
            seen_call: AtomicU64::new(0),
            seen_ticks: AtomicU32::new(0),
        });
        register(&slot);
        Some(Watch { slot })
    }

    /// A callback starts, at simulated time `now`; returns the call's number for
    /// [`end`](Watch::end). Calls of one watch do not nest.
    #[inline]
    pub fn begin(&self, callback: Callback, now: Time) -> u64 {
        let slot = &self.slot;
        slot.callback.store(callback as u8, Ordering::Relaxed);
        slot.at_ns.store(now.as_nanos(), Ordering::Relaxed);
        let call = slot.call.load(Ordering::Relaxed) + 1;
        slot.call.store(call, Ordering::Release);
        call
    }

    /// The callback `call` returned: `Err` with the controller's error if the watchdog found
    /// it over its limit (whatever it returned is then not to be used).
    #[inline]
    pub fn end(&self, call: u64) -> Result<(), String> {
        let slot = &self.slot;
        slot.call.store(call + 1, Ordering::Release);
        if slot.overrun.load(Ordering::Acquire) == call {
            return Err(overrun_reason(slot.limit));
        }
        Ok(())
    }
}

impl Watch {
    /// Whether the watchdog ever found one of this watch's calls over its limit.
    pub fn overran(&self) -> bool {
        self.slot.overrun.load(Ordering::Acquire) != 0
    }
}

/// The controller's error for a call the watchdog stopped (out of [`Watch::end`]'s inlined
/// path).
#[cold]
fn overrun_reason(limit: Duration) -> String {
    format!(
        "did not return within its limit of {} s of wall time (the flow's controller_limit); \
         the watchdog stopped it",
        limit.as_secs_f64()
    )
}

impl Slot {
    /// One tick of the watchdog on this watch.
    fn tick(self: &Arc<Slot>) {
        let call = self.call.load(Ordering::Acquire);
        if call % 2 == 0 {
            return;
        }
        // The call was running at the previous observation and is now: a whole tick passed.
        let ticks = if self.seen_call.swap(call, Ordering::Relaxed) == call {
            self.seen_ticks.fetch_add(1, Ordering::Relaxed) + 1
        } else {
            self.seen_ticks.store(0, Ordering::Relaxed);
            0
        };
        let waited = TICK * ticks;
        if self.overrun.load(Ordering::Acquire) != call {
            if waited < self.limit {
                return;
            }
            self.overrun.store(call, Ordering::Release);
            match &self.stop {
                Stop::Exit => self.exit(
                    "native code cannot be stopped safely, and a thread stuck in it can never be \
                     reclaimed",
                ),
                Stop::Interrupt(_) => {
                    let overrun = Overrun {
                        slot: Arc::clone(self),
                        call,
                    };
                    // If no thread can be made, the grace period below still ends the run.
                    let _ = std::thread::Builder::new()
                        .name("tfrclab-watchdog-stop".to_string())
                        .spawn(move || {
                            if let Stop::Interrupt(interrupt) = &overrun.slot.stop {
                                interrupt(&overrun);
                            }
                        });
                }
            }
        } else if waited >= self.limit + GRACE {
            self.exit(&format!(
                "it was asked to stop and is still running {} s later (it caught the \
                 watchdog's exception, or is stuck in code that does not return to the \
                 interpreter)",
                GRACE.as_secs_f64()
            ));
        }
    }

    /// Prints why on stderr and ends the process with [`EXIT_STATUS`].
    fn exit(&self, why: &str) -> ! {
        let callback = Callback::ALL
            .get(usize::from(self.callback.load(Ordering::Relaxed)))
            .map_or("a callback", |callback| callback.name());
        let at = Duration::from_nanos(self.at_ns.load(Ordering::Relaxed)).as_secs_f64();
        eprintln!(
            "tfrclab: error: congestion controller {:?} did not return from {callback} (called \
             at t = {at:.6} s) within its limit of {} s of wall time (the flow's \
             controller_limit): {why}; the watchdog ends the process with exit status \
             {EXIT_STATUS}",
            self.controller,
            self.limit.as_secs_f64(),
        );
        std::process::exit(EXIT_STATUS)
    }
}

/// The watches alive, and the process the watchdog thread runs in (0: none started; a child
/// made by `fork` has no watchdog thread, and starts its own).
struct Registry {
    slots: Vec<Weak<Slot>>,
    pid: u32,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    slots: Vec::new(),
    pid: 0,
});

/// Wakes the watchdog thread when a watch is registered after it found none.
static WAKE: Condvar = Condvar::new();

fn registry() -> MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Adds `slot` to the watched ones, starting the watchdog thread if this process has none.
fn register(slot: &Arc<Slot>) {
    let mut registry = registry();
    registry.slots.push(Arc::downgrade(slot));
    let pid = std::process::id();
    if registry.pid != pid {
        let started = std::thread::Builder::new()
            .name("tfrclab-watchdog".to_string())
            .spawn(watch_loop);
        if started.is_ok() {
            registry.pid = pid;
        }
    }
    WAKE.notify_one();
}

/// The watchdog thread: every tick, each live watch's callback in progress is looked at;
/// while there is no watch it sleeps until one is registered.
fn watch_loop() {
    loop {
        std::thread::sleep(TICK);
        let live: Vec<Arc<Slot>> = {
            let mut registry = registry();
            loop {
                registry.slots.retain(|slot| slot.strong_count() > 0);
                if !registry.slots.is_empty() {
                    break;
                }
                registry = WAKE.wait(registry).unwrap_or_else(PoisonError::into_inner);
            }
            registry.slots.iter().filter_map(Weak::upgrade).collect()
        };
        for slot in &live {
            slot.tick();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::time::Instant;

    /// A callback over its limit is asked to stop, within the limit and a few ticks, and its
    /// end reports the overrun; a callback within the limit is never asked.
    #[test]
    fn an_overrun_is_interrupted_and_reported_and_a_quick_call_is_not() {
        let asked = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&asked);
        let stop = Stop::Interrupt(Box::new(move |overrun: &Overrun| {
            if overrun.still_running() {
                flag.store(true, Ordering::Release);
            }
        }));
        let watch = Watch::new("test:cc", Duration::from_millis(300), stop).unwrap();
        let call = watch.begin(Callback::CongAvoid, Time::from_nanos(5));
        assert_eq!(watch.end(call), Ok(()));
        let started = Instant::now();
        let call = watch.begin(Callback::Ssthresh, Time::from_nanos(7));
        while !asked.load(Ordering::Acquire) {
            assert!(started.elapsed() < Duration::from_secs(10), "never asked");
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(started.elapsed() >= Duration::from_millis(300));
        let error = watch.end(call).unwrap_err();
        assert!(error.contains("limit of 0.3 s"), "{error}");
        let call = watch.begin(Callback::CongAvoid, Time::from_nanos(9));
        assert_eq!(watch.end(call), Ok(()));
        assert!(Watch::new("test:cc", Duration::ZERO, Stop::Exit).is_none());
    }
}
