//! Why a loss model's configuration was refused (design.md convention 4: one `#[non_exhaustive]`
//! error enum per domain; these are configuration errors, surfaced by the scenario layer).

use std::fmt;

use tfrc::Time;

/// A [`LossModelConfig`](super::LossModelConfig) that [`validate`](super::LossModelConfig::validate)
/// refused. Every variant names the offending field ([`field`](LossModelError::field)); the
/// `Display` text gives the field, the value and the rule it broke.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum LossModelError {
    /// A probability (`p`, `p_good_to_bad`, `p_bad_to_good`, `loss_in_good` or `loss_in_bad`) is
    /// NaN or outside [0, 1].
    ProbabilityOutOfRange {
        /// The field's name.
        field: &'static str,
        /// The value given.
        value: f64,
    },
    /// A time-based Gilbert-Elliott state's mean sojourn (`good` or `bad`) is under 1 µs; the
    /// model catches up switches one by one, so shorter stays would cost unbounded work.
    SojournTooShort {
        /// The field's name, `"good"` or `"bad"`.
        field: &'static str,
        /// The mean sojourn given.
        mean: std::time::Duration,
    },
    /// `Periodic::every` is 0; a period is at least one packet.
    ZeroPeriod,
    /// `PeriodicTime::interval` is 0; one drop per interval needs a positive interval.
    ZeroInterval,
    /// `List::indices` names the same arrival index twice (ns-2's `ErrorModel/List` refuses
    /// duplicates too, `queue/errmodel.cc` `parse_droplist`).
    DuplicateIndex {
        /// The repeated index.
        index: u64,
    },
    /// `Schedule::steps[step]` does not start strictly after `steps[step - 1]`.
    StepsNotIncreasing {
        /// The position of the out-of-order step in `steps`.
        step: usize,
        /// Its start time.
        start: Time,
        /// The start time of the step before it.
        previous: Time,
    },
    /// `Schedule::steps[step]` is itself a schedule; schedules do not nest (whether inner times
    /// would be absolute or relative is ambiguous, and nothing needs it).
    NestedSchedule {
        /// The position of the nested schedule in `steps`.
        step: usize,
    },
    /// `Schedule::steps[step]`'s model is invalid for the reason in `source`.
    InvalidStep {
        /// The position of the invalid step in `steps`.
        step: usize,
        /// What is wrong with its model.
        source: Box<LossModelError>,
    },
}

impl LossModelError {
    /// The name of the offending field as it appears in
    /// [`LossModelConfig`](super::LossModelConfig): `"p"`, `"p_good_to_bad"`, `"p_bad_to_good"`,
    /// `"loss_in_good"`, `"loss_in_bad"`, `"good"`, `"bad"`, `"every"`, `"interval"`, `"indices"`
    /// or `"steps"`. For an invalid
    /// schedule step it is the field inside that step's model.
    pub fn field(&self) -> &'static str {
        match self {
            LossModelError::ProbabilityOutOfRange { field, .. }
            | LossModelError::SojournTooShort { field, .. } => field,
            LossModelError::ZeroPeriod => "every",
            LossModelError::ZeroInterval => "interval",
            LossModelError::DuplicateIndex { .. } => "indices",
            LossModelError::StepsNotIncreasing { .. } | LossModelError::NestedSchedule { .. } => {
                "steps"
            }
            LossModelError::InvalidStep { source, .. } => source.field(),
        }
    }
}

impl fmt::Display for LossModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LossModelError::ProbabilityOutOfRange { field, value } => {
                write!(f, "{field} = {value} is not a probability in [0, 1]")
            }
            LossModelError::SojournTooShort { field, mean } => write!(
                f,
                "{field} has a mean sojourn of {mean:?}: each state's mean stay must be at \
                 least 1µs"
            ),
            LossModelError::ZeroPeriod => write!(f, "every = 0: the period must be at least 1"),
            LossModelError::ZeroInterval => {
                write!(f, "interval = 0 s: the interval must be positive")
            }
            LossModelError::DuplicateIndex { index } => {
                write!(f, "indices lists arrival index {index} more than once")
            }
            LossModelError::StepsNotIncreasing {
                step,
                start,
                previous,
            } => write!(
                f,
                "steps[{step}] starts at {:.9} s, not after steps[{}] at {:.9} s: \
                 steps must be sorted by strictly increasing start time",
                start.as_secs_f64(),
                step.saturating_sub(1),
                previous.as_secs_f64()
            ),
            LossModelError::NestedSchedule { step } => {
                write!(f, "steps[{step}] is a schedule: schedules cannot be nested")
            }
            LossModelError::InvalidStep { step, source } => write!(f, "steps[{step}]: {source}"),
        }
    }
}

impl std::error::Error for LossModelError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LossModelError::InvalidStep { source, .. } => Some(source.as_ref()),
            _ => None,
        }
    }
}

/// `Ok` if `value` is a probability (in [0, 1], not NaN), else the error naming `field`.
pub(super) fn check_probability(field: &'static str, value: f64) -> Result<(), LossModelError> {
    if (0.0..=1.0).contains(&value) {
        Ok(())
    } else {
        Err(LossModelError::ProbabilityOutOfRange { field, value })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probabilities_are_checked_inclusively_and_nan_is_refused() {
        assert!(check_probability("p", 0.0).is_ok());
        assert!(check_probability("p", 1.0).is_ok());
        for bad in [-1e-12, 1.0 + 1e-12, f64::NAN, f64::INFINITY] {
            let err = check_probability("p", bad).unwrap_err();
            assert_eq!(err.field(), "p");
        }
    }

    #[test]
    fn step_errors_name_the_inner_field_and_the_step() {
        let err = LossModelError::InvalidStep {
            step: 2,
            source: Box::new(LossModelError::ZeroPeriod),
        };
        assert_eq!(err.field(), "every");
        assert_eq!(
            err.to_string(),
            "steps[2]: every = 0: the period must be at least 1"
        );
        assert!(std::error::Error::source(&err).is_some());
    }
}
