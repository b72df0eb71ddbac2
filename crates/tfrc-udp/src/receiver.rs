//! The TFRC receiver over a UDP socket: the sans-IO [`tfrc::Receiver`] fed every data packet
//! from the current sender, its feedback (RFC 5348 §6) sent back to that sender, and the
//! payloads handed to the application with their sequence numbers and loss information.
//!
//! Every data packet carries its sender's session identifier, a random 64-bit number drawn
//! when the sender starts (docs/wire-format.md). The first well-formed data packet opens a
//! session: its identifier and address. Then:
//!
//! - data of the current session is taken from whatever address it comes from, and feedback
//!   follows it there (a NAT rebinding, or a sender that moved, loses no report);
//! - data of another session (a new sender, the same one restarted on any port, or a forger)
//!   is counted and dropped while the current session is live, and opens a new session with a
//!   fresh TFRC receiver once the current one has been silent for [`takeover_silence`]:
//!   max(4R, [`MIN_TAKEOVER_SILENCE`]), at most [`ReceiverOptions::peer_idle_timeout`].
//!
//! Someone off the path cannot inject data into a live session without guessing its
//! identifier; what a forger can do is start a session while the real sender is silent, which
//! the real sender's next packet undoes after the same silence.

use std::net::{SocketAddr, ToSocketAddrs, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tfrc::wire::{Packet, FEEDBACK_LEN};
use tfrc::{Ecn, ReceiverStats, Time};

use crate::clock::Clock;
use crate::error::TransportError;
use crate::events::emit;
use crate::input::{InputStats, RECV_BUFFER};
use crate::options::{with_backoff_floor, ReceiverOptions};
use crate::samples::{ReceiverSample, SampleLog};
use crate::sender::MAX_INPUT_BATCH;
use crate::waiter::Waiter;
use crate::wake::Wake;

/// The least silence of the current session before another may take over (a restarted sender
/// sends its first packets at one a second, RFC 5348 §4.2, so a restart must be recognized
/// within a second or two).
pub const MIN_TAKEOVER_SILENCE: Duration = Duration::from_millis(250);

/// How long the current session must have been silent before data of another session opens a
/// new one: four of its RTTs (`rtt_s`, 0 before one is known), at least
/// [`MIN_TAKEOVER_SILENCE`], at most `peer_idle_timeout`.
pub fn takeover_silence(rtt_s: f64, peer_idle_timeout: Duration) -> Duration {
    let four_rtts = Duration::try_from_secs_f64(4.0 * rtt_s).unwrap_or(Duration::MAX);
    four_rtts.max(MIN_TAKEOVER_SILENCE).min(peer_idle_timeout)
}

/// A payload handed to the application.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Delivery<'a> {
    /// The packet's sequence number.
    pub seq: u64,
    /// The application bytes it carried.
    pub payload: &'a [u8],
    /// When it arrived, on the receiver's clock.
    pub arrival: Time,
    /// When it was sent, on the sender's clock (the data packet's timestamp). The two clocks
    /// have different origins, so `arrival - sent` is the one-way delay plus a constant
    /// offset: its changes are the delay's changes (jitter, queueing), what a playout buffer
    /// needs.
    pub sent: Time,
    /// Sequence numbers skipped between the highest one received before and this one (0 when
    /// in order): packets lost, or still to come if reordered.
    pub gap: u64,
    /// Whether it arrived after a packet with a higher sequence number (a late packet filling
    /// a gap).
    pub late: bool,
    /// Packets the TFRC receiver has declared lost so far in this session.
    pub lost_total: u64,
    /// The loss event rate p (RFC 5348 §5) at this arrival.
    pub p: f64,
}

/// Everything a receiver counted, at one moment: what [`UdpReceiver::report`] returns, and
/// what [`ReceiverHandle::stats`] reads from another thread while the receiver runs.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ReceiverReport {
    /// When it was taken, on the receiver's clock.
    pub time: Time,
    /// The current session's TFRC receiver state and counters.
    pub tfrc: ReceiverStats,
    /// What became of every datagram read.
    pub input: InputStats,
    /// Sessions started (a new sender, or the same one restarted).
    pub sessions: u64,
    /// Times the current session's data came from a new address (a NAT rebinding), which
    /// feedback then followed.
    pub peer_changes: u64,
    /// Data packets received over all sessions.
    pub packets_received: u64,
    /// Their bytes.
    pub bytes_received: u64,
    /// Packets declared lost over all sessions.
    pub packets_lost: u64,
    /// Feedback packets sent over all sessions.
    pub feedback_sent: u64,
    /// Feedback packets the socket refused.
    pub send_errors: u64,
    /// The current peer, if any.
    pub peer: Option<SocketAddr>,
}

/// Stops a running [`UdpReceiver`] and reads its statistics from another thread.
#[derive(Clone, Debug)]
pub struct ReceiverHandle {
    stop: Arc<AtomicBool>,
    wake: Arc<Wake>,
    report: Arc<Mutex<ReceiverReport>>,
}

impl ReceiverHandle {
    /// The receiver's state and counters as of its loop's last pass (p, X_recv, R, packets
    /// received and lost, feedback sent, input dropped). Readable from any thread at any time;
    /// all zero before the loop first runs.
    pub fn stats(&self) -> ReceiverReport {
        *self.report.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Asks the receiver's loop to return as soon as it wakes (it is woken at once).
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Release);
        self.wake.notify();
    }
}

/// Counters summed over finished sessions.
#[derive(Clone, Copy, Debug, Default)]
struct Totals {
    packets: u64,
    bytes: u64,
    lost: u64,
    loss_events: u64,
    feedback: u64,
}

impl Totals {
    fn add(self, stats: &ReceiverStats) -> Totals {
        Totals {
            packets: self.packets + stats.packets_received,
            bytes: self.bytes + stats.bytes_received,
            lost: self.lost + stats.packets_lost,
            loss_events: self.loss_events + stats.loss_events,
            feedback: self.feedback + stats.feedback_sent,
        }
    }
}

/// The `input_dropped` event for a datagram dropped at `_now` for `_cause`.
fn log_dropped(_now: Time, _cause: &'static str) {
    emit!(
        debug,
        "tfrc_udp::receiver",
        "input_dropped",
        time_s = _now.as_secs_f64(),
        cause = _cause,
    );
}

/// A TFRC receiver bound to a UDP socket.
#[derive(Debug)]
pub struct UdpReceiver {
    socket: UdpSocket,
    clock: Clock,
    options: ReceiverOptions,
    tfrc: tfrc::Receiver,
    peer: Option<SocketAddr>,
    /// The current session's identifier.
    session: Option<u64>,
    last_heard: Time,
    highest_seq: Option<u64>,
    sessions: u64,
    peer_changes: u64,
    retired: Totals,
    input: InputStats,
    send_errors: u64,
    recv_buf: Vec<u8>,
    stop: Arc<AtomicBool>,
    wake: Arc<Wake>,
    /// The counters as of the loop's last pass, for [`ReceiverHandle::stats`].
    live: Arc<Mutex<ReceiverReport>>,
    waiter: Waiter,
    samples: SampleLog<ReceiverSample>,
    last_sample: (Totals, u64),
}

impl UdpReceiver {
    /// A receiver on a new socket bound to `bind`. The session's clock starts now.
    pub fn bind(
        bind: impl ToSocketAddrs,
        options: ReceiverOptions,
    ) -> Result<UdpReceiver, TransportError> {
        let socket = UdpSocket::bind(bind).map_err(TransportError::io("binding the socket"))?;
        UdpReceiver::new(socket, options)
    }

    /// A receiver on `socket` (made non-blocking here).
    pub fn new(socket: UdpSocket, options: ReceiverOptions) -> Result<UdpReceiver, TransportError> {
        options.validate()?;
        socket
            .set_nonblocking(true)
            .map_err(TransportError::io("making the socket non-blocking"))?;
        let options = ReceiverOptions {
            config: with_backoff_floor(options.config),
            ..options
        };
        let tfrc = tfrc::Receiver::new(options.config.clone())
            .map_err(|err| crate::options::config_error(&err))?;
        let clock = Clock::new();
        let now = clock.now();
        let wake = Wake::new().map_err(TransportError::io("creating the wake-up eventfd"))?;
        let waiter = Waiter::new(Duration::ZERO)
            .map_err(TransportError::io("creating the feedback timer"))?;
        Ok(UdpReceiver {
            socket,
            clock,
            tfrc,
            peer: None,
            session: None,
            last_heard: now,
            highest_seq: None,
            sessions: 0,
            peer_changes: 0,
            retired: Totals::default(),
            input: InputStats::default(),
            send_errors: 0,
            recv_buf: vec![0; RECV_BUFFER],
            stop: Arc::new(AtomicBool::new(false)),
            wake: Arc::new(wake),
            live: Arc::new(Mutex::new(ReceiverReport::default())),
            waiter,
            samples: SampleLog::new(Time::ZERO, options.stats_interval),
            last_sample: (Totals::default(), 0),
            options,
        })
    }

    /// A handle that stops the loop from another thread.
    pub fn handle(&self) -> ReceiverHandle {
        ReceiverHandle {
            stop: Arc::clone(&self.stop),
            wake: Arc::clone(&self.wake),
            report: Arc::clone(&self.live),
        }
    }

    /// The local address of the socket.
    pub fn local_addr(&self) -> Result<SocketAddr, TransportError> {
        self.socket
            .local_addr()
            .map_err(TransportError::io("reading the local address"))
    }

    /// The session's clock (time zero when the receiver was made).
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// Runs the loop for `duration` from now; see [`UdpReceiver::run_until`].
    pub fn run_for(
        &mut self,
        duration: Duration,
        deliver: &mut dyn FnMut(&Delivery<'_>),
    ) -> Result<(), TransportError> {
        let end = self.clock.now() + duration;
        self.run_until(end, deliver)
    }

    /// Runs the loop until `end` on the session's clock, or until [`ReceiverHandle::stop`],
    /// handing every accepted payload to `deliver`. Every pass reads at most
    /// [`crate::sender::MAX_INPUT_BATCH`] datagrams, sends any feedback due, then sleeps until
    /// the feedback timer, the statistics interval or `end`, or until a datagram arrives.
    pub fn run_until(
        &mut self,
        end: Time,
        deliver: &mut dyn FnMut(&Delivery<'_>),
    ) -> Result<(), TransportError> {
        loop {
            let now = self.clock.now();
            if self.samples.due(now) {
                // Before the end check, so an interval ending with the session is recorded.
                self.take_sample(now);
            }
            if now >= end || self.stop.load(Ordering::Acquire) {
                return Ok(());
            }
            self.read_input(deliver);
            let now = self.clock.now();
            self.tfrc.handle_timeout(now);
            self.send_feedback(now);
            *self.live.lock().unwrap_or_else(|e| e.into_inner()) = self.report();
            let mut deadline = end.min(self.samples.next_due());
            if let Some(t) = self.tfrc.poll_timeout() {
                deadline = deadline.min(t);
            }
            // The receiver always reads: an unfinished batch leaves the socket readable anyway.
            self.waiter
                .wait_until(&self.clock, &self.socket, &self.wake, deadline)
                .map_err(TransportError::io("waiting for the next deadline"))?;
        }
    }

    fn read_input(&mut self, deliver: &mut dyn FnMut(&Delivery<'_>)) {
        // The buffer is moved out while payloads borrowed from it are delivered.
        let mut buf = std::mem::take(&mut self.recv_buf);
        self.read_batch(&mut buf, deliver);
        self.recv_buf = buf;
    }

    fn read_batch(&mut self, buf: &mut [u8], deliver: &mut dyn FnMut(&Delivery<'_>)) {
        for _ in 0..MAX_INPUT_BATCH {
            let (len, from) = match self.socket.recv_from(buf) {
                Ok(got) => got,
                Err(err) if err.kind() == std::io::ErrorKind::WouldBlock => return,
                Err(_) => {
                    self.input.socket_errors += 1;
                    return;
                }
            };
            let now = self.clock.now();
            self.input.datagrams += 1;
            let parsed = Packet::parse(&buf[..len]);
            self.input.wire.record(&parsed);
            let (session, header, payload) = match parsed {
                Ok(Packet::Data {
                    session,
                    header,
                    payload,
                }) => (session, header, payload),
                Ok(Packet::Feedback { .. }) => {
                    self.input.wrong_kind += 1;
                    log_dropped(now, "wrong_kind");
                    continue;
                }
                Err(_) => {
                    log_dropped(now, "malformed");
                    continue;
                }
            };
            if self.session == Some(session) {
                if self.peer != Some(from) {
                    // The session's sender moved (a NAT rebinding): feedback follows it.
                    self.peer = Some(from);
                    self.peer_changes += 1;
                }
            } else {
                let silence =
                    takeover_silence(self.tfrc.stats().rtt_s, self.options.peer_idle_timeout);
                if self.session.is_some() && now.saturating_since(self.last_heard) < silence {
                    self.input.other_session += 1;
                    log_dropped(now, "other_session");
                    continue;
                }
                // A first sender, a new one, or the same one restarted, after the current
                // session fell silent.
                self.peer = Some(from);
                self.session = Some(session);
                self.start_session();
                emit!(
                    info,
                    "tfrc_udp::receiver",
                    "session",
                    time_s = now.as_secs_f64(),
                    peer = from.to_string().as_str(),
                    sessions = self.sessions,
                );
            }
            self.last_heard = now;
            let (gap, late) = match self.highest_seq {
                Some(high) if header.seq > high => (header.seq - high - 1, false),
                Some(_) => (0, true),
                None => (0, false),
            };
            let received_before = self.tfrc.stats().packets_received;
            let loss_events_before = self.tfrc.stats().loss_events;
            let size = u32::try_from(len).unwrap_or(u32::MAX);
            self.tfrc.handle_data(now, &header, size, Ecn::NotCe);
            if self.tfrc.stats().loss_events != loss_events_before {
                let stats = self.tfrc.stats();
                emit!(
                    debug,
                    "tfrc_udp::receiver",
                    "loss_event",
                    time_s = now.as_secs_f64(),
                    p = stats.p,
                    lost_total = stats.packets_lost,
                    loss_events = stats.loss_events,
                );
            }
            if self.tfrc.stats().packets_received == received_before {
                // A duplicate or a packet older than the loss window: not delivered.
                continue;
            }
            self.highest_seq = Some(self.highest_seq.map_or(header.seq, |h| h.max(header.seq)));
            let stats = self.tfrc.stats();
            deliver(&Delivery {
                seq: header.seq,
                payload,
                arrival: now,
                sent: header.timestamp,
                gap,
                late,
                lost_total: stats.packets_lost,
                p: stats.p,
            });
        }
    }

    /// Replaces the TFRC receiver with a fresh one, keeping the finished session's counters.
    fn start_session(&mut self) {
        self.retired = self.retired.add(self.tfrc.stats());
        if let Ok(fresh) = tfrc::Receiver::new(self.options.config.clone()) {
            // The configuration was validated when the receiver was made.
            self.tfrc = fresh;
        }
        self.highest_seq = None;
        self.sessions += 1;
    }

    fn send_feedback(&mut self, now: Time) {
        let (Some(peer), Some(session)) = (self.peer, self.session) else {
            return;
        };
        let Some(report) = self.tfrc.poll_feedback(now) else {
            return;
        };
        let mut buf = [0u8; FEEDBACK_LEN];
        emit!(
            debug,
            "tfrc_udp::receiver",
            "feedback",
            time_s = now.as_secs_f64(),
            x_recv_bps = report.x_recv_bytes_per_s * 8.0,
            p = report.p,
        );
        match report.emit(session, &mut buf) {
            Ok(len) => {
                if self.socket.send_to(&buf[..len], peer).is_err() {
                    self.send_errors += 1;
                }
            }
            Err(_) => self.send_errors += 1,
        }
    }

    fn totals(&self) -> Totals {
        self.retired.add(self.tfrc.stats())
    }

    fn take_sample(&mut self, now: Time) {
        let totals = self.totals();
        let (last, last_dropped) = self.last_sample;
        let stats = self.tfrc.stats();
        let dropped = self.input.dropped();
        let row = ReceiverSample {
            time_s: self.samples.sample_time_s(),
            received_packets: totals.packets - last.packets,
            received_bytes: totals.bytes - last.bytes,
            lost_packets: totals.lost - last.lost,
            loss_events: totals.loss_events - last.loss_events,
            p: stats.p,
            x_recv_bytes_per_s: stats.x_recv_bytes_per_s,
            rtt_s: stats.rtt_s,
            feedback_sent: totals.feedback - last.feedback,
            input_dropped: dropped - last_dropped,
        };
        self.last_sample = (totals, dropped);
        self.samples.push(now, row);
    }

    /// Per-interval samples not kept: a session keeps at most
    /// [`crate::samples::MAX_SAMPLES`].
    pub fn samples_dropped(&self) -> u64 {
        self.samples.dropped()
    }

    /// The per-interval statistics so far, oldest first (at most
    /// [`crate::samples::MAX_SAMPLES`]).
    pub fn samples(&self) -> &[ReceiverSample] {
        self.samples.rows()
    }

    /// Everything counted so far.
    pub fn report(&self) -> ReceiverReport {
        let totals = self.totals();
        ReceiverReport {
            time: self.clock.now(),
            tfrc: *self.tfrc.stats(),
            input: self.input,
            sessions: self.sessions,
            peer_changes: self.peer_changes,
            packets_received: totals.packets,
            bytes_received: totals.bytes,
            packets_lost: totals.lost,
            feedback_sent: totals.feedback,
            send_errors: self.send_errors,
            peer: self.peer,
        }
    }
}
