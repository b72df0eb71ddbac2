//! The event-time loads the event-queue benchmark and tests share: the increment from one
//! event's time to the next it schedules, in nanoseconds.

use crate::rng::{exponential, uniform, SimRng};

/// A load of the hold model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Load {
    /// Exponential increments with mean 1 ms.
    Exp,
    /// The simulator's mix: 45% 0.8 ms (1000 B at 10 Mb/s), 45% 50 ms (propagation), 10%
    /// uniform in 0-1 s (timers).
    Mix,
    /// Many exact ties: increments of 0, 1 or 2 ms.
    Ties,
}

impl Load {
    /// The load's short name.
    pub fn name(self) -> &'static str {
        match self {
            Load::Exp => "exp",
            Load::Mix => "mix",
            Load::Ties => "ties",
        }
    }

    /// One increment, in nanoseconds.
    pub fn increment(self, rng: &mut SimRng) -> u64 {
        match self {
            Load::Exp => exponential(rng, 1e6) as u64,
            Load::Mix => {
                let u = uniform(rng);
                if u < 0.45 {
                    800_000
                } else if u < 0.9 {
                    50_000_000
                } else {
                    (uniform(rng) * 1e9) as u64
                }
            }
            Load::Ties => (uniform(rng) * 3.0) as u64 * 1_000_000,
        }
    }
}
