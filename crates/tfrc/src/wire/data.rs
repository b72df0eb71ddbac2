//! The data-packet header (RFC 5348 §3.2.1): a checked borrowed view and [`DataHeader`]'s
//! `parse`/`emit`.
//!
//! ```text
//!  0      1      2               10            18                 26           34
//! +------+------+---------------+-------------+------------------+------------+---------
//! | ver  | type | session (u64) | seq (u64)   | timestamp (u64   | rtt (u64   | payload
//! | = 2  | = 1  |               |             | ns)              | ns)        | ...
//! +------+------+---------------+-------------+------------------+------------+---------
//! ```

use std::time::Duration;

use super::{
    check_header, duration_nanos, output, read_u64, write_header, write_u64, PacketKind, WireError,
    DATA_HEADER_LEN, SESSION_OFFSET,
};
use crate::packet::DataHeader;
use crate::time::Time;

/// Byte offsets of the data header's fields.
mod field {
    pub(super) const SEQ: usize = 10;
    pub(super) const TIMESTAMP: usize = 18;
    pub(super) const RTT: usize = 26;
    pub(super) const PAYLOAD: usize = super::DATA_HEADER_LEN;
}

/// A borrowed view of a data packet whose common header and length have been checked, so every
/// accessor reads a real field: the [`DataHeader`] fields, then the payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> DataPacket<T> {
    /// Wraps `buffer` after checking its version, its type (data) and that it holds the whole
    /// header; the payload may be empty.
    pub fn new_checked(buffer: T) -> Result<DataPacket<T>, WireError> {
        check_header(buffer.as_ref(), PacketKind::Data)?;
        Ok(DataPacket { buffer })
    }

    /// The underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The sender's session identifier.
    pub fn session(&self) -> u64 {
        read_u64(self.buffer.as_ref(), SESSION_OFFSET)
    }

    /// The sequence number.
    pub fn seq(&self) -> u64 {
        read_u64(self.buffer.as_ref(), field::SEQ)
    }

    /// The sender's timestamp.
    pub fn timestamp(&self) -> Time {
        Time::from_nanos(read_u64(self.buffer.as_ref(), field::TIMESTAMP))
    }

    /// The sender's RTT estimate (zero before its first sample).
    pub fn rtt(&self) -> Duration {
        Duration::from_nanos(read_u64(self.buffer.as_ref(), field::RTT))
    }

    /// The application bytes after the header.
    pub fn payload(&self) -> &[u8] {
        self.buffer
            .as_ref()
            .get(field::PAYLOAD..)
            .unwrap_or_default()
    }
}

impl DataHeader {
    /// Parses a data packet into its header and the payload that follows it (the session is
    /// read by [`super::Packet::parse`] or [`DataPacket::session`]).
    pub fn parse(buf: &[u8]) -> Result<(DataHeader, &[u8]), WireError> {
        let packet = DataPacket::new_checked(buf)?;
        let payload = buf.get(field::PAYLOAD..).unwrap_or_default();
        Ok((DataHeader::from_packet(&packet), payload))
    }

    /// Reads the header out of a checked view.
    pub fn from_packet<T: AsRef<[u8]>>(packet: &DataPacket<T>) -> DataHeader {
        DataHeader {
            seq: packet.seq(),
            timestamp: packet.timestamp(),
            rtt: packet.rtt(),
        }
    }

    /// The number of bytes [`DataHeader::emit`] writes (the header alone, [`DATA_HEADER_LEN`]).
    pub const fn buffer_len(&self) -> usize {
        DATA_HEADER_LEN
    }

    /// Writes the header with `session` to the front of `buf` and returns its length; the
    /// caller puts the payload after it. Fails if `rtt` exceeds `u64::MAX` ns or `buf` is too
    /// short.
    pub fn emit(&self, session: u64, buf: &mut [u8]) -> Result<usize, WireError> {
        let rtt_ns = duration_nanos(self.rtt, "rtt")?;
        let out = output(buf, DATA_HEADER_LEN)?;
        write_header(out, PacketKind::Data, session);
        write_u64(out, field::SEQ, self.seq);
        write_u64(out, field::TIMESTAMP, self.timestamp.as_nanos());
        write_u64(out, field::RTT, rtt_ns);
        Ok(DATA_HEADER_LEN)
    }

    /// Writes the header followed by `payload` and returns the packet's length
    /// (`buffer_len() + payload.len()`).
    pub fn emit_with_payload(
        &self,
        session: u64,
        payload: &[u8],
        buf: &mut [u8],
    ) -> Result<usize, WireError> {
        // Value errors before buffer errors, as in `emit`.
        duration_nanos(self.rtt, "rtt")?;
        let len = DATA_HEADER_LEN.saturating_add(payload.len());
        let out = output(buf, len)?;
        self.emit(session, out)?;
        if let Some(body) = out.get_mut(field::PAYLOAD..) {
            body.copy_from_slice(payload);
        }
        Ok(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> DataHeader {
        DataHeader {
            seq: 0x0102_0304_0506_0708,
            timestamp: Time::from_nanos(1_000_000_000),
            rtt: Duration::from_millis(100),
        }
    }

    #[test]
    fn emit_then_view_and_parse() {
        let mut buf = [0u8; 40];
        let len = header().emit_with_payload(9, b"abc", &mut buf).unwrap();
        assert_eq!(len, 37);
        let packet = DataPacket::new_checked(&buf[..len]).unwrap();
        assert_eq!(packet.session(), 9);
        assert_eq!(packet.seq(), 0x0102_0304_0506_0708);
        assert_eq!(packet.timestamp(), Time::from_nanos(1_000_000_000));
        assert_eq!(packet.rtt(), Duration::from_millis(100));
        assert_eq!(packet.payload(), b"abc");
        assert_eq!(DataHeader::from_packet(&packet), header());
        assert_eq!(DataHeader::parse(&buf[..len]), Ok((header(), &b"abc"[..])));
        assert_eq!(packet.into_inner(), &buf[..len]);
    }

    #[test]
    fn header_only_emit_leaves_the_payload_alone() {
        let mut buf = [0xee; DATA_HEADER_LEN + 2];
        assert_eq!(header().emit(1, &mut buf), Ok(DATA_HEADER_LEN));
        assert_eq!(header().buffer_len(), DATA_HEADER_LEN);
        assert_eq!(&buf[DATA_HEADER_LEN..], &[0xee, 0xee]);
        assert_eq!(DataHeader::parse(&buf), Ok((header(), &[0xee, 0xee][..])));
    }

    #[test]
    fn emit_rejects_short_buffers_and_huge_rtts() {
        assert_eq!(
            header().emit(1, &mut [0; 33]),
            Err(WireError::BufferTooSmall {
                needed: 34,
                available: 33
            })
        );
        assert_eq!(
            header().emit_with_payload(1, b"xy", &mut [0; 35]),
            Err(WireError::BufferTooSmall {
                needed: 36,
                available: 35
            })
        );
        let huge = DataHeader {
            rtt: Duration::MAX,
            ..header()
        };
        let unencodable = Err(WireError::Unencodable {
            field: "rtt",
            reason: "longer than u64::MAX nanoseconds",
        });
        assert_eq!(huge.emit(1, &mut [0; 64]), unencodable);
        assert_eq!(huge.emit_with_payload(1, b"x", &mut [0; 64]), unencodable);
        assert_eq!(huge.emit_with_payload(1, b"x", &mut [0; 2]), unencodable);
    }

    #[test]
    fn view_rejects_what_parse_rejects() {
        let mut buf = [0u8; DATA_HEADER_LEN];
        header().emit(1, &mut buf).unwrap();
        assert_eq!(
            DataPacket::new_checked(&buf[..33]),
            Err(WireError::Truncated {
                needed: 34,
                found: 33
            })
        );
        buf[1] = 2;
        assert_eq!(
            DataPacket::new_checked(&buf[..]),
            Err(WireError::WrongType {
                expected: PacketKind::Data,
                found: PacketKind::Feedback
            })
        );
    }
}
