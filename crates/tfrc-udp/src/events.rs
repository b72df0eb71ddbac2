//! Structured events through the `tracing` crate, when the crate's `tracing` feature is on (it
//! is off by default, and then the events compile to nothing and the crate has no such
//! dependency).
//!
//! Every event has the target `tfrc_udp::sender` or `tfrc_udp::receiver`, a field `event`
//! naming it, `time_s` on the session's clock, and the fields below: with a JSON subscriber
//! (for instance `tracing_subscriber::fmt().json()`) they make an event log a plot can read
//! (the `media` example's `--events FILE` writes one).
//!
//! | event | level | fields |
//! |---|---|---|
//! | `report` | debug | a report accepted: `x_recv_bps`, `p`, `rtt_s` (the sample), then `x_bps`, `x_calc_bps`, `rtt_smoothed_s` |
//! | `report_rejected` | debug | a report the TFRC sender refused: `cause` |
//! | `rate_change` | info | X moved by more than 5%: `x_bps`, `p`, `rtt_s` |
//! | `nofeedback` | info | the nofeedback timer expired: `x_bps` after it |
//! | `expired` | debug | a payload dropped at its deadline: `ticket`, `priority`, `late_s` |
//! | `send_error` | warn | the socket refused a data packet: `error` |
//! | `input_dropped` | debug | a datagram dropped: `cause` |
//! | `session` | info | the receiver opened a session: `peer`, `sessions` |
//! | `loss_event` | debug | the receiver saw a new loss event: `p`, `lost_total`, `loss_events` |
//! | `feedback` | debug | the receiver sent a report: `x_recv_bps`, `p` |

/// Emits a `tracing` event at `$level` with `event = $name` and the given fields (when the
/// `tracing` feature is on; otherwise nothing, and the field expressions are not evaluated).
#[cfg(feature = "tracing")]
macro_rules! emit {
    ($level:ident, $target:literal, $name:literal $(, $field:ident = $value:expr)* $(,)?) => {
        tracing::$level!(target: $target, event = $name $(, $field = $value)*)
    };
}

/// Emits a `tracing` event (the `tracing` feature is off: nothing).
#[cfg(not(feature = "tracing"))]
macro_rules! emit {
    ($level:ident, $target:literal, $name:literal $(, $field:ident = $value:expr)* $(,)?) => {
        // The field expressions are type-checked, never evaluated.
        if false {
            $(let _ = &$value;)*
        }
    };
}

pub(crate) use emit;
