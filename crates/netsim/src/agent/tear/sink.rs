//! The TEAR receiver: loss detection ([`Gaps`]), the window emulation ([`Emulation`]), the
//! emulated timeout and the feedback schedule (protocols.md §3; docs/tear.md).
//!
//! Each data packet is checked against the sequence space first. A packet after a pending gap
//! is what a TCP sender would see as a duplicate ACK: it confirms losses but does not grow the
//! window. A confirmed loss halves the emulated window (at most once per round); an in-order
//! packet is an ACK. With `timeout` on, a silence of RTO = max(timeout_rtts·RTT, min_timeout),
//! doubled after each expiry with `timeout_backoff`, is an emulated timeout, and the new rate
//! is fed back at once (otherwise nothing would carry it: nothing arrives to trigger feedback).

use std::time::Duration;

use tfrc::time::duration_from_secs;
use tfrc::Time;

use super::emulation::{Emulation, Reaction};
use super::gaps::Gaps;
use super::{FeedbackRule, TearConfig, TearFeedback, MAX_TIMEOUT};
use crate::agent::{Agent, Outbox};
use crate::packet::{Packet, Payload};

/// The sink's trace fields, prefixed `rx_` to keep them apart from the source's.
const FIELDS: &[&str] = &[
    "rx_rate_bps",
    "rx_cwnd",
    "rx_ssthresh",
    "rx_rtt_s",
    "rx_rounds",
    "rx_epochs",
    "rx_loss_reactions",
    "rx_timeouts",
    "rx_packets_lost",
    "rx_feedback_sent",
];

/// The receiving end of a TEAR flow.
#[derive(Clone, Debug)]
pub struct TearSink {
    config: TearConfig,
    gaps: Gaps,
    emulation: Emulation,
    /// When the latest data packet arrived, and the send timestamp it carried.
    last_arrival: Option<(Time, Time)>,
    /// Emulated timeouts since the last arrival (the RTO backoff exponent).
    backoff: u32,
    timeout_at: Option<Time>,
    /// The next per-RTT feedback opportunity (`FeedbackRule::PerRtt`).
    feedback_at: Option<Time>,
    last_feedback: Option<Time>,
    arrivals_since_feedback: u64,
    packets_lost: u64,
    feedback_sent: u64,
}

impl TearSink {
    /// A sink for `config`, before any arrival.
    pub fn new(config: &TearConfig) -> TearSink {
        TearSink {
            config: config.clone(),
            gaps: Gaps::new(config.dupthresh),
            emulation: Emulation::new(config),
            last_arrival: None,
            backoff: 0,
            timeout_at: None,
            feedback_at: None,
            last_feedback: None,
            arrivals_since_feedback: 0,
            packets_lost: 0,
            feedback_sent: 0,
        }
    }

    /// The window emulation (for tests and traces).
    pub fn emulation(&self) -> &Emulation {
        &self.emulation
    }

    /// The rate X the receiver would report now, bytes per second (0 while no RTT is known).
    pub fn rate_bytes_per_s(&self) -> f64 {
        self.emulation
            .rate_packets_per_s()
            .map_or(0.0, |x| x * f64::from(self.config.size_bytes))
    }

    /// The emulated RTO after `backoff` expiries, `None` while no RTT is known.
    fn rto(&self, backoff: u32) -> Option<Duration> {
        let rtt = self.emulation.rtt_s()?;
        let base = duration_from_secs(self.config.timeout_rtts * rtt).max(self.config.min_timeout);
        let factor = 1u32 << backoff.min(16);
        Some(base.saturating_mul(factor).min(MAX_TIMEOUT))
    }

    fn rtt(&self) -> Option<Duration> {
        self.emulation.rtt_s().map(duration_from_secs)
    }

    fn send_feedback(&mut self, now: Time, out: &mut Outbox) {
        let (arrived, timestamp) = self.last_arrival.unwrap_or((now, Time::ZERO));
        let delay = now.saturating_since(arrived);
        out.send(
            self.config.feedback_size_bytes,
            Payload::TearFeedback(TearFeedback {
                rate_bytes_per_s: self.rate_bytes_per_s(),
                echo: timestamp,
                echo_delay_ns: tfrc::time::duration_nanos(delay),
            }),
        );
        self.feedback_sent += 1;
        self.arrivals_since_feedback = 0;
        self.last_feedback = Some(now);
        self.feedback_at = match self.config.feedback {
            FeedbackRule::PerRtt => self.rtt().map(|rtt| now + rtt),
            FeedbackRule::PerRound => None,
        };
    }
}

impl Agent for TearSink {
    /// `rx_rate_bps`: the rate X the receiver computes, bits/s; `rx_cwnd`, `rx_ssthresh`: the
    /// emulated window and threshold, packets (ssthresh +inf before the first loss);
    /// `rx_rtt_s`: the RTT in use (the sender's estimate), s; `rx_rounds`, `rx_epochs`,
    /// `rx_loss_reactions`, `rx_timeouts`, `rx_packets_lost`, `rx_feedback_sent`: cumulative
    /// counts (epochs closed, window halvings, emulated timeouts, packets confirmed lost,
    /// feedback packets).
    fn trace_fields(&self) -> &'static [&'static str] {
        FIELDS
    }

    fn on_start(&mut self, _now: Time, _out: &mut Outbox) {}

    fn on_stop(&mut self, _now: Time, _out: &mut Outbox) {}

    fn handle_packet(&mut self, now: Time, packet: &Packet, out: &mut Outbox) {
        let Payload::TearData(header) = &packet.payload else {
            return;
        };
        let arrival = self.gaps.on_arrival(header.seq);
        if arrival.duplicate {
            return;
        }
        self.emulation.set_rtt(header.rtt_ns as f64 * 1e-9);
        self.last_arrival = Some((now, header.timestamp));
        self.arrivals_since_feedback += 1;
        self.backoff = 0;
        let highest = self.gaps.next().saturating_sub(1);
        let mut changed = false;
        if let Some(lost) = arrival.lost {
            self.packets_lost += lost.count;
            let reaction = self
                .emulation
                .on_loss(now, lost, highest, self.config.timeout);
            changed = reaction != Reaction::Ignored;
        } else if !arrival.pending {
            changed = self.emulation.on_ack(now, header.seq);
        }
        self.timeout_at = if self.config.timeout {
            self.rto(0).map(|rto| now + rto)
        } else {
            None
        };
        let due = match (self.config.feedback, self.rtt(), self.last_feedback) {
            // The first packet, or no RTT yet: answer at once, so the sender gets its RTT.
            (_, None, _) | (_, _, None) => true,
            (FeedbackRule::PerRound, _, _) => changed,
            (FeedbackRule::PerRtt, Some(rtt), Some(last)) => {
                let next = *self.feedback_at.get_or_insert((last + rtt).max(now));
                next <= now
            }
        };
        if due {
            self.send_feedback(now, out);
        }
    }

    fn poll_timeout(&self) -> Option<Time> {
        match (self.timeout_at, self.feedback_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn handle_timeout(&mut self, now: Time, out: &mut Outbox) {
        if self.timeout_at.is_some_and(|t| t <= now) {
            self.emulation
                .on_timeout(now, self.gaps.next().saturating_sub(1));
            if self.config.timeout_backoff {
                self.backoff += 1;
            }
            self.timeout_at = self.rto(self.backoff).map(|rto| now + rto);
            self.send_feedback(now, out);
        }
        if self.feedback_at.is_some_and(|t| t <= now) {
            if self.arrivals_since_feedback > 0 {
                self.send_feedback(now, out);
            } else {
                // Nothing new to report: wait for the next arrival.
                self.feedback_at = None;
            }
        }
    }

    fn trace(&self, values: &mut [f64]) {
        let stats = self.emulation.stats();
        let row = [
            8.0 * self.rate_bytes_per_s(),
            self.emulation.cwnd(),
            self.emulation.ssthresh(),
            self.emulation.rtt_s().unwrap_or(0.0),
            stats.rounds as f64,
            stats.epochs_closed as f64,
            stats.loss_reactions as f64,
            stats.timeouts as f64,
            self.packets_lost as f64,
            self.feedback_sent as f64,
        ];
        for (value, x) in values.iter_mut().zip(row) {
            *value = x;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::tear::TearData;
    use crate::packet::{FlowId, NodeId};

    const RTT_NS: u64 = 100_000_000;

    fn data(seq: u64, at_ms: u64) -> (Time, Packet) {
        let now = Time::from_nanos(at_ms * 1_000_000 + 50_000_000);
        let header = TearData {
            seq,
            timestamp: Time::from_nanos(at_ms * 1_000_000),
            rtt_ns: RTT_NS,
        };
        let packet = Packet::new(
            FlowId(0),
            seq,
            1000,
            NodeId(1),
            header.timestamp,
            Payload::TearData(header),
        );
        (now, packet)
    }

    fn feedback(out: &Outbox) -> Vec<TearFeedback> {
        out.packets()
            .iter()
            .filter_map(|p| match p.payload {
                Payload::TearFeedback(f) => Some(f),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn first_packet_is_answered_at_once_then_once_per_rtt() {
        let mut sink = TearSink::new(&TearConfig::default());
        let mut out = Outbox::default();
        let (now, p) = data(0, 0);
        sink.handle_packet(now, &p, &mut out);
        let f = feedback(&out);
        assert_eq!(f.len(), 1);
        assert_eq!((f[0].echo, f[0].echo_delay_ns), (Time::ZERO, 0));
        assert_eq!(
            f[0].rate_bytes_per_s, 20_000.0,
            "cwnd 2 after one ACK, per 100 ms"
        );
        // Packets every 10 ms: feedback again only once 100 ms have passed.
        let mut out = Outbox::default();
        for i in 1..10 {
            let (now, p) = data(i, 10 * i);
            sink.handle_packet(now, &p, &mut out);
        }
        assert!(feedback(&out).is_empty());
        assert_eq!(sink.poll_timeout().map(|t| t.as_nanos()), Some(150_000_000));
        sink.handle_timeout(Time::from_nanos(150_000_000), &mut out);
        let f = feedback(&out);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].echo, Time::from_nanos(90_000_000));
        assert_eq!(f[0].echo_delay_ns, 10_000_000);
    }

    #[test]
    fn a_silence_is_a_timeout_with_backoff_and_feedback_and_none_without_the_option() {
        for timeout in [true, false] {
            let config = TearConfig {
                timeout,
                ..TearConfig::default()
            };
            let mut sink = TearSink::new(&config);
            let mut out = Outbox::default();
            for i in 0..40 {
                let (now, p) = data(i, 10 * i);
                sink.handle_packet(now, &p, &mut out);
            }
            let before = sink.rate_bytes_per_s();
            let mut out = Outbox::default();
            let mut expiries = Vec::new();
            while let Some(t) = sink.poll_timeout() {
                if t.as_nanos() > 20_000_000_000 {
                    break;
                }
                sink.handle_timeout(t, &mut out);
                if sink.emulation().stats().timeouts > expiries.len() as u64 {
                    expiries.push(t.as_nanos() / 1_000_000);
                }
            }
            if timeout {
                // Last arrival at 440 ms; RTO 400 ms, then 800, 1600, ...
                assert_eq!(expiries[..4], [840, 1640, 3240, 6440]);
                // One per-RTT report of the last arrivals, then one per expiry.
                assert_eq!(feedback(&out).len(), expiries.len() + 1);
                assert!(sink.rate_bytes_per_s() < before);
            } else {
                assert!(expiries.is_empty());
                assert_eq!(feedback(&out).len(), 1);
                assert_eq!(sink.rate_bytes_per_s(), before);
            }
        }
    }

    #[test]
    fn a_gap_confirmed_by_three_packets_halves_the_window() {
        let mut sink = TearSink::new(&TearConfig {
            feedback: FeedbackRule::PerRound,
            ..TearConfig::default()
        });
        let mut out = Outbox::default();
        for i in (0..20).filter(|&i| i != 15) {
            let (now, p) = data(i, 10 * i);
            sink.handle_packet(now, &p, &mut out);
        }
        let e = sink.emulation();
        assert_eq!(e.stats().loss_reactions, 1);
        // 15 in-order arrivals took cwnd to 16; halved to 8; 19 is a new ACK: 8 + 1/8.
        assert_eq!(e.ssthresh(), 8.0);
        assert_eq!(e.cwnd(), 8.125);
        let mut values = vec![0.0; FIELDS.len()];
        sink.trace(&mut values);
        assert_eq!(values[8], 1.0, "packets lost");
        // Per-round feedback: the first packet, 3 slow-start round ends and the halving.
        assert_eq!(values[9], 5.0);
    }

    proptest::proptest! {
        /// Under any drop pattern of in-order traffic: every dropped packet followed by three
        /// arrivals is counted lost, each reaction closes one epoch, the window stays at least
        /// one packet and the reported rate positive and finite.
        #[test]
        fn bookkeeping_holds_under_any_drop_pattern(
            dropped in proptest::collection::vec(proptest::bool::weighted(0.1), 1..400)
        ) {
            let mut sink = TearSink::new(&TearConfig::default());
            let mut out = Outbox::default();
            let arrived: Vec<u64> = (0..dropped.len() as u64)
                .filter(|&i| !dropped[i as usize])
                .collect();
            for &i in &arrived {
                let (now, p) = data(i, 10 * i);
                sink.handle_packet(now, &p, &mut out);
                let e = sink.emulation();
                proptest::prop_assert!(e.cwnd() >= 1.0);
                let rate = sink.rate_bytes_per_s();
                proptest::prop_assert!(rate.is_finite() && rate > 0.0);
            }
            let confirmed = (0..dropped.len())
                .filter(|&i| dropped[i] && arrived.iter().filter(|&&a| a > i as u64).count() >= 3)
                .count();
            let mut values = vec![0.0; FIELDS.len()];
            sink.trace(&mut values);
            proptest::prop_assert_eq!(values[8], confirmed as f64);
            let stats = sink.emulation().stats();
            proptest::prop_assert_eq!(stats.epochs_closed, stats.loss_reactions + stats.timeouts);
        }
    }
}
