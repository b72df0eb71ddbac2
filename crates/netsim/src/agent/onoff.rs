//! ON/OFF traffic sources with ns-2's semantics (`Application/Traffic/Pareto` and
//! `Application/Traffic/Exponential` over a UDP agent: ns-2 `tools/trafgen.cc`, `pareto.cc`,
//! `expoo.cc`; protocols.md §6.1). The sink is the plain [`Sink`](super::Sink).
//!
//! While ON the source sends packets of `size` bytes every interval = size·8/rate seconds. A burst
//! is drawn as a **packet count** (mean burst_time/interval packets), not as a duration, and the
//! OFF time is added to the gap after a burst's last packet slot: when the current burst is used
//! up, the next gap is interval + OFF and the packet that ends it opens a new burst. Hence the
//! first packet after a start comes after interval + OFF, and the gaps inside a burst are exactly
//! one interval. Pareto draws use ns-2's scale choice, mean·(shape-1)/shape, so that the means
//! are burst_time and idle_time; the count is rounded to the nearest whole packet, at least 1.

use std::time::Duration;

use tfrc::time::{duration_from_secs, duration_nanos};
use tfrc::Time;

use super::{Agent, Outbox};
use crate::packet::{Packet, Payload};
use crate::rng::{exponential, pareto, SimRng};
use crate::serialization::transmission_time;

/// Which distribution the burst sizes and OFF times follow.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum OnOffDistribution {
    /// Pareto with this tail index (`shape_`, above 1 so the means exist): heavy-tailed bursts
    /// and idle times (`Application/Traffic/Pareto`).
    Pareto {
        /// The Pareto shape (tail index), above 1.
        shape: f64,
    },
    /// Exponential bursts and idle times (`Application/Traffic/Exponential`).
    Exponential,
}

impl OnOffDistribution {
    /// The scenario kind of a source with this distribution ("pareto", "exponential").
    pub fn name(&self) -> &'static str {
        match self {
            OnOffDistribution::Pareto { .. } => "pareto",
            OnOffDistribution::Exponential => "exponential",
        }
    }
}

/// ON/OFF source parameters. [`OnOffConfig::pareto`] and [`OnOffConfig::exponential`] give
/// ns-2's defaults.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OnOffConfig {
    /// The distribution of the burst sizes and OFF times.
    pub distribution: OnOffDistribution,
    /// Sending rate while ON, in bits per second (`rate_`), above 0.
    pub rate_bps: u64,
    /// Packet size in bytes (`packetSize_`), above 0.
    pub size_bytes: u32,
    /// Mean ON time (`burst_time_`), above 0; bursts have on/interval packets on average.
    pub on: Duration,
    /// Mean OFF time (`idle_time_`).
    pub off: Duration,
}

/// ns-2's Pareto shape default (`shape_`).
pub const NS2_SHAPE: f64 = 1.5;

impl OnOffConfig {
    /// ns-2's `Application/Traffic/Pareto` defaults: 64 kb/s while ON, 210-byte packets, ON and
    /// OFF means of 0.5 s, shape 1.5.
    pub fn pareto() -> OnOffConfig {
        OnOffConfig {
            distribution: OnOffDistribution::Pareto { shape: NS2_SHAPE },
            ..OnOffConfig::exponential()
        }
    }

    /// ns-2's `Application/Traffic/Exponential` defaults: 64 kb/s while ON, 210-byte packets, ON
    /// and OFF means of 0.5 s.
    pub fn exponential() -> OnOffConfig {
        OnOffConfig {
            distribution: OnOffDistribution::Exponential,
            rate_bps: 64_000,
            size_bytes: 210,
            on: Duration::from_millis(500),
            off: Duration::from_millis(500),
        }
    }

    /// The gap between the packets of a burst: size·8/rate, rounded up to the nanosecond (as
    /// CBR's).
    pub fn interval(&self) -> Duration {
        transmission_time(self.size_bytes, self.rate_bps)
    }

    /// The mean burst size in packets, burst_time/interval with ns-2's unrounded interval
    /// (`burstlen_`).
    pub fn mean_burst_packets(&self) -> f64 {
        let interval_s = f64::from(self.size_bytes) * 8.0 / self.rate_bps as f64;
        self.on.as_secs_f64() / interval_s
    }

    /// The long-run mean sending rate in bits per second, rate·on/(on + off): a burst of n
    /// packets occupies n intervals and is followed by one OFF time.
    pub fn mean_rate_bps(&self) -> f64 {
        let on = self.on.as_secs_f64();
        self.rate_bps as f64 * on / (on + self.off.as_secs_f64())
    }

    /// Checks the ranges the source needs; the error names the scenario key.
    pub fn validate(&self) -> Result<(), OnOffConfigError> {
        let error = |field, reason| Err(OnOffConfigError { field, reason });
        if self.rate_bps == 0 {
            return error("rate", "a rate above 0");
        }
        if self.size_bytes == 0 {
            return error("size", "a packet size above 0");
        }
        if self.on.is_zero() {
            return error("on", "a mean ON time above 0");
        }
        if let OnOffDistribution::Pareto { shape } = self.distribution {
            // The scale mean·(shape-1)/shape needs shape > 1 for the means to exist.
            if !(shape.is_finite() && shape > 1.0) {
                return error("shape", "a finite Pareto shape above 1");
            }
        }
        Ok(())
    }
}

/// An [`OnOffConfig`] outside its documented ranges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OnOffConfigError {
    /// The field's scenario key ("rate", "shape", ...).
    pub field: &'static str,
    /// What it must be.
    pub reason: &'static str,
}

impl std::fmt::Display for OnOffConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: expected {}", self.field, self.reason)
    }
}

impl std::error::Error for OnOffConfigError {}

/// The two draws of an ON/OFF source, in ns-2's order: the next burst's packet count, then the
/// OFF time before it (`POO_Traffic::next_interval`, `EXPOO_Traffic::next_interval`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BurstSampler {
    distribution: OnOffDistribution,
    mean_packets: f64,
    mean_off_s: f64,
}

impl BurstSampler {
    /// The sampler of `config`'s source.
    pub fn new(config: &OnOffConfig) -> BurstSampler {
        BurstSampler {
            distribution: config.distribution,
            mean_packets: config.mean_burst_packets(),
            mean_off_s: config.off.as_secs_f64(),
        }
    }

    /// A burst's packet count: the draw rounded to the nearest whole number, at least 1.
    pub fn burst_packets(&self, rng: &mut SimRng) -> u64 {
        let x = self.draw(rng, self.mean_packets);
        // `as` truncates toward zero like ns-2's int() and saturates instead of overflowing.
        ((x + 0.5) as u64).max(1)
    }

    /// An OFF time, rounded to the nanosecond.
    pub fn off_time(&self, rng: &mut SimRng) -> Duration {
        duration_from_secs(self.draw(rng, self.mean_off_s))
    }

    /// A draw with the given mean.
    fn draw(&self, rng: &mut SimRng, mean: f64) -> f64 {
        match self.distribution {
            OnOffDistribution::Pareto { shape } => pareto(rng, mean * (shape - 1.0) / shape, shape),
            OnOffDistribution::Exponential => exponential(rng, mean),
        }
    }
}

/// A running ON/OFF source.
#[derive(Clone, Debug)]
pub struct OnOffSource {
    sampler: BurstSampler,
    size_bytes: u32,
    interval_ns: u64,
    rng: SimRng,
    next_send: Option<Time>,
    /// Packets of the current burst not yet scheduled (`rem_`).
    remaining: u64,
    /// Whether the pending gap lies inside a burst (ns-2's `on_`).
    in_burst: bool,
    /// Whether the pending packet is the first of a burst.
    opens_burst: bool,
    sent: u64,
    bursts: u64,
}

impl OnOffSource {
    /// A source that waits for [`Agent::on_start`].
    pub fn new(config: &OnOffConfig, rng: SimRng) -> OnOffSource {
        OnOffSource {
            sampler: BurstSampler::new(config),
            size_bytes: config.size_bytes,
            interval_ns: duration_nanos(config.interval()),
            rng,
            next_send: None,
            remaining: 0,
            in_burst: false,
            opens_burst: false,
            sent: 0,
            bursts: 0,
        }
    }

    /// Packets sent so far.
    pub fn sent(&self) -> u64 {
        self.sent
    }

    /// Bursts begun so far (bursts whose first packet has been sent).
    pub fn bursts(&self) -> u64 {
        self.bursts
    }

    /// The gap before the next packet, drawing a new burst and its OFF time when the current
    /// burst is used up (ns-2 `next_interval`).
    fn next_gap(&mut self) -> u64 {
        let mut gap = self.interval_ns;
        self.in_burst = true;
        if self.remaining == 0 {
            self.remaining = self.sampler.burst_packets(&mut self.rng);
            let off = duration_nanos(self.sampler.off_time(&mut self.rng));
            gap = gap.saturating_add(off);
            self.in_burst = false;
            self.opens_burst = true;
        }
        self.remaining -= 1;
        gap
    }

    fn schedule(&mut self, now: Time) {
        let gap = self.next_gap();
        self.next_send = Some(Time::from_nanos(now.as_nanos().saturating_add(gap)));
    }
}

impl Agent for OnOffSource {
    /// `packets_sent` and `bursts` (cumulative), `on`: 1 while the pending gap lies inside a
    /// burst, 0 during an OFF gap or while stopped (ns-2's `on_`).
    fn trace_fields(&self) -> &'static [&'static str] {
        &["packets_sent", "bursts", "on"]
    }

    /// Starts afresh as ns-2's `TrafficGenerator::start` does: a new burst, whose first packet
    /// comes after interval + OFF. A start while running changes nothing.
    fn on_start(&mut self, now: Time, _out: &mut Outbox) {
        if self.next_send.is_none() {
            self.remaining = 0;
            self.schedule(now);
        }
    }

    fn on_stop(&mut self, _now: Time, _out: &mut Outbox) {
        self.next_send = None;
        self.in_burst = false;
    }

    fn handle_packet(&mut self, _now: Time, _packet: &Packet, _out: &mut Outbox) {}

    fn poll_timeout(&self) -> Option<Time> {
        self.next_send
    }

    fn handle_timeout(&mut self, now: Time, out: &mut Outbox) {
        if self.next_send.is_some_and(|at| at <= now) {
            out.send(self.size_bytes, Payload::OnOff);
            self.sent += 1;
            if self.opens_burst {
                self.opens_burst = false;
                self.bursts += 1;
            }
            self.schedule(now);
        }
    }

    fn trace(&self, values: &mut [f64]) {
        let on = self.in_burst && self.next_send.is_some();
        for (value, v) in values.iter_mut().zip([
            self.sent as f64,
            self.bursts as f64,
            f64::from(u8::from(on)),
        ]) {
            *value = v;
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::rng::stream;

    /// floyd2000's sources: ON 1 s, OFF 2 s, 500 kb/s, 1000-byte packets (16 ms apart).
    fn floyd2000(distribution: OnOffDistribution) -> OnOffConfig {
        OnOffConfig {
            distribution,
            rate_bps: 500_000,
            size_bytes: 1000,
            on: Duration::from_secs(1),
            off: Duration::from_secs(2),
        }
    }

    /// The send times of a source started at 0 and run until `until`.
    fn sends(config: &OnOffConfig, seed: u64, until: Time) -> Vec<u64> {
        let mut source = OnOffSource::new(config, stream(seed, "onoff"));
        let mut out = Outbox::default();
        let mut times = Vec::new();
        source.on_start(Time::ZERO, &mut out);
        assert!(out.packets().is_empty(), "nothing is sent at the start");
        while let Some(at) = source.poll_timeout().filter(|&at| at <= until) {
            source.handle_timeout(at, &mut out);
            times.extend(out.drain().map(|_| at.as_nanos()));
        }
        times
    }

    /// How many packets a source started at 0 sends until `until`.
    fn count_sends(config: &OnOffConfig, seed: u64, until: Time) -> u64 {
        let mut source = OnOffSource::new(config, stream(seed, "onoff"));
        let mut out = Outbox::default();
        source.on_start(Time::ZERO, &mut out);
        while let Some(at) = source.poll_timeout().filter(|&at| at <= until) {
            source.handle_timeout(at, &mut out);
            out.drain();
        }
        source.sent()
    }

    /// The Hill estimator of the tail index from the `k` largest of `draws`.
    fn hill(mut draws: Vec<f64>, k: usize) -> f64 {
        draws.sort_by(|a, b| b.total_cmp(a));
        let threshold = draws[k].ln();
        k as f64 / draws[..k].iter().map(|x| x.ln() - threshold).sum::<f64>()
    }

    #[test]
    fn ns2_timing_first_packet_after_interval_plus_off_bursts_at_the_interval() {
        for distribution in [
            OnOffDistribution::Pareto { shape: 1.5 },
            OnOffDistribution::Exponential,
        ] {
            let config = floyd2000(distribution);
            assert_eq!(config.interval(), Duration::from_millis(16));
            let interval = 16_000_000;
            // Replay the draws the source makes, in its order: count, then OFF.
            let sampler = BurstSampler::new(&config);
            let mut rng = stream(3, "onoff");
            let mut expected = Vec::new();
            let mut t = 0u64;
            while expected.len() < 2000 {
                let count = sampler.burst_packets(&mut rng);
                let off = duration_nanos(sampler.off_time(&mut rng));
                t += interval + off;
                expected.push(t);
                for _ in 1..count {
                    t += interval;
                    expected.push(t);
                }
            }
            let until = Time::from_nanos(expected[1999]);
            assert_eq!(sends(&config, 3, until), expected[..2000]);
        }
    }

    #[test]
    fn trace_counts_bursts_and_shows_on_inside_a_burst() {
        let config = floyd2000(OnOffDistribution::Exponential);
        let mut source = OnOffSource::new(&config, stream(5, "onoff"));
        let mut out = Outbox::default();
        let mut values = [0.0; 3];
        source.on_start(Time::ZERO, &mut out);
        source.trace(&mut values);
        assert_eq!(values, [0.0, 0.0, 0.0], "waiting out interval + OFF");
        let mut bursts = 0;
        let mut previous: Option<u64> = None;
        for _ in 0..5000 {
            let at = source.poll_timeout().unwrap();
            source.handle_timeout(at, &mut out);
            assert_eq!(out.drain().count(), 1);
            // A gap longer than an interval ended an OFF time and opened a burst.
            if previous.is_none_or(|p| at.as_nanos() - p > 16_000_000) {
                bursts += 1;
            }
            previous = Some(at.as_nanos());
            source.trace(&mut values);
            let next_gap = source.poll_timeout().unwrap().as_nanos() - at.as_nanos();
            assert_eq!(values[2] == 1.0, next_gap == 16_000_000);
        }
        assert_eq!(values[0], 5000.0);
        assert_eq!(values[1], f64::from(bursts));
        assert_eq!(source.bursts(), bursts as u64);
        assert!(bursts > 20, "{bursts}");
        source.on_stop(Time::from_secs_f64(1e6), &mut out);
        source.trace(&mut values);
        assert_eq!(values[2], 0.0);
        assert_eq!(source.poll_timeout(), None);
    }

    #[test]
    fn restart_draws_a_new_burst_after_interval_plus_off() {
        let config = floyd2000(OnOffDistribution::Pareto { shape: 1.5 });
        let mut source = OnOffSource::new(&config, stream(1, "onoff"));
        let mut out = Outbox::default();
        source.on_start(Time::ZERO, &mut out);
        let first = source.poll_timeout().unwrap();
        source.handle_timeout(first, &mut out);
        source.on_stop(first, &mut out);
        assert_eq!(source.poll_timeout(), None);
        let restart = Time::from_nanos(first.as_nanos() + 1);
        source.on_start(restart, &mut out);
        let next = source.poll_timeout().unwrap();
        // A Pareto OFF time is at least its scale, 2 s·(1.5 - 1)/1.5.
        assert!(next.as_nanos() - restart.as_nanos() >= 16_000_000 + 666_666_666);
        // A second start while running keeps the schedule.
        source.on_start(Time::from_nanos(restart.as_nanos() + 5), &mut out);
        assert_eq!(source.poll_timeout(), Some(next));
        assert!(out.packets().len() == 1);
    }

    #[test]
    fn pareto_bursts_and_off_times_are_heavy_tailed_with_the_configured_shape() {
        for shape in [1.5, 1.2, 1.9] {
            let config = floyd2000(OnOffDistribution::Pareto { shape });
            let sampler = BurstSampler::new(&config);
            let mut rng = stream(11, "hill");
            let n = 100_000;
            let (counts, offs): (Vec<f64>, Vec<f64>) = (0..n)
                .map(|_| {
                    let count = sampler.burst_packets(&mut rng) as f64;
                    (count, sampler.off_time(&mut rng).as_secs_f64())
                })
                .unzip();
            // The k = 1000 largest of 100 000: the estimator's standard error is about
            // shape/sqrt(k), ~0.05 at 1.5.
            let (a_on, a_off) = (hill(counts.clone(), 1000), hill(offs.clone(), 1000));
            assert!((a_on - shape).abs() < 0.15 * shape, "ON {a_on} vs {shape}");
            assert!(
                (a_off - shape).abs() < 0.15 * shape,
                "OFF {a_off} vs {shape}"
            );
            // Minima are ns-2's scales: mean·(shape-1)/shape.
            let min_count = counts.iter().copied().fold(f64::MAX, f64::min);
            assert_eq!(
                min_count,
                (62.5 * (shape - 1.0) / shape + 0.5).floor().max(1.0)
            );
            let min_off = offs.iter().copied().fold(f64::MAX, f64::min);
            assert!(min_off >= 2.0 * (shape - 1.0) / shape - 1e-9);
        }
    }

    #[test]
    fn exponential_bursts_are_light_tailed_with_the_configured_means() {
        let config = floyd2000(OnOffDistribution::Exponential);
        let sampler = BurstSampler::new(&config);
        let mut rng = stream(12, "exp");
        let n = 200_000;
        let (counts, offs): (Vec<f64>, Vec<f64>) = (0..n)
            .map(|_| {
                let count = sampler.burst_packets(&mut rng) as f64;
                (count, sampler.off_time(&mut rng).as_secs_f64())
            })
            .unzip();
        let mean_count = counts.iter().sum::<f64>() / n as f64;
        let mean_off = offs.iter().sum::<f64>() / n as f64;
        assert!((mean_count / 62.5 - 1.0).abs() < 0.01, "{mean_count}");
        assert!((mean_off / 2.0 - 1.0).abs() < 0.01, "{mean_off}");
        // An exponential tail has no finite tail index: the Hill estimate is large.
        assert!(hill(counts, 1000) > 3.0);
    }

    #[test]
    fn the_long_run_rate_is_rate_times_on_over_on_plus_off() {
        // Heavy tails converge slowly: over 100 seeds of 20 Pareto sources, the mean rate was
        // within 5% for 92 seeds at 3000 s, 98 at 20 000 s and 99 at 50 000 s (~330 000
        // ON/OFF cycles); exponential sources were all within 2% at 3000 s.
        for (distribution, secs, tolerance) in [
            (OnOffDistribution::Pareto { shape: 1.5 }, 50_000, 0.05),
            (OnOffDistribution::Exponential, 5_000, 0.02),
        ] {
            let config = floyd2000(distribution);
            assert!((config.mean_rate_bps() - 500_000.0 / 3.0).abs() < 1e-6);
            let until = Time::from_nanos(secs * 1_000_000_000);
            let packets: u64 = (0..20).map(|s| count_sends(&config, s, until)).sum();
            let rate = packets as f64 * 8000.0 / secs as f64 / 20.0;
            let error = rate / config.mean_rate_bps() - 1.0;
            assert!(error.abs() < tolerance, "{}: {error}", distribution.name());
        }
    }

    #[test]
    fn validate_names_the_field() {
        let base = OnOffConfig::pareto();
        assert_eq!(base.validate(), Ok(()));
        let field = |c: OnOffConfig| c.validate().unwrap_err().field;
        assert_eq!(
            field(OnOffConfig {
                rate_bps: 0,
                ..base
            }),
            "rate"
        );
        assert_eq!(
            field(OnOffConfig {
                size_bytes: 0,
                ..base
            }),
            "size"
        );
        assert_eq!(
            field(OnOffConfig {
                on: Duration::ZERO,
                ..base
            }),
            "on"
        );
        for shape in [1.0, 0.5, -2.0, f64::NAN, f64::INFINITY] {
            let c = OnOffConfig {
                distribution: OnOffDistribution::Pareto { shape },
                ..base
            };
            assert_eq!(field(c), "shape");
        }
        let no_off = OnOffConfig {
            off: Duration::ZERO,
            ..OnOffConfig::exponential()
        };
        assert_eq!(no_off.validate(), Ok(()));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Whatever the parameters, every gap is one interval (inside a burst) or one interval
        /// plus an OFF time (before a burst's first packet, the first packet included); the
        /// gaps of the second kind are exactly the bursts counted.
        #[test]
        fn gaps_are_an_interval_or_an_interval_plus_off(
            pareto in any::<bool>(),
            shape in 1.01f64..4.0,
            rate_bps in 1_000u64..100_000_000,
            size_bytes in 1u32..10_000,
            on_ms in 1u64..5_000,
            off_ms in 0u64..5_000,
            seed in 0u64..1000,
        ) {
            let config = OnOffConfig {
                distribution: if pareto {
                    OnOffDistribution::Pareto { shape }
                } else {
                    OnOffDistribution::Exponential
                },
                rate_bps,
                size_bytes,
                on: Duration::from_millis(on_ms),
                off: Duration::from_millis(off_ms),
            };
            prop_assert!(config.validate().is_ok());
            let interval = duration_nanos(config.interval());
            let mut source = OnOffSource::new(&config, stream(seed, "prop"));
            let mut out = Outbox::default();
            source.on_start(Time::ZERO, &mut out);
            let mut previous = 0;
            let mut longer = 0;
            for _ in 0..300 {
                let at = source.poll_timeout().unwrap();
                let gap = at.as_nanos() - previous;
                prop_assert!(gap >= interval);
                if source.in_burst {
                    prop_assert_eq!(gap, interval);
                } else {
                    longer += 1;
                    // A Pareto OFF time is at least its scale, above 0.
                    prop_assert!(!pareto || off_ms == 0 || gap > interval);
                }
                source.handle_timeout(at, &mut out);
                prop_assert_eq!(out.drain().count(), 1);
                previous = at.as_nanos();
            }
            prop_assert_eq!(source.bursts(), longer);
            prop_assert_eq!(source.sent(), 300);
        }
    }
}
