//! The relay: one thread that owns both TUN devices and both [`Pipe`]s, sleeping in `ppoll` on
//! the two devices and a stop descriptor until the next intended event (a nanosecond timeout
//! computed from `CLOCK_MONOTONIC` just before the call, timer slack set to 1 ns), as Dummynet's
//! clock drives its pipes. Packets are timestamped when read.
//!
//! Each wake-up costs far more than the work it does (a context switch, on a virtual machine an
//! exit to the hypervisor), so the loop keeps them few: the poll timeout is the timer (no
//! `timerfd` to re-arm and read: two system calls fewer per wake-up), every ready packet is read
//! (up to [`READ_BURST`] a side) and everything due is delivered at each wake-up, and the
//! optional `slack` lets a delivery wait up to that long for a wake-up that happens anyway.
//!
//! The relay stops when the stop descriptor becomes readable (data, end of file or hang-up: the
//! Python side passes the read end of a pipe and closes the write end, so a dying parent stops
//! the relay too) or after `max_duration`. Packets still queued or in flight are then dropped
//! with the devices.

use std::io;
use std::num::NonZeroU64;
use std::os::fd::AsFd;
use std::time::Duration;

use rustix::event::{poll, PollFd, PollFlags, Timespec};
use rustix::time::{clock_gettime, ClockId};
use tfrc::Time;

use crate::config::RelayConfig;
use crate::log::{PacketLog, Record};
use crate::pipe::{Pipe, PipeStats};
use crate::tun::Tun;

/// The most packets read from one device per wake-up before the other side and the timer get a
/// turn (fairness between directions under overload).
const READ_BURST: usize = 64;

/// Why the relay stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// The stop descriptor became readable.
    Requested,
    /// `max_duration` elapsed.
    MaxDuration,
}

/// What a run did.
#[derive(Clone, Debug)]
pub struct RelayReport {
    /// Side a to side b.
    pub forward: PipeStats,
    /// Side b to side a.
    pub reverse: PipeStats,
    /// From the devices' creation to the stop.
    pub elapsed: Duration,
    /// Why it stopped.
    pub stopped: StopReason,
    /// Log records written.
    pub log_records: u64,
    /// Log records not written because the log reached its size cap.
    pub log_records_dropped: u64,
    /// The first log write error, if the log failed (the relay goes on without it).
    pub log_error: Option<String>,
    /// Poll wake-ups (a measure of the relay's overhead).
    pub wakeups: u64,
}

/// A relay with its devices created, not yet forwarding.
#[derive(Debug)]
pub struct Relay {
    config: RelayConfig,
    tuns: [Tun; 2],
    pipes: [Pipe; 2],
    log: PacketLog,
    start_ns: u64,
}

/// `CLOCK_MONOTONIC` in ns.
fn monotonic_ns() -> u64 {
    let ts = clock_gettime(ClockId::Monotonic);
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

impl Relay {
    /// Creates both TUN devices (in the caller's network namespace; the caller moves them where
    /// they belong) and the log. Needs `CAP_NET_ADMIN`.
    pub fn open(config: RelayConfig) -> io::Result<Relay> {
        // Poll timeouts are otherwise rounded up by the default 50 µs timer slack.
        rustix::thread::set_current_timer_slack(NonZeroU64::new(1))?;
        let tuns = [Tun::create(&config.tun_a)?, Tun::create(&config.tun_b)?];
        let start_ns = monotonic_ns();
        let log = match &config.log {
            Some(path) => PacketLog::create(path, config.max_log_bytes, start_ns)
                .map_err(|e| io::Error::new(e.kind(), format!("log {}: {e}", path.display())))?,
            None => PacketLog::disabled(),
        };
        let pipes = [
            Pipe::new(&config.forward, 0, config.seed),
            Pipe::new(&config.reverse, 1, config.seed),
        ];
        Ok(Relay {
            config,
            tuns,
            pipes,
            log,
            start_ns,
        })
    }

    /// The relay's time zero on `CLOCK_MONOTONIC` (ns), also in the log's header.
    pub fn start_monotonic_ns(&self) -> u64 {
        self.start_ns
    }

    /// Forwards packets until `stop` is readable or `max_duration` has passed.
    pub fn run(mut self, stop: impl AsFd) -> io::Result<RelayReport> {
        let limit = Time::from_nanos(tfrc::time::duration_nanos(self.config.max_duration));
        let mut buf = vec![0u8; 65_536];
        let mut log_error: Option<String> = None;
        let mut wakeups = 0u64;
        let stopped = loop {
            let now = self.now();
            if now >= limit {
                break StopReason::MaxDuration;
            }
            self.advance_all(now, &mut log_error);
            let deadline = self.wake_time().map_or(limit, |d| d.min(limit));
            let mut fds = [
                PollFd::new(&self.tuns[0], PollFlags::IN),
                PollFd::new(&self.tuns[1], PollFlags::IN),
                PollFd::new(&stop, PollFlags::IN),
            ];
            // The timeout is relative: computed as late as possible, so the wake-up is at most
            // the few ns between here and the call late (on top of the scheduler's latency).
            let wait = deadline.saturating_since(self.now());
            let timeout = Timespec {
                tv_sec: wait.as_secs() as i64,
                tv_nsec: i64::from(wait.subsec_nanos()),
            };
            match poll(&mut fds, Some(&timeout)) {
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            }
            wakeups += 1;
            let ready = fds.map(|f| !f.revents().is_empty());
            if ready[2] {
                break StopReason::Requested;
            }
            for (side, _) in ready.iter().take(2).enumerate().filter(|(_, &r)| r) {
                self.read_side(side, &mut buf, &mut log_error)?;
            }
        };
        if let Err(e) = self.log.flush() {
            log_error.get_or_insert(e.to_string());
        }
        let elapsed = Duration::from_nanos(self.now().as_nanos());
        let [forward, reverse] = self.pipes;
        Ok(RelayReport {
            forward: forward.stats().clone(),
            reverse: reverse.stats().clone(),
            elapsed,
            stopped,
            log_records: self.log.written(),
            log_records_dropped: self.log.dropped(),
            log_error,
            wakeups,
        })
    }

    fn now(&self) -> Time {
        Time::from_nanos(monotonic_ns().saturating_sub(self.start_ns))
    }

    /// Delivers everything due by `now`, in both directions.
    fn advance_all(&mut self, now: Time, log_error: &mut Option<String>) {
        for (dir, pipe) in self.pipes.iter_mut().enumerate() {
            let out = &self.tuns[1 - dir];
            let log = &mut self.log;
            pipe.advance(now, &mut |p: &[u8]| out.send(p), &mut |r: &Record| {
                note(log.record(r), log_error)
            });
        }
    }

    /// Reads up to [`READ_BURST`] packets from side `side` (0 = a) into its pipe.
    fn read_side(
        &mut self,
        side: usize,
        buf: &mut [u8],
        log_error: &mut Option<String>,
    ) -> io::Result<()> {
        for _ in 0..READ_BURST {
            let Some(n) = self.tuns[side].recv(buf)? else {
                break;
            };
            let now = self.now();
            self.advance_all(now, log_error);
            let log = &mut self.log;
            self.pipes[side].arrive(now, &buf[..n], &mut |r: &Record| {
                note(log.record(r), log_error)
            });
        }
        Ok(())
    }

    /// When to wake for the next deliveries, if any are pending: the first deadline of either
    /// direction or, with a slack, the last deadline within `slack` of it (so the cluster
    /// leaves in one wake-up, each delivery at most `slack` late), then rounded up to the
    /// tick (on the relay's time grid, so a late wake-up does not shift later deadlines).
    fn wake_time(&self) -> Option<Time> {
        let first = self.pipes.iter().filter_map(Pipe::next_deadline).min()?;
        let horizon = first + self.config.slack;
        let last = if self.config.slack.is_zero() {
            first
        } else {
            self.pipes
                .iter()
                .filter_map(|p| p.last_deadline_by(horizon))
                .fold(first, Time::max)
        };
        let tick = tfrc::time::duration_nanos(self.config.tick).max(1);
        Some(Time::from_nanos(
            last.as_nanos().div_ceil(tick).saturating_mul(tick),
        ))
    }
}

/// Keeps the first log error.
fn note(result: io::Result<()>, first: &mut Option<String>) {
    if let Err(e) = result {
        first.get_or_insert(e.to_string());
    }
}
