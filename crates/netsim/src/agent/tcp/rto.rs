//! The retransmission timeout estimator: RFC 6298 §2 smoothing with ns-2's tick arithmetic
//! (`tcp.cc`: `rtt_update`, `rtt_timeout`, `rtt_backoff`; protocols.md §1.10).
//!
//! Samples are taken in whole ticks of the clock granularity, `int((rtt + phase)/tick)` with at
//! least 1 tick, where the phase is where the sender's tick clock stood when the timed packet
//! left (a random per-connection offset, ns-2's `boot_time_`). SRTT is kept ×8 and RTTVAR ×4 in
//! ticks, so the gains 1/8 and 1/4 are integer shifts; RTO = (SRTT + 4·RTTVAR) ticks, truncated.
//! The floor (`min_rto`) applies before the exponential backoff with `rfc2988` (RFC 6298 §2.4
//! and §5.5) or after it without; then the cap, and never below 2 ticks.
//!
//! Linux (`tcp_rtt_estimator`, `__tcp_set_rto`) floors the variance term instead of the
//! timeout: RTO = SRTT + max(4·RTTVAR, `min_rto`), so its timeout is never within 200 ms of
//! the smoothed RTT; [`RtoEstimator::with_variance_floor`] does the same. (Linux also lets
//! the variance term fall by a quarter per RTT only; with one sample per RTT, as here, the
//! RFC 6298 gain of 1/4 per sample is the same rate.)

use std::time::Duration;

use tfrc::Time;

/// The largest backoff multiplier (2^16): far beyond any cap, and safe from overflow.
const MAX_BACKOFF: u32 = 1 << 16;

/// RTT smoothing and the retransmission timeout of one sender.
#[derive(Clone, Debug)]
pub struct RtoEstimator {
    tick: f64,
    min_rto: f64,
    max_rto: f64,
    rfc2988: bool,
    /// Linux's RTO: the floor applies to the variance term (`min_rto` below 4·RTTVAR).
    variance_floor: bool,
    phase: f64,
    /// SRTT ×8, in ticks (`t_srtt_`); 0 before the first sample (and after a long backoff).
    srtt8: i64,
    /// RTTVAR ×4, in ticks (`t_rttvar_`).
    rttvar4: i64,
    /// The current RTO before floor, backoff and cap, in seconds (`t_rtxcur_`).
    rtxcur: f64,
    /// Exponential backoff multiplier (`t_backoff_`).
    backoff: u32,
    /// The last sample, in ticks (`t_rtt_`).
    last_ticks: i64,
    /// [`RtoEstimator::timeout`], computed whenever `rtxcur` or `backoff` changes: a sender
    /// arms its timer on nearly every ACK, and RTT samples and backoffs are far rarer.
    timeout: Duration,
}

impl RtoEstimator {
    /// An estimator with clock granularity `tick`, floor `min_rto`, cap `max_rto`, `initial`
    /// RTO before the first sample, the floor order `rfc2988`, and the clock `phase` in [0, tick)
    /// (draw it from the agent's RNG).
    pub fn new(
        tick: Duration,
        min_rto: Duration,
        max_rto: Duration,
        initial: Duration,
        rfc2988: bool,
        phase: f64,
    ) -> RtoEstimator {
        let tick = tick.as_secs_f64();
        let mut estimator = RtoEstimator {
            tick,
            min_rto: min_rto.as_secs_f64(),
            max_rto: max_rto.as_secs_f64(),
            rfc2988,
            variance_floor: false,
            phase,
            srtt8: 0,
            // ns-2's rttvar_init_ of 12 s; overwritten by the first sample.
            rttvar4: ((12.0 / tick) as i64) << 2,
            rtxcur: initial.as_secs_f64(),
            backoff: 1,
            last_ticks: 0,
            timeout: Duration::ZERO,
        };
        estimator.refresh_timeout();
        estimator
    }

    /// The same estimator computing RTO as Linux does: SRTT + max(4·RTTVAR, `min_rto`).
    pub fn with_variance_floor(self) -> RtoEstimator {
        RtoEstimator {
            variance_floor: true,
            ..self
        }
    }

    /// Takes an RTT sample `rtt` measured at `now` (the timed packet left at `now - rtt`).
    pub fn sample(&mut self, rtt: Duration, now: Time) {
        let tao = rtt.as_secs_f64();
        let sent = now.as_secs_f64() - tao + self.phase;
        let tickoff = sent.rem_euclid(self.tick);
        let ticks = (((tao + tickoff) / self.tick) as i64).max(1);
        self.last_ticks = ticks;
        if self.srtt8 != 0 {
            // RFC 6298 §2.3: RTTVAR from the old SRTT, then SRTT; gains 1/4 and 1/8.
            let delta = ticks - (self.srtt8 >> 3);
            self.srtt8 += delta;
            if self.srtt8 <= 0 {
                self.srtt8 = 1;
            }
            let deviation = delta.abs() - (self.rttvar4 >> 2);
            self.rttvar4 += deviation;
            if self.rttvar4 <= 0 {
                self.rttvar4 = 1;
            }
        } else {
            // RFC 6298 §2.2: SRTT = R, RTTVAR = R/2.
            self.srtt8 = ticks << 3;
            self.rttvar4 = ticks << 1;
        }
        self.rtxcur = if self.variance_floor {
            let variance = (self.rttvar4 as f64 * self.tick).max(self.min_rto);
            (self.srtt8 >> 3) as f64 * self.tick + variance
        } else {
            // (SRTT + 4·RTTVAR) in ticks: 8·SRTT + 32·RTTVAR, shifted back by 3.
            (((self.rttvar4 << 3) + self.srtt8) >> 3) as f64 * self.tick
        };
        self.refresh_timeout();
    }

    /// The timeout to arm now, with floor, backoff and cap applied.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Computes [`RtoEstimator::timeout`] from `rtxcur` and `backoff`.
    fn refresh_timeout(&mut self) {
        let backoff = f64::from(self.backoff);
        let mut timeout = if self.rfc2988 {
            self.rtxcur.max(self.min_rto) * backoff
        } else {
            (self.rtxcur * backoff).max(self.min_rto)
        };
        timeout = timeout.min(self.max_rto);
        if timeout < 2.0 * self.tick {
            timeout = 2.0 * self.tick;
        }
        self.timeout = Duration::from_secs_f64(timeout);
    }

    /// Doubles the backoff after a timeout: while it is below 64, or (with `rfc2988`) while the
    /// timeout is still below the cap. Past 8, SRTT is folded into RTTVAR and cleared, so the
    /// next sample starts the estimate afresh (ns-2 `rtt_backoff`).
    pub fn back_off(&mut self) {
        let max_rto = Duration::from_secs_f64(self.max_rto);
        if self.backoff < MAX_BACKOFF
            && (self.backoff < 64 || (self.rfc2988 && self.timeout() < max_rto))
        {
            self.backoff <<= 1;
        }
        if self.backoff > 8 {
            self.rttvar4 += self.srtt8 >> 3;
            self.srtt8 = 0;
        }
        self.refresh_timeout();
    }

    /// Ends the backoff (an ACK covered the timed packet).
    pub fn reset_backoff(&mut self) {
        if self.backoff != 1 {
            self.backoff = 1;
            self.refresh_timeout();
        }
    }

    /// The backoff multiplier.
    pub fn backoff(&self) -> u32 {
        self.backoff
    }

    /// Smoothed RTT in seconds (whole ticks; 0 before the first sample).
    pub fn srtt_secs(&self) -> f64 {
        (self.srtt8 >> 3) as f64 * self.tick
    }

    /// RTT variation in seconds (quarter ticks).
    pub fn rttvar_secs(&self) -> f64 {
        self.rttvar4 as f64 * self.tick / 4.0
    }

    /// The last sample in seconds (whole ticks).
    pub fn last_sample_secs(&self) -> f64 {
        self.last_ticks as f64 * self.tick
    }

    /// Whether any sample has been taken since the start (or since a long backoff).
    pub fn has_estimate(&self) -> bool {
        self.srtt8 != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn at(secs: f64) -> Time {
        Time::from_secs_f64(secs)
    }

    #[test]
    fn rfc6298_first_and_later_samples_with_a_fine_clock() {
        // 1 ms clock, phase 0, no floor worth mentioning: RTO = SRTT + 4·RTTVAR.
        let mut rto = RtoEstimator::new(ms(1), ms(0), ms(60_000), ms(1000), true, 0.0);
        assert_eq!(rto.timeout(), ms(1000), "initial RTO before any sample");
        rto.sample(ms(100), at(10.0));
        // SRTT = 100 ms, RTTVAR = 50 ms, RTO = 300 ms.
        assert!((rto.srtt_secs() - 0.1).abs() < 1e-9);
        assert!((rto.rttvar_secs() - 0.05).abs() < 1e-9);
        assert_eq!(rto.timeout(), ms(300));
        rto.sample(ms(200), at(11.0));
        // RTTVAR = 3/4·50 + 1/4·|100-200| = 62.5; SRTT = 7/8·100 + 1/8·200 = 112.5 -> 112 ticks.
        assert!((rto.rttvar_secs() - 0.0625).abs() < 1e-9);
        assert!((rto.srtt_secs() - 0.112).abs() < 1e-9);
        // (8·112.5 + 32·62.5)/8 = 362.5 -> 362 ms, truncated.
        assert_eq!(rto.timeout(), ms(362));
    }

    #[test]
    fn ns2_tick_rounding_uses_the_clock_phase_and_at_least_one_tick() {
        // 125 ms ticks (exact in binary): a 312.5 ms RTT sent on a tick boundary is 2 ticks,
        // but 3 if the sender's tick clock stood 62.5 ms into a tick when it left.
        let mut a = RtoEstimator::new(ms(125), ms(0), ms(64_000), ms(6000), false, 0.0);
        a.sample(Duration::from_micros(312_500), at(5.0625));
        assert!((a.last_sample_secs() - 0.25).abs() < 1e-9);
        let mut b = RtoEstimator::new(ms(125), ms(0), ms(64_000), ms(6000), false, 0.0625);
        b.sample(Duration::from_micros(312_500), at(5.0625));
        assert!((b.last_sample_secs() - 0.375).abs() < 1e-9);
        let mut c = RtoEstimator::new(ms(125), ms(0), ms(64_000), ms(6000), false, 0.0);
        c.sample(ms(5), at(5.0));
        assert!(
            (c.last_sample_secs() - 0.125).abs() < 1e-9,
            "at least one tick"
        );
        // RTO = 1 + 4·0.5 = 3 ticks = 375 ms; the 2-tick floor (250 ms) does not bind.
        assert_eq!(c.timeout(), ms(375));
        // The 2-tick floor binds on a smaller estimate (here the initial RTO).
        let d = RtoEstimator::new(ms(125), ms(0), ms(64_000), ms(100), false, 0.0);
        assert_eq!(d.timeout(), ms(250));
    }

    #[test]
    fn floor_before_or_after_backoff_and_the_cap() {
        // rtxcur 300 ms, floor 1 s. rfc2988: max(0.3, 1)·2 = 2 s; old order: max(0.6, 1) = 1 s.
        let mut new = RtoEstimator::new(ms(1), ms(1000), ms(60_000), ms(1000), true, 0.0);
        let mut old = RtoEstimator::new(ms(1), ms(1000), ms(60_000), ms(1000), false, 0.0);
        for rto in [&mut new, &mut old] {
            rto.sample(ms(100), at(1.0));
            rto.back_off();
        }
        assert_eq!(new.timeout(), ms(2000));
        assert_eq!(old.timeout(), ms(1000));
        for _ in 0..10 {
            new.back_off();
        }
        assert_eq!(new.timeout(), ms(60_000), "capped");
        new.reset_backoff();
        assert_eq!(new.backoff(), 1);
        // The timeout is kept between changes (`RtoEstimator::timeout`): ending the backoff
        // brings back the unbacked value.
        assert_eq!(new.timeout(), ms(1000));
    }

    #[test]
    fn backoff_stops_at_64_without_rfc2988_and_clears_srtt_past_8() {
        let mut rto = RtoEstimator::new(ms(125), ms(0), ms(64_000), ms(6000), false, 0.0);
        rto.sample(ms(375), at(1.0));
        assert!(rto.has_estimate());
        for _ in 0..3 {
            rto.back_off();
        }
        assert_eq!(rto.backoff(), 8);
        assert!(rto.has_estimate());
        rto.back_off();
        assert_eq!(rto.backoff(), 16);
        assert!(!rto.has_estimate(), "SRTT folded into RTTVAR");
        for _ in 0..10 {
            rto.back_off();
        }
        assert_eq!(rto.backoff(), 64);
        // The next sample starts afresh.
        rto.sample(ms(500), at(100.0));
        assert!((rto.srtt_secs() - 0.5).abs() < 1e-9);
    }

    #[test]
    fn linux_floors_the_variance_term_not_the_timeout() {
        let make = || RtoEstimator::new(ms(1), ms(200), ms(120_000), ms(1000), true, 0.0);
        let (mut rfc, mut linux) = (make(), make().with_variance_floor());
        for n in 1..=50u64 {
            let now = Time::from_nanos(n * 100_000_000);
            rfc.sample(ms(100), now);
            linux.sample(ms(100), now);
        }
        // A steady 100 ms RTT: RFC 6298 gives max(100 ms + 4·RTTVAR, 200 ms) = 200 ms,
        // Linux 100 ms + max(4·RTTVAR, 200 ms) = 300 ms.
        assert_eq!(rfc.timeout(), ms(200));
        assert_eq!(linux.timeout(), ms(300));
        // The first sample: RTTVAR = R/2, so 4·RTTVAR = 2R = 600 ms is above the floor.
        let mut first = make().with_variance_floor();
        first.sample(ms(300), Time::from_nanos(300_000_000));
        assert_eq!(first.timeout(), ms(900));
    }
}
