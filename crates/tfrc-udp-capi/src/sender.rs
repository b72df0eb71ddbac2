//! The sender's C functions: open a TFRC sender whose loop runs on a thread of its own, queue
//! payloads with a deadline and a priority, flush, read the allowed rate and the live
//! statistics, poll rate changes and expired payloads, close and free. Each converts its
//! arguments and calls tfrc-udp's `BackgroundSender` and `SenderHandle`; nothing more.

use std::ffi::c_char;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::mpsc::{Receiver, TryRecvError};
use std::sync::{Mutex, MutexGuard};

use tfrc::wire::DATA_HEADER_LEN;
use tfrc::TfrcConfig;
use tfrc_udp::{
    BackgroundSender, Expired, QueueError, RateChange, SendOptions, SenderOptions, UdpSender,
    PRIORITY_LEVELS,
};

use crate::args;
use crate::records::{TfrcUdpExpired, TfrcUdpRateChange, TfrcUdpSenderStats};
use crate::status::{guard, Failure, TfrcUdpStatus};

/// The preset used when the caller passes none.
pub(crate) const DEFAULT_PRESET: &str = "rfc5348";

/// A TFRC sender session (opaque). Every function but `tfrc_udp_sender_free` may be called
/// from any thread, concurrently.
#[derive(Debug)]
pub struct TfrcUdpSender {
    session: BackgroundSender,
    rate_changes: Mutex<Receiver<RateChange>>,
    expirations: Mutex<Receiver<Expired>>,
    max_payload: usize,
}

/// A mutex's contents even if a thread panicked holding it (each holds a channel end).
fn locked<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl TfrcUdpSender {
    fn open(
        peer: &str,
        bind: Option<&str>,
        preset: &str,
        datagram_bytes: u32,
        queue_packets: u32,
    ) -> Result<TfrcUdpSender, Failure> {
        let mut config =
            TfrcConfig::preset(preset).map_err(|err| Failure::invalid("preset", err))?;
        if datagram_bytes != 0 {
            config.segment_size_bytes = datagram_bytes;
        }
        let max_payload = (config.segment_size_bytes as usize).saturating_sub(DATA_HEADER_LEN);
        let mut options = SenderOptions::new(config);
        if queue_packets != 0 {
            options.queue_packets = queue_packets as usize;
        }
        let peer: SocketAddr = peer
            .to_socket_addrs()
            .ok()
            .and_then(|mut all| all.next())
            .ok_or_else(|| {
                Failure::new(
                    TfrcUdpStatus::Address,
                    format!("peer: cannot resolve {peer:?} (expected host:port)"),
                )
            })?;
        // The wildcard of the peer's family, so that an IPv6 peer gets an IPv6 socket.
        let wildcard = if peer.is_ipv4() {
            "0.0.0.0:0"
        } else {
            "[::]:0"
        };
        let sender = UdpSender::bind(bind.unwrap_or(wildcard), peer, options)?;
        let session = BackgroundSender::spawn(sender)?;
        let handle = session.handle();
        Ok(TfrcUdpSender {
            rate_changes: Mutex::new(handle.rate_changes()),
            expirations: Mutex::new(handle.expirations()),
            max_payload,
            session,
        })
    }

    /// An error if the loop no longer runs: the loop's own error if it failed, `Closed` if it
    /// was closed.
    fn check_running(&self) -> Result<(), Failure> {
        if self.session.is_running() {
            return Ok(());
        }
        match self.session.close() {
            Ok(_) => Err(Failure::new(TfrcUdpStatus::Closed, "the sender is closed")),
            Err(err) => Err(Failure::new(TfrcUdpStatus::Io, err.to_string())),
        }
    }

    fn send(&self, payload: &[u8], options: SendOptions) -> Result<u64, Failure> {
        self.check_running()?;
        self.session
            .handle()
            .send_with(payload.to_vec(), options)
            .map_err(|err| {
                let status = match err {
                    QueueError::Full => TfrcUdpStatus::QueueFull,
                    QueueError::TooLarge { .. } => TfrcUdpStatus::PayloadTooLarge,
                    QueueError::BadPriority { .. } | QueueError::BadDeadline => {
                        TfrcUdpStatus::InvalidArgument
                    }
                };
                Failure::new(status, err.to_string())
            })
    }
}

/// Opens a sender to `peer` (`"host:port"`, `"[::1]:port"`) and starts its loop on a thread
/// of its own; `*out` receives the handle, to be freed with `tfrc_udp_sender_free`.
///
/// - `bind`: the local address ("0.0.0.0:0" style); NULL binds the wildcard address of the
///   peer's family on a free port.
/// - `preset`: the TFRC configuration, "rfc5348" or "floyd2000"; NULL is "rfc5348".
/// - `datagram_bytes`: the datagram size s, header included (35 to 65507); 0 keeps the
///   preset's (1000 for rfc5348). A payload may be up to s - TFRC_UDP_HEADER_BYTES bytes.
/// - `queue_packets`: the send queue's bound in payloads (1 to 65536, and at most 64 MiB of
///   datagrams); 0 is 256.
///
/// A host name in `peer` is resolved here (the system resolver's own timeout bounds it); the
/// first address it gives is used.
///
/// Errors: NULL_POINTER (`peer` or `out`), INVALID_ARGUMENT (bad UTF-8, an unknown preset, an
/// option out of range), ADDRESS (the peer cannot be resolved, `bind` cannot be bound), IO.
///
/// # Safety
/// `peer`, and `bind` and `preset` when not NULL, are NUL-terminated strings; `out` is valid
/// for writing one pointer.
#[no_mangle]
pub unsafe extern "C" fn tfrc_udp_sender_open(
    peer: *const c_char,
    bind: *const c_char,
    preset: *const c_char,
    datagram_bytes: u32,
    queue_packets: u32,
    out: *mut *mut TfrcUdpSender,
) -> TfrcUdpStatus {
    guard(|| {
        if out.is_null() {
            return Err(Failure::null("out"));
        }
        // SAFETY: the caller promises a NUL-terminated string.
        let peer = unsafe { args::text(peer, "peer") }?;
        // SAFETY: the caller promises a NUL-terminated string or NULL.
        let bind = unsafe { args::optional_text(bind, "bind") }?;
        // SAFETY: the caller promises a NUL-terminated string or NULL.
        let preset = unsafe { args::optional_text(preset, "preset") }?;
        let sender = TfrcUdpSender::open(
            peer,
            bind,
            preset.unwrap_or(DEFAULT_PRESET),
            datagram_bytes,
            queue_packets,
        )?;
        let raw = Box::into_raw(Box::new(sender));
        // SAFETY: `out` is not null and the caller promises it is writable.
        unsafe { args::write(out, raw, "out") }?;
        Ok(TfrcUdpStatus::Ok)
    })
}

/// Queues `len` bytes at `payload` for the next send opportunity and writes its ticket (the
/// number that names it if it expires, counted from 0) to `*ticket` when `ticket` is not NULL.
/// The same as `tfrc_udp_sender_send_grouped` with no group.
///
/// - `deadline_ns`: drop the payload, counted and announced (`tfrc_udp_sender_next_expired`),
///   if it has not been sent this long after it was queued; 0 or negative: no deadline. At
///   most TFRC_UDP_MAX_DEADLINE_NS.
/// - `priority`: 0 to TFRC_UDP_PRIORITY_LEVELS - 1; higher is always sent first, first in
///   first out within a level.
///
/// Errors: QUEUE_FULL (the queue holds its bound: the payload is not queued, and is counted as
/// a drop; payloads already past their deadline are dropped first to make room),
/// PAYLOAD_TOO_LARGE (more than `tfrc_udp_sender_max_payload` bytes), INVALID_ARGUMENT (a
/// priority or a deadline out of range), NULL_POINTER (`sender`, or `payload` with `len` > 0),
/// CLOSED, IO (the loop ended on an error; the message says which).
///
/// # Safety
/// `sender` is a live handle; `payload` is readable for `len` bytes (it is copied); `ticket`
/// is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tfrc_udp_sender_send(
    sender: *mut TfrcUdpSender,
    payload: *const u8,
    len: usize,
    deadline_ns: i64,
    priority: u8,
    ticket: *mut u64,
) -> TfrcUdpStatus {
    // SAFETY: the caller's promises are this function's.
    unsafe { tfrc_udp_sender_send_grouped(sender, payload, len, deadline_ns, priority, -1, ticket) }
}

/// As `tfrc_udp_sender_send`, with the payload a member of `group` (0 or more; negative: none):
/// payloads of one group (the parts of one video frame) expire together, so when one is
/// dropped at its deadline the others of its group still queued are dropped with it, and so is
/// a part queued later (the sender remembers the last 64 groups that expired: do not reuse a
/// group number soon).
///
/// # Safety
/// As `tfrc_udp_sender_send`.
#[no_mangle]
pub unsafe extern "C" fn tfrc_udp_sender_send_grouped(
    sender: *mut TfrcUdpSender,
    payload: *const u8,
    len: usize,
    deadline_ns: i64,
    priority: u8,
    group: i64,
    ticket: *mut u64,
) -> TfrcUdpStatus {
    guard(|| {
        // SAFETY: the caller promises a live handle.
        let sender = unsafe { args::handle(sender, "sender") }?;
        // SAFETY: the caller promises `len` readable bytes at `payload`.
        let payload = unsafe { args::bytes(payload, len, "payload") }?;
        let options = SendOptions {
            deadline: args::deadline(deadline_ns),
            priority,
            group: u64::try_from(group).ok(),
        };
        let issued = sender.send(payload, options)?;
        // SAFETY: the caller promises `ticket` is NULL or writable.
        unsafe { args::write_optional(ticket, issued) };
        Ok(TfrcUdpStatus::Ok)
    })
}

/// Removes every queued payload (counted as flushed), writing how many to `*removed` when
/// `removed` is not NULL: an encoder restarting from a key frame drops what depends on the
/// old one. Errors: NULL_POINTER.
///
/// # Safety
/// `sender` is a live handle; `removed` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tfrc_udp_sender_flush(
    sender: *mut TfrcUdpSender,
    removed: *mut usize,
) -> TfrcUdpStatus {
    guard(|| {
        // SAFETY: the caller promises a live handle.
        let sender = unsafe { args::handle(sender, "sender") }?;
        let count = sender.session.handle().flush();
        // SAFETY: the caller promises `removed` is NULL or writable.
        unsafe { args::write_optional(removed, count) };
        Ok(TfrcUdpStatus::Ok)
    })
}

/// Removes every queued payload of priority below `priority` (0 to
/// TFRC_UDP_PRIORITY_LEVELS; counted as flushed), writing how many to `*removed` when not
/// NULL. Errors: NULL_POINTER, INVALID_ARGUMENT (`priority` out of range).
///
/// # Safety
/// `sender` is a live handle; `removed` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tfrc_udp_sender_flush_below(
    sender: *mut TfrcUdpSender,
    priority: u8,
    removed: *mut usize,
) -> TfrcUdpStatus {
    guard(|| {
        // SAFETY: the caller promises a live handle.
        let sender = unsafe { args::handle(sender, "sender") }?;
        if usize::from(priority) > PRIORITY_LEVELS {
            return Err(Failure::invalid(
                "priority",
                format!("expected 0 to {PRIORITY_LEVELS}, found {priority}"),
            ));
        }
        let count = sender.session.handle().flush_below(priority);
        // SAFETY: the caller promises `removed` is NULL or writable.
        unsafe { args::write_optional(removed, count) };
        Ok(TfrcUdpStatus::Ok)
    })
}

/// Writes the allowed sending rate X, bytes per second, to `*bytes_per_s`: what an encoder
/// should aim at (as of the last feedback or timer event). Errors: NULL_POINTER.
///
/// # Safety
/// `sender` is a live handle; `bytes_per_s` is writable.
#[no_mangle]
pub unsafe extern "C" fn tfrc_udp_sender_allowed_rate(
    sender: *mut TfrcUdpSender,
    bytes_per_s: *mut f64,
) -> TfrcUdpStatus {
    guard(|| {
        // SAFETY: the caller promises a live handle.
        let sender = unsafe { args::handle(sender, "sender") }?;
        let rate = sender.session.handle().allowed_rate_bytes_per_s();
        // SAFETY: the caller promises `bytes_per_s` is writable.
        unsafe { args::write(bytes_per_s, rate, "bytes_per_s") }?;
        Ok(TfrcUdpStatus::Ok)
    })
}

/// Writes the largest payload one datagram carries (the datagram size minus
/// TFRC_UDP_HEADER_BYTES) to `*bytes`. Errors: NULL_POINTER.
///
/// # Safety
/// `sender` is a live handle; `bytes` is writable.
#[no_mangle]
pub unsafe extern "C" fn tfrc_udp_sender_max_payload(
    sender: *mut TfrcUdpSender,
    bytes: *mut usize,
) -> TfrcUdpStatus {
    guard(|| {
        // SAFETY: the caller promises a live handle.
        let sender = unsafe { args::handle(sender, "sender") }?;
        // SAFETY: the caller promises `bytes` is writable.
        unsafe { args::write(bytes, sender.max_payload, "bytes") }?;
        Ok(TfrcUdpStatus::Ok)
    })
}

/// Fills `*stats` with the live statistics: X, X_calc, X_recv, p, R, t_RTO and the counters
/// as of the loop's last pass, the queue as of now. Readable at any time from any thread,
/// after close too (the last values). Errors: NULL_POINTER.
///
/// # Safety
/// `sender` is a live handle; `stats` is writable.
#[no_mangle]
pub unsafe extern "C" fn tfrc_udp_sender_stats(
    sender: *mut TfrcUdpSender,
    stats: *mut TfrcUdpSenderStats,
) -> TfrcUdpStatus {
    guard(|| {
        // SAFETY: the caller promises a live handle.
        let sender = unsafe { args::handle(sender, "sender") }?;
        let now = TfrcUdpSenderStats::from(&sender.session.handle().stats());
        // SAFETY: the caller promises `stats` is writable.
        unsafe { args::write(stats, now, "stats") }?;
        Ok(TfrcUdpStatus::Ok)
    })
}

/// Takes the oldest rate change not yet read (a change of X by more than 5%, recorded from the
/// moment the sender was opened; at most 64 are kept unread, later ones are dropped until
/// read) into `*change`, without waiting. Returns OK, or EMPTY when there is none. Errors:
/// NULL_POINTER.
///
/// # Safety
/// `sender` is a live handle; `change` is writable.
#[no_mangle]
pub unsafe extern "C" fn tfrc_udp_sender_next_rate_change(
    sender: *mut TfrcUdpSender,
    change: *mut TfrcUdpRateChange,
) -> TfrcUdpStatus {
    guard(|| {
        // SAFETY: the caller promises a live handle.
        let sender = unsafe { args::handle(sender, "sender") }?;
        if change.is_null() {
            return Err(Failure::null("change"));
        }
        let next = locked(&sender.rate_changes).try_recv();
        match next {
            Ok(c) => {
                // SAFETY: the caller promises `change` is writable.
                unsafe { args::write(change, TfrcUdpRateChange::from(&c), "change") }?;
                Ok(TfrcUdpStatus::Ok)
            }
            Err(TryRecvError::Empty | TryRecvError::Disconnected) => Ok(TfrcUdpStatus::Empty),
        }
    })
}

/// Takes the oldest payload dropped at its deadline and not yet read (at most 1024 are kept
/// unread; the count is always in the statistics) into `*expired`, without waiting. Returns
/// OK, or EMPTY when there is none. Errors: NULL_POINTER.
///
/// # Safety
/// `sender` is a live handle; `expired` is writable.
#[no_mangle]
pub unsafe extern "C" fn tfrc_udp_sender_next_expired(
    sender: *mut TfrcUdpSender,
    expired: *mut TfrcUdpExpired,
) -> TfrcUdpStatus {
    guard(|| {
        // SAFETY: the caller promises a live handle.
        let sender = unsafe { args::handle(sender, "sender") }?;
        if expired.is_null() {
            return Err(Failure::null("expired"));
        }
        let next = locked(&sender.expirations).try_recv();
        match next {
            Ok(e) => {
                // SAFETY: the caller promises `expired` is writable.
                unsafe { args::write(expired, TfrcUdpExpired::from(&e), "expired") }?;
                Ok(TfrcUdpStatus::Ok)
            }
            Err(TryRecvError::Empty | TryRecvError::Disconnected) => Ok(TfrcUdpStatus::Empty),
        }
    })
}

/// Writes the socket's local address ("0.0.0.0:40000") NUL-terminated into `buf` of
/// `capacity` bytes (64 always suffice). Errors: NULL_POINTER, BUFFER_TOO_SMALL (the message
/// says the size needed; nothing written).
///
/// # Safety
/// `sender` is a live handle; `buf` is writable for `capacity` bytes.
#[no_mangle]
pub unsafe extern "C" fn tfrc_udp_sender_local_addr(
    sender: *mut TfrcUdpSender,
    buf: *mut c_char,
    capacity: usize,
) -> TfrcUdpStatus {
    guard(|| {
        // SAFETY: the caller promises a live handle.
        let sender = unsafe { args::handle(sender, "sender") }?;
        // SAFETY: the caller promises `capacity` writable bytes at `buf`.
        let buf = unsafe { args::buffer(buf.cast(), capacity, "buf") }?;
        args::copy_text(&sender.session.local_addr().to_string(), buf, "buf")?;
        Ok(TfrcUdpStatus::Ok)
    })
}

/// Stops the sender's loop (payloads still queued are not sent) and, when `stats` is not
/// NULL, fills it with the final statistics. Closing again is harmless and reports the same.
/// The handle stays valid (statistics, polls) until freed; sending on it returns CLOSED.
/// Errors: NULL_POINTER, IO (the loop had ended on an error; the message says which).
///
/// # Safety
/// `sender` is a live handle; `stats` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tfrc_udp_sender_close(
    sender: *mut TfrcUdpSender,
    stats: *mut TfrcUdpSenderStats,
) -> TfrcUdpStatus {
    guard(|| {
        // SAFETY: the caller promises a live handle.
        let sender = unsafe { args::handle(sender, "sender") }?;
        let report = sender
            .session
            .close()
            .map_err(|err| Failure::new(TfrcUdpStatus::Io, err.to_string()))?;
        let last = TfrcUdpSenderStats::from(&report);
        // SAFETY: the caller promises `stats` is NULL or writable.
        unsafe { args::write_optional(stats, last) };
        Ok(TfrcUdpStatus::Ok)
    })
}

/// Closes the sender if it is still open and frees the handle. NULL is ignored. Call it once,
/// after every other call on the handle has returned; the handle is invalid afterwards.
///
/// # Safety
/// `sender` is NULL or a handle from `tfrc_udp_sender_open` not yet freed, used by no other
/// thread.
#[no_mangle]
pub unsafe extern "C" fn tfrc_udp_sender_free(sender: *mut TfrcUdpSender) {
    let _ = guard(|| {
        if !sender.is_null() {
            // SAFETY: the caller hands back a pointer from Box::into_raw, used by no one else;
            // dropping it closes the loop (BackgroundSender's Drop).
            drop(unsafe { Box::from_raw(sender) });
        }
        Ok(TfrcUdpStatus::Ok)
    });
}
