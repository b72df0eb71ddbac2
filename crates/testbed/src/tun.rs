//! A TUN device: `/dev/net/tun` attached to a named layer-3 interface with `TUNSETIFF`
//! (Linux `Documentation/networking/tuntap.rst`). Reads return one whole IP packet, writes
//! inject one. The device is not persistent: it disappears when the relay closes it or dies,
//! which is half of the testbed's cleanup guarantee.
//!
//! The one `ioctl` here is the crate's only unsafe code (rustix has no safe TUN wrapper).
#![allow(unsafe_code)]

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::OpenOptionsExt;

use rustix::fs::OFlags;
use rustix::ioctl::{ioctl, opcode, Opcode, Setter};

/// `IFF_TUN`: an IP-level device (no Ethernet header).
const IFF_TUN: i16 = 0x0001;
/// `IFF_NO_PI`: no 4-byte packet-information prefix on reads and writes.
const IFF_NO_PI: i16 = 0x1000;
/// `TUNSETIFF = _IOW('T', 202, int)` from `<linux/if_tun.h>`.
const TUNSETIFF: Opcode = opcode::write::<std::ffi::c_int>(b'T', 202);

/// `struct ifreq` as `TUNSETIFF` reads it: the name, then the flags at the start of the union.
#[repr(C)]
#[derive(Debug)]
struct IfReq {
    name: [u8; 16],
    flags: i16,
    _union_rest: [u8; 22],
}

/// An open, non-blocking TUN device.
#[derive(Debug)]
pub struct Tun {
    file: File,
    name: String,
}

impl Tun {
    /// Creates the TUN interface `name` (1 to 15 bytes) in the caller's network namespace and
    /// attaches to it. Needs `CAP_NET_ADMIN`; fails if an interface of that name exists.
    pub fn create(name: &str) -> io::Result<Tun> {
        if name.is_empty() || name.len() > 15 || name.contains('\0') {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("TUN name {name:?} must be 1 to 15 bytes"),
            ));
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags((OFlags::NONBLOCK | OFlags::CLOEXEC).bits() as i32)
            .open("/dev/net/tun")
            .map_err(|e| io::Error::new(e.kind(), format!("open /dev/net/tun: {e}")))?;
        let mut req = IfReq {
            name: [0; 16],
            flags: IFF_TUN | IFF_NO_PI,
            _union_rest: [0; 22],
        };
        req.name[..name.len()].copy_from_slice(name.as_bytes());
        // SAFETY: TUNSETIFF reads (and may write back the name of) a `struct ifreq`, 40 bytes
        // on Linux: a NUL-terminated name of 16 bytes (we wrote at most 15 bytes into zeros)
        // followed by a 24-byte union whose first member is the `short` flags. `IfReq` has
        // exactly that layout (`repr(C)`), and `Setter` passes a pointer to its own copy of it,
        // valid and writable for the duration of the call. `file` is an open /dev/net/tun fd.
        unsafe { ioctl(&file, Setter::<TUNSETIFF, IfReq>::new(req)) }
            .map_err(|e| io::Error::other(format!("TUNSETIFF {name}: {e}")))?;
        Ok(Tun {
            file,
            name: name.to_owned(),
        })
    }

    /// The interface's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Reads one packet into `buf`; `Ok(None)` when none is waiting.
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        match (&self.file).read(buf) {
            Ok(n) => Ok(Some(n)),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(None),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Writes one packet; whether the kernel took it whole.
    pub fn send(&self, packet: &[u8]) -> bool {
        matches!((&self.file).write(packet), Ok(n) if n == packet.len())
    }
}

impl AsFd for Tun {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.file.as_fd()
    }
}
