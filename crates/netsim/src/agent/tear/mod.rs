//! TEAR, TCP Emulation At Receivers (Rhee, Ozdemir and Yi, NCSU tech. report, April 2000), as
//! yang2001 evaluates it (docs/tear.md; protocols.md §3).
//!
//! The receiver ([`TearSink`]) treats every data packet that arrives as the ACK a TCP sender
//! would have seen, and runs TCP's congestion window on it ([`emulation`]): slow start,
//! congestion avoidance, a halving per loss (the emulated fast recovery) and a timeout. Each
//! loss-to-loss *epoch* is reduced to its mean per-round rate cwnd/RTT; a weighted average of
//! the last 8 epochs (TFRC's weights, newest 1/6 of the total) is the rate X the receiver feeds
//! back. The sender ([`TearSource`]) paces its packets at X, measures the RTT by timestamp echo
//! and stamps its estimate on every data packet for the receiver's use.
//!
//! The report and the authors' ns-2 code are not available: the algorithm here is the
//! reconstruction of protocols.md §3, and every detail it had to assume is a [`TearConfig`]
//! knob (docs/tear.md says which facts are known and from where).

mod emulation;
mod gaps;
mod sink;
mod source;

use std::fmt;
use std::time::Duration;

use tfrc::Time;

pub use emulation::Emulation;
pub use sink::TearSink;
pub use source::TearSource;

/// The presets by name: `yang2001` is the TEAR yang2001 measured (the authors' code with the
/// receiver timeout added); `ncsu` is the authors' code as yang2001 found it, without it.
pub const PRESETS: &[&str] = &["yang2001", "ncsu"];

/// How the receiver cuts the arrivals into rounds (one emulated RTT each; protocols.md §3 step
/// 1, an assumption marked *).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoundRule {
    /// A round starting at sequence number s0 ends when a packet with seq >= s0 + cwnd (cwnd at
    /// the round's start, whole packets, at least 1) arrives: one window of data, as TCP's.
    Window,
    /// A round ends at the first arrival one RTT (the sender's estimate) after it started.
    Rtt,
}

impl RoundRule {
    /// The names scenario files use, in the enum's order.
    pub const NAMES: &'static [&'static str] = &["window", "rtt"];
}

/// When the receiver sends its rate back (protocols.md §3 step 5, an assumption marked *).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FeedbackRule {
    /// Once per RTT while data arrives, plus at once after an emulated timeout.
    PerRtt,
    /// At every round end and every loss or timeout reaction.
    PerRound,
}

impl FeedbackRule {
    /// The names scenario files use, in the enum's order.
    pub const NAMES: &'static [&'static str] = &["per_rtt", "per_round"];
}

/// Whether the open (in-progress) epoch enters the average (protocols.md §3 step 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpenEpochRule {
    /// TFRC's rule (RFC 5348 §5.4, reused by analogy): the larger of the average over the
    /// newest closed epochs and the average over the open epoch plus the newest closed ones.
    /// Gives yang2001's I <= 1/12 packet/RTT per RTT.
    Max,
    /// Closed epochs only: the rate changes only when an epoch closes.
    ClosedOnly,
}

impl OpenEpochRule {
    /// The names scenario files use, in the enum's order.
    pub const NAMES: &'static [&'static str] = &["max", "closed_only"];
}

/// A TEAR flow's parameters. `Default` is the `yang2001` preset; every item protocols.md §3
/// marks as an assumption is a field.
#[derive(Clone, Debug, PartialEq)]
pub struct TearConfig {
    /// The preset the fields started from (`"yang2001"` or `"ncsu"`); names the flow's variant.
    pub preset: &'static str,
    /// Data packet size on the wire in bytes (the papers' 1000 B).
    pub size_bytes: u32,
    /// Feedback packet size on the wire in bytes (40 B, an ns-2 ACK's size).
    pub feedback_size_bytes: u32,
    /// The sender's rate before the first feedback, bits/s (one 1000-byte packet per second, as
    /// RFC 5348 §4.2 starts TFRC). Replaced by `initial_window` packets per RTT at the first RTT
    /// sample if the receiver has no rate yet.
    pub initial_rate_bps: u64,
    /// The emulated cwnd at the start, packets (ns-2 about 2000: `windowInit_` = 1).
    pub initial_window: f64,
    /// Epochs in the weighted history (yang2001: 8); weights as TFRC's loss intervals.
    pub epochs: usize,
    /// How a round is delimited.
    pub round: RoundRule,
    /// Later arrivals that confirm a sequence gap as a loss (TCP's 3 duplicate ACKs).
    pub dupthresh: u32,
    /// The receiver's emulated timeout (yang2001's addition). `false` is the authors' code,
    /// which never slows down when nothing arrives (yang2001 Fig. 17).
    pub timeout: bool,
    /// The emulated RTO in RTTs (protocols.md §3 step 3: 4·RTT).
    pub timeout_rtts: f64,
    /// The floor of the emulated RTO (ns-2.35's `minrto_`, 200 ms).
    pub min_timeout: Duration,
    /// Double the emulated RTO after each timeout without an arrival in between, as TCP does;
    /// capped at 64 s (ns-2 about 2000: `maxrto_`).
    pub timeout_backoff: bool,
    /// When feedback is sent.
    pub feedback: FeedbackRule,
    /// The sender halves its rate when no feedback has come for `nofeedback_rtts` RTTs
    /// (yang2001 §IV suggests it; its runs did not have it).
    pub nofeedback_halving: bool,
    /// RTTs without feedback before the sender halves (the interval is also at least two
    /// packet gaps at the current rate, as RFC 5348 §4.3's).
    pub nofeedback_rtts: u32,
    /// Weight of the old RTT estimate in the sender's EWMA (TFRC's 0.9).
    pub rtt_ewma_q: f64,
    /// Whether the open epoch enters the average.
    pub open_epoch: OpenEpochRule,
}

impl Default for TearConfig {
    fn default() -> TearConfig {
        TearConfig {
            preset: "yang2001",
            size_bytes: 1000,
            feedback_size_bytes: 40,
            initial_rate_bps: 8000,
            initial_window: 1.0,
            epochs: 8,
            round: RoundRule::Window,
            dupthresh: 3,
            timeout: true,
            timeout_rtts: 4.0,
            min_timeout: Duration::from_millis(200),
            timeout_backoff: true,
            feedback: FeedbackRule::PerRtt,
            nofeedback_halving: false,
            nofeedback_rtts: 4,
            rtt_ewma_q: 0.9,
            open_epoch: OpenEpochRule::Max,
        }
    }
}

/// The emulated RTO's cap (ns-2 about 2000: `maxrto_` = 64 s).
pub const MAX_TIMEOUT: Duration = Duration::from_secs(64);

/// The sender never paces slower than one packet per this interval (as RFC 5348's t_mbi).
pub const MAX_SEND_INTERVAL: Duration = Duration::from_secs(64);

/// Why a [`TearConfig`] cannot run; each names the field.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum TearConfigError {
    /// A field is out of its range.
    OutOfRange {
        /// The field's name.
        field: &'static str,
        /// What it must be.
        expected: &'static str,
        /// What it is.
        found: String,
    },
}

impl fmt::Display for TearConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TearConfigError::OutOfRange {
                field,
                expected,
                found,
            } => write!(f, "{field}: expected {expected}, found {found}"),
        }
    }
}

impl std::error::Error for TearConfigError {}

impl TearConfig {
    /// The preset `name` (`"yang2001"` or `"ncsu"`), or `None` for an unknown name.
    pub fn preset(name: &str) -> Option<TearConfig> {
        match name {
            "yang2001" => Some(TearConfig::default()),
            "ncsu" => Some(TearConfig {
                preset: "ncsu",
                timeout: false,
                ..TearConfig::default()
            }),
            _ => None,
        }
    }

    /// Checks every field's range; the agents assume a valid config (the engine checks it when
    /// it builds the flow).
    pub fn validate(&self) -> Result<(), TearConfigError> {
        let out = |field, expected, found: String| {
            Err(TearConfigError::OutOfRange {
                field,
                expected,
                found,
            })
        };
        if self.size_bytes == 0 {
            return out("size_bytes", "at least 1 byte", "0".into());
        }
        if self.feedback_size_bytes == 0 {
            return out("feedback_size_bytes", "at least 1 byte", "0".into());
        }
        if self.initial_rate_bps == 0 {
            return out("initial_rate_bps", "a rate above 0", "0".into());
        }
        if !(self.initial_window >= 1.0 && self.initial_window <= 1e6) {
            let found = self.initial_window.to_string();
            return out("initial_window", "a number from 1 to 1000000", found);
        }
        if !(1..=64).contains(&self.epochs) {
            return out(
                "epochs",
                "a whole number from 1 to 64",
                self.epochs.to_string(),
            );
        }
        if self.dupthresh == 0 {
            return out("dupthresh", "at least 1", "0".into());
        }
        if !(self.timeout_rtts > 0.0 && self.timeout_rtts <= 1e3) {
            let found = self.timeout_rtts.to_string();
            return out("timeout_rtts", "a number in (0, 1000]", found);
        }
        if self.min_timeout > MAX_TIMEOUT {
            return out(
                "min_timeout",
                "a duration of at most 64s",
                format!("{:?}", self.min_timeout),
            );
        }
        if self.nofeedback_rtts == 0 {
            return out("nofeedback_rtts", "at least 1", "0".into());
        }
        if !(0.0..1.0).contains(&self.rtt_ewma_q) {
            let found = self.rtt_ewma_q.to_string();
            return out("rtt_ewma_q", "a number in [0, 1)", found);
        }
        Ok(())
    }
}

/// The header of a TEAR data packet.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TearData {
    /// Sequence number, +1 per data packet from 0.
    pub seq: u64,
    /// When the sender sent it (echoed in feedback for the RTT measurement).
    pub timestamp: Time,
    /// The sender's RTT estimate in ns, 0 before its first sample (the receiver's RTT).
    pub rtt_ns: u64,
}

/// The header of a TEAR feedback packet.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TearFeedback {
    /// The receiver's rate X in bytes per second; 0 while it has none (no RTT known yet).
    pub rate_bytes_per_s: f64,
    /// The timestamp of the latest data packet received.
    pub echo: Time,
    /// Time between that packet's arrival and this feedback's sending, ns.
    pub echo_delay_ns: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_differ_only_in_the_timeout() {
        let ncsu = TearConfig::preset("ncsu").unwrap();
        assert!(!ncsu.timeout);
        assert_eq!(
            TearConfig {
                preset: "yang2001",
                timeout: true,
                ..ncsu
            },
            TearConfig::default()
        );
        assert_eq!(TearConfig::preset("yang2001"), Some(TearConfig::default()));
        assert_eq!(TearConfig::preset("tear"), None);
    }

    #[test]
    fn validation_names_the_field() {
        let bad = [
            (
                TearConfig {
                    epochs: 0,
                    ..TearConfig::default()
                },
                "epochs: expected a whole number from 1 to 64, found 0",
            ),
            (
                TearConfig {
                    rtt_ewma_q: 1.0,
                    ..TearConfig::default()
                },
                "rtt_ewma_q: expected a number in [0, 1), found 1",
            ),
            (
                TearConfig {
                    initial_window: 0.5,
                    ..TearConfig::default()
                },
                "initial_window: expected a number from 1 to 1000000, found 0.5",
            ),
            (
                TearConfig {
                    timeout_rtts: f64::NAN,
                    ..TearConfig::default()
                },
                "timeout_rtts: expected a number in (0, 1000], found NaN",
            ),
        ];
        for (config, text) in bad {
            assert_eq!(config.validate().unwrap_err().to_string(), text);
        }
        assert_eq!(TearConfig::default().validate(), Ok(()));
    }
}
