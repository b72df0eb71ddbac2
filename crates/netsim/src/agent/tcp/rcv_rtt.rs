//! The receiver's RTT estimate (Linux's `rcv_rtt_est`, `tcp_rcv_rtt_update` in
//! `net/ipv4/tcp_input.c`), which the receive window's right-sizing ([`super::rcv_window`]) and
//! SACK compression's timer ([`super::sack_compress`]) read.
//!
//! The kernel samples the RTT from the timestamp each data segment echoes
//! (`tcp_rcv_rtt_measure_ts`): the time since the receiver sent the ACK whose timestamp the data
//! carries. netsim has no timestamps; named approximation: a sample is the data packet's one-way
//! delay plus the ACK path's delay measured at the handshake (the time from the SYN's ACK to the
//! first data packet's departure; without a SYN, the first data packet's one-way delay), taken
//! from every data packet rather than once per echoed timestamp. The first sample is the
//! handshake's RTT, which is what the kernel's `srtt_us` holds at a receiver that sends no data.

use tfrc::Time;

/// The receiver's RTT estimate, nanoseconds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RcvRtt {
    /// The estimate times 8 (`rcv_rtt_est.rtt_us`, which the kernel keeps scaled by 8); 0 before
    /// any sample.
    rtt8_ns: u64,
    /// The first sample: the handshake's RTT (the receiver's `srtt_us`); 0 before any.
    first_ns: u64,
    /// When the SYN was acked (the handshake's start at the receiver).
    syn_acked_at: Option<Time>,
    /// The ACK path's delay, measured at the handshake.
    ack_path_ns: Option<u64>,
}

impl RcvRtt {
    /// An estimate with no sample yet.
    pub fn new() -> RcvRtt {
        RcvRtt::default()
    }

    /// The smoothed RTT (`rcv_rtt_est`), nanoseconds; 0 before any sample.
    pub fn rtt_ns(&self) -> u64 {
        self.rtt8_ns >> 3
    }

    /// The handshake's RTT, the first sample (what the kernel's `srtt_us` holds at a receiver
    /// that sends no data: it is set once, from the SYN-ACK's ACK), nanoseconds; 0 before any.
    pub fn handshake_rtt_ns(&self) -> u64 {
        self.first_ns
    }

    /// The SYN was acked at `now`: the handshake's start, from which the ACK path is measured.
    pub fn on_syn_acked(&mut self, now: Time) {
        self.syn_acked_at = Some(now);
    }

    /// A data packet sent at `sent_at` arrived at `now`: one sample, its one-way delay plus the
    /// ACK path's.
    pub fn on_data_arrival(&mut self, now: Time, sent_at: Time) {
        let one_way = now.saturating_since(sent_at).as_nanos() as u64;
        let ack_path = *self
            .ack_path_ns
            .get_or_insert_with(|| match self.syn_acked_at {
                Some(acked) => sent_at.saturating_since(acked).as_nanos() as u64,
                None => one_way,
            });
        self.update(one_way + ack_path);
    }

    /// `tcp_rcv_rtt_update` with timestamps: a sample under the estimate replaces it, a larger
    /// one moves it by an eighth (the receive queue is always empty for a bulk reader).
    fn update(&mut self, sample_ns: u64) {
        let sample_ns = sample_ns.max(1);
        if self.first_ns == 0 {
            self.first_ns = sample_ns;
        }
        let m = sample_ns << 3;
        self.rtt8_ns = if self.rtt8_ns == 0 || m < self.rtt8_ns {
            m
        } else {
            self.rtt8_ns - (self.rtt8_ns >> 3) + sample_ns
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Time {
        Time::from_nanos(n * 1_000_000)
    }

    #[test]
    fn samples_smooth_up_by_an_eighth_and_replace_down() {
        let mut r = RcvRtt::new();
        assert_eq!((r.rtt_ns(), r.handshake_rtt_ns()), (0, 0));
        r.on_syn_acked(ms(0));
        // The first data packet left 50 ms after the SYN's ACK and took 50 ms: RTT 100 ms.
        r.on_data_arrival(ms(100), ms(50));
        assert_eq!(r.rtt_ns(), 100_000_000);
        // A larger sample moves the estimate by an eighth; a smaller one replaces it.
        r.on_data_arrival(ms(180), ms(100));
        assert_eq!(r.rtt_ns(), 100_000_000 + 30_000_000 / 8);
        r.on_data_arrival(ms(200), ms(160));
        assert_eq!(r.rtt_ns(), 90_000_000);
        // The handshake's RTT stays the first sample.
        assert_eq!(r.handshake_rtt_ns(), 100_000_000);
    }

    #[test]
    fn the_ack_path_without_a_syn_is_the_data_paths() {
        let mut r = RcvRtt::new();
        r.on_data_arrival(ms(30), ms(0));
        assert_eq!(r.rtt_ns(), 60_000_000);
    }
}
