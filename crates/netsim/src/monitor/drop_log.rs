//! The opt-in per-flow drop log: the send time of each of a flow's dropped data packets, so the
//! loss events can be regrouped afterwards with an RTT other than the monitor's
//! `loss_event_rtt` (e.g. the flow's measured RTT, RFC 5348 §5.2 groups losses with the
//! sender's RTT estimate) without keeping the per-packet trace. Bounded: at most `limit` send
//! times are kept; later drops set [`DropLogRecord::overflowed`] and are not recorded.

use tfrc::Time;

/// The default cap on send times kept per logged flow (8 MB per flow).
pub const DEFAULT_DROP_LOG_LIMIT: usize = 1_000_000;

/// A flow's drop log while the run goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DropLog {
    send_times: Vec<Time>,
    limit: usize,
    overflowed: bool,
}

impl DropLog {
    /// A log keeping at most `limit` send times.
    pub fn new(limit: usize) -> DropLog {
        DropLog {
            send_times: Vec::new(),
            limit,
            overflowed: false,
        }
    }

    /// A data packet sent at `sent_at` was dropped: keeps its send time, unless the log is full.
    pub fn record(&mut self, sent_at: Time) {
        if self.send_times.len() < self.limit {
            self.send_times.push(sent_at);
        } else {
            self.overflowed = true;
        }
    }

    /// The log as the run's record.
    pub fn finish(self) -> DropLogRecord {
        DropLogRecord {
            send_times: self.send_times,
            limit: self.limit,
            overflowed: self.overflowed,
        }
    }
}

/// A flow's drop log at the end of the run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DropLogRecord {
    /// The send times of the dropped data packets, in the order the drops happened (drop
    /// time, not send time: drops on different hops may interleave).
    pub send_times: Vec<Time>,
    /// The cap the log ran with (`monitor.drop_log_limit`).
    pub limit: usize,
    /// Whether drops beyond the cap went unrecorded: the log then covers only the first
    /// `limit` drops.
    pub overflowed: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_send_times_in_order_up_to_the_limit() {
        let mut log = DropLog::new(2);
        log.record(Time::from_secs_f64(1.0));
        log.record(Time::from_secs_f64(0.5));
        let partial = log.clone().finish();
        assert_eq!(partial.send_times.len(), 2);
        assert!(!partial.overflowed);
        log.record(Time::from_secs_f64(2.0));
        let full = log.finish();
        assert_eq!(
            full.send_times,
            vec![Time::from_secs_f64(1.0), Time::from_secs_f64(0.5)]
        );
        assert!(full.overflowed);
        assert_eq!(full.limit, 2);
    }
}
