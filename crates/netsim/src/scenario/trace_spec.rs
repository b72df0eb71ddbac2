//! `[monitor]`'s trace keys: which links a pcap capture (`pcap`) and an ns-2 trace
//! (`ns2_trace`) cover, and the cap per link (`trace_limit`). The keys choose links only; the
//! files are written when the caller names a destination (`tfrclab run --pcap DIR`,
//! `--ns2-trace FILE`), through [`TraceSpec::open`]. A destination without the key traces
//! every link.

use std::path::Path;

use super::error::ScenarioError;
use super::fields::{Fields, FromToml};
use crate::sim::Simulation;
use crate::topology::{LinkId, Topology};
use crate::trace::files::{self, TraceFileError};
use crate::trace::DEFAULT_LIMIT;

/// The largest `trace_limit`: 10^9 records per link.
const MAX_LIMIT: u64 = 1_000_000_000;

/// Which links a trace covers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TraceLinks {
    /// Every link of the topology (`"all"`).
    All,
    /// These links, by name.
    Only(Vec<String>),
}

/// The trace settings of a scenario.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceSpec {
    /// `monitor.pcap`: the links to capture (`None`: every link, when a directory is given).
    pub pcap: Option<TraceLinks>,
    /// `monitor.ns2_trace`: the links of the ns-2 trace (`None`: every link, when a file is
    /// given).
    pub ns2: Option<TraceLinks>,
    /// `monitor.trace_limit`: packets per pcap file, events per link in the ns-2 trace.
    pub limit: u64,
}

impl Default for TraceSpec {
    fn default() -> TraceSpec {
        TraceSpec {
            pcap: None,
            ns2: None,
            limit: DEFAULT_LIMIT,
        }
    }
}

/// Reads `pcap`, `ns2_trace` and `trace_limit` from the `[monitor]` table.
pub(super) fn parse_trace(monitor: &mut Fields<'_>) -> Result<TraceSpec, ScenarioError> {
    let pcap = parse_links(monitor, "pcap")?;
    let ns2 = parse_links(monitor, "ns2_trace")?;
    let limit: u64 = monitor.or("trace_limit", DEFAULT_LIMIT)?;
    if limit == 0 || limit > MAX_LIMIT {
        return Err(ScenarioError::invalid_text(
            monitor.child_path("trace_limit"),
            format!("a number of records per link from 1 to {MAX_LIMIT}"),
            limit.to_string(),
        ));
    }
    Ok(TraceSpec { pcap, ns2, limit })
}

fn parse_links(
    monitor: &mut Fields<'_>,
    key: &'static str,
) -> Result<Option<TraceLinks>, ScenarioError> {
    let Some(value) = monitor.value(key) else {
        return Ok(None);
    };
    if let toml::Value::String(all) = value {
        if all == "all" {
            return Ok(Some(TraceLinks::All));
        }
    }
    let path = monitor.child_path(key);
    let names = <Vec<String> as FromToml>::from_toml(value, &path)
        .map_err(|_| ScenarioError::invalid(path, r#"a list of link names or "all""#, value))?;
    Ok(Some(TraceLinks::Only(names)))
}

/// The links `selection` names in `topology` (every link for `None` or `All`); an unknown name
/// is an error at `monitor.{key}[i]` listing the topology's links.
fn resolve(
    selection: Option<&TraceLinks>,
    key: &str,
    topology: &Topology,
) -> Result<Vec<LinkId>, ScenarioError> {
    let Some(TraceLinks::Only(names)) = selection else {
        return Ok((0..topology.links().len() as u32).map(LinkId).collect());
    };
    let mut ids: Vec<LinkId> = Vec::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        let id = topology.link_named(name).ok_or_else(|| {
            let valid: Vec<&str> = topology.links().iter().map(|l| l.name.as_str()).collect();
            ScenarioError::invalid_text(
                format!("monitor.{key}[{i}]"),
                format!("the name of a link of the topology ({})", valid.join(", ")),
                format!("{name:?}"),
            )
        })?;
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    Ok(ids)
}

/// Why the traces could not be opened.
#[derive(Clone, Debug, PartialEq)]
pub enum TraceOpenError {
    /// A link name in the scenario.
    Scenario(ScenarioError),
    /// A file or directory that cannot be written.
    File(TraceFileError),
}

impl std::fmt::Display for TraceOpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TraceOpenError::Scenario(error) => error.fmt(f),
            TraceOpenError::File(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for TraceOpenError {}

impl TraceSpec {
    /// Checks the link names against `topology` (called when the scenario is checked).
    pub fn check(&self, topology: &Topology) -> Result<(), ScenarioError> {
        resolve(self.pcap.as_ref(), "pcap", topology)?;
        resolve(self.ns2.as_ref(), "ns2_trace", topology)?;
        Ok(())
    }

    /// The links a pcap capture covers (every link when the key is absent).
    pub fn pcap_links(&self, topology: &Topology) -> Result<Vec<LinkId>, ScenarioError> {
        resolve(self.pcap.as_ref(), "pcap", topology)
    }

    /// The links the ns-2 trace covers (every link when the key is absent).
    pub fn ns2_links(&self, topology: &Topology) -> Result<Vec<LinkId>, ScenarioError> {
        resolve(self.ns2.as_ref(), "ns2_trace", topology)
    }

    /// Opens the files (pcap files in `pcap_dir`, the ns-2 trace at `ns2_path`) and attaches
    /// them to `simulation`; with neither, does nothing.
    pub fn open(
        &self,
        simulation: &mut Simulation,
        pcap_dir: Option<&Path>,
        ns2_path: Option<&Path>,
    ) -> Result<(), TraceOpenError> {
        if pcap_dir.is_none() && ns2_path.is_none() {
            return Ok(());
        }
        let topology = simulation.topology();
        let pcap_links = self
            .pcap_links(topology)
            .map_err(TraceOpenError::Scenario)?;
        let ns2_links = self.ns2_links(topology).map_err(TraceOpenError::Scenario)?;
        let taps = files::open(
            topology,
            pcap_dir.map(|dir| (dir, pcap_links.as_slice())),
            ns2_path.map(|path| (path, ns2_links.as_slice())),
            self.limit,
        )
        .map_err(TraceOpenError::File)?;
        simulation.attach_traces(taps);
        Ok(())
    }
}
