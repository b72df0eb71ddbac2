//! The TEAR receiver's emulation of a TCP sender's window, and its epoch history
//! (protocols.md §3 steps 1 to 4; docs/tear.md, "The algorithm").
//!
//! Every arrival is treated as the ACK a TCP sender would have received: cwnd grows by 1 in
//! slow start and by 1/cwnd in congestion avoidance. The arrivals are cut into rounds (one
//! emulated RTT each, [`RoundRule`]); at each round's end the sample cwnd/RTT is added to the
//! open epoch. A confirmed loss halves the window (ssthresh = cwnd/2, cwnd = ssthresh: fast
//! recovery as the receiver sees it) and closes the epoch; an emulated timeout closes it too and
//! restarts slow start from one packet. An epoch's value is the mean of its round samples (the
//! rate at its close if it saw no whole round); the newest `epochs` values, weighted as TFRC's
//! loss intervals, give the rate (yang2001 §V-A: newest weight 1/6).
//!
//! Rates here are in packets per second; the sink turns them into bytes.

use std::collections::VecDeque;

use tfrc::loss_history::interval_weights;
use tfrc::Time;

use super::gaps::Lost;
use super::{OpenEpochRule, RoundRule, TearConfig};

/// What a confirmed loss did to the emulated window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reaction {
    /// Nothing: the loss is of a packet sent before the last reaction (one per round, as TCP
    /// reduces once per window).
    Ignored,
    /// Halved the window and closed the epoch.
    Halved,
    /// A run of losses longer than the window: treated as a timeout (protocols.md §3 step 3).
    Timeout,
}

/// Counters of the emulation (cumulative).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EmulationStats {
    /// Rounds completed.
    pub rounds: u64,
    /// Epochs closed (by losses and timeouts).
    pub epochs_closed: u64,
    /// Losses that halved the window.
    pub loss_reactions: u64,
    /// Emulated timeouts (silences and long loss runs).
    pub timeouts: u64,
}

/// The receiver's emulated TCP window and epoch history.
#[derive(Clone, Debug)]
pub struct Emulation {
    round_rule: RoundRule,
    open_epoch: OpenEpochRule,
    /// The weights, newest first (TFRC's for `epochs` intervals).
    weights: Vec<f64>,
    cwnd: f64,
    ssthresh: f64,
    /// The sender's RTT estimate in seconds, once one has arrived.
    rtt_s: Option<f64>,
    /// The current round: first sequence number, length in packets, start time; `None` until
    /// the first arrival after the start or a reaction.
    round: Option<(u64, u64, Time)>,
    /// Sum and number of the open epoch's round samples (packets/s).
    epoch_sum: f64,
    epoch_rounds: u32,
    /// Closed epochs' values, newest first, at most `weights.len()`.
    history: VecDeque<f64>,
    /// The highest sequence number seen at the last reaction: losses at or below it are old.
    recover: Option<u64>,
    /// When the last reaction happened: losses confirmed within one RTT of it are old too.
    reacted_at: Option<Time>,
    stats: EmulationStats,
}

impl Emulation {
    /// The state at the flow's start: cwnd = `initial_window`, ssthresh unbounded, no history.
    pub fn new(config: &TearConfig) -> Emulation {
        Emulation {
            round_rule: config.round,
            open_epoch: config.open_epoch,
            weights: interval_weights(config.epochs.max(1)),
            cwnd: config.initial_window.max(1.0),
            ssthresh: f64::INFINITY,
            rtt_s: None,
            round: None,
            epoch_sum: 0.0,
            epoch_rounds: 0,
            history: VecDeque::new(),
            recover: None,
            reacted_at: None,
            stats: EmulationStats::default(),
        }
    }

    /// The emulated congestion window, packets.
    pub fn cwnd(&self) -> f64 {
        self.cwnd
    }

    /// The emulated slow-start threshold, packets (+inf before the first reduction).
    pub fn ssthresh(&self) -> f64 {
        self.ssthresh
    }

    /// The counters.
    pub fn stats(&self) -> EmulationStats {
        self.stats
    }

    /// The RTT in use, seconds.
    pub fn rtt_s(&self) -> Option<f64> {
        self.rtt_s
    }

    /// Closed epochs' values, newest first, packets/s.
    pub fn history(&self) -> impl Iterator<Item = f64> + '_ {
        self.history.iter().copied()
    }

    /// Takes the sender's RTT estimate (carried in each data packet; 0 means none yet).
    pub fn set_rtt(&mut self, rtt_s: f64) {
        if rtt_s > 0.0 && rtt_s.is_finite() {
            self.rtt_s = Some(rtt_s);
        }
    }

    /// A data packet `seq` arrived in order with no gap pending: the emulated ACK. Ends the round
    /// if this packet is past it (recording its sample), then grows the window. Returns whether
    /// a round ended.
    pub fn on_ack(&mut self, now: Time, seq: u64) -> bool {
        let ended = match self.round {
            None => {
                self.start_round(now, seq);
                false
            }
            Some((start, len, since)) => {
                let over = match self.round_rule {
                    RoundRule::Window => seq >= start.saturating_add(len),
                    RoundRule::Rtt => self
                        .rtt_s
                        .is_some_and(|rtt| now.saturating_since(since).as_secs_f64() >= rtt),
                };
                if over {
                    if let Some(rate) = self.current_rate() {
                        self.epoch_sum += rate;
                        self.epoch_rounds += 1;
                    }
                    self.stats.rounds += 1;
                    self.start_round(now, seq);
                }
                over
            }
        };
        if self.cwnd < self.ssthresh {
            self.cwnd += 1.0;
        } else {
            self.cwnd += 1.0 / self.cwnd;
        }
        ended
    }

    /// Losses confirmed by an arrival at `now`, when `highest` is the highest sequence number
    /// seen. A loss is old news, as TCP's second loss in a window, if it is of a packet seen
    /// to be missing at the last reaction, or confirmed within one RTT of it: the sender is
    /// still sending at the rate it had before it heard of the reaction. `timeouts` says
    /// whether a run of losses longer than the window counts as a timeout.
    pub fn on_loss(&mut self, now: Time, lost: Lost, highest: u64, timeouts: bool) -> Reaction {
        let recent = match (self.reacted_at, self.rtt_s) {
            (Some(at), Some(rtt)) => now.saturating_since(at).as_secs_f64() < rtt,
            _ => false,
        };
        if recent || self.recover.is_some_and(|r| lost.last <= r) {
            return Reaction::Ignored;
        }
        if timeouts && lost.longest_run as f64 > self.cwnd {
            self.on_timeout(now, highest);
            return Reaction::Timeout;
        }
        self.close_epoch();
        self.ssthresh = (self.cwnd / 2.0).max(1.0);
        self.cwnd = self.ssthresh;
        self.recover = Some(highest);
        self.reacted_at = Some(now);
        self.round = None;
        self.stats.loss_reactions += 1;
        Reaction::Halved
    }

    /// An emulated timeout at `now` (no arrival for an RTO, or a loss run longer than the
    /// window), when `highest` is the highest sequence number seen: ssthresh = cwnd/2, cwnd = 1,
    /// slow start.
    pub fn on_timeout(&mut self, now: Time, highest: u64) {
        self.close_epoch();
        self.ssthresh = (self.cwnd / 2.0).max(1.0);
        self.cwnd = 1.0;
        self.recover = Some(highest);
        self.reacted_at = Some(now);
        self.round = None;
        self.stats.timeouts += 1;
    }

    /// The rate X in packets per second, `None` while no RTT is known. Before the first epoch
    /// closes (the initial slow start) it is the current cwnd/RTT, as TCP's own rate; after, the
    /// weighted average of the epochs.
    pub fn rate_packets_per_s(&self) -> Option<f64> {
        let current = self.current_rate()?;
        if self.history.is_empty() {
            return Some(current);
        }
        let closed = weighted(self.history.iter().copied(), &self.weights);
        match self.open_epoch {
            OpenEpochRule::ClosedOnly => Some(closed),
            OpenEpochRule::Max => {
                let open = self.open_epoch_value().unwrap_or(current);
                let entries = std::iter::once(open).chain(self.history.iter().copied());
                Some(closed.max(weighted(entries, &self.weights)))
            }
        }
    }

    /// cwnd/RTT now, packets/s.
    fn current_rate(&self) -> Option<f64> {
        self.rtt_s.map(|rtt| self.cwnd / rtt)
    }

    /// The open epoch's mean round sample, if it has one.
    fn open_epoch_value(&self) -> Option<f64> {
        (self.epoch_rounds > 0).then(|| self.epoch_sum / f64::from(self.epoch_rounds))
    }

    fn start_round(&mut self, now: Time, seq: u64) {
        let len = self.cwnd.floor().max(1.0) as u64;
        self.round = Some((seq, len, now));
    }

    /// Pushes the open epoch's value (its mean sample, or the rate now if it saw no whole round)
    /// into the history and opens a new one.
    fn close_epoch(&mut self) {
        if let Some(value) = self.open_epoch_value().or_else(|| self.current_rate()) {
            self.history.push_front(value);
            self.history.truncate(self.weights.len());
            self.stats.epochs_closed += 1;
        }
        self.epoch_sum = 0.0;
        self.epoch_rounds = 0;
    }
}

/// Σ w_i·e_i / Σ w_i over the entries present (at most as many as weights).
fn weighted(entries: impl Iterator<Item = f64>, weights: &[f64]) -> f64 {
    let (mut total, mut weight) = (0.0, 0.0);
    for (e, w) in entries.zip(weights) {
        total += w * e;
        weight += w;
    }
    if weight > 0.0 {
        total / weight
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RTT: f64 = 0.1;

    fn emulation() -> Emulation {
        let mut e = Emulation::new(&TearConfig::default());
        e.set_rtt(RTT);
        e
    }

    fn t(i: u64) -> Time {
        Time::from_nanos(i * 1_000_000)
    }

    fn loss(seq: u64) -> Lost {
        Lost {
            first: seq,
            last: seq,
            count: 1,
            longest_run: 1,
        }
    }

    /// Delivers `n` packets in order from `*seq` on.
    fn deliver(e: &mut Emulation, seq: &mut u64, n: u64) {
        for _ in 0..n {
            e.on_ack(t(*seq), *seq);
            *seq += 1;
        }
    }

    /// One round: the window's worth of packets, the first lost; the others arrive after the
    /// gap (duplicate ACKs to TCP: they do not grow the window) and confirm the loss.
    fn lossy_round(e: &mut Emulation, seq: &mut u64, now: Time) {
        let n = e.cwnd().floor().max(1.0) as u64;
        let lost = *seq;
        *seq += n.max(2);
        assert_eq!(
            e.on_loss(now, loss(lost), *seq - 1, false),
            Reaction::Halved
        );
    }

    #[test]
    fn slow_start_doubles_per_round_and_reports_cwnd_over_rtt() {
        let mut e = emulation();
        let mut rounds = Vec::new();
        for seq in 0..15 {
            if e.on_ack(t(seq), seq) {
                rounds.push(e.cwnd());
            }
        }
        // Rounds end at seq 1, 3, 7: cwnd before those packets' increase was 2, 4, 8.
        assert_eq!(rounds, vec![3.0, 5.0, 9.0]);
        assert_eq!(e.cwnd(), 16.0);
        assert_eq!(e.rate_packets_per_s(), Some(160.0));
        assert_eq!(e.stats().rounds, 3);
    }

    #[test]
    fn a_loss_halves_closes_the_epoch_and_is_taken_once_per_round() {
        let mut e = emulation();
        let mut seq = 0;
        deliver(&mut e, &mut seq, 15);
        assert_eq!(e.on_loss(t(18), loss(15), 18, true), Reaction::Halved);
        assert_eq!((e.cwnd(), e.ssthresh()), (8.0, 8.0));
        // The slow-start epoch's value: the mean of its samples 2, 4, 8 packets per RTT.
        let history: Vec<f64> = e.history().collect();
        assert_eq!(history.len(), 1);
        assert!((history[0] - 140.0 / 3.0).abs() < 1e-9, "{history:?}");
        // A second loss in the same window, or within an RTT, is old news.
        assert_eq!(e.on_loss(t(19), loss(17), 19, true), Reaction::Ignored);
        assert_eq!(e.on_loss(t(117), loss(20), 21, true), Reaction::Ignored);
        assert_eq!(e.on_loss(t(118), loss(20), 21, true), Reaction::Halved);
        assert_eq!(e.cwnd(), 4.0);
        assert_eq!(e.stats().loss_reactions, 2);
        // A run longer than the window is a timeout.
        let run = |n| Lost {
            first: 30,
            last: 29 + n,
            count: n,
            longest_run: n,
        };
        assert_eq!(e.on_loss(t(300), run(4), 34, false), Reaction::Halved);
        assert_eq!(e.cwnd(), 2.0);
        let late = Lost {
            first: 40,
            last: 42,
            count: 3,
            longest_run: 3,
        };
        assert_eq!(e.on_loss(t(400), late, 43, true), Reaction::Timeout);
        assert_eq!((e.cwnd(), e.ssthresh(), e.stats().timeouts), (1.0, 1.0, 1));
    }

    /// yang2001 §V-A: without loss the open epoch's mean rises by half a packet per RTT, and
    /// with weight 1/6 the rate by at most 1/12 packet/RTT per RTT.
    #[test]
    fn the_rate_rises_by_at_most_a_twelfth_of_a_packet_per_rtt() {
        let mut e = emulation();
        let mut seq = 0;
        // Reach a steady sawtooth: 20 epochs of congestion avoidance, each 1 loss per ~8 RTTs.
        deliver(&mut e, &mut seq, 31);
        for _ in 0..20 {
            deliver(&mut e, &mut seq, 100);
            let lost = seq;
            seq += 1;
            deliver(&mut e, &mut seq, 3);
            e.on_loss(t(seq), loss(lost), seq - 1, true);
        }
        // Now no loss at all: the rate in packets per RTT, once per round.
        let mut per_round = Vec::new();
        for _ in 0..2000 {
            if e.on_ack(t(seq), seq) {
                per_round.push(e.rate_packets_per_s().unwrap() * RTT);
            }
            seq += 1;
        }
        let steps: Vec<f64> = per_round.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(steps.iter().all(|&s| s <= 1.0 / 12.0 + 1e-9), "{steps:?}");
        let late = &steps[steps.len() - 20..];
        let mean = late.iter().sum::<f64>() / late.len() as f64;
        assert!((mean - 1.0 / 12.0).abs() < 0.01, "increase {mean}");
    }

    /// yang2001 §IV-A: from a steady state, one loss indication per RTT halves the rate after
    /// D = 5 indications (the paper's count); the max rule of the open epoch makes it 5 to 6.
    #[test]
    fn one_loss_per_round_halves_the_rate_in_five_to_six_rounds() {
        let mut e = emulation();
        let mut seq = 0;
        deliver(&mut e, &mut seq, 31);
        for _ in 0..30 {
            deliver(&mut e, &mut seq, 150);
            let lost = seq;
            seq += 1;
            deliver(&mut e, &mut seq, 3);
            e.on_loss(t(seq), loss(lost), seq - 1, true);
        }
        // Steady: let the open epoch grow to about its usual size, then lose every round.
        deliver(&mut e, &mut seq, 60);
        let before = e.rate_packets_per_s().unwrap();
        let mut d = 0;
        let base = seq;
        while e.rate_packets_per_s().unwrap() > before / 2.0 {
            lossy_round(&mut e, &mut seq, t(base + 100 * (d + 1)));
            d += 1;
            assert!(d < 20);
        }
        println!("D = {d} rounds");
        assert!((5..=6).contains(&d), "D = {d}");
    }

    #[test]
    fn timeouts_push_small_epochs_and_the_closed_only_rule_ignores_the_open_one() {
        let mut e = emulation();
        let mut seq = 0;
        deliver(&mut e, &mut seq, 31);
        for _ in 0..10 {
            deliver(&mut e, &mut seq, 100);
            e.on_loss(t(seq), loss(seq), seq, true);
            seq += 1;
        }
        let before = e.rate_packets_per_s().unwrap();
        let mut rates = Vec::new();
        for _ in 0..9 {
            e.on_timeout(t(seq), seq);
            rates.push(e.rate_packets_per_s().unwrap());
        }
        assert!(rates.windows(2).all(|w| w[1] < w[0]), "{rates:?}");
        assert!(
            rates[0] < before && rates[0] > 0.5 * before,
            "{before} {rates:?}"
        );
        assert!(
            (rates[8] - 10.0).abs() < 1e-9,
            "all epochs at 1 packet/RTT: {rates:?}"
        );

        let config = TearConfig {
            open_epoch: OpenEpochRule::ClosedOnly,
            ..TearConfig::default()
        };
        let mut e = Emulation::new(&config);
        e.set_rtt(RTT);
        let mut seq = 0;
        deliver(&mut e, &mut seq, 31);
        e.on_loss(t(seq), loss(seq), seq, true);
        seq += 1;
        let closed = e.rate_packets_per_s().unwrap();
        deliver(&mut e, &mut seq, 500);
        assert_eq!(e.rate_packets_per_s(), Some(closed));
    }

    #[test]
    fn no_rate_without_an_rtt_and_rounds_by_time() {
        let mut e = Emulation::new(&TearConfig {
            round: RoundRule::Rtt,
            ..TearConfig::default()
        });
        e.on_ack(t(0), 0);
        assert_eq!(e.rate_packets_per_s(), None);
        e.set_rtt(0.0);
        assert_eq!(e.rtt_s(), None);
        e.set_rtt(RTT);
        // Rounds end at the first arrival 100 ms after their start.
        assert!(!e.on_ack(t(50), 1));
        assert!(e.on_ack(t(100), 2));
        assert!(!e.on_ack(t(199), 3));
        assert!(e.on_ack(t(200), 4));
    }
}
