//! The feedback packet (RFC 5348 §3.2.2): a checked borrowed view and [`FeedbackHeader`]'s
//! `parse`/`emit`.
//!
//! ```text
//!  0      1      2               10                 18          26                 34        42
//! +------+------+---------------+------------------+-----------+------------------+---------+
//! | ver  | type | session (u64, | timestamp_echo   | t_delay   | X_recv (f64      | p (f64  |
//! | = 2  | = 2  | echoed)       | (u64 ns)         | (u64 ns)  | bits, bytes/s)   | bits)   |
//! +------+------+---------------+------------------+-----------+------------------+---------+
//! ```
//!
//! X_recv must be finite and >= 0, p finite and in [0, 1]; the packet is exactly 42 bytes.

use std::time::Duration;

use super::{
    check_header, duration_nanos, output, read_u64, write_header, write_u64, PacketKind, WireError,
    FEEDBACK_LEN, SESSION_OFFSET,
};
use crate::packet::FeedbackHeader;
use crate::time::Time;

/// Byte offsets of the feedback packet's fields.
mod field {
    pub(super) const TIMESTAMP_ECHO: usize = 10;
    pub(super) const T_DELAY: usize = 18;
    pub(super) const X_RECV: usize = 26;
    pub(super) const P: usize = 34;
}

/// A borrowed view of a feedback packet whose header, length and field values have all been
/// checked, so the accessors return values in their documented domains.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FeedbackPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> FeedbackPacket<T> {
    /// Wraps `buffer` after checking its version and type (feedback), that it is exactly
    /// [`FEEDBACK_LEN`] bytes, and that X_recv and p are in range.
    pub fn new_checked(buffer: T) -> Result<FeedbackPacket<T>, WireError> {
        let bytes = buffer.as_ref();
        check_header(bytes, PacketKind::Feedback)?;
        if bytes.len() > FEEDBACK_LEN {
            return Err(WireError::TrailingBytes {
                expected: FEEDBACK_LEN,
                found: bytes.len(),
            });
        }
        let packet = FeedbackPacket { buffer };
        check_x_recv(packet.x_recv_bytes_per_s()).map_err(|reason| WireError::InvalidField {
            field: "x_recv",
            reason,
        })?;
        check_p(packet.p()).map_err(|reason| WireError::InvalidField { field: "p", reason })?;
        Ok(packet)
    }

    /// The underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The session identifier of the data reported on, echoed.
    pub fn session(&self) -> u64 {
        read_u64(self.buffer.as_ref(), SESSION_OFFSET)
    }

    /// The echoed timestamp of the latest data packet (t_recvdata).
    pub fn timestamp_echo(&self) -> Time {
        Time::from_nanos(read_u64(self.buffer.as_ref(), field::TIMESTAMP_ECHO))
    }

    /// How long the receiver held that data packet before reporting (t_delay).
    pub fn t_delay(&self) -> Duration {
        Duration::from_nanos(read_u64(self.buffer.as_ref(), field::T_DELAY))
    }

    /// The receive rate X_recv in bytes per second: finite and >= 0.
    pub fn x_recv_bytes_per_s(&self) -> f64 {
        f64::from_bits(read_u64(self.buffer.as_ref(), field::X_RECV))
    }

    /// The loss event rate p: finite and in [0, 1].
    pub fn p(&self) -> f64 {
        f64::from_bits(read_u64(self.buffer.as_ref(), field::P))
    }
}

impl FeedbackHeader {
    /// Parses a feedback packet (exactly [`FEEDBACK_LEN`] bytes; the session is read by
    /// [`super::Packet::parse`] or [`FeedbackPacket::session`]).
    pub fn parse(buf: &[u8]) -> Result<FeedbackHeader, WireError> {
        FeedbackPacket::new_checked(buf).map(|packet| FeedbackHeader::from_packet(&packet))
    }

    /// Reads the fields out of a checked view.
    pub fn from_packet<T: AsRef<[u8]>>(packet: &FeedbackPacket<T>) -> FeedbackHeader {
        FeedbackHeader {
            timestamp_echo: packet.timestamp_echo(),
            t_delay: packet.t_delay(),
            x_recv_bytes_per_s: packet.x_recv_bytes_per_s(),
            p: packet.p(),
        }
    }

    /// The number of bytes [`FeedbackHeader::emit`] writes ([`FEEDBACK_LEN`]).
    pub const fn buffer_len(&self) -> usize {
        FEEDBACK_LEN
    }

    /// Writes the packet with `session` to the front of `buf` and returns its length. Fails
    /// with [`WireError::Unencodable`] for a value parsing would reject (`t_delay` past
    /// `u64::MAX` ns, X_recv or p out of range), checked before the buffer's length.
    pub fn emit(&self, session: u64, buf: &mut [u8]) -> Result<usize, WireError> {
        let t_delay_ns = duration_nanos(self.t_delay, "t_delay")?;
        check_x_recv(self.x_recv_bytes_per_s).map_err(|reason| WireError::Unencodable {
            field: "x_recv",
            reason,
        })?;
        check_p(self.p).map_err(|reason| WireError::Unencodable { field: "p", reason })?;
        let out = output(buf, FEEDBACK_LEN)?;
        write_header(out, PacketKind::Feedback, session);
        write_u64(out, field::TIMESTAMP_ECHO, self.timestamp_echo.as_nanos());
        write_u64(out, field::T_DELAY, t_delay_ns);
        write_u64(out, field::X_RECV, self.x_recv_bytes_per_s.to_bits());
        write_u64(out, field::P, self.p.to_bits());
        Ok(FEEDBACK_LEN)
    }
}

/// X_recv's domain: finite and >= 0 (negative zero included; it compares equal to zero).
fn check_x_recv(x_recv: f64) -> Result<(), &'static str> {
    check_finite(x_recv)?;
    if x_recv < 0.0 {
        return Err("negative");
    }
    Ok(())
}

/// p's domain: a probability, finite and in [0, 1].
fn check_p(p: f64) -> Result<(), &'static str> {
    check_finite(p)?;
    if p < 0.0 {
        return Err("negative");
    }
    if p > 1.0 {
        return Err("greater than 1");
    }
    Ok(())
}

fn check_finite(value: f64) -> Result<(), &'static str> {
    if value.is_nan() {
        Err("NaN")
    } else if value.is_infinite() {
        Err("infinite")
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feedback() -> FeedbackHeader {
        FeedbackHeader {
            timestamp_echo: Time::from_nanos(2_000_000_000),
            t_delay: Duration::from_micros(250),
            x_recv_bytes_per_s: 125_000.0,
            p: 0.5,
        }
    }

    fn emitted(header: &FeedbackHeader) -> [u8; FEEDBACK_LEN] {
        let mut buf = [0u8; FEEDBACK_LEN];
        assert_eq!(header.emit(77, &mut buf), Ok(FEEDBACK_LEN));
        buf
    }

    /// A valid packet with X_recv's or p's bits replaced by `value`'s.
    fn with_float(at: usize, value: f64) -> [u8; FEEDBACK_LEN] {
        let mut buf = emitted(&feedback());
        write_u64(&mut buf, at, value.to_bits());
        buf
    }

    #[test]
    fn emit_then_view_and_parse() {
        let buf = emitted(&feedback());
        let packet = FeedbackPacket::new_checked(&buf).unwrap();
        assert_eq!(packet.session(), 77);
        assert_eq!(packet.timestamp_echo(), Time::from_nanos(2_000_000_000));
        assert_eq!(packet.t_delay(), Duration::from_micros(250));
        assert_eq!(packet.x_recv_bytes_per_s(), 125_000.0);
        assert_eq!(packet.p(), 0.5);
        assert_eq!(FeedbackHeader::from_packet(&packet), feedback());
        assert_eq!(FeedbackHeader::parse(&buf), Ok(feedback()));
        assert_eq!(feedback().buffer_len(), FEEDBACK_LEN);
        assert_eq!(packet.into_inner(), &buf);
    }

    #[test]
    fn field_domains() {
        assert_eq!(check_x_recv(0.0), Ok(()));
        assert_eq!(check_x_recv(-0.0), Ok(()));
        assert_eq!(check_x_recv(f64::MAX), Ok(()));
        assert_eq!(check_x_recv(f64::NAN), Err("NaN"));
        assert_eq!(check_x_recv(f64::INFINITY), Err("infinite"));
        assert_eq!(check_x_recv(f64::NEG_INFINITY), Err("infinite"));
        assert_eq!(check_x_recv(-1e-300), Err("negative"));
        assert_eq!(check_p(0.0), Ok(()));
        assert_eq!(check_p(1.0), Ok(()));
        assert_eq!(check_p(1.0 + f64::EPSILON), Err("greater than 1"));
        assert_eq!(check_p(-f64::MIN_POSITIVE), Err("negative"));
        assert_eq!(check_p(-f64::NAN), Err("NaN"));
    }

    #[test]
    fn parse_rejects_out_of_range_floats() {
        assert_eq!(
            FeedbackHeader::parse(&with_float(field::X_RECV, -1.0)),
            Err(WireError::InvalidField {
                field: "x_recv",
                reason: "negative"
            })
        );
        assert_eq!(
            FeedbackHeader::parse(&with_float(field::P, 2.0)),
            Err(WireError::InvalidField {
                field: "p",
                reason: "greater than 1"
            })
        );
    }

    #[test]
    fn parse_rejects_trailing_bytes() {
        let mut long = [0u8; FEEDBACK_LEN + 1];
        feedback().emit(1, &mut long).unwrap();
        assert_eq!(
            FeedbackHeader::parse(&long),
            Err(WireError::TrailingBytes {
                expected: 42,
                found: 43
            })
        );
    }

    #[test]
    fn emit_rejects_what_parse_would() {
        let cases = [
            (
                FeedbackHeader {
                    t_delay: Duration::MAX,
                    ..feedback()
                },
                "t_delay",
                "longer than u64::MAX nanoseconds",
            ),
            (
                FeedbackHeader {
                    x_recv_bytes_per_s: f64::NAN,
                    ..feedback()
                },
                "x_recv",
                "NaN",
            ),
            (
                FeedbackHeader {
                    p: -0.5,
                    ..feedback()
                },
                "p",
                "negative",
            ),
        ];
        for (header, field, reason) in cases {
            // Value errors win over a short buffer.
            assert_eq!(
                header.emit(1, &mut [0; 4]),
                Err(WireError::Unencodable { field, reason })
            );
        }
        assert_eq!(
            feedback().emit(1, &mut [0; 41]),
            Err(WireError::BufferTooSmall {
                needed: 42,
                available: 41
            })
        );
    }
}
