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

/// One node's next hops. Most nodes of a large topology (hosts with a single link) send every
/// packet the same way, so such a row is one value, not one per destination: the table of a
/// 2048-flow dumbbell is a few kilobytes instead of nodes² entries (67 MB at 4098 nodes).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Row {
    /// The same entry (a link, or [`NO_ROUTE`]) for every destination but the node itself;
    /// `None` while no destination was seen.
    Same(Option<u32>),
    /// One entry per destination.
    Table(Vec<u32>),
}

impl Row {
    /// The entry for destination `dst` (meaningless for the row's own node).
    fn get(&self, dst: usize) -> u32 {
        match self {
            Row::Same(entry) => entry.unwrap_or(NO_ROUTE),
            Row::Table(entries) => entries.get(dst).copied().unwrap_or(NO_ROUTE),
        }
    }

    /// Sets the entry for `dst` in the row of node `own` in a table of `nodes` destinations.
    fn set(&mut self, own: usize, dst: usize, nodes: usize, entry: u32) {
        if dst == own {
            return;
        }
        match self {
            Row::Same(same) => match *same {
                None => *same = Some(entry),
                Some(value) if value == entry => {}
                Some(value) => {
                    let mut entries = vec![value; nodes];
                    entries[own] = NO_ROUTE;
                    entries[dst] = entry;
                    *self = Row::Table(entries);
                }
            },
            Row::Table(entries) => entries[dst] = entry,
        }
    }
}

/// The next-hop table: for each node and destination, the link to send on (rows that are the
/// same for every destination kept as one value).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Routes {
    nodes: usize,
    rows: Vec<Row>,
}

/// Fills `entry[node]` with the link `node` sends on toward `dst` (or [`NO_ROUTE`]): a
/// breadth-first search from `dst` over incoming links in link-id order, the first link that
/// reaches a node kept.
fn shortest_hops_to(
    dst: usize,
    incoming: &[Vec<(NodeId, LinkId)>],
    entry: &mut [u32],
    frontier: &mut VecDeque<usize>,
) {
    entry.fill(NO_ROUTE);
    frontier.clear();
    frontier.push_back(dst);
    while let Some(node) = frontier.pop_front() {
        for &(from, link) in &incoming[node] {
            let from = from.0 as usize;
            if from != dst && entry[from] == NO_ROUTE {
                entry[from] = link.0;
                frontier.push_back(from);
            }
        }
    }
}

impl Routes {
    /// Shortest-hop routes of `topology` with its explicit routes applied on top.
    pub fn compute(topology: &Topology) -> Routes {
        let nodes = topology.nodes().len();
        let mut incoming: Vec<Vec<(NodeId, LinkId)>> = vec![Vec::new(); nodes];
        for (index, link) in topology.links().iter().enumerate() {
            incoming[link.to.0 as usize].push((link.from, LinkId(index as u32)));
        }
        let mut rows = vec![Row::Same(None); nodes];
        // A destination reached by one link only (a host behind its router) has the table of
        // that link's source, but for the source's own entry: the search from it steps to the
        // source first and goes on exactly as a search from the source would (module tests).
        // So the destinations behind one node share one search, done once: a dumbbell of
        // 4098 nodes needs 2 searches instead of 4098 (its start-up fell from 0.5 s to 0.1).
        let single_feed = |dst: usize| match incoming[dst].as_slice() {
            [(from, link)] if from.0 as usize != dst => Some((from.0 as usize, link.0)),
            _ => None,
        };
        let mut fed: Vec<Vec<(usize, u32)>> = vec![Vec::new(); nodes];
        for dst in 0..nodes {
            if let Some((feeder, link)) = single_feed(dst) {
                fed[feeder].push((dst, link));
            }
        }
        // One search's entry at every node, written into the rows per destination (so the
        // nodes x nodes table never exists at once).
        let mut entry = vec![NO_ROUTE; nodes];
        let mut frontier = VecDeque::new();
        for (source, feeds) in fed.iter().enumerate() {
            let searched = single_feed(source).is_none();
            if !searched && feeds.is_empty() {
                continue;
            }
            shortest_hops_to(source, &incoming, &mut entry, &mut frontier);
            if searched {
                for (node, row) in rows.iter_mut().enumerate() {
                    row.set(node, source, nodes, entry[node]);
                }
            }
            for &(dst, link) in feeds {
                for (node, row) in rows.iter_mut().enumerate() {
                    let value = if node == source { link } else { entry[node] };
                    row.set(node, dst, nodes, value);
                }
            }
        }
        let mut routes = Routes { nodes, rows };
        for path in topology.explicit_routes() {
            let dst = *path
                .last()
                .expect("explicit routes have at least two nodes");
            for step in path.windows(2) {
                if let Some(link) = topology.link_between(step[0], step[1]) {
                    let at = step[0].0 as usize;
                    routes.rows[at].set(at, dst.0 as usize, nodes, link.0);
                }
            }
        }
        routes
    }

    /// The link a packet at `at` for `dst` leaves on; `None` when `at == dst` or no route exists.
    #[inline]
    pub fn next_hop(&self, at: NodeId, dst: NodeId) -> Option<LinkId> {
        if dst.0 as usize >= self.nodes {
            return None;
        }
        let entry = self.rows.get(at.0 as usize)?.get(dst.0 as usize);
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

    use crate::topology::LinkSpec;
    use proptest::prelude::*;

    /// The next hops by one search per destination, as routing was computed before searches
    /// were shared between the destinations behind one node: the reference for the table.
    fn next_hops_one_search_each(t: &Topology) -> Vec<Vec<u32>> {
        let nodes = t.nodes().len();
        let mut incoming: Vec<Vec<(NodeId, LinkId)>> = vec![Vec::new(); nodes];
        for (index, link) in t.links().iter().enumerate() {
            incoming[link.to.0 as usize].push((link.from, LinkId(index as u32)));
        }
        let mut table = vec![vec![NO_ROUTE; nodes]; nodes];
        let (mut entry, mut frontier) = (vec![NO_ROUTE; nodes], VecDeque::new());
        for dst in 0..nodes {
            shortest_hops_to(dst, &incoming, &mut entry, &mut frontier);
            for (row, &value) in table.iter_mut().zip(&entry) {
                row[dst] = value;
            }
        }
        table
    }

    proptest! {
        /// Sharing one search among the destinations fed by one link gives every next hop
        /// that a search per destination gives, on any directed graph (leaves, chains of
        /// single feeds, parallel links, unreachable nodes).
        #[test]
        fn shared_searches_route_like_one_search_per_destination(
            nodes in 1usize..9,
            links in proptest::collection::vec((0usize..9, 0usize..9), 0..24),
        ) {
            let mut t = Topology::new();
            let ids: Vec<NodeId> = (0..nodes).map(|i| t.add_node(format!("n{i}")).unwrap()).collect();
            for (k, &(from, to)) in links.iter().enumerate() {
                let (from, to) = (from % nodes, to % nodes);
                if from == to {
                    continue;
                }
                t.add_link(LinkSpec {
                    name: format!("l{k}"),
                    from: ids[from],
                    to: ids[to],
                    rate_bps: 1_000_000,
                    delay: Duration::from_millis(1),
                    queue: QueueConfig::default(),
                })
                .unwrap();
            }
            let routes = t.routes();
            let reference = next_hops_one_search_each(&t);
            for at in 0..nodes {
                for dst in 0..nodes {
                    let expected = (at != dst && reference[at][dst] != NO_ROUTE)
                        .then_some(LinkId(reference[at][dst]));
                    prop_assert_eq!(routes.next_hop(ids[at], ids[dst]), expected, "{} -> {}", at, dst);
                }
            }
        }
    }

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
    fn single_link_nodes_keep_one_entry_and_route_like_a_full_table() {
        // A star: hub h with leaves l0..l4, plus an isolated node z no one reaches.
        let mut t = Topology::new();
        let hub = t.add_node("h").unwrap();
        let leaves: Vec<NodeId> = (0..5)
            .map(|i| t.add_node(format!("l{i}")).unwrap())
            .collect();
        let z = t.add_node("z").unwrap();
        let q = QueueConfig::default();
        for &leaf in &leaves {
            t.add_duplex(leaf, hub, 1_000_000, Duration::from_millis(1), &q)
                .unwrap();
        }
        let routes = t.routes();
        for &leaf in &leaves {
            // z is unreachable, so even a leaf's row needs a table; without z it would not.
            assert!(matches!(routes.rows[leaf.0 as usize], Row::Table(_)));
            let up = t.link_named(&format!("l{}->h", leaf.0 - 1)).unwrap();
            for &other in leaves.iter().filter(|&&o| o != leaf) {
                assert_eq!(routes.next_hop(leaf, other), Some(up));
            }
            assert_eq!(routes.next_hop(leaf, hub), Some(up));
            assert_eq!(routes.next_hop(leaf, leaf), None);
            assert_eq!(routes.next_hop(leaf, z), None);
        }
        assert_eq!(routes.next_hop(z, hub), None);
        assert_eq!(routes.rows[z.0 as usize], Row::Same(Some(NO_ROUTE)));
        let down = t.link_named("h->l3").unwrap();
        assert_eq!(routes.next_hop(hub, leaves[3]), Some(down));
        assert_eq!(routes.next_hop(hub, NodeId(99)), None);

        let mut star = Topology::new();
        let hub = star.add_node("h").unwrap();
        let a = star.add_node("a").unwrap();
        let b = star.add_node("b").unwrap();
        star.add_duplex(a, hub, 1_000_000, Duration::from_millis(1), &q)
            .unwrap();
        star.add_duplex(b, hub, 1_000_000, Duration::from_millis(1), &q)
            .unwrap();
        let routes = star.routes();
        let up = star.link_named("a->h").unwrap();
        assert_eq!(routes.rows[a.0 as usize], Row::Same(Some(up.0)));
        assert_eq!(routes.next_hop(a, b), Some(up));
        assert!(matches!(routes.rows[hub.0 as usize], Row::Table(_)));
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
