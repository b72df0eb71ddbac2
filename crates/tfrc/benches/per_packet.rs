//! CPU cost per data packet of the receiver path and of the sender path (issue target: < 100 ns
//! each). Run with `cargo bench -p tfrc --bench per_packet`.

// criterion's group macros generate undocumented public functions.
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tfrc::{DataHeader, Ecn, FeedbackHeader, Receiver, Sender, TfrcConfig, Time};

const PACKETS: u64 = 10_000;
const GAP: Duration = Duration::from_micros(100);
const RTT: Duration = Duration::from_millis(100);

/// The receiver path: one `handle_data` per packet with every 100th packet lost (so the loss
/// history, interpolation and discounting run), plus the feedback it asks for once per RTT.
fn receiver_path(c: &mut Criterion) {
    let mut group = c.benchmark_group("receiver");
    group.throughput(Throughput::Elements(PACKETS));
    for (name, config) in [
        ("rfc5348", TfrcConfig::default()),
        ("floyd2000", TfrcConfig::floyd2000()),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| {
                let mut receiver = Receiver::new(config.clone()).unwrap();
                let mut now = Time::ZERO;
                for seq in 0..PACKETS {
                    now += GAP;
                    if seq % 100 == 99 {
                        continue;
                    }
                    let header = DataHeader {
                        seq,
                        timestamp: now,
                        rtt: RTT,
                    };
                    receiver.handle_data(now, &header, 1000, Ecn::NotCe);
                    if receiver.poll_timeout().is_some_and(|t| t <= now) {
                        receiver.handle_timeout(now);
                    }
                    black_box(receiver.poll_feedback(now));
                }
                black_box(receiver.stats().p)
            })
        });
    }
    group.finish();
}

/// The sender path: one `poll_transmit` per packet, a feedback every 1000 packets.
fn sender_path(c: &mut Criterion) {
    let mut group = c.benchmark_group("sender");
    group.throughput(Throughput::Elements(PACKETS));
    for (name, config) in [
        ("rfc5348", TfrcConfig::default()),
        ("floyd2000", TfrcConfig::floyd2000()),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| {
                let mut sender = Sender::new(config.clone(), Time::ZERO).unwrap();
                let mut sent = 0;
                let mut now = Time::ZERO;
                while sent < PACKETS {
                    now = sender.poll_timeout().unwrap_or(now).max(now);
                    sender.handle_timeout(now);
                    while let Some(header) = sender.poll_transmit(now, true) {
                        sent += 1;
                        if sent % 1000 == 0 {
                            let feedback = FeedbackHeader {
                                timestamp_echo: header.timestamp,
                                t_delay: Duration::ZERO,
                                x_recv_bytes_per_s: 1e7,
                                p: 0.001,
                            };
                            let _ = sender.handle_feedback(now + RTT, &feedback);
                        }
                    }
                }
                black_box(sender.stats().x_bytes_per_s)
            })
        });
    }
    group.finish();
}

criterion_group!(benches, receiver_path, sender_path);
criterion_main!(benches);
