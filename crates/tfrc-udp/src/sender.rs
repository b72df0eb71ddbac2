//! The TFRC sender over a UDP socket: the sans-IO [`tfrc::Sender`] driven by a loop that reads
//! feedback, fires the nofeedback timer, paces data packets with the [`Waiter`]'s timerfd, and
//! keeps per-interval statistics.
//!
//! Every datagram read is from the peer and a well-formed, fresh feedback packet, or it is
//! counted in [`InputStats`] and dropped; a report from the peer that fails the TFRC sender's
//! own checks (RFC 5348 §6.2, §9: an echo it never sent, a delay longer than the elapsed time,
//! fields out of range) is counted in [`tfrc::SenderStats::feedback`] and not acted on. When
//! the receiver goes silent, only the nofeedback timer acts (RFC 5348 §4.4): the rate halves at
//! each expiry down to s/t_mbi, and recovers when reports resume (a restarted receiver is just a
//! receiver whose first report arrives).

use std::net::{SocketAddr, ToSocketAddrs, UdpSocket};
use std::sync::Arc;
use std::time::Duration;

use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use tfrc::wire::{Packet, DATA_HEADER_LEN};
use tfrc::{DataHeader, SenderStats, Time};

use crate::clock::Clock;
use crate::error::TransportError;
use crate::events::emit;
use crate::handle::{RateChange, SenderHandle, Shared, RATE_CHANGE_THRESHOLD};
use crate::input::InputStats;
use crate::input::RECV_BUFFER;
use crate::options::{with_backoff_floor, SenderOptions, Source};
use crate::queue::{Expired, QueueStats, SendOptions};
use crate::samples::{SampleLog, SenderSample};
use crate::waiter::Waiter;
use crate::wake::Wake;

/// The most data packets sent back to back in one pass of the loop (then input and timers are
/// looked at again).
pub const MAX_BURST: usize = 64;
/// The most datagrams read in one pass of the loop.
pub const MAX_INPUT_BATCH: usize = 64;

/// Everything a sender counted, at one moment: what [`UdpSender::report`] returns, and what
/// [`SenderHandle::stats`] reads from another thread while the sender runs (the counterpart of
/// DCCP's CCID-3 `DCCP_SOCKOPT_CCID_TX_INFO`: X, X_recv, X_calc, p, R and t_RTO are in `tfrc`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SenderReport {
    /// When it was taken, on the sender's clock.
    pub time: Time,
    /// The TFRC sender's state and counters (rate, p, RTT, feedback accepted and rejected by
    /// cause, nofeedback expiries).
    pub tfrc: SenderStats,
    /// What became of every datagram read.
    pub input: InputStats,
    /// Data packets handed to the socket.
    pub packets_sent: u64,
    /// Their bytes (whole datagrams).
    pub bytes_sent: u64,
    /// Data packets the socket refused (a full send buffer, an ICMP error); TFRC counts them as
    /// sent, as a loss on the path.
    pub send_errors: u64,
    /// The operating system's error number for the last refused packet, if any (so a session
    /// that could send nothing can say why).
    pub last_send_errno: Option<i32>,
    /// Payloads the application queue refused because it was full (the same as
    /// `queue.full_drops`).
    pub queue_drops: u64,
    /// Payloads waiting in the application queue.
    pub queued: usize,
    /// What became of the payloads the application offered: queued, refused, expired, flushed,
    /// sent.
    pub queue: QueueStats,
    /// CPU time the loop's thread spent in [`UdpSender::run_until`], seconds.
    pub cpu_s: f64,
}

/// A TFRC sender bound to a UDP socket, sending to one peer.
#[derive(Debug)]
pub struct UdpSender {
    socket: UdpSocket,
    peer: SocketAddr,
    /// This sender's session identifier (docs/wire-format.md), on every data packet.
    session: u64,
    clock: Clock,
    tfrc: tfrc::Sender,
    source: Source,
    shared: Arc<Shared>,
    waiter: Waiter,
    send_buf: Vec<u8>,
    recv_buf: Vec<u8>,
    input: InputStats,
    packets_sent: u64,
    bytes_sent: u64,
    send_errors: u64,
    last_send_errno: Option<i32>,
    cpu_ns: u64,
    /// The constant-rate source's unspent bytes and when they were last topped up.
    app_credit: f64,
    app_last: Time,
    /// The X last announced to subscribers.
    announced: Option<f64>,
    samples: SampleLog<SenderSample>,
    last_totals: SenderSample,
    send_log: Vec<Time>,
    send_log_limit: usize,
    /// Payloads found expired in one look at the queue, for their events.
    expired_buf: Vec<Expired>,
}

impl UdpSender {
    /// A sender on a new socket bound to `bind`, sending to `peer` (the first address each
    /// resolves to). The session's clock starts now.
    pub fn bind(
        bind: impl ToSocketAddrs,
        peer: impl ToSocketAddrs,
        options: SenderOptions,
    ) -> Result<UdpSender, TransportError> {
        let peer = resolve(peer)?;
        let socket = UdpSocket::bind(bind).map_err(TransportError::io("binding the socket"))?;
        UdpSender::new(socket, peer, options)
    }

    /// A sender on `socket` (made non-blocking here) sending to `peer`. Feedback is accepted
    /// from `peer` only.
    pub fn new(
        socket: UdpSocket,
        peer: SocketAddr,
        options: SenderOptions,
    ) -> Result<UdpSender, TransportError> {
        options.validate()?;
        let local = socket
            .local_addr()
            .map_err(TransportError::io("reading the local address"))?;
        if local.is_ipv4() && peer.is_ipv6() {
            // Every send would fail (EAFNOSUPPORT) and the session would run silent.
            return Err(TransportError::Io {
                context: "checking the peer's address family",
                source: std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    format!(
                        "the IPv4 socket {local} cannot reach the IPv6 peer {peer}; bind an \
                         IPv6 address such as [::]:0"
                    ),
                ),
            });
        }
        socket
            .set_nonblocking(true)
            .map_err(TransportError::io("making the socket non-blocking"))?;
        let config = with_backoff_floor(options.config);
        let s = config.segment_size_bytes as usize;
        let clock = Clock::new();
        let now = clock.now();
        let dither = config.dither_fraction > 0.0;
        let mut tfrc =
            tfrc::Sender::new(config, now).map_err(|err| crate::options::config_error(&err))?;
        if dither {
            let rng = Xoshiro256PlusPlus::seed_from_u64(options.dither_seed);
            tfrc.set_dither_rng(Box::new(rng));
        }
        let wake = Wake::new().map_err(TransportError::io("creating the wake-up eventfd"))?;
        let rate = tfrc.stats().x_bytes_per_s;
        let shared = Arc::new(Shared::new(
            options.queue_packets,
            s - DATA_HEADER_LEN,
            wake,
            clock,
            rate,
        ));
        let waiter =
            Waiter::new(options.spin).map_err(TransportError::io("creating the pacing timer"))?;
        Ok(UdpSender {
            socket,
            peer,
            session: options.session.unwrap_or_else(random_session),
            clock,
            tfrc,
            source: options.source,
            shared,
            waiter,
            send_buf: vec![0; s],
            recv_buf: vec![0; RECV_BUFFER],
            input: InputStats::default(),
            packets_sent: 0,
            bytes_sent: 0,
            send_errors: 0,
            last_send_errno: None,
            cpu_ns: 0,
            app_credit: 0.0,
            app_last: now,
            announced: None,
            samples: SampleLog::new(Time::ZERO, options.stats_interval),
            last_totals: SenderSample::default(),
            send_log: Vec::new(),
            send_log_limit: options.send_log,
            expired_buf: Vec::new(),
        })
    }

    /// A handle for the application: queue payloads, read or subscribe to the allowed rate,
    /// stop the loop.
    pub fn handle(&self) -> SenderHandle {
        SenderHandle {
            shared: Arc::clone(&self.shared),
        }
    }

    /// The session's clock (time zero when the sender was made).
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// The local address of the socket.
    pub fn local_addr(&self) -> Result<SocketAddr, TransportError> {
        self.socket
            .local_addr()
            .map_err(TransportError::io("reading the local address"))
    }

    /// The peer data goes to.
    pub fn peer(&self) -> SocketAddr {
        self.peer
    }

    /// This sender's session identifier, carried by every data packet and echoed by reports.
    pub fn session(&self) -> u64 {
        self.session
    }

    /// Runs the loop for `duration` from now (or until [`SenderHandle::stop`]).
    pub fn run_for(&mut self, duration: Duration) -> Result<(), TransportError> {
        let end = self.clock.now() + duration;
        self.run_until(end)
    }

    /// Runs the loop until `end` on the session's clock, or until [`SenderHandle::stop`] was
    /// called (the stop is not cleared: later calls return at once). Every pass reads at most
    /// [`MAX_INPUT_BATCH`] datagrams and sends at most [`MAX_BURST`] packets, then sleeps until
    /// the next send time, timer, statistics interval or `end`, or until input arrives.
    pub fn run_until(&mut self, end: Time) -> Result<(), TransportError> {
        let cpu_start = crate::clock::thread_cpu_ns();
        let result = self.run_loop(end);
        self.cpu_ns += crate::clock::thread_cpu_ns().saturating_sub(cpu_start);
        result
    }

    fn run_loop(&mut self, end: Time) -> Result<(), TransportError> {
        let mut input_ready = true;
        loop {
            let now = self.clock.now();
            if self.samples.due(now) {
                // Before the end check, so an interval ending with the session is recorded.
                self.take_sample(now);
            }
            if now >= end || self.shared.stopping() {
                return Ok(());
            }
            if input_ready {
                self.read_input();
            }
            let now = self.clock.now();
            let expiries = self.tfrc.stats().nofeedback_expiries;
            self.tfrc.handle_timeout(now);
            if self.tfrc.stats().nofeedback_expiries != expiries {
                emit!(
                    info,
                    "tfrc_udp::sender",
                    "nofeedback",
                    time_s = now.as_secs_f64(),
                    x_bps = self.tfrc.stats().x_bytes_per_s * 8.0,
                );
            }
            self.generate(now);
            let burst_full = self.transmit(now);
            self.announce(now);
            self.shared.set_report(self.report());
            if burst_full {
                input_ready = true;
                continue;
            }
            let deadline = self.next_deadline(end);
            input_ready = self
                .waiter
                .wait_until(&self.clock, &self.socket, &self.shared.wake, deadline)
                .map_err(TransportError::io("waiting for the next deadline"))?
                .socket;
        }
    }

    /// Reads and handles up to [`MAX_INPUT_BATCH`] datagrams, each with the clock read when it
    /// is handled: a clock read once before a batch judges a report against a time earlier
    /// than its own arrival (an honest echo then looks like one from the future, and RTT
    /// samples come out low by the batch's length).
    fn read_input(&mut self) {
        for _ in 0..MAX_INPUT_BATCH {
            let (len, from) = match self.socket.recv_from(&mut self.recv_buf) {
                Ok(got) => got,
                Err(err) if err.kind() == std::io::ErrorKind::WouldBlock => return,
                Err(_) => {
                    self.input.socket_errors += 1;
                    return;
                }
            };
            self.input.datagrams += 1;
            if from != self.peer {
                self.input.foreign_source += 1;
                self.log_dropped("foreign_source");
                continue;
            }
            let bytes = &self.recv_buf[..len];
            let parsed = Packet::parse(bytes);
            self.input.wire.record(&parsed);
            match parsed {
                Ok(Packet::Feedback { session, .. }) if session != self.session => {
                    self.input.other_session += 1;
                    self.log_dropped("other_session");
                }
                Ok(Packet::Feedback { header, .. }) => {
                    // A rejected report (forged, or a replay: exact, modified or duplicated by
                    // the network) is counted by the TFRC sender by cause and ignored.
                    let now = self.clock.now();
                    match self.tfrc.handle_feedback(now, &header) {
                        Ok(()) => {
                            let stats = self.tfrc.stats();
                            emit!(
                                debug,
                                "tfrc_udp::sender",
                                "report",
                                time_s = now.as_secs_f64(),
                                x_recv_bps = header.x_recv_bytes_per_s * 8.0,
                                p = header.p,
                                rtt_s = stats.rtt_sample_s,
                                x_bps = stats.x_bytes_per_s * 8.0,
                                x_calc_bps = stats.x_calc_bytes_per_s * 8.0,
                                rtt_smoothed_s = stats.rtt_s,
                            );
                        }
                        Err(_err) => emit!(
                            debug,
                            "tfrc_udp::sender",
                            "report_rejected",
                            time_s = now.as_secs_f64(),
                            cause = _err.to_string().as_str(),
                        ),
                    }
                }
                Ok(Packet::Data { .. }) => {
                    self.input.wrong_kind += 1;
                    self.log_dropped("wrong_kind");
                }
                Err(_) => self.log_dropped("malformed"),
            }
        }
    }

    /// Tops up the constant-rate source's queue.
    fn generate(&mut self, now: Time) {
        let Source::ConstantRate { bytes_per_s } = self.source else {
            return;
        };
        let s = self.send_buf.len() as f64;
        let elapsed = now.saturating_since(self.app_last).as_secs_f64();
        self.app_last = now;
        let mut queue = self.shared.queue();
        // After a long pause (between runs) at most one queue's worth is produced at once.
        let most = (queue.capacity() + 1) as f64 * s;
        self.app_credit = (self.app_credit + bytes_per_s * elapsed).min(most);
        while self.app_credit >= s {
            self.app_credit -= s;
            // A full queue drops the frame (counted), as an encoder's bounded buffer would.
            let frame = vec![0; self.send_buf.len() - DATA_HEADER_LEN];
            let _ = queue.push(frame, SendOptions::default(), now, &mut |_| {});
        }
    }

    /// When the constant-rate source next has a packet ready.
    fn next_generation(&self) -> Option<Time> {
        let Source::ConstantRate { bytes_per_s } = self.source else {
            return None;
        };
        let missing = (self.send_buf.len() as f64 - self.app_credit).max(0.0);
        Some(self.app_last + tfrc::time::duration_from_secs(missing / bytes_per_s))
    }

    /// Sends what the schedule allows now, at most [`MAX_BURST`] packets; true if it stopped at
    /// the bound.
    fn transmit(&mut self, now: Time) -> bool {
        // Each packet is stamped with the clock read just before it goes, never equal to the
        // previous stamp: every echo then names exactly one packet, and a second report with
        // the same echo is a replay to the TFRC sender (docs/tfrc.md, "Replays").
        let mut stamp = now;
        for _ in 0..MAX_BURST {
            let (header, payload) = match self.source {
                Source::Greedy => match self.tfrc.poll_transmit(stamp, true) {
                    Some(header) => (header, None),
                    None => return false,
                },
                Source::Application | Source::ConstantRate { .. } => {
                    let next = self.next_payload(stamp);
                    self.log_expired();
                    match next {
                        Some((header, data)) => (header, Some(data)),
                        None => return false,
                    }
                }
            };
            let len = match payload {
                None => {
                    let len = self.send_buf.len();
                    let (head, body) = self.send_buf.split_at_mut(DATA_HEADER_LEN);
                    body.fill(0);
                    header.emit(self.session, head).map(|_| len)
                }
                Some(data) => header.emit_with_payload(self.session, &data, &mut self.send_buf),
            };
            let Ok(len) = len else {
                // Cannot happen: payloads are checked against the buffer when queued.
                self.send_errors += 1;
                continue;
            };
            match self.socket.send_to(&self.send_buf[..len], self.peer) {
                Ok(_) => {
                    self.packets_sent += 1;
                    self.bytes_sent += len as u64;
                }
                Err(err) => {
                    self.send_errors += 1;
                    self.last_send_errno = err.raw_os_error();
                    emit!(
                        warn,
                        "tfrc_udp::sender",
                        "send_error",
                        time_s = stamp.as_secs_f64(),
                        error = err.to_string().as_str(),
                    );
                }
            }
            if self.send_log.len() < self.send_log_limit {
                self.send_log.push(stamp);
            }
            stamp = self.clock.now().max(stamp + Duration::from_nanos(1));
        }
        true
    }

    /// The header and payload of the next packet, if the queue holds a payload still within its
    /// deadline and TFRC allows a packet at `stamp`. Payloads past their deadline are dropped
    /// here, at their send opportunity (announced now, logged by [`UdpSender::log_expired`]
    /// once the queue is unlocked: a subscriber may block, and the application's thread may be
    /// waiting for the queue). The queue stays locked from the look to the pop, so a flush
    /// from the application's thread cannot empty it in between.
    fn next_payload(&mut self, stamp: Time) -> Option<(DataHeader, Vec<u8>)> {
        let shared = &self.shared;
        let expired = &mut self.expired_buf;
        let mut queue = shared.queue();
        let ready = queue.ready(stamp, &mut |e| {
            shared.announce_expired(e);
            expired.push(e);
        });
        if !ready {
            // Marks the opportunity unused (data-limited, RFC 5348 §8.2).
            let _ = self.tfrc.poll_transmit(stamp, false);
            return None;
        }
        let header = self.tfrc.poll_transmit(stamp, true)?;
        Some((header, queue.pop().unwrap_or_default()))
    }

    /// The `expired` events of the payloads [`UdpSender::next_payload`] dropped.
    fn log_expired(&mut self) {
        for _e in self.expired_buf.drain(..) {
            emit!(
                debug,
                "tfrc_udp::sender",
                "expired",
                time_s = _e.dropped.as_secs_f64(),
                ticket = _e.ticket,
                priority = _e.priority,
                late_s = _e.dropped.saturating_since(_e.deadline).as_secs_f64(),
            );
        }
    }

    /// Publishes X to the handle, and to subscribers if it moved by more than the threshold
    /// since the last notice.
    fn announce(&mut self, now: Time) {
        let stats = self.tfrc.stats();
        let x = stats.x_bytes_per_s;
        let changed = self
            .announced
            .is_none_or(|last| (x - last).abs() > RATE_CHANGE_THRESHOLD * last);
        if !changed {
            self.shared.set_rate(x);
        } else {
            self.announced = Some(x);
            emit!(
                info,
                "tfrc_udp::sender",
                "rate_change",
                time_s = now.as_secs_f64(),
                x_bps = x * 8.0,
                p = stats.p,
                rtt_s = stats.rtt_s,
            );
            self.shared.publish(RateChange {
                time: now,
                x_bytes_per_s: x,
                p: stats.p,
                rtt_s: stats.rtt_s,
            });
        }
    }

    /// The `input_dropped` event for a datagram dropped for `_cause`.
    fn log_dropped(&self, _cause: &'static str) {
        emit!(
            debug,
            "tfrc_udp::sender",
            "input_dropped",
            time_s = self.clock.now().as_secs_f64(),
            cause = _cause,
        );
    }

    fn next_deadline(&self, end: Time) -> Time {
        let mut deadline = end.min(self.samples.next_due());
        if let Some(t) = self.tfrc.poll_timeout() {
            deadline = deadline.min(t);
        }
        if let Some(t) = self.next_generation() {
            deadline = deadline.min(t);
        }
        deadline
    }

    fn take_sample(&mut self, now: Time) {
        let totals = self.totals();
        let last = self.last_totals;
        let stats = self.tfrc.stats();
        let row = SenderSample {
            time_s: self.samples.sample_time_s(),
            sent_packets: totals.sent_packets - last.sent_packets,
            sent_bytes: totals.sent_bytes - last.sent_bytes,
            queue_drops: totals.queue_drops - last.queue_drops,
            queue_expired: totals.queue_expired - last.queue_expired,
            x_bytes_per_s: stats.x_bytes_per_s,
            x_recv_bytes_per_s: stats.x_recv_bytes_per_s,
            p: stats.p,
            rtt_s: stats.rtt_s,
            feedback_accepted: totals.feedback_accepted - last.feedback_accepted,
            feedback_rejected: totals.feedback_rejected - last.feedback_rejected,
            input_dropped: totals.input_dropped - last.input_dropped,
            nofeedback_expiries: totals.nofeedback_expiries - last.nofeedback_expiries,
        };
        self.last_totals = totals;
        self.samples.push(now, row);
    }

    /// The cumulative counters, in a sample's shape.
    fn totals(&self) -> SenderSample {
        let stats = self.tfrc.stats();
        let queue = self.shared.queue().stats;
        SenderSample {
            sent_packets: self.packets_sent,
            sent_bytes: self.bytes_sent,
            queue_drops: queue.full_drops,
            queue_expired: queue.expired,
            feedback_accepted: stats.feedback.accepted,
            feedback_rejected: stats.feedback.rejected(),
            input_dropped: self.input.dropped(),
            nofeedback_expiries: stats.nofeedback_expiries,
            ..SenderSample::default()
        }
    }

    /// Per-interval samples not kept: a session keeps at most
    /// [`crate::samples::MAX_SAMPLES`].
    pub fn samples_dropped(&self) -> u64 {
        self.samples.dropped()
    }

    /// The per-interval statistics so far, oldest first (at most
    /// [`crate::samples::MAX_SAMPLES`]).
    pub fn samples(&self) -> &[SenderSample] {
        self.samples.rows()
    }

    /// The send times kept (the first [`SenderOptions::send_log`] packets).
    pub fn send_times(&self) -> &[Time] {
        &self.send_log
    }

    /// Everything counted so far (`cpu_s` as of the last return from
    /// [`UdpSender::run_until`]).
    pub fn report(&self) -> SenderReport {
        let (queue, queued) = {
            let q = self.shared.queue();
            (q.stats, q.len())
        };
        SenderReport {
            time: self.clock.now(),
            tfrc: *self.tfrc.stats(),
            input: self.input,
            packets_sent: self.packets_sent,
            bytes_sent: self.bytes_sent,
            send_errors: self.send_errors,
            last_send_errno: self.last_send_errno,
            queue_drops: queue.full_drops,
            queued,
            queue,
            cpu_s: self.cpu_ns as f64 * 1e-9,
        }
    }
}

/// A session identifier no one off the path can predict: std's `RandomState` is keyed from the
/// operating system's random source (per thread, then stepped), so its hash of the clock and
/// the process id is 64 unpredictable bits without a random-number dependency.
fn random_session() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u32(std::process::id());
    if let Ok(since) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        hasher.write_u128(since.as_nanos());
    }
    hasher.finish()
}

/// The first address `addr` resolves to.
pub(crate) fn resolve(addr: impl ToSocketAddrs) -> Result<SocketAddr, TransportError> {
    addr.to_socket_addrs()
        .map_err(TransportError::io("resolving the peer address"))?
        .next()
        .ok_or_else(|| TransportError::Io {
            context: "resolving the peer address",
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "no address"),
        })
}
