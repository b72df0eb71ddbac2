//! The keys of a `kind = "rap"` flow (docs/scenario.md, "RAP"; docs/rap.md for the protocol): a
//! preset, then every [`RapConfig`] parameter by the name of its ns-2 knob without the trailing
//! underscore; durations and sizes take human units.

use super::error::{describe, ScenarioError};
use super::fields::Fields;
use super::flow_spec::packet_size;
use crate::agent::rap::{RapConfig, RapConfigError, PRESETS};
use crate::agent::AgentConfig;

/// Reads a RAP flow's keys (the table's common flow keys are read by the caller).
pub(super) fn parse_rap(fields: &mut Fields<'_>) -> Result<AgentConfig, ScenarioError> {
    let preset = fields.choice("preset", PRESETS)?.unwrap_or("ns2");
    let mut c = RapConfig::preset(preset).unwrap_or_default();
    c.size_bytes = packet_size(fields, "size", c.size_bytes)?;
    c.ack_bytes = packet_size(fields, "ack_size", c.ack_bytes)?;
    c.fine_grain = fields.or("fine_grain", c.fine_grain)?;
    c.initial_ipg = fields.or("ipg", c.initial_ipg)?;
    c.initial_srtt = fields.or("srtt", c.initial_srtt)?;
    c.initial_timeout = fields.or("timeout", c.initial_timeout)?;
    c.alpha = fields.or("alpha", c.alpha)?;
    c.beta = fields.or("beta", c.beta)?;
    c.delta = fields.or("delta", c.delta)?;
    c.mu = fields.or("mu", c.mu)?;
    c.phi = fields.or("phi", c.phi)?;
    c.overhead = fields.or("overhead", c.overhead)?;
    c.kfrtt = fields.or("kfrtt", c.kfrtt)?;
    c.kxrtt = fields.or("kxrtt", c.kxrtt)?;
    c.dpthresh_percent = fields.or("dpthresh", c.dpthresh_percent)?;
    c.shared_first_sample = fields.or("shared_first_sample", c.shared_first_sample)?;
    c.max_packets = match fields.optional::<u64>("max_packets")? {
        Some(n) => Some(n),
        None => c.max_packets,
    };
    c.validate()
        .map_err(|error| validation_error(fields, error))?;
    Ok(AgentConfig::Rap(c))
}

/// A [`RapConfigError`] as an error at its key, showing the value given.
fn validation_error(fields: &mut Fields<'_>, error: RapConfigError) -> ScenarioError {
    let found = fields
        .value(error.field)
        .map_or_else(|| "the preset's value".to_string(), describe);
    ScenarioError::invalid_text(fields.child_path(error.field), error.reason, found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn parse(text: &str) -> Result<RapConfig, ScenarioError> {
        let table: toml::Table = text.parse().unwrap();
        let mut fields = Fields::new(&table, "flows[0]");
        let config = parse_rap(&mut fields)?;
        fields.finish()?;
        match config {
            AgentConfig::Rap(c) => Ok(c),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn no_keys_give_ns2s_defaults() {
        assert_eq!(parse("").unwrap(), RapConfig::default());
    }

    #[test]
    fn every_key_overrides_its_parameter() {
        let c = parse(
            r#"
preset = "hassan"
size = "200B"
ack_size = "50B"
fine_grain = true
ipg = "1s"
srtt = "100ms"
timeout = "3s"
alpha = 0.5
beta = 0.875
delta = 0.125
mu = 2.0
phi = 2.0
overhead = "5ms"
kfrtt = 0.5
kxrtt = 0.05
dpthresh = 0
shared_first_sample = true
max_packets = 100
"#,
        )
        .unwrap();
        let expected = RapConfig {
            preset: "hassan",
            size_bytes: 200,
            ack_bytes: 50,
            initial_ipg: Duration::from_secs(1),
            initial_srtt: Duration::from_millis(100),
            initial_timeout: Duration::from_secs(3),
            alpha: 0.5,
            beta: 0.875,
            delta: 0.125,
            mu: 2.0,
            phi: 2.0,
            overhead: Duration::from_millis(5),
            fine_grain: true,
            kfrtt: 0.5,
            kxrtt: 0.05,
            dpthresh_percent: 0.0,
            shared_first_sample: true,
            max_packets: Some(100),
        };
        assert_eq!(c, expected);
        let hassan = parse(r#"preset = "hassan""#).unwrap();
        assert_eq!((hassan.size_bytes, hassan.ack_bytes), (100, 40));
        assert!(
            parse(r#"preset = "ns2_exact""#)
                .unwrap()
                .shared_first_sample
        );
    }

    #[test]
    fn errors_name_the_key_and_the_value() {
        let text = |t: &str| parse(t).unwrap_err().to_string();
        assert_eq!(
            text("beta = 1.5"),
            "flows[0].beta: expected a number in (0, 1), found 1.5"
        );
        assert_eq!(
            text(r#"srtt = "0s""#),
            r#"flows[0].srtt: expected a duration above 0, found "0s""#
        );
        assert!(text(r#"preset = "ns3""#).starts_with("flows[0].preset: expected one of"));
        assert!(text("fine_grain = 1").starts_with("flows[0].fine_grain: expected"));
        assert!(text("size = 0").starts_with("flows[0].size: expected a packet size"));
        assert!(text("kxrtt = 0").contains("kxrtt: expected a number in (0, 1]"));
        assert!(text("max_packets = 0").contains("max_packets: expected at least 1 packet"));
        assert!(text("windoe = 3").starts_with("flows[0].windoe"));
    }
}
