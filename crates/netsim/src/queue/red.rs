//! Random Early Detection as ns-2.35 implements it (`queue/red.cc`, `REDQueue`), with Adaptive
//! RED (Floyd, Gummadi and Shenker 2001, "Adaptive RED", and ns-2's `adaptive_` code). The rules
//! and their sources are collected in docs/queues.md and protocols.md §5.
//!
//! Per arrival (ns-2 `REDQueue::enque`):
//! 1. if the link was idle, m = floor(C·idle time) with C the link rate in mean-size packets per
//!    second, and avg ← avg·(1-w_q)^m;
//! 2. avg ← (1-w_q)·avg + w_q·q, q the queue before this arrival (packets or bytes);
//! 3. Adaptive RED: if now > lastset + interval, move max_p one AIMD step toward the target band;
//! 4. count += 1; if avg ≥ min_th and q > 1: the first such arrival only sets count = 1, later
//!    ones are dropped (or ECN-marked) with the spaced probability p_a; otherwise the "old" flag
//!    is cleared;
//! 5. a packet that does not fit in the buffer is dropped (forced) and count = 0.

use std::time::Duration;

use tfrc::Time;

use super::{Enqueued, Fifo, QueueConfigError, QueueLimit, QueueStats};
use crate::packet::Packet;
use crate::rng::{uniform, SimRng};
use crate::serialization::transmission_time;

/// How RED's EWMA weight w_q is chosen (ns-2 `q_weight_`). C below is the link rate in
/// mean-size packets per second (ns-2 `ptc`, [`RedParams::ptc_pkts_per_sec`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum QueueWeight {
    /// A fixed weight in (0, 1] (ns-2 `q_weight_` > 0; 0.002 in ns-2 before 2004 and in the RED
    /// paper, Floyd and Jacobson 1993 §11).
    Fixed(f64),
    /// ns-2.35's default `q_weight_ = -1`: rtt = max(0.1 s, 3·(link delay + 1/C)) and
    /// w_q = 1 - exp(-1/(10·rtt·C)) (`REDQueue::initialize_params`; protocols.md §5.3).
    AutoRtt,
    /// ns-2 `q_weight_ = 0`: w_q = 1 - exp(-1/C), the Adaptive RED paper's setting (Floyd,
    /// Gummadi and Shenker 2001 §5.1).
    AutoPacketTime,
    /// ns-2 `q_weight_ = -2`: w_q = 1 - exp(-10/C).
    AutoTenPacketTimes,
}

/// Adaptive RED's max_p controller (Floyd, Gummadi and Shenker 2001 Fig. 5; ns-2.35
/// `REDQueue::updateMaxP`). `Default` is the paper's values.
///
/// At an arrival at time `now > lastset + interval` (checked per arrival, not on a timer, as in
/// ns-2; `lastset` moves only when max_p changes), with part = 0.4·(max_th - min_th):
/// - avg < min_th + part and max_p > bottom: max_p ← β·max_p;
/// - avg > max_th - part and max_p < top: max_p ← max_p + min(α, max_p/4).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdaptiveRedConfig {
    /// How often max_p may change (ns-2 `interval_`, 0.5 s).
    pub interval: Duration,
    /// The additive step's cap α; the step is min(α, max_p/4) (ns-2 `alpha_`, 0.01).
    pub alpha_max: f64,
    /// The multiplicative decrease factor β in (0, 1) (ns-2 `beta_`, 0.9).
    pub beta: f64,
    /// max_p is increased only while below this (ns-2 `top_`, 0.5).
    pub top_max_p: f64,
    /// max_p is decreased only while above this. `None` is ns-2's automatic `bottom_ = 0`:
    /// min(0.01, 80000 / link rate in b/s). The paper's value is 0.01.
    pub bottom_max_p: Option<f64>,
    /// ns-2.35 quirk: the gentle region's line (from max_p at max_th to 1 at 2·max_th) is fixed at
    /// reset from the *initial* max_p and never follows the adapted max_p (protocols.md §5.5).
    /// `false` (the paper) recomputes it from the current max_p.
    pub frozen_gentle_slope: bool,
}

impl Default for AdaptiveRedConfig {
    /// The paper's controller: interval 0.5 s, α 0.01, β 0.9, max_p in [0.01, 0.5], gentle line
    /// following max_p.
    fn default() -> AdaptiveRedConfig {
        AdaptiveRedConfig {
            interval: Duration::from_millis(500),
            alpha_max: 0.01,
            beta: 0.9,
            top_max_p: 0.5,
            bottom_max_p: Some(0.01),
            frozen_gentle_slope: false,
        }
    }
}

impl AdaptiveRedConfig {
    /// ns-2.35's controller as `Queue/RED set adaptive_ 1` gives it: the paper's steps with the
    /// automatic bottom min(0.01, 80000/bw) and the frozen gentle line.
    pub fn ns2_35() -> AdaptiveRedConfig {
        AdaptiveRedConfig {
            bottom_max_p: None,
            frozen_gentle_slope: true,
            ..AdaptiveRedConfig::default()
        }
    }
}

/// RED's parameters, ns-2 names in brackets. Thresholds are in mean-size packets (ns-2
/// `thresh_`, `maxthresh_`); with `queue_in_bytes` they are scaled by `mean_packet_size_bytes`
/// into bytes, as ns-2 does. `Default` is [`RedConfig::ns2_35`], ns-2.35's defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct RedConfig {
    /// The physical buffer; an arrival that does not fit is a forced drop. ns-2's
    /// `limit_` = N is `Packets(N)`, or `Bytes(N·mean_packet_size_bytes)` with `queue_in_bytes`
    /// ([`RedConfig::with_ns2_limit`]).
    pub buffer: QueueLimit,
    /// The "average packet" in bytes used for the byte-mode scaling, the byte thresholds and the
    /// link's packet time constant C (`mean_pktsize_`, 500).
    pub mean_packet_size_bytes: u32,
    /// Measure the queue (q, avg, thresholds) in bytes instead of packets (`queue_in_bytes_`).
    pub queue_in_bytes: bool,
    /// Byte mode: scale the drop probability by size/mean_packet_size and count spacing in
    /// mean-size packets (`bytes_`).
    pub byte_mode: bool,
    /// min_th in mean-size packets; `None` is automatic, max(5, target_delay·C/2) (`thresh_` = 0).
    pub min_th_pkts: Option<f64>,
    /// max_th in mean-size packets; `None` is 3·min_th (`maxthresh_` = 0).
    pub max_th_pkts: Option<f64>,
    /// The target queueing delay of the automatic min_th (`targetdelay_`, 5 ms).
    pub target_delay: Duration,
    /// The EWMA weight w_q (`q_weight_`).
    pub queue_weight: QueueWeight,
    /// The drop probability at max_th, in (0, 1]; Adaptive RED's starting value (1/`linterm_`,
    /// 0.1).
    pub max_p: f64,
    /// Gentle RED: p rises from max_p to 1 between max_th and 2·max_th instead of jumping to 1
    /// (`gentle_`).
    pub gentle: bool,
    /// Uniform inter-drop gaps on [1/p_b, 2/p_b] (`wait_` true) instead of the RED paper's
    /// [1, 1/p_b] (`wait_` false).
    pub wait: bool,
    /// ECN: mark ECN-capable packets instead of dropping them early (`setbit_`).
    pub ecn: bool,
    /// Mark only while p_b ≤ `mark_p`, and let p reach 1 instead of forcing drops above the
    /// dropping range (`use_mark_p_`; false reproduces pre-2.35 behaviour).
    pub use_mark_p: bool,
    /// The largest p_b at which ECN-capable packets are still marked (`mark_p_`, 0.1).
    pub mark_p: f64,
    /// Adaptive RED's controller; `None` keeps max_p fixed (`adaptive_` 0).
    pub adaptive: Option<AdaptiveRedConfig>,
}

impl Default for RedConfig {
    /// ns-2.35's defaults, [`RedConfig::ns2_35`].
    fn default() -> RedConfig {
        RedConfig::ns2_35()
    }
}

impl RedConfig {
    /// ns-2.35's `Queue/RED` defaults (`tcl/lib/ns-default.tcl`; protocols.md §0): byte mode and
    /// a byte queue with a 500-byte mean packet, automatic thresholds (5 ms target delay) and
    /// `q_weight_ = -1`, max_p 0.1, gentle, `wait_`, no ECN, `use_mark_p_` with `mark_p_` 0.1, and
    /// `limit_` 50, i.e. a 25 000-byte buffer (the units pitfall of protocols.md §5.4).
    pub fn ns2_35() -> RedConfig {
        RedConfig {
            buffer: QueueLimit::Bytes(50 * 500),
            mean_packet_size_bytes: 500,
            queue_in_bytes: true,
            byte_mode: true,
            min_th_pkts: None,
            max_th_pkts: None,
            target_delay: Duration::from_millis(5),
            queue_weight: QueueWeight::AutoRtt,
            max_p: 0.1,
            gentle: true,
            wait: true,
            ecn: false,
            use_mark_p: true,
            mark_p: 0.1,
            adaptive: None,
        }
    }

    /// The defaults of ns-2 as the 2000-era papers ran it (protocols.md §0; ns-2.35's
    /// `test-suite-red.tcl` restores them): packet mode and a packet queue, min_th 5, max_th 15,
    /// w_q 0.002, max_p 0.1, not gentle, `wait_`, no ECN, no `use_mark_p_` (forced drops when
    /// avg ≥ max_th), mean packet 500 bytes, a 50-packet buffer.
    pub fn ns2_2000() -> RedConfig {
        RedConfig {
            buffer: QueueLimit::Packets(50),
            mean_packet_size_bytes: 500,
            queue_in_bytes: false,
            byte_mode: false,
            min_th_pkts: Some(5.0),
            max_th_pkts: Some(15.0),
            target_delay: Duration::from_millis(5),
            queue_weight: QueueWeight::Fixed(0.002),
            max_p: 0.1,
            gentle: false,
            wait: true,
            ecn: false,
            use_mark_p: false,
            mark_p: 0.1,
            adaptive: None,
        }
    }

    /// Adaptive RED as the paper configures it (Floyd, Gummadi and Shenker 2001 §5;
    /// protocols.md §5.5): w_q = 1 - exp(-1/C), min_th = max(5, 5 ms·C/2), max_th = 3·min_th,
    /// gentle, max_p starting at 0.1 and adapted within [0.01, 0.5] every 0.5 s. Packet mode and
    /// a packet queue, mean packet 500 bytes (set it to the data packet size for C to count real
    /// packets), a 50-packet buffer.
    pub fn adaptive() -> RedConfig {
        RedConfig {
            buffer: QueueLimit::Packets(50),
            mean_packet_size_bytes: 500,
            queue_in_bytes: false,
            byte_mode: false,
            min_th_pkts: None,
            max_th_pkts: None,
            target_delay: Duration::from_millis(5),
            queue_weight: QueueWeight::AutoPacketTime,
            max_p: 0.1,
            gentle: true,
            wait: true,
            ecn: false,
            use_mark_p: true,
            mark_p: 0.1,
            adaptive: Some(AdaptiveRedConfig::default()),
        }
    }

    /// This configuration with the buffer ns-2 gives `limit_ = limit_pkts`: that many packets, or
    /// `limit_pkts·mean_packet_size_bytes` bytes with `queue_in_bytes` (ns-2.35 `red.cc`).
    pub fn with_ns2_limit(mut self, limit_pkts: u32) -> RedConfig {
        self.buffer = if self.queue_in_bytes {
            QueueLimit::Bytes(u64::from(limit_pkts) * u64::from(self.mean_packet_size_bytes))
        } else {
            QueueLimit::Packets(limit_pkts)
        };
        self
    }

    /// This configuration with another mean packet size (and, if the buffer is in bytes, the same
    /// buffer in mean-size packets: `Bytes(n·old)` becomes `Bytes(n·new)`, rounded down).
    pub fn with_mean_packet_size(mut self, size_bytes: u32) -> RedConfig {
        if let QueueLimit::Bytes(b) = self.buffer {
            if self.mean_packet_size_bytes > 0 {
                let pkts = b / u64::from(self.mean_packet_size_bytes);
                self.buffer = QueueLimit::Bytes(pkts * u64::from(size_bytes));
            }
        }
        self.mean_packet_size_bytes = size_bytes;
        self
    }

    /// Checks the parameters that do not depend on the link.
    pub fn validate(&self) -> Result<(), QueueConfigError> {
        if self.mean_packet_size_bytes == 0 {
            return Err(QueueConfigError::ZeroMeanPacketSize);
        }
        check(
            "max_p",
            self.max_p,
            self.max_p > 0.0 && self.max_p <= 1.0,
            "in (0, 1]",
        )?;
        check(
            "mark_p",
            self.mark_p,
            (0.0..=1.0).contains(&self.mark_p),
            "in [0, 1]",
        )?;
        if let QueueWeight::Fixed(w) = self.queue_weight {
            check("queue_weight", w, w > 0.0 && w <= 1.0, "in (0, 1]")?;
        }
        if let Some(min) = self.min_th_pkts {
            check(
                "min_th_pkts",
                min,
                min.is_finite() && min >= 0.0,
                "finite and >= 0",
            )?;
        }
        if let Some(max) = self.max_th_pkts {
            check(
                "max_th_pkts",
                max,
                max.is_finite() && max > 0.0,
                "finite and > 0",
            )?;
        }
        if let Some(a) = &self.adaptive {
            let interval = a.interval.as_secs_f64();
            check("interval", interval, interval > 0.0, "> 0 s")?;
            check(
                "alpha_max",
                a.alpha_max,
                a.alpha_max.is_finite() && a.alpha_max > 0.0,
                "finite and > 0",
            )?;
            check("beta", a.beta, a.beta > 0.0 && a.beta < 1.0, "in (0, 1)")?;
            check(
                "top_max_p",
                a.top_max_p,
                a.top_max_p > 0.0 && a.top_max_p <= 1.0,
                "in (0, 1]",
            )?;
            if let Some(bottom) = a.bottom_max_p {
                check(
                    "bottom_max_p",
                    bottom,
                    bottom >= 0.0 && bottom < a.top_max_p,
                    "in [0, top_max_p)",
                )?;
            }
        }
        Ok(())
    }

    /// The parameters RED runs with on a link of `link_rate_bps` and propagation delay
    /// `link_delay`, automatic ones computed as ns-2.35 `REDQueue::initialize_params` and
    /// `reset` do (protocols.md §5.3), or why the configuration is invalid.
    pub fn resolve(
        &self,
        link_rate_bps: u64,
        link_delay: Duration,
    ) -> Result<RedParams, QueueConfigError> {
        self.validate()?;
        if link_rate_bps == 0 {
            return Err(QueueConfigError::ZeroLinkRate);
        }
        let rate = link_rate_bps as f64;
        let mean = f64::from(self.mean_packet_size_bytes);
        let ptc = rate / (8.0 * mean);
        // 1 - exp(-x), computed without cancellation for small x.
        let one_minus_exp = |x: f64| -(-x).exp_m1();
        let w_q = match self.queue_weight {
            QueueWeight::Fixed(w) => w,
            QueueWeight::AutoPacketTime => one_minus_exp(1.0 / ptc),
            QueueWeight::AutoTenPacketTimes => one_minus_exp(10.0 / ptc),
            QueueWeight::AutoRtt => {
                let rtt = (3.0 * (link_delay.as_secs_f64() + 1.0 / ptc)).max(0.1);
                one_minus_exp(1.0 / (10.0 * rtt * ptc))
            }
        };
        let min_th_pkts = self
            .min_th_pkts
            .unwrap_or_else(|| (self.target_delay.as_secs_f64() * ptc / 2.0).max(5.0));
        let max_th_pkts = self.max_th_pkts.unwrap_or(3.0 * min_th_pkts);
        if !(min_th_pkts >= 0.0 && max_th_pkts > min_th_pkts) {
            return Err(QueueConfigError::Thresholds {
                min_th_pkts,
                max_th_pkts,
            });
        }
        let scale = if self.queue_in_bytes { mean } else { 1.0 };
        let bottom_max_p = match self.adaptive {
            Some(a) => a.bottom_max_p.unwrap_or((80_000.0 / rate).min(0.01)),
            None => 0.0,
        };
        Ok(RedParams {
            ptc_pkts_per_sec: ptc,
            w_q,
            min_th_pkts,
            max_th_pkts,
            min_th: min_th_pkts * scale,
            max_th: max_th_pkts * scale,
            bottom_max_p,
        })
    }
}

fn check(
    field: &'static str,
    value: f64,
    ok: bool,
    rule: &'static str,
) -> Result<(), QueueConfigError> {
    if ok {
        Ok(())
    } else {
        Err(QueueConfigError::OutOfRange { field, value, rule })
    }
}

/// The parameters a RED queue runs with once the automatic ones are computed for its link
/// ([`RedConfig::resolve`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedParams {
    /// C: the link rate in mean-size packets per second, rate/(8·mean_packet_size) (ns-2 `ptc`).
    pub ptc_pkts_per_sec: f64,
    /// The EWMA weight w_q.
    pub w_q: f64,
    /// min_th in mean-size packets.
    pub min_th_pkts: f64,
    /// max_th in mean-size packets.
    pub max_th_pkts: f64,
    /// min_th in the queue's units (packets, or bytes with `queue_in_bytes`).
    pub min_th: f64,
    /// max_th in the queue's units (packets, or bytes with `queue_in_bytes`).
    pub max_th: f64,
    /// Adaptive RED's lower bound on max_p (0 when not adaptive).
    pub bottom_max_p: f64,
}

/// A RED queue's state (ns-2 `REDQueue`'s `edv_` plus the idle bookkeeping).
#[derive(Clone, Debug)]
pub struct Red {
    config: RedConfig,
    params: RedParams,
    link_rate_bps: u64,
    fifo: Fifo,
    stats: QueueStats,
    /// The average queue, in the queue's units (ns-2 `v_ave`).
    avg: f64,
    /// Arrivals since the last early drop or mark (ns-2 `count`).
    count: u64,
    /// Bytes of those arrivals (ns-2 `count_bytes`).
    count_bytes: u64,
    /// Whether avg was already at or above min_th with a non-trivial queue at the previous
    /// arrival (ns-2 `old`).
    old: bool,
    /// The current max_p (ns-2 `cur_max_p`).
    max_p: f64,
    /// When Adaptive RED last changed max_p (ns-2 `lastset`).
    last_set: Time,
    /// When the link went idle, if it is idle (ns-2 `idle_` and `idletime_`).
    idle_since: Option<Time>,
    /// The size of the last packet whose transmission time a dequeue needed, and that time:
    /// a bottleneck's packets mostly share one size, so the queue emptying (a third of its
    /// dequeues on fig09) rarely pays for a 128-bit division.
    last_transmission: (u32, Duration),
}

impl Red {
    /// An empty RED queue on a link of `link_rate_bps` and propagation delay `link_delay`.
    pub fn new(
        config: &RedConfig,
        link_rate_bps: u64,
        link_delay: Duration,
    ) -> Result<Red, QueueConfigError> {
        let params = config.resolve(link_rate_bps, link_delay)?;
        Ok(Red {
            config: config.clone(),
            params,
            link_rate_bps,
            fifo: Fifo::for_limit(config.buffer),
            stats: QueueStats::default(),
            avg: 0.0,
            count: 0,
            count_bytes: 0,
            old: false,
            max_p: config.max_p,
            last_set: Time::ZERO,
            // ns-2 `reset`: idle since the start.
            idle_since: Some(Time::ZERO),
            last_transmission: (0, transmission_time(0, link_rate_bps)),
        })
    }

    /// Offers a packet arriving at `now` (ns-2 `REDQueue::enque`).
    pub fn enqueue(&mut self, now: Time, mut packet: Packet, rng: &mut SimRng) -> Enqueued {
        self.stats.arrivals += 1;
        let size = u64::from(packet.size_bytes);

        // Idle-time decay: pretend m mean-size packets went by with an empty queue.
        let m = match self.idle_since.take() {
            Some(since) => {
                let idle_secs = now.saturating_since(since).as_secs_f64();
                // Truncation as ns-2's int(); `as` saturates.
                (self.params.ptc_pkts_per_sec * idle_secs) as u64
            }
            None => 0,
        };
        let q = self.measured_queue();
        self.avg = estimate(self.avg, q, m, self.params.w_q);
        self.adapt_max_p(now);

        self.count += 1;
        self.count_bytes += size;

        let mut forced = false;
        let mut early_drop = false;
        let mut mark = false;
        if self.avg >= self.params.min_th && q > 1.0 {
            let top = if self.config.gentle {
                2.0 * self.params.max_th
            } else {
                self.params.max_th
            };
            if !self.config.use_mark_p && self.avg >= top {
                forced = true;
            } else if !self.old {
                // avg just crossed min_th (or the queue just became non-trivial): start counting.
                self.count = 1;
                self.count_bytes = size;
                self.old = true;
            } else {
                let p_b = self.base_drop_probability(self.avg);
                let p_a = self.spaced_probability(p_b, size);
                // u in [0, 1): P(u < p_a) = p_a exactly; no draw when the outcome is certain.
                let hit = p_a >= 1.0 || (p_a > 0.0 && uniform(rng) < p_a);
                if hit {
                    self.count = 0;
                    self.count_bytes = 0;
                    if self.config.ecn
                        && packet.ecn_capable
                        && (!self.config.use_mark_p || p_b <= self.config.mark_p)
                    {
                        mark = true;
                    } else {
                        early_drop = true;
                    }
                }
            }
        } else {
            self.old = false;
        }
        if !self.config.buffer.fits(&self.fifo, &packet) {
            forced = true;
        }

        if forced {
            self.count = 0;
            self.count_bytes = 0;
            self.stats.forced_drops += 1;
            Enqueued::Dropped(packet)
        } else if early_drop {
            self.stats.early_drops += 1;
            Enqueued::Dropped(packet)
        } else if mark {
            packet.ecn_ce = true;
            self.stats.marks += 1;
            self.fifo.push(packet);
            Enqueued::Marked
        } else {
            self.fifo.push(packet);
            Enqueued::Accepted
        }
    }

    /// Takes the packet at the head, if any, when the link's transmitter becomes free at `now`
    /// (ns-2 `REDQueue::deque`). If this empties the queue, the link goes idle when that packet's
    /// transmission ends; a dequeue that finds the queue empty marks the link idle from `now` (or
    /// from the earlier computed instant).
    pub fn dequeue(&mut self, now: Time) -> Option<Packet> {
        match self.fifo.pop() {
            Some(packet) => {
                self.stats.departures += 1;
                self.idle_since = if self.fifo.is_empty() {
                    Some(now + self.transmission_of(packet.size_bytes))
                } else {
                    None
                };
                Some(packet)
            }
            None => {
                self.idle_since = Some(self.idle_since.map_or(now, |t| t.min(now)));
                None
            }
        }
    }

    /// Packets waiting.
    pub fn len_packets(&self) -> usize {
        self.fifo.len()
    }

    /// Bytes waiting.
    pub fn len_bytes(&self) -> u64 {
        self.fifo.bytes()
    }

    /// The average queue avg (ns-2 `ave_`), in packets, or bytes with `queue_in_bytes`.
    pub fn average_queue(&self) -> f64 {
        self.avg
    }

    /// The current max_p (ns-2 `cur_max_p_`).
    pub fn max_p(&self) -> f64 {
        self.max_p
    }

    /// The configuration this queue was built from.
    pub fn config(&self) -> &RedConfig {
        &self.config
    }

    /// The parameters in force (automatic ones computed for the link).
    pub fn params(&self) -> &RedParams {
        &self.params
    }

    /// Counters since construction.
    pub fn stats(&self) -> QueueStats {
        self.stats
    }

    /// The base drop probability p_b at average queue `avg` (queue units) with the current max_p,
    /// before count spacing and byte scaling (ns-2 `calculate_p_new`; protocols.md §5.2):
    /// 0 below min_th; max_p·(avg - min_th)/(max_th - min_th) up to max_th; then 1, or with
    /// gentle max_p + (1 - max_p)·(avg - max_th)/max_th up to 2·max_th and 1 above.
    pub fn base_drop_probability(&self, avg: f64) -> f64 {
        let RedParams { min_th, max_th, .. } = self.params;
        if avg < min_th {
            return 0.0;
        }
        let p = if avg >= max_th {
            if self.config.gentle {
                // ns-2 precomputes this line at reset (v_c, v_d) from the max_p of that moment.
                let frozen = self.config.adaptive.is_some_and(|a| a.frozen_gentle_slope);
                let max_p = if frozen {
                    self.config.max_p
                } else {
                    self.max_p
                };
                let v_c = (1.0 - max_p) / max_th;
                let v_d = 2.0 * max_p - 1.0;
                v_c * avg + v_d
            } else {
                1.0
            }
        } else {
            let th_diff = max_th - min_th;
            let v_a = 1.0 / th_diff;
            let v_b = -min_th / th_diff;
            (v_a * avg + v_b) * self.max_p
        };
        p.min(1.0)
    }

    /// The probability p_a of dropping the arriving packet of `size_bytes` given p_b and the
    /// count since the last drop (ns-2 `modify_p`; protocols.md §5.2).
    fn spaced_probability(&self, p_b: f64, size_bytes: u64) -> f64 {
        let mean = u64::from(self.config.mean_packet_size_bytes);
        let c = if self.config.byte_mode {
            (self.count_bytes / mean) as f64
        } else {
            self.count as f64
        };
        let mut p = if self.config.wait {
            if c * p_b < 1.0 {
                0.0
            } else if c * p_b < 2.0 {
                p_b / (2.0 - c * p_b)
            } else {
                1.0
            }
        } else if c * p_b < 1.0 {
            p_b / (1.0 - c * p_b)
        } else {
            1.0
        };
        if self.config.byte_mode && p < 1.0 {
            p = p * size_bytes as f64 / mean as f64;
        }
        p.min(1.0)
    }

    /// Adaptive RED's AIMD step, at most once per interval (ns-2 `updateMaxP`, called from the
    /// estimator with the new average).
    fn adapt_max_p(&mut self, now: Time) {
        let Some(a) = self.config.adaptive else {
            return;
        };
        if now <= self.last_set + a.interval {
            return;
        }
        let RedParams {
            min_th,
            max_th,
            bottom_max_p,
            ..
        } = self.params;
        let part = 0.4 * (max_th - min_th);
        if self.avg < min_th + part && self.max_p > bottom_max_p {
            self.max_p *= a.beta;
            self.last_set = now;
        } else if self.avg > max_th - part && a.top_max_p > self.max_p {
            self.max_p += a.alpha_max.min(0.25 * self.max_p);
            self.last_set = now;
        }
    }

    /// q as RED measures it: packets, or bytes with `queue_in_bytes`.
    fn measured_queue(&self) -> f64 {
        if self.config.queue_in_bytes {
            self.fifo.bytes() as f64
        } else {
            self.fifo.len() as f64
        }
    }

    /// How long the link takes to send `size_bytes` ([`transmission_time`]: rounded up to the
    /// nanosecond), remembered for the last size asked.
    #[inline]
    fn transmission_of(&mut self, size_bytes: u32) -> Duration {
        if self.last_transmission.0 != size_bytes {
            self.remember_transmission(size_bytes);
        }
        self.last_transmission.1
    }

    /// Computes and remembers the transmission time of a new size (out of line: rare).
    #[cold]
    #[inline(never)]
    fn remember_transmission(&mut self, size_bytes: u32) {
        self.last_transmission = (
            size_bytes,
            transmission_time(size_bytes, self.link_rate_bps),
        );
    }
}

/// The EWMA with idle decay (ns-2 `REDQueue::estimator`): avg·(1-w)^m, then (1-w)·avg + w·q.
fn estimate(avg: f64, q: f64, m: u64, w: f64) -> f64 {
    let mut new = avg * powi_u64(1.0 - w, m);
    new *= 1.0 - w;
    new += w * q;
    new
}

/// base^exp by repeated squaring: plain IEEE multiplications, the same on every platform (libm's
/// `pow` is not guaranteed to be), O(log exp) for the long idle periods ns-2 loops over.
fn powi_u64(base: f64, mut exp: u64) -> f64 {
    let mut result = 1.0;
    let mut b = base;
    while exp > 0 {
        if exp & 1 == 1 {
            result *= b;
        }
        exp >>= 1;
        if exp > 0 {
            b *= b;
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::test_packet;
    use crate::rng::stream;

    fn packet(seq: u64, size_bytes: u32, ecn_capable: bool) -> Packet {
        let mut packet = test_packet(seq, size_bytes);
        packet.ecn_capable = ecn_capable;
        packet
    }

    /// Puts `n` ECN-capable 500-byte packets in the queue directly and marks the average as
    /// initialised, so the next arrival sees a queue of `n` (with w_q = 1, avg = n).
    fn fill(q: &mut Red, n: u64) {
        for seq in 0..n {
            q.fifo.push(packet(seq, 500, true));
        }
        q.old = true;
    }

    fn red(config: RedConfig) -> Red {
        Red::new(&config, 10_000_000, Duration::ZERO).unwrap()
    }

    #[test]
    fn powi_matches_repeated_multiplication() {
        let base = 1.0 - 0.002;
        let mut slow = 1.0;
        for m in 0..300u64 {
            let fast = powi_u64(base, m);
            assert!((fast - slow).abs() <= 1e-13 * slow, "m = {m}");
            slow *= base;
        }
        assert_eq!(powi_u64(0.5, 0), 1.0);
        assert_eq!(powi_u64(0.999, u64::MAX), 0.0);
    }

    #[test]
    fn estimator_decays_then_averages() {
        let got = estimate(10.0, 4.0, 3, 0.5);
        assert_eq!(got, 10.0 * 0.125 * 0.5 + 0.5 * 4.0);
    }

    #[test]
    fn spacing_rules_follow_modify_p() {
        let mut q = red(RedConfig::ns2_2000());
        let p_b = 0.05;
        for (count, want) in [
            (1, 0.0),
            (19, 0.0),
            (20, 0.05),
            (30, 0.1),
            (38, 0.5),
            (39, 1.0),
            (40, 1.0),
        ] {
            q.count = count;
            let got = q.spaced_probability(p_b, 1000);
            assert!((got - want).abs() < 1e-12, "count {count}: {got} vs {want}");
        }
        q.config.wait = false;
        for (count, want) in [(0, 0.05), (10, 0.1), (19, 1.0), (20, 1.0)] {
            q.count = count;
            let got = q.spaced_probability(p_b, 1000);
            assert!((got - want).abs() < 1e-12, "count {count}: {got} vs {want}");
        }
        // Byte mode: c = count_bytes / mean (integer division), then p·size/mean.
        q.config.wait = true;
        q.config.byte_mode = true;
        q.count_bytes = 10_999; // c = 21 with mean 500
        let want = p_b / (2.0 - 21.0 * p_b) * 1000.0 / 500.0;
        assert!((q.spaced_probability(p_b, 1000) - want).abs() < 1e-12);
        q.count_bytes = 9_999; // c = 19: no drop
        assert_eq!(q.spaced_probability(p_b, 1000), 0.0);
    }

    #[test]
    fn base_probability_linear_gentle_and_cliff() {
        let q = red(RedConfig::ns2_2000());
        assert_eq!(q.base_drop_probability(4.99), 0.0);
        assert!((q.base_drop_probability(10.0) - 0.05).abs() < 1e-12);
        assert_eq!(q.base_drop_probability(15.0), 1.0);
        let gentle = red(RedConfig {
            gentle: true,
            ..RedConfig::ns2_2000()
        });
        assert!((gentle.base_drop_probability(15.0) - 0.1).abs() < 1e-12);
        assert!((gentle.base_drop_probability(22.5) - 0.55).abs() < 1e-12);
        assert!((gentle.base_drop_probability(30.0) - 1.0).abs() < 1e-12);
        assert_eq!(gentle.base_drop_probability(45.0), 1.0);
    }

    #[test]
    fn frozen_gentle_line_ignores_the_adapted_max_p() {
        let mut config = RedConfig::adaptive();
        config.min_th_pkts = Some(5.0);
        let mut frozen = red(RedConfig {
            adaptive: Some(AdaptiveRedConfig::ns2_35()),
            ..config.clone()
        });
        let mut following = red(config);
        frozen.max_p = 0.3;
        following.max_p = 0.3;
        // At max_th the ns-2 line still starts from the initial 0.1.
        assert!((frozen.base_drop_probability(15.0) - 0.1).abs() < 1e-12);
        assert!((following.base_drop_probability(15.0) - 0.3).abs() < 1e-12);
        assert!((frozen.base_drop_probability(14.999_999) - 0.3).abs() < 1e-6);
    }

    #[test]
    fn first_arrival_above_min_th_only_starts_the_count() {
        let mut rng = stream(3, "red");
        let mut q = red(RedConfig {
            queue_weight: QueueWeight::Fixed(1.0),
            max_p: 1.0,
            ..RedConfig::ns2_2000()
        });
        // With w_q = 1, avg is the queue seen on arrival: 0, 1, ..., 5.
        let mut now = Time::ZERO;
        for seq in 0..6 {
            assert_eq!(
                q.enqueue(now, packet(seq, 500, false), &mut rng),
                Enqueued::Accepted
            );
            now += Duration::from_micros(1);
        }
        assert_eq!(q.count, 1, "the crossing arrival set count = 1");
        assert!(q.old);
        // Now q = 6, avg = 6: p_b = 0.1 (max_p 1), count 2: 2·0.1 < 1, no drop yet.
        assert_eq!(
            q.enqueue(now, packet(6, 500, false), &mut rng),
            Enqueued::Accepted
        );
        assert_eq!(q.count, 2);
    }

    #[test]
    fn forced_drop_above_max_th_without_use_mark_p() {
        let mut rng = stream(4, "red");
        let mut q = red(RedConfig {
            queue_weight: QueueWeight::Fixed(1.0),
            ..RedConfig::ns2_2000()
        });
        fill(&mut q, 15);
        q.config.ecn = true;
        // avg = 15 = max_th, not gentle, use_mark_p false: forced, even for ECN-capable packets.
        assert!(matches!(
            q.enqueue(Time::ZERO, packet(99, 500, true), &mut rng),
            Enqueued::Dropped(_)
        ));
        assert_eq!(q.stats.forced_drops, 1);
        assert_eq!(q.count, 0);
    }

    #[test]
    fn ecn_marks_only_while_p_b_at_most_mark_p() {
        let mut rng = stream(5, "red");
        let config = RedConfig {
            queue_weight: QueueWeight::Fixed(1.0),
            ecn: true,
            use_mark_p: true,
            gentle: true,
            ..RedConfig::ns2_2000()
        };
        // avg = 14: p_b = 0.09 ≤ 0.1, count forced high so p_a = 1.
        let mut q = red(config.clone());
        fill(&mut q, 14);
        q.count = 100;
        assert_eq!(
            q.enqueue(Time::ZERO, packet(14, 500, true), &mut rng),
            Enqueued::Marked
        );
        assert!(q.fifo.packets.back().unwrap().ecn_ce);
        assert_eq!(q.count, 0);
        q.count = 100;
        assert!(matches!(
            q.enqueue(Time::ZERO, packet(15, 500, false), &mut rng),
            Enqueued::Dropped(_)
        ));
        assert_eq!((q.stats.marks, q.stats.early_drops), (1, 1));
        // avg = 20 in the gentle region: p_b = 0.4 > mark_p, so ECN-capable packets are dropped.
        let mut q = red(config);
        fill(&mut q, 20);
        q.count = 100;
        assert!(matches!(
            q.enqueue(Time::ZERO, packet(20, 500, true), &mut rng),
            Enqueued::Dropped(_)
        ));
        assert_eq!((q.stats.marks, q.stats.early_drops), (0, 1));
    }

    #[test]
    fn full_buffer_forces_a_drop_and_resets_count() {
        let mut rng = stream(6, "red");
        let mut q = red(RedConfig {
            buffer: QueueLimit::Packets(3),
            ..RedConfig::ns2_2000()
        });
        for seq in 0..3 {
            assert_eq!(
                q.enqueue(Time::ZERO, packet(seq, 500, false), &mut rng),
                Enqueued::Accepted
            );
        }
        assert!(matches!(
            q.enqueue(Time::ZERO, packet(3, 500, false), &mut rng),
            Enqueued::Dropped(_)
        ));
        assert_eq!(q.count, 0);
        assert_eq!(q.stats.forced_drops, 1);
        assert_eq!(q.len_packets(), 3);
    }

    #[test]
    fn idle_starts_when_the_last_transmission_ends() {
        let mut rng = stream(7, "red");
        let mut q = red(RedConfig::ns2_2000()); // 10 Mb/s: 500 B take 400 us
        q.enqueue(Time::ZERO, packet(0, 500, false), &mut rng);
        q.enqueue(Time::ZERO, packet(1, 500, false), &mut rng);
        q.dequeue(Time::ZERO);
        assert_eq!(q.idle_since, None);
        q.dequeue(Time::from_nanos(400_000));
        assert_eq!(q.idle_since, Some(Time::from_nanos(800_000)));
        // The link finding the queue empty earlier (it never should) moves the instant back.
        q.dequeue(Time::from_nanos(700_000));
        assert_eq!(q.idle_since, Some(Time::from_nanos(700_000)));
        // An arrival while the last packet is still on the wire sees no idle period.
        q.idle_since = Some(Time::from_nanos(800_000));
        let before = q.avg;
        q.enqueue(Time::from_nanos(750_000), packet(2, 500, false), &mut rng);
        let w = q.params.w_q;
        assert_eq!(q.avg, before * (1.0 - w));
        assert_eq!(q.idle_since, None);
    }

    #[test]
    fn presets_have_the_documented_values() {
        let c = RedConfig::ns2_35();
        assert_eq!(c, RedConfig::default());
        assert_eq!(c.buffer, QueueLimit::Bytes(25_000));
        assert!(c.queue_in_bytes && c.byte_mode && c.gentle && c.wait && c.use_mark_p);
        assert_eq!(c.queue_weight, QueueWeight::AutoRtt);
        assert_eq!((c.min_th_pkts, c.max_th_pkts), (None, None));
        let c = RedConfig::ns2_2000();
        assert_eq!(c.queue_weight, QueueWeight::Fixed(0.002));
        assert_eq!((c.min_th_pkts, c.max_th_pkts), (Some(5.0), Some(15.0)));
        assert!(!c.gentle && !c.use_mark_p && !c.byte_mode && !c.queue_in_bytes);
        let c = RedConfig::adaptive();
        assert_eq!(c.queue_weight, QueueWeight::AutoPacketTime);
        assert_eq!(c.adaptive, Some(AdaptiveRedConfig::default()));
        assert_eq!(
            RedConfig::ns2_35().with_ns2_limit(100).buffer,
            QueueLimit::Bytes(50_000)
        );
        assert_eq!(
            RedConfig::ns2_35().with_mean_packet_size(1000).buffer,
            QueueLimit::Bytes(50_000)
        );
        assert_eq!(
            RedConfig::ns2_2000().with_ns2_limit(100).buffer,
            QueueLimit::Packets(100)
        );
    }

    #[test]
    fn validation_names_the_field() {
        let bad = |c: RedConfig| c.resolve(1_000_000, Duration::ZERO).unwrap_err();
        assert_eq!(
            bad(RedConfig {
                mean_packet_size_bytes: 0,
                ..RedConfig::ns2_35()
            }),
            QueueConfigError::ZeroMeanPacketSize
        );
        assert!(matches!(
            bad(RedConfig {
                queue_weight: QueueWeight::Fixed(f64::NAN),
                ..RedConfig::ns2_35()
            }),
            QueueConfigError::OutOfRange {
                field: "queue_weight",
                ..
            }
        ));
        assert!(matches!(
            bad(RedConfig {
                min_th_pkts: Some(10.0),
                max_th_pkts: Some(10.0),
                ..RedConfig::ns2_35()
            }),
            QueueConfigError::Thresholds { .. }
        ));
        let mut c = RedConfig::adaptive();
        c.adaptive = Some(AdaptiveRedConfig {
            beta: 1.0,
            ..AdaptiveRedConfig::default()
        });
        assert!(matches!(
            bad(c),
            QueueConfigError::OutOfRange { field: "beta", .. }
        ));
        assert!(RedConfig::adaptive().validate().is_ok());
        assert!(!bad(RedConfig {
            max_p: 2.0,
            ..RedConfig::ns2_35()
        })
        .to_string()
        .is_empty());
    }
}
