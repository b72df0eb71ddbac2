//! A sender or receiver whose loop runs on a thread of its own until the application closes it:
//! the shape a media application (and the Python and C bindings) wants, where the encoder and
//! the player run on their own threads and only talk to the session through its handle.
//!
//! [`BackgroundSender`] owns the loop's thread; the application queues payloads and reads the
//! rate and statistics through [`BackgroundSender::handle`]. [`BackgroundReceiver`] hands each
//! payload over as an owned [`ReceivedPayload`] through a bounded channel; payloads the
//! application leaves unread beyond the bound are counted and dropped, never buffered without
//! limit.

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, TryRecvError, TrySendError};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use tfrc::Time;

use crate::clock::Clock;
use crate::error::TransportError;
use crate::handle::SenderHandle;
use crate::receiver::{Delivery, ReceiverHandle, ReceiverReport, UdpReceiver};
use crate::sender::{SenderReport, UdpSender};

/// How long one call of a session's loop runs before its thread looks at the close flag (a
/// close wakes the loop at once; this only bounds a loop nobody closes).
const LOOP_SLICE: Duration = Duration::from_secs(3600);

/// The most payloads a [`BackgroundReceiver`] may be told to hold for the application.
pub const MAX_PENDING: usize = 1 << 16;

/// A mutex's contents even if a thread panicked holding it (each holds a channel end or a
/// thread handle, consistent between operations).
fn locked<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A loop's thread, and what it ended with once joined.
#[derive(Debug)]
struct Worker<R> {
    thread: Option<JoinHandle<Result<R, TransportError>>>,
    outcome: Option<Result<R, TransportError>>,
    closing: Arc<AtomicBool>,
}

impl<R: Copy + Send + 'static> Worker<R> {
    /// Runs `step` on a new thread named `name` until closed, then returns `report`.
    fn spawn<S: Send + 'static>(
        name: &str,
        mut session: S,
        mut step: impl FnMut(&mut S) -> Result<(), TransportError> + Send + 'static,
        report: impl Fn(&S) -> R + Send + 'static,
    ) -> io::Result<Worker<R>> {
        let closing = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&closing);
        let thread = std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || {
                while !flag.load(Ordering::Acquire) {
                    step(&mut session)?;
                }
                Ok(report(&session))
            })?;
        Ok(Worker {
            thread: Some(thread),
            outcome: None,
            closing,
        })
    }

    fn is_running(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }

    /// Sets the close flag, wakes the loop with `stop`, joins it, and returns (again and
    /// again) what it ended with.
    fn close(&mut self, stop: impl FnOnce()) -> Result<R, TransportError> {
        if let Some(thread) = self.thread.take() {
            self.closing.store(true, Ordering::Release);
            stop();
            self.outcome = Some(thread.join().unwrap_or_else(|_| {
                Err(TransportError::Io {
                    context: "running the session's loop",
                    source: io::Error::other("the loop's thread panicked"),
                })
            }));
        }
        match &self.outcome {
            Some(Ok(report)) => Ok(*report),
            Some(Err(err)) => Err(err.duplicate()),
            None => unreachable!("the outcome is set when the thread is joined"),
        }
    }
}

/// A [`UdpSender`] running on a thread of its own until [`BackgroundSender::close`] (or drop).
/// Every method takes `&self`: share it between threads (in an `Arc`) as it is.
#[derive(Debug)]
pub struct BackgroundSender {
    handle: SenderHandle,
    clock: Clock,
    local_addr: SocketAddr,
    peer: SocketAddr,
    worker: Mutex<Worker<SenderReport>>,
}

impl BackgroundSender {
    /// Starts `sender`'s loop on a new thread.
    pub fn spawn(sender: UdpSender) -> Result<BackgroundSender, TransportError> {
        let handle = sender.handle();
        let clock = *sender.clock();
        let local_addr = sender.local_addr()?;
        let peer = sender.peer();
        let worker = Worker::spawn(
            "tfrc-udp sender",
            sender,
            |s| s.run_for(LOOP_SLICE),
            UdpSender::report,
        )
        .map_err(TransportError::io("starting the sender's thread"))?;
        Ok(BackgroundSender {
            handle,
            clock,
            local_addr,
            peer,
            worker: Mutex::new(worker),
        })
    }

    /// The application's handle: queue payloads, read the rate and statistics, subscribe.
    pub fn handle(&self) -> &SenderHandle {
        &self.handle
    }

    /// The session's clock: the one deadlines, statistics' `time` and the receiver's
    /// [`Delivery::sent`] are on (an application stamps its frames' capture with it).
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// The socket's address.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Where the payloads go.
    pub fn peer(&self) -> SocketAddr {
        self.peer
    }

    /// Whether the loop still runs (false once closed, or if it ended on a socket error:
    /// [`BackgroundSender::close`] then says which).
    pub fn is_running(&self) -> bool {
        locked(&self.worker).is_running()
    }

    /// Stops the loop (payloads still queued are not sent) and returns the final report, or
    /// the error the loop ended with. Closing again returns the same.
    pub fn close(&self) -> Result<SenderReport, TransportError> {
        locked(&self.worker).close(|| self.handle.stop())
    }
}

impl Drop for BackgroundSender {
    fn drop(&mut self) {
        let _ = self.close();
    }
}

/// A payload as a [`BackgroundReceiver`] hands it over: a [`Delivery`] that owns its bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct ReceivedPayload {
    /// The packet's sequence number.
    pub seq: u64,
    /// The application's bytes.
    pub payload: Vec<u8>,
    /// When it was sent, on the sender's clock ([`Delivery::sent`]).
    pub sent: Time,
    /// When it arrived, on the receiver's clock.
    pub arrival: Time,
    /// Sequence numbers skipped before it ([`Delivery::gap`]).
    pub gap: u64,
    /// Whether it filled a gap ([`Delivery::late`]).
    pub late: bool,
    /// Packets declared lost so far in this session.
    pub lost_total: u64,
    /// The loss event rate p at this arrival.
    pub p: f64,
}

impl ReceivedPayload {
    fn of(d: &Delivery<'_>) -> ReceivedPayload {
        ReceivedPayload {
            seq: d.seq,
            payload: d.payload.to_vec(),
            sent: d.sent,
            arrival: d.arrival,
            gap: d.gap,
            late: d.late,
            lost_total: d.lost_total,
            p: d.p,
        }
    }
}

/// A [`UdpReceiver`] running on a thread of its own until [`BackgroundReceiver::close`] (or
/// drop), handing payloads over through a bounded channel. Every method takes `&self`.
#[derive(Debug)]
pub struct BackgroundReceiver {
    handle: ReceiverHandle,
    local_addr: SocketAddr,
    deliveries: Mutex<Receiver<ReceivedPayload>>,
    overflow: Arc<AtomicU64>,
    worker: Mutex<Worker<ReceiverReport>>,
}

impl BackgroundReceiver {
    /// Starts `receiver`'s loop on a new thread; up to `max_pending` payloads
    /// (1..=[`MAX_PENDING`]) wait for the application, later ones are counted
    /// ([`BackgroundReceiver::overflow`]) and dropped.
    pub fn spawn(
        receiver: UdpReceiver,
        max_pending: usize,
    ) -> Result<BackgroundReceiver, TransportError> {
        if max_pending == 0 || max_pending > MAX_PENDING {
            return Err(crate::options::OptionError::new(
                "max_pending",
                format!("1 to {MAX_PENDING}"),
                max_pending.to_string(),
            )
            .into());
        }
        let handle = receiver.handle();
        let local_addr = receiver.local_addr()?;
        let (tx, deliveries) = mpsc::sync_channel(max_pending);
        let overflow = Arc::new(AtomicU64::new(0));
        let dropped = Arc::clone(&overflow);
        let mut deliver = move |d: &Delivery<'_>| {
            if let Err(TrySendError::Full(_)) = tx.try_send(ReceivedPayload::of(d)) {
                dropped.fetch_add(1, Ordering::Relaxed);
            }
        };
        let worker = Worker::spawn(
            "tfrc-udp receiver",
            receiver,
            move |r| r.run_for(LOOP_SLICE, &mut deliver),
            UdpReceiver::report,
        )
        .map_err(TransportError::io("starting the receiver's thread"))?;
        Ok(BackgroundReceiver {
            handle,
            local_addr,
            deliveries: Mutex::new(deliveries),
            overflow,
            worker: Mutex::new(worker),
        })
    }

    /// The handle: live statistics ([`ReceiverHandle::stats`]).
    pub fn handle(&self) -> &ReceiverHandle {
        &self.handle
    }

    /// The socket's address.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The next payload if one is pending (`Err(Disconnected)` once the loop ended and every
    /// payload was taken).
    pub fn try_recv(&self) -> Result<ReceivedPayload, TryRecvError> {
        locked(&self.deliveries).try_recv()
    }

    /// The next payload, waiting up to `timeout` (another thread's `recv` waits for this one).
    pub fn recv_timeout(&self, timeout: Duration) -> Result<ReceivedPayload, RecvTimeoutError> {
        locked(&self.deliveries).recv_timeout(timeout)
    }

    /// Payloads dropped because the application left `max_pending` unread.
    pub fn overflow(&self) -> u64 {
        self.overflow.load(Ordering::Relaxed)
    }

    /// Whether the loop still runs.
    pub fn is_running(&self) -> bool {
        locked(&self.worker).is_running()
    }

    /// Stops the loop and returns the final report (payloads already pending stay readable),
    /// or the error the loop ended with. Closing again returns the same.
    pub fn close(&self) -> Result<ReceiverReport, TransportError> {
        locked(&self.worker).close(|| self.handle.stop())
    }
}

impl Drop for BackgroundReceiver {
    fn drop(&mut self) {
        let _ = self.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ReceiverOptions, SenderOptions};
    use tfrc::TfrcConfig;

    #[test]
    fn a_background_pair_delivers_and_closes_twice_with_the_same_report() {
        let rx =
            UdpReceiver::bind("127.0.0.1:0", ReceiverOptions::new(TfrcConfig::rfc5348())).unwrap();
        let rx = BackgroundReceiver::spawn(rx, 16).unwrap();
        let tx = UdpSender::bind(
            "127.0.0.1:0",
            rx.local_addr(),
            SenderOptions::new(TfrcConfig::rfc5348()),
        )
        .unwrap();
        let tx = BackgroundSender::spawn(tx).unwrap();
        assert!(tx.is_running() && rx.is_running());
        tx.handle().send(b"hello".to_vec()).unwrap();
        let got = rx.recv_timeout(Duration::from_secs(2)).unwrap();
        assert_eq!((got.seq, got.payload.as_slice()), (0, b"hello".as_slice()));
        let first = tx.close().unwrap();
        assert_eq!(first.packets_sent, 1);
        assert_eq!(tx.close().unwrap(), first);
        assert!(!tx.is_running());
        let report = rx.close().unwrap();
        assert_eq!(report.packets_received, 1);
        assert_eq!(rx.try_recv(), Err(TryRecvError::Disconnected));
    }

    #[test]
    fn a_receiver_nobody_reads_counts_what_it_drops() {
        let rx =
            UdpReceiver::bind("127.0.0.1:0", ReceiverOptions::new(TfrcConfig::rfc5348())).unwrap();
        let rx = BackgroundReceiver::spawn(rx, 2).unwrap();
        let tx = UdpSender::bind(
            "127.0.0.1:0",
            rx.local_addr(),
            SenderOptions::new(TfrcConfig::rfc5348()),
        )
        .unwrap();
        let tx = BackgroundSender::spawn(tx).unwrap();
        for i in 0..5u8 {
            tx.handle().send(vec![i]).unwrap();
        }
        let deadline = std::time::Instant::now() + Duration::from_secs(3);
        while rx.handle().stats().packets_received < 5 && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        tx.close().unwrap();
        rx.close().unwrap();
        assert_eq!(rx.overflow(), 3);
        assert_eq!(rx.try_recv().unwrap().payload, vec![0]);
        assert!(BackgroundReceiver::spawn(
            UdpReceiver::bind("127.0.0.1:0", ReceiverOptions::new(TfrcConfig::rfc5348())).unwrap(),
            0
        )
        .is_err());
    }
}
