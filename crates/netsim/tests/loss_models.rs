//! Integration tests of the loss models (docs/loss-models.md): exact counts and indices for the
//! deterministic models, per-flow filtering, statistical bounds for the random ones, schedule
//! switching at exact times, validation messages, and determinism.
//!
//! Statistical tests run at fixed seeds, so they are deterministic; the bounds are two-sided
//! 99% (z = 2.576). Bernoulli uses the binomial sd. Gilbert-Elliott uses the asymptotic
//! variance of a Markov-modulated Bernoulli sum (not the binomial one, which is several times
//! too small for bursty parameters), and a separate test checks that formula against the
//! spread of many independent runs.

use std::time::Duration;

use netsim::loss::{LossModel, LossModelConfig, LossModelError, LossModelStats};
use netsim::packet::{FlowId, NodeId, Packet, Payload};
use netsim::rng::{stream, SimRng};
use netsim::Time;
use proptest::prelude::*;

/// Two-sided 99% standard normal quantile.
const Z99: f64 = 2.576;

fn packet(flow: u32, seq: u64) -> Packet {
    Packet::new(FlowId(flow), seq, 1000, NodeId(1), Time::ZERO, Payload::Cbr)
}

fn secs(s: f64) -> Time {
    Time::from_secs_f64(s)
}

/// The drop decisions for `n` packets of flow 0, all offered at time zero.
fn drop_sequence(config: &LossModelConfig, n: u64, rng: &mut SimRng) -> Vec<bool> {
    let mut model = LossModel::new(config, None);
    (0..n)
        .map(|i| model.should_drop(Time::ZERO, &packet(0, i), rng))
        .collect()
}

/// The indices of the dropped packets among `n`, all offered at time zero.
fn dropped_indices(config: &LossModelConfig, n: u64) -> Vec<u64> {
    let mut rng = stream(0, "unused");
    drop_sequence(config, n, &mut rng)
        .iter()
        .enumerate()
        .filter(|(_, &dropped)| dropped)
        .map(|(i, _)| i as u64)
        .collect()
}

fn count(drops: &[bool]) -> u64 {
    drops.iter().filter(|&&d| d).count() as u64
}

// ---------------------------------------------------------------- deterministic models

#[test]
fn periodic_one_in_a_hundred_drops_exactly_a_hundred_of_ten_thousand() {
    let config = LossModelConfig::Periodic {
        every: 100,
        phase: 37,
    };
    let dropped = dropped_indices(&config, 10_000);
    assert_eq!(dropped.len(), 100);
    assert_eq!(dropped, (0..100).map(|k| 37 + 100 * k).collect::<Vec<_>>());
    // The phase is taken modulo the period.
    let wrapped = LossModelConfig::Periodic {
        every: 100,
        phase: 137,
    };
    assert_eq!(dropped_indices(&wrapped, 10_000), dropped);
    // phase = every - 1 lets the first packet through and drops the last of each period.
    let last = LossModelConfig::Periodic {
        every: 100,
        phase: 99,
    };
    assert_eq!(dropped_indices(&last, 10_000)[..2], [99, 199]);
    eprintln!("periodic 1/100: 100 of 10000 dropped (expected exactly 100)");
}

#[test]
fn list_drops_exactly_its_indices() {
    let config = LossModelConfig::List {
        indices: vec![17, 0, 9_999, 5, 3, 10_000, 1 << 40],
    };
    assert_eq!(dropped_indices(&config, 10_000), vec![0, 3, 5, 17, 9_999]);
    let empty = LossModelConfig::List { indices: vec![] };
    assert!(dropped_indices(&empty, 1_000).is_empty());
}

#[test]
fn flow_filter_leaves_other_flows_untouched_and_uncounted() {
    let config = LossModelConfig::Periodic { every: 3, phase: 1 };
    let mut model = LossModel::new(&config, Some(FlowId(1)));
    let mut rng = stream(1, "link:0:loss");
    let mut flow1_dropped = Vec::new();
    let mut flow1_index = 0;
    for i in 0..3_000u64 {
        let flow = (i % 3) as u32;
        let dropped = model.should_drop(Time::from_nanos(i), &packet(flow, i / 3), &mut rng);
        if flow == 1 {
            if dropped {
                flow1_dropped.push(flow1_index);
            }
            flow1_index += 1;
        } else {
            assert!(!dropped, "packet {i} of flow {flow} was dropped");
        }
    }
    // Flow 1's packets are numbered among themselves: 1, 4, 7, ... of its own 1000.
    assert_eq!(
        flow1_dropped,
        (0..333).map(|k| 1 + 3 * k).collect::<Vec<_>>()
    );
    assert_eq!(
        model.stats(),
        LossModelStats {
            seen_packets: 1_000,
            dropped_packets: 333
        }
    );
}

#[test]
fn flow_filter_draws_no_randomness_for_other_flows() {
    let config = LossModelConfig::GilbertElliott {
        p_good_to_bad: 0.05,
        p_bad_to_good: 0.3,
        loss_in_good: 0.01,
        loss_in_bad: 0.7,
    };
    // Flow 2 alone...
    let mut alone = LossModel::new(&config, Some(FlowId(2)));
    let mut rng = stream(5, "link:0:loss");
    let expected: Vec<bool> = (0..2_000)
        .map(|i| alone.should_drop(Time::ZERO, &packet(2, i), &mut rng))
        .collect();
    // ...gives the same decisions when four other flows' packets are interleaved.
    let mut mixed = LossModel::new(&config, Some(FlowId(2)));
    let mut rng = stream(5, "link:0:loss");
    let mut got = Vec::new();
    for i in 0..10_000u64 {
        let flow = (i % 5) as u32;
        let dropped = mixed.should_drop(Time::ZERO, &packet(flow, i / 5), &mut rng);
        if flow == 2 {
            got.push(dropped);
        } else {
            assert!(!dropped);
        }
    }
    assert_eq!(got, expected);
}

// ---------------------------------------------------------------- random models

#[test]
fn bernoulli_rate_lies_within_the_binomial_99_percent_bound() {
    let n = 200_000u64;
    for (k, p) in [0.001, 0.01, 0.1, 0.5].into_iter().enumerate() {
        let config = LossModelConfig::Bernoulli { p };
        let mut rng = stream(2_000 + k as u64, "link:0:loss");
        let measured = count(&drop_sequence(&config, n, &mut rng)) as f64 / n as f64;
        let sd = (p * (1.0 - p) / n as f64).sqrt();
        eprintln!(
            "bernoulli p={p}: measured {measured:.6}, expected {p}, 99% bound +-{:.6} ({:+.2} sd)",
            Z99 * sd,
            (measured - p) / sd
        );
        assert!(
            (measured - p).abs() <= Z99 * sd,
            "p = {p}: measured {measured}, bound {}",
            Z99 * sd
        );
        assert_eq!(config.expected_loss_rate(), Some(p));
    }
}

/// Gilbert-Elliott parameters and the moments of its drop count.
struct GeCase {
    p_gb: f64,
    p_bg: f64,
    loss_good: f64,
    loss_bad: f64,
}

impl GeCase {
    fn config(&self) -> LossModelConfig {
        LossModelConfig::GilbertElliott {
            p_good_to_bad: self.p_gb,
            p_bad_to_good: self.p_bg,
            loss_in_good: self.loss_good,
            loss_in_bad: self.loss_bad,
        }
    }

    fn pi_bad(&self) -> f64 {
        self.p_gb / (self.p_gb + self.p_bg)
    }

    /// The stationary loss rate r = pi_good * h_good + pi_bad * h_bad.
    fn rate(&self) -> f64 {
        (1.0 - self.pi_bad()) * self.loss_good + self.pi_bad() * self.loss_bad
    }

    /// The chain's second eigenvalue, lambda = 1 - p_gb - p_bg.
    fn lambda(&self) -> f64 {
        1.0 - self.p_gb - self.p_bg
    }

    /// The asymptotic variance per packet of the drop count S_n, lim Var(S_n)/n: drops are
    /// conditionally independent given the states, so Cov(L_0, L_k) = (h_bad - h_good)^2
    /// pi_good pi_bad lambda^k for k >= 1, and
    /// sigma^2 = r(1 - r) + 2 (h_bad - h_good)^2 pi_good pi_bad lambda / (1 - lambda).
    fn variance_per_packet(&self) -> f64 {
        let r = self.rate();
        let pi_b = self.pi_bad();
        let dh = self.loss_bad - self.loss_good;
        r * (1.0 - r) + 2.0 * dh * dh * (1.0 - pi_b) * pi_b * self.lambda() / (1.0 - self.lambda())
    }

    /// E[S_n] - n r for a chain started in Good (the transient's deficit of Bad packets):
    /// -(h_bad - h_good) pi_bad sum_{i=1..n} lambda^i.
    fn start_bias(&self, n: u64) -> f64 {
        let l = self.lambda();
        let geometric = l * (1.0 - l.powi(n as i32)) / (1.0 - l);
        -(self.loss_bad - self.loss_good) * self.pi_bad() * geometric
    }
}

const GE_CASES: [GeCase; 3] = [
    // Long bursts of heavy loss: the binomial sd would be about 3x too small.
    GeCase {
        p_gb: 0.01,
        p_bg: 0.1,
        loss_good: 0.001,
        loss_bad: 0.5,
    },
    // Short total-loss bursts (the "Gilbert" special case).
    GeCase {
        p_gb: 0.005,
        p_bg: 0.5,
        loss_good: 0.0,
        loss_bad: 1.0,
    },
    // Fast switching (lambda < 0: negatively correlated states).
    GeCase {
        p_gb: 0.6,
        p_bg: 0.8,
        loss_good: 0.05,
        loss_bad: 0.4,
    },
];

#[test]
fn gilbert_elliott_rate_lies_within_the_markov_99_percent_bound() {
    let n = 1_000_000u64;
    for (k, case) in GE_CASES.iter().enumerate() {
        let config = case.config();
        let expected = case.rate();
        assert!((config.expected_loss_rate().unwrap() - expected).abs() < 1e-15);
        let mut rng = stream(3_000 + k as u64, "link:0:loss");
        let dropped = count(&drop_sequence(&config, n, &mut rng)) as f64;
        let measured = dropped / n as f64;
        let mean = expected + case.start_bias(n) / n as f64;
        let sd = (case.variance_per_packet() / n as f64).sqrt();
        let binomial_sd = (expected * (1.0 - expected) / n as f64).sqrt();
        eprintln!(
            "gilbert-elliott case {k}: measured {measured:.6}, expected {expected:.6}, \
             99% bound +-{:.6} ({:+.2} sd; binomial sd would be {:.2}x smaller)",
            Z99 * sd,
            (measured - mean) / sd,
            sd / binomial_sd
        );
        assert!(
            (measured - mean).abs() <= Z99 * sd,
            "case {k}: measured {measured}, expected {expected}, bound {}",
            Z99 * sd
        );
    }
}

#[test]
fn gilbert_elliott_variance_formula_matches_independent_runs() {
    // The spread of the drop count over many independent runs (separate streams) must match
    // the Markov-modulated variance used above. With B runs the sample variance has relative sd
    // about sqrt(2/(B-1)); 0.2 is a 99% band for B = 400.
    let (runs, n) = (400u64, 25_000u64);
    for (k, case) in GE_CASES.iter().enumerate() {
        let config = case.config();
        let counts: Vec<f64> = (0..runs)
            .map(|run| {
                let mut rng = stream(run, &format!("ge-variance:{k}"));
                count(&drop_sequence(&config, n, &mut rng)) as f64
            })
            .collect();
        let mean = counts.iter().sum::<f64>() / runs as f64;
        let sample_var = counts.iter().map(|c| (c - mean).powi(2)).sum::<f64>() / (runs - 1) as f64;
        let predicted = case.variance_per_packet() * n as f64;
        let binomial = case.rate() * (1.0 - case.rate()) * n as f64;
        eprintln!(
            "gilbert-elliott case {k}: Var(S_{n}) over {runs} runs {sample_var:.1}, \
             Markov formula {predicted:.1}, binomial {binomial:.1}"
        );
        assert!(
            (sample_var / predicted - 1.0).abs() < 0.2,
            "case {k}: sample variance {sample_var}, predicted {predicted}"
        );
    }
}

#[test]
fn gilbert_elliott_bursts_last_one_over_p_bad_to_good() {
    // With loss only in Bad and always in Bad, runs of drops are exactly the stays in Bad and
    // runs of deliveries the stays in Good; both are geometric (sd sqrt(1 - p)/p).
    let (p_gb, p_bg) = (0.02, 0.2);
    let config = LossModelConfig::GilbertElliott {
        p_good_to_bad: p_gb,
        p_bad_to_good: p_bg,
        loss_in_good: 0.0,
        loss_in_bad: 1.0,
    };
    let mut rng = stream(4_000, "link:0:loss");
    let drops = drop_sequence(&config, 1_000_000, &mut rng);
    // Complete runs only: skip the first run (it starts from the initial state, not from a
    // switch) and the last (cut off by the end).
    let mut runs: Vec<(bool, u64)> = Vec::new();
    for &d in &drops {
        match runs.last_mut() {
            Some((state, len)) if *state == d => *len += 1,
            _ => runs.push((d, 1)),
        }
    }
    let complete = &runs[1..runs.len() - 1];
    for (state, p, name) in [(true, p_bg, "bad"), (false, p_gb, "good")] {
        let lengths: Vec<f64> = complete
            .iter()
            .filter(|(s, _)| *s == state)
            .map(|&(_, len)| len as f64)
            .collect();
        let mean = lengths.iter().sum::<f64>() / lengths.len() as f64;
        let bound = Z99 * (1.0 - p).sqrt() / p / (lengths.len() as f64).sqrt();
        eprintln!(
            "gilbert-elliott {name} stays: {} of mean {mean:.3}, expected {:.3}, 99% bound +-{bound:.3}",
            lengths.len(),
            1.0 / p
        );
        assert!(
            (mean - 1.0 / p).abs() <= bound,
            "{name}: mean {mean}, expected {}",
            1.0 / p
        );
    }
}

// ---------------------------------------------------------------- schedules

#[test]
fn schedule_switches_at_exactly_the_step_times() {
    let all = LossModelConfig::Bernoulli { p: 1.0 };
    let none = LossModelConfig::Bernoulli { p: 0.0 };
    let config = LossModelConfig::Schedule {
        steps: vec![
            (secs(1.0), all.clone()),
            (secs(2.0), none),
            (secs(3.0), all),
        ],
    };
    let mut model = LossModel::new(&config, None);
    let mut rng = stream(6, "link:0:loss");
    let one_ns = Duration::from_nanos(1);
    let mut drop_at = |t: Time| model.should_drop(t, &packet(0, 0), &mut rng);
    assert!(!drop_at(Time::ZERO), "before the first step nothing drops");
    for (boundary, before, at) in [(1.0, false, true), (2.0, true, false), (3.0, false, true)] {
        let b = secs(boundary);
        assert_eq!(drop_at(b - one_ns), before, "just before {boundary} s");
        assert_eq!(drop_at(b), at, "at {boundary} s");
    }
}

#[test]
fn schedule_restarts_the_arrival_index_at_each_step() {
    let periodic = LossModelConfig::Periodic { every: 4, phase: 0 };
    let config = LossModelConfig::Schedule {
        steps: vec![(Time::ZERO, periodic.clone()), (secs(1.0), periodic)],
    };
    let mut model = LossModel::new(&config, None);
    let mut rng = stream(7, "link:0:loss");
    // Ten packets in the first step (indices 0..9: drops at 0, 4, 8), then the second step's
    // model starts at index 0 and drops its first packet, although a continued count (10)
    // would not.
    let dropped: Vec<bool> = (0..14)
        .map(|i| model.should_drop(secs(0.1 * i as f64), &packet(0, i), &mut rng))
        .collect();
    let expected = [0, 4, 8, 10];
    for (i, d) in dropped.iter().enumerate() {
        assert_eq!(*d, expected.contains(&i), "packet {i}");
    }
}

/// floyd2000 Fig. 2's loss process, as docs/loss-models.md writes it.
fn floyd2000_fig2() -> LossModelConfig {
    let periodic = |every: u64| LossModelConfig::Periodic {
        every,
        phase: every - 1,
    };
    LossModelConfig::Schedule {
        steps: vec![
            (Time::ZERO, periodic(100)),
            (secs(6.0), periodic(10)),
            (secs(9.0), periodic(200)),
        ],
    }
}

#[test]
fn floyd2000_fig2_schedule_drops_one_percent_then_ten_then_half() {
    let config = floyd2000_fig2();
    assert_eq!(config.validate(), Ok(()));
    let mut model = LossModel::new(&config, None);
    let mut rng = stream(8, "link:0:loss");
    // One packet per millisecond for 12 s.
    let mut drop_times = Vec::new();
    for i in 0..12_000u64 {
        let t = Time::from_nanos(i * 1_000_000);
        if model.should_drop(t, &packet(0, i), &mut rng) {
            drop_times.push(t);
        }
    }
    let in_range = |a: f64, b: f64| {
        drop_times
            .iter()
            .filter(|t| (secs(a)..secs(b)).contains(t))
            .count()
    };
    assert_eq!(in_range(0.0, 6.0), 60);
    assert_eq!(in_range(6.0, 9.0), 300);
    assert_eq!(in_range(9.0, 12.0), 15);
    // Each step counts from its own start: the first drop is its every-th packet.
    let first_after = |a: f64| *drop_times.iter().find(|&&t| t >= secs(a)).unwrap();
    assert_eq!(first_after(0.0), secs(0.099));
    assert_eq!(first_after(6.0), secs(6.009));
    assert_eq!(first_after(9.0), secs(9.199));
    eprintln!("floyd2000 fig2: 60/6000, 300/3000, 15/3000 dropped (expected exactly these)");
}

// ---------------------------------------------------------------- validation

#[test]
fn validation_rejects_each_bad_value_naming_the_field() {
    let ge =
        |p_good_to_bad, p_bad_to_good, loss_in_good, loss_in_bad| LossModelConfig::GilbertElliott {
            p_good_to_bad,
            p_bad_to_good,
            loss_in_good,
            loss_in_bad,
        };
    let ok = LossModelConfig::Bernoulli { p: 0.1 };
    let cases: Vec<(LossModelConfig, &str, &str)> = vec![
        (LossModelConfig::Bernoulli { p: -0.01 }, "p", "p = -0.01"),
        (LossModelConfig::Bernoulli { p: 1.5 }, "p", "p = 1.5"),
        (LossModelConfig::Bernoulli { p: f64::NAN }, "p", "p = NaN"),
        (
            ge(1.2, 0.1, 0.0, 1.0),
            "p_good_to_bad",
            "p_good_to_bad = 1.2",
        ),
        (
            ge(0.1, -1.0, 0.0, 1.0),
            "p_bad_to_good",
            "p_bad_to_good = -1",
        ),
        (ge(0.1, 0.1, 2.0, 1.0), "loss_in_good", "loss_in_good = 2"),
        (
            ge(0.1, 0.1, 0.0, f64::INFINITY),
            "loss_in_bad",
            "loss_in_bad = inf",
        ),
        (
            LossModelConfig::Periodic { every: 0, phase: 0 },
            "every",
            "every = 0",
        ),
        (
            LossModelConfig::List {
                indices: vec![3, 1, 3],
            },
            "indices",
            "index 3",
        ),
        (
            LossModelConfig::Schedule {
                steps: vec![(secs(2.0), ok.clone()), (secs(1.0), ok.clone())],
            },
            "steps",
            "steps[1] starts at 1.000000000 s, not after steps[0]",
        ),
        (
            LossModelConfig::Schedule {
                steps: vec![(secs(1.0), ok.clone()), (secs(1.0), ok.clone())],
            },
            "steps",
            "strictly increasing",
        ),
        (
            LossModelConfig::Schedule {
                steps: vec![(secs(0.0), LossModelConfig::Schedule { steps: vec![] })],
            },
            "steps",
            "steps[0] is a schedule",
        ),
        (
            LossModelConfig::Schedule {
                steps: vec![
                    (secs(0.0), ok.clone()),
                    (secs(1.0), ge(0.1, 0.1, 0.0, -0.5)),
                ],
            },
            "loss_in_bad",
            "steps[1]: loss_in_bad = -0.5",
        ),
    ];
    for (config, field, message) in cases {
        let err = config
            .validate()
            .expect_err(&format!("{config:?} should be refused"));
        assert_eq!(err.field(), field, "{config:?}");
        let text = err.to_string();
        assert!(text.contains(field), "{text:?} does not name {field}");
        assert!(
            text.contains(message),
            "{text:?} does not contain {message:?}"
        );
        // (Compared as text: a NaN field makes the errors themselves unequal.)
        let from_new = LossModel::try_new(&config, None).unwrap_err();
        assert_eq!(from_new.to_string(), text);
    }
    // The inner error of a bad step is reachable as its source.
    let nested = LossModelConfig::Schedule {
        steps: vec![(secs(1.0), LossModelConfig::Bernoulli { p: 2.0 })],
    };
    let err = nested.validate().unwrap_err();
    let LossModelError::InvalidStep { step: 0, source } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(source.field(), "p");
}

#[test]
fn validation_accepts_boundary_values() {
    let configs = [
        LossModelConfig::Periodic {
            every: 1,
            phase: u64::MAX,
        },
        LossModelConfig::Bernoulli { p: 0.0 },
        LossModelConfig::Bernoulli { p: 1.0 },
        LossModelConfig::GilbertElliott {
            p_good_to_bad: 0.0,
            p_bad_to_good: 1.0,
            loss_in_good: 0.0,
            loss_in_bad: 1.0,
        },
        LossModelConfig::List { indices: vec![] },
        LossModelConfig::Schedule { steps: vec![] },
        floyd2000_fig2(),
    ];
    for config in configs {
        assert_eq!(config.validate(), Ok(()), "{config:?}");
    }
}

// ---------------------------------------------------------------- determinism

#[test]
fn same_seed_gives_the_same_drop_sequence() {
    let configs = [
        LossModelConfig::Bernoulli { p: 0.05 },
        GE_CASES[0].config(),
        LossModelConfig::Schedule {
            steps: vec![
                (Time::ZERO, LossModelConfig::Bernoulli { p: 0.2 }),
                (Time::from_nanos(5_000), GE_CASES[2].config()),
            ],
        },
    ];
    for config in configs {
        let run = |seed: u64| {
            let mut model = LossModel::new(&config, None);
            let mut rng = stream(seed, "link:bottleneck:loss");
            (0..10_000u64)
                .map(|i| model.should_drop(Time::from_nanos(i), &packet(0, i), &mut rng))
                .collect::<Vec<bool>>()
        };
        let first = run(11);
        assert_eq!(run(11), first, "{config:?}");
        assert_ne!(run(12), first, "{config:?}");
    }
}

// ---------------------------------------------------------------- properties

proptest! {
    #[test]
    fn periodic_drops_exactly_the_matching_indices(
        every in 1u64..60, phase in any::<u64>(), n in 0u64..3_000,
    ) {
        let config = LossModelConfig::Periodic { every, phase };
        let expected: Vec<u64> = (0..n).filter(|i| i % every == phase % every).collect();
        prop_assert_eq!(dropped_indices(&config, n), expected);
    }

    #[test]
    fn list_drops_exactly_the_listed_indices(
        set in proptest::collection::btree_set(0u64..600, 0..80), n in 0u64..700,
    ) {
        // Reverse order on input: the model sorts.
        let indices: Vec<u64> = set.iter().rev().copied().collect();
        let config = LossModelConfig::List { indices };
        let expected: Vec<u64> = set.into_iter().filter(|&i| i < n).collect();
        prop_assert_eq!(dropped_indices(&config, n), expected);
    }
}
