//! Loss models attachable to a link, optionally to one flow: periodic (by packet count or by
//! time), Bernoulli, Gilbert-Elliott, an explicit list, and a time schedule of those
//! (docs/loss-models.md).
//!
//! A [`LossModelConfig`] is plain data (what a scenario file describes); [`LossModel`] is its
//! running state. Every model is a closed enum variant (design.md convention 1: static dispatch
//! in the per-packet path), lives in its own file, draws randomness only from the [`SimRng`]
//! handed to [`LossModel::should_drop`], and allocates nothing per packet.
//!
//! Arrival index: each model numbers the packets it sees 0, 1, 2, ... — only packets of its flow
//! when filtered by flow, and, inside a schedule, only packets offered since its step began.

mod bernoulli;
mod error;
mod gilbert_elliott;
mod gilbert_elliott_time;
mod list;
mod periodic;
mod periodic_time;
mod schedule;

pub use error::LossModelError;

use std::time::Duration;

use tfrc::Time;

use crate::dist::DurationDist;
use crate::packet::{FlowId, Packet};
use crate::rng::SimRng;

/// A loss model's parameters. Check them with [`validate`](LossModelConfig::validate) before
/// building a [`LossModel`].
#[derive(Clone, Debug, PartialEq)]
pub enum LossModelConfig {
    /// Drop the arrivals whose 0-based index n has n % every == phase % every: exactly one packet
    /// in every `every` (ns-2 `ErrorModel/Periodic`, packet units; floyd2000 Fig. 2). Draws no
    /// randomness.
    Periodic {
        /// Period in packets, at least 1.
        every: u64,
        /// Which arrival of each period is dropped (taken modulo `every`): 0 drops the first
        /// packet of each period, `every - 1` the last.
        phase: u64,
    },
    /// Drop the first arrival at or after each deadline `start + offset + k * interval`
    /// (k = 0, 1, ...; `start` is 0, or the schedule step's start): one drop per interval of
    /// time, whatever the flow's rate (yang2001 §IV's "one loss indication per RTT" with
    /// `interval` = the RTT). Deadlines passed with no arrival are merged into one drop. Draws no
    /// randomness.
    PeriodicTime {
        /// Time between deadlines, positive.
        interval: Duration,
        /// Time from the start to the first deadline.
        offset: Duration,
    },
    /// Drop each packet independently with probability `p` (ns-2 `ErrorModel`, packet units).
    /// One uniform draw per packet.
    Bernoulli {
        /// Drop probability, in [0, 1].
        p: f64,
    },
    /// Two-state Markov-modulated loss (Gilbert 1960; Elliott 1963), stepped once per packet:
    /// first the state transition, then the loss draw in the new state. Starts in Good. Two
    /// uniform draws per packet (transition, then loss).
    GilbertElliott {
        /// Probability of moving Good -> Bad at a packet, in [0, 1].
        p_good_to_bad: f64,
        /// Probability of moving Bad -> Good at a packet, in [0, 1]; a stay in Bad lasts
        /// 1/`p_bad_to_good` packets on average.
        p_bad_to_good: f64,
        /// Drop probability of a packet in Good, in [0, 1].
        loss_in_good: f64,
        /// Drop probability of a packet in Bad, in [0, 1].
        loss_in_bad: f64,
    },
    /// Two-state loss whose stays last a time, not a number of packets: ns-2's
    /// `ErrorModel/TwoState` with `unit time` (ns-2.35 `queue/errmodel.cc`). Starts in Good when
    /// the model begins; each stay's length is drawn from its state's distribution (a Bad stay
    /// cut at 120 s, as ns-2 does); a packet is dropped with its state's loss probability.
    /// One 64-bit draw at the first packet seeds the sojourns' own generator; then one uniform
    /// draw per packet (the loss), so the state at a time does not depend on the traffic.
    GilbertElliottTime {
        /// How long a stay in Good lasts (ns-2 `ranvar 0`); mean at least 1 µs.
        good: DurationDist,
        /// How long a stay in Bad lasts (ns-2 `ranvar 1`); mean at least 1 µs.
        bad: DurationDist,
        /// Drop probability of a packet in Good, in [0, 1] (ns-2: 0).
        loss_in_good: f64,
        /// Drop probability of a packet in Bad, in [0, 1] (ns-2: 1).
        loss_in_bad: f64,
    },
    /// Drop exactly the arrivals with these 0-based indices (ns-2 `ErrorModel/List`): any order,
    /// no duplicates. Draws no randomness.
    List {
        /// The arrival indices to drop.
        indices: Vec<u64>,
    },
    /// Models that take over at given times: from each step's start time (inclusive) until the
    /// next step's, that step's model applies; before the first step nothing is dropped. Each
    /// step's model starts fresh, with its arrival index restarting at 0. Steps start at strictly
    /// increasing times and may not be schedules themselves.
    Schedule {
        /// (start time, model) pairs, sorted by strictly increasing start time.
        steps: Vec<(Time, LossModelConfig)>,
    },
}

impl LossModelConfig {
    /// Checks every parameter: probabilities in [0, 1] (NaN refused), `every` >= 1, a positive
    /// `interval`, no duplicate list index, schedule steps strictly increasing in time, not
    /// nested, and each valid. The error names the offending field ([`LossModelError::field`]).
    pub fn validate(&self) -> Result<(), LossModelError> {
        match self {
            LossModelConfig::Periodic { every, .. } => periodic::validate(*every),
            LossModelConfig::PeriodicTime { interval, .. } => periodic_time::validate(*interval),
            LossModelConfig::Bernoulli { p } => bernoulli::validate(*p),
            LossModelConfig::GilbertElliott {
                p_good_to_bad,
                p_bad_to_good,
                loss_in_good,
                loss_in_bad,
            } => gilbert_elliott::validate(
                *p_good_to_bad,
                *p_bad_to_good,
                *loss_in_good,
                *loss_in_bad,
            ),
            LossModelConfig::GilbertElliottTime {
                good,
                bad,
                loss_in_good,
                loss_in_bad,
            } => gilbert_elliott_time::validate(good, bad, *loss_in_good, *loss_in_bad),
            LossModelConfig::List { indices } => list::validate(indices),
            LossModelConfig::Schedule { steps } => schedule::validate(steps),
        }
    }

    /// The long-run fraction of packets dropped, for the stationary models: 1/`every` for
    /// Periodic, `p` for Bernoulli, and for Gilbert-Elliott pi_good * `loss_in_good` + pi_bad *
    /// `loss_in_bad` with pi_bad = p_gb / (p_gb + p_bg) (a chain with both transition
    /// probabilities 0 never leaves Good: `loss_in_good`); for the time-based Gilbert-Elliott,
    /// the same with pi_bad the mean Bad stay over the mean cycle (packets arriving at a
    /// constant rate; the 120 s cap ignored). `None` for List, Schedule and
    /// PeriodicTime (its drop fraction depends on the flow's packet rate), and for Periodic with
    /// `every` = 0. Meaningful only for a config that passes
    /// [`validate`](LossModelConfig::validate).
    pub fn expected_loss_rate(&self) -> Option<f64> {
        match self {
            LossModelConfig::Periodic { every: 0, .. } => None,
            LossModelConfig::Periodic { every, .. } => Some(periodic::loss_rate(*every)),
            LossModelConfig::Bernoulli { p } => Some(*p),
            LossModelConfig::GilbertElliott {
                p_good_to_bad,
                p_bad_to_good,
                loss_in_good,
                loss_in_bad,
            } => Some(gilbert_elliott::loss_rate(
                *p_good_to_bad,
                *p_bad_to_good,
                *loss_in_good,
                *loss_in_bad,
            )),
            LossModelConfig::GilbertElliottTime {
                good,
                bad,
                loss_in_good,
                loss_in_bad,
            } => Some(gilbert_elliott_time::loss_rate(
                good,
                bad,
                *loss_in_good,
                *loss_in_bad,
            )),
            LossModelConfig::List { .. }
            | LossModelConfig::Schedule { .. }
            | LossModelConfig::PeriodicTime { .. } => None,
        }
    }
}

/// What a [`LossModel`] has seen so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LossModelStats {
    /// Packets offered to the model and counted by it, in packets (only its flow's when
    /// filtered; including those offered before a schedule's first step).
    pub seen_packets: u64,
    /// Of those, packets the model dropped, in packets.
    pub dropped_packets: u64,
}

/// A loss model in operation: a [`LossModelConfig`]'s running state, optionally restricted to
/// one flow.
#[derive(Clone, Debug)]
pub struct LossModel {
    flow: Option<FlowId>,
    model: Model,
    stats: LossModelStats,
}

impl LossModel {
    /// A model for `config`, applied to every packet (`flow = None`) or only to `flow`'s: with
    /// `Some(f)`, packets of other flows pass untouched, are not counted, and draw no
    /// randomness.
    ///
    /// # Panics
    /// If `config` fails [`validate`](LossModelConfig::validate); use
    /// [`try_new`](LossModel::try_new) to get the error instead.
    pub fn new(config: &LossModelConfig, flow: Option<FlowId>) -> LossModel {
        match LossModel::try_new(config, flow) {
            Ok(model) => model,
            Err(err) => panic!("invalid loss model: {err}"),
        }
    }

    /// Like [`new`](LossModel::new), but an invalid `config` is returned as its error.
    pub fn try_new(
        config: &LossModelConfig,
        flow: Option<FlowId>,
    ) -> Result<LossModel, LossModelError> {
        config.validate()?;
        Ok(LossModel {
            flow,
            model: Model::new(config, Time::ZERO),
            stats: LossModelStats::default(),
        })
    }

    /// Whether the packet arriving at `now` is dropped. Arrivals are offered in non-decreasing
    /// `now` (the simulator's event order). Allocates nothing; draws from `rng` only as the
    /// model's docs say (none for Periodic and List, one per packet for Bernoulli, two for
    /// Gilbert-Elliott, one for the time-based Gilbert-Elliott plus one seed at its first
    /// packet, none before a schedule's first step).
    pub fn should_drop(&mut self, now: Time, packet: &Packet, rng: &mut SimRng) -> bool {
        if self.flow.is_some_and(|flow| flow != packet.flow) {
            return false;
        }
        self.stats.seen_packets += 1;
        let dropped = self.model.should_drop(now, rng);
        if dropped {
            self.stats.dropped_packets += 1;
        }
        dropped
    }

    /// The flow this model is restricted to, if any.
    pub fn flow(&self) -> Option<FlowId> {
        self.flow
    }

    /// Packets seen and dropped so far.
    pub fn stats(&self) -> LossModelStats {
        self.stats
    }
}

/// The running state of one model (closed enum: static dispatch). A schedule's steps are
/// themselves `Model`s, never schedules (validation forbids nesting).
#[derive(Clone, Debug)]
enum Model {
    Periodic(periodic::Periodic),
    PeriodicTime(periodic_time::PeriodicTime),
    Bernoulli(bernoulli::Bernoulli),
    GilbertElliott(gilbert_elliott::GilbertElliott),
    GilbertElliottTime(gilbert_elliott_time::GilbertElliottTime),
    List(list::List),
    Schedule(schedule::Schedule),
}

impl Model {
    /// Fresh state for a valid `config` that takes effect at `start` (0, or its schedule
    /// step's start: only time-based models read it).
    fn new(config: &LossModelConfig, start: Time) -> Model {
        match config {
            LossModelConfig::Periodic { every, phase } => {
                Model::Periodic(periodic::Periodic::new(*every, *phase))
            }
            LossModelConfig::PeriodicTime { interval, offset } => {
                Model::PeriodicTime(periodic_time::PeriodicTime::new(*interval, *offset, start))
            }
            LossModelConfig::Bernoulli { p } => Model::Bernoulli(bernoulli::Bernoulli::new(*p)),
            LossModelConfig::GilbertElliott {
                p_good_to_bad,
                p_bad_to_good,
                loss_in_good,
                loss_in_bad,
            } => Model::GilbertElliott(gilbert_elliott::GilbertElliott::new(
                *p_good_to_bad,
                *p_bad_to_good,
                *loss_in_good,
                *loss_in_bad,
            )),
            LossModelConfig::GilbertElliottTime {
                good,
                bad,
                loss_in_good,
                loss_in_bad,
            } => Model::GilbertElliottTime(gilbert_elliott_time::GilbertElliottTime::new(
                *good,
                *bad,
                *loss_in_good,
                *loss_in_bad,
                start,
            )),
            LossModelConfig::List { indices } => Model::List(list::List::new(indices)),
            LossModelConfig::Schedule { steps } => Model::Schedule(schedule::Schedule::new(steps)),
        }
    }

    /// Counts one arrival at `now` and says whether it is dropped.
    fn should_drop(&mut self, now: Time, rng: &mut SimRng) -> bool {
        match self {
            Model::Periodic(model) => model.should_drop(),
            Model::PeriodicTime(model) => model.should_drop(now),
            Model::Bernoulli(model) => model.should_drop(rng),
            Model::GilbertElliott(model) => model.should_drop(rng),
            Model::GilbertElliottTime(model) => model.should_drop(now, rng),
            Model::List(model) => model.should_drop(),
            Model::Schedule(model) => model.should_drop(now, rng),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{NodeId, Payload};
    use crate::rng::stream;

    fn packet(flow: u32) -> Packet {
        Packet::new(FlowId(flow), 0, 1000, NodeId(0), Time::ZERO, Payload::Cbr)
    }

    #[test]
    fn stats_count_only_the_filtered_flow() {
        let config = LossModelConfig::Periodic { every: 2, phase: 0 };
        let mut model = LossModel::new(&config, Some(FlowId(1)));
        let mut rng = stream(1, "test");
        for i in 0..30 {
            model.should_drop(Time::ZERO, &packet(i % 3), &mut rng);
        }
        assert_eq!(
            model.stats(),
            LossModelStats {
                seen_packets: 10,
                dropped_packets: 5
            }
        );
        assert_eq!(model.flow(), Some(FlowId(1)));
    }

    #[test]
    fn try_new_refuses_what_validate_refuses() {
        let config = LossModelConfig::Bernoulli { p: 2.0 };
        assert_eq!(
            LossModel::try_new(&config, None).unwrap_err(),
            config.validate().unwrap_err()
        );
    }

    #[test]
    #[should_panic(expected = "invalid loss model: every = 0")]
    fn new_panics_on_an_invalid_config() {
        LossModel::new(&LossModelConfig::Periodic { every: 0, phase: 0 }, None);
    }

    #[test]
    fn expected_rates() {
        let periodic = LossModelConfig::Periodic {
            every: 200,
            phase: 3,
        };
        assert_eq!(periodic.expected_loss_rate(), Some(0.005));
        let bernoulli = LossModelConfig::Bernoulli { p: 0.02 };
        assert_eq!(bernoulli.expected_loss_rate(), Some(0.02));
        let ge = LossModelConfig::GilbertElliott {
            p_good_to_bad: 0.01,
            p_bad_to_good: 0.09,
            loss_in_good: 0.0,
            loss_in_bad: 0.5,
        };
        assert!((ge.expected_loss_rate().unwrap() - 0.05).abs() < 1e-15);
        assert_eq!(
            LossModelConfig::List { indices: vec![1] }.expected_loss_rate(),
            None
        );
        assert_eq!(
            LossModelConfig::Schedule { steps: vec![] }.expected_loss_rate(),
            None
        );
        let timed = LossModelConfig::PeriodicTime {
            interval: Duration::from_millis(100),
            offset: Duration::ZERO,
        };
        assert_eq!(timed.expected_loss_rate(), None);
    }
}
