//! What every entry point returns: a status code, with the thread's last error message beside
//! it, and the guard that turns a Rust error or a panic into that code instead of letting it
//! cross into C.

use std::cell::RefCell;
use std::ffi::{c_char, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The outcome of a call. 0 is success, positive values are outcomes that are not failures
/// (nothing to report yet), negative values are errors; the thread's last error message
/// (`tfrc_udp_last_error`) says more about each error. New codes may be added in a minor
/// version: treat an unknown negative code as an error.
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TfrcUdpStatus {
    /// The call did what it says.
    Ok = 0,
    /// A poll found nothing waiting (no rate change, no expired payload).
    Empty = 1,
    /// A receive waited its whole timeout and no payload came.
    Timeout = 2,
    /// A pointer the call needs was null.
    NullPointer = -1,
    /// An argument is out of range or malformed: bad UTF-8, an unknown preset, a priority or a
    /// deadline out of range, an option the session refuses.
    InvalidArgument = -2,
    /// An address could not be parsed, resolved or bound.
    Address = -3,
    /// The send queue holds its bound: the payload was not queued (and was counted as a drop).
    QueueFull = -4,
    /// The payload is larger than one datagram can carry (`tfrc_udp_sender_max_payload`).
    PayloadTooLarge = -5,
    /// The caller's buffer is too small; the call says the size it needs and changed nothing
    /// (a payload stays pending for the next receive).
    BufferTooSmall = -6,
    /// The session was closed (or, for a receiver, closed and every payload taken).
    Closed = -7,
    /// A system call failed: the session's loop ended on a socket or timer error, or a thread
    /// could not be started.
    Io = -8,
    /// The library panicked (a bug); the call did nothing more. Please report it with the
    /// message.
    Panic = -9,
}

/// An error on its way to C: its code and its message.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) status: TfrcUdpStatus,
    pub(crate) message: String,
}

impl Failure {
    /// A failure with `status` and `message`.
    pub(crate) fn new(status: TfrcUdpStatus, message: impl Into<String>) -> Failure {
        Failure {
            status,
            message: message.into(),
        }
    }

    /// `what` was a null pointer.
    pub(crate) fn null(what: &str) -> Failure {
        Failure::new(TfrcUdpStatus::NullPointer, format!("{what}: null pointer"))
    }

    /// `what` is out of range or malformed.
    pub(crate) fn invalid(what: &str, why: impl std::fmt::Display) -> Failure {
        Failure::new(TfrcUdpStatus::InvalidArgument, format!("{what}: {why}"))
    }
}

/// The steps of opening a session whose failure is the address's fault (tfrc-udp's contexts).
const ADDRESS_STEPS: [&str; 3] = [
    "binding the socket",
    "resolving the peer address",
    "checking the peer's address family",
];

impl From<tfrc_udp::TransportError> for Failure {
    fn from(err: tfrc_udp::TransportError) -> Failure {
        let status = match &err {
            tfrc_udp::TransportError::Option(_) => TfrcUdpStatus::InvalidArgument,
            tfrc_udp::TransportError::Io { context, .. } if ADDRESS_STEPS.contains(context) => {
                TfrcUdpStatus::Address
            }
            _ => TfrcUdpStatus::Io,
        };
        Failure::new(status, err.to_string())
    }
}

thread_local! {
    /// The message of the last error on this thread (empty when none yet).
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_last_error(message: &str) {
    // A message with an interior NUL (from an OS string) is cut there rather than lost.
    let bytes = message.as_bytes();
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    let text = CString::new(&bytes[..end]).unwrap_or_default();
    LAST_ERROR.with(|last| *last.borrow_mut() = text);
}

/// Runs an entry point's body: its outcome as a status, an error's message stored as the
/// thread's last error, and a panic caught here (it must not unwind into C).
pub(crate) fn guard(body: impl FnOnce() -> Result<TfrcUdpStatus, Failure>) -> TfrcUdpStatus {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(status)) => status,
        Ok(Err(failure)) => {
            set_last_error(&failure.message);
            failure.status
        }
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_owned());
            set_last_error(&format!("internal error (panic): {what}"));
            TfrcUdpStatus::Panic
        }
    }
}

/// The message of the last error returned on the calling thread, NUL-terminated UTF-8 (empty
/// if no call on this thread has failed). The text stays valid until the next failing call on
/// the same thread; copy it to keep it. Never null.
#[no_mangle]
pub extern "C" fn tfrc_udp_last_error() -> *const c_char {
    let read = catch_unwind(|| LAST_ERROR.with(|last| last.borrow().as_ptr()));
    // A panic here (the thread-local being torn down at thread exit) leaves a static empty
    // string.
    read.unwrap_or(c"".as_ptr())
}

/// A static, NUL-terminated name for `status` ("TFRC_UDP_STATUS_QUEUE_FULL"; "unknown status"
/// for a value this version does not know). Never null; never freed.
#[no_mangle]
pub extern "C" fn tfrc_udp_status_name(status: i32) -> *const c_char {
    let name: &'static CStr = match status {
        0 => c"TFRC_UDP_STATUS_OK",
        1 => c"TFRC_UDP_STATUS_EMPTY",
        2 => c"TFRC_UDP_STATUS_TIMEOUT",
        -1 => c"TFRC_UDP_STATUS_NULL_POINTER",
        -2 => c"TFRC_UDP_STATUS_INVALID_ARGUMENT",
        -3 => c"TFRC_UDP_STATUS_ADDRESS",
        -4 => c"TFRC_UDP_STATUS_QUEUE_FULL",
        -5 => c"TFRC_UDP_STATUS_PAYLOAD_TOO_LARGE",
        -6 => c"TFRC_UDP_STATUS_BUFFER_TOO_SMALL",
        -7 => c"TFRC_UDP_STATUS_CLOSED",
        -8 => c"TFRC_UDP_STATUS_IO",
        -9 => c"TFRC_UDP_STATUS_PANIC",
        _ => c"unknown status",
    };
    name.as_ptr()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn last_error() -> String {
        // SAFETY: tfrc_udp_last_error returns a NUL-terminated string that stays valid until
        // the next failing call on this thread; it is copied at once.
        unsafe { CStr::from_ptr(tfrc_udp_last_error()) }
            .to_str()
            .unwrap()
            .to_owned()
    }

    #[test]
    fn a_panic_becomes_a_status_and_a_message() {
        let status = guard(|| panic!("boom"));
        assert_eq!(status, TfrcUdpStatus::Panic);
        assert_eq!(last_error(), "internal error (panic): boom");
        let status = guard(|| Err(Failure::invalid("x", "bad \0cut")));
        assert_eq!(status, TfrcUdpStatus::InvalidArgument);
        assert_eq!(last_error(), "x: bad ");
    }

    #[test]
    fn every_status_has_its_header_name() {
        for (status, name) in [
            (TfrcUdpStatus::Ok, "TFRC_UDP_STATUS_OK"),
            (TfrcUdpStatus::Empty, "TFRC_UDP_STATUS_EMPTY"),
            (TfrcUdpStatus::Timeout, "TFRC_UDP_STATUS_TIMEOUT"),
            (TfrcUdpStatus::NullPointer, "TFRC_UDP_STATUS_NULL_POINTER"),
            (
                TfrcUdpStatus::InvalidArgument,
                "TFRC_UDP_STATUS_INVALID_ARGUMENT",
            ),
            (TfrcUdpStatus::Address, "TFRC_UDP_STATUS_ADDRESS"),
            (TfrcUdpStatus::QueueFull, "TFRC_UDP_STATUS_QUEUE_FULL"),
            (
                TfrcUdpStatus::PayloadTooLarge,
                "TFRC_UDP_STATUS_PAYLOAD_TOO_LARGE",
            ),
            (
                TfrcUdpStatus::BufferTooSmall,
                "TFRC_UDP_STATUS_BUFFER_TOO_SMALL",
            ),
            (TfrcUdpStatus::Closed, "TFRC_UDP_STATUS_CLOSED"),
            (TfrcUdpStatus::Io, "TFRC_UDP_STATUS_IO"),
            (TfrcUdpStatus::Panic, "TFRC_UDP_STATUS_PANIC"),
        ] {
            // SAFETY: tfrc_udp_status_name returns a static NUL-terminated string.
            let got = unsafe { CStr::from_ptr(tfrc_udp_status_name(status as i32)) };
            assert_eq!(got.to_str().unwrap(), name);
        }
        // The header is also checked (tests/header.rs): these names are cbindgen's.
        let include = include_str!("../include/tfrc_udp.h");
        assert!(include.contains("TFRC_UDP_STATUS_BUFFER_TOO_SMALL = -6"));
    }
}
