//! Many short TCP connections inside one agent: the machinery of web traffic and short TCP flows
//! (docs/web.md). ns-2's `PagePool/WebTraf` attaches a fresh one-way `Agent/TCP` and `TCPSink`
//! pair per request and per response (`webcache/webtraf.cc`, `tcl/webcache/webtraf.tcl`); netsim
//! has one source and one sink agent per flow, so each of them holds a pool of [`TcpSender`]s
//! and [`TcpSink`]s, one per connection, told apart by the connection id that TCP headers carry
//! ([`ConnId`]).
//!
//! A connection carries a message of a known number of packets: the sender is an ns-2 one-way
//! TCP with `max_packets` = n (`advanceby n`), and each data packet carries n, so the receiving
//! pool knows when the message is complete (as a FIN would tell). The sender is done when all n
//! packets are acked (ns-2's `done` callback) and is freed then; the receiver is done when all n
//! are delivered in order, and is freed once it has sent its last ACK. A finished receiver
//! leaves a tombstone so that a retransmission (its final ACK was lost) is acked again rather
//! than taken for a new connection. Timers: a binary heap of (deadline, connection) with lazy
//! invalidation, as the engine's own event queue does for agents.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};

use rand_core::{RngCore, SeedableRng};
use tfrc::Time;

use super::tcp::{ConnId, TcpAck, TcpConfig, TcpSender, TcpSink};
use super::{Agent, Outbox};
use crate::packet::{Packet, Payload};
use crate::rng::SimRng;

/// Which of the pool's two tables a connection is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Side {
    /// This end sends the message.
    Send,
    /// This end receives it.
    Receive,
}

/// A connection this end sends on.
#[derive(Debug)]
struct SendConn {
    sender: TcpSender,
    /// The last data packet's sequence number (n - 1, + 1 after a SYN).
    last_seqno: i64,
    msg_len: u32,
    /// The deadline queued in the heap for it, if any.
    scheduled: Option<Time>,
}

/// A connection this end receives on.
#[derive(Debug)]
struct ReceiveConn {
    sink: TcpSink,
    msg_len: u32,
    /// All `msg_len` packets were delivered (the sink may still hold a delayed ACK).
    complete: bool,
    scheduled: Option<Time>,
}

/// Ids of finished receive connections: everything below `below`, and the set above it.
/// Connections mostly finish in the order they were opened, so the set stays small.
#[derive(Debug, Default)]
struct Tombstones {
    below: u32,
    above: BTreeSet<u32>,
}

impl Tombstones {
    fn insert(&mut self, id: u32) {
        if id >= self.below {
            self.above.insert(id);
            while self.above.remove(&self.below) {
                self.below += 1;
            }
        }
    }

    fn contains(&self, id: u32) -> bool {
        id < self.below || self.above.contains(&id)
    }
}

/// What a packet did to the pool's connections.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PoolEvent {
    /// Nothing finished.
    None,
    /// Every packet this end sent on the connection is acked; the sender was freed.
    Sent {
        /// The connection.
        conn: u32,
        /// Its message length in packets.
        msg_len: u32,
    },
    /// The whole message of the connection arrived (once per connection).
    Received {
        /// The connection.
        conn: u32,
        /// Its message length in packets.
        msg_len: u32,
    },
}

/// Cumulative counters of a pool.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PoolStats {
    /// Send connections opened.
    pub opened: u64,
    /// Send connections whose every packet was acked.
    pub completed: u64,
    /// Data packets asked for by the send connections opened (their message lengths).
    pub packets_requested: u64,
    /// Data packets sent, retransmissions and SYNs included.
    pub packets_sent: u64,
    /// Retransmissions and timeouts of finished send connections (live ones are added when
    /// the trace is taken).
    retransmits_done: u64,
    timeouts_done: u64,
    /// Receive connections seen.
    pub received_opened: u64,
    /// Receive connections whose whole message arrived.
    pub received_complete: u64,
    /// Data packets delivered in order over all receive connections (SYNs excluded).
    pub delivered: u64,
}

/// The connections of one end of a flow. See the module documentation.
#[derive(Debug)]
pub struct TcpPool {
    config: TcpConfig,
    sends: BTreeMap<u32, SendConn>,
    receives: BTreeMap<u32, ReceiveConn>,
    tombstones: Tombstones,
    timers: BinaryHeap<Reverse<(Time, Side, u32)>>,
    scratch: Outbox,
    stats: PoolStats,
}

impl TcpPool {
    /// An empty pool whose connections all run `config` (its `max_packets` is replaced per
    /// connection).
    pub fn new(config: &TcpConfig) -> TcpPool {
        TcpPool {
            config: *config,
            sends: BTreeMap::new(),
            receives: BTreeMap::new(),
            tombstones: Tombstones::default(),
            timers: BinaryHeap::new(),
            scratch: Outbox::default(),
            stats: PoolStats::default(),
        }
    }

    /// Counters so far.
    pub fn stats(&self) -> PoolStats {
        self.stats
    }

    /// Send connections open now.
    pub fn active_sends(&self) -> usize {
        self.sends.len()
    }

    /// Receive connections open now (complete ones still holding an ACK included).
    pub fn active_receives(&self) -> usize {
        self.receives.len()
    }

    /// Retransmissions and timeouts over every send connection, finished or not.
    pub fn retransmits_and_timeouts(&self) -> (u64, u64) {
        self.sends.values().fold(
            (self.stats.retransmits_done, self.stats.timeouts_done),
            |(r, t), c| {
                let s = c.sender.stats();
                (r + s.retransmits, t + s.timeouts)
            },
        )
    }

    /// The sending side's counters as trace values, in the order both pool agents report them
    /// (short flows' `conns_opened` .. `timeouts`, a web server's `responses_opened` ..
    /// `timeouts`): connections opened, completed, open now; packets requested, sent;
    /// retransmissions, timeouts.
    pub fn send_trace(&self) -> [f64; 7] {
        let s = self.stats();
        let (retransmits, timeouts) = self.retransmits_and_timeouts();
        [
            s.opened as f64,
            s.completed as f64,
            self.active_sends() as f64,
            s.packets_requested as f64,
            s.packets_sent as f64,
            retransmits as f64,
            timeouts as f64,
        ]
    }

    /// Opens send connection `conn` (at most [`ConnId::MAX`], not open already) carrying
    /// `msg_len` packets (at least 1), with a TCP sender whose own stream is seeded from
    /// `rng`, and sends what its window allows. Returns false (opening nothing) if the id is
    /// out of range or in use.
    pub fn open(
        &mut self,
        now: Time,
        conn: u32,
        msg_len: u32,
        rng: &mut SimRng,
        out: &mut Outbox,
    ) -> bool {
        if conn > ConnId::MAX || msg_len == 0 || self.sends.contains_key(&conn) {
            return false;
        }
        let config = TcpConfig {
            max_packets: Some(u64::from(msg_len)),
            ..self.config
        };
        let mut sender = TcpSender::new(&config, SimRng::seed_from_u64(rng.next_u64()));
        sender.on_start(now, &mut self.scratch);
        let last_seqno = i64::from(config.syn) + i64::from(msg_len) - 1;
        self.sends.insert(
            conn,
            SendConn {
                sender,
                last_seqno,
                msg_len,
                scheduled: None,
            },
        );
        self.stats.opened += 1;
        self.stats.packets_requested += u64::from(msg_len);
        self.flush(conn, msg_len, out);
        self.reschedule(Side::Send, conn);
        true
    }

    /// A packet for one of the pool's connections: a data packet goes to (or opens) the
    /// receive connection of its id, an ACK to the send connection of its id.
    pub fn handle_packet(&mut self, now: Time, packet: &Packet, out: &mut Outbox) -> PoolEvent {
        let event = match packet.payload {
            Payload::TcpData(data) => self.on_data(now, packet, data.conn.get(), data.msg_len, out),
            Payload::TcpAck(ack) => self.on_ack(now, packet, ack.conn.get(), out),
            _ => PoolEvent::None,
        };
        self.prune();
        event
    }

    fn on_data(
        &mut self,
        now: Time,
        packet: &Packet,
        conn: u32,
        msg_len: u32,
        out: &mut Outbox,
    ) -> PoolEvent {
        if msg_len == 0 {
            return PoolEvent::None;
        }
        if self.tombstones.contains(conn) {
            // A retransmission after the message was complete: ack the whole message again.
            let last = i64::from(self.config.syn) + i64::from(msg_len) - 1;
            let ack = TcpAck {
                conn: ConnId::new(conn),
                ..TcpAck::cumulative(last)
            };
            out.send(self.config.ack_bytes, Payload::TcpAck(ack));
            return PoolEvent::None;
        }
        let config = &self.config;
        let stats = &mut self.stats;
        let entry = self.receives.entry(conn).or_insert_with(|| {
            stats.received_opened += 1;
            ReceiveConn {
                sink: TcpSink::new(config),
                msg_len,
                complete: false,
                scheduled: None,
            }
        });
        let before = entry.sink.delivered();
        entry.sink.handle_packet(now, packet, &mut self.scratch);
        let after = entry.sink.delivered();
        self.stats.delivered += after - before;
        let mut event = PoolEvent::None;
        if !entry.complete && after >= u64::from(entry.msg_len) {
            entry.complete = true;
            self.stats.received_complete += 1;
            event = PoolEvent::Received {
                conn,
                msg_len: entry.msg_len,
            };
        }
        self.flush(conn, msg_len, out);
        self.reschedule(Side::Receive, conn);
        self.retire_receive(conn);
        event
    }

    fn on_ack(&mut self, now: Time, packet: &Packet, conn: u32, out: &mut Outbox) -> PoolEvent {
        let Some(entry) = self.sends.get_mut(&conn) else {
            return PoolEvent::None;
        };
        entry.sender.handle_packet(now, packet, &mut self.scratch);
        let msg_len = entry.msg_len;
        let done = entry.sender.highest_ack() >= entry.last_seqno;
        self.flush(conn, msg_len, out);
        if done {
            if let Some(finished) = self.sends.remove(&conn) {
                let s = finished.sender.stats();
                self.stats.retransmits_done += s.retransmits;
                self.stats.timeouts_done += s.timeouts;
            }
            self.stats.completed += 1;
            return PoolEvent::Sent { conn, msg_len };
        }
        self.reschedule(Side::Send, conn);
        PoolEvent::None
    }

    /// The earliest deadline of any connection.
    pub fn poll_timeout(&self) -> Option<Time> {
        self.timers.peek().map(|Reverse((at, _, _))| *at)
    }

    /// Runs every connection timer due by `now`.
    pub fn handle_timeout(&mut self, now: Time, out: &mut Outbox) {
        while let Some(&Reverse((at, side, conn))) = self.timers.peek() {
            if at > now {
                break;
            }
            self.timers.pop();
            if !self.is_current(at, side, conn) {
                continue;
            }
            match side {
                Side::Send => {
                    let Some(entry) = self.sends.get_mut(&conn) else {
                        continue;
                    };
                    entry.scheduled = None;
                    if entry.sender.poll_timeout().is_some_and(|d| d <= now) {
                        entry.sender.handle_timeout(now, &mut self.scratch);
                    }
                    let msg_len = entry.msg_len;
                    self.flush(conn, msg_len, out);
                }
                Side::Receive => {
                    let Some(entry) = self.receives.get_mut(&conn) else {
                        continue;
                    };
                    entry.scheduled = None;
                    if entry.sink.poll_timeout().is_some_and(|d| d <= now) {
                        entry.sink.handle_timeout(now, &mut self.scratch);
                    }
                    let msg_len = entry.msg_len;
                    self.flush(conn, msg_len, out);
                }
            }
            self.reschedule(side, conn);
            if side == Side::Receive {
                self.retire_receive(conn);
            }
        }
        self.prune();
    }

    /// Whether the heap entry (at, side, conn) is the one queued for a live connection.
    fn is_current(&self, at: Time, side: Side, conn: u32) -> bool {
        let scheduled = match side {
            Side::Send => self.sends.get(&conn).map(|c| c.scheduled),
            Side::Receive => self.receives.get(&conn).map(|c| c.scheduled),
        };
        scheduled == Some(Some(at))
    }

    /// Drops stale entries from the top of the heap, so that [`TcpPool::poll_timeout`] is
    /// a live connection's deadline.
    fn prune(&mut self) {
        while let Some(&Reverse((at, side, conn))) = self.timers.peek() {
            if self.is_current(at, side, conn) {
                break;
            }
            self.timers.pop();
        }
    }

    /// Queues the connection's deadline if it is earlier than the one queued.
    fn reschedule(&mut self, side: Side, conn: u32) {
        let (deadline, scheduled) = match side {
            Side::Send => match self.sends.get_mut(&conn) {
                Some(c) => (c.sender.poll_timeout(), &mut c.scheduled),
                None => return,
            },
            Side::Receive => match self.receives.get_mut(&conn) {
                Some(c) => (c.sink.poll_timeout(), &mut c.scheduled),
                None => return,
            },
        };
        if let Some(at) = deadline {
            if scheduled.is_none_or(|queued| at < queued) {
                *scheduled = Some(at);
                self.timers.push(Reverse((at, side, conn)));
            }
        }
    }

    /// Frees a complete receive connection once it holds no delayed ACK.
    fn retire_receive(&mut self, conn: u32) {
        if self
            .receives
            .get(&conn)
            .is_some_and(|c| c.complete && c.sink.poll_timeout().is_none())
        {
            self.receives.remove(&conn);
            self.tombstones.insert(conn);
        }
    }

    /// Moves what a connection queued into `out`, stamped with its id and message length.
    fn flush(&mut self, conn: u32, msg_len: u32, out: &mut Outbox) {
        let id = ConnId::new(conn);
        for mut outgoing in self.scratch.drain() {
            match &mut outgoing.payload {
                Payload::TcpData(data) => {
                    data.conn = id;
                    data.msg_len = msg_len;
                    self.stats.packets_sent += 1;
                }
                Payload::TcpAck(ack) => ack.conn = id,
                _ => {}
            }
            if outgoing.ecn_capable {
                out.send_ecn(outgoing.size_bytes, outgoing.payload);
            } else {
                out.send(outgoing.size_bytes, outgoing.payload);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::tcp::{AckPolicy, TcpVariant};
    use crate::packet::{FlowId, NodeId};
    use crate::rng::stream;
    use std::time::Duration;

    fn packet(payload: Payload) -> Packet {
        Packet::new(FlowId(0), 0, 1000, NodeId(1), Time::ZERO, payload)
    }

    fn at(ms: u64) -> Time {
        Time::ZERO + Duration::from_millis(ms)
    }

    /// Carries every packet between a sending and a receiving pool with a fixed one-way
    /// delay, dropping the packets `drop` selects; returns the events seen.
    fn exchange(
        config: &TcpConfig,
        messages: &[(u32, u32)],
        mut drop: impl FnMut(&Payload) -> bool,
    ) -> (TcpPool, TcpPool, Vec<PoolEvent>) {
        let mut rng = stream(1, "pool");
        let mut a = TcpPool::new(config);
        let mut b = TcpPool::new(config);
        let mut now = Time::ZERO;
        let delay = Duration::from_millis(10);
        // (arrival time, to b?, payload)
        let mut wire: Vec<(Time, bool, Payload)> = Vec::new();
        let mut out = Outbox::default();
        for &(conn, n) in messages {
            assert!(a.open(now, conn, n, &mut rng, &mut out));
        }
        let mut events = Vec::new();
        for _ in 0..100_000 {
            for o in out.drain() {
                if !drop(&o.payload) {
                    let to_b = matches!(o.payload, Payload::TcpData(_));
                    wire.push((now + delay, to_b, o.payload));
                }
            }
            let next_wire = wire.iter().map(|w| w.0).min();
            let next_timer = [a.poll_timeout(), b.poll_timeout()]
                .into_iter()
                .flatten()
                .min();
            let Some(next) = [next_wire, next_timer].into_iter().flatten().min() else {
                break;
            };
            now = next;
            if let Some(i) = wire.iter().position(|w| w.0 == now) {
                let (_, to_b, payload) = wire.remove(i);
                let pool = if to_b { &mut b } else { &mut a };
                let event = pool.handle_packet(now, &packet(payload), &mut out);
                if event != PoolEvent::None {
                    events.push(event);
                }
            } else {
                a.handle_timeout(now, &mut out);
                b.handle_timeout(now, &mut out);
            }
        }
        (a, b, events)
    }

    #[test]
    fn messages_complete_at_both_ends_and_connections_are_freed() {
        let config = TcpConfig::ns2_2000(TcpVariant::Reno);
        let (a, b, events) = exchange(&config, &[(0, 1), (1, 7), (2, 30)], |_| false);
        for (conn, n) in [(0, 1), (1, 7), (2, 30)] {
            assert!(events.contains(&PoolEvent::Sent { conn, msg_len: n }));
            assert!(events.contains(&PoolEvent::Received { conn, msg_len: n }));
        }
        assert_eq!(events.len(), 6);
        assert_eq!((a.active_sends(), b.active_receives()), (0, 0));
        let (sa, sb) = (a.stats(), b.stats());
        assert_eq!((sa.opened, sa.completed, sa.packets_requested), (3, 3, 38));
        assert_eq!(sa.packets_sent, 38);
        assert_eq!(
            (sb.received_opened, sb.received_complete, sb.delivered),
            (3, 3, 38)
        );
        assert_eq!(a.poll_timeout(), None);
    }

    #[test]
    fn a_lost_final_ack_is_answered_by_the_tombstone_and_delayed_acks_are_flushed() {
        let config = TcpConfig {
            ack: AckPolicy::Delayed {
                interval: Duration::from_millis(100),
            },
            syn: true,
            ..TcpConfig::ns2_2000(TcpVariant::NewReno)
        };
        let mut dropped = false;
        let (a, b, events) = exchange(&config, &[(5, 3)], |p| {
            // Drop the first ACK that covers the whole message (SYN + 3 packets: ack 3).
            if let Payload::TcpAck(ack) = p {
                if ack.seqno() == 3 && !dropped {
                    dropped = true;
                    return true;
                }
            }
            false
        });
        assert!(dropped);
        assert_eq!(
            events,
            vec![
                PoolEvent::Received {
                    conn: 5,
                    msg_len: 3
                },
                PoolEvent::Sent {
                    conn: 5,
                    msg_len: 3
                }
            ]
        );
        assert_eq!(a.retransmits_and_timeouts(), (1, 1));
        assert_eq!(b.stats().received_complete, 1);
        assert_eq!(b.active_receives(), 0);
    }

    #[test]
    fn open_refuses_bad_ids() {
        let mut pool = TcpPool::new(&TcpConfig::ns2_2000(TcpVariant::Reno));
        let mut rng = stream(1, "pool");
        let mut out = Outbox::default();
        assert!(!pool.open(at(0), ConnId::MAX + 1, 3, &mut rng, &mut out));
        assert!(!pool.open(at(0), 1, 0, &mut rng, &mut out));
        assert!(pool.open(at(0), 1, 3, &mut rng, &mut out));
        assert!(!pool.open(at(0), 1, 3, &mut rng, &mut out));
        assert_eq!(out.packets().len(), 1, "initial window 1");
    }

    #[test]
    fn tombstones_compact() {
        let mut t = Tombstones::default();
        for id in [1, 0, 3, 2] {
            t.insert(id);
        }
        assert_eq!((t.below, t.above.len()), (4, 0));
        t.insert(6);
        assert!(t.contains(6) && t.contains(0) && !t.contains(5));
    }
}
