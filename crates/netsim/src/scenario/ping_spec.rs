//! The keys of a `kind = "ping"` flow (docs/scenario.md, "Ping"; ns-2 `Agent/Ping`).

use std::time::Duration;

use super::error::{describe, ScenarioError};
use super::fields::Fields;
use super::flow_spec::packet_size;
use crate::agent::{AgentConfig, PingConfig};

/// `size` (64 B, ns-2's), `interval` (100 ms) and `timeout` (2 s).
pub(super) fn parse_ping(fields: &mut Fields<'_>) -> Result<AgentConfig, ScenarioError> {
    let defaults = PingConfig::default();
    let config = PingConfig {
        size_bytes: packet_size(fields, "size", defaults.size_bytes)?,
        interval: fields.or::<Duration>("interval", defaults.interval)?,
        timeout: fields.or::<Duration>("timeout", defaults.timeout)?,
    };
    config.validate().map_err(|error| {
        let found = fields
            .value(error.field)
            .map_or_else(|| "the default".to_string(), describe);
        ScenarioError::invalid_text(fields.child_path(error.field), error.reason, found)
    })?;
    Ok(AgentConfig::Ping(config))
}
