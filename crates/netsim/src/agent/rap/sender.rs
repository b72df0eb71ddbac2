//! The RAP source (ns-2 `RapAgent` on the sending side; protocols.md §4).
//!
//! Two timers drive it, as in ns-2. The IPG timer sends: at each expiry it first runs the
//! timer-based loss detection, backs off instead of sending if that found a new loss, and
//! re-arms after the gap (IPG, or IPG·FRTT/XRTT in fine-grain mode, plus U(0, overhead)). The
//! step timer (`RttTimeout`) fires every SRTT and applies the additive increase if the flow sent
//! at least `dpthresh` percent of the packets the step allowed. Each ACK gives an RTT sample
//! from the history, updates SRTT, the deviation, the timeout (and FRTT, XRTT), sets IPG = SRTT
//! on the first ACK, then runs the ACK-based detection. A backoff halves the rate, marks the
//! whole history inactive (one backoff per cluster of losses) and restarts the step timer.
//!
//! Times are kept in seconds as `f64`, as ns-2 does, and rounded to the nanosecond only to arm a
//! timer. When both timers are due at once they fire in the order they were armed, as ns-2's
//! scheduler runs events of equal time first-in first-out.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tfrc::Time;

use super::history::{Detected, History};
use super::{RapAck, RapConfig, RapData};
use crate::agent::{Agent, Outbox};
use crate::packet::{Packet, Payload};
use crate::rng::{uniform, SimRng};

/// The source's trace fields (docs/rap.md, "Trace fields").
const FIELDS: &[&str] = &[
    "rate_bps",
    "ipg_s",
    "gap_s",
    "srtt_s",
    "frtt_s",
    "xrtt_s",
    "timeout_s",
    "losses",
    "packets_lost",
    "packets_sent",
    "acks",
];

/// Whose "first RTT sample" flag this source reads (ns-2's `static int initial`).
#[derive(Clone, Debug)]
enum FirstSample {
    /// The fixed behaviour: this source's own flag (true once it has taken a sample).
    Own(bool),
    /// ns-2's bug: one flag for every source of the simulation with the option on.
    Shared(Arc<AtomicBool>),
}

/// One armed timer: its deadline, and the order it was armed in (for ties).
#[derive(Clone, Copy, Debug)]
struct Timer {
    at: Time,
    armed: u64,
}

/// The sending end of a RAP flow.
#[derive(Clone, Debug)]
pub struct RapSource {
    config: RapConfig,
    rng: SimRng,
    history: History,
    first_sample: FirstSample,
    /// Sequence number of the last packet sent (ns-2 `seqno_`; the first packet is 1).
    seq: u64,
    /// Inter-packet gap, seconds.
    ipg: f64,
    srtt: f64,
    /// Mean deviation of the RTT samples (ns-2 `variance_`).
    deviation: f64,
    timeout: f64,
    frtt: f64,
    xrtt: f64,
    /// Whether an ACK has arrived (ns-2 `RF_ANYACK`).
    any_ack: bool,
    /// Packets sent since the last step (ns-2 `dctr_`).
    sent_in_step: u64,
    /// Between `on_start` and `on_stop` (or the last packet's ACK with `max_packets`).
    running: bool,
    ipg_timer: Option<Timer>,
    step_timer: Option<Timer>,
    arm_count: u64,
    backoffs: u64,
    packets_lost: u64,
    acks: u64,
}

impl RapSource {
    /// A source that waits for [`Agent::on_start`]. `rng` is the agent's own stream, drawn only
    /// for the `overhead` randomisation.
    pub fn new(config: &RapConfig, rng: SimRng) -> RapSource {
        let srtt = config.initial_srtt.as_secs_f64();
        RapSource {
            config: config.clone(),
            rng,
            history: History::default(),
            first_sample: FirstSample::Own(false),
            seq: 0,
            ipg: config.initial_ipg.as_secs_f64(),
            srtt,
            deviation: 0.0,
            timeout: config.initial_timeout.as_secs_f64(),
            frtt: srtt,
            xrtt: srtt,
            any_ack: false,
            sent_in_step: 0,
            running: false,
            ipg_timer: None,
            step_timer: None,
            arm_count: 0,
            backoffs: 0,
            packets_lost: 0,
            acks: 0,
        }
    }

    /// Uses `flag` as the simulation-wide first-sample flag if `shared_first_sample` is on
    /// (see [`super::share_first_sample`]).
    pub(super) fn join_shared_first_sample(&mut self, flag: &Arc<AtomicBool>) {
        if self.config.shared_first_sample {
            self.first_sample = FirstSample::Shared(Arc::clone(flag));
        }
    }

    /// The inter-packet gap, seconds.
    pub fn ipg_s(&self) -> f64 {
        self.ipg
    }

    /// The gap the next packet waits, without the overhead randomisation: IPG, or IPG·FRTT/XRTT
    /// in fine-grain mode (ns-2 `IpgTimeout`), seconds.
    pub fn gap_s(&self) -> f64 {
        if self.config.fine_grain {
            self.ipg * self.frtt / self.xrtt
        } else {
            self.ipg
        }
    }

    /// The smoothed RTT, seconds.
    pub fn srtt_s(&self) -> f64 {
        self.srtt
    }

    /// The loss timeout mu·SRTT + phi·deviation, seconds.
    pub fn timeout_s(&self) -> f64 {
        self.timeout
    }

    /// The short- and long-term RTT averages (FRTT, XRTT), seconds; they stay at their initial
    /// value unless fine-grain mode is on.
    pub fn frtt_xrtt_s(&self) -> (f64, f64) {
        (self.frtt, self.xrtt)
    }

    /// Backoffs so far (congestion events answered).
    pub fn backoffs(&self) -> u64 {
        self.backoffs
    }

    /// Packets declared lost so far, those of a cluster already answered included.
    pub fn packets_lost(&self) -> u64 {
        self.packets_lost
    }

    /// Data packets sent so far.
    pub fn packets_sent(&self) -> u64 {
        self.seq
    }

    /// Packets in the transmission history: sent, and neither acknowledged nor declared lost.
    pub fn unaccounted_packets(&self) -> usize {
        self.history.len()
    }

    /// Arms a timer `delay_s` after `now` (at least 1 ns, so a degenerate estimate cannot spin).
    fn arm(&mut self, now: Time, delay_s: f64) -> Option<Timer> {
        self.arm_count += 1;
        let ns = (delay_s * 1e9).round();
        // `!(ns >= 1)` also catches NaN, which `clamp` would pass through (and cast to 0).
        let ns = if ns >= 1.0 {
            ns.min(u64::MAX as f64) as u64
        } else {
            1
        };
        Some(Timer {
            at: Time::from_nanos(now.as_nanos().saturating_add(ns)),
            armed: self.arm_count,
        })
    }

    /// ns-2 `UpdateTimeValues`: SRTT and deviation with gain `delta` (the first sample taken
    /// as is), the timeout, and in fine-grain mode FRTT and XRTT.
    fn on_rtt_sample(&mut self, sample: f64) {
        let first = match &mut self.first_sample {
            FirstSample::Own(taken) => !std::mem::replace(taken, true),
            FirstSample::Shared(flag) => !flag.swap(true, Ordering::Relaxed),
        };
        if first {
            self.srtt = sample;
            self.frtt = sample;
            self.xrtt = sample;
            self.deviation = 0.0;
        }
        let delta = self.config.delta;
        let diff = sample - self.srtt;
        self.srtt += delta * diff;
        self.deviation += delta * (diff.abs() - self.deviation);
        self.timeout = self.config.mu * self.srtt + self.config.phi * self.deviation;
        if self.config.fine_grain {
            let (kf, kx) = (self.config.kfrtt, self.config.kxrtt);
            self.frtt = (1.0 - kf) * self.frtt + kf * sample;
            self.xrtt = (1.0 - kx) * self.xrtt + kx * sample;
        }
    }

    /// ns-2 `LossHandler`: halve the rate, make every packet in flight part of this cluster,
    /// and wait a full SRTT before the next increase.
    fn back_off(&mut self, now: Time, found: Detected) {
        self.packets_lost += found.lost;
        if found.new == 0 {
            return;
        }
        self.ipg /= self.config.beta;
        self.history.mark_inactive();
        self.backoffs += 1;
        self.step_timer = self.arm(now, self.srtt);
    }

    /// ns-2 `IpgTimeout`: timer-based detection, then a packet unless it found a loss, then the
    /// next gap.
    fn on_ipg_timer(&mut self, now: Time, out: &mut Outbox) {
        let timeout_ns = (self.timeout * 1e9).round().clamp(0.0, u64::MAX as f64) as u64;
        let found = self.history.timer_losses(now, timeout_ns);
        if found.new > 0 {
            self.back_off(now, found);
        } else {
            self.packets_lost += found.lost;
            if self.config.max_packets.is_none_or(|max| self.seq < max) {
                self.seq += 1;
                out.send(
                    self.config.size_bytes,
                    Payload::RapData(RapData { seq: self.seq }),
                );
                self.history.push(self.seq, now);
                self.sent_in_step += 1;
            }
        }
        if self.all_accounted() {
            self.stop();
            return;
        }
        let mut gap = self.gap_s();
        if !self.config.overhead.is_zero() {
            gap += uniform(&mut self.rng) * self.config.overhead.as_secs_f64();
        }
        self.ipg_timer = self.arm(now, gap);
    }

    /// ns-2 `RttTimeout`: the additive increase, if the flow used at least `dpthresh` percent of
    /// the step's packets, then the next step one SRTT later.
    fn on_step_timer(&mut self, now: Time) {
        let used_percent = 100.0 * self.sent_in_step as f64 * self.ipg / self.srtt;
        if used_percent >= self.config.dpthresh_percent {
            self.ipg *= self.srtt / (self.config.alpha * self.ipg + self.srtt);
        }
        self.sent_in_step = 0;
        self.step_timer = self.arm(now, self.srtt);
    }

    /// ns-2 `RecvAck`.
    fn on_ack(&mut self, now: Time, ack: &RapAck) {
        self.acks += 1;
        if let Some(departure) = self.history.take(ack.seq) {
            let sample = now.as_nanos().saturating_sub(departure.as_nanos()) as f64 * 1e-9;
            self.on_rtt_sample(sample);
        }
        if !self.any_ack {
            self.any_ack = true;
            self.ipg = self.srtt;
        }
        let found = self.history.ack_losses(&ack.hole);
        self.back_off(now, found);
        if self.config.max_packets.is_some_and(|max| ack.seq >= max) || self.all_accounted() {
            self.stop();
        }
    }

    /// With `max_packets`, whether every packet has been sent and then acknowledged or declared
    /// lost: RAP never retransmits, so a lost last packet must end the transfer too.
    fn all_accounted(&self) -> bool {
        self.config
            .max_packets
            .is_some_and(|max| self.seq >= max && self.history.len() == 0)
    }

    fn stop(&mut self) {
        self.running = false;
        self.ipg_timer = None;
        self.step_timer = None;
    }
}

impl Agent for RapSource {
    /// `rate_bps`: size·8/IPG; `ipg_s`: the IPG; `gap_s`: the gap actually waited (IPG·FRTT/XRTT
    /// in fine-grain mode, without overhead); `srtt_s`, `frtt_s`, `xrtt_s`, `timeout_s`: the
    /// estimates, seconds; `losses`: backoffs; `packets_lost`: packets declared lost;
    /// `packets_sent`, `acks`: cumulative counts.
    fn trace_fields(&self) -> &'static [&'static str] {
        FIELDS
    }

    /// ns-2 `start()`: a step (which cannot increase before anything was sent), then the IPG
    /// timer's work at once, sending the first packet.
    fn on_start(&mut self, now: Time, out: &mut Outbox) {
        if self.running {
            return;
        }
        self.running = true;
        self.on_step_timer(now);
        self.on_ipg_timer(now, out);
    }

    /// ns-2 `stop()`: both timers cancelled; the estimates and the history are kept for a
    /// restart.
    fn on_stop(&mut self, _now: Time, _out: &mut Outbox) {
        self.stop();
    }

    fn handle_packet(&mut self, now: Time, packet: &Packet, _out: &mut Outbox) {
        if let Payload::RapAck(ack) = &packet.payload {
            self.on_ack(now, ack);
        }
    }

    fn poll_timeout(&self) -> Option<Time> {
        match (self.ipg_timer, self.step_timer) {
            (Some(a), Some(b)) => Some(a.at.min(b.at)),
            (a, b) => a.or(b).map(|t| t.at),
        }
    }

    fn handle_timeout(&mut self, now: Time, out: &mut Outbox) {
        // Every due timer fires once, in (deadline, arming) order: a timer re-arms at least
        // 1 ns ahead, so it cannot be due again within this call.
        let mut fired = 0;
        while fired < 2 {
            let due = |t: Option<Timer>| t.filter(|t| t.at <= now);
            let step_first = match (due(self.ipg_timer), due(self.step_timer)) {
                (None, None) => break,
                (Some(_), None) => false,
                (None, Some(_)) => true,
                (Some(i), Some(s)) => (s.at, s.armed) < (i.at, i.armed),
            };
            if step_first {
                self.on_step_timer(now);
            } else {
                self.on_ipg_timer(now, out);
            }
            fired += 1;
        }
    }

    fn trace(&self, values: &mut [f64]) {
        let row = [
            f64::from(self.config.size_bytes) * 8.0 / self.ipg,
            self.ipg,
            self.gap_s(),
            self.srtt,
            self.frtt,
            self.xrtt,
            self.timeout,
            self.backoffs as f64,
            self.packets_lost as f64,
            self.seq as f64,
            self.acks as f64,
        ];
        for (value, x) in values.iter_mut().zip(row) {
            *value = x;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::rap::LastHole;
    use crate::packet::{FlowId, NodeId};
    use crate::rng::stream;
    use std::time::Duration;

    fn ms(x: u64) -> Time {
        Time::from_nanos(x * 1_000_000)
    }

    fn source(config: RapConfig) -> RapSource {
        RapSource::new(&config, stream(1, "rap"))
    }

    fn ack(seq: u64, hole: LastHole) -> Packet {
        let mut p = Packet::new(
            FlowId(0),
            seq,
            44,
            NodeId(0),
            Time::ZERO,
            Payload::RapAck(RapAck { seq, hole }),
        );
        p.reverse = true;
        p
    }

    /// The hole after packets 1..=n all arrived.
    fn in_order(n: u64) -> LastHole {
        LastHole {
            last_recv: n,
            ..LastHole::default()
        }
    }

    /// Runs the source's timers up to `until`, returning the send times.
    fn run_timers(s: &mut RapSource, until: Time) -> Vec<Time> {
        let mut out = Outbox::default();
        let mut sends = Vec::new();
        while let Some(at) = s.poll_timeout().filter(|&at| at <= until) {
            s.handle_timeout(at, &mut out);
            sends.extend(out.drain().map(|_| at));
        }
        sends
    }

    #[test]
    fn start_sends_at_once_and_the_first_ack_sets_ipg_to_srtt() {
        let mut s = source(RapConfig::default());
        let mut out = Outbox::default();
        s.on_start(Time::ZERO, &mut out);
        assert_eq!(out.packets().len(), 1);
        assert_eq!(out.packets()[0].size_bytes, 512);
        assert_eq!(
            out.packets()[0].payload,
            Payload::RapData(RapData { seq: 1 })
        );
        // The next packet waits the initial 2 s gap, and so does the first step.
        assert_eq!(s.poll_timeout(), Some(ms(2000)));
        s.handle_packet(ms(100), &ack(1, in_order(1)), &mut out);
        assert_eq!(s.srtt_s(), 0.1);
        assert_eq!(s.ipg_s(), 0.1);
        // timeout = 1.2·0.1 + 4·0.
        assert!((s.timeout_s() - 0.12).abs() < 1e-12);
        // As in ns-2, the first ACK does not move the pending IPG timer.
        assert_eq!(s.poll_timeout(), Some(ms(2000)));
        // At 2 s the step (armed first) fires first: one packet sent at IPG = SRTT is the whole
        // allowance, so the rate grows to 2 packets per SRTT before packet 2 leaves.
        let sends = run_timers(&mut s, ms(2000));
        assert_eq!(sends, vec![ms(2000)]);
        assert!((s.ipg_s() - 0.05).abs() < 1e-12);
        assert_eq!(s.poll_timeout(), Some(ms(2050)));
    }

    #[test]
    fn srtt_and_deviation_use_gain_one_half() {
        let mut s = source(RapConfig::default());
        s.on_rtt_sample(0.1);
        s.on_rtt_sample(0.3);
        // srtt = 0.1 + 0.5·0.2 = 0.2; deviation = 0 + 0.5·(0.2 - 0) = 0.1.
        assert!((s.srtt_s() - 0.2).abs() < 1e-12);
        assert!((s.deviation - 0.1).abs() < 1e-12);
        assert!((s.timeout_s() - (1.2 * 0.2 + 4.0 * 0.1)).abs() < 1e-12);
        // Coarse grain leaves FRTT and XRTT alone.
        assert_eq!(s.frtt_xrtt_s(), (0.1, 0.1));
    }

    #[test]
    fn a_step_adds_one_packet_per_srtt_if_the_rate_was_used() {
        let mut s = source(RapConfig::default());
        s.on_rtt_sample(0.1);
        s.ipg = 0.01; // 100 packets/s
        s.sent_in_step = 10; // all the step allowed
        s.on_step_timer(Time::ZERO);
        // 1/IPG grows by alpha/SRTT = 10 packets/s.
        assert!((1.0 / s.ipg_s() - 110.0).abs() < 1e-9);
        // Fewer than half the allowed packets: no increase.
        s.sent_in_step = 5; // 5·(1/110)/0.1·100 = 45.5 % < 50 %
        s.on_step_timer(Time::ZERO);
        assert!((1.0 / s.ipg_s() - 110.0).abs() < 1e-9);
        assert_eq!(s.poll_timeout(), Some(ms(100)));
    }

    /// A source with a 100 ms initial gap whose first packet, sent at 0, is acked at 50 ms
    /// (SRTT = IPG = 50 ms).
    fn started(config: RapConfig) -> RapSource {
        let mut s = source(RapConfig {
            initial_ipg: Duration::from_millis(100),
            ..config
        });
        let mut out = Outbox::default();
        s.on_start(Time::ZERO, &mut out);
        s.handle_packet(ms(50), &ack(1, in_order(1)), &mut out);
        s
    }

    #[test]
    fn an_ack_based_loss_halves_the_rate_once_per_cluster() {
        // A long timeout keeps the timer-based detection out of the way.
        let mut s = started(RapConfig {
            mu: 100.0,
            ..RapConfig::default()
        });
        // Packets 2..=10 leave at 100, 150, ..., 500 ms.
        run_timers(&mut s, ms(500));
        assert_eq!(s.packets_sent(), 10);
        assert!((s.ipg_s() - 0.05).abs() < 1e-12);
        // Packets 2 and 3 are lost; 4, 5 arrive: at 5, packet 2 is 3 below and lost.
        let mut out = Outbox::default();
        let mut hole = in_order(1);
        for seq in [4, 5] {
            hole.on_arrival(seq);
            s.handle_packet(ms(600), &ack(seq, hole), &mut out);
        }
        assert_eq!((s.backoffs(), s.packets_lost()), (1, 1));
        assert!((s.ipg_s() - 0.1).abs() < 1e-12);
        // The step timer restarts: no increase for a full SRTT.
        let srtt_ns = (s.srtt_s() * 1e9).round() as u64;
        assert_eq!(
            s.step_timer.map(|t| t.at),
            Some(Time::from_nanos(ms(600).as_nanos() + srtt_ns))
        );
        // Packet 3 (at 6) and 7 (at 10) are lost too, but were sent before the backoff:
        // counted, no second backoff.
        for seq in [6, 8, 9, 10] {
            hole.on_arrival(seq);
            s.handle_packet(ms(650), &ack(seq, hole), &mut out);
        }
        assert_eq!((s.backoffs(), s.packets_lost()), (1, 3));
        assert!((s.ipg_s() - 0.1).abs() < 1e-12);
    }

    #[test]
    fn the_timer_detects_losses_when_acks_stop() {
        let mut s = started(RapConfig::default());
        assert!((s.timeout_s() - 0.06).abs() < 1e-12);
        // Packet 2 leaves at 100 ms, 3 at 150 ms; at 200 ms packet 2 is 100 ms old, past the
        // 60 ms timeout: a backoff instead of a packet.
        let sends = run_timers(&mut s, ms(200));
        assert_eq!(sends, vec![ms(100), ms(150)]);
        assert_eq!((s.backoffs(), s.packets_lost()), (1, 1));
        assert!((s.ipg_s() - 0.1).abs() < 1e-12);
        // At 300 ms packet 3 has timed out too, but it was in flight at the backoff: counted,
        // no second backoff, and a packet leaves.
        let sends = run_timers(&mut s, ms(300));
        assert_eq!(sends, vec![ms(300)]);
        assert_eq!((s.backoffs(), s.packets_lost()), (1, 2));
    }

    #[test]
    fn fine_grain_lengthens_the_gap_when_frtt_exceeds_xrtt() {
        let config = RapConfig {
            fine_grain: true,
            ..RapConfig::default()
        };
        let mut s = source(config);
        s.on_rtt_sample(0.1);
        assert_eq!(s.frtt_xrtt_s(), (0.1, 0.1));
        s.ipg = 0.01;
        assert!((s.gap_s() - 0.01).abs() < 1e-15);
        // A queue builds: the samples rise to 0.2 s.
        s.on_rtt_sample(0.2);
        let (frtt, xrtt) = s.frtt_xrtt_s();
        assert!((frtt - 0.19).abs() < 1e-12 && (xrtt - 0.101).abs() < 1e-12);
        assert!(s.gap_s() > 0.018, "{}", s.gap_s());
        // The IPG itself (and the traced rate) is unchanged; the timer uses the longer gap.
        assert_eq!(s.ipg_s(), 0.01);
        let mut out = Outbox::default();
        s.running = true;
        s.on_ipg_timer(Time::ZERO, &mut out);
        let gap = s.poll_timeout().unwrap();
        assert_eq!(gap.as_nanos(), (0.01 * frtt / xrtt * 1e9).round() as u64);
    }

    #[test]
    fn overhead_adds_a_uniform_delay_to_each_gap() {
        let config = RapConfig {
            overhead: Duration::from_millis(10),
            initial_ipg: Duration::from_millis(100),
            ..RapConfig::default()
        };
        let mut s = source(config);
        let mut out = Outbox::default();
        s.on_start(Time::ZERO, &mut out);
        let sends = run_timers(&mut s, ms(1500));
        let gaps: Vec<u64> = sends
            .windows(2)
            .map(|w| w[1].as_nanos() - w[0].as_nanos())
            .collect();
        assert!(gaps.len() > 5);
        assert!(
            gaps.iter()
                .all(|&g| (100_000_000..110_000_000).contains(&g)),
            "{gaps:?}"
        );
        assert!(gaps.windows(2).any(|w| w[0] != w[1]));
    }

    #[test]
    fn shared_first_sample_starts_later_sources_from_the_initial_srtt() {
        let config = RapConfig {
            shared_first_sample: true,
            ..RapConfig::default()
        };
        let flag = Arc::new(AtomicBool::new(false));
        let mut a = source(config.clone());
        let mut b = source(config);
        a.join_shared_first_sample(&flag);
        b.join_shared_first_sample(&flag);
        a.on_rtt_sample(0.1);
        b.on_rtt_sample(0.1);
        assert_eq!(a.srtt_s(), 0.1);
        // b starts from 2 s: 2 + 0.5·(0.1 - 2) = 1.05 s, deviation 0.95 s.
        assert!((b.srtt_s() - 1.05).abs() < 1e-12);
        assert!((b.deviation - 0.95).abs() < 1e-12);
        // Without the option each source takes its own first sample.
        let mut c = source(RapConfig::default());
        c.join_shared_first_sample(&flag);
        c.on_rtt_sample(0.1);
        assert_eq!(c.srtt_s(), 0.1);
    }

    /// A source of 3 packets, 10 ms apart, started at 0.
    fn three_packet_source(out: &mut Outbox) -> RapSource {
        let mut s = source(RapConfig {
            max_packets: Some(3),
            initial_ipg: Duration::from_millis(10),
            ..RapConfig::default()
        });
        s.on_start(Time::ZERO, out);
        s
    }

    #[test]
    fn max_packets_stops_after_the_last_ack() {
        let mut out = Outbox::default();
        let mut s = three_packet_source(&mut out);
        run_timers(&mut s, ms(50));
        assert_eq!(s.packets_sent(), 3);
        assert_eq!(s.unaccounted_packets(), 3);
        s.handle_packet(ms(60), &ack(3, in_order(3)), &mut out);
        assert_eq!(s.poll_timeout(), None);
    }

    /// RAP never retransmits: when the last packets are lost (declared so by the timer), the
    /// transfer is over too, and no timer keeps firing.
    #[test]
    fn max_packets_stops_when_the_last_packets_are_lost() {
        let mut out = Outbox::default();
        let mut s = three_packet_source(&mut out);
        run_timers(&mut s, ms(10_000));
        assert_eq!(s.packets_sent(), 3);
        assert_eq!(s.unaccounted_packets(), 0);
        assert_eq!(s.poll_timeout(), None);
    }

    #[test]
    fn stop_cancels_the_timers_and_start_resumes() {
        let mut s = source(RapConfig::default());
        let mut out = Outbox::default();
        s.on_start(Time::ZERO, &mut out);
        s.on_stop(ms(1), &mut out);
        assert_eq!(s.poll_timeout(), None);
        // A restart runs a step as ns-2's start() does: the packet sent before the stop was the
        // whole allowance of a 2 s gap, so the rate grows by one packet per SRTT.
        s.on_start(ms(5), &mut out);
        s.on_start(ms(6), &mut out);
        assert_eq!(out.packets().len(), 2);
        let mut values = vec![f64::NAN; s.trace_fields().len()];
        s.trace(&mut values);
        assert_eq!(&values[..2], &[512.0 * 8.0 / 1.0, 1.0]);
        assert_eq!(values[9], 2.0);
    }
}
