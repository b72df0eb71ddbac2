//! A running simplex link: the loss models at its entry, the output queue, the transmitter and
//! the propagation pipe (ns-2's `SimpleLink`: queue, then `LinkDelay`).
//!
//! A packet offered to the link meets the link's loss models first (any of them may drop it),
//! then the queue. The transmitter serializes one packet at a time for exactly
//! size·8/rate seconds; the packet then spends the propagation delay in the pipe. Because every
//! packet in the pipe has the same delay, the pipe is a FIFO, and a packet's arrival at the far
//! end is known the moment its transmission starts: it enters the pipe then, stamped with that
//! arrival time.
//!
//! The link therefore keeps at most two pending events, however many packets are in flight: the
//! next arrival at the far end, and the end of the current transmission **only when a packet is
//! waiting for it**. A transmission that finds the queue empty when it starts schedules no end
//! event; the transmitter is simply busy until `busy_until`. A packet that arrives while it is
//! busy schedules the end event then; one that arrives after it finds the link idle and starts
//! at once. Lightly loaded links (access links, the ACK path) thus cost one event per packet
//! instead of two, with the same times, the same queue contract and the same monitors. The end
//! event keeps its rank among events due at the same instant: its sequence number is reserved
//! when the transmission starts (`end_seq`), as if it had been scheduled then. The arrival
//! event is scheduled at the start rather than at the end of the transmission, so among
//! arrivals due at one instant the order is that of their transmission starts.

use std::collections::VecDeque;
use std::time::Duration;

use tfrc::time::duration_nanos;
use tfrc::Time;

use crate::loss::LossModel;
use crate::monitor::{DropCause, LinkMonitor};
use crate::packet::{NodeId, Packet};
use crate::prefetch::prefetch;
use crate::queue::{Enqueued, Queue};
use crate::rng::SimRng;
use crate::serialization::transmission_time;

/// Events the engine must schedule for a link after a call: the arrival of the packet at the
/// head of the pipe (when the pipe was empty before), and the end of the transmission in
/// progress (when a packet now waits for it and no end event is pending yet).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct LinkEvents {
    /// Schedule an `Arrival` at this time.
    pub(crate) arrival: Option<Time>,
    /// Schedule a `TransmissionEnd` at this time.
    pub(crate) transmission_end: Option<Time>,
}

/// What became of a packet offered to a link.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Offer {
    /// Queued, or put on the wire at once (`started`); `events` are what to schedule.
    Queued {
        /// Whether the packet's transmission began at once (the transmitter was idle).
        started: bool,
        /// Events to schedule.
        events: LinkEvents,
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
///
/// Laid out by hand (`repr(C)`, in declaration order, from a cache-line boundary), so that an
/// event touches as few cache lines of the record as it can: with thousands of links the record
/// is rarely cached when its event comes up. The first line holds what every arrival reads (the
/// far end's node and the propagation pipe) and the transmitter's state that every offer reads;
/// the queue follows from the second line (a DropTail queue's FIFO, limit and arrival count fill
/// that line), then, in the third, the rest of what an offer reads (the serialization cache and
/// the loss models); the monitor starts on a line of its own, its hot fields in its first two
/// lines (see [`LinkMonitor`]). An offer to an idle access link thus reads five lines of the
/// record, where the compiler's order spread the same fields over about eight (callgrind, 2048
/// flows, 3 s: 3.9% fewer first-level and second-level data misses; no time gain measurable on
/// this project's shared machines, docs/performance.md).
#[derive(Debug)]
#[repr(C, align(64))]
pub(crate) struct Link {
    pub(crate) to: NodeId,
    /// Whether a `TransmissionEnd` event is pending for `busy_until`.
    end_pending: bool,
    /// Whether the queue still has to be told, by an empty dequeue at `busy_until`, that the
    /// transmitter became free (the queue contract; see the module documentation).
    idle_unreported: bool,
    pipe: VecDeque<(Time, Packet)>,
    /// When the transmission in progress ends (in the past when the transmitter is idle).
    busy_until: Time,
    /// The event-queue sequence number reserved for the current transmission's end event when
    /// the transmission started, so that the event, if it is ever scheduled, ranks among
    /// equal-time events as ns-2's (scheduled at the start) would.
    pub(crate) end_seq: u64,
    /// The propagation delay in nanoseconds (kept as an integer: adding a `Duration` to a time
    /// converts it every time).
    delay_ns: u64,
    pub(crate) queue: Queue,
    /// The last packet size served and its transmission time in nanoseconds: a flow's packets
    /// mostly share one size, and this spares the 128-bit division of [`transmission_time`] per
    /// packet.
    serialization: (u32, u64),
    /// A boxed slice, not a `Vec`: 8 bytes fewer, which keeps it in the queue's last line.
    losses: Box<[AttachedLoss]>,
    pub(crate) rate_bps: u64,
    queue_rng: SimRng,
    /// Aligned to a cache line of its own, its hot fields first (see [`LinkMonitor`]).
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
            delay_ns: duration_nanos(delay),
            queue,
            queue_rng,
            losses: losses.into_boxed_slice(),
            busy_until: Time::ZERO,
            end_pending: false,
            end_seq: 0,
            idle_unreported: false,
            pipe: VecDeque::new(),
            serialization: (0, duration_nanos(transmission_time(0, rate_bps))),
            monitor,
        }
    }

    /// Adds a loss model at the link's entry, after those already there (while the network is
    /// built).
    pub(crate) fn attach_loss(&mut self, loss: AttachedLoss) {
        let mut losses = std::mem::take(&mut self.losses).into_vec();
        losses.push(loss);
        self.losses = losses.into_boxed_slice();
    }

    /// How many loss models sit at the link's entry.
    pub(crate) fn loss_count(&self) -> usize {
        self.losses.len()
    }

    /// Asks for the link's first cache line, which holds what the next event will read first
    /// (see the layout note on [`Link`] and [`crate::prefetch`]).
    pub(crate) fn prefetch(&self) {
        prefetch(self);
    }

    /// Asks for the packet at the head of the pipe, which the link's next arrival takes.
    pub(crate) fn prefetch_pipe_head(&self) {
        if let Some(head) = self.pipe.front() {
            prefetch(head);
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
        let idle = self.busy_until <= now && !self.end_pending;
        if idle && self.idle_unreported {
            // The transmitter became free at `busy_until` with nothing waiting: the empty
            // dequeue ns-2 makes at that instant, made now, before this arrival is counted.
            self.idle_unreported = false;
            let none = self.queue.dequeue(self.busy_until);
            debug_assert!(none.is_none(), "a packet waited without an end event");
        }
        if let (true, Queue::DropTail(queue)) = (idle, &mut self.queue) {
            if queue.len_packets() == 0 {
                // Enqueued and dequeued at once: the same counts, and the same monitor state
                // (a level of 1 packet held for no time is not integrated), without the copy
                // into the queue and back.
                return match queue.pass_through(packet) {
                    Ok(packet) => {
                        self.note_queue(now);
                        Offer::Queued {
                            started: true,
                            events: self.transmit(now, packet),
                        }
                    }
                    Err(packet) => {
                        self.monitor
                            .on_drop(now, packet.size_bytes, DropCause::Queue);
                        Offer::Dropped(packet, DropCause::Queue)
                    }
                };
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
                if idle {
                    let events = self.start_next(now);
                    Offer::Queued {
                        started: true,
                        events,
                    }
                } else {
                    let mut events = LinkEvents::default();
                    if !self.end_pending {
                        self.end_pending = true;
                        events.transmission_end = Some(self.busy_until);
                    }
                    Offer::Queued {
                        started: false,
                        events,
                    }
                }
            }
        }
    }

    /// The transmission in progress ends at `now` and a packet waits: the next one starts.
    pub(crate) fn finish_transmission(&mut self, now: Time) -> LinkEvents {
        self.end_pending = false;
        self.start_next(now)
    }

    /// The packet at the head of the pipe reaches the far end; returns it and the arrival time of
    /// the next one, if any.
    pub(crate) fn take_arrival(&mut self) -> Option<(Packet, Option<Time>)> {
        let (_, packet) = self.pipe.pop_front()?;
        Some((packet, self.pipe.front().map(|(at, _)| *at)))
    }

    /// The packet whose transmission started last (for the packet trace): the newest in the pipe.
    pub(crate) fn last_started(&self) -> Option<&Packet> {
        self.pipe.back().map(|(_, packet)| packet)
    }

    /// Serves the head of the queue, if any, at `now`: the packet goes on the wire and into the
    /// pipe at once, stamped with its arrival time at the far end. Asks for an end event only if
    /// another packet already waits.
    fn start_next(&mut self, now: Time) -> LinkEvents {
        let Some(packet) = self.queue.dequeue(now) else {
            // Only reached if a queue lost a waiting packet on its own; the dequeue just made
            // was the idle report.
            self.idle_unreported = false;
            return LinkEvents::default();
        };
        self.note_queue(now);
        self.transmit(now, packet)
    }

    /// Puts `packet`, just taken from the queue, on the wire at `now` and into the pipe.
    fn transmit(&mut self, now: Time, packet: Packet) -> LinkEvents {
        let mut events = LinkEvents::default();
        let end = now.saturating_add_nanos(self.transmission_nanos(packet.size_bytes));
        self.monitor.on_transmission(now, end, packet.size_bytes);
        self.busy_until = end;
        let arrival = end.saturating_add_nanos(self.delay_ns);
        self.pipe.push_back((arrival, packet));
        if self.pipe.len() == 1 {
            events.arrival = Some(arrival);
        }
        if self.queue.len_packets() > 0 {
            self.end_pending = true;
            events.transmission_end = Some(end);
        } else {
            self.idle_unreported = true;
        }
        events
    }

    /// [`transmission_time`] of `size_bytes` on this link in nanoseconds, remembered for the
    /// last size.
    fn transmission_nanos(&mut self, size_bytes: u32) -> u64 {
        if self.serialization.0 != size_bytes {
            let time = transmission_time(size_bytes, self.rate_bps);
            self.serialization = (size_bytes, duration_nanos(time));
        }
        self.serialization.1
    }

    fn note_queue(&mut self, now: Time) {
        self.monitor
            .on_queue_change(now, self.queue.len_packets(), self.queue.len_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::test_packet;
    use crate::queue::{QueueConfig, QueueLimit};
    use crate::rng::stream;

    /// A 1 Mb/s, 10 ms link: a 1000-byte packet takes 8 ms on the wire.
    fn link() -> Link {
        let queue = Queue::try_new(
            &QueueConfig::DropTail {
                limit: QueueLimit::Packets(100),
            },
            1_000_000,
            Duration::from_millis(10),
        )
        .unwrap();
        Link::new(
            NodeId(1),
            1_000_000,
            Duration::from_millis(10),
            queue,
            stream(1, "link"),
            Vec::new(),
            LinkMonitor::new(Duration::from_secs(1), 1_000_000),
        )
    }

    fn ms(n: u64) -> Time {
        Time::from_nanos(n * 1_000_000)
    }

    fn queued(offer: Offer) -> (bool, LinkEvents) {
        match offer {
            Offer::Queued { started, events } => (started, events),
            Offer::Dropped(..) => panic!("dropped"),
        }
    }

    #[test]
    fn a_packet_on_an_idle_link_costs_one_event() {
        let mut link = link();
        let (started, events) = queued(link.offer(ms(0), test_packet(0, 1000)));
        assert!(started);
        assert_eq!(events.arrival, Some(ms(18)));
        assert_eq!(events.transmission_end, None);
        assert_eq!(
            link.take_arrival().map(|(p, next)| (p.seq, next)),
            Some((0, None))
        );
        // After the transmission, the next packet finds the link idle again.
        let (started, events) = queued(link.offer(ms(30), test_packet(1, 1000)));
        assert!(started);
        assert_eq!(events.arrival, Some(ms(48)));
        assert_eq!(events.transmission_end, None);
    }

    #[test]
    fn waiting_packets_ask_for_one_end_event_and_keep_exact_times() {
        let mut link = link();
        queued(link.offer(ms(0), test_packet(0, 1000)));
        // Two packets arrive while the first is on the wire: one end event, for 8 ms.
        let (started, events) = queued(link.offer(ms(1), test_packet(1, 1000)));
        assert!(!started);
        assert_eq!(events.transmission_end, Some(ms(8)));
        assert_eq!(
            events.arrival, None,
            "the first packet's arrival is already asked"
        );
        let (_, events) = queued(link.offer(ms(2), test_packet(2, 1000)));
        assert_eq!(events, LinkEvents::default());
        // At 8 ms the second starts; the third still waits, so another end event at 16 ms.
        let events = link.finish_transmission(ms(8));
        assert_eq!(events.transmission_end, Some(ms(16)));
        assert_eq!(events.arrival, None, "the pipe was not empty");
        // At 16 ms the third starts with nothing behind it: no end event.
        let events = link.finish_transmission(ms(16));
        assert_eq!(events, LinkEvents::default());
        // The far end sees the three packets one transmission apart.
        let mut arrivals = Vec::new();
        while let Some((packet, _)) = link.take_arrival() {
            arrivals.push(packet.seq);
        }
        assert_eq!(arrivals, vec![0, 1, 2]);
        assert_eq!(link.queue.stats().departures, 3);
    }

    #[test]
    fn pipe_holds_arrival_times_in_order() {
        let mut link = link();
        queued(link.offer(ms(0), test_packet(0, 1000)));
        queued(link.offer(ms(0), test_packet(1, 500)));
        let events = link.finish_transmission(ms(8));
        assert_eq!(events, LinkEvents::default());
        let (first, next) = link.take_arrival().unwrap();
        assert_eq!(first.seq, 0);
        assert_eq!(
            next,
            Some(ms(22)),
            "8 ms + 4 ms on the wire + 10 ms in the pipe"
        );
        assert_eq!(link.last_started().map(|p| p.seq), Some(1));
    }

    /// What an arrival reads (the far end's node, the pipe) and the transmitter's state an offer
    /// reads stay within the record's first cache line, the rest of what an offer to an idle
    /// DropTail link reads within the next two, and the monitor starts on a line.
    #[test]
    fn the_hot_fields_share_the_first_cache_lines() {
        use std::mem::{align_of, offset_of, size_of};
        assert_eq!(align_of::<Link>(), 64);
        assert!(offset_of!(Link, to) + size_of::<NodeId>() <= 64);
        assert!(offset_of!(Link, pipe) + size_of::<VecDeque<(Time, Packet)>>() <= 64);
        assert!(offset_of!(Link, busy_until) + size_of::<Time>() <= 64);
        assert!(offset_of!(Link, end_seq) + size_of::<u64>() <= 64);
        assert!(offset_of!(Link, delay_ns) + size_of::<u64>() <= 64);
        assert_eq!(offset_of!(Link, queue), 64);
        assert!(offset_of!(Link, serialization) + size_of::<(u32, u64)>() <= 192);
        assert!(offset_of!(Link, losses) + size_of::<Box<[AttachedLoss]>>() <= 192);
        assert_eq!(offset_of!(Link, monitor) % 64, 0);
    }
}
