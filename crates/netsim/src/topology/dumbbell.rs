//! The dumbbell every paper uses: hosts on the left and on the right, each on its own access link
//! to a router, and one bottleneck between the two routers (floyd2000 §4, yang2001 §III,
//! rhee2005 §3).
//!
//! Node names: `router_left`, `router_right`, `left0`..`left{n-1}`, `right0`..`right{m-1}`.
//! Link names: `bottleneck` (left to right), `bottleneck_reverse`, and for each host the duplex
//! pair `left3->router_left` / `router_left->left3` (and likewise on the right).
//!
//! Access links may differ per host: their rate and delay are drawn from each host's own stream
//! (`dumbbell:left3`), or, given a target RTT distribution, each host pair i (`left{i}` with
//! `right{i}`) draws one RTT from `dumbbell:pair{i}` and its four access links share the part
//! of it the bottleneck does not cover. A list of RTT distributions gives pair i the i-th one
//! (a study of 20 ms against 200 ms flows on one bottleneck), drawn from the same stream.

use std::time::Duration;

use super::{LinkSpec, Topology, TopologyError};
use crate::dist::{DurationDist, RateDist};
use crate::queue::QueueConfig;
use crate::rng::stream;

/// Rate, delay and queue of one direction of a link.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkParams {
    /// Rate in bits per second.
    pub rate_bps: u64,
    /// Propagation delay.
    pub delay: Duration,
    /// Output queue.
    pub queue: QueueConfig,
}

/// How the access links' propagation delays are set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AccessDelay {
    /// Each host's access link (both directions) gets its own draw.
    PerHost(DurationDist),
    /// Each host pair draws a round-trip propagation time; its four access links (two hosts, two
    /// directions) each get (RTT - forward bottleneck delay - reverse bottleneck delay) / 4.
    /// Needs as many hosts on each side, and RTTs no smaller than the bottleneck's round trip.
    PairRtt(DurationDist),
    /// As [`PairRtt`](AccessDelay::PairRtt), but pair i draws its RTT from the i-th
    /// distribution: exactly one per host pair, so that each pair's RTT is the one the list
    /// names for it.
    PairRttList(Vec<DurationDist>),
}

impl AccessDelay {
    /// The RTT distribution of host pair `i`, for the per-pair variants (`None` for
    /// [`PerHost`](AccessDelay::PerHost), or past the end of a list).
    fn pair_rtt(&self, i: usize) -> Option<DurationDist> {
        match self {
            AccessDelay::PerHost(_) => None,
            AccessDelay::PairRtt(rtt) => Some(*rtt),
            AccessDelay::PairRttList(rtts) => rtts.get(i).copied(),
        }
    }
}

/// The parameters of a dumbbell.
#[derive(Clone, Debug, PartialEq)]
pub struct DumbbellConfig {
    /// Hosts on the left (senders, by convention).
    pub left_hosts: usize,
    /// Hosts on the right.
    pub right_hosts: usize,
    /// The bottleneck, left to right.
    pub forward: LinkParams,
    /// The bottleneck, right to left.
    pub reverse: LinkParams,
    /// Access link rates.
    pub access_rate: RateDist,
    /// Access link delays.
    pub access_delay: AccessDelay,
    /// Access link queues (ns-2's default DropTail when unsaid).
    pub access_queue: QueueConfig,
}

impl DumbbellConfig {
    /// Checks the parameters that do not depend on the draws.
    pub fn validate(&self) -> Result<(), TopologyError> {
        if self.left_hosts == 0 || self.right_hosts == 0 {
            return Err(TopologyError::Invalid {
                field: "hosts",
                rule: "at least 1 on each side".into(),
            });
        }
        if self.access_rate.min() == 0 {
            return Err(TopologyError::Invalid {
                field: "access.rate",
                rule: "above 0 b/s".into(),
            });
        }
        if matches!(self.access_delay, AccessDelay::PerHost(_)) {
            return Ok(());
        }
        if self.left_hosts != self.right_hosts {
            return Err(TopologyError::Invalid {
                field: "access.rtt",
                rule: "used with as many hosts on the left as on the right".into(),
            });
        }
        if let AccessDelay::PairRttList(rtts) = &self.access_delay {
            if rtts.len() != self.left_hosts {
                return Err(TopologyError::Invalid {
                    field: "access.rtt",
                    rule: format!("one RTT per host pair ({})", self.left_hosts),
                });
            }
        }
        let bottleneck = self.forward.delay + self.reverse.delay;
        for i in 0..self.left_hosts {
            if self
                .access_delay
                .pair_rtt(i)
                .is_some_and(|rtt| rtt.min() < bottleneck)
            {
                return Err(TopologyError::Invalid {
                    field: "access.rtt",
                    rule: format!(
                        "at least the bottleneck's round-trip delay ({bottleneck:?}) for every draw"
                    ),
                });
            }
        }
        Ok(())
    }

    /// Builds the topology, drawing the per-host values from streams of `seed`.
    pub fn build(&self, seed: u64) -> Result<Topology, TopologyError> {
        self.validate()?;
        let mut t = Topology::new();
        let router_left = t.add_node("router_left")?;
        let router_right = t.add_node("router_right")?;
        for (from, to, params, name) in [
            (router_left, router_right, &self.forward, "bottleneck"),
            (
                router_right,
                router_left,
                &self.reverse,
                "bottleneck_reverse",
            ),
        ] {
            t.add_link(LinkSpec {
                name: name.into(),
                from,
                to,
                rate_bps: params.rate_bps,
                delay: params.delay,
                queue: params.queue.clone(),
            })?;
        }
        let pair_delays: Vec<Duration> = (0..self.left_hosts)
            .map_while(|i| self.access_delay.pair_rtt(i).map(|rtt| (i, rtt)))
            .map(|(i, rtt)| {
                let drawn = rtt.sample(&mut stream(seed, &format!("dumbbell:pair{i}")));
                drawn.saturating_sub(self.forward.delay + self.reverse.delay) / 4
            })
            .collect();
        for (side, hosts, router) in [
            ("left", self.left_hosts, router_left),
            ("right", self.right_hosts, router_right),
        ] {
            for i in 0..hosts {
                let name = format!("{side}{i}");
                let mut rng = stream(seed, &format!("dumbbell:{name}"));
                let rate = self.access_rate.sample(&mut rng);
                let delay = match &self.access_delay {
                    AccessDelay::PerHost(dist) => dist.sample(&mut rng),
                    _ => pair_delays.get(i).copied().unwrap_or_default(),
                };
                let host = t.add_node(name)?;
                t.add_duplex(host, router, rate, delay, &self.access_queue)?;
            }
        }
        Ok(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::LinkId;

    fn config(access_delay: AccessDelay) -> DumbbellConfig {
        let bottleneck = LinkParams {
            rate_bps: 15_000_000,
            delay: Duration::from_millis(20),
            queue: QueueConfig::default(),
        };
        DumbbellConfig {
            left_hosts: 4,
            right_hosts: 4,
            forward: bottleneck.clone(),
            reverse: bottleneck,
            access_rate: RateDist::Fixed(100_000_000),
            access_delay,
            access_queue: QueueConfig::default(),
        }
    }

    fn rtt(t: &Topology, i: usize) -> Duration {
        let routes = t.routes();
        let l = t.node(&format!("left{i}")).unwrap();
        let r = t.node(&format!("right{i}")).unwrap();
        let there = routes.path(t, l, r).unwrap();
        let back = routes.path(t, r, l).unwrap();
        there.iter().chain(&back).map(|&id| t.link(id).delay).sum()
    }

    #[test]
    fn pair_rtts_follow_the_target_distribution() {
        let target = DurationDist::Uniform {
            low: Duration::from_millis(80),
            high: Duration::from_millis(120),
        };
        let t = config(AccessDelay::PairRtt(target)).build(7).unwrap();
        assert_eq!(t.nodes().len(), 10);
        assert_eq!(t.links().len(), 2 + 16);
        assert_eq!(t.link_named("bottleneck"), Some(LinkId(0)));
        let rtts: Vec<Duration> = (0..4).map(|i| rtt(&t, i)).collect();
        for r in &rtts {
            // Each of the four access delays is rounded down to the nanosecond.
            assert!(*r >= Duration::from_nanos(80_000_000 - 4));
            assert!(*r <= Duration::from_millis(120));
        }
        assert!(rtts.windows(2).any(|w| w[0] != w[1]));
        assert_eq!(config(AccessDelay::PairRtt(target)).build(7).unwrap(), t);
        assert_ne!(config(AccessDelay::PairRtt(target)).build(8).unwrap(), t);
    }

    #[test]
    fn per_host_delays_are_drawn_per_host() {
        let dist = DurationDist::Uniform {
            low: Duration::from_millis(1),
            high: Duration::from_millis(3),
        };
        let t = config(AccessDelay::PerHost(dist)).build(1).unwrap();
        let l0 = t.link(t.link_named("left0->router_left").unwrap()).delay;
        let back = t.link(t.link_named("router_left->left0").unwrap()).delay;
        assert_eq!(l0, back);
        assert!((Duration::from_millis(1)..=Duration::from_millis(3)).contains(&l0));
        // Adding hosts leaves the existing hosts' draws alone.
        let mut bigger = config(AccessDelay::PerHost(dist));
        bigger.left_hosts = 6;
        let t2 = bigger.build(1).unwrap();
        assert_eq!(
            t2.link(t2.link_named("left0->router_left").unwrap()).delay,
            l0
        );
    }

    #[test]
    fn impossible_parameters_are_refused() {
        let short = DurationDist::Fixed(Duration::from_millis(30));
        assert!(matches!(
            config(AccessDelay::PairRtt(short)).build(1),
            Err(TopologyError::Invalid {
                field: "access.rtt",
                ..
            })
        ));
        let mut lopsided = config(AccessDelay::PairRtt(DurationDist::Fixed(
            Duration::from_millis(100),
        )));
        lopsided.right_hosts = 3;
        assert!(lopsided.build(1).is_err());
        let mut empty = config(AccessDelay::PerHost(DurationDist::Fixed(Duration::ZERO)));
        empty.left_hosts = 0;
        assert!(empty.build(1).is_err());
    }
}
