//! The `[topology]` table: a dumbbell, a parking lot or an explicit graph (docs/scenario.md,
//! "Topology").

use std::time::Duration;

use super::error::ScenarioError;
use super::fields::{Fields, FromToml};
use super::queue_spec::parse_queue;
use super::units::BitRate;
use crate::dist::{DurationDist, RateDist};
use crate::queue::QueueConfig;
use crate::topology::{
    AccessDelay, DumbbellConfig, LinkId, LinkParams, LinkSpec, ParkingLotConfig, Topology,
    TopologyError,
};

const KINDS: &[&str] = &["dumbbell", "parking_lot", "graph"];
const DEFAULT_ACCESS_RATE_BPS: u64 = 100_000_000;
/// Static routing keeps a next-hop entry per (node, destination): 4 bytes times nodes². These
/// bounds keep it under about 100 MB and its computation under a few seconds.
const MAX_HOSTS_PER_SIDE: usize = 2_500;
const MAX_HOPS: usize = 1_000;
const MAX_GRAPH_NODES: usize = 5_000;

/// A topology as the scenario describes it; [`TopologySpec::build`] makes the graph.
#[derive(Clone, Debug, PartialEq)]
pub enum TopologySpec {
    /// A dumbbell (random per-host draws happen at build time).
    Dumbbell(Box<DumbbellConfig>),
    /// A parking lot.
    ParkingLot(Box<ParkingLotConfig>),
    /// An explicit graph.
    Graph(Topology),
}

impl TopologySpec {
    /// The graph for a run seeded with `seed`.
    pub fn build(&self, seed: u64) -> Result<Topology, TopologyError> {
        match self {
            TopologySpec::Dumbbell(config) => config.build(seed),
            TopologySpec::ParkingLot(config) => config.build(),
            TopologySpec::Graph(topology) => Ok(topology.clone()),
        }
    }

    /// The links whose per-bin series a run keeps unless the scenario says otherwise: a
    /// dumbbell's two bottleneck directions, a parking lot's hops (both directions), every link
    /// of a graph (`None`). Access links keep totals only.
    pub fn default_binned_links(&self, built: &Topology) -> Option<Vec<LinkId>> {
        let prefix = match self {
            TopologySpec::Dumbbell(_) => "bottleneck",
            TopologySpec::ParkingLot(_) => "hop",
            TopologySpec::Graph(_) => return None,
        };
        Some(
            built
                .links()
                .iter()
                .enumerate()
                .filter(|(_, link)| link.name.starts_with(prefix))
                .map(|(i, _)| LinkId(i as u32))
                .collect(),
        )
    }
}

/// Where in the file each link's queue was described, for error messages.
pub(super) type QueuePaths = Vec<(String, String)>;

/// Reads the `[topology]` table.
pub(super) fn parse_topology(
    mut fields: Fields<'_>,
) -> Result<(TopologySpec, QueuePaths), ScenarioError> {
    let kind = fields
        .choice("kind", KINDS)?
        .ok_or_else(|| fields.missing("kind", r#"one of "dumbbell", "parking_lot", "graph""#))?;
    let parsed = match kind {
        "dumbbell" => parse_dumbbell(&mut fields)?,
        "parking_lot" => parse_parking_lot(&mut fields)?,
        _ => parse_graph(&mut fields)?,
    };
    fields.finish()?;
    Ok(parsed)
}

/// A link direction: `rate` and `delay` required, `queue` optional (ns-2's DropTail, 50).
fn parse_link_params(
    fields: &mut Fields<'_>,
    defaults: Option<&LinkParams>,
) -> Result<LinkParams, ScenarioError> {
    let rate: Option<BitRate> = fields.optional("rate")?;
    let delay: Option<Duration> = fields.optional("delay")?;
    let queue = match fields.table("queue")? {
        Some(queue) => Some(parse_queue(queue)?),
        None => None,
    };
    let rate_bps = match (rate, defaults) {
        (Some(rate), _) => rate.bps,
        (None, Some(d)) => d.rate_bps,
        (None, None) => return Err(fields.missing("rate", r#"a rate like "15Mbps""#)),
    };
    if rate_bps == 0 {
        return Err(ScenarioError::invalid_text(
            fields.child_path("rate"),
            "a rate above 0",
            "0bps",
        ));
    }
    let delay = match (delay, defaults) {
        (Some(delay), _) => delay,
        (None, Some(d)) => d.delay,
        (None, None) => return Err(fields.missing("delay", r#"a duration like "50ms""#)),
    };
    let queue = queue
        .or_else(|| defaults.map(|d| d.queue.clone()))
        .unwrap_or_default();
    Ok(LinkParams {
        rate_bps,
        delay,
        queue,
    })
}

fn required_table<'a>(
    fields: &mut Fields<'a>,
    key: &'static str,
    expected: &str,
) -> Result<Fields<'a>, ScenarioError> {
    match fields.table(key)? {
        Some(table) => Ok(table),
        None => Err(fields.missing(key, expected)),
    }
}

fn parse_dumbbell(fields: &mut Fields<'_>) -> Result<(TopologySpec, QueuePaths), ScenarioError> {
    let hosts: Option<usize> = fields.optional("hosts")?;
    let left: Option<usize> = fields.optional("left_hosts")?;
    let right: Option<usize> = fields.optional("right_hosts")?;
    let (left_hosts, right_hosts) = match (hosts, left, right) {
        (Some(n), None, None) => (n, n),
        (None, Some(l), Some(r)) => (l, r),
        (None, None, None) => {
            return Err(fields.missing("hosts", "the number of hosts on each side"))
        }
        _ => {
            return Err(ScenarioError::invalid_text(
                fields.child_path("hosts"),
                "either hosts, or both left_hosts and right_hosts",
                "a mix of them",
            ))
        }
    };
    for (key, n) in [("hosts", left_hosts), ("hosts", right_hosts)] {
        if n == 0 || n > MAX_HOSTS_PER_SIDE {
            return Err(ScenarioError::invalid_text(
                fields.child_path(key),
                format!("between 1 and {MAX_HOSTS_PER_SIDE} hosts per side"),
                n.to_string(),
            ));
        }
    }
    let mut bottleneck = required_table(fields, "bottleneck", "a table with rate and delay")?;
    let forward = parse_link_params(&mut bottleneck, None)?;
    let bottleneck_path = bottleneck.path().to_string();
    bottleneck.finish()?;
    let (reverse, reverse_path) = match fields.table("bottleneck_reverse")? {
        Some(mut table) => {
            let params = parse_link_params(&mut table, Some(&forward))?;
            let path = table.path().to_string();
            table.finish()?;
            (params, path)
        }
        None => (forward.clone(), bottleneck_path.clone()),
    };
    let mut access_rate = RateDist::Fixed(DEFAULT_ACCESS_RATE_BPS);
    let mut access_delay = AccessDelay::PerHost(DurationDist::Fixed(Duration::ZERO));
    let mut access_queue = QueueConfig::default();
    let mut access_path = fields.child_path("access");
    if let Some(mut access) = fields.table("access")? {
        access_path = access.path().to_string();
        access_rate = access.or("rate", access_rate)?;
        if access_rate.min() == 0 {
            return Err(ScenarioError::invalid_text(
                access.child_path("rate"),
                "rates above 0",
                "0bps",
            ));
        }
        let delay: Option<DurationDist> = access.optional("delay")?;
        let rtt = parse_pair_rtt(&mut access, left_hosts, &forward, &reverse)?;
        access_delay = match (delay, rtt) {
            (Some(_), Some(_)) => {
                return Err(ScenarioError::invalid_text(
                    access.child_path("rtt"),
                    "either delay or rtt, not both",
                    "both",
                ))
            }
            (_, Some(rtt)) => rtt,
            (delay, None) => {
                AccessDelay::PerHost(delay.unwrap_or(DurationDist::Fixed(Duration::ZERO)))
            }
        };
        if let Some(queue) = access.table("queue")? {
            access_queue = parse_queue(queue)?;
        }
        access.finish()?;
    }
    let config = DumbbellConfig {
        left_hosts,
        right_hosts,
        forward,
        reverse,
        access_rate,
        access_delay,
        access_queue,
    };
    config.validate().map_err(|error| match error {
        TopologyError::Invalid { field, rule } => ScenarioError::invalid_text(
            format!("{}.{}", fields.path(), field),
            rule,
            "a value that does not fit",
        ),
        other => ScenarioError::invalid_text(fields.path(), "a valid dumbbell", other.to_string()),
    })?;
    let mut queue_paths = vec![
        ("bottleneck".to_string(), format!("{bottleneck_path}.queue")),
        (
            "bottleneck_reverse".to_string(),
            format!("{reverse_path}.queue"),
        ),
    ];
    queue_paths.push(("*".into(), format!("{access_path}.queue")));
    Ok((TopologySpec::Dumbbell(Box::new(config)), queue_paths))
}

/// `access.rtt`: one RTT (fixed or random) every host pair draws, or a list with one per pair,
/// pair i taking the i-th. A list of another length than the pairs is refused here, naming both
/// counts; so is an entry whose smallest draw is below the bottleneck's round trip, naming its
/// index (a single RTT is checked by [`DumbbellConfig::validate`]).
fn parse_pair_rtt(
    access: &mut Fields<'_>,
    pairs: usize,
    forward: &LinkParams,
    reverse: &LinkParams,
) -> Result<Option<AccessDelay>, ScenarioError> {
    let path = access.child_path("rtt");
    let Some(value) = access.value("rtt") else {
        return Ok(None);
    };
    if !value.is_array() {
        return DurationDist::from_toml(value, &path).map(|rtt| Some(AccessDelay::PairRtt(rtt)));
    }
    let rtts: Vec<DurationDist> = Vec::from_toml(value, &path)?;
    if rtts.len() != pairs {
        return Err(ScenarioError::invalid_text(
            path,
            format!(
                "one RTT per host pair ({pairs} pair{})",
                if pairs == 1 { "" } else { "s" }
            ),
            format!("{} RTTs", rtts.len()),
        ));
    }
    let bottleneck = forward.delay + reverse.delay;
    if let Some(i) = rtts.iter().position(|rtt| rtt.min() < bottleneck) {
        return Err(ScenarioError::invalid_text(
            format!("{path}[{i}]"),
            format!("at least the bottleneck's round-trip delay ({bottleneck:?}) for every draw"),
            "a value that does not fit",
        ));
    }
    Ok(Some(AccessDelay::PairRttList(rtts)))
}

fn parse_parking_lot(fields: &mut Fields<'_>) -> Result<(TopologySpec, QueuePaths), ScenarioError> {
    let hops: usize = fields.required("hops", "the number of router-to-router hops")?;
    if hops == 0 || hops > MAX_HOPS {
        return Err(ScenarioError::invalid_text(
            fields.child_path("hops"),
            format!("between 1 and {MAX_HOPS} hops"),
            hops.to_string(),
        ));
    }
    let mut hop_table = required_table(fields, "hop", "a table with rate and delay")?;
    let hop = parse_link_params(&mut hop_table, None)?;
    let hop_path = hop_table.path().to_string();
    hop_table.finish()?;
    let mut config = ParkingLotConfig {
        hops,
        hop,
        access_rate_bps: DEFAULT_ACCESS_RATE_BPS,
        access_delay: Duration::ZERO,
        access_queue: QueueConfig::default(),
    };
    let mut access_path = fields.child_path("access");
    if let Some(mut access) = fields.table("access")? {
        access_path = access.path().to_string();
        let defaults = LinkParams {
            rate_bps: config.access_rate_bps,
            delay: config.access_delay,
            queue: QueueConfig::default(),
        };
        let params = parse_link_params(&mut access, Some(&defaults))?;
        access.finish()?;
        config.access_rate_bps = params.rate_bps;
        config.access_delay = params.delay;
        config.access_queue = params.queue;
    }
    let queue_paths = vec![
        ("hop".to_string(), format!("{hop_path}.queue")),
        ("*".to_string(), format!("{access_path}.queue")),
    ];
    Ok((TopologySpec::ParkingLot(Box::new(config)), queue_paths))
}

fn parse_graph(fields: &mut Fields<'_>) -> Result<(TopologySpec, QueuePaths), ScenarioError> {
    let names: Vec<String> = fields.required("nodes", "a list of node names")?;
    if names.len() > MAX_GRAPH_NODES {
        return Err(ScenarioError::invalid_text(
            fields.child_path("nodes"),
            format!("at most {MAX_GRAPH_NODES} nodes"),
            format!("{} nodes", names.len()),
        ));
    }
    let mut topology = Topology::new();
    for (i, name) in names.iter().enumerate() {
        if name.is_empty() {
            return Err(ScenarioError::invalid_text(
                format!("{}[{i}]", fields.child_path("nodes")),
                "a non-empty node name",
                "\"\"",
            ));
        }
        topology.add_node(name.clone()).map_err(|_| {
            ScenarioError::invalid_text(
                format!("{}[{i}]", fields.child_path("nodes")),
                "a name no other node has",
                format!("{name:?}"),
            )
        })?;
    }
    let mut queue_paths = QueuePaths::new();
    let node = |topology: &Topology, link: &Fields<'_>, key: &str, name: &str| {
        topology.node(name).ok_or_else(|| {
            ScenarioError::invalid_text(
                link.child_path(key),
                "the name of a node in topology.nodes",
                format!("{name:?}"),
            )
        })
    };
    for mut link in fields.tables("links")? {
        let from_name: String = link.required("from", "a node name")?;
        let to_name: String = link.required("to", "a node name")?;
        let from = node(&topology, &link, "from", &from_name)?;
        let to = node(&topology, &link, "to", &to_name)?;
        let duplex: bool = link.or("duplex", true)?;
        let name: Option<String> = link.optional("name")?;
        let params = parse_link_params(&mut link, None)?;
        let queue_path = link.child_path("queue");
        let link_path = link.path().to_string();
        link.finish()?;
        if from == to {
            return Err(ScenarioError::invalid_text(
                format!("{link_path}.to"),
                "a node other than `from`",
                format!("{to_name:?}"),
            ));
        }
        let ends = if duplex {
            vec![(from, to), (to, from)]
        } else {
            vec![(from, to)]
        };
        for (k, (a, b)) in ends.into_iter().enumerate() {
            let link_name = match (&name, k) {
                (Some(n), 0) => n.clone(),
                (Some(n), _) => format!("{n}_reverse"),
                (None, _) => format!("{}->{}", topology.node_name(a), topology.node_name(b)),
            };
            topology
                .add_link(LinkSpec {
                    name: link_name.clone(),
                    from: a,
                    to: b,
                    rate_bps: params.rate_bps,
                    delay: params.delay,
                    queue: params.queue.clone(),
                })
                .map_err(|error| {
                    ScenarioError::invalid_text(
                        link_path.clone(),
                        "a link with a unique name",
                        error.to_string(),
                    )
                })?;
            queue_paths.push((link_name, queue_path.clone()));
        }
    }
    for mut route in fields.tables("routes")? {
        let path: Vec<String> = route.required("path", "a list of node names")?;
        let at = route.child_path("path");
        route.finish()?;
        if path.len() < 2 {
            return Err(ScenarioError::invalid_text(
                at,
                "at least two nodes",
                format!("{} nodes", path.len()),
            ));
        }
        let mut ids = Vec::with_capacity(path.len());
        for (i, name) in path.iter().enumerate() {
            ids.push(topology.node(name).ok_or_else(|| {
                ScenarioError::invalid_text(
                    format!("{at}[{i}]"),
                    "the name of a node in topology.nodes",
                    format!("{name:?}"),
                )
            })?);
        }
        topology.add_route(&ids).map_err(|error| {
            ScenarioError::invalid_text(at, "a route along links", error.to_string())
        })?;
    }
    Ok((TopologySpec::Graph(topology), queue_paths))
}
