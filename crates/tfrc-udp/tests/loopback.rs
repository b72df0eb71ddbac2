//! TFRC over loopback UDP: convergence to the application's rate, hostile input, the receiver
//! vanishing (RFC 5348 §4.4) and coming back.

use std::net::{SocketAddr, UdpSocket};
use std::thread;
use std::time::Duration;

use tfrc::wire::{Packet, FEEDBACK_LEN};
use tfrc::{DataHeader, FeedbackHeader, TfrcConfig, Time};
use tfrc_udp::{ReceiverOptions, SenderOptions, Source, UdpReceiver, UdpSender};

const APP_RATE: f64 = 125_000.0; // 1 Mb/s

/// The session identifier the scripted peers use.
const SESSION: u64 = 0x5e55_1011;

fn receiver(addr: &str) -> UdpReceiver {
    UdpReceiver::bind(addr, ReceiverOptions::new(TfrcConfig::rfc5348())).unwrap()
}

fn cbr_sender(peer: SocketAddr, config: TfrcConfig) -> UdpSender {
    let mut options = SenderOptions::new(config);
    options.source = Source::ConstantRate {
        bytes_per_s: APP_RATE,
    };
    UdpSender::bind("127.0.0.1:0", peer, options).unwrap()
}

/// Runs a receiver on its own thread for `duration`, returning it afterwards.
fn spawn_receiver(mut rx: UdpReceiver, duration: Duration) -> thread::JoinHandle<UdpReceiver> {
    thread::spawn(move || {
        rx.run_for(duration, &mut |_| {}).unwrap();
        rx
    })
}

#[test]
fn converges_to_the_application_rate() {
    let rx = receiver("127.0.0.1:0");
    let peer = rx.local_addr().unwrap();
    let rx = spawn_receiver(rx, Duration::from_millis(5500));
    let mut tx = cbr_sender(peer, TfrcConfig::rfc5348());
    let app = tx.handle();
    let changes = app.rate_changes();
    tx.run_for(Duration::from_secs(5)).unwrap();
    let rx = rx.join().unwrap();
    // The application heard of the rate as it changed, and reads the current one.
    let heard: Vec<_> = changes.try_iter().collect();
    assert!(!heard.is_empty());
    let x = tx.report().tfrc.x_bytes_per_s;
    assert!((app.allowed_rate_bytes_per_s() / x - 1.0).abs() <= 0.01);
    // Seconds 2-5 at the receiver: within 10% of the application's rate.
    let rows = rx.samples();
    assert!(rows.len() >= 5, "{rows:?}");
    let bytes: u64 = rows[2..5].iter().map(|r| r.received_bytes).sum();
    let rate = bytes as f64 / 3.0;
    assert!((rate / APP_RATE - 1.0).abs() < 0.10, "received {rate} B/s");
    // TFRC did not hold the application back: X stays above its rate (data-limited, §8.2).
    let report = tx.report();
    assert!(report.tfrc.x_bytes_per_s >= APP_RATE, "{report:?}");
    assert!(report.tfrc.feedback.accepted > 10);
    assert_eq!(report.tfrc.feedback.rejected(), 0);
    assert_eq!(report.input.dropped(), 0);
    assert_eq!(rx.report().input.dropped(), 0);
}

/// A minimal pseudo-random byte source for garbage (xorshift; fixed seed).
fn garbage(seed: &mut u64, len: usize) -> Vec<u8> {
    (0..len)
        .map(|_| {
            *seed ^= *seed << 13;
            *seed ^= *seed >> 7;
            *seed ^= *seed << 17;
            (*seed >> 24) as u8
        })
        .collect()
}

fn feedback_bytes(report: FeedbackHeader) -> Vec<u8> {
    feedback_bytes_in(SESSION, report)
}

fn feedback_bytes_in(session: u64, report: FeedbackHeader) -> Vec<u8> {
    let mut buf = [0u8; FEEDBACK_LEN];
    let len = report.emit(session, &mut buf).unwrap();
    buf[..len].to_vec()
}

/// Reads every data packet waiting on `socket`.
fn read_data(socket: &UdpSocket) -> Vec<DataHeader> {
    let mut buf = [0u8; 2048];
    let mut headers = Vec::new();
    while let Ok((len, _)) = socket.recv_from(&mut buf) {
        headers.push(DataHeader::parse(&buf[..len]).unwrap().0);
    }
    headers
}

#[test]
fn hostile_input_is_counted_and_dropped_without_a_rate_change() {
    // The test plays the receiver, so it can send anything from the peer's own address.
    let peer = UdpSocket::bind("127.0.0.1:0").unwrap();
    peer.set_nonblocking(true).unwrap();
    let mut options = SenderOptions::new(TfrcConfig::rfc5348());
    options.source = Source::Application;
    options.session = Some(SESSION);
    let mut tx = UdpSender::bind("127.0.0.1:0", peer.local_addr().unwrap(), options).unwrap();
    assert_eq!(tx.session(), SESSION);
    let sender_addr = tx.local_addr().unwrap();
    let app = tx.handle();
    for _ in 0..3 {
        app.send(b"frame".to_vec()).unwrap();
    }
    tx.run_for(Duration::from_millis(20)).unwrap();
    thread::sleep(Duration::from_millis(30));
    let sent = read_data(&peer);
    assert_eq!(sent.len(), 1, "one packet per second before feedback");
    let first = sent[0];
    // An honest report: accepted.
    let honest = FeedbackHeader {
        timestamp_echo: first.timestamp,
        t_delay: Duration::from_micros(100),
        x_recv_bytes_per_s: 50_000.0,
        p: 0.01,
    };
    peer.send_to(&feedback_bytes(honest), sender_addr).unwrap();
    tx.run_for(Duration::from_millis(5)).unwrap();
    let before = tx.report();
    assert_eq!(before.tfrc.feedback.accepted, 1);
    let x = before.tfrc.x_bytes_per_s;

    // Now everything hostile, from the peer's address unless said otherwise.
    let mut seed = 0x9e37_79b9_7f4a_7c15;
    let mut hostile: Vec<Vec<u8>> = (0..50).map(|i| garbage(&mut seed, 1 + i * 7)).collect();
    let good = feedback_bytes(honest);
    hostile.push(good[..10].to_vec()); // truncated header
    hostile.push(good[..1].to_vec()); // a lone version byte
    let mut other_version = good.clone();
    other_version[0] = 1; // the format without sessions
    hostile.push(other_version);
    let mut unknown_type = good.clone();
    unknown_type[1] = 9;
    hostile.push(unknown_type);
    let mut trailing = good.clone();
    trailing.push(0);
    hostile.push(trailing);
    let mut data = vec![0u8; 40]; // a data packet, the wrong kind at a sender
    first.emit_with_payload(SESSION, b"x", &mut data).unwrap();
    hostile.push(data[..35].to_vec());
    // An honest report of another session (this port's previous sender's receiver, or a
    // forger who does not know the session).
    hostile.push(feedback_bytes_in(SESSION + 1, honest));
    hostile.push(good.clone()); // replayed byte for byte
    let forged = |echo: Time, delay: Duration| {
        feedback_bytes(FeedbackHeader {
            timestamp_echo: echo,
            t_delay: delay,
            x_recv_bytes_per_s: 1e9,
            p: 0.0,
        })
    };
    hostile.push(forged(
        first.timestamp + Duration::from_nanos(1),
        Duration::ZERO,
    )); // unknown
    hostile.push(forged(Time::from_secs_f64(3600.0), Duration::ZERO)); // from the future
    let mut replay_changed = good.clone();
    replay_changed[28] ^= 1; // the accepted echo again, other X_recv: x_recv must not matter
    hostile.push(replay_changed.clone());
    for datagram in &hostile {
        peer.send_to(datagram, sender_addr).unwrap();
    }
    // A perfect report from another port (the receiver's port is the only one believed).
    let stranger = UdpSocket::bind("127.0.0.1:0").unwrap();
    stranger
        .send_to(&forged(first.timestamp, Duration::ZERO), sender_addr)
        .unwrap();
    thread::sleep(Duration::from_millis(5));
    tx.run_for(Duration::from_millis(10)).unwrap();
    let after = tx.report();

    assert_eq!(
        after.tfrc.nofeedback_expiries,
        before.tfrc.nofeedback_expiries
    );
    assert_eq!(after.tfrc.feedback.accepted, 1, "{after:?}");
    assert_eq!(
        after.tfrc.x_bytes_per_s, x,
        "forged feedback moved the rate"
    );
    let input = after.input;
    assert_eq!(input.datagrams, 1 + hostile.len() as u64 + 1);
    assert_eq!(input.foreign_source, 1);
    assert_eq!(input.wrong_kind, 1);
    assert_eq!(input.other_session, 1);
    assert_eq!(input.wire.truncated, 2, "{input:?}");
    assert!(input.wire.bad_version >= 1 && input.wire.bad_type >= 1);
    assert_eq!(after.tfrc.feedback.replayed, 2);
    assert_eq!(after.tfrc.feedback.unknown_echo, 1);
    assert_eq!(after.tfrc.feedback.echo_from_future, 1);
    // Every datagram is accounted for: used, dropped by the driver, or rejected by TFRC.
    assert_eq!(
        input.datagrams,
        after.tfrc.feedback.total() + input.dropped()
    );

    // An older honest report replayed after a newer one was accepted: a replay too.
    app.send(b"frame".to_vec()).unwrap();
    thread::sleep(Duration::from_millis(40));
    tx.run_for(Duration::from_millis(40)).unwrap();
    let newer = read_data(&peer);
    assert!(!newer.is_empty());
    let newest = newer[newer.len() - 1];
    let report = |echo: Time| FeedbackHeader {
        timestamp_echo: echo,
        t_delay: Duration::ZERO,
        x_recv_bytes_per_s: 50_000.0,
        p: 0.01,
    };
    // A report held longer than the packet has existed: rejected, and not a replay yet.
    peer.send_to(
        &forged(newest.timestamp, Duration::from_secs(10)),
        sender_addr,
    )
    .unwrap();
    peer.send_to(&feedback_bytes(report(newest.timestamp)), sender_addr)
        .unwrap();
    peer.send_to(&replay_changed, sender_addr).unwrap();
    thread::sleep(Duration::from_millis(2));
    tx.run_for(Duration::from_millis(5)).unwrap();
    let last = tx.report();
    assert_eq!(last.tfrc.feedback.accepted, 2);
    assert_eq!(last.tfrc.feedback.replayed, 3);
    assert_eq!(last.tfrc.feedback.unknown_echo, 1);
    assert_eq!(last.tfrc.feedback.delay_exceeds_elapsed, 1);
}

#[test]
fn a_receiver_drops_hostile_input() {
    let mut rx = receiver("127.0.0.1:0");
    let addr = rx.local_addr().unwrap();
    let sender = UdpSocket::bind("127.0.0.1:0").unwrap();
    let stranger = UdpSocket::bind("127.0.0.1:0").unwrap();
    let data = |seq: u64| data_packet_in(SESSION, seq);
    sender.send_to(&data(0), addr).unwrap();
    let mut seed = 7u64;
    for i in 0..30 {
        sender.send_to(&garbage(&mut seed, i * 5), addr).unwrap();
    }
    sender.send_to(&data(1)[..20], addr).unwrap(); // truncated
    let report = FeedbackHeader {
        timestamp_echo: Time::from_nanos(1),
        t_delay: Duration::ZERO,
        x_recv_bytes_per_s: 0.0,
        p: 0.0,
    };
    sender.send_to(&feedback_bytes(report), addr).unwrap(); // the wrong kind here
                                                            // Another sender while the session is live, and a forger with the session's address but
                                                            // not its identifier: both another session.
    stranger
        .send_to(&data_packet_in(SESSION + 1, 5), addr)
        .unwrap();
    sender
        .send_to(&data_packet_in(SESSION + 2, 6), addr)
        .unwrap();
    sender.send_to(&data(3), addr).unwrap();
    sender.send_to(&data(3), addr).unwrap(); // duplicate: not delivered twice
    thread::sleep(Duration::from_millis(5));
    let mut got = Vec::new();
    rx.run_for(Duration::from_millis(20), &mut |d| {
        got.push((d.seq, d.gap, d.late, d.payload.to_vec()))
    })
    .unwrap();
    assert_eq!(
        got,
        vec![(0, 0, false, vec![1; 8]), (3, 2, false, vec![1; 8])]
    );
    let report = rx.report();
    assert_eq!(report.input.other_session, 2);
    assert_eq!(report.input.wrong_kind, 1);
    assert!(report.input.wire.rejected() >= 20, "{report:?}");
    assert_eq!(report.packets_received, 2);
    assert_eq!(report.sessions, 1);
    // Feedback went to the sender, and only to it, echoing its session.
    sender.set_nonblocking(true).unwrap();
    let mut buf = [0u8; 64];
    let (len, _) = sender.recv_from(&mut buf).unwrap();
    assert_eq!(len, FEEDBACK_LEN);
    assert_eq!(Packet::parse(&buf[..len]).unwrap().session(), SESSION);
    stranger.set_nonblocking(true).unwrap();
    assert!(stranger.recv_from(&mut buf).is_err());
}

#[test]
fn a_vanished_receiver_brings_the_rate_down_to_s_over_t_mbi() {
    let rx = receiver("127.0.0.1:0");
    let peer = rx.local_addr().unwrap();
    let rx = spawn_receiver(rx, Duration::from_millis(1500));
    let mut config = TfrcConfig::rfc5348();
    // t_mbi 0.5 s (floor 2000 B/s), so the floor is reached within the test.
    config.max_backoff_interval = Some(Duration::from_millis(500));
    // Paced at X itself: with oscillation prevention the gap is s/X_inst, X_inst =
    // X·R_sqmean/sqrt(R_sample), and once reports stop that ratio is frozen at the last
    // sample's. On a loaded host loopback RTT samples range from 0.1 ms to several ms, so the
    // frozen ratio can be 3 or more: 4 to 7 packets a second "at s/t_mbi" (8 runs in 80 with
    // 4 busy loops on 2 cores), which the counts below are not about.
    config.oscillation_prevention = false;
    let mut tx = cbr_sender(peer, config);
    tx.run_for(Duration::from_millis(1500)).unwrap();
    drop(rx.join().unwrap()); // the receiver's socket is closed
    let at_stop = tx.report();
    assert!(at_stop.tfrc.x_bytes_per_s >= APP_RATE);
    tx.run_for(Duration::from_millis(3500)).unwrap();
    let end = tx.report();
    let expiries = end.tfrc.nofeedback_expiries - at_stop.tfrc.nofeedback_expiries;
    assert!(expiries >= 7, "{expiries} expiries: {end:?}");
    assert_eq!(end.tfrc.x_bytes_per_s, 2000.0, "{end:?}");
    // Each expiry halved X after about two packets at the old rate (the interval is
    // max(4R, 2s/X)): no blast toward a receiver that is gone.
    let after = end.packets_sent - at_stop.packets_sent;
    assert!(
        after <= 3 * (expiries + 2),
        "{after} packets after {expiries} expiries"
    );
    // At s/t_mbi (two 1000-byte packets a second, 0.5 s apart) a one-second bin holds two
    // packets; a send delayed by a stalled (loaded) machine across a bin boundary can put a
    // third into the last bin, never more (the pacing is s/X: oscillation prevention is off).
    let rows = tx.samples();
    let last = rows[rows.len() - 1];
    assert!(last.sent_packets <= 3, "{last:?}");
}

#[test]
fn a_restarted_receiver_gets_the_flow_back() {
    let first = receiver("127.0.0.1:0");
    let addr = first.local_addr().unwrap();
    let first = spawn_receiver(first, Duration::from_millis(1500));
    let tx = cbr_sender(addr, TfrcConfig::rfc5348());
    let tx = thread::spawn(move || {
        let mut tx = tx;
        tx.run_for(Duration::from_millis(5000)).unwrap();
        tx
    });
    drop(first.join().unwrap());
    thread::sleep(Duration::from_millis(700));
    let second = spawn_receiver(receiver(&addr.to_string()), Duration::from_millis(2800));
    let tx = tx.join().unwrap();
    let second = second.join().unwrap();
    let report = tx.report();
    assert!(report.tfrc.nofeedback_expiries > 0);
    // The new receiver got the application's rate again within a second.
    let rows = second.samples();
    let last = rows[rows.len() - 1];
    let rate = last.received_bytes as f64;
    assert!((rate / APP_RATE - 1.0).abs() < 0.10, "{rows:?}");
    assert!(report.tfrc.x_bytes_per_s >= APP_RATE, "{report:?}");
}

/// A data packet `seq` of session `session`, as a sender would emit it.
fn data_packet_in(session: u64, seq: u64) -> Vec<u8> {
    let mut buf = vec![0u8; 64];
    let header = DataHeader {
        seq,
        timestamp: Time::from_nanos(1 + seq * 1000),
        rtt: Duration::from_millis(1),
    };
    let len = header
        .emit_with_payload(session, &[1; 8], &mut buf)
        .unwrap();
    buf.truncate(len);
    buf
}

#[test]
fn a_receiver_follows_a_restarted_or_moved_sender() {
    let mut options = ReceiverOptions::new(TfrcConfig::rfc5348());
    options.peer_idle_timeout = Duration::from_millis(100);
    let mut rx = UdpReceiver::bind("127.0.0.1:0", options).unwrap();
    let addr = rx.local_addr().unwrap();
    let old = UdpSocket::bind("127.0.0.1:0").unwrap();
    let new = UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut delivered = Vec::new();
    let run = |rx: &mut UdpReceiver, delivered: &mut Vec<u64>| {
        thread::sleep(Duration::from_millis(3));
        rx.run_for(Duration::from_millis(10), &mut |d| delivered.push(d.seq))
            .unwrap();
    };
    for seq in 5000..5010 {
        old.send_to(&data_packet_in(1, seq), addr).unwrap();
    }
    // Another session while this one is live: dropped.
    new.send_to(&data_packet_in(2, 0), addr).unwrap();
    run(&mut rx, &mut delivered);
    assert_eq!(rx.report().input.other_session, 1);
    assert_eq!(rx.report().sessions, 1);

    // The old sender falls silent; after the takeover silence the new one takes over.
    thread::sleep(Duration::from_millis(120));
    for seq in 0..5 {
        new.send_to(&data_packet_in(2, seq), addr).unwrap();
    }
    run(&mut rx, &mut delivered);
    let report = rx.report();
    assert_eq!(report.sessions, 2);
    assert_eq!(report.peer, Some(new.local_addr().unwrap()));
    assert_eq!(report.tfrc.packets_received, 5, "a fresh loss history");
    assert_eq!(report.packets_received, 15);

    // The same sender restarted on the same address (a new session, numbering from 0): its
    // first packet is recognized once the old session has been silent that long.
    thread::sleep(Duration::from_millis(120));
    for seq in 0..3 {
        new.send_to(&data_packet_in(3, seq), addr).unwrap();
    }
    run(&mut rx, &mut delivered);
    let report = rx.report();
    assert_eq!(report.sessions, 3);
    assert_eq!(report.tfrc.packets_received, 3);
    assert_eq!(&delivered[delivered.len() - 3..], &[0, 1, 2]);

    // The session's sender moves (a NAT rebinding): followed at once, feedback goes there.
    let moved = UdpSocket::bind("127.0.0.1:0").unwrap();
    for seq in 3..6 {
        moved.send_to(&data_packet_in(3, seq), addr).unwrap();
    }
    run(&mut rx, &mut delivered);
    let report = rx.report();
    assert_eq!(report.sessions, 3);
    assert_eq!(report.peer_changes, 1);
    assert_eq!(report.peer, Some(moved.local_addr().unwrap()));
    assert_eq!(report.tfrc.packets_received, 6);
    moved.set_nonblocking(true).unwrap();
    let mut buf = [0u8; 64];
    let (len, _) = moved
        .recv_from(&mut buf)
        .expect("feedback follows the sender");
    assert_eq!(Packet::parse(&buf[..len]).unwrap().session(), 3);
}

#[test]
fn an_ipv4_socket_refuses_an_ipv6_peer() {
    let options = SenderOptions::new(TfrcConfig::rfc5348());
    let err = UdpSender::bind("127.0.0.1:0", "[::1]:9", options).unwrap_err();
    assert!(
        err.to_string()
            .contains("cannot reach the IPv6 peer [::1]:9"),
        "{err}"
    );
}

#[test]
fn a_sender_that_can_send_nothing_says_why() {
    // Port 0 is no destination: every send fails at once (EINVAL), nothing leaves the host.
    let mut options = SenderOptions::new(TfrcConfig::rfc5348());
    options.source = Source::Greedy;
    let mut tx = UdpSender::bind("127.0.0.1:0", "127.0.0.1:0", options).unwrap();
    tx.run_for(Duration::from_millis(20)).unwrap();
    let report = tx.report();
    assert_eq!(report.packets_sent, 0);
    assert!(report.send_errors >= 1, "{report:?}");
    assert!(report.last_send_errno.is_some(), "{report:?}");
}
