//! # netsim: a deterministic packet-level network simulator
//!
//! The building blocks so far: the event queue, exact transmission times, the packet value
//! type, named random streams, the output queues (DropTail, RED as ns-2 implements it, Adaptive
//! RED) and the loss models (periodic, Bernoulli, Gilbert-Elliott, list, schedule). The engine
//! loop, links, topologies, agents, monitors and scenario files come next. Time is integer
//! nanoseconds ([`tfrc::Time`]); every random component draws from its own stream derived from
//! the scenario seed and a stable name, so a run is a pure function of (scenario, seed).

pub mod event_queue;
pub mod loss;
pub mod monitor;
pub mod packet;
pub mod queue;
pub mod rng;
pub mod scenario;
pub mod serialization;

pub use tfrc::Time;
