//! Why a packet was rejected or could not be written, and per-reason reject counters.

use std::fmt;

use super::PacketKind;

/// A packet that could not be parsed (the peer's fault, or not a TFRC packet at all), or a value
/// or buffer that could not be emitted (the caller's fault).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WireError {
    /// Parse (peer): the input ended before the packet's fixed part did.
    Truncated {
        /// Bytes the fixed part needs.
        needed: usize,
        /// Bytes the input held.
        found: usize,
    },
    /// Parse (peer): the version byte is not [`super::VERSION`]; a foreign or newer packet.
    UnknownVersion(u8),
    /// Parse (peer): the type byte marks no known packet kind.
    UnknownType(u8),
    /// Parse (caller or peer): a valid packet of the other kind, e.g. feedback handed to
    /// `DataHeader::parse`.
    WrongType {
        /// The kind the parser reads.
        expected: PacketKind,
        /// The kind the type byte marks.
        found: PacketKind,
    },
    /// Parse (peer): a field holds a value outside its domain (a NaN, infinite or negative
    /// X_recv; a NaN, infinite, negative or above-1 loss event rate).
    InvalidField {
        /// The field, as named in `docs/wire-format.md` (`x_recv`, `p`).
        field: &'static str,
        /// What is wrong with it (`NaN`, `infinite`, `negative`, `greater than 1`).
        reason: &'static str,
    },
    /// Parse (peer): bytes follow a fixed-length packet (feedback packets carry no payload).
    TrailingBytes {
        /// The packet's fixed length.
        expected: usize,
        /// Bytes the input held.
        found: usize,
    },
    /// Emit (caller): the output buffer is shorter than the packet.
    BufferTooSmall {
        /// Bytes the packet needs.
        needed: usize,
        /// Bytes the buffer has.
        available: usize,
    },
    /// Emit (caller): a value has no encoding (a duration past `u64::MAX` nanoseconds, or a rate
    /// or loss event rate that parsing would reject).
    Unencodable {
        /// The field, as named in `docs/wire-format.md` (`rtt`, `t_delay`, `x_recv`, `p`).
        field: &'static str,
        /// What is wrong with it.
        reason: &'static str,
    },
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WireError::Truncated { needed, found } => {
                write!(f, "truncated packet: needed {needed} bytes, found {found}")
            }
            WireError::UnknownVersion(version) => write!(
                f,
                "unknown wire version {version} (this build speaks version {})",
                super::VERSION
            ),
            WireError::UnknownType(byte) => write!(f, "unknown packet type {byte:#04x}"),
            WireError::WrongType { expected, found } => {
                write!(f, "expected a {expected} packet, found a {found} packet")
            }
            WireError::InvalidField { field, reason } => {
                write!(f, "invalid {field} field: {reason}")
            }
            WireError::TrailingBytes { expected, found } => write!(
                f,
                "trailing bytes: a {expected}-byte packet in a {found}-byte input"
            ),
            WireError::BufferTooSmall { needed, available } => write!(
                f,
                "output buffer too small: needed {needed} bytes, have {available}"
            ),
            WireError::Unencodable { field, reason } => {
                write!(f, "cannot encode {field}: {reason}")
            }
        }
    }
}

impl std::error::Error for WireError {}

/// Counts of parsed packets: how many were accepted and, for the rest, why they were rejected
/// ("a malformed packet is rejected and counted", design convention 3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WireStats {
    /// Packets parsed successfully.
    pub accepted: u64,
    /// Rejected as [`WireError::Truncated`].
    pub truncated: u64,
    /// Rejected as [`WireError::UnknownVersion`].
    pub bad_version: u64,
    /// Rejected as [`WireError::UnknownType`] or [`WireError::WrongType`].
    pub bad_type: u64,
    /// Rejected as [`WireError::InvalidField`].
    pub bad_field: u64,
    /// Rejected as [`WireError::TrailingBytes`].
    pub bad_length: u64,
    /// Any other error (emit errors, which a parser never returns, and future variants).
    pub other: u64,
}

impl WireStats {
    /// Counts one parse result under `accepted` or under its error's reason.
    pub fn record<T>(&mut self, result: &Result<T, WireError>) {
        match result {
            Ok(_) => self.accepted = self.accepted.saturating_add(1),
            Err(err) => self.record_error(err),
        }
    }

    /// Counts one rejected packet under its reason.
    pub fn record_error(&mut self, err: &WireError) {
        let counter = match err {
            WireError::Truncated { .. } => &mut self.truncated,
            WireError::UnknownVersion(_) => &mut self.bad_version,
            WireError::UnknownType(_) | WireError::WrongType { .. } => &mut self.bad_type,
            WireError::InvalidField { .. } => &mut self.bad_field,
            WireError::TrailingBytes { .. } => &mut self.bad_length,
            WireError::BufferTooSmall { .. } | WireError::Unencodable { .. } => &mut self.other,
        };
        *counter = counter.saturating_add(1);
    }

    /// All rejected packets, whatever the reason.
    pub fn rejected(&self) -> u64 {
        [
            self.truncated,
            self.bad_version,
            self.bad_type,
            self.bad_field,
            self.bad_length,
            self.other,
        ]
        .into_iter()
        .fold(0, u64::saturating_add)
    }

    /// Accepted plus rejected.
    pub fn total(&self) -> u64 {
        self.accepted.saturating_add(self.rejected())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_the_problem() {
        let cases = [
            (
                WireError::Truncated {
                    needed: 26,
                    found: 3,
                },
                "truncated packet: needed 26 bytes, found 3",
            ),
            (
                WireError::UnknownVersion(9),
                "unknown wire version 9 (this build speaks version 2)",
            ),
            (WireError::UnknownType(0xab), "unknown packet type 0xab"),
            (
                WireError::WrongType {
                    expected: PacketKind::Data,
                    found: PacketKind::Feedback,
                },
                "expected a data packet, found a feedback packet",
            ),
            (
                WireError::InvalidField {
                    field: "p",
                    reason: "NaN",
                },
                "invalid p field: NaN",
            ),
            (
                WireError::TrailingBytes {
                    expected: 34,
                    found: 40,
                },
                "trailing bytes: a 34-byte packet in a 40-byte input",
            ),
            (
                WireError::BufferTooSmall {
                    needed: 34,
                    available: 8,
                },
                "output buffer too small: needed 34 bytes, have 8",
            ),
            (
                WireError::Unencodable {
                    field: "rtt",
                    reason: "too long",
                },
                "cannot encode rtt: too long",
            ),
        ];
        for (err, text) in cases {
            assert_eq!(err.to_string(), text);
        }
    }

    #[test]
    fn stats_count_by_reason() {
        let mut stats = WireStats::default();
        stats.record(&Ok::<(), WireError>(()));
        stats.record::<()>(&Err(WireError::Truncated {
            needed: 2,
            found: 0,
        }));
        stats.record::<()>(&Err(WireError::UnknownVersion(0)));
        stats.record::<()>(&Err(WireError::UnknownType(0)));
        stats.record::<()>(&Err(WireError::WrongType {
            expected: PacketKind::Feedback,
            found: PacketKind::Data,
        }));
        stats.record::<()>(&Err(WireError::InvalidField {
            field: "p",
            reason: "NaN",
        }));
        stats.record::<()>(&Err(WireError::TrailingBytes {
            expected: 34,
            found: 35,
        }));
        stats.record::<()>(&Err(WireError::BufferTooSmall {
            needed: 1,
            available: 0,
        }));
        assert_eq!(
            stats,
            WireStats {
                accepted: 1,
                truncated: 1,
                bad_version: 1,
                bad_type: 2,
                bad_field: 1,
                bad_length: 1,
                other: 1,
            }
        );
        assert_eq!(stats.rejected(), 7);
        assert_eq!(stats.total(), 8);
    }
}
