//! A ping-like probe (after ns-2's `Agent/Ping`, `apps/ping.cc`): the source sends a small probe
//! every `interval`, the sink echoes each one at once with the same size, and the source measures
//! each echo's round-trip time (propagation, serialization and queueing both ways) and counts the
//! probes whose echo is not back within `timeout` as lost. rhee2005 runs such a probe (a ping
//! every 100 ms) to watch the bottleneck's queueing delay.
//!
//! ns-2's agent sends one probe per Tcl `send` command; here the source schedules them itself:
//! the first at the application's start, then one every interval (the CBR schedule).

use std::collections::VecDeque;
use std::time::Duration;

use tfrc::time::duration_nanos;
use tfrc::Time;

use super::{Agent, Outbox};
use crate::packet::{Packet, Payload};

/// Probe parameters. `Default`: 64-byte probes (ns-2's `Agent/Ping` `packetSize_`) every 100 ms
/// (rhee2005), lost when not echoed within 2 s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PingConfig {
    /// Probe (and echo) size in bytes, above 0.
    pub size_bytes: u32,
    /// Time between probes, above 0.
    pub interval: Duration,
    /// A probe whose echo has not come back this long after it was sent counts as lost; above 0.
    pub timeout: Duration,
}

impl Default for PingConfig {
    fn default() -> PingConfig {
        PingConfig {
            size_bytes: 64,
            interval: Duration::from_millis(100),
            timeout: Duration::from_secs(2),
        }
    }
}

impl PingConfig {
    /// Checks the ranges the probe needs; the error names the scenario key.
    pub fn validate(&self) -> Result<(), PingConfigError> {
        let error = |field, reason| Err(PingConfigError { field, reason });
        if self.size_bytes == 0 {
            return error("size", "a packet size above 0");
        }
        if self.interval.is_zero() {
            return error("interval", "a duration above 0");
        }
        if self.timeout.is_zero() {
            return error("timeout", "a duration above 0");
        }
        Ok(())
    }
}

/// A [`PingConfig`] outside its documented ranges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PingConfigError {
    /// The field's scenario key ("interval", ...).
    pub field: &'static str,
    /// What it must be.
    pub reason: &'static str,
}

impl std::fmt::Display for PingConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: expected {}", self.field, self.reason)
    }
}

impl std::error::Error for PingConfigError {}

/// The header of a probe and of its echo (ns-2's `hdr_ping`: the echo carries the probe's send
/// time back).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PingHeader {
    /// The probe's number, from 0.
    pub probe: u64,
    /// When the source sent the probe.
    pub sent_at: Time,
}

/// A running probe source.
#[derive(Clone, Debug)]
pub struct PingSource {
    config: PingConfig,
    interval_ns: u64,
    timeout_ns: u64,
    next_send: Option<Time>,
    /// Every probe from the oldest one neither echoed nor declared lost to the latest sent,
    /// oldest first: probe number `first_outstanding + i` at index `i`, so that an echo finds
    /// its probe in constant time however many lost probes lie before it. The front is never
    /// an echoed probe (those are dropped from the front as soon as they get there), so its
    /// deadline is the loss timer's.
    outstanding: VecDeque<Sent>,
    /// The probe number of `outstanding[0]`.
    first_outstanding: u64,
    /// How many of `outstanding` are not echoed.
    pending: u64,
    stats: PingStats,
}

/// A probe in [`PingSource`]'s window.
#[derive(Clone, Copy, Debug)]
struct Sent {
    sent_at: Time,
    echoed: bool,
}

/// What a probe source has measured so far (every count cumulative; RTTs in seconds).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PingStats {
    /// Probes sent.
    pub probes_sent: u64,
    /// Echoes received, late ones included.
    pub echoes_received: u64,
    /// Probes whose echo had not come back `timeout` after they were sent.
    pub lost: u64,
    /// Echoes of probes already counted as lost (they still give an RTT sample).
    pub late: u64,
    /// The latest RTT sample, in seconds (0 before the first).
    pub rtt_s: f64,
    /// The sum of every RTT sample, in seconds: the mean over any span is the difference of
    /// this sum over the difference of `echoes_received`.
    pub rtt_sum_s: f64,
    /// The smallest RTT sample so far, in seconds (0 before the first).
    pub rtt_min_s: f64,
    /// The largest RTT sample so far, in seconds (0 before the first).
    pub rtt_max_s: f64,
}

impl PingSource {
    /// A source that waits for [`Agent::on_start`].
    pub fn new(config: &PingConfig) -> PingSource {
        PingSource {
            config: *config,
            interval_ns: duration_nanos(config.interval),
            timeout_ns: duration_nanos(config.timeout),
            next_send: None,
            outstanding: VecDeque::new(),
            first_outstanding: 0,
            pending: 0,
            stats: PingStats::default(),
        }
    }

    /// What the probe has measured so far.
    pub fn stats(&self) -> &PingStats {
        &self.stats
    }

    /// Sends probe number `probes_sent` and schedules the next.
    fn send(&mut self, now: Time, out: &mut Outbox) {
        let header = PingHeader {
            probe: self.stats.probes_sent,
            sent_at: now,
        };
        out.send(self.config.size_bytes, Payload::Ping(header));
        if self.outstanding.is_empty() {
            self.first_outstanding = header.probe;
        }
        self.outstanding.push_back(Sent {
            sent_at: now,
            echoed: false,
        });
        self.pending += 1;
        self.stats.probes_sent += 1;
        self.next_send = Some(Time::from_nanos(
            now.as_nanos().saturating_add(self.interval_ns),
        ));
    }

    /// When the oldest outstanding probe times out.
    fn loss_deadline(&self) -> Option<Time> {
        self.outstanding
            .front()
            .map(|p| Time::from_nanos(p.sent_at.as_nanos().saturating_add(self.timeout_ns)))
    }

    /// Drops the front probe (echoed, or lost now), then every echoed probe behind it.
    fn pop_front(&mut self) {
        self.outstanding.pop_front();
        self.first_outstanding += 1;
        while self.outstanding.front().is_some_and(|p| p.echoed) {
            self.outstanding.pop_front();
            self.first_outstanding += 1;
        }
    }

    /// Marks probe `probe` echoed; false when it is not outstanding (lost already, or echoed
    /// before).
    fn take(&mut self, probe: u64) -> bool {
        let Some(i) = probe
            .checked_sub(self.first_outstanding)
            .and_then(|i| usize::try_from(i).ok())
        else {
            return false;
        };
        match self.outstanding.get_mut(i) {
            Some(p) if !p.echoed => p.echoed = true,
            _ => return false,
        }
        self.pending -= 1;
        if i == 0 {
            self.pop_front();
        }
        true
    }

    /// Records one RTT sample.
    fn on_sample(&mut self, rtt: Duration) {
        let s = &mut self.stats;
        let rtt_s = rtt.as_secs_f64();
        if s.echoes_received == 0 {
            s.rtt_min_s = rtt_s;
            s.rtt_max_s = rtt_s;
        } else {
            s.rtt_min_s = s.rtt_min_s.min(rtt_s);
            s.rtt_max_s = s.rtt_max_s.max(rtt_s);
        }
        s.echoes_received += 1;
        s.rtt_s = rtt_s;
        s.rtt_sum_s += rtt_s;
    }
}

impl Agent for PingSource {
    /// The fields of [`PingStats`]: `probes_sent`, `echoes_received`, `lost`, `late` (counts so
    /// far), `rtt_s` (the latest sample, carried over bins without one; 0 before the first),
    /// `rtt_sum_s` (for exact per-bin means), `rtt_min_s`, `rtt_max_s` (so far; 0 before the
    /// first sample).
    fn trace_fields(&self) -> &'static [&'static str] {
        &[
            "probes_sent",
            "echoes_received",
            "lost",
            "late",
            "rtt_s",
            "rtt_sum_s",
            "rtt_min_s",
            "rtt_max_s",
        ]
    }

    /// Sends the first probe at once (a start while running changes nothing).
    fn on_start(&mut self, now: Time, out: &mut Outbox) {
        if self.next_send.is_none() {
            self.send(now, out);
        }
    }

    /// Stops probing; probes in flight are still echoed, or time out.
    fn on_stop(&mut self, _now: Time, _out: &mut Outbox) {
        self.next_send = None;
    }

    fn handle_packet(&mut self, now: Time, packet: &Packet, _out: &mut Outbox) {
        let Payload::PingEcho(echo) = packet.payload else {
            return;
        };
        if !self.take(echo.probe) {
            self.stats.late += 1;
        }
        self.on_sample(now.saturating_since(echo.sent_at));
    }

    fn poll_timeout(&self) -> Option<Time> {
        match (self.next_send, self.loss_deadline()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn handle_timeout(&mut self, now: Time, out: &mut Outbox) {
        while self.loss_deadline().is_some_and(|at| at <= now) {
            self.pop_front();
            self.pending -= 1;
            self.stats.lost += 1;
        }
        if self.next_send.is_some_and(|at| at <= now) {
            self.send(now, out);
        }
    }

    fn trace(&self, values: &mut [f64]) {
        let s = &self.stats;
        let all = [
            s.probes_sent as f64,
            s.echoes_received as f64,
            s.lost as f64,
            s.late as f64,
            s.rtt_s,
            s.rtt_sum_s,
            s.rtt_min_s,
            s.rtt_max_s,
        ];
        for (value, v) in values.iter_mut().zip(all) {
            *value = v;
        }
    }
}

/// The echoing end: returns every probe at once, with the probe's size and header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PingSink;

impl Agent for PingSink {
    fn trace_fields(&self) -> &'static [&'static str] {
        &[]
    }

    fn on_start(&mut self, _now: Time, _out: &mut Outbox) {}

    fn on_stop(&mut self, _now: Time, _out: &mut Outbox) {}

    fn handle_packet(&mut self, _now: Time, packet: &Packet, out: &mut Outbox) {
        if let Payload::Ping(header) = packet.payload {
            out.send(packet.size_bytes, Payload::PingEcho(header));
        }
    }

    fn poll_timeout(&self) -> Option<Time> {
        None
    }

    fn handle_timeout(&mut self, _now: Time, _out: &mut Outbox) {}

    fn trace(&self, _values: &mut [f64]) {}
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::Outgoing;
    use super::*;
    use crate::packet::{FlowId, NodeId};

    fn packet(size_bytes: u32, payload: Payload) -> Packet {
        Packet::new(FlowId(0), 0, size_bytes, NodeId(0), Time::ZERO, payload)
    }

    /// Runs a source whose probes are echoed after `rtt(probe)` (or lost when it gives `None`)
    /// until `until`; returns the source.
    fn run(config: PingConfig, until: Time, rtt: impl Fn(u64) -> Option<u64>) -> PingSource {
        let mut source = PingSource::new(&config);
        let mut sink = PingSink;
        let mut out = Outbox::default();
        let mut echoes: Vec<(Time, Packet)> = Vec::new();
        let mut now = Time::ZERO;
        source.on_start(now, &mut out);
        loop {
            let sent: Vec<Outgoing> = out.drain().collect();
            for o in sent {
                let Payload::Ping(h) = o.payload else {
                    panic!("a probe")
                };
                assert_eq!(o.size_bytes, config.size_bytes);
                if let Some(delay) = rtt(h.probe) {
                    let mut sink_out = Outbox::default();
                    sink.handle_packet(now, &packet(o.size_bytes, o.payload), &mut sink_out);
                    let echo = sink_out.drain().next().unwrap();
                    assert_eq!(echo.size_bytes, o.size_bytes);
                    let at = Time::from_nanos(now.as_nanos() + delay);
                    echoes.push((at, packet(echo.size_bytes, echo.payload)));
                }
            }
            echoes.sort_by_key(|(at, _)| *at);
            let timer = source.poll_timeout();
            let next_echo = echoes.first().map(|(at, _)| *at);
            let Some(next) = [timer, next_echo].into_iter().flatten().min() else {
                break;
            };
            if next > until {
                break;
            }
            now = next;
            if next_echo == Some(next) {
                let (_, echo) = echoes.remove(0);
                source.handle_packet(now, &echo, &mut out);
            } else {
                source.handle_timeout(now, &mut out);
            }
        }
        source
    }

    #[test]
    fn measures_each_echo_and_schedules_probes_every_interval() {
        let config = PingConfig::default();
        // RTT 30 ms + 1 ms per probe number.
        let source = run(config, Time::from_nanos(950_000_000), |p| {
            Some(30_000_000 + p * 1_000_000)
        });
        let s = source.stats();
        // Probes at 0, 100, ..., 900 ms; echoes of all but the last (back at 939 ms: in).
        assert_eq!(s.probes_sent, 10);
        assert_eq!(s.echoes_received, 10);
        assert_eq!((s.lost, s.late), (0, 0));
        assert!((s.rtt_s - 0.039).abs() < 1e-12);
        assert!((s.rtt_min_s - 0.030).abs() < 1e-12);
        assert!((s.rtt_max_s - 0.039).abs() < 1e-12);
        assert!((s.rtt_sum_s - 0.345).abs() < 1e-12);
        assert_eq!(source.poll_timeout(), Some(Time::from_nanos(1_000_000_000)));
    }

    #[test]
    fn unanswered_probes_are_lost_after_the_timeout_and_late_echoes_still_count() {
        let config = PingConfig {
            timeout: Duration::from_millis(250),
            ..PingConfig::default()
        };
        // Every third probe is dropped; probe 4 comes back after 300 ms (late).
        let source = run(config, Time::from_nanos(1_999_999_999), |p| match p {
            _ if p % 3 == 0 => None,
            4 => Some(300_000_000),
            _ => Some(10_000_000),
        });
        let s = source.stats();
        assert_eq!(s.probes_sent, 20);
        // Dropped: 0, 3, ..., 18; all but 18 (sent at 1.8 s, due at 2.05 s) have timed out by
        // the end, and so has probe 4 (due at 650 ms, echoed at 700 ms).
        assert_eq!(s.lost, 6 + 1);
        assert_eq!(s.late, 1);
        // 13 probes were echoed; the one of probe 19 (1.91 s) is in.
        assert_eq!(s.echoes_received, 13);
        assert!((s.rtt_max_s - 0.3).abs() < 1e-12);
        assert!((s.rtt_min_s - 0.01).abs() < 1e-12);
    }

    #[test]
    fn stop_ends_probing_but_not_the_loss_timer() {
        let mut source = PingSource::new(&PingConfig::default());
        let mut out = Outbox::default();
        source.on_start(Time::ZERO, &mut out);
        source.on_start(Time::from_nanos(1), &mut out);
        assert_eq!(out.drain().count(), 1);
        source.on_stop(Time::from_nanos(2), &mut out);
        assert_eq!(source.poll_timeout(), Some(Time::from_nanos(2_000_000_000)));
        source.handle_timeout(Time::from_nanos(2_000_000_000), &mut out);
        assert_eq!(source.stats().lost, 1);
        assert_eq!(source.poll_timeout(), None);
        let mut values = [f64::NAN; 8];
        source.trace(&mut values);
        assert_eq!(values, [1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    }

    #[test]
    fn the_sink_echoes_only_probes() {
        let mut out = Outbox::default();
        PingSink.handle_packet(Time::ZERO, &packet(1000, Payload::Cbr), &mut out);
        assert!(out.packets().is_empty());
        let header = PingHeader {
            probe: 7,
            sent_at: Time::from_nanos(5),
        };
        PingSink.handle_packet(Time::ZERO, &packet(80, Payload::Ping(header)), &mut out);
        assert_eq!(out.packets()[0].payload, Payload::PingEcho(header));
        assert_eq!(out.packets()[0].size_bytes, 80);
    }

    #[test]
    fn validate_names_the_field() {
        let base = PingConfig::default();
        assert_eq!(base.validate(), Ok(()));
        let field = |c: PingConfig| c.validate().unwrap_err().field;
        assert_eq!(
            field(PingConfig {
                size_bytes: 0,
                ..base
            }),
            "size"
        );
        assert_eq!(
            field(PingConfig {
                interval: Duration::ZERO,
                ..base
            }),
            "interval"
        );
        assert_eq!(
            field(PingConfig {
                timeout: Duration::ZERO,
                ..base
            }),
            "timeout"
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Whatever is dropped or delayed, every probe is exactly one of: echoed in time, lost
        /// (and perhaps echoed late), or still outstanding; the RTT statistics bound each other.
        #[test]
        fn every_probe_is_echoed_lost_or_outstanding(
            interval_ms in 1u64..200,
            timeout_ms in 1u64..500,
            delays in proptest::collection::vec(proptest::option::of(0u64..600), 1..60),
        ) {
            let config = PingConfig {
                interval: Duration::from_millis(interval_ms),
                timeout: Duration::from_millis(timeout_ms),
                ..PingConfig::default()
            };
            let until = Time::from_nanos(interval_ms * 1_000_000 * delays.len() as u64);
            let n = delays.len() as u64;
            let source = run(config, until, |p| delays[(p % n) as usize].map(|d| d * 1_000_000));
            let s = *source.stats();
            let outstanding = source.pending;
            prop_assert_eq!(outstanding, source.outstanding.iter().filter(|p| !p.echoed).count() as u64);
            prop_assert!(source.outstanding.front().is_none_or(|p| !p.echoed));
            prop_assert_eq!(s.probes_sent, s.echoes_received - s.late + s.lost + outstanding);
            prop_assert!(s.late <= s.lost);
            if s.echoes_received > 0 {
                prop_assert!(s.rtt_min_s <= s.rtt_s && s.rtt_s <= s.rtt_max_s);
                let mean = s.rtt_sum_s / s.echoes_received as f64;
                prop_assert!(s.rtt_min_s <= mean + 1e-12 && mean <= s.rtt_max_s + 1e-12);
            } else {
                prop_assert_eq!((s.rtt_s, s.rtt_sum_s, s.rtt_min_s, s.rtt_max_s), (0.0, 0.0, 0.0, 0.0));
            }
        }
    }
}
