//! The `[measure]` table: the window of simulated time every summary figure covers
//! (docs/scenario.md, "Measurement window").
//!
//! The simulator itself records every bin from 0 to the end of the run; the window only tells
//! the analysis layer (tables, `--json`, sweeps) which part to summarize, so that start-up
//! transients and flows that have not started yet do not distort throughput and fairness
//! (Floyd 2000 §4.1 measures fig09 over the last 100 s of 150 s, for example).

use std::time::Duration;

use super::error::ScenarioError;
use super::fields::Fields;
use super::flow_spec::FlowSpec;
use super::units::format_duration;

/// The part of the run summaries cover: `[from, to)`, with `to` at most the run's duration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MeasureWindow {
    /// Start of the window (`from`, default 0 s).
    pub from: Duration,
    /// End of the window (`to`, default the end of the run).
    pub to: Duration,
}

impl MeasureWindow {
    /// The whole run, `[0, duration)`.
    pub fn whole(duration: Duration) -> MeasureWindow {
        MeasureWindow {
            from: Duration::ZERO,
            to: duration,
        }
    }
}

/// Reads `[measure]` (`from`, `to`, `reference_group`) and checks the window against the run's
/// `duration`: `0 <= from < to <= duration`. Returns the window and the reference group, the
/// flow group friendliness is rated against (`None`: the long-lived TCP flows); reporting only.
pub(super) fn parse_measure(
    mut fields: Fields<'_>,
    duration: Duration,
) -> Result<(MeasureWindow, Option<String>), ScenarioError> {
    let from: Duration = fields.or("from", Duration::ZERO)?;
    let to: Duration = fields.or("to", duration)?;
    let reference: Option<String> = fields.optional("reference_group")?;
    fields.finish()?;
    if reference
        .as_deref()
        .is_some_and(|name| name.trim().is_empty())
    {
        return Err(ScenarioError::invalid_text(
            "measure.reference_group",
            "the name of a flow group",
            "\"\"",
        ));
    }
    if from >= duration {
        return Err(ScenarioError::invalid_text(
            "measure.from",
            format!(
                "a time before the end of the run ({})",
                format_duration(duration)
            ),
            format_duration(from),
        ));
    }
    if to > duration || to <= from {
        return Err(ScenarioError::invalid_text(
            "measure.to",
            format!(
                "a time after measure.from ({}) and at most the run's duration ({})",
                format_duration(from),
                format_duration(duration)
            ),
            format_duration(to),
        ));
    }
    Ok((MeasureWindow { from, to }, reference))
}

/// `[measure] reference_group` must name the group of one of the flows (their `group`, else their
/// protocol class), checked when the scenario is read so that a misspelt group is refused before
/// the run rather than after it: `measure.reference_group: expected the group of a flow, one of
/// "tcp/sack", "tfrc/rfc5348", found "tcp"`. Whether that group has a flow active in the
/// measurement window is only known after the run (the summary checks it).
pub(super) fn check_reference_group(
    reference: Option<&str>,
    flows: &[FlowSpec],
) -> Result<(), ScenarioError> {
    let Some(reference) = reference else {
        return Ok(());
    };
    let mut groups: Vec<String> = Vec::new();
    for flow in flows {
        let label = flow.group_label();
        if label == reference {
            return Ok(());
        }
        if !groups.contains(&label) {
            groups.push(label);
        }
    }
    let listed = if groups.is_empty() {
        "none (the scenario has no flows)".to_string()
    } else {
        groups
            .iter()
            .map(|g| format!("{g:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    Err(ScenarioError::invalid_text(
        "measure.reference_group",
        format!("the group of a flow, one of {listed}"),
        format!("{reference:?}"),
    ))
}
