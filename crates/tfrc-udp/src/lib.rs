//! # tfrc-udp: TFRC over real UDP sockets
//!
//! A [`UdpSender`] and a [`UdpReceiver`] that drive the sans-IO [`tfrc::Sender`] and
//! [`tfrc::Receiver`] over `std::net::UdpSocket`s, with the wire format of [`tfrc::wire`]. Each
//! is a single-threaded loop the caller runs (`run_for`/`run_until`), bounded in time, with a
//! handle to stop it from another thread. Linux only: pacing sleeps on a `timerfd` armed with
//! absolute `CLOCK_MONOTONIC` deadlines (tens of microseconds of wake-up error, against a poll
//! timeout's millisecond), through rustix's safe wrappers.
//!
//! For media: the sender's [`SenderHandle`] tells the application the allowed rate X (read it,
//! or subscribe to [`RateChange`]s), takes its payloads into a bounded queue (refusals counted),
//! and the receiver hands each payload over with its sequence number and loss information
//! ([`Delivery`]). [`Source::Greedy`] and [`Source::ConstantRate`] stand in for the application
//! in tests and measurements.
//!
//! Hostile input is counted and dropped ([`InputStats`]; the TFRC sender's own feedback
//! validation counts forged and replayed reports); when the receiver vanishes the sender follows
//! RFC 5348 §4.4 down to s/t_mbi, and resumes when a (possibly restarted) receiver reports.

pub mod clock;
pub mod error;
pub mod handle;
pub mod input;
pub mod options;
pub mod receiver;
pub mod samples;
pub mod sender;
pub mod timer;
pub mod waiter;
pub mod wake;

pub use error::TransportError;
pub use handle::{QueueError, RateChange, SenderHandle};
pub use input::InputStats;
pub use options::{OptionError, ReceiverOptions, SenderOptions, Source};
pub use receiver::{Delivery, ReceiverHandle, ReceiverReport, UdpReceiver};
pub use samples::{ReceiverSample, SenderSample};
pub use sender::{SenderReport, UdpSender};
