//! Scenario files: simulations described in TOML with human units (docs/scenario.md documents
//! every field).
//!
//! [`Scenario::from_toml_str`] parses and checks a file (building the network once, so that
//! unknown node or link names, routes to nowhere and queue parameters that do not fit their link
//! are found before anything runs); [`run`] runs it with a seed. The schema lives in
//! `spec.rs` (top level), `topology_spec.rs`, `queue_spec.rs`, `flow_spec.rs` (with `tfrc_spec.rs`, `tcp_spec.rs`, `web_spec.rs`
//! and `randvar_spec.rs`) and
//! `loss_spec.rs`; the trace keys of `[monitor]` in `trace_spec.rs` and its drop-log keys in `drop_log_spec.rs`; random-or-fixed values in `dists.rs`. The value layer under it: [`units`] reads durations, rates
//! and sizes (`"10s"`, `"15Mbps"`, `"1500B"`); [`fields`] walks TOML tables, converting values
//! ([`FromToml`]) and refusing unknown keys with a "did you mean" ([`Fields`]); [`error`] is the
//! one error type, whose every message names the path of the offending value:
//! `flows[2].start: expected a duration like "10s", found "ten"`. No input makes any of it panic.

pub mod cost;
mod dists;
mod doc_examples;
mod drop_log_spec;
pub mod error;
pub mod fields;
mod flow_spec;
mod loss_spec;
mod measure_spec;
mod onoff_spec;
mod ping_spec;
mod queue_spec;
mod randvar_spec;
mod rap_spec;
mod spec;
mod tcp_spec;
mod tear_spec;
mod tfrc_spec;
mod topology_spec;
mod trace_spec;
pub mod units;
mod web_spec;

pub use cost::{check, Budget, CostError, CostEstimate, CostPart};
pub use doc_examples::toml_blocks;
pub use drop_log_spec::DropLogSpec;
pub use error::{describe, ScenarioError};
pub use fields::{parse_document, Fields, FromToml};
pub use flow_spec::FlowSpec;
pub use flow_spec::MAX_FLOWS;
pub use loss_spec::LossSpec;
pub use measure_spec::MeasureWindow;
pub use queue_spec::{parse_queue, queue_error};
pub use spec::{out_of_memory, run, LinkBinning, Scenario};
pub use topology_spec::TopologySpec;
pub use trace_spec::{TraceLinks, TraceOpenError, TraceSpec};
pub use units::{
    format_duration, parse_duration, parse_rate, parse_size, BitRate, ByteSize, Quantity,
    UnitError, UnitProblem,
};
