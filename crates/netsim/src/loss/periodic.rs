//! Deterministic periodic loss: one packet in every `every` (the packet-unit form of ns-2's
//! `ErrorModel/Periodic`, `queue/errmodel.cc`, restated as an index rule; floyd2000 Fig. 2 drives
//! TFRC with it, as does `tfrc::harness::LossPattern::Periodic`).

use super::error::LossModelError;

/// The state of a periodic model: the 0-based index of the next arrival it sees.
#[derive(Clone, Debug)]
pub(super) struct Periodic {
    every: u64,
    phase: u64,
    next_index: u64,
}

impl Periodic {
    /// A model dropping arrival n when n % every == phase % every. `every` must be at least 1
    /// (see [`validate`]).
    pub(super) fn new(every: u64, phase: u64) -> Periodic {
        Periodic {
            every,
            phase: phase % every,
            next_index: 0,
        }
    }

    /// Counts one arrival and says whether it is dropped. Draws nothing.
    pub(super) fn should_drop(&mut self) -> bool {
        let n = self.next_index;
        self.next_index += 1;
        n % self.every == self.phase
    }
}

/// `every` must be at least 1; any `phase` is allowed (it is taken modulo `every`).
pub(super) fn validate(every: u64) -> Result<(), LossModelError> {
    if every == 0 {
        Err(LossModelError::ZeroPeriod)
    } else {
        Ok(())
    }
}

/// The long-run drop fraction, 1/every.
pub(super) fn loss_rate(every: u64) -> f64 {
    1.0 / every as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drops(model: &mut Periodic, n: u64) -> Vec<u64> {
        (0..n).filter(|_| model.should_drop()).collect()
    }

    #[test]
    fn drops_the_phase_th_arrival_of_each_period() {
        assert_eq!(drops(&mut Periodic::new(4, 1), 12), vec![1, 5, 9]);
        assert_eq!(drops(&mut Periodic::new(4, 0), 9), vec![0, 4, 8]);
    }

    #[test]
    fn phase_is_taken_modulo_every() {
        assert_eq!(drops(&mut Periodic::new(4, 7), 12), vec![3, 7, 11]);
    }

    #[test]
    fn every_one_drops_everything() {
        assert_eq!(drops(&mut Periodic::new(1, 5), 3), vec![0, 1, 2]);
    }

    #[test]
    fn zero_period_is_refused() {
        assert_eq!(validate(0), Err(LossModelError::ZeroPeriod));
        assert!(validate(1).is_ok());
        assert_eq!(loss_rate(100), 0.01);
    }
}
