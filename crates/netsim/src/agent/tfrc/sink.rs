//! The TFRC sink: a [`tfrc::Receiver`] that is handed every data packet with its size and ECN
//! mark, and sends a feedback packet whenever the receiver yields one (RFC 5348 §5, §6).

use tfrc::{Ecn, Receiver, ReceiverStats, Time};

use super::TfrcAgentConfig;
use crate::agent::{Agent, Outbox};
use crate::packet::{Packet, Payload};

/// The sink's trace fields, prefixed `rx_` to keep them apart from the source's.
const FIELDS: &[&str] = &[
    "rx_p",
    "rx_x_recv_bps",
    "rx_loss_events",
    "rx_packets_lost",
    "rx_feedback_sent",
    "rx_mean_interval_packets",
    "rx_open_interval_packets",
    "rx_discount_factor",
    "rx_inv_theta_hat_sum",
    "rx_inv_theta_hat_samples",
];

/// The receiving end of a TFRC flow.
#[derive(Clone, Debug)]
pub struct TfrcSink {
    /// `None` only for a configuration the engine would have refused (the sink then absorbs).
    receiver: Option<Receiver>,
    feedback_size_bytes: u32,
}

impl TfrcSink {
    /// A sink for `config`.
    pub fn new(config: &TfrcAgentConfig) -> TfrcSink {
        TfrcSink {
            receiver: Receiver::new(config.tfrc.clone()).ok(),
            feedback_size_bytes: config.feedback_size_bytes,
        }
    }

    /// The receiver's counters and estimates.
    pub fn stats(&self) -> ReceiverStats {
        self.receiver
            .as_ref()
            .map(|r| *r.stats())
            .unwrap_or_default()
    }

    /// Sends every feedback packet the receiver has due.
    fn flush(&mut self, now: Time, out: &mut Outbox) {
        if let Some(receiver) = self.receiver.as_mut() {
            while let Some(feedback) = receiver.poll_feedback(now) {
                out.send(self.feedback_size_bytes, Payload::TfrcFeedback(feedback));
            }
        }
    }
}

impl Agent for TfrcSink {
    /// `rx_p`: the receiver's loss event rate; `rx_x_recv_bps`: the X_recv of its latest report,
    /// bits/s; `rx_loss_events`, `rx_packets_lost`, `rx_feedback_sent`: cumulative counts;
    /// `rx_mean_interval_packets` (I_mean), `rx_open_interval_packets` (I_0), in packets;
    /// `rx_discount_factor`: the history discount DF in force (1 without discounting);
    /// `rx_inv_theta_hat_sum`, `rx_inv_theta_hat_samples`: the cumulative sum of 1/theta_hat
    /// sampled at each loss event and its sample count, so that E[1/theta_hat] over any window
    /// is the difference of the sums over the difference of the counts (Rhee & Xu 2005 §5.3).
    fn trace_fields(&self) -> &'static [&'static str] {
        FIELDS
    }

    fn on_start(&mut self, _now: Time, _out: &mut Outbox) {}

    fn on_stop(&mut self, _now: Time, _out: &mut Outbox) {}

    fn handle_packet(&mut self, now: Time, packet: &Packet, out: &mut Outbox) {
        if let (Payload::TfrcData(data), Some(receiver)) = (&packet.payload, self.receiver.as_mut())
        {
            let ecn = if packet.ecn_ce { Ecn::Ce } else { Ecn::NotCe };
            let (header, round) = (data.header(), Some(data.round));
            receiver.handle_data_in_round(now, &header, packet.size_bytes, ecn, round);
            self.flush(now, out);
        }
    }

    fn poll_timeout(&self) -> Option<Time> {
        self.receiver.as_ref()?.poll_timeout()
    }

    fn handle_timeout(&mut self, now: Time, out: &mut Outbox) {
        if let Some(receiver) = self.receiver.as_mut() {
            receiver.handle_timeout(now);
        }
        self.flush(now, out);
    }

    fn trace(&self, values: &mut [f64]) {
        let s = self.stats();
        let row = [
            s.p,
            8.0 * s.x_recv_bytes_per_s,
            s.loss_events as f64,
            s.packets_lost as f64,
            s.feedback_sent as f64,
            s.mean_interval_packets,
            s.open_interval_packets,
            s.discount_factor,
            s.inv_theta_hat_sum,
            s.inv_theta_hat_samples as f64,
        ];
        for (value, x) in values.iter_mut().zip(row) {
            *value = x;
        }
    }
}
