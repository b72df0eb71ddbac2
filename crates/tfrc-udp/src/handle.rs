//! The application's side of a sender, usable from any thread while the sender runs: queue
//! payloads (bounded, refusals counted), read the allowed rate, subscribe to rate changes, stop.

use std::collections::VecDeque;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, MutexGuard};

use tfrc::Time;

use crate::wake::Wake;

/// How many rate changes a subscriber may leave unread; later ones are dropped for it (the
/// current rate is always [`SenderHandle::allowed_rate_bytes_per_s`]).
pub const RATE_CHANNEL_DEPTH: usize = 64;

/// A change of the allowed rate by more than [`RATE_CHANGE_THRESHOLD`] relative to the last one
/// announced (a nofeedback expiry that halves X is one; one that leaves X where it was is not).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateChange {
    /// When, on the sender's clock.
    pub time: Time,
    /// The new allowed rate X, bytes/s.
    pub x_bytes_per_s: f64,
    /// The loss event rate p behind it.
    pub p: f64,
    /// The smoothed RTT, seconds.
    pub rtt_s: f64,
}

/// The relative change of X that is announced to subscribers (5%): X moves at every report
/// (once per RTT), too often to wake an encoder for each, and an encoder cannot follow steps
/// much finer than this anyway. On loopback (RTT 0.1-2 ms) a 1% threshold plus every
/// nofeedback expiry gave ~1,800 notices a second, 96% with X unchanged.
pub const RATE_CHANGE_THRESHOLD: f64 = 0.05;

/// Why [`SenderHandle::send`] refused a payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueError {
    /// The queue holds its bound already; the payload was dropped and counted.
    Full,
    /// The payload does not fit in one datagram of the session's packet size.
    TooLarge {
        /// The largest payload accepted (packet size minus the 34-byte header).
        max: usize,
    },
}

impl fmt::Display for QueueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QueueError::Full => f.write_str("send queue full: payload dropped"),
            QueueError::TooLarge { max } => write!(f, "payload larger than {max} bytes"),
        }
    }
}

impl std::error::Error for QueueError {}

/// The bounded payload queue.
#[derive(Debug)]
pub(crate) struct PayloadQueue {
    items: VecDeque<Vec<u8>>,
    limit: usize,
    max_payload: usize,
    pub(crate) drops: u64,
}

impl PayloadQueue {
    pub(crate) fn push(&mut self, payload: Vec<u8>) -> Result<(), QueueError> {
        if payload.len() > self.max_payload {
            return Err(QueueError::TooLarge {
                max: self.max_payload,
            });
        }
        if self.items.len() >= self.limit {
            self.drops += 1;
            return Err(QueueError::Full);
        }
        self.items.push_back(payload);
        Ok(())
    }

    pub(crate) fn pop(&mut self) -> Option<Vec<u8>> {
        self.items.pop_front()
    }

    /// The bound, in payloads.
    pub(crate) fn capacity(&self) -> usize {
        self.limit
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }
}

/// State shared by the sender loop and its handles.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) queue: Mutex<PayloadQueue>,
    rate_bits: AtomicU64,
    stop: AtomicBool,
    pub(crate) wake: Wake,
    subscribers: Mutex<Vec<SyncSender<RateChange>>>,
}

impl Shared {
    pub(crate) fn new(limit: usize, max_payload: usize, wake: Wake, rate: f64) -> Shared {
        Shared {
            queue: Mutex::new(PayloadQueue {
                items: VecDeque::new(),
                limit,
                max_payload,
                drops: 0,
            }),
            rate_bits: AtomicU64::new(rate.to_bits()),
            stop: AtomicBool::new(false),
            wake,
            subscribers: Mutex::new(Vec::new()),
        }
    }

    /// The queue, even if a thread panicked while holding it (the queue stays consistent: every
    /// operation on it is a single push or pop).
    pub(crate) fn queue(&self) -> MutexGuard<'_, PayloadQueue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn stopping(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }

    /// Stores the current rate for [`SenderHandle::allowed_rate_bytes_per_s`] (every pass of
    /// the loop: an atomic store).
    pub(crate) fn set_rate(&self, x_bytes_per_s: f64) {
        self.rate_bits
            .store(x_bytes_per_s.to_bits(), Ordering::Release);
    }

    /// Publishes a new rate to the atomic and every live subscriber (never blocks).
    pub(crate) fn publish(&self, change: RateChange) {
        self.set_rate(change.x_bytes_per_s);
        let mut subscribers = self.subscribers.lock().unwrap_or_else(|e| e.into_inner());
        subscribers.retain(|tx| !matches!(tx.try_send(change), Err(TrySendError::Disconnected(_))));
    }
}

/// A cloneable, thread-safe handle on a running [`crate::UdpSender`].
#[derive(Clone, Debug)]
pub struct SenderHandle {
    pub(crate) shared: Arc<Shared>,
}

impl SenderHandle {
    /// Queues `payload` for the next send opportunity. Refused (and, when full, counted as a
    /// drop) if the queue is full or the payload exceeds one datagram.
    pub fn send(&self, payload: Vec<u8>) -> Result<(), QueueError> {
        let was_empty = {
            let mut queue = self.shared.queue();
            let was_empty = queue.is_empty();
            queue.push(payload)?;
            was_empty
        };
        if was_empty {
            // The sender may be asleep until its nofeedback deadline (nothing to send).
            self.shared.wake.notify();
        }
        Ok(())
    }

    /// Payloads waiting in the queue.
    pub fn queued(&self) -> usize {
        self.shared.queue().len()
    }

    /// Payloads refused because the queue was full.
    pub fn queue_drops(&self) -> u64 {
        self.shared.queue().drops
    }

    /// The allowed sending rate X in bytes/s, as of the last feedback or timer event: what an
    /// encoder should aim at.
    pub fn allowed_rate_bytes_per_s(&self) -> f64 {
        f64::from_bits(self.shared.rate_bits.load(Ordering::Acquire))
    }

    /// A channel that receives each [`RateChange`] from now on (at most
    /// [`RATE_CHANNEL_DEPTH`] unread; later changes are dropped until it is read).
    pub fn rate_changes(&self) -> Receiver<RateChange> {
        let (tx, rx) = mpsc::sync_channel(RATE_CHANNEL_DEPTH);
        self.shared
            .subscribers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(tx);
        rx
    }

    /// Asks the sender's loop to return as soon as it wakes (it is woken at once).
    pub fn stop(&self) {
        self.shared.stop.store(true, Ordering::Release);
        self.shared.wake.notify();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn handle(limit: usize) -> SenderHandle {
        SenderHandle {
            shared: Arc::new(Shared::new(limit, 10, Wake::new().unwrap(), 1.0)),
        }
    }

    #[test]
    fn the_queue_is_bounded_and_counts_drops() {
        let h = handle(2);
        assert_eq!(h.send(vec![0; 11]), Err(QueueError::TooLarge { max: 10 }));
        h.send(vec![1]).unwrap();
        h.send(vec![2]).unwrap();
        assert_eq!(h.send(vec![3]), Err(QueueError::Full));
        assert_eq!((h.queued(), h.queue_drops()), (2, 1));
        assert_eq!(h.shared.queue().pop(), Some(vec![1]));
    }

    #[test]
    fn rate_changes_reach_subscribers_without_blocking() {
        let h = handle(1);
        let rx = h.rate_changes();
        for i in 0..(RATE_CHANNEL_DEPTH + 10) {
            h.shared.publish(RateChange {
                time: Time::ZERO,
                x_bytes_per_s: i as f64,
                p: 0.0,
                rtt_s: 0.0,
            });
        }
        assert_eq!(rx.try_iter().count(), RATE_CHANNEL_DEPTH);
        assert_eq!(
            h.allowed_rate_bytes_per_s(),
            (RATE_CHANNEL_DEPTH + 9) as f64
        );
        drop(rx);
        h.shared.publish(RateChange {
            time: Time::ZERO,
            x_bytes_per_s: 1.0,
            p: 0.0,
            rtt_s: 0.0,
        });
        assert!(h.shared.subscribers.lock().unwrap().is_empty());
    }
}
