//! Scenario values that may be fixed or random: a duration (`"2ms"`, `{ uniform = ["1ms",
//! "3ms"] }`, `{ exponential = "1s" }`) and a rate (`"100Mbps"`, `{ uniform = ["10Mbps",
//! "100Mbps"] }`).

use std::time::Duration;

use super::error::ScenarioError;
use super::fields::{Fields, FromToml};
use super::units::BitRate;
use crate::dist::{DurationDist, RateDist};

const DURATION_DIST: &str =
    r#"a duration like "10s", { uniform = ["1ms", "3ms"] } or { exponential = "1s" }"#;
const RATE_DIST: &str = r#"a rate like "15Mbps" or { uniform = ["10Mbps", "100Mbps"] }"#;

impl FromToml for DurationDist {
    fn from_toml(value: &toml::Value, path: &str) -> Result<DurationDist, ScenarioError> {
        match value {
            toml::Value::String(_) => Ok(DurationDist::Fixed(Duration::from_toml(value, path)?)),
            toml::Value::Table(table) => {
                let mut fields = Fields::new(table, path);
                let uniform: Option<Vec<Duration>> = fields.optional("uniform")?;
                let exponential: Option<Duration> = fields.optional("exponential")?;
                fields.finish()?;
                match (uniform, exponential) {
                    (Some(bounds), None) => {
                        let [low, high] = bounds[..] else {
                            return Err(ScenarioError::invalid_text(
                                format!("{path}.uniform"),
                                "two durations [low, high]",
                                format!("{} items", bounds.len()),
                            ));
                        };
                        if high < low {
                            return Err(ScenarioError::invalid_text(
                                format!("{path}.uniform"),
                                "[low, high] with low <= high",
                                format!("[{low:?}, {high:?}]"),
                            ));
                        }
                        Ok(DurationDist::Uniform { low, high })
                    }
                    (None, Some(mean)) => Ok(DurationDist::Exponential { mean }),
                    _ => Err(ScenarioError::invalid(path, DURATION_DIST, value)),
                }
            }
            _ => Err(ScenarioError::invalid(path, DURATION_DIST, value)),
        }
    }
}

impl FromToml for RateDist {
    fn from_toml(value: &toml::Value, path: &str) -> Result<RateDist, ScenarioError> {
        match value {
            toml::Value::String(_) => Ok(RateDist::Fixed(BitRate::from_toml(value, path)?.bps)),
            toml::Value::Table(table) => {
                let mut fields = Fields::new(table, path);
                let bounds: Vec<BitRate> = fields.required("uniform", RATE_DIST)?;
                fields.finish()?;
                match bounds[..] {
                    [low, high] if low <= high => Ok(RateDist::Uniform {
                        low: low.bps,
                        high: high.bps,
                    }),
                    _ => Err(ScenarioError::invalid(
                        format!("{path}.uniform"),
                        "two rates [low, high] with low <= high",
                        &table["uniform"],
                    )),
                }
            }
            _ => Err(ScenarioError::invalid(path, RATE_DIST, value)),
        }
    }
}
