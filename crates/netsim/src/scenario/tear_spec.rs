//! The keys of a `kind = "tear"` flow (docs/scenario.md, "TEAR"; docs/tear.md for the
//! protocol): a `preset`, then every `TearConfig` field as a key overriding it. Field names
//! lose their unit suffixes; rates, sizes and durations take human units.

use super::error::{describe, ScenarioError};
use super::fields::Fields;
use super::flow_spec::packet_size;
use super::units::BitRate;
use crate::agent::tear::{FeedbackRule, OpenEpochRule, RoundRule, TearConfigError, PRESETS};
use crate::agent::{AgentConfig, TearConfig};

/// Reads a TEAR flow's keys (the table's common flow keys are read by the caller).
pub(super) fn parse_tear(fields: &mut Fields<'_>) -> Result<AgentConfig, ScenarioError> {
    let preset = fields.choice("preset", PRESETS)?.unwrap_or("yang2001");
    let mut c = TearConfig::preset(preset).unwrap_or_default();
    c.size_bytes = packet_size(fields, "size", c.size_bytes)?;
    c.feedback_size_bytes = packet_size(fields, "feedback_size", c.feedback_size_bytes)?;
    if let Some(rate) = fields.optional::<BitRate>("initial_rate")? {
        c.initial_rate_bps = rate.bps;
    }
    c.initial_window = fields.or("initial_window", c.initial_window)?;
    c.epochs = fields.or("epochs", c.epochs)?;
    if let Some(rule) = fields.choice("round", RoundRule::NAMES)? {
        c.round = if rule == "rtt" {
            RoundRule::Rtt
        } else {
            RoundRule::Window
        };
    }
    c.dupthresh = fields.or("dupthresh", c.dupthresh)?;
    c.timeout = fields.or("timeout", c.timeout)?;
    c.timeout_rtts = fields.or("timeout_rtts", c.timeout_rtts)?;
    c.min_timeout = fields.or("min_timeout", c.min_timeout)?;
    c.timeout_backoff = fields.or("timeout_backoff", c.timeout_backoff)?;
    if let Some(rule) = fields.choice("feedback", FeedbackRule::NAMES)? {
        c.feedback = if rule == "per_round" {
            FeedbackRule::PerRound
        } else {
            FeedbackRule::PerRtt
        };
    }
    c.nofeedback_halving = fields.or("nofeedback_halving", c.nofeedback_halving)?;
    c.nofeedback_rtts = fields.or("nofeedback_rtts", c.nofeedback_rtts)?;
    c.rtt_ewma_q = fields.or("rtt_ewma_q", c.rtt_ewma_q)?;
    if let Some(rule) = fields.choice("open_epoch", OpenEpochRule::NAMES)? {
        c.open_epoch = if rule == "closed_only" {
            OpenEpochRule::ClosedOnly
        } else {
            OpenEpochRule::Max
        };
    }
    c.validate()
        .map_err(|error| validation_error(fields, &error))?;
    Ok(AgentConfig::Tear(c))
}

/// A [`TearConfigError`] at the key that holds the field, showing the value given.
fn validation_error(fields: &mut Fields<'_>, error: &TearConfigError) -> ScenarioError {
    let TearConfigError::OutOfRange {
        field,
        expected,
        found,
    } = error;
    let key = match *field {
        "size_bytes" => "size",
        "feedback_size_bytes" => "feedback_size",
        "initial_rate_bps" => "initial_rate",
        other => other,
    };
    let found = fields.value(key).map_or_else(|| found.clone(), describe);
    ScenarioError::invalid_text(fields.child_path(key), *expected, found)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::scenario::fields::parse_document;

    fn parse(keys: &str) -> Result<TearConfig, String> {
        let doc = parse_document(&format!("[flow]\nkind = \"tear\"\n{keys}")).unwrap();
        let toml::Value::Table(table) = &doc["flow"] else {
            unreachable!()
        };
        let mut fields = Fields::new(table, "flows[0]");
        fields.declare(&["kind"]);
        let agent = parse_tear(&mut fields).map_err(|e| e.to_string())?;
        fields.finish().map_err(|e| e.to_string())?;
        match agent {
            AgentConfig::Tear(config) => Ok(config),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn defaults_are_the_yang2001_preset() {
        assert_eq!(parse(""), Ok(TearConfig::default()));
        assert_eq!(
            parse("preset = \"ncsu\""),
            Ok(TearConfig::preset("ncsu").unwrap())
        );
    }

    #[test]
    fn every_key_overrides_the_preset() {
        let config = parse(
            r#"
            preset = "ncsu"
            size = "500B"
            feedback_size = 64
            initial_rate = "80kbps"
            initial_window = 2
            epochs = 16
            round = "rtt"
            dupthresh = 1
            timeout = true
            timeout_rtts = 2.5
            min_timeout = "1s"
            timeout_backoff = false
            feedback = "per_round"
            nofeedback_halving = true
            nofeedback_rtts = 2
            rtt_ewma_q = 0.5
            open_epoch = "closed_only"
            "#,
        )
        .unwrap();
        let expected = TearConfig {
            preset: "ncsu",
            size_bytes: 500,
            feedback_size_bytes: 64,
            initial_rate_bps: 80_000,
            initial_window: 2.0,
            epochs: 16,
            round: RoundRule::Rtt,
            dupthresh: 1,
            timeout: true,
            timeout_rtts: 2.5,
            min_timeout: Duration::from_secs(1),
            timeout_backoff: false,
            feedback: FeedbackRule::PerRound,
            nofeedback_halving: true,
            nofeedback_rtts: 2,
            rtt_ewma_q: 0.5,
            open_epoch: OpenEpochRule::ClosedOnly,
        };
        assert_eq!(config, expected);
        let other = parse("round = \"window\"\nfeedback = \"per_rtt\"\nopen_epoch = \"max\"");
        assert_eq!(other, Ok(TearConfig::default()));
    }

    #[test]
    fn errors_name_the_key() {
        let cases = [
            (
                r#"preset = "yang2000""#,
                r#"flows[0].preset: expected one of "yang2001", "ncsu" (did you mean "yang2001"?), found "yang2000""#,
            ),
            (
                "epochs = 0",
                "flows[0].epochs: expected a whole number from 1 to 64, found 0",
            ),
            (
                r#"initial_rate = "0bps""#,
                r#"flows[0].initial_rate: expected a rate above 0, found "0bps""#,
            ),
            (
                "timeout_rtts = 0",
                "flows[0].timeout_rtts: expected a number in (0, 1000], found 0",
            ),
            (
                "dupthresh = -1",
                "flows[0].dupthresh: expected a non-negative whole number, found -1",
            ),
            (
                r#"round = "packets""#,
                r#"flows[0].round: expected one of "window", "rtt", found "packets""#,
            ),
            (
                "timeout = 1",
                "flows[0].timeout: expected true or false, found 1",
            ),
            (
                "size = 0",
                "flows[0].size: expected a packet size between 1B and 64KiB, found 0B",
            ),
            (
                r#"min_timeout = "65s""#,
                r#"flows[0].min_timeout: expected a duration of at most 64s, found "65s""#,
            ),
            (
                "epoch = 8",
                "flows[0].epoch: unknown key; did you mean `epochs`?",
            ),
        ];
        for (keys, expected) in cases {
            assert_eq!(parse(keys).unwrap_err(), expected, "{keys}");
        }
    }
}
