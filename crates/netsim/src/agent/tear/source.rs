//! The TEAR sender: paces data packets at the rate the receiver reports, measures the RTT by
//! timestamp echo (each data packet carries the estimate for the receiver's emulation), and,
//! with `nofeedback_halving`, halves its rate when feedback stops (yang2001 §IV's suggestion;
//! protocols.md §3 step 5).
//!
//! Before the first feedback it sends at `initial_rate`. The first feedback gives an RTT
//! sample; if it carries no rate yet (the receiver had no RTT to compute one), the sender
//! starts at `initial_window` packets per RTT, what a TCP sender would send. The rate never
//! falls below one packet per [`MAX_SEND_INTERVAL`]. The source is greedy: `on_stop` pauses it
//! and `on_start` resumes the same connection.

use std::time::Duration;

use tfrc::time::{duration_from_secs, duration_nanos};
use tfrc::Time;

use super::{TearConfig, TearData, TearFeedback, MAX_SEND_INTERVAL};
use crate::agent::{Agent, Outbox};
use crate::packet::{Packet, Payload};

/// The source's trace fields: rate in bits/s, RTT in seconds, counters cumulative.
const FIELDS: &[&str] = &[
    "rate_bps",
    "rtt_s",
    "packets_sent",
    "feedback_received",
    "nofeedback_halvings",
];

/// The nofeedback interval before the first RTT sample (RFC 5348 §4.2's 2 s).
const INITIAL_NOFEEDBACK: Duration = Duration::from_secs(2);

/// The sending end of a TEAR flow.
#[derive(Clone, Debug)]
pub struct TearSource {
    config: TearConfig,
    /// The sending rate X, bytes per second.
    rate: f64,
    /// The RTT estimate, seconds.
    rtt_s: Option<f64>,
    /// Whether the receiver has reported a rate yet.
    rate_reported: bool,
    started: bool,
    active: bool,
    seq: u64,
    last_send: Option<Time>,
    next_send: Option<Time>,
    nofeedback_at: Option<Time>,
    feedback_received: u64,
    nofeedback_halvings: u64,
}

impl TearSource {
    /// A source that waits for [`Agent::on_start`].
    pub fn new(config: &TearConfig) -> TearSource {
        TearSource {
            config: config.clone(),
            rate: config.initial_rate_bps as f64 / 8.0,
            rtt_s: None,
            rate_reported: false,
            started: false,
            active: false,
            seq: 0,
            last_send: None,
            next_send: None,
            nofeedback_at: None,
            feedback_received: 0,
            nofeedback_halvings: 0,
        }
    }

    /// The sending rate, bytes per second.
    pub fn rate_bytes_per_s(&self) -> f64 {
        self.rate
    }

    /// The RTT estimate in seconds, once measured.
    pub fn rtt_s(&self) -> Option<f64> {
        self.rtt_s
    }

    fn size(&self) -> f64 {
        f64::from(self.config.size_bytes)
    }

    /// Sets the rate, keeping it at one packet per [`MAX_SEND_INTERVAL`] at least, and moves
    /// the next send to one new gap after the last.
    fn set_rate(&mut self, now: Time, rate: f64) {
        let floor = self.size() / MAX_SEND_INTERVAL.as_secs_f64();
        self.rate = if rate.is_finite() {
            rate.max(floor)
        } else {
            self.rate
        };
        if self.active {
            self.next_send = Some(self.after_last(now));
        }
    }

    /// The gap between packets at the current rate (at least 1 ns).
    fn gap(&self) -> Duration {
        duration_from_secs(self.size() / self.rate).max(Duration::from_nanos(1))
    }

    /// One gap after the last packet, or now if that is past or nothing was sent.
    fn after_last(&self, now: Time) -> Time {
        self.last_send
            .map_or(now, |last| (last + self.gap()).max(now))
    }

    /// The nofeedback interval: max(k·RTT, two packet gaps), 2 s before an RTT is known.
    fn nofeedback_interval(&self) -> Duration {
        match self.rtt_s {
            None => INITIAL_NOFEEDBACK,
            Some(rtt) => {
                duration_from_secs(f64::from(self.config.nofeedback_rtts) * rtt).max(2 * self.gap())
            }
        }
    }

    fn arm_nofeedback(&mut self, now: Time) {
        self.nofeedback_at = self
            .config
            .nofeedback_halving
            .then(|| now + self.nofeedback_interval());
    }

    /// Sends every packet due by `now` (one per gap; the engine calls back at each deadline).
    fn pump(&mut self, now: Time, out: &mut Outbox) {
        while self.active && self.next_send.is_some_and(|t| t <= now) {
            let header = TearData {
                seq: self.seq,
                timestamp: now,
                rtt_ns: self
                    .rtt_s
                    .map_or(0, |r| duration_nanos(duration_from_secs(r))),
            };
            out.send(self.config.size_bytes, Payload::TearData(header));
            self.seq += 1;
            self.last_send = Some(now);
            self.next_send = Some(now + self.gap());
        }
    }

    fn on_feedback(&mut self, now: Time, feedback: &TearFeedback) {
        self.feedback_received += 1;
        let since = now.saturating_since(feedback.echo).as_secs_f64();
        let sample = since - feedback.echo_delay_ns as f64 * 1e-9;
        if sample > 0.0 {
            let q = self.config.rtt_ewma_q;
            self.rtt_s = Some(self.rtt_s.map_or(sample, |r| q * r + (1.0 - q) * sample));
        }
        if feedback.rate_bytes_per_s > 0.0 {
            self.rate_reported = true;
            self.set_rate(now, feedback.rate_bytes_per_s);
        } else if let (false, Some(rtt)) = (self.rate_reported, self.rtt_s) {
            self.set_rate(now, self.config.initial_window * self.size() / rtt);
        }
        self.arm_nofeedback(now);
    }
}

impl Agent for TearSource {
    /// `rate_bps`: the sending rate X, bits/s; `rtt_s`: the RTT estimate, s (0 before the
    /// first sample); `packets_sent`, `feedback_received`, `nofeedback_halvings`: cumulative.
    fn trace_fields(&self) -> &'static [&'static str] {
        FIELDS
    }

    fn on_start(&mut self, now: Time, out: &mut Outbox) {
        if self.active {
            return;
        }
        if !self.started {
            self.started = true;
            self.arm_nofeedback(now);
        }
        self.active = true;
        self.next_send = Some(self.after_last(now));
        self.pump(now, out);
    }

    fn on_stop(&mut self, _now: Time, _out: &mut Outbox) {
        self.active = false;
        self.next_send = None;
    }

    fn handle_packet(&mut self, now: Time, packet: &Packet, out: &mut Outbox) {
        if let Payload::TearFeedback(feedback) = &packet.payload {
            self.on_feedback(now, feedback);
            self.pump(now, out);
        }
    }

    fn poll_timeout(&self) -> Option<Time> {
        let send = self.next_send.filter(|_| self.active);
        match (send, self.nofeedback_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn handle_timeout(&mut self, now: Time, out: &mut Outbox) {
        if self.nofeedback_at.is_some_and(|t| t <= now) {
            self.nofeedback_halvings += 1;
            self.set_rate(now, self.rate / 2.0);
            self.nofeedback_at = Some(now + self.nofeedback_interval());
        }
        self.pump(now, out);
    }

    fn trace(&self, values: &mut [f64]) {
        let row = [
            8.0 * self.rate,
            self.rtt_s.unwrap_or(0.0),
            self.seq as f64,
            self.feedback_received as f64,
            self.nofeedback_halvings as f64,
        ];
        for (value, x) in values.iter_mut().zip(row) {
            *value = x;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{FlowId, NodeId};

    fn ms(n: u64) -> Time {
        Time::from_nanos(n * 1_000_000)
    }

    fn feedback_packet(rate: f64, echo: Time, delay_ms: u64) -> Packet {
        let mut p = Packet::new(
            FlowId(0),
            0,
            40,
            NodeId(0),
            Time::ZERO,
            Payload::TearFeedback(TearFeedback {
                rate_bytes_per_s: rate,
                echo,
                echo_delay_ns: delay_ms * 1_000_000,
            }),
        );
        p.reverse = true;
        p
    }

    fn sent(out: &Outbox) -> Vec<TearData> {
        out.packets()
            .iter()
            .filter_map(|p| match p.payload {
                Payload::TearData(d) => Some(d),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn starts_at_the_initial_rate_then_paces_at_the_reported_one() {
        let mut source = TearSource::new(&TearConfig::default());
        let mut out = Outbox::default();
        source.on_start(ms(0), &mut out);
        assert_eq!(sent(&out).len(), 1);
        assert_eq!(source.poll_timeout(), Some(ms(1000)));
        // Feedback without a rate: an RTT sample of 100 ms (110 - 0 - 10) and 1 packet/RTT,
        // so the next packet (one 100 ms gap after the first) is due at once.
        source.handle_packet(ms(110), &feedback_packet(0.0, ms(0), 10), &mut out);
        assert!((source.rtt_s().unwrap() - 0.1).abs() < 1e-12);
        assert!((source.rate_bytes_per_s() - 10_000.0).abs() < 1e-6);
        let data = sent(&out);
        assert_eq!(data.len(), 2);
        assert_eq!((data[1].seq, data[1].rtt_ns), (1, 100_000_000));
        assert_eq!(source.poll_timeout(), Some(ms(210)));
        // A reported rate of 100 packets/s: 10 ms gaps.
        source.handle_packet(ms(150), &feedback_packet(100_000.0, ms(110), 0), &mut out);
        assert_eq!(sent(&out).len(), 3);
        assert_eq!(source.poll_timeout(), Some(ms(160)));
        // The RTT EWMA: 0.9·100 + 0.1·40 ms.
        assert!((source.rtt_s().unwrap() - 0.094).abs() < 1e-12);
    }

    #[test]
    fn halves_when_feedback_stops_only_with_the_option() {
        for halving in [true, false] {
            let config = TearConfig {
                nofeedback_halving: halving,
                ..TearConfig::default()
            };
            let mut source = TearSource::new(&config);
            let mut out = Outbox::default();
            source.on_start(ms(0), &mut out);
            source.handle_packet(ms(100), &feedback_packet(100_000.0, ms(0), 0), &mut out);
            while let Some(now) = source.poll_timeout().filter(|&t| t < ms(2000)) {
                source.handle_timeout(now, &mut out);
            }
            let mut values = [0.0; 5];
            source.trace(&mut values);
            if halving {
                // 4 RTTs (400 ms) after the feedback, then every 400 ms (or two gaps).
                assert_eq!(values[4], 4.0, "{values:?}");
                assert_eq!(source.rate_bytes_per_s(), 100_000.0 / 16.0);
            } else {
                assert_eq!(values[4], 0.0);
                assert_eq!(source.rate_bytes_per_s(), 100_000.0);
            }
        }
    }

    #[test]
    fn stop_pauses_and_start_resumes_without_a_burst() {
        let mut source = TearSource::new(&TearConfig::default());
        let mut out = Outbox::default();
        source.on_start(ms(0), &mut out);
        source.handle_packet(ms(100), &feedback_packet(100_000.0, ms(0), 0), &mut out);
        source.handle_timeout(ms(100), &mut out);
        source.on_stop(ms(105), &mut out);
        assert_eq!(source.poll_timeout(), None);
        let before = sent(&out).len();
        source.on_start(ms(500), &mut out);
        assert_eq!(sent(&out).len(), before + 1);
        assert_eq!(source.poll_timeout(), Some(ms(510)));
    }
}
