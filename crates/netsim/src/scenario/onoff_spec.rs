//! The keys of `kind = "pareto"` and `kind = "exponential"` flows (docs/scenario.md, "Pareto and
//! exponential ON/OFF"; ns-2 `Application/Traffic/Pareto` and `.../Exponential`).

use std::time::Duration;

use super::error::{describe, ScenarioError};
use super::fields::Fields;
use super::flow_spec::packet_size;
use super::units::BitRate;
use crate::agent::onoff::{OnOffConfig, OnOffConfigError, OnOffDistribution, NS2_SHAPE};
use crate::agent::AgentConfig;

/// `kind = "pareto"`: `rate`, `size`, `on`, `off` and `shape`.
pub(super) fn parse_pareto(fields: &mut Fields<'_>) -> Result<AgentConfig, ScenarioError> {
    let shape: f64 = fields.or("shape", NS2_SHAPE)?;
    parse_on_off(fields, OnOffDistribution::Pareto { shape })
}

/// `kind = "exponential"`: `rate`, `size`, `on` and `off`.
pub(super) fn parse_exponential(fields: &mut Fields<'_>) -> Result<AgentConfig, ScenarioError> {
    parse_on_off(fields, OnOffDistribution::Exponential)
}

/// The keys both kinds share. Defaults are ns-2's (64 kb/s, ON and OFF means of 0.5 s) except
/// the packet size: 1000 B, the papers' size and the CBR kind's default (ns-2's is 210 B).
fn parse_on_off(
    fields: &mut Fields<'_>,
    distribution: OnOffDistribution,
) -> Result<AgentConfig, ScenarioError> {
    let defaults = OnOffConfig::pareto();
    let rate: BitRate = fields.or(
        "rate",
        BitRate {
            bps: defaults.rate_bps,
        },
    )?;
    let config = OnOffConfig {
        distribution,
        rate_bps: rate.bps,
        size_bytes: packet_size(fields, "size", 1000)?,
        on: fields.or::<Duration>("on", defaults.on)?,
        off: fields.or::<Duration>("off", defaults.off)?,
    };
    config
        .validate()
        .map_err(|error| validation_error(fields, error))?;
    Ok(AgentConfig::OnOff(config))
}

/// An [`OnOffConfigError`] as an error at its key, showing the value given.
fn validation_error(fields: &mut Fields<'_>, error: OnOffConfigError) -> ScenarioError {
    let found = fields
        .value(error.field)
        .map_or_else(|| "the default".to_string(), describe);
    ScenarioError::invalid_text(fields.child_path(error.field), error.reason, found)
}
