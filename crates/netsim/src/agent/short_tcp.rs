//! Short TCP flows (`kind = "short_tcp"`; docs/web.md): connections of a few packets arriving as
//! a renewal process, Poisson by default, as floyd2000 §4.2 loads its bottleneck ("20% of the
//! link bandwidth is used by short TCP flows, where for each flow the number of packets to
//! transmit is randomly chosen between zero and twenty"). One flow of the scenario carries all
//! of them: the source holds a [`TcpPool`] of senders, the sink a pool of receivers.

use tfrc::time::duration_from_secs;
use tfrc::Time;

use super::tcp::TcpConfig;
use super::tcp_pool::{PoolEvent, TcpPool};
use super::{Agent, Outbox};
use crate::packet::Packet;
use crate::randvar::RandomVariable;
use crate::rng::SimRng;

/// A short-flow process.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShortTcpConfig {
    /// Every connection's TCP (its `max_packets` is the connection's size).
    pub tcp: TcpConfig,
    /// Data packets per connection, rounded up to at least 1 (uniform on [0, 20] by default:
    /// floyd2000's "between zero and twenty", 1 to 20 packets, mean 10.5).
    pub size: RandomVariable,
    /// Seconds between connection arrivals (exponential: Poisson arrivals).
    pub interarrival: RandomVariable,
}

impl ShortTcpConfig {
    /// The mean offered load in bits per second: mean packets per connection × data packet
    /// bytes × 8 / mean inter-arrival time (SYNs, ACKs and retransmissions not counted).
    pub fn offered_load_bps(&self) -> f64 {
        self.size.mean_ceil() * f64::from(self.tcp.data_packet_bytes()) * 8.0
            / self.interarrival.mean()
    }

    /// Checks the TCP keys and the distributions; the text names the key.
    pub fn validate(&self) -> Result<(), String> {
        self.tcp.validate().map_err(|e| e.to_string())?;
        self.size
            .validate()
            .map_err(|(key, what)| format!("packets.{key}: expected {what}"))?;
        self.interarrival
            .validate()
            .map_err(|(key, what)| format!("interarrival.{key}: expected {what}"))?;
        let mean = self.interarrival.mean();
        if mean.is_nan() || mean < super::web::MIN_MEAN_GAP_SECS {
            return Err("interarrival: expected a mean of at least 1 µs".into());
        }
        Ok(())
    }
}

/// The opening end: draws arrivals and sizes, opens a connection per arrival.
#[derive(Debug)]
pub struct ShortTcpSource {
    config: ShortTcpConfig,
    rng: SimRng,
    pool: TcpPool,
    next_arrival: Option<Time>,
    next_id: u32,
}

impl ShortTcpSource {
    /// A source with its own stream, waiting for [`Agent::on_start`].
    pub fn new(config: &ShortTcpConfig, rng: SimRng) -> ShortTcpSource {
        ShortTcpSource {
            config: *config,
            rng,
            pool: TcpPool::new(&config.tcp),
            next_arrival: None,
            next_id: 0,
        }
    }

    fn draw_arrival(&mut self, now: Time) -> Time {
        now + duration_from_secs(self.config.interarrival.sample(&mut self.rng))
    }
}

impl Agent for ShortTcpSource {
    /// `conns_opened`, `conns_completed` (every packet acked), `conns_active`,
    /// `packets_requested` (the sizes drawn, summed), `packets_sent` (data packets with
    /// retransmissions and SYNs), `retransmits`, `timeouts`: cumulative except `conns_active`.
    fn trace_fields(&self) -> &'static [&'static str] {
        &[
            "conns_opened",
            "conns_completed",
            "conns_active",
            "packets_requested",
            "packets_sent",
            "retransmits",
            "timeouts",
        ]
    }

    /// The first arrival comes one inter-arrival time after the start.
    fn on_start(&mut self, now: Time, _out: &mut Outbox) {
        if self.next_arrival.is_none() {
            self.next_arrival = Some(self.draw_arrival(now));
        }
    }

    /// No more arrivals; open connections finish.
    fn on_stop(&mut self, _now: Time, _out: &mut Outbox) {
        self.next_arrival = None;
    }

    fn handle_packet(&mut self, now: Time, packet: &Packet, out: &mut Outbox) {
        let _: PoolEvent = self.pool.handle_packet(now, packet, out);
    }

    fn poll_timeout(&self) -> Option<Time> {
        match (self.next_arrival, self.pool.poll_timeout()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn handle_timeout(&mut self, now: Time, out: &mut Outbox) {
        while let Some(at) = self.next_arrival.filter(|&at| at <= now) {
            let size = self.config.size.sample_count(&mut self.rng);
            let size = u32::try_from(size).unwrap_or(u32::MAX);
            if self.pool.open(now, self.next_id, size, &mut self.rng, out) {
                self.next_id += 1;
                self.next_arrival = Some(self.draw_arrival(at));
            } else {
                // The connection ids are used up (2^24 per flow): no more arrivals.
                self.next_arrival = None;
            }
        }
        self.pool.handle_timeout(now, out);
    }

    fn trace(&self, values: &mut [f64]) {
        for (slot, value) in values.iter_mut().zip(self.pool.send_trace()) {
            *slot = value;
        }
    }
}

/// The receiving end: one TCP receiver per connection.
#[derive(Debug)]
pub struct ShortTcpSink {
    pool: TcpPool,
}

impl ShortTcpSink {
    /// A sink for `config`'s connections.
    pub fn new(config: &ShortTcpConfig) -> ShortTcpSink {
        ShortTcpSink {
            pool: TcpPool::new(&config.tcp),
        }
    }
}

impl Agent for ShortTcpSink {
    /// `conns_received` (connections seen), `conns_delivered` (whole message delivered),
    /// `packets_delivered` (in order, all connections): cumulative.
    fn trace_fields(&self) -> &'static [&'static str] {
        &["conns_received", "conns_delivered", "packets_delivered"]
    }

    fn on_start(&mut self, _now: Time, _out: &mut Outbox) {}

    fn on_stop(&mut self, _now: Time, _out: &mut Outbox) {}

    fn handle_packet(&mut self, now: Time, packet: &Packet, out: &mut Outbox) {
        let _: PoolEvent = self.pool.handle_packet(now, packet, out);
    }

    fn poll_timeout(&self) -> Option<Time> {
        self.pool.poll_timeout()
    }

    fn handle_timeout(&mut self, now: Time, out: &mut Outbox) {
        self.pool.handle_timeout(now, out);
    }

    fn trace(&self, values: &mut [f64]) {
        let s = self.pool.stats();
        let all = [
            s.received_opened as f64,
            s.received_complete as f64,
            s.delivered as f64,
        ];
        for (slot, value) in values.iter_mut().zip(all) {
            *slot = value;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::tcp::TcpVariant;

    #[test]
    fn offered_load_formula() {
        let config = ShortTcpConfig {
            tcp: TcpConfig::ns2_2000(TcpVariant::Sack),
            size: RandomVariable::Uniform {
                min: 0.0,
                max: 20.0,
            },
            interarrival: RandomVariable::Exponential { mean: 0.1 },
        };
        // 10.5 packets × 8000 bits / 0.1 s.
        assert!((config.offered_load_bps() - 840_000.0).abs() < 1.0);
        assert_eq!(config.validate(), Ok(()));
        let bad = ShortTcpConfig {
            interarrival: RandomVariable::Exponential { mean: 0.0 },
            ..config
        };
        assert!(bad.validate().unwrap_err().starts_with("interarrival.mean"));
    }
}
