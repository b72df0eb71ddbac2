//! One direction of the emulated link (a Dummynet "pipe"), sans-IO: it is handed arrivals and
//! the current time, and hands back the packets whose delivery time has come. The relay
//! ([`crate::relay`]) drives it from the TUN devices and a timer; tests drive it in virtual time.
//!
//! The model is a netsim link (docs/scenario.md, "Links"): an arrival first meets the Bernoulli
//! loss, then netsim's own queue ([`netsim::queue::Queue`], DropTail or RED, called as its link
//! contract asks: every arrival enqueued, a dequeue whenever the transmitter frees), then a
//! transmitter that takes size·8/rate (rounded up to the ns), then the propagation delay.
//!
//! The transmitter runs on *intended* times: a packet starts when the previous one's
//! transmission ends on paper, not when the relay happened to wake up. A late wake-up therefore
//! delays deliveries (measured as lateness) but never lowers the rate or lets the queue drain
//! faster than the link would.
//!
//! netsim's queue holds netsim packets, which carry no bytes: the shim stores each real packet in
//! a slot and queues a netsim packet whose `seq` is the slot's index and whose `size_bytes` is
//! the real size.

use std::collections::VecDeque;

use netsim::packet::{FlowId, NodeId, Packet, Payload};
use netsim::queue::{Enqueued, Queue};
use netsim::rng::{stream, uniform, SimRng};
use tfrc::Time;

use crate::config::DirectionConfig;
use crate::ip::{ecn_capable, flow_key, mark_ce, FlowKey};
use crate::lateness::Lateness;
use crate::log::{Event, Record};

/// Counters of one direction since the relay started.
#[derive(Clone, Debug, Default)]
pub struct PipeStats {
    /// Packets read from the sending side.
    pub arrivals: u64,
    /// Dropped by the Bernoulli loss.
    pub loss_drops: u64,
    /// Refused by the queue.
    pub queue_drops: u64,
    /// Accepted with CE set (RED with ECN).
    pub marks: u64,
    /// Handed to the receiving side.
    pub departures: u64,
    /// IP bytes handed to the receiving side.
    pub departed_bytes: u64,
    /// Deliveries the receiving TUN device refused.
    pub write_errors: u64,
    /// The most packets ever waiting in the queue.
    pub max_queue_packets: usize,
    /// Lateness of the deliveries.
    pub lateness: Lateness,
}

/// A packet held by the emulator: its bytes and what the log needs.
#[derive(Debug, Default)]
struct Slot {
    data: Vec<u8>,
    flow: FlowKey,
    arrived: Time,
    qdelay_ns: u64,
}

/// One direction of the link.
#[derive(Debug)]
pub struct Pipe {
    dir: u8,
    rate_bps: u64,
    delay_ns: u64,
    loss: f64,
    queue: Queue,
    loss_rng: SimRng,
    queue_rng: SimRng,
    slots: Vec<Slot>,
    free: Vec<u32>,
    /// The packet being transmitted and when its transmission ends.
    on_wire: Option<(u32, Time)>,
    /// Transmitted packets and when they reach the far side, in order (constant delay).
    in_flight: VecDeque<(Time, u32)>,
    stats: PipeStats,
}

impl Pipe {
    /// A pipe for `config`; `dir` is 0 (forward) or 1 (reverse) and names its random streams.
    ///
    /// # Panics
    /// If the queue is invalid for the rate; [`crate::config::RelayConfig`] has checked it.
    pub fn new(config: &DirectionConfig, dir: u8, seed: u64) -> Pipe {
        let name = if dir == 0 { "forward" } else { "reverse" };
        Pipe {
            dir,
            rate_bps: config.rate_bps,
            delay_ns: tfrc::time::duration_nanos(config.delay),
            loss: config.loss,
            queue: Queue::with_link_delay(&config.queue, config.rate_bps, config.delay),
            loss_rng: stream(seed, &format!("{name}:loss")),
            queue_rng: stream(seed, &format!("{name}:queue")),
            slots: Vec::new(),
            free: Vec::new(),
            on_wire: None,
            in_flight: VecDeque::new(),
            stats: PipeStats::default(),
        }
    }

    /// Counters so far.
    pub fn stats(&self) -> &PipeStats {
        &self.stats
    }

    /// Packets waiting in the queue.
    pub fn queue_packets(&self) -> usize {
        self.queue.len_packets()
    }

    /// When [`Pipe::advance`] next has a packet to deliver, if ever: the head of the delay line
    /// or, earlier in the delay line's order, the packet on the wire. The end of a transmission
    /// needs no wake-up of its own: the transmitter runs on intended times, so [`Pipe::advance`]
    /// (called before every arrival) replays the transmissions that ended since, at their
    /// intended instants, and the queue looks to each arrival as it would have.
    pub fn next_deadline(&self) -> Option<Time> {
        match (self.in_flight.front(), self.on_wire) {
            (Some(&(at, _)), _) => Some(at),
            (None, Some((_, end))) => Some(Time::from_nanos(
                end.as_nanos().saturating_add(self.delay_ns),
            )),
            (None, None) => None,
        }
    }

    /// The latest delivery time known now that is at or before `limit`: of the packets in the
    /// delay line and the one on the wire (later ones are still queued). With
    /// [`Pipe::next_deadline`] it lets the relay wake once for a cluster of deliveries.
    pub fn last_deadline_by(&self, limit: Time) -> Option<Time> {
        let on_wire = self
            .on_wire
            .map(|(_, end)| Time::from_nanos(end.as_nanos().saturating_add(self.delay_ns)));
        let in_flight = self
            .in_flight
            .iter()
            .map(|&(at, _)| at)
            .take_while(|&at| at <= limit)
            .last();
        [in_flight, on_wire.filter(|&at| at <= limit)]
            .into_iter()
            .flatten()
            .max()
    }

    /// A packet read from the sending side at `now`. Call [`Pipe::advance`] up to `now` first.
    pub fn arrive(&mut self, now: Time, packet: &[u8], log: &mut impl FnMut(&Record)) {
        self.stats.arrivals += 1;
        let flow = flow_key(packet);
        let size = packet.len() as u32;
        let mut record = Record {
            t_ns: now.as_nanos(),
            qdelay_ns: 0,
            late_ns: 0,
            flow,
            size,
            qlen: self.queue.len_packets() as u32,
            dir: self.dir,
            event: Event::Arrive,
        };
        log(&record);
        if self.loss > 0.0 && uniform(&mut self.loss_rng) < self.loss {
            self.stats.loss_drops += 1;
            record.event = Event::DropLoss;
            log(&record);
            return;
        }
        let slot = self.alloc(packet, flow, now);
        let mut shim = Packet::new(
            FlowId(0),
            u64::from(slot),
            size,
            NodeId(0),
            now,
            Payload::Cbr,
        );
        shim.ecn_capable = ecn_capable(packet);
        match self.queue.enqueue(now, shim, &mut self.queue_rng) {
            Enqueued::Accepted => {}
            Enqueued::Marked => {
                self.stats.marks += 1;
                mark_ce(&mut self.slots[slot as usize].data);
                record.event = Event::Mark;
                log(&record);
            }
            Enqueued::Dropped(_) => {
                self.stats.queue_drops += 1;
                self.free.push(slot);
                record.event = Event::DropQueue;
                log(&record);
                return;
            }
        }
        self.stats.max_queue_packets = self.stats.max_queue_packets.max(self.queue.len_packets());
        if self.on_wire.is_none() {
            self.start_next(now);
        }
    }

    /// Moves time to `now`: transmissions that ended join the delay line, and every packet
    /// whose delivery time is at or before `now` is handed to `deliver` (which returns whether
    /// the receiving side took it) and logged with its lateness, `now` minus the intended time.
    pub fn advance(
        &mut self,
        now: Time,
        deliver: &mut impl FnMut(&[u8]) -> bool,
        log: &mut impl FnMut(&Record),
    ) {
        loop {
            let tx_end = self.on_wire.map(|(_, end)| end).filter(|&end| end <= now);
            let due = self.in_flight.front().copied().filter(|&(at, _)| at <= now);
            match (tx_end, due) {
                (Some(end), d) if d.is_none_or(|(at, _)| end <= at) => {
                    let (slot, _) = self.on_wire.take().expect("on_wire checked above");
                    let at = Time::from_nanos(end.as_nanos().saturating_add(self.delay_ns));
                    self.in_flight.push_back((at, slot));
                    self.start_next(end);
                }
                (_, Some((at, slot))) => {
                    self.in_flight.pop_front();
                    self.deliver(now, at, slot, deliver, log);
                }
                _ => break,
            }
        }
    }

    fn deliver(
        &mut self,
        now: Time,
        intended: Time,
        slot: u32,
        deliver: &mut impl FnMut(&[u8]) -> bool,
        log: &mut impl FnMut(&Record),
    ) {
        let held = &self.slots[slot as usize];
        let late_ns = now.as_nanos().saturating_sub(intended.as_nanos());
        let ok = deliver(&held.data);
        let size = held.data.len() as u32;
        if ok {
            self.stats.departures += 1;
            self.stats.departed_bytes += u64::from(size);
            self.stats.lateness.add(late_ns);
        } else {
            self.stats.write_errors += 1;
        }
        log(&Record {
            t_ns: now.as_nanos(),
            qdelay_ns: held.qdelay_ns,
            late_ns: late_ns as i64,
            flow: held.flow,
            size,
            qlen: self.queue.len_packets() as u32,
            dir: self.dir,
            event: if ok { Event::Depart } else { Event::DropWrite },
        });
        self.free.push(slot);
    }

    /// The transmitter is free at `at`: dequeue the next packet, if any (a dequeue of an empty
    /// queue is how RED learns the link went idle).
    fn start_next(&mut self, at: Time) {
        if let Some(shim) = self.queue.dequeue(at) {
            let slot = shim.seq as u32;
            let held = &mut self.slots[slot as usize];
            held.qdelay_ns = at.as_nanos().saturating_sub(held.arrived.as_nanos());
            let bits = u128::from(shim.size_bytes) * 8 * 1_000_000_000;
            let tx_ns = bits.div_ceil(u128::from(self.rate_bps)) as u64;
            self.on_wire = Some((slot, Time::from_nanos(at.as_nanos().saturating_add(tx_ns))));
        }
    }

    fn alloc(&mut self, packet: &[u8], flow: FlowKey, now: Time) -> u32 {
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => {
                self.slots.push(Slot::default());
                (self.slots.len() - 1) as u32
            }
        };
        let held = &mut self.slots[slot as usize];
        held.data.clear();
        held.data.extend_from_slice(packet);
        held.flow = flow;
        held.arrived = now;
        held.qdelay_ns = 0;
        slot
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use netsim::queue::{QueueConfig, QueueLimit};
    use std::time::Duration;

    fn config(limit: u32, loss: f64) -> DirectionConfig {
        DirectionConfig {
            rate_bps: 8_000_000, // 1 byte per µs
            delay: Duration::from_millis(10),
            loss,
            queue: QueueConfig::DropTail {
                limit: QueueLimit::Packets(limit),
            },
        }
    }

    fn packet(n: u8, size: usize) -> Vec<u8> {
        let mut p = vec![0u8; size];
        p[0] = 0x45;
        p[size - 1] = n;
        p
    }

    /// Drives `pipe` to `until` in 1 µs steps, collecting (delivery time, last byte).
    fn run_until(pipe: &mut Pipe, from_us: u64, until_us: u64, out: &mut Vec<(u64, u8)>) {
        let mut log = |_: &Record| {};
        for us in from_us..=until_us {
            let now = Time::from_nanos(us * 1000);
            pipe.advance(
                now,
                &mut |p: &[u8]| {
                    out.push((us, *p.last().unwrap()));
                    true
                },
                &mut log,
            );
        }
    }

    #[test]
    fn rate_and_delay_are_exact_on_intended_times() {
        let mut pipe = Pipe::new(&config(10, 0.0), 0, 1);
        let mut records = Vec::new();
        for n in 0..3 {
            pipe.arrive(Time::ZERO, &packet(n, 1000), &mut |r: &Record| {
                records.push(*r)
            });
        }
        assert_eq!(pipe.queue_packets(), 2);
        let mut out = Vec::new();
        run_until(&mut pipe, 0, 20_000, &mut out);
        // 1000 bytes take 1000 µs; each then travels 10 ms.
        assert_eq!(out, vec![(11_000, 0), (12_000, 1), (13_000, 2)]);
        assert_eq!(pipe.stats().departures, 3);
        assert_eq!(pipe.stats().lateness.max_ns(), 0);
        assert_eq!(pipe.next_deadline(), None);
    }

    #[test]
    fn a_late_wakeup_delays_deliveries_but_keeps_the_schedule() {
        let mut pipe = Pipe::new(&config(10, 0.0), 0, 1);
        for n in 0..3 {
            pipe.arrive(Time::ZERO, &packet(n, 1000), &mut |_: &Record| {});
        }
        let mut out = Vec::new();
        let mut lates = Vec::new();
        // One wake-up at 12.5 ms delivers the first two (late by 1.5 ms and 0.5 ms).
        pipe.advance(
            Time::from_nanos(12_500_000),
            &mut |p: &[u8]| {
                out.push(*p.last().unwrap());
                true
            },
            &mut |r: &Record| lates.push(r.late_ns),
        );
        assert_eq!(out, vec![0, 1]);
        assert_eq!(lates, vec![1_500_000, 500_000]);
        // The third is still due at 13 ms exactly.
        assert_eq!(pipe.next_deadline(), Some(Time::from_nanos(13_000_000)));
        // With nothing in flight, the next deadline is the delivery of the packet on the wire.
        let mut idle = Pipe::new(&config(10, 0.0), 0, 1);
        idle.arrive(Time::ZERO, &packet(0, 1000), &mut |_: &Record| {});
        assert_eq!(idle.next_deadline(), Some(Time::from_nanos(11_000_000)));
    }

    #[test]
    fn the_last_deadline_within_a_horizon_covers_the_delay_line_and_the_wire() {
        let mut pipe = Pipe::new(&config(10, 0.0), 0, 1);
        assert_eq!(pipe.last_deadline_by(Time::from_nanos(u64::MAX)), None);
        for n in 0..3 {
            pipe.arrive(Time::ZERO, &packet(n, 1000), &mut |_: &Record| {});
        }
        // At 2.5 ms two have left the wire (due at 11 and 12 ms), the third is on it (13 ms).
        pipe.advance(
            Time::from_nanos(2_500_000),
            &mut |_: &[u8]| true,
            &mut |_: &Record| {},
        );
        let ms = |m: u64| Time::from_nanos(m * 1_000_000);
        assert_eq!(pipe.next_deadline(), Some(ms(11)));
        assert_eq!(pipe.last_deadline_by(ms(11)), Some(ms(11)));
        assert_eq!(
            pipe.last_deadline_by(ms(12) + std::time::Duration::from_micros(500)),
            Some(ms(12))
        );
        assert_eq!(pipe.last_deadline_by(ms(20)), Some(ms(13)));
        assert_eq!(pipe.last_deadline_by(ms(10)), None);
    }

    /// Coalescing (the relay's slack) only moves wake-ups: delivering a cluster in one
    /// `advance` at the cluster's last deadline keeps the order, the DropTail bound and the
    /// departures, and each delivery is late by at most the slack.
    #[test]
    fn coalesced_deliveries_keep_order_and_bound_lateness() {
        let slack_ns = 150_000;
        let mut exact = Pipe::new(&config(5, 0.0), 0, 1);
        let mut coalesced = Pipe::new(&config(5, 0.0), 0, 1);
        let mut got = [Vec::new(), Vec::new()];
        let mut late = Vec::new();
        // 200 packets of 100 bytes (100 µs on the wire) offered in bursts of 8 every 3 ms.
        let arrivals: Vec<(u64, u8)> = (0..200u64)
            .map(|i| ((i / 8) * 3_000_000 + (i % 8) * 1_000, i as u8))
            .collect();
        for (k, pipe) in [&mut exact, &mut coalesced].into_iter().enumerate() {
            let mut next = 0;
            let mut now = 0u64;
            loop {
                // Wake at the next arrival or the next wake-up the relay would choose.
                let wake = pipe.next_deadline().map(|first| {
                    if k == 0 {
                        first
                    } else {
                        let horizon = Time::from_nanos(first.as_nanos() + slack_ns);
                        pipe.last_deadline_by(horizon).unwrap_or(first).max(first)
                    }
                });
                let arrival = arrivals.get(next).map(|&(t, _)| Time::from_nanos(t));
                let Some(at) = [wake, arrival].into_iter().flatten().min() else {
                    break;
                };
                now = now.max(at.as_nanos());
                let t = Time::from_nanos(now);
                let out = &mut got[k];
                pipe.advance(
                    t,
                    &mut |p: &[u8]| {
                        out.push(*p.last().unwrap());
                        true
                    },
                    &mut |r: &Record| {
                        if k == 1 && r.event == Event::Depart {
                            late.push(r.late_ns)
                        }
                    },
                );
                while arrivals.get(next).is_some_and(|&(a, _)| a <= now) {
                    pipe.arrive(t, &packet(arrivals[next].1, 100), &mut |_: &Record| {});
                    next += 1;
                }
            }
        }
        assert_eq!(got[0], got[1], "same packets, same order");
        assert_eq!(exact.stats().queue_drops, coalesced.stats().queue_drops);
        assert!(
            exact.stats().queue_drops > 0,
            "the DropTail bound was reached"
        );
        assert_eq!(coalesced.stats().max_queue_packets, 5);
        assert_eq!(exact.stats().lateness.max_ns(), 0);
        assert!(late.iter().all(|&l| (0..=slack_ns as i64).contains(&l)));
        assert!(
            late.iter().any(|&l| l > 0),
            "some deliveries were coalesced"
        );
    }

    #[test]
    fn droptail_never_holds_more_than_its_limit() {
        let mut pipe = Pipe::new(&config(3, 0.0), 0, 1);
        let mut events = Vec::new();
        for n in 0..10 {
            pipe.arrive(Time::ZERO, &packet(n, 100), &mut |r: &Record| {
                events.push((r.event, r.qlen))
            });
        }
        // One on the wire, three waiting, six refused.
        assert_eq!(pipe.stats().queue_drops, 6);
        assert_eq!(pipe.stats().max_queue_packets, 3);
        assert!(events.iter().all(|&(_, q)| q <= 3));
        let mut out = Vec::new();
        run_until(&mut pipe, 0, 20_000, &mut out);
        let order: Vec<u8> = out.iter().map(|&(_, n)| n).collect();
        assert_eq!(order, vec![0, 1, 2, 3]);
    }

    #[test]
    fn bernoulli_loss_is_seeded_and_near_its_rate() {
        let drops = |seed| {
            let mut pipe = Pipe::new(&config(100_000, 0.1), 0, seed);
            for n in 0..20_000u32 {
                pipe.arrive(
                    Time::from_nanos(u64::from(n) * 1000),
                    &packet(0, 40),
                    &mut |_: &Record| {},
                );
            }
            pipe.stats().loss_drops
        };
        let a = drops(7);
        assert_eq!(a, drops(7));
        assert_ne!(a, drops(8));
        // 20000 draws at p = 0.1: sd = 42.4, allow 5 sd.
        assert!((a as f64 - 2000.0).abs() < 212.0, "{a}");
    }

    #[test]
    fn red_with_ecn_marks_ect_packets_and_sets_ce() {
        let mut cfg = config(0, 0.0);
        let mut red = netsim::queue::RedConfig::ns2_2000();
        red.ecn = true;
        cfg.queue = QueueConfig::Red(red);
        let mut pipe = Pipe::new(&cfg, 0, 1);
        let mut ce = 0;
        let mut marks_logged = 0;
        for n in 0..2000u64 {
            let now = Time::from_nanos(n * 500_000);
            pipe.advance(
                now,
                &mut |p: &[u8]| {
                    ce += usize::from(p[1] & 0b11 == 0b11);
                    true
                },
                &mut |_: &Record| {},
            );
            let mut ect = packet(0, 1000);
            ect[1] = 0b10; // ECT(0)
            pipe.arrive(now, &ect, &mut |r: &Record| {
                marks_logged += usize::from(r.event == Event::Mark)
            });
        }
        let s = pipe.stats();
        // Overload beyond RED's range also forces drops; below it, ECT packets are marked.
        assert!(s.marks > 20, "{} marks", s.marks);
        assert_eq!(marks_logged as u64, s.marks);
        assert!(ce > 0 && ce as u64 <= s.marks);
    }

    #[test]
    fn red_queue_from_netsim_drops_under_overload() {
        let mut cfg = config(0, 0.0);
        cfg.queue = QueueConfig::Red(netsim::queue::RedConfig::ns2_2000());
        let mut pipe = Pipe::new(&cfg, 1, 1);
        let mut out = Vec::new();
        // 2000 packets of 1000 bytes offered at twice the rate.
        for n in 0..2000u64 {
            run_until(&mut pipe, n * 500, n * 500, &mut out);
            pipe.arrive(
                Time::from_nanos(n * 500_000),
                &packet(0, 1000),
                &mut |_: &Record| {},
            );
        }
        let s = pipe.stats();
        assert!(s.queue_drops > 500, "{} drops", s.queue_drops);
        assert!(s.max_queue_packets <= 50);
    }
}
