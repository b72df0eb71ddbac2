//! `[monitor]`'s drop-log keys: which flows keep the send times of their dropped data packets
//! (`drop_log`, flow names after `count` expansion) and the cap per flow (`drop_log_limit`).
//! See [`crate::monitor::DropLog`].

use super::error::ScenarioError;
use super::fields::Fields;
use super::flow_spec::FlowSpec;
use crate::monitor::DEFAULT_DROP_LOG_LIMIT;
use crate::sim::Simulation;

/// The largest `drop_log_limit`: 10^8 send times per flow (800 MB).
const MAX_LIMIT: usize = 100_000_000;

/// The drop-log settings of a scenario.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DropLogSpec {
    /// `monitor.drop_log`: the logged flows, by name (empty: none).
    pub flows: Vec<String>,
    /// `monitor.drop_log_limit`: send times kept per logged flow.
    pub limit: usize,
}

impl Default for DropLogSpec {
    fn default() -> DropLogSpec {
        DropLogSpec {
            flows: Vec::new(),
            limit: DEFAULT_DROP_LOG_LIMIT,
        }
    }
}

/// Reads `drop_log` and `drop_log_limit` from the `[monitor]` table.
pub(super) fn parse_drop_log(monitor: &mut Fields<'_>) -> Result<DropLogSpec, ScenarioError> {
    let flows: Vec<String> = monitor.or("drop_log", Vec::new())?;
    let limit: usize = monitor.or("drop_log_limit", DEFAULT_DROP_LOG_LIMIT)?;
    if limit == 0 || limit > MAX_LIMIT {
        return Err(ScenarioError::invalid_text(
            monitor.child_path("drop_log_limit"),
            format!("a number of send times per flow from 1 to {MAX_LIMIT}"),
            limit.to_string(),
        ));
    }
    Ok(DropLogSpec { flows, limit })
}

impl DropLogSpec {
    /// The indices of the logged flows in `flows`; an unknown name is an error at
    /// `monitor.drop_log[i]`.
    pub fn flow_indices(&self, flows: &[FlowSpec]) -> Result<Vec<usize>, ScenarioError> {
        self.flows
            .iter()
            .enumerate()
            .map(|(i, name)| {
                flows.iter().position(|f| &f.name == name).ok_or_else(|| {
                    ScenarioError::invalid_text(
                        format!("monitor.drop_log[{i}]"),
                        "the name of a flow",
                        format!("{name:?}"),
                    )
                })
            })
            .collect()
    }

    /// Turns the log on in `simulation` for the flows named (`flows`: the scenario's).
    pub fn apply(
        &self,
        simulation: &mut Simulation,
        flows: &[FlowSpec],
    ) -> Result<(), ScenarioError> {
        for index in self.flow_indices(flows)? {
            simulation.log_drops(index, self.limit);
        }
        Ok(())
    }
}
