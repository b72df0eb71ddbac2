//! Per-interval statistics (one row per second by default): what `tfrclab send`/`recv` print and
//! write as a trace, in the units of the simulator's per-bin flow series.

use std::time::Duration;

use tfrc::Time;

/// One interval at the sender. Counts are over the interval; rates and estimates are the values
/// at its end.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SenderSample {
    /// The interval's end, seconds since the session started.
    pub time_s: f64,
    /// Data packets sent.
    pub sent_packets: u64,
    /// Bytes sent (whole datagrams).
    pub sent_bytes: u64,
    /// Payloads the application queue refused (full).
    pub queue_drops: u64,
    /// Payloads dropped at their deadline.
    pub queue_expired: u64,
    /// The allowed rate X, bytes/s.
    pub x_bytes_per_s: f64,
    /// The receive rate X_recv last reported, bytes/s.
    pub x_recv_bytes_per_s: f64,
    /// The loss event rate p last reported.
    pub p: f64,
    /// The smoothed RTT R, seconds.
    pub rtt_s: f64,
    /// Feedback packets accepted.
    pub feedback_accepted: u64,
    /// Feedback packets the TFRC sender rejected (forged, replayed, out of range).
    pub feedback_rejected: u64,
    /// Other datagrams dropped (foreign, malformed, wrong kind).
    pub input_dropped: u64,
    /// Nofeedback timer expirations.
    pub nofeedback_expiries: u64,
}

/// One interval at the receiver.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ReceiverSample {
    /// The interval's end, seconds since the session started.
    pub time_s: f64,
    /// Data packets received (duplicates and stale packets not counted).
    pub received_packets: u64,
    /// Bytes received (whole datagrams).
    pub received_bytes: u64,
    /// Packets declared lost.
    pub lost_packets: u64,
    /// New loss events.
    pub loss_events: u64,
    /// The loss event rate p at the interval's end.
    pub p: f64,
    /// The receive rate X_recv last reported, bytes/s.
    pub x_recv_bytes_per_s: f64,
    /// The sender's RTT estimate as carried in its data packets, seconds.
    pub rtt_s: f64,
    /// Feedback packets sent.
    pub feedback_sent: u64,
    /// Datagrams dropped (foreign, malformed, wrong kind).
    pub input_dropped: u64,
}

/// The most samples a session keeps (a day of 1 s intervals fits); later ones are counted as
/// dropped, so that a long run at a short interval cannot grow memory without bound.
pub const MAX_SAMPLES: usize = 1 << 17;

/// A bounded log of samples taken every `interval`.
#[derive(Clone, Debug)]
pub(crate) struct SampleLog<T> {
    rows: Vec<T>,
    interval: Duration,
    next: Time,
    dropped: u64,
}

impl<T> SampleLog<T> {
    /// A log whose first sample is due `interval` after `start`.
    pub(crate) fn new(start: Time, interval: Duration) -> Self {
        SampleLog {
            rows: Vec::new(),
            interval,
            next: start + interval,
            dropped: 0,
        }
    }

    /// When the next sample is due.
    pub(crate) fn next_due(&self) -> Time {
        self.next
    }

    /// Whether a sample is due at `now`.
    pub(crate) fn due(&self, now: Time) -> bool {
        now >= self.next
    }

    /// Records a sample and schedules the next one interval later (skipping intervals the loop
    /// slept through, so a stalled session does not produce a burst of rows).
    pub(crate) fn push(&mut self, now: Time, row: T) {
        if self.rows.len() < MAX_SAMPLES {
            self.rows.push(row);
        } else {
            self.dropped += 1;
        }
        self.next += self.interval;
        if self.next <= now {
            self.next = now + self.interval;
        }
    }

    /// The interval's end for the sample being taken, in seconds.
    pub(crate) fn sample_time_s(&self) -> f64 {
        self.next.as_secs_f64()
    }

    /// All samples kept so far.
    pub(crate) fn rows(&self) -> &[T] {
        &self.rows
    }

    /// Samples not kept because [`MAX_SAMPLES`] were already held.
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedules_every_interval_and_skips_stalls() {
        let mut log = SampleLog::new(Time::ZERO, Duration::from_secs(1));
        assert!(!log.due(Time::from_secs_f64(0.5)));
        assert!(log.due(Time::from_secs_f64(1.0)));
        log.push(Time::from_secs_f64(1.0), 1);
        assert_eq!(log.next_due(), Time::from_secs_f64(2.0));
        log.push(Time::from_secs_f64(5.5), 2);
        assert_eq!(log.next_due(), Time::from_secs_f64(6.5));
        assert_eq!(log.rows(), &[1, 2]);
    }

    #[test]
    fn keeps_at_most_max_samples() {
        let mut log = SampleLog::new(Time::ZERO, Duration::from_millis(10));
        for i in 0..MAX_SAMPLES + 3 {
            log.push(log.next_due(), i);
        }
        assert_eq!(log.rows().len(), MAX_SAMPLES);
        assert_eq!(log.dropped(), 3);
    }
}
