//! A path emulator for the tests: a UDP relay between a sender and a receiver that delays
//! every packet by a fixed one-way delay and, on the data direction, either drops every N-th
//! packet or serves packets at a bottleneck rate from a DropTail queue.

use std::collections::VecDeque;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

/// What the relay does to the data direction (feedback is only delayed).
#[derive(Clone, Copy, Debug)]
pub struct Path {
    /// Added to every packet, each way.
    pub one_way: Duration,
    /// Drop every N-th data packet.
    pub drop_every: Option<u64>,
    /// Serve data at this many bytes per second from a queue of `buffer` packets (DropTail).
    pub bottleneck: Option<(f64, usize)>,
}

/// A running relay; it stops when dropped.
pub struct Relay {
    /// Where the sender should send.
    pub addr: SocketAddr,
    done: Arc<AtomicBool>,
    /// Data packets the queue dropped (bottleneck) or the pattern dropped.
    pub drops: Arc<std::sync::atomic::AtomicU64>,
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
    }
}

impl Relay {
    /// Starts a relay forwarding data to `receiver` over `path`.
    pub fn spawn(receiver: SocketAddr, path: Path) -> Relay {
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        socket
            .set_read_timeout(Some(Duration::from_micros(200)))
            .unwrap();
        let addr = socket.local_addr().unwrap();
        let done = Arc::new(AtomicBool::new(false));
        let drops = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let (stop, dropped) = (Arc::clone(&done), Arc::clone(&drops));
        thread::spawn(move || {
            let mut sender: Option<SocketAddr> = None;
            let mut line: VecDeque<(Instant, SocketAddr, Vec<u8>)> = VecDeque::new();
            let mut queue: VecDeque<Vec<u8>> = VecDeque::new();
            let mut link_free = Instant::now();
            let mut data = 0u64;
            let mut buf = [0u8; 2048];
            while !stop.load(Ordering::Relaxed) {
                if let Ok((len, from)) = socket.recv_from(&mut buf) {
                    let bytes = buf[..len].to_vec();
                    if from == receiver {
                        if let Some(to) = sender {
                            line.push_back((Instant::now() + path.one_way, to, bytes));
                        }
                    } else {
                        sender = Some(from);
                        data += 1;
                        let pattern_drop = path.drop_every.is_some_and(|n| data % n == 0);
                        match path.bottleneck {
                            _ if pattern_drop => {
                                dropped.fetch_add(1, Ordering::Relaxed);
                            }
                            Some((_, buffer)) if queue.len() >= buffer => {
                                dropped.fetch_add(1, Ordering::Relaxed);
                            }
                            Some(_) => queue.push_back(bytes),
                            None => {
                                line.push_back((Instant::now() + path.one_way, receiver, bytes))
                            }
                        }
                    }
                }
                let now = Instant::now();
                if let Some((rate, _)) = path.bottleneck {
                    // Serve the queue: each packet holds the link for its serialization time.
                    while link_free <= now {
                        let Some(bytes) = queue.pop_front() else {
                            link_free = now;
                            break;
                        };
                        link_free += Duration::from_secs_f64(bytes.len() as f64 / rate);
                        line.push_back((link_free + path.one_way, receiver, bytes));
                    }
                }
                while line.front().is_some_and(|(due, _, _)| *due <= now) {
                    let (_, to, bytes) = line.pop_front().unwrap();
                    let _ = socket.send_to(&bytes, to);
                }
            }
        });
        Relay { addr, done, drops }
    }
}
