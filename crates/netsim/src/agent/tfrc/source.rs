//! The TFRC source: a [`tfrc::Sender`] fed by a greedy or application-limited application
//! (RFC 5348 §4, §8).
//!
//! The sender is created at the application's first start (its clock and send schedule begin
//! there). At every callback the source runs the sender's nofeedback timer, moves the
//! application's data into the send buffer, then sends a data packet for every opportunity
//! `poll_transmit` grants. `on_stop` means the application has no more data: the sender stays
//! alive as an idle (data-limited) sender, its nofeedback timer still running as in ns-2, whose
//! `stop()` cancels only the send timer; a later `on_start` (ON/OFF) resumes the same
//! connection under RFC 5348's idle and data-limited rules, unsent application data having been
//! discarded at the stop.

use tfrc::time::duration_nanos;
use tfrc::{Sender, SenderStats, Time};

use super::TfrcAgentConfig;
use crate::agent::{Agent, Outbox};
use crate::packet::{Packet, Payload, TfrcData};
use crate::rng::SimRng;

/// The source's trace fields (docs/tfrc.md, "In the simulator"): rates in bits per second,
/// times in seconds, counters cumulative.
const FIELDS: &[&str] = &[
    "x_bps",
    "x_calc_bps",
    "x_recv_bps",
    "x_inst_bps",
    "p",
    "rtt_s",
    "rtt_sample_s",
    "t_rto_s",
    "packets_sent",
    "feedback_received",
    "nofeedback_expiries",
    "app_buffer_packets",
];

/// The application side of an application-limited source: a CBR stream into a send buffer.
#[derive(Clone, Copy, Debug)]
struct AppStream {
    /// Gap between the application's packets, ns.
    interval_ns: u64,
    /// When its next packet arrives (`None` while the application is stopped).
    next: Option<Time>,
    /// Packets waiting to be sent.
    buffered: u64,
}

impl AppStream {
    /// Moves every packet that arrived by `now` into the buffer.
    fn advance(&mut self, now: Time) {
        if let Some(next) = self.next {
            if next <= now {
                let arrivals = (now.as_nanos() - next.as_nanos()) / self.interval_ns + 1;
                self.buffered = self.buffered.saturating_add(arrivals);
                let after = next
                    .as_nanos()
                    .saturating_add(arrivals.saturating_mul(self.interval_ns));
                self.next = Some(Time::from_nanos(after));
            }
        }
    }
}

/// The sending end of a TFRC flow.
pub struct TfrcSource {
    config: TfrcAgentConfig,
    /// The agent's own random stream, handed to the sender for its gap dither at creation.
    rng: Option<SimRng>,
    sender: Option<Sender>,
    /// Whether the application is running (between `on_start` and `on_stop`).
    active: bool,
    /// `None` for a greedy source.
    app: Option<AppStream>,
}

impl std::fmt::Debug for TfrcSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TfrcSource")
            .field("config", &self.config)
            .field("sender", &self.sender)
            .field("active", &self.active)
            .field("app", &self.app)
            .finish_non_exhaustive()
    }
}

impl TfrcSource {
    /// A source that waits for [`Agent::on_start`]. `rng` is the agent's own stream; the sender
    /// draws from it only for the gap dither (`dither_fraction` > 0).
    pub fn new(config: &TfrcAgentConfig, rng: SimRng) -> TfrcSource {
        let app = config.application_interval().map(|gap| AppStream {
            interval_ns: duration_nanos(gap).max(1),
            next: None,
            buffered: 0,
        });
        TfrcSource {
            config: config.clone(),
            rng: Some(rng),
            sender: None,
            active: false,
            app,
        }
    }

    /// The sender's estimates and counters (zero before the first start).
    pub fn stats(&self) -> SenderStats {
        self.sender.as_ref().map(|s| *s.stats()).unwrap_or_default()
    }

    /// Application packets waiting in the send buffer (always 0 for a greedy source).
    pub fn buffered_packets(&self) -> u64 {
        self.app.map_or(0, |app| app.buffered)
    }

    /// Whether the application has data to send now.
    fn has_data(&self) -> bool {
        self.active && self.app.is_none_or(|app| app.buffered > 0)
    }

    /// Runs the nofeedback timer, fills the send buffer, and sends at every opportunity.
    fn pump(&mut self, now: Time, out: &mut Outbox) {
        if self.active {
            if let Some(app) = self.app.as_mut() {
                app.advance(now);
            }
        }
        let has_data = self.has_data();
        let Some(sender) = self.sender.as_mut() else {
            return;
        };
        sender.handle_timeout(now);
        let mut has_data = has_data;
        while let Some(header) = sender.poll_transmit(now, has_data) {
            let payload = Payload::TfrcData(TfrcData::new(&header, sender.round()));
            if self.config.ecn {
                out.send_ecn(self.config.size_bytes, payload);
            } else {
                out.send(self.config.size_bytes, payload);
            }
            if let Some(app) = self.app.as_mut() {
                app.buffered -= 1;
                has_data = app.buffered > 0;
            }
        }
    }
}

impl Agent for TfrcSource {
    /// `x_bps`, `x_calc_bps` (+inf while p = 0), `x_recv_bps`, `x_inst_bps`: the sender's
    /// rates in bits/s; `p`: the loss event rate last reported; `rtt_s`, `rtt_sample_s`,
    /// `t_rto_s`: R, the latest sample and the equation's t_RTO, seconds; `packets_sent`,
    /// `feedback_received`, `nofeedback_expiries`: cumulative counts; `app_buffer_packets`: the
    /// send buffer of an application-limited source.
    fn trace_fields(&self) -> &'static [&'static str] {
        FIELDS
    }

    fn on_start(&mut self, now: Time, out: &mut Outbox) {
        if self.active {
            return;
        }
        self.active = true;
        if let Some(app) = self.app.as_mut() {
            app.next = Some(now);
        }
        if self.sender.is_none() {
            // The engine validated the configuration when it built the flow; an invalid one
            // leaves the source silent rather than panicking.
            if let Ok(mut sender) = Sender::new(self.config.tfrc.clone(), now) {
                if let Some(rng) = self.rng.take() {
                    sender.set_dither_rng(Box::new(rng));
                }
                self.sender = Some(sender);
            }
        }
        self.pump(now, out);
    }

    fn on_stop(&mut self, now: Time, out: &mut Outbox) {
        self.active = false;
        if let Some(app) = self.app.as_mut() {
            app.next = None;
            app.buffered = 0;
        }
        self.pump(now, out);
    }

    fn handle_packet(&mut self, now: Time, packet: &Packet, out: &mut Outbox) {
        if let Payload::TfrcFeedback(feedback) = &packet.payload {
            if let Some(sender) = self.sender.as_mut() {
                // A rejected report is counted in the sender's stats; nothing else to do.
                let _ = sender.handle_feedback(now, feedback);
            }
            // A higher rate may bring the next packet forward.
            self.pump(now, out);
        }
    }

    fn poll_timeout(&self) -> Option<Time> {
        let sender = self.sender.as_ref()?.poll_timeout();
        // While the buffer is empty the sender waits for data: wake at the next arrival.
        let app = self
            .app
            .filter(|app| self.active && app.buffered == 0)
            .and_then(|app| app.next);
        match (sender, app) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn handle_timeout(&mut self, now: Time, out: &mut Outbox) {
        self.pump(now, out);
    }

    fn trace(&self, values: &mut [f64]) {
        let s = self.stats();
        let row = [
            8.0 * s.x_bytes_per_s,
            8.0 * s.x_calc_bytes_per_s,
            8.0 * s.x_recv_bytes_per_s,
            8.0 * s.x_inst_bytes_per_s,
            s.p,
            s.rtt_s,
            s.rtt_sample_s,
            s.t_rto_s,
            s.packets_sent as f64,
            s.feedback_received as f64,
            s.nofeedback_expiries as f64,
            self.buffered_packets() as f64,
        ];
        for (value, x) in values.iter_mut().zip(row) {
            *value = x;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn app_stream_counts_every_arrival_up_to_now() {
        let mut app = AppStream {
            interval_ns: 10,
            next: Some(Time::from_nanos(100)),
            buffered: 0,
        };
        app.advance(Time::from_nanos(99));
        assert_eq!(app.buffered, 0);
        app.advance(Time::from_nanos(100));
        assert_eq!((app.buffered, app.next), (1, Some(Time::from_nanos(110))));
        app.advance(Time::from_nanos(135));
        assert_eq!((app.buffered, app.next), (4, Some(Time::from_nanos(140))));
    }

    #[test]
    fn trace_has_one_value_per_field() {
        let source = TfrcSource::new(&TfrcAgentConfig::default(), crate::rng::stream(1, "t"));
        let mut values = vec![f64::NAN; source.trace_fields().len()];
        source.trace(&mut values);
        assert!(values.iter().all(|v| *v == 0.0), "{values:?}");
    }
}
