//! Gilbert-Elliott loss with sojourns in time, as ns-2's `ErrorModel/TwoState` with `unit time`
//! has them (ns-2.35 `queue/errmodel.cc`, `TwoStateErrorModel::transitionState` and
//! `corruptTime`): the channel alternates between Good and Bad, each stay lasting a duration
//! drawn from that state's random variable (ns-2's `ranvar 0` and `ranvar 1`), whatever the
//! traffic. A flow that stops sending (a TCP in RTO backoff) does not hold the channel in Bad,
//! as the per-packet chain does.
//!
//! Facts kept from ns-2: the channel starts in Good (state 0) when the model begins, with a
//! first sojourn drawn from the Good variable; each switch draws the next sojourn from the
//! variable of the state entered; a Bad sojourn longer than 120 s is cut to 120 s (ns-2's
//! `if (state_ == 1 && remainLen_ > 120) remainLen_ = 120`). A packet arriving exactly at a
//! switch sees the new state. ns-2 drops every packet of Bad and none of Good; here each state
//! has a loss probability (`loss_in_good`, `loss_in_bad`), 0 and 1 by default, which is ns-2.
//!
//! Determinism: the sojourns come from a generator of their own, seeded by one 64-bit draw from
//! the model's stream at its first packet, so the state at a time depends only on the seed and
//! that time, not on how many packets arrived before. Each packet then costs one uniform draw
//! from the model's stream (its loss). Switches are caught up lazily at each arrival; a mean
//! sojourn of at least 1 µs per state ([`validate`]) bounds that work by the run's duration.

use std::time::Duration;

use rand_core::{RngCore, SeedableRng};
use tfrc::Time;

use super::error::{check_probability, LossModelError};
use crate::dist::DurationDist;
use crate::rng::{uniform, SimRng};

/// ns-2's cap on a Bad sojourn (`TwoStateErrorModel::transitionState`).
pub(super) const MAX_BAD_SOJOURN: Duration = Duration::from_secs(120);

/// The smallest mean sojourn accepted: the switches are caught up one by one, so a mean of 1 µs
/// costs at most a million steps per simulated second.
pub(super) const MIN_MEAN_SOJOURN: Duration = Duration::from_micros(1);

/// The state of a time-based Gilbert-Elliott model.
#[derive(Clone, Debug)]
pub(super) struct GilbertElliottTime {
    good: DurationDist,
    bad: DurationDist,
    loss_in_good: f64,
    loss_in_bad: f64,
    start: Time,
    in_bad: bool,
    sojourn_ends: Time,
    sojourns: Option<SimRng>,
}

impl GilbertElliottTime {
    /// A model that begins in Good at `start` (0, or its schedule step's start).
    pub(super) fn new(
        good: DurationDist,
        bad: DurationDist,
        loss_in_good: f64,
        loss_in_bad: f64,
        start: Time,
    ) -> GilbertElliottTime {
        GilbertElliottTime {
            good,
            bad,
            loss_in_good,
            loss_in_bad,
            start,
            in_bad: false,
            sojourn_ends: start,
            sojourns: None,
        }
    }

    /// Brings the state up to `now`, then draws the arrival's loss in that state.
    pub(super) fn should_drop(&mut self, now: Time, rng: &mut SimRng) -> bool {
        self.advance(now, rng);
        let loss = if self.in_bad {
            self.loss_in_bad
        } else {
            self.loss_in_good
        };
        uniform(rng) < loss
    }

    /// Whether the channel is in Bad at `now` (arrivals come in non-decreasing time).
    fn advance(&mut self, now: Time, rng: &mut SimRng) {
        let sojourns = match &mut self.sojourns {
            Some(sojourns) => sojourns,
            None => {
                let mut sojourns = SimRng::seed_from_u64(rng.next_u64());
                self.sojourn_ends = self.start + self.good.sample(&mut sojourns);
                self.sojourns.insert(sojourns)
            }
        };
        while now >= self.sojourn_ends {
            self.in_bad = !self.in_bad;
            let sojourn = if self.in_bad {
                self.bad.sample(sojourns).min(MAX_BAD_SOJOURN)
            } else {
                self.good.sample(sojourns)
            };
            self.sojourn_ends += sojourn;
        }
    }

    /// Whether the channel is in Bad (as of the last arrival).
    #[cfg(test)]
    fn is_bad(&self) -> bool {
        self.in_bad
    }
}

/// Both loss probabilities in [0, 1]; each state's mean sojourn at least [`MIN_MEAN_SOJOURN`].
pub(super) fn validate(
    good: &DurationDist,
    bad: &DurationDist,
    loss_in_good: f64,
    loss_in_bad: f64,
) -> Result<(), LossModelError> {
    for (field, dist) in [("good", good), ("bad", bad)] {
        if dist.mean() < MIN_MEAN_SOJOURN {
            return Err(LossModelError::SojournTooShort {
                field,
                mean: dist.mean(),
            });
        }
    }
    check_probability("loss_in_good", loss_in_good)?;
    check_probability("loss_in_bad", loss_in_bad)
}

/// The long-run drop fraction of packets arriving at a constant rate: the time fraction in Bad
/// (mean Bad / (mean Good + mean Bad), ignoring the 120 s cap) weighting the two loss
/// probabilities.
pub(super) fn loss_rate(
    good: &DurationDist,
    bad: &DurationDist,
    loss_in_good: f64,
    loss_in_bad: f64,
) -> f64 {
    let (g, b) = (good.mean().as_secs_f64(), bad.mean().as_secs_f64());
    let pi_bad = b / (g + b);
    (1.0 - pi_bad) * loss_in_good + pi_bad * loss_in_bad
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::stream;

    fn ms(t: u64) -> Time {
        Time::from_nanos(t * 1_000_000)
    }

    fn fixed(millis: u64) -> DurationDist {
        DurationDist::Fixed(Duration::from_millis(millis))
    }

    #[test]
    fn fixed_sojourns_alternate_in_time_whatever_the_arrivals() {
        // Good 100 ms, Bad 50 ms: Bad over [100, 150), [250, 300), ...; a switch instant is
        // already in the new state.
        let mut model = GilbertElliottTime::new(fixed(100), fixed(50), 0.0, 1.0, Time::ZERO);
        let mut rng = stream(1, "test");
        let drops: Vec<u64> = [0, 99, 100, 149, 150, 260, 1_000, 1_049, 1_050]
            .into_iter()
            .filter(|&t| model.should_drop(ms(t), &mut rng))
            .collect();
        assert_eq!(drops, vec![100, 149, 260, 1_000, 1_049]);
    }

    #[test]
    fn a_step_start_shifts_the_sojourns() {
        let mut model = GilbertElliottTime::new(fixed(100), fixed(50), 0.0, 1.0, ms(5_000));
        let mut rng = stream(1, "test");
        assert!(!model.should_drop(ms(5_099), &mut rng));
        assert!(model.should_drop(ms(5_100), &mut rng));
    }

    #[test]
    fn the_state_at_a_time_does_not_depend_on_the_arrivals_before() {
        let good = DurationDist::Exponential {
            mean: Duration::from_millis(200),
        };
        let bad = DurationDist::Uniform {
            low: Duration::from_millis(10),
            high: Duration::from_millis(90),
        };
        let probe = |arrivals: &[u64]| {
            let mut model = GilbertElliottTime::new(good, bad, 0.0, 1.0, Time::ZERO);
            let mut rng = stream(3, "test");
            for &t in arrivals {
                model.should_drop(ms(t), &mut rng);
            }
            model.is_bad()
        };
        for end in (0..20_000).step_by(37) {
            let dense: Vec<u64> = (0..=end).step_by(3).chain([end]).collect();
            assert_eq!(probe(&[end]), probe(&dense), "at {end} ms");
        }
    }

    #[test]
    fn time_in_bad_matches_the_means() {
        let good = DurationDist::Exponential {
            mean: Duration::from_millis(90),
        };
        let bad = DurationDist::Exponential {
            mean: Duration::from_millis(10),
        };
        let mut model = GilbertElliottTime::new(good, bad, 0.0, 1.0, Time::ZERO);
        let mut rng = stream(7, "test");
        let arrivals = 2_000_000u64;
        let dropped = (0..arrivals)
            .filter(|&k| model.should_drop(Time::from_nanos(k * 1_000_000), &mut rng))
            .count();
        // 2000 s of 1 ms arrivals, about 20,000 Bad stays: the fraction is 0.1 within 0.005.
        let fraction = dropped as f64 / arrivals as f64;
        assert!((fraction - 0.1).abs() < 0.005, "{fraction}");
        assert!((loss_rate(&good, &bad, 0.0, 1.0) - 0.1).abs() < 1e-12);
    }

    #[test]
    fn bad_sojourns_are_capped_at_120_s() {
        let mut model = GilbertElliottTime::new(fixed(1), fixed(1_000_000), 0.0, 1.0, Time::ZERO);
        let mut rng = stream(1, "test");
        assert!(model.should_drop(ms(1), &mut rng));
        assert!(model.should_drop(ms(120_000), &mut rng));
        assert!(!model.should_drop(ms(120_001), &mut rng));
    }

    #[test]
    fn short_sojourns_and_bad_probabilities_are_refused_by_name() {
        let tiny = DurationDist::Fixed(Duration::from_nanos(999));
        assert_eq!(
            validate(&tiny, &fixed(1), 0.0, 1.0).unwrap_err().field(),
            "good"
        );
        assert_eq!(
            validate(&fixed(1), &tiny, 0.0, 1.0).unwrap_err().field(),
            "bad"
        );
        assert_eq!(
            validate(&fixed(1), &fixed(1), 0.0, 1.5)
                .unwrap_err()
                .field(),
            "loss_in_bad"
        );
        assert!(validate(&fixed(1), &fixed(1), 0.0, 1.0).is_ok());
    }
}
