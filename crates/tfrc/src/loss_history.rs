//! The loss-interval history and the Average Loss Interval method (RFC 5348 §5.4, §5.5;
//! Floyd 2000 §3.3).
//!
//! The receiver keeps the last n closed loss intervals I_1..I_n (newest first) and asks for the
//! average given the open interval I_0. The open interval counts only when it raises the
//! average, and history discounting lowers the weight of old intervals once I_0 is more than
//! twice the average, so the rate can rise faster after congestion ends.

use std::collections::VecDeque;

use crate::config::ShortHistory;

/// One closed loss interval with its stored discount factor DF_i (RFC 5348 §5.5).
#[derive(Clone, Copy, Debug, PartialEq)]
struct ClosedInterval {
    packets: f64,
    discount: f64,
}

/// The average loss interval and the discount factor in force, for one open interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Evaluation {
    /// I_mean in packets; `None` before any loss.
    pub mean: Option<f64>,
    /// The general discount factor DF (1 when discounting is off or not triggered).
    pub discount_factor: f64,
}

/// The closed loss intervals and the averaging rules applied to them.
#[derive(Clone, Debug)]
pub struct LossHistory {
    weights: Vec<f64>,
    closed: VecDeque<ClosedInterval>,
    /// [`LossHistory::closed_mean`], recomputed whenever `closed` changes (at loss events),
    /// not for every packet's evaluation.
    closed_mean: Option<f64>,
    /// An open interval up to which [`LossHistory::evaluate`] is known to give the closed mean
    /// and DF 1 without its pass over the history (`None`: no such interval; see
    /// `LossHistory::find_fast_limit`), found whenever `closed` changes.
    fast_limit: Option<f64>,
    discount_threshold: Option<f64>,
    short_history: ShortHistory,
}

/// The weights w_0..w_{n-1}: 1 for i < n/2, then 2(n - i)/(n + 2) (RFC 5348 §5.4).
pub fn interval_weights(n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| {
            if i < n / 2 {
                1.0
            } else {
                2.0 * (n - i) as f64 / (n + 2) as f64
            }
        })
        .collect()
}

impl LossHistory {
    /// An empty history averaging `n` intervals, with history discounting at `discount_threshold`
    /// (or none) and the given short-history rule.
    pub fn new(n: usize, discount_threshold: Option<f64>, short_history: ShortHistory) -> Self {
        LossHistory {
            weights: interval_weights(n),
            closed: VecDeque::with_capacity(n + 1),
            closed_mean: None,
            fast_limit: None,
            discount_threshold,
            short_history,
        }
    }

    /// The number of closed intervals known, k (at most n).
    pub fn len(&self) -> usize {
        self.closed.len()
    }

    /// Whether no loss interval has been closed yet (no loss seen).
    pub fn is_empty(&self) -> bool {
        self.closed.is_empty()
    }

    /// The most recent closed interval I_1, in packets.
    pub fn last_closed(&self) -> Option<f64> {
        self.closed.front().map(|c| c.packets)
    }

    /// Records the first loss interval, synthesized from a rate (RFC 5348 §6.3.1). Any earlier
    /// history is cleared.
    pub fn seed_first(&mut self, packets: f64) {
        self.closed.clear();
        self.closed.push_front(ClosedInterval {
            packets,
            discount: 1.0,
        });
        self.closed_changed();
    }

    /// A new loss event closes the open interval, which held `packets` packets. The discount in
    /// force at that moment is folded into every stored interval, so an interval once discounted
    /// stays discounted (RFC 5348 §5.5).
    pub fn close_interval(&mut self, packets: f64) {
        let factor = self.discount_factor(packets);
        for interval in &mut self.closed {
            interval.discount *= factor;
        }
        self.closed.push_front(ClosedInterval {
            packets,
            discount: 1.0,
        });
        self.closed.truncate(self.weights.len());
        self.closed_changed();
    }

    /// The weighted mean of the closed intervals alone, I_tot1/W_tot1, with their stored
    /// discount factors; `None` with no history.
    pub fn closed_mean(&self) -> Option<f64> {
        self.closed_mean
    }

    /// Recomputes the cached [`LossHistory::closed_mean`] after `closed` changed.
    fn closed_changed(&mut self) {
        self.closed_mean = (!self.closed.is_empty()).then(|| {
            let (mut total, mut weight) = (0.0, 0.0);
            for (interval, w) in self.closed.iter().zip(&self.weights) {
                let w = w * interval.discount;
                total += interval.packets * w;
                weight += w;
            }
            total / weight
        });
        self.fast_limit = self.find_fast_limit();
    }

    /// The largest whole number of packets I_0, near where the open interval starts to raise the
    /// average, for which the full evaluation gives I_mean = the closed mean with DF = 1; `None`
    /// if there is none or it cannot be confirmed.
    ///
    /// Exact for every I_0 at or below it, not an approximation: with DF = 1 the average's
    /// candidate (I_0·w_0 + the closed terms) / W is computed from I_0 by one multiplication,
    /// additions of terms that do not depend on I_0, and one division by a positive W that does
    /// not either, and IEEE rounding is monotone in each operand, so the candidate never falls
    /// as I_0 grows. Once it is confirmed to be at most the closed mean at the limit, and DF is 1
    /// there (I_0 at most twice the closed mean), both hold for every smaller I_0, and the
    /// evaluation's maximum is the closed mean. The receiver evaluates once per packet while its
    /// open interval grows one packet at a time, mostly below this limit.
    fn find_fast_limit(&self) -> Option<f64> {
        let closed_mean = self.closed_mean?;
        let w0 = *self.weights.first()?;
        // The candidate reaches the closed mean M near I_0 = (M·W - closed terms) / w_0.
        let (terms, weight) = self.weighted(0.0, 1.0);
        let mut limit = ((closed_mean * weight - terms) / w0).floor();
        if self.discount_threshold.is_some() {
            limit = limit.min((2.0 * closed_mean).floor());
        }
        // Rounding may put the estimate a packet or two too high: confirm it, stepping down.
        for _ in 0..4 {
            if !limit.is_finite() {
                return None;
            }
            let (total, weight) = self.weighted(limit, 1.0);
            let df_is_one = self.discount_threshold.is_none() || limit <= 2.0 * closed_mean;
            if df_is_one && total / weight <= closed_mean {
                return Some(limit);
            }
            limit -= 1.0;
        }
        None
    }

    /// The general discount factor DF for an open interval of `open_packets` (RFC 5348 §5.5):
    /// max(2 I_mean / I_0, THRESHOLD) once I_0 > 2 I_mean, else 1.
    pub fn discount_factor(&self, open_packets: f64) -> f64 {
        self.evaluate(open_packets).discount_factor
    }

    /// The average loss interval I_mean given the open interval I_0 = `open_packets`; `None`
    /// before any loss. The loss event rate is its inverse.
    pub fn mean(&self, open_packets: f64) -> Option<f64> {
        self.evaluate(open_packets).mean
    }

    /// I_mean and DF for the open interval `open_packets`, computed together in one pass over
    /// the history (the receiver does this once per packet), or at once where the open interval
    /// is known not to raise the average (see `LossHistory::find_fast_limit`).
    pub fn evaluate(&self, open_packets: f64) -> Evaluation {
        if let Some(limit) = self.fast_limit {
            if open_packets <= limit {
                return Evaluation {
                    mean: self.closed_mean,
                    discount_factor: 1.0,
                };
            }
        }
        self.evaluate_in_full(open_packets)
    }

    /// [`LossHistory::evaluate`] by its pass over the history.
    fn evaluate_in_full(&self, open_packets: f64) -> Evaluation {
        let Some(closed_mean) = self.closed_mean() else {
            return Evaluation {
                mean: None,
                discount_factor: 1.0,
            };
        };
        let df = match self.discount_threshold {
            Some(threshold) if open_packets > 2.0 * closed_mean => {
                (2.0 * closed_mean / open_packets).max(threshold)
            }
            _ => 1.0,
        };
        let (total, weight) = self.weighted(open_packets, df);
        Evaluation {
            mean: Some(closed_mean.max(total / weight)),
            discount_factor: df,
        }
    }

    /// The open-interval average's weighted total and total weight for I_0 = `open_packets` and
    /// discount factor `df`: I_0 with weight w_0, then the closed intervals that join it, each
    /// with its weight, stored discount and `df` (with no closed interval, I_0 alone).
    fn weighted(&self, open_packets: f64, df: f64) -> (f64, f64) {
        let k = self.closed.len();
        let n = self.weights.len();
        // How many closed intervals join I_0 in the open-interval average.
        let with_open = match self.short_history {
            ShortHistory::Rfc5348 => k.saturating_sub(1),
            ShortHistory::Ns2 => k.min(n - 1),
        };
        let mut total = open_packets * self.weights[0];
        let mut weight = self.weights[0];
        for (interval, w) in self.closed.iter().take(with_open).zip(&self.weights[1..]) {
            total += interval.packets * w * interval.discount * df;
            weight += w * interval.discount * df;
        }
        (total, weight)
    }

    /// The loss event rate p = 1/I_mean for the open interval `open_packets`, or 0 before any
    /// loss.
    pub fn loss_event_rate(&self, open_packets: f64) -> f64 {
        self.mean(open_packets).map_or(0.0, |mean| 1.0 / mean)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn history(
        closed_newest_first: &[f64],
        threshold: Option<f64>,
        rule: ShortHistory,
    ) -> LossHistory {
        let mut h = LossHistory::new(8, threshold, rule);
        for &packets in closed_newest_first.iter().rev() {
            h.closed.push_front(ClosedInterval {
                packets,
                discount: 1.0,
            });
        }
        h.closed_changed();
        h
    }

    #[test]
    fn weights_for_eight() {
        assert_eq!(
            interval_weights(8),
            vec![1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2]
        );
        assert_eq!(interval_weights(4), vec![1.0, 1.0, 2.0 / 3.0, 1.0 / 3.0]);
    }

    #[test]
    fn no_loss_gives_zero() {
        let h = LossHistory::new(8, Some(0.25), ShortHistory::Rfc5348);
        assert_eq!(h.loss_event_rate(1000.0), 0.0);
        assert_eq!(h.mean(5.0), None);
    }

    #[test]
    fn open_interval_counts_only_when_it_raises_the_average() {
        let h = history(&[100.0; 8], None, ShortHistory::Rfc5348);
        assert_eq!(h.mean(1.0), Some(100.0));
        assert_eq!(h.mean(100.0), Some(100.0));
        assert!(h.mean(101.0).unwrap() > 100.0);
    }

    #[test]
    fn discounting_is_sticky() {
        let mut h = history(&[100.0; 8], Some(0.5), ShortHistory::Rfc5348);
        // A long quiet period discounts the history by the floor 0.5 when it closes ...
        h.close_interval(1000.0);
        let stored: Vec<f64> = h.closed.iter().map(|c| c.discount).collect();
        assert_eq!(stored, vec![1.0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]);
        // ... and the next short interval does not restore the old weights.
        h.close_interval(100.0);
        assert!(h.closed.iter().skip(2).all(|c| c.discount == 0.5));
    }

    /// The shortcut below the fast limit gives what the full pass gives, bit for bit, for every
    /// open interval: whole packets from 0 past twice the mean (the receiver's), both sides of
    /// the limit, and arbitrary values.
    fn same_as_the_full_pass(h: &LossHistory, opens: &[f64]) -> Result<(), TestCaseError> {
        let bits = |e: Evaluation| (e.mean.map(f64::to_bits), e.discount_factor.to_bits());
        let mean = h.closed_mean().unwrap_or(0.0);
        let whole = (0..=(3.0 * mean).min(5000.0) as u64 + 3).map(|i| i as f64);
        let near = h
            .fast_limit
            .into_iter()
            .flat_map(|l| [l - 1.0, l, l + 1.0, l + 0.5]);
        for open in whole.chain(near).chain(opens.iter().copied()) {
            prop_assert_eq!(
                bits(h.evaluate(open)),
                bits(h.evaluate_in_full(open)),
                "open {}, limit {:?}",
                open,
                h.fast_limit
            );
        }
        Ok(())
    }

    proptest! {
        #[test]
        fn the_fast_limit_changes_no_evaluation(
            n in 1usize..12,
            threshold in prop_oneof![Just(None), (0.05f64..0.9).prop_map(Some)],
            ns2 in any::<bool>(),
            seed in prop_oneof![Just(None), (1.0f64..500.0).prop_map(Some)],
            intervals in prop::collection::vec(
                prop_oneof![1.0f64..20.0, 1.0f64..2000.0, (1u32..300).prop_map(f64::from)],
                0..20,
            ),
            opens in prop::collection::vec(-10.0f64..5000.0, 0..8),
        ) {
            let rule = if ns2 { ShortHistory::Ns2 } else { ShortHistory::Rfc5348 };
            let mut h = LossHistory::new(n, threshold, rule);
            same_as_the_full_pass(&h, &opens)?;
            if let Some(packets) = seed {
                h.seed_first(packets);
                same_as_the_full_pass(&h, &opens)?;
            }
            for packets in intervals {
                h.close_interval(packets);
                same_as_the_full_pass(&h, &opens)?;
            }
        }
    }
}
