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
    /// the history (the receiver does this once per packet).
    pub fn evaluate(&self, open_packets: f64) -> Evaluation {
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
        let k = self.closed.len();
        let n = self.weights.len();
        // How many closed intervals join I_0 in the open-interval average.
        let with_open = match self.short_history {
            ShortHistory::Rfc5348 => k - 1,
            ShortHistory::Ns2 => k.min(n - 1),
        };
        let mut total = open_packets * self.weights[0];
        let mut weight = self.weights[0];
        for (interval, w) in self.closed.iter().take(with_open).zip(&self.weights[1..]) {
            total += interval.packets * w * interval.discount * df;
            weight += w * interval.discount * df;
        }
        Evaluation {
            mean: Some(closed_mean.max(total / weight)),
            discount_factor: df,
        }
    }

    /// The loss event rate p = 1/I_mean for the open interval `open_packets`, or 0 before any
    /// loss.
    pub fn loss_event_rate(&self, open_packets: f64) -> f64 {
        self.mean(open_packets).map_or(0.0, |mean| 1.0 / mean)
    }
}

#[cfg(test)]
mod tests {
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
}
