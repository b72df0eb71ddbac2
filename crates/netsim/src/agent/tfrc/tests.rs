//! The source and sink driven by hand over a fixed-delay channel with a synthetic clock.

use std::collections::VecDeque;
use std::time::Duration;

use super::*;
use crate::agent::{Agent, Outbox, Outgoing};
use crate::packet::{FlowId, NodeId, Packet, Payload};
use crate::rng::stream;
use crate::Time;

const MS: u64 = 1_000_000;

fn at_ms(ms: u64) -> Time {
    Time::from_nanos(ms * MS)
}

/// A source and a sink joined by a channel with a one-way delay of 50 ms each way, no
/// bandwidth limit, and a drop rule for data packets (by TFRC sequence number).
struct Pair {
    source: TfrcSource,
    sink: TfrcSink,
    now: Time,
    forward: VecDeque<(Time, Packet)>,
    backward: VecDeque<(Time, Packet)>,
    drop_data: Box<dyn Fn(u64) -> bool>,
    mark_data: Box<dyn Fn(u64) -> bool>,
    sent: Vec<(Time, Outgoing)>,
    out: Outbox,
}

impl Pair {
    fn new(config: &TfrcAgentConfig, seed: u64) -> Pair {
        Pair {
            source: TfrcSource::new(config, stream(seed, "source")),
            sink: TfrcSink::new(config),
            now: Time::ZERO,
            forward: VecDeque::new(),
            backward: VecDeque::new(),
            drop_data: Box::new(|_| false),
            mark_data: Box::new(|_| false),
            sent: Vec::new(),
            out: Outbox::default(),
        }
    }

    fn packet(now: Time, outgoing: Outgoing, reverse: bool) -> Packet {
        let mut packet = Packet::new(
            FlowId(0),
            0,
            outgoing.size_bytes,
            NodeId(u32::from(!reverse)),
            now,
            outgoing.payload,
        );
        packet.reverse = reverse;
        packet.ecn_capable = outgoing.ecn_capable;
        packet
    }

    /// Puts what the source just sent on the forward channel.
    fn take_source_output(&mut self) {
        let now = self.now;
        for outgoing in self.out.drain() {
            self.sent.push((now, outgoing));
            let Payload::TfrcData(header) = outgoing.payload else {
                panic!("a source sent {:?}", outgoing.payload);
            };
            if !(self.drop_data)(header.seq) {
                let mut packet = Pair::packet(now, outgoing, false);
                packet.ecn_ce = outgoing.ecn_capable && (self.mark_data)(header.seq);
                self.forward
                    .push_back((now + Duration::from_millis(50), packet));
            }
        }
    }

    fn take_sink_output(&mut self) {
        let now = self.now;
        for outgoing in self.out.drain() {
            assert!(matches!(outgoing.payload, Payload::TfrcFeedback(_)));
            assert_eq!(outgoing.size_bytes, 40);
            let packet = Pair::packet(now, outgoing, true);
            self.backward
                .push_back((now + Duration::from_millis(50), packet));
        }
    }

    fn start(&mut self) {
        self.source.on_start(self.now, &mut self.out);
        self.take_source_output();
    }

    fn stop(&mut self) {
        self.source.on_stop(self.now, &mut self.out);
        self.take_source_output();
    }

    /// Runs every event before `end`, each agent's deadline honoured exactly.
    fn run_until(&mut self, end: Time) {
        loop {
            let next = [
                self.source.poll_timeout(),
                self.sink.poll_timeout(),
                self.forward.front().map(|&(t, _)| t),
                self.backward.front().map(|&(t, _)| t),
            ]
            .into_iter()
            .flatten()
            .min();
            let Some(next) = next.filter(|&t| t < end) else {
                break;
            };
            assert!(next >= self.now, "time ran backwards");
            self.now = next;
            if self.forward.front().is_some_and(|&(t, _)| t <= next) {
                let (_, packet) = self.forward.pop_front().unwrap();
                self.sink.handle_packet(next, &packet, &mut self.out);
                self.take_sink_output();
            } else if self.backward.front().is_some_and(|&(t, _)| t <= next) {
                let (_, packet) = self.backward.pop_front().unwrap();
                self.source.handle_packet(next, &packet, &mut self.out);
                self.take_source_output();
            } else if self.sink.poll_timeout().is_some_and(|t| t <= next) {
                self.sink.handle_timeout(next, &mut self.out);
                self.take_sink_output();
            } else {
                self.source.handle_timeout(next, &mut self.out);
                self.take_source_output();
            }
        }
        self.now = end;
    }

    fn data_sent_between(&self, from: Time, to: Time) -> usize {
        self.sent
            .iter()
            .filter(|(t, _)| *t >= from && *t < to)
            .count()
    }
}

#[test]
fn nothing_happens_before_the_start() {
    let mut pair = Pair::new(&TfrcAgentConfig::default(), 1);
    assert_eq!(pair.source.poll_timeout(), None);
    assert_eq!(pair.sink.poll_timeout(), None);
    pair.run_until(at_ms(1000));
    assert!(pair.sent.is_empty());
}

#[test]
fn greedy_source_slow_starts_and_the_sink_reports_every_rtt() {
    let mut pair = Pair::new(&TfrcAgentConfig::default(), 1);
    pair.start();
    // The first packet goes at the start, 1000 bytes, sequence number 0.
    assert_eq!(pair.sent.len(), 1);
    assert_eq!(pair.sent[0].1.size_bytes, 1000);
    assert!(!pair.sent[0].1.ecn_capable);
    pair.run_until(at_ms(1000));
    let stats = pair.source.stats();
    assert!((stats.rtt_s - 0.1).abs() < 1e-9, "{}", stats.rtt_s);
    assert!(stats.slow_start);
    // Slow start doubles per RTT from W_init/R = 40 kB/s; by 1 s the rate is far above it.
    assert!(stats.x_bytes_per_s > 1e6, "{}", stats.x_bytes_per_s);
    // About one report per RTT after the first: 9-11 by 1 s.
    assert!(
        (8..=11).contains(&stats.feedback_received),
        "{}",
        stats.feedback_received
    );
    assert_eq!(stats.packets_sent, pair.sent.len() as u64);
    assert_eq!(
        pair.sink.stats().packets_received,
        stats.packets_sent - in_flight(&pair)
    );
    // Sequence numbers count up by one.
    for (k, (_, outgoing)) in pair.sent.iter().enumerate() {
        let Payload::TfrcData(header) = outgoing.payload else {
            unreachable!()
        };
        assert_eq!(header.seq, k as u64);
    }
}

fn in_flight(pair: &Pair) -> u64 {
    pair.forward.len() as u64
}

#[test]
fn a_lost_packet_becomes_a_loss_event_and_ends_slow_start() {
    let mut pair = Pair::new(&TfrcAgentConfig::default(), 1);
    pair.drop_data = Box::new(|seq| seq == 30);
    pair.start();
    pair.run_until(at_ms(3000));
    let rx = pair.sink.stats();
    assert_eq!((rx.packets_lost, rx.loss_events), (1, 1));
    let tx = pair.source.stats();
    assert!(!tx.slow_start);
    // The sender holds the p of the last report; the receiver's has moved on since as I_0 grew.
    assert!(
        tx.p > 0.0 && rx.p > 0.0 && rx.p <= tx.p,
        "{} {}",
        tx.p,
        rx.p
    );
}

#[test]
fn ecn_marks_count_as_losses_and_ecn_packets_are_capable() {
    let config = TfrcAgentConfig {
        ecn: true,
        ..TfrcAgentConfig::default()
    };
    let mut pair = Pair::new(&config, 1);
    pair.mark_data = Box::new(|seq| seq == 30);
    pair.start();
    pair.run_until(at_ms(3000));
    assert!(pair.sent.iter().all(|(_, o)| o.ecn_capable));
    let rx = pair.sink.stats();
    assert_eq!((rx.packets_ce, rx.packets_lost, rx.loss_events), (1, 0, 1));
    assert!(!pair.source.stats().slow_start);
}

#[test]
fn application_limited_source_sends_at_the_application_rate() {
    // 80 kb/s of 1000-byte packets: one every 100 ms, far below what the path allows.
    let config = TfrcAgentConfig {
        application: TfrcApplication::Limited { rate_bps: 80_000 },
        ..TfrcAgentConfig::default()
    };
    let mut pair = Pair::new(&config, 1);
    pair.start();
    pair.run_until(at_ms(10_000));
    // 100 application packets by 10 s (at 0, 100, ..., 9900 ms), all sent within the run.
    let sent = pair.sent.len();
    assert!((99..=100).contains(&sent), "{sent}");
    // Never more than the application gave: at most one packet in any 100 ms window.
    for w in pair.sent.windows(2) {
        assert!(w[1].0.as_nanos() - w[0].0.as_nanos() >= 100 * MS - 1);
    }
    assert!(pair.source.buffered_packets() <= 1);
}

#[test]
fn application_faster_than_the_sender_fills_the_buffer() {
    // 8 Mb/s of data (one packet per ms) while the sender starts at 1 packet/s.
    let config = TfrcAgentConfig {
        application: TfrcApplication::Limited {
            rate_bps: 8_000_000,
        },
        ..TfrcAgentConfig::default()
    };
    let mut pair = Pair::new(&config, 1);
    pair.start();
    assert_eq!((pair.sent.len(), pair.source.buffered_packets()), (1, 0));
    // The buffer is brought up to date at the source's callbacks: the first feedback arrives at
    // 100 ms, by when 101 packets had arrived (0, 1, ..., 100 ms).
    pair.run_until(at_ms(100) + Duration::from_nanos(1));
    let sent = pair.sent.len() as u64;
    assert!(sent > 1);
    assert_eq!(pair.source.buffered_packets() + sent, 101);
    // Slow start needs a few RTTs to pass the application's 1 MB/s: the backlog builds up ...
    pair.run_until(at_ms(300));
    assert!(pair.source.buffered_packets() > 100);
    // ... and then drains, the sender data-limited again.
    pair.run_until(at_ms(3000));
    assert!(pair.source.buffered_packets() < 5);
    assert!(pair.source.stats().x_bytes_per_s > 1e6);
}

#[test]
fn stop_silences_the_source_and_start_resumes_the_connection() {
    let mut pair = Pair::new(&TfrcAgentConfig::default(), 1);
    pair.start();
    pair.run_until(at_ms(1000));
    pair.stop();
    let sent_before = pair.sent.len();
    pair.run_until(at_ms(3000));
    assert_eq!(pair.sent.len(), sent_before, "sent while stopped");
    // The nofeedback timer kept running while idle.
    let expiries = pair.source.stats().nofeedback_expiries;
    assert!(expiries > 0);
    pair.start();
    pair.run_until(at_ms(4000));
    assert!(pair.data_sent_between(at_ms(3000), at_ms(4000)) > 10);
    // The same connection: sequence numbers continue.
    let Payload::TfrcData(header) = pair.sent[sent_before].1.payload else {
        unreachable!()
    };
    assert_eq!(header.seq, sent_before as u64);
    assert_eq!(pair.sink.stats().packets_lost, 0);
}

#[test]
fn dither_draws_from_the_agents_stream_only() {
    let config = TfrcAgentConfig {
        tfrc: tfrc::TfrcConfig {
            dither_fraction: 0.5,
            ..tfrc::TfrcConfig::default()
        },
        ..TfrcAgentConfig::default()
    };
    let times = |seed: u64| -> Vec<Time> {
        let mut pair = Pair::new(&config, seed);
        pair.start();
        pair.run_until(at_ms(2000));
        pair.sent.iter().map(|(t, _)| *t).collect()
    };
    assert_eq!(times(1), times(1));
    assert_ne!(times(1), times(2));
    // Without dither the seed does not matter.
    let plain = |seed: u64| -> Vec<Time> {
        let mut pair = Pair::new(&TfrcAgentConfig::default(), seed);
        pair.start();
        pair.run_until(at_ms(2000));
        pair.sent.iter().map(|(t, _)| *t).collect()
    };
    assert_eq!(plain(1), plain(2));
}

#[test]
fn trace_fields_are_filled() {
    let mut pair = Pair::new(&TfrcAgentConfig::default(), 1);
    pair.drop_data = Box::new(|seq| seq % 50 == 49);
    pair.start();
    pair.run_until(at_ms(5000));
    let mut source = vec![f64::NAN; pair.source.trace_fields().len()];
    pair.source.trace(&mut source);
    let field = |name: &str| {
        let i = pair
            .source
            .trace_fields()
            .iter()
            .position(|f| *f == name)
            .unwrap();
        source[i]
    };
    let stats = pair.source.stats();
    assert_eq!(field("x_bps"), 8.0 * stats.x_bytes_per_s);
    assert_eq!(field("p"), stats.p);
    assert_eq!(field("packets_sent"), stats.packets_sent as f64);
    assert!(field("x_calc_bps").is_finite());
    let mut sink = vec![f64::NAN; pair.sink.trace_fields().len()];
    pair.sink.trace(&mut sink);
    assert!(sink.iter().all(|v| v.is_finite()));
    assert_eq!(sink[2], pair.sink.stats().loss_events as f64);
}

#[test]
fn configs_are_checked() {
    assert_eq!(TfrcAgentConfig::default().validate(), Ok(()));
    let floyd = TfrcAgentConfig::preset("floyd2000").unwrap();
    assert_eq!(floyd.preset, "floyd2000");
    assert_eq!(floyd.tfrc, tfrc::TfrcConfig::floyd2000());
    assert!(TfrcAgentConfig::preset("reno").is_err());
    let bad = TfrcAgentConfig {
        tfrc: tfrc::TfrcConfig {
            ndupack: 0,
            ..tfrc::TfrcConfig::default()
        },
        ..TfrcAgentConfig::default()
    };
    assert!(bad
        .validate()
        .unwrap_err()
        .to_string()
        .starts_with("ndupack"));
    let zero = TfrcAgentConfig {
        feedback_size_bytes: 0,
        ..TfrcAgentConfig::default()
    };
    assert!(zero.validate().is_err());
    let idle = TfrcAgentConfig {
        application: TfrcApplication::Limited { rate_bps: 0 },
        ..TfrcAgentConfig::default()
    };
    assert_eq!(idle.validate(), Err(TfrcAgentError::ZeroApplicationRate));
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]

    /// Whatever the preset, application rate and loss pattern: the source never sends more than
    /// its application produced, counts every packet it sends, and the receiver accounts for
    /// every packet that arrived.
    #[test]
    fn the_pair_keeps_its_books(
        floyd in proptest::bool::ANY,
        app_kbps in proptest::option::of(10u64..20_000),
        every in 2u64..200,
        phase in 0u64..200,
    ) {
        let mut config = if floyd {
            TfrcAgentConfig::preset("floyd2000").unwrap()
        } else {
            TfrcAgentConfig::default()
        };
        if let Some(kbps) = app_kbps {
            config.application = TfrcApplication::Limited { rate_bps: kbps * 1000 };
        }
        let mut pair = Pair::new(&config, 1);
        pair.drop_data = Box::new(move |seq| seq % every == phase % every);
        pair.start();
        pair.run_until(at_ms(3000));
        let sent = pair.sent.len() as u64;
        proptest::prop_assert_eq!(pair.source.stats().packets_sent, sent);
        if let Some(interval) = config.application_interval() {
            let produced = 3_000_000_000 / interval.as_nanos() as u64 + 1;
            proptest::prop_assert!(sent <= produced, "{} > {}", sent, produced);
        }
        let dropped = (0..sent).filter(|s| s % every == phase % every).count() as u64;
        let rx = pair.sink.stats();
        proptest::prop_assert_eq!(rx.packets_received, sent - dropped - pair.forward.len() as u64);
        proptest::prop_assert!(rx.packets_lost <= dropped);
    }
}
