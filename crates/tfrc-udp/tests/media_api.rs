//! What a media application uses while a session runs, over loopback: live statistics read
//! from other threads, payload deadlines and priorities, flushing, and the sender's timestamp
//! on every delivery.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use tfrc::{TfrcConfig, Time};
use tfrc_udp::{
    ReceiverOptions, SendOptions, SenderOptions, SenderReport, Source, UdpReceiver, UdpSender,
};

fn receiver() -> UdpReceiver {
    UdpReceiver::bind("127.0.0.1:0", ReceiverOptions::new(TfrcConfig::rfc5348())).unwrap()
}

fn app_sender(peer: SocketAddr) -> UdpSender {
    UdpSender::bind(
        "127.0.0.1:0",
        peer,
        SenderOptions::new(TfrcConfig::rfc5348()),
    )
    .unwrap()
}

/// (seq, payload, sent, arrival) of every delivery.
type Got = Vec<(u64, Vec<u8>, Time, Time)>;

fn spawn_receiver(
    mut rx: UdpReceiver,
    duration: Duration,
) -> thread::JoinHandle<(UdpReceiver, Got)> {
    thread::spawn(move || {
        let mut got = Vec::new();
        rx.run_for(duration, &mut |d| {
            got.push((d.seq, d.payload.to_vec(), d.sent, d.arrival))
        })
        .unwrap();
        (rx, got)
    })
}

#[test]
fn statistics_are_live_on_both_sides_while_the_session_runs() {
    let rx = receiver();
    let peer = rx.local_addr().unwrap();
    let rx_handle = rx.handle();
    let rx = spawn_receiver(rx, Duration::from_millis(1700));
    let mut options = SenderOptions::new(TfrcConfig::rfc5348());
    options.source = Source::ConstantRate {
        bytes_per_s: 125_000.0,
    };
    let mut tx = UdpSender::bind("127.0.0.1:0", peer, options).unwrap();
    let handle = tx.handle();
    assert_eq!(
        handle.stats(),
        SenderReport::default(),
        "zero before the loop runs"
    );
    let running = Arc::new(AtomicBool::new(true));
    let reader = {
        let running = Arc::clone(&running);
        thread::spawn(move || {
            let mut seen = Vec::new();
            while running.load(Ordering::Acquire) {
                seen.push((handle.stats(), rx_handle.stats()));
                thread::sleep(Duration::from_millis(50));
            }
            seen
        })
    };
    tx.run_for(Duration::from_millis(1500)).unwrap();
    running.store(false, Ordering::Release);
    let seen = reader.join().unwrap();
    let (_rx, got) = rx.join().unwrap();
    // Read while the loop ran: the sender's clock and counters moved between readings, and
    // never backwards.
    let during: Vec<_> = seen.iter().filter(|(s, _)| s.time > Time::ZERO).collect();
    assert!(during.len() >= 10, "{} readings", during.len());
    for pair in during.windows(2) {
        assert!(pair[1].0.time >= pair[0].0.time);
        assert!(pair[1].0.packets_sent >= pair[0].0.packets_sent);
        assert!(pair[1].1.packets_received >= pair[0].1.packets_received);
    }
    let distinct_sent = {
        let mut counts: Vec<u64> = during.iter().map(|(s, _)| s.packets_sent).collect();
        counts.dedup();
        counts.len()
    };
    assert!(
        distinct_sent >= 10,
        "packets_sent took {distinct_sent} values"
    );
    // The readings carry what a rate controller reads: X, X_recv, R and t_RTO once reports came.
    let (late_tx, late_rx) = during.last().unwrap();
    assert!(late_tx.tfrc.x_bytes_per_s > 0.0 && late_tx.tfrc.x_recv_bytes_per_s > 0.0);
    assert!(late_tx.tfrc.rtt_s > 0.0 && late_tx.tfrc.t_rto_s > 0.0);
    assert!(late_rx.packets_received > 0 && late_rx.feedback_sent > 0);
    // The last live reading is the sender's final report, but for the clock and the CPU time.
    let last = tx.handle().stats();
    let report = tx.report();
    assert_eq!(last.packets_sent, report.packets_sent);
    assert_eq!(last.queue, report.queue);
    assert_eq!(report.packets_sent as usize, got.len());
}

#[test]
fn a_payload_past_its_deadline_is_dropped_counted_and_announced_never_sent() {
    let rx = receiver();
    let peer = rx.local_addr().unwrap();
    let rx = spawn_receiver(rx, Duration::from_millis(700));
    let mut tx = app_sender(peer);
    let app = tx.handle();
    let expirations = app.expirations();
    // Queued with 10 ms to live, and the sender's loop first runs 30 ms later: too late.
    let stale = SendOptions::default().with_deadline(Duration::from_millis(10));
    let tickets: Vec<u64> = (0..3u8)
        .map(|i| app.send_with(vec![i], stale).unwrap())
        .collect();
    thread::sleep(Duration::from_millis(30));
    let fresh = SendOptions::default().with_deadline(Duration::from_secs(5));
    app.send_with(b"fresh".to_vec(), fresh).unwrap();
    app.send(b"no deadline".to_vec()).unwrap();
    tx.run_for(Duration::from_millis(500)).unwrap();
    let (_rx, got) = rx.join().unwrap();
    let payloads: Vec<&[u8]> = got.iter().map(|g| g.1.as_slice()).collect();
    assert_eq!(payloads, [b"fresh".as_slice(), b"no deadline"]);
    let expired: Vec<_> = expirations.try_iter().collect();
    assert_eq!(
        expired.iter().map(|e| e.ticket).collect::<Vec<_>>(),
        tickets
    );
    for e in &expired {
        assert!(e.dropped > e.deadline, "{e:?}");
        assert_eq!(
            e.deadline.saturating_since(e.queued),
            Duration::from_millis(10)
        );
    }
    let stats = app.stats();
    assert_eq!(
        (stats.queue.expired, stats.queue.sent, stats.queue.queued),
        (3, 2, 5)
    );
    let row_sum: u64 = tx.samples().iter().map(|r| r.queue_expired).sum();
    assert!(row_sum <= 3);
}

#[test]
fn higher_priorities_go_first_and_flush_removes_what_is_queued() {
    let rx = receiver();
    let peer = rx.local_addr().unwrap();
    let rx = spawn_receiver(rx, Duration::from_millis(600));
    let mut tx = app_sender(peer);
    let app = tx.handle();
    for (text, level) in [("delta 1", 0u8), ("delta 2", 0), ("audio", 6), ("key", 3)] {
        app.send_with(text.into(), SendOptions::default().with_priority(level))
            .unwrap();
    }
    app.send_with(b"doomed".to_vec(), SendOptions::default().with_priority(1))
        .unwrap();
    // A new key frame makes the queued deltas (and anything below priority 2) useless.
    assert_eq!(app.flush_below(2), 3);
    tx.run_for(Duration::from_millis(400)).unwrap();
    let (_rx, got) = rx.join().unwrap();
    let payloads: Vec<&[u8]> = got.iter().map(|g| g.1.as_slice()).collect();
    assert_eq!(payloads, [b"audio".as_slice(), b"key"]);
    assert_eq!(tx.report().queue.flushed, 3);
    assert_eq!(app.flush(), 0);
}

#[test]
fn every_delivery_carries_the_senders_timestamp() {
    let rx = receiver();
    let peer = rx.local_addr().unwrap();
    let rx_clock = *rx.clock();
    let rx = spawn_receiver(rx, Duration::from_millis(800));
    let mut tx = app_sender(peer);
    // The two clocks' origins differ by a constant: read both at (nearly) the same moment.
    let offset_ns = rx_clock.now().as_nanos() as i128 - tx.clock().now().as_nanos() as i128;
    let app = tx.handle();
    for i in 0..20u8 {
        app.send(vec![i; 100]).unwrap();
    }
    tx.run_for(Duration::from_millis(600)).unwrap();
    let (_rx, got) = rx.join().unwrap();
    assert_eq!(got.len(), 20);
    for pair in got.windows(2) {
        assert!(
            pair[1].2 > pair[0].2,
            "send stamps increase with the sequence"
        );
    }
    for (seq, _, sent, arrival) in &got {
        let one_way_ns = arrival.as_nanos() as i128 - sent.as_nanos() as i128 - offset_ns;
        // Loopback: between nothing and a scheduling delay (the offset was read within a few
        // microseconds; allow for that and a busy machine).
        assert!(
            (-1_000_000..50_000_000).contains(&one_way_ns),
            "packet {seq}: one-way delay {one_way_ns} ns"
        );
    }
}
