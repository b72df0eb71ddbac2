//! # testbed: a user-space link emulator over TUN devices
//!
//! Floyd et al. 2000 ("Equation-based congestion control for unicast applications", §4.3)
//! tested TFRC against real TCP stacks through Dummynet. This crate is a Dummynet-like pipe for
//! machines without netem or kernel RED: a relay holds a TUN device in each of two network
//! namespaces and forwards IP packets between them, each direction through a Bernoulli loss, a
//! queue (netsim's DropTail or RED, the very code the simulator runs), a transmitter at a fixed
//! rate and a propagation delay. See docs/testbed.md.
//!
//! - [`config`]: the relay's TOML configuration (units and queue tables as in scenario files).
//! - [`pipe`]: one direction, sans-IO, in intended time.
//! - [`relay`]: the `ppoll` loop that drives two pipes from two [`tun`] devices.
//! - [`log`]: the capped binary per-packet log; [`lateness`]: how late deliveries were.
//! - [`ip`]: flow 5-tuples and ECN marking.

pub mod config;
pub mod ip;
pub mod lateness;
pub mod log;
pub mod pipe;
pub mod relay;
pub mod tun;

pub use config::{DirectionConfig, RelayConfig};
pub use relay::{Relay, RelayReport, StopReason};
