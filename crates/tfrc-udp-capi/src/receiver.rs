//! The receiver's C functions: open a TFRC receiver whose loop runs on a thread of its own,
//! take payloads into the caller's buffer with their metadata (waiting at most the caller's
//! timeout), read the live statistics, close and free. Each converts its arguments and calls
//! tfrc-udp's `BackgroundReceiver`.
//!
//! A payload that does not fit the caller's buffer is not lost and not cut: the call fails
//! with BUFFER_TOO_SMALL, says the size needed, and the same payload comes first at the next
//! call. Truncating would hand a media decoder a damaged frame it cannot tell from a whole one.

use std::ffi::c_char;
use std::sync::mpsc::RecvTimeoutError;
use std::sync::{Mutex, MutexGuard};

use tfrc::TfrcConfig;
use tfrc_udp::{BackgroundReceiver, ReceivedPayload, ReceiverOptions, UdpReceiver};

use crate::args;
use crate::records::{TfrcUdpDelivery, TfrcUdpReceiverStats};
use crate::sender::DEFAULT_PRESET;
use crate::status::{guard, Failure, TfrcUdpStatus};

/// How many payloads wait for the application when the caller passes 0.
const DEFAULT_MAX_PENDING: usize = 4096;

/// A TFRC receiver session (opaque). Every function but `tfrc_udp_receiver_free` may be called
/// from any thread, concurrently (receives are taken one at a time).
#[derive(Debug)]
pub struct TfrcUdpReceiver {
    session: BackgroundReceiver,
    /// A payload a receive could not hand over (the buffer was too small), first in line for
    /// the next one. Held while a receive waits, so receives are served in order.
    held: Mutex<Option<ReceivedPayload>>,
}

impl TfrcUdpReceiver {
    /// The next payload copied into `buf`, waiting up to `timeout`: the metadata to hand back
    /// (zeroed when there is no payload; its length alone when it does not fit), and the
    /// outcome.
    fn recv(
        &self,
        buf: &mut [u8],
        timeout: std::time::Duration,
    ) -> (TfrcUdpDelivery, Result<TfrcUdpStatus, Failure>) {
        let mut held = lock(&self.held);
        let payload = match held.take() {
            Some(payload) => payload,
            None => match self.session.recv_timeout(timeout) {
                Ok(payload) => payload,
                Err(RecvTimeoutError::Timeout) => {
                    return (TfrcUdpDelivery::default(), Ok(TfrcUdpStatus::Timeout))
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return (TfrcUdpDelivery::default(), Err(self.ended()))
                }
            },
        };
        let len = payload.payload.len();
        let Some(room) = buf.get_mut(..len) else {
            let failure = Failure::new(
                TfrcUdpStatus::BufferTooSmall,
                format!(
                    "buf: the payload (seq {}) needs {len} bytes, found {}; it stays pending",
                    payload.seq,
                    buf.len()
                ),
            );
            *held = Some(payload);
            let needed = TfrcUdpDelivery {
                len: len as u64,
                ..TfrcUdpDelivery::default()
            };
            return (needed, Err(failure));
        };
        room.copy_from_slice(&payload.payload);
        (TfrcUdpDelivery::from(&payload), Ok(TfrcUdpStatus::Ok))
    }

    /// Why no more payloads will come: the loop's error if it failed, else closed.
    fn ended(&self) -> Failure {
        match self.session.close() {
            Ok(_) => Failure::new(
                TfrcUdpStatus::Closed,
                "the receiver is closed and every payload was taken",
            ),
            Err(err) => Failure::new(TfrcUdpStatus::Io, err.to_string()),
        }
    }
}

/// A mutex's contents even if a thread panicked holding it (it holds a whole payload or none).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Binds `bind` ("0.0.0.0:5000", "127.0.0.1:0" for a free port) and starts a receiver's loop on
/// a thread of its own; `*out` receives the handle, to be freed with `tfrc_udp_receiver_free`.
///
/// - `preset`: "rfc5348" or "floyd2000"; NULL is "rfc5348".
/// - `max_pending`: the most payloads that wait for `tfrc_udp_receiver_recv` (1 to 65536); later
///   ones are dropped and counted (`overflow` in the statistics). 0 is 4096.
///
/// Errors: NULL_POINTER (`bind` or `out`), INVALID_ARGUMENT (bad UTF-8, an unknown preset,
/// `max_pending` out of range), ADDRESS (`bind` cannot be parsed or bound), IO.
///
/// # Safety
/// `bind`, and `preset` when not NULL, are NUL-terminated strings; `out` is valid for writing
/// one pointer.
#[no_mangle]
pub unsafe extern "C" fn tfrc_udp_receiver_open(
    bind: *const c_char,
    preset: *const c_char,
    max_pending: u32,
    out: *mut *mut TfrcUdpReceiver,
) -> TfrcUdpStatus {
    guard(|| {
        if out.is_null() {
            return Err(Failure::null("out"));
        }
        // SAFETY: the caller promises a NUL-terminated string.
        let bind = unsafe { args::text(bind, "bind") }?;
        // SAFETY: the caller promises a NUL-terminated string or NULL.
        let preset = unsafe { args::optional_text(preset, "preset") }?;
        let config = TfrcConfig::preset(preset.unwrap_or(DEFAULT_PRESET))
            .map_err(|err| Failure::invalid("preset", err))?;
        let max_pending = match max_pending {
            0 => DEFAULT_MAX_PENDING,
            n => n as usize,
        };
        let receiver = UdpReceiver::bind(bind, ReceiverOptions::new(config))?;
        let session = BackgroundReceiver::spawn(receiver, max_pending)?;
        let raw = Box::into_raw(Box::new(TfrcUdpReceiver {
            session,
            held: Mutex::new(None),
        }));
        // SAFETY: `out` is not null and the caller promises it is writable.
        unsafe { args::write(out, raw, "out") }?;
        Ok(TfrcUdpStatus::Ok)
    })
}

/// Takes the next payload into `buf` (`capacity` bytes) and fills `*meta` with its length and
/// metadata, waiting up to `timeout_ns` nanoseconds for one (0: do not wait; negative is
/// refused, every wait is bounded).
///
/// Returns OK (`meta->len` bytes copied), TIMEOUT (none came in time; `*meta` zeroed), or an
/// error: BUFFER_TOO_SMALL (the payload needs `meta->len` bytes: nothing is copied and the
/// same payload is returned first by the next call; `buf` may be NULL with `capacity` 0 to
/// learn the size), CLOSED (closed, and every pending payload taken), IO (the loop ended on an
/// error), NULL_POINTER, INVALID_ARGUMENT.
///
/// Receives are served one at a time: with several threads receiving on one handle, a call may
/// also wait for the receive in progress on another thread (itself bounded by its timeout).
///
/// # Safety
/// `receiver` is a live handle; `buf` is writable for `capacity` bytes; `meta` is writable.
#[no_mangle]
pub unsafe extern "C" fn tfrc_udp_receiver_recv(
    receiver: *mut TfrcUdpReceiver,
    buf: *mut u8,
    capacity: usize,
    timeout_ns: i64,
    meta: *mut TfrcUdpDelivery,
) -> TfrcUdpStatus {
    guard(|| {
        // SAFETY: the caller promises a live handle.
        let receiver = unsafe { args::handle(receiver, "receiver") }?;
        // SAFETY: the caller promises `capacity` writable bytes at `buf`.
        let buf = unsafe { args::buffer(buf, capacity, "buf") }?;
        if meta.is_null() {
            return Err(Failure::null("meta"));
        }
        let timeout = args::timeout(timeout_ns, "timeout_ns")?;
        let (delivery, outcome) = receiver.recv(buf, timeout);
        // SAFETY: not null, and the caller promises it is writable.
        unsafe { args::write(meta, delivery, "meta") }?;
        outcome
    })
}

/// Fills `*stats` with the live statistics (packets received and lost, loss events, p, X_recv,
/// R, feedback sent, overflow) as of the loop's last pass. Readable at any time from any
/// thread, after close too. Errors: NULL_POINTER.
///
/// # Safety
/// `receiver` is a live handle; `stats` is writable.
#[no_mangle]
pub unsafe extern "C" fn tfrc_udp_receiver_stats(
    receiver: *mut TfrcUdpReceiver,
    stats: *mut TfrcUdpReceiverStats,
) -> TfrcUdpStatus {
    guard(|| {
        // SAFETY: the caller promises a live handle.
        let receiver = unsafe { args::handle(receiver, "receiver") }?;
        let session = &receiver.session;
        let now = TfrcUdpReceiverStats::of(&session.handle().stats(), session.overflow());
        // SAFETY: the caller promises `stats` is writable.
        unsafe { args::write(stats, now, "stats") }?;
        Ok(TfrcUdpStatus::Ok)
    })
}

/// Writes the socket's local address ("127.0.0.1:40000") NUL-terminated into `buf` of
/// `capacity` bytes (64 always suffice): how to learn the port after binding port 0. Errors:
/// NULL_POINTER, BUFFER_TOO_SMALL (the message says the size needed; nothing written).
///
/// # Safety
/// `receiver` is a live handle; `buf` is writable for `capacity` bytes.
#[no_mangle]
pub unsafe extern "C" fn tfrc_udp_receiver_local_addr(
    receiver: *mut TfrcUdpReceiver,
    buf: *mut c_char,
    capacity: usize,
) -> TfrcUdpStatus {
    guard(|| {
        // SAFETY: the caller promises a live handle.
        let receiver = unsafe { args::handle(receiver, "receiver") }?;
        // SAFETY: the caller promises `capacity` writable bytes at `buf`.
        let buf = unsafe { args::buffer(buf.cast(), capacity, "buf") }?;
        args::copy_text(&receiver.session.local_addr().to_string(), buf, "buf")?;
        Ok(TfrcUdpStatus::Ok)
    })
}

/// Stops the receiver's loop and, when `stats` is not NULL, fills it with the final
/// statistics. Payloads already pending stay readable with `tfrc_udp_receiver_recv`, which
/// returns CLOSED once they are taken. Closing again is harmless. Errors: NULL_POINTER, IO
/// (the loop had ended on an error; the message says which).
///
/// # Safety
/// `receiver` is a live handle; `stats` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tfrc_udp_receiver_close(
    receiver: *mut TfrcUdpReceiver,
    stats: *mut TfrcUdpReceiverStats,
) -> TfrcUdpStatus {
    guard(|| {
        // SAFETY: the caller promises a live handle.
        let receiver = unsafe { args::handle(receiver, "receiver") }?;
        let session = &receiver.session;
        let report = session
            .close()
            .map_err(|err| Failure::new(TfrcUdpStatus::Io, err.to_string()))?;
        let last = TfrcUdpReceiverStats::of(&report, session.overflow());
        // SAFETY: the caller promises `stats` is NULL or writable.
        unsafe { args::write_optional(stats, last) };
        Ok(TfrcUdpStatus::Ok)
    })
}

/// Closes the receiver if it is still open and frees the handle (payloads still pending are
/// discarded). NULL is ignored. Call it once, after every other call on the handle has
/// returned; the handle is invalid afterwards.
///
/// # Safety
/// `receiver` is NULL or a handle from `tfrc_udp_receiver_open` not yet freed, used by no
/// other thread.
#[no_mangle]
pub unsafe extern "C" fn tfrc_udp_receiver_free(receiver: *mut TfrcUdpReceiver) {
    let _ = guard(|| {
        if !receiver.is_null() {
            // SAFETY: the caller hands back a pointer from Box::into_raw, used by no one else;
            // dropping it closes the loop (BackgroundReceiver's Drop).
            drop(unsafe { Box::from_raw(receiver) });
        }
        Ok(TfrcUdpStatus::Ok)
    });
}
