//! Loss that changes over time: a list of (start time, model) steps, each model in force from its
//! start until the next step's (floyd2000 Fig. 2: periodic 1% until 6 s, 10% until 9 s, then
//! 0.5%; the same shape as `tfrc::harness::LossSchedule`).
//!
//! Semantics:
//! - Before the first step's start, nothing is dropped and no randomness is drawn.
//! - A packet offered at `now` belongs to the last step whose start is <= `now`: a packet stamped
//!   exactly at a boundary already gets the new step's model.
//! - Each step's model starts fresh when its step begins: its arrival index restarts at 0 (a
//!   periodic step with phase k drops the (k+1)-th packet it sees, counted from its start), a
//!   Gilbert-Elliott step starts in Good, a list step counts from 0, a time-periodic step's
//!   deadlines count from the step's start. A step whose whole interval
//!   passes without a packet is skipped and never sees one.
//! - Steps must start at strictly increasing times and may not themselves be schedules.
//! - `now` is expected never to decrease (the simulator offers arrivals in event order); an
//!   earlier `now` does not move the schedule back.

use tfrc::Time;

use super::error::LossModelError;
use super::{LossModelConfig, Model};
use crate::rng::SimRng;

/// The state of a schedule: every step's model (built up front, so switching allocates nothing)
/// and how many steps have started.
#[derive(Clone, Debug)]
pub(super) struct Schedule {
    steps: Vec<(Time, Model)>,
    started: usize,
}

impl Schedule {
    /// A schedule over valid, sorted, non-nested `steps`.
    pub(super) fn new(steps: &[(Time, LossModelConfig)]) -> Schedule {
        Schedule {
            steps: steps
                .iter()
                .map(|(start, config)| (*start, Model::new(config, *start)))
                .collect(),
            started: 0,
        }
    }

    /// Moves to the step in force at `now`, then lets its model decide.
    pub(super) fn should_drop(&mut self, now: Time, rng: &mut SimRng) -> bool {
        while self
            .steps
            .get(self.started)
            .is_some_and(|(start, _)| *start <= now)
        {
            self.started += 1;
        }
        match self.started.checked_sub(1) {
            Some(current) => self.steps[current].1.should_drop(now, rng),
            None => false,
        }
    }
}

/// Steps start at strictly increasing times, are not schedules, and are each valid.
pub(super) fn validate(steps: &[(Time, LossModelConfig)]) -> Result<(), LossModelError> {
    for (step, (start, config)) in steps.iter().enumerate() {
        if step > 0 {
            let previous = steps[step - 1].0;
            if *start <= previous {
                return Err(LossModelError::StepsNotIncreasing {
                    step,
                    start: *start,
                    previous,
                });
            }
        }
        if matches!(config, LossModelConfig::Schedule { .. }) {
            return Err(LossModelError::NestedSchedule { step });
        }
        config
            .validate()
            .map_err(|source| LossModelError::InvalidStep {
                step,
                source: Box::new(source),
            })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::stream;

    fn secs(s: f64) -> Time {
        Time::from_secs_f64(s)
    }

    fn all() -> LossModelConfig {
        LossModelConfig::Bernoulli { p: 1.0 }
    }

    fn none() -> LossModelConfig {
        LossModelConfig::Bernoulli { p: 0.0 }
    }

    #[test]
    fn boundaries_belong_to_the_new_step() {
        let mut s = Schedule::new(&[(secs(1.0), all()), (secs(2.0), none())]);
        let mut rng = stream(1, "test");
        let one_ns = std::time::Duration::from_nanos(1);
        assert!(!s.should_drop(Time::ZERO, &mut rng));
        assert!(!s.should_drop(secs(1.0) - one_ns, &mut rng));
        assert!(s.should_drop(secs(1.0), &mut rng));
        assert!(s.should_drop(secs(2.0) - one_ns, &mut rng));
        assert!(!s.should_drop(secs(2.0), &mut rng));
    }

    #[test]
    fn skipped_steps_see_nothing_and_time_never_goes_back() {
        let mut s = Schedule::new(&[(secs(1.0), all()), (secs(2.0), none()), (secs(3.0), all())]);
        let mut rng = stream(1, "test");
        assert!(s.should_drop(secs(5.0), &mut rng));
        assert!(s.should_drop(secs(1.5), &mut rng));
    }

    #[test]
    fn an_empty_schedule_drops_nothing() {
        let mut s = Schedule::new(&[]);
        let mut rng = stream(1, "test");
        assert!(!s.should_drop(secs(100.0), &mut rng));
    }

    #[test]
    fn order_nesting_and_inner_validity_are_checked() {
        let err = validate(&[(secs(2.0), all()), (secs(2.0), none())]).unwrap_err();
        assert!(matches!(
            err,
            LossModelError::StepsNotIncreasing { step: 1, .. }
        ));
        let nested = LossModelConfig::Schedule { steps: vec![] };
        let err = validate(&[(secs(0.0), nested)]).unwrap_err();
        assert_eq!(err, LossModelError::NestedSchedule { step: 0 });
        let bad = LossModelConfig::Periodic { every: 0, phase: 0 };
        let err = validate(&[(secs(0.0), all()), (secs(1.0), bad)]).unwrap_err();
        assert_eq!(err.field(), "every");
        assert!(matches!(err, LossModelError::InvalidStep { step: 1, .. }));
    }
}
