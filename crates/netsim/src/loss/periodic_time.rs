//! Time-periodic loss: one drop per fixed interval of time, the "one loss indication per
//! round-trip time" of yang2001's responsiveness and aggressiveness definitions (Yang, Kim, Lam,
//! INFOCOM 2001, §IV: persistent congestion as a loss every RTT). ns-2 has no such model; its
//! `ErrorModel/Periodic` with `unit_ time` drops a whole span, not one packet per span.
//!
//! Deadlines fall at `start + offset + k * interval` (k = 0, 1, ...), with `start` the time the
//! model begins (0, or its schedule step's start). The first arrival at or after a deadline is
//! dropped. Deadlines that pass with no arrival at all are merged: a sparse flow gets at most one
//! drop per interval, never a burst to catch up.

use std::time::Duration;

use tfrc::time::duration_nanos;
use tfrc::Time;

use super::error::LossModelError;

/// The state of a time-periodic model: the next deadline.
#[derive(Clone, Debug)]
pub(super) struct PeriodicTime {
    interval_ns: u64,
    next_deadline: Time,
}

impl PeriodicTime {
    /// A model whose first deadline is `start + offset` and then every `interval` (at least
    /// 1 ns: see [`validate`]).
    pub(super) fn new(interval: Duration, offset: Duration, start: Time) -> PeriodicTime {
        PeriodicTime {
            interval_ns: duration_nanos(interval).max(1),
            next_deadline: start + offset,
        }
    }

    /// Says whether the arrival at `now` is dropped: it is when `now` has reached the next
    /// deadline, which then moves to the first deadline after `now`. Draws nothing.
    pub(super) fn should_drop(&mut self, now: Time) -> bool {
        if now < self.next_deadline {
            return false;
        }
        let late = now.as_nanos() - self.next_deadline.as_nanos();
        let periods = late / self.interval_ns + 1;
        let step = periods.saturating_mul(self.interval_ns);
        self.next_deadline = Time::from_nanos(self.next_deadline.as_nanos().saturating_add(step));
        true
    }
}

/// `interval` must be positive (a zero interval would drop every packet: use Bernoulli 1.0).
pub(super) fn validate(interval: Duration) -> Result<(), LossModelError> {
    if interval.is_zero() {
        Err(LossModelError::ZeroInterval)
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(t: u64) -> Time {
        Time::from_nanos(t * 1_000_000)
    }

    /// The arrival times (ms) among `arrivals` that the model drops.
    fn drops(model: &mut PeriodicTime, arrivals: &[u64]) -> Vec<u64> {
        arrivals
            .iter()
            .copied()
            .filter(|&t| model.should_drop(ms(t)))
            .collect()
    }

    #[test]
    fn drops_the_first_arrival_at_or_after_each_deadline() {
        // Deadlines 100, 200, 300, ... ms; arrivals every 30 ms.
        let mut model = PeriodicTime::new(
            Duration::from_millis(100),
            Duration::from_millis(100),
            Time::ZERO,
        );
        let arrivals: Vec<u64> = (0..12).map(|k| k * 30).collect();
        assert_eq!(drops(&mut model, &arrivals), vec![120, 210, 300]);
    }

    #[test]
    fn an_arrival_exactly_at_the_deadline_is_dropped() {
        let mut model = PeriodicTime::new(Duration::from_millis(50), Duration::ZERO, Time::ZERO);
        assert_eq!(
            drops(&mut model, &[0, 10, 50, 60, 99, 100]),
            vec![0, 50, 100]
        );
    }

    #[test]
    fn missed_deadlines_are_merged_into_one_drop() {
        // Deadlines every 100 ms from 100 ms; a gap from 110 to 450 covers 200, 300 and 400.
        let mut model = PeriodicTime::new(
            Duration::from_millis(100),
            Duration::from_millis(100),
            Time::ZERO,
        );
        assert_eq!(
            drops(&mut model, &[110, 450, 460, 499, 500, 550]),
            vec![110, 450, 500]
        );
    }

    #[test]
    fn the_offset_counts_from_the_start() {
        let mut model = PeriodicTime::new(
            Duration::from_millis(100),
            Duration::from_millis(20),
            ms(1000),
        );
        assert_eq!(
            drops(&mut model, &[0, 500, 1010, 1020, 1100, 1120, 1121]),
            vec![1020, 1120]
        );
    }

    #[test]
    fn zero_interval_is_refused() {
        assert_eq!(validate(Duration::ZERO), Err(LossModelError::ZeroInterval));
        assert!(validate(Duration::from_nanos(1)).is_ok());
    }
}
