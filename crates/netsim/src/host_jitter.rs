//! Host timing jitter: a real host hands each packet to the wire some microseconds after its
//! protocol decided to send it (system calls, interrupts, scheduling), and ns-2's `overhead_`
//! randomises TCP's sends for the same reason: without it a simulation's exact clock phases
//! flows against a DropTail queue (Floyd and Jacobson, "On traffic phase effects in
//! packet-switched gateways", 1992). Each packet an agent emits leaves after U(0, `max`), but
//! never before the agent's previous packet: the host keeps its packets in order.

use std::collections::VecDeque;
use std::time::Duration;

use tfrc::Time;

use crate::packet::Packet;
use crate::rng::{uniform, SimRng};

/// One agent's host: its jitter, its random stream and the packets it holds.
#[derive(Clone, Debug)]
pub(crate) struct HostJitter {
    max: Duration,
    rng: SimRng,
    /// When the last packet handed over leaves (or left).
    free_at: Time,
    /// Packets held, with their departure times (non-decreasing).
    held: VecDeque<(Time, Packet)>,
}

impl HostJitter {
    /// A host delaying each packet by U(0, `max`), `max` above 0, drawing from `rng`.
    pub(crate) fn new(max: Duration, rng: SimRng) -> HostJitter {
        HostJitter {
            max,
            rng,
            free_at: Time::ZERO,
            held: VecDeque::new(),
        }
    }

    /// Takes `packet`, emitted at `now`. Returns it when it leaves at once; otherwise holds it
    /// and returns `None`, with `Some(time)` in `wake` when the host needs a release event at
    /// that time (its first held packet's departure).
    pub(crate) fn hand_over(
        &mut self,
        now: Time,
        packet: Packet,
        wake: &mut Option<Time>,
    ) -> Option<Packet> {
        let delay = Duration::from_secs_f64(uniform(&mut self.rng) * self.max.as_secs_f64());
        let depart = (now + delay).max(self.free_at);
        self.free_at = depart;
        if depart <= now && self.held.is_empty() {
            return Some(packet);
        }
        if self.held.is_empty() {
            *wake = Some(depart);
        }
        self.held.push_back((depart, packet));
        None
    }

    /// The release event at `now`: the packets due by then, in order, and when the next one
    /// is due.
    pub(crate) fn release(&mut self, now: Time, out: &mut Vec<Packet>) -> Option<Time> {
        while let Some(&(depart, _)) = self.held.front() {
            if depart > now {
                return Some(depart);
            }
            if let Some((_, packet)) = self.held.pop_front() {
                out.push(packet);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{FlowId, NodeId, Payload};
    use crate::rng::stream;

    fn packet(seq: u64) -> Packet {
        Packet::new(FlowId(0), seq, 1000, NodeId(1), Time::ZERO, Payload::Cbr)
    }

    #[test]
    fn packets_leave_in_order_within_the_jitter() {
        let max = Duration::from_millis(1);
        let mut host = HostJitter::new(max, stream(7, "host"));
        let mut departures = Vec::new();
        let mut pending: Option<Time> = None;
        let mut out = Vec::new();
        // A burst of 50 packets at t = 0, then one every 10 ms.
        for i in 0..100u64 {
            let now = Time::ZERO + Duration::from_millis(if i < 50 { 0 } else { 10 * i });
            // Release what is due before this emission.
            while let Some(at) = pending.filter(|&at| at <= now) {
                pending = host.release(at, &mut out);
                departures.extend(out.drain(..).map(|p| (at, p.seq)));
            }
            let mut wake = None;
            if let Some(p) = host.hand_over(now, packet(i), &mut wake) {
                departures.push((now, p.seq));
            }
            pending = pending.or(wake);
        }
        while let Some(at) = pending {
            pending = host.release(at, &mut out);
            departures.extend(out.drain(..).map(|p| (at, p.seq)));
        }
        let seqs: Vec<u64> = departures.iter().map(|&(_, s)| s).collect();
        assert_eq!(seqs, (0..100).collect::<Vec<_>>(), "in order, none lost");
        // After the burst each packet leaves within one jitter of its emission.
        for &(at, seq) in &departures[50..] {
            let sent = Time::ZERO + Duration::from_millis(10 * seq);
            assert!(at >= sent && at <= sent + max, "{seq}: {at:?}");
        }
        let spread: Vec<Duration> = departures[50..]
            .iter()
            .map(|&(at, seq)| at.saturating_since(Time::ZERO + Duration::from_millis(10 * seq)))
            .collect();
        let mean = spread.iter().map(Duration::as_secs_f64).sum::<f64>() / 50.0;
        assert!((mean - 0.0005).abs() < 0.0002, "mean delay {mean}");
    }
}
