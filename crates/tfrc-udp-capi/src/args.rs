//! Arguments as C passes them, checked and converted: strings, handles, out-pointers and
//! durations. Every raw pointer the API takes is read or written here and nowhere else, each
//! behind a null check.

use std::ffi::{c_char, CStr};
use std::time::Duration;

use crate::status::Failure;

/// The UTF-8 text of the NUL-terminated string `ptr`, an error naming `what` if it is null or
/// not UTF-8.
///
/// # Safety
/// `ptr` is null or points to a NUL-terminated string that stays valid and unchanged for
/// `'a`.
pub(crate) unsafe fn text<'a>(ptr: *const c_char, what: &str) -> Result<&'a str, Failure> {
    if ptr.is_null() {
        return Err(Failure::null(what));
    }
    // SAFETY: not null, and the caller promises a NUL-terminated string valid for 'a.
    let bytes = unsafe { CStr::from_ptr(ptr) };
    bytes
        .to_str()
        .map_err(|err| Failure::invalid(what, format!("not UTF-8 ({err})")))
}

/// Like [`text`], but a null `ptr` is `None` (an optional argument).
///
/// # Safety
/// As for [`text`].
pub(crate) unsafe fn optional_text<'a>(
    ptr: *const c_char,
    what: &str,
) -> Result<Option<&'a str>, Failure> {
    if ptr.is_null() {
        return Ok(None);
    }
    // SAFETY: the caller's promise, passed on.
    unsafe { text(ptr, what) }.map(Some)
}

/// The object behind the handle `ptr`, an error naming `what` if it is null.
///
/// # Safety
/// `ptr` is null or a handle this library returned and has not freed, valid for `'a`.
pub(crate) unsafe fn handle<'a, T>(ptr: *const T, what: &str) -> Result<&'a T, Failure> {
    // SAFETY: the caller promises a live handle when not null.
    unsafe { ptr.as_ref() }.ok_or_else(|| Failure::null(what))
}

/// Writes `value` through the out-pointer `ptr`, an error naming `what` if it is null.
///
/// # Safety
/// `ptr` is null or valid for writing one `T` (alignment included).
pub(crate) unsafe fn write<T>(ptr: *mut T, value: T, what: &str) -> Result<(), Failure> {
    if ptr.is_null() {
        return Err(Failure::null(what));
    }
    // SAFETY: not null, and the caller promises it is valid for a write of one T.
    unsafe { ptr.write(value) };
    Ok(())
}

/// Writes `value` through `ptr` if it is not null (an optional out-pointer).
///
/// # Safety
/// As for [`write`].
pub(crate) unsafe fn write_optional<T>(ptr: *mut T, value: T) {
    if !ptr.is_null() {
        // SAFETY: not null, and the caller promises it is valid for a write of one T.
        unsafe { ptr.write(value) };
    }
}

/// The caller's buffer `ptr` of `capacity` bytes as a slice (empty when `capacity` is 0, where
/// `ptr` may be null), an error naming `what` if it is null with a capacity.
///
/// # Safety
/// When `capacity` > 0, `ptr` is null or valid for writing `capacity` bytes for `'a`, and
/// nothing else reads or writes them meanwhile.
pub(crate) unsafe fn buffer<'a>(
    ptr: *mut u8,
    capacity: usize,
    what: &str,
) -> Result<&'a mut [u8], Failure> {
    if capacity == 0 {
        return Ok(&mut []);
    }
    if ptr.is_null() {
        return Err(Failure::null(what));
    }
    // SAFETY: not null, and the caller promises `capacity` writable bytes, not aliased.
    Ok(unsafe { std::slice::from_raw_parts_mut(ptr, capacity) })
}

/// The caller's payload `ptr` of `len` bytes (empty when `len` is 0, where `ptr` may be null).
///
/// # Safety
/// When `len` > 0, `ptr` is null or valid for reading `len` bytes for `'a`.
pub(crate) unsafe fn bytes<'a>(
    ptr: *const u8,
    len: usize,
    what: &str,
) -> Result<&'a [u8], Failure> {
    if len == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(Failure::null(what));
    }
    // SAFETY: not null, and the caller promises `len` readable bytes.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// A deadline in nanoseconds as C gives it: 0 or negative is none.
pub(crate) fn deadline(nanos: i64) -> Option<Duration> {
    u64::try_from(nanos)
        .ok()
        .filter(|&n| n > 0)
        .map(Duration::from_nanos)
}

/// A timeout in nanoseconds as C gives it: 0 is "do not wait", negative is refused (every
/// wait is bounded by the caller).
pub(crate) fn timeout(nanos: i64, what: &str) -> Result<Duration, Failure> {
    u64::try_from(nanos)
        .map(Duration::from_nanos)
        .map_err(|_| Failure::invalid(what, format!("expected 0 ns or more, found {nanos}")))
}

/// Copies `text` into the caller's buffer NUL-terminated; the bytes it needs (NUL included),
/// or an error saying so when `buf` is too small (nothing written then).
pub(crate) fn copy_text(text: &str, buf: &mut [u8], what: &str) -> Result<usize, Failure> {
    let needed = text.len() + 1;
    if buf.len() < needed {
        return Err(Failure::new(
            crate::status::TfrcUdpStatus::BufferTooSmall,
            format!("{what}: needs {needed} bytes, found {}", buf.len()),
        ));
    }
    buf[..text.len()].copy_from_slice(text.as_bytes());
    buf[text.len()] = 0;
    Ok(needed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadlines_and_timeouts_convert_as_documented() {
        assert_eq!(deadline(0), None);
        assert_eq!(deadline(-5), None);
        assert_eq!(deadline(1_500), Some(Duration::from_nanos(1_500)));
        assert_eq!(timeout(0, "t").unwrap(), Duration::ZERO);
        assert_eq!(timeout(2_000_000, "t").unwrap(), Duration::from_millis(2));
        assert!(timeout(-1, "t").is_err());
    }

    #[test]
    fn strings_are_checked() {
        // SAFETY: each pointer is null or a NUL-terminated literal.
        unsafe {
            assert!(text(std::ptr::null(), "s").is_err());
            assert_eq!(optional_text(std::ptr::null(), "s").unwrap(), None);
            assert_eq!(text(c"ok".as_ptr(), "s").unwrap(), "ok");
            let bad = c"\xff\xfe";
            let err = text(bad.as_ptr(), "peer").unwrap_err();
            assert!(
                err.message.starts_with("peer: not UTF-8"),
                "{}",
                err.message
            );
        }
        let mut small = [0u8; 3];
        assert!(copy_text("abc", &mut small, "addr").is_err());
        let mut room = [7u8; 5];
        assert_eq!(copy_text("abc", &mut room, "addr").unwrap(), 4);
        assert_eq!(&room, b"abc\0\x07");
    }
}
