//! The crate's clock-free notion of time.
//!
//! `tfrc` never reads a clock: every entry point is handed `now` as a [`Time`], an integer count of
//! nanoseconds since an origin the caller chooses (the simulator's start, or a process-local epoch
//! for the UDP driver). Integer time keeps runs bit-identical on every machine. Durations are
//! `std::time::Duration`, which is also integer nanoseconds.

use std::ops::{Add, AddAssign, Sub};
use std::time::Duration;

/// A point in time: nanoseconds since a caller-chosen origin.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(u64);

impl Time {
    /// The origin.
    pub const ZERO: Time = Time(0);
    /// The latest representable time; used as "never" by callers that need a sentinel.
    pub const MAX: Time = Time(u64::MAX);

    /// A time `nanos` nanoseconds after the origin.
    pub const fn from_nanos(nanos: u64) -> Time {
        Time(nanos)
    }

    /// A time `secs` seconds after the origin (rounded to the nearest nanosecond, saturating).
    pub fn from_secs_f64(secs: f64) -> Time {
        Time(secs_to_nanos(secs))
    }

    /// The time `nanos` nanoseconds later, saturating at [`Time::MAX`]: `self + d` for a
    /// duration kept as nanoseconds, without the conversion from `Duration` (hot paths).
    pub const fn saturating_add_nanos(self, nanos: u64) -> Time {
        Time(self.0.saturating_add(nanos))
    }

    /// Nanoseconds since the origin.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    /// Seconds since the origin, as a float (for reporting and for the rate equations).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }

    /// The time elapsed since `earlier`, or zero if `earlier` is later than `self`.
    pub fn saturating_since(self, earlier: Time) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }
}

impl Add<Duration> for Time {
    type Output = Time;
    fn add(self, rhs: Duration) -> Time {
        Time(self.0.saturating_add(duration_nanos(rhs)))
    }
}

impl AddAssign<Duration> for Time {
    fn add_assign(&mut self, rhs: Duration) {
        *self = *self + rhs;
    }
}

impl Sub<Duration> for Time {
    type Output = Time;
    fn sub(self, rhs: Duration) -> Time {
        Time(self.0.saturating_sub(duration_nanos(rhs)))
    }
}

/// A duration's length in whole nanoseconds, saturating at `u64::MAX` (about 584 years).
pub fn duration_nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// A duration of `secs` seconds, rounded to the nearest nanosecond; negative or NaN gives zero and
/// anything too large saturates.
pub fn duration_from_secs(secs: f64) -> Duration {
    Duration::from_nanos(secs_to_nanos(secs))
}

fn secs_to_nanos(secs: f64) -> u64 {
    let nanos = secs * 1e9;
    if nanos.is_nan() || nanos < 0.5 {
        0
    } else if nanos >= u64::MAX as f64 {
        u64::MAX
    } else {
        // Rounding half away from zero, as `f64::round`, which the baseline x86-64 target
        // makes a library call (a sender converts a few times per packet): the whole part by
        // truncation, and the fraction, exact below 2^53 (the values above it are whole).
        let whole = nanos as u64;
        whole + u64::from(nanos - whole as f64 >= 0.5)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::strategy::Strategy;

    #[test]
    fn arithmetic_is_exact_and_saturating() {
        let t = Time::from_nanos(1_000);
        assert_eq!((t + Duration::from_nanos(500)).as_nanos(), 1_500);
        assert_eq!((t - Duration::from_nanos(5_000)).as_nanos(), 0);
        assert_eq!(Time::MAX + Duration::from_secs(1), Time::MAX);
        assert_eq!(
            t.saturating_since(Time::from_nanos(400)),
            Duration::from_nanos(600)
        );
        assert_eq!(Time::ZERO.saturating_since(t), Duration::ZERO);
    }

    proptest::proptest! {
        /// The conversion rounds as `f64::round` would, then clamps, for any seconds.
        #[test]
        fn secs_to_nanos_rounds_like_round(
            secs in proptest::prop_oneof![
                proptest::num::f64::ANY,
                0.0f64..20.0,
                (0u64..1 << 40).prop_map(|n| n as f64 * 1e-9 + 0.5e-9),
                (0u64..1 << 40).prop_map(|n| (n as f64 + 0.5) / 1e9),
            ],
        ) {
            let rounded = (secs * 1e9).round();
            let expected = if rounded.is_nan() || rounded <= 0.0 {
                0
            } else if rounded >= u64::MAX as f64 {
                u64::MAX
            } else {
                rounded as u64
            };
            proptest::prop_assert_eq!(secs_to_nanos(secs), expected);
        }
    }

    #[test]
    fn float_conversions_round_and_clamp() {
        assert_eq!(Time::from_secs_f64(1.5).as_nanos(), 1_500_000_000);
        assert_eq!(Time::from_secs_f64(-3.0), Time::ZERO);
        assert_eq!(Time::from_secs_f64(f64::NAN), Time::ZERO);
        assert_eq!(duration_from_secs(0.1), Duration::from_millis(100));
        assert_eq!(
            duration_from_secs(f64::INFINITY),
            Duration::from_nanos(u64::MAX)
        );
    }
}
