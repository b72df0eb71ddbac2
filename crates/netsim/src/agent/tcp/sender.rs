//! The TCP sender: the machinery every variant shares, after ns-2's `TcpAgent` (`tcp/tcp.cc`;
//! protocols.md §1.1-§1.3, §1.10, §1.11): `send_much` under min(cwnd, window), `output` with
//! Karn-style timing of one packet per RTT, `opencwnd`, `slowdown`, the retransmit and
//! delayed-send timers, the timeout response, limited transmit (`send_one`) and the trace.
//! Loss recovery is per variant: `reno.rs` (Tahoe, Reno, NewReno), `sack.rs`, `vegas.rs`.

use std::collections::VecDeque;
use std::time::Duration;

use tfrc::Time;

use super::bbr::Bbr;
use super::controller::{AckSample, CongestionControl, ControllerError};
use super::cubic::Cubic;
use super::delivery_rate::DeliveryRate;
use super::ecn::Ecn;
use super::header::TcpAck;
use super::pacing::{Pacer, UNPACED_SEGMENTS};
use super::prr::Prr;
use super::rack::Rack;
use super::rto::RtoEstimator;
use super::sack::SackState;
use super::tlp::Tlp;
use super::vegas::VegasState;
use super::{AckCounting, DecreaseRule, RtoFormula, TcpConfig, TcpVariant};
use crate::agent::{Agent, Outbox};
use crate::packet::{Packet, Payload};
use crate::rng::{uniform, SimRng};

/// The application's supply of a greedy source (ns-2 `TCP_MAXSEQ`).
const GREEDY: i64 = i64::MAX / 4;

/// The last congestion response (ns-2 `last_cwnd_action_`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum CwndAction {
    /// None yet.
    None,
    /// Fast retransmit (recovery entered, not yet left).
    Dupack,
    /// Retransmission timeout.
    Timeout,
    /// Fast recovery was left.
    Exited,
}

/// What `slowdown` does to cwnd (ns-2's `CLOSE_CWND_*` flags).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum CwndCut {
    /// Halve it (or multiply by `decrease_num`, per the rule).
    Decrease,
    /// Set it to one packet (`CLOSE_CWND_ONE`, `CLOSE_CWND_RESTART` with `wnd_restart_` 1).
    One,
}

/// Counters reported in the trace (cumulative).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TcpStats {
    /// Data packets sent, retransmissions and the SYN included (`ndatapack_`).
    pub packets_sent: u64,
    /// Retransmitted packets (`nrexmitpack_`).
    pub retransmits: u64,
    /// Retransmission timeouts with data outstanding (`nrexmit_`).
    pub timeouts: u64,
    /// Fast retransmits: entries into loss recovery on duplicate ACKs.
    pub fast_retransmits: u64,
    /// ACKs received.
    pub acks: u64,
    /// RTT samples taken (one timed packet per RTT).
    pub rtt_samples: u64,
    /// Sum of those samples in seconds, unrounded (for a mean RTT over any period).
    pub rtt_sum: f64,
    /// Window reductions in answer to ECN-Echo (RFC 3168 §6.1.2; 0 without
    /// [`TcpConfig::ecn`]).
    pub ecn_reductions: u64,
}

/// A TCP sender (the source agent of a `tcp` or `gaimd` flow). (Not `Clone`: it may own a
/// congestion controller.)
#[derive(Debug)]
pub struct TcpSender {
    pub(super) cfg: TcpConfig,
    pub(super) rng: SimRng,
    pub(super) rto: RtoEstimator,
    /// One past the last packet the application has supplied (`curseq_`).
    pub(super) curseq: i64,
    /// Next packet to send (`t_seqno_`).
    pub(super) t_seqno: i64,
    /// Highest packet sent (`maxseq_`).
    pub(super) maxseq: i64,
    /// Highest cumulative ACK (`highest_ack_`).
    pub(super) highest_ack: i64,
    /// Last ACK processed as new (`last_ack_`; Sack1 holds it during recovery).
    pub(super) last_ack: i64,
    /// Congestion window in packets (`cwnd_`).
    pub(super) cwnd: f64,
    /// Slow-start threshold in packets, a whole number (`ssthresh_`).
    pub(super) ssthresh: f64,
    /// Duplicate ACKs in a row (`dupacks_`).
    pub(super) dupacks: u32,
    /// Reno window inflation during fast recovery (`dupwnd_`).
    pub(super) dupwnd: f64,
    /// Highest packet sent when the last recovery began (`recover_`).
    pub(super) recover: i64,
    pub(super) last_cwnd_action: CwndAction,
    pub(super) first_decrease: bool,
    /// The initial window (`wnd_init_`; drops to 1 if the first packet is lost).
    pub(super) wnd_init: f64,
    /// A packet is being timed (`rtt_active_`), which one (`rtt_seq_`) and since when.
    pub(super) rtt_active: bool,
    pub(super) rtt_seq: i64,
    pub(super) rtt_ts: Time,
    /// Retransmission timer deadline.
    pub(super) rtx_at: Option<Time>,
    /// Delayed-send (`overhead`) timer deadline.
    pub(super) delsnd_at: Option<Time>,
    /// When the last outstanding packet was acked with nothing left to send.
    pub(super) idle_since: Option<Time>,
    /// NewReno: a partial ACK has been seen in this recovery (`firstpartial_`).
    pub(super) firstpartial: bool,
    /// When the first packet was sent (Vegas measures time from it).
    pub(super) first_sent: Option<Time>,
    pub(super) sack: SackState,
    pub(super) vegas: VegasState,
    /// CUBIC's state ([`TcpVariant::Cubic`] only).
    pub(super) cubic: Option<Cubic>,
    /// Acked packets not yet turned into a cwnd increment (Linux's `snd_cwnd_cnt`; CUBIC).
    pub(super) cwnd_cnt: u32,
    /// First-transmission times of the packets not yet acked, for a per-ACK RTT sample (CUBIC;
    /// a retransmitted packet's entry is cleared, as Linux takes no sample from it).
    pub(super) sent_at: VecDeque<(i64, Option<Time>)>,
    /// BBR's state ([`TcpVariant::Bbr`] only; from the SYN's ACK when there is a SYN).
    pub(super) bbr: Option<Bbr>,
    /// After a timeout under BBR, the highest packet sent then: the `TCP_CA_Loss` state
    /// lasts until it is acked.
    pub(super) bbr_loss_until: Option<i64>,
    /// The delivery-rate sampler (BBR).
    pub(super) rate: Option<DeliveryRate>,
    /// Sender pacing (BBR).
    pub(super) pacer: Option<Pacer>,
    /// Data packets sent so far, retransmissions included (Linux's `data_segs_out`): pacing
    /// holds packets back only from the [`UNPACED_SEGMENTS`]th on.
    data_segs_out: u64,
    /// RACK's state ([`TcpConfig::rack`] under RFC 6675 recovery).
    pub(super) rack: Option<Rack>,
    /// Tail loss probes' state ([`TcpConfig::tlp`] under RFC 6675 recovery).
    pub(super) tlp: Option<Tlp>,
    /// Proportional rate reduction's state ([`TcpConfig::prr`] under RFC 6675 recovery).
    pub(super) prr: Option<Prr>,
    /// The congestion controller that decides the window instead of the variant's own growth
    /// and reductions (docs/controllers.md); `None` for the built-in logic.
    pub(super) cc: Option<Box<dyn CongestionControl>>,
    /// The last ACK's sample, from `pkts_acked` to `cong_avoid`.
    pub(super) cc_sample: AckSample,
    /// The controller's failure: the sender is silent from then on.
    pub(super) cc_error: Option<ControllerError>,
    /// ECN's state ([`TcpConfig::ecn`]).
    pub(super) ecn: Ecn,
    pub(super) stats: TcpStats,
}

/// Trace fields of every variant; see [`TcpSender::trace_fields`].
const COMMON_FIELDS: [&str; 14] = [
    "cwnd",
    "ssthresh",
    "srtt",
    "rttvar",
    "rto",
    "backoff",
    "flight",
    "packets_sent",
    "retransmits",
    "timeouts",
    "fast_retransmits",
    "acked",
    "rtt_samples",
    "rtt_sum",
];

/// `common` followed by `own`, at compile time.
const fn fields<const N: usize, const M: usize>(
    common: [&'static str; 14],
    own: [&'static str; M],
) -> [&'static str; N] {
    assert!(N == 14 + M, "N is 14 + M");
    let mut out = [""; N];
    let mut i = 0;
    while i < N {
        out[i] = if i < 14 { common[i] } else { own[i - 14] };
        i += 1;
    }
    out
}

/// Trace fields of Vegas: those of every variant, then its base RTT and last `diff`.
static VEGAS_FIELDS: [&str; 16] = fields(COMMON_FIELDS, ["base_rtt", "vegas_diff"]);

/// Trace fields of BBR: those of every variant, then its model.
static BBR_FIELDS: [&str; 21] = fields(
    COMMON_FIELDS,
    [
        "bbr_mode",
        "bbr_bw",
        "bbr_min_rtt",
        "pacing_rate",
        "pacing_gain",
        "cwnd_gain",
        "bbr_lt_bw",
    ],
);

impl TcpSender {
    /// A sender with `config` (validated by the caller) and its own RNG, waiting for
    /// [`Agent::on_start`].
    pub fn new(config: &TcpConfig, mut rng: SimRng) -> TcpSender {
        let phase = uniform(&mut rng) * config.tick.as_secs_f64();
        let rto = RtoEstimator::new(
            config.tick,
            config.min_rto,
            config.max_rto,
            config.initial_rto,
            config.rfc2988,
            phase,
        );
        let rto = match config.rto_formula {
            RtoFormula::Rfc6298 => rto,
            RtoFormula::Linux => rto.with_variance_floor(),
        };
        let wnd_init = f64::from(config.initial_window);
        let cwnd = if config.syn && config.delay_growth {
            1.0
        } else {
            wnd_init
        };
        TcpSender {
            cfg: *config,
            rng,
            rto,
            curseq: 0,
            t_seqno: 0,
            maxseq: -1,
            highest_ack: -1,
            last_ack: -1,
            cwnd,
            ssthresh: f64::from(config.window),
            dupacks: 0,
            dupwnd: 0.0,
            recover: 0,
            last_cwnd_action: CwndAction::None,
            first_decrease: true,
            wnd_init,
            rtt_active: false,
            rtt_seq: -1,
            rtt_ts: Time::ZERO,
            rtx_at: None,
            delsnd_at: None,
            idle_since: None,
            firstpartial: false,
            first_sent: None,
            sack: SackState::default(),
            vegas: VegasState::default(),
            cubic: (config.variant == TcpVariant::Cubic)
                .then(|| Cubic::new(config.cubic, Time::ZERO, 0)),
            cwnd_cnt: 0,
            sent_at: VecDeque::new(),
            // Without a SYN BBR starts at once, with the nominal 1 ms RTT (`bbr_init`).
            bbr: (config.variant == TcpVariant::Bbr && !config.syn)
                .then(|| Bbr::new(config.initial_window, config.size_bytes, None, None, 0)),
            bbr_loss_until: None,
            rate: (config.variant == TcpVariant::Bbr || config.uses_rack())
                .then(|| DeliveryRate::new(i64::from(config.syn))),
            rack: config.uses_rack().then(Rack::default),
            tlp: config.uses_tlp().then(Tlp::default),
            prr: config.uses_prr().then(Prr::default),
            pacer: (config.variant == TcpVariant::Bbr).then(|| Pacer::new(u64::MAX)),
            data_segs_out: 0,
            cc: None,
            cc_sample: AckSample {
                acked: 0,
                acked_bytes: 0,
                rtt: None,
                ece: false,
            },
            cc_error: None,
            ecn: Ecn::default(),
            stats: TcpStats::default(),
        }
    }

    /// A sender whose window `controller` decides (docs/controllers.md): `config`'s variant
    /// names the loss recovery (Tahoe, Reno, NewReno or SACK; the caller checks it with
    /// [`TcpConfig::validate_controlled`]), the controller replaces its window growth and
    /// reductions.
    pub fn with_controller(
        config: &TcpConfig,
        rng: SimRng,
        controller: Box<dyn CongestionControl>,
    ) -> TcpSender {
        TcpSender {
            cc: Some(controller),
            ..TcpSender::new(config, rng)
        }
    }

    /// A sender whose controller could not be made: silent from the start, reporting `error`
    /// as its failure.
    pub fn with_failed_controller(
        config: &TcpConfig,
        rng: SimRng,
        error: ControllerError,
    ) -> TcpSender {
        TcpSender {
            cc_error: Some(error),
            ..TcpSender::new(config, rng)
        }
    }

    /// The configuration.
    pub fn config(&self) -> &TcpConfig {
        &self.cfg
    }

    /// Counters so far.
    pub fn stats(&self) -> TcpStats {
        self.stats
    }

    /// Tail loss probes sent, and the episodes in which one repaired a loss (both 0 without
    /// [`TcpConfig::tlp`]).
    pub fn loss_probes(&self) -> (u64, u64) {
        self.tlp.map_or((0, 0), |t| (t.probes, t.recoveries))
    }

    /// The congestion window in packets.
    pub fn cwnd(&self) -> f64 {
        self.cwnd
    }

    /// The slow-start threshold in packets.
    pub fn ssthresh(&self) -> f64 {
        self.ssthresh
    }

    /// The highest cumulative ACK received (-1 before any).
    pub fn highest_ack(&self) -> i64 {
        self.highest_ack
    }

    /// The highest packet sent (-1 before any).
    pub fn max_sent(&self) -> i64 {
        self.maxseq
    }

    /// The RTO estimator.
    pub fn rto(&self) -> &RtoEstimator {
        &self.rto
    }

    /// Whether the sender is in fast recovery (Reno inflation, NewReno, SACK recovery).
    pub fn in_recovery(&self) -> bool {
        self.dupwnd > 0.0 || self.sack.in_recovery || self.vegas_inflated()
    }

    /// The first data packet's sequence number (1 after a SYN).
    fn first_data(&self) -> i64 {
        i64::from(self.cfg.syn)
    }

    /// What the application supplies when on: everything, or up to `max_packets` data packets.
    fn supply(&self) -> i64 {
        match self.cfg.max_packets {
            Some(n) => self
                .first_data()
                .saturating_add(i64::try_from(n).unwrap_or(GREEDY))
                .min(GREEDY),
            None => GREEDY,
        }
    }

    /// `window()`: min(int(cwnd) + dupwnd, window_) packets beyond the cumulative ACK.
    pub(super) fn window(&self) -> i64 {
        ((self.cwnd as i64) + (self.dupwnd as i64)).min(i64::from(self.cfg.window))
    }

    /// `windowd()`: the same in floating point.
    pub(super) fn windowd(&self) -> f64 {
        (self.cwnd + self.dupwnd).min(f64::from(self.cfg.window))
    }

    /// Whether packet `seqno` is a header-only SYN (ns-2's Vegas agent sends packet 0 at full
    /// size, so for Vegas it is data).
    fn is_syn(&self, seqno: i64) -> bool {
        seqno == 0 && self.cfg.syn && self.cfg.variant != TcpVariant::Vegas
    }

    /// Size on the wire of packet `seqno`.
    fn packet_bytes(&self, seqno: i64) -> u32 {
        if self.is_syn(seqno) {
            self.cfg.header_bytes
        } else {
            self.cfg.data_packet_bytes()
        }
    }

    /// Sends packet `seqno` (`output`): timing, retransmission count, and the timer.
    pub(super) fn output(&mut self, now: Time, seqno: i64, out: &mut Outbox) {
        let (data, ect) = self.ecn_header(seqno);
        if ect {
            out.send_ecn(self.packet_bytes(seqno), Payload::TcpData(data));
        } else {
            out.send(self.packet_bytes(seqno), Payload::TcpData(data));
        }
        self.stats.packets_sent += 1;
        self.first_sent.get_or_insert(now);
        self.idle_since = None;
        let nothing_outstanding = self.highest_ack == self.maxseq;
        if self.cubic.is_some() || self.cc.is_some() {
            self.note_sent(now, seqno);
        }
        if let Some(rate) = self.rate.as_mut() {
            rate.on_sent(now, seqno, nothing_outstanding);
        }
        if !self.is_syn(seqno) {
            self.data_segs_out += 1;
        }
        if let Some(pacer) = self.pacer.as_mut() {
            if self.data_segs_out >= UNPACED_SEGMENTS {
                pacer.on_sent(now, self.cfg.size_bytes);
            } else {
                pacer.on_sent_unpaced(now);
            }
        }
        if seqno > self.maxseq {
            self.maxseq = seqno;
            if !self.rtt_active {
                self.rtt_active = true;
                if seqno > self.rtt_seq {
                    self.rtt_seq = seqno;
                    self.rtt_ts = now;
                }
            }
        } else {
            self.stats.retransmits += 1;
        }
        if self.cfg.variant == TcpVariant::Vegas {
            self.vegas_on_output(now, seqno);
        }
        let force = nothing_outstanding && self.cfg.variant != TcpVariant::Vegas;
        if self.rtx_at.is_none() || force {
            self.set_rtx_timer(now);
        }
    }

    /// Arms the retransmission timer one RTO from now.
    pub(super) fn set_rtx_timer(&mut self, now: Time) {
        self.rtx_at = Some(now + self.rto.timeout());
    }

    /// `reset_rtx_timer(mild, backoff)`: optionally back off, re-arm, and unless `mild` go
    /// back to the first unacked packet; timing stops (Karn).
    pub(super) fn reset_rtx_timer(&mut self, now: Time, mild: bool, backoff: bool) {
        if backoff {
            self.rto.back_off();
        }
        self.set_rtx_timer(now);
        if !mild {
            self.t_seqno = self.highest_ack + 1;
        }
        self.rtt_active = false;
    }

    /// `newtimer`: re-arm while data is outstanding; when everything sent is acked, stop the
    /// timer (RFC 6298 §5.2) and remember when the sender went idle.
    pub(super) fn newtimer(&mut self, now: Time, ack: i64) {
        if ack < self.maxseq || self.cwnd < 1.0 {
            self.set_rtx_timer(now);
        } else {
            self.rtx_at = None;
            self.idle_since = Some(now);
        }
    }

    /// `newack`: a cumulative ACK for new data: the RTT sample if it covers the timed packet
    /// (which also ends the backoff), and the timer.
    pub(super) fn newack(&mut self, now: Time, ack: i64) {
        let previous = self.highest_ack;
        self.dupacks = 0;
        self.last_ack = ack;
        self.highest_ack = ack;
        if self.t_seqno < ack + 1 {
            self.t_seqno = ack + 1;
        }
        if self.cc.is_some() {
            self.cc_acked(now, previous, ack);
        } else if self.cubic.is_some() {
            self.cubic_rtt_sample(now, ack);
        }
        if self.rtt_active && ack >= self.rtt_seq {
            self.rto.reset_backoff();
            self.rtt_active = false;
            let sample = now.saturating_since(self.rtt_ts);
            self.rto.sample(sample, now);
            self.stats.rtt_samples += 1;
            self.stats.rtt_sum += sample.as_secs_f64();
        }
        self.newtimer(now, ack);
    }

    /// `recv_newack_helper`: `newack`, then open the window (CUBIC: by the packets acked).
    pub(super) fn recv_newack(&mut self, now: Time, ack: i64) {
        let acked = (ack - self.highest_ack).max(0);
        self.recv_newack_delivered(now, ack, acked);
    }

    /// [`TcpSender::recv_newack`] with the window opened by `delivered` packets rather than
    /// by those cumulatively acked (Linux counts the packets the ACK SACKs too,
    /// [`super::TcpConfig::sacked_out_of_flight`]); a controller's `cong_avoid` sees the same
    /// count, its `pkts_acked` the cumulative one, as Linux's `tcp_ack` passes them.
    pub(super) fn recv_newack_delivered(&mut self, now: Time, ack: i64, delivered: i64) {
        self.newack(now, ack);
        let acked = u32::try_from(delivered.max(0)).unwrap_or(u32::MAX);
        if self.cc.is_some() {
            if self.cfg.uses_sacked_out_of_flight() {
                self.cc_sample.acked = acked;
                self.cc_sample.acked_bytes = u64::from(acked) * u64::from(self.cfg.size_bytes);
            }
            self.cc_open(now);
        } else if self.cfg.variant == TcpVariant::Bbr {
            // BBR sets cwnd after the whole ACK is processed (`bbr_main`).
        } else if self.cubic.is_some() {
            self.cubic_open(now, acked);
        } else if self.cfg.ack_counting == AckCounting::Segments {
            self.open_by_segments(acked);
        } else {
            self.opencwnd();
        }
    }

    /// Linux's Reno growth (`tcp_reno_cong_avoid`) by `acked` packets; see
    /// [`open_by_segments_window`].
    fn open_by_segments(&mut self, acked: u32) {
        (self.cwnd, self.cwnd_cnt) =
            open_by_segments_window(&self.cfg, self.cwnd, self.ssthresh, self.cwnd_cnt, acked);
    }

    /// After the SYN is acked, start from the initial window (`delay_growth_`).
    pub(super) fn after_syn_acked(&mut self) {
        if self.last_ack == 0 && self.cfg.syn && self.cfg.delay_growth {
            self.cwnd = self.wnd_init;
        }
    }

    /// `opencwnd` (`windowOption_` 1); see [`opencwnd_window`].
    pub(super) fn opencwnd(&mut self) {
        self.cwnd = opencwnd_window(&self.cfg, self.cwnd, self.ssthresh);
    }

    /// `slowdown` at `now` (see [`slowdown_window`]); with a controller, its
    /// [`ssthresh`](super::controller::CongestionControl::ssthresh) instead.
    pub(super) fn slowdown(&mut self, now: Time, ssthresh_cut: bool, cut: CwndCut) {
        if self.cc.is_some() {
            return self.cc_slowdown(now, ssthresh_cut, cut);
        }
        if self.cubic.is_some() {
            return self.cubic_slowdown(ssthresh_cut, cut);
        }
        (self.cwnd, self.ssthresh) =
            slowdown_window(&self.cfg, &self.reduction_input(), ssthresh_cut, cut);
        self.first_decrease = false;
    }

    /// What [`slowdown_window`] reads from the sender.
    pub(super) fn reduction_input(&self) -> ReductionInput {
        ReductionInput {
            cwnd: self.cwnd,
            ssthresh: self.ssthresh,
            win: self.windowd(),
            first_decrease: self.first_decrease,
            after_timeout: self.last_cwnd_action == CwndAction::Timeout,
        }
    }

    /// `send_much`: send while the window allows and the application has data; with
    /// `overhead`, a non-forced call arms the delayed-send timer instead. `maxburst` 0: no limit.
    pub(super) fn send_much(&mut self, now: Time, force: bool, maxburst: u32, out: &mut Outbox) {
        if self.cfg.variant.uses_sack() {
            self.sack_send_much(now, force, maxburst, out);
            return;
        }
        if !force && self.delsnd_at.is_some() {
            return;
        }
        let mut win = self.window();
        let mut sent = 0;
        while self.t_seqno <= self.highest_ack + win && self.t_seqno < self.curseq {
            if !self.may_send_now(now, force) {
                return;
            }
            self.output(now, self.t_seqno, out);
            self.t_seqno += 1;
            sent += 1;
            win = self.window();
            if maxburst > 0 && sent == maxburst {
                break;
            }
        }
    }

    /// Whether a packet may leave now: not held back by the `overhead` delay (unless
    /// `force`) nor by pacing (which arms its own wake-up).
    pub(super) fn may_send_now(&mut self, now: Time, force: bool) -> bool {
        self.arm_delayed_send(now, force) && self.pacer.as_mut().is_none_or(|p| p.may_send(now))
    }

    /// With `overhead` and not `force`, arms the delayed-send timer (if not armed) and says
    /// "do not send now" (false).
    pub(super) fn arm_delayed_send(&mut self, now: Time, force: bool) -> bool {
        if self.cfg.overhead.is_zero() || force {
            return true;
        }
        if self.delsnd_at.is_none() {
            let delay = uniform(&mut self.rng) * self.cfg.overhead.as_secs_f64();
            self.delsnd_at = Some(now + Duration::from_secs_f64(delay));
        }
        false
    }

    /// `send_one` (limited transmit, RFC 3042): one new packet on the 1st or 2nd dupack if the
    /// receiver window allows and no more than cwnd + dupacks are outstanding.
    pub(super) fn send_one(&mut self, now: Time, out: &mut Outbox) {
        let t = self.t_seqno;
        if t <= self.highest_ack + i64::from(self.cfg.window)
            && t < self.curseq
            && (t as f64) <= self.highest_ack as f64 + self.cwnd + f64::from(self.dupacks)
            && self.pacer.as_mut().is_none_or(|p| p.may_send(now))
        {
            self.output(now, t, out);
            self.t_seqno += 1;
        }
    }

    /// The retransmission timer expired (`TcpAgent::timeout` with the variants' additions).
    fn rtx_timeout(&mut self, now: Time, out: &mut Outbox) {
        self.tlp_reset();
        match self.cfg.variant {
            TcpVariant::Vegas => return self.vegas_timeout(now, out),
            TcpVariant::Sack | TcpVariant::Cubic | TcpVariant::Bbr => self.sack_on_timeout(),
            TcpVariant::Reno | TcpVariant::NewReno => {
                self.dupwnd = 0.0;
                self.dupacks = 0;
                self.recover = self.maxseq;
            }
            TcpVariant::Tahoe => {}
        }
        if self.cwnd < 1.0 {
            self.cwnd = 1.0;
        }
        let outstanding = self.highest_ack != self.maxseq;
        self.recover = self.maxseq;
        if self.highest_ack == -1 && self.wnd_init > 1.0 {
            // The first packet was lost: no larger initial window (bugfix_ss_).
            self.wnd_init = 1.0;
        }
        if outstanding {
            self.stats.timeouts += 1;
            self.last_cwnd_action = CwndAction::Timeout;
            if self.cfg.variant == TcpVariant::Bbr {
                self.bbr_timeout(now);
            } else {
                self.slowdown(now, true, CwndCut::One);
            }
            self.reset_rtx_timer(now, false, true);
        } else if self.cfg.variant == TcpVariant::Bbr {
            self.rtx_at = None;
            self.t_seqno = self.highest_ack + 1;
        } else {
            self.slowdown(now, false, CwndCut::One);
            self.rtx_at = None;
            self.t_seqno = self.highest_ack + 1;
        }
        self.last_cwnd_action = CwndAction::Timeout;
        self.send_much(now, false, 0, out);
    }

    /// The sender went idle (everything acked) and the application restarts: ns-2's
    /// retransmit timer would have fired with nothing outstanding once an RTO had passed,
    /// setting cwnd to 1 (`slow_start_restart_`, `restart_bugfix_`); emulate that once.
    fn restart_after_idle(&mut self, now: Time) {
        if let Some(since) = self.idle_since.take() {
            if now >= since + self.rto.timeout() {
                if self.cfg.variant == TcpVariant::Bbr {
                    return self.bbr_restart_after_idle(now);
                }
                if self.cfg.variant == TcpVariant::Vegas {
                    self.cwnd = 2.0;
                } else {
                    self.slowdown(now, false, CwndCut::One);
                }
                self.last_cwnd_action = CwndAction::Timeout;
            }
        }
    }

    fn handle_ack(&mut self, now: Time, ack: &TcpAck, out: &mut Outbox) {
        self.stats.acks += 1;
        self.ecn.ack_ece = self.cfg.ecn && ack.ece();
        match self.cfg.variant {
            TcpVariant::Tahoe => self.tahoe_recv(now, ack.seqno(), out),
            TcpVariant::Reno => self.reno_recv(now, ack.seqno(), out),
            TcpVariant::NewReno => self.newreno_recv(now, ack.seqno(), out),
            TcpVariant::Sack | TcpVariant::Cubic => self.sack_recv(now, ack, out),
            TcpVariant::Vegas => self.vegas_recv(now, ack.seqno(), out),
            TcpVariant::Bbr => self.bbr_recv(now, ack, out),
        }
        if self.ecn.ack_ece {
            self.ecn_echo(now);
        }
    }
}

impl Agent for TcpSender {
    /// Per bin: `cwnd` and `ssthresh` (packets), `srtt`, `rttvar` and `rto` (seconds, the
    /// smoothed estimates in whole ticks and the timeout that would be armed now), `backoff`
    /// (the RTO multiplier), `flight` (packets sent and not cumulatively acked), and cumulative
    /// counters: `packets_sent` (data packets including retransmissions and the SYN),
    /// `retransmits`, `timeouts` (with data outstanding), `fast_retransmits` (entries into
    /// recovery on duplicate ACKs), `acked` (the highest cumulative ACK, a sequence number),
    /// `rtt_samples` and `rtt_sum` (the unrounded RTT samples' count and sum in seconds: their
    /// differences between two bins give the mean RTT in between). Vegas adds `base_rtt`
    /// (seconds) and `vegas_diff` (packets, the last per-RTT estimate of queued packets).
    /// BBR adds `bbr_mode` (0 STARTUP, 1 DRAIN, 2 PROBE_BW, 3 PROBE_RTT), `bbr_bw` (the
    /// bandwidth estimate, packets/s), `bbr_min_rtt` (seconds), `pacing_rate` (bytes/s),
    /// `pacing_gain`, `cwnd_gain` and `bbr_lt_bw` (1 while the long-term "policer" estimate
    /// stands in for the bandwidth filter, `lt_use_bw`; else 0).
    fn trace_fields(&self) -> &'static [&'static str] {
        match self.cfg.variant {
            TcpVariant::Vegas => &VEGAS_FIELDS,
            TcpVariant::Bbr => &BBR_FIELDS,
            _ => &COMMON_FIELDS,
        }
    }

    fn on_start(&mut self, now: Time, out: &mut Outbox) {
        if self.cc_failed() {
            return;
        }
        self.curseq = self.supply();
        self.restart_after_idle(now);
        self.send_much(now, false, 0, out);
    }

    fn on_stop(&mut self, _now: Time, _out: &mut Outbox) {
        // No new data; what was sent is still delivered reliably.
        self.curseq = self.curseq.min(self.maxseq + 1).max(0);
    }

    fn handle_packet(&mut self, now: Time, packet: &Packet, out: &mut Outbox) {
        if self.cc_failed() {
            return;
        }
        if let Payload::TcpAck(ack) = packet.payload {
            self.handle_ack(now, &ack, out);
        }
    }

    fn poll_timeout(&self) -> Option<Time> {
        if self.cc_failed() {
            return None;
        }
        let pace_at = self.pacer.as_ref().and_then(Pacer::wake_at);
        let pto_at = self.tlp.and_then(|t| t.pto_at);
        [self.rtx_at, self.delsnd_at, pace_at, pto_at]
            .into_iter()
            .flatten()
            .min()
    }

    fn handle_timeout(&mut self, now: Time, out: &mut Outbox) {
        if self.cc_failed() {
            return;
        }
        // The probe timeout is never later than the retransmission timer; when both are due
        // the probe goes first and restarts that timer (Linux has one timer for both).
        if self
            .tlp
            .is_some_and(|t| t.pto_at.is_some_and(|at| at <= now))
        {
            self.tlp_fire(now, out);
        }
        if self.rtx_at.is_some_and(|at| at <= now) {
            self.rtx_at = None;
            self.rtx_timeout(now, out);
        }
        if self.delsnd_at.is_some_and(|at| at <= now) {
            self.delsnd_at = None;
            self.send_much(now, true, 0, out);
        }
        if let Some(pacer) = self.pacer.as_mut() {
            if pacer.wake_at().is_some_and(|at| at <= now) {
                pacer.woken();
                self.send_much(now, false, 0, out);
                self.bbr_check_app_limited();
            }
        }
    }

    fn failure(&self) -> Option<String> {
        self.cc_error.as_ref().map(ToString::to_string)
    }

    fn trace(&self, values: &mut [f64]) {
        let common = [
            self.cwnd,
            self.ssthresh,
            self.rto.srtt_secs(),
            self.rto.rttvar_secs(),
            self.rto.timeout().as_secs_f64(),
            f64::from(self.rto.backoff()),
            (self.maxseq - self.highest_ack) as f64,
            self.stats.packets_sent as f64,
            self.stats.retransmits as f64,
            self.stats.timeouts as f64,
            self.stats.fast_retransmits as f64,
            self.highest_ack as f64,
            self.stats.rtt_samples as f64,
            self.stats.rtt_sum,
        ];
        for (slot, value) in values.iter_mut().zip(common) {
            *slot = value;
        }
        match self.cfg.variant {
            TcpVariant::Vegas => {
                if let [.., base, diff] = values {
                    *base = self.vegas.base_rtt_secs();
                    *diff = self.vegas.last_diff();
                }
            }
            TcpVariant::Bbr => {
                for (slot, value) in values.iter_mut().skip(14).zip(self.bbr_trace()) {
                    *slot = value;
                }
            }
            _ => {}
        }
    }
}

/// `tcp_slow_start`: cwnd grows by the packets acked, up to ssthresh; returns the new cwnd
/// and the packets acked beyond it (which count toward congestion avoidance).
pub(super) fn slow_start_by_segments(cwnd: u32, ssthresh: u32, acked: u32) -> (u32, u32) {
    if cwnd >= ssthresh {
        return (cwnd, acked);
    }
    let grown = cwnd.saturating_add(acked).min(ssthresh);
    (grown, acked - (grown - cwnd))
}

/// `tcp_cong_avoid_ai`: one packet per `w` packets acked, credits kept in `cnt` (Linux's
/// `snd_cwnd_cnt`); returns the new (cwnd, cnt).
pub(super) fn additive_increase(mut cwnd: u32, mut cnt: u32, w: u32, acked: u32) -> (u32, u32) {
    let w = w.max(1);
    // Credits saved at a larger w are applied gently.
    if cnt >= w {
        cnt = 0;
        cwnd += 1;
    }
    cnt += acked;
    if cnt >= w {
        let delta = cnt / w;
        cnt -= delta * w;
        cwnd += delta;
    }
    (cwnd, cnt)
}

/// `opencwnd` (`windowOption_` 1) on (cwnd, ssthresh): +1 in slow start, +increase_num/cwnd
/// in congestion avoidance, per ACK; capped by `max_cwnd` (compared in whole packets, as ns-2).
pub(super) fn opencwnd_window(cfg: &TcpConfig, cwnd: f64, ssthresh: f64) -> f64 {
    let mut cwnd = if cwnd < ssthresh {
        cwnd + 1.0
    } else {
        cwnd + cfg.increase_num / cwnd
    };
    if cfg.max_cwnd > 0 && (cwnd as i64) > i64::from(cfg.max_cwnd) {
        cwnd = f64::from(cfg.max_cwnd);
    }
    cwnd
}

/// Linux's Reno growth (`tcp_reno_cong_avoid`) on (cwnd, ssthresh, `snd_cwnd_cnt`): slow start
/// by the packets acked up to ssthresh, then one packet per cwnd packets acked
/// (`tcp_cong_avoid_ai`), in whole packets; capped by `max_cwnd`. A non-standard
/// `increase_num` (GAIMD's alpha) makes it one packet per cwnd/alpha packets acked: alpha packets
/// per RTT. Returns the new (cwnd, cnt).
pub(super) fn open_by_segments_window(
    cfg: &TcpConfig,
    cwnd: f64,
    ssthresh: f64,
    cnt: u32,
    acked: u32,
) -> (f64, u32) {
    let ssthresh = ssthresh.min(f64::from(u32::MAX)) as u32;
    let whole = cwnd.max(1.0) as u32;
    let (grown, rest) = slow_start_by_segments(whole, ssthresh, acked);
    let (grown, cnt) = if rest == 0 {
        (grown, cnt)
    } else {
        let per_packet = (f64::from(grown) / cfg.increase_num).round();
        let per_packet = per_packet.clamp(1.0, f64::from(u32::MAX)) as u32;
        additive_increase(grown, cnt, per_packet, rest)
    };
    let mut cwnd = f64::from(grown);
    if cfg.max_cwnd > 0 && cwnd > f64::from(cfg.max_cwnd) {
        cwnd = f64::from(cfg.max_cwnd);
    }
    (cwnd, cnt)
}

/// The sender's state a reduction reads.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct ReductionInput {
    pub(super) cwnd: f64,
    pub(super) ssthresh: f64,
    /// `windowd()`: min(cwnd + dupwnd, window); its whole part is `window()` (dupwnd is a
    /// whole number).
    pub(super) win: f64,
    pub(super) first_decrease: bool,
    /// The last congestion response was a timeout.
    pub(super) after_timeout: bool,
}

/// `slowdown`: halve (or multiply by `decrease_num`) ssthresh if `ssthresh_cut`, and cut cwnd
/// as `cut` says, on win = min(cwnd (+dupwnd), window). With [`DecreaseRule::Ns2`], the first
/// decrease, decreases in slow start and ssthresh after a timeout halve; the cwnd cut also halves
/// when `decrease_num` is 0.5. ssthresh is never below 2. Returns the new (cwnd, ssthresh).
pub(super) fn slowdown_window(
    cfg: &TcpConfig,
    input: &ReductionInput,
    ssthresh_cut: bool,
    cut: CwndCut,
) -> (f64, f64) {
    let slowstart = input.cwnd < input.ssthresh;
    let (halfwin, decreasewin) = if cfg.precision_reduce {
        (input.win / 2.0, cfg.decrease_num * input.win)
    } else {
        let win = input.win as i64;
        ((win / 2) as f64, (cfg.decrease_num * win as f64).trunc())
    };
    let quirks = cfg.decrease_rule == DecreaseRule::Ns2;
    let mut ssthresh = input.ssthresh;
    if ssthresh_cut {
        let halve = quirks && (input.first_decrease || slowstart || input.after_timeout);
        ssthresh = if halve { halfwin } else { decreasewin }.trunc();
    }
    let cwnd = match cut {
        CwndCut::Decrease => {
            let halve = (quirks && (input.first_decrease || slowstart)) || cfg.decrease_num == 0.5;
            if halve {
                halfwin
            } else {
                decreasewin
            }
        }
        CwndCut::One => 1.0,
    };
    (cwnd, ssthresh.max(2.0))
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use proptest::prelude::*;

    use super::*;
    use crate::agent::tcp::test_driver::Driver;
    use crate::agent::tcp::{GaimdConfig, GaimdRule, TcpSink};
    use crate::packet::{FlowId, NodeId};
    use crate::rng::stream;

    fn gaimd(rule: GaimdRule) -> Driver {
        let config = GaimdConfig {
            rule,
            base: TcpConfig {
                window: 1000,
                ..TcpConfig::ns2_2000(TcpVariant::Reno)
            },
            ..GaimdConfig::yang2001()
        };
        Driver::new(config.tcp())
    }

    /// Grows the window by acking `n` packets one by one, then sends 3 dupacks.
    fn grow_then_three_dupacks(d: &mut Driver, from: i64, n: i64) -> i64 {
        for a in from..from + n {
            d.ack(a);
        }
        let last = from + n - 1;
        for _ in 0..3 {
            d.ack(last);
        }
        last
    }

    #[test]
    fn gaimd_ns2_rule_halves_first_then_cuts_to_beta() {
        let mut d = gaimd(GaimdRule::Ns2);
        // Slow start to 17, then the first decrease: halved (integer halving in ns2_2000).
        let last = grow_then_three_dupacks(&mut d, 0, 16);
        assert_eq!(d.sender.cwnd(), 8.0);
        assert_eq!(d.sender.ssthresh(), 8.0);
        // Leave recovery and grow in congestion avoidance by alpha/cwnd per ACK.
        d.ack(last + 10);
        assert_eq!(d.sender.cwnd(), 8.0 + 0.31 / 8.0);
        for a in last + 11..last + 200 {
            d.ack(a);
        }
        let before = d.sender.cwnd();
        assert!(before > 10.0, "{before}");
        for _ in 0..3 {
            d.ack(last + 199);
        }
        // Not the first decrease, not slow start: cut to beta·win (whole packets).
        assert_eq!(d.sender.cwnd(), (0.875 * before.trunc()).trunc());
        assert_eq!(d.sender.ssthresh(), d.sender.cwnd());
    }

    #[test]
    fn gaimd_paper_rule_always_cuts_to_beta_and_timeouts_too() {
        let mut d = gaimd(GaimdRule::Paper);
        grow_then_three_dupacks(&mut d, 0, 16);
        assert_eq!(d.sender.cwnd(), (0.875f64 * 17.0).trunc());
        let mut ns2 = gaimd(GaimdRule::Ns2);
        grow_then_three_dupacks(&mut ns2, 0, 16);
        // A timeout: cwnd 1 for both; ssthresh halves with ns-2's rule, beta with the paper's.
        for d in [&mut d, &mut ns2] {
            let at = d.sender.poll_timeout().unwrap();
            d.now = at;
            d.sender.handle_timeout(at, &mut d.out);
            d.sent();
            assert_eq!(d.sender.cwnd(), 1.0);
        }
        assert_eq!(d.sender.ssthresh(), (0.875f64 * 14.0).trunc());
        assert_eq!(ns2.sender.ssthresh(), 4.0);
    }

    #[test]
    fn segment_counting_grows_by_the_increase_per_rtt() {
        // Congestion avoidance from cwnd 20 over 400 packets acked one by one (about 14
        // windows): Reno's one packet per window, GAIMD's alpha = 0.31 of that.
        let grow = |increase: f64| {
            let mut d = Driver::new(TcpConfig {
                increase_num: increase,
                syn: false,
                ..TcpConfig::linux(TcpVariant::Reno)
            });
            d.sender.cwnd = 20.0;
            d.sender.ssthresh = 10.0;
            for a in 0..400 {
                d.ack(a);
            }
            d.sender.cwnd() - 20.0
        };
        let (reno, gaimd) = (grow(1.0), grow(0.31));
        assert!((12.0..=17.0).contains(&reno), "{reno}");
        assert!((gaimd / reno - 0.31).abs() < 0.08, "{gaimd} against {reno}");
    }

    #[test]
    fn tahoe_goes_back_n_and_reno_retransmits_one() {
        let config = TcpConfig {
            window: 1000,
            ..TcpConfig::ns2_2000(TcpVariant::Tahoe)
        };
        let mut tahoe = Driver::new(config);
        for a in 0..8 {
            tahoe.ack(a);
        }
        // cwnd 9: packets up to 16 are out. Three dupacks of 7: cwnd 1, resend 8.
        tahoe.ack(7);
        tahoe.ack(7);
        assert_eq!(tahoe.ack(7), vec![8]);
        assert_eq!(tahoe.sender.cwnd(), 1.0);
        assert_eq!(tahoe.sender.ssthresh(), 4.0);
        // The ACK of 8 slow-starts from packet 9 on again (go-back-N).
        assert_eq!(tahoe.ack(8), vec![9, 10]);
        let mut reno = Driver::new(TcpConfig {
            variant: TcpVariant::Reno,
            ..config
        });
        for a in 0..8 {
            reno.ack(a);
        }
        reno.ack(7);
        reno.ack(7);
        assert_eq!(reno.ack(7), vec![8]);
        assert_eq!(reno.sender.cwnd(), 4.0);
        assert!(reno.sender.in_recovery());
        // Inflation: each further dupack adds one to dupwnd; after 6 more the window is
        // cwnd 4 + dupwnd 9 = 13 beyond the ACK, so packets up to 20 are out.
        let mut new = Vec::new();
        for _ in 0..6 {
            new.extend(reno.ack(7));
        }
        assert_eq!(new, vec![17, 18, 19, 20]);
    }

    #[test]
    fn the_timer_backs_off_and_is_stopped_when_everything_is_acked() {
        let config = TcpConfig {
            max_packets: Some(3),
            ..TcpConfig::ns2_35(TcpVariant::NewReno)
        };
        let mut d = Driver::new(config);
        // SYN first (40 B), then nothing until it is acked.
        let first = d.sender.poll_timeout().unwrap();
        assert_eq!(first, Time::ZERO + Duration::from_secs(3));
        d.now = first;
        d.sender.handle_timeout(first, &mut d.out);
        assert_eq!(d.sent(), vec![0], "the SYN is resent");
        assert_eq!(d.sender.rto().backoff(), 2);
        assert_eq!(
            d.sender.poll_timeout(),
            Some(first + Duration::from_secs(6))
        );
        // The SYN's ACK: a lost first packet leaves the initial window at 1.
        assert_eq!(d.ack(0), vec![1]);
        assert_eq!(d.ack(1), vec![2, 3]);
        d.ack(3);
        assert_eq!(d.sender.poll_timeout(), None, "all acked: the timer stops");
        assert_eq!(d.sender.stats().timeouts, 1);
    }

    /// A sender and a receiver joined by fixed delays; data packets are dropped at random.
    fn transfer(config: TcpConfig, loss: f64, seed: u64) -> (TcpSender, TcpSink) {
        let mut sender = TcpSender::new(&config, stream(seed, "sender"));
        let mut sink = TcpSink::new(&config);
        let mut rng = stream(seed, "network");
        let forward = Duration::from_millis(30);
        let back = Duration::from_millis(20);
        // In flight: (arrival, to the sink?, packet), FIFO per direction (fixed delays).
        let mut to_sink: VecDeque<(Time, Packet)> = VecDeque::new();
        let mut to_sender: VecDeque<(Time, Packet)> = VecDeque::new();
        let mut out = Outbox::default();
        let mut now = Time::ZERO;
        let mut last_ack = -1;
        let window = i64::from(config.window);
        let emit = |sender: &TcpSender,
                    out: &mut Outbox,
                    now: Time,
                    to_sink: &mut VecDeque<(Time, Packet)>,
                    rng: &mut SimRng| {
            for o in out.drain() {
                if let Payload::TcpData(d) = o.payload {
                    // BBR's window, and the window of a sender whose SACKed packets leave
                    // the flight, count packets in flight, not sequence space: they may send
                    // further beyond the cumulative ACK, but not more than cwnd (and a tail
                    // loss probe) in flight.
                    let in_flight_window = sender.cfg.variant == TcpVariant::Bbr
                        || sender.cfg.uses_sacked_out_of_flight();
                    if !sender.in_recovery() && sender.cfg.uses_sacked_out_of_flight() {
                        assert!(
                            sender.packets_in_flight() <= sender.cwnd as i64 + 1,
                            "{} in flight, cwnd {}",
                            sender.packets_in_flight(),
                            sender.cwnd
                        );
                    }
                    if !sender.in_recovery() && !in_flight_window {
                        // Never more than min(cwnd + limited-transmit allowance, window)
                        // beyond the cumulative ACK outside recovery.
                        let allowance = (sender.cwnd as i64 + 2).min(window);
                        assert!(
                            d.seqno <= sender.highest_ack + allowance.max(1) + 1,
                            "sent {} with ack {} cwnd {}",
                            d.seqno,
                            sender.highest_ack,
                            sender.cwnd
                        );
                    }
                    if uniform(rng) >= loss {
                        let p = Packet::new(FlowId(0), 0, o.size_bytes, NodeId(1), now, o.payload);
                        to_sink.push_back((now + forward, p));
                    }
                }
            }
        };
        sender.on_start(now, &mut out);
        emit(&sender, &mut out, now, &mut to_sink, &mut rng);
        let limit = Time::from_secs_f64(20_000.0);
        loop {
            let next = [
                to_sink.front().map(|e| e.0),
                to_sender.front().map(|e| e.0),
                sender.poll_timeout(),
                sink.poll_timeout(),
            ]
            .into_iter()
            .flatten()
            .min();
            let Some(at) = next else { break };
            if at > limit {
                break;
            }
            now = at;
            if to_sink.front().is_some_and(|e| e.0 <= now) {
                let (_, p) = to_sink.pop_front().unwrap();
                sink.handle_packet(now, &p, &mut out);
            } else if to_sender.front().is_some_and(|e| e.0 <= now) {
                let (_, p) = to_sender.pop_front().unwrap();
                if let Payload::TcpAck(a) = p.payload {
                    assert!(a.seqno() >= last_ack, "the cumulative ACK went back");
                    last_ack = a.seqno();
                }
                sender.handle_packet(now, &p, &mut out);
                emit(&sender, &mut out, now, &mut to_sink, &mut rng);
                continue;
            } else if sender.poll_timeout().is_some_and(|t| t <= now) {
                sender.handle_timeout(now, &mut out);
                emit(&sender, &mut out, now, &mut to_sink, &mut rng);
                continue;
            } else {
                sink.handle_timeout(now, &mut out);
            }
            for o in out.drain() {
                let p = Packet::new(FlowId(0), 0, o.size_bytes, NodeId(0), now, o.payload);
                to_sender.push_back((now + back, p));
            }
        }
        (sender, sink)
    }

    fn variant_strategy() -> impl Strategy<Value = TcpConfig> {
        let variants = prop_oneof![
            Just(TcpVariant::Tahoe),
            Just(TcpVariant::Reno),
            Just(TcpVariant::NewReno),
            Just(TcpVariant::Sack),
            Just(TcpVariant::Vegas),
            Just(TcpVariant::Cubic),
            Just(TcpVariant::Bbr),
        ];
        let presets = prop_oneof![Just("ns2_2000"), Just("ns2_35"), Just("rfc"), Just("linux")];
        (variants, presets, 0usize..2, 1u32..60).prop_map(|(v, p, sack, window)| TcpConfig {
            window,
            max_packets: Some(150),
            // BBR runs over RFC 6675 recovery only.
            sack_recovery: if sack == 0 && v != TcpVariant::Bbr {
                super::super::SackRecovery::Sack1
            } else {
                super::super::SackRecovery::Rfc6675
            },
            ..TcpConfig::preset(p, v).unwrap()
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// Under random loss every packet of a finite flow is delivered, in order, exactly
        /// once to the application; the cumulative ACK never goes back; outside recovery the
        /// sender keeps within its windows.
        #[test]
        fn finite_flows_are_delivered_under_random_loss(
            config in variant_strategy(),
            loss in 0.0f64..0.3,
            seed in 0u64..1000,
        ) {
            let (sender, sink) = transfer(config, loss, seed);
            prop_assert_eq!(sink.delivered(), 150);
            prop_assert_eq!(sender.highest_ack(), 150 - 1 + i64::from(config.syn));
            prop_assert_eq!(sender.poll_timeout(), None);
            if loss > 0.05 {
                prop_assert!(sender.stats().retransmits > 0);
            }
        }
    }
}
