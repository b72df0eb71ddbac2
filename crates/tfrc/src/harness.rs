//! A scripted, deterministic channel between one [`Sender`] and one [`Receiver`]: fixed one-way
//! delays and loss patterns on each direction, virtual time advanced from the endpoints'
//! `poll_timeout`. It is the test bed for the closed-loop checks of Floyd 2000 (Figs. 2, 19-21)
//! and the engine behind `tfrclab demo`; the real simulator lives in the `netsim` crate.

use std::collections::VecDeque;
use std::time::Duration;

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::config::{ConfigError, TfrcConfig};
use crate::packet::{DataHeader, Ecn, FeedbackHeader};
use crate::receiver::Receiver;
use crate::sender::Sender;
use crate::time::Time;

/// Which packets a direction of the channel drops.
#[derive(Clone, Debug, PartialEq)]
pub enum LossPattern {
    /// Nothing is dropped.
    None,
    /// Everything is dropped.
    All,
    /// Every `every`-th packet: those whose number n has n % every == phase % every.
    Periodic {
        /// The period in packets (at least 1).
        every: u64,
        /// Which packet of each period is dropped.
        phase: u64,
    },
    /// Exactly these packet numbers.
    List(Vec<u64>),
    /// Each packet independently with probability `p`, drawn from the channel's seeded RNG.
    Bernoulli {
        /// The drop probability, in [0, 1].
        p: f64,
    },
}

/// Loss patterns that take over at given times: floyd2000 Fig. 2 is 1% until 6 s, 10% until
/// 9 s, then 0.5%.
#[derive(Clone, Debug, PartialEq)]
pub struct LossSchedule {
    steps: Vec<(Time, LossPattern)>,
}

impl LossSchedule {
    /// One pattern for the whole run.
    pub fn constant(pattern: LossPattern) -> Self {
        LossSchedule {
            steps: vec![(Time::ZERO, pattern)],
        }
    }

    /// Each pattern applies from its start time until the next one starts; before the first
    /// start nothing is dropped. Steps are sorted by start time (stable for equal times).
    pub fn new(mut steps: Vec<(Time, LossPattern)>) -> Self {
        steps.sort_by_key(|&(start, _)| start);
        LossSchedule { steps }
    }

    /// The pattern in force at `now`.
    fn pattern_at(&self, now: Time) -> &LossPattern {
        self.steps
            .iter()
            .rev()
            .find(|(start, _)| *start <= now)
            .map_or(&LossPattern::None, |(_, pattern)| pattern)
    }

    /// Whether packet number `n`, sent at `now`, is dropped.
    fn drops(&self, now: Time, n: u64, rng: &mut Xoshiro256PlusPlus) -> bool {
        match self.pattern_at(now) {
            LossPattern::None => false,
            LossPattern::All => true,
            LossPattern::Periodic { every, phase } => {
                let every = (*every).max(1);
                n % every == phase % every
            }
            LossPattern::List(numbers) => numbers.contains(&n),
            LossPattern::Bernoulli { p } => {
                let u = (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
                u < *p
            }
        }
    }
}

/// The channel: delays and loss schedules for data (by sequence number) and feedback (by the
/// feedback packet's count), and the seed of the Bernoulli draws and the sender's dither.
#[derive(Clone, Debug, PartialEq)]
pub struct ChannelConfig {
    /// One-way delay sender to receiver.
    pub forward_delay: Duration,
    /// One-way delay receiver to sender.
    pub reverse_delay: Duration,
    /// Drops of data packets.
    pub data_loss: LossSchedule,
    /// Drops of feedback packets.
    pub feedback_loss: LossSchedule,
    /// Seed for every random draw in the run.
    pub seed: u64,
}

impl ChannelConfig {
    /// A lossless channel with round-trip time `rtt`, split evenly.
    pub fn lossless(rtt: Duration) -> Self {
        ChannelConfig {
            forward_delay: rtt / 2,
            reverse_delay: rtt - rtt / 2,
            data_loss: LossSchedule::constant(LossPattern::None),
            feedback_loss: LossSchedule::constant(LossPattern::None),
            seed: 0,
        }
    }

    /// floyd2000 Fig. 2: R = 100 ms; periodic loss of 1% until 6 s, 10% until 9 s, then 0.5%
    /// (the last packet of each period is dropped, so the first packet gets through).
    pub fn fig2() -> Self {
        let periodic = |every: u64| LossPattern::Periodic {
            every,
            phase: every - 1,
        };
        ChannelConfig {
            data_loss: LossSchedule::new(vec![
                (Time::ZERO, periodic(100)),
                (Time::from_nanos(6_000_000_000), periodic(10)),
                (Time::from_nanos(9_000_000_000), periodic(200)),
            ]),
            ..Self::lossless(Duration::from_millis(100))
        }
    }
}

/// The state of both ends each time the sender processed a feedback packet.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FeedbackRecord {
    /// When the sender processed the feedback.
    pub time: Time,
    /// The sender's allowed rate X after processing it, bytes/s.
    pub x_bytes_per_s: f64,
    /// X_calc, bytes/s (infinite in slow start).
    pub x_calc_bytes_per_s: f64,
    /// X_recv as reported, bytes/s.
    pub x_recv_bytes_per_s: f64,
    /// p as reported.
    pub p: f64,
    /// The sender's R after the sample, seconds.
    pub rtt_s: f64,
    /// The receiver's most recent closed loss interval when it sent the report, packets.
    pub last_interval_packets: f64,
    /// The receiver's average loss interval when it sent the report, packets.
    pub mean_interval_packets: f64,
    /// The receiver's history discount factor when it sent the report (1 = no discounting).
    pub discount_factor: f64,
    /// The receiver's open interval I_0 when it sent the report, packets.
    pub open_interval_packets: f64,
}

/// Receiver-side values captured when a report is sent, delivered with it.
#[derive(Clone, Copy, Debug)]
struct ReceiverSnapshot {
    last_interval_packets: f64,
    mean_interval_packets: f64,
    discount_factor: f64,
    open_interval_packets: f64,
}

/// A sender and a receiver joined by a scripted channel, in virtual time.
#[derive(Debug)]
pub struct Harness {
    sender: Sender,
    receiver: Receiver,
    channel: ChannelConfig,
    segment_size_bytes: u32,
    now: Time,
    rng: Xoshiro256PlusPlus,
    data_in_flight: VecDeque<(Time, DataHeader)>,
    feedback_in_flight: VecDeque<(Time, FeedbackHeader, ReceiverSnapshot)>,
    feedback_count: u64,
    records: Vec<FeedbackRecord>,
    packets_sent: u64,
    packets_delivered: u64,
}

impl Harness {
    /// Both ends built from `config`, starting at time zero.
    pub fn new(config: TfrcConfig, channel: ChannelConfig) -> Result<Harness, ConfigError> {
        let mut sender = Sender::new(config.clone(), Time::ZERO)?;
        let mut seed_rng = Xoshiro256PlusPlus::seed_from_u64(channel.seed);
        let dither_rng = Xoshiro256PlusPlus::seed_from_u64(seed_rng.next_u64());
        sender.set_dither_rng(Box::new(dither_rng));
        Ok(Harness {
            sender,
            segment_size_bytes: config.segment_size_bytes,
            receiver: Receiver::new(config)?,
            rng: seed_rng,
            channel,
            now: Time::ZERO,
            data_in_flight: VecDeque::new(),
            feedback_in_flight: VecDeque::new(),
            feedback_count: 0,
            records: Vec::new(),
            packets_sent: 0,
            packets_delivered: 0,
        })
    }

    /// Runs every event up to and including `end`.
    pub fn run_until(&mut self, end: Time) {
        while let Some(next) = self.next_event() {
            if next > end {
                break;
            }
            self.now = self.now.max(next);
            self.step();
        }
        self.now = self.now.max(end);
    }

    /// The current virtual time.
    pub fn now(&self) -> Time {
        self.now
    }

    /// One record per feedback the sender processed, in order.
    pub fn records(&self) -> &[FeedbackRecord] {
        &self.records
    }

    /// The sender, for its statistics.
    pub fn sender(&self) -> &Sender {
        &self.sender
    }

    /// The receiver, for its statistics.
    pub fn receiver(&self) -> &Receiver {
        &self.receiver
    }

    /// Data packets the sender transmitted.
    pub fn packets_sent(&self) -> u64 {
        self.packets_sent
    }

    /// Data packets that reached the receiver.
    pub fn packets_delivered(&self) -> u64 {
        self.packets_delivered
    }

    fn next_event(&self) -> Option<Time> {
        [
            self.sender.poll_timeout(),
            self.receiver.poll_timeout(),
            self.data_in_flight.front().map(|&(t, _)| t),
            self.feedback_in_flight.front().map(|&(t, _, _)| t),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    fn step(&mut self) {
        let now = self.now;
        while let Some(&(arrival, header)) = self.data_in_flight.front() {
            if arrival > now {
                break;
            }
            self.data_in_flight.pop_front();
            self.packets_delivered += 1;
            self.receiver
                .handle_data(now, &header, self.segment_size_bytes, Ecn::NotCe);
        }
        while let Some(&(arrival, feedback, snapshot)) = self.feedback_in_flight.front() {
            if arrival > now {
                break;
            }
            self.feedback_in_flight.pop_front();
            // A rejected report is counted in the sender's stats (and recorded here all the same).
            let _ = self.sender.handle_feedback(now, &feedback);
            let stats = self.sender.stats();
            self.records.push(FeedbackRecord {
                time: now,
                x_bytes_per_s: stats.x_bytes_per_s,
                x_calc_bytes_per_s: stats.x_calc_bytes_per_s,
                x_recv_bytes_per_s: feedback.x_recv_bytes_per_s,
                p: feedback.p,
                rtt_s: stats.rtt_s,
                last_interval_packets: snapshot.last_interval_packets,
                mean_interval_packets: snapshot.mean_interval_packets,
                discount_factor: snapshot.discount_factor,
                open_interval_packets: snapshot.open_interval_packets,
            });
        }
        self.receiver.handle_timeout(now);
        while let Some(feedback) = self.receiver.poll_feedback(now) {
            let n = self.feedback_count;
            self.feedback_count += 1;
            if !self.channel.feedback_loss.drops(now, n, &mut self.rng) {
                let stats = self.receiver.stats();
                let snapshot = ReceiverSnapshot {
                    last_interval_packets: stats.last_interval_packets,
                    mean_interval_packets: stats.mean_interval_packets,
                    discount_factor: stats.discount_factor,
                    open_interval_packets: stats.open_interval_packets,
                };
                let arrival = now + self.channel.reverse_delay;
                self.feedback_in_flight
                    .push_back((arrival, feedback, snapshot));
            }
        }
        self.sender.handle_timeout(now);
        while let Some(header) = self.sender.poll_transmit(now, true) {
            self.packets_sent += 1;
            if !self.channel.data_loss.drops(now, header.seq, &mut self.rng) {
                let arrival = now + self.channel.forward_delay;
                self.data_in_flight.push_back((arrival, header));
            }
        }
    }
}
