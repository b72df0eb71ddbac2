//! BBR v1 (Cardwell et al., ACM Queue 2016) as Linux's `net/ipv4/tcp_bbr.c` runs it: a model
//! of the path from each ACK's delivery-rate sample (`delivery_rate.rs`), the bottleneck
//! bandwidth as a windowed max over 10 packet-timed rounds and the propagation delay as a
//! windowed min over 10 s, and four modes: STARTUP (pacing and cwnd gain 2/ln 2 until the
//! bandwidth grows by less than 25% for 3 rounds), DRAIN (the inverse gain until the queue it
//! built is gone), PROBE_BW (the gain cycle 5/4, 3/4, 1 x 6 from a random phase, cwnd gain 2)
//! and PROBE_RTT (4 packets for 200 ms and a round when the min RTT is 10 s old). The sender
//! paces (`pacing.rs`) at the model's rate less 1%. It also keeps Linux's long-term
//! ("policer") bandwidth estimate, the ACK-aggregation allowance, packet conservation in the
//! first round of recovery and the cwnd restored when recovery ends. Loss recovery itself is
//! RFC 6675's (`sack.rs`), with BBR setting cwnd on every ACK instead of halving it.
//!
//! The arithmetic is the kernel's: bandwidth in packets per µs scaled by 2^24, gains in 256ths.
//! Deviations, named: the min-RTT and PROBE_RTT clocks run in exact time, not jiffies (at most
//! 1/HZ apart); no undo of spurious recoveries (the simulator detects none).

use tfrc::Time;

use super::delivery_rate::RateSample;
use super::header::TcpAck;
use super::sender::{CwndAction, TcpSender};
use crate::agent::Outbox;
use crate::rng::uniform;

/// Bandwidth is in packets per µs scaled by 2^24 (`BW_SCALE`).
const BW_SCALE: u32 = 24;
const BW_UNIT: u64 = 1 << BW_SCALE;
/// Gains are in 256ths (`BBR_SCALE`).
const BBR_SCALE: u32 = 8;
const BBR_UNIT: u32 = 1 << BBR_SCALE;
/// Phases of the PROBE_BW gain cycle.
const CYCLE_LEN: u32 = 8;
/// The bandwidth filter's window in rounds (`bbr_bw_rtts`).
const BW_RTTS: u32 = CYCLE_LEN + 2;
/// The min-RTT filter's window (`bbr_min_rtt_win_sec`).
const MIN_RTT_WIN_US: u64 = 10_000_000;
/// Time at 4 packets in PROBE_RTT (`bbr_probe_rtt_mode_ms`).
const PROBE_RTT_MODE_US: u64 = 200_000;
/// Below this pacing rate (bits/s) bursts are single packets (`bbr_min_tso_rate`).
const MIN_TSO_RATE: u64 = 1_200_000;
/// Pace this many percent below the estimate (`bbr_pacing_margin_percent`).
const PACING_MARGIN_PERCENT: u64 = 1;
/// 2/ln(2), STARTUP's gain (`bbr_high_gain`), and DRAIN's inverse.
const HIGH_GAIN: u32 = BBR_UNIT * 2885 / 1000 + 1;
const DRAIN_GAIN: u32 = BBR_UNIT * 1000 / 2885;
/// PROBE_BW's cwnd gain (`bbr_cwnd_gain`).
const CWND_GAIN: u32 = BBR_UNIT * 2;
/// The PROBE_BW pacing gain cycle (`bbr_pacing_gain`).
const PACING_GAIN: [u32; CYCLE_LEN as usize] = [
    BBR_UNIT * 5 / 4,
    BBR_UNIT * 3 / 4,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
];
/// The first PROBE_BW phase is drawn from the last this many (`bbr_cycle_rand`).
const CYCLE_RAND: u32 = 7;
/// The least cwnd BBR aims for (`bbr_cwnd_min_target`).
const CWND_MIN_TARGET: u32 = 4;
/// STARTUP ends after `FULL_BW_CNT` rounds of less than 25% growth.
const FULL_BW_THRESH: u32 = BBR_UNIT * 5 / 4;
const FULL_BW_CNT: u32 = 3;
/// Long-term ("policer") sampling: intervals of 4 to 16 rounds, lossy above 50/256, two
/// intervals consistent within 1/8 or 4 kbit/s, used for 48 rounds.
const LT_INTVL_MIN_RTTS: u32 = 4;
const LT_LOSS_THRESH: u64 = 50;
const LT_BW_RATIO: u64 = (BBR_UNIT / 8) as u64;
const LT_BW_DIFF: u64 = 4000 / 8;
const LT_BW_MAX_RTTS: u32 = 48;
/// ACK aggregation: gain 1, window 5 rounds, epoch reset past 2^20 packets, capped at
/// 100 ms of bandwidth.
const EXTRA_ACKED_GAIN: u32 = BBR_UNIT;
const EXTRA_ACKED_WIN_RTTS: u32 = 5;
const ACK_EPOCH_ACKED_RESET_THRESH: u64 = 1 << 20;
const EXTRA_ACKED_MAX_US: u64 = 100_000;
/// Linux's initial window (`TCP_INIT_CWND`): the cwnd cap before any RTT sample.
const TCP_INIT_CWND: u32 = 10;
/// The nominal RTT before any sample (`USEC_PER_MSEC`).
const NOMINAL_RTT_US: u64 = 1000;
/// The kernel's `sk_pacing_shift`: bursts of about 1 ms of the pacing rate (2^-10 s).
const PACING_SHIFT: u32 = 10;
/// The largest GSO burst in bytes (`GSO_MAX_SIZE - 1 - MAX_TCP_HEADER`) and segments.
const GSO_MAX_BYTES: u64 = 65536 - 1 - 320;
const GSO_MAX_SEGS: u32 = 0x7f;

/// BBR's modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BbrMode {
    /// Ramp up to fill the pipe.
    Startup,
    /// Drain the queue STARTUP built.
    Drain,
    /// Cycle the pacing gain around the bandwidth estimate.
    ProbeBw,
    /// Cut to 4 packets to measure the propagation delay again.
    ProbeRtt,
}

impl BbrMode {
    /// A number for traces: 0 STARTUP, 1 DRAIN, 2 PROBE_BW, 3 PROBE_RTT (`enum bbr_mode`).
    pub fn index(self) -> u32 {
        match self {
            BbrMode::Startup => 0,
            BbrMode::Drain => 1,
            BbrMode::ProbeBw => 2,
            BbrMode::ProbeRtt => 3,
        }
    }
}

/// The congestion-avoidance state the sender is in, as BBR sees it (`icsk_ca_state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum CaState {
    /// Nothing wrong.
    Open,
    /// Fast recovery (RFC 6675).
    Recovery,
    /// After a retransmission timeout, until what was outstanding then is acked.
    Loss,
}

/// A running windowed max of (time, value) samples, Kathleen Nichols' algorithm as Linux's
/// `lib/win_minmax.c` keeps it: the best, second best and third best values in the window.
#[derive(Clone, Copy, Debug, Default)]
struct WindowedMax {
    s: [(u32, u64); 3],
}

impl WindowedMax {
    fn get(&self) -> u64 {
        self.s[0].1
    }

    fn reset(&mut self, t: u32, v: u64) {
        self.s = [(t, v); 3];
    }

    /// Takes a sample `v` at time `t` into a window of `win`.
    fn update(&mut self, win: u32, t: u32, v: u64) {
        let sample = (t, v);
        if v >= self.s[0].1 || t.wrapping_sub(self.s[2].0) > win {
            return self.reset(t, v);
        }
        if v >= self.s[1].1 {
            self.s[1] = sample;
            self.s[2] = sample;
        } else if v >= self.s[2].1 {
            self.s[2] = sample;
        }
        // Age the window: a best sample older than the window gives way to the next.
        let dt = t.wrapping_sub(self.s[0].0);
        if dt > win {
            self.s = [self.s[1], self.s[2], sample];
            if t.wrapping_sub(self.s[0].0) > win {
                self.s = [self.s[1], self.s[2], sample];
            }
        } else if self.s[1].0 == self.s[0].0 && dt > win / 4 {
            self.s[1] = sample;
            self.s[2] = sample;
        } else if self.s[2].0 == self.s[1].0 && dt > win / 2 {
            self.s[2] = sample;
        }
    }
}

/// What BBR reads and writes of the connection on an ACK.
#[derive(Clone, Copy, Debug)]
pub(super) struct Conn {
    /// Now, in µs.
    pub now_us: u64,
    /// `tp->delivered` and `tp->delivered_mstamp` (µs).
    pub delivered: u64,
    pub delivered_us: u64,
    /// `tp->lost`.
    pub lost: u64,
    /// Packets in flight now (`tcp_packets_in_flight`) and before the ACK.
    pub in_flight: u32,
    pub prior_in_flight: u32,
    /// Time until the pacer lets the next packet go, in µs.
    pub edt_wait_us: u64,
    /// Payload bytes per packet (`mss_cache`).
    pub mss: u32,
    /// The smoothed RTT in µs, once there is one.
    pub srtt_us: Option<u64>,
    /// The congestion-avoidance state after the ACK.
    pub state: CaState,
    /// In and out: the congestion window in packets.
    pub cwnd: u32,
    /// Out: ssthresh set by DRAIN's entry.
    pub ssthresh: Option<u32>,
    /// Out: mark the delivery-rate samples application-limited from now (PROBE_RTT).
    pub app_limited: bool,
}

/// One connection's BBR state (`struct bbr`).
#[derive(Clone, Debug)]
pub(super) struct Bbr {
    mode: BbrMode,
    min_rtt_us: Option<u64>,
    min_rtt_stamp_us: u64,
    probe_rtt_done_us: Option<u64>,
    probe_rtt_round_done: bool,
    bw: WindowedMax,
    rtt_cnt: u32,
    next_rtt_delivered: u64,
    cycle_stamp_us: u64,
    cycle_idx: u32,
    prev_state: CaState,
    packet_conservation: bool,
    round_start: bool,
    idle_restart: bool,
    lt_is_sampling: bool,
    lt_rtt_cnt: u32,
    lt_use_bw: bool,
    lt_bw: u64,
    lt_last_delivered: u64,
    lt_last_stamp_ms: u64,
    lt_last_lost: u64,
    pacing_gain: u32,
    cwnd_gain: u32,
    full_bw_reached: bool,
    full_bw_cnt: u32,
    full_bw: u64,
    has_seen_rtt: bool,
    prior_cwnd: u32,
    ack_epoch_us: u64,
    ack_epoch_acked: u64,
    extra_acked: [u64; 2],
    extra_acked_win_rtts: u32,
    extra_acked_win_idx: usize,
    /// The pacing rate in bytes per second (`sk_pacing_rate`).
    pacing_rate: u64,
}

impl Bbr {
    /// `bbr_init` at connection start with window `cwnd`, the least RTT seen so far, and the
    /// smoothed RTT if any; `stamp_us` is now.
    pub(super) fn new(
        cwnd: u32,
        mss: u32,
        min_rtt_us: Option<u64>,
        srtt_us: Option<u64>,
        now_us: u64,
    ) -> Bbr {
        let mut bbr = Bbr {
            mode: BbrMode::Startup,
            min_rtt_us,
            min_rtt_stamp_us: now_us,
            probe_rtt_done_us: None,
            probe_rtt_round_done: false,
            bw: WindowedMax::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            cycle_stamp_us: 0,
            cycle_idx: 0,
            prev_state: CaState::Open,
            packet_conservation: false,
            round_start: false,
            idle_restart: false,
            lt_is_sampling: false,
            lt_rtt_cnt: 0,
            lt_use_bw: false,
            lt_bw: 0,
            lt_last_delivered: 0,
            lt_last_stamp_ms: 0,
            lt_last_lost: 0,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            full_bw_reached: false,
            full_bw_cnt: 0,
            full_bw: 0,
            has_seen_rtt: false,
            prior_cwnd: 0,
            ack_epoch_us: now_us,
            ack_epoch_acked: 0,
            extra_acked: [0; 2],
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
            pacing_rate: 0,
        };
        bbr.init_pacing_rate_from_rtt(cwnd, mss, srtt_us);
        bbr
    }

    /// The mode.
    pub(super) fn mode(&self) -> BbrMode {
        self.mode
    }

    /// The pacing rate in bytes per second.
    pub(super) fn pacing_rate(&self) -> u64 {
        self.pacing_rate
    }

    /// The bandwidth estimate in packets per second.
    pub(super) fn bw_packets_per_sec(&self) -> f64 {
        self.bw() as f64 * 1e6 / BW_UNIT as f64
    }

    /// The min-RTT estimate in seconds (0 before a sample).
    pub(super) fn min_rtt_secs(&self) -> f64 {
        self.min_rtt_us.map_or(0.0, |us| us as f64 * 1e-6)
    }

    /// The current pacing and cwnd gains as fractions.
    pub(super) fn gains(&self) -> (f64, f64) {
        let unit = f64::from(BBR_UNIT);
        (
            f64::from(self.pacing_gain) / unit,
            f64::from(self.cwnd_gain) / unit,
        )
    }

    fn max_bw(&self) -> u64 {
        self.bw.get()
    }

    fn bw(&self) -> u64 {
        if self.lt_use_bw {
            self.lt_bw
        } else {
            self.max_bw()
        }
    }

    fn extra_acked(&self) -> u64 {
        self.extra_acked[0].max(self.extra_acked[1])
    }

    /// `bbr_rate_bytes_per_sec`: `rate` (packets/µs << 24) times `gain` in bytes per second,
    /// less the pacing margin.
    fn rate_bytes_per_sec(rate: u64, mss: u32, gain: u32) -> u64 {
        let rate = (u128::from(rate) * u128::from(mss) * u128::from(gain)) >> BBR_SCALE;
        let rate = rate * u128::from(1_000_000 / 100 * (100 - PACING_MARGIN_PERCENT));
        u64::try_from(rate >> BW_SCALE).unwrap_or(u64::MAX)
    }

    /// `bbr_init_pacing_rate_from_rtt`: high gain times cwnd over the smoothed RTT (1 ms
    /// before any).
    fn init_pacing_rate_from_rtt(&mut self, cwnd: u32, mss: u32, srtt_us: Option<u64>) {
        let rtt_us = match srtt_us {
            Some(srtt) => {
                self.has_seen_rtt = true;
                srtt.max(1)
            }
            None => NOMINAL_RTT_US,
        };
        let bw = u64::from(cwnd) * BW_UNIT / rtt_us;
        self.pacing_rate = Bbr::rate_bytes_per_sec(bw, mss, HIGH_GAIN);
    }

    /// `bbr_set_pacing_rate`: never slower during STARTUP.
    fn set_pacing_rate(&mut self, c: &Conn, bw: u64, gain: u32) {
        let rate = Bbr::rate_bytes_per_sec(bw, c.mss, gain);
        if !self.has_seen_rtt && c.srtt_us.is_some() {
            self.init_pacing_rate_from_rtt(c.cwnd, c.mss, c.srtt_us);
        }
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// `bbr_tso_segs_goal`: packets per burst at the pacing rate.
    pub(super) fn tso_segs_goal(&self, mss: u32) -> u32 {
        let min_segs = if self.pacing_rate < MIN_TSO_RATE >> 3 {
            1
        } else {
            2
        };
        let bytes = (self.pacing_rate >> PACING_SHIFT).min(GSO_MAX_BYTES);
        let segs = u32::try_from(bytes / u64::from(mss.max(1))).unwrap_or(u32::MAX);
        segs.max(min_segs).min(GSO_MAX_SEGS)
    }

    /// `bbr_save_cwnd`: the last good cwnd, to restore after recovery or PROBE_RTT.
    pub(super) fn save_cwnd(&mut self, cwnd: u32) {
        if self.prev_state < CaState::Recovery && self.mode != BbrMode::ProbeRtt {
            self.prior_cwnd = cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(cwnd);
        }
    }

    /// `bbr_bdp`: ceil(bw x min_rtt x gain) packets; the initial window before any RTT.
    fn bdp(&self, bw: u64, gain: u32) -> u32 {
        let Some(min_rtt) = self.min_rtt_us else {
            return TCP_INIT_CWND;
        };
        let w = u128::from(bw) * u128::from(min_rtt);
        let bdp = ((w * u128::from(gain)) >> BBR_SCALE).div_ceil(u128::from(BW_UNIT));
        u32::try_from(bdp).unwrap_or(u32::MAX)
    }

    /// `bbr_quantization_budget`: room for three bursts, an even number, and 2 more in the
    /// probing phase.
    fn quantization_budget(&self, cwnd: u32, mss: u32) -> u32 {
        let mut cwnd = cwnd.saturating_add(3 * self.tso_segs_goal(mss));
        cwnd = cwnd.saturating_add(1) & !1;
        if self.mode == BbrMode::ProbeBw && self.cycle_idx == 0 {
            cwnd = cwnd.saturating_add(2);
        }
        cwnd
    }

    /// `bbr_inflight`.
    fn inflight(&self, bw: u64, gain: u32, mss: u32) -> u32 {
        self.quantization_budget(self.bdp(bw, gain), mss)
    }

    /// `bbr_packets_in_net_at_edt`: what will be in the network when the next packet leaves.
    fn packets_in_net_at_edt(&self, c: &Conn, inflight_now: u32) -> u32 {
        let delivered = (u128::from(self.bw()) * u128::from(c.edt_wait_us)) >> BW_SCALE;
        let mut at_edt = u64::from(inflight_now);
        if self.pacing_gain > BBR_UNIT {
            at_edt += u64::from(self.tso_segs_goal(c.mss));
        }
        let delivered = u64::try_from(delivered).unwrap_or(u64::MAX);
        u32::try_from(at_edt.saturating_sub(delivered)).unwrap_or(u32::MAX)
    }

    /// `bbr_ack_aggregation_cwnd`.
    fn ack_aggregation_cwnd(&self) -> u32 {
        if EXTRA_ACKED_GAIN == 0 || !self.full_bw_reached {
            return 0;
        }
        let max_aggr = u128::from(self.bw()) * u128::from(EXTRA_ACKED_MAX_US) / u128::from(BW_UNIT);
        let aggr = (u128::from(EXTRA_ACKED_GAIN) * u128::from(self.extra_acked())) >> BBR_SCALE;
        u32::try_from(aggr.min(max_aggr)).unwrap_or(u32::MAX)
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: deducts losses; packet conservation in the first
    /// round of recovery; the saved cwnd back when recovery ends. Returns the cwnd and whether
    /// conservation decides it.
    fn recover_or_restore(&mut self, c: &Conn, rs: &RateSample, acked: u32) -> (u32, bool) {
        let mut cwnd = c.cwnd;
        if rs.losses > 0 {
            cwnd = cwnd.saturating_sub(rs.losses).max(1);
        }
        if c.state == CaState::Recovery && self.prev_state != CaState::Recovery {
            self.packet_conservation = true;
            self.next_rtt_delivered = c.delivered;
            cwnd = c.in_flight + acked;
        } else if self.prev_state >= CaState::Recovery && c.state < CaState::Recovery {
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_state = c.state;
        if self.packet_conservation {
            return (cwnd.max(c.in_flight + acked), true);
        }
        (cwnd, false)
    }

    /// `bbr_set_cwnd`.
    fn set_cwnd(&mut self, c: &mut Conn, rs: &RateSample, bw: u64) {
        let acked = rs.acked_sacked;
        let mut cwnd = c.cwnd;
        if acked > 0 {
            let (recovered, conserving) = self.recover_or_restore(c, rs, acked);
            cwnd = recovered;
            if !conserving {
                let mut target = self.bdp(bw, self.cwnd_gain);
                target = target.saturating_add(self.ack_aggregation_cwnd());
                target = self.quantization_budget(target, c.mss);
                if self.full_bw_reached {
                    cwnd = cwnd.saturating_add(acked).min(target);
                } else if cwnd < target || c.delivered < u64::from(TCP_INIT_CWND) {
                    cwnd = cwnd.saturating_add(acked);
                }
                cwnd = cwnd.max(CWND_MIN_TARGET);
            }
        }
        c.cwnd = cwnd;
        if self.mode == BbrMode::ProbeRtt {
            c.cwnd = c.cwnd.min(CWND_MIN_TARGET);
        }
    }

    /// `bbr_is_next_cycle_phase`.
    fn is_next_cycle_phase(&self, c: &Conn, rs: &RateSample) -> bool {
        let min_rtt = self.min_rtt_us.unwrap_or(u64::from(u32::MAX));
        let full_length = c.delivered_us.saturating_sub(self.cycle_stamp_us) > min_rtt;
        if self.pacing_gain == BBR_UNIT {
            return full_length;
        }
        let inflight = self.packets_in_net_at_edt(c, c.prior_in_flight);
        let bw = self.max_bw();
        if self.pacing_gain > BBR_UNIT {
            return full_length
                && (rs.losses > 0 || inflight >= self.inflight(bw, self.pacing_gain, c.mss));
        }
        full_length || inflight <= self.inflight(bw, BBR_UNIT, c.mss)
    }

    fn advance_cycle_phase(&mut self, c: &Conn) {
        self.cycle_idx = (self.cycle_idx + 1) & (CYCLE_LEN - 1);
        self.cycle_stamp_us = c.delivered_us;
    }

    /// `bbr_reset_probe_bw_mode`: a random phase other than the probing one, then the next.
    fn reset_probe_bw_mode(&mut self, c: &Conn, draw: f64) {
        self.mode = BbrMode::ProbeBw;
        let rand = ((draw * f64::from(CYCLE_RAND)) as u32).min(CYCLE_RAND - 1);
        self.cycle_idx = CYCLE_LEN - 1 - rand;
        self.advance_cycle_phase(c);
    }

    fn reset_mode(&mut self, c: &Conn, draw: f64) {
        if self.full_bw_reached {
            self.reset_probe_bw_mode(c, draw);
        } else {
            self.mode = BbrMode::Startup;
        }
    }

    fn reset_lt_bw_sampling_interval(&mut self, c: &Conn) {
        self.lt_last_stamp_ms = c.delivered_us / 1000;
        self.lt_last_delivered = c.delivered;
        self.lt_last_lost = c.lost;
        self.lt_rtt_cnt = 0;
    }

    fn reset_lt_bw_sampling(&mut self, c: &Conn) {
        self.lt_bw = 0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.reset_lt_bw_sampling_interval(c);
    }

    /// `bbr_lt_bw_interval_done`: two consistent lossy intervals mean a policer.
    fn lt_bw_interval_done(&mut self, c: &Conn, bw: u64) {
        if self.lt_bw > 0 {
            let diff = bw.abs_diff(self.lt_bw);
            if diff * u64::from(BBR_UNIT) <= LT_BW_RATIO * self.lt_bw
                || Bbr::rate_bytes_per_sec(diff, c.mss, BBR_UNIT) <= LT_BW_DIFF
            {
                self.lt_bw = (bw + self.lt_bw) >> 1;
                self.lt_use_bw = true;
                self.pacing_gain = BBR_UNIT;
                self.lt_rtt_cnt = 0;
                return;
            }
        }
        self.lt_bw = bw;
        self.reset_lt_bw_sampling_interval(c);
    }

    /// `bbr_lt_bw_sampling`: the long-term bandwidth over lossy intervals.
    fn lt_bw_sampling(&mut self, c: &Conn, rs: &RateSample, draw: f64) {
        if self.lt_use_bw {
            if self.mode == BbrMode::ProbeBw && self.round_start {
                self.lt_rtt_cnt += 1;
                if self.lt_rtt_cnt >= LT_BW_MAX_RTTS {
                    self.reset_lt_bw_sampling(c);
                    self.reset_probe_bw_mode(c, draw);
                }
            }
            return;
        }
        if !self.lt_is_sampling {
            if rs.losses == 0 {
                return;
            }
            self.reset_lt_bw_sampling_interval(c);
            self.lt_is_sampling = true;
        }
        if rs.is_app_limited {
            return self.reset_lt_bw_sampling(c);
        }
        if self.round_start {
            self.lt_rtt_cnt += 1;
        }
        if self.lt_rtt_cnt < LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt_rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            return self.reset_lt_bw_sampling(c);
        }
        if rs.losses == 0 {
            return;
        }
        let lost = c.lost - self.lt_last_lost;
        let delivered = c.delivered - self.lt_last_delivered;
        if delivered == 0 || (lost << BBR_SCALE) < LT_LOSS_THRESH * delivered {
            return;
        }
        let t_ms = (c.delivered_us / 1000).saturating_sub(self.lt_last_stamp_ms);
        if t_ms < 1 {
            return;
        }
        if t_ms >= u64::from(u32::MAX) / 1000 {
            return self.reset_lt_bw_sampling(c);
        }
        let bw = delivered * BW_UNIT / (t_ms * 1000);
        self.lt_bw_interval_done(c, bw);
    }

    /// `bbr_update_bw`: round counting and the max filter.
    fn update_bw(&mut self, c: &Conn, rs: &RateSample, draw: f64) {
        self.round_start = false;
        let Some(bw) = rs.rate(BW_SCALE) else {
            return;
        };
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = c.delivered;
            self.rtt_cnt += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_bw_sampling(c, rs, draw);
        if !rs.is_app_limited || bw >= self.max_bw() {
            self.bw.update(BW_RTTS, self.rtt_cnt, bw);
        }
    }

    /// `bbr_update_ack_aggregation`: the most data acked beyond the bandwidth estimate.
    fn update_ack_aggregation(&mut self, c: &Conn, rs: &RateSample) {
        if EXTRA_ACKED_GAIN == 0 || rs.acked_sacked == 0 || rs.rate(BW_SCALE).is_none() {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1f);
            if self.extra_acked_win_rtts >= EXTRA_ACKED_WIN_RTTS {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx = 1 - self.extra_acked_win_idx;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let epoch_us = c.delivered_us.saturating_sub(self.ack_epoch_us);
        let mut expected =
            u64::try_from(u128::from(self.bw()) * u128::from(epoch_us) / u128::from(BW_UNIT))
                .unwrap_or(u64::MAX);
        let acked = u64::from(rs.acked_sacked);
        if self.ack_epoch_acked <= expected
            || self.ack_epoch_acked + acked >= ACK_EPOCH_ACKED_RESET_THRESH
        {
            self.ack_epoch_acked = 0;
            self.ack_epoch_us = c.delivered_us;
            expected = 0;
        }
        self.ack_epoch_acked = (self.ack_epoch_acked + acked).min(0xfffff);
        let extra = (self.ack_epoch_acked - expected).min(u64::from(c.cwnd));
        let slot = &mut self.extra_acked[self.extra_acked_win_idx];
        *slot = (*slot).max(extra);
    }

    /// `bbr_check_full_bw_reached`.
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        let thresh = (self.full_bw * u64::from(FULL_BW_THRESH)) >> BBR_SCALE;
        if self.max_bw() >= thresh {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_CNT;
    }

    /// `bbr_check_drain`.
    fn check_drain(&mut self, c: &mut Conn, draw: f64) {
        if self.mode == BbrMode::Startup && self.full_bw_reached {
            self.mode = BbrMode::Drain;
            c.ssthresh = Some(self.inflight(self.max_bw(), BBR_UNIT, c.mss));
        }
        if self.mode == BbrMode::Drain
            && self.packets_in_net_at_edt(c, c.in_flight)
                <= self.inflight(self.max_bw(), BBR_UNIT, c.mss)
        {
            self.reset_probe_bw_mode(c, draw);
        }
    }

    /// `bbr_check_probe_rtt_done`.
    fn check_probe_rtt_done(&mut self, c: &mut Conn, draw: f64) {
        if self.probe_rtt_done_us.is_none_or(|done| c.now_us <= done) {
            return;
        }
        self.min_rtt_stamp_us = c.now_us;
        c.cwnd = c.cwnd.max(self.prior_cwnd);
        self.reset_mode(c, draw);
    }

    /// `bbr_update_min_rtt`: the 10 s min filter and PROBE_RTT.
    fn update_min_rtt(&mut self, c: &mut Conn, rs: &RateSample, draw: f64) {
        let expired = c.now_us > self.min_rtt_stamp_us + MIN_RTT_WIN_US;
        if let Some(rtt) = rs.rtt_us {
            if self.min_rtt_us.is_none_or(|m| rtt <= m) || (expired && !rs.is_ack_delayed) {
                self.min_rtt_us = Some(rtt);
                self.min_rtt_stamp_us = c.now_us;
            }
        }
        if expired && !self.idle_restart && self.mode != BbrMode::ProbeRtt {
            self.mode = BbrMode::ProbeRtt;
            self.save_cwnd(c.cwnd);
            self.probe_rtt_done_us = None;
        }
        if self.mode == BbrMode::ProbeRtt {
            c.app_limited = true;
            if self.probe_rtt_done_us.is_none() && c.in_flight <= CWND_MIN_TARGET {
                self.probe_rtt_done_us = Some(c.now_us + PROBE_RTT_MODE_US);
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = c.delivered;
            } else if self.probe_rtt_done_us.is_some() {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(c, draw);
                }
            }
        }
        if rs.delivered.is_some_and(|d| d > 0) {
            self.idle_restart = false;
        }
    }

    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            BbrMode::Startup => (HIGH_GAIN, HIGH_GAIN),
            BbrMode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            BbrMode::ProbeBw if self.lt_use_bw => (BBR_UNIT, CWND_GAIN),
            BbrMode::ProbeBw => (PACING_GAIN[self.cycle_idx as usize], CWND_GAIN),
            BbrMode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
    }

    /// `bbr_main`: updates the model from the ACK's sample, then the pacing rate and cwnd.
    /// `draw` is a uniform number in [0, 1) for the random gain-cycle phase.
    pub(super) fn on_ack(&mut self, c: &mut Conn, rs: &RateSample, draw: f64) {
        self.update_bw(c, rs, draw);
        self.update_ack_aggregation(c, rs);
        if self.mode == BbrMode::ProbeBw && self.is_next_cycle_phase(c, rs) {
            self.advance_cycle_phase(c);
        }
        self.check_full_bw_reached(rs);
        self.check_drain(c, draw);
        self.update_min_rtt(c, rs, draw);
        self.update_gains();
        let bw = self.bw();
        self.set_pacing_rate(c, bw, self.pacing_gain);
        self.set_cwnd(c, rs, bw);
    }

    /// `bbr_set_state(TCP_CA_Loss)`: a timeout ends the round and is a loss for the
    /// long-term sampler.
    pub(super) fn on_timeout(&mut self, c: &Conn, draw: f64) {
        let rs = RateSample {
            losses: 1,
            ..RateSample::default()
        };
        self.prev_state = CaState::Loss;
        self.full_bw = 0;
        self.round_start = true;
        self.lt_bw_sampling(c, &rs, draw);
    }

    /// `bbr_cwnd_event(CA_EVENT_TX_START)` after an application-limited idle period.
    pub(super) fn on_restart_after_idle(&mut self, c: &mut Conn, draw: f64) {
        self.idle_restart = true;
        self.ack_epoch_us = c.now_us;
        self.ack_epoch_acked = 0;
        match self.mode {
            BbrMode::ProbeBw => self.set_pacing_rate(c, self.bw(), BBR_UNIT),
            BbrMode::ProbeRtt => self.check_probe_rtt_done(c, draw),
            _ => {}
        }
    }
}

fn micros(t: Time) -> u64 {
    t.as_nanos() / 1000
}

/// The sender's side of BBR: the delivery-rate sample of every ACK, RFC 6675 recovery without
/// its window cut, BBR's cwnd and pacing rate, then sending.
impl TcpSender {
    /// The congestion-avoidance state as BBR sees it.
    fn bbr_ca_state(&self) -> CaState {
        if self.bbr_loss_until.is_some() {
            CaState::Loss
        } else if self.sack.in_recovery {
            CaState::Recovery
        } else {
            CaState::Open
        }
    }

    /// `tcp_packets_in_flight`: after a timeout what was resent since (going back N) and not
    /// SACKed, else RFC 6675's pipe.
    pub(super) fn bbr_in_flight(&self) -> u32 {
        let board = &self.sack.scoreboard;
        let flight = if self.bbr_loss_until.is_some() {
            (self.highest_ack + 1..self.t_seqno)
                .filter(|&seq| !board.is_sacked(seq))
                .count() as i64
        } else if board.is_empty() {
            self.maxseq - self.highest_ack
        } else {
            board.pipe(self.highest_ack, self.maxseq, self.pipe_dup_thresh())
        };
        u32::try_from(flight.max(0)).unwrap_or(u32::MAX)
    }

    /// The connection as BBR reads it now.
    fn bbr_conn(&self, now: Time, prior_in_flight: u32) -> Conn {
        let rate = self.rate.as_ref();
        Conn {
            now_us: micros(now),
            delivered: rate.map_or(0, |r| r.delivered()),
            delivered_us: rate.map_or(0, |r| micros(r.delivered_at())),
            lost: rate.map_or(0, |r| r.lost()),
            in_flight: self.bbr_in_flight(),
            prior_in_flight,
            edt_wait_us: self
                .pacer
                .as_ref()
                .map_or(0, |p| p.wait(now).as_micros() as u64),
            mss: self.cfg.size_bytes,
            srtt_us: (self.stats.rtt_samples > 0)
                .then(|| (self.rto.srtt_secs() * 1e6).round() as u64),
            state: self.bbr_ca_state(),
            cwnd: self.cwnd.max(1.0) as u32,
            ssthresh: None,
            app_limited: false,
        }
    }

    /// Writes BBR's decisions back: cwnd, ssthresh, the pacing rate and burst.
    fn bbr_apply(&mut self, c: &Conn) {
        let Some(bbr) = self.bbr.as_ref() else {
            return;
        };
        self.cwnd = f64::from(c.cwnd.max(1));
        if let Some(ssthresh) = c.ssthresh {
            self.ssthresh = f64::from(ssthresh);
        }
        let (rate, burst) = (bbr.pacing_rate(), bbr.tso_segs_goal(self.cfg.size_bytes));
        if let Some(pacer) = self.pacer.as_mut() {
            pacer.set_rate(rate, burst);
        }
        if c.app_limited {
            let flight = u64::from(self.bbr_in_flight());
            if let Some(r) = self.rate.as_mut() {
                r.set_app_limited(flight);
            }
        }
    }

    /// An ACK under BBR (`tcp_ack` with `cong_control`).
    pub(super) fn bbr_recv(&mut self, now: Time, ack: &TcpAck, out: &mut Outbox) {
        let seq = ack.seqno();
        if seq < self.highest_ack {
            return;
        }
        let syn_acked = self.cfg.syn && self.highest_ack < 0 && seq >= 0;
        let prior_in_flight = self.bbr_in_flight();
        let lost_before = self.rate.as_ref().map_or(0, |r| r.lost());
        let send = self.rfc6675_ack(now, ack, out);
        if self
            .bbr_loss_until
            .is_some_and(|until| self.highest_ack >= until)
        {
            self.bbr_loss_until = None;
        }
        let lost_below = if self.bbr_loss_until.is_some() {
            None
        } else {
            self.pipe_dup_thresh()
                .and_then(|t| self.sack.scoreboard.lost_below(t))
        };
        let sample = self.rate.as_mut().map(|rate| {
            if let Some(below) = lost_below {
                rate.mark_lost_below(below);
            }
            // Found lost by IsLost here or by RACK in the ACK's processing.
            let losses = u32::try_from(rate.lost() - lost_before).unwrap_or(u32::MAX);
            rate.generate(now, losses)
        });
        if syn_acked {
            // Linux starts BBR on the established connection: the SYN's RTT is its first
            // (none if the SYN was sent again).
            let min_rtt = self
                .first_sent
                .filter(|_| self.stats.retransmits == 0)
                .map(|sent| micros(now) - micros(sent));
            let c = self.bbr_conn(now, prior_in_flight);
            self.bbr = Some(Bbr::new(c.cwnd, c.mss, min_rtt, c.srtt_us, c.now_us));
            self.bbr_apply(&c);
        } else if let Some(sample) = sample {
            let mut c = self.bbr_conn(now, prior_in_flight);
            let draw = uniform(&mut self.rng);
            if let Some(bbr) = self.bbr.as_mut() {
                bbr.on_ack(&mut c, &sample, draw);
            }
            self.bbr_apply(&c);
        }
        // A recovery this ACK began sends its first retransmission now, after BBR set cwnd
        // (`tcp_xmit_recovery` after `tcp_cong_control`): its packet conservation counts the
        // packets in flight without it, so the retransmission takes one of the slots the ACK
        // freed, as in Linux, and no new packet leaves beside it.
        if let Some(first) = self.sack.entry_rtx.take() {
            self.rfc6675_entry_retransmission(now, first, out);
        }
        self.send_after_ack(now, send, out);
        self.bbr_check_app_limited();
    }

    /// `tcp_rate_check_app_limited`: nothing left to send and room in the window.
    pub(super) fn bbr_check_app_limited(&mut self) {
        if self.bbr.is_none() || self.t_seqno < self.curseq {
            return;
        }
        let flight = self.bbr_in_flight();
        if f64::from(flight) < self.cwnd {
            if let Some(rate) = self.rate.as_mut() {
                rate.set_app_limited(u64::from(flight));
            }
        }
    }

    /// A retransmission timeout (`tcp_enter_loss` with `bbr_ssthresh` and `bbr_set_state`):
    /// the cwnd is saved, cut to 1, and everything outstanding is lost.
    pub(super) fn bbr_timeout(&mut self, now: Time) {
        let cwnd = self.cwnd.max(1.0) as u32;
        if let Some(rate) = self.rate.as_mut() {
            rate.on_timeout();
        }
        let c = self.bbr_conn(now, 0);
        let draw = uniform(&mut self.rng);
        if let Some(bbr) = self.bbr.as_mut() {
            bbr.save_cwnd(cwnd);
            bbr.on_timeout(&c, draw);
        }
        self.bbr_loss_until = Some(self.maxseq);
        self.cwnd = 1.0;
        self.last_cwnd_action = CwndAction::Timeout;
    }

    /// Entering RFC 6675 recovery: BBR saves cwnd and does not cut it (`bbr_ssthresh`); its
    /// next ACK applies packet conservation.
    pub(super) fn bbr_enter_recovery(&mut self) {
        let cwnd = self.cwnd.max(1.0) as u32;
        if let Some(bbr) = self.bbr.as_mut() {
            bbr.save_cwnd(cwnd);
        }
    }

    /// The application restarts after an idle period (`tcp_cwnd_restart` then
    /// `CA_EVENT_TX_START`): cwnd back to at most the initial window.
    pub(super) fn bbr_restart_after_idle(&mut self, now: Time) {
        self.cwnd = self.cwnd.min(f64::from(self.cfg.initial_window)).max(1.0);
        let mut c = self.bbr_conn(now, 0);
        let draw = uniform(&mut self.rng);
        if let Some(bbr) = self.bbr.as_mut() {
            bbr.on_restart_after_idle(&mut c, draw);
        }
        self.bbr_apply(&c);
    }

    /// BBR's trace values: mode, bandwidth estimate (packets/s), min RTT (s), pacing rate
    /// (bytes/s), pacing and cwnd gains.
    pub(super) fn bbr_trace(&self) -> [f64; 7] {
        self.bbr.as_ref().map_or([0.0; 7], |bbr| {
            let (pacing_gain, cwnd_gain) = bbr.gains();
            [
                f64::from(bbr.mode().index()),
                bbr.bw_packets_per_sec(),
                bbr.min_rtt_secs(),
                bbr.pacing_rate() as f64,
                pacing_gain,
                cwnd_gain,
                if bbr.lt_use_bw { 1.0 } else { 0.0 },
            ]
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    use crate::agent::tcp::delivery_rate::DeliveryRate;
    use crate::agent::tcp::test_driver::Driver;
    use crate::agent::tcp::{TcpConfig, TcpVariant};

    /// A `linux` BBR sender whose SYN was acked after 50 ms and whose initial window (packets 1
    /// to 10) has been out for 50 ms, nothing of it acked yet.
    fn bbr_with_its_initial_window_out() -> Driver {
        let mut d = Driver::new(TcpConfig::linux(TcpVariant::Bbr));
        d.wait(Duration::from_millis(49));
        let mut sent = d.ack(0);
        sent.extend(d.wait(Duration::from_millis(20)));
        assert_eq!(sent, (1..=10).collect::<Vec<i64>>());
        d.wait(Duration::from_millis(30));
        d
    }

    #[test]
    fn with_rack_a_resent_packet_is_not_counted_lost_again_by_dupthresh() {
        // Linux with RACK marks losses by RACK alone (`tcp_identify_packet_loss`). The SYN's
        // ACK opens the window (packets 1 to 10); SACKs for 2 to 4 let RACK find 1 lost, and
        // recovery resends it on the same ACK. RFC 6675's three-SACK rule, applied after, must
        // not count the resent 1 as lost a second time in BBR's rate samples.
        let mut d = bbr_with_its_initial_window_out();
        assert_eq!(d.sack(0, &[(2, 5)]).first(), Some(&1));
        let lost = d.sender.rate.as_ref().map(DeliveryRate::lost);
        assert_eq!(lost, Some(1));
    }

    #[test]
    fn a_recovery_conserves_packets_with_its_first_retransmission_out_of_flight() {
        // Linux's `tcp_ack` sets BBR's cwnd (`tcp_cong_control`) before the recovery's first
        // retransmission leaves (`tcp_xmit_recovery`): packet conservation gives cwnd = in
        // flight + delivered = (10 - 3 SACKed - 1 lost) + 3 = 9, and the ACK that delivered
        // 3 packets releases 3: the retransmission of 1 and two new packets. Counting the
        // retransmission in flight first would release a fourth.
        let mut d = bbr_with_its_initial_window_out();
        let mut released = d.sack(0, &[(2, 5)]);
        released.extend(d.wait(Duration::from_millis(10)));
        assert_eq!(released, vec![1, 11, 12]);
        assert_eq!(d.sender.cwnd, 9.0);
    }

    #[test]
    fn the_initial_window_leaves_at_once_and_pacing_begins_with_the_tenth_packet() {
        // Linux paces from `data_segs_out >= 10`: the SYN's ACK releases the whole initial
        // window of 10 at that instant; the 10th packet is the first to move the departure
        // time on, so the packets its ACKs release wait for the pacer.
        let mut d = Driver::new(TcpConfig::linux(TcpVariant::Bbr));
        d.wait(Duration::from_millis(49));
        assert_eq!(d.ack(0), (1..=10).collect::<Vec<i64>>());
        assert!(d
            .sender
            .pacer
            .as_ref()
            .is_some_and(|p| p.wait(d.now) > Duration::ZERO));
    }

    #[test]
    fn the_gains_are_the_kernels() {
        assert_eq!(HIGH_GAIN, 739);
        assert_eq!(DRAIN_GAIN, 88);
        assert_eq!(PACING_GAIN.iter().sum::<u32>(), 8 * BBR_UNIT);
    }

    #[test]
    fn the_windowed_max_forgets_old_samples() {
        let mut m = WindowedMax::default();
        m.update(10, 1, 100);
        m.update(10, 2, 50);
        m.update(10, 5, 70);
        assert_eq!(m.get(), 100);
        // Round 12: the best sample (round 1) is older than the window.
        m.update(10, 12, 60);
        assert_eq!(m.get(), 70);
        m.update(10, 30, 10);
        assert_eq!(m.get(), 10);
    }

    fn conn(cwnd: u32) -> Conn {
        Conn {
            now_us: 0,
            delivered: 0,
            delivered_us: 0,
            lost: 0,
            in_flight: 0,
            prior_in_flight: 0,
            edt_wait_us: 0,
            mss: 1448,
            srtt_us: Some(100_000),
            state: CaState::Open,
            cwnd,
            ssthresh: None,
            app_limited: false,
        }
    }

    #[test]
    fn pacing_starts_at_high_gain_times_the_initial_window_per_rtt() {
        let bbr = Bbr::new(10, 1448, Some(100_000), Some(100_000), 0);
        // 2.89 x 10 x 1448 B / 100 ms, less 1%.
        let expected = 2.89 * 10.0 * 1448.0 / 0.1 * 0.99;
        let rate = bbr.pacing_rate() as f64;
        assert!((rate / expected - 1.0).abs() < 0.01, "{rate}");
        // 413 kB/s: two-packet bursts (above 150 kB/s, below 2 packets per ms).
        assert_eq!(bbr.tso_segs_goal(1448), 2);
    }

    /// Feeds BBR a steady path: `bw` packets per ms, RTT `rtt_ms`, one ACK per packet, for
    /// `ms` milliseconds; returns the milliseconds spent in PROBE_RTT.
    fn steady(bbr: &mut Bbr, c: &mut Conn, bw: u64, rtt_ms: u64, ms: u64) -> u64 {
        let mut probe_rtt_acks = 0;
        for _ in 0..ms {
            for _ in 0..bw {
                c.now_us += 1000 / bw;
                c.delivered += 1;
                c.delivered_us = c.now_us;
                let rs = RateSample {
                    prior_delivered: c.delivered.saturating_sub(bw * rtt_ms),
                    delivered: Some(bw * rtt_ms),
                    interval_us: Some(rtt_ms * 1000),
                    rtt_us: Some(rtt_ms * 1000),
                    acked_sacked: 1,
                    ..RateSample::default()
                };
                c.prior_in_flight = c.in_flight;
                bbr.on_ack(c, &rs, 0.5);
                c.in_flight = c.cwnd.min((bw * rtt_ms) as u32 + 2);
                if bbr.mode() == BbrMode::ProbeRtt {
                    probe_rtt_acks += 1;
                }
            }
        }
        probe_rtt_acks / bw
    }

    #[test]
    fn startup_finds_the_bandwidth_drains_and_cycles() {
        let mut bbr = Bbr::new(10, 1448, Some(20_000), Some(20_000), 0);
        let mut c = conn(10);
        // 1 packet per ms, 20 ms: a BDP of 20 packets.
        assert_eq!(steady(&mut bbr, &mut c, 1, 20, 400), 0);
        assert_eq!(bbr.mode(), BbrMode::ProbeBw);
        assert!((bbr.bw_packets_per_sec() - 1000.0).abs() < 1.0);
        // cwnd = 2 BDP + 3 bursts of 2 (+2 in the probing phase, + ACK aggregation).
        assert!((46..=50).contains(&c.cwnd), "{}", c.cwnd);
        // The pacing rate cycles around 1000 x 1448 B/s.
        let rate = bbr.pacing_rate() as f64 / 1448.0;
        assert!((740.0..=1240.0).contains(&rate), "{rate}");
    }

    #[test]
    fn probe_rtt_after_ten_seconds_without_a_lower_rtt() {
        // The first sample was 19 ms; the path gives 20 ms from then on.
        let mut bbr = Bbr::new(10, 1448, Some(19_000), Some(19_000), 0);
        let mut c = conn(10);
        let probing = steady(&mut bbr, &mut c, 1, 20, 10_500);
        // PROBE_RTT once, at 4 packets for 200 ms and a round, then back to PROBE_BW with
        // the min RTT measured again.
        assert!((200..=260).contains(&probing), "{probing}");
        assert_eq!(bbr.mode(), BbrMode::ProbeBw);
        assert_eq!(bbr.min_rtt_us, Some(20_000));
        assert!(
            bbr.min_rtt_stamp_us > 10_000_000,
            "{}",
            bbr.min_rtt_stamp_us
        );
    }
}
