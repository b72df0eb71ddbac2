//! Counters for every datagram a session read, by what became of it: the hostile-input ledger.
//!
//! Nothing a peer (or anyone else) sends can make a session panic, allocate without bound or
//! act on a report it should not: each datagram is either used or counted here and dropped.

use tfrc::wire::WireStats;

/// What became of the datagrams a session read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InputStats {
    /// Datagrams read from the socket.
    pub datagrams: u64,
    /// Parse outcomes (malformed datagrams by cause: truncated, unknown version, unknown type,
    /// bad field, bad length); at a sender, of the datagrams from the peer's address only.
    pub wire: WireStats,
    /// At a sender, datagrams from an address other than the peer's (dropped unparsed).
    pub foreign_source: u64,
    /// Well-formed packets of another session: at a receiver, data of another sender while
    /// the current session is live; at a sender, reports echoing another session (a receiver
    /// still answering this port's previous sender, or a forger).
    pub other_session: u64,
    /// Well-formed packets of the kind this end never receives (data at a sender, feedback at
    /// a receiver).
    pub wrong_kind: u64,
    /// Errors reading the socket other than "nothing to read" (ICMP errors and the like).
    pub socket_errors: u64,
}

impl InputStats {
    /// Datagrams dropped for any reason: from elsewhere, malformed, or of the wrong kind
    /// (replayed and duplicated feedback is the TFRC sender's to count, by cause).
    pub fn dropped(&self) -> u64 {
        [
            self.foreign_source,
            self.wire.rejected(),
            self.wrong_kind,
            self.other_session,
        ]
        .into_iter()
        .fold(0, u64::saturating_add)
    }
}

/// The receive buffer's size: larger than any UDP payload (65507 bytes over IPv4), so a
/// datagram is never silently truncated into something that parses.
pub const RECV_BUFFER: usize = 65_536;
