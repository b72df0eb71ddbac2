//! A streaming writer of classic pcap files with nanosecond timestamps (the format of
//! tcpdump and libpcap, magic `0xa1b23c4d`; see the pcap file format draft,
//! draft-ietf-opsawg-pcap), link type `LINKTYPE_RAW` (101): every record is an IPv4 packet
//! with no link-layer header, so a frame's length is the IP packet's length.

use std::io::{self, Write};

use tfrc::Time;

/// The nanosecond-resolution pcap magic number, written little-endian.
const MAGIC_NANOS: u32 = 0xA1B2_3C4D;
/// `LINKTYPE_RAW`: raw IPv4/IPv6 packets.
const LINKTYPE_RAW: u32 = 101;
/// The snapshot length announced in the header: the longest IPv4 packet.
pub const SNAPLEN: u32 = 65_535;

/// Writes pcap records to `W` as they come (wrap a file in a `BufWriter`).
pub struct PcapWriter<W: Write> {
    out: W,
}

impl<W: Write> std::fmt::Debug for PcapWriter<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PcapWriter")
    }
}

impl<W: Write> PcapWriter<W> {
    /// Writes the file header and returns the writer.
    pub fn new(mut out: W) -> io::Result<PcapWriter<W>> {
        let mut header = [0u8; 24];
        header[0..4].copy_from_slice(&MAGIC_NANOS.to_le_bytes());
        header[4..6].copy_from_slice(&2u16.to_le_bytes());
        header[6..8].copy_from_slice(&4u16.to_le_bytes());
        // 8..16: time zone offset and accuracy, both 0.
        header[16..20].copy_from_slice(&SNAPLEN.to_le_bytes());
        header[20..24].copy_from_slice(&LINKTYPE_RAW.to_le_bytes());
        out.write_all(&header)?;
        Ok(PcapWriter { out })
    }

    /// Writes one packet seen at `time` (simulated time from 0): the bytes in `frame` (at most
    /// [`SNAPLEN`] of them are kept) and its length on the wire, `wire_len`.
    pub fn write(&mut self, time: Time, frame: &[u8], wire_len: u32) -> io::Result<()> {
        let nanos = time.as_nanos();
        let captured = frame.len().min(SNAPLEN as usize);
        let mut record = [0u8; 16];
        // Simulated runs last at most 10^6 s: the seconds fit in 32 bits.
        record[0..4].copy_from_slice(&((nanos / 1_000_000_000) as u32).to_le_bytes());
        record[4..8].copy_from_slice(&((nanos % 1_000_000_000) as u32).to_le_bytes());
        record[8..12].copy_from_slice(&(captured as u32).to_le_bytes());
        record[12..16].copy_from_slice(&wire_len.max(captured as u32).to_le_bytes());
        self.out.write_all(&record)?;
        self.out.write_all(&frame[..captured])
    }

    /// Flushes buffered records.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_and_record_layout() {
        let mut writer = PcapWriter::new(Vec::new()).unwrap();
        writer
            .write(Time::from_nanos(2_000_000_123), &[0x45, 0, 0, 3], 4)
            .unwrap();
        let bytes = writer.out;
        assert_eq!(&bytes[0..4], &[0x4D, 0x3C, 0xB2, 0xA1]);
        assert_eq!(u32::from_le_bytes(bytes[20..24].try_into().unwrap()), 101);
        assert_eq!(u32::from_le_bytes(bytes[24..28].try_into().unwrap()), 2);
        assert_eq!(u32::from_le_bytes(bytes[28..32].try_into().unwrap()), 123);
        assert_eq!(u32::from_le_bytes(bytes[32..36].try_into().unwrap()), 4);
        assert_eq!(u32::from_le_bytes(bytes[36..40].try_into().unwrap()), 4);
        assert_eq!(&bytes[40..], &[0x45, 0, 0, 3]);
    }
}
