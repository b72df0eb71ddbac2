//! The driver's clock: `CLOCK_MONOTONIC` as a [`tfrc::Time`] since a process-chosen origin.
//!
//! `tfrc` never reads a clock; the driver hands it `now` from here. The pacing timer is a
//! `timerfd` on the same clock armed with absolute deadlines, so a deadline the sans-IO sender
//! computes converts to the timer's clock exactly ([`Clock::to_timespec`]), with no drift between
//! "what time is it" and "wake me at".

use rustix::time::{clock_gettime, ClockId, Timespec};
use tfrc::Time;

/// A monotonic clock whose origin (time zero) is when it was made.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    origin_ns: u64,
}

impl Default for Clock {
    fn default() -> Self {
        Clock::new()
    }
}

impl Clock {
    /// A clock reading zero now.
    pub fn new() -> Clock {
        Clock {
            origin_ns: monotonic_ns(),
        }
    }

    /// The time since the origin.
    pub fn now(&self) -> Time {
        Time::from_nanos(monotonic_ns().saturating_sub(self.origin_ns))
    }

    /// `t` as an absolute `CLOCK_MONOTONIC` timespec, for `timerfd_settime(TFD_TIMER_ABSTIME)`.
    pub fn to_timespec(&self, t: Time) -> Timespec {
        let abs = self.origin_ns.saturating_add(t.as_nanos());
        timespec_of(abs)
    }
}

/// `CLOCK_MONOTONIC` in nanoseconds.
fn monotonic_ns() -> u64 {
    nanos_of(&clock_gettime(ClockId::Monotonic))
}

/// The calling thread's CPU time in nanoseconds (`CLOCK_THREAD_CPUTIME_ID`), for the sender's
/// CPU-per-bit figure.
pub fn thread_cpu_ns() -> u64 {
    nanos_of(&clock_gettime(ClockId::ThreadCPUTime))
}

fn nanos_of(ts: &Timespec) -> u64 {
    let secs = u64::try_from(ts.tv_sec).unwrap_or(0);
    let nanos = u64::try_from(ts.tv_nsec).unwrap_or(0);
    secs.saturating_mul(1_000_000_000).saturating_add(nanos)
}

/// A timespec for `nanos` nanoseconds (clamped to what `i64` seconds hold).
pub(crate) fn timespec_of(nanos: u64) -> Timespec {
    Timespec {
        tv_sec: i64::try_from(nanos / 1_000_000_000).unwrap_or(i64::MAX),
        tv_nsec: i64::try_from(nanos % 1_000_000_000).unwrap_or(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_near_zero_and_moves_forward() {
        let clock = Clock::new();
        let a = clock.now();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let b = clock.now();
        assert!(a.as_nanos() < 1_000_000_000);
        assert!(b.as_nanos() >= a.as_nanos() + 2_000_000);
    }

    #[test]
    fn timespec_round_trips() {
        let clock = Clock { origin_ns: 5 };
        let ts = clock.to_timespec(Time::from_nanos(2_000_000_007));
        assert_eq!((ts.tv_sec, ts.tv_nsec), (2, 12));
        assert_eq!(nanos_of(&ts), 2_000_000_012);
    }
}
