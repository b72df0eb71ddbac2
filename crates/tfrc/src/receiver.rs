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

/// The most packets the reordering window holds. A sequence number further ahead than this
/// cannot be reordering (a TFRC sender that hears nothing halves its rate every few RTTs long
/// before sending this many). Such a packet is set aside: only [`OUTAGE_CONFIRMATION`]
/// consecutive packets up there end an outage (everything in between is then lost); a lone one
/// is ignored, so one forged sequence number can neither cost memory nor derail the flow.
pub const MAX_REORDERING_WINDOW: u64 = 1 << 18;

/// Consecutive far-ahead packets that confirm an outage (see [`MAX_REORDERING_WINDOW`]).
pub const OUTAGE_CONFIRMATION: u64 = 4;

/// The largest RTT taken from a data packet (64 s, RFC 5348's t_mbi): the receiver keeps one
/// RTT of arrivals for X_recv, so a peer's absurd RTT must not make that unbounded.
pub const MAX_PEER_RTT: Duration = Duration::from_secs(64);

/// The most arrivals kept for measuring X_recv over the last RTT.
const MAX_RECENT_ARRIVALS: usize = 1 << 16;

/// The time the lost packet `seq` would have arrived, interpolated between the last arrival
/// before it and the first after it (RFC 5348 §5.2).
fn interpolate(before: Option<(u64, Time)>, after: (u64, Time), seq: u64) -> Time {
    let (seq_after, t_after) = after;
    match before {
        Some((seq_before, t_before)) if seq_after > seq_before => {
            let span = duration_nanos(t_after.saturating_since(t_before)) as f64;
            let fraction = (seq - seq_before) as f64 / (seq_after - seq_before) as f64;
            t_before + Duration::from_nanos((span * fraction) as u64)
        }
        _ => t_after,
    }
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
    /// The sender round of the newest packet placed in the window, and the round that was
    /// current when the current loss event started (the loss-event round check).
    round: Option<u32>,
    event_round: Option<u32>,
    rtt: Duration,
    /// Timestamp of the newest data packet and when it arrived, echoed in feedback.
    last_data: Option<(Time, Time)>,
    /// A run of consecutive packets far ahead of the window: (first seq, next expected seq).
    far_run: Option<(u64, u64)>,
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
            round: None,
            event_round: None,
            far_run: None,
            rtt: Duration::ZERO,
            last_data: None,
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
    ///
    /// Packets that cannot be placed are ignored and counted in `packets_ignored`: duplicates,
    /// packets older than the window (already declared lost), sequence number `u64::MAX`, and a
    /// far-ahead packet that no run of followers confirms (see [`MAX_REORDERING_WINDOW`]).
    pub fn handle_data(&mut self, now: Time, header: &DataHeader, size_bytes: u32, ecn: Ecn) {
        self.handle_data_in_round(now, header, size_bytes, ecn, None);
    }

    /// [`Receiver::handle_data`] for a packet the sender sent in feedback `round`
    /// ([`crate::Sender::round`]), which the loss-event round check
    /// (`TfrcConfig::loss_event_round_check`) reads; `None` skips the check. The simulator
    /// carries the round beside the header; the wire format carries none.
    pub fn handle_data_in_round(
        &mut self,
        now: Time,
        header: &DataHeader,
        size_bytes: u32,
        ecn: Ecn,
        round: Option<u32>,
    ) {
        if header.seq == u64::MAX {
            self.stats.packets_ignored += 1;
            return;
        }
        if !self.started {
            self.started = true;
            self.base_seq = header.seq;
        }
        // The RTT a packet carries is the sender's current estimate whether or not the packet
        // itself is still useful: a late packet (its hole already declared lost) must still
        // replace the RTT a forged packet planted (the clamped 64 s would otherwise merge every
        // later loss into one event and space reports a minute apart).
        let far_ahead = header.seq.saturating_sub(self.base_seq) >= MAX_REORDERING_WINDOW;
        if !header.rtt.is_zero() && !far_ahead {
            self.rtt = header.rtt.min(MAX_PEER_RTT);
            self.shorten_feedback_timer();
        }
        if header.seq < self.base_seq {
            self.stats.packets_ignored += 1;
            return;
        }
        if far_ahead && !self.confirm_outage(header.seq, now) {
            self.stats.packets_ignored += 1;
            return;
        }
        let offset = (header.seq - self.base_seq) as usize;
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
        // ns-2's sink takes the round of every packet it places (its `round_id`), a late one's
        // included, before deciding which holes are new loss events.
        self.round = round;
        self.received_in_window += 1;
        self.stats.packets_received += 1;
        self.stats.bytes_received += u64::from(size_bytes);
        if slot.ce {
            self.stats.packets_ce += 1;
        }

        // t_recvdata (RFC 5348 §6.2) is the newest timestamp among the packets received since
        // the last report: the newest, so that reordering never makes an echo go back in time;
        // since the last report, so that one forged timestamp far in the future (a spoofed
        // packet) is echoed by one report at most instead of by every later one.
        if !self.data_since_feedback || self.last_data.is_none_or(|(ts, _)| header.timestamp >= ts)
        {
            self.last_data = Some((header.timestamp, now));
        }
        self.bytes_since_feedback += u64::from(size_bytes);
        self.data_since_feedback = true;
        self.recent.push_back((now, size_bytes));
        self.recent_bytes += u64::from(size_bytes);
        if self.recent.len() > MAX_RECENT_ARRIVALS {
            if let Some((_, bytes)) = self.recent.pop_front() {
                self.recent_bytes -= u64::from(bytes);
            }
        }
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

    /// Brings the feedback timer forward when the RTT the data carries has fallen below half the
    /// interval the timer was set to: a report is due at least once per RTT (RFC 5348 §6.2), and
    /// one packet carrying an absurd RTT (a forged one, clamped to [`MAX_PEER_RTT`]) must not
    /// silence the receiver for that long. A sender's R moves by at most a tenth per report
    /// (q = 0.9), so an honest flow never halves it within one timer interval.
    fn shorten_feedback_timer(&mut self) {
        if let (Some(last), Some(next)) = (self.last_feedback, self.next_feedback) {
            if next.saturating_since(last) > 2 * self.rtt {
                self.next_feedback = Some(last + self.rtt);
            }
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
        // The first arrival after the current run of holes, found once per run so that a burst
        // of n losses costs O(n), not O(n^2).
        let mut next_arrival: Option<(u64, Time)> = None;
        while let Some(front) = self.window.front().copied() {
            let seq = self.base_seq;
            match front.arrival {
                Some(arrival) => {
                    self.window.pop_front();
                    self.base_seq = self.base_seq.saturating_add(1);
                    self.received_in_window -= 1;
                    self.last_arrived = Some((seq, arrival));
                    next_arrival = None;
                    if front.ce {
                        self.on_lost_packet(seq, arrival);
                    }
                }
                None if self.received_in_window >= u64::from(self.config.ndupack) => {
                    let after = *next_arrival.get_or_insert_with(|| self.first_arrival_in_window());
                    let time = interpolate(self.last_arrived, after, seq);
                    self.window.pop_front();
                    self.base_seq = self.base_seq.saturating_add(1);
                    self.stats.packets_lost += 1;
                    self.on_lost_packet(seq, time);
                }
                None => break,
            }
        }
    }

    /// The first packet in the window that has arrived (there is one whenever a hole is being
    /// declared lost, since NDUPACK >= 1 later packets have arrived).
    fn first_arrival_in_window(&self) -> (u64, Time) {
        self.window
            .iter()
            .enumerate()
            .find_map(|(i, slot)| slot.arrival.map(|t| (self.base_seq + i as u64, t)))
            .unwrap_or((self.base_seq, Time::ZERO))
    }

    /// Records a far-ahead packet; returns true once [`OUTAGE_CONFIRMATION`] consecutive ones
    /// have arrived, after skipping everything before the run's first packet as lost (the run's
    /// earlier packets were ignored, so they count as lost too).
    fn confirm_outage(&mut self, seq: u64, now: Time) -> bool {
        let run = match self.far_run {
            Some((first, next)) if seq == next => (first, next + 1),
            _ => (seq, seq + 1),
        };
        if run.1 - run.0 < OUTAGE_CONFIRMATION {
            self.far_run = Some(run);
            return false;
        }
        self.far_run = None;
        self.skip_outage(seq, now);
        true
    }

    /// Everything before `seq` is decided at once after an outage: the window's holes are lost
    /// as usual, and the packets never seen beyond it are lost too, as part of a loss event
    /// starting at the first of them (its time is `now`, all that is known).
    fn skip_outage(&mut self, seq: u64, now: Time) {
        while let Some(front) = self.window.pop_front() {
            let at = self.base_seq;
            self.base_seq += 1;
            match front.arrival {
                Some(arrival) => {
                    self.received_in_window -= 1;
                    self.last_arrived = Some((at, arrival));
                }
                None => {
                    self.stats.packets_lost += 1;
                    self.on_lost_packet(at, now);
                }
            }
        }
        if seq > self.base_seq {
            self.stats.packets_lost += seq - self.base_seq;
            self.on_lost_packet(self.base_seq, now);
            self.base_seq = seq;
        }
    }

    /// A packet was lost (or CE-marked) at `time`: it starts a new loss event unless it lies
    /// within one RTT of the current event's start (RFC 5348 §5.2) or, with the round check,
    /// the packet that revealed it carries no newer sender round than the event's.
    fn on_lost_packet(&mut self, seq: u64, time: Time) {
        if let Some((start_seq, start_time)) = self.current_event {
            if time <= start_time + self.rtt || self.same_round() {
                return;
            }
            self.history.close_interval((seq - start_seq) as f64);
        } else {
            let packets = self.first_interval_packets();
            self.history.seed_first(packets);
        }
        self.current_event = Some((seq, time));
        self.event_round = self.round;
        self.stats.loss_events += 1;
        let p = self.history.loss_event_rate(1.0);
        self.stats.inv_theta_hat_sum += p;
        self.stats.inv_theta_hat_samples += 1;
    }

    /// Whether the round check holds a loss in the current event: it is on, and both the
    /// newest packet and the event's start carry a round, the newest no later than the event's
    /// (ns-2's `round_id > lastloss_round_id`, `PreciseLoss_`).
    fn same_round(&self) -> bool {
        match (
            self.config.loss_event_round_check,
            self.round,
            self.event_round,
        ) {
            (true, Some(now), Some(event)) => now <= event,
            _ => false,
        }
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
    ///
    /// The first report carries X_recv = 0 (RFC 5348 §6.3; DCCP's CCID 3 does the same), and so
    /// does any report while the data carries no RTT: there is then no interval a rate can be
    /// measured over. On a real host the first report is built microseconds after the first
    /// arrival, and one packet over those microseconds is a rate hundreds of times the path's,
    /// which §6.3.1 would turn into a first loss interval of millions of packets.
    fn receive_rate(&mut self, now: Time) -> f64 {
        self.trim_recent(now);
        let Some(since) = self.last_feedback else {
            return 0.0;
        };
        if self.rtt.is_zero() {
            return 0.0;
        }
        let elapsed = now.saturating_since(since);
        if elapsed < self.rtt {
            return self.recent_rate();
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

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;
    const RTT: Duration = Duration::from_millis(100);

    fn at(ms: u64) -> Time {
        Time::from_nanos(ms * MS)
    }

    /// Packet `seq`, sent `ms - 50` ms and arriving at `ms` ms.
    fn deliver(receiver: &mut Receiver, seq: u64, ms: u64) {
        let header = DataHeader {
            seq,
            timestamp: at(ms - 50),
            rtt: RTT,
        };
        receiver.handle_data(at(ms), &header, 1000, Ecn::NotCe);
    }

    /// Delivers one packet every `gap_ms` from `start_ms` for `sequence`, skipping `lost`,
    /// driving the feedback timer and counting reports.
    fn stream(
        receiver: &mut Receiver,
        seqs: std::ops::Range<u64>,
        lost: &[u64],
        gap_ms: u64,
    ) -> Vec<FeedbackHeader> {
        let mut reports = Vec::new();
        for seq in seqs {
            let now_ms = 1000 + seq * gap_ms;
            if let Some(deadline) = receiver.poll_timeout() {
                if deadline <= at(now_ms) {
                    receiver.handle_timeout(deadline);
                    reports.extend(receiver.poll_feedback(deadline));
                }
            }
            if !lost.contains(&seq) {
                deliver(receiver, seq, now_ms);
                reports.extend(receiver.poll_feedback(at(now_ms)));
            }
        }
        reports
    }

    #[test]
    fn first_packet_is_reported_at_once_and_only_new_data_is_reported() {
        let mut receiver = Receiver::new(TfrcConfig::default()).unwrap();
        deliver(&mut receiver, 0, 100);
        let report = receiver.poll_feedback(at(103)).unwrap();
        assert_eq!(report.timestamp_echo, at(50));
        assert_eq!(report.t_delay, Duration::from_millis(3));
        assert_eq!(report.p, 0.0);
        assert!(receiver.poll_feedback(at(104)).is_none());
        // The timer fires one RTT later with no new data: no report, and the timer stops.
        assert_eq!(receiver.poll_timeout(), Some(at(203)));
        receiver.handle_timeout(at(203));
        assert!(receiver.poll_feedback(at(203)).is_none());
        assert_eq!(receiver.poll_timeout(), None);
        // The next packet is reported at once (fewer than one packet per RTT).
        deliver(&mut receiver, 1, 900);
        assert!(receiver.poll_feedback(at(900)).is_some());
    }

    #[test]
    fn first_report_carries_no_receive_rate_however_soon_it_is_built() {
        let mut receiver = Receiver::new(TfrcConfig::default()).unwrap();
        deliver(&mut receiver, 0, 100);
        // Built 7 µs after the arrival, as on a real host: one packet in 7 µs is no rate.
        let report = receiver
            .poll_feedback(at(100) + Duration::from_micros(7))
            .unwrap();
        assert_eq!(report.x_recv_bytes_per_s, 0.0);
        assert_eq!(receiver.stats().max_x_recv_bytes_per_s, 0.0);
    }

    #[test]
    fn microsecond_reports_do_not_shrink_the_first_loss_interval() {
        // Every report is built 5 µs after the arrival that triggers it; 100 packets/s, R =
        // 100 ms, and the first loss at packet 80. The synthesized interval follows the
        // receive rate the flow really had (100 kB/s), not one packet over 5 µs.
        let mut receiver = Receiver::new(TfrcConfig::default()).unwrap();
        for seq in 0..100u64 {
            if seq == 80 {
                continue;
            }
            let now = at(1000 + seq * 10);
            deliver(&mut receiver, seq, 1000 + seq * 10);
            if let Some(deadline) = receiver.poll_timeout() {
                if deadline <= now {
                    receiver.handle_timeout(now);
                }
            }
            let _ = receiver.poll_feedback(now + Duration::from_micros(5));
        }
        let stats = receiver.stats();
        assert!(
            stats.max_x_recv_bytes_per_s < 110_000.0,
            "{}",
            stats.max_x_recv_bytes_per_s
        );
        let p = stats.inv_theta_hat_sum;
        let allowed =
            crate::equation::throughput_bytes_per_s(Default::default(), 1000.0, 0.1, 0.4, p);
        assert!(allowed < 120_000.0, "allowed {allowed} at p = {p}");
    }

    #[test]
    fn a_forged_future_timestamp_is_echoed_by_one_report_at_most() {
        let mut receiver = Receiver::new(TfrcConfig::default()).unwrap();
        stream(&mut receiver, 0..20, &[], 10);
        // A spoofed packet a little ahead, stamped at the end of time.
        let forged = DataHeader {
            seq: 22,
            timestamp: Time::from_nanos(u64::MAX),
            rtt: RTT,
        };
        receiver.handle_data(at(1200), &forged, 1000, Ecn::NotCe);
        let mut echoes = Vec::new();
        for seq in 20..60 {
            let now = at(1000 + seq * 10);
            deliver(&mut receiver, seq, 1000 + seq * 10);
            receiver.handle_timeout(now);
            if let Some(report) = receiver.poll_feedback(now) {
                echoes.push(report.timestamp_echo);
            }
        }
        let forged_echoes = echoes.iter().filter(|&&t| t == forged.timestamp).count();
        assert!(forged_echoes <= 1, "{echoes:?}");
        assert!(echoes.len() >= 3, "{echoes:?}");
    }

    #[test]
    fn a_forged_rtt_does_not_silence_the_receiver() {
        let mut receiver = Receiver::new(TfrcConfig::default()).unwrap();
        stream(&mut receiver, 0..20, &[], 10);
        // The spoofed packet claims R = 2^64-1 ns (clamped to 64 s); the next report would be
        // set a minute out.
        let forged = DataHeader {
            seq: 20,
            timestamp: at(1150),
            rtt: Duration::from_nanos(u64::MAX),
        };
        receiver.handle_data(at(1200), &forged, 1000, Ecn::NotCe);
        receiver.handle_timeout(at(1200));
        let _ = receiver.poll_feedback(at(1200));
        // The sender's next packets carry R = 100 ms again: reports come every R.
        let reports = stream(&mut receiver, 21..60, &[], 10);
        assert!(reports.len() >= 3, "{}", reports.len());
    }

    #[test]
    fn reports_once_per_rtt_with_the_receive_rate() {
        let mut receiver = Receiver::new(TfrcConfig::default()).unwrap();
        // 100 packets/s (100 kB/s) for 2 s.
        let reports = stream(&mut receiver, 0..200, &[], 10);
        assert!((20..=22).contains(&reports.len()), "{}", reports.len());
        for report in &reports[2..] {
            assert!(
                (report.x_recv_bytes_per_s - 100_000.0).abs() < 1.0,
                "{report:?}"
            );
        }
    }

    #[test]
    fn losses_within_one_rtt_are_one_event() {
        let mut receiver = Receiver::new(TfrcConfig::default()).unwrap();
        // 10 ms apart: 20 and 25 are 50 ms apart (one event), 40 is 200 ms after 20 (a second).
        let reports = stream(&mut receiver, 0..100, &[20, 25, 40], 10);
        let stats = receiver.stats();
        assert_eq!(stats.packets_lost, 3);
        assert_eq!(stats.loss_events, 2);
        // The first closed interval runs from 20 to 40.
        assert_eq!(stats.last_interval_packets, 20.0);
        // A new loss event is reported at once: some report carries each rise of p.
        assert!(reports.windows(2).filter(|w| w[1].p > w[0].p).count() >= 2);
    }

    /// Packets 0..60 every 10 ms, those in `lost` missing, each carrying the sender round
    /// `round_of(seq)`; the loss events counted.
    fn events_with_rounds(check: bool, lost: &[u64], round_of: impl Fn(u64) -> u32) -> u64 {
        let config = TfrcConfig {
            loss_event_round_check: check,
            ..TfrcConfig::floyd2000()
        };
        let mut receiver = Receiver::new(config).unwrap();
        for seq in (0..60).filter(|seq| !lost.contains(seq)) {
            let header = DataHeader {
                seq,
                timestamp: at(1000 + seq * 10 - 50),
                rtt: RTT,
            };
            let now = at(1000 + seq * 10);
            receiver.handle_data_in_round(now, &header, 1000, Ecn::NotCe, Some(round_of(seq)));
        }
        receiver.stats().loss_events
    }

    #[test]
    fn the_round_check_merges_losses_of_one_sender_round() {
        // 20 and 40 are 200 ms apart, two RTTs: two events by the RTT rule alone.
        let lost = [20, 40];
        assert_eq!(events_with_rounds(false, &lost, |_| 7), 2);
        // With the check, a loss revealed by a packet of the event's own round is merged,
        assert_eq!(events_with_rounds(true, &lost, |_| 7), 1);
        // one revealed by a packet of a later round starts a new event,
        assert_eq!(
            events_with_rounds(true, &lost, |seq| 7 + u32::from(seq > 30)),
            2
        );
        // and the RTT rule still merges losses within one RTT whatever their rounds.
        assert_eq!(events_with_rounds(true, &[20, 25], |seq| seq as u32), 1);
    }

    #[test]
    fn packets_without_a_round_skip_the_check() {
        let config = TfrcConfig {
            loss_event_round_check: true,
            ..TfrcConfig::floyd2000()
        };
        let mut receiver = Receiver::new(config).unwrap();
        stream(&mut receiver, 0..100, &[20, 40], 10);
        assert_eq!(receiver.stats().loss_events, 2);
    }

    #[test]
    fn lost_packet_time_is_interpolated_between_neighbours() {
        let mut receiver = Receiver::new(TfrcConfig::default()).unwrap();
        for (seq, ms) in [(0, 100), (1, 110), (5, 150), (6, 160), (7, 170)] {
            deliver(&mut receiver, seq, ms);
        }
        // 2, 3, 4 are lost; 2 sits 1/4 of the way from 1 (110 ms) to 5 (150 ms), and starts
        // the event.
        assert_eq!(receiver.stats().loss_events, 1);
        assert_eq!(receiver.current_event, Some((2, at(120))));
    }

    #[test]
    fn first_interval_follows_the_largest_receive_rate() {
        let mut receiver = Receiver::new(TfrcConfig::default()).unwrap();
        stream(&mut receiver, 0..100, &[80], 10);
        let p = receiver.stats().inv_theta_hat_sum;
        let allowed =
            crate::equation::throughput_bytes_per_s(Default::default(), 1000.0, 0.1, 0.4, p);
        let max_x_recv = receiver.stats().max_x_recv_bytes_per_s;
        assert!(
            (allowed / max_x_recv - 1.0).abs() < 0.05,
            "{allowed} vs {max_x_recv}"
        );
    }

    #[test]
    fn first_packet_lost_uses_half_a_packet_per_rtt() {
        let mut receiver = Receiver::new(TfrcConfig::default()).unwrap();
        let mut header = DataHeader {
            seq: 1,
            timestamp: at(0),
            rtt: RTT,
        };
        // Sequence numbers start at 0 by convention, so a receiver that starts at 1 treats
        // 0 as never sent; losing 2 while 3, 4, 5 arrive is the first loss, with no rate yet.
        receiver.handle_data(at(50), &header, 1000, Ecn::NotCe);
        for seq in 3..6 {
            header.seq = seq;
            receiver.handle_data(at(50), &header, 1000, Ecn::NotCe);
        }
        let p = receiver.stats().inv_theta_hat_sum;
        let allowed =
            crate::equation::throughput_bytes_per_s(Default::default(), 1000.0, 0.1, 0.4, p);
        // The floor 0.5/R packets/s is 5 kB/s; the four arrivals in one RTT are 40 kB/s, and
        // the largest of the two applies.
        assert!((allowed / 40_000.0 - 1.0).abs() < 0.05, "{allowed}");
    }

    #[test]
    fn forged_far_sequence_numbers_are_ignored() {
        let mut receiver = Receiver::new(TfrcConfig::default()).unwrap();
        deliver(&mut receiver, 0, 100);
        for seq in [u64::MAX, u64::MAX - 1, 1 << 40, (1 << 40) + 7] {
            let header = DataHeader {
                seq,
                timestamp: at(60),
                rtt: RTT,
            };
            receiver.handle_data(at(110), &header, 1000, Ecn::NotCe);
        }
        assert_eq!(receiver.stats().packets_ignored, 4);
        assert!(receiver.window.len() <= 1);
        // The real flow carries on.
        for seq in 1..100 {
            deliver(&mut receiver, seq, 120 + seq);
        }
        assert_eq!(receiver.stats().packets_received, 100);
        assert_eq!(receiver.stats().loss_events, 0);
    }

    #[test]
    fn a_confirmed_far_run_ends_an_outage() {
        let mut receiver = Receiver::new(TfrcConfig::default()).unwrap();
        deliver(&mut receiver, 0, 100);
        let far = MAX_REORDERING_WINDOW + 10;
        for seq in far..far + OUTAGE_CONFIRMATION + 2 {
            deliver(&mut receiver, seq, 200);
        }
        let stats = receiver.stats();
        // The first three of the run were ignored before the fourth confirmed it; 1 .. far+2
        // are lost (far+3 confirmed the run).
        assert_eq!(stats.packets_ignored, OUTAGE_CONFIRMATION - 1);
        assert_eq!(stats.packets_received, 1 + 3);
        assert_eq!(stats.loss_events, 1);
        assert_eq!(stats.packets_lost, far + OUTAGE_CONFIRMATION - 1 - 1);
    }

    #[test]
    fn absurd_peer_rtt_is_clamped() {
        let mut receiver = Receiver::new(TfrcConfig::default()).unwrap();
        for seq in 0..(MAX_RECENT_ARRIVALS as u64 + 10) {
            let header = DataHeader {
                seq,
                timestamp: at(1),
                rtt: Duration::from_secs(1 << 30),
            };
            receiver.handle_data(at(2), &header, 1000, Ecn::NotCe);
        }
        assert_eq!(receiver.stats().rtt_s, 64.0);
        assert!(receiver.recent.len() <= MAX_RECENT_ARRIVALS);
    }

    #[test]
    fn outage_within_the_window_bound_is_ordinary_loss() {
        let mut receiver = Receiver::new(TfrcConfig::default()).unwrap();
        deliver(&mut receiver, 0, 100);
        for seq in MAX_REORDERING_WINDOW - 4..MAX_REORDERING_WINDOW {
            deliver(&mut receiver, seq, 200);
        }
        assert_eq!(receiver.stats().packets_lost, MAX_REORDERING_WINDOW - 5);
        assert_eq!(receiver.stats().loss_events, 1);
    }
}
