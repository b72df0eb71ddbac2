//! A deterministic model of one TFRC flow between two *real* hosts, for the checks an ideal
//! clock cannot make. [`crate::harness`] and the simulator hand a report to the
//! receiver 0 ns after the arrival that triggers it and never pause an endpoint; a real host
//! reads a datagram microseconds to milliseconds after it arrived, reads them in batches, is
//! descheduled for tens of milliseconds at a time, and its clock reads are late by scheduling
//! noise. Here each of those is a seeded random draw:
//!
//! - the sender's loop wakes late on its timer, and each end reads a datagram a random
//!   processing delay after it reached the socket (1 µs to 2 ms by default);
//! - either loop may stall (10 to 200 ms) at a wake-up, then reads everything that queued up, at
//!   most [`HostTiming::batch`] datagrams per pass, as `tfrc-udp` does;
//! - every clock read is late by a random jitter and never goes back;
//! - data packets cross a bottleneck (rate, DropTail buffer in packets, propagation delay),
//!   may be lost at random before it and may be reordered after it; the receiver's socket
//!   buffer is bounded in bytes and drops what does not fit;
//! - spoofed data packets can be injected at the receiver at given times.
//!
//! The driver loop is the one of `tfrc-udp` (read input with a clock read per datagram, fire the
//! timers, send what the schedule allows, at most 64 packets per pass), so the properties that
//! hold here are the ones the transport needs. Everything is recorded on the true time line:
//! what the sender sent, what the bottleneck delivered, the sender's state at each accepted
//! report.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::time::Duration;

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::config::{ConfigError, TfrcConfig};
use crate::packet::{DataHeader, Ecn, FeedbackHeader};
use crate::receiver::Receiver;
use crate::sender::Sender;
use crate::time::{duration_from_secs, Time};

/// How the two hosts deviate from an ideal clock and an always-running process.
#[derive(Clone, Debug, PartialEq)]
pub struct HostTiming {
    /// The delay from a datagram reaching a socket to the loop reading it, uniform in
    /// [min, max] (a wake-up from `poll`, or the rest of a pass already under way).
    pub processing_delay: (Duration, Duration),
    /// How often each loop stalls, per second (a Poisson process: descheduled, a page fault,
    /// an application thread holding the core). The stall takes effect at the loop's next
    /// wake-up.
    pub stalls_per_s: f64,
    /// A stall's length, uniform in [min, max].
    pub stall: (Duration, Duration),
    /// Each clock read is late by a uniform draw in [0, this) and never earlier than the last.
    pub clock_jitter: Duration,
    /// The sender's pacing timer fires late by a uniform draw in [0, this) (a timerfd's
    /// lateness).
    pub wake_lateness: Duration,
    /// The most datagrams one pass of a loop reads (`tfrc-udp`: 64).
    pub batch: usize,
    /// The receiver's socket buffer in bytes; arrivals that do not fit are dropped.
    pub receive_buffer_bytes: u64,
    /// The chance that a data packet is held back after the bottleneck by
    /// [`HostTiming::reorder_delay`], so later packets overtake it.
    pub reorder_probability: f64,
    /// How long a reordered packet is held back.
    pub reorder_delay: Duration,
    /// Whether the receiver stamps each datagram with the time it reached the socket (the
    /// kernel's receive timestamp, `SO_TIMESTAMPNS`) instead of its clock when it reads it: a
    /// stall then no longer packs the datagrams that queued during it into one instant.
    pub kernel_arrival_stamps: bool,
}

impl HostTiming {
    /// An ideal host: no delays, stalls, jitter or reordering (the scripted harness's timing).
    pub fn ideal() -> Self {
        HostTiming {
            processing_delay: (Duration::ZERO, Duration::ZERO),
            stalls_per_s: 0.0,
            stall: (Duration::ZERO, Duration::ZERO),
            clock_jitter: Duration::ZERO,
            wake_lateness: Duration::ZERO,
            batch: 64,
            receive_buffer_bytes: u64::MAX,
            reorder_probability: 0.0,
            reorder_delay: Duration::ZERO,
            kernel_arrival_stamps: false,
        }
    }

    /// What the issue measured on Linux hosts: reads 1 µs to 2 ms after an arrival, stalls of
    /// 10 to 200 ms at `stalls_per_s` on each host, 20 µs of clock jitter, 50 µs of timer
    /// lateness, batches of 64, a 208 KiB socket buffer (Linux's default `rmem`), 0.5% of
    /// packets reordered by 1 ms. The receiver stamps arrivals with its clock when it reads
    /// them (see [`HostTiming::kernel_arrival_stamps`]).
    pub fn real(stalls_per_s: f64) -> Self {
        HostTiming {
            processing_delay: (Duration::from_micros(1), Duration::from_millis(2)),
            stalls_per_s,
            stall: (Duration::from_millis(10), Duration::from_millis(200)),
            clock_jitter: Duration::from_micros(20),
            wake_lateness: Duration::from_micros(50),
            batch: 64,
            receive_buffer_bytes: 212_992,
            reorder_probability: 0.005,
            reorder_delay: Duration::from_millis(1),
            kernel_arrival_stamps: false,
        }
    }
}

/// The path between the hosts: one bottleneck with a DropTail queue on the data direction,
/// random loss before it, and the same propagation delay each way.
#[derive(Clone, Debug, PartialEq)]
pub struct PathConfig {
    /// The bottleneck's rate, bytes/s.
    pub bottleneck_bytes_per_s: f64,
    /// Its queue, in packets (not counting the one being sent).
    pub buffer_packets: usize,
    /// One-way propagation delay (each direction).
    pub one_way_delay: Duration,
    /// The chance that a data packet is lost before the bottleneck.
    pub loss: f64,
}

/// What the sending application offers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Application {
    /// Always has data.
    Greedy,
    /// Produces full-size packets at a constant rate into a queue of 256 packets (a media
    /// encoder following its own rate).
    ConstantRate {
        /// The application's rate, bytes/s.
        bytes_per_s: f64,
    },
}

/// A data packet forged by someone off the path who knows the sender's address (and so passes
/// any address check), delivered to the receiver's socket at `at`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpoofedData {
    /// When it reaches the receiver's socket.
    pub at: Time,
    /// Its sequence number, relative to the sender's next one (negative: behind).
    pub seq_offset: i64,
    /// Its timestamp; `None` for a plausible one (the sender's clock at `at`).
    pub timestamp: Option<Time>,
    /// Its RTT field.
    pub rtt: Duration,
}

/// The sender's state when it accepted a report, on the true time line.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SenderRecord {
    /// True time.
    pub time: Time,
    /// The allowed rate X, bytes/s.
    pub x_bytes_per_s: f64,
    /// The X_recv of the report.
    pub x_recv_bytes_per_s: f64,
    /// The loss event rate of the report.
    pub p: f64,
    /// The sender's smoothed R, seconds.
    pub rtt_s: f64,
}

/// Everything a run configures.
#[derive(Clone, Debug, PartialEq)]
pub struct RealHostConfig {
    /// The sender's TFRC configuration.
    pub sender: TfrcConfig,
    /// The receiver's (presets are not negotiated: the two may differ).
    pub receiver: TfrcConfig,
    /// The path.
    pub path: PathConfig,
    /// Both hosts' timing.
    pub timing: HostTiming,
    /// The application.
    pub application: Application,
    /// Spoofed packets to inject.
    pub spoofed: Vec<SpoofedData>,
    /// Seed of every draw.
    pub seed: u64,
}

/// The most packets the constant-rate application queues.
const APPLICATION_QUEUE: usize = 256;

/// One of the two hosts' loops.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Host {
    Sender,
    Receiver,
}

/// A host loop's scheduling state: its pending wake-up, when it may next run (a stall pushes
/// that out), and when its next stall starts.
#[derive(Clone, Copy, Debug)]
struct HostLoop {
    wake: Option<Time>,
    free_at: Time,
    next_stall: Time,
}

impl HostLoop {
    /// Asks the loop to run at `at` (or when its stall ends); the time to schedule a wake-up
    /// at, unless one at or before it is pending already.
    fn request(&mut self, at: Time) -> Option<Time> {
        let at = at.max(self.free_at);
        if self.wake.is_some_and(|pending| pending <= at) {
            return None;
        }
        self.wake = Some(at);
        Some(at)
    }

    /// Whether a wake-up event at `now` is the pending one (later requests make earlier
    /// events stale); it is consumed if so.
    fn take(&mut self, now: Time) -> bool {
        if self.wake != Some(now) {
            return false;
        }
        self.wake = None;
        true
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    Wake(Host),
    BottleneckDone,
    DataArrival(usize),
    FeedbackArrival(usize),
}

/// A clock that reads true time plus an origin, late by jitter, never going back.
#[derive(Clone, Copy, Debug)]
struct JitteredClock {
    origin: Duration,
    last: Time,
}

impl JitteredClock {
    fn read(&mut self, true_time: Time, jitter: Duration, rng: &mut Xoshiro256PlusPlus) -> Time {
        let late = uniform(rng, Duration::ZERO, jitter);
        let reading = (true_time + self.origin + late).max(self.last);
        self.last = reading;
        reading
    }

    /// The true time at which this clock reads `reading` (ignoring jitter).
    fn true_time(&self, reading: Time) -> Time {
        Time::from_nanos(
            reading
                .as_nanos()
                .saturating_sub(self.origin.as_nanos() as u64),
        )
    }
}

/// A uniform draw in [lo, hi].
fn uniform(rng: &mut Xoshiro256PlusPlus, lo: Duration, hi: Duration) -> Duration {
    if hi <= lo {
        return lo;
    }
    let span = (hi - lo).as_nanos() as u64;
    lo + Duration::from_nanos(rng.next_u64() % (span + 1))
}

/// A draw in [0, 1).
fn unit(rng: &mut Xoshiro256PlusPlus) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// One flow between two modelled hosts (see the module documentation).
pub struct RealHostHarness {
    config: RealHostConfig,
    sender: Sender,
    receiver: Receiver,
    rng: Xoshiro256PlusPlus,
    now: Time,
    events: BinaryHeap<Reverse<(Time, u64, Event)>>,
    event_count: u64,
    sender_clock: JitteredClock,
    receiver_clock: JitteredClock,
    sender_loop: HostLoop,
    receiver_loop: HostLoop,
    /// Datagrams in flight or queued, by slot (freed slots are reused).
    data_slots: Vec<Option<(DataHeader, u32)>>,
    feedback_slots: Vec<Option<FeedbackHeader>>,
    bottleneck: VecDeque<usize>,
    bottleneck_busy: bool,
    /// Datagrams queued at the receiver's socket, with the true time each reached it.
    receiver_socket: VecDeque<(usize, Time)>,
    receiver_socket_bytes: u64,
    sender_socket: VecDeque<usize>,
    app_queue: usize,
    app_credit: f64,
    app_last: Time,
    spoofed_next: usize,
    sent: Vec<(Time, u32)>,
    delivered: Vec<(Time, u32)>,
    records: Vec<SenderRecord>,
    queue_drops: u64,
    socket_drops: u64,
    random_losses: u64,
    first_feedback: Option<Time>,
    stalls: Vec<(Time, Time)>,
}

impl RealHostHarness {
    /// A run at true time zero: the sender's first packet is due at once.
    pub fn new(config: RealHostConfig) -> Result<Self, ConfigError> {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(config.seed);
        // The two clocks have unrelated origins, as two hosts' monotonic clocks do.
        let sender_clock = JitteredClock {
            origin: Duration::from_millis(1 + rng.next_u64() % 10_000),
            last: Time::ZERO,
        };
        let receiver_clock = JitteredClock {
            origin: Duration::from_millis(1 + rng.next_u64() % 10_000),
            last: Time::ZERO,
        };
        let start = Time::ZERO + sender_clock.origin;
        let sender = Sender::new(config.sender.clone(), start)?;
        let receiver = Receiver::new(config.receiver.clone())?;
        let idle = HostLoop {
            wake: None,
            free_at: Time::ZERO,
            next_stall: Time::MAX,
        };
        let mut harness = RealHostHarness {
            sender,
            receiver,
            rng,
            now: Time::ZERO,
            events: BinaryHeap::new(),
            event_count: 0,
            sender_clock,
            receiver_clock,
            sender_loop: idle,
            receiver_loop: idle,
            data_slots: Vec::new(),
            feedback_slots: Vec::new(),
            bottleneck: VecDeque::new(),
            bottleneck_busy: false,
            receiver_socket: VecDeque::new(),
            receiver_socket_bytes: 0,
            sender_socket: VecDeque::new(),
            app_queue: 0,
            app_credit: 0.0,
            app_last: Time::ZERO,
            spoofed_next: 0,
            sent: Vec::new(),
            delivered: Vec::new(),
            records: Vec::new(),
            queue_drops: 0,
            socket_drops: 0,
            random_losses: 0,
            first_feedback: None,
            stalls: Vec::new(),
            config,
        };
        harness.config.spoofed.sort_by_key(|spoof| spoof.at);
        harness.sender_loop.next_stall = harness.next_stall(Time::ZERO);
        harness.receiver_loop.next_stall = harness.next_stall(Time::ZERO);
        harness.wake(Host::Sender, Time::ZERO);
        Ok(harness)
    }

    /// Runs every event up to and including `end` (true time).
    pub fn run_until(&mut self, end: Time) {
        loop {
            let next_spoof = self.config.spoofed.get(self.spoofed_next).map(|s| s.at);
            let next_event = self.events.peek().map(|Reverse((t, _, _))| *t);
            match (next_spoof, next_event) {
                (Some(ts), next) if ts <= end && next.is_none_or(|te| ts <= te) => {
                    self.now = ts;
                    self.inject_spoof();
                }
                (_, Some(te)) if te <= end => {
                    let Some(Reverse((t, _, event))) = self.events.pop() else {
                        break;
                    };
                    self.now = t;
                    self.handle(event);
                }
                _ => break,
            }
        }
        self.now = self.now.max(end);
    }

    /// The sender's state at every accepted report.
    pub fn records(&self) -> &[SenderRecord] {
        &self.records
    }

    /// Every data packet the sender sent: (true time, bytes).
    pub fn sent(&self) -> &[(Time, u32)] {
        &self.sent
    }

    /// Every data packet the bottleneck delivered: (true time it left the bottleneck, bytes).
    pub fn delivered(&self) -> &[(Time, u32)] {
        &self.delivered
    }

    /// When the sender accepted its first report (true time).
    pub fn first_feedback(&self) -> Option<Time> {
        self.first_feedback
    }

    /// Every stall of either host: (start, end), true time.
    pub fn stalls(&self) -> &[(Time, Time)] {
        &self.stalls
    }

    /// Packets dropped by the bottleneck's full queue.
    pub fn queue_drops(&self) -> u64 {
        self.queue_drops
    }

    /// Packets dropped by the receiver's full socket buffer.
    pub fn socket_drops(&self) -> u64 {
        self.socket_drops
    }

    /// Packets lost at random before the bottleneck.
    pub fn random_losses(&self) -> u64 {
        self.random_losses
    }

    /// The sender.
    pub fn sender(&self) -> &Sender {
        &self.sender
    }

    /// The receiver.
    pub fn receiver(&self) -> &Receiver {
        &self.receiver
    }

    fn schedule(&mut self, at: Time, event: Event) {
        self.event_count += 1;
        self.events.push(Reverse((at, self.event_count, event)));
    }

    /// When a loop's next stall starts, an exponential draw after `after` (never without a
    /// rate).
    fn next_stall(&mut self, after: Time) -> Time {
        let rate = self.config.timing.stalls_per_s;
        if rate <= 0.0 {
            return Time::MAX;
        }
        let gap = -(1.0 - unit(&mut self.rng)).ln() / rate;
        after + duration_from_secs(gap)
    }

    fn host_loop(&mut self, host: Host) -> &mut HostLoop {
        match host {
            Host::Sender => &mut self.sender_loop,
            Host::Receiver => &mut self.receiver_loop,
        }
    }

    /// Asks a host's loop to run at `at` (or when its stall ends).
    fn wake(&mut self, host: Host, at: Time) {
        if let Some(at) = self.host_loop(host).request(at) {
            self.schedule(at, Event::Wake(host));
        }
    }

    /// A host's loop woke at `self.now`: if its next stall is due, it is descheduled for the
    /// stall's length instead of running; otherwise it runs one pass.
    fn on_wake(&mut self, host: Host) {
        let now = self.now;
        if !self.host_loop(host).take(now) {
            return;
        }
        if now < self.host_loop(host).next_stall {
            match host {
                Host::Sender => self.sender_pass(),
                Host::Receiver => self.receiver_pass(),
            }
            return;
        }
        let (lo, hi) = self.config.timing.stall;
        let until = now + uniform(&mut self.rng, lo, hi);
        self.stalls.push((now, until));
        let next = self.next_stall(until);
        let state = self.host_loop(host);
        state.free_at = until;
        state.next_stall = next;
        self.wake(host, until);
    }

    fn processing_delay(&mut self) -> Duration {
        let (lo, hi) = self.config.timing.processing_delay;
        uniform(&mut self.rng, lo, hi)
    }

    fn handle(&mut self, event: Event) {
        match event {
            Event::Wake(host) => self.on_wake(host),
            Event::BottleneckDone => self.bottleneck_done(),
            Event::DataArrival(slot) => self.data_arrival(slot),
            Event::FeedbackArrival(slot) => {
                self.sender_socket.push_back(slot);
                let at = self.now + self.processing_delay();
                self.wake(Host::Sender, at);
            }
        }
    }

    /// One pass of the sender's loop, as `tfrc-udp` runs it.
    fn sender_pass(&mut self) {
        let jitter = self.config.timing.clock_jitter;
        for _ in 0..self.config.timing.batch {
            let Some(slot) = self.sender_socket.pop_front() else {
                break;
            };
            let Some(report) = self.feedback_slots[slot].take() else {
                continue;
            };
            let now = self.sender_clock.read(self.now, jitter, &mut self.rng);
            if self.sender.handle_feedback(now, &report).is_ok() {
                self.first_feedback.get_or_insert(self.now);
                let stats = self.sender.stats();
                self.records.push(SenderRecord {
                    time: self.now,
                    x_bytes_per_s: stats.x_bytes_per_s,
                    x_recv_bytes_per_s: stats.x_recv_bytes_per_s,
                    p: stats.p,
                    rtt_s: stats.rtt_s,
                });
            }
        }
        let now = self.sender_clock.read(self.now, jitter, &mut self.rng);
        self.sender.handle_timeout(now);
        self.generate();
        for _ in 0..64 {
            let stamp = self.sender_clock.read(self.now, jitter, &mut self.rng);
            let has_data = match self.config.application {
                Application::Greedy => true,
                Application::ConstantRate { .. } => self.app_queue > 0,
            };
            let Some(header) = self.sender.poll_transmit(stamp, has_data) else {
                break;
            };
            if let Application::ConstantRate { .. } = self.config.application {
                self.app_queue -= 1;
            }
            self.send_data(header);
        }
        if !self.sender_socket.is_empty() {
            self.wake(Host::Sender, self.now);
        }
        let mut next = self
            .sender
            .poll_timeout()
            .map(|t| self.sender_clock.true_time(t));
        if let Application::ConstantRate { bytes_per_s } = self.config.application {
            if self.app_queue == 0 {
                let s = f64::from(self.config.sender.segment_size_bytes);
                let missing = (s - self.app_credit).max(0.0);
                let ready = self.now + duration_from_secs(missing / bytes_per_s);
                next = Some(next.map_or(ready, |t| t.min(ready)));
            }
        }
        if let Some(at) = next {
            let late = uniform(
                &mut self.rng,
                Duration::ZERO,
                self.config.timing.wake_lateness,
            );
            self.wake(Host::Sender, at.max(self.now) + late);
        }
    }

    /// Tops up the constant-rate application's queue.
    fn generate(&mut self) {
        let Application::ConstantRate { bytes_per_s } = self.config.application else {
            return;
        };
        let s = f64::from(self.config.sender.segment_size_bytes);
        let elapsed = self.now.saturating_since(self.app_last).as_secs_f64();
        self.app_last = self.now;
        self.app_credit += bytes_per_s * elapsed;
        while self.app_credit >= s {
            self.app_credit -= s;
            if self.app_queue < APPLICATION_QUEUE {
                self.app_queue += 1;
            }
        }
    }

    fn send_data(&mut self, header: DataHeader) {
        let size = self.config.sender.segment_size_bytes;
        self.sent.push((self.now, size));
        if self.config.path.loss > 0.0 && unit(&mut self.rng) < self.config.path.loss {
            self.random_losses += 1;
            return;
        }
        if self.bottleneck.len() > self.config.path.buffer_packets {
            self.queue_drops += 1;
            return;
        }
        let slot = self.store_data(header, size);
        self.bottleneck.push_back(slot);
        if !self.bottleneck_busy {
            self.start_serialization();
        }
    }

    fn store_data(&mut self, header: DataHeader, size: u32) -> usize {
        match self.data_slots.iter().position(Option::is_none) {
            Some(free) => {
                self.data_slots[free] = Some((header, size));
                free
            }
            None => {
                self.data_slots.push(Some((header, size)));
                self.data_slots.len() - 1
            }
        }
    }

    fn start_serialization(&mut self) {
        let Some(&slot) = self.bottleneck.front() else {
            self.bottleneck_busy = false;
            return;
        };
        let size = self.data_slots[slot].map_or(0, |(_, size)| size);
        let time = duration_from_secs(f64::from(size) / self.config.path.bottleneck_bytes_per_s);
        self.bottleneck_busy = true;
        self.schedule(self.now + time, Event::BottleneckDone);
    }

    fn bottleneck_done(&mut self) {
        if let Some(slot) = self.bottleneck.pop_front() {
            let size = self.data_slots[slot].map_or(0, |(_, size)| size);
            self.delivered.push((self.now, size));
            let mut delay = self.config.path.one_way_delay;
            if self.config.timing.reorder_probability > 0.0
                && unit(&mut self.rng) < self.config.timing.reorder_probability
            {
                delay += self.config.timing.reorder_delay;
            }
            self.schedule(self.now + delay, Event::DataArrival(slot));
        }
        self.start_serialization();
    }

    fn data_arrival(&mut self, slot: usize) {
        let size = self.data_slots[slot].map_or(0, |(_, size)| u64::from(size));
        if self.receiver_socket_bytes + size > self.config.timing.receive_buffer_bytes {
            self.socket_drops += 1;
            self.data_slots[slot] = None;
            return;
        }
        self.receiver_socket_bytes += size;
        self.receiver_socket.push_back((slot, self.now));
        let at = self.now + self.processing_delay();
        self.wake(Host::Receiver, at);
    }

    fn inject_spoof(&mut self) {
        let spoof = self.config.spoofed[self.spoofed_next];
        self.spoofed_next += 1;
        let next_seq = self.sender.stats().packets_sent as i64;
        let seq = next_seq.saturating_add(spoof.seq_offset).max(0) as u64;
        let timestamp = spoof.timestamp.unwrap_or_else(|| {
            self.sender_clock
                .read(self.now, Duration::ZERO, &mut self.rng)
        });
        let header = DataHeader {
            seq,
            timestamp,
            rtt: spoof.rtt,
        };
        let size = self.config.sender.segment_size_bytes;
        let slot = self.store_data(header, size);
        self.schedule(self.now, Event::DataArrival(slot));
    }

    /// One pass of the receiver's loop, as `tfrc-udp` runs it.
    fn receiver_pass(&mut self) {
        let jitter = self.config.timing.clock_jitter;
        for _ in 0..self.config.timing.batch {
            let Some((slot, arrived)) = self.receiver_socket.pop_front() else {
                break;
            };
            let Some((header, size)) = self.data_slots[slot].take() else {
                continue;
            };
            self.receiver_socket_bytes -= u64::from(size);
            let mut now = self.receiver_clock.read(self.now, jitter, &mut self.rng);
            if self.config.timing.kernel_arrival_stamps {
                now = now.min(arrived + self.receiver_clock.origin);
            }
            self.receiver.handle_data(now, &header, size, Ecn::NotCe);
        }
        let now = self.receiver_clock.read(self.now, jitter, &mut self.rng);
        self.receiver.handle_timeout(now);
        if let Some(report) = self.receiver.poll_feedback(now) {
            let slot = match self.feedback_slots.iter().position(Option::is_none) {
                Some(free) => {
                    self.feedback_slots[free] = Some(report);
                    free
                }
                None => {
                    self.feedback_slots.push(Some(report));
                    self.feedback_slots.len() - 1
                }
            };
            let at = self.now + self.config.path.one_way_delay;
            self.schedule(at, Event::FeedbackArrival(slot));
        }
        if !self.receiver_socket.is_empty() {
            self.wake(Host::Receiver, self.now);
        } else if let Some(t) = self.receiver.poll_timeout() {
            let at = self.receiver_clock.true_time(t).max(self.now);
            self.wake(Host::Receiver, at);
        }
    }
}

/// Bytes in `log` (time-sorted (time, bytes) pairs) with times in (from, to].
pub fn bytes_between(log: &[(Time, u32)], from: Time, to: Time) -> u64 {
    let start = log.partition_point(|&(t, _)| t <= from);
    let end = log.partition_point(|&(t, _)| t <= to);
    log[start..end].iter().map(|&(_, b)| u64::from(b)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(timing: HostTiming) -> RealHostConfig {
        RealHostConfig {
            sender: TfrcConfig::rfc5348(),
            receiver: TfrcConfig::rfc5348(),
            path: PathConfig {
                bottleneck_bytes_per_s: 1.25e6,
                buffer_packets: 50,
                one_way_delay: Duration::from_millis(25),
                loss: 0.0,
            },
            timing,
            application: Application::Greedy,
            spoofed: Vec::new(),
            seed: 7,
        }
    }

    #[test]
    fn an_ideal_host_fills_the_bottleneck() {
        let mut harness = RealHostHarness::new(config(HostTiming::ideal())).unwrap();
        harness.run_until(Time::from_secs_f64(10.0));
        let delivered = bytes_between(
            harness.delivered(),
            Time::from_secs_f64(5.0),
            Time::from_secs_f64(10.0),
        );
        let utilization = delivered as f64 / (5.0 * 1.25e6);
        assert!(utilization > 0.9, "{utilization}");
    }

    #[test]
    fn runs_are_deterministic() {
        let run = || {
            let mut harness = RealHostHarness::new(config(HostTiming::real(1.0))).unwrap();
            harness.run_until(Time::from_secs_f64(5.0));
            (harness.sent().to_vec(), harness.records().to_vec())
        };
        assert_eq!(run(), run());
    }

    #[test]
    fn the_application_limits_a_constant_rate_sender() {
        let mut cfg = config(HostTiming::real(0.0));
        cfg.application = Application::ConstantRate {
            bytes_per_s: 100_000.0,
        };
        let mut harness = RealHostHarness::new(cfg).unwrap();
        harness.run_until(Time::from_secs_f64(10.0));
        let sent = bytes_between(
            harness.sent(),
            Time::from_secs_f64(2.0),
            Time::from_secs_f64(10.0),
        );
        let rate = sent as f64 / 8.0;
        assert!((rate / 100_000.0 - 1.0).abs() < 0.05, "{rate}");
    }
}
