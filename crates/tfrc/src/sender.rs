//! The TFRC sender (RFC 5348 §4; Floyd 2000 §3): RTT estimation, the allowed rate X from the
//! equation and the receive-rate limits, slow start, the nofeedback timer, oscillation
//! prevention and packet pacing.

use std::collections::VecDeque;
use std::fmt;
use std::time::Duration;

use rand_core::RngCore;

use crate::config::{
    ConfigError, CongestionAvoidance, DataLimitedRule, NofeedbackResponse, RateBeforeFeedback,
    TfrcConfig,
};
use crate::equation::{throughput_bytes_per_s, RtoPolicy};
use crate::feedback::{FeedbackError, FeedbackStats, SendTimes};
use crate::packet::{DataHeader, FeedbackHeader};
use crate::time::{duration_from_secs, Time};

/// The sender's state, for experiments and monitors. Rates in bytes/s, times in seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SenderStats {
    /// The allowed sending rate X.
    pub x_bytes_per_s: f64,
    /// The equation's rate X_calc for the last reported p (infinite while p = 0).
    pub x_calc_bytes_per_s: f64,
    /// The last X_recv the receiver reported.
    pub x_recv_bytes_per_s: f64,
    /// The instantaneous pacing rate X_inst (RFC 5348 §4.5).
    pub x_inst_bytes_per_s: f64,
    /// The last loss event rate the receiver reported.
    pub p: f64,
    /// The smoothed RTT R (0 before the first sample).
    pub rtt_s: f64,
    /// The latest RTT sample.
    pub rtt_sample_s: f64,
    /// t_RTO as used in the equation.
    pub t_rto_s: f64,
    /// Data packets sent.
    pub packets_sent: u64,
    /// Feedback packets processed (accepted); the same as `feedback.accepted`.
    pub feedback_received: u64,
    /// Nofeedback timer expirations.
    pub nofeedback_expiries: u64,
    /// Feedback packets rejected, whatever the cause; the same as `feedback.rejected()`.
    pub feedback_ignored: u64,
    /// Feedback packets accepted, and rejected by cause (docs/tfrc.md, "Feedback validation").
    pub feedback: FeedbackStats,
    /// Whether the sender is still in slow start (no loss reported yet).
    pub slow_start: bool,
}

/// The smallest RTT sample taken (1 µs): a floor against zero-delay paths, where t_now equals
/// t_recvdata + t_delay exactly and the sample would be zero.
const MIN_RTT_SAMPLE_S: f64 = 1e-6;

/// The most entries X_recv_set holds. Honest reports come about once per RTT (a few more at
/// loss events), so two RTTs hold a handful; only a flood of reports with falling X_recv within
/// two RTTs reaches the bound (then the oldest, largest entry goes first, which only lowers the
/// limit).
const MAX_X_RECV_SET: usize = 64;

/// A random source for the gap dither; any `rand_core` generator works (`Sync` too, so a sender
/// can live in a Python object shared across threads).
pub type DitherRng = Box<dyn RngCore + Send + Sync>;

/// The sending end of a TFRC flow.
///
/// Call [`Sender::poll_transmit`] at [`Sender::poll_timeout`] to learn whether a packet may go
/// now, feed every feedback packet to [`Sender::handle_feedback`], and call
/// [`Sender::handle_timeout`] at the timeout so the nofeedback timer can fire.
pub struct Sender {
    config: TfrcConfig,
    s: f64,
    min_rate: f64,
    x: f64,
    x_calc: f64,
    x_recv: f64,
    p: f64,
    rtt_s: Option<f64>,
    rtt_sample_s: f64,
    sqrt_rtt_mean: f64,
    tcp_rto: TcpRtoEstimator,
    t_rto_s: f64,
    got_feedback: bool,
    loss_seen: bool,
    /// Time of the last slow-start doubling, tld (RFC 5348 §4.3).
    last_doubling: Option<Time>,
    /// Time of the last rate change in ns-2 congestion avoidance (`last_change_`).
    last_change: Time,
    /// X_recv_set (RFC 5348 §4.3 step 4); starts as {Infinity}.
    x_recv_set: XRecvSet,
    /// The send times an echo may match (docs/tfrc.md, "Feedback validation").
    send_times: SendTimes,
    next_seq: u64,
    next_send: Time,
    last_send: Option<Time>,
    nofeedback_deadline: Time,
    sent_since_nofeedback_set: bool,
    data_limited_since_feedback: bool,
    /// The application had nothing to send at the last opportunity: until it has, only the
    /// nofeedback timer is due (so an idle driver does not spin on send times in the past).
    app_idle: bool,
    dither: Option<DitherRng>,
    /// What every send opportunity reads, computed from the rate and RTT estimates when they
    /// change (see [`Pacing`]).
    pacing: Pacing,
    stats: SenderStats,
}

/// The pacing quantities a sender reads at every send opportunity, which depend only on its
/// rate and RTT estimates: computed in `refresh_stats`, which ends every call that changes
/// those (the constructor, an accepted report, a nofeedback expiry), instead of at every send
/// opportunity with a square root, divisions and conversions to nanoseconds. The same values
/// bit for bit as computed at the opportunity.
#[derive(Clone, Copy, Debug, Default)]
struct Pacing {
    /// t_delta = min(t_ipi, t_gran, R)/2: how early a packet may go (RFC 5348 §4.6).
    tolerance: Duration,
    /// R as a duration, zero before the first estimate: the RTT each data packet carries and
    /// the most burst credit that may be saved up (RFC 5348 §4.6).
    rtt: Duration,
    /// The undithered gap between packets, s/X_inst, in seconds.
    gap_s: f64,
    /// The same as a duration, at least a nanosecond (the gap when there is no dither).
    gap: Duration,
}

impl fmt::Debug for Sender {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sender")
            .field("stats", &self.stats)
            .field("next_seq", &self.next_seq)
            .field("next_send", &self.next_send)
            .finish_non_exhaustive()
    }
}

impl Sender {
    /// A sender for `config` (validated here) starting at `now`: rate before feedback, the
    /// initial nofeedback timer (RFC 5348 §4.2), first packet due at once.
    pub fn new(config: TfrcConfig, now: Time) -> Result<Self, ConfigError> {
        config.validate()?;
        let s = config.s();
        let x = match config.rate_before_feedback {
            RateBeforeFeedback::OnePacketPerSecond => s,
            RateBeforeFeedback::BytesPerSecond(rate) => rate,
        };
        let mut sender = Sender {
            s,
            min_rate: config.min_rate(),
            x,
            x_calc: f64::INFINITY,
            x_recv: 0.0,
            p: 0.0,
            rtt_s: None,
            rtt_sample_s: 0.0,
            sqrt_rtt_mean: 0.0,
            tcp_rto: TcpRtoEstimator::default(),
            t_rto_s: 0.0,
            got_feedback: false,
            loss_seen: false,
            last_doubling: None,
            last_change: now,
            x_recv_set: XRecvSet::new(now, f64::INFINITY),
            send_times: SendTimes::default(),
            next_seq: 0,
            next_send: now,
            last_send: None,
            nofeedback_deadline: now + config.initial_nofeedback,
            sent_since_nofeedback_set: false,
            data_limited_since_feedback: false,
            app_idle: false,
            dither: None,
            pacing: Pacing::default(),
            stats: SenderStats::default(),
            config,
        };
        sender.refresh_stats();
        Ok(sender)
    }

    /// Hands in the random source for the gap dither (`dither_fraction` > 0); without one the
    /// gaps are not dithered.
    pub fn set_dither_rng(&mut self, rng: DitherRng) {
        self.dither = Some(rng);
    }

    /// The next time something is due: a packet send or the nofeedback timer. After
    /// `poll_transmit(_, false)` only the nofeedback timer counts, until the application has data
    /// again (then call `poll_transmit(now, true)` at once).
    pub fn poll_timeout(&self) -> Option<Time> {
        if self.app_idle {
            return Some(self.nofeedback_deadline);
        }
        let send = self.next_send - self.pacing.tolerance;
        Some(send.min(self.nofeedback_deadline))
    }

    /// The data packet to send now, if the schedule allows one. `app_has_data` says whether the
    /// application has data; a send opportunity without data marks the sender data-limited
    /// (RFC 5348 §8.2) and earns at most one RTT of burst credit (§4.6).
    pub fn poll_transmit(&mut self, now: Time, app_has_data: bool) -> Option<DataHeader> {
        self.app_idle = false;
        if now + self.pacing.tolerance < self.next_send {
            return None;
        }
        if !app_has_data {
            self.app_idle = true;
            self.data_limited_since_feedback = true;
            let credit = self.pacing.rtt;
            if self.next_send + credit < now {
                self.next_send = now - credit;
            }
            return None;
        }
        let header = DataHeader {
            seq: self.next_seq,
            timestamp: now,
            rtt: self.pacing.rtt,
        };
        self.next_seq += 1;
        self.stats.packets_sent += 1;
        self.send_times.on_send(now);
        self.sent_since_nofeedback_set = true;
        let credit = self.pacing.rtt;
        let start = if self.next_send + credit < now {
            now - credit
        } else {
            self.next_send
        };
        self.next_send = start + self.packet_gap();
        self.last_send = Some(now);
        Some(header)
    }

    /// Processes a feedback packet received at `now` (RFC 5348 §4.3).
    ///
    /// A report is rejected, counted in [`SenderStats::feedback`] by cause and otherwise ignored
    /// if p is not in [0, 1], X_recv is not a finite non-negative number, the echoed timestamp
    /// is later than `now`, a replay (claiming no data packet an accepted report has not claimed), or
    /// not one this sender put on a data packet, or t_delay is longer than the time since that
    /// packet was sent
    /// (docs/tfrc.md, "Feedback validation"). The error says which; the caller need not act on
    /// it.
    pub fn handle_feedback(
        &mut self,
        now: Time,
        feedback: &FeedbackHeader,
    ) -> Result<(), FeedbackError> {
        let checked = self.check_feedback(now, feedback);
        self.stats.feedback.record(&checked);
        let sample = match checked {
            Ok(sample) => sample,
            Err(err) => {
                self.stats.feedback_ignored += 1;
                return Err(err);
            }
        };
        self.send_times.on_echo_accepted(feedback.timestamp_echo);
        // R_sample = (t_now - t_recvdata) - t_delay (RFC 5348 §4.3 step 2), at least 1 µs.
        let sample = sample.as_secs_f64().max(MIN_RTT_SAMPLE_S);
        self.update_rtt(sample);
        let rtt = self.rtt_s.unwrap_or(sample);
        let p_rose = feedback.p > self.p;
        let first_feedback = !self.got_feedback;
        self.got_feedback = true;
        self.stats.feedback_received += 1;
        self.p = feedback.p;
        self.x_recv = feedback.x_recv_bytes_per_s;
        self.x_calc = self.calculated_rate(rtt);

        let recv_limit = self.receive_limit(now, rtt, p_rose);
        let initial_rate = self.initial_rate(rtt);
        if self.p > 0.0 {
            let was_slow_start = !self.loss_seen;
            self.loss_seen = true;
            self.x = match self.config.congestion_avoidance {
                CongestionAvoidance::JumpToCalculated => {
                    self.x_calc.min(recv_limit).max(self.min_rate)
                }
                CongestionAvoidance::Ns2AdditiveIncrease => {
                    self.ns2_rate_update(now, rtt, recv_limit, was_slow_start)
                }
            };
        } else if first_feedback {
            // RFC 5348 §4.2: the first feedback sets the initial rate W_init/R.
            self.x = self.x.max(initial_rate);
            self.last_doubling = Some(now);
        } else if self
            .last_doubling
            .is_none_or(|tld| now.saturating_since(tld).as_secs_f64() >= rtt)
        {
            self.x = (2.0 * self.x).min(recv_limit).max(initial_rate);
            self.last_doubling = Some(now);
        }
        self.x = self.x.min(self.config.max_rate_bytes_per_s);
        self.restart_nofeedback_timer(now, rtt);
        self.data_limited_since_feedback = false;
        self.reschedule_after_rate_change();
        self.refresh_stats();
        Ok(())
    }

    /// The RTT sample a report gives, (t_now - t_recvdata) - t_delay (RFC 5348 §4.3 step 2), or
    /// why the report is rejected: its fields out of their domains (§3.2.2), a replay (it claims
    /// no data packet an accepted report has not), an echo that no data packet sent by `now`
    /// carried (§3.2.2, §6.2), or a t_delay that makes the sample negative.
    fn check_feedback(
        &self,
        now: Time,
        feedback: &FeedbackHeader,
    ) -> Result<Duration, FeedbackError> {
        if !(0.0..=1.0).contains(&feedback.p) {
            return Err(FeedbackError::InvalidField { field: "p" });
        }
        let x_recv = feedback.x_recv_bytes_per_s;
        if !(x_recv.is_finite() && x_recv >= 0.0) {
            return Err(FeedbackError::InvalidField { field: "x_recv" });
        }
        let echo = feedback.timestamp_echo;
        if echo > now {
            return Err(FeedbackError::EchoFromFuture);
        }
        if self.send_times.is_replay(echo) {
            return Err(FeedbackError::Replay);
        }
        if !self.send_times.contains(echo) {
            return Err(FeedbackError::UnknownEcho);
        }
        now.saturating_since(echo)
            .checked_sub(feedback.t_delay)
            .ok_or(FeedbackError::DelayExceedsElapsed)
    }

    /// The feedback round a data packet sent now belongs to (ns-2's `round_id`, which
    /// `TfrcAgent::recv` advances on every report and `reduce_rate_on_no_feedback` on every
    /// expiry): accepted reports plus nofeedback expiries so far. Wraps after 2^32 rounds. A
    /// simulator hands it with the packet to [`crate::Receiver::handle_data_in_round`] for the
    /// loss-event round check; the wire format does not carry it.
    pub fn round(&self) -> u32 {
        self.stats
            .feedback_received
            .wrapping_add(self.stats.nofeedback_expiries) as u32
    }

    /// Fires the nofeedback timer if it is due at `now` (RFC 5348 §4.4).
    pub fn handle_timeout(&mut self, now: Time) {
        if now < self.nofeedback_deadline {
            return;
        }
        self.stats.nofeedback_expiries += 1;
        let idle = !self.sent_since_nofeedback_set;
        match self.config.nofeedback_response {
            NofeedbackResponse::Rfc5348 => self.rfc5348_nofeedback(now, idle),
            NofeedbackResponse::HalveRate => self.ns2_nofeedback(idle),
        }
        let rtt = self.rtt_s.unwrap_or(0.0);
        self.restart_nofeedback_timer(now, rtt);
        self.refresh_stats();
    }

    /// The sender's current estimates and counters.
    pub fn stats(&self) -> &SenderStats {
        &self.stats
    }

    /// The equation's rate for the current p and R, scaled by `rate_scale`.
    fn calculated_rate(&self, rtt: f64) -> f64 {
        let x = throughput_bytes_per_s(self.config.equation, self.s, rtt, self.t_rto_s, self.p);
        x * self.config.rate_scale
    }

    /// The rate at the first feedback and the floor of slow start, W_init/R (RFC 5348 §4.2).
    fn initial_rate(&self, rtt: f64) -> f64 {
        self.config.initial_window_bytes() / rtt
    }

    /// R and R_sqmean EWMAs (RFC 5348 §4.3 steps 2-3, §4.5) and t_RTO.
    fn update_rtt(&mut self, sample: f64) {
        let q = self.config.rtt_ewma_q;
        let q2 = self.config.sqrt_rtt_ewma_q;
        match self.rtt_s {
            None => {
                self.rtt_s = Some(sample);
                self.sqrt_rtt_mean = sample.sqrt();
            }
            Some(r) => {
                self.rtt_s = Some(q * r + (1.0 - q) * sample);
                self.sqrt_rtt_mean = q2 * self.sqrt_rtt_mean + (1.0 - q2) * sample.sqrt();
            }
        }
        self.rtt_sample_s = sample;
        let rtt = self.rtt_s.unwrap_or(sample);
        self.t_rto_s = match self.config.rto_policy {
            RtoPolicy::FourR => 4.0 * rtt,
            RtoPolicy::Fixed(t) => t.as_secs_f64(),
            RtoPolicy::TcpLike { granularity, min } => {
                self.tcp_rto
                    .update(sample, granularity.as_secs_f64(), min.as_secs_f64())
            }
        };
    }

    /// recv_limit from X_recv_set (RFC 5348 §4.3 step 4, with the data-limited rules of §8.2
    /// under [`DataLimitedRule::KeepLargest`]).
    fn receive_limit(&mut self, now: Time, rtt: f64, p_rose: bool) -> f64 {
        let keep_largest = self.config.data_limited == DataLimitedRule::KeepLargest;
        if self.data_limited_since_feedback && keep_largest {
            if p_rose {
                self.x_recv_set.halve();
                self.maximize_x_recv_set(now, 0.85 * self.x_recv);
                self.x_recv_set.max()
            } else {
                self.maximize_x_recv_set(now, self.x_recv);
                2.0 * self.x_recv_set.max()
            }
        } else {
            self.x_recv_set.push(now, self.x_recv);
            let horizon = now - duration_from_secs(2.0 * rtt);
            self.x_recv_set.expire(horizon);
            2.0 * self.x_recv_set.max()
        }
    }

    /// Maximize_X_recv_set(): keep only the largest value (Infinity dropped), stamped now.
    fn maximize_x_recv_set(&mut self, now: Time, x_recv: f64) {
        let largest = self
            .x_recv_set
            .finite_max()
            .map_or(x_recv, |x| x.max(x_recv));
        self.x_recv_set = XRecvSet::new(now, largest);
    }

    /// ns-2 `Agent/TFRC` congestion avoidance: jump to X_calc on the first loss; later rise
    /// toward X_calc by (s/R)*min(elapsed/R, 2) per report, capped by max(recv_limit, s/R);
    /// fall to X_calc at once (capped the same way). `last_change_` is left alone when slow
    /// start ends, as in ns-2. ns-2's cap is 2 X_recv of the latest report alone; with our
    /// timer-driven reports (ns-2 reports on an arrival) one RTT's count is too coarse at a few
    /// packets per RTT, so the cap uses X_recv_set's two RTTs (docs/tfrc.md).
    fn ns2_rate_update(&mut self, now: Time, rtt: f64, recv_limit: f64, first_loss: bool) -> f64 {
        if first_loss {
            return self.x_calc.max(self.min_rate);
        }
        let one_packet_per_rtt = self.s / rtt;
        let ceiling = recv_limit.max(one_packet_per_rtt);
        let x = if self.x_calc > self.x {
            let elapsed = now.saturating_since(self.last_change).as_secs_f64();
            let mult = (elapsed / rtt).min(2.0);
            (self.x + one_packet_per_rtt * mult)
                .min(ceiling)
                .min(self.x_calc)
        } else {
            self.x_calc.min(ceiling)
        };
        self.last_change = now;
        x.max(self.min_rate)
    }

    /// RFC 5348 §4.4 step 1. X_recv there is read as max(X_recv_set), the limit the last
    /// expiry installed, so that consecutive expiries keep halving.
    fn rfc5348_nofeedback(&mut self, now: Time, idle: bool) {
        let recover_rate = self.rtt_s.map_or(self.s, |rtt| self.initial_rate(rtt));
        let x_recv = self.x_recv_set.finite_max().unwrap_or(0.0).max(0.0);
        if self.rtt_s.is_none() && !self.got_feedback && !idle {
            self.x = (self.x / 2.0).max(self.min_rate);
        } else if idle
            && ((self.p > 0.0 && x_recv < recover_rate)
                || (self.p == 0.0 && self.x < 2.0 * recover_rate))
        {
            // An idle sender keeps at least the initial rate.
        } else if self.p == 0.0 {
            self.x = (self.x / 2.0).max(self.min_rate);
        } else if self.x_calc > 2.0 * x_recv {
            self.update_limits(now, x_recv);
        } else {
            self.update_limits(now, self.x_calc / 2.0);
        }
    }

    /// Update_Limits(timer_limit) (RFC 5348 §4.4): X_recv_set = {timer_limit/2}, then X as in
    /// §4.3 step 4, which gives X = min(X_calc, timer_limit).
    fn update_limits(&mut self, now: Time, timer_limit: f64) {
        let timer_limit = timer_limit.max(self.min_rate);
        self.x_recv_set = XRecvSet::new(now, timer_limit / 2.0);
        self.x = self.x_calc.min(timer_limit).max(self.min_rate);
    }

    /// ns-2 `reduce_rate_on_no_feedback`: halve X; an idle sender is only brought down to the
    /// initial rate.
    fn ns2_nofeedback(&mut self, idle: bool) {
        match (idle, self.rtt_s) {
            (true, Some(rtt)) => {
                let initial = self.initial_rate(rtt);
                if self.x > 2.0 * initial {
                    self.x /= 2.0;
                } else if self.x > initial {
                    self.x = initial;
                }
            }
            _ => self.x = (self.x / 2.0).max(self.min_rate),
        }
    }

    /// Nofeedback interval max(k*R, 2s/X) (RFC 5348 §4.3 step 6, k = 4; ns-2 k = 2).
    fn restart_nofeedback_timer(&mut self, now: Time, rtt: f64) {
        let by_rtt = f64::from(self.config.nofeedback_rtts) * rtt;
        let by_rate = 2.0 * self.s / self.x;
        self.nofeedback_deadline = now + duration_from_secs(by_rtt.max(by_rate));
        self.sent_since_nofeedback_set = false;
    }

    /// X_inst = X * R_sqmean / sqrt(R_sample) (RFC 5348 §4.5), at least s/t_mbi.
    fn instantaneous_rate(&self) -> f64 {
        if !self.config.oscillation_prevention || self.rtt_sample_s <= 0.0 {
            return self.x;
        }
        (self.x * self.sqrt_rtt_mean / self.rtt_sample_s.sqrt()).max(self.min_rate)
    }

    /// The gap to the next packet, s/X_inst, dithered if configured.
    fn packet_gap(&mut self) -> Duration {
        let dither = self.config.dither_fraction;
        if dither > 0.0 {
            if let Some(rng) = self.dither.as_mut() {
                let mut gap = self.pacing.gap_s;
                let u = (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
                gap *= 1.0 + dither * (2.0 * u - 1.0);
                return duration_from_secs(gap).max(Duration::from_nanos(1));
            }
        }
        self.pacing.gap
    }

    /// After a rate change the next packet may come sooner than scheduled at the old rate.
    fn reschedule_after_rate_change(&mut self) {
        if let Some(last) = self.last_send {
            let at_new_rate = last + duration_from_secs(self.s / self.instantaneous_rate());
            self.next_send = self.next_send.min(at_new_rate);
        }
    }

    /// t_delta = min(t_ipi, t_gran, R)/2: how early a packet may go (RFC 5348 §4.6).
    fn send_tolerance(&self) -> Duration {
        let t_gran = self.config.scheduling_granularity;
        if t_gran.is_zero() {
            return Duration::ZERO;
        }
        let t_ipi = self.s / self.instantaneous_rate();
        let rtt = self.rtt_s.unwrap_or(f64::INFINITY);
        duration_from_secs(t_ipi.min(rtt).min(t_gran.as_secs_f64()) / 2.0)
    }

    /// Copies the estimates into the stats and recomputes [`Pacing`] from them.
    fn refresh_stats(&mut self) {
        let x_inst = self.instantaneous_rate();
        let gap_s = self.s / x_inst;
        self.pacing = Pacing {
            tolerance: self.send_tolerance(),
            rtt: duration_from_secs(self.rtt_s.unwrap_or(0.0)),
            gap_s,
            // At least a nanosecond, so that the schedule always moves forward.
            gap: duration_from_secs(gap_s).max(Duration::from_nanos(1)),
        };
        self.stats.x_bytes_per_s = self.x;
        self.stats.x_calc_bytes_per_s = self.x_calc;
        self.stats.x_recv_bytes_per_s = self.x_recv;
        self.stats.x_inst_bytes_per_s = x_inst;
        self.stats.p = self.p;
        self.stats.rtt_s = self.rtt_s.unwrap_or(0.0);
        self.stats.rtt_sample_s = self.rtt_sample_s;
        self.stats.t_rto_s = self.t_rto_s;
        self.stats.slow_start = !self.loss_seen;
    }
}

/// X_recv_set (RFC 5348 §4.3 step 4, §4.4), kept as a monotone queue: entries oldest first
/// with strictly falling rates. An entry with a newer one at least as large can never be the
/// largest again (the newer one ages out later; halving keeps the order; a reset clears both), so
/// it is dropped when the newer one arrives. The set's largest value, all that §4.3 step 4 and
/// §4.4 read from it, is therefore exactly that of the full set, at O(1) amortized cost per
/// report instead of a pass over every report of the last two RTTs (issue 13 item 8). At most
/// [`MAX_X_RECV_SET`] entries are kept.
#[derive(Clone, Debug)]
struct XRecvSet {
    entries: VecDeque<(Time, f64)>,
}

impl XRecvSet {
    /// The set {rate}, stamped `now`.
    fn new(now: Time, rate: f64) -> Self {
        XRecvSet {
            entries: VecDeque::from([(now, rate)]),
        }
    }

    /// Adds X_recv, stamped `now` (reports arrive in time order).
    fn push(&mut self, now: Time, rate: f64) {
        while self.entries.back().is_some_and(|&(_, x)| x <= rate) {
            self.entries.pop_back();
        }
        if self.entries.len() >= MAX_X_RECV_SET {
            self.entries.pop_front();
        }
        self.entries.push_back((now, rate));
    }

    /// Deletes the entries stamped before `horizon` ("older than two round-trip times").
    fn expire(&mut self, horizon: Time) {
        while self.entries.front().is_some_and(|&(t, _)| t < horizon) {
            self.entries.pop_front();
        }
    }

    /// Halves every entry (a new loss event while data-limited, §4.3 step 4).
    fn halve(&mut self) {
        for entry in &mut self.entries {
            entry.1 /= 2.0;
        }
    }

    /// max(X_recv_set), at least 0 (0 for an empty set).
    fn max(&self) -> f64 {
        self.entries.front().map_or(0.0, |&(_, x)| x.max(0.0))
    }

    /// The largest finite entry, if any (only the initial entry is infinite).
    fn finite_max(&self) -> Option<f64> {
        self.entries.iter().map(|&(_, x)| x).find(|x| x.is_finite())
    }

    /// Entries held.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.entries.len()
    }
}

/// The TCP-style timeout estimator behind [`RtoPolicy::TcpLike`]: ns-2's `rtt_update`, in its
/// own fixed-point integer arithmetic (samples rounded to whole ticks; srtt kept scaled by 8 and
/// rttvar by 4, gains 1/8 and 1/4; t_RTO = srtt + 4 rttvar in whole ticks, at least `min`). The
/// integer truncation matters: rttvar stops decaying at a few quarter-ticks, which keeps t_RTO
/// above R on a steady path, as in the papers' simulations.
#[derive(Clone, Copy, Debug, Default)]
struct TcpRtoEstimator {
    /// srtt in ticks, scaled by 8 (ns-2 `t_srtt_`); 0 before the first sample.
    srtt_x8: i64,
    /// rttvar in ticks, scaled by 4 (ns-2 `t_rttvar_`).
    rttvar_x4: i64,
}

impl TcpRtoEstimator {
    fn update(&mut self, sample_s: f64, tick_s: f64, min_s: f64) -> f64 {
        let ticks = ((sample_s / tick_s + 0.5) as i64).max(1);
        if self.srtt_x8 == 0 {
            self.srtt_x8 = ticks << 3;
            self.rttvar_x4 = ticks << 1;
        } else {
            let delta = ticks - (self.srtt_x8 >> 3);
            self.srtt_x8 = (self.srtt_x8 + delta).max(1);
            let deviation = delta.abs() - (self.rttvar_x4 >> 2);
            self.rttvar_x4 = (self.rttvar_x4 + deviation).max(1);
        }
        let rto_ticks = ((self.rttvar_x4 << 3) + self.srtt_x8) >> 3;
        (rto_ticks as f64 * tick_s).max(min_s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use rand_core::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    const MS: u64 = 1_000_000;

    fn at(ms: u64) -> Time {
        Time::from_nanos(ms * MS)
    }

    fn feedback(echo_ms: u64, p: f64, x_recv: f64) -> FeedbackHeader {
        FeedbackHeader {
            timestamp_echo: at(echo_ms),
            t_delay: Duration::ZERO,
            x_recv_bytes_per_s: x_recv,
            p,
        }
    }

    /// Hands `report` to the sender as if its echo were the timestamp of a data packet sent
    /// (these tests script the echoes; the check itself is tested on its own below).
    fn deliver(sender: &mut Sender, now: Time, report: FeedbackHeader) {
        sender.send_times.on_send(report.timestamp_echo);
        let _ = sender.handle_feedback(now, &report);
    }

    /// A sender that has had its first feedback at 100 ms (R = 100 ms, X = W_init/R = 40 kB/s).
    fn started(config: TfrcConfig) -> Sender {
        let mut sender = Sender::new(config, Time::ZERO).unwrap();
        assert!(sender.poll_transmit(Time::ZERO, true).is_some());
        sender
            .handle_feedback(at(100), &feedback(0, 0.0, 0.0))
            .unwrap();
        sender
    }

    /// Sends greedily at every opportunity until `until`, returning the send times.
    fn send_until(sender: &mut Sender, until: Time) -> Vec<Time> {
        let mut times = Vec::new();
        while let Some(t) = sender.poll_timeout() {
            if t > until {
                break;
            }
            sender.handle_timeout(t);
            while sender.poll_transmit(t, true).is_some() {
                times.push(t);
            }
        }
        times
    }

    #[test]
    fn starts_at_one_packet_per_second() {
        let mut sender = Sender::new(TfrcConfig::default(), Time::ZERO).unwrap();
        assert_eq!(sender.stats().x_bytes_per_s, 1000.0);
        let first = sender.poll_transmit(Time::ZERO, true).unwrap();
        assert_eq!((first.seq, first.rtt), (0, Duration::ZERO));
        assert!(sender.poll_transmit(Time::ZERO, true).is_none());
        // Next packet after s/X = 1 s; the nofeedback timer (2 s) is later.
        assert_eq!(sender.poll_timeout(), Some(at(1000)));
    }

    #[test]
    fn first_feedback_sets_initial_rate_and_rtt() {
        let sender = started(TfrcConfig::default());
        let stats = sender.stats();
        assert_eq!(stats.rtt_s, 0.1);
        assert!((stats.x_bytes_per_s - 40_000.0).abs() < 1e-9);
        assert!(stats.slow_start);
    }

    #[test]
    fn rtt_is_an_ewma_with_q_point_nine() {
        let mut sender = started(TfrcConfig::default());
        deliver(&mut sender, at(400), feedback(200, 0.0, 40_000.0));
        assert!((sender.stats().rtt_s - (0.9 * 0.1 + 0.1 * 0.2)).abs() < 1e-12);
        assert!((sender.stats().rtt_sample_s - 0.2).abs() < 1e-12);
    }

    #[test]
    fn loss_applies_the_equation_within_the_receive_limit() {
        let mut sender = started(TfrcConfig::default());
        deliver(&mut sender, at(200), feedback(100, 0.01, 1e9));
        let x_calc = throughput_bytes_per_s(Default::default(), 1000.0, 0.1, 0.4, 0.01);
        assert!((sender.stats().x_bytes_per_s - x_calc).abs() < 1e-6);
        assert!(!sender.stats().slow_start);
        // A low receive rate caps X at 2 X_recv (the larger entries age out after 2R).
        deliver(&mut sender, at(500), feedback(400, 0.01, 20_000.0));
        assert!((sender.stats().x_bytes_per_s - 40_000.0).abs() < 1e-6);
    }

    #[test]
    fn rate_never_falls_below_one_packet_per_t_mbi() {
        let mut sender = started(TfrcConfig::default());
        // Once the initial Infinity has aged out, a receive rate of 1 B/s limits X to 2 B/s,
        // which the s/t_mbi floor lifts to 1000/64 B/s.
        deliver(&mut sender, at(300), feedback(200, 0.0, 1.0));
        deliver(&mut sender, at(400), feedback(300, 1.0, 1.0));
        assert_eq!(sender.stats().x_bytes_per_s, 1000.0 / 64.0);
    }

    #[test]
    fn rate_scale_multiplies_the_equation() {
        let config = TfrcConfig {
            rate_scale: 2.0,
            ..TfrcConfig::default()
        };
        let mut sender = started(config);
        deliver(&mut sender, at(200), feedback(100, 0.01, 1e9));
        let x_calc = throughput_bytes_per_s(Default::default(), 1000.0, 0.1, 0.4, 0.01);
        assert!((sender.stats().x_bytes_per_s - 2.0 * x_calc).abs() < 1e-6);
    }

    #[test]
    fn data_limited_loss_halves_the_receive_set() {
        let mut sender = started(TfrcConfig::default());
        // Two RTTs of full-rate feedback reporting 30 kB/s, so X_recv_set = {30k}.
        deliver(&mut sender, at(300), feedback(200, 0.0, 30_000.0));
        deliver(&mut sender, at(400), feedback(300, 0.0, 30_000.0));
        // A send opportunity with no data marks the interval data-limited ...
        let due = sender.poll_timeout().unwrap();
        assert!(sender.poll_transmit(due, false).is_none());
        // ... so a loss halves the set (15k) and uses 0.85 X_recv (8.5k): limit 15k, not 2x.
        deliver(&mut sender, at(500), feedback(400, 0.001, 10_000.0));
        assert!((sender.stats().x_bytes_per_s - 15_000.0).abs() < 1e-6);
    }

    #[test]
    fn data_limited_without_loss_keeps_the_largest_rate() {
        let mut sender = started(TfrcConfig::default());
        deliver(&mut sender, at(300), feedback(200, 0.0, 30_000.0));
        deliver(&mut sender, at(400), feedback(300, 0.0, 30_000.0));
        deliver(&mut sender, at(500), feedback(400, 0.001, 30_000.0));
        let due = sender.poll_timeout().unwrap();
        assert!(sender.poll_transmit(due, false).is_none());
        // An idle interval reports little, but the limit stays 2 x the set's maximum (30k).
        deliver(&mut sender, at(600), feedback(500, 0.001, 1_000.0));
        let x_calc = throughput_bytes_per_s(Default::default(), 1000.0, 0.1, 0.4, 0.001);
        let expected = x_calc.min(60_000.0);
        assert!((sender.stats().x_bytes_per_s - expected).abs() < 1e-6);
    }

    #[test]
    fn recent_only_forgets_a_data_limited_peak_after_two_rtts() {
        // One inflated report (a batch read after a stall), then loss and a data-limited
        // sender whose receiver gets 10 kB/s for half a second.
        let x_after = |rule: DataLimitedRule| {
            let mut sender = started(TfrcConfig {
                data_limited: rule,
                ..TfrcConfig::default()
            });
            deliver(&mut sender, at(300), feedback(200, 0.0, 300_000.0));
            deliver(&mut sender, at(400), feedback(300, 0.001, 10_000.0));
            for k in 5..10 {
                let due = sender.poll_timeout().unwrap();
                assert!(sender.poll_transmit(due, false).is_none());
                deliver(
                    &mut sender,
                    at(k * 100),
                    feedback(k * 100 - 100, 0.001, 10_000.0),
                );
            }
            sender.stats().x_bytes_per_s
        };
        // The 300 kB/s sample has expired: X is twice what the receiver gets.
        assert!((x_after(DataLimitedRule::RecentOnly) - 20_000.0).abs() < 1e-6);
        // RFC 5348's rule keeps the peak.
        assert!(x_after(DataLimitedRule::KeepLargest) > 100_000.0);
    }

    #[test]
    fn pacing_spaces_packets_by_s_over_x() {
        let config = TfrcConfig {
            oscillation_prevention: false,
            ..TfrcConfig::default()
        };
        let mut sender = started(config);
        let times = send_until(&mut sender, at(300));
        let gaps: Vec<u64> = times
            .windows(2)
            .map(|w| w[1].as_nanos() - w[0].as_nanos())
            .collect();
        assert!(gaps.len() > 5);
        assert!(gaps.iter().all(|&g| g == 25 * MS), "{gaps:?}");
    }

    #[test]
    fn idle_credit_is_at_most_one_rtt() {
        let config = TfrcConfig {
            oscillation_prevention: false,
            ..TfrcConfig::default()
        };
        let mut sender = started(config);
        // The application has nothing for a second, then everything at once.
        assert!(sender.poll_transmit(at(100), false).is_none());
        let mut burst = 0;
        while sender.poll_transmit(at(1100), true).is_some() {
            burst += 1;
        }
        // One RTT of credit at 25 ms per packet: the packet due now plus 4 saved up.
        assert_eq!(burst, 5);
    }

    #[test]
    fn packets_may_leave_half_a_granularity_early() {
        let config = TfrcConfig {
            oscillation_prevention: false,
            scheduling_granularity: Duration::from_millis(10),
            ..TfrcConfig::default()
        };
        let mut sender = started(config);
        // Use up the credit saved while waiting for the first feedback.
        while sender.poll_transmit(at(100), true).is_some() {}
        // Next due at 125 ms; t_delta = min(25, 10, 100)/2 = 5 ms.
        assert!(sender.poll_transmit(at(119), true).is_none());
        assert!(sender.poll_transmit(at(120), true).is_some());
    }

    #[test]
    fn dither_stays_within_its_fraction() {
        let config = TfrcConfig {
            oscillation_prevention: false,
            dither_fraction: 0.2,
            ..TfrcConfig::default()
        };
        let mut sender = started(config);
        sender.set_dither_rng(Box::new(Xoshiro256PlusPlus::seed_from_u64(1)));
        // Stay before the nofeedback timer (500 ms), which would halve the rate.
        let times = send_until(&mut sender, at(490));
        let gaps: Vec<f64> = times
            .windows(2)
            .map(|w| (w[1].as_nanos() - w[0].as_nanos()) as f64 / (25 * MS) as f64)
            .collect();
        assert!(gaps.iter().all(|g| (0.8..=1.2).contains(g)), "{gaps:?}");
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        assert!((mean - 1.0).abs() < 0.1, "{mean}");
        assert!(gaps.iter().any(|&g| (g - 1.0).abs() > 0.05));
    }

    #[test]
    fn oscillation_prevention_slows_spacing_when_rtt_rises() {
        let mut sender = started(TfrcConfig::default());
        deliver(&mut sender, at(1000), feedback(600, 0.01, 1e9));
        let stats = sender.stats();
        // R_sqmean = 0.9 sqrt(0.1) + 0.1 sqrt(0.4); X_inst = X R_sqmean / sqrt(0.4).
        let sqmean = 0.9 * 0.1_f64.sqrt() + 0.1 * 0.4_f64.sqrt();
        let expected = stats.x_bytes_per_s * sqmean / 0.4_f64.sqrt();
        assert!((stats.x_inst_bytes_per_s - expected).abs() < 1e-6);
        assert!(stats.x_inst_bytes_per_s < stats.x_bytes_per_s);
    }

    #[test]
    fn nofeedback_in_slow_start_halves_and_rearms() {
        let mut sender = started(TfrcConfig::default());
        send_until(&mut sender, at(490));
        // Armed at 100 ms for max(4R, 2s/X) = 400 ms.
        sender.handle_timeout(at(499));
        assert_eq!(sender.stats().nofeedback_expiries, 0);
        sender.handle_timeout(at(500));
        assert_eq!(sender.stats().nofeedback_expiries, 1);
        assert!((sender.stats().x_bytes_per_s - 20_000.0).abs() < 1e-9);
    }

    #[test]
    fn the_round_counts_reports_and_expiries() {
        let mut sender = Sender::new(TfrcConfig::floyd2000(), Time::ZERO).unwrap();
        assert!(sender.poll_transmit(Time::ZERO, true).is_some());
        assert_eq!(sender.round(), 0);
        sender
            .handle_feedback(at(100), &feedback(0, 0.0, 0.0))
            .unwrap();
        let sent = |sender: &mut Sender, t: Time| {
            sender.handle_timeout(t);
            std::iter::from_fn(|| sender.poll_transmit(t, true)).last()
        };
        let next = sender.poll_timeout().unwrap();
        assert!(sent(&mut sender, next).is_some());
        assert_eq!(sender.round(), 1);
        // A rejected report (an echo no packet carried) is no round.
        assert!(sender
            .handle_feedback(at(150), &feedback(77, 0.0, 0.0))
            .is_err());
        // Silence until the nofeedback timer fires: the next packet carries round 2.
        while sender.stats().nofeedback_expiries == 0 {
            let t = sender.poll_timeout().unwrap();
            sender.handle_timeout(t);
            while sender.poll_transmit(t, true).is_some() {}
        }
        let after = sender.poll_timeout().unwrap();
        assert!(sent(&mut sender, after).is_some());
        assert_eq!(sender.round(), 2);
    }

    #[test]
    fn invalid_feedback_is_ignored_and_counted() {
        let mut sender = started(TfrcConfig::default());
        let before = *sender.stats();
        let bad_p = FeedbackError::InvalidField { field: "p" };
        let bad_x_recv = FeedbackError::InvalidField { field: "x_recv" };
        for (p, x_recv, err) in [
            (f64::NAN, 1.0, bad_p),
            (1.5, 1.0, bad_p),
            (0.1, f64::INFINITY, bad_x_recv),
            (0.1, -1.0, bad_x_recv),
        ] {
            let report = feedback(0, p, x_recv);
            assert_eq!(sender.handle_feedback(at(200), &report), Err(err));
        }
        assert_eq!(sender.stats().feedback_ignored, 4);
        assert_eq!(sender.stats().feedback.bad_field, 4);
        assert_eq!(sender.stats().feedback.accepted, 1);
        assert_eq!(sender.stats().x_bytes_per_s, before.x_bytes_per_s);
        assert_eq!(sender.stats().p, before.p);
    }

    #[test]
    fn implausible_echoes_are_rejected_and_counted_by_cause() {
        let mut sender = Sender::new(TfrcConfig::default(), Time::ZERO).unwrap();
        assert!(sender.poll_transmit(Time::ZERO, true).is_some());
        let future = feedback(200, 0.0, 1e9);
        let unknown = feedback(50, 0.0, 1e9);
        let held_too_long = FeedbackHeader {
            t_delay: Duration::from_millis(101),
            ..feedback(0, 0.0, 1e9)
        };
        let cases = [
            (future, FeedbackError::EchoFromFuture),
            (unknown, FeedbackError::UnknownEcho),
            (held_too_long, FeedbackError::DelayExceedsElapsed),
        ];
        for (report, err) in cases {
            assert_eq!(sender.handle_feedback(at(100), &report), Err(err));
        }
        let stats = *sender.stats();
        assert_eq!(
            stats.feedback,
            FeedbackStats {
                echo_from_future: 1,
                unknown_echo: 1,
                delay_exceeds_elapsed: 1,
                ..FeedbackStats::default()
            }
        );
        assert_eq!((stats.feedback_ignored, stats.feedback_received), (3, 0));
        // Nothing moved: no RTT sample, still one packet per second.
        assert_eq!((stats.rtt_s, stats.x_bytes_per_s), (0.0, 1000.0));
        // A delay of exactly the elapsed time is possible (a zero-delay path): accepted.
        let exact = FeedbackHeader {
            t_delay: Duration::from_millis(100),
            ..feedback(0, 0.0, 0.0)
        };
        assert_eq!(sender.handle_feedback(at(100), &exact), Ok(()));
        assert_eq!(sender.stats().feedback.accepted, 1);
    }

    #[test]
    fn echoes_no_newer_than_the_newest_accepted_one_are_replays() {
        let mut sender = started(TfrcConfig::default());
        // Packets at 100, 125 and 150 ms; the report echoing 125 ms makes 100 ms stale.
        for ms in [100, 125, 150] {
            assert!(sender.poll_transmit(at(ms), true).is_some());
        }
        assert_eq!(
            sender.handle_feedback(at(225), &feedback(125, 0.0, 40_000.0)),
            Ok(())
        );
        assert_eq!(
            sender.handle_feedback(at(230), &feedback(100, 0.0, 40_000.0)),
            Err(FeedbackError::Replay)
        );
        // The newest accepted echo again, exact or with better news: a replay, nothing moves.
        let before = *sender.stats();
        let deadline = sender.nofeedback_deadline;
        let better_news = FeedbackHeader {
            t_delay: Duration::from_millis(14),
            ..feedback(125, 0.0, 1e9)
        };
        for report in [feedback(125, 0.0, 40_000.0), better_news] {
            assert_eq!(
                sender.handle_feedback(at(240), &report),
                Err(FeedbackError::Replay)
            );
        }
        let after = *sender.stats();
        assert_eq!(after.feedback.replayed, 3);
        assert_eq!(
            (after.x_bytes_per_s, after.rtt_s, after.feedback_received),
            (before.x_bytes_per_s, before.rtt_s, before.feedback_received)
        );
        // Nor does a replay put off the nofeedback timer.
        assert_eq!(sender.nofeedback_deadline, deadline);
        // A newer packet's echo is accepted.
        assert_eq!(
            sender.handle_feedback(at(250), &feedback(150, 0.0, 40_000.0)),
            Ok(())
        );
        assert_eq!(sender.send_times.len(), 0);
    }

    /// Issue 13 item 8: reports flooding in within two RTTs kept one X_recv_set entry each, and
    /// each report scanned them all (160k reports took 22.6 s). The set is now bounded.
    #[test]
    fn feedback_flood_keeps_the_receive_set_bounded() {
        let mut sender = started(TfrcConfig::default());
        let reports = 10_000u64;
        let mut largest_set = 0;
        for i in 0..reports {
            // All within 2 RTTs of the first report, each echoing its own packet (sent i+1 ns
            // after 0) with a t_delay that keeps the sample at 100 ms, X_recv falling with
            // every report.
            let echo = Time::from_nanos(1 + i);
            let now = at(100) + Duration::from_micros(1 + 19 * i);
            let report = FeedbackHeader {
                timestamp_echo: echo,
                t_delay: now.saturating_since(echo) - Duration::from_millis(100),
                x_recv_bytes_per_s: 1e9 - i as f64,
                p: 0.01,
            };
            deliver(&mut sender, now, report);
            largest_set = largest_set.max(sender.x_recv_set.len());
        }
        assert_eq!(sender.stats().feedback_received, reports + 1);
        assert!(largest_set <= 64, "X_recv_set grew to {largest_set}");
    }

    /// The bounded set gives the same limit as keeping every report: max over two RTTs.
    #[test]
    fn receive_set_keeps_the_largest_rate_of_two_rtts() {
        let mut set = XRecvSet::new(at(0), f64::INFINITY);
        let rates = [5.0, 9.0, 7.0, 3.0, 8.0, 2.0, 2.0, 6.0, 1.0, 4.0];
        for (i, &rate) in rates.iter().enumerate() {
            let now = at(100 * (i as u64 + 1));
            set.push(now, rate);
            set.expire(now - Duration::from_millis(250));
            let window = &rates[i.saturating_sub(2)..=i];
            let expected = if i < 2 {
                f64::INFINITY
            } else {
                window.iter().copied().fold(0.0, f64::max)
            };
            assert_eq!(set.max(), expected, "after report {i}");
        }
        assert_eq!(set.finite_max(), Some(6.0));
        set.halve();
        assert_eq!(set.max(), 3.0);
    }

    /// Honest feedback never trips the checks: both presets, lossy data and feedback paths.
    #[test]
    fn honest_runs_reject_no_feedback() {
        use crate::harness::{ChannelConfig, Harness, LossPattern, LossSchedule};
        for (config, rtt_ms, seed) in [
            (TfrcConfig::rfc5348(), 40, 1),
            (TfrcConfig::floyd2000(), 120, 2),
            (TfrcConfig::rfc5348(), 250, 3),
        ] {
            let channel = ChannelConfig {
                data_loss: LossSchedule::constant(LossPattern::Bernoulli { p: 0.02 }),
                feedback_loss: LossSchedule::constant(LossPattern::Bernoulli { p: 0.1 }),
                seed,
                ..ChannelConfig::lossless(Duration::from_millis(rtt_ms))
            };
            let mut harness = Harness::new(config, channel).unwrap();
            harness.run_until(at(20_000));
            let stats = harness.sender().stats();
            assert!(stats.feedback.accepted > 50, "{stats:?}");
            assert_eq!(stats.feedback.rejected(), 0, "{stats:?}");
        }
    }

    #[test]
    fn hostile_feedback_cannot_unbound_the_rate() {
        let mut sender = started(TfrcConfig::default());
        for k in 2..200 {
            deliver(&mut sender, at(100 * k), feedback(100 * k - 1, 0.0, 1e300));
        }
        assert_eq!(sender.stats().x_bytes_per_s, 1.25e11);
        // One poll can only release the burst credit of one RTT (1 ms of RTT here).
        let mut burst = 0;
        while sender.poll_transmit(at(100 * 200), true).is_some() {
            burst += 1;
            assert!(burst < 1_000_000, "unbounded burst");
        }
    }

    #[test]
    fn zero_delay_path_does_not_livelock() {
        let mut sender = Sender::new(TfrcConfig::default(), Time::ZERO).unwrap();
        assert!(sender.poll_transmit(Time::ZERO, true).is_some());
        sender
            .handle_feedback(Time::ZERO, &feedback(0, 0.0, 0.0))
            .unwrap();
        assert_eq!(sender.stats().rtt_s, 1e-6);
        let mut sent = 0;
        while sender.poll_transmit(Time::ZERO, true).is_some() {
            sent += 1;
            assert!(sent < 1000, "livelock");
        }
        assert!(sender.poll_timeout().unwrap() > Time::ZERO);
    }

    #[test]
    fn idle_application_does_not_make_the_timer_spin() {
        let mut sender = started(TfrcConfig::default());
        while sender.poll_transmit(at(100), true).is_some() {}
        let due = sender.poll_timeout().unwrap();
        assert!(sender.poll_transmit(due, false).is_none());
        // Only the nofeedback deadline (500 ms) is due while the application is idle.
        assert_eq!(sender.poll_timeout(), Some(at(500)));
        assert!(sender.poll_transmit(at(300), true).is_some());
    }

    #[test]
    fn idle_sender_keeps_the_initial_rate_on_nofeedback() {
        let mut sender = started(TfrcConfig::default());
        // Nothing sent since the timer was armed and X < 2 * initial rate: no halving.
        sender.handle_timeout(at(500));
        assert_eq!(sender.stats().nofeedback_expiries, 1);
        assert!((sender.stats().x_bytes_per_s - 40_000.0).abs() < 1e-9);
    }

    #[test]
    fn tcp_rto_matches_ns2_fixed_point() {
        let mut rto = TcpRtoEstimator::default();
        // First sample of 100 ms in 100 ms ticks: srtt 1, rttvar 1/2, t_RTO 3 ticks.
        assert!((rto.update(0.1, 0.1, 0.0) - 0.3).abs() < 1e-12);
        // A steady path never decays rttvar below 2 quarter-ticks: t_RTO stays 3 ticks.
        for _ in 0..100 {
            assert!((rto.update(0.1, 0.1, 0.0) - 0.3).abs() < 1e-12);
        }
        // The minimum applies.
        assert!((rto.update(0.1, 0.1, 1.0) - 1.0).abs() < 1e-12);
        // A jump to 500 ms raises srtt by 1/8 of the error and rttvar by 1/4 of it.
        let mut rto = TcpRtoEstimator::default();
        rto.update(0.1, 0.1, 0.0);
        let t = rto.update(0.5, 0.1, 0.0);
        // srtt_x8 = 8 + 4 = 12; rttvar_x4 = 2 + (4 - 0) = 6; ((6 << 3) + 12) >> 3 = 7 ticks.
        assert!((t - 0.7).abs() < 1e-12, "{t}");
    }
}
