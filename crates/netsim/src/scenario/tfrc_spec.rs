//! The keys of a `kind = "tfrc"` flow (docs/scenario.md, "TFRC"): a `preset` and every
//! `TfrcConfig` option as a key that overrides it, plus the agent's own sizes, application rate
//! and ECN switch. The option names follow `TfrcConfig`'s fields without their unit suffixes;
//! durations, rates and sizes take human units.

use std::time::Duration;

use tfrc::config::{
    CongestionAvoidance, FirstIntervalRate, InitialWindow, NofeedbackResponse, RateBeforeFeedback,
    ShortHistory,
};
use tfrc::equation::RtoPolicy;
use tfrc::{ConfigError, TfrcConfig};

use super::error::ScenarioError;
use super::fields::{Fields, FromToml};
use super::flow_spec::packet_size;
use super::units::BitRate;
use crate::agent::tfrc::PRESETS;
use crate::agent::{AgentConfig, TfrcAgentConfig, TfrcApplication};

/// The value of `rate_before_feedback` that means one packet per second (RFC 5348 §4.2).
const ONE_PACKET_PER_SECOND: &str = "one_packet_per_second";

/// The value of an optional bound (`max_backoff_interval`, `discount_threshold`) that turns it
/// off.
const NONE: &str = "none";

/// Reads a TFRC flow's keys (the table's common flow keys are read by the caller).
pub(super) fn parse_tfrc(fields: &mut Fields<'_>) -> Result<AgentConfig, ScenarioError> {
    let preset = fields.choice("preset", PRESETS)?.unwrap_or("rfc5348");
    let mut config = TfrcAgentConfig::preset(preset).map_err(|error| {
        ScenarioError::invalid_text(fields.child_path("preset"), error.to_string(), preset)
    })?;
    config.size_bytes = packet_size(fields, "size", 1000)?;
    config.feedback_size_bytes = packet_size(fields, "feedback_size", 40)?;
    if let Some(rate) = fields.optional::<BitRate>("app_rate")? {
        if rate.bps == 0 {
            return Err(ScenarioError::invalid_text(
                fields.child_path("app_rate"),
                "a rate above 0",
                "0bps",
            ));
        }
        config.application = TfrcApplication::Limited { rate_bps: rate.bps };
    }
    config.ecn = fields.or("ecn", false)?;
    config.tfrc.segment_size_bytes = packet_size(fields, "segment_size", config.size_bytes)?;
    parse_options(fields, &mut config.tfrc)?;
    config
        .tfrc
        .validate()
        .map_err(|error| option_error(fields, &error))?;
    Ok(AgentConfig::Tfrc(Box::new(config)))
}

/// Every `TfrcConfig` option but the segment size, each overriding the preset's value.
fn parse_options(fields: &mut Fields<'_>, c: &mut TfrcConfig) -> Result<(), ScenarioError> {
    c.equation.b = fields.or("b", c.equation.b)?;
    c.equation.cap_rto_term = fields.or("cap_rto_term", c.equation.cap_rto_term)?;
    c.rto_policy = parse_rto(fields, c.rto_policy)?;
    c.rate_scale = fields.or("rate_scale", c.rate_scale)?;
    if let Some(value) = fields.value("rate_before_feedback") {
        c.rate_before_feedback = if value.as_str() == Some(ONE_PACKET_PER_SECOND) {
            RateBeforeFeedback::OnePacketPerSecond
        } else {
            let path = fields.child_path("rate_before_feedback");
            let rate = BitRate::from_toml(value, &path).map_err(|_| {
                ScenarioError::invalid(
                    &path,
                    format!(r#""{ONE_PACKET_PER_SECOND}" or a rate like "300Bps""#),
                    value,
                )
            })?;
            RateBeforeFeedback::BytesPerSecond(rate.bps as f64 / 8.0)
        };
    }
    if let Some(window) = fields.choice("initial_window", &["rfc3390", "ns2"])? {
        c.initial_window = match window {
            "rfc3390" => InitialWindow::Rfc3390Bytes,
            _ => InitialWindow::Ns2Packets,
        };
    }
    c.rtt_ewma_q = fields.or("rtt_ewma_q", c.rtt_ewma_q)?;
    c.initial_nofeedback = fields.or("initial_nofeedback", c.initial_nofeedback)?;
    c.nofeedback_rtts = fields.or("nofeedback_rtts", c.nofeedback_rtts)?;
    if let Some(rate) = fields.optional::<BitRate>("max_rate")? {
        c.max_rate_bytes_per_s = rate.bps as f64 / 8.0;
    }
    if let Some(response) = fields.choice("nofeedback_response", &["rfc5348", "halve_rate"])? {
        c.nofeedback_response = match response {
            "rfc5348" => NofeedbackResponse::Rfc5348,
            _ => NofeedbackResponse::HalveRate,
        };
    }
    let avoidance = ["jump_to_calculated", "ns2_additive_increase"];
    if let Some(rule) = fields.choice("congestion_avoidance", &avoidance)? {
        c.congestion_avoidance = match rule {
            "jump_to_calculated" => CongestionAvoidance::JumpToCalculated,
            _ => CongestionAvoidance::Ns2AdditiveIncrease,
        };
    }
    if let Some(value) = fields.value("max_backoff_interval") {
        let path = fields.child_path("max_backoff_interval");
        c.max_backoff_interval = or_none(value, &path, r#"a duration like "64s""#)?;
    }
    c.oscillation_prevention = fields.or("oscillation_prevention", c.oscillation_prevention)?;
    c.sqrt_rtt_ewma_q = fields.or("sqrt_rtt_ewma_q", c.sqrt_rtt_ewma_q)?;
    c.scheduling_granularity = fields.or("scheduling_granularity", c.scheduling_granularity)?;
    c.dither_fraction = fields.or("dither_fraction", c.dither_fraction)?;
    c.ndupack = fields.or("ndupack", c.ndupack)?;
    c.loss_intervals = fields.or("loss_intervals", c.loss_intervals)?;
    if let Some(value) = fields.value("discount_threshold") {
        let path = fields.child_path("discount_threshold");
        c.discount_threshold = or_none(value, &path, "a number in (0, 1]")?;
    }
    if let Some(rule) = fields.choice("short_history", &["rfc5348", "ns2"])? {
        c.short_history = match rule {
            "rfc5348" => ShortHistory::Rfc5348,
            _ => ShortHistory::Ns2,
        };
    }
    c.loss_event_round_check = fields.or("loss_event_round_check", c.loss_event_round_check)?;
    let first = ["max_receive_rate", "current_receive_rate"];
    if let Some(rule) = fields.choice("first_interval", &first)? {
        c.first_interval = match rule {
            "max_receive_rate" => FirstIntervalRate::MaxReceiveRate,
            _ => FirstIntervalRate::CurrentReceiveRate,
        };
    }
    Ok(())
}

/// `rto` (`"four_r"`, `"tcp_like"`, `"fixed"`) with `rto_granularity` and `rto_min` (for
/// `tcp_like`; default 100 ms and 0 unless the preset has its own) and `rto_fixed` (required for
/// `fixed`). A parameter of another policy than the one in force is refused.
fn parse_rto(fields: &mut Fields<'_>, preset: RtoPolicy) -> Result<RtoPolicy, ScenarioError> {
    let kind = fields.choice("rto", &["four_r", "tcp_like", "fixed"])?;
    let granularity: Option<Duration> = fields.optional("rto_granularity")?;
    let min: Option<Duration> = fields.optional("rto_min")?;
    let fixed: Option<Duration> = fields.optional("rto_fixed")?;
    let policy = match (kind, preset) {
        (
            None,
            RtoPolicy::TcpLike {
                granularity: g,
                min: m,
            },
        )
        | (
            Some("tcp_like"),
            RtoPolicy::TcpLike {
                granularity: g,
                min: m,
            },
        ) => RtoPolicy::TcpLike {
            granularity: granularity.unwrap_or(g),
            min: min.unwrap_or(m),
        },
        (Some("tcp_like"), _) => RtoPolicy::TcpLike {
            granularity: granularity.unwrap_or(Duration::from_millis(100)),
            min: min.unwrap_or(Duration::ZERO),
        },
        (Some("fixed"), _) => match fixed {
            Some(t) => RtoPolicy::Fixed(t),
            None => return Err(fields.missing("rto_fixed", r#"a duration like "1s""#)),
        },
        (None, RtoPolicy::Fixed(t)) => RtoPolicy::Fixed(fixed.unwrap_or(t)),
        _ => RtoPolicy::FourR,
    };
    let misplaced = match policy {
        RtoPolicy::TcpLike { .. } => [("rto_fixed", fixed.is_some(), "fixed")].to_vec(),
        RtoPolicy::Fixed(_) => vec![
            ("rto_granularity", granularity.is_some(), "tcp_like"),
            ("rto_min", min.is_some(), "tcp_like"),
        ],
        RtoPolicy::FourR => vec![
            ("rto_granularity", granularity.is_some(), "tcp_like"),
            ("rto_min", min.is_some(), "tcp_like"),
            ("rto_fixed", fixed.is_some(), "fixed"),
        ],
    };
    if let Some((key, _, needs)) = misplaced.into_iter().find(|&(_, given, _)| given) {
        let path = fields.child_path(key);
        let value = fields
            .value(key)
            .cloned()
            .unwrap_or(toml::Value::Boolean(true));
        return Err(ScenarioError::invalid(
            path,
            format!(r#"no {key} unless rto = "{needs}""#),
            &value,
        ));
    }
    Ok(policy)
}

/// `"none"`, or a value of type `T`.
fn or_none<T: FromToml>(
    value: &toml::Value,
    path: &str,
    expected: &str,
) -> Result<Option<T>, ScenarioError> {
    if value.as_str() == Some(NONE) {
        return Ok(None);
    }
    T::from_toml(value, path)
        .map(Some)
        .map_err(|_| ScenarioError::invalid(path, format!(r#"{expected} or "{NONE}""#), value))
}

/// A `TfrcConfig` range error, reported at the scenario key that holds the field.
fn option_error(fields: &Fields<'_>, error: &ConfigError) -> ScenarioError {
    match error {
        ConfigError::OutOfRange {
            field,
            expected,
            found,
        } => {
            let key = match *field {
                "segment_size_bytes" => "segment_size",
                "equation.b" => "b",
                "max_rate_bytes_per_s" => "max_rate",
                "rto_policy.granularity" => "rto_granularity",
                "rto_policy.fixed" => "rto_fixed",
                other => other,
            };
            ScenarioError::invalid_text(fields.child_path(key), *expected, found.clone())
        }
        other => ScenarioError::invalid_text(fields.path(), "a valid TFRC configuration", {
            other.to_string()
        }),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::scenario::fields::parse_document;

    fn parse(keys: &str) -> Result<TfrcAgentConfig, String> {
        let doc = parse_document(&format!("[flow]\nkind = \"tfrc\"\n{keys}")).unwrap();
        let toml::Value::Table(table) = &doc["flow"] else {
            unreachable!()
        };
        let mut fields = Fields::new(table, "flows[0]");
        fields.declare(&["kind"]);
        let agent = parse_tfrc(&mut fields).map_err(|e| e.to_string())?;
        fields.finish().map_err(|e| e.to_string())?;
        match agent {
            AgentConfig::Tfrc(config) => Ok(*config),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn defaults_are_rfc5348_greedy_1000_and_40_bytes() {
        assert_eq!(parse(""), Ok(TfrcAgentConfig::default()));
        let floyd = parse(r#"preset = "floyd2000""#).unwrap();
        assert_eq!(floyd, TfrcAgentConfig::preset("floyd2000").unwrap());
    }

    #[test]
    fn every_option_overrides_the_preset() {
        let config = parse(
            r#"
            preset = "floyd2000"
            size = "1460B"
            feedback_size = 64
            app_rate = "1Mbps"
            ecn = true
            segment_size = "1400B"
            b = 2
            cap_rto_term = false
            rto = "fixed"
            rto_fixed = "1s"
            rate_scale = 2.0
            rate_before_feedback = "one_packet_per_second"
            initial_window = "rfc3390"
            rtt_ewma_q = 0.8
            initial_nofeedback = "3s"
            nofeedback_rtts = 4
            max_rate = "1Gbps"
            nofeedback_response = "rfc5348"
            congestion_avoidance = "jump_to_calculated"
            max_backoff_interval = "32s"
            oscillation_prevention = false
            sqrt_rtt_ewma_q = 0.7
            scheduling_granularity = "1ms"
            dither_fraction = 0.1
            ndupack = 3
            loss_intervals = 16
            discount_threshold = "none"
            short_history = "rfc5348"
            loss_event_round_check = true
            first_interval = "max_receive_rate"
            "#,
        )
        .unwrap();
        assert_eq!(config.preset, "floyd2000");
        assert_eq!(config.size_bytes, 1460);
        assert_eq!(config.feedback_size_bytes, 64);
        assert_eq!(
            config.application,
            TfrcApplication::Limited {
                rate_bps: 1_000_000
            }
        );
        assert!(config.ecn);
        let expected = TfrcConfig {
            segment_size_bytes: 1400,
            equation: tfrc::equation::EquationShape {
                b: 2.0,
                cap_rto_term: false,
            },
            rto_policy: RtoPolicy::Fixed(Duration::from_secs(1)),
            rate_scale: 2.0,
            rate_before_feedback: RateBeforeFeedback::OnePacketPerSecond,
            initial_window: InitialWindow::Rfc3390Bytes,
            rtt_ewma_q: 0.8,
            initial_nofeedback: Duration::from_secs(3),
            nofeedback_rtts: 4,
            max_rate_bytes_per_s: 125_000_000.0,
            nofeedback_response: NofeedbackResponse::Rfc5348,
            congestion_avoidance: CongestionAvoidance::JumpToCalculated,
            max_backoff_interval: Some(Duration::from_secs(32)),
            data_limited: tfrc::DataLimitedRule::KeepLargest,
            oscillation_prevention: false,
            sqrt_rtt_ewma_q: 0.7,
            scheduling_granularity: Duration::from_millis(1),
            dither_fraction: 0.1,
            ndupack: 3,
            loss_intervals: 16,
            discount_threshold: None,
            short_history: ShortHistory::Rfc5348,
            loss_event_round_check: true,
            first_interval: FirstIntervalRate::MaxReceiveRate,
        };
        assert_eq!(config.tfrc, expected);
    }

    #[test]
    fn the_other_choices_and_the_segment_size_default() {
        let config = parse(
            r#"
            size = 500
            rate_before_feedback = "300Bps"
            initial_window = "ns2"
            nofeedback_response = "halve_rate"
            congestion_avoidance = "ns2_additive_increase"
            max_backoff_interval = "none"
            discount_threshold = 0.5
            short_history = "ns2"
            first_interval = "current_receive_rate"
            rto = "tcp_like"
            rto_min = "200ms"
            "#,
        )
        .unwrap();
        let c = &config.tfrc;
        assert_eq!(c.segment_size_bytes, 500);
        assert_eq!(
            c.rate_before_feedback,
            RateBeforeFeedback::BytesPerSecond(300.0)
        );
        assert_eq!(c.initial_window, InitialWindow::Ns2Packets);
        assert_eq!(c.nofeedback_response, NofeedbackResponse::HalveRate);
        assert_eq!(
            c.congestion_avoidance,
            CongestionAvoidance::Ns2AdditiveIncrease
        );
        assert_eq!(c.max_backoff_interval, None);
        assert_eq!(c.discount_threshold, Some(0.5));
        assert_eq!(c.short_history, ShortHistory::Ns2);
        assert_eq!(c.first_interval, FirstIntervalRate::CurrentReceiveRate);
        assert_eq!(
            c.rto_policy,
            RtoPolicy::TcpLike {
                granularity: Duration::from_millis(100),
                min: Duration::from_millis(200)
            }
        );
        // floyd2000's tick estimator keeps its tick unless told otherwise.
        let floyd = parse("preset = \"floyd2000\"\nrto_granularity = \"10ms\"").unwrap();
        assert_eq!(
            floyd.tfrc.rto_policy,
            RtoPolicy::TcpLike {
                granularity: Duration::from_millis(10),
                min: Duration::ZERO
            }
        );
        assert_eq!(
            parse("rto = \"four_r\"").unwrap().tfrc.rto_policy,
            RtoPolicy::FourR
        );
    }

    #[test]
    fn errors_name_the_key() {
        let cases = [
            (
                r#"preset = "floyd200""#,
                r#"flows[0].preset: expected one of "rfc5348", "floyd2000" (did you mean "floyd2000"?), found "floyd200""#,
            ),
            (
                "ndupack = 0",
                "flows[0].ndupack: expected at least 1, found 0",
            ),
            (
                "loss_intervals = 7",
                "flows[0].loss_intervals: expected an even number from 2 to 64, found 7",
            ),
            ("b = 0.5", "flows[0].b: expected a number >= 1, found 0.5"),
            (
                "rtt_ewma_q = 1",
                "flows[0].rtt_ewma_q: expected a number in [0, 1), found 1",
            ),
            (
                r#"max_rate = "0bps""#,
                "flows[0].max_rate: expected a positive rate, found 0",
            ),
            (
                r#"app_rate = "0bps""#,
                "flows[0].app_rate: expected a rate above 0, found 0bps",
            ),
            (
                "size = 0",
                "flows[0].size: expected a packet size between 1B and 64KiB, found 0B",
            ),
            (
                r#"rto = "fixed""#,
                r#"flows[0].rto_fixed: missing; expected a duration like "1s""#,
            ),
            (
                r#"rto_fixed = "1s""#,
                r#"flows[0].rto_fixed: expected no rto_fixed unless rto = "fixed", found "1s""#,
            ),
            (
                r#"rto = "tcp_like"
                rto_granularity = "0s""#,
                "flows[0].rto_granularity: expected a positive duration, found 0s",
            ),
            (
                r#"max_backoff_interval = "never""#,
                r#"flows[0].max_backoff_interval: expected a duration like "64s" or "none", found "never""#,
            ),
            (
                "discount_threshold = 0",
                "flows[0].discount_threshold: expected a number in (0, 1], found 0",
            ),
            (
                r#"rate_before_feedback = "fast""#,
                r#"flows[0].rate_before_feedback: expected "one_packet_per_second" or a rate like "300Bps", found "fast""#,
            ),
            (
                r#"congestion_avoidance = "jump""#,
                r#"flows[0].congestion_avoidance: expected one of "jump_to_calculated", "ns2_additive_increase", found "jump""#,
            ),
            (
                "ndupak = 3",
                "flows[0].ndupak: unknown key; did you mean `ndupack`?",
            ),
        ];
        for (keys, expected) in cases {
            assert_eq!(parse(keys).unwrap_err(), expected, "{keys}");
        }
    }
}
