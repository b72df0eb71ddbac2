//! Byte formats for TFRC's data-packet header and feedback packet.
//!
//! This is tfrclab's own compact, versioned, big-endian layout in the spirit of RFC 5348 §3.2
//! (it is not DCCP's CCID 3). `docs/wire-format.md` is the reference; in short:
//!
//! ```text
//! every packet   0: version (2)   1: packet type (1 = data, 2 = feedback)   2: session u64
//! data          10: seq u64   18: timestamp u64 ns   26: rtt u64 ns   34: payload ...
//! feedback      10: timestamp_echo u64 ns   18: t_delay u64 ns
//!               26: X_recv f64 (bytes/s, finite, >= 0)   34: p f64 (finite, in [0, 1])   42: end
//! ```
//!
//! The session is a random number a sender draws when it starts; the receiver echoes it in
//! every report. It is the transport's, not TFRC's (RFC 5348 §9 leaves protection against
//! forged packets to the transport): `tfrc-udp` tells a restarted sender from a late packet of
//! the old one by it, follows a sender whose address changed (a NAT rebinding), and refuses
//! packets from off the path, who would have to guess 64 bits.
//!
//! Following smoltcp's `wire/` (design convention 3, "parse, don't validate"), each format has a
//! borrowed view whose constructor checks everything ([`DataPacket`], [`FeedbackPacket`]) and an
//! owned representation with `parse`/`emit`/`buffer_len` ([`DataHeader`], [`FeedbackHeader`],
//! or [`Packet`] for either). Malformed input is a typed [`WireError`], counted by reason in
//! [`WireStats`]; no input makes these functions panic.
//!
//! ```
//! use std::time::Duration;
//! use tfrc::wire::{Packet, WireStats};
//! use tfrc::{DataHeader, Time};
//!
//! let header = DataHeader { seq: 7, timestamp: Time::from_nanos(1_000), rtt: Duration::from_millis(40) };
//! let mut buf = [0u8; 64];
//! let len = header.emit_with_payload(0x5e55, b"hello", &mut buf).unwrap();
//!
//! let mut stats = WireStats::default();
//! let parsed = Packet::parse(&buf[..len]);
//! stats.record(&parsed);
//! assert_eq!(parsed, Ok(Packet::Data { session: 0x5e55, header, payload: b"hello" }));
//! assert_eq!(stats.accepted, 1);
//! ```

use std::fmt;

use crate::packet::{DataHeader, FeedbackHeader};

mod data;
mod error;
mod feedback;

pub use data::DataPacket;
pub use error::{WireError, WireStats};
pub use feedback::FeedbackPacket;

/// The format version this crate reads and writes (byte 0 of every packet). Version 1 had no
/// session field.
pub const VERSION: u8 = 2;
/// Length of the bytes that tell a packet's kind: version and packet type.
pub const COMMON_HEADER_LEN: usize = 2;
/// Byte offset of the session identifier, the same in both kinds.
pub const SESSION_OFFSET: usize = 2;
/// Length of a data packet's header; the application payload follows it.
pub const DATA_HEADER_LEN: usize = 34;
/// Length of a feedback packet (fixed; nothing may follow it).
pub const FEEDBACK_LEN: usize = 42;

/// Which kind of TFRC packet a buffer holds (byte 1 of every packet).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PacketKind {
    /// A data packet: [`DataHeader`] followed by the application payload (type byte 1).
    Data,
    /// A feedback packet carrying a [`FeedbackHeader`] (type byte 2).
    Feedback,
}

impl PacketKind {
    /// The type byte that marks this kind on the wire.
    pub const fn type_byte(self) -> u8 {
        match self {
            PacketKind::Data => 1,
            PacketKind::Feedback => 2,
        }
    }

    /// The kind a type byte marks, if any.
    pub const fn from_type_byte(byte: u8) -> Option<PacketKind> {
        match byte {
            1 => Some(PacketKind::Data),
            2 => Some(PacketKind::Feedback),
            _ => None,
        }
    }

    /// The length of this kind's fixed part: the whole feedback packet, or the data header.
    pub const fn header_len(self) -> usize {
        match self {
            PacketKind::Data => DATA_HEADER_LEN,
            PacketKind::Feedback => FEEDBACK_LEN,
        }
    }

    /// Reads the common header to tell a data packet from a feedback packet, without checking
    /// the rest; the matching `parse` or `new_checked` still decides whether the packet is valid.
    pub fn peek(buf: &[u8]) -> Result<PacketKind, WireError> {
        if let Some(&version) = buf.first() {
            if version != VERSION {
                return Err(WireError::UnknownVersion(version));
            }
        }
        match buf.get(1) {
            Some(&byte) => PacketKind::from_type_byte(byte).ok_or(WireError::UnknownType(byte)),
            None => Err(WireError::Truncated {
                needed: COMMON_HEADER_LEN,
                found: buf.len(),
            }),
        }
    }
}

impl fmt::Display for PacketKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PacketKind::Data => "data",
            PacketKind::Feedback => "feedback",
        })
    }
}

/// Either kind of packet, parsed: what a driver gets from one datagram.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Packet<'a> {
    /// A data packet and the payload that followed its header.
    Data {
        /// The sender's session identifier.
        session: u64,
        /// The TFRC header fields.
        header: DataHeader,
        /// The application bytes after the header (possibly empty).
        payload: &'a [u8],
    },
    /// A feedback packet.
    Feedback {
        /// The session identifier of the data it reports on, echoed.
        session: u64,
        /// The TFRC report fields.
        header: FeedbackHeader,
    },
}

impl<'a> Packet<'a> {
    /// Parses a datagram of either kind, dispatching on its type byte.
    pub fn parse(buf: &'a [u8]) -> Result<Packet<'a>, WireError> {
        match PacketKind::peek(buf)? {
            PacketKind::Data => {
                let packet = DataPacket::new_checked(buf)?;
                Ok(Packet::Data {
                    session: packet.session(),
                    header: DataHeader::from_packet(&packet),
                    payload: packet
                        .into_inner()
                        .get(DATA_HEADER_LEN..)
                        .unwrap_or_default(),
                })
            }
            PacketKind::Feedback => {
                let packet = FeedbackPacket::new_checked(buf)?;
                Ok(Packet::Feedback {
                    session: packet.session(),
                    header: FeedbackHeader::from_packet(&packet),
                })
            }
        }
    }

    /// The session identifier the packet carries.
    pub const fn session(&self) -> u64 {
        match self {
            Packet::Data { session, .. } | Packet::Feedback { session, .. } => *session,
        }
    }

    /// Which kind of packet this is.
    pub const fn kind(&self) -> PacketKind {
        match self {
            Packet::Data { .. } => PacketKind::Data,
            Packet::Feedback { .. } => PacketKind::Feedback,
        }
    }

    /// The number of bytes [`Packet::emit`] writes (header plus payload for data).
    pub fn buffer_len(&self) -> usize {
        match self {
            Packet::Data { payload, .. } => DATA_HEADER_LEN.saturating_add(payload.len()),
            Packet::Feedback { .. } => FEEDBACK_LEN,
        }
    }

    /// Writes the whole packet to the front of `buf` and returns its length.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        match self {
            Packet::Data {
                session,
                header,
                payload,
            } => header.emit_with_payload(*session, payload, buf),
            Packet::Feedback { session, header } => header.emit(*session, buf),
        }
    }
}

/// Checks the common header of a packet expected to be of kind `expected` and that the buffer
/// holds at least that kind's fixed part. The version is checked first, then the type, then the
/// length, so a short foreign packet is reported as foreign rather than as truncated.
fn check_header(buf: &[u8], expected: PacketKind) -> Result<(), WireError> {
    match PacketKind::peek(buf) {
        Ok(found) if found != expected => return Err(WireError::WrongType { expected, found }),
        Err(err @ (WireError::UnknownVersion(_) | WireError::UnknownType(_))) => return Err(err),
        _ => {}
    }
    let needed = expected.header_len();
    if buf.len() < needed {
        return Err(WireError::Truncated {
            needed,
            found: buf.len(),
        });
    }
    Ok(())
}

/// The big-endian `u64` at byte `at`, or 0 past the end (views only read offsets their
/// constructor checked, so the fallback is never taken; it keeps the accessors panic-free).
fn read_u64(bytes: &[u8], at: usize) -> u64 {
    bytes
        .get(at..)
        .and_then(<[u8]>::first_chunk::<8>)
        .map_or(0, |field| u64::from_be_bytes(*field))
}

/// Writes `value` big-endian at byte `at`; does nothing past the end (callers check the length
/// first, so that never happens).
fn write_u64(bytes: &mut [u8], at: usize, value: u64) {
    if let Some(field) = bytes.get_mut(at..).and_then(<[u8]>::first_chunk_mut::<8>) {
        *field = value.to_be_bytes();
    }
}

/// Writes the version, `kind`'s type byte and the session at the front of `bytes` (callers
/// check its length first).
fn write_header(bytes: &mut [u8], kind: PacketKind, session: u64) {
    if let Some(header) = bytes.first_chunk_mut::<COMMON_HEADER_LEN>() {
        *header = [VERSION, kind.type_byte()];
    }
    write_u64(bytes, SESSION_OFFSET, session);
}

/// A duration in whole nanoseconds for the wire, or [`WireError::Unencodable`] naming `field` if
/// it does not fit in a `u64` (about 584 years).
fn duration_nanos(duration: std::time::Duration, field: &'static str) -> Result<u64, WireError> {
    u64::try_from(duration.as_nanos()).map_err(|_| WireError::Unencodable {
        field,
        reason: "longer than u64::MAX nanoseconds",
    })
}

/// The front `needed` bytes of `buf`, or [`WireError::BufferTooSmall`] if it is shorter.
fn output(buf: &mut [u8], needed: usize) -> Result<&mut [u8], WireError> {
    let available = buf.len();
    buf.get_mut(..needed)
        .ok_or(WireError::BufferTooSmall { needed, available })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_bytes_round_trip() {
        for kind in [PacketKind::Data, PacketKind::Feedback] {
            assert_eq!(PacketKind::from_type_byte(kind.type_byte()), Some(kind));
        }
        assert_eq!(PacketKind::from_type_byte(0), None);
        assert_eq!(PacketKind::from_type_byte(3), None);
    }

    #[test]
    fn peek_checks_version_then_type_then_length() {
        assert_eq!(PacketKind::peek(&[2, 1]), Ok(PacketKind::Data));
        assert_eq!(PacketKind::peek(&[2, 2, 9, 9]), Ok(PacketKind::Feedback));
        assert_eq!(
            PacketKind::peek(&[]),
            Err(WireError::Truncated {
                needed: 2,
                found: 0
            })
        );
        assert_eq!(
            PacketKind::peek(&[2]),
            Err(WireError::Truncated {
                needed: 2,
                found: 1
            })
        );
        assert_eq!(
            PacketKind::peek(&[0x45]),
            Err(WireError::UnknownVersion(0x45))
        );
        assert_eq!(PacketKind::peek(&[1, 1]), Err(WireError::UnknownVersion(1)));
        assert_eq!(PacketKind::peek(&[2, 0]), Err(WireError::UnknownType(0)));
    }

    #[test]
    fn check_header_reports_wrong_kind_before_length() {
        assert_eq!(
            check_header(&[2, 2], PacketKind::Data),
            Err(WireError::WrongType {
                expected: PacketKind::Data,
                found: PacketKind::Feedback
            })
        );
        assert_eq!(
            check_header(&[2, 1, 0], PacketKind::Data),
            Err(WireError::Truncated {
                needed: 34,
                found: 3
            })
        );
        assert_eq!(
            check_header(&[2], PacketKind::Feedback),
            Err(WireError::Truncated {
                needed: 42,
                found: 1
            })
        );
    }

    #[test]
    fn field_helpers_are_big_endian_and_bounded() {
        let mut bytes = [0u8; 10];
        write_u64(&mut bytes, 1, 0x0102_0304_0506_0708);
        assert_eq!(bytes, [0, 1, 2, 3, 4, 5, 6, 7, 8, 0]);
        assert_eq!(read_u64(&bytes, 1), 0x0102_0304_0506_0708);
        // Out of range: no panic, no write, zero read.
        write_u64(&mut bytes, 3, u64::MAX);
        assert_eq!(bytes, [0, 1, 2, 3, 4, 5, 6, 7, 8, 0]);
        assert_eq!(read_u64(&bytes, 3), 0);
        assert_eq!(read_u64(&bytes, usize::MAX), 0);
    }

    #[test]
    fn any_packet_dispatches_on_type() {
        let feedback = FeedbackHeader {
            timestamp_echo: crate::Time::from_nanos(5),
            t_delay: std::time::Duration::from_nanos(6),
            x_recv_bytes_per_s: 1e6,
            p: 0.01,
        };
        let packet = Packet::Feedback {
            session: u64::MAX - 3,
            header: feedback,
        };
        let mut buf = [0u8; FEEDBACK_LEN];
        assert_eq!(packet.emit(&mut buf), Ok(FEEDBACK_LEN));
        assert_eq!(packet.buffer_len(), FEEDBACK_LEN);
        assert_eq!(Packet::parse(&buf), Ok(packet));
        assert_eq!(packet.session(), u64::MAX - 3);
        assert_eq!(
            Packet::parse(&buf).map(|p| p.kind()),
            Ok(PacketKind::Feedback)
        );
        assert_eq!(Packet::parse(&[7, 1]), Err(WireError::UnknownVersion(7)));
    }
}
