//! Integration tests of the link queues (docs/queues.md): DropTail limits, conservation, RED's
//! drop probability with ns-2's count spacing, the gentle ramp, the idle-time decay, the automatic
//! parameters, Adaptive RED's max_p controller, determinism and the absence of per-packet heap
//! allocation.
//!
//! Drop-rate expectations are derived from ns-2's rule, not measured: with the average queue held
//! fixed, p_b is fixed, and the number X of arrivals from one early drop to the next (the drop
//! included) is a renewal variable with hazard P(X = c | X ≥ c) = p_a(c), p_a being ns-2's
//! `modify_p` at count c (count restarts at 0 after a drop and is incremented before the test).
//! With `wait_` true, p_a(c) = 0 while c·p_b < 1 and p_b/(2 - c·p_b) while c·p_b < 2; the survival
//! function telescopes to P(X > c) = (2 - (c+1)·p_b)/(2 - c0·p_b) from c0 = ceil(1/p_b) on, so
//! X is uniform on [c0, ~2/p_b]. For integer N = 1/p_b, X is uniform on {N, ..., 2N-1}, E[X] =
//! (3N - 1)/2 and the long-run drop fraction is 1/E[X] = 2·p_b/(3 - p_b) (not p_b: spacing
//! lowers it by about a third). The tests compute E[X] and Var[X] from the hazard for the exact
//! p_b in force, and accept a drop count within z_0.995·sqrt(A·Var[X]/E[X]^3) (+2 for the window
//! edges) of A/E[X] over A arrivals (renewal central limit theorem, 99% two-sided).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::time::Duration;

use netsim::packet::{FlowId, NodeId, Packet, Payload};
use netsim::queue::{
    AdaptiveRedConfig, Enqueued, Queue, QueueConfig, QueueLimit, QueueWeight, RedConfig,
};
use netsim::rng::{stream, SimRng};
use netsim::Time;
use proptest::prelude::*;

// ---------------------------------------------------------------------------------------------
// A per-thread allocation counter (the test harness runs tests on several threads).

struct CountingAllocator;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: every call is forwarded unchanged to the system allocator; the counter is a
// thread-local `Cell` with a const initialiser, which never allocates.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract, which `System` shares.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        // SAFETY: as for `alloc` and `dealloc`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

fn allocations_on_this_thread() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

// ---------------------------------------------------------------------------------------------
// Helpers.

const MBPS_15: u64 = 15_000_000;
/// z for a two-sided 99% bound.
const Z_99: f64 = 2.576;

fn packet(seq: u64, size_bytes: u32, ecn_capable: bool) -> Packet {
    let mut packet = Packet::new(
        FlowId(0),
        seq,
        size_bytes,
        NodeId(1),
        Time::ZERO,
        Payload::Cbr,
    );
    packet.ecn_capable = ecn_capable;
    packet
}

fn red(config: RedConfig, rate_bps: u64) -> Queue {
    Queue::new(&QueueConfig::Red(config), rate_bps)
}

/// Arrival counts over a measurement window.
#[derive(Debug, Default)]
struct Window {
    arrivals: u64,
    drops: u64,
    marks: u64,
    /// The arrival index (within the window) of each drop.
    drop_at: Vec<u64>,
}

/// Drives a queue so that every arrival sees exactly `level` packets waiting: fills it to
/// `level` at `now`, then each step advances time by `step`, offers one `size`-byte packet and,
/// if it was accepted, lets the link take one from the head. The instantaneous queue, and so
/// avg, stay fixed. `warmup` arrivals are not counted; `arrivals` are. `on_arrival` sees the
/// queue after every counted arrival.
#[allow(clippy::too_many_arguments)]
fn hold(
    queue: &mut Queue,
    now: &mut Time,
    rng: &mut SimRng,
    level: usize,
    size: u32,
    step: Duration,
    warmup: u64,
    arrivals: u64,
    mut on_arrival: impl FnMut(Time, &Queue),
) -> Window {
    let mut seq = 0;
    while queue.len_packets() > level {
        queue.dequeue(*now);
    }
    while queue.len_packets() < level {
        assert!(matches!(
            queue.enqueue(*now, packet(seq, size, false), rng),
            Enqueued::Accepted
        ));
        seq += 1;
    }
    let mut window = Window::default();
    for i in 0..warmup + arrivals {
        *now += step;
        let outcome = queue.enqueue(*now, packet(seq, size, false), rng);
        seq += 1;
        let counted = i >= warmup;
        match outcome {
            Enqueued::Dropped(_) => {
                if counted {
                    window.drops += 1;
                    window.drop_at.push(window.arrivals);
                }
            }
            Enqueued::Marked | Enqueued::Accepted => {
                if outcome == Enqueued::Marked && counted {
                    window.marks += 1;
                }
                queue.dequeue(*now).unwrap();
            }
        }
        assert_eq!(queue.len_packets(), level);
        if counted {
            window.arrivals += 1;
            on_arrival(*now, queue);
        }
    }
    window
}

/// Mean and variance of the inter-drop count X for the hazard `p_a(c)`, c = 1, 2, ...
fn renewal_moments(p_a: impl Fn(u64) -> f64) -> (f64, f64) {
    let (mut survive, mut mean, mut second) = (1.0_f64, 0.0, 0.0);
    let mut c = 0u64;
    while survive > 1e-15 {
        c += 1;
        assert!(c < 10_000_000, "hazard never reaches 1");
        let h = p_a(c).clamp(0.0, 1.0);
        let mass = survive * h;
        mean += mass * c as f64;
        second += mass * (c * c) as f64;
        survive *= 1.0 - h;
    }
    (mean, second - mean * mean)
}

/// ns-2's `modify_p` with `wait_` true, written out from protocols.md §5.2.
fn wait_rule(p_b: f64, c: f64) -> f64 {
    if c * p_b < 1.0 {
        0.0
    } else if c * p_b < 2.0 {
        p_b / (2.0 - c * p_b)
    } else {
        1.0
    }
}

/// ns-2's `modify_p` with `wait_` false (the RED paper's uniform [1, 1/p_b] gaps).
fn no_wait_rule(p_b: f64, c: f64) -> f64 {
    if c * p_b < 1.0 {
        p_b / (1.0 - c * p_b)
    } else {
        1.0
    }
}

/// Checks a measured drop count against the renewal expectation; returns (measured, expected)
/// fractions.
fn assert_drop_fraction(window: &Window, p_a: impl Fn(u64) -> f64, what: &str) -> (f64, f64) {
    let (mean, var) = renewal_moments(p_a);
    let a = window.arrivals as f64;
    let expected = a / mean;
    let bound = Z_99 * (a * var / mean.powi(3)).sqrt() + 2.0;
    let measured = window.drops as f64;
    println!(
        "{what}: drop fraction measured {:.6}, expected {:.6} (E[X] = {mean:.4}), {} drops in {} \
         arrivals, 99% bound ±{bound:.1}",
        measured / a,
        1.0 / mean,
        window.drops,
        window.arrivals
    );
    assert!(
        (measured - expected).abs() <= bound,
        "{what}: {measured} drops, expected {expected:.1} ± {bound:.1}"
    );
    (measured / a, 1.0 / mean)
}

// ---------------------------------------------------------------------------------------------
// DropTail.

#[derive(Clone, Debug)]
enum Op {
    Arrive { size_bytes: u32, ecn: bool },
    Depart,
}

fn ops() -> impl Strategy<Value = Vec<(Op, u32)>> {
    let op = prop_oneof![
        3 => (40u32..1500, any::<bool>()).prop_map(|(size_bytes, ecn)| Op::Arrive { size_bytes, ecn }),
        2 => Just(Op::Depart),
    ];
    prop::collection::vec((op, 0u32..2_000_000), 1..600)
}

/// Runs `ops` through `queue`, checking conservation (and the buffer bound) after every step.
fn run_conservation(queue: &mut Queue, limit: QueueLimit, ops: &[(Op, u32)], seed: u64) {
    let mut rng = stream(seed, "queue-test");
    let mut now = Time::ZERO;
    let (mut arrivals, mut departures, mut drops) = (0u64, 0u64, 0u64);
    let mut bytes_in = 0u64;
    for (seq, (op, dt_ns)) in ops.iter().enumerate() {
        now += Duration::from_nanos(u64::from(*dt_ns));
        match op {
            Op::Arrive { size_bytes, ecn } => {
                arrivals += 1;
                let p = packet(seq as u64, *size_bytes, *ecn);
                match queue.enqueue(now, p, &mut rng) {
                    Enqueued::Dropped(back) => {
                        assert_eq!(back, p, "a dropped packet comes back unchanged");
                        drops += 1;
                    }
                    Enqueued::Accepted | Enqueued::Marked => bytes_in += u64::from(*size_bytes),
                }
            }
            Op::Depart => {
                if let Some(p) = queue.dequeue(now) {
                    departures += 1;
                    bytes_in -= u64::from(p.size_bytes);
                }
            }
        }
        assert_eq!(arrivals, departures + drops + queue.len_packets() as u64);
        assert_eq!(queue.len_bytes(), bytes_in);
        let stats = queue.stats();
        assert_eq!(stats.arrivals, arrivals);
        assert_eq!(stats.departures, departures);
        assert_eq!(stats.early_drops + stats.forced_drops, drops);
        match limit {
            QueueLimit::Packets(n) => assert!(queue.len_packets() <= n as usize),
            QueueLimit::Bytes(b) => assert!(queue.len_bytes() <= b),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn droptail_never_exceeds_a_packet_limit_and_conserves(limit in 0u32..40, ops in ops()) {
        let limit = QueueLimit::Packets(limit);
        let mut q = Queue::new(&QueueConfig::DropTail { limit }, MBPS_15);
        run_conservation(&mut q, limit, &ops, 1);
    }

    #[test]
    fn droptail_never_exceeds_a_byte_limit_and_conserves(limit in 0u64..40_000, ops in ops()) {
        let limit = QueueLimit::Bytes(limit);
        let mut q = Queue::new(&QueueConfig::DropTail { limit }, MBPS_15);
        run_conservation(&mut q, limit, &ops, 2);
    }

    #[test]
    fn red_conserves_and_respects_its_buffer(
        preset in 0usize..4,
        buffer in 1u32..60,
        seed in any::<u64>(),
        ops in ops(),
    ) {
        let base = match preset {
            0 => RedConfig::ns2_35(),
            1 => RedConfig::ns2_2000(),
            2 => RedConfig::adaptive(),
            _ => RedConfig { ecn: true, wait: false, ..RedConfig::ns2_2000() },
        };
        // Small thresholds and a fast weight so that the random sequences reach the RED range.
        let config = RedConfig {
            min_th_pkts: Some(2.0),
            max_th_pkts: Some(6.0),
            queue_weight: QueueWeight::Fixed(0.2),
            ..base
        }
        .with_ns2_limit(buffer);
        let limit = config.buffer;
        let mut q = red(config, 10_000_000);
        run_conservation(&mut q, limit, &ops, seed);
    }
}

#[test]
fn droptail_fills_to_exactly_its_limit() {
    let mut rng = stream(1, "droptail");
    for limit in [QueueLimit::Packets(7), QueueLimit::Bytes(7_500)] {
        let mut q = Queue::new(&QueueConfig::DropTail { limit }, MBPS_15);
        let outcomes: Vec<bool> = (0..10)
            .map(|seq| {
                matches!(
                    q.enqueue(Time::ZERO, packet(seq, 1000, false), &mut rng),
                    Enqueued::Accepted
                )
            })
            .collect();
        assert_eq!(outcomes.iter().filter(|a| **a).count(), 7, "{limit:?}");
        assert!(outcomes[..7].iter().all(|a| *a));
        assert_eq!(q.len_packets(), 7);
        assert_eq!(q.stats().forced_drops, 3);
    }
}

// ---------------------------------------------------------------------------------------------
// RED: drop probability with count spacing.

#[test]
fn red_drop_fraction_matches_ns2_count_spacing() {
    // ns2_2000: packet mode, min_th 5, max_th 15, max_p 0.1, w_q 0.002, wait_.
    // Warm-up 40 000 arrivals: (1 - 0.002)^40000 = e^-80, so avg = level to rounding.
    for level in [8usize, 12, 14] {
        let mut q = red(RedConfig::ns2_2000(), MBPS_15);
        let (mut now, mut rng) = (Time::ZERO, stream(11, "red-spacing"));
        let window = hold(
            &mut q,
            &mut now,
            &mut rng,
            level,
            1000,
            Duration::from_micros(100),
            40_000,
            1_000_000,
            |_, _| {},
        );
        let avg = q.average_queue().unwrap();
        assert!((avg - level as f64).abs() < 1e-9, "avg {avg}");
        let p_b = q.as_red().unwrap().base_drop_probability(avg);
        assert!((p_b - 0.01 * (level as f64 - 5.0)).abs() < 1e-12);
        let (measured, expected) = assert_drop_fraction(
            &window,
            |c| wait_rule(p_b, c as f64),
            &format!("wait_, avg {level}, p_b {p_b:.4}"),
        );
        // Spacing matters: the drop fraction is well below p_b's geometric value, near
        // 2 p_b / (3 - p_b) (exact for integer 1/p_b).
        assert!(measured < 0.8 * p_b && expected < 0.8 * p_b);
        assert!((expected - 2.0 * p_b / (3.0 - p_b)).abs() < 0.05 * expected);
        // wait_: drops are never closer than 1/p_b arrivals.
        let min_gap = window
            .drop_at
            .windows(2)
            .map(|w| w[1] - w[0])
            .min()
            .unwrap();
        assert!(min_gap as f64 >= 1.0 / p_b - 1e-9, "gap {min_gap} < 1/p_b");
    }
}

#[test]
fn red_drop_fraction_integer_inverse_closed_form() {
    // avg held at exactly 10 with w_q = 1 (avg = q): p_b = 0.05, 1/p_b = 20, so gaps are uniform
    // on {20, ..., 39} and the drop fraction is 2·0.05/(3 - 0.05) = 0.033898.
    let config = RedConfig {
        queue_weight: QueueWeight::Fixed(1.0),
        ..RedConfig::ns2_2000()
    };
    let mut q = red(config, MBPS_15);
    let (mut now, mut rng) = (Time::ZERO, stream(12, "red-closed-form"));
    let window = hold(
        &mut q,
        &mut now,
        &mut rng,
        10,
        1000,
        Duration::from_micros(100),
        1_000,
        1_000_000,
        |_, _| {},
    );
    assert_eq!(q.average_queue(), Some(10.0));
    let p_b = q.as_red().unwrap().base_drop_probability(10.0);
    assert_eq!(p_b, 0.05);
    let (_, expected) = assert_drop_fraction(&window, |c| wait_rule(p_b, c as f64), "p_b 1/20");
    assert!((expected - 2.0 * 0.05 / (3.0 - 0.05)).abs() < 1e-12);
    let gaps: Vec<u64> = window.drop_at.windows(2).map(|w| w[1] - w[0]).collect();
    assert_eq!(gaps.iter().min(), Some(&20));
    assert_eq!(gaps.iter().max(), Some(&39));
}

#[test]
fn red_without_wait_uses_the_red_paper_spacing() {
    let config = RedConfig {
        wait: false,
        ..RedConfig::ns2_2000()
    };
    let mut q = red(config, MBPS_15);
    let (mut now, mut rng) = (Time::ZERO, stream(13, "red-no-wait"));
    let window = hold(
        &mut q,
        &mut now,
        &mut rng,
        12,
        1000,
        Duration::from_micros(100),
        40_000,
        1_000_000,
        |_, _| {},
    );
    let p_b = q
        .as_red()
        .unwrap()
        .base_drop_probability(q.average_queue().unwrap());
    let (_, expected) = assert_drop_fraction(
        &window,
        |c| no_wait_rule(p_b, c as f64),
        &format!("no wait_, p_b {p_b:.4}"),
    );
    // Gaps uniform on {1, ..., 1/p_b - 1}: the fraction is 2·p_b (exact for integer 1/p_b).
    assert!((expected - 2.0 * p_b).abs() < 0.02 * expected);
    // Gaps are spread over [1, 1/p_b]: none longer than ceil(1/p_b).
    let max_gap = window
        .drop_at
        .windows(2)
        .map(|w| w[1] - w[0])
        .max()
        .unwrap();
    assert!(max_gap as f64 <= (1.0 / p_b).ceil());
}

#[test]
fn red_byte_mode_scales_by_size_and_counts_in_mean_packets() {
    // ns-2.35 defaults on 15 Mb/s: byte queue, byte mode, mean 500 B, min_th 9.375 and max_th
    // 28.125 mean-size packets (4687.5 and 14062.5 bytes). Ten 1000-byte packets: q = 10 000 B.
    let mut q = red(RedConfig::ns2_35(), MBPS_15);
    let (mut now, mut rng) = (Time::ZERO, stream(14, "red-bytes"));
    let w = q.as_red().unwrap().params().w_q;
    let warmup = (45.0 / w) as u64; // (1 - w)^warmup ≈ e^-45
    let window = hold(
        &mut q,
        &mut now,
        &mut rng,
        10,
        1000,
        Duration::from_micros(100),
        warmup,
        1_000_000,
        |_, _| {},
    );
    let avg = q.average_queue().unwrap();
    assert!((avg - 10_000.0).abs() < 1e-6, "avg {avg}");
    let p_b = q.as_red().unwrap().base_drop_probability(avg);
    assert!((p_b - 0.1 * (10_000.0 - 4_687.5) / (14_062.5 - 4_687.5)).abs() < 1e-12);
    // The k-th 1000-byte arrival after a drop has count_bytes = 1000 k, so c = 2k mean-size
    // packets, and p_a is scaled by 1000/500 (capped at 1).
    let p_a = |k: u64| {
        let p = wait_rule(p_b, (2 * k) as f64);
        if p < 1.0 {
            (p * 2.0).min(1.0)
        } else {
            1.0
        }
    };
    assert_drop_fraction(&window, p_a, &format!("byte mode, p_b {p_b:.4}"));
}

// ---------------------------------------------------------------------------------------------
// RED: the gentle region.

#[test]
fn gentle_region_ramps_linearly_to_one_at_twice_max_th() {
    let config = RedConfig {
        gentle: true,
        use_mark_p: true,
        ..RedConfig::ns2_2000()
    };
    let q = red(config.clone(), MBPS_15);
    let r = q.as_red().unwrap();
    // p_b(max_th) = max_p, p_b(2 max_th) = 1, straight line in between, 1 above.
    assert!((r.base_drop_probability(15.0) - 0.1).abs() < 1e-12);
    assert!((r.base_drop_probability(30.0) - 1.0).abs() < 1e-12);
    for i in 0..=30 {
        let avg = 15.0 + 0.5 * f64::from(i);
        let line = 0.1 + 0.9 * (avg - 15.0) / 15.0;
        assert!(
            (r.base_drop_probability(avg) - line).abs() < 1e-12,
            "avg {avg}"
        );
    }
    assert_eq!(r.base_drop_probability(45.0), 1.0);

    // Measured at avg = 20 (p_b = 0.4): gaps of 3 or 4 arrivals, drop fraction 1/3.5.
    let mut q = red(config.clone(), MBPS_15);
    let (mut now, mut rng) = (Time::ZERO, stream(15, "red-gentle"));
    let window = hold(
        &mut q,
        &mut now,
        &mut rng,
        20,
        1000,
        Duration::from_micros(100),
        40_000,
        200_000,
        |_, _| {},
    );
    let p_b = q
        .as_red()
        .unwrap()
        .base_drop_probability(q.average_queue().unwrap());
    assert!((p_b - 0.4).abs() < 1e-9);
    let (_, expected) = assert_drop_fraction(
        &window,
        |c| wait_rule(p_b, c as f64),
        &format!("gentle, avg 20, p_b {p_b:.4}"),
    );
    assert!((expected - 1.0 / 3.5).abs() < 1e-3);

    // Above 2·max_th every arrival is dropped (p_b = 1: p_a = 1 at count 1).
    let mut q = red(config, MBPS_15);
    let window = hold(
        &mut q,
        &mut now,
        &mut rng,
        31,
        1000,
        Duration::from_micros(100),
        40_000,
        10_000,
        |_, _| {},
    );
    assert_eq!(window.drops, window.arrivals);
}

#[test]
fn without_gentle_or_use_mark_p_drops_are_forced_at_max_th() {
    let mut q = red(RedConfig::ns2_2000(), MBPS_15);
    let (mut now, mut rng) = (Time::ZERO, stream(16, "red-cliff"));
    let window = hold(
        &mut q,
        &mut now,
        &mut rng,
        16,
        1000,
        Duration::from_micros(100),
        40_000,
        10_000,
        |_, _| {},
    );
    assert_eq!(window.drops, window.arrivals);
    assert!(q.stats().forced_drops >= 10_000);
}

// ---------------------------------------------------------------------------------------------
// RED: ECN.

#[test]
fn ecn_capable_packets_are_marked_instead_of_dropped() {
    let config = RedConfig {
        ecn: true,
        ..RedConfig::ns2_2000()
    };
    let mut q = red(config, MBPS_15);
    let mut rng = stream(17, "red-ecn");
    let mut now = Time::ZERO;
    for seq in 0..12 {
        q.enqueue(now, packet(seq, 1000, true), &mut rng);
    }
    let (mut marked, mut dropped, mut ce) = (0, 0, 0);
    for seq in 12..200_000 {
        now += Duration::from_micros(100);
        match q.enqueue(now, packet(seq, 1000, true), &mut rng) {
            Enqueued::Marked => marked += 1,
            Enqueued::Accepted => {}
            Enqueued::Dropped(_) => dropped += 1,
        }
        ce += u64::from(q.dequeue(now).unwrap().ecn_ce);
    }
    while let Some(p) = q.dequeue(now) {
        ce += u64::from(p.ecn_ce);
    }
    assert!(marked > 1000, "marked {marked}");
    assert_eq!(dropped, 0);
    assert_eq!(q.stats().marks, marked);
    // Exactly the marked packets leave with CE set.
    assert_eq!(ce, marked);
}

// ---------------------------------------------------------------------------------------------
// RED: idle-time decay.

#[test]
fn average_decays_over_idle_time_as_one_minus_w_to_the_m() {
    // ns2_2000 on 15 Mb/s: mean 500 B, so C = 3750 mean-size packets/s; w_q = 0.002.
    // 1000-byte packets take 533 334 ns (rounded up) to send.
    const TX_NS: u64 = 533_334;
    for (idle_ns, explicit_empty_dequeue) in [
        (0u64, true),
        (1_000_000, true),
        (200_100_000, true),
        (200_100_000, false),
        (3_000_100_000, false),
        (1_000_100_000, true),
    ] {
        let mut q = red(RedConfig::ns2_2000(), MBPS_15);
        let mut rng = stream(18, "red-idle");
        let mut now = Time::ZERO;
        for seq in 0..10 {
            q.enqueue(now, packet(seq, 1000, false), &mut rng);
        }
        for _ in 0..10 {
            q.dequeue(now).unwrap();
            now += Duration::from_nanos(TX_NS);
        }
        // `now` is when the last packet's transmission ended: the link goes idle.
        if explicit_empty_dequeue {
            assert!(q.dequeue(now).is_none());
        }
        let before = q.average_queue().unwrap();
        assert!(before > 0.0);
        now += Duration::from_nanos(idle_ns);
        q.enqueue(now, packet(99, 1000, false), &mut rng);
        let w = 0.002_f64;
        let m = (3750.0 * idle_ns as f64 * 1e-9).floor() as i32;
        // avg·(1-w)^m for the idle period, then the EWMA step with q = 0.
        let expected = before * (1.0 - w).powi(m) * (1.0 - w);
        let got = q.average_queue().unwrap();
        assert!(
            (got - expected).abs() <= 1e-12 * expected.max(1e-300),
            "idle {idle_ns} ns, m {m}: {got} vs {expected}"
        );
    }
}

#[test]
fn no_decay_while_the_last_packet_is_still_on_the_wire() {
    let mut q = red(RedConfig::ns2_2000(), MBPS_15);
    let mut rng = stream(19, "red-busy");
    for seq in 0..5 {
        q.enqueue(Time::ZERO, packet(seq, 1000, false), &mut rng);
    }
    for _ in 0..5 {
        q.dequeue(Time::ZERO).unwrap();
    }
    // The queue is empty but the last packet is being sent for 533 us: not idle yet.
    let before = q.average_queue().unwrap();
    q.enqueue(Time::from_nanos(500_000), packet(9, 1000, false), &mut rng);
    assert_eq!(q.average_queue().unwrap(), before * (1.0 - 0.002));
}

// ---------------------------------------------------------------------------------------------
// RED: automatic parameters (protocols.md §5.3 and §5.5) on a 15 Mb/s link.

#[test]
fn automatic_parameters_for_15_mbps_and_1000_byte_packets() {
    let close = |got: f64, want: f64, what: &str| {
        assert!(
            (got - want).abs() <= 1e-12 * want.abs().max(1.0),
            "{what}: {got} vs {want}"
        );
    };
    // ns-2.35 rules with mean_pktsize = 1000: C = 15e6 / (8·1000) = 1875 pkts/s.
    let config = RedConfig::ns2_35().with_mean_packet_size(1000);
    let p = config.resolve(MBPS_15, Duration::ZERO).unwrap();
    close(p.ptc_pkts_per_sec, 1875.0, "C");
    // q_weight_ = -1: rtt = max(0.1, 3·(0 + 1/1875)) = 0.1 s; w_q = 1 - exp(-1/(10·0.1·1875)).
    close(p.w_q, 1.0 - (-1.0_f64 / 1875.0).exp(), "w_q formula");
    close(p.w_q, 5.331_911_363_917_197e-4, "w_q");
    // min_th = max(5, 0.005·1875/2 = 4.6875) = 5; max_th = 3·min_th = 15; bytes ×1000.
    close(p.min_th_pkts, 5.0, "min_th");
    close(p.max_th_pkts, 15.0, "max_th");
    close(p.min_th, 5_000.0, "min_th bytes");
    close(p.max_th, 15_000.0, "max_th bytes");
    // A 40 ms link: rtt = 3·(0.04 + 1/1875) = 0.1216 s > 0.1, w_q = 1 - exp(-1/(10·0.1216·1875)).
    let p = config.resolve(MBPS_15, Duration::from_millis(40)).unwrap();
    close(p.w_q, 4.385_003_218_473_349e-4, "w_q with 40 ms delay");
    // q_weight_ = 0 and -2.
    let p = RedConfig {
        queue_weight: QueueWeight::AutoPacketTime,
        ..config.clone()
    }
    .resolve(MBPS_15, Duration::ZERO)
    .unwrap();
    close(p.w_q, 5.331_911_363_917_197e-4, "w_q = 1 - exp(-1/C)");
    let p = RedConfig {
        queue_weight: QueueWeight::AutoTenPacketTimes,
        ..config
    }
    .resolve(MBPS_15, Duration::ZERO)
    .unwrap();
    close(p.w_q, 5.319_136_361_385_701e-3, "w_q = 1 - exp(-10/C)");

    // ns-2.35 as shipped (mean 500 B): C = 3750, w_q = 1 - exp(-1/3750), min_th = 0.005·3750/2
    // = 9.375 > 5, max_th = 28.125 mean-size packets = 4687.5 and 14062.5 bytes.
    let p = RedConfig::ns2_35()
        .resolve(MBPS_15, Duration::ZERO)
        .unwrap();
    close(p.ptc_pkts_per_sec, 3750.0, "C at 500 B");
    close(p.w_q, 2.666_311_142_713_873e-4, "w_q at 500 B");
    close(p.min_th_pkts, 9.375, "min_th at 500 B");
    close(p.max_th_pkts, 28.125, "max_th at 500 B");
    close(p.min_th, 4_687.5, "min_th bytes at 500 B");
    close(p.max_th, 14_062.5, "max_th bytes at 500 B");

    // Adaptive RED (paper): w_q = 1 - exp(-1/C), min_th 5, max_th 15, bottom 0.01; with ns-2's
    // automatic bottom: min(0.01, 80000/15e6) = 0.0053333.
    let config = RedConfig::adaptive().with_mean_packet_size(1000);
    let p = config.resolve(MBPS_15, Duration::ZERO).unwrap();
    close(p.w_q, 5.331_911_363_917_197e-4, "ARED w_q");
    close(p.min_th_pkts, 5.0, "ARED min_th");
    close(p.max_th_pkts, 15.0, "ARED max_th");
    close(p.bottom_max_p, 0.01, "ARED bottom");
    let p = RedConfig {
        adaptive: Some(AdaptiveRedConfig::ns2_35()),
        ..config
    }
    .resolve(MBPS_15, Duration::ZERO)
    .unwrap();
    close(p.bottom_max_p, 80_000.0 / 15e6, "ns-2 bottom");
    close(
        p.bottom_max_p,
        0.005_333_333_333_333_333,
        "ns-2 bottom value",
    );

    // The queue uses them: built with the link delay, it reports the same parameters.
    let q = Queue::with_link_delay(
        &QueueConfig::Red(RedConfig::ns2_35().with_mean_packet_size(1000)),
        MBPS_15,
        Duration::from_millis(40),
    );
    close(
        q.as_red().unwrap().params().w_q,
        4.385_003_218_473_349e-4,
        "queue's w_q",
    );
}

// ---------------------------------------------------------------------------------------------
// Adaptive RED.

/// The max_p changes seen while holding the queue: (time, new max_p).
fn record_max_p(changes: &mut Vec<(Time, f64)>) -> impl FnMut(Time, &Queue) + '_ {
    move |now, q| {
        let max_p = q.max_p().unwrap();
        if changes.last().is_none_or(|&(_, last)| last != max_p) {
            changes.push((now, max_p));
        }
    }
}

#[test]
fn adaptive_red_raises_max_p_when_avg_is_above_the_band() {
    // 15 Mb/s, 1000-byte mean: min_th 5, max_th 15, target band (9, 11). One arrival per packet
    // time (1/1875 s), queue held at 14 for 30 s: avg settles near 14, above the band.
    let config = RedConfig::adaptive().with_mean_packet_size(1000);
    let mut q = red(config, MBPS_15);
    let (mut now, mut rng) = (Time::ZERO, stream(20, "ared-up"));
    let mut changes = vec![(Time::ZERO, 0.1)];
    hold(
        &mut q,
        &mut now,
        &mut rng,
        14,
        1000,
        Duration::from_nanos(533_334),
        0,
        56_250,
        record_max_p(&mut changes),
    );
    let settled = changes
        .iter()
        .position(|&(t, _)| t >= Time::from_secs_f64(3.0))
        .unwrap();
    for pair in changes[settled - 1..].windows(2) {
        let ((t0, p0), (t1, p1)) = (pair[0], pair[1]);
        // Additive increase by min(0.01, max_p/4), at most once per 0.5 s.
        assert!(
            (p1 - (p0 + (0.01_f64).min(p0 / 4.0))).abs() < 1e-12,
            "{p0} -> {p1}"
        );
        assert!(t1.saturating_since(t0) > Duration::from_millis(500));
        assert!(t1.saturating_since(t0) < Duration::from_millis(501));
    }
    let last = changes.last().unwrap().1;
    println!(
        "ARED above the band: max_p 0.1 -> {last:.4} in {} changes",
        changes.len() - 1
    );
    // It stops once max_p reaches top (0.5), overshooting by less than one step.
    assert!((0.5..0.51).contains(&last), "final max_p {last}");
    assert!(q.average_queue().unwrap() > 11.0);
}

#[test]
fn adaptive_red_lowers_max_p_when_avg_is_below_the_band() {
    let config = RedConfig::adaptive().with_mean_packet_size(1000);
    let mut q = red(config, MBPS_15);
    let (mut now, mut rng) = (Time::ZERO, stream(21, "ared-down"));
    let step = Duration::from_nanos(533_334);
    // First push max_p up with avg above the band for 10 s...
    let mut changes = vec![(Time::ZERO, 0.1)];
    hold(
        &mut q,
        &mut now,
        &mut rng,
        14,
        1000,
        step,
        0,
        18_750,
        record_max_p(&mut changes),
    );
    let high = q.max_p().unwrap();
    assert!(high > 0.2, "max_p {high}");
    // ...then hold the queue at 6 (avg below min_th + 0.4·(max_th - min_th) = 9) for 30 s.
    let mut changes = vec![(now, high)];
    let mut below_since = None;
    hold(
        &mut q,
        &mut now,
        &mut rng,
        6,
        1000,
        step,
        0,
        56_250,
        |t, q| {
            if below_since.is_none() && q.average_queue().unwrap() < 9.0 {
                below_since = Some(t);
            }
            record_max_p(&mut changes)(t, q);
        },
    );
    let below_since = below_since.unwrap();
    let mut decreases = 0;
    for pair in changes.windows(2) {
        let ((_, p0), (t1, p1)) = (pair[0], pair[1]);
        if t1 > below_since {
            // Multiplicative decrease by 0.9.
            assert!((p1 - 0.9 * p0).abs() < 1e-12, "{p0} -> {p1}");
            decreases += 1;
        }
    }
    let last = changes.last().unwrap().1;
    println!("ARED below the band: max_p {high:.4} -> {last:.4} in {decreases} decreases");
    assert!(decreases > 10);
    // It stops once max_p is at or below bottom (0.01), undershooting by less than one step.
    assert!((0.009..=0.01).contains(&last), "final max_p {last}");
}

// ---------------------------------------------------------------------------------------------
// Determinism and allocation.

#[test]
fn same_seed_same_outcomes() {
    let run = |seed: u64| {
        let mut q = red(RedConfig::ns2_35(), MBPS_15);
        let mut rng = stream(seed, "red-determinism");
        let mut now = Time::ZERO;
        let mut outcomes = Vec::new();
        for seq in 0..20_000u64 {
            now += Duration::from_micros(300);
            let o = q.enqueue(now, packet(seq, 1000, false), &mut rng);
            outcomes.push(matches!(o, Enqueued::Dropped(_)));
            if seq % 5 != 0 {
                q.dequeue(now);
            }
        }
        (outcomes, q.average_queue().unwrap().to_bits())
    };
    assert_eq!(run(7), run(7));
    assert_ne!(run(7).0, run(8).0);
}

#[test]
fn no_heap_allocation_per_packet_in_steady_state() {
    for config in [
        QueueConfig::DropTail {
            limit: QueueLimit::Packets(50),
        },
        QueueConfig::DropTail {
            limit: QueueLimit::Bytes(1_000_000),
        },
        QueueConfig::Red(RedConfig::ns2_35()),
        QueueConfig::Red(RedConfig::adaptive()),
    ] {
        let mut q = Queue::new(&config, MBPS_15);
        let mut rng = stream(22, "alloc");
        let mut now = Time::ZERO;
        let mut drive = |q: &mut Queue, n: u64| {
            for seq in 0..n {
                now += Duration::from_micros(400);
                q.enqueue(now, packet(seq, 1000, seq % 2 == 0), &mut rng);
                q.enqueue(now, packet(seq, 1000, false), &mut rng);
                q.dequeue(now);
                if seq % 3 == 0 {
                    q.dequeue(now);
                }
            }
        };
        // Warm up to the buffer's high-water mark, then count.
        drive(&mut q, 5_000);
        let before = allocations_on_this_thread();
        drive(&mut q, 50_000);
        assert_eq!(allocations_on_this_thread(), before, "{config:?}");
    }
}
