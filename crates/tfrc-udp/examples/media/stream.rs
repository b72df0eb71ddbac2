//! A media stream over tfrc-udp: a 30 fps encoder whose bitrate follows TFRC's allowed rate,
//! and a player that reassembles its frames. Shared by the `media` example's two commands and
//! by the test that runs them over loopback (`tests/media_example.rs`).
//!
//! Each frame is cut into full-size payloads, each starting with a 16-byte frame header
//! (big-endian: frame number u32, packet index u16, packet count u16, capture time u64 in µs on
//! the sender's clock). Every 30th frame is a key frame, queued at a higher priority; every
//! payload has a deadline of 100 ms, after which it is dropped rather than sent, and a frame's
//! payloads form a group that expires together.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use tfrc::Time;
use tfrc_udp::{
    BackgroundReceiver, BackgroundSender, QueueError, SendOptions, TransportError, UdpReceiver,
    UdpSender,
};

/// Frames per second.
pub const FPS: u32 = 30;
/// Bytes of frame header at the start of every payload.
pub const FRAME_HEADER: usize = 16;
/// Every this many frames is a key frame.
pub const KEY_INTERVAL: u32 = 30;
/// How long a payload may wait in the sender's queue.
pub const DEADLINE: Duration = Duration::from_millis(100);
/// How late (after its capture, beyond the path's base delay) a frame may complete and still
/// be shown.
pub const PLAYOUT: Duration = Duration::from_millis(200);
/// Key frames' priority (deltas have 0).
const KEY_PRIORITY: u8 = 3;
/// The window of the sending-rate series the start-up overshoot is read from.
const RATE_WINDOW: Duration = Duration::from_millis(100);
/// The start-up period the overshoot is read over.
const START_UP: Duration = Duration::from_secs(2);

/// What the sender did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SenderSummary {
    /// Frames the encoder produced.
    pub frames: u64,
    /// Frames with at least one payload refused by a full queue.
    pub frames_refused: u64,
    /// Payloads queued, refused (queue full), dropped at their deadline, and sent.
    pub payloads_queued: u64,
    /// See `payloads_queued`.
    pub payloads_refused: u64,
    /// See `payloads_queued`.
    pub payloads_expired: u64,
    /// See `payloads_queued`.
    pub payloads_sent: u64,
    /// The highest sending rate over a 100 ms window in the first 2 s, bits/s (datagrams).
    pub start_up_peak_bps: f64,
    /// The sending rate over the second half of the run, bits/s.
    pub steady_bps: f64,
    /// The path's rate if given, bits/s.
    pub path_bps: Option<f64>,
}

impl SenderSummary {
    /// One JSON object, with the overshoot (`start_up_peak_bps / path_bps`) and the steady
    /// fraction (`steady_bps / path_bps`) when the path's rate is known.
    pub fn json(&self) -> String {
        let ratio = |v: f64| match self.path_bps {
            Some(path) => format!("{:.4}", v / path),
            None => "null".to_owned(),
        };
        format!(
            "{{\"role\": \"send\", \"frames\": {}, \"frames_refused\": {}, \"payloads_queued\": {}, \
             \"payloads_refused\": {}, \"payloads_expired\": {}, \"payloads_sent\": {}, \
             \"start_up_peak_bps\": {:.0}, \"steady_bps\": {:.0}, \"path_bps\": {}, \
             \"start_up_overshoot\": {}, \"steady_fraction\": {}}}",
            self.frames,
            self.frames_refused,
            self.payloads_queued,
            self.payloads_refused,
            self.payloads_expired,
            self.payloads_sent,
            self.start_up_peak_bps,
            self.steady_bps,
            self.path_bps.map_or("null".to_owned(), |p| format!("{p:.0}")),
            ratio(self.start_up_peak_bps),
            ratio(self.steady_bps),
        )
    }
}

/// Encodes `frame`'s payload `index` of `count`, `size` bytes in all.
fn payload(frame: u32, index: u16, count: u16, capture: Time, size: usize) -> Vec<u8> {
    let mut bytes = vec![0u8; size.max(FRAME_HEADER)];
    bytes[0..4].copy_from_slice(&frame.to_be_bytes());
    bytes[4..6].copy_from_slice(&index.to_be_bytes());
    bytes[6..8].copy_from_slice(&count.to_be_bytes());
    bytes[8..16].copy_from_slice(&(capture.as_nanos() / 1_000).to_be_bytes());
    bytes
}

/// The frame header of a payload, if it has one: (frame, index, count, capture µs).
pub fn frame_header(bytes: &[u8]) -> Option<(u32, u16, u16, u64)> {
    let head = bytes.get(..FRAME_HEADER)?;
    let frame = u32::from_be_bytes(head[0..4].try_into().ok()?);
    let index = u16::from_be_bytes(head[4..6].try_into().ok()?);
    let count = u16::from_be_bytes(head[6..8].try_into().ok()?);
    let capture = u64::from_be_bytes(head[8..16].try_into().ok()?);
    Some((frame, index, count, capture))
}

/// Streams frames through `sender` for `duration`: each frame as many full payloads as the
/// allowed rate X gives it, up to the encoder's `max_bps` (min(X, max) / 30 in whole datagrams
/// of `datagram` bytes, rounded down, at least one).
pub fn send(
    sender: UdpSender,
    datagram: usize,
    duration: Duration,
    max_bps: f64,
    path_bps: Option<f64>,
) -> Result<SenderSummary, TransportError> {
    let clock = *sender.clock();
    let payload_size = datagram - tfrc::wire::DATA_HEADER_LEN;
    let session = BackgroundSender::spawn(sender)?;
    let app = session.handle();
    let start = Instant::now();
    let frames = (duration.as_secs_f64() * f64::from(FPS)).round() as u32;
    let mut summary = SenderSummary {
        path_bps,
        ..SenderSummary::default()
    };
    // (seconds since start, bytes sent): the sending-rate series.
    let mut sent = vec![(0.0, 0u64)];
    for frame in 0..frames {
        let due = Duration::from_secs_f64(f64::from(frame) / f64::from(FPS));
        std::thread::sleep(due.saturating_sub(start.elapsed()));
        let capture = clock.now();
        let target = app.allowed_rate_bytes_per_s().min(max_bps / 8.0);
        // Whole datagrams within X / 30: rounding up would ask for more than X, keep a backlog
        // and drive TFRC to probe for more.
        let count = ((target / f64::from(FPS)) / datagram as f64)
            .floor()
            .clamp(1.0, 256.0) as u16;
        // A frame's payloads expire together: a frame missing a part cannot be decoded.
        let options = SendOptions::default()
            .with_deadline(DEADLINE)
            .with_group(u64::from(frame));
        let options = if frame % KEY_INTERVAL == 0 {
            options.with_priority(KEY_PRIORITY)
        } else {
            options
        };
        let mut refused = false;
        for index in 0..count {
            match app.send_with(payload(frame, index, count, capture, payload_size), options) {
                Ok(_) => summary.payloads_queued += 1,
                Err(QueueError::Full) => {
                    summary.payloads_refused += 1;
                    refused = true;
                }
                Err(err) => unreachable!("payloads are built to fit: {err}"),
            }
        }
        summary.frames += 1;
        summary.frames_refused += u64::from(refused);
        sent.push((start.elapsed().as_secs_f64(), app.stats().bytes_sent));
    }
    // Let the last frame's payloads go (or expire) before closing.
    std::thread::sleep(DEADLINE);
    let report = session.close()?;
    sent.push((start.elapsed().as_secs_f64(), report.bytes_sent));
    summary.payloads_expired = report.queue.expired;
    summary.payloads_sent = report.queue.sent;
    summary.start_up_peak_bps = peak_rate(&sent, START_UP, RATE_WINDOW);
    let half = duration.as_secs_f64() / 2.0;
    let end = duration.as_secs_f64();
    summary.steady_bps = rate_between(&sent, half, end);
    Ok(summary)
}

/// The bytes sent by time `t` (s), interpolated in the series.
fn bytes_at(series: &[(f64, u64)], t: f64) -> f64 {
    let after = series.partition_point(|&(time, _)| time <= t);
    match (after.checked_sub(1).map(|i| series[i]), series.get(after)) {
        (Some((t0, b0)), Some(&(t1, b1))) if t1 > t0 => {
            b0 as f64 + (b1 as f64 - b0 as f64) * (t - t0) / (t1 - t0)
        }
        (Some((_, b0)), _) => b0 as f64,
        (None, _) => 0.0,
    }
}

/// The sending rate between `from` and `to` (s), bits/s.
fn rate_between(series: &[(f64, u64)], from: f64, to: f64) -> f64 {
    (bytes_at(series, to) - bytes_at(series, from)) * 8.0 / (to - from)
}

/// The highest rate over a `window` within the first `span` of the series, bits/s.
fn peak_rate(series: &[(f64, u64)], span: Duration, window: Duration) -> f64 {
    let (span, window) = (span.as_secs_f64(), window.as_secs_f64());
    let steps = (span / window * 4.0) as usize;
    (0..steps)
        .map(|k| k as f64 * window / 4.0)
        .filter(|&from| from + window <= span)
        .map(|from| rate_between(series, from, from + window))
        .fold(0.0, f64::max)
}

/// What the player saw.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReceiverSummary {
    /// Frames whose every payload arrived, and of them those that completed within
    /// [`PLAYOUT`] of their capture (beyond the path's base delay).
    pub frames_complete: u64,
    /// See `frames_complete`.
    pub frames_on_time: u64,
    /// Frames of which some payloads arrived, but not all.
    pub frames_incomplete: u64,
    /// Frame numbers up to the highest seen of which nothing arrived.
    pub frames_missing: u64,
    /// Payloads received.
    pub payloads: u64,
    /// One-way delay variation (arrival - sent, less its minimum), mean and maximum, ms.
    pub mean_delay_variation_ms: f64,
    /// See `mean_delay_variation_ms`.
    pub max_delay_variation_ms: f64,
}

impl ReceiverSummary {
    /// One JSON object.
    pub fn json(&self) -> String {
        format!(
            "{{\"role\": \"recv\", \"frames_complete\": {}, \"frames_on_time\": {}, \
             \"frames_incomplete\": {}, \"frames_missing\": {}, \"payloads\": {}, \
             \"mean_delay_variation_ms\": {:.3}, \"max_delay_variation_ms\": {:.3}}}",
            self.frames_complete,
            self.frames_on_time,
            self.frames_incomplete,
            self.frames_missing,
            self.payloads,
            self.mean_delay_variation_ms,
            self.max_delay_variation_ms,
        )
    }
}

/// One frame's arrivals.
struct FrameState {
    count: u16,
    got: u16,
    capture_ns: u64,
    last_arrival_ns: u64,
}

/// Plays what arrives at `receiver` for `duration`.
pub fn receive(
    receiver: UdpReceiver,
    duration: Duration,
) -> Result<ReceiverSummary, TransportError> {
    let session = BackgroundReceiver::spawn(receiver, 1 << 14)?;
    let end = Instant::now() + duration;
    let mut frames: HashMap<u32, FrameState> = HashMap::new();
    // arrival - sent per payload (ns, offset by the clocks' origins).
    let mut delays: Vec<i128> = Vec::new();
    let mut summary = ReceiverSummary::default();
    while let Some(left) = end.checked_duration_since(Instant::now()) {
        let Ok(got) = session.recv_timeout(left.min(Duration::from_millis(100))) else {
            continue;
        };
        let Some((frame, _, count, capture_us)) = frame_header(&got.payload) else {
            continue;
        };
        summary.payloads += 1;
        delays.push(i128::from(got.arrival.as_nanos()) - i128::from(got.sent.as_nanos()));
        let state = frames.entry(frame).or_insert(FrameState {
            count,
            got: 0,
            capture_ns: capture_us * 1_000,
            last_arrival_ns: 0,
        });
        state.got += 1;
        state.last_arrival_ns = got.arrival.as_nanos();
    }
    session.close()?;
    let base = delays.iter().copied().min().unwrap_or(0);
    for state in frames.values() {
        if state.got >= state.count {
            summary.frames_complete += 1;
            // arrival - capture, less the base delay (which includes the clocks' offset).
            let latency = i128::from(state.last_arrival_ns) - i128::from(state.capture_ns) - base;
            summary.frames_on_time += u64::from(latency <= PLAYOUT.as_nanos() as i128);
        } else {
            summary.frames_incomplete += 1;
        }
    }
    let highest = frames.keys().copied().max().map_or(0, |f| u64::from(f) + 1);
    summary.frames_missing = highest - frames.len() as u64;
    if !delays.is_empty() {
        let variation: Vec<f64> = delays.iter().map(|d| (d - base) as f64 * 1e-6).collect();
        summary.mean_delay_variation_ms = variation.iter().sum::<f64>() / variation.len() as f64;
        summary.max_delay_variation_ms = variation.iter().copied().fold(0.0, f64::max);
    }
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_frame_header_round_trips() {
        let p = payload(7, 2, 5, Time::from_nanos(3_000_000), 100);
        assert_eq!(frame_header(&p), Some((7, 2, 5, 3_000)));
        assert_eq!(frame_header(&p[..10]), None);
    }

    #[test]
    fn rates_are_read_from_the_series() {
        let series = [(0.0, 0), (1.0, 1000), (2.0, 1000), (3.0, 4000)];
        assert_eq!(rate_between(&series, 0.0, 1.0), 8000.0);
        assert_eq!(rate_between(&series, 1.0, 2.0), 0.0);
        assert_eq!(rate_between(&series, 2.5, 3.0), 24_000.0);
        assert_eq!(
            peak_rate(&series, Duration::from_secs(3), Duration::from_secs(1)),
            24_000.0
        );
    }
}
