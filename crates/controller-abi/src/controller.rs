//! The safe side a Rust plugin implements: the [`Controller`] trait, netsim's
//! `CongestionControl` callbacks in plain Rust, with the signals as enums.

use crate::{Ack, Params, State};

/// A congestion signal (`ssthresh`'s argument; code in the C ABI).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Reduction {
    /// Duplicate ACKs (or RFC 6675's `IsLost`, or RACK) started loss recovery.
    Recovery = 0,
    /// Tahoe's fast retransmit: go back N from a window of one packet.
    GoBackN = 1,
    /// The retransmission timer expired with data outstanding.
    Timeout = 2,
    /// The sender restarts after an idle period longer than an RTO.
    Restart = 3,
    /// An ACK carried ECN-Echo (RFC 3168): a router marked a packet instead of dropping it;
    /// nothing is retransmitted (ABI version 2).
    Ecn = 4,
}

impl Reduction {
    /// The reduction with C code `code`, if there is one.
    pub fn from_code(code: u32) -> Option<Reduction> {
        [
            Reduction::Recovery,
            Reduction::GoBackN,
            Reduction::Timeout,
            Reduction::Restart,
            Reduction::Ecn,
        ]
        .into_iter()
        .find(|r| *r as u32 == code)
    }
}

/// A change of congestion state (`set_state`'s argument; code in the C ABI).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum CaState {
    /// Loss recovery ended.
    Open = 0,
}

impl CaState {
    /// The state with C code `code`, if there is one.
    pub fn from_code(code: u32) -> Option<CaState> {
        (code == CaState::Open as u32).then_some(CaState::Open)
    }
}

/// The window a controller sets: packets, and optionally a pacing rate in bytes per second.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Window {
    /// The congestion window, packets (finite, at least 1, or the run ends).
    pub cwnd: f64,
    /// The slow-start threshold, packets (finite, at least 1).
    pub ssthresh: f64,
    /// Pace at this many bytes per second (finite, above 0); `None` leaves pacing as it is.
    pub pacing_rate: Option<f64>,
}

impl Window {
    /// A window without pacing.
    pub fn new(cwnd: f64, ssthresh: f64) -> Window {
        Window {
            cwnd,
            ssthresh,
            pacing_rate: None,
        }
    }
}

/// What a callback returns: the window to set, none to keep the current one, or an error that
/// ends the run.
pub type Decision = Result<Option<Window>, String>;

/// A congestion controller a plugin exports (with
/// [`export_controller!`](crate::export_controller)): one instance per TCP sender, called at the
/// sender's congestion events as netsim's `CongestionControl` is (docs/controllers.md, "The
/// events"). Callbacks must be deterministic functions of their arguments and the instance's
/// own state: no clock, no unseeded randomness, nothing shared between instances. A panic is
/// caught at the ABI boundary and ends the run as the controller's error.
pub trait Controller: Sized {
    /// A new instance from the scenario's parameters; take each one you use (a parameter not
    /// taken is refused).
    fn new(params: &mut Params) -> Result<Self, String>;

    /// Every ACK that moved the cumulative ACK forward, before `cong_avoid`. Default: keep.
    fn pkts_acked(&mut self, state: &State, ack: &Ack) -> Decision {
        let _ = (state, ack);
        Ok(None)
    }

    /// Such an ACK outside loss recovery: grow the window.
    fn cong_avoid(&mut self, state: &State, ack: &Ack) -> Decision;

    /// A congestion signal: the window it returns applies at once.
    fn ssthresh(&mut self, state: &State, reduction: Reduction) -> Decision;

    /// The congestion state changed. Default: keep.
    fn set_state(&mut self, state: &State, new_state: CaState) -> Decision {
        let _ = (state, new_state);
        Ok(None)
    }
}
