//! Scenario files: simulations described in TOML with human units.
//!
//! This module holds the value layer the schema is built on: [`units`] reads durations, rates
//! and sizes (`"10s"`, `"15Mbps"`, `"1500B"`); [`fields`] walks TOML tables, converting values
//! ([`FromToml`]) and refusing unknown keys with a "did you mean" ([`Fields`]); [`error`] is the
//! one error type, whose every message names the path of the offending value:
//! `flows[2].start: expected a duration like "10s", found "ten"`. No input makes any of it panic.

pub mod error;
pub mod fields;
pub mod units;

pub use error::{describe, ScenarioError};
pub use fields::{parse_document, Fields, FromToml};
pub use units::{
    format_duration, parse_duration, parse_rate, parse_size, BitRate, ByteSize, Quantity,
    UnitError, UnitProblem,
};
