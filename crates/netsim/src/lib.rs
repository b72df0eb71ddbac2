//! # netsim: a deterministic packet-level network simulator
//!
//! A run is a pure function of (scenario, seed): time is integer nanoseconds ([`tfrc::Time`]),
//! events run in (time, insertion) order, and every random component (a queue, a loss model, an
//! agent, a flow's start time, a host's access delay) draws from its own stream derived from the
//! seed and the component's stable name, so adding a flow leaves the others' draws alone.
//!
//! - [`topology`]: nodes, simplex links, static routes; dumbbell and parking-lot builders.
//! - [`queue`], [`loss`]: DropTail, RED as ns-2 implements it, Adaptive RED; loss models.
//! - [`agent`]: the interface protocols implement; CBR, the TCP family and GAIMD (docs/tcp.md),
//!   TFRC (docs/tfrc.md), TEAR (docs/tear.md).
//! - [`sim`]: the engine; [`monitor`] and [`results`]: what a run measures.
//! - [`scenario`]: TOML scenario files and [`scenario::run`].
//! - [`trace`]: pcap captures and ns-2 trace files of chosen links, written as the run goes.

pub mod agent;
pub mod dist;
pub mod event_queue;
mod host_jitter;
mod link;
pub mod loss;
pub mod monitor;
pub mod packet;
mod prefetch;
pub mod queue;
pub mod randvar;
pub mod results;
pub mod rng;
pub mod scenario;
pub mod serialization;
pub mod sim;
pub mod topology;
pub mod trace;

pub use tfrc::Time;
