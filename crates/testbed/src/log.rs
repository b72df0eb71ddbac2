//! The per-packet log: one fixed-size binary record per event, streamed through a buffer to a
//! file and capped in size (records past the cap are counted, not written), so a long run
//! cannot fill the disk or the memory. Python reads it with one `numpy.fromfile`
//! (`tfrclab.testbed.log`).
//!
//! File layout (little-endian): a 32-byte header, `b"TFTBLOG1"`, the record size (`u32`, 48),
//! 4 bytes reserved, the relay's start on `CLOCK_MONOTONIC` in ns (`u64`), 8 bytes reserved;
//! then records of 48 bytes:
//!
//! | offset | type | field |
//! |---|---|---|
//! | 0 | u64 | `t_ns`: event time, ns since the relay started |
//! | 8 | u64 | `qdelay_ns`: departures: time from arrival to the start of transmission |
//! | 16 | i64 | `late_ns`: departures: actual delivery time minus the intended one |
//! | 24 | u32 | `src`: source address (IPv4, big-endian value) |
//! | 28 | u32 | `dst` |
//! | 32 | u16 | `sport` |
//! | 34 | u16 | `dport` |
//! | 36 | u32 | `size`: IP packet size in bytes |
//! | 40 | u32 | `qlen`: packets waiting in this direction's queue: for an arrival and its drop or mark, the queue it found (before joining); for a departure, at delivery |
//! | 44 | u8 | `proto` |
//! | 45 | u8 | `dir`: 0 forward (a to b), 1 reverse |
//! | 46 | u8 | `event`: [`Event`] |
//! | 47 | u8 | reserved |

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use crate::ip::FlowKey;

/// The file's first bytes.
pub const MAGIC: &[u8; 8] = b"TFTBLOG1";
/// The size of one record.
pub const RECORD_BYTES: usize = 48;
/// The size of the header.
pub const HEADER_BYTES: usize = 32;

/// What happened to a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Event {
    /// Read from the sending side's TUN device.
    Arrive = 0,
    /// Dropped on arrival by the Bernoulli loss.
    DropLoss = 1,
    /// Refused by the queue (full buffer, or a RED drop).
    DropQueue = 2,
    /// Written to the receiving side's TUN device.
    Depart = 3,
    /// Accepted by a RED queue with its ECN field set to CE.
    Mark = 4,
    /// Could not be written to the receiving TUN device (the kernel refused it).
    DropWrite = 5,
}

/// One log record (see the module documentation for the layout).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    /// Event time, ns since the relay started.
    pub t_ns: u64,
    /// Departures: queueing delay in ns.
    pub qdelay_ns: u64,
    /// Departures: lateness in ns (negative: early, which the relay never is by design).
    pub late_ns: i64,
    /// The packet's flow.
    pub flow: FlowKey,
    /// IP packet size in bytes.
    pub size: u32,
    /// Packets waiting in the queue: found by an arrival (for its arrive, drop and mark
    /// records), or at delivery (departures).
    pub qlen: u32,
    /// 0 forward, 1 reverse.
    pub dir: u8,
    /// What happened.
    pub event: Event,
}

impl Record {
    fn encode(&self) -> [u8; RECORD_BYTES] {
        let mut b = [0u8; RECORD_BYTES];
        b[0..8].copy_from_slice(&self.t_ns.to_le_bytes());
        b[8..16].copy_from_slice(&self.qdelay_ns.to_le_bytes());
        b[16..24].copy_from_slice(&self.late_ns.to_le_bytes());
        b[24..28].copy_from_slice(&self.flow.src.to_le_bytes());
        b[28..32].copy_from_slice(&self.flow.dst.to_le_bytes());
        b[32..34].copy_from_slice(&self.flow.sport.to_le_bytes());
        b[34..36].copy_from_slice(&self.flow.dport.to_le_bytes());
        b[36..40].copy_from_slice(&self.size.to_le_bytes());
        b[40..44].copy_from_slice(&self.qlen.to_le_bytes());
        b[44] = self.flow.proto;
        b[45] = self.dir;
        b[46] = self.event as u8;
        b
    }
}

/// Where records go: a buffered file with a size cap, or nowhere.
#[derive(Debug)]
pub struct PacketLog {
    out: Option<BufWriter<File>>,
    remaining_records: u64,
    written: u64,
    dropped: u64,
}

impl PacketLog {
    /// A log that records nothing.
    pub fn disabled() -> PacketLog {
        PacketLog {
            out: None,
            remaining_records: 0,
            written: 0,
            dropped: 0,
        }
    }

    /// Creates (truncates) `path` and writes the header; at most `max_bytes` in all.
    pub fn create(path: &Path, max_bytes: u64, start_monotonic_ns: u64) -> io::Result<PacketLog> {
        let mut out = BufWriter::with_capacity(1 << 16, File::create(path)?);
        let mut header = [0u8; HEADER_BYTES];
        header[0..8].copy_from_slice(MAGIC);
        header[8..12].copy_from_slice(&(RECORD_BYTES as u32).to_le_bytes());
        header[16..24].copy_from_slice(&start_monotonic_ns.to_le_bytes());
        out.write_all(&header)?;
        Ok(PacketLog {
            out: Some(out),
            remaining_records: max_bytes.saturating_sub(HEADER_BYTES as u64) / RECORD_BYTES as u64,
            written: 0,
            dropped: 0,
        })
    }

    /// Appends a record, or counts it as dropped when the cap is reached. A write error stops
    /// the log (and is returned once), it does not stop the relay.
    pub fn record(&mut self, record: &Record) -> io::Result<()> {
        let Some(out) = self.out.as_mut() else {
            return Ok(());
        };
        if self.remaining_records == 0 {
            self.dropped += 1;
            return Ok(());
        }
        if let Err(err) = out.write_all(&record.encode()) {
            self.out = None;
            return Err(err);
        }
        self.remaining_records -= 1;
        self.written += 1;
        Ok(())
    }

    /// Flushes the buffer to the file.
    pub fn flush(&mut self) -> io::Result<()> {
        match self.out.as_mut() {
            Some(out) => out.flush(),
            None => Ok(()),
        }
    }

    /// Records written.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Records not written because the cap was reached.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cap_counts_the_records_it_does_not_write() {
        let dir = std::env::temp_dir().join(format!("tftblog-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("cap.log");
        let cap = (HEADER_BYTES + 3 * RECORD_BYTES + 10) as u64;
        let mut log = PacketLog::create(&path, cap, 42).unwrap();
        let record = Record {
            t_ns: 7,
            qdelay_ns: 1,
            late_ns: -2,
            flow: FlowKey {
                proto: 6,
                src: 1,
                dst: 2,
                sport: 3,
                dport: 4,
            },
            size: 1500,
            qlen: 9,
            dir: 1,
            event: Event::Depart,
        };
        for _ in 0..5 {
            log.record(&record).unwrap();
        }
        log.flush().unwrap();
        assert_eq!((log.written(), log.dropped()), (3, 2));
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes.len(), HEADER_BYTES + 3 * RECORD_BYTES);
        assert_eq!(&bytes[..8], MAGIC);
        assert_eq!(u64::from_le_bytes(bytes[16..24].try_into().unwrap()), 42);
        let first = &bytes[HEADER_BYTES..HEADER_BYTES + RECORD_BYTES];
        assert_eq!(first, &record.encode());
        assert_eq!(i64::from_le_bytes(first[16..24].try_into().unwrap()), -2);
        assert_eq!(first[46], Event::Depart as u8);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
