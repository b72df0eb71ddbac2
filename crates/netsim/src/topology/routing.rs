//! Static routing: a next-hop table per (node, destination), computed once before the run.
//!
//! Shortest paths count hops, as ns-2's default static routing does (every link costs 1). Ties
//! break deterministically: a breadth-first search from each destination over incoming links in
//! link-id order keeps the first link that reaches a node. Explicit routes are applied afterwards,
//! in the order given, and override the table for their destination at each node they pass.

use std::collections::VecDeque;

use super::{LinkId, Topology, TopologyError};
use crate::packet::NodeId;

const NO_ROUTE: u32 = u32::MAX;

/// The next-hop table: for each node and destination, the link to send on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Routes {
    nodes: usize,
    next: Vec<u32>,
}

impl Routes {
    /// Shortest-hop routes of `topology` with its explicit routes applied on top.
    pub fn compute(topology: &Topology) -> Routes {
        let nodes = topology.nodes().len();
        let mut incoming: Vec<Vec<(NodeId, LinkId)>> = vec![Vec::new(); nodes];
        for (index, link) in topology.links().iter().enumerate() {
            incoming[link.to.0 as usize].push((link.from, LinkId(index as u32)));
        }
        let mut next = vec![NO_ROUTE; nodes * nodes];
        let mut visited = vec![false; nodes];
        let mut frontier = VecDeque::new();
        for dst in 0..nodes {
            visited.fill(false);
            visited[dst] = true;
            frontier.clear();
            frontier.push_back(dst);
            while let Some(node) = frontier.pop_front() {
                for &(from, link) in &incoming[node] {
                    let from = from.0 as usize;
                    if !visited[from] {
                        visited[from] = true;
                        next[from * nodes + dst] = link.0;
                        frontier.push_back(from);
                    }
                }
            }
        }
        let mut routes = Routes { nodes, next };
        for path in topology.explicit_routes() {
            let dst = *path
                .last()
                .expect("explicit routes have at least two nodes");
            for step in path.windows(2) {
                if let Some(link) = topology.link_between(step[0], step[1]) {
                    routes.next[step[0].0 as usize * nodes + dst.0 as usize] = link.0;
                }
            }
        }
        routes
    }

    /// The link a packet at `at` for `dst` leaves on; `None` when `at == dst` or no route exists.
    #[inline]
    pub fn next_hop(&self, at: NodeId, dst: NodeId) -> Option<LinkId> {
        let entry = *self.next.get(at.0 as usize * self.nodes + dst.0 as usize)?;
        (entry != NO_ROUTE && at != dst).then_some(LinkId(entry))
    }

    /// The links from `from` to `to`, or why there is none (no route, or explicit routes that
    /// loop). An empty path when `from == to`.
    pub fn path(
        &self,
        topology: &Topology,
        from: NodeId,
        to: NodeId,
    ) -> Result<Vec<LinkId>, TopologyError> {
        let unreachable = || TopologyError::Unreachable {
            from: topology.node_name(from).to_string(),
            to: topology.node_name(to).to_string(),
        };
        let mut path = Vec::new();
        let mut at = from;
        while at != to {
            let link = self.next_hop(at, to).ok_or_else(unreachable)?;
            path.push(link);
            if path.len() > self.nodes {
                return Err(unreachable());
            }
            at = topology.link(link).to;
        }
        Ok(path)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::queue::QueueConfig;

    /// a - b - c - d in a line, plus a shortcut a - d.
    fn line_with_shortcut() -> (Topology, [NodeId; 4]) {
        let mut t = Topology::new();
        let ids = ["a", "b", "c", "d"].map(|n| t.add_node(n).unwrap());
        let q = QueueConfig::default();
        for pair in ids.windows(2) {
            t.add_duplex(pair[0], pair[1], 1_000_000, Duration::from_millis(1), &q)
                .unwrap();
        }
        t.add_duplex(ids[0], ids[3], 1_000_000, Duration::from_millis(1), &q)
            .unwrap();
        (t, ids)
    }

    #[test]
    fn shortest_hops_then_explicit_override() {
        let (mut t, [a, b, c, d]) = line_with_shortcut();
        let routes = t.routes();
        let names = |t: &Topology, p: Vec<LinkId>| -> Vec<String> {
            p.into_iter().map(|l| t.link(l).name.clone()).collect()
        };
        assert_eq!(names(&t, routes.path(&t, a, d).unwrap()), ["a->d"]);
        assert_eq!(names(&t, routes.path(&t, b, d).unwrap()), ["b->c", "c->d"]);
        assert_eq!(routes.path(&t, c, c).unwrap(), []);
        assert_eq!(routes.next_hop(d, d), None);
        t.add_route(&[a, b, c, d]).unwrap();
        let routes = t.routes();
        assert_eq!(
            names(&t, routes.path(&t, a, d).unwrap()),
            ["a->b", "b->c", "c->d"]
        );
        // Other destinations keep their shortest paths.
        assert_eq!(names(&t, routes.path(&t, d, a).unwrap()), ["d->a"]);
    }

    #[test]
    fn unreachable_and_revisiting_routes_are_errors() {
        let (mut t, [a, b, c, d]) = line_with_shortcut();
        let island = t.add_node("island").unwrap();
        let routes = t.routes();
        assert_eq!(
            routes.path(&t, a, island),
            Err(TopologyError::Unreachable {
                from: "a".into(),
                to: "island".into()
            })
        );
        assert_eq!(
            t.add_route(&[a, b, a, d]),
            Err(TopologyError::RouteRevisits("a".into()))
        );
        // Later routes win where they overlap earlier ones, and never loop.
        t.add_route(&[c, b, a, d]).unwrap();
        t.add_route(&[a, b, c, d]).unwrap();
        let routes = t.routes();
        for from in [a, b, c] {
            let path = routes.path(&t, from, d).unwrap();
            assert_eq!(t.link(*path.last().unwrap()).name, "c->d");
        }
    }
}
