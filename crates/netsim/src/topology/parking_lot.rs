//! The parking lot: a chain of routers `router0`..`router{hops}` joined by `hops` bottleneck
//! links, one long path across all of them and one cross path over each hop (the standard
//! multi-bottleneck topology; e.g. Floyd 1991, "Connections with multiple congested gateways").
//!
//! Node names: `router{i}`, `long_src` (at `router0`), `long_dst` (at `router{hops}`),
//! `cross_src{i}` (at `router{i}`) and `cross_dst{i}` (at `router{i+1}`) for each hop i.
//! Link names: `hop{i}` (router i to i + 1), `hop{i}_reverse`, and "a->b" for access links.

use std::time::Duration;

use super::dumbbell::LinkParams;
use super::{LinkSpec, Topology, TopologyError};
use crate::queue::QueueConfig;

/// The parameters of a parking lot.
#[derive(Clone, Debug, PartialEq)]
pub struct ParkingLotConfig {
    /// Number of router-to-router hops (at least 1).
    pub hops: usize,
    /// Each hop, in both directions.
    pub hop: LinkParams,
    /// Access link rate in bits per second.
    pub access_rate_bps: u64,
    /// Access link delay.
    pub access_delay: Duration,
    /// Access link queues.
    pub access_queue: QueueConfig,
}

impl ParkingLotConfig {
    /// Builds the topology (nothing is random).
    pub fn build(&self) -> Result<Topology, TopologyError> {
        if self.hops == 0 {
            return Err(TopologyError::Invalid {
                field: "hops",
                rule: "at least 1".into(),
            });
        }
        let mut t = Topology::new();
        let routers = (0..=self.hops)
            .map(|i| t.add_node(format!("router{i}")))
            .collect::<Result<Vec<_>, _>>()?;
        for i in 0..self.hops {
            for (from, to, name) in [
                (routers[i], routers[i + 1], format!("hop{i}")),
                (routers[i + 1], routers[i], format!("hop{i}_reverse")),
            ] {
                t.add_link(LinkSpec {
                    name,
                    from,
                    to,
                    rate_bps: self.hop.rate_bps,
                    delay: self.hop.delay,
                    queue: self.hop.queue.clone(),
                })?;
            }
        }
        let attach = |t: &mut Topology, host: String, router| {
            let host = t.add_node(host)?;
            t.add_duplex(
                host,
                router,
                self.access_rate_bps,
                self.access_delay,
                &self.access_queue,
            )
            .map(|_| ())
        };
        attach(&mut t, "long_src".into(), routers[0])?;
        attach(&mut t, "long_dst".into(), routers[self.hops])?;
        for i in 0..self.hops {
            attach(&mut t, format!("cross_src{i}"), routers[i])?;
            attach(&mut t, format!("cross_dst{i}"), routers[i + 1])?;
        }
        Ok(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_path_crosses_every_hop_and_cross_paths_one() {
        let config = ParkingLotConfig {
            hops: 3,
            hop: LinkParams {
                rate_bps: 10_000_000,
                delay: Duration::from_millis(10),
                queue: QueueConfig::default(),
            },
            access_rate_bps: 100_000_000,
            access_delay: Duration::from_millis(1),
            access_queue: QueueConfig::default(),
        };
        let t = config.build().unwrap();
        let routes = t.routes();
        let names = |from: &str, to: &str| -> Vec<String> {
            let path = routes
                .path(&t, t.node(from).unwrap(), t.node(to).unwrap())
                .unwrap();
            path.iter().map(|&l| t.link(l).name.clone()).collect()
        };
        assert_eq!(
            names("long_src", "long_dst"),
            [
                "long_src->router0",
                "hop0",
                "hop1",
                "hop2",
                "router3->long_dst"
            ]
        );
        assert_eq!(
            names("cross_src1", "cross_dst1"),
            ["cross_src1->router1", "hop1", "router2->cross_dst1"]
        );
        assert_eq!(names("long_dst", "long_src")[1], "hop2_reverse");
        let mut none = config;
        none.hops = 0;
        assert!(none.build().is_err());
    }
}
