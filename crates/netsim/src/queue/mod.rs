//! Output queues of links: DropTail and RED as ns-2.35 implements them (`queue/drop-tail.cc`,
//! `queue/red.cc`), with Adaptive RED (Floyd, Gummadi and Shenker 2001). See docs/queues.md.
//!
//! A [`QueueConfig`] is plain data (what a scenario file describes); [`Queue`] is its running
//! state, a closed set of disciplines dispatched statically (design.md convention 1). Randomness
//! comes only from the [`SimRng`] handed to [`Queue::enqueue`]; nothing is allocated per packet
//! in steady state (the FIFO is a `VecDeque` reserved at construction that only ever grows to the
//! buffer's high-water mark).
//!
//! # Contract with the link
//! The link must, as ns-2's `Queue::recv`/`resume` do:
//! - call [`Queue::enqueue`] for **every** arrival, also when its transmitter is idle (then call
//!   [`Queue::dequeue`] at once, at the same time). RED's average must see each arrival, and an
//!   arrival to an idle link sees a queue length of 0;
//! - call [`Queue::dequeue`] whenever its transmitter becomes free, also when it expects the
//!   queue to be empty: a dequeue that finds the queue empty is how ns-2's RED learns that the
//!   link went idle. (RED also infers the idle start on its own, as the end of the transmission
//!   of the packet whose dequeue emptied the queue, from the link rate given at construction; a
//!   dequeue of an empty queue can only move that instant earlier.)
//!
//! The packet being transmitted is not in the queue: [`Queue::len_packets`] and
//! [`Queue::len_bytes`] count waiting packets only, as ns-2's `q_->length()` does.

pub mod droptail;
pub mod red;

use std::collections::VecDeque;
use std::fmt;
use std::time::Duration;

use tfrc::Time;

use crate::packet::Packet;
use crate::rng::SimRng;

pub use droptail::DropTail;
pub use red::{AdaptiveRedConfig, QueueWeight, Red, RedConfig, RedParams};

/// The outcome of offering a packet to a queue.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Enqueued {
    /// The packet joined the queue.
    Accepted,
    /// The packet joined the queue with its ECN CE bit set (RED marking, ns-2 `setbit_`).
    Marked,
    /// The queue refused the packet; it is handed back, unchanged, for accounting.
    Dropped(Packet),
}

/// A physical buffer size. The queue never holds more than this: a packet that would not fit is
/// dropped on arrival (ns-2 `drop_tail_`, the default victim).
///
/// ns-2 counts its `limit_` differently per discipline (docs/queues.md, "Buffer limits"):
/// DropTail `limit_ = N` holds N - 1 waiting packets ([`QueueLimit::ns2_droptail`]); RED
/// `limit_ = N` holds N ([`RedConfig::with_ns2_limit`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueLimit {
    /// At most this many waiting packets.
    Packets(u32),
    /// At most this many waiting bytes.
    Bytes(u64),
}

impl QueueLimit {
    /// The buffer ns-2's `Queue/DropTail` has with `limit_ = limit_pkts` (packet units,
    /// `queue_in_bytes_` false): ns-2.35 `drop-tail.cc` drops an arrival when
    /// `length + 1 >= limit_`, so at most `limit_pkts - 1` packets wait while one is on the wire.
    pub fn ns2_droptail(limit_pkts: u32) -> QueueLimit {
        QueueLimit::Packets(limit_pkts.saturating_sub(1))
    }

    /// Whether `packet` fits in a buffer holding `fifo` now.
    fn fits(self, fifo: &Fifo, packet: &Packet) -> bool {
        match self {
            QueueLimit::Packets(n) => fifo.len() < n as usize,
            QueueLimit::Bytes(b) => fifo.bytes() + u64::from(packet.size_bytes) <= b,
        }
    }

    /// Slots to reserve up front: the packet limit, or the byte limit in 40-byte packets (the
    /// smallest packet the agents send), bounded so a huge byte limit does not reserve megabytes.
    fn initial_capacity(self) -> usize {
        const MAX_RESERVE: u64 = 4096;
        let slots = match self {
            QueueLimit::Packets(n) => u64::from(n),
            QueueLimit::Bytes(b) => b / 40 + 1,
        };
        slots.min(MAX_RESERVE) as usize
    }
}

/// Which discipline a link's queue runs, with its parameters.
#[derive(Clone, Debug, PartialEq)]
pub enum QueueConfig {
    /// Drop arrivals that do not fit.
    DropTail {
        /// The buffer size.
        limit: QueueLimit,
    },
    /// Random Early Detection as ns-2.35 implements it, optionally adaptive (docs/queues.md).
    Red(RedConfig),
}

impl Default for QueueConfig {
    /// ns-2's default link queue: `Queue/DropTail` with `limit_` 50, which holds 49 waiting
    /// packets ([`QueueLimit::ns2_droptail`]).
    fn default() -> QueueConfig {
        QueueConfig::DropTail {
            limit: QueueLimit::ns2_droptail(50),
        }
    }
}

impl QueueConfig {
    /// Checks the parameters that do not depend on the link (`Ok` for every DropTail).
    pub fn validate(&self) -> Result<(), QueueConfigError> {
        match self {
            QueueConfig::DropTail { .. } => Ok(()),
            QueueConfig::Red(red) => red.validate(),
        }
    }
}

/// Why a [`QueueConfig`] was refused: a configuration error (design.md convention 4).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum QueueConfigError {
    /// The link rate is 0 b/s; RED's packet time constant needs a positive rate.
    ZeroLinkRate,
    /// `mean_packet_size_bytes` is 0.
    ZeroMeanPacketSize,
    /// A parameter is NaN, infinite or outside its range.
    OutOfRange {
        /// The field's name in [`RedConfig`] or [`AdaptiveRedConfig`].
        field: &'static str,
        /// The value given.
        value: f64,
        /// The rule it broke, e.g. "in (0, 1]".
        rule: &'static str,
    },
    /// The thresholds, after automatic configuration, do not satisfy 0 <= min_th < max_th.
    Thresholds {
        /// min_th in mean-size packets.
        min_th_pkts: f64,
        /// max_th in mean-size packets.
        max_th_pkts: f64,
    },
}

impl fmt::Display for QueueConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QueueConfigError::ZeroLinkRate => write!(f, "RED needs a link rate above 0 b/s"),
            QueueConfigError::ZeroMeanPacketSize => {
                write!(f, "mean_packet_size_bytes = 0: it must be at least 1")
            }
            QueueConfigError::OutOfRange { field, value, rule } => {
                write!(f, "{field} = {value} is not {rule}")
            }
            QueueConfigError::Thresholds {
                min_th_pkts,
                max_th_pkts,
            } => write!(
                f,
                "RED thresholds min_th = {min_th_pkts} pkts, max_th = {max_th_pkts} pkts: \
                 need 0 <= min_th < max_th"
            ),
        }
    }
}

impl std::error::Error for QueueConfigError {}

/// Per-queue packet counters since construction. At every instant
/// `arrivals = departures + early_drops + forced_drops + len_packets()`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueStats {
    /// Packets offered to [`Queue::enqueue`].
    pub arrivals: u64,
    /// Packets handed out by [`Queue::dequeue`].
    pub departures: u64,
    /// RED random ("unforced") drops of the arriving packet.
    pub early_drops: u64,
    /// Drops because the buffer was full, and RED's forced drops above the dropping range
    /// (`use_mark_p` false).
    pub forced_drops: u64,
    /// Packets accepted with CE set instead of being dropped early (counted in neither drop
    /// counter).
    pub marks: u64,
}

/// A link's output queue: a closed set of disciplines, dispatched statically.
#[derive(Clone, Debug)]
pub enum Queue {
    /// A DropTail queue.
    DropTail(DropTail),
    /// A RED queue (boxed: its state is larger than DropTail's; allocated once).
    Red(Box<Red>),
}

impl Queue {
    /// A queue for `config` on a link of `link_rate_bps` whose propagation delay is taken as 0
    /// (RED's automatic `q_weight_ = -1` rule then uses its 100 ms floor for the RTT; use
    /// [`Queue::with_link_delay`] to give the delay).
    ///
    /// # Panics
    /// If `config` is invalid for this link ([`Queue::try_new`] returns the error instead).
    pub fn new(config: &QueueConfig, link_rate_bps: u64) -> Queue {
        Queue::with_link_delay(config, link_rate_bps, Duration::ZERO)
    }

    /// A queue for `config` on a link of `link_rate_bps` and propagation delay `link_delay` (RED's
    /// automatic w_q uses both, ns-2.35 `REDQueue::initialize_params`).
    ///
    /// # Panics
    /// If `config` is invalid for this link ([`Queue::try_new`] returns the error instead).
    pub fn with_link_delay(
        config: &QueueConfig,
        link_rate_bps: u64,
        link_delay: Duration,
    ) -> Queue {
        match Queue::try_new(config, link_rate_bps, link_delay) {
            Ok(queue) => queue,
            Err(err) => panic!("invalid queue configuration: {err}"),
        }
    }

    /// A queue for `config` on a link of `link_rate_bps` and propagation delay `link_delay`, or
    /// why the configuration is invalid.
    pub fn try_new(
        config: &QueueConfig,
        link_rate_bps: u64,
        link_delay: Duration,
    ) -> Result<Queue, QueueConfigError> {
        Ok(match config {
            QueueConfig::DropTail { limit } => Queue::DropTail(DropTail::new(*limit)),
            QueueConfig::Red(red) => {
                Queue::Red(Box::new(Red::new(red, link_rate_bps, link_delay)?))
            }
        })
    }

    /// Offers a packet arriving at `now`.
    pub fn enqueue(&mut self, now: Time, packet: Packet, rng: &mut SimRng) -> Enqueued {
        match self {
            Queue::DropTail(q) => q.enqueue(packet),
            Queue::Red(q) => q.enqueue(now, packet, rng),
        }
    }

    /// Takes the packet at the head, if any, when the link's transmitter becomes free at `now`.
    pub fn dequeue(&mut self, now: Time) -> Option<Packet> {
        match self {
            Queue::DropTail(q) => q.dequeue(),
            Queue::Red(q) => q.dequeue(now),
        }
    }

    /// Packets waiting.
    pub fn len_packets(&self) -> usize {
        match self {
            Queue::DropTail(q) => q.len_packets(),
            Queue::Red(q) => q.len_packets(),
        }
    }

    /// Bytes waiting.
    pub fn len_bytes(&self) -> u64 {
        match self {
            Queue::DropTail(q) => q.len_bytes(),
            Queue::Red(q) => q.len_bytes(),
        }
    }

    /// RED's average queue (ns-2 `ave_`) in the units RED measures the queue in: packets, or
    /// bytes with `queue_in_bytes`. `None` for DropTail.
    pub fn average_queue(&self) -> Option<f64> {
        match self {
            Queue::DropTail(_) => None,
            Queue::Red(q) => Some(q.average_queue()),
        }
    }

    /// RED's current max_p (ns-2 `cur_max_p_`; moves only with Adaptive RED). `None` for
    /// DropTail.
    pub fn max_p(&self) -> Option<f64> {
        match self {
            Queue::DropTail(_) => None,
            Queue::Red(q) => Some(q.max_p()),
        }
    }

    /// Counters since construction.
    pub fn stats(&self) -> QueueStats {
        match self {
            Queue::DropTail(q) => q.stats(),
            Queue::Red(q) => q.stats(),
        }
    }

    /// The RED state, for inspection; `None` for DropTail.
    pub fn as_red(&self) -> Option<&Red> {
        match self {
            Queue::DropTail(_) => None,
            Queue::Red(q) => Some(q),
        }
    }
}

/// The FIFO both disciplines keep: packets plus a running byte count.
#[derive(Clone, Debug)]
struct Fifo {
    packets: VecDeque<Packet>,
    bytes: u64,
}

impl Fifo {
    /// An empty FIFO with room reserved for a buffer of `limit`.
    fn for_limit(limit: QueueLimit) -> Fifo {
        Fifo {
            packets: VecDeque::with_capacity(limit.initial_capacity()),
            bytes: 0,
        }
    }

    fn push(&mut self, packet: Packet) {
        self.bytes += u64::from(packet.size_bytes);
        self.packets.push_back(packet);
    }

    fn pop(&mut self) -> Option<Packet> {
        let packet = self.packets.pop_front()?;
        self.bytes -= u64::from(packet.size_bytes);
        Some(packet)
    }

    fn len(&self) -> usize {
        self.packets.len()
    }

    fn is_empty(&self) -> bool {
        self.packets.is_empty()
    }

    fn bytes(&self) -> u64 {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::test_packet;
    use crate::rng::stream;

    fn packet(seq: u64, size_bytes: u32) -> Packet {
        test_packet(seq, size_bytes)
    }

    #[test]
    fn ns2_droptail_limit_holds_one_less() {
        assert_eq!(QueueLimit::ns2_droptail(50), QueueLimit::Packets(49));
        assert_eq!(QueueLimit::ns2_droptail(0), QueueLimit::Packets(0));
        assert_eq!(
            QueueConfig::default(),
            QueueConfig::DropTail {
                limit: QueueLimit::Packets(49)
            }
        );
    }

    #[test]
    fn dispatch_reaches_both_disciplines() {
        let mut rng = stream(1, "queue");
        let mut dt = Queue::new(
            &QueueConfig::DropTail {
                limit: QueueLimit::Packets(2),
            },
            10_000_000,
        );
        let mut red = Queue::new(&QueueConfig::Red(RedConfig::ns2_2000()), 10_000_000);
        for q in [&mut dt, &mut red] {
            assert_eq!(
                q.enqueue(Time::ZERO, packet(0, 100), &mut rng),
                Enqueued::Accepted
            );
            assert_eq!((q.len_packets(), q.len_bytes()), (1, 100));
            assert_eq!(q.dequeue(Time::ZERO).map(|p| p.seq), Some(0));
            assert_eq!(q.dequeue(Time::ZERO), None);
            assert_eq!(q.stats().arrivals, 1);
            assert_eq!(q.stats().departures, 1);
        }
        assert_eq!(dt.average_queue(), None);
        assert_eq!(dt.max_p(), None);
        assert!(dt.as_red().is_none());
        assert!(red.average_queue().is_some());
        assert_eq!(red.max_p(), Some(0.1));
    }

    #[test]
    fn invalid_red_is_refused_by_try_new() {
        let mut config = RedConfig::ns2_2000();
        config.max_p = 0.0;
        let err = Queue::try_new(&QueueConfig::Red(config), 1_000_000, Duration::ZERO);
        assert!(matches!(
            err,
            Err(QueueConfigError::OutOfRange { field: "max_p", .. })
        ));
        let err = Queue::try_new(&QueueConfig::Red(RedConfig::ns2_35()), 0, Duration::ZERO);
        assert_eq!(err.err(), Some(QueueConfigError::ZeroLinkRate));
    }

    #[test]
    fn byte_limit_reserve_is_bounded() {
        assert_eq!(QueueLimit::Bytes(1 << 40).initial_capacity(), 4096);
        assert_eq!(QueueLimit::Packets(50).initial_capacity(), 50);
    }
}
