//! The congestion-controller interface of the TCP sender (docs/controllers.md): the congestion
//! logic alone, as Linux's `tcp_congestion_ops` separates it from the rest of TCP, so that a new
//! algorithm runs on netsim's sequence numbers, SACK scoreboard, RACK, retransmission timer and
//! loss recovery without a fork.
//!
//! The sender calls a [`CongestionControl`] at the moments Linux calls its congestion ops:
//! [`pkts_acked`](CongestionControl::pkts_acked) on every ACK that moves the cumulative ACK
//! (with the packets newly acked and the RTT sample), [`cong_avoid`](CongestionControl::cong_avoid)
//! on such an ACK outside loss recovery (to grow the window), [`ssthresh`](CongestionControl::ssthresh)
//! on a congestion signal (loss recovery entered, a retransmission timeout, a restart after
//! idle), and [`set_state`](CongestionControl::set_state) when loss recovery ends. Each returns
//! the window it wants ([`CcWindow`]: cwnd and ssthresh in packets, optionally a pacing rate), or
//! nothing to keep the current one; it reads the sender's state from a [`CcState`].
//!
//! `reno.rs` and `cubic.rs` re-express the built-in Reno (ns-2's `opencwnd`/`slowdown`, or
//! Linux's segment counting) and CUBIC through this interface, on the same functions the
//! built-in senders run; `hooks.rs` is the sender's side; `plugin.rs` loads native plugins;
//! `watchdog.rs` bounds each callback of user code (a plugin's, a Python class's) in wall
//! time, so that one that never returns ends the run instead of hanging it.

mod cubic;
mod hooks;
mod plugin;
mod reno;
pub mod watchdog;

use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tfrc::Time;

use super::{TcpConfig, TcpSender};
use crate::rng::SimRng;

pub use cubic::CubicController;
pub use plugin::PLUGIN_PATH_VAR;
pub use reno::RenoController;

/// A congestion signal the sender reports through [`CongestionControl::ssthresh`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduction {
    /// Duplicate ACKs (or RFC 6675's `IsLost`, or RACK) started loss recovery: Reno, NewReno
    /// and SACK senders retransmit and keep sending under the reduced window.
    Recovery,
    /// Tahoe's fast retransmit: ns-2's `Agent/TCP` goes back N from a window of one packet.
    GoBackN,
    /// The retransmission timer expired with data outstanding (Linux's `TCP_CA_Loss`).
    Timeout,
    /// The sender restarts after an idle period longer than an RTO, or its timer expired with
    /// nothing outstanding (ns-2's `slow_start_restart_`): the window restarts; the built-in
    /// controllers keep ssthresh.
    Restart,
    /// An ACK carried ECN-Echo (RFC 3168 §6.1.2, with [`TcpConfig::ecn`]): a router marked a
    /// packet instead of dropping it. The sender retransmits nothing, sets cwnd and ssthresh
    /// to what the controller returns and calls it again at most once per window of data.
    Ecn,
}

impl Reduction {
    /// The name Python controllers receive (`"recovery"`, `"go_back_n"`, `"timeout"`,
    /// `"restart"`, `"ecn"`).
    pub fn name(self) -> &'static str {
        match self {
            Reduction::Recovery => "recovery",
            Reduction::GoBackN => "go_back_n",
            Reduction::Timeout => "timeout",
            Reduction::Restart => "restart",
            Reduction::Ecn => "ecn",
        }
    }
}

/// A change of the sender's congestion state reported through
/// [`CongestionControl::set_state`] (Linux's `tcp_ca_state`, reduced to what netsim's loss
/// recovery distinguishes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaState {
    /// Loss recovery ended: an ACK covered everything that was outstanding when it began
    /// (Reno: any new ACK) (`TCP_CA_Open`). Not signalled after a timeout's go-back-N.
    Open,
}

impl CaState {
    /// The name Python controllers receive (`"open"`).
    pub fn name(self) -> &'static str {
        match self {
            CaState::Open => "open",
        }
    }
}

/// What the sender tells a controller on an ACK that moves the cumulative ACK forward.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AckSample {
    /// Packets newly acknowledged cumulatively by this ACK (at least 1); at `cong_avoid`
    /// with [`super::TcpConfig::sacked_out_of_flight`], the packets it newly delivers, those
    /// it SACKs included (Linux's `tcp_newly_delivered`).
    pub acked: u32,
    /// Bytes of payload newly acknowledged (`acked` times the packet size).
    pub acked_bytes: u64,
    /// The RTT of the newest packet this ACK acknowledges, from its first transmission to now;
    /// `None` when that packet was retransmitted (Karn), as Linux's `ca_rtt_us`.
    pub rtt: Option<Duration>,
    /// The ACK carried ECN-Echo (with [`TcpConfig::ecn`]; Linux's `CA_ACK_ECE`): a
    /// DCTCP-style controller sums `acked_bytes` of such ACKs against all `acked_bytes` for
    /// the fraction of marked data. netsim's receiver echoes as RFC 3168 says, from a CE mark
    /// until the sender's CWR, so that fraction runs high of the true marking rate.
    pub ece: bool,
}

/// The sender's state as a controller sees it, read-only: what Linux's congestion ops read from
/// `struct tcp_sock`. Packet counts are in packets of the flow's `size`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CcState {
    /// The simulated time of the event.
    pub now: Time,
    /// The congestion window in packets.
    pub cwnd: f64,
    /// The slow-start threshold in packets.
    pub ssthresh: f64,
    /// The window ns-2's reductions start from: min(cwnd + Reno's recovery inflation, window),
    /// in packets (`windowd()`; its whole part is `window()`).
    pub win: f64,
    /// The receiver window in packets (the scenario's `window`): the sender never has more than
    /// this many packets beyond the cumulative ACK, whatever cwnd says.
    pub window: u32,
    /// Packets sent and not cumulatively acknowledged (SACKed and lost ones included).
    pub flight: u64,
    /// The highest cumulative ACK (a sequence number; -1 before any).
    pub highest_ack: i64,
    /// The highest sequence number sent (-1 before any).
    pub max_sent: i64,
    /// In loss recovery (Reno's inflation, NewReno's or SACK's recovery).
    pub in_recovery: bool,
    /// No reduction has happened yet on this connection (ns-2's first decrease).
    pub first_reduction: bool,
    /// The last congestion response was a retransmission timeout (ns-2 `last_cwnd_action_`).
    pub after_timeout: bool,
    /// Everything the application has supplied has been sent: the sender is application
    /// limited, not window limited.
    pub app_limited: bool,
    /// The smoothed RTT in seconds (whole timer ticks, as the retransmission timer keeps it);
    /// 0 before the first sample.
    pub srtt: f64,
    /// Payload bytes per packet (the scenario's `size`).
    pub packet_bytes: u32,
}

/// What a controller sets: the window, and optionally a pacing rate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CcWindow {
    /// The congestion window in packets: finite and at least 1 (a window under one packet
    /// would stall the sender).
    pub cwnd: f64,
    /// The slow-start threshold in packets: finite and at least 1.
    pub ssthresh: f64,
    /// Pace packets at this many bytes per second (finite, above 0); `None` leaves pacing as it
    /// is (off unless a controller turned it on).
    pub pacing_rate: Option<f64>,
}

impl CcWindow {
    /// A window without pacing.
    pub fn new(cwnd: f64, ssthresh: f64) -> CcWindow {
        CcWindow {
            cwnd,
            ssthresh,
            pacing_rate: None,
        }
    }

    /// Checks the ranges documented per field; the text says which is out and its value.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.cwnd.is_finite() && self.cwnd >= 1.0) {
            return Err(format!(
                "cwnd must be a finite number of at least 1 packet, got {}",
                self.cwnd
            ));
        }
        if !(self.ssthresh.is_finite() && self.ssthresh >= 1.0) {
            return Err(format!(
                "ssthresh must be a finite number of at least 1 packet, got {}",
                self.ssthresh
            ));
        }
        if let Some(rate) = self.pacing_rate {
            if !(rate.is_finite() && rate > 0.0) {
                return Err(format!(
                    "pacing_rate must be a finite number of bytes per second above 0, got {rate}"
                ));
            }
        }
        Ok(())
    }
}

/// What a controller callback returns: the window it wants (`Some`), none to keep the current
/// one, or an error that ends the run (the text says what went wrong).
pub type CcResult = Result<Option<CcWindow>, String>;

/// The congestion logic of a TCP sender, modelled on Linux's `tcp_congestion_ops`. The sender
/// keeps sequence numbers, the SACK scoreboard, RACK, the retransmission timer and loss
/// recovery; the controller only decides the window (and optionally a pacing rate). Callbacks
/// must be deterministic functions of what they are given and their own state (no clock, no
/// unseeded randomness), so that runs stay reproducible, and must return: a controller that
/// runs user code brackets its calls with a [`watchdog::Watch`].
///
/// Not called: Linux's `undo_cwnd` (netsim detects no spurious recovery) and `cwnd_event`
/// (ECN arrives as [`AckSample::ece`] and [`Reduction::Ecn`] instead).
pub trait CongestionControl: fmt::Debug + Send + Sync {
    /// The controller's name, for error messages ("reno", "mymodule:MyCC").
    fn name(&self) -> &str;

    /// `pkts_acked`: an ACK moved the cumulative ACK forward, in or out of loss recovery.
    /// Called before [`cong_avoid`](CongestionControl::cong_avoid). Default: nothing.
    fn pkts_acked(&mut self, state: &CcState, ack: &AckSample) -> CcResult {
        let _ = (state, ack);
        Ok(None)
    }

    /// `cong_avoid`: an ACK moved the cumulative ACK forward outside loss recovery; grow the
    /// window (slow start, congestion avoidance).
    fn cong_avoid(&mut self, state: &CcState, ack: &AckSample) -> CcResult;

    /// `ssthresh`, with the window cut: a congestion signal. The returned window applies at
    /// once (netsim does not model PRR's gradual reduction).
    fn ssthresh(&mut self, state: &CcState, reduction: Reduction) -> CcResult;

    /// `set_state`: the congestion state changed. Default: nothing.
    fn set_state(&mut self, state: &CcState, new_state: CaState) -> CcResult {
        let _ = (state, new_state);
        Ok(None)
    }
}

/// Makes a fresh controller for each TCP sender of a flow (a flow of short connections has
/// many), given the flow's TCP configuration.
pub trait ControllerFactory: fmt::Debug + Send + Sync {
    /// A new controller for a sender with `config`; a controller that can loop (user code)
    /// bounds each of its callbacks to `limit` of wall time with a [`watchdog::Watch`] (zero:
    /// unbounded).
    fn build(
        &self,
        config: &TcpConfig,
        limit: Duration,
    ) -> Result<Box<dyn CongestionControl>, String>;
}

/// A controller a scenario names (`controller = "reno"`, `controller = "mymodule:MyCC"`): its
/// name and how to make one.
#[derive(Clone, Debug)]
pub struct ControllerSpec {
    /// The name as the scenario gives it.
    pub name: String,
    /// Makes one controller per sender.
    pub factory: Arc<dyn ControllerFactory>,
    /// The wall-time limit of each callback (the flow's `controller_limit`; zero: none), for
    /// the controllers that run user code ([`watchdog`]).
    pub limit: Duration,
}

impl PartialEq for ControllerSpec {
    /// Two specs are equal when they name the same controller made by the same factory, with
    /// the same limit.
    fn eq(&self, other: &ControllerSpec) -> bool {
        self.name == other.name
            && Arc::ptr_eq(&self.factory, &other.factory)
            && self.limit == other.limit
    }
}

/// The native controllers by name: `"reno"` ([`RenoController`]) and `"cubic"`
/// ([`CubicController`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NativeController {
    /// The built-in Reno window (every variant but CUBIC, BBR and Vegas grows this way).
    Reno,
    /// The built-in CUBIC window.
    Cubic,
}

impl NativeController {
    /// Scenario names.
    pub const NAMES: &'static [&'static str] = &["reno", "cubic"];

    /// The controller named `name` (one of [`NativeController::NAMES`]).
    pub fn from_name(name: &str) -> Option<NativeController> {
        match name {
            "reno" => Some(NativeController::Reno),
            "cubic" => Some(NativeController::Cubic),
            _ => None,
        }
    }

    /// Its spec, for a scenario's flow.
    pub fn spec(self) -> ControllerSpec {
        let name = match self {
            NativeController::Reno => "reno",
            NativeController::Cubic => "cubic",
        };
        ControllerSpec {
            name: name.to_string(),
            factory: Arc::new(self),
            limit: watchdog::DEFAULT_LIMIT,
        }
    }
}

impl ControllerFactory for NativeController {
    /// The built-in controllers always return: `limit` does not apply.
    fn build(
        &self,
        config: &TcpConfig,
        _limit: Duration,
    ) -> Result<Box<dyn CongestionControl>, String> {
        Ok(match self {
            NativeController::Reno => Box::new(RenoController::new(config)),
            NativeController::Cubic => Box::new(CubicController::new(config)),
        })
    }
}

/// Finds controllers by a name that is not native ("mymodule:MyCC"): an embedding registers one
/// per process with [`set_controller_resolver`] (the Python package registers its import of
/// Python classes).
pub trait ControllerResolver: Send + Sync {
    /// The factory of the controller called `name`, or why there is none.
    fn resolve(&self, name: &str) -> Result<Arc<dyn ControllerFactory>, String>;
}

/// The process's resolver of non-native controller names.
static RESOLVER: OnceLock<Box<dyn ControllerResolver>> = OnceLock::new();

/// Registers the process's resolver of non-native controller names; false if one was already
/// registered (the first stays).
pub fn set_controller_resolver(resolver: Box<dyn ControllerResolver>) -> bool {
    RESOLVER.set(resolver).is_ok()
}

/// The controller a scenario's `controller` key names: a built-in one
/// ([`NativeController::NAMES`]), a plugin (`"native:PATH[?PARAMS]"`, a shared library loaded
/// at run time, docs/controllers.md), else what the registered resolver finds; each of its
/// callbacks bounded to `limit` of wall time (zero: unbounded; loading a plugin makes one
/// instance, bounded too).
pub fn resolve_controller(name: &str, limit: Duration) -> Result<ControllerSpec, String> {
    if let Some(native) = NativeController::from_name(name) {
        return Ok(ControllerSpec {
            limit,
            ..native.spec()
        });
    }
    if let Some(spec) = name.strip_prefix(plugin::PREFIX) {
        let factory = plugin::load(name, spec, limit)?;
        return Ok(ControllerSpec {
            name: name.to_string(),
            factory: Arc::new(factory),
            limit,
        });
    }
    match RESOLVER.get() {
        Some(resolver) => resolver.resolve(name).map(|factory| ControllerSpec {
            name: name.to_string(),
            factory,
            limit,
        }),
        None => Err(format!(
            "a built-in controller ({}), \"native:PATH\" for a plugin, or \"module:Class\" \
             for a Python controller run through the tfrclab package",
            NativeController::NAMES.join(", ")
        )),
    }
}

/// A TCP flow whose window a controller decides: the TCP knobs (the variant names the loss
/// recovery) and the controller.
#[derive(Clone, Debug, PartialEq)]
pub struct ControlledTcpConfig {
    /// Every TCP knob, as for a plain `tcp` flow.
    pub tcp: TcpConfig,
    /// The controller.
    pub controller: ControllerSpec,
}

impl ControlledTcpConfig {
    /// The flow's sender with a fresh controller; if the factory fails, a sender that has
    /// failed at time 0 (in `__init__`), so that the run reports the controller's error.
    pub fn sender(&self, rng: SimRng) -> TcpSender {
        match self
            .controller
            .factory
            .build(&self.tcp, self.controller.limit)
        {
            Ok(controller) => TcpSender::with_controller(&self.tcp, rng, controller),
            Err(reason) => TcpSender::with_failed_controller(
                &self.tcp,
                rng,
                ControllerError {
                    controller: self.controller.name.clone(),
                    callback: "__init__",
                    at: Time::ZERO,
                    reason,
                },
            ),
        }
    }
}

/// A controller's misbehaviour, which ends the run: which controller, in which callback, at
/// what simulated time, and what it did.
#[derive(Clone, Debug, PartialEq)]
pub struct ControllerError {
    /// The controller's name.
    pub controller: String,
    /// The callback (`"cong_avoid"`, `"ssthresh"`, ...).
    pub callback: &'static str,
    /// The simulated time of the call.
    pub at: Time,
    /// What went wrong.
    pub reason: String,
}

impl fmt::Display for ControllerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "congestion controller {:?} failed in {} at t = {:.6} s: {}",
            self.controller,
            self.callback,
            self.at.as_secs_f64(),
            self.reason
        )
    }
}

impl std::error::Error for ControllerError {}
