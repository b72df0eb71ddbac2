//! Gilbert-Elliott burst loss: a two-state (Good/Bad) Markov chain stepped once per packet, with
//! a loss probability per state (Gilbert 1960, "Capacity of a burst-noise channel"; Elliott
//! 1963, "Estimates of error rates for codes on burst-noise channels"), in the per-packet form.
//! (ns-2's `ErrorModel/TwoState` differs: it draws each sojourn's length from a random variable
//! and drops every packet of the error state.)
//!
//! Order per packet: first the chain steps (Good -> Bad with probability `p_good_to_bad`, Bad ->
//! Good with `p_bad_to_good`), then the packet is dropped with the loss probability of the state
//! it stepped into. The chain starts in Good, so the first packet is in Bad with probability
//! `p_good_to_bad`. Each packet costs exactly two uniform draws (transition, then loss), whatever
//! the parameters, so the stream position depends only on the packet count.
//!
//! Consequences: a stay in Bad lasts a geometric number of packets with mean 1/`p_bad_to_good`
//! (a stay in Good, 1/`p_good_to_bad`), and the stationary probability of Bad is
//! pi_bad = p_gb / (p_gb + p_bg).

use super::error::{check_probability, LossModelError};
use crate::rng::{uniform, SimRng};

/// The state of a Gilbert-Elliott model: its parameters and whether the chain is in Bad.
#[derive(Clone, Debug)]
pub(super) struct GilbertElliott {
    p_good_to_bad: f64,
    p_bad_to_good: f64,
    loss_in_good: f64,
    loss_in_bad: f64,
    bad: bool,
}

impl GilbertElliott {
    /// A model in state Good with the given (valid) probabilities.
    pub(super) fn new(
        p_good_to_bad: f64,
        p_bad_to_good: f64,
        loss_in_good: f64,
        loss_in_bad: f64,
    ) -> GilbertElliott {
        GilbertElliott {
            p_good_to_bad,
            p_bad_to_good,
            loss_in_good,
            loss_in_bad,
            bad: false,
        }
    }

    /// Steps the chain, then draws the loss in the new state (module docs).
    pub(super) fn should_drop(&mut self, rng: &mut SimRng) -> bool {
        let switch = if self.bad {
            self.p_bad_to_good
        } else {
            self.p_good_to_bad
        };
        if uniform(rng) < switch {
            self.bad = !self.bad;
        }
        let loss = if self.bad {
            self.loss_in_bad
        } else {
            self.loss_in_good
        };
        uniform(rng) < loss
    }

    /// Whether the chain is in Bad (the state of the last packet seen).
    #[cfg(test)]
    fn is_bad(&self) -> bool {
        self.bad
    }
}

/// All four parameters must be probabilities.
pub(super) fn validate(
    p_good_to_bad: f64,
    p_bad_to_good: f64,
    loss_in_good: f64,
    loss_in_bad: f64,
) -> Result<(), LossModelError> {
    check_probability("p_good_to_bad", p_good_to_bad)?;
    check_probability("p_bad_to_good", p_bad_to_good)?;
    check_probability("loss_in_good", loss_in_good)?;
    check_probability("loss_in_bad", loss_in_bad)
}

/// The stationary probability of Bad, p_gb / (p_gb + p_bg). A chain that never moves
/// (both transition probabilities 0) stays in Good, where it starts: 0.
pub(super) fn stationary_bad(p_good_to_bad: f64, p_bad_to_good: f64) -> f64 {
    let total = p_good_to_bad + p_bad_to_good;
    if total > 0.0 {
        p_good_to_bad / total
    } else {
        0.0
    }
}

/// The long-run drop fraction pi_good * loss_in_good + pi_bad * loss_in_bad.
pub(super) fn loss_rate(
    p_good_to_bad: f64,
    p_bad_to_good: f64,
    loss_in_good: f64,
    loss_in_bad: f64,
) -> f64 {
    let pi_bad = stationary_bad(p_good_to_bad, p_bad_to_good);
    (1.0 - pi_bad) * loss_in_good + pi_bad * loss_in_bad
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::stream;

    #[test]
    fn transition_comes_before_the_loss_draw() {
        // Always switch, never lose in Good, always lose in Bad: the first packet has already
        // moved to Bad, so the drops alternate starting with a drop.
        let mut model = GilbertElliott::new(1.0, 1.0, 0.0, 1.0);
        let mut rng = stream(1, "test");
        let drops: Vec<bool> = (0..6).map(|_| model.should_drop(&mut rng)).collect();
        assert_eq!(drops, vec![true, false, true, false, true, false]);
    }

    #[test]
    fn two_draws_per_packet() {
        let mut a = stream(9, "test");
        let mut b = stream(9, "test");
        let mut model = GilbertElliott::new(0.2, 0.3, 0.1, 0.6);
        let mut bad = false;
        for _ in 0..1_000 {
            let switch = if bad { 0.3 } else { 0.2 };
            if uniform(&mut b) < switch {
                bad = !bad;
            }
            let loss = if bad { 0.6 } else { 0.1 };
            let expected = uniform(&mut b) < loss;
            assert_eq!(model.should_drop(&mut a), expected);
            assert_eq!(model.is_bad(), bad);
        }
    }

    #[test]
    fn mean_stay_in_bad_is_one_over_p_bad_to_good() {
        // The state is observed directly here (loss_in_bad < 1, so drops alone would not show
        // it); the integration tests check the same through drops with loss_in_bad = 1.
        let p_bg = 0.25;
        let mut model = GilbertElliott::new(0.05, p_bg, 0.0, 0.5);
        let mut rng = stream(5, "test");
        let (mut stays, mut packets_in_bad, mut was_bad) = (0u64, 0u64, false);
        for _ in 0..400_000 {
            model.should_drop(&mut rng);
            if model.is_bad() {
                packets_in_bad += 1;
                if !was_bad {
                    stays += 1;
                }
            }
            was_bad = model.is_bad();
        }
        let mean = packets_in_bad as f64 / stays as f64;
        // Geometric stays: sd sqrt(1 - p)/p; 99% bound on the mean of `stays` of them.
        let bound = 2.576 * (1.0 - p_bg).sqrt() / p_bg / (stays as f64).sqrt();
        assert!((mean - 1.0 / p_bg).abs() < bound, "mean stay {mean}");
    }

    #[test]
    fn stationary_rate() {
        assert!((stationary_bad(0.01, 0.09) - 0.1).abs() < 1e-15);
        assert!((loss_rate(0.01, 0.09, 0.0, 0.5) - 0.05).abs() < 1e-15);
        assert_eq!(loss_rate(0.0, 0.0, 0.02, 0.9), 0.02);
    }

    #[test]
    fn each_parameter_is_validated_by_name() {
        assert_eq!(
            validate(2.0, 0.5, 0.0, 1.0).unwrap_err().field(),
            "p_good_to_bad"
        );
        assert_eq!(
            validate(0.5, -0.1, 0.0, 1.0).unwrap_err().field(),
            "p_bad_to_good"
        );
        assert_eq!(
            validate(0.5, 0.5, f64::NAN, 1.0).unwrap_err().field(),
            "loss_in_good"
        );
        assert_eq!(
            validate(0.5, 0.5, 0.0, 1.1).unwrap_err().field(),
            "loss_in_bad"
        );
        assert!(validate(0.0, 1.0, 0.0, 1.0).is_ok());
    }
}
