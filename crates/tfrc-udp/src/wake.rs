//! A wake-up signal (Linux `eventfd`) that lets another thread interrupt the driver's wait: the
//! application queued a payload while the sender slept until its nofeedback deadline, or asked
//! the loop to stop.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::event::{eventfd, EventfdFlags};

/// A counter fd that polls readable after [`Wake::notify`] until [`Wake::clear`].
#[derive(Debug)]
pub struct Wake {
    fd: OwnedFd,
}

impl Wake {
    /// A new, unsignalled wake-up.
    pub fn new() -> io::Result<Wake> {
        let fd = eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK)?;
        Ok(Wake { fd })
    }

    /// Makes the fd readable (from any thread). A full counter (never in practice) is already
    /// readable, so a failed write loses nothing.
    pub fn notify(&self) {
        let _ = rustix::io::write(&self.fd, &1u64.to_ne_bytes());
    }

    /// Consumes pending notifications.
    pub fn clear(&self) {
        let mut buf = [0u8; 8];
        let _ = rustix::io::read(&self.fd, &mut buf);
    }
}

impl AsFd for Wake {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}
