//! A whole scenario file: parsed, checked against the network it describes, and run
//! (docs/scenario.md).

use std::time::Duration;

use super::cost::CostEstimate;
use super::drop_log_spec::{parse_drop_log, DropLogSpec};
use super::error::ScenarioError;
use super::fields::{parse_document, Fields};
use super::flow_spec::{parse_flows, DefaultEndpoints, FlowSpec};
use super::loss_spec::{parse_loss, LossSpec};
use super::measure_spec::{check_reference_group, parse_measure, MeasureWindow};
use super::queue_spec::queue_error;
use super::topology_spec::{parse_topology, QueuePaths, TopologySpec};
use super::trace_spec::{parse_trace, TraceSpec};
use crate::agent::Agent;
use crate::packet::FlowId;
use crate::results::Results;
use crate::rng::stream;
use crate::sim::{BuildError, FlowSetup, LossSetup, SimConfig, Simulation};
use crate::topology::{LinkId, Topology};

const DEFAULT_BIN: Duration = Duration::from_millis(10);
const DEFAULT_SEED: u64 = 1;
/// The longest run a scenario may ask for (a sanity bound: about 11.6 days).
const MAX_DURATION: Duration = Duration::from_secs(1_000_000);
/// The most bins a run may keep per series (bounds memory: duration / bin).
const MAX_BINS: u64 = 50_000_000;

/// Which links keep per-bin series (`monitor.links`); the others keep totals only.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LinkBinning {
    /// The topology's default ([`TopologySpec::default_binned_links`]).
    TopologyDefault,
    /// Every link (`"all"`).
    All,
    /// These links only (an empty list bins none).
    Only(Vec<String>),
}

/// A validated scenario: everything needed to run it, and the text it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    /// A label for results and figures.
    pub name: String,
    /// Simulated time to run.
    pub duration: Duration,
    /// The seed used when the caller gives none.
    pub seed: u64,
    /// Width of the monitors' bins.
    pub bin: Duration,
    /// Keep a per-packet trace of at most this many records.
    pub packet_trace: Option<usize>,
    /// The links whose per-bin series are kept.
    pub binned_links: LinkBinning,
    /// The pcap and ns-2 trace settings (`monitor.pcap`, `ns2_trace`, `trace_limit`).
    pub traces: TraceSpec,
    /// The flows whose dropped packets' send times are logged (`monitor.drop_log`,
    /// `drop_log_limit`).
    pub drop_log: DropLogSpec,
    /// The part of the run that summaries cover (`[measure]`; the whole run by default).
    pub measure: MeasureWindow,
    /// The flow group friendliness is rated against (`[measure] reference_group`; `None`: the
    /// long-lived TCP flows). Reporting only.
    pub reference_group: Option<String>,
    /// The network.
    pub topology: TopologySpec,
    /// The flows, `count` expanded.
    pub flows: Vec<FlowSpec>,
    /// The loss models.
    pub losses: Vec<LossSpec>,
    queue_paths: QueuePaths,
    source: String,
}

impl Scenario {
    /// Parses and checks a scenario file's text. Every error names the field at fault.
    pub fn from_toml_str(text: &str) -> Result<Scenario, ScenarioError> {
        let table = parse_document(text)?;
        Scenario::from_table(&table, text.to_string())
    }

    /// Parses and checks a scenario already read into a TOML table (the Python front builds
    /// these from dictionaries); `source` is kept as the scenario's text in the results.
    pub fn from_table(table: &toml::Table, source: String) -> Result<Scenario, ScenarioError> {
        let mut root = Fields::new(table, "");
        let name: String = root.or("name", String::new())?;
        root.declare(&["description"]);
        let duration: Duration = root.required("duration", r#"a duration like "150s""#)?;
        if duration.is_zero() || duration > MAX_DURATION {
            return Err(ScenarioError::invalid_text(
                "duration",
                "a duration above 0 and at most 1000000s",
                format!("{duration:?}"),
            ));
        }
        let seed: u64 = root.or("seed", DEFAULT_SEED)?;
        let (bin, packet_trace, binned_links, traces, drop_log) = match root.table("monitor")? {
            Some(mut monitor) => {
                let bin: Duration = monitor.or("bin", DEFAULT_BIN)?;
                let trace: usize = monitor.or("packet_trace", 0)?;
                let links = match monitor.value("links") {
                    None => LinkBinning::TopologyDefault,
                    Some(toml::Value::String(all)) if all == "all" => LinkBinning::All,
                    Some(value) => {
                        let path = monitor.child_path("links");
                        let names =
                            <Vec<String> as super::fields::FromToml>::from_toml(value, &path)
                                .map_err(|_| {
                                    ScenarioError::invalid(
                                        path,
                                        r#"a list of link names or "all""#,
                                        value,
                                    )
                                })?;
                        LinkBinning::Only(names)
                    }
                };
                let traces = parse_trace(&mut monitor)?;
                let drop_log = parse_drop_log(&mut monitor)?;
                monitor.finish()?;
                (bin, (trace > 0).then_some(trace), links, traces, drop_log)
            }
            None => (
                DEFAULT_BIN,
                None,
                LinkBinning::TopologyDefault,
                TraceSpec::default(),
                DropLogSpec::default(),
            ),
        };
        if bin.is_zero() || duration.as_nanos() / bin.as_nanos() > u128::from(MAX_BINS) {
            return Err(ScenarioError::invalid_text(
                "monitor.bin",
                format!("a bin above 0 and at least duration / {MAX_BINS}"),
                format!("{bin:?}"),
            ));
        }
        let (measure, reference_group) = match root.table("measure")? {
            Some(table) => parse_measure(table, duration)?,
            None => (MeasureWindow::whole(duration), None),
        };
        let topology_table = match root.table("topology")? {
            Some(table) => table,
            None => return Err(root.missing("topology", "a [topology] table")),
        };
        let (topology, queue_paths) = parse_topology(topology_table)?;
        let endpoints = match &topology {
            TopologySpec::Dumbbell(d) => DefaultEndpoints::Dumbbell {
                left: d.left_hosts,
                right: d.right_hosts,
                forward_bps: d.forward.rate_bps,
                reverse_bps: d.reverse.rate_bps,
            },
            _ => DefaultEndpoints::None,
        };
        let flows = parse_flows(root.tables("flows")?, endpoints)?;
        check_reference_group(reference_group.as_deref(), &flows)?;
        let losses = root
            .tables("losses")?
            .into_iter()
            .map(parse_loss)
            .collect::<Result<Vec<_>, _>>()?;
        root.finish()?;
        let scenario = Scenario {
            name,
            duration,
            seed,
            bin,
            packet_trace,
            binned_links,
            traces,
            drop_log,
            measure,
            reference_group,
            topology,
            flows,
            losses,
            queue_paths,
            source,
        };
        // Build once: names, routes and queue parameters that depend on the links are checked
        // here, so a run never fails half-way.
        scenario.simulation(scenario.seed)?;
        Ok(scenario)
    }

    /// The text the scenario was read from.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// A simulation of this scenario seeded with `seed`, ready to run (step it with
    /// [`Simulation::run_until`] to report progress).
    pub fn simulation(&self, seed: u64) -> Result<Simulation, ScenarioError> {
        let topology = self.topology.build(seed).map_err(|error| {
            ScenarioError::invalid_text("topology", "a valid topology", error.to_string())
        })?;
        let mut setups = Vec::with_capacity(self.flows.len());
        for flow in &self.flows {
            let node = |key: &str, name: &str| {
                topology.node(name).ok_or_else(|| {
                    ScenarioError::invalid_text(
                        format!("{}.{key}", flow.path),
                        "the name of a node of the topology",
                        format!("{name:?}"),
                    )
                })
            };
            setups.push(FlowSetup {
                name: flow.name.clone(),
                from: node("from", &flow.from)?,
                to: node("to", &flow.to)?,
                agent: flow.agent.clone(),
                start: flow.start,
                stop: flow.stop,
                on_off: flow.on_off,
                loss_event_rtt: flow.loss_event_rtt,
                host_jitter: flow.host_jitter,
            });
        }
        let mut losses = Vec::with_capacity(self.losses.len());
        for loss in &self.losses {
            let link = topology.link_named(&loss.link).ok_or_else(|| {
                ScenarioError::invalid_text(
                    format!("{}.link", loss.path),
                    "the name of a link of the topology",
                    format!("{:?}", loss.link),
                )
            })?;
            let flow = match &loss.flow {
                Some(name) => Some(
                    self.flows
                        .iter()
                        .position(|f| &f.name == name)
                        .map(|i| FlowId(i as u32))
                        .ok_or_else(|| {
                            ScenarioError::invalid_text(
                                format!("{}.flow", loss.path),
                                "the name of a flow",
                                format!("{name:?}"),
                            )
                        })?,
                ),
                None => None,
            };
            losses.push(LossSetup {
                link,
                flow,
                model: loss.model.clone(),
            });
        }
        let binned_links = self.binned_link_ids(&topology)?;
        self.traces.check(&topology)?;
        let config = SimConfig {
            duration: self.duration,
            bin: self.bin,
            packet_trace: self.packet_trace,
            binned_links,
        };
        let mut simulation = Simulation::new(topology, setups, losses, config, seed)
            .map_err(|e| self.build_error(e))?;
        self.drop_log.apply(&mut simulation, &self.flows)?;
        Ok(simulation)
    }

    /// What running this scenario will cost: events, memory and expected wall time (see
    /// [`cost`](super::cost)); computed from the file alone, building nothing but the network.
    pub fn estimate(&self) -> CostEstimate {
        let Ok(topology) = self.topology.build(self.seed) else {
            // A checked scenario always builds; an unchecked one costs nothing to refuse.
            return super::cost::estimate(self, &Topology::new(), Some(&[]), |_| 0);
        };
        let binned = self.binned_link_ids(&topology).ok().flatten();
        let mut fields: Vec<((&str, &str), usize)> = Vec::new();
        for flow in &self.flows {
            let key = (flow.agent.kind(), flow.agent.variant());
            if !fields.iter().any(|(k, _)| *k == key) {
                let (source, sink) = flow.agent.build(stream(0, "cost"), stream(0, "cost"));
                let n = source.trace_fields().len() + sink.trace_fields().len();
                fields.push((key, n));
            }
        }
        let state_fields = |flow: &FlowSpec| {
            let key = (flow.agent.kind(), flow.agent.variant());
            fields
                .iter()
                .find(|(k, _)| *k == key)
                .map_or(0, |(_, n)| *n)
        };
        super::cost::estimate(self, &topology, binned.as_deref(), state_fields)
    }

    /// The links whose per-bin series are kept (`None`: all of them).
    fn binned_link_ids(&self, topology: &Topology) -> Result<Option<Vec<LinkId>>, ScenarioError> {
        Ok(match &self.binned_links {
            LinkBinning::All => None,
            LinkBinning::Only(names) => Some(
                names
                    .iter()
                    .enumerate()
                    .map(|(i, name)| {
                        topology.link_named(name).ok_or_else(|| {
                            ScenarioError::invalid_text(
                                format!("monitor.links[{i}]"),
                                "the name of a link of the topology",
                                format!("{name:?}"),
                            )
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()?,
            ),
            LinkBinning::TopologyDefault => self.topology.default_binned_links(topology),
        })
    }

    /// A build error as a scenario error at the right path.
    fn build_error(&self, error: BuildError) -> ScenarioError {
        match &error {
            BuildError::Queue { link, error } => {
                let path = self
                    .queue_paths
                    .iter()
                    .find(|(name, _)| name == link || (name == "hop" && link.starts_with("hop")))
                    .or_else(|| self.queue_paths.iter().find(|(name, _)| name == "*"))
                    .map_or("topology".to_string(), |(_, path)| path.clone());
                queue_error(&path, error.clone())
            }
            BuildError::Flow { flow, .. } => {
                let path = self
                    .flows
                    .iter()
                    .find(|f| &f.name == flow)
                    .map_or("flows".to_string(), |f| f.path.clone());
                ScenarioError::invalid_text(path, "a flow that can run", error.to_string())
            }
            BuildError::Loss { index, .. } => ScenarioError::invalid_text(
                self.losses
                    .get(*index)
                    .map_or("losses".to_string(), |l| l.path.clone()),
                "valid loss-model parameters",
                error.to_string(),
            ),
            BuildError::Topology(_) => ScenarioError::invalid_text(
                "flows",
                "flows along existing routes",
                error.to_string(),
            ),
            _ => {
                ScenarioError::invalid_text("(scenario)", "a runnable scenario", error.to_string())
            }
        }
    }
}

/// Runs `scenario` seeded with `seed` to its end. The results carry the scenario's text, the
/// seed and the netsim version, so the run can be redone; the same scenario and seed give the
/// same results, bit for bit.
///
/// The monitors' series are reserved for the whole run first: a run whose series do not fit in
/// memory is refused at `monitor.bin` instead of aborting half-way. The run's cost is not
/// checked here; see [`Scenario::estimate`] and [`super::cost::check`].
pub fn run(scenario: &Scenario, seed: u64) -> Result<Results, ScenarioError> {
    let mut simulation = scenario.simulation(seed)?;
    simulation
        .try_reserve_monitors()
        .map_err(|error| out_of_memory(scenario, error))?;
    let mut results = simulation.run();
    results.scenario = scenario.source.clone();
    Ok(results)
}

/// A run whose monitors do not fit in memory, as an error at `monitor.bin`.
pub fn out_of_memory(scenario: &Scenario, error: crate::sim::OutOfMemory) -> ScenarioError {
    ScenarioError::invalid_text(
        "monitor.bin",
        format!(
            "per-bin series that fit in memory (about {} MiB needed; try a coarser bin, a \
             shorter duration or fewer flows)",
            scenario.estimate().memory_bytes >> 20
        ),
        error.to_string(),
    )
}
