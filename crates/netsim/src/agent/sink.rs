//! A sink that absorbs every packet and sends nothing (ns-2 `Agent/Null`, or `Agent/LossMonitor`
//! without its counters: the engine's monitors count arrivals for every flow).

use tfrc::Time;

use super::{Agent, Outbox};
use crate::packet::Packet;

/// The receiving end of a CBR (or any one-way) flow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sink;

impl Agent for Sink {
    fn trace_fields(&self) -> &'static [&'static str] {
        &[]
    }

    fn on_start(&mut self, _now: Time, _out: &mut Outbox) {}

    fn on_stop(&mut self, _now: Time, _out: &mut Outbox) {}

    fn handle_packet(&mut self, _now: Time, _packet: &Packet, _out: &mut Outbox) {}

    fn poll_timeout(&self) -> Option<Time> {
        None
    }

    fn handle_timeout(&mut self, _now: Time, _out: &mut Outbox) {}

    fn trace(&self, _values: &mut [f64]) {}
}
