//! # tfrc: sans-IO TCP-Friendly Rate Control
//!
//! An implementation of TFRC as specified by RFC 5348 (the default), with a
//! [`TfrcConfig::floyd2000`] preset that reproduces ns-2.35's `Agent/TFRC`, the code behind
//! Floyd, Handley, Padhye and Widmer, "Equation-Based Congestion Control for Unicast
//! Applications" (SIGCOMM 2000) and the studies that followed it.
//!
//! The crate never reads a clock, does I/O, or draws randomness it was not handed. Every entry
//! point takes `now` as a [`Time`]; inputs are `handle_*`, outputs are polled (`poll_transmit`,
//! `poll_timeout`, `poll_feedback`). The simulator and the UDP driver are both short loops around
//! the same [`Sender`] and [`Receiver`]; [`harness`] is the smallest such loop, a scripted
//! channel with fixed delays and loss patterns used by the tests and by `tfrclab demo`.

pub mod config;
pub mod equation;
pub mod feedback;
pub mod harness;
pub mod loss_history;
pub mod packet;
pub mod real_host;
pub mod receiver;
pub mod sender;
pub mod time;
pub mod wire;

pub use config::{ConfigError, DataLimitedRule, TfrcConfig};
pub use feedback::{FeedbackError, FeedbackStats};
pub use packet::{DataHeader, Ecn, FeedbackHeader};
pub use receiver::{Receiver, ReceiverStats};
pub use sender::{Sender, SenderStats};
pub use time::Time;

/// The README's examples, compiled and run as doctests so that they cannot drift from the API.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
