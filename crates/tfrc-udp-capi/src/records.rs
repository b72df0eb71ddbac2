//! The plain C structs the API fills in (statistics, rate changes, expired payloads, a
//! received payload's metadata) and their conversion from tfrc-udp's types. Rates are in
//! bytes per second, durations in seconds as doubles, timestamps in nanoseconds on the
//! session's own clock (which starts when the session is opened).

use tfrc_udp::{Expired, RateChange, ReceivedPayload, ReceiverReport, SenderReport};

/// A sender's live statistics (`tfrc_udp_sender_stats`): the TFRC state as of its loop's last
/// pass, the queue as of the call.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TfrcUdpSenderStats {
    /// When the loop last updated these, ns on the sender's clock (0 before its first pass).
    pub time_ns: u64,
    /// The allowed sending rate X, bytes/s.
    pub x_bytes_per_s: f64,
    /// The throughput equation's rate X_calc for the last reported p, bytes/s (infinite while
    /// p is 0).
    pub x_calc_bytes_per_s: f64,
    /// The receive rate X_recv the receiver last reported, bytes/s.
    pub x_recv_bytes_per_s: f64,
    /// The loss event rate p the receiver last reported.
    pub p: f64,
    /// The smoothed round-trip time R, seconds (0 before the first sample).
    pub rtt_s: f64,
    /// The retransmission timeout t_RTO used in the equation, seconds.
    pub t_rto_s: f64,
    /// Whether the sender is still in slow start (no loss reported yet).
    pub slow_start: bool,
    /// Payloads waiting in the queue now.
    pub queued: u64,
    /// Payloads the queue accepted.
    pub queue_accepted: u64,
    /// Payloads refused because the queue was full.
    pub queue_full_drops: u64,
    /// Payloads dropped at their deadline.
    pub queue_expired: u64,
    /// Payloads removed by a flush.
    pub queue_flushed: u64,
    /// Payloads taken from the queue for sending.
    pub queue_sent: u64,
    /// Data packets handed to the socket.
    pub packets_sent: u64,
    /// Their bytes, whole datagrams (header included).
    pub bytes_sent: u64,
    /// Data packets the socket refused (counted by TFRC as lost on the path).
    pub send_errors: u64,
    /// Feedback reports accepted.
    pub feedback_received: u64,
    /// Feedback reports rejected (malformed, replayed, forged, from the future).
    pub feedback_ignored: u64,
    /// Nofeedback timer expiries: times no report came in time, each of which may lower X
    /// (RFC 5348 §4.4).
    pub nofeedback_expiries: u64,
    /// Datagrams read and dropped: not from the peer, malformed, or of the wrong kind.
    pub input_dropped: u64,
    /// CPU time the loop's thread has used, seconds.
    pub cpu_s: f64,
}

impl From<&SenderReport> for TfrcUdpSenderStats {
    fn from(r: &SenderReport) -> Self {
        TfrcUdpSenderStats {
            time_ns: r.time.as_nanos(),
            x_bytes_per_s: r.tfrc.x_bytes_per_s,
            x_calc_bytes_per_s: r.tfrc.x_calc_bytes_per_s,
            x_recv_bytes_per_s: r.tfrc.x_recv_bytes_per_s,
            p: r.tfrc.p,
            rtt_s: r.tfrc.rtt_s,
            t_rto_s: r.tfrc.t_rto_s,
            slow_start: r.tfrc.slow_start,
            queued: r.queued as u64,
            queue_accepted: r.queue.queued,
            queue_full_drops: r.queue.full_drops,
            queue_expired: r.queue.expired,
            queue_flushed: r.queue.flushed,
            queue_sent: r.queue.sent,
            packets_sent: r.packets_sent,
            bytes_sent: r.bytes_sent,
            send_errors: r.send_errors,
            feedback_received: r.tfrc.feedback_received,
            feedback_ignored: r.tfrc.feedback_ignored,
            nofeedback_expiries: r.tfrc.nofeedback_expiries,
            input_dropped: r.input.dropped(),
            cpu_s: r.cpu_s,
        }
    }
}

/// A receiver's live statistics (`tfrc_udp_receiver_stats`), as of its loop's last pass.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TfrcUdpReceiverStats {
    /// When the loop last updated these, ns on the receiver's clock (0 before its first pass).
    pub time_ns: u64,
    /// Data packets received, over all sessions.
    pub packets_received: u64,
    /// Their bytes, whole datagrams.
    pub bytes_received: u64,
    /// Packets declared lost, over all sessions.
    pub packets_lost: u64,
    /// Loss events in the current sender's session (RFC 5348 §5.2).
    pub loss_events: u64,
    /// The loss event rate p of the current session.
    pub p: f64,
    /// The receive rate X_recv last reported to the sender, bytes/s.
    pub x_recv_bytes_per_s: f64,
    /// The round-trip time R the sender last announced, seconds.
    pub rtt_s: f64,
    /// Feedback reports sent, over all sessions.
    pub feedback_sent: u64,
    /// Feedback reports the socket refused.
    pub send_errors: u64,
    /// Sender sessions seen (a new sender, or the same one restarted).
    pub sessions: u64,
    /// Datagrams read and dropped: malformed, of another session, or of the wrong kind.
    pub input_dropped: u64,
    /// Payloads dropped because the application left `max_pending` of them unread.
    pub overflow: u64,
}

impl TfrcUdpReceiverStats {
    /// The C form of `r`, with the overflow count the background receiver keeps beside it.
    pub(crate) fn of(r: &ReceiverReport, overflow: u64) -> Self {
        TfrcUdpReceiverStats {
            time_ns: r.time.as_nanos(),
            packets_received: r.packets_received,
            bytes_received: r.bytes_received,
            packets_lost: r.packets_lost,
            loss_events: r.tfrc.loss_events,
            p: r.tfrc.p,
            x_recv_bytes_per_s: r.tfrc.x_recv_bytes_per_s,
            rtt_s: r.tfrc.rtt_s,
            feedback_sent: r.feedback_sent,
            send_errors: r.send_errors,
            sessions: r.sessions,
            input_dropped: r.input.dropped(),
            overflow,
        }
    }
}

/// A change of the allowed rate by more than 5% (`tfrc_udp_sender_next_rate_change`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TfrcUdpRateChange {
    /// When, ns on the sender's clock.
    pub time_ns: u64,
    /// The new allowed rate X, bytes/s.
    pub x_bytes_per_s: f64,
    /// The loss event rate p behind it.
    pub p: f64,
    /// The smoothed round-trip time, seconds.
    pub rtt_s: f64,
}

impl From<&RateChange> for TfrcUdpRateChange {
    fn from(c: &RateChange) -> Self {
        TfrcUdpRateChange {
            time_ns: c.time.as_nanos(),
            x_bytes_per_s: c.x_bytes_per_s,
            p: c.p,
            rtt_s: c.rtt_s,
        }
    }
}

/// A payload dropped at its deadline (`tfrc_udp_sender_next_expired`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TfrcUdpExpired {
    /// The ticket `tfrc_udp_sender_send` returned for it.
    pub ticket: u64,
    /// Its priority.
    pub priority: u8,
    /// Its group (`tfrc_udp_sender_send_grouped`), or -1 for none.
    pub group: i64,
    /// When it was queued, ns on the sender's clock.
    pub queued_ns: u64,
    /// Its deadline, ns on the sender's clock.
    pub deadline_ns: u64,
    /// When it was dropped (at its turn to be sent, or when a full queue made room), ns on the
    /// sender's clock.
    pub dropped_ns: u64,
}

impl From<&Expired> for TfrcUdpExpired {
    fn from(e: &Expired) -> Self {
        TfrcUdpExpired {
            ticket: e.ticket,
            priority: e.priority,
            group: e.group.and_then(|g| i64::try_from(g).ok()).unwrap_or(-1),
            queued_ns: e.queued.as_nanos(),
            deadline_ns: e.deadline.as_nanos(),
            dropped_ns: e.dropped.as_nanos(),
        }
    }
}

/// A received payload's metadata (`tfrc_udp_receiver_recv`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TfrcUdpDelivery {
    /// The payload's length in bytes: copied into the buffer on success, or the buffer size
    /// needed on TFRC_UDP_STATUS_BUFFER_TOO_SMALL.
    pub len: u64,
    /// The packet's sequence number.
    pub seq: u64,
    /// When it was sent, ns on the sender's clock. The two clocks have different origins:
    /// `arrival_ns - sent_ns` is the one-way delay plus a constant, and its changes are the
    /// delay's changes (jitter, queueing).
    pub sent_ns: u64,
    /// When it arrived, ns on the receiver's clock.
    pub arrival_ns: u64,
    /// Sequence numbers skipped just before it (0 when in order): lost, or still to come.
    pub gap: u64,
    /// Whether it arrived after a packet with a higher sequence number (filling a gap).
    pub late: bool,
    /// Packets declared lost so far in this session.
    pub lost_total: u64,
    /// The loss event rate p at its arrival.
    pub p: f64,
}

impl From<&ReceivedPayload> for TfrcUdpDelivery {
    fn from(d: &ReceivedPayload) -> Self {
        TfrcUdpDelivery {
            len: d.payload.len() as u64,
            seq: d.seq,
            sent_ns: d.sent.as_nanos(),
            arrival_ns: d.arrival.as_nanos(),
            gap: d.gap,
            late: d.late,
            lost_total: d.lost_total,
            p: d.p,
        }
    }
}
