//! The C functions called as C would call them, through raw pointers: every error path
//! (null pointers, bad UTF-8, bad addresses and options, a buffer too small, a full queue,
//! expired payloads, a closed handle) returns its status and message instead of crashing, and
//! a loopback pair delivers a payload with its metadata.

// Calling a C ABI from its tests takes raw pointers, as C does.
#![allow(unsafe_code)]
#![deny(clippy::undocumented_unsafe_blocks)]

use std::ffi::{c_char, CStr, CString};
use std::net::UdpSocket;
use std::ptr::{null, null_mut};
use std::time::Duration;

use tfrc_udp_capi::receiver::*;
use tfrc_udp_capi::sender::*;
use tfrc_udp_capi::status::tfrc_udp_last_error;
use tfrc_udp_capi::{
    TfrcUdpDelivery, TfrcUdpExpired, TfrcUdpRateChange, TfrcUdpReceiver, TfrcUdpReceiverStats,
    TfrcUdpSender, TfrcUdpSenderStats, TfrcUdpStatus as S,
};

fn last_error() -> String {
    // SAFETY: a NUL-terminated string valid until the next failing call on this thread,
    // copied at once.
    unsafe { CStr::from_ptr(tfrc_udp_last_error()) }
        .to_string_lossy()
        .into_owned()
}

fn open_sender(peer: &str, queue_packets: u32) -> *mut TfrcUdpSender {
    let peer = CString::new(peer).unwrap();
    let mut sender = null_mut();
    // SAFETY: a NUL-terminated string and a writable out-pointer.
    let status = unsafe {
        tfrc_udp_sender_open(peer.as_ptr(), null(), null(), 0, queue_packets, &mut sender)
    };
    assert_eq!(status, S::Ok, "{}", last_error());
    sender
}

fn open_receiver() -> (*mut TfrcUdpReceiver, String) {
    let mut receiver = null_mut();
    // SAFETY: a NUL-terminated literal and a writable out-pointer.
    let status =
        unsafe { tfrc_udp_receiver_open(c"127.0.0.1:0".as_ptr(), null(), 0, &mut receiver) };
    assert_eq!(status, S::Ok, "{}", last_error());
    let mut buf = [0 as c_char; 64];
    // SAFETY: a live handle and a 64-byte buffer.
    let status = unsafe { tfrc_udp_receiver_local_addr(receiver, buf.as_mut_ptr(), buf.len()) };
    assert_eq!(status, S::Ok);
    // SAFETY: the call wrote a NUL-terminated string into `buf`.
    let addr = unsafe { CStr::from_ptr(buf.as_ptr()) };
    (receiver, addr.to_str().unwrap().to_owned())
}

fn send(sender: *mut TfrcUdpSender, payload: &[u8], deadline_ns: i64, priority: u8) -> (S, u64) {
    let mut ticket = u64::MAX;
    // SAFETY: a live handle, `payload.len()` readable bytes, a writable ticket.
    let status = unsafe {
        tfrc_udp_sender_send(
            sender,
            payload.as_ptr(),
            payload.len(),
            deadline_ns,
            priority,
            &mut ticket,
        )
    };
    (status, ticket)
}

fn sender_stats(sender: *mut TfrcUdpSender) -> TfrcUdpSenderStats {
    let mut stats = TfrcUdpSenderStats::default();
    // SAFETY: a live handle and a writable struct.
    assert_eq!(unsafe { tfrc_udp_sender_stats(sender, &mut stats) }, S::Ok);
    stats
}

/// Polls `done` every 5 ms until it holds or 5 s have passed (the sender's and receiver's
/// threads run when the scheduler lets them: on a loaded host a fixed sleep is not enough).
fn wait_for(mut done: impl FnMut() -> bool) {
    let give_up = std::time::Instant::now() + Duration::from_secs(5);
    while !done() && std::time::Instant::now() < give_up {
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn null_pointers_are_errors_with_a_message() {
    let mut sender = null_mut();
    let mut receiver = null_mut();
    let mut stats = TfrcUdpSenderStats::default();
    let mut meta = TfrcUdpDelivery::default();
    // SAFETY: every pointer is null or valid; null ones are what is tested.
    unsafe {
        assert_eq!(
            tfrc_udp_sender_open(null(), null(), null(), 0, 0, &mut sender),
            S::NullPointer
        );
        assert_eq!(last_error(), "peer: null pointer");
        assert_eq!(
            tfrc_udp_sender_open(c"127.0.0.1:9".as_ptr(), null(), null(), 0, 0, null_mut()),
            S::NullPointer
        );
        assert_eq!(last_error(), "out: null pointer");
        assert_eq!(
            tfrc_udp_receiver_open(null(), null(), 0, &mut receiver),
            S::NullPointer
        );
        assert_eq!(
            tfrc_udp_sender_stats(null_mut(), &mut stats),
            S::NullPointer
        );
        assert_eq!(last_error(), "sender: null pointer");
        assert_eq!(
            tfrc_udp_sender_send(null_mut(), null(), 0, 0, 0, null_mut()),
            S::NullPointer
        );
        assert_eq!(
            tfrc_udp_receiver_recv(null_mut(), null_mut(), 0, 0, &mut meta),
            S::NullPointer
        );
        assert_eq!(
            tfrc_udp_sender_close(null_mut(), null_mut()),
            S::NullPointer
        );
        tfrc_udp_sender_free(null_mut());
        tfrc_udp_receiver_free(null_mut());
    }
    assert!(sender.is_null() && receiver.is_null());
    let sender = open_sender("127.0.0.1:9", 0);
    // SAFETY: a live handle; the null out-pointers and payload are what is tested.
    unsafe {
        assert_eq!(tfrc_udp_sender_stats(sender, null_mut()), S::NullPointer);
        assert_eq!(last_error(), "stats: null pointer");
        assert_eq!(
            tfrc_udp_sender_allowed_rate(sender, null_mut()),
            S::NullPointer
        );
        assert_eq!(
            tfrc_udp_sender_send(sender, null(), 5, 0, 0, null_mut()),
            S::NullPointer
        );
        assert_eq!(last_error(), "payload: null pointer");
        assert_eq!(
            tfrc_udp_sender_next_rate_change(sender, null_mut()),
            S::NullPointer
        );
        assert_eq!(
            tfrc_udp_sender_next_expired(sender, null_mut()),
            S::NullPointer
        );
        // An empty payload needs no pointer; the ticket out-pointer is optional.
        assert_eq!(
            tfrc_udp_sender_send(sender, null(), 0, 0, 0, null_mut()),
            S::Ok
        );
        tfrc_udp_sender_free(sender);
    }
}

#[test]
fn bad_strings_addresses_and_options_are_refused() {
    let mut sender = null_mut();
    let mut receiver = null_mut();
    let bad_utf8 = c"127.0.0.1:\xff9";
    // SAFETY: NUL-terminated strings and writable out-pointers.
    unsafe {
        let open = |peer: &CStr, bind: *const c_char, preset: *const c_char, size: u32| {
            let mut out = null_mut();
            let status = tfrc_udp_sender_open(peer.as_ptr(), bind, preset, size, 0, &mut out);
            assert!(out.is_null(), "nothing is returned on an error");
            status
        };
        assert_eq!(open(bad_utf8, null(), null(), 0), S::InvalidArgument);
        assert!(
            last_error().starts_with("peer: not UTF-8"),
            "{}",
            last_error()
        );
        assert_eq!(open(c"no port here", null(), null(), 0), S::Address);
        assert!(last_error().contains("cannot resolve"), "{}", last_error());
        assert_eq!(
            open(c"127.0.0.1:9", c"999.0.0.1:0".as_ptr(), null(), 0),
            S::Address
        );
        assert!(
            last_error().starts_with("binding the socket"),
            "{}",
            last_error()
        );
        assert_eq!(
            open(c"127.0.0.1:9", null(), c"reno".as_ptr(), 0),
            S::InvalidArgument
        );
        assert!(last_error().starts_with("preset:"), "{}", last_error());
        assert_eq!(open(c"127.0.0.1:9", null(), null(), 10), S::InvalidArgument);
        assert!(
            last_error().starts_with("segment_size_bytes"),
            "{}",
            last_error()
        );
        assert_eq!(
            tfrc_udp_receiver_open(c"127.0.0.1:0".as_ptr(), null(), 70_000, &mut receiver),
            S::InvalidArgument
        );
        assert!(last_error().starts_with("max_pending"), "{}", last_error());
        assert_eq!(
            tfrc_udp_receiver_open(c"localhost".as_ptr(), null(), 0, &mut receiver),
            S::Address
        );
        assert_eq!(
            tfrc_udp_sender_open(c"127.0.0.1:9".as_ptr(), null(), null(), 0, 0, &mut sender),
            S::Ok
        );
        let mut small = [0 as c_char; 4];
        assert_eq!(
            tfrc_udp_sender_local_addr(sender, small.as_mut_ptr(), small.len()),
            S::BufferTooSmall
        );
        assert!(last_error().contains("needs"), "{}", last_error());
        assert_eq!(send(sender, &[0; 967], 0, 0).0, S::PayloadTooLarge);
        assert_eq!(last_error(), "payload larger than 966 bytes");
        let mut max = 0usize;
        assert_eq!(tfrc_udp_sender_max_payload(sender, &mut max), S::Ok);
        assert_eq!(max, 966);
        assert_eq!(send(sender, b"x", 0, 8).0, S::InvalidArgument);
        assert_eq!(
            send(sender, b"x", 3_600_000_000_001, 0).0,
            S::InvalidArgument
        );
        assert_eq!(
            tfrc_udp_sender_flush_below(sender, 9, null_mut()),
            S::InvalidArgument
        );
        tfrc_udp_sender_free(sender);
    }
    assert!(receiver.is_null());
}

#[test]
fn a_full_queue_refuses_and_expired_payloads_are_reported() {
    // A peer that never answers: without feedback the sender sends its first packet, then one
    // a second (RFC 5348 §4.2), so what is queued after the first stays queued for the test.
    let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
    let sender = open_sender(&silent.local_addr().unwrap().to_string(), 2);
    assert_eq!(send(sender, b"first", 0, 0), (S::Ok, 0));
    wait_for(|| sender_stats(sender).packets_sent == 1);
    assert_eq!(sender_stats(sender).packets_sent, 1);
    assert_eq!(send(sender, b"late", 1, 0), (S::Ok, 1));
    assert_eq!(send(sender, b"later", 1, 3), (S::Ok, 2));
    std::thread::sleep(Duration::from_millis(2));
    // The queue is full of expired payloads: they make room. (Or the sender's thread, woken
    // by "late", dropped them itself: if it ran between the two sends, "later" is dropped at
    // its next wake-up, which a loaded host may put after "kept": poll for both.)
    assert_eq!(send(sender, b"kept", 0, 0), (S::Ok, 3));
    let mut expired = TfrcUdpExpired::default();
    let mut tickets = Vec::new();
    wait_for(|| {
        // SAFETY: a live handle and a writable struct.
        while unsafe { tfrc_udp_sender_next_expired(sender, &mut expired) } == S::Ok {
            tickets.push((expired.ticket, expired.priority));
            assert!(expired.dropped_ns >= expired.deadline_ns);
            assert_eq!(expired.deadline_ns, expired.queued_ns + 1);
        }
        tickets.len() >= 2
    });
    tickets.sort_unstable();
    assert_eq!(tickets, vec![(1, 0), (2, 3)]);
    assert_eq!(send(sender, b"fits", 0, 0), (S::Ok, 4));
    assert_eq!(send(sender, b"refused", 0, 7).0, S::QueueFull);
    assert_eq!(last_error(), "send queue full: payload dropped");
    let stats = sender_stats(sender);
    assert_eq!(
        (
            stats.queued,
            stats.queue_accepted,
            stats.queue_full_drops,
            stats.queue_expired
        ),
        (2, 5, 1, 2)
    );
    let mut removed = 0usize;
    // SAFETY: a live handle and a writable count.
    unsafe {
        assert_eq!(tfrc_udp_sender_flush_below(sender, 0, &mut removed), S::Ok);
        assert_eq!(removed, 0);
        assert_eq!(tfrc_udp_sender_flush(sender, &mut removed), S::Ok);
        assert_eq!(removed, 2);
        tfrc_udp_sender_free(sender);
    }
}

#[test]
fn a_group_expires_together() {
    // Queued back to back the parts usually meet their deadline together; with a pause after
    // the first, the sender's thread (woken by it) drops it alone and the later parts at once.
    for pause_ms in [0, 100] {
        group_expiry(Duration::from_millis(pause_ms));
    }
}

fn group_expiry(pause: Duration) {
    let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
    let sender = open_sender(&silent.local_addr().unwrap().to_string(), 8);
    assert_eq!(send(sender, b"first", 0, 0), (S::Ok, 0));
    wait_for(|| sender_stats(sender).packets_sent == 1);
    let mut ticket = 0u64;
    // A frame of three parts: only the first has a deadline (1 ns); the group takes the rest.
    for (part, deadline) in [(b"part 1", 1i64), (b"part 2", 0), (b"part 3", 0)] {
        // SAFETY: a live handle, a readable payload, a writable ticket.
        let status = unsafe {
            tfrc_udp_sender_send_grouped(
                sender,
                part.as_ptr(),
                part.len(),
                deadline,
                0,
                7,
                &mut ticket,
            )
        };
        assert_eq!(status, S::Ok, "{}", last_error());
        std::thread::sleep(pause);
    }
    assert_eq!(send(sender, b"alone", 0, 0), (S::Ok, 4));
    // The next send opportunity comes about a second after the first packet; on a loaded host
    // the sender's thread may report the group's parts later, so poll (up to 10 s) rather than
    // trust one fixed sleep.
    std::thread::sleep(Duration::from_millis(1500));
    let mut expired = TfrcUdpExpired::default();
    let mut gone = Vec::new();
    let give_up = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        // SAFETY: a live handle and a writable struct.
        while unsafe { tfrc_udp_sender_next_expired(sender, &mut expired) } == S::Ok {
            gone.push((expired.ticket, expired.group));
        }
        let sent = sender_stats(sender).packets_sent;
        if (gone.len() >= 3 && sent == 2) || std::time::Instant::now() > give_up {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(gone, vec![(1, 7), (2, 7), (3, 7)]);
    let stats = sender_stats(sender);
    assert_eq!((stats.queue_expired, stats.packets_sent), (3, 2));
    // SAFETY: a live handle, freed once.
    unsafe { tfrc_udp_sender_free(sender) };
}

#[test]
fn a_loopback_pair_delivers_and_a_small_buffer_keeps_the_payload() {
    let (receiver, addr) = open_receiver();
    let sender = open_sender(&addr, 0);
    let payload: Vec<u8> = (0..500u32).map(|i| i as u8).collect();
    assert_eq!(send(sender, &payload, 100_000_000, 1), (S::Ok, 0));
    let mut meta = TfrcUdpDelivery::default();
    let mut small = [0u8; 10];
    // SAFETY: a live handle, buffers of the sizes given, a writable meta.
    unsafe {
        let status =
            tfrc_udp_receiver_recv(receiver, small.as_mut_ptr(), 10, 2_000_000_000, &mut meta);
        assert_eq!(status, S::BufferTooSmall, "{}", last_error());
        assert_eq!(meta.len, 500);
        assert!(
            last_error().contains("needs 500 bytes, found 10"),
            "{}",
            last_error()
        );
        assert_eq!(small, [0; 10], "nothing is copied");
        // Asking the size alone, with no buffer.
        let status = tfrc_udp_receiver_recv(receiver, null_mut(), 0, 0, &mut meta);
        assert_eq!((status, meta.len), (S::BufferTooSmall, 500));
        let mut room = vec![0u8; 2048];
        let status = tfrc_udp_receiver_recv(receiver, room.as_mut_ptr(), room.len(), 0, &mut meta);
        assert_eq!(status, S::Ok);
        assert_eq!(&room[..meta.len as usize], &payload[..]);
        assert_eq!(
            (meta.seq, meta.gap, meta.late, meta.lost_total),
            (0, 0, false, 0)
        );
        assert!(meta.arrival_ns > 0);
        let status = tfrc_udp_receiver_recv(receiver, room.as_mut_ptr(), room.len(), 0, &mut meta);
        assert_eq!((status, meta), (S::Timeout, TfrcUdpDelivery::default()));
        let status = tfrc_udp_receiver_recv(receiver, room.as_mut_ptr(), room.len(), -1, &mut meta);
        assert_eq!(status, S::InvalidArgument);
        assert_eq!(
            tfrc_udp_receiver_recv(receiver, room.as_mut_ptr(), room.len(), 0, null_mut()),
            S::NullPointer
        );
        // The receiver's report reaches the sender: a measured RTT and a rate.
        let deadline = std::time::Instant::now() + Duration::from_secs(3);
        while sender_stats(sender).feedback_received == 0 && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        let stats = sender_stats(sender);
        assert!(
            stats.feedback_received >= 1 && stats.rtt_s > 0.0,
            "{stats:?}"
        );
        let mut rate = 0.0;
        assert_eq!(tfrc_udp_sender_allowed_rate(sender, &mut rate), S::Ok);
        assert!(rate > 0.0);
        let mut change = TfrcUdpRateChange::default();
        let status = tfrc_udp_sender_next_rate_change(sender, &mut change);
        assert!(status == S::Ok || status == S::Empty, "{status:?}");
        // The receiver's statistics are those of its loop's last pass: the report that reached
        // the sender is counted once the receiver's thread has finished that pass.
        let mut rstats = TfrcUdpReceiverStats::default();
        wait_for(|| {
            assert_eq!(tfrc_udp_receiver_stats(receiver, &mut rstats), S::Ok);
            rstats.feedback_sent >= 1
        });
        assert_eq!((rstats.packets_received, rstats.packets_lost), (1, 0));
        assert!(rstats.feedback_sent >= 1);
        tfrc_udp_sender_free(sender);
        tfrc_udp_receiver_free(receiver);
    }
}

#[test]
fn a_closed_handle_says_so_and_keeps_its_statistics() {
    let (receiver, addr) = open_receiver();
    let sender = open_sender(&addr, 0);
    assert_eq!(send(sender, b"one", 0, 0).0, S::Ok);
    let mut meta = TfrcUdpDelivery::default();
    let mut buf = [0u8; 64];
    // SAFETY: live handles, a 64-byte buffer, writable structs.
    unsafe {
        // Wait for it to be received, then close the receiver with it still pending.
        let deadline = std::time::Instant::now() + Duration::from_secs(3);
        let mut rstats = TfrcUdpReceiverStats::default();
        while rstats.packets_received == 0 && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
            assert_eq!(tfrc_udp_receiver_stats(receiver, &mut rstats), S::Ok);
        }
        let mut final_stats = TfrcUdpSenderStats::default();
        assert_eq!(tfrc_udp_sender_close(sender, &mut final_stats), S::Ok);
        assert_eq!(final_stats.packets_sent, 1);
        assert_eq!(tfrc_udp_sender_close(sender, null_mut()), S::Ok);
        assert_eq!(send(sender, b"two", 0, 0).0, S::Closed);
        assert_eq!(last_error(), "the sender is closed");
        assert_eq!(sender_stats(sender).packets_sent, 1);
        let mut last = TfrcUdpReceiverStats::default();
        assert_eq!(tfrc_udp_receiver_close(receiver, &mut last), S::Ok);
        assert_eq!(last.packets_received, 1);
        let status = tfrc_udp_receiver_recv(receiver, buf.as_mut_ptr(), buf.len(), 0, &mut meta);
        assert_eq!(status, S::Ok, "a payload pending at close stays readable");
        assert_eq!(&buf[..3], b"one");
        let status =
            tfrc_udp_receiver_recv(receiver, buf.as_mut_ptr(), buf.len(), 1_000_000, &mut meta);
        assert_eq!(status, S::Closed);
        assert!(last_error().contains("closed"), "{}", last_error());
        tfrc_udp_sender_free(sender);
        tfrc_udp_receiver_free(receiver);
    }
}

#[test]
fn one_handle_serves_several_threads_at_once() {
    let (receiver, addr) = open_receiver();
    let sender = open_sender(&addr, 1024);
    // Raw pointers are not Send; the handles are (the header says so), so their addresses
    // cross threads as integers.
    let (tx, rx) = (sender as usize, receiver as usize);
    let senders: Vec<_> = (0..4u8)
        .map(|t| {
            std::thread::spawn(move || {
                let sender = tx as *mut TfrcUdpSender;
                for i in 0..50u8 {
                    assert_eq!(send(sender, &[t, i], 0, t % 2).0, S::Ok);
                    let _ = sender_stats(sender);
                }
            })
        })
        .collect();
    let reader = std::thread::spawn(move || {
        let receiver = rx as *mut TfrcUdpReceiver;
        let mut got = Vec::new();
        let mut buf = [0u8; 16];
        let mut meta = TfrcUdpDelivery::default();
        while got.len() < 200 {
            // SAFETY: a live handle, a 16-byte buffer, a writable meta.
            let status = unsafe {
                tfrc_udp_receiver_recv(
                    receiver,
                    buf.as_mut_ptr(),
                    buf.len(),
                    3_000_000_000,
                    &mut meta,
                )
            };
            assert_eq!(
                status,
                S::Ok,
                "{} after {} payloads",
                last_error(),
                got.len()
            );
            got.push((buf[0], buf[1]));
        }
        got
    });
    for s in senders {
        s.join().unwrap();
    }
    let mut got = reader.join().unwrap();
    got.sort_unstable();
    let all: Vec<(u8, u8)> = (0..4).flat_map(|t| (0..50).map(move |i| (t, i))).collect();
    assert_eq!(got, all, "every payload once");
    // SAFETY: the handles are live and no other thread uses them any more.
    unsafe {
        tfrc_udp_sender_free(sender);
        tfrc_udp_receiver_free(receiver);
    }
}
