//! RAP, the Rate Adaptation Protocol (Rejaie, Handley and Estrin, INFOCOM 1999), as ns-2's
//! `rap/rap.cc` implements it (protocols.md §4; docs/rap.md).
//!
//! A rate-based AIMD: the source sends one packet every inter-packet gap (IPG), shrinks the gap
//! once per smoothed RTT so that the rate grows by one packet per SRTT each SRTT, and doubles it
//! (halves the rate) on a loss, once per cluster of losses. The sink acknowledges every packet
//! and describes its newest sequence hole in each ACK; the source detects losses from those
//! holes (three packets above) and from a timeout checked before every transmission.
//!
//! The layout: [`RapConfig`] and its presets here, with the packet headers; `history.rs` the
//! source's transmission history and both loss detectors; `sender.rs` the source;
//! `receiver.rs` the sink.

mod history;
mod receiver;
mod sender;

use std::fmt;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

pub use receiver::{LastHole, RapSink};
pub use sender::RapSource;

use super::AnyAgent;

/// A RAP data packet's header (ns-2 `hdr_rap` with `RH_DATA`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RapData {
    /// Sequence number, from 1 (ns-2 `seqno_`).
    pub seq: u64,
}

/// A RAP acknowledgement (ns-2 `hdr_rap` with `RH_ACK`): the packet it acknowledges and the
/// receiver's newest hole after that packet arrived ([`LastHole`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RapAck {
    /// The sequence number of the data packet acknowledged.
    pub seq: u64,
    /// The receiver's hole description (`lastRecv`, `lastMiss`, `prevRecv`).
    pub hole: LastHole,
}

/// The RAP presets by name, in the order scenario files list them.
pub const PRESETS: &[&str] = &["ns2", "ns2_exact", "hassan"];

/// A RAP flow's parameters. `Default` is ns-2.35's `Agent/RAP` (`tcl/lib/ns-default.tcl`), with
/// the shared-first-sample bug off.
#[derive(Clone, Debug, PartialEq)]
pub struct RapConfig {
    /// The preset the parameters started from; it names nothing in results (the variant is the
    /// adaptation grain) but is kept for display.
    pub preset: &'static str,
    /// Data packet size on the wire in bytes, nothing added (`packetSize_`, 512).
    pub size_bytes: u32,
    /// ACK size on the wire in bytes (`rap_base_hdr_size_`, 44).
    pub ack_bytes: u32,
    /// The gap before the first ACK (`ipg_`, 2 s).
    pub initial_ipg: Duration,
    /// SRTT before the first RTT sample (`srtt_`, 2 s); FRTT and XRTT start there too.
    pub initial_srtt: Duration,
    /// The loss timeout before the first RTT sample (`timeout_`, 2 s).
    pub initial_timeout: Duration,
    /// Additive increase: IPG ← IPG·SRTT/(alpha·IPG + SRTT) per step (`alpha_`, 1).
    pub alpha: f64,
    /// Multiplicative decrease: IPG ← IPG/beta per backoff (`beta_`, 0.5).
    pub beta: f64,
    /// EWMA gain of SRTT and of the mean deviation (`delta_`, 0.5).
    pub delta: f64,
    /// Timeout = mu·SRTT + phi·deviation (`mu_`, 1.2).
    pub mu: f64,
    /// See `mu` (`phi_`, 4).
    pub phi: f64,
    /// Each gap gets + U(0, overhead) (`overhead_`, 0).
    pub overhead: Duration,
    /// Fine-grain adaptation: the gap used is IPG·FRTT/XRTT (`useFineGrain_`, off).
    pub fine_grain: bool,
    /// EWMA gain of the short-term RTT FRTT (`kfrtt_`, 0.9).
    pub kfrtt: f64,
    /// EWMA gain of the long-term RTT XRTT (`kxrtt_`, 0.01).
    pub kxrtt: f64,
    /// The step increases the rate only if packets sent in the step · IPG/SRTT, in percent,
    /// reached this (`dpthresh_`, 50).
    pub dpthresh_percent: f64,
    /// Reproduce ns-2's shared-first-sample bug: only the first source of the simulation (of
    /// those with this option) to take an RTT sample starts SRTT from it; every other one starts
    /// from `initial_srtt` and converges through `delta` (docs/rap.md). Off by default.
    pub shared_first_sample: bool,
    /// Send at most this many packets, then stop once the last is acknowledged (ns-2
    /// `advanceby`); `None` for a greedy source.
    pub max_packets: Option<u64>,
}

impl Default for RapConfig {
    fn default() -> RapConfig {
        RapConfig {
            preset: "ns2",
            size_bytes: 512,
            ack_bytes: 44,
            initial_ipg: Duration::from_secs(2),
            initial_srtt: Duration::from_secs(2),
            initial_timeout: Duration::from_secs(2),
            alpha: 1.0,
            beta: 0.5,
            delta: 0.5,
            mu: 1.2,
            phi: 4.0,
            overhead: Duration::ZERO,
            fine_grain: false,
            kfrtt: 0.9,
            kxrtt: 0.01,
            dpthresh_percent: 50.0,
            shared_first_sample: false,
            max_packets: None,
        }
    }
}

/// Why a [`RapConfig`] cannot run: the scenario key at fault and the range it must lie in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RapConfigError {
    /// The scenario key of the offending parameter.
    pub field: &'static str,
    /// What it must be.
    pub reason: &'static str,
}

impl fmt::Display for RapConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: expected {}", self.field, self.reason)
    }
}

impl std::error::Error for RapConfigError {}

impl RapConfig {
    /// The parameters of preset `name`: `"ns2"` (ns-2.35's defaults, the bug fixed),
    /// `"ns2_exact"` (the same with `shared_first_sample`, for ns-2's own numbers), `"hassan"`
    /// (ns-2's defaults with hassan's 100-byte packets and 40-byte ACKs, Table 2).
    pub fn preset(name: &str) -> Option<RapConfig> {
        let ns2 = RapConfig::default();
        match name {
            "ns2" => Some(ns2),
            "ns2_exact" => Some(RapConfig {
                preset: "ns2_exact",
                shared_first_sample: true,
                ..ns2
            }),
            "hassan" => Some(RapConfig {
                preset: "hassan",
                size_bytes: 100,
                ack_bytes: 40,
                ..ns2
            }),
            _ => None,
        }
    }

    /// The adaptation grain, the flow's variant in results: `"fine"` or `"coarse"`.
    pub fn grain(&self) -> &'static str {
        if self.fine_grain {
            "fine"
        } else {
            "coarse"
        }
    }

    /// Checks every parameter against the range the protocol can run with; the error names the
    /// scenario key.
    pub fn validate(&self) -> Result<(), RapConfigError> {
        let fail = |field, reason| Err(RapConfigError { field, reason });
        let unit = |x: f64| x > 0.0 && x <= 1.0;
        if self.size_bytes == 0 {
            return fail("size", "at least 1 byte");
        }
        if self.ack_bytes == 0 {
            return fail("ack_size", "at least 1 byte");
        }
        if self.initial_ipg.is_zero() {
            return fail("ipg", "a duration above 0");
        }
        if self.initial_srtt.is_zero() {
            return fail("srtt", "a duration above 0");
        }
        if self.initial_timeout.is_zero() {
            return fail("timeout", "a duration above 0");
        }
        if !(self.alpha > 0.0 && self.alpha.is_finite()) {
            return fail("alpha", "a number above 0");
        }
        if !(self.beta > 0.0 && self.beta < 1.0) {
            return fail("beta", "a number in (0, 1)");
        }
        if !unit(self.delta) {
            return fail("delta", "a number in (0, 1]");
        }
        if !(self.mu > 0.0 && self.mu.is_finite()) {
            return fail("mu", "a number above 0");
        }
        if !(self.phi >= 0.0 && self.phi.is_finite()) {
            return fail("phi", "a number at least 0");
        }
        if !unit(self.kfrtt) {
            return fail("kfrtt", "a number in (0, 1]");
        }
        if !unit(self.kxrtt) {
            return fail("kxrtt", "a number in (0, 1]");
        }
        if !(self.dpthresh_percent >= 0.0 && self.dpthresh_percent.is_finite()) {
            return fail("dpthresh", "a percentage at least 0");
        }
        if self.max_packets == Some(0) {
            return fail("max_packets", "at least 1 packet");
        }
        Ok(())
    }
}

/// Gives every RAP source of one simulation that has `shared_first_sample` on the same
/// first-sample flag, as ns-2's function-level `static` in `UpdateTimeValues` is shared by every
/// agent of the process. The engine calls it once, after it has built every flow; the flag lives
/// as long as those agents, so each run starts afresh, and which source takes the first sample
/// is decided by the simulation's (deterministic) event order.
pub fn share_first_sample<'a>(agents: impl IntoIterator<Item = &'a mut AnyAgent>) {
    let flag = Arc::new(AtomicBool::new(false));
    for agent in agents {
        if let AnyAgent::RapSource(source) = agent {
            source.join_shared_first_sample(&flag);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_ns2s_and_presets_differ_where_documented() {
        let d = RapConfig::default();
        assert_eq!((d.size_bytes, d.ack_bytes), (512, 44));
        assert_eq!(d.initial_ipg, Duration::from_secs(2));
        assert_eq!(
            (d.alpha, d.beta, d.delta, d.mu, d.phi),
            (1.0, 0.5, 0.5, 1.2, 4.0)
        );
        assert_eq!((d.kfrtt, d.kxrtt, d.dpthresh_percent), (0.9, 0.01, 50.0));
        assert!(!d.fine_grain && !d.shared_first_sample);
        assert_eq!(RapConfig::preset("ns2"), Some(d.clone()));
        let exact = RapConfig::preset("ns2_exact").unwrap();
        assert!(exact.shared_first_sample);
        let hassan = RapConfig::preset("hassan").unwrap();
        assert_eq!((hassan.size_bytes, hassan.ack_bytes), (100, 40));
        assert!(!hassan.shared_first_sample);
        assert_eq!(RapConfig::preset("tcp"), None);
        for name in PRESETS {
            assert_eq!(RapConfig::preset(name).unwrap().preset, *name);
        }
    }

    #[test]
    fn validation_names_the_key() {
        assert_eq!(RapConfig::default().validate(), Ok(()));
        let bad = |change: fn(&mut RapConfig)| {
            let mut c = RapConfig::default();
            change(&mut c);
            c.validate().unwrap_err().field
        };
        assert_eq!(bad(|c| c.size_bytes = 0), "size");
        assert_eq!(bad(|c| c.ack_bytes = 0), "ack_size");
        assert_eq!(bad(|c| c.initial_ipg = Duration::ZERO), "ipg");
        assert_eq!(bad(|c| c.initial_srtt = Duration::ZERO), "srtt");
        assert_eq!(bad(|c| c.initial_timeout = Duration::ZERO), "timeout");
        assert_eq!(bad(|c| c.alpha = 0.0), "alpha");
        assert_eq!(bad(|c| c.beta = 1.0), "beta");
        assert_eq!(bad(|c| c.delta = 0.0), "delta");
        assert_eq!(bad(|c| c.mu = f64::NAN), "mu");
        assert_eq!(bad(|c| c.phi = -1.0), "phi");
        assert_eq!(bad(|c| c.kfrtt = 1.5), "kfrtt");
        assert_eq!(bad(|c| c.kxrtt = 0.0), "kxrtt");
        assert_eq!(bad(|c| c.dpthresh_percent = -1.0), "dpthresh");
        assert_eq!(bad(|c| c.max_packets = Some(0)), "max_packets");
        let text = RapConfigError {
            field: "beta",
            reason: "a number in (0, 1)",
        }
        .to_string();
        assert_eq!(text, "beta: expected a number in (0, 1)");
    }

    #[test]
    fn grain_names_the_variant() {
        let mut c = RapConfig::default();
        assert_eq!(c.grain(), "coarse");
        c.fine_grain = true;
        assert_eq!(c.grain(), "fine");
    }
}
