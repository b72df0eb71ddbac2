//! A running simplex link: the loss models at its entry, the output queue, the transmitter and
//! the propagation pipe (ns-2's `SimpleLink`: queue, then `LinkDelay`).
//!
//! A packet offered to the link meets the link's loss models first (any of them may drop it),
//! then the queue. The transmitter serializes one packet at a time for exactly
//! size·8/rate seconds; the packet then spends the propagation delay in the pipe. Because every
//! packet in the pipe has the same delay, the pipe is a FIFO: the link keeps at most two pending
//! events (the end of the current transmission and the next arrival at the far end), however
//! many packets are in flight.

use std::collections::VecDeque;
use std::time::Duration;

use tfrc::Time;

use crate::loss::LossModel;
use crate::monitor::{DropCause, LinkMonitor};
use crate::packet::{NodeId, Packet};
use crate::queue::{Enqueued, Queue};
use crate::rng::SimRng;
use crate::serialization::transmission_time;

/// What became of a packet offered to a link.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Offer {
    /// Queued (or put on the wire at once); `start` is set when the transmitter was idle and a
    /// transmission began that ends at the given time.
    Queued {
        /// The end of a transmission that began now, if one did.
        started: Option<Time>,
    },
    /// Dropped by a loss model or the queue.
    Dropped(Packet, DropCause),
}

/// One loss model with its own random stream.
#[derive(Clone, Debug)]
pub(crate) struct AttachedLoss {
    pub(crate) model: LossModel,
    pub(crate) rng: SimRng,
}

/// The running state of a link.
#[derive(Debug)]
pub(crate) struct Link {
    pub(crate) to: NodeId,
    pub(crate) rate_bps: u64,
    pub(crate) delay: Duration,
    pub(crate) queue: Queue,
    queue_rng: SimRng,
    pub(crate) losses: Vec<AttachedLoss>,
    in_service: Option<Packet>,
    pipe: VecDeque<(Time, Packet)>,
    pub(crate) monitor: LinkMonitor,
}

impl Link {
    /// An idle, empty link.
    pub(crate) fn new(
        to: NodeId,
        rate_bps: u64,
        delay: Duration,
        queue: Queue,
        queue_rng: SimRng,
        losses: Vec<AttachedLoss>,
        monitor: LinkMonitor,
    ) -> Link {
        Link {
            to,
            rate_bps,
            delay,
            queue,
            queue_rng,
            losses,
            in_service: None,
            pipe: VecDeque::new(),
            monitor,
        }
    }

    /// A packet arrives at the link's entry at `now`: loss models, then the queue; if the
    /// transmitter is idle the queue is served at once (ns-2 `Queue::recv`).
    pub(crate) fn offer(&mut self, now: Time, packet: Packet) -> Offer {
        self.monitor.on_arrival(now, packet.size_bytes);
        for loss in &mut self.losses {
            if loss.model.should_drop(now, &packet, &mut loss.rng) {
                self.monitor
                    .on_drop(now, packet.size_bytes, DropCause::LossModel);
                return Offer::Dropped(packet, DropCause::LossModel);
            }
        }
        match self.queue.enqueue(now, packet, &mut self.queue_rng) {
            Enqueued::Dropped(packet) => {
                self.monitor
                    .on_drop(now, packet.size_bytes, DropCause::Queue);
                Offer::Dropped(packet, DropCause::Queue)
            }
            Enqueued::Accepted | Enqueued::Marked => {
                self.note_queue(now);
                let started = if self.in_service.is_none() {
                    self.start_next(now)
                } else {
                    None
                };
                Offer::Queued { started }
            }
        }
    }

    /// The transmission in progress ends at `now`: the packet enters the pipe. Returns the
    /// arrival time at the far end if the pipe was empty (so the caller schedules it), and the
    /// end of the next transmission if one starts.
    pub(crate) fn finish_transmission(&mut self, now: Time) -> (Option<Time>, Option<Time>) {
        let arrival = self.in_service.take().map(|packet| {
            let at = now + self.delay;
            self.pipe.push_back((at, packet));
            at
        });
        let schedule_arrival = arrival.filter(|_| self.pipe.len() == 1);
        (schedule_arrival, self.start_next(now))
    }

    /// The packet at the head of the pipe reaches the far end; returns it and the arrival time of
    /// the next one, if any.
    pub(crate) fn take_arrival(&mut self) -> Option<(Packet, Option<Time>)> {
        let (_, packet) = self.pipe.pop_front()?;
        Some((packet, self.pipe.front().map(|(at, _)| *at)))
    }

    /// The packet in service, if any (for the packet trace).
    pub(crate) fn in_service(&self) -> Option<&Packet> {
        self.in_service.as_ref()
    }

    /// Serves the head of the queue, if any; returns when its transmission ends.
    fn start_next(&mut self, now: Time) -> Option<Time> {
        let packet = self.queue.dequeue(now)?;
        self.note_queue(now);
        let end = now + transmission_time(packet.size_bytes, self.rate_bps);
        self.monitor.on_transmission(now, end, packet.size_bytes);
        self.in_service = Some(packet);
        Some(end)
    }

    fn note_queue(&mut self, now: Time) {
        self.monitor
            .on_queue_change(now, self.queue.len_packets(), self.queue.len_bytes());
    }
}
