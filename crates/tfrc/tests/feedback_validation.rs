//! Issue 13 item 7: feedback whose echo or delay no honest receiver could send must not reach the
//! RTT estimate or the rate (docs/tfrc.md, "Feedback validation"). The regressions use the public
//! API only; the per-cause counters are tested beside the sender.

use std::collections::{BTreeSet, VecDeque};
use std::time::Duration;

use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use tfrc::{DataHeader, Ecn, FeedbackHeader, Receiver, Sender, TfrcConfig, Time};

const MS: u64 = 1_000_000;

fn at(ms: u64) -> Time {
    Time::from_nanos(ms * MS)
}

fn report(echo: Time, t_delay: Duration, p: f64, x_recv: f64) -> FeedbackHeader {
    FeedbackHeader {
        timestamp_echo: echo,
        t_delay,
        x_recv_bytes_per_s: x_recv,
        p,
    }
}

/// A sender that has sent its first packet at time zero.
fn sender() -> Sender {
    let mut sender = Sender::new(TfrcConfig::default(), Time::ZERO).unwrap();
    assert!(sender.poll_transmit(Time::ZERO, true).is_some());
    sender
}

/// The state an honest first report (R = 100 ms) produces: X = W_init/R = 40 kB/s.
fn assert_honest_start(sender: &mut Sender) {
    let _ = sender.handle_feedback(at(100), &report(Time::ZERO, Duration::ZERO, 0.0, 0.0));
    let stats = sender.stats();
    assert_eq!(stats.rtt_s, 0.1);
    assert!((stats.x_bytes_per_s - 40_000.0).abs() < 1e-6, "{stats:?}");
}

/// On main, an echo 100 ms in the future gave a zero sample, R = 1 µs and X = 4e9 B/s.
#[test]
fn echo_from_the_future_is_rejected() {
    let mut sender = sender();
    let _ = sender.handle_feedback(at(100), &report(at(200), Duration::ZERO, 0.0, 0.0));
    let stats = sender.stats();
    assert_eq!(stats.rtt_s, 0.0, "R = {} s", stats.rtt_s);
    assert_eq!(stats.x_bytes_per_s, 1000.0);
    assert_eq!(stats.feedback_received, 0);
    assert_honest_start(&mut sender);
}

/// On main, a t_delay longer than the time since the packet left did the same.
#[test]
fn delay_longer_than_the_elapsed_time_is_rejected() {
    let mut sender = sender();
    let held = Duration::from_millis(150);
    let _ = sender.handle_feedback(at(100), &report(Time::ZERO, held, 0.0, 0.0));
    let stats = sender.stats();
    assert_eq!(stats.rtt_s, 0.0, "R = {} s", stats.rtt_s);
    assert_eq!(stats.x_bytes_per_s, 1000.0);
    assert_honest_start(&mut sender);
}

/// No data packet was stamped 37 ns; on main the echo was taken and gave R = 100 ms - 37 ns.
#[test]
fn echo_of_no_packet_sent_is_rejected() {
    let mut sender = sender();
    let echo = Time::from_nanos(37);
    let _ = sender.handle_feedback(at(100), &report(echo, Duration::ZERO, 0.0, 0.0));
    assert_eq!(sender.stats().rtt_s, 0.0);
    assert_honest_start(&mut sender);
}

/// On main, forged reports after the first (echoes 1 ns in the future, or delays 1 ns longer
/// than the packet's age) took X to the 1.25e11 B/s cap within 2 ms.
#[test]
fn forged_reports_cannot_raise_the_rate() {
    let mut sender = sender();
    assert_honest_start(&mut sender);
    for k in 1..=2_000u64 {
        let now = at(100) + Duration::from_micros(k);
        let forged = if k % 2 == 0 {
            report(now + Duration::from_nanos(1), Duration::ZERO, 0.0, 1e12)
        } else {
            let too_long = now.saturating_since(Time::ZERO) + Duration::from_nanos(1);
            report(Time::ZERO, too_long, 0.0, 1e12)
        };
        let _ = sender.handle_feedback(now, &forged);
    }
    let stats = sender.stats();
    assert_eq!(stats.rtt_s, 0.1);
    assert!((stats.x_bytes_per_s - 40_000.0).abs() < 1e-6, "{stats:?}");
}

/// A forged report, built at time `now` from what an attacker on the reverse path could know:
/// every data packet's timestamp (`sent`) and the honest reports the sender has already had
/// (the newest of them, `newest`).
#[derive(Clone, Copy, Debug)]
enum Forgery {
    /// An echo `ahead` ns in the future.
    FromFuture { ahead: u64 },
    /// A real packet's timestamp with a t_delay `extra` ns longer than its age.
    DelayTooLong { packet: usize, extra: u64 },
    /// A time no data packet carried, `back` ns before now.
    Unsent { back: u64 },
    /// A real packet older than the newest honest echo, with a t_delay that leaves 1 µs.
    Stale { packet: usize },
    /// The newest honest report again, byte for byte.
    ReplayExact,
    /// The newest honest report with better news: p scaled by `p_scale` (in [0, 1)), and a
    /// t_delay that leaves `left` ns of its echo's age as the RTT sample.
    ReplayModified { p_scale: f64, left: u64 },
}

impl Forgery {
    fn build(
        self,
        now: Time,
        sent: &[Time],
        newest: Option<FeedbackHeader>,
        x_recv: f64,
    ) -> Option<FeedbackHeader> {
        let newest_echo = newest.map(|r| r.timestamp_echo);
        let (echo, t_delay) = match self {
            Forgery::ReplayExact => return newest,
            Forgery::ReplayModified { p_scale, left } => {
                let honest = newest?;
                let age = now.saturating_since(honest.timestamp_echo);
                let t_delay = age.saturating_sub(Duration::from_nanos(left));
                return Some(report(
                    honest.timestamp_echo,
                    t_delay,
                    honest.p * p_scale,
                    x_recv,
                ));
            }
            Forgery::FromFuture { ahead } => (now + Duration::from_nanos(ahead), Duration::ZERO),
            Forgery::DelayTooLong { packet, extra } => {
                let echo = *sent.get(packet % sent.len().max(1))?;
                (
                    echo,
                    now.saturating_since(echo) + Duration::from_nanos(extra),
                )
            }
            Forgery::Unsent { back } => {
                let known: BTreeSet<Time> = sent.iter().copied().collect();
                let mut echo = now - Duration::from_nanos(back);
                while known.contains(&echo) {
                    echo += Duration::from_nanos(1);
                }
                (echo, Duration::ZERO)
            }
            Forgery::Stale { packet } => {
                let older: Vec<Time> = sent
                    .iter()
                    .copied()
                    .filter(|&t| newest_echo.is_some_and(|n| t < n))
                    .collect();
                let echo = *older.get(packet % older.len().max(1))?;
                let age = now.saturating_since(echo);
                (echo, age.saturating_sub(Duration::from_micros(1)))
            }
        };
        // The most harmful report: no loss, and a receive rate that lifts every limit.
        Some(report(echo, t_delay, 0.0, x_recv))
    }
}

fn forgery() -> impl Strategy<Value = Forgery> {
    prop_oneof![
        (1u64..1_000_000_000).prop_map(|ahead| Forgery::FromFuture { ahead }),
        (any::<usize>(), 1u64..100_000_000)
            .prop_map(|(packet, extra)| Forgery::DelayTooLong { packet, extra }),
        (0u64..2_000_000_000).prop_map(|back| Forgery::Unsent { back }),
        any::<usize>().prop_map(|packet| Forgery::Stale { packet }),
        Just(Forgery::ReplayExact),
        (0.0f64..1.0, 1_000u64..1_000_000_000)
            .prop_map(|(p_scale, left)| Forgery::ReplayModified { p_scale, left }),
    ]
}

/// A sender and receiver over a fixed-delay path dropping every `loss_every`-th packet, with
/// forged reports handed to the sender at the given times; returns X after each honest report.
fn closed_loop(
    rtt: Duration,
    loss_every: u64,
    forged: &[(Time, Forgery, f64)],
    end: Time,
) -> Vec<f64> {
    let config = TfrcConfig::default();
    let mut sender = Sender::new(config.clone(), Time::ZERO).unwrap();
    let mut receiver = Receiver::new(config).unwrap();
    let one_way = rtt / 2;
    let mut data: VecDeque<(Time, DataHeader)> = VecDeque::new();
    let mut feedback: VecDeque<(Time, FeedbackHeader)> = VecDeque::new();
    let mut forged: VecDeque<(Time, Forgery, f64)> = forged.iter().copied().collect();
    let mut sent = Vec::new();
    let mut newest = None;
    let mut rates = Vec::new();
    loop {
        let next = [
            sender.poll_timeout(),
            receiver.poll_timeout(),
            data.front().map(|&(t, _)| t),
            feedback.front().map(|&(t, _)| t),
            forged.front().map(|&(t, _, _)| t),
        ]
        .into_iter()
        .flatten()
        .min();
        let Some(now) = next.filter(|&t| t <= end) else {
            break;
        };
        if forged.front().is_some_and(|&(t, _, _)| t == now) {
            // A forged report changes nothing else in this step.
            let (_, forgery, x_recv) = forged.pop_front().unwrap();
            if let Some(report) = forgery.build(now, &sent, newest, x_recv) {
                let _ = sender.handle_feedback(now, &report);
            }
            continue;
        }
        while data.front().is_some_and(|&(t, _)| t <= now) {
            let (_, header) = data.pop_front().unwrap();
            receiver.handle_data(now, &header, 1000, Ecn::NotCe);
        }
        while feedback.front().is_some_and(|&(t, _)| t <= now) {
            let (_, report) = feedback.pop_front().unwrap();
            newest = Some(report);
            let _ = sender.handle_feedback(now, &report);
            rates.push(sender.stats().x_bytes_per_s);
        }
        receiver.handle_timeout(now);
        while let Some(report) = receiver.poll_feedback(now) {
            feedback.push_back((now + (rtt - one_way), report));
        }
        sender.handle_timeout(now);
        // The driver reads its clock for each packet, as tfrc-udp does, so no two packets
        // share a timestamp (a burst stamped at one instant lets as many reports echo it).
        let mut stamp = now;
        while let Some(header) = sender.poll_transmit(stamp, true) {
            sent.push(header.timestamp);
            if header.seq % loss_every != loss_every - 1 {
                data.push_back((stamp + one_way, header));
            }
            stamp += Duration::from_nanos(1);
        }
    }
    rates
}

proptest! {
    // A fixed seed: the same cases on every run and machine (determinism is a project rule).
    #![proptest_config(ProptestConfig {
        cases: 32,
        rng_seed: RngSeed::Fixed(0x13_07_08),
        ..ProptestConfig::default()
    })]

    /// No sequence of forged reports (of the kinds above, at any times, claiming no loss or
    /// less loss, a shorter RTT and any receive rate; replays of the newest honest report, exact
    /// or modified, included) raises X above what the honest reports alone give, at any report.
    #[test]
    fn forged_feedback_never_raises_the_rate(
        rtt_ms in 10u64..300,
        loss_every in 20u64..500,
        attacks in prop::collection::vec((1u64..8_000, forgery(), 1e3f64..1e12), 1..60),
    ) {
        let rtt = Duration::from_millis(rtt_ms);
        let end = at(8_000);
        let honest = closed_loop(rtt, loss_every, &[], end);
        let mut forged: Vec<(Time, Forgery, f64)> = attacks
            .into_iter()
            .map(|(ms, forgery, x_recv)| (at(ms) + Duration::from_nanos(1), forgery, x_recv))
            .collect();
        forged.sort_by_key(|&(t, _, _)| t);
        let attacked = closed_loop(rtt, loss_every, &forged, end);
        for (i, (x, bound)) in attacked.iter().zip(&honest).enumerate() {
            prop_assert!(x <= bound, "report {}: X = {} > honest {}", i, x, bound);
        }
        prop_assert_eq!(attacked.len(), honest.len());
    }
}
