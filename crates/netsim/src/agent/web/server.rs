//! The server end of a web session (ns-2 server mode 0: no service delay): a request's single
//! packet arrives on a fresh connection; once it is delivered, the server draws the object's
//! size and answers on a connection of that many packets with the same id.
//!
//! ns-2 draws the object size when the client launches the request and starts the response
//! when the *client's* request agent sees its ACK (an instant hand-over between nodes); here the
//! request packet reaching the server starts the response, half a round trip earlier, and the
//! server draws the size from its own stream (the same distribution).

use tfrc::Time;

use super::WebConfig;
use crate::agent::tcp_pool::{PoolEvent, TcpPool};
use crate::agent::{Agent, Outbox};
use crate::packet::Packet;
use crate::rng::SimRng;

/// A web server (the source agent of a `web` flow).
#[derive(Debug)]
pub struct WebServer {
    config: WebConfig,
    rng: SimRng,
    pool: TcpPool,
    requests: u64,
}

impl WebServer {
    /// A server with its own stream.
    pub fn new(config: &WebConfig, rng: SimRng) -> WebServer {
        WebServer {
            config: *config,
            rng,
            pool: TcpPool::new(&config.tcp),
            requests: 0,
        }
    }
}

impl Agent for WebServer {
    /// `requests_received`, `responses_opened`, `responses_completed` (every packet acked),
    /// `responses_active`, `response_packets_requested` (the object sizes drawn, summed: the
    /// offered load in packets), `response_packets_sent` (with retransmissions and SYNs),
    /// `retransmits`, `timeouts`: cumulative except `responses_active`.
    fn trace_fields(&self) -> &'static [&'static str] {
        &[
            "requests_received",
            "responses_opened",
            "responses_completed",
            "responses_active",
            "response_packets_requested",
            "response_packets_sent",
            "retransmits",
            "timeouts",
        ]
    }

    /// The server answers whenever asked; the session lives at the client.
    fn on_start(&mut self, _now: Time, _out: &mut Outbox) {}

    fn on_stop(&mut self, _now: Time, _out: &mut Outbox) {}

    fn handle_packet(&mut self, now: Time, packet: &Packet, out: &mut Outbox) {
        if let PoolEvent::Received { conn, .. } = self.pool.handle_packet(now, packet, out) {
            self.requests += 1;
            let size = self.config.object_size.sample_count(&mut self.rng);
            let size = u32::try_from(size).unwrap_or(u32::MAX);
            self.pool.open(now, conn, size, &mut self.rng, out);
        }
    }

    fn poll_timeout(&self) -> Option<Time> {
        self.pool.poll_timeout()
    }

    fn handle_timeout(&mut self, now: Time, out: &mut Outbox) {
        self.pool.handle_timeout(now, out);
    }

    fn trace(&self, values: &mut [f64]) {
        let all = std::iter::once(self.requests as f64).chain(self.pool.send_trace());
        for (slot, value) in values.iter_mut().zip(all) {
            *slot = value;
        }
    }
}
