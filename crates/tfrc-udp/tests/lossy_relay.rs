//! TFRC through a relay that delays every packet and drops every N-th data packet: over real
//! sockets the flow settles at the throughput equation's rate for p = 1/N (RFC 5348 §3.1).

use std::collections::VecDeque;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use tfrc::equation::throughput_bytes_per_s;
use tfrc::TfrcConfig;
use tfrc_udp::{ReceiverOptions, SenderOptions, Source, UdpReceiver, UdpSender};

const ONE_WAY: Duration = Duration::from_millis(10);
const DROP_EVERY: u64 = 100;

/// Forwards data from the sender to `receiver` and feedback back, each after [`ONE_WAY`],
/// dropping every [`DROP_EVERY`]-th data packet. Returns the relay's address.
fn spawn_relay(receiver: SocketAddr, done: Arc<AtomicBool>) -> SocketAddr {
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    socket
        .set_read_timeout(Some(Duration::from_micros(500)))
        .unwrap();
    let addr = socket.local_addr().unwrap();
    thread::spawn(move || {
        let mut sender: Option<SocketAddr> = None;
        let mut line: VecDeque<(Instant, SocketAddr, Vec<u8>)> = VecDeque::new();
        let mut data = 0u64;
        let mut buf = [0u8; 2048];
        while !done.load(Ordering::Relaxed) {
            if let Ok((len, from)) = socket.recv_from(&mut buf) {
                let to = if from == receiver {
                    sender
                } else {
                    sender = Some(from);
                    data += 1;
                    (data % DROP_EVERY != 0).then_some(receiver)
                };
                if let Some(to) = to {
                    line.push_back((Instant::now() + ONE_WAY, to, buf[..len].to_vec()));
                }
            }
            while line
                .front()
                .is_some_and(|(due, _, _)| *due <= Instant::now())
            {
                let (_, to, bytes) = line.pop_front().unwrap();
                let _ = socket.send_to(&bytes, to);
            }
        }
    });
    addr
}

#[test]
fn settles_at_the_equation_rate_for_the_relays_loss_rate() {
    let done = Arc::new(AtomicBool::new(false));
    let mut rx =
        UdpReceiver::bind("127.0.0.1:0", ReceiverOptions::new(TfrcConfig::rfc5348())).unwrap();
    let relay = spawn_relay(rx.local_addr().unwrap(), Arc::clone(&done));
    let rx = thread::spawn(move || {
        rx.run_for(Duration::from_millis(8200), &mut |_| {})
            .unwrap();
        rx
    });
    let config = TfrcConfig::rfc5348();
    let mut options = SenderOptions::new(config.clone());
    options.source = Source::Greedy;
    let mut tx = UdpSender::bind("127.0.0.1:0", relay, options).unwrap();
    tx.run_for(Duration::from_secs(8)).unwrap();
    let rx = rx.join().unwrap();
    done.store(true, Ordering::Relaxed);

    let report = tx.report();
    let rtt = report.tfrc.rtt_s;
    assert!(rtt > 0.019 && rtt < 0.030, "R = {rtt}");
    // The receiver's loss event rate: one loss event per 100 packets.
    let p = rx.report().tfrc.p;
    assert!((p * DROP_EVERY as f64 - 1.0).abs() < 0.05, "p = {p}");
    let expected = throughput_bytes_per_s(config.equation, 1000.0, rtt, 4.0 * rtt, 0.01)
        * (1.0 - 1.0 / DROP_EVERY as f64);
    // Seconds 4-8 at the receiver, against the equation for p = 0.01 and the measured R.
    let rows = rx.samples();
    let bytes: u64 = rows[4..8].iter().map(|r| r.received_bytes).sum();
    let rate = bytes as f64 / 4.0;
    eprintln!("received {rate:.0} B/s, equation {expected:.0} B/s (R = {rtt}, p = {p})");
    assert!(
        (rate / expected - 1.0).abs() < 0.15,
        "received {rate:.0} B/s, equation {expected:.0} B/s (R = {rtt}, p = {p})"
    );
}
