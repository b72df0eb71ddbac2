//! The TCP family as ns-2's one-way agents (protocols.md §1; docs/tcp.md): Tahoe, Reno,
//! NewReno, SACK (ns-2 `Sack1` semantics, or RFC 6675 as an option) and Vegas, their receivers
//! (immediate or delayed ACKs, SACK blocks), and GAIMD on the Reno machinery (§2).
//!
//! Everything is counted in packets of a fixed size, as in ns-2's `Agent/TCP`: data packet n
//! carries sequence number n, an ACK carries the highest in-order sequence number received, the
//! congestion window is a float and ssthresh a whole number of packets. The layout: [`TcpConfig`]
//! and its presets here; `rto.rs` the retransmission timer estimator; `sender.rs` the machinery
//! every variant shares (sending, window growth and reduction, timers, the trace); `reno.rs` the
//! Tahoe, Reno and NewReno loss recovery; `sack.rs` and `scoreboard.rs` SACK recovery; `vegas.rs`
//! Vegas; `sink.rs` the receivers; `header.rs` the packet headers.

mod bbr;
pub mod controller;
mod cubic;
pub mod delivery_rate;
mod ecn;
mod header;
pub mod pacing;
mod prr;
mod rack;
pub mod rcv_rtt;
pub mod rcv_window;
mod reno;
pub mod rto;
mod sack;
pub mod sack_compress;
pub mod scoreboard;
mod sender;
pub mod sink;
#[cfg(test)]
mod test_driver;
mod tlp;
mod vegas;

use std::time::Duration;

pub use bbr::BbrMode;
pub use cubic::CubicParams;
pub use header::{ConnId, SackBlock, TcpAck, TcpData, MAX_SACK_BLOCKS};
pub use rto::RtoEstimator;
pub use sender::TcpSender;
pub use sink::TcpSink;

/// Which member of the TCP family a sender runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TcpVariant {
    /// `Agent/TCP`: slow start, congestion avoidance, fast retransmit followed by slow start
    /// (protocols.md §1.4).
    Tahoe,
    /// `Agent/TCP/Reno`: fast recovery with window inflation, left on any new ACK (§1.5).
    Reno,
    /// `Agent/TCP/Newreno`: fast recovery until the whole window is acked, one retransmission
    /// per partial ACK (§1.6; RFC 6582).
    NewReno,
    /// SACK: `Agent/TCP/Sack1` or RFC 6675 recovery, per [`TcpConfig::sack_recovery`] (§1.7).
    Sack,
    /// `Agent/TCP/Vegas` (Brakmo and Peterson; §1.8).
    Vegas,
    /// CUBIC (RFC 9438) as Linux's `tcp_cubic.c` grows and reduces the window, HyStart
    /// included, over SACK loss recovery per [`TcpConfig::sack_recovery`] (Linux runs SACK
    /// recovery under every congestion control); docs/tcp.md, "CUBIC".
    Cubic,
    /// BBR v1 as Linux's `tcp_bbr.c` runs it, with sender pacing, over RFC 6675 recovery
    /// (which it requires: `sack_recovery = "rfc6675"`); docs/tcp.md, "BBR".
    Bbr,
}

impl TcpVariant {
    /// Every variant's scenario name, in declaration order.
    pub const NAMES: &'static [&'static str] =
        &["tahoe", "reno", "newreno", "sack", "vegas", "cubic", "bbr"];

    /// The variant's scenario name ("tahoe", "reno", "newreno", "sack", "vegas", "cubic",
    /// "bbr").
    pub fn name(self) -> &'static str {
        match self {
            TcpVariant::Tahoe => "tahoe",
            TcpVariant::Reno => "reno",
            TcpVariant::NewReno => "newreno",
            TcpVariant::Sack => "sack",
            TcpVariant::Vegas => "vegas",
            TcpVariant::Cubic => "cubic",
            TcpVariant::Bbr => "bbr",
        }
    }

    /// Whether the variant recovers with SACK (SACK itself, and CUBIC and BBR over it).
    pub fn uses_sack(self) -> bool {
        matches!(self, TcpVariant::Sack | TcpVariant::Cubic | TcpVariant::Bbr)
    }

    /// The variant named `name` (one of [`TcpVariant::NAMES`]).
    pub fn from_name(name: &str) -> Option<TcpVariant> {
        [
            TcpVariant::Tahoe,
            TcpVariant::Reno,
            TcpVariant::NewReno,
            TcpVariant::Sack,
            TcpVariant::Vegas,
            TcpVariant::Cubic,
            TcpVariant::Bbr,
        ]
        .into_iter()
        .find(|v| v.name() == name)
    }
}

/// When the receiver acknowledges (protocols.md §1.9).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckPolicy {
    /// `Agent/TCPSink`: one ACK per data packet, at once.
    Immediate,
    /// `Agent/TCPSink/DelAck`: an in-order packet is held until the next packet arrives or
    /// `interval` passes (b = 2); out-of-order, hole-filling and SYN packets are acked at once.
    Delayed {
        /// The delayed-ACK timer (`interval_`, 100 ms in ns-2).
        interval: Duration,
    },
}

/// How the sender counts an ACK when it opens the window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckCounting {
    /// ns-2's `opencwnd`: +1 per ACK in slow start, +increase/cwnd per ACK in congestion
    /// avoidance, whatever the ACK covers (so delayed ACKs halve the growth).
    PerAck,
    /// Linux (`tcp_slow_start`, `tcp_cong_avoid_ai`; RFC 3465's byte counting with L = the
    /// window): +1 per packet acked in slow start, +1 per cwnd packets acked in congestion
    /// avoidance, so delayed ACKs do not slow growth.
    Segments,
}

impl AckCounting {
    /// Scenario names.
    pub const NAMES: &'static [&'static str] = &["per_ack", "segments"];
}

/// What RFC 6675 recovery halves for ssthresh on entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SsthreshBase {
    /// RFC 5681 eq. 4: FlightSize, everything sent and not cumulatively acked (SACKed and lost
    /// packets included).
    FlightSize,
    /// Linux (`tcp_reno_ssthresh`): the congestion window, which a burst of losses does not
    /// inflate.
    Cwnd,
}

impl SsthreshBase {
    /// Scenario names.
    pub const NAMES: &'static [&'static str] = &["flight_size", "cwnd"];
}

/// How the RTO floor `min_rto` enters the retransmission timeout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RtoFormula {
    /// RTO = max(SRTT + 4·RTTVAR, min_rto) (RFC 6298 §2.4, ns-2).
    Rfc6298,
    /// RTO = SRTT + max(4·RTTVAR, min_rto) (Linux's `tcp_rtt_estimator` and `__tcp_set_rto`):
    /// the timeout never comes within `min_rto` of the smoothed RTT.
    Linux,
}

impl RtoFormula {
    /// Scenario names.
    pub const NAMES: &'static [&'static str] = &["rfc6298", "linux"];
}

/// How a SACK sender recovers (protocols.md §1.7).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SackRecovery {
    /// ns-2 `Agent/TCP/Sack1`: any hole below a SACKed packet is lost, one retransmission per
    /// hole per recovery, `pipe` decremented per ACK.
    Sack1,
    /// RFC 6675: `IsLost` with DupThresh, `SetPipe` recomputed per ACK, `NextSeg` with the rescue
    /// retransmission, ssthresh = cwnd = max(FlightSize/2, 2).
    Rfc6675,
}

impl SackRecovery {
    /// Scenario names.
    pub const NAMES: &'static [&'static str] = &["sack1", "rfc6675"];
}

/// Which window reductions use `decrease_num` (protocols.md §1.3, §2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecreaseRule {
    /// ns-2's `slowdown()`: the first decrease of the connection, any decrease in slow start and
    /// ssthresh after a timeout halve; other reductions multiply by `decrease_num`. The cwnd cut
    /// also halves whenever `decrease_num` is 0.5.
    Ns2,
    /// Every reduction multiplies by `decrease_num` (yang2001's GAIMD rule, "always cut to
    /// beta"); a timeout still sets cwnd to 1.
    Paper,
}

/// Vegas's thresholds in packets (ns-2 `v_alpha_`, `v_beta_`, `v_gamma_`; Brakmo and Peterson
/// 1995 §3.2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VegasParams {
    /// Below this many extra packets in the network, grow by one packet per RTT (1).
    pub alpha: f64,
    /// Above this many, shrink by one packet per RTT (3).
    pub beta: f64,
    /// Above this many during slow start, leave slow start (1).
    pub gamma: f64,
}

impl Default for VegasParams {
    fn default() -> VegasParams {
        VegasParams {
            alpha: 1.0,
            beta: 3.0,
            gamma: 1.0,
        }
    }
}

/// Every knob of a TCP flow (sender and receiver). Use a preset ([`TcpConfig::ns2_2000`],
/// [`TcpConfig::ns2_35`], [`TcpConfig::rfc`]) and change what differs; the ns-2 names are given
/// per field.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TcpConfig {
    /// The family member.
    pub variant: TcpVariant,
    /// Payload bytes per data packet (`packetSize_`), above 0.
    pub size_bytes: u32,
    /// Receiver window in packets (`window_`): the sender never has more than this many
    /// unacknowledged packets beyond the cumulative ACK; also the initial ssthresh. Above 0.
    pub window: u32,
    /// Initial congestion window in packets (`windowInit_`), above 0.
    pub initial_window: u32,
    /// Model a SYN exchange: packet 0 is a 40-byte SYN (`syn_`).
    pub syn: bool,
    /// With `syn`, cwnd is 1 until the SYN is acked, then `initial_window` (`delay_growth_`).
    pub delay_growth: bool,
    /// RTT measurement granularity (`tcpTick_`), above 0.
    pub tick: Duration,
    /// RTO floor (`minrto_`; zero for none, the 2-tick floor still applies).
    pub min_rto: Duration,
    /// RTO cap (`maxrto_`).
    pub max_rto: Duration,
    /// RTO before the first RTT sample (`rtxcur_init_`).
    pub initial_rto: Duration,
    /// Apply the floor before the backoff (true, RFC 2988/6298) or after it (`rfc2988_`).
    pub rfc2988: bool,
    /// How the floor enters the RTO: RFC 6298's max(SRTT + 4·RTTVAR, `min_rto`), or Linux's
    /// SRTT + max(4·RTTVAR, `min_rto`) (`tcp_rtt_estimator`).
    pub rto_formula: RtoFormula,
    /// Add `header_bytes` of TCP/IP header to every data packet on the wire (`useHeaders_`).
    /// Vegas never does (ns-2's Vegas `output()` has no header accounting).
    pub use_headers: bool,
    /// TCP/IP header size in bytes (`tcpip_base_hdr_size_`): the SYN's size, and what
    /// `use_headers` adds.
    pub header_bytes: u32,
    /// Limited transmit: the 1st and 2nd dupacks each may send a new packet (`singledup_`,
    /// RFC 3042).
    pub limited_transmit: bool,
    /// Halve the window in floating point (true) or in whole packets (`precisionReduce_`).
    pub precision_reduce: bool,
    /// Random send delay: an ACK that would send arms a U(0, overhead) timer instead, and the
    /// window's worth is sent when it fires (`overhead_`, protocols.md §1.11). Zero: off.
    pub overhead: Duration,
    /// Congestion window cap in packets (`maxcwnd_`; 0: none).
    pub max_cwnd: u32,
    /// Congestion-avoidance increase per RTT in packets (`increase_num_`; GAIMD's alpha).
    pub increase_num: f64,
    /// Multiplicative decrease factor (`decrease_num_`; GAIMD's beta), in (0, 1).
    pub decrease_num: f64,
    /// Which reductions halve regardless of `decrease_num`.
    pub decrease_rule: DecreaseRule,
    /// Duplicate ACKs that trigger fast retransmit (`numdupacks_`), at least 1.
    pub numdupacks: u32,
    /// ACK size in bytes (TCPSink `packetSize_`).
    pub ack_bytes: u32,
    /// Bytes each SACK block adds to an ACK (ns-2 `Sacker::append_ack` adds 8).
    pub sack_block_bytes: u32,
    /// The receiver's ACK policy.
    pub ack: AckPolicy,
    /// With delayed ACKs, the first this many data packets are acked at once (Linux's
    /// quick-ACK mode at the start of a connection, `TCP_MAX_QUICKACKS` = 16); 0: none.
    pub quick_acks: u32,
    /// Linux's receive-window growth at the receiver (`tcp_grow_window`, `tcp_rcv_space_adjust`;
    /// [`rcv_window`], docs/tcp.md, "The receive window"): with delayed ACKs, each segment that
    /// grows the offered window is acked at once, which is every segment while the data per
    /// RTT keeps doubling (slow start) and few once it levels off. The window itself does not
    /// limit the sender.
    pub rcv_window_growth: bool,
    /// Linux's SACK compression at the receiver (`__tcp_ack_snd_check` since 4.20;
    /// [`sack_compress`], docs/tcp.md, "SACK compression"): with delayed ACKs, SACK and
    /// out-of-order data held, only the first 3 ACKs for each next expected packet go at once;
    /// later ones wait up to min(1 ms, 5% of the RTT), at most 44 of them. Off: every
    /// out-of-order segment is acked at once (RFC 5681 §4.2).
    pub sack_compression: bool,
    /// How the sender counts ACKs when it grows the window.
    pub ack_counting: AckCounting,
    /// SACK blocks per ACK for the SACK variant (`maxSackBlocks_`), 1 to [`MAX_SACK_BLOCKS`].
    pub max_sack_blocks: u8,
    /// SACK recovery algorithm.
    pub sack_recovery: SackRecovery,
    /// RACK loss detection (RFC 8985 §6.2) beside RFC 6675's: a retransmission lost again is
    /// found without the timer (`net.ipv4.tcp_recovery` bit 1 in Linux). Only with
    /// `sack_recovery = Rfc6675`.
    pub rack: bool,
    /// Tail loss probes (RFC 8985 §7, Linux's `tcp_schedule_loss_probe`): with nothing but
    /// the timer left to find a tail loss, a probe (new data, or the last packet again) is
    /// sent about two RTTs after the last transmission, so the loss is repaired by SACK
    /// recovery rather than a timeout (`net.ipv4.tcp_early_retrans` = 3). Only with
    /// `sack_recovery = Rfc6675`.
    pub tlp: bool,
    /// Linux's accounting of SACKed packets outside recovery (docs/tcp.md, "SACKed packets
    /// outside recovery"): a SACKed packet leaves the flight, so it frees a slot for new data
    /// (`tcp_cwnd_test` against `tcp_packets_in_flight`: packets out less SACKed and lost plus
    /// retransmitted, in every state; this replaces limited transmit), and the ACK that
    /// advances snd_una grows the window by every packet it newly delivers, acked or SACKed
    /// (`tcp_newly_delivered` passed to `tcp_cong_avoid`). Off: new data is sent against
    /// snd_una + cwnd and only cumulatively acked packets grow the window (RFC 5681, RFC 6675).
    /// Only with `sack_recovery = Rfc6675`.
    pub sacked_out_of_flight: bool,
    /// Proportional rate reduction (RFC 6937, Linux's `tcp_cwnd_reduction`): in RFC 6675
    /// recovery the window falls to ssthresh gradually, sending about ssthresh/cwnd packets
    /// per packet delivered, instead of at once. Only with `sack_recovery = Rfc6675`, and not
    /// for BBR (which sets its own window in recovery).
    pub prr: bool,
    /// What RFC 6675 recovery entry halves (times `decrease_num`) for ssthresh and cwnd.
    pub ssthresh_base: SsthreshBase,
    /// Explicit Congestion Notification (RFC 3168; docs/tcp.md, "ECN"): new data packets are
    /// ECN-capable, the receiver echoes a CE mark as ECE until the sender's CWR, and the
    /// sender reduces its window once per window of data on ECE, without retransmitting. Off
    /// in every preset (Linux's `net.ipv4.tcp_ecn = 2` accepts ECN only when the peer asks).
    /// Reno, NewReno, SACK and CUBIC only.
    pub ecn: bool,
    /// NewReno partial window deflation (`partial_window_deflation_`).
    pub partial_window_deflation: bool,
    /// NewReno restarts the retransmit timer on the first partial ACK only
    /// (`newreno_changes1_`, the "impatient" variant of RFC 6582 §4).
    pub newreno_impatient: bool,
    /// Vegas thresholds.
    pub vegas: VegasParams,
    /// CUBIC's parameters (Linux's defaults), used by [`TcpVariant::Cubic`].
    pub cubic: CubicParams,
    /// Stop after this many data packets (ns-2 `maxpkts_`/`advance`); `None`: a greedy FTP.
    pub max_packets: Option<u64>,
}

impl TcpConfig {
    /// The ns-2 defaults of about 2000, which floyd2000, yang2001 and hassan ran with
    /// (protocols.md §0, "about 2000" column; dates in ns-2.35's CHANGES.html): 1000-byte
    /// packets, `window_` 20, `windowInit_` 1, no SYN, `tcpTick_` 0.1 s, no `minrto_` (the
    /// 2-tick floor gives 0.2 s), `maxrto_` 64 s, `rtxcur_init_` 6 s, `rfc2988_` false, no
    /// headers, no limited transmit, integer window halving, immediate ACKs (`Agent/TCPSink`),
    /// 3 SACK blocks with `Sack1` recovery, NewReno without partial window deflation and
    /// restarting the timer on every partial ACK (both changed 2003/5/5).
    pub fn ns2_2000(variant: TcpVariant) -> TcpConfig {
        TcpConfig {
            variant,
            size_bytes: 1000,
            window: 20,
            initial_window: 1,
            syn: false,
            delay_growth: false,
            tick: Duration::from_millis(100),
            min_rto: Duration::ZERO,
            max_rto: Duration::from_secs(64),
            initial_rto: Duration::from_secs(6),
            rfc2988: false,
            rto_formula: RtoFormula::Rfc6298,
            use_headers: false,
            header_bytes: 40,
            limited_transmit: false,
            precision_reduce: false,
            overhead: Duration::ZERO,
            max_cwnd: 0,
            increase_num: 1.0,
            decrease_num: 0.5,
            decrease_rule: DecreaseRule::Ns2,
            numdupacks: 3,
            ack_bytes: 40,
            sack_block_bytes: 8,
            ack: AckPolicy::Immediate,
            quick_acks: 0,
            rcv_window_growth: false,
            sack_compression: false,
            ack_counting: AckCounting::PerAck,
            max_sack_blocks: 3,
            sack_recovery: SackRecovery::Sack1,
            rack: false,
            tlp: false,
            prr: false,
            sacked_out_of_flight: false,
            ssthresh_base: SsthreshBase::FlightSize,
            ecn: false,
            partial_window_deflation: false,
            newreno_impatient: false,
            vegas: VegasParams::default(),
            cubic: CubicParams::default(),
            max_packets: None,
        }
    }

    /// ns-2.35's own defaults (`tcl/lib/ns-default.tcl`; protocols.md §0, "ns-2.35" column):
    /// `window_` 20, `windowInit_` 2, `syn_` and `delay_growth_` on, `tcpTick_` 0.01 s,
    /// `minrto_` 0.2 s, `maxrto_` 60 s, `rtxcur_init_` 3 s, `rfc2988_` on, `useHeaders_` on,
    /// `singledup_` 1, `precisionReduce_` on, NewReno `partial_window_deflation_` 1 and
    /// `newreno_changes1_` 1; immediate ACKs; `Sack1` recovery.
    pub fn ns2_35(variant: TcpVariant) -> TcpConfig {
        TcpConfig {
            initial_window: 2,
            syn: true,
            delay_growth: true,
            tick: Duration::from_millis(10),
            min_rto: Duration::from_millis(200),
            max_rto: Duration::from_secs(60),
            initial_rto: Duration::from_secs(3),
            rfc2988: true,
            use_headers: true,
            limited_transmit: true,
            precision_reduce: true,
            partial_window_deflation: true,
            newreno_impatient: true,
            ..TcpConfig::ns2_2000(variant)
        }
    }

    /// Today's standard TCP on the ns-2 machinery: RFC 6298 timers (minimum and initial RTO
    /// 1 s, cap 60 s, floor before backoff, 1 ms clock granularity), RFC 3390's initial window
    /// in whole packets (4 packets of 1000 B; see [`rfc3390_initial_window`]), a SYN exchange,
    /// delayed ACKs every 2 packets or 100 ms (RFC 5681 §4.2 requires under 500 ms), no window
    /// cap (`window` 1 000 000 packets), limited transmit (RFC 3042), RFC 6675 SACK recovery,
    /// NewReno with partial window deflation and the impatient timer (RFC 6582), headers on.
    pub fn rfc(variant: TcpVariant) -> TcpConfig {
        TcpConfig {
            window: 1_000_000,
            initial_window: rfc3390_initial_window(1000),
            tick: Duration::from_millis(1),
            min_rto: Duration::from_secs(1),
            initial_rto: Duration::from_secs(1),
            ack: AckPolicy::Delayed {
                interval: Duration::from_millis(100),
            },
            sack_recovery: SackRecovery::Rfc6675,
            ..TcpConfig::ns2_35(variant)
        }
    }

    /// What Linux (6.x, these machines' kernel) does by default where it changes results
    /// (docs/tcp.md, "The linux preset"): 1448-byte segments with 52 bytes of TCP/IP header
    /// (timestamps), 1500 bytes on the wire; initial window 10 (RFC 6928, `TCP_INIT_CWND`);
    /// window growth by packets acked (`tcp_slow_start`, `tcp_cong_avoid_ai`); minimum RTO
    /// 200 ms (`TCP_RTO_MIN`) on the variance term (RTO = SRTT + max(4·RTTVAR, 200 ms)),
    /// initial 1 s, cap 120 s (`TCP_RTO_MAX`), 1 ms clock; delayed
    /// ACKs after 40 ms (`TCP_DELACK_MIN`) with the first 16 packets acked at once (quick-ACK
    /// mode), and so is each segment that grows the receive window (`tcp_grow_window`), while
    /// ACKs for out-of-order data are compressed (`__tcp_ack_snd_check`'s SACK compression); SACK
    /// with RFC 6675 recovery, RACK loss detection and tail loss probes (RFC 8985),
    /// proportional rate reduction (RFC 6937), ssthresh from cwnd (`tcp_reno_ssthresh`);
    /// limited transmit; a SYN exchange.
    pub fn linux(variant: TcpVariant) -> TcpConfig {
        TcpConfig {
            size_bytes: 1448,
            header_bytes: 52,
            initial_window: 10,
            max_rto: Duration::from_secs(120),
            min_rto: Duration::from_millis(200),
            ack: AckPolicy::Delayed {
                interval: Duration::from_millis(40),
            },
            quick_acks: 16,
            rcv_window_growth: true,
            sack_compression: true,
            ack_counting: AckCounting::Segments,
            rto_formula: RtoFormula::Linux,
            rack: true,
            tlp: true,
            prr: true,
            sacked_out_of_flight: true,
            ssthresh_base: SsthreshBase::Cwnd,
            ..TcpConfig::rfc(variant)
        }
    }

    /// The preset named `name` (one of [`TcpConfig::PRESETS`]) for `variant`.
    pub fn preset(name: &str, variant: TcpVariant) -> Option<TcpConfig> {
        match name {
            "ns2_2000" => Some(TcpConfig::ns2_2000(variant)),
            "ns2_35" => Some(TcpConfig::ns2_35(variant)),
            "rfc" => Some(TcpConfig::rfc(variant)),
            "linux" => Some(TcpConfig::linux(variant)),
            _ => None,
        }
    }

    /// Preset names.
    pub const PRESETS: &'static [&'static str] = &["ns2_2000", "ns2_35", "rfc", "linux"];

    /// Whether RACK runs: asked for, on a SACK variant with RFC 6675 recovery.
    pub fn uses_rack(&self) -> bool {
        self.rack && self.rfc6675_sack()
    }

    /// Whether tail loss probes run: asked for, on a SACK variant with RFC 6675 recovery.
    pub fn uses_tlp(&self) -> bool {
        self.tlp && self.rfc6675_sack()
    }

    /// Whether SACKed packets leave the flight outside recovery: asked for, on a SACK variant
    /// with RFC 6675 recovery.
    pub fn uses_sacked_out_of_flight(&self) -> bool {
        self.sacked_out_of_flight && self.rfc6675_sack()
    }

    /// Whether proportional rate reduction runs: asked for, on a SACK variant with RFC 6675
    /// recovery other than BBR.
    pub fn uses_prr(&self) -> bool {
        self.prr && self.rfc6675_sack() && self.variant != TcpVariant::Bbr
    }

    /// A SACK variant recovering by RFC 6675.
    fn rfc6675_sack(&self) -> bool {
        self.variant.uses_sack() && self.sack_recovery == SackRecovery::Rfc6675
    }

    /// Size on the wire of a data packet (payload plus header when `use_headers`; Vegas never
    /// adds the header).
    pub fn data_packet_bytes(&self) -> u32 {
        if self.use_headers && self.variant != TcpVariant::Vegas {
            self.size_bytes.saturating_add(self.header_bytes)
        } else {
            self.size_bytes
        }
    }

    /// Checks the ranges documented per field; the error names the field by its scenario key.
    pub fn validate(&self) -> Result<(), TcpConfigError> {
        let fail =
            |field: &'static str, reason: &'static str| Err(TcpConfigError { field, reason });
        if self.size_bytes == 0 {
            return fail("size", "a size above 0");
        }
        if self.window == 0 {
            return fail("window", "at least 1 packet");
        }
        if self.initial_window == 0 {
            return fail("initial_window", "at least 1 packet");
        }
        if self.tick.is_zero() {
            return fail("tick", "a duration above 0");
        }
        if self.max_rto.is_zero() || self.max_rto < self.min_rto {
            return fail("max_rto", "a duration above 0 and at least min_rto");
        }
        if !(self.increase_num > 0.0 && self.increase_num.is_finite()) {
            return fail("increase", "a number above 0");
        }
        if !(self.decrease_num > 0.0 && self.decrease_num < 1.0) {
            return fail("decrease", "a number in (0, 1)");
        }
        if self.numdupacks == 0 {
            return fail("numdupacks", "at least 1");
        }
        if self.max_sack_blocks == 0 || usize::from(self.max_sack_blocks) > MAX_SACK_BLOCKS {
            return fail("max_sack_blocks", "between 1 and 3");
        }
        if let AckPolicy::Delayed { interval } = self.ack {
            if interval.is_zero() {
                return fail("ack_interval", "a duration above 0");
            }
        }
        let v = self.vegas;
        if !(v.alpha >= 0.0 && v.beta.is_finite()) {
            return fail("vegas_alpha", "a number of at least 0");
        }
        if v.beta < v.alpha {
            return fail("vegas_beta", "a number of at least vegas_alpha");
        }
        if v.gamma < 0.0 {
            return fail("vegas_gamma", "a number of at least 0");
        }
        if self.max_packets == Some(0) {
            return fail("max_packets", "at least 1");
        }
        if !(1..=100_000).contains(&self.cubic.hz) {
            return fail("cubic_hz", "a kernel timer frequency from 1 to 100000 Hz");
        }
        if self.ecn
            && matches!(
                self.variant,
                TcpVariant::Tahoe | TcpVariant::Vegas | TcpVariant::Bbr
            )
        {
            return fail(
                "ecn",
                "false with variant \"tahoe\", \"vegas\" or \"bbr\" (ECN is implemented for \
                 reno, newreno, sack and cubic)",
            );
        }
        if self.variant == TcpVariant::Bbr && self.sack_recovery != SackRecovery::Rfc6675 {
            return fail(
                "sack_recovery",
                "\"rfc6675\" with variant \"bbr\" (BBR runs over RFC 6675 recovery, as in Linux)",
            );
        }
        Ok(())
    }
}

impl TcpConfig {
    /// Checks that a sender with this configuration may run a congestion controller (besides
    /// [`TcpConfig::validate`]): its variant names the loss recovery underneath, Tahoe, Reno,
    /// NewReno or SACK (CUBIC, BBR and Vegas are controllers of their own).
    pub fn validate_controlled(&self) -> Result<(), TcpConfigError> {
        self.validate()?;
        if matches!(
            self.variant,
            TcpVariant::Cubic | TcpVariant::Bbr | TcpVariant::Vegas
        ) {
            return Err(TcpConfigError {
                field: "variant",
                reason: "\"tahoe\", \"reno\", \"newreno\" or \"sack\" with a controller (the \
                         variant names the loss recovery the controller runs on)",
            });
        }
        Ok(())
    }
}

/// A [`TcpConfig`] field outside its range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpConfigError {
    /// The field's scenario key ("window", "decrease", ...).
    pub field: &'static str,
    /// What it must be.
    pub reason: &'static str,
}

impl std::fmt::Display for TcpConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: expected {}", self.field, self.reason)
    }
}

impl std::error::Error for TcpConfigError {}

/// RFC 3390's initial window, min(4·MSS, max(2·MSS, 4380 B)), in whole packets of `mss_bytes`
/// (at least 1): 4 packets up to 1095 B, 3 up to 2190 B, then 2.
pub fn rfc3390_initial_window(mss_bytes: u32) -> u32 {
    let mss = u64::from(mss_bytes.max(1));
    let bytes = (4 * mss).min((2 * mss).max(4380));
    (bytes / mss).max(1) as u32
}

/// GAIMD's decrease rule choice (protocols.md §2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GaimdRule {
    /// ns-2's GAIMD (Reno with `increase_num_` = alpha, `decrease_num_` = beta): the first
    /// decrease, decreases in slow start, and ssthresh after timeouts halve ([`DecreaseRule::Ns2`]).
    Ns2,
    /// yang2001's rule: every congestion indication cuts to beta ([`DecreaseRule::Paper`]).
    Paper,
}

impl GaimdRule {
    /// Scenario names.
    pub const NAMES: &'static [&'static str] = &["ns2", "paper"];

    /// The scenario name.
    pub fn name(self) -> &'static str {
        match self {
            GaimdRule::Ns2 => "ns2",
            GaimdRule::Paper => "paper",
        }
    }
}

/// GAIMD(alpha, beta) (Yang and Lam, ICNP 2000) on the loss-recovery machinery of `recovery`
/// (Reno, as yang2001 states, by default) with the other knobs of `base`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GaimdConfig {
    /// Additive increase per RTT in packets (0.31 in yang2001).
    pub alpha: f64,
    /// Multiplicative decrease factor (7/8 in yang2001).
    pub beta: f64,
    /// How the decrease rule treats the first decrease, slow start and timeouts.
    pub rule: GaimdRule,
    /// The TCP whose loss recovery GAIMD runs on: [`TcpVariant::Reno`] (yang2001 §II-B, the
    /// default), [`TcpVariant::NewReno`] or [`TcpVariant::Sack`] ([`GaimdConfig::RECOVERIES`]).
    /// Under random loss Reno times out on a second loss in one window, which is what raises
    /// GAIMD's CoV_time above yang2001's figure (docs/tcp.md, "GAIMD").
    pub recovery: TcpVariant,
    /// Every other TCP knob; its variant is replaced by `recovery`, and its
    /// `increase_num`/`decrease_num`/`decrease_rule` by alpha, beta and the rule.
    pub base: TcpConfig,
}

impl GaimdConfig {
    /// yang2001's GAIMD(0.31, 7/8) with ns-2's rule on the `ns2_2000` preset.
    pub fn yang2001() -> GaimdConfig {
        GaimdConfig {
            alpha: 0.31,
            beta: 0.875,
            rule: GaimdRule::Ns2,
            recovery: TcpVariant::Reno,
            base: TcpConfig::ns2_2000(TcpVariant::Reno),
        }
    }

    /// The variants GAIMD can run on (scenario names of `recovery`): those whose only
    /// difference is how they recover from loss.
    pub const RECOVERIES: &'static [&'static str] = &["reno", "newreno", "sack"];

    /// The TCP configuration the GAIMD sender runs: `recovery` with increase alpha, decrease
    /// beta.
    pub fn tcp(&self) -> TcpConfig {
        TcpConfig {
            variant: self.recovery,
            increase_num: self.alpha,
            decrease_num: self.beta,
            decrease_rule: match self.rule {
                GaimdRule::Ns2 => DecreaseRule::Ns2,
                GaimdRule::Paper => DecreaseRule::Paper,
            },
            ..self.base
        }
    }
}

impl Default for GaimdConfig {
    fn default() -> GaimdConfig {
        GaimdConfig::yang2001()
    }
}

/// The TCP-friendly alpha for a given beta, 4(1-beta²)/3 (Yang and Lam 2000; protocols.md §2):
/// 0.3125 at beta = 7/8, 1 at beta = 1/2.
pub fn friendly_alpha(beta: f64) -> f64 {
    4.0 * (1.0 - beta * beta) / 3.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_follow_the_reference_tables() {
        let old = TcpConfig::ns2_2000(TcpVariant::Reno);
        assert_eq!((old.window, old.initial_window, old.syn), (20, 1, false));
        assert_eq!(old.tick, Duration::from_millis(100));
        assert_eq!(old.initial_rto, Duration::from_secs(6));
        assert_eq!(old.max_rto, Duration::from_secs(64));
        assert!(!old.rfc2988 && !old.use_headers && !old.limited_transmit);
        assert_eq!(old.data_packet_bytes(), 1000);
        let new = TcpConfig::ns2_35(TcpVariant::Reno);
        assert_eq!((new.window, new.initial_window, new.syn), (20, 2, true));
        assert_eq!(new.min_rto, Duration::from_millis(200));
        assert_eq!(new.initial_rto, Duration::from_secs(3));
        assert_eq!(new.data_packet_bytes(), 1040);
        assert!(new.partial_window_deflation && new.newreno_impatient);
        let rfc = TcpConfig::rfc(TcpVariant::Sack);
        assert_eq!(rfc.min_rto, Duration::from_secs(1));
        assert_eq!(rfc.initial_rto, Duration::from_secs(1));
        assert_eq!(rfc.initial_window, 4);
        assert_eq!(rfc.sack_recovery, SackRecovery::Rfc6675);
        assert!(matches!(rfc.ack, AckPolicy::Delayed { .. }));
        let linux = TcpConfig::linux(TcpVariant::Cubic);
        assert_eq!((linux.initial_window, linux.quick_acks), (10, 16));
        assert!(linux.rcv_window_growth && !rfc.rcv_window_growth);
        assert!(linux.sack_compression && !rfc.sack_compression);
        assert!(linux.uses_sacked_out_of_flight() && !rfc.uses_sacked_out_of_flight());
        assert_eq!(linux.data_packet_bytes(), 1500);
        assert_eq!(linux.min_rto, Duration::from_millis(200));
        assert_eq!(linux.ack_counting, AckCounting::Segments);
        assert!(linux.uses_rack() && !rfc.uses_rack());
        assert!(linux.uses_tlp() && linux.uses_prr());
        assert!(!rfc.uses_tlp() && !rfc.uses_prr());
        assert!(
            TcpConfig::linux(TcpVariant::Bbr).uses_tlp()
                && !TcpConfig::linux(TcpVariant::Bbr).uses_prr(),
            "BBR sets its own window in recovery"
        );
        assert!(
            !TcpConfig::linux(TcpVariant::NewReno).uses_rack(),
            "RACK needs SACK"
        );
        for name in TcpConfig::PRESETS {
            let config = TcpConfig::preset(name, TcpVariant::Vegas).unwrap();
            assert!(config.validate().is_ok(), "{name}");
            assert_eq!(
                config.data_packet_bytes(),
                config.size_bytes,
                "Vegas never adds headers"
            );
        }
        assert_eq!(TcpConfig::preset("ns3", TcpVariant::Reno), None);
    }

    #[test]
    fn rfc3390_windows() {
        assert_eq!(rfc3390_initial_window(536), 4);
        assert_eq!(rfc3390_initial_window(1000), 4);
        assert_eq!(rfc3390_initial_window(1460), 3);
        assert_eq!(rfc3390_initial_window(4000), 2);
    }

    #[test]
    fn gaimd_maps_onto_reno_and_the_friendly_alpha() {
        assert!((friendly_alpha(0.875) - 0.3125).abs() < 1e-12);
        assert!((friendly_alpha(0.5) - 1.0).abs() < 1e-12);
        let gaimd = GaimdConfig::yang2001();
        let tcp = gaimd.tcp();
        assert_eq!(tcp.variant, TcpVariant::Reno);
        assert_eq!((tcp.increase_num, tcp.decrease_num), (0.31, 0.875));
        assert_eq!(tcp.decrease_rule, DecreaseRule::Ns2);
        let paper = GaimdConfig {
            rule: GaimdRule::Paper,
            ..gaimd
        };
        assert_eq!(paper.tcp().decrease_rule, DecreaseRule::Paper);
    }

    #[test]
    fn variants_round_trip_their_names_and_validation_names_fields() {
        for name in TcpVariant::NAMES {
            assert_eq!(TcpVariant::from_name(name).unwrap().name(), *name);
        }
        let bad = TcpConfig {
            decrease_num: 1.0,
            ..TcpConfig::rfc(TcpVariant::Reno)
        };
        assert_eq!(bad.validate().unwrap_err().field, "decrease");
    }
}
