//! The network graph: named nodes joined by simplex links (a duplex link is two), each with a
//! rate, a propagation delay and an output queue; plus the builders the papers' experiments use
//! (the dumbbell and the parking lot) and static routing over any graph ([`Routes`]).
//!
//! A [`Topology`] is plain, validated data; the simulator turns each [`LinkSpec`] into a running
//! link. Node and link names are unique, so scenario files and results can refer to them.

pub mod dumbbell;
pub mod parking_lot;
pub mod routing;

use std::collections::HashMap;
use std::fmt;
use std::time::Duration;

use crate::packet::NodeId;
use crate::queue::QueueConfig;

pub use dumbbell::{AccessDelay, DumbbellConfig, LinkParams};
pub use parking_lot::ParkingLotConfig;
pub use routing::Routes;

/// A link's index in its topology.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LinkId(pub u32);

/// A simplex point-to-point link: packets queue at `from`, are serialized at `rate_bps` and
/// arrive at `to` after `delay`.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkSpec {
    /// Unique name ("bottleneck", "left3->router_left").
    pub name: String,
    /// The transmitting node.
    pub from: NodeId,
    /// The receiving node.
    pub to: NodeId,
    /// Transmission rate in bits per second (above 0).
    pub rate_bps: u64,
    /// Propagation delay.
    pub delay: Duration,
    /// The output queue at `from`.
    pub queue: QueueConfig,
}

/// Why a topology or a route was refused (a configuration error).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TopologyError {
    /// Two nodes share a name.
    DuplicateNode(String),
    /// Two links share a name.
    DuplicateLink(String),
    /// A name that is not a node of the topology.
    UnknownNode(String),
    /// A link's rate is 0 b/s.
    ZeroRate(String),
    /// A link from a node to itself.
    SelfLoop(String),
    /// An explicit route steps between two nodes that no link joins.
    NoLink {
        /// The node the step leaves.
        from: String,
        /// The node the step should reach.
        to: String,
    },
    /// An explicit route passes the same node twice.
    RouteRevisits(String),
    /// No path leads from one node to the other.
    Unreachable {
        /// Where the path starts.
        from: String,
        /// Where it should end.
        to: String,
    },
    /// A builder parameter is out of range.
    Invalid {
        /// The parameter.
        field: &'static str,
        /// What it must be.
        rule: String,
    },
}

impl fmt::Display for TopologyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TopologyError::DuplicateNode(name) => write!(f, "two nodes are named {name:?}"),
            TopologyError::DuplicateLink(name) => write!(f, "two links are named {name:?}"),
            TopologyError::UnknownNode(name) => write!(f, "no node is named {name:?}"),
            TopologyError::ZeroRate(name) => write!(f, "link {name:?} has a rate of 0 b/s"),
            TopologyError::SelfLoop(name) => write!(f, "link {name:?} joins a node to itself"),
            TopologyError::RouteRevisits(name) => {
                write!(f, "the route passes node {name:?} twice")
            }
            TopologyError::NoLink { from, to } => {
                write!(f, "no link leads from {from:?} to {to:?}")
            }
            TopologyError::Unreachable { from, to } => {
                write!(f, "no route leads from {from:?} to {to:?}")
            }
            TopologyError::Invalid { field, rule } => write!(f, "{field} must be {rule}"),
        }
    }
}

impl std::error::Error for TopologyError {}

/// Nodes, links and explicit routes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Topology {
    nodes: Vec<String>,
    links: Vec<LinkSpec>,
    explicit_routes: Vec<Vec<NodeId>>,
    /// Node ids by name, so adding and finding nodes does not scan them all (a 2048-flow
    /// dumbbell has 4098 nodes).
    node_ids: HashMap<String, NodeId>,
    /// Link ids by name, for the same reason.
    link_ids: HashMap<String, LinkId>,
}

impl Topology {
    /// An empty topology.
    pub fn new() -> Topology {
        Topology::default()
    }

    /// Adds a node named `name`.
    pub fn add_node(&mut self, name: impl Into<String>) -> Result<NodeId, TopologyError> {
        let name = name.into();
        if self.node(&name).is_some() {
            return Err(TopologyError::DuplicateNode(name));
        }
        let id = NodeId(self.nodes.len() as u32);
        self.node_ids.insert(name.clone(), id);
        self.nodes.push(name);
        Ok(id)
    }

    /// Adds a simplex link.
    pub fn add_link(&mut self, spec: LinkSpec) -> Result<LinkId, TopologyError> {
        let known = |id: NodeId| (id.0 as usize) < self.nodes.len();
        if !known(spec.from) || !known(spec.to) {
            let missing = if known(spec.from) { spec.to } else { spec.from };
            return Err(TopologyError::UnknownNode(format!("#{}", missing.0)));
        }
        if spec.rate_bps == 0 {
            return Err(TopologyError::ZeroRate(spec.name));
        }
        if spec.from == spec.to {
            return Err(TopologyError::SelfLoop(spec.name));
        }
        if self.link_named(&spec.name).is_some() {
            return Err(TopologyError::DuplicateLink(spec.name));
        }
        let id = LinkId(self.links.len() as u32);
        self.link_ids.insert(spec.name.clone(), id);
        self.links.push(spec);
        Ok(id)
    }

    /// Adds a link each way between `a` and `b`, named "a->b" and "b->a", with the same rate,
    /// delay and queue discipline (ns-2 `duplex-link`).
    pub fn add_duplex(
        &mut self,
        a: NodeId,
        b: NodeId,
        rate_bps: u64,
        delay: Duration,
        queue: &QueueConfig,
    ) -> Result<(LinkId, LinkId), TopologyError> {
        let forward = self.add_simplex(a, b, rate_bps, delay, queue)?;
        let backward = self.add_simplex(b, a, rate_bps, delay, queue)?;
        Ok((forward, backward))
    }

    /// Adds one link named "from->to".
    pub fn add_simplex(
        &mut self,
        from: NodeId,
        to: NodeId,
        rate_bps: u64,
        delay: Duration,
        queue: &QueueConfig,
    ) -> Result<LinkId, TopologyError> {
        let name = format!("{}->{}", self.node_name(from), self.node_name(to));
        self.add_link(LinkSpec {
            name,
            from,
            to,
            rate_bps,
            delay,
            queue: queue.clone(),
        })
    }

    /// Pins the route toward the path's last node: each node on `path` forwards packets for that
    /// destination to the next node on it (overriding shortest-path routing there). A route may
    /// not pass a node twice; routes applied this way can never form a forwarding loop.
    pub fn add_route(&mut self, path: &[NodeId]) -> Result<(), TopologyError> {
        for (i, node) in path.iter().enumerate() {
            if path[..i].contains(node) {
                return Err(TopologyError::RouteRevisits(
                    self.node_name(*node).to_string(),
                ));
            }
        }
        for step in path.windows(2) {
            if self.link_between(step[0], step[1]).is_none() {
                return Err(TopologyError::NoLink {
                    from: self.node_name(step[0]).to_string(),
                    to: self.node_name(step[1]).to_string(),
                });
            }
        }
        if path.len() >= 2 {
            self.explicit_routes.push(path.to_vec());
        }
        Ok(())
    }

    /// The node named `name`.
    pub fn node(&self, name: &str) -> Option<NodeId> {
        self.node_ids.get(name).copied()
    }

    /// A node's name ("#n" for an id outside the topology).
    pub fn node_name(&self, id: NodeId) -> &str {
        self.nodes.get(id.0 as usize).map_or("#?", String::as_str)
    }

    /// Node names, indexed by [`NodeId`].
    pub fn nodes(&self) -> &[String] {
        &self.nodes
    }

    /// The links, indexed by [`LinkId`].
    pub fn links(&self) -> &[LinkSpec] {
        &self.links
    }

    /// The link named `name`.
    pub fn link_named(&self, name: &str) -> Option<LinkId> {
        self.link_ids.get(name).copied()
    }

    /// A link's spec.
    pub fn link(&self, id: LinkId) -> &LinkSpec {
        &self.links[id.0 as usize]
    }

    /// The first link (lowest id) from `from` to `to`.
    pub fn link_between(&self, from: NodeId, to: NodeId) -> Option<LinkId> {
        self.links
            .iter()
            .position(|l| l.from == from && l.to == to)
            .map(|i| LinkId(i as u32))
    }

    /// Renames a link (builders name their special links, e.g. "bottleneck").
    pub fn rename_link(&mut self, id: LinkId, name: &str) -> Result<(), TopologyError> {
        if self.link_named(name).is_some_and(|other| other != id) {
            return Err(TopologyError::DuplicateLink(name.to_string()));
        }
        let old = std::mem::replace(&mut self.links[id.0 as usize].name, name.to_string());
        self.link_ids.remove(&old);
        self.link_ids.insert(name.to_string(), id);
        Ok(())
    }

    /// The explicit routes, in the order given.
    pub fn explicit_routes(&self) -> &[Vec<NodeId>] {
        &self.explicit_routes
    }

    /// Static routes: shortest paths in hops, then the explicit routes on top.
    pub fn routes(&self) -> Routes {
        Routes::compute(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_links_checked() {
        let mut t = Topology::new();
        let a = t.add_node("a").unwrap();
        let b = t.add_node("b").unwrap();
        assert_eq!(
            t.add_node("a"),
            Err(TopologyError::DuplicateNode("a".into()))
        );
        let q = QueueConfig::default();
        let (ab, ba) = t.add_duplex(a, b, 1_000_000, Duration::ZERO, &q).unwrap();
        assert_eq!(t.link(ab).name, "a->b");
        assert_eq!(t.link(ba).name, "b->a");
        assert_eq!(t.link_between(b, a), Some(ba));
        assert!(matches!(
            t.add_simplex(a, b, 1, Duration::ZERO, &q),
            Err(TopologyError::DuplicateLink(_))
        ));
        assert!(matches!(
            t.add_simplex(a, a, 1, Duration::ZERO, &q),
            Err(TopologyError::SelfLoop(_))
        ));
        let c = t.add_node("c").unwrap();
        assert!(matches!(
            t.add_simplex(a, c, 0, Duration::ZERO, &q),
            Err(TopologyError::ZeroRate(_))
        ));
        assert_eq!(
            t.add_route(&[a, c]),
            Err(TopologyError::NoLink {
                from: "a".into(),
                to: "c".into()
            })
        );
        t.rename_link(ab, "main").unwrap();
        assert_eq!(t.link_named("main"), Some(ab));
        assert!(t.rename_link(ba, "main").is_err());
        assert_eq!(
            TopologyError::Unreachable {
                from: "a".into(),
                to: "c".into()
            }
            .to_string(),
            "no route leads from \"a\" to \"c\""
        );
    }
}
