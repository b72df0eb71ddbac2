//! The `#[repr(C)]` types host and plugin exchange, field for field what a C header would
//! declare: the sender's state, an ACK, a callback's outcome, and the vtable of callbacks.

use std::ffi::c_void;

/// The sender's state at a callback (netsim's `CcState`): what Linux's congestion ops read from
/// `struct tcp_sock`. Packet counts are in packets of `packet_bytes`; times in seconds.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct State {
    /// The simulated time of the event, seconds.
    pub now: f64,
    /// The congestion window, packets.
    pub cwnd: f64,
    /// The slow-start threshold, packets.
    pub ssthresh: f64,
    /// min(cwnd + Reno's recovery inflation, window): what ns-2's reductions start from.
    pub win: f64,
    /// The smoothed RTT in seconds (whole timer ticks); 0 before the first sample.
    pub srtt: f64,
    /// Packets sent and not cumulatively acknowledged.
    pub flight: u64,
    /// The highest cumulative ACK (-1 before any).
    pub highest_ack: i64,
    /// The highest sequence number sent (-1 before any).
    pub max_sent: i64,
    /// The receiver window (the scenario's `window`), packets.
    pub window: u32,
    /// Payload bytes per packet.
    pub packet_bytes: u32,
    /// In loss recovery.
    pub in_recovery: bool,
    /// No reduction has happened yet on this connection.
    pub first_reduction: bool,
    /// The last congestion response was a retransmission timeout.
    pub after_timeout: bool,
    /// Everything the application supplied has been sent.
    pub app_limited: bool,
}

/// An ACK that moved the cumulative ACK forward.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ack {
    /// Payload bytes newly acknowledged.
    pub acked_bytes: u64,
    /// The RTT of the newest packet acknowledged, seconds; meaningful only if `has_rtt`.
    pub rtt_seconds: f64,
    /// Packets newly acknowledged (at least 1).
    pub acked: u32,
    /// False when the newest packet acknowledged was retransmitted (Karn): no RTT sample.
    pub has_rtt: bool,
    /// The ACK carried ECN-Echo (the flow's `ecn` is on and a router marked a packet; ABI
    /// version 2).
    pub ece: bool,
}

impl Ack {
    /// The RTT sample in seconds, if the ACK carries one.
    pub fn rtt(&self) -> Option<f64> {
        self.has_rtt.then_some(self.rtt_seconds)
    }
}

/// [`Outcome::status`]: keep the current window.
pub const OUTCOME_KEEP: u32 = 0;
/// [`Outcome::status`]: set the window in `cwnd`, `ssthresh` (and `pacing_rate` if
/// `has_pacing_rate`).
pub const OUTCOME_SET: u32 = 1;
/// [`Outcome::status`]: the controller failed; `message` says why. The run ends.
pub const OUTCOME_FAIL: u32 = 2;

/// How many bytes of message an [`Outcome`] holds (longer messages are cut).
pub const MESSAGE_CAPACITY: usize = 256;

/// What a callback decided, written into memory the host owns and zeroed
/// ([`OUTCOME_KEEP`]) before each call.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Outcome {
    /// [`OUTCOME_KEEP`], [`OUTCOME_SET`] or [`OUTCOME_FAIL`]; anything else is an error.
    pub status: u32,
    /// Nonzero: `pacing_rate` is set.
    pub has_pacing_rate: u32,
    /// The congestion window, packets (finite, at least 1).
    pub cwnd: f64,
    /// The slow-start threshold, packets (finite, at least 1).
    pub ssthresh: f64,
    /// The pacing rate, bytes per second (finite, above 0).
    pub pacing_rate: f64,
    /// How many bytes of `message` are used (at most [`MESSAGE_CAPACITY`]).
    pub message_len: u32,
    /// UTF-8 text saying why the controller failed.
    pub message: [u8; MESSAGE_CAPACITY],
}

impl Outcome {
    /// An outcome that keeps the window, as the host hands it to each call.
    pub const fn keep() -> Outcome {
        Outcome {
            status: OUTCOME_KEEP,
            has_pacing_rate: 0,
            cwnd: 0.0,
            ssthresh: 0.0,
            pacing_rate: 0.0,
            message_len: 0,
            message: [0; MESSAGE_CAPACITY],
        }
    }

    /// Marks the outcome failed with `text`, cut at a character boundary to fit.
    pub fn fail(&mut self, text: &str) {
        let mut end = text.len().min(MESSAGE_CAPACITY);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        self.status = OUTCOME_FAIL;
        self.message[..end].copy_from_slice(&text.as_bytes()[..end]);
        // `end` is at most MESSAGE_CAPACITY (256), so it fits.
        self.message_len = end as u32;
    }

    /// The failure message (invalid UTF-8 replaced, the length clamped to the buffer).
    pub fn message(&self) -> String {
        let len = (self.message_len as usize).min(MESSAGE_CAPACITY);
        String::from_utf8_lossy(&self.message[..len]).into_owned()
    }
}

/// `create(params, params_len, outcome)`: a new controller instance for one sender, from the
/// parameter text (UTF-8, `params_len` bytes, not NUL-terminated); null with a failed
/// `outcome` if it cannot be made.
pub type CreateFn = unsafe extern "C" fn(
    params: *const u8,
    params_len: usize,
    outcome: *mut Outcome,
) -> *mut c_void;

/// `destroy(controller)`: frees an instance `create` returned; called once per instance.
pub type DestroyFn = unsafe extern "C" fn(controller: *mut c_void);

/// `pkts_acked` and `cong_avoid`: an ACK moved the cumulative ACK forward.
pub type AckFn = unsafe extern "C" fn(
    controller: *mut c_void,
    state: *const State,
    ack: *const Ack,
    outcome: *mut Outcome,
);

/// `ssthresh` (the argument a [`Reduction`](crate::Reduction) code) and `set_state` (a
/// [`CaState`](crate::CaState) code).
pub type SignalFn = unsafe extern "C" fn(
    controller: *mut c_void,
    state: *const State,
    code: u32,
    outcome: *mut Outcome,
);

/// The callbacks of a plugin's controller. Every pointer is nullable for C's sake; the host
/// refuses a vtable whose `create`, `destroy`, `cong_avoid` or `ssthresh` is null, and skips a
/// null `pkts_acked` or `set_state`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Vtable {
    /// The [`ABI_VERSION`](crate::ABI_VERSION) the plugin was built against. First in every
    /// version, so that the host can read it from any.
    pub abi_version: u32,
    /// Makes an instance.
    pub create: Option<CreateFn>,
    /// Frees an instance.
    pub destroy: Option<DestroyFn>,
    /// Every ACK that moved the cumulative ACK, before `cong_avoid` (optional).
    pub pkts_acked: Option<AckFn>,
    /// Such an ACK outside loss recovery: grow the window.
    pub cong_avoid: Option<AckFn>,
    /// A congestion signal ([`Reduction`](crate::Reduction) code).
    pub ssthresh: Option<SignalFn>,
    /// The congestion state changed ([`CaState`](crate::CaState) code; optional).
    pub set_state: Option<SignalFn>,
}

// The C header (include/tfrclab_controller.h) asserts the same sizes and offsets, so that a
// change on one side without the other fails to compile.
const _: () = assert!(std::mem::size_of::<State>() == 80);
const _: () = assert!(std::mem::size_of::<Ack>() == 24);
const _: () = assert!(std::mem::size_of::<Outcome>() == 296);
const _: () = assert!(std::mem::offset_of!(Outcome, message) == 36);
const _: () =
    assert!(std::mem::offset_of!(Vtable, set_state) == 6 * std::mem::size_of::<*const u8>());

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_message_is_cut_at_a_character_boundary_to_fit() {
        let mut outcome = Outcome::keep();
        outcome.fail("short");
        assert_eq!(
            (outcome.status, outcome.message()),
            (OUTCOME_FAIL, "short".to_string())
        );
        // 255 ASCII bytes then a two-byte character: the character does not fit whole.
        let long = format!("{}é and more", "x".repeat(MESSAGE_CAPACITY - 1));
        let mut outcome = Outcome::keep();
        outcome.fail(&long);
        assert_eq!(outcome.message(), "x".repeat(MESSAGE_CAPACITY - 1));
        assert_eq!(
            Ack {
                acked_bytes: 1000,
                rtt_seconds: 0.1,
                acked: 1,
                has_rtt: false,
                ece: false,
            }
            .rtt(),
            None
        );
    }
}
