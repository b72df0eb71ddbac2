//! Constant-bit-rate source with ns-2's semantics (`Application/Traffic/CBR` over a UDP agent;
//! protocols.md §6.2): packets of a fixed size every size·8/rate seconds, the first at the
//! application's start; with `random` each gap is drawn uniformly in [0.5, 1.5] intervals
//! (`random_`), keeping the mean; `max_packets` stops the source (`maxpkts_`).

use std::time::Duration;

use tfrc::time::duration_nanos;
use tfrc::Time;

use super::{Agent, Outbox};
use crate::packet::{Packet, Payload};
use crate::rng::{uniform, SimRng};
use crate::serialization::transmission_time;

/// CBR parameters. `Default` is ns-2's: 210 bytes at 448 kb/s, not randomized, unlimited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CbrConfig {
    /// Sending rate in bits per second (`rate_`), above 0.
    pub rate_bps: u64,
    /// Packet size in bytes (`packetSize_`), above 0.
    pub size_bytes: u32,
    /// Randomize each gap uniformly in [0.5, 1.5] intervals (`random_`).
    pub random: bool,
    /// Stop after this many packets (`maxpkts_`); `None` for no limit.
    pub max_packets: Option<u64>,
}

impl Default for CbrConfig {
    fn default() -> CbrConfig {
        CbrConfig {
            rate_bps: 448_000,
            size_bytes: 210,
            random: false,
            max_packets: None,
        }
    }
}

impl CbrConfig {
    /// The mean gap between packets: size·8/rate, rounded up to the nanosecond.
    pub fn interval(&self) -> Duration {
        transmission_time(self.size_bytes, self.rate_bps)
    }
}

/// A running CBR source.
#[derive(Clone, Debug)]
pub struct CbrSource {
    config: CbrConfig,
    interval_ns: u64,
    rng: SimRng,
    next_send: Option<Time>,
    sent: u64,
}

impl CbrSource {
    /// A source that waits for [`Agent::on_start`].
    pub fn new(config: &CbrConfig, rng: SimRng) -> CbrSource {
        CbrSource {
            config: *config,
            interval_ns: duration_nanos(config.interval()),
            rng,
            next_send: None,
            sent: 0,
        }
    }

    /// Packets sent so far.
    pub fn sent(&self) -> u64 {
        self.sent
    }

    /// Sends one packet and schedules the next (or stops at `max_packets`).
    fn send(&mut self, now: Time, out: &mut Outbox) {
        out.send(self.config.size_bytes, Payload::Cbr);
        self.sent += 1;
        if self.config.max_packets.is_some_and(|max| self.sent >= max) {
            self.next_send = None;
            return;
        }
        let gap = if self.config.random {
            let factor = 1.0 + (uniform(&mut self.rng) - 0.5);
            (self.interval_ns as f64 * factor).round() as u64
        } else {
            self.interval_ns
        };
        self.next_send = Some(Time::from_nanos(now.as_nanos().saturating_add(gap)));
    }
}

impl Agent for CbrSource {
    /// `packets_sent`: packets sent so far.
    fn trace_fields(&self) -> &'static [&'static str] {
        &["packets_sent"]
    }

    fn on_start(&mut self, now: Time, out: &mut Outbox) {
        if self.next_send.is_none() && self.config.max_packets.is_none_or(|max| self.sent < max) {
            self.send(now, out);
        }
    }

    fn on_stop(&mut self, _now: Time, _out: &mut Outbox) {
        self.next_send = None;
    }

    fn handle_packet(&mut self, _now: Time, _packet: &Packet, _out: &mut Outbox) {}

    fn poll_timeout(&self) -> Option<Time> {
        self.next_send
    }

    fn handle_timeout(&mut self, now: Time, out: &mut Outbox) {
        if self.next_send.is_some_and(|at| at <= now) {
            self.send(now, out);
        }
    }

    fn trace(&self, values: &mut [f64]) {
        if let Some(sent) = values.first_mut() {
            *sent = self.sent as f64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::stream;

    fn run(config: CbrConfig, until: Time) -> Vec<Time> {
        let mut source = CbrSource::new(&config, stream(1, "cbr"));
        let mut out = Outbox::default();
        let mut sends = Vec::new();
        source.on_start(Time::ZERO, &mut out);
        sends.extend(out.drain().map(|_| Time::ZERO));
        while let Some(at) = source.poll_timeout().filter(|&at| at <= until) {
            source.handle_timeout(at, &mut out);
            sends.extend(out.drain().map(|_| at));
        }
        sends
    }

    #[test]
    fn fixed_gaps_first_packet_at_start() {
        let config = CbrConfig {
            rate_bps: 8_000_000,
            size_bytes: 1000,
            ..CbrConfig::default()
        };
        assert_eq!(config.interval(), Duration::from_millis(1));
        let sends = run(config, Time::from_nanos(9_999_999));
        assert_eq!(sends.len(), 10);
        assert!(sends
            .iter()
            .enumerate()
            .all(|(i, t)| t.as_nanos() == i as u64 * 1_000_000));
    }

    #[test]
    fn random_gaps_keep_the_mean_within_half_an_interval() {
        let config = CbrConfig {
            rate_bps: 8_000_000,
            size_bytes: 1000,
            random: true,
            max_packets: None,
        };
        let sends = run(config, Time::from_nanos(10_000_000_000));
        let gaps: Vec<u64> = sends
            .windows(2)
            .map(|w| w[1].as_nanos() - w[0].as_nanos())
            .collect();
        assert!(gaps.iter().all(|&g| (500_000..=1_500_000).contains(&g)));
        let mean = gaps.iter().sum::<u64>() as f64 / gaps.len() as f64;
        assert!((mean - 1e6).abs() < 1e4, "{mean}");
        assert!(gaps.windows(2).any(|w| w[0] != w[1]));
    }

    #[test]
    fn max_packets_stops_and_stop_start_restarts_at_once() {
        let config = CbrConfig {
            max_packets: Some(3),
            ..CbrConfig::default()
        };
        assert_eq!(run(config, Time::from_nanos(1_000_000_000)).len(), 3);
        let mut source = CbrSource::new(&CbrConfig::default(), stream(1, "cbr"));
        let mut out = Outbox::default();
        source.on_start(Time::ZERO, &mut out);
        source.on_stop(Time::from_nanos(1), &mut out);
        assert_eq!(source.poll_timeout(), None);
        source.on_start(Time::from_nanos(7), &mut out);
        assert_eq!(out.packets().len(), 2);
        assert_eq!(source.sent(), 2);
        // A second start while running does not send twice.
        source.on_start(Time::from_nanos(8), &mut out);
        assert_eq!(out.packets().len(), 2);
    }
}
