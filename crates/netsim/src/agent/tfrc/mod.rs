//! TFRC over the simulated network: the `tfrc` crate's [`tfrc::Sender`] and [`tfrc::Receiver`]
//! driven as netsim agents (docs/tfrc.md, "In the simulator").
//!
//! The agents are the same short loop as [`tfrc::harness`], with the simulator's links in place
//! of the scripted channel: the [`TfrcSource`] sends a data packet whenever the sender's
//! schedule allows one and hands it every feedback packet; the [`TfrcSink`] hands the receiver
//! every data packet (with its size and ECN mark) and sends whatever feedback it yields. Packet
//! loss is simply non-arrival. Sizes on the wire are the configured sizes, headers included: no
//! header is added on top of `size_bytes` or `feedback_size_bytes` (as in ns-2, whose
//! `Agent/TFRC` packets are `packetSize_` bytes and its reports 40 bytes).

mod sink;
mod source;

use std::fmt;
use std::time::Duration;

use tfrc::{ConfigError, TfrcConfig};

use crate::serialization::transmission_time;

pub use sink::TfrcSink;
pub use source::TfrcSource;

/// The TFRC presets by name, in the order scenario files list them (`TfrcConfig::preset`).
pub const PRESETS: &[&str] = &["rfc5348", "floyd2000"];

/// Where the source's data comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TfrcApplication {
    /// Always has data: every send opportunity is used (ns-2 `Agent/TFRC` with `SndrType_` 0).
    Greedy,
    /// Data arrives as a constant-bit-rate stream of `size_bytes` packets into a send buffer,
    /// the first at the application's start; a send opportunity with an empty buffer makes the
    /// sender data-limited (RFC 5348 §4.4, §8; ns-2 `SndrType_` 1 fed by an application).
    Limited {
        /// The application's rate in bits per second, above 0.
        rate_bps: u64,
    },
}

/// A TFRC flow's parameters. `Default` is RFC 5348 with 1000-byte data packets and 40-byte
/// feedback, greedy, without ECN.
#[derive(Clone, Debug, PartialEq)]
pub struct TfrcAgentConfig {
    /// The preset the protocol options started from (`"rfc5348"` or `"floyd2000"`); it names the
    /// flow's variant in results, even when options override it.
    pub preset: &'static str,
    /// Every protocol option, for both ends.
    pub tfrc: TfrcConfig,
    /// Data packet size on the wire in bytes, headers included (papers: 1000).
    pub size_bytes: u32,
    /// Feedback packet size on the wire in bytes (ns-2's TFRC reports: 40).
    pub feedback_size_bytes: u32,
    /// Greedy or application-limited.
    pub application: TfrcApplication,
    /// Send ECN-capable data packets: a marking RED queue marks them instead of dropping, and the
    /// receiver counts a mark as a loss (RFC 5348 §5.1; ns-2 `ecn_`, off by default).
    pub ecn: bool,
}

impl Default for TfrcAgentConfig {
    fn default() -> TfrcAgentConfig {
        TfrcAgentConfig {
            preset: "rfc5348",
            tfrc: TfrcConfig::default(),
            size_bytes: 1000,
            feedback_size_bytes: 40,
            application: TfrcApplication::Greedy,
            ecn: false,
        }
    }
}

/// Why a [`TfrcAgentConfig`] cannot run.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum TfrcAgentError {
    /// A protocol option is out of range (the `tfrc` crate's own check).
    Protocol(ConfigError),
    /// A packet size of 0 bytes; the field is named.
    ZeroSize(&'static str),
    /// An application rate of 0 bit/s.
    ZeroApplicationRate,
}

impl fmt::Display for TfrcAgentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TfrcAgentError::Protocol(error) => error.fmt(f),
            TfrcAgentError::ZeroSize(field) => write!(f, "{field}: expected at least 1 byte"),
            TfrcAgentError::ZeroApplicationRate => {
                f.write_str("application rate: expected a rate above 0")
            }
        }
    }
}

impl std::error::Error for TfrcAgentError {}

impl TfrcAgentConfig {
    /// The defaults with the protocol options of preset `name` (`"rfc5348"`, `"floyd2000"`).
    pub fn preset(name: &str) -> Result<TfrcAgentConfig, ConfigError> {
        let tfrc = TfrcConfig::preset(name)?;
        let preset = PRESETS
            .iter()
            .copied()
            .find(|&p| p == name)
            .unwrap_or("rfc5348");
        Ok(TfrcAgentConfig {
            preset,
            tfrc,
            ..TfrcAgentConfig::default()
        })
    }

    /// Checks the protocol options and the sizes and rate; the agents assume a valid config
    /// (the engine checks it when it builds the flow).
    pub fn validate(&self) -> Result<(), TfrcAgentError> {
        self.tfrc.validate().map_err(TfrcAgentError::Protocol)?;
        if self.size_bytes == 0 {
            return Err(TfrcAgentError::ZeroSize("size_bytes"));
        }
        if self.feedback_size_bytes == 0 {
            return Err(TfrcAgentError::ZeroSize("feedback_size_bytes"));
        }
        if self.application == (TfrcApplication::Limited { rate_bps: 0 }) {
            return Err(TfrcAgentError::ZeroApplicationRate);
        }
        Ok(())
    }

    /// The gap between the application's packets (size·8/rate rounded up to the nanosecond), or
    /// `None` for a greedy source.
    pub fn application_interval(&self) -> Option<Duration> {
        match self.application {
            TfrcApplication::Greedy => None,
            TfrcApplication::Limited { rate_bps } => {
                Some(transmission_time(self.size_bytes, rate_bps))
            }
        }
    }
}

#[cfg(test)]
mod tests;
