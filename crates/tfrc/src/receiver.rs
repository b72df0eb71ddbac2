//! The TFRC receiver (RFC 5348 §5, §6): loss detection with reordering tolerance, loss events,
//! the loss event rate p, the receive rate X_recv, and when to send feedback.

use std::collections::VecDeque;
use std::time::Duration;

use crate::config::{ConfigError, FirstIntervalRate, TfrcConfig};
use crate::equation::{loss_rate_for_throughput, RtoPolicy};
use crate::loss_history::LossHistory;
use crate::packet::{DataHeader, Ecn, FeedbackHeader};
use crate::time::{duration_nanos, Time};

/// What the receiver has seen, for experiments and monitors. Rates in bytes/s, times in seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ReceiverStats {
    /// Data packets accepted (duplicates and late arrivals excluded).
    pub packets_received: u64,
    /// Bytes accepted.
    pub bytes_received: u64,
    /// Packets declared lost (holes confirmed by NDUPACK later arrivals).
    pub packets_lost: u64,
    /// Packets that arrived marked ECN-CE.
    pub packets_ce: u64,
    /// Arrivals ignored as duplicates or as too late (their hole was already declared lost).
    pub packets_ignored: u64,
    /// Loss events (RFC 5348 §5.2).
    pub loss_events: u64,
    /// Feedback packets produced.
    pub feedback_sent: u64,
    /// The current loss event rate p.
    pub p: f64,
    /// The most recent X_recv reported, bytes/s.
    pub x_recv_bytes_per_s: f64,
    /// The largest X_recv reported so far, bytes/s.
    pub max_x_recv_bytes_per_s: f64,
    /// The average loss interval I_mean in packets (0 before any loss).
    pub mean_interval_packets: f64,
    /// The most recent closed loss interval I_1 in packets (0 before any loss).
    pub last_interval_packets: f64,
    /// The open interval I_0 in packets.
    pub open_interval_packets: f64,
    /// The general history discount factor DF currently in force (1 without discounting).
    pub discount_factor: f64,
    /// The sender's RTT as last carried in a data packet, seconds.
    pub rtt_s: f64,
    /// Sum over loss events of 1/theta_hat, the loss event rate estimated just after each event
    /// (Rhee & Xu 2005 study E[1/theta_hat]); divide by `inv_theta_hat_samples`.
    pub inv_theta_hat_sum: f64,
    /// Number of samples in `inv_theta_hat_sum` (one per loss event).
    pub inv_theta_hat_samples: u64,
}

/// One sequence number's fate while it is still inside the reordering window.
#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    arrival: Option<Time>,
    ce: bool,
}

/// The receiving end of a TFRC flow.
///
/// Feed it every data packet with [`Receiver::handle_data`]; call [`Receiver::handle_timeout`]
/// at [`Receiver::poll_timeout`]; send whatever [`Receiver::poll_feedback`] returns.
#[derive(Clone, Debug)]
pub struct Receiver {
    config: TfrcConfig,
    history: LossHistory,
    /// Sequence number of `window[0]`: everything below it is decided (received or lost).
    base_seq: u64,
    window: VecDeque<Slot>,
    received_in_window: u64,
    started: bool,
    /// The most recent packet below `base_seq` that arrived, for interpolating loss times.
    last_arrived: Option<(u64, Time)>,
    /// Start (sequence number, time) of the current loss event.
    current_event: Option<(u64, Time)>,
    rtt: Duration,
    /// Timestamp of the newest data packet and when it arrived, echoed in feedback.
    last_data: Option<(Time, Time)>,
    first_arrival: Option<Time>,
    /// (arrival, bytes) of the packets within one RTT of the newest arrival, for X_recv.
    recent: VecDeque<(Time, u32)>,
    recent_bytes: u64,
    bytes_since_feedback: u64,
    data_since_feedback: bool,
    last_feedback: Option<Time>,
    next_feedback: Option<Time>,
    feedback_now: bool,
    stats: ReceiverStats,
}

impl Receiver {
    /// A receiver for `config` (validated here).
    pub fn new(config: TfrcConfig) -> Result<Self, ConfigError> {
        config.validate()?;
        let history = LossHistory::new(
            config.loss_intervals,
            config.discount_threshold,
            config.discount_reference,
            config.short_history,
        );
        Ok(Receiver {
            history,
            base_seq: 0,
            window: VecDeque::new(),
            received_in_window: 0,
            started: false,
            last_arrived: None,
            current_event: None,
            rtt: Duration::ZERO,
            last_data: None,
            first_arrival: None,
            recent: VecDeque::new(),
            recent_bytes: 0,
            bytes_since_feedback: 0,
            data_since_feedback: false,
            last_feedback: None,
            next_feedback: None,
            feedback_now: false,
            stats: ReceiverStats {
                discount_factor: 1.0,
                ..ReceiverStats::default()
            },
            config,
        })
    }

    /// A data packet of `size_bytes` arrived at `now` with the given ECN marking.
    pub fn handle_data(&mut self, now: Time, header: &DataHeader, size_bytes: u32, ecn: Ecn) {
        if !self.started {
            self.started = true;
            self.base_seq = header.seq;
            self.first_arrival = Some(now);
        }
        if header.seq < self.base_seq {
            self.stats.packets_ignored += 1;
            return;
        }
        let offset = header.seq - self.base_seq;
        let Ok(offset) = usize::try_from(offset) else {
            self.stats.packets_ignored += 1;
            return;
        };
        if offset >= self.window.len() {
            self.window.resize(offset + 1, Slot::default());
        }
        let slot = &mut self.window[offset];
        if slot.arrival.is_some() {
            self.stats.packets_ignored += 1;
            return;
        }
        slot.arrival = Some(now);
        slot.ce = ecn == Ecn::Ce;
        self.received_in_window += 1;
        self.stats.packets_received += 1;
        self.stats.bytes_received += u64::from(size_bytes);
        if slot.ce {
            self.stats.packets_ce += 1;
        }

        if !header.rtt.is_zero() {
            self.rtt = header.rtt;
        }
        if self.last_data.is_none_or(|(ts, _)| header.timestamp >= ts) {
            self.last_data = Some((header.timestamp, now));
        }
        self.bytes_since_feedback += u64::from(size_bytes);
        self.data_since_feedback = true;
        self.recent.push_back((now, size_bytes));
        self.recent_bytes += u64::from(size_bytes);
        self.trim_recent(now);

        let p_before = self.stats.p;
        let events_before = self.stats.loss_events;
        self.settle_window();
        self.refresh_stats();
        let p_now = self.stats.p;
        // RFC 5348 §6.1: report at once on a new loss event or a rise of p; §6.2: a packet that
        // arrives while the feedback timer is not running (fewer than one packet per RTT) is
        // reported at once too.
        if self.stats.loss_events > events_before
            || p_now > p_before
            || self.next_feedback.is_none()
        {
            self.feedback_now = true;
        }
    }

    /// The next time [`Receiver::handle_timeout`] must be called, if any.
    pub fn poll_timeout(&self) -> Option<Time> {
        self.next_feedback
    }

    /// Drives the feedback timer (RFC 5348 §6.2): at expiry feedback is due if data arrived since
    /// the last report; otherwise the timer stops until data arrives.
    pub fn handle_timeout(&mut self, now: Time) {
        if let Some(deadline) = self.next_feedback {
            if now >= deadline {
                if self.data_since_feedback {
                    self.feedback_now = true;
                } else {
                    self.next_feedback = None;
                }
            }
        }
    }

    /// A feedback packet to send now, if one is due.
    pub fn poll_feedback(&mut self, now: Time) -> Option<FeedbackHeader> {
        if !self.feedback_now || !self.data_since_feedback {
            return None;
        }
        let (timestamp, arrival) = self.last_data?;
        let x_recv = self.receive_rate(now);
        let p = self.stats.p;
        self.feedback_now = false;
        self.data_since_feedback = false;
        self.bytes_since_feedback = 0;
        self.last_feedback = Some(now);
        self.next_feedback = if self.rtt.is_zero() {
            None
        } else {
            Some(now + self.rtt)
        };
        self.stats.feedback_sent += 1;
        self.stats.x_recv_bytes_per_s = x_recv;
        self.stats.max_x_recv_bytes_per_s = self.stats.max_x_recv_bytes_per_s.max(x_recv);
        Some(FeedbackHeader {
            timestamp_echo: timestamp,
            t_delay: now.saturating_since(arrival),
            x_recv_bytes_per_s: x_recv,
            p,
        })
    }

    /// The receiver's counters and estimates.
    pub fn stats(&self) -> &ReceiverStats {
        &self.stats
    }

    /// The current loss event rate p (0 before any loss).
    pub fn loss_event_rate(&self) -> f64 {
        self.stats.p
    }

    /// I_0: packets from the current loss event's start to the newest decided packet, inclusive.
    fn open_interval(&self) -> f64 {
        match self.current_event {
            Some((start, _)) => (self.base_seq - start) as f64,
            None => 0.0,
        }
    }

    /// Decides the fate of packets at the front of the window: arrived ones leave it, a hole
    /// with at least NDUPACK later arrivals is a loss (RFC 5348 §5.1).
    fn settle_window(&mut self) {
        while let Some(front) = self.window.front().copied() {
            let seq = self.base_seq;
            match front.arrival {
                Some(arrival) => {
                    self.window.pop_front();
                    self.base_seq += 1;
                    self.received_in_window -= 1;
                    self.last_arrived = Some((seq, arrival));
                    if front.ce {
                        self.on_lost_packet(seq, arrival);
                    }
                }
                None if self.received_in_window >= u64::from(self.config.ndupack) => {
                    let time = self.interpolated_loss_time(seq);
                    self.window.pop_front();
                    self.base_seq += 1;
                    self.stats.packets_lost += 1;
                    self.on_lost_packet(seq, time);
                }
                None => break,
            }
        }
    }

    /// The time the lost packet `seq` would have arrived, interpolated between its neighbours
    /// (RFC 5348 §5.2).
    fn interpolated_loss_time(&self, seq: u64) -> Time {
        let after = self
            .window
            .iter()
            .enumerate()
            .find_map(|(i, slot)| slot.arrival.map(|t| (self.base_seq + i as u64, t)));
        match (self.last_arrived, after) {
            (Some((seq_before, t_before)), Some((seq_after, t_after))) => {
                let span = t_after.saturating_since(t_before);
                let fraction = (seq - seq_before) as f64 / (seq_after - seq_before) as f64;
                t_before + Duration::from_nanos((duration_nanos(span) as f64 * fraction) as u64)
            }
            (_, Some((_, t_after))) => t_after,
            (Some((_, t_before)), None) => t_before,
            (None, None) => Time::ZERO,
        }
    }

    /// A packet was lost (or CE-marked) at `time`: it starts a new loss event unless it lies
    /// within one RTT of the current event's start (RFC 5348 §5.2).
    fn on_lost_packet(&mut self, seq: u64, time: Time) {
        if let Some((start_seq, start_time)) = self.current_event {
            if time <= start_time + self.rtt {
                return;
            }
            self.history.close_interval((seq - start_seq) as f64);
        } else {
            let packets = self.first_interval_packets();
            self.history.seed_first(packets);
        }
        self.current_event = Some((seq, time));
        self.stats.loss_events += 1;
        let p = self.history.loss_event_rate(1.0);
        self.stats.inv_theta_hat_sum += p;
        self.stats.inv_theta_hat_samples += 1;
    }

    /// The synthesized first loss interval (RFC 5348 §6.3.1): 1/p for the p at which the
    /// equation allows the reference receive rate.
    fn first_interval_packets(&self) -> f64 {
        let s = self.config.s();
        let rtt_s = self.rtt.as_secs_f64();
        if rtt_s <= 0.0 {
            // No RTT is known yet, so no rate can be turned into a loss rate: one loss per packet.
            return 1.0;
        }
        let floor = 0.5 * s / rtt_s;
        let reference = match self.config.first_interval {
            FirstIntervalRate::MaxReceiveRate => {
                self.stats.max_x_recv_bytes_per_s.max(self.recent_rate())
            }
            FirstIntervalRate::CurrentReceiveRate => self.recent_rate(),
        };
        let target = reference.max(floor);
        let t_rto_s = match self.config.rto_policy {
            RtoPolicy::Fixed(t) => t.as_secs_f64(),
            // The receiver has no rttvar; like ns-2's sink estimate it uses 4R.
            RtoPolicy::FourR | RtoPolicy::TcpLike { .. } => 4.0 * rtt_s,
        };
        let target = target / self.config.rate_scale;
        let p = loss_rate_for_throughput(self.config.equation, s, rtt_s, t_rto_s, target);
        1.0 / p
    }

    /// X_recv (RFC 5348 §6.2): bytes since the last report over the time since it, or, when the
    /// report comes less than an RTT after the last one, the bytes of the last RTT over one RTT.
    fn receive_rate(&mut self, now: Time) -> f64 {
        self.trim_recent(now);
        let since = self.last_feedback.or(self.first_arrival).unwrap_or(now);
        let elapsed = now.saturating_since(since);
        if self.last_feedback.is_some() && !self.rtt.is_zero() && elapsed < self.rtt {
            return self.recent_rate();
        }
        if elapsed.is_zero() {
            return 0.0;
        }
        self.bytes_since_feedback as f64 / elapsed.as_secs_f64()
    }

    /// Bytes received in the last RTT, divided by the RTT (0 without an RTT).
    fn recent_rate(&self) -> f64 {
        if self.rtt.is_zero() {
            0.0
        } else {
            self.recent_bytes as f64 / self.rtt.as_secs_f64()
        }
    }

    fn trim_recent(&mut self, now: Time) {
        let horizon = now - self.rtt;
        while let Some(&(t, bytes)) = self.recent.front() {
            if t > horizon {
                break;
            }
            self.recent.pop_front();
            self.recent_bytes -= u64::from(bytes);
        }
    }

    /// Recomputes p, I_mean and DF for the current open interval (one pass over the history).
    fn refresh_stats(&mut self) {
        let open = self.open_interval();
        let evaluation = self.history.evaluate(open);
        self.stats.p = evaluation.mean.map_or(0.0, |mean| 1.0 / mean);
        self.stats.mean_interval_packets = evaluation.mean.unwrap_or(0.0);
        self.stats.discount_factor = evaluation.discount_factor;
        self.stats.last_interval_packets = self.history.last_closed().unwrap_or(0.0);
        self.stats.open_interval_packets = open;
        self.stats.rtt_s = self.rtt.as_secs_f64();
    }
}
