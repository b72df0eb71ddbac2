//! Durations that a scenario gives either as a fixed value or as a distribution to draw from:
//! flow start times drawn uniformly in 0-10 s (floyd2000 §4.1), access delays uniform in 1-3 ms
//! (rhee2005 §3), RTTs uniform in 80-120 ms (floyd2000 Fig. 9), exponential ON/OFF periods
//! (berumen's restarts). Each draw comes from the stream of the component it belongs to.

use std::time::Duration;

use tfrc::time::{duration_from_secs, duration_nanos};

use crate::rng::{exponential, uniform, SimRng};

/// A duration, fixed or random.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DurationDist {
    /// Always this value; draws no randomness.
    Fixed(Duration),
    /// Uniform over [low, high], rounded to the nanosecond; one uniform draw.
    Uniform {
        /// The smallest value.
        low: Duration,
        /// The largest value (at least `low`).
        high: Duration,
    },
    /// Exponential with this mean, rounded to the nanosecond; one uniform draw.
    Exponential {
        /// The mean.
        mean: Duration,
    },
}

impl DurationDist {
    /// One value. `Fixed` draws nothing, so switching a component between a fixed and a random
    /// value changes no other component's draws (each owns its stream anyway).
    pub fn sample(&self, rng: &mut SimRng) -> Duration {
        match *self {
            DurationDist::Fixed(value) => value,
            DurationDist::Uniform { low, high } => {
                let span = duration_nanos(high).saturating_sub(duration_nanos(low));
                let offset = (uniform(rng) * span as f64).round() as u64;
                low + Duration::from_nanos(offset.min(span))
            }
            DurationDist::Exponential { mean } => {
                duration_from_secs(exponential(rng, mean.as_secs_f64()))
            }
        }
    }

    /// The smallest value a draw can take (0 for the exponential).
    pub fn min(&self) -> Duration {
        match *self {
            DurationDist::Fixed(value) => value,
            DurationDist::Uniform { low, .. } => low,
            DurationDist::Exponential { .. } => Duration::ZERO,
        }
    }

    /// Whether every draw is 0 (`"0s"`, `{ uniform = ["0s", "0s"] }`, `{ exponential = "0s" }`).
    pub fn is_always_zero(&self) -> bool {
        match *self {
            DurationDist::Fixed(value) => value.is_zero(),
            DurationDist::Uniform { high, .. } => high.is_zero(),
            DurationDist::Exponential { mean } => mean.is_zero(),
        }
    }

    /// The mean of the draws.
    pub fn mean(&self) -> Duration {
        match *self {
            DurationDist::Fixed(value) => value,
            DurationDist::Uniform { low, high } => low + (high.saturating_sub(low)) / 2,
            DurationDist::Exponential { mean } => mean,
        }
    }
}

/// A link rate, fixed or drawn uniformly (per-host access links).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RateDist {
    /// Always this rate in bits per second; draws no randomness.
    Fixed(u64),
    /// Uniform over [low, high] bits per second; one uniform draw.
    Uniform {
        /// The lowest rate.
        low: u64,
        /// The highest rate (at least `low`).
        high: u64,
    },
}

impl RateDist {
    /// One rate in bits per second.
    pub fn sample(&self, rng: &mut SimRng) -> u64 {
        match *self {
            RateDist::Fixed(rate) => rate,
            RateDist::Uniform { low, high } => {
                let span = high.saturating_sub(low);
                low + ((uniform(rng) * span as f64).round() as u64).min(span)
            }
        }
    }

    /// The lowest rate a draw can take.
    pub fn min(&self) -> u64 {
        match *self {
            RateDist::Fixed(rate) => rate,
            RateDist::Uniform { low, .. } => low,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::stream;

    #[test]
    fn fixed_draws_nothing_and_uniform_stays_in_range() {
        let mut rng = stream(1, "dist");
        let mut untouched = rng.clone();
        let fixed = DurationDist::Fixed(Duration::from_millis(5));
        assert_eq!(fixed.sample(&mut rng), Duration::from_millis(5));
        assert_eq!(
            uniform(&mut rng).to_bits(),
            uniform(&mut untouched).to_bits()
        );
        let dist = DurationDist::Uniform {
            low: Duration::from_millis(80),
            high: Duration::from_millis(120),
        };
        let draws: Vec<Duration> = (0..10_000).map(|_| dist.sample(&mut rng)).collect();
        assert!(draws
            .iter()
            .all(|d| (Duration::from_millis(80)..=Duration::from_millis(120)).contains(d)));
        let mean = draws.iter().map(Duration::as_secs_f64).sum::<f64>() / draws.len() as f64;
        assert!((mean - 0.1).abs() < 0.001, "{mean}");
        assert_eq!(dist.mean(), Duration::from_millis(100));
        assert_eq!(dist.min(), Duration::from_millis(80));
    }

    #[test]
    fn exponential_mean() {
        let mut rng = stream(2, "dist");
        let dist = DurationDist::Exponential {
            mean: Duration::from_secs(1),
        };
        let n = 20_000;
        let mean = (0..n)
            .map(|_| dist.sample(&mut rng).as_secs_f64())
            .sum::<f64>()
            / f64::from(n);
        assert!((mean - 1.0).abs() < 0.03, "{mean}");
        assert_eq!(dist.min(), Duration::ZERO);
    }

    #[test]
    fn rates_stay_in_range() {
        let mut rng = stream(3, "dist");
        let dist = RateDist::Uniform {
            low: 1_000_000,
            high: 2_000_000,
        };
        assert!((0..1000)
            .map(|_| dist.sample(&mut rng))
            .all(|r| (1_000_000..=2_000_000).contains(&r)));
        assert_eq!(RateDist::Fixed(5).sample(&mut rng), 5);
        assert_eq!(dist.min(), 1_000_000);
    }
}
