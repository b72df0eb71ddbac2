//! Configuration shared by the sender and the receiver: RFC 5348 by default, and the
//! `floyd2000` preset that reproduces ns-2.35's `Agent/TFRC`/`Agent/TFRCSink` defaults, which
//! produced the papers' simulations. Every difference between the two is a named option, so a
//! preset is only a set of values.

use std::fmt;
use std::time::Duration;

use crate::equation::{EquationShape, RtoPolicy};

/// The allowed rate before the first RTT sample (RFC 5348 §4.2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RateBeforeFeedback {
    /// One packet per second, s bytes/s (RFC 5348 §4.2).
    OnePacketPerSecond,
    /// A fixed rate in bytes per second (ns-2 `InitRate_` = 300).
    BytesPerSecond(f64),
}

/// The initial window that sets the rate at the first feedback, W_init/R (RFC 5348 §4.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InitialWindow {
    /// RFC 3390 in bytes: min(4s, max(2s, 4380)).
    Rfc3390Bytes,
    /// ns-2's packet count: 4 packets if s <= 1095, 3 if s < 2190, else 2 (`rfc3390()`).
    Ns2Packets,
}

/// What the sender does with X_calc when p > 0 (RFC 5348 §4.3 step 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CongestionAvoidance {
    /// X = max(min(X_calc, recv_limit), s/t_mbi): jump straight to the equation's rate.
    JumpToCalculated,
    /// ns-2's `increase_rate`/`decrease_rate`: below X_calc, rise by (s/R)*min(elapsed/R, 2)
    /// per report, capped by X_calc and max(2 X_recv, s/R); above X_calc, drop to it.
    Ns2AdditiveIncrease,
}

/// What the sender does when the nofeedback timer expires (RFC 5348 §4.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NofeedbackResponse {
    /// RFC 5348 §4.4: halve through the X_recv_set limits, never below s/t_mbi.
    Rfc5348,
    /// ns-2's `reduce_rate_on_no_feedback`: halve X itself; an idle sender is only clamped to
    /// the initial rate.
    HalveRate,
}

/// How the average loss interval is formed while fewer than n intervals are known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShortHistory {
    /// RFC 5348 §5.4: I_tot0 over I_0..I_{k-1}, I_tot1 over I_1..I_k.
    Rfc5348,
    /// ns-2 `est_loss_WALI`: the open-interval average runs over I_0..I_k.
    Ns2,
}

/// The rate the synthesized first loss interval is derived from (RFC 5348 §6.3.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FirstIntervalRate {
    /// The maximum X_recv seen so far (RFC 5348 §6.3.1), at least 0.5/R packets/s.
    MaxReceiveRate,
    /// The receive rate measured when the loss is detected (ns-2 `adjust_history`).
    CurrentReceiveRate,
}

/// What X_recv_set remembers while the sender is data-limited (RFC 5348 §4.3 step 4, §8.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataLimitedRule {
    /// RFC 5348 §4.3 step 4: Maximize_X_recv_set() keeps the largest receive rate of the
    /// data-limited period for as long as the period lasts, so the sender keeps the rate it
    /// once validated.
    KeepLargest,
    /// RFC 3448 §4.3: a data-limited interval's reports are treated like any other; entries
    /// older than two RTTs expire, so X stays within twice what the receiver got over the last
    /// two RTTs. One inflated sample (a start-up backlog drained at twice the application's
    /// rate, a batch of datagrams read at once after a host stall) is forgotten two RTTs later
    /// instead of being kept for the whole session (docs/tfrc.md, "Real-host rules").
    RecentOnly,
}

/// Every TFRC parameter, for both ends. `Default` is RFC 5348; [`TfrcConfig::floyd2000`] is the
/// paper-era ns-2 behaviour.
#[derive(Clone, Debug, PartialEq)]
pub struct TfrcConfig {
    /// Segment size s in bytes, used in the equation and for pacing (papers: 1000).
    pub segment_size_bytes: u32,
    /// b and the 3*sqrt(3bp/8) cap of the equation.
    pub equation: EquationShape,
    /// How t_RTO is chosen for the equation.
    pub rto_policy: RtoPolicy,
    /// Scale applied to the equation's output (Rhee & Xu 2005 Fig. 5 use 2 and 4).
    pub rate_scale: f64,

    /// The rate before the first feedback.
    pub rate_before_feedback: RateBeforeFeedback,
    /// The initial window for the rate at the first feedback.
    pub initial_window: InitialWindow,
    /// EWMA weight q of the old RTT estimate (RFC 5348 §4.3: 0.9; ns-2 `df_`: 0.95).
    pub rtt_ewma_q: f64,
    /// The nofeedback timeout before any feedback (RFC 5348 §4.2: 2 s).
    pub initial_nofeedback: Duration,
    /// The nofeedback interval is max(k*R, 2s/X) with this k (RFC 5348: 4; ns-2: 2).
    pub nofeedback_rtts: u32,
    /// A sanity bound on X in bytes/s, whatever the feedback says (hostile or broken feedback
    /// must not make a sender emit an unbounded burst). Default 1.25e11 (1 Tb/s).
    pub max_rate_bytes_per_s: f64,
    /// The response to an expired nofeedback timer.
    pub nofeedback_response: NofeedbackResponse,
    /// What the sender does with X_calc once a loss has been seen.
    pub congestion_avoidance: CongestionAvoidance,
    /// t_mbi: the rate never falls below s/t_mbi (RFC 5348: 64 s); `None` for no floor (ns-2).
    pub max_backoff_interval: Option<Duration>,
    /// What X_recv_set keeps while the sender is data-limited.
    pub data_limited: DataLimitedRule,
    /// Space packets by X_inst = X * R_sqmean / sqrt(R_sample) (RFC 5348 §4.5; Floyd 2000 §3.4).
    pub oscillation_prevention: bool,
    /// EWMA weight q2 of the old sqrt(R) mean (RFC 5348 §4.5: 0.9; ns-2: 0.95).
    pub sqrt_rtt_ewma_q: f64,
    /// t_gran, the caller's timer granularity: packets may go up to min(t_ipi, t_gran, R)/2
    /// early (RFC 5348 §4.6). Zero gives exact pacing, as in a simulator.
    pub scheduling_granularity: Duration,
    /// Each inter-packet gap is multiplied by 1 + dither*(2U - 1), U uniform in [0, 1) drawn from
    /// the RNG the caller hands in (ns-2 `overhead_`). Zero turns it off.
    pub dither_fraction: f64,

    /// Packets with higher sequence numbers needed before a hole counts as lost (RFC 5348 §5.1:
    /// NDUPACK = 3; ns-2: 1).
    pub ndupack: u32,
    /// n, the number of loss intervals averaged (RFC 5348: 8; Rhee & Xu also use 16).
    pub loss_intervals: usize,
    /// History discounting (RFC 5348 §5.5) with this THRESHOLD (0.25 in RFC 5348; 0.5 in RFC
    /// 3448, ns-2 and the paper), or `None` for none.
    pub discount_threshold: Option<f64>,
    /// The averaging rule while the history is short.
    pub short_history: ShortHistory,
    /// ns-2.35's `PreciseLoss_` round check (`TfrcSinkAgent::new_loss`): a loss starts a new
    /// loss event only if, besides lying more than one RTT after the current event's start, the
    /// data packet that revealed it carries a newer sender round ([`Sender::round`]) than
    /// the packet that revealed the current event. The sender's round advances on each report
    /// and each nofeedback expiry, so below one packet per RTT the check merges losses the RTT
    /// rule alone would count apart. Off in both presets (ns-2.35 has it on; docs/tfrc.md,
    /// "Deviations from ns-2 that remain"). Packets without a round (the wire format carries
    /// none) skip the check.
    ///
    /// [`Sender::round`]: crate::Sender::round
    pub loss_event_round_check: bool,
    /// The rate the first loss interval is synthesized from.
    pub first_interval: FirstIntervalRate,
}

impl Default for TfrcConfig {
    /// RFC 5348.
    fn default() -> Self {
        TfrcConfig {
            segment_size_bytes: 1000,
            equation: EquationShape::default(),
            rto_policy: RtoPolicy::FourR,
            rate_scale: 1.0,
            rate_before_feedback: RateBeforeFeedback::OnePacketPerSecond,
            initial_window: InitialWindow::Rfc3390Bytes,
            rtt_ewma_q: 0.9,
            initial_nofeedback: Duration::from_secs(2),
            nofeedback_rtts: 4,
            max_rate_bytes_per_s: 1.25e11,
            nofeedback_response: NofeedbackResponse::Rfc5348,
            congestion_avoidance: CongestionAvoidance::JumpToCalculated,
            max_backoff_interval: Some(Duration::from_secs(64)),
            data_limited: DataLimitedRule::KeepLargest,
            oscillation_prevention: true,
            sqrt_rtt_ewma_q: 0.9,
            scheduling_granularity: Duration::ZERO,
            dither_fraction: 0.0,
            ndupack: 3,
            loss_intervals: 8,
            discount_threshold: Some(0.25),
            short_history: ShortHistory::Rfc5348,
            loss_event_round_check: false,
            first_interval: FirstIntervalRate::MaxReceiveRate,
        }
    }
}

impl TfrcConfig {
    /// RFC 5348 (the same as `Default`).
    pub fn rfc5348() -> Self {
        Self::default()
    }

    /// ns-2.35 `Agent/TFRC` and `Agent/TFRCSink` with their `ns-default.tcl` values, the code
    /// behind Floyd et al. 2000 and the later papers' simulations.
    pub fn floyd2000() -> Self {
        TfrcConfig {
            equation: EquationShape {
                b: 1.0,
                cap_rto_term: true,
            },
            rto_policy: RtoPolicy::TcpLike {
                granularity: Duration::from_millis(100),
                min: Duration::ZERO,
            },
            rate_before_feedback: RateBeforeFeedback::BytesPerSecond(300.0),
            initial_window: InitialWindow::Ns2Packets,
            rtt_ewma_q: 0.95,
            nofeedback_rtts: 2,
            nofeedback_response: NofeedbackResponse::HalveRate,
            congestion_avoidance: CongestionAvoidance::Ns2AdditiveIncrease,
            max_backoff_interval: None,
            oscillation_prevention: true,
            sqrt_rtt_ewma_q: 0.95,
            ndupack: 1,
            discount_threshold: Some(0.5),
            short_history: ShortHistory::Ns2,
            first_interval: FirstIntervalRate::CurrentReceiveRate,
            ..Self::default()
        }
    }

    /// A preset by name: `"rfc5348"` or `"floyd2000"`.
    pub fn preset(name: &str) -> Result<Self, ConfigError> {
        match name {
            "rfc5348" => Ok(Self::rfc5348()),
            "floyd2000" => Ok(Self::floyd2000()),
            other => Err(ConfigError::UnknownPreset(other.to_owned())),
        }
    }

    /// Checks every value for its range; the sender and receiver assume a validated config.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |field: &'static str, expected: &'static str, found: String| {
            Err(ConfigError::OutOfRange {
                field,
                expected,
                found,
            })
        };
        if self.segment_size_bytes == 0 {
            return bad("segment_size_bytes", "at least 1", "0".into());
        }
        if !(self.equation.b.is_finite() && self.equation.b >= 1.0) {
            return bad("equation.b", "a number >= 1", self.equation.b.to_string());
        }
        if !(self.rate_scale.is_finite() && self.rate_scale > 0.0) {
            return bad(
                "rate_scale",
                "a positive number",
                self.rate_scale.to_string(),
            );
        }
        if !(self.max_rate_bytes_per_s.is_finite() && self.max_rate_bytes_per_s > 0.0) {
            return bad(
                "max_rate_bytes_per_s",
                "a positive rate",
                self.max_rate_bytes_per_s.to_string(),
            );
        }
        if let RateBeforeFeedback::BytesPerSecond(rate) = self.rate_before_feedback {
            if !(rate.is_finite() && rate > 0.0) {
                return bad("rate_before_feedback", "a positive rate", rate.to_string());
            }
        }
        for (field, q) in [
            ("rtt_ewma_q", self.rtt_ewma_q),
            ("sqrt_rtt_ewma_q", self.sqrt_rtt_ewma_q),
        ] {
            if !(0.0..1.0).contains(&q) {
                return bad(field, "a number in [0, 1)", q.to_string());
            }
        }
        if self.initial_nofeedback.is_zero() {
            return bad("initial_nofeedback", "a positive duration", "0s".into());
        }
        if self.nofeedback_rtts == 0 {
            return bad("nofeedback_rtts", "at least 1", "0".into());
        }
        if self.max_backoff_interval == Some(Duration::ZERO) {
            return bad("max_backoff_interval", "a positive duration", "0s".into());
        }
        if !(0.0..1.0).contains(&self.dither_fraction) {
            return bad(
                "dither_fraction",
                "a number in [0, 1)",
                self.dither_fraction.to_string(),
            );
        }
        if self.ndupack == 0 {
            return bad("ndupack", "at least 1", "0".into());
        }
        if !(2..=64).contains(&self.loss_intervals) || self.loss_intervals % 2 != 0 {
            return bad(
                "loss_intervals",
                "an even number from 2 to 64",
                self.loss_intervals.to_string(),
            );
        }
        if let Some(threshold) = self.discount_threshold {
            if !(threshold > 0.0 && threshold <= 1.0) {
                return bad(
                    "discount_threshold",
                    "a number in (0, 1]",
                    threshold.to_string(),
                );
            }
        }
        match self.rto_policy {
            RtoPolicy::TcpLike { granularity, .. } if granularity.is_zero() => {
                bad("rto_policy.granularity", "a positive duration", "0s".into())
            }
            RtoPolicy::Fixed(d) if d.is_zero() => {
                bad("rto_policy.fixed", "a positive duration", "0s".into())
            }
            _ => Ok(()),
        }
    }

    /// s as a float, for the rate arithmetic.
    pub(crate) fn s(&self) -> f64 {
        f64::from(self.segment_size_bytes)
    }

    /// The initial window W_init in bytes (RFC 5348 §4.2).
    pub(crate) fn initial_window_bytes(&self) -> f64 {
        let s = self.s();
        match self.initial_window {
            InitialWindow::Rfc3390Bytes => (4.0 * s).min((2.0 * s).max(4380.0)),
            InitialWindow::Ns2Packets => {
                let packets = if s <= 1095.0 {
                    4.0
                } else if s < 2190.0 {
                    3.0
                } else {
                    2.0
                };
                packets * s
            }
        }
    }

    /// The rate floor s/t_mbi in bytes/s, or 0 without one.
    pub(crate) fn min_rate(&self) -> f64 {
        self.max_backoff_interval
            .map_or(0.0, |t_mbi| self.s() / t_mbi.as_secs_f64())
    }
}

/// A configuration the library cannot run with (the caller's fault).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ConfigError {
    /// A field is outside its range.
    OutOfRange {
        /// The field, as named in [`TfrcConfig`].
        field: &'static str,
        /// What it must be.
        expected: &'static str,
        /// What it was.
        found: String,
    },
    /// A preset name other than `rfc5348` or `floyd2000`.
    UnknownPreset(String),
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::OutOfRange {
                field,
                expected,
                found,
            } => write!(f, "{field}: expected {expected}, found {found}"),
            ConfigError::UnknownPreset(name) => write!(
                f,
                "unknown TFRC preset {name:?}: expected \"rfc5348\" or \"floyd2000\""
            ),
        }
    }
}

impl std::error::Error for ConfigError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_validate() {
        TfrcConfig::default().validate().unwrap();
        TfrcConfig::floyd2000().validate().unwrap();
        assert_eq!(
            TfrcConfig::preset("rfc5348").unwrap(),
            TfrcConfig::default()
        );
        assert!(matches!(
            TfrcConfig::preset("reno"),
            Err(ConfigError::UnknownPreset(_))
        ));
    }

    #[test]
    fn rate_floor_is_one_packet_per_t_mbi_or_none() {
        assert_eq!(TfrcConfig::default().min_rate(), 1000.0 / 64.0);
        assert_eq!(TfrcConfig::floyd2000().min_rate(), 0.0);
    }

    #[test]
    fn initial_windows() {
        let rfc = TfrcConfig::default();
        assert_eq!(rfc.initial_window_bytes(), 4000.0);
        let big = TfrcConfig {
            segment_size_bytes: 1460,
            ..rfc.clone()
        };
        assert_eq!(big.initial_window_bytes(), 4380.0);
        let ns2 = TfrcConfig {
            segment_size_bytes: 1460,
            ..TfrcConfig::floyd2000()
        };
        assert_eq!(ns2.initial_window_bytes(), 3.0 * 1460.0);
    }

    #[test]
    fn bad_values_name_their_field() {
        let cases: Vec<(TfrcConfig, &str)> = vec![
            (
                TfrcConfig {
                    ndupack: 0,
                    ..Default::default()
                },
                "ndupack",
            ),
            (
                TfrcConfig {
                    loss_intervals: 7,
                    ..Default::default()
                },
                "loss_intervals",
            ),
            (
                TfrcConfig {
                    rtt_ewma_q: 1.0,
                    ..Default::default()
                },
                "rtt_ewma_q",
            ),
            (
                TfrcConfig {
                    discount_threshold: Some(0.0),
                    ..Default::default()
                },
                "discount_threshold",
            ),
            (
                TfrcConfig {
                    segment_size_bytes: 0,
                    ..Default::default()
                },
                "segment_size_bytes",
            ),
            (
                TfrcConfig {
                    rate_scale: f64::NAN,
                    ..Default::default()
                },
                "rate_scale",
            ),
        ];
        for (config, field) in cases {
            let err = config.validate().unwrap_err();
            assert!(err.to_string().starts_with(field), "{err}");
        }
    }
}
