//! Issue 29: property tests of the sender's safety under real-host timing (`tfrc::real_host`):
//! reports built 1 µs-2 ms after arrivals, host stalls of 10-200 ms, jittered clocks, batches
//! of datagrams and reordering, over random paths, losses, seeds and preset pairs (presets are
//! not negotiated, so the two ends may differ).
//!
//! - After the first feedback the sender never sends more than twice what the bottleneck
//!   delivered over the last RTTs, plus the initial window and one RTT of burst credit.
//! - A data-limited sender's X stays within 2.5x what its receiver got over the last RTTs (2x by
//!   the rule, plus a packet's rounding at low rates).
//! - One spoofed data packet from off the path (a timestamp or an RTT of 2^64-1, a sequence
//!   number a little ahead or far behind) stops the flow for a few RTTs at most.

use std::time::Duration;

use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use tfrc::real_host::{
    bytes_between, Application, HostTiming, PathConfig, RealHostConfig, RealHostHarness,
    SpoofedData,
};
use tfrc::{DataLimitedRule, TfrcConfig, Time};

/// The transport's configuration for a preset (what `tfrc_udp::SenderOptions::new` makes).
fn transport_config(floyd: bool) -> TfrcConfig {
    let preset = if floyd {
        TfrcConfig::floyd2000()
    } else {
        TfrcConfig::rfc5348()
    };
    TfrcConfig {
        data_limited: DataLimitedRule::RecentOnly,
        max_backoff_interval: Some(Duration::from_secs(64)),
        ..preset
    }
}

#[derive(Debug)]
struct Case {
    rate: f64,
    delay_ms: u64,
    buffer: usize,
    loss: f64,
    stalls_per_s: f64,
    floyd_sender: bool,
    floyd_receiver: bool,
    seed: u64,
}

impl Case {
    fn config(&self, application: Application, spoofed: Vec<SpoofedData>) -> RealHostConfig {
        RealHostConfig {
            sender: transport_config(self.floyd_sender),
            receiver: transport_config(self.floyd_receiver),
            path: PathConfig {
                bottleneck_bytes_per_s: self.rate,
                buffer_packets: self.buffer,
                one_way_delay: Duration::from_millis(self.delay_ms),
                loss: self.loss,
            },
            timing: HostTiming::real(self.stalls_per_s),
            application,
            spoofed,
            seed: self.seed,
        }
    }

    /// The largest RTT the path can have: both propagation delays and a full queue.
    fn max_rtt_s(&self) -> f64 {
        2.0 * self.delay_ms as f64 / 1000.0 + (self.buffer + 1) as f64 * 1000.0 / self.rate
    }
}

fn case() -> impl Strategy<Value = Case> {
    (
        62_500.0f64..2_500_000.0,
        5u64..100,
        10usize..100,
        prop_oneof![Just(0.0), 0.0f64..0.1],
        0.0f64..1.0,
        any::<bool>(),
        any::<bool>(),
        any::<u64>(),
    )
        .prop_map(
            |(rate, delay_ms, buffer, loss, stalls_per_s, floyd_sender, floyd_receiver, seed)| {
                Case {
                    rate,
                    delay_ms,
                    buffer,
                    loss,
                    stalls_per_s,
                    floyd_sender,
                    floyd_receiver,
                    seed,
                }
            },
        )
}

/// The largest (sent over a window W) / (2 x delivered over the window 2W before it, plus the
/// allowance), for windows ending every 10 ms after the first feedback.
fn worst_excess(harness: &RealHostHarness, window_s: f64, allowance: f64, end_s: f64) -> f64 {
    let Some(first) = harness.first_feedback() else {
        return 0.0;
    };
    let mut worst: f64 = 0.0;
    let mut t = first.as_secs_f64() + window_s;
    while t <= end_s {
        let to = Time::from_secs_f64(t);
        let sent = bytes_between(harness.sent(), Time::from_secs_f64(t - window_s), to) as f64;
        let delivered = bytes_between(
            harness.delivered(),
            Time::from_secs_f64((t - 3.0 * window_s).max(0.0)),
            to,
        ) as f64;
        worst = worst.max(sent / (2.0 * delivered + allowance));
        t += 0.01;
    }
    worst
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 24,
        rng_seed: RngSeed::Fixed(0x2900_5a4e),
        ..ProptestConfig::default()
    })]

    #[test]
    fn sender_stays_within_twice_what_the_bottleneck_delivered(case in case()) {
        let mut harness = RealHostHarness::new(case.config(Application::Greedy, Vec::new())).unwrap();
        let end = 8.0;
        harness.run_until(Time::from_secs_f64(end));
        // W is one largest RTT plus a stall; the allowance is the initial window (4 packets)
        // and one RTT of unused sending time (RFC 5348 §4.6) at the link's rate.
        let window = case.max_rtt_s() + 0.2;
        let allowance = 4000.0 + case.max_rtt_s() * case.rate;
        let worst = worst_excess(&harness, window, allowance, end);
        prop_assert!(worst <= 1.0, "sent {worst:.2}x the bound");
        prop_assert!(!harness.records().is_empty());
    }

    #[test]
    fn data_limited_rate_follows_what_the_receiver_gets(case in case()) {
        let app = 0.2 * case.rate;
        let application = Application::ConstantRate { bytes_per_s: app };
        let mut harness = RealHostHarness::new(case.config(application, Vec::new())).unwrap();
        harness.run_until(Time::from_secs_f64(8.0));
        let mut checked = 0;
        // Once a stall has passed: not within four largest RTTs of a stall's end.
        let settle = Duration::from_secs_f64(4.0 * case.max_rtt_s());
        let after_stall = |t: Time| {
            harness.stalls().iter().any(|&(start, end)| t >= start && t <= end + settle)
        };
        for record in harness.records().iter().filter(|r| r.time.as_secs_f64() > 2.0) {
            if after_stall(record.time) {
                continue;
            }
            let t = record.time.as_secs_f64();
            // What the receiver got: the largest delivery rate over one largest RTT, among the
            // windows ending in the last four largest RTTs (X_recv_set holds a report for two
            // RTTs; a report measures the RTT before it was sent, half an RTT before it
            // arrives).
            let rtt = case.max_rtt_s();
            let got = (0..=((4.0 * rtt) / 0.01) as usize)
                .map(|k| {
                    let to = t - 0.01 * k as f64;
                    bytes_between(
                        harness.delivered(),
                        Time::from_secs_f64((to - rtt).max(0.0)),
                        Time::from_secs_f64(to.max(0.0)),
                    ) as f64
                        / rtt
                })
                .fold(0.0, f64::max);
            // X_recv counts whole packets over one R, so at a few packets per RTT it is off by
            // up to a packet per R (doubled in the limit); and while p = 0 RFC 5348 §4.3 keeps
            // X at the initial rate W_init/R at least (4 packets per R here).
            let initial = if record.p == 0.0 { 4000.0 / record.rtt_s } else { 0.0 };
            let bound = (2.5 * got + 2000.0 / record.rtt_s).max(initial);
            prop_assert!(record.x_bytes_per_s <= bound,
                "X {:.0} at {t:.2} s, receiver got {got:.0}", record.x_bytes_per_s);
            checked += 1;
        }
        prop_assert!(checked > 0 || !harness.stalls().is_empty());
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 12,
        rng_seed: RngSeed::Fixed(0x2900_5b0f),
        ..ProptestConfig::default()
    })]

    #[test]
    fn one_spoofed_packet_stops_the_flow_for_a_few_rtts_at_most(
        case in case(),
        kind in 0usize..5,
    ) {
        // A receiver with NDUPACK = 1 (the floyd2000 preset) declares every packet below a
        // forged one lost at once and ignores them when they come: the sans-IO receiver does
        // not defend against that (tfrc-udp's session identifier keeps forged data out), so
        // the receiver here is RFC 5348's.
        let case = Case {
            loss: case.loss.min(0.02),
            stalls_per_s: case.stalls_per_s.min(0.3),
            floyd_receiver: false,
            ..case
        };
        let at = Time::from_secs_f64(4.0);
        let spoof = match kind {
            0 => SpoofedData { at, seq_offset: 3, timestamp: Some(Time::MAX), rtt: Duration::from_millis(50) },
            1 => SpoofedData { at, seq_offset: 3, timestamp: None, rtt: Duration::from_nanos(u64::MAX) },
            2 => SpoofedData { at, seq_offset: 100, timestamp: Some(Time::MAX), rtt: Duration::from_nanos(u64::MAX) },
            3 => SpoofedData { at, seq_offset: -5000, timestamp: Some(Time::ZERO), rtt: Duration::ZERO },
            _ => SpoofedData { at, seq_offset: 1 << 40, timestamp: None, rtt: Duration::ZERO },
        };
        let mut harness = RealHostHarness::new(case.config(Application::Greedy, vec![spoof])).unwrap();
        harness.run_until(Time::from_secs_f64(8.0));
        // Reports keep being accepted: no gap longer than four largest RTTs and a stall.
        let limit = 4.0 * case.max_rtt_s() + 0.2;
        let times: Vec<f64> = harness
            .records()
            .iter()
            .map(|r| r.time.as_secs_f64())
            .filter(|&t| t > 3.5)
            .collect();
        prop_assert!(!times.is_empty());
        for pair in times.windows(2) {
            prop_assert!(pair[1] - pair[0] <= limit, "no report from {:.2} to {:.2} s", pair[0], pair[1]);
        }
        prop_assert!(8.0 - times[times.len() - 1] <= limit);
        // And the flow carries on, not stopped: at least a quarter of the rate the same flow
        // has without the spoofed packet. (Not closer: the injected packet shifts every later
        // random draw, so the two runs are different realizations, and floyd2000's flows at 2%
        // loss differ by up to 2x over 3 s between realizations; a stopped flow, as before the
        // real-host rules, is at a thousandth.)
        let mut unspoofed = RealHostHarness::new(case.config(Application::Greedy, Vec::new())).unwrap();
        unspoofed.run_until(Time::from_secs_f64(8.0));
        let rate = |h: &RealHostHarness| {
            bytes_between(h.delivered(), Time::from_secs_f64(5.0), Time::from_secs_f64(8.0)) as f64 / 3.0
        };
        let (after, without) = (rate(&harness), rate(&unspoofed));
        prop_assert!(after >= 0.25 * without, "{after:.0} B/s after the spoof, {without:.0} without");
    }
}
