//! The sender's checks on feedback (docs/tfrc.md, "Feedback validation"): why a report is
//! rejected, per-cause reject counters, and the log of send timestamps an echo must match.
//!
//! A report's RTT sample is R_sample = (t_now - t_recvdata) - t_delay (RFC 5348 §4.3 step 2),
//! where t_recvdata is the timestamp of a data packet the receiver got, echoed back (§3.2.2,
//! §6.2). The sender can check each term cheaply: t_recvdata must be a timestamp it put on a
//! data packet, so neither later than t_now nor unknown, and t_delay cannot be longer than the
//! time since that packet left (else the sample would be negative). Each report must also claim
//! a data packet as its newest that no accepted report has claimed: a second report for the
//! same packet (a replay, exact or with other fields) tells the sender nothing it has not acted
//! on already, and acting on it again is what a replayer needs. Failing reports are the
//! peer's fault (a broken or hostile receiver, or a forger); like malformed packets (design
//! convention 3) they are rejected and counted, never acted on. Spoofed feedback is the threat
//! RFC 5348 §9 names; what these checks cannot stop (a peer that sees the data packets) is left,
//! as there, to the transport.

use std::collections::VecDeque;
use std::fmt;

use crate::time::Time;

/// Why the sender rejected a feedback packet (always the peer's fault, or a forger's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FeedbackError {
    /// A field holds a value outside its domain (RFC 5348 §3.2.2): p not in [0, 1], or X_recv
    /// not a finite non-negative number.
    InvalidField {
        /// `p` or `x_recv`, as named in `docs/wire-format.md`.
        field: &'static str,
    },
    /// The echoed timestamp is later than the time the report arrived: no data packet sent by
    /// then carries it.
    EchoFromFuture,
    /// The report claims no data packet that an accepted report has not: its echo is older than
    /// the last accepted one, or the same while every packet stamped with it has been claimed
    /// (docs/tfrc.md, "Replays"). A replay of an earlier report, byte for byte or with other
    /// p, X_recv or t_delay, or a late duplicate.
    Replay,
    /// The echoed timestamp is not one this sender put on a data packet at or after the newest
    /// echo it accepted (or it is older than the [`MAX_UNACKED_SEND_TIMES`] newest send times).
    /// Checked after [`FeedbackError::Replay`], so it names echoes newer than every accepted
    /// one that match no send time.
    UnknownEcho,
    /// t_delay is longer than the time since the echoed packet was sent: the receiver claims
    /// to have held the packet before it existed, which would make the RTT sample negative.
    DelayExceedsElapsed,
}

impl fmt::Display for FeedbackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FeedbackError::InvalidField { field } => write!(f, "invalid {field} in feedback"),
            FeedbackError::EchoFromFuture => {
                f.write_str("feedback echoes a timestamp from the future")
            }
            FeedbackError::Replay => f.write_str(
                "feedback echoes no newer data packet than a report already accepted (a replay)",
            ),
            FeedbackError::UnknownEcho => {
                f.write_str("feedback echoes a timestamp no recent data packet carried")
            }
            FeedbackError::DelayExceedsElapsed => f.write_str(
                "feedback reports a receiver delay longer than the time since the packet was sent",
            ),
        }
    }
}

impl std::error::Error for FeedbackError {}

/// Counts of feedback packets the sender processed: how many it accepted and, for the rest, why
/// it rejected them (the pattern of [`crate::wire::WireStats`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FeedbackStats {
    /// Reports acted on.
    pub accepted: u64,
    /// Rejected as [`FeedbackError::InvalidField`].
    pub bad_field: u64,
    /// Rejected as [`FeedbackError::EchoFromFuture`].
    pub echo_from_future: u64,
    /// Rejected as [`FeedbackError::Replay`].
    pub replayed: u64,
    /// Rejected as [`FeedbackError::UnknownEcho`].
    pub unknown_echo: u64,
    /// Rejected as [`FeedbackError::DelayExceedsElapsed`].
    pub delay_exceeds_elapsed: u64,
}

impl FeedbackStats {
    /// Counts one report under `accepted` or under its error's cause.
    pub fn record<T>(&mut self, result: &Result<T, FeedbackError>) {
        match result {
            Ok(_) => self.accepted = self.accepted.saturating_add(1),
            Err(err) => self.record_error(err),
        }
    }

    /// Counts one rejected report under its cause.
    pub fn record_error(&mut self, err: &FeedbackError) {
        let counter = match err {
            FeedbackError::InvalidField { .. } => &mut self.bad_field,
            FeedbackError::EchoFromFuture => &mut self.echo_from_future,
            FeedbackError::Replay => &mut self.replayed,
            FeedbackError::UnknownEcho => &mut self.unknown_echo,
            FeedbackError::DelayExceedsElapsed => &mut self.delay_exceeds_elapsed,
        };
        *counter = counter.saturating_add(1);
    }

    /// All rejected reports, whatever the cause.
    pub fn rejected(&self) -> u64 {
        [
            self.bad_field,
            self.echo_from_future,
            self.replayed,
            self.unknown_echo,
            self.delay_exceeds_elapsed,
        ]
        .into_iter()
        .fold(0, u64::saturating_add)
    }

    /// Accepted plus rejected.
    pub fn total(&self) -> u64 {
        self.accepted.saturating_add(self.rejected())
    }
}

/// The most send times the sender keeps for matching echoes (1 MiB at most). It only holds
/// the packets sent since the newest accepted echo, about one RTT of them plus the receiver's
/// delay; a path with more than this many packets in flight (about 5 Gb/s at 100 ms with
/// 1000-byte packets) has its oldest honest echoes rejected as unknown, until the nofeedback
/// timer has brought the rate down (docs/tfrc.md, "Feedback validation").
pub const MAX_UNACKED_SEND_TIMES: usize = 1 << 16;

/// The send timestamps of the data packets no accepted report has claimed yet, oldest first,
/// each with how many packets carried it: the echoes a report may carry (RFC 5348 §3.2.2,
/// §6.2: the receiver echoes the timestamp of the newest data packet it received, so honest
/// echoes never go back in time), and the newest accepted echo.
///
/// Each accepted report claims one packet as its newest: its echo's oldest unclaimed packet.
/// A second report with the same echo is new information only if another packet carried that
/// timestamp (a burst sent at one instant) and is still unclaimed; otherwise it is a replay.
#[derive(Clone, Debug, Default)]
pub(crate) struct SendTimes {
    /// (timestamp, packets carrying it not yet claimed), sorted by timestamp, counts >= 1.
    times: VecDeque<(Time, u32)>,
    newest_accepted: Option<Time>,
}

impl SendTimes {
    /// Notes a data packet stamped `timestamp`. A burst stamped with one time takes one entry.
    pub(crate) fn on_send(&mut self, timestamp: Time) {
        match self.times.back_mut() {
            Some((last, count)) if *last == timestamp => {
                *count = count.saturating_add(1);
                return;
            }
            Some(&mut (last, _)) if last > timestamp => {
                // A caller whose clock went back: keep the log sorted (never on a sane clock).
                let at = self.times.partition_point(|&(t, _)| t < timestamp);
                match self.times.get_mut(at) {
                    Some((t, count)) if *t == timestamp => *count = count.saturating_add(1),
                    _ => self.times.insert(at, (timestamp, 1)),
                }
            }
            _ => self.times.push_back((timestamp, 1)),
        }
        if self.times.len() > MAX_UNACKED_SEND_TIMES {
            self.times.pop_front();
        }
    }

    /// Whether a report echoing `echo` would claim no packet that no accepted report has: its
    /// echo is older than the newest accepted one, or the same with every packet carrying that
    /// timestamp already claimed (a replayed report, exact or modified).
    pub(crate) fn is_replay(&self, echo: Time) -> bool {
        match self.newest_accepted {
            Some(newest) if echo < newest => true,
            Some(newest) if echo == newest => !self.contains(echo),
            _ => false,
        }
    }

    /// Whether an unclaimed data packet in the log carried `echo` (a binary search).
    pub(crate) fn contains(&self, echo: Time) -> bool {
        self.times.binary_search_by_key(&echo, |&(t, _)| t).is_ok()
    }

    /// A report echoing `echo` was accepted: it claims one packet stamped `echo`, and older
    /// send times can no longer be echoed.
    pub(crate) fn on_echo_accepted(&mut self, echo: Time) {
        while self.times.front().is_some_and(|&(t, _)| t < echo) {
            self.times.pop_front();
        }
        if let Some((t, count)) = self.times.front_mut() {
            if *t == echo {
                *count -= 1;
                if *count == 0 {
                    self.times.pop_front();
                }
            }
        }
        self.newest_accepted = Some(echo);
    }

    /// Send times held.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.times.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_count_by_cause() {
        let mut stats = FeedbackStats::default();
        stats.record(&Ok::<(), FeedbackError>(()));
        for err in [
            FeedbackError::InvalidField { field: "p" },
            FeedbackError::EchoFromFuture,
            FeedbackError::Replay,
            FeedbackError::UnknownEcho,
            FeedbackError::UnknownEcho,
            FeedbackError::DelayExceedsElapsed,
        ] {
            stats.record::<()>(&Err(err));
        }
        assert_eq!(
            stats,
            FeedbackStats {
                accepted: 1,
                bad_field: 1,
                echo_from_future: 1,
                replayed: 1,
                unknown_echo: 2,
                delay_exceeds_elapsed: 1,
            }
        );
        assert_eq!(stats.rejected(), 6);
        assert_eq!(stats.total(), 7);
    }

    #[test]
    fn display_names_the_problem() {
        assert_eq!(
            FeedbackError::InvalidField { field: "x_recv" }.to_string(),
            "invalid x_recv in feedback"
        );
        assert!(FeedbackError::EchoFromFuture.to_string().contains("future"));
        assert!(FeedbackError::UnknownEcho.to_string().contains("no recent"));
        assert!(FeedbackError::Replay.to_string().contains("replay"));
        assert!(FeedbackError::DelayExceedsElapsed
            .to_string()
            .contains("longer than"));
    }

    #[test]
    fn send_times_match_exactly_and_forget_acknowledged_ones() {
        let t = Time::from_nanos;
        let mut log = SendTimes::default();
        for ns in [10, 20, 20, 30, 40] {
            log.on_send(t(ns));
        }
        assert_eq!(log.len(), 4);
        assert!(log.contains(t(20)) && log.contains(t(40)));
        assert!(!log.contains(t(25)) && !log.contains(t(50)));
        assert!(!log.is_replay(t(40)));
        log.on_echo_accepted(t(30));
        assert!(!log.contains(t(20)) && !log.contains(t(30)));
        // The accepted echo and older ones are replays; newer ones are not.
        assert!(log.is_replay(t(30)) && log.is_replay(t(20)) && log.is_replay(t(1)));
        assert!(!log.is_replay(t(31)) && log.contains(t(40)));
        // A send stamped earlier than the newest one (a clock that went back) stays findable.
        log.on_send(t(35));
        assert!(log.contains(t(35)));
        assert_eq!(log.len(), 2);
    }

    #[test]
    fn a_burst_stamped_at_one_instant_allows_one_report_per_packet() {
        let t = Time::from_nanos;
        let mut log = SendTimes::default();
        for ns in [10, 20, 20, 20, 30] {
            log.on_send(t(ns));
        }
        // Three packets carried 20: three reports may echo it (each claiming one), not four.
        for _ in 0..3 {
            assert!(!log.is_replay(t(20)) && log.contains(t(20)));
            log.on_echo_accepted(t(20));
        }
        assert!(log.is_replay(t(20)) && log.is_replay(t(10)));
        assert!(!log.is_replay(t(30)) && log.contains(t(30)));
        log.on_echo_accepted(t(30));
        assert!(log.is_replay(t(30)));
        assert_eq!(log.len(), 0);
    }

    #[test]
    fn send_times_are_bounded() {
        let mut log = SendTimes::default();
        for ns in 0..(MAX_UNACKED_SEND_TIMES as u64 + 10) {
            log.on_send(Time::from_nanos(ns));
        }
        assert_eq!(log.len(), MAX_UNACKED_SEND_TIMES);
        assert!(!log.contains(Time::from_nanos(9)));
        assert!(log.contains(Time::from_nanos(10)));
    }
}
