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
//!
//! ```
//! use std::time::Duration;
//! use tfrc::TfrcConfig;
//! use tfrc_udp::{ReceiverOptions, SenderOptions, UdpReceiver, UdpSender};
//!
//! let mut rx = UdpReceiver::bind("127.0.0.1:0", ReceiverOptions::new(TfrcConfig::rfc5348()))?;
//! let to = rx.local_addr()?;
//! let rx = std::thread::spawn(move || {
//!     let mut got = Vec::new();
//!     rx.run_for(Duration::from_millis(300), &mut |d| got.push((d.seq, d.payload.to_vec())))
//!         .map(|()| got)
//! });
//! let mut tx = UdpSender::bind("127.0.0.1:0", to, SenderOptions::new(TfrcConfig::rfc5348()))?;
//! let app = tx.handle();
//! app.send(b"frame 0".to_vec())?;
//! tx.run_for(Duration::from_millis(200))?;
//! let got = rx.join().unwrap()?;
//! assert_eq!(got, vec![(0, b"frame 0".to_vec())]);
//! assert_eq!(tx.report().tfrc.feedback.accepted, 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod background;
pub mod clock;
pub mod error;
#[cfg(feature = "tracing")]
pub mod event_log;
mod events;
pub mod handle;
pub mod input;
pub mod options;
pub mod queue;
pub mod receiver;
pub mod samples;
pub mod sender;
pub mod timer;
pub mod waiter;
pub mod wake;

pub use background::{BackgroundReceiver, BackgroundSender, ReceivedPayload};
pub use error::TransportError;
pub use handle::{RateChange, SenderHandle};
pub use input::InputStats;
pub use options::{OptionError, ReceiverOptions, SenderOptions, Source};
pub use queue::{
    Expired, QueueError, QueueStats, SendOptions, DEAD_GROUPS_REMEMBERED, PRIORITY_LEVELS,
};
pub use receiver::{Delivery, ReceiverHandle, ReceiverReport, UdpReceiver};
pub use samples::{ReceiverSample, SenderSample};
pub use sender::{SenderReport, UdpSender};

/// The README's examples, compiled and run as doctests so that they cannot drift from the API.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
