//! Independent (Bernoulli) loss: each packet dropped with probability p, independently of all
//! others (ns-2's `ErrorModel` with `unit_ pkt` and a uniform `ranvar_`, `queue/errmodel.cc`).

use super::error::{check_probability, LossModelError};
use crate::rng::{uniform, SimRng};

/// The state of a Bernoulli model (only its parameter: it has no memory).
#[derive(Clone, Debug)]
pub(super) struct Bernoulli {
    p: f64,
}

impl Bernoulli {
    /// A model dropping each packet with probability `p` in [0, 1].
    pub(super) fn new(p: f64) -> Bernoulli {
        Bernoulli { p }
    }

    /// Draws one uniform u in [0, 1) (always exactly one, so the stream advances by one draw per
    /// packet whatever p is) and drops when u < p: p = 0 never drops, p = 1 always does.
    pub(super) fn should_drop(&mut self, rng: &mut SimRng) -> bool {
        uniform(rng) < self.p
    }
}

/// `p` must be a probability.
pub(super) fn validate(p: f64) -> Result<(), LossModelError> {
    check_probability("p", p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::stream;

    #[test]
    fn extremes_are_exact() {
        let mut rng = stream(1, "test");
        let mut never = Bernoulli::new(0.0);
        let mut always = Bernoulli::new(1.0);
        assert!((0..10_000).all(|_| !never.should_drop(&mut rng)));
        assert!((0..10_000).all(|_| always.should_drop(&mut rng)));
    }

    #[test]
    fn one_draw_per_packet() {
        let mut a = stream(3, "test");
        let mut b = stream(3, "test");
        let mut model = Bernoulli::new(0.3);
        for _ in 0..100 {
            let dropped = model.should_drop(&mut a);
            assert_eq!(dropped, uniform(&mut b) < 0.3);
        }
    }

    #[test]
    fn p_is_validated() {
        assert!(validate(0.5).is_ok());
        assert_eq!(validate(1.5).unwrap_err().field(), "p");
    }
}
