//! The application's side of a sender, usable from any thread while the sender runs: queue
//! payloads (bounded, with priorities and deadlines, refusals counted), flush them, read the
//! allowed rate and the live statistics, subscribe to rate changes and expired payloads, stop.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, MutexGuard};

use tfrc::Time;

use crate::clock::Clock;
use crate::queue::{Expired, PayloadQueue, QueueError, SendOptions, PRIORITY_LEVELS};
use crate::sender::SenderReport;
use crate::wake::Wake;

/// How many rate changes a subscriber may leave unread; later ones are dropped for it (the
/// current rate is always [`SenderHandle::allowed_rate_bytes_per_s`]).
pub const RATE_CHANNEL_DEPTH: usize = 64;

/// How many expired payloads a subscriber may leave unread; later ones are dropped for it (the
/// count is always in [`SenderHandle::stats`]).
pub const EXPIRED_CHANNEL_DEPTH: usize = 1024;

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

/// State shared by the sender loop and its handles.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) queue: Mutex<PayloadQueue>,
    /// The sender's clock: deadlines are set on it.
    clock: Clock,
    rate_bits: AtomicU64,
    stop: AtomicBool,
    pub(crate) wake: Wake,
    subscribers: Mutex<Vec<SyncSender<RateChange>>>,
    expiry_subscribers: Mutex<Vec<SyncSender<Expired>>>,
    /// The sender's counters as of the loop's last pass.
    report: Mutex<SenderReport>,
}

impl Shared {
    pub(crate) fn new(
        limit: usize,
        max_payload: usize,
        wake: Wake,
        clock: Clock,
        rate: f64,
    ) -> Shared {
        Shared {
            queue: Mutex::new(PayloadQueue::new(limit, max_payload)),
            clock,
            rate_bits: AtomicU64::new(rate.to_bits()),
            stop: AtomicBool::new(false),
            wake,
            subscribers: Mutex::new(Vec::new()),
            expiry_subscribers: Mutex::new(Vec::new()),
            report: Mutex::new(SenderReport::default()),
        }
    }

    /// The queue, even if a thread panicked while holding it (the queue stays consistent: every
    /// operation on it completes before its counters are read).
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

    /// Stores the loop's counters for [`SenderHandle::stats`] (every pass of the loop).
    pub(crate) fn set_report(&self, report: SenderReport) {
        *self.report.lock().unwrap_or_else(|e| e.into_inner()) = report;
    }

    /// Publishes a new rate to the atomic and every live subscriber (never blocks).
    pub(crate) fn publish(&self, change: RateChange) {
        self.set_rate(change.x_bytes_per_s);
        let mut subscribers = self.subscribers.lock().unwrap_or_else(|e| e.into_inner());
        subscribers.retain(|tx| !matches!(tx.try_send(change), Err(TrySendError::Disconnected(_))));
    }

    /// Announces an expired payload to every live subscriber (never blocks).
    pub(crate) fn announce_expired(&self, expired: Expired) {
        let mut subscribers = self
            .expiry_subscribers
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if subscribers.is_empty() {
            return;
        }
        subscribers
            .retain(|tx| !matches!(tx.try_send(expired), Err(TrySendError::Disconnected(_))));
    }
}

/// A cloneable, thread-safe handle on a running [`crate::UdpSender`].
#[derive(Clone, Debug)]
pub struct SenderHandle {
    pub(crate) shared: Arc<Shared>,
}

impl SenderHandle {
    /// Queues `payload` for the next send opportunity, at priority 0 with no deadline.
    /// Refused (and, when full, counted as a drop) if the queue is full or the payload exceeds
    /// one datagram.
    pub fn send(&self, payload: Vec<u8>) -> Result<(), QueueError> {
        self.send_with(payload, SendOptions::default()).map(|_| ())
    }

    /// Queues `payload` with a priority and a deadline ([`SendOptions`]); returns its ticket
    /// (numbered from 0 in the order payloads were accepted), which names it if it expires.
    /// Refused if the queue is full (counted; payloads already past their deadline are dropped
    /// first to make room), the payload exceeds one datagram, or an option is out of range.
    pub fn send_with(&self, payload: Vec<u8>, options: SendOptions) -> Result<u64, QueueError> {
        let now = self.shared.clock.now();
        let (ticket, was_empty) = {
            let mut queue = self.shared.queue();
            let was_empty = queue.is_empty();
            let ticket = queue.push(payload, options, now, &mut |e| {
                self.shared.announce_expired(e)
            })?;
            (ticket, was_empty)
        };
        if was_empty {
            // The sender may be asleep until its nofeedback deadline (nothing to send).
            self.shared.wake.notify();
        }
        Ok(ticket)
    }

    /// Removes every queued payload (counted as flushed): an encoder starting over from a key
    /// frame no longer wants the frames that depend on the old one. How many were removed.
    pub fn flush(&self) -> usize {
        self.shared.queue().flush_below(PRIORITY_LEVELS)
    }

    /// Removes every queued payload of priority below `priority` (counted as flushed); how
    /// many.
    pub fn flush_below(&self, priority: u8) -> usize {
        self.shared.queue().flush_below(usize::from(priority))
    }

    /// Payloads waiting in the queue.
    pub fn queued(&self) -> usize {
        self.shared.queue().len()
    }

    /// Payloads refused because the queue was full.
    pub fn queue_drops(&self) -> u64 {
        self.shared.queue().stats.full_drops
    }

    /// The sender's state and counters: X, X_calc, X_recv, p, R and t_RTO in `tfrc`, what was
    /// sent and read, as of its loop's last pass (at most one packet burst or one wake-up old;
    /// all zero before the loop first runs), and the queue's length and counters as of now.
    /// Readable from any thread at any time.
    pub fn stats(&self) -> SenderReport {
        let mut report = *self.shared.report.lock().unwrap_or_else(|e| e.into_inner());
        let queue = self.shared.queue();
        report.queued = queue.len();
        report.queue = queue.stats;
        report.queue_drops = queue.stats.full_drops;
        report
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

    /// A channel that receives each payload dropped at its deadline from now on (at most
    /// [`EXPIRED_CHANNEL_DEPTH`] unread; later ones are dropped for it).
    pub fn expirations(&self) -> Receiver<Expired> {
        let (tx, rx) = mpsc::sync_channel(EXPIRED_CHANNEL_DEPTH);
        self.shared
            .expiry_subscribers
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
            shared: Arc::new(Shared::new(
                limit,
                10,
                Wake::new().unwrap(),
                Clock::new(),
                1.0,
            )),
        }
    }

    #[test]
    fn the_handle_queues_flushes_and_counts() {
        let h = handle(2);
        assert_eq!(h.send(vec![0; 11]), Err(QueueError::TooLarge { max: 10 }));
        h.send(vec![1]).unwrap();
        assert_eq!(
            h.send_with(vec![2], SendOptions::default().with_priority(3)),
            Ok(1)
        );
        assert_eq!(h.send(vec![3]), Err(QueueError::Full));
        assert_eq!((h.queued(), h.queue_drops()), (2, 1));
        assert_eq!(h.flush_below(3), 1);
        assert_eq!(h.shared.queue().pop(), Some(vec![2]));
        assert_eq!(h.flush(), 0);
    }

    #[test]
    fn expired_payloads_reach_subscribers() {
        let h = handle(4);
        let rx = h.expirations();
        let gone = SendOptions::default().with_deadline(std::time::Duration::ZERO);
        let ticket = h.send_with(vec![1], gone).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(1));
        let now = h.shared.clock.now();
        let ready = h
            .shared
            .queue()
            .ready(now, &mut |e| h.shared.announce_expired(e));
        assert!(!ready);
        let expired = rx.try_recv().unwrap();
        assert_eq!((expired.ticket, expired.dropped), (ticket, now));
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
