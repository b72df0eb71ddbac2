//! CUBIC congestion control (RFC 9438) as Linux's `net/ipv4/tcp_cubic.c` (v2.3) runs it: the
//! cubic window W(t) = C (t - K)^3 + W_max in integer packets and 2^-10 s time units, the epoch
//! restarted at each reduction, fast convergence, the Reno-friendly region (the "TCP friendliness"
//! estimate), beta = 717/1024 (about 0.7) and C = 41/1024 * 10 (about 0.4), the 5%-per-RTT cap
//! before the first loss, at most one packet per two acked, and HyStart (ACK trains and delay
//! increase) ending slow start. Growth is applied as Linux's `tcp_cong_avoid_ai`: a credit of
//! acknowledged segments, one packet per `cnt` of them, so delayed ACKs do not halve it.
//!
//! Deviations, named: the cube root is exact (Linux uses a table and one Newton step, within
//! 0.2%); HyStart's ACK-delay cushion is Linux's cap of 1 ms (it is `min(1 ms, 4 GSO
//! segments / pacing rate)`, which is 1 ms below 2 Gb/s); the kernel's "cwnd-limited" test and
//! the epoch shift after an idle period (`CA_EVENT_TX_START`) are not modelled: the simulator's
//! bulk senders are always window-limited.

use std::time::Duration;

use tfrc::Time;

use super::sender::{additive_increase, slow_start_by_segments, CwndCut, TcpSender};

/// CUBIC's parameters, with Linux's defaults (module parameters of `tcp_cubic`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CubicParams {
    /// The multiplicative decrease, in 1024ths (`beta`, 717: W becomes 0.7 W on a loss).
    pub beta: u32,
    /// The cubic's scale C, in 1024ths of 1/10 (`bic_scale`, 41: C = 0.4).
    pub bic_scale: u32,
    /// Release bandwidth faster when W_max fell (`fast_convergence`, on).
    pub fast_convergence: bool,
    /// Grow at least as fast as Reno would with the same beta (`tcp_friendliness`, on).
    pub tcp_friendliness: bool,
    /// HyStart: leave slow start on an ACK train or a delay increase (`hystart`, on).
    pub hystart: bool,
    /// HyStart's ACK-train detection (`hystart_detect` bit 1).
    pub hystart_ack_train: bool,
    /// HyStart's delay-increase detection (`hystart_detect` bit 2).
    pub hystart_delay: bool,
    /// HyStart acts only from this cwnd on (`hystart_low_window`, 16).
    pub hystart_low_window: u32,
    /// ACKs closer than this are a train (`hystart_ack_delta_us`, 2 ms).
    pub hystart_ack_delta: Duration,
    /// HyStart's rounds start whatever cwnd is, as Linux does since commit 25c1a9ca53db
    /// ("tcp_cubic: fix incorrect HyStart round start detection"), or only once cwnd has
    /// reached `hystart_low_window` (off, the kernels before it: every round then begins
    /// partway through a window's ACKs instead of at its first). On by default: with the
    /// `linux` preset's receiver, which acks every segment while its window grows in slow
    /// start ([`super::TcpConfig::rcv_window_growth`]), the fixed rounds find the ACK train
    /// that ends the kernel's slow start (docs/tcp.md, "CUBIC").
    pub hystart_rounds_any_cwnd: bool,
    /// The kernel's timer frequency (CONFIG_HZ, 250 on Debian's kernels): CUBIC's epoch clock
    /// counts jiffies, and it recomputes its target at most once per jiffy.
    pub hz: u32,
}

impl Default for CubicParams {
    fn default() -> CubicParams {
        CubicParams {
            beta: 717,
            bic_scale: 41,
            fast_convergence: true,
            tcp_friendliness: true,
            hystart: true,
            hystart_ack_train: true,
            hystart_delay: true,
            hystart_low_window: 16,
            hystart_ack_delta: Duration::from_millis(2),
            hystart_rounds_any_cwnd: true,
            hz: 250,
        }
    }
}

/// `BICTCP_BETA_SCALE`: beta is in 1024ths.
const BETA_SCALE: u64 = 1024;
/// `BICTCP_HZ`: CUBIC's time unit is 2^-10 s.
const BICTCP_HZ: u32 = 10;
/// HyStart's delay threshold is delay_min/8 clamped to [4 ms, 16 ms] (`HYSTART_DELAY_THRESH`).
const HYSTART_DELAY_MIN_US: u32 = 4000;
const HYSTART_DELAY_MAX_US: u32 = 16_000;
/// RTT samples HyStart takes per round before judging the delay (`HYSTART_MIN_SAMPLES`).
const HYSTART_MIN_SAMPLES: u32 = 8;
/// HyStart's ACK-train cushion for aggregation delays (see the module documentation).
const HYSTART_ACK_DELAY_US: u32 = 1000;

/// One connection's CUBIC state (`struct bictcp`).
#[derive(Clone, Debug)]
pub(super) struct Cubic {
    params: CubicParams,
    /// Acked packets per cwnd increment (`cnt`).
    cnt: u32,
    /// W_max (`last_max_cwnd`).
    last_max_cwnd: u32,
    last_cwnd: u32,
    /// When `cnt` was last computed, in jiffies.
    last_time: u32,
    bic_origin_point: u32,
    /// K, in 2^-10 s.
    bic_k: u32,
    /// The least RTT seen, in µs (0 before a sample).
    delay_min_us: u32,
    /// When the current epoch began, in jiffies (`epoch_start`, 0 meaning none there).
    epoch_start: Option<u32>,
    /// Packets acked in this epoch, for the Reno-friendly estimate.
    ack_cnt: u32,
    /// The window Reno would have now (`tcp_cwnd`).
    tcp_cwnd: u32,
    /// HyStart found the end of slow start.
    found: bool,
    round_start_us: u32,
    end_seq: i64,
    last_ack_us: u32,
    curr_rtt_us: u32,
    sample_cnt: u32,
    /// Linux's precomputed scales: `beta_scale`, `cube_rtt_scale`, `cube_factor`.
    beta_scale: u32,
    cube_rtt_scale: u64,
    cube_factor: u64,
}

/// Time in wrapping microseconds, as `tcp_mstamp` is read by HyStart.
fn usecs(now: Time) -> u32 {
    (now.as_nanos() / 1000) as u32
}

impl Cubic {
    /// A fresh state (`cubictcp_init`), HyStart's first round ending at `snd_nxt`.
    pub(super) fn new(params: CubicParams, now: Time, snd_nxt: i64) -> Cubic {
        let beta = u64::from(params.beta.min(1023));
        let mut cubic = Cubic {
            params,
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            bic_origin_point: 0,
            bic_k: 0,
            delay_min_us: 0,
            epoch_start: None,
            ack_cnt: 0,
            tcp_cwnd: 0,
            found: false,
            round_start_us: 0,
            end_seq: 0,
            last_ack_us: 0,
            curr_rtt_us: u32::MAX,
            sample_cnt: 0,
            // 8 (1 + beta) / 3 / (1 - beta), the Reno-friendly slope in 1/8 packets.
            beta_scale: (8 * (BETA_SCALE + beta) / 3 / (BETA_SCALE - beta)) as u32,
            cube_rtt_scale: u64::from(params.bic_scale) * 10,
            // 2^40 / (bic_scale * 10): K^3 = (W_max - cwnd) * cube_factor in (2^-10 s)^3.
            cube_factor: (1u64 << (10 + 3 * BICTCP_HZ)) / (u64::from(params.bic_scale) * 10),
        };
        cubic.hystart_reset(now, snd_nxt);
        cubic
    }

    /// The clock CUBIC's epoch runs on: jiffies at the configured HZ, wrapping.
    fn jiffies(&self, now: Time) -> u32 {
        (u128::from(now.as_nanos()) * u128::from(self.params.hz) / 1_000_000_000) as u32
    }

    /// W_max.
    #[cfg(test)]
    pub(super) fn w_max(&self) -> u32 {
        self.last_max_cwnd
    }

    /// K in seconds.
    #[cfg(test)]
    pub(super) fn k_s(&self) -> f64 {
        f64::from(self.bic_k) / f64::from(1u32 << BICTCP_HZ)
    }

    /// The least RTT seen.
    #[cfg(test)]
    pub(super) fn delay_min(&self) -> Duration {
        Duration::from_micros(u64::from(self.delay_min_us))
    }

    /// `bictcp_hystart_reset`: a new HyStart round ending when `snd_nxt` is acked.
    fn hystart_reset(&mut self, now: Time, snd_nxt: i64) {
        let us = usecs(now);
        self.round_start_us = us;
        self.last_ack_us = us;
        self.end_seq = snd_nxt;
        self.curr_rtt_us = u32::MAX;
        self.sample_cnt = 0;
    }

    /// `cubictcp_cong_avoid` for an ACK of `acked` new packets: slow start up to ssthresh, then
    /// the cubic update and `tcp_cong_avoid_ai`. Returns the new (cwnd, cwnd_cnt).
    pub(super) fn cong_avoid(
        &mut self,
        now: Time,
        mut cwnd: u32,
        cwnd_cnt: u32,
        ssthresh: u32,
        mut acked: u32,
    ) -> (u32, u32) {
        if cwnd < ssthresh {
            // The rest of the ACK beyond ssthresh counts in congestion avoidance.
            (cwnd, acked) = slow_start_by_segments(cwnd, ssthresh, acked);
            if acked == 0 {
                return (cwnd, cwnd_cnt);
            }
        }
        self.update(now, cwnd, acked);
        additive_increase(cwnd, cwnd_cnt, self.cnt, acked)
    }

    /// `bictcp_update`: recompute `cnt` from the cubic target one RTT (delay_min) ahead and the
    /// Reno-friendly window.
    fn update(&mut self, now: Time, cwnd: u32, acked: u32) {
        let jiffies = self.jiffies(now);
        self.ack_cnt = self.ack_cnt.wrapping_add(acked);
        if self.last_cwnd == cwnd
            && jiffies.wrapping_sub(self.last_time) as i32 <= (self.params.hz / 32) as i32
        {
            return;
        }
        // The target moves at most once per jiffy; a reduction clears the epoch.
        if !(self.epoch_start.is_some() && jiffies == self.last_time) {
            self.last_cwnd = cwnd;
            self.last_time = jiffies;
            let epoch_start = match self.epoch_start {
                Some(start) => start,
                None => {
                    self.ack_cnt = acked;
                    self.tcp_cwnd = cwnd;
                    if self.last_max_cwnd <= cwnd {
                        self.bic_k = 0;
                        self.bic_origin_point = cwnd;
                    } else {
                        let cube = self.cube_factor * u64::from(self.last_max_cwnd - cwnd);
                        self.bic_k = (cube as f64).cbrt() as u32;
                        self.bic_origin_point = self.last_max_cwnd;
                    }
                    self.epoch_start = Some(jiffies);
                    jiffies
                }
            };
            // t = time in the epoch plus one delay_min, in 2^-10 s.
            let delay_min_jiffies =
                u64::from(self.delay_min_us) * u64::from(self.params.hz) / 1_000_000;
            let t_jiffies = u64::from(jiffies.wrapping_sub(epoch_start)) + delay_min_jiffies;
            let t = (t_jiffies << BICTCP_HZ) / u64::from(self.params.hz);
            let k = u64::from(self.bic_k);
            let offs = t.abs_diff(k);
            let delta = ((self.cube_rtt_scale * offs * offs * offs) >> (10 + 3 * BICTCP_HZ)) as u32;
            let target = if t < k {
                self.bic_origin_point.saturating_sub(delta)
            } else {
                self.bic_origin_point.saturating_add(delta)
            };
            self.cnt = if target > cwnd {
                cwnd / (target - cwnd)
            } else {
                100 * cwnd
            };
            if self.last_max_cwnd == 0 && self.cnt > 20 {
                // Before the first loss: at least 5% growth per RTT.
                self.cnt = 20;
            }
        }
        if self.params.tcp_friendliness {
            let per_packet = ((u64::from(cwnd) * u64::from(self.beta_scale)) >> 3).max(1) as u32;
            while self.ack_cnt > per_packet {
                self.ack_cnt -= per_packet;
                self.tcp_cwnd += 1;
            }
            if self.tcp_cwnd > cwnd {
                let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
                self.cnt = self.cnt.min(max_cnt);
            }
        }
        // At most one packet per two acked: 1.5x per RTT.
        self.cnt = self.cnt.max(2);
    }

    /// `cubictcp_recalc_ssthresh` at a loss with window `cwnd`: ends the epoch, sets W_max
    /// (lowered further by fast convergence when it fell) and returns max(beta cwnd, 2).
    pub(super) fn recalc_ssthresh(&mut self, cwnd: u32) -> u32 {
        self.epoch_start = None;
        let beta = u64::from(self.params.beta);
        self.last_max_cwnd = if cwnd < self.last_max_cwnd && self.params.fast_convergence {
            (u64::from(cwnd) * (BETA_SCALE + beta) / (2 * BETA_SCALE)) as u32
        } else {
            cwnd
        };
        ((u64::from(cwnd) * beta / BETA_SCALE) as u32).max(2)
    }

    /// `cubictcp_state(TCP_CA_Loss)`: a retransmission timeout forgets everything. HyStart's
    /// next round starts at the next RTT sample (Linux starts it at the timeout itself; the
    /// round then ends at the window sent by the sample instead of the one outstanding).
    pub(super) fn on_timeout(&mut self) {
        *self = Cubic::new(self.params, Time::ZERO, -1);
    }

    /// `cubictcp_acked`: an RTT sample from an ACK (the newest packet it acks, never a
    /// retransmitted one). Updates delay_min and runs HyStart while in slow start; returns the
    /// new ssthresh (= cwnd) when HyStart ends slow start.
    pub(super) fn on_rtt_sample(
        &mut self,
        now: Time,
        rtt: Duration,
        cwnd: u32,
        in_slow_start: bool,
        snd_una: i64,
        snd_nxt: i64,
    ) -> Option<u32> {
        if let Some(start) = self.epoch_start {
            // Samples right after a reduction are discarded for a second.
            if (self.jiffies(now).wrapping_sub(start) as i32) < self.params.hz as i32 {
                return None;
            }
        }
        let delay = u32::try_from(rtt.as_micros()).unwrap_or(u32::MAX).max(1);
        if self.delay_min_us == 0 || self.delay_min_us > delay {
            self.delay_min_us = delay;
        }
        let below_low_window = cwnd < self.params.hystart_low_window;
        if self.found
            || !in_slow_start
            || !self.params.hystart
            || (below_low_window && !self.params.hystart_rounds_any_cwnd)
        {
            return None;
        }
        self.hystart_update(now, delay, snd_una, snd_nxt, below_low_window)
            .then_some(cwnd)
    }

    /// `hystart_update`: true when this sample ends slow start. A sample below the low window
    /// only starts a new round when one is due.
    fn hystart_update(
        &mut self,
        now: Time,
        delay: u32,
        snd_una: i64,
        snd_nxt: i64,
        below_low_window: bool,
    ) -> bool {
        if snd_una > self.end_seq {
            self.hystart_reset(now, snd_nxt);
        }
        if below_low_window {
            return false;
        }
        if self.params.hystart_ack_train {
            let us = usecs(now);
            let delta_us =
                u32::try_from(self.params.hystart_ack_delta.as_micros()).unwrap_or(u32::MAX);
            if (us.wrapping_sub(self.last_ack_us) as i32) <= delta_us as i32 {
                self.last_ack_us = us;
                // Without pacing the train must last half of delay_min (plus the cushion).
                let threshold = (self.delay_min_us + HYSTART_ACK_DELAY_US) >> 1;
                if (us.wrapping_sub(self.round_start_us) as i32) > threshold as i32 {
                    self.found = true;
                    return true;
                }
            }
        }
        if self.params.hystart_delay {
            self.curr_rtt_us = self.curr_rtt_us.min(delay);
            if self.sample_cnt < HYSTART_MIN_SAMPLES {
                self.sample_cnt += 1;
            } else {
                let margin =
                    (self.delay_min_us >> 3).clamp(HYSTART_DELAY_MIN_US, HYSTART_DELAY_MAX_US);
                if self.curr_rtt_us > self.delay_min_us + margin {
                    self.found = true;
                    return true;
                }
            }
        }
        false
    }
}

/// The sender's side of CUBIC: growth per ACK by the packets it acks, RTT samples for
/// delay_min and HyStart, and the reductions.
impl TcpSender {
    /// Notes packet `seqno` sent at `now`: its first transmission is timed, a retransmission
    /// clears the timing (Karn: no sample from a retransmitted packet).
    pub(super) fn note_sent(&mut self, now: Time, seqno: i64) {
        if seqno > self.maxseq {
            self.sent_at.push_back((seqno, Some(now)));
            return;
        }
        // The log is sorted by sequence number.
        let at = self.sent_at.partition_point(|&(s, _)| s < seqno);
        if let Some(entry) = self.sent_at.get_mut(at).filter(|(s, _)| *s == seqno) {
            entry.1 = None;
        }
    }

    /// An ACK up to `ack`: the RTT of the newest packet it acks (Linux's `ca_rtt_us`) goes to
    /// CUBIC; HyStart may end slow start.
    pub(super) fn cubic_rtt_sample(&mut self, now: Time, ack: i64) {
        let mut newest = None;
        while self.sent_at.front().is_some_and(|&(seq, _)| seq <= ack) {
            newest = self.sent_at.pop_front().and_then(|(_, sent)| sent);
        }
        let Some(sent) = newest else {
            return;
        };
        let cwnd = self.cwnd as u32;
        let in_slow_start = self.cwnd < self.ssthresh;
        let (snd_una, snd_nxt) = (ack + 1, self.maxseq + 1);
        if let Some(cubic) = self.cubic.as_mut() {
            let rtt = now.saturating_since(sent);
            if let Some(ssthresh) =
                cubic.on_rtt_sample(now, rtt, cwnd, in_slow_start, snd_una, snd_nxt)
            {
                self.ssthresh = f64::from(ssthresh);
            }
        }
    }

    /// Opens the window for `acked` newly acknowledged packets (`cubictcp_cong_avoid`).
    pub(super) fn cubic_open(&mut self, now: Time, acked: u32) {
        let Some(cubic) = self.cubic.as_mut() else {
            return;
        };
        let ssthresh = self.ssthresh.min(f64::from(u32::MAX)) as u32;
        let (cwnd, cnt) = cubic.cong_avoid(now, self.cwnd as u32, self.cwnd_cnt, ssthresh, acked);
        self.cwnd = f64::from(cwnd);
        self.cwnd_cnt = cnt;
        if self.cfg.max_cwnd > 0 && self.cwnd > f64::from(self.cfg.max_cwnd) {
            self.cwnd = f64::from(self.cfg.max_cwnd);
        }
    }

    /// A reduction: CUBIC's ssthresh (`cubictcp_recalc_ssthresh`) on a loss, cwnd cut to it;
    /// on a timeout cwnd is 1 and CUBIC forgets everything (`TCP_CA_Loss`).
    pub(super) fn cubic_slowdown(&mut self, ssthresh_cut: bool, cut: CwndCut) {
        let cwnd = self.cwnd.max(1.0) as u32;
        let Some(cubic) = self.cubic.as_mut() else {
            return;
        };
        if ssthresh_cut {
            self.ssthresh = f64::from(cubic.recalc_ssthresh(cwnd));
        }
        self.cwnd_cnt = 0;
        match cut {
            CwndCut::Decrease => self.cwnd = self.ssthresh,
            CwndCut::One => {
                cubic.on_timeout();
                self.cwnd = 1.0;
            }
        }
        self.first_decrease = false;
    }

    /// CUBIC's ssthresh at the start of RFC 6675 recovery (instead of FlightSize/2).
    pub(super) fn cubic_recovery_ssthresh(&mut self) -> Option<f64> {
        let cwnd = self.cwnd.max(1.0) as u32;
        self.cwnd_cnt = 0;
        self.cubic
            .as_mut()
            .map(|cubic| f64::from(cubic.recalc_ssthresh(cwnd)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> Time {
        Time::from_nanos(ms * 1_000_000)
    }

    /// Runs congestion avoidance from `cwnd` after a loss at `w_max`, one RTT (`rtt_ms`) of
    /// per-packet ACKs at a time, for `rtts` rounds; returns cwnd after each round.
    fn grow(cubic: &mut Cubic, mut cwnd: u32, rtt_ms: u64, rtts: u64) -> Vec<u32> {
        let mut cnt = 0;
        let mut out = Vec::new();
        for round in 0..rtts {
            let acks = cwnd;
            for i in 0..acks {
                let now = at(10_000 + round * rtt_ms + u64::from(i) * rtt_ms / u64::from(acks));
                (cwnd, cnt) = cubic.cong_avoid(now, cwnd, cnt, 2, 1);
            }
            out.push(cwnd);
        }
        out
    }

    #[test]
    fn a_loss_keeps_seven_tenths_and_remembers_w_max() {
        let mut cubic = Cubic::new(CubicParams::default(), at(0), 0);
        assert_eq!(cubic.recalc_ssthresh(100), 70);
        assert_eq!(cubic.w_max(), 100);
        // Fast convergence: a loss below W_max lowers W_max to (1 + beta)/2 of the window.
        assert_eq!(cubic.recalc_ssthresh(80), 56);
        assert_eq!(cubic.w_max(), (80 * (1024 + 717)) / 2048);
        assert_eq!(cubic.recalc_ssthresh(2), 2);
    }

    #[test]
    fn the_window_regains_w_max_after_k_seconds() {
        // RFC 9438 §4.2: K = cbrt(W_max (1 - beta) / C) = cbrt(1000 * 0.3 / 0.4) = 9.09 s for a
        // loss at 1000 packets (C = 0.4004, beta = 717/1024 here).
        let params = CubicParams {
            tcp_friendliness: false,
            ..CubicParams::default()
        };
        let mut cubic = Cubic::new(params, at(0), 0);
        let ssthresh = cubic.recalc_ssthresh(1000);
        let rtt_ms = 100;
        let windows = grow(&mut cubic, ssthresh, rtt_ms, 140);
        let c: f64 = 41.0 * 10.0 / 1024.0;
        let k = (1000.0 * (1.0 - 717.0 / 1024.0) / c).cbrt();
        assert!((cubic.k_s() - k).abs() < 0.01, "K {} vs {k}", cubic.k_s());
        // W(t) = C (t - K)^3 + W_max, t counted from the epoch plus one RTT ahead; checked
        // each round within a few packets (whole packets, and a window that trails its target).
        for (round, &w) in windows.iter().enumerate() {
            let t = (round as f64 + 1.0) * rtt_ms as f64 / 1000.0 + rtt_ms as f64 / 1000.0;
            let target = c * (t - k).powi(3) + 1000.0;
            let w = f64::from(w);
            assert!(
                w <= target.max(f64::from(ssthresh)) + 2.0,
                "round {round}: {w} vs {target}"
            );
            assert!(
                w >= target.min(1000.0) * 0.97 - 2.0,
                "round {round}: {w} vs {target}"
            );
        }
        // The plateau: near W_max around K.
        let at_k = windows[(k * 10.0) as usize - 1];
        assert!((990..=1005).contains(&at_k), "{at_k}");
    }

    #[test]
    fn the_reno_friendly_region_grows_like_reno_with_beta_point_seven() {
        // A small window: the cubic grows slower than Reno would, so the Reno estimate leads, at
        // 3 (1 - beta)/(1 + beta) packets per RTT (RFC 9438 §4.3): about 0.53.
        let mut cubic = Cubic::new(CubicParams::default(), at(0), 0);
        let ssthresh = cubic.recalc_ssthresh(20);
        let windows = grow(&mut cubic, ssthresh, 10, 100);
        let per_rtt = f64::from(windows[99] - windows[49]) / 50.0;
        let reno = 3.0 * (1.0 - 717.0 / 1024.0) / (1.0 + 717.0 / 1024.0);
        assert!((per_rtt - reno).abs() < 0.15, "{per_rtt} vs {reno}");
    }

    #[test]
    fn slow_start_counts_acked_packets_and_stops_at_ssthresh() {
        let mut cubic = Cubic::new(CubicParams::default(), at(0), 0);
        // A delayed ACK of two packets grows the window by two.
        assert_eq!(cubic.cong_avoid(at(1), 10, 0, 100, 2), (12, 0));
        // Crossing ssthresh: the rest of the ACK counts toward congestion avoidance.
        let (cwnd, cnt) = cubic.cong_avoid(at(2), 99, 0, 100, 2);
        assert_eq!(cwnd, 100);
        assert_eq!(cnt, 1);
    }

    #[test]
    fn hystart_ends_slow_start_when_the_delay_grows() {
        let mut cubic = Cubic::new(CubicParams::default(), at(0), 0);
        // Rounds of spaced-out ACKs (no trains) at 40 ms, then the queue builds: 60 ms.
        let mut seq = 0;
        let mut found = None;
        for round in 0..10u64 {
            let rtt = if round < 3 { 40 } else { 60 };
            for i in 0..20u64 {
                let now = at(1000 + round * 100 + i * 4);
                seq += 1;
                found = found.or(cubic.on_rtt_sample(
                    now,
                    Duration::from_millis(rtt),
                    32,
                    true,
                    seq,
                    seq + 32,
                ));
            }
        }
        assert_eq!(found, Some(32));
        assert_eq!(cubic.delay_min(), Duration::from_millis(40));
    }

    #[test]
    fn hystart_ends_slow_start_on_a_long_ack_train() {
        let params = CubicParams {
            hystart_delay: false,
            ..CubicParams::default()
        };
        let mut cubic = Cubic::new(params, at(0), 0);
        // ACKs 1 ms apart for longer than half the 40 ms delay_min: a train.
        let mut found = None;
        for i in 0..40u64 {
            let sample =
                cubic.on_rtt_sample(at(1 + i), Duration::from_millis(40), 32, true, 0, 100);
            found = found.or(sample.map(|s| (s, i)));
        }
        let (ssthresh, ack) = found.expect("a train");
        assert_eq!(ssthresh, 32);
        assert!((20..=22).contains(&ack), "{ack}");
    }

    /// Slow start through a 1.2 ms/packet bottleneck with 100 ms of propagation and delayed
    /// ACKs: each window leaves at twice the link's rate as the previous window's ACKs come
    /// back, so its queue starts empty and grows by a packet per two sent (until windows
    /// overlap). Returns the cwnd at which HyStart ends slow start.
    fn slow_start_exit(params: CubicParams) -> u32 {
        let mut cubic = Cubic::new(params, at(0), 10);
        let (service_us, base_us) = (1200u64, 100_000u64);
        let (mut cwnd, mut una, mut nxt) = (10u32, 10i64, 20i64);
        // Send times (µs) of the packets in flight, by sequence number.
        let mut sent: std::collections::VecDeque<u64> = (0..10).map(|_| 0).collect();
        let mut link_free = 0u64;
        let mut departures = std::collections::VecDeque::new();
        for &t in &sent {
            link_free = link_free.max(t) + service_us;
            departures.push_back(link_free);
        }
        while cwnd < 2000 {
            // The next ACK covers two packets; it arrives a propagation delay after the second
            // one leaves the queue.
            let (sent_1, sent_2) = (sent.pop_front().unwrap(), sent.pop_front().unwrap());
            departures.pop_front();
            let now_us = departures.pop_front().unwrap() + base_us;
            let rtt = Duration::from_micros(now_us - sent_2.max(sent_1));
            una += 2;
            if let Some(ssthresh) =
                cubic.on_rtt_sample(Time::from_nanos(now_us * 1000), rtt, cwnd, true, una, nxt)
            {
                return ssthresh;
            }
            // Slow start: two more packets of window, four sent at once.
            cwnd += 2;
            for _ in 0..4 {
                link_free = link_free.max(now_us) + service_us;
                departures.push_back(link_free);
                sent.push_back(now_us);
                nxt += 1;
            }
        }
        cwnd
    }

    #[test]
    fn hystart_rounds_start_with_a_window_since_linux_fixed_them() {
        // Since Linux's fix a round begins at the first ACK of a window, whose first samples
        // see the queue that window found (empty until windows overlap, past 166 packets
        // here); before it, rounds began where cwnd first reached 16, partway through a
        // window, so their first samples saw the window's queue half built.
        let fixed = slow_start_exit(CubicParams::default());
        let old = slow_start_exit(CubicParams {
            hystart_rounds_any_cwnd: false,
            ..CubicParams::default()
        });
        assert!(fixed > 166, "{fixed}");
        assert!(old < 166, "{old}");
    }

    #[test]
    fn a_timeout_forgets_w_max() {
        let mut cubic = Cubic::new(CubicParams::default(), at(0), 0);
        cubic.recalc_ssthresh(100);
        cubic.on_timeout();
        assert_eq!(cubic.w_max(), 0);
    }
}
