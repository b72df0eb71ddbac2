//! The application's payload queue: bounded, in priority levels, each payload with an optional
//! deadline after which it is dropped rather than sent.
//!
//! A media sender queues frames faster or slower than TFRC lets it send. What it needs from the
//! queue is what an encoder's buffer does: a bound (a full queue refuses and counts), urgent
//! payloads first (audio, a key frame, a retransmission), and a frame that can no longer be
//! shown in time dropped instead of spending the path's rate on it. A payload is judged against
//! its deadline when its turn to be sent comes (the head of its level, at the send
//! opportunity): a payload still queued after its deadline is never sent.

use std::collections::VecDeque;
use std::fmt;
use std::time::Duration;

use tfrc::Time;

/// Priority levels: a payload's priority is `0..PRIORITY_LEVELS`, and a higher level is always
/// sent before a lower one (first in, first out within a level).
pub const PRIORITY_LEVELS: usize = 8;

/// How many expired groups the queue remembers, so that a part queued after its group expired
/// is dropped at once (see [`SendOptions::group`]).
pub const DEAD_GROUPS_REMEMBERED: usize = 64;

/// The longest deadline a payload may be given (one hour).
pub const MAX_DEADLINE: Duration = Duration::from_secs(3600);

/// How a payload is queued by [`crate::SenderHandle::send_with`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SendOptions {
    /// Drop the payload (counted, and announced to [`crate::SenderHandle::expirations`]) if it
    /// has not been sent this long after it was queued. `None`: no deadline.
    pub deadline: Option<Duration>,
    /// `0..PRIORITY_LEVELS`; higher goes first. 0 by default.
    pub priority: u8,
    /// The unit this payload belongs to (a video frame cut into several payloads): when one
    /// payload of a group expires, every payload of the group still queued is dropped with it
    /// (a frame missing a part cannot be decoded, so its other parts would only spend the
    /// path's rate), and so is every part queued later: the queue remembers the last
    /// [`DEAD_GROUPS_REMEMBERED`] groups that expired, since an application queues a frame's
    /// parts one by one and its first part may expire before the last is queued. Number groups
    /// so that one is not reused soon after it expired (a frame counter). `None`: the payload
    /// stands alone.
    pub group: Option<u64>,
}

impl SendOptions {
    /// A deadline `after` the payload is queued.
    pub fn with_deadline(self, after: Duration) -> SendOptions {
        SendOptions {
            deadline: Some(after),
            ..self
        }
    }

    /// Priority `level` (`0..PRIORITY_LEVELS`, higher first).
    pub fn with_priority(self, level: u8) -> SendOptions {
        SendOptions {
            priority: level,
            ..self
        }
    }

    /// Member of `group`: expires with the rest of it (see [`SendOptions::group`]).
    pub fn with_group(self, group: u64) -> SendOptions {
        SendOptions {
            group: Some(group),
            ..self
        }
    }
}

/// Why [`crate::SenderHandle::send`] refused a payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueError {
    /// The queue holds its bound already; the payload was dropped and counted.
    Full,
    /// The payload does not fit in one datagram of the session's packet size.
    TooLarge {
        /// The largest payload accepted (packet size minus the 34-byte header).
        max: usize,
    },
    /// The priority is not below [`PRIORITY_LEVELS`].
    BadPriority {
        /// The priority asked for.
        found: u8,
    },
    /// The deadline is longer than [`MAX_DEADLINE`].
    BadDeadline,
}

impl fmt::Display for QueueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QueueError::Full => f.write_str("send queue full: payload dropped"),
            QueueError::TooLarge { max } => write!(f, "payload larger than {max} bytes"),
            QueueError::BadPriority { found } => write!(
                f,
                "priority: expected 0 to {}, found {found}",
                PRIORITY_LEVELS - 1
            ),
            QueueError::BadDeadline => {
                write!(f, "deadline: expected at most {} s", MAX_DEADLINE.as_secs())
            }
        }
    }
}

impl std::error::Error for QueueError {}

/// A payload dropped at its deadline, as announced to [`crate::SenderHandle::expirations`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Expired {
    /// The number [`crate::SenderHandle::send_with`] returned for it.
    pub ticket: u64,
    /// Its priority.
    pub priority: u8,
    /// Its group, if any.
    pub group: Option<u64>,
    /// When it was queued, on the sender's clock.
    pub queued: Time,
    /// Its deadline, on the sender's clock.
    pub deadline: Time,
    /// When it was dropped (its send opportunity, after the deadline).
    pub dropped: Time,
}

/// One queued payload.
#[derive(Debug)]
pub(crate) struct Queued {
    pub(crate) data: Vec<u8>,
    ticket: u64,
    queued: Time,
    deadline: Option<Time>,
    group: Option<u64>,
}

/// Counters of what became of payloads the application offered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueStats {
    /// Payloads accepted into the queue.
    pub queued: u64,
    /// Payloads refused because the queue was full.
    pub full_drops: u64,
    /// Payloads dropped at their deadline.
    pub expired: u64,
    /// Payloads removed by [`crate::SenderHandle::flush`] or
    /// [`crate::SenderHandle::flush_below`].
    pub flushed: u64,
    /// Payloads taken by the sender for transmission.
    pub sent: u64,
}

/// The bounded payload queue, one FIFO per priority level.
#[derive(Debug)]
pub(crate) struct PayloadQueue {
    levels: [VecDeque<Queued>; PRIORITY_LEVELS],
    len: usize,
    limit: usize,
    max_payload: usize,
    next_ticket: u64,
    /// Payloads with a deadline now queued (none: expiry checks are skipped).
    with_deadline: usize,
    /// The groups that expired most recently, oldest first, at most
    /// [`DEAD_GROUPS_REMEMBERED`].
    dead_groups: VecDeque<u64>,
    pub(crate) stats: QueueStats,
}

impl PayloadQueue {
    pub(crate) fn new(limit: usize, max_payload: usize) -> PayloadQueue {
        PayloadQueue {
            levels: Default::default(),
            len: 0,
            limit,
            max_payload,
            next_ticket: 0,
            with_deadline: 0,
            dead_groups: VecDeque::new(),
            stats: QueueStats::default(),
        }
    }

    /// Queues `data` at `now`; its ticket, or why it was refused. A full queue first drops the
    /// payloads already past their deadline (announced through `expired`), then refuses. A
    /// payload of a group that has expired already is given its ticket and dropped at once
    /// (counted and announced as expired).
    pub(crate) fn push(
        &mut self,
        data: Vec<u8>,
        options: SendOptions,
        now: Time,
        expired: &mut dyn FnMut(Expired),
    ) -> Result<u64, QueueError> {
        if data.len() > self.max_payload {
            return Err(QueueError::TooLarge {
                max: self.max_payload,
            });
        }
        let level = usize::from(options.priority);
        if level >= PRIORITY_LEVELS {
            return Err(QueueError::BadPriority {
                found: options.priority,
            });
        }
        if options.deadline.is_some_and(|d| d > MAX_DEADLINE) {
            return Err(QueueError::BadDeadline);
        }
        if self.len >= self.limit {
            self.drop_expired(now, expired);
        }
        if self.len >= self.limit {
            self.stats.full_drops += 1;
            return Err(QueueError::Full);
        }
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        let deadline = options.deadline.map(|d| now + d);
        let item = Queued {
            data,
            ticket,
            queued: now,
            deadline,
            group: options.group,
        };
        if options.group.is_some_and(|g| self.dead_groups.contains(&g)) {
            self.stats.queued += 1;
            self.stats.expired += 1;
            expired(expiry(&item, level, now));
            return Ok(ticket);
        }
        self.with_deadline += usize::from(deadline.is_some());
        self.levels[level].push_back(item);
        self.len += 1;
        self.stats.queued += 1;
        Ok(ticket)
    }

    /// Whether a payload can be sent at `now`: drops every payload at the head of a level that
    /// is past its deadline (announced through `expired`) until the highest non-empty level's
    /// head is live.
    pub(crate) fn ready(&mut self, now: Time, expired: &mut dyn FnMut(Expired)) -> bool {
        for level in (0..PRIORITY_LEVELS).rev() {
            while let Some(head) = self.levels[level].front() {
                if head.deadline.is_some_and(|d| now > d) {
                    let gone = self.take(level);
                    self.stats.expired += 1;
                    expired(expiry(&gone, level, now));
                    if let Some(group) = gone.group {
                        self.drop_group(group, now, expired);
                    }
                } else {
                    return true;
                }
            }
        }
        false
    }

    /// The next payload to send: the head of the highest non-empty level (call
    /// [`PayloadQueue::ready`] first, at the same time, to drop expired ones).
    pub(crate) fn pop(&mut self) -> Option<Vec<u8>> {
        let level = (0..PRIORITY_LEVELS)
            .rev()
            .find(|&l| !self.levels[l].is_empty())?;
        let item = self.take(level);
        self.stats.sent += 1;
        Some(item.data)
    }

    /// Removes every payload of priority below `level` (all of them for `PRIORITY_LEVELS`);
    /// how many.
    pub(crate) fn flush_below(&mut self, level: usize) -> usize {
        let mut removed = 0;
        for l in 0..level.min(PRIORITY_LEVELS) {
            while !self.levels[l].is_empty() {
                self.take(l);
                removed += 1;
            }
        }
        self.stats.flushed += removed as u64;
        removed
    }

    fn take(&mut self, level: usize) -> Queued {
        let item = self.levels[level]
            .pop_front()
            .expect("take is called on a non-empty level");
        self.len -= 1;
        self.with_deadline -= usize::from(item.deadline.is_some());
        item
    }

    /// Drops every queued payload of `group` (counted and announced as expired with it), and
    /// remembers the group so that its parts queued later are dropped too.
    fn drop_group(&mut self, group: u64, now: Time, expired: &mut dyn FnMut(Expired)) {
        if !self.dead_groups.contains(&group) {
            if self.dead_groups.len() == DEAD_GROUPS_REMEMBERED {
                self.dead_groups.pop_front();
            }
            self.dead_groups.push_back(group);
        }
        for level in 0..PRIORITY_LEVELS {
            if !self.levels[level]
                .iter()
                .any(|item| item.group == Some(group))
            {
                continue;
            }
            let mut keep = VecDeque::with_capacity(self.levels[level].len());
            while let Some(item) = self.levels[level].pop_front() {
                if item.group == Some(group) {
                    self.len -= 1;
                    self.with_deadline -= usize::from(item.deadline.is_some());
                    self.stats.expired += 1;
                    expired(expiry(&item, level, now));
                } else {
                    keep.push_back(item);
                }
            }
            self.levels[level] = keep;
        }
    }

    /// Drops every payload past its deadline, wherever it is in the queue.
    fn drop_expired(&mut self, now: Time, expired: &mut dyn FnMut(Expired)) {
        if self.with_deadline == 0 {
            return;
        }
        let mut dead_groups = Vec::new();
        for level in 0..PRIORITY_LEVELS {
            let mut keep = VecDeque::with_capacity(self.levels[level].len());
            while let Some(item) = self.levels[level].pop_front() {
                if item.deadline.is_some_and(|d| now > d) {
                    self.len -= 1;
                    self.with_deadline -= 1;
                    self.stats.expired += 1;
                    expired(expiry(&item, level, now));
                    dead_groups.extend(item.group);
                } else {
                    keep.push_back(item);
                }
            }
            self.levels[level] = keep;
        }
        dead_groups.sort_unstable();
        dead_groups.dedup();
        for group in dead_groups {
            self.drop_group(group, now, expired);
        }
    }

    /// The bound, in payloads.
    pub(crate) fn capacity(&self) -> usize {
        self.limit
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

fn expiry(item: &Queued, level: usize, now: Time) -> Expired {
    Expired {
        ticket: item.ticket,
        priority: level as u8,
        group: item.group,
        queued: item.queued,
        deadline: item.deadline.unwrap_or(now),
        dropped: now,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Time {
        Time::from_nanos(n * 1_000_000)
    }

    fn none(_: Expired) {}

    #[test]
    fn the_queue_is_bounded_and_counts_refusals() {
        let mut q = PayloadQueue::new(2, 10);
        let opts = SendOptions::default();
        assert_eq!(
            q.push(vec![0; 11], opts, ms(0), &mut none),
            Err(QueueError::TooLarge { max: 10 })
        );
        assert_eq!(q.push(vec![1], opts, ms(0), &mut none), Ok(0));
        assert_eq!(q.push(vec![2], opts, ms(0), &mut none), Ok(1));
        assert_eq!(
            q.push(vec![3], opts, ms(0), &mut none),
            Err(QueueError::Full)
        );
        assert_eq!((q.len(), q.stats.full_drops, q.stats.queued), (2, 1, 2));
        assert_eq!(q.pop(), Some(vec![1]));
    }

    #[test]
    fn higher_priorities_go_first_and_each_level_is_fifo() {
        let mut q = PayloadQueue::new(10, 10);
        for (byte, level) in [(1u8, 0u8), (2, 3), (3, 0), (4, 7), (5, 3)] {
            q.push(
                vec![byte],
                SendOptions::default().with_priority(level),
                ms(0),
                &mut none,
            )
            .unwrap();
        }
        let order: Vec<u8> = std::iter::from_fn(|| q.pop()).map(|d| d[0]).collect();
        assert_eq!(order, [4, 2, 5, 1, 3]);
        assert_eq!(
            q.push(
                vec![0],
                SendOptions::default().with_priority(8),
                ms(0),
                &mut none
            ),
            Err(QueueError::BadPriority { found: 8 })
        );
    }

    #[test]
    fn a_payload_past_its_deadline_is_dropped_and_announced_not_sent() {
        let mut q = PayloadQueue::new(10, 10);
        let late = SendOptions::default().with_deadline(Duration::from_millis(5));
        q.push(vec![1], late, ms(0), &mut none).unwrap();
        q.push(vec![2], SendOptions::default(), ms(1), &mut none)
            .unwrap();
        let mut gone = Vec::new();
        // At the deadline exactly it may still go; after it, it may not.
        assert!(q.ready(ms(5), &mut |e| gone.push(e)));
        assert!(gone.is_empty());
        assert!(q.ready(ms(6), &mut |e| gone.push(e)));
        assert_eq!(gone.len(), 1);
        assert_eq!(
            (gone[0].ticket, gone[0].deadline, gone[0].dropped),
            (0, ms(5), ms(6))
        );
        assert_eq!(q.pop(), Some(vec![2]));
        assert!(!q.ready(ms(7), &mut |e| gone.push(e)));
        assert_eq!((q.stats.expired, q.stats.sent, q.len()), (1, 1, 0));
    }

    #[test]
    fn a_full_queue_makes_room_by_dropping_expired_payloads_anywhere() {
        let mut q = PayloadQueue::new(2, 10);
        let soon = SendOptions::default().with_deadline(Duration::from_millis(1));
        q.push(
            vec![1],
            SendOptions::default().with_priority(5),
            ms(0),
            &mut none,
        )
        .unwrap();
        q.push(vec![2], soon, ms(0), &mut none).unwrap();
        let mut gone = 0;
        assert_eq!(
            q.push(vec![3], soon, ms(1), &mut |_| gone += 1),
            Err(QueueError::Full)
        );
        assert_eq!(q.push(vec![3], soon, ms(2), &mut |_| gone += 1), Ok(2));
        assert_eq!((gone, q.len(), q.stats.expired), (1, 2, 1));
    }

    #[test]
    fn a_group_expires_together() {
        let mut q = PayloadQueue::new(10, 10);
        let part = |g| {
            SendOptions::default()
                .with_deadline(Duration::from_millis(5))
                .with_group(g)
        };
        // Frame 1's three parts, frame 2's two, and a key frame's part above them.
        for (byte, group) in [(1u8, 1), (2, 1), (3, 1), (4, 2), (5, 2)] {
            q.push(vec![byte], part(group), ms(0), &mut none).unwrap();
        }
        let key = SendOptions::default().with_priority(3).with_group(1);
        q.push(vec![9], key, ms(0), &mut none).unwrap();
        assert_eq!(q.pop(), Some(vec![9]));
        assert_eq!(q.pop(), Some(vec![1]));
        let mut gone = Vec::new();
        // Part 2 expires at its turn: part 3 goes with it, frame 2 (as late) expires after.
        assert!(!q.ready(ms(6), &mut |e| gone.push((e.ticket, e.group))));
        assert_eq!(
            gone,
            [(1, Some(1)), (2, Some(1)), (3, Some(2)), (4, Some(2))]
        );
        assert_eq!((q.stats.expired, q.len()), (4, 0));
    }

    #[test]
    fn a_part_queued_after_its_group_expired_is_dropped_at_once() {
        let mut q = PayloadQueue::new(10, 10);
        let first = SendOptions::default()
            .with_deadline(Duration::from_millis(1))
            .with_group(7);
        q.push(vec![1], first, ms(0), &mut none).unwrap();
        let mut gone = Vec::new();
        // The sender's turn comes between the frame's first part and its second.
        assert!(!q.ready(ms(2), &mut |e| gone.push((e.ticket, e.dropped))));
        let later = SendOptions::default().with_group(7);
        assert_eq!(
            q.push(vec![2], later, ms(3), &mut |e| gone
                .push((e.ticket, e.dropped))),
            Ok(1)
        );
        let other = SendOptions::default().with_group(8);
        assert_eq!(q.push(vec![3], other, ms(3), &mut none), Ok(2));
        assert_eq!(gone, [(0, ms(2)), (1, ms(3))]);
        assert_eq!((q.stats.queued, q.stats.expired, q.len()), (3, 2, 1));
        assert_eq!(q.pop(), Some(vec![3]));
    }

    #[test]
    fn the_memory_of_expired_groups_is_bounded() {
        let mut q = PayloadQueue::new(10, 10);
        let dying = |g| {
            SendOptions::default()
                .with_deadline(Duration::ZERO)
                .with_group(g)
        };
        for group in 0..(DEAD_GROUPS_REMEMBERED as u64 + 1) {
            q.push(vec![0], dying(group), ms(0), &mut none).unwrap();
            assert!(!q.ready(ms(1), &mut none));
        }
        assert_eq!(q.dead_groups.len(), DEAD_GROUPS_REMEMBERED);
        // Group 0, the oldest, is forgotten: its number may be used again.
        q.push(
            vec![1],
            SendOptions::default().with_group(0),
            ms(2),
            &mut none,
        )
        .unwrap();
        q.push(
            vec![2],
            SendOptions::default().with_group(1),
            ms(2),
            &mut none,
        )
        .unwrap();
        assert_eq!((q.len(), q.pop()), (1, Some(vec![1])));
    }

    #[test]
    fn flush_below_removes_only_the_lower_levels() {
        let mut q = PayloadQueue::new(10, 10);
        for level in [0u8, 1, 2, 2, 6] {
            q.push(
                vec![level],
                SendOptions::default().with_priority(level),
                ms(0),
                &mut none,
            )
            .unwrap();
        }
        assert_eq!(q.flush_below(2), 2);
        assert_eq!(q.len(), 3);
        assert_eq!(q.flush_below(PRIORITY_LEVELS), 3);
        assert!(q.is_empty());
        assert_eq!(q.stats.flushed, 5);
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn deadlines_beyond_the_limit_are_refused() {
        let mut q = PayloadQueue::new(10, 10);
        let far = SendOptions::default().with_deadline(MAX_DEADLINE + Duration::from_secs(1));
        assert_eq!(
            q.push(vec![0], far, ms(0), &mut none),
            Err(QueueError::BadDeadline)
        );
    }
}
