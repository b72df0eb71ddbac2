//! The information TFRC packets carry (RFC 5348 §3.2), independent of any byte layout.
//!
//! These owned representations are what the sender and receiver exchange. The [`crate::wire`]
//! module turns them into bytes and back for real networks; the simulator passes them as values.

use std::time::Duration;

use crate::time::Time;

/// The TFRC fields of a data packet (RFC 5348 §3.2.1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DataHeader {
    /// Sequence number: +1 per packet sent, retransmissions (if any) get new numbers.
    pub seq: u64,
    /// The sender's clock when the packet was sent; echoed back for the RTT sample.
    pub timestamp: Time,
    /// The sender's current RTT estimate R (zero before the first sample); the receiver uses it to
    /// group losses into loss events and to pace its feedback.
    pub rtt: Duration,
}

/// The fields of a feedback packet (RFC 5348 §3.2.2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FeedbackHeader {
    /// Timestamp of the most recently received data packet, echoed (t_recvdata).
    pub timestamp_echo: Time,
    /// How long the receiver held that packet before sending this report (t_delay).
    pub t_delay: Duration,
    /// Receive rate over the last feedback interval, bytes per second (X_recv).
    pub x_recv_bytes_per_s: f64,
    /// Loss event rate estimate, in [0, 1]; 0 means no loss seen yet.
    pub p: f64,
}

/// Whether the network marked a data packet with ECN Congestion Experienced (RFC 5348 §5.1 treats
/// a mark as a lost packet for loss-event purposes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Ecn {
    /// Not marked (or ECN not in use).
    #[default]
    NotCe,
    /// Congestion Experienced.
    Ce,
}
