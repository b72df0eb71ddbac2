//! Sender pacing as Linux's TCP paces without the fq qdisc ("internal pacing",
//! `tcp_pacing_check` and `tcp_update_skb_after_send` in `net/ipv4/tcp_output.c`): every packet
//! sent pushes the earliest departure time of the next one `bytes / rate` further, from now or
//! from the previous departure time, whichever is later; a sender whose next departure time
//! lies ahead waits for a timer. The kernel sends a GSO burst of several segments at one
//! departure time (`tcp_tso_autosize`: the pacing rate's worth of about 1 ms, at least
//! `min_tso_segs`); `burst` packets go at once here likewise.
//!
//! A send later than its departure time earns credit (`tcp_update_skb_after_send`'s "take into
//! account OS jitter", in the 6.x kernels of the testbed): the next departure time moves on by
//! the burst's time at the pacing rate less the lateness, at most half of it. A sender held by
//! its window and released by an ACK after its departure time so keeps step with the ACKs
//! instead of falling behind them, and after an idle period the next burst follows after half
//! its time.
//!
//! Any sender may use it; BBR sets the rate on every ACK.

use std::time::Duration;

use tfrc::Time;

/// The data packet from which on a sent packet moves the next departure time on: Linux paces
/// a connection only once it has sent 10 data segments (`tp->data_segs_out >= 10` in
/// `tcp_update_skb_after_send`), so its first 9 leave as fast as the window allows.
pub const UNPACED_SEGMENTS: u64 = 10;

/// The pacing state of one sender.
#[derive(Clone, Debug)]
pub struct Pacer {
    /// Bytes per second (`sk_pacing_rate`), above 0.
    rate: u64,
    /// The earliest departure time of the next burst (`tcp_wstamp_ns`).
    next_at: Time,
    /// Packets per burst (the GSO segments of one skb), at least 1.
    burst: u32,
    /// Packets still allowed at `burst_at` in the current burst.
    burst_left: u32,
    burst_at: Time,
    /// What is left of the credit earned at `credit_at`: how late the burst sent then left.
    credit: Duration,
    credit_at: Time,
    /// A send was refused: the sender wants a wake-up at `next_at`.
    waiting: bool,
}

impl Pacer {
    /// A pacer at `rate` bytes per second (at least 1), nothing sent yet.
    pub fn new(rate: u64) -> Pacer {
        Pacer {
            rate: rate.max(1),
            next_at: Time::ZERO,
            burst: 1,
            burst_left: 0,
            burst_at: Time::ZERO,
            credit: Duration::ZERO,
            credit_at: Time::ZERO,
            waiting: false,
        }
    }

    /// The rate in bytes per second.
    pub fn rate(&self) -> u64 {
        self.rate
    }

    /// Sets the rate (bytes per second, at least 1) and the burst size (packets, at least 1).
    /// The next departure time already computed stands, as in the kernel.
    pub fn set_rate(&mut self, rate: u64, burst: u32) {
        self.rate = rate.max(1);
        self.burst = burst.max(1);
    }

    /// Whether a packet may leave at `now`: within the current burst, or when the next
    /// departure time has come (which starts a new burst). A refusal arms the wake-up.
    pub fn may_send(&mut self, now: Time) -> bool {
        if self.burst_left > 0 && self.burst_at == now {
            return true;
        }
        if self.next_at <= now {
            self.burst_left = self.burst;
            self.burst_at = now;
            return true;
        }
        self.waiting = true;
        false
    }

    /// A packet of `bytes` left at `now` (paced or not: a retransmission sent at once counts
    /// too): the next departure time moves on by its transmission time at the pacing rate,
    /// less up to half of it from the burst's credit. The kernel takes the credit once per GSO
    /// burst, up to half the burst's time; taking it per packet, up to half of each, from one
    /// pool per burst comes to the same.
    pub fn on_sent(&mut self, now: Time, bytes: u32) {
        let nanos = u128::from(bytes) * 1_000_000_000 / u128::from(self.rate);
        let time = Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX));
        if now > self.next_at {
            self.credit = now.saturating_since(self.next_at);
            self.credit_at = now;
        } else if now != self.credit_at {
            self.credit = Duration::ZERO;
        }
        let back = (time / 2).min(self.credit);
        self.credit -= back;
        self.next_at = self.next_at.max(now) + (time - back);
        if self.burst_at == now {
            self.burst_left = self.burst_left.saturating_sub(1);
        } else {
            self.burst_left = 0;
        }
    }

    /// A packet left at `now` without moving the next departure time on: one of a connection's
    /// first [`UNPACED_SEGMENTS`] - 1 data packets, which Linux sends unpaced
    /// (`tcp_update_skb_after_send` paces from `data_segs_out >= 10`). The departure time
    /// catches up with `now` (`tcp_wstamp_ns` = max(itself, now), as for every packet).
    pub fn on_sent_unpaced(&mut self, now: Time) {
        self.next_at = self.next_at.max(now);
        if self.burst_at == now {
            self.burst_left = self.burst_left.saturating_sub(1);
        } else {
            self.burst_left = 0;
        }
    }

    /// How long after `now` the next departure may happen (zero when it may happen now).
    pub fn wait(&self, now: Time) -> Duration {
        self.next_at.saturating_since(now)
    }

    /// When the sender wants to be woken to send what pacing held back.
    pub fn wake_at(&self) -> Option<Time> {
        self.waiting.then_some(self.next_at)
    }

    /// The wake-up was taken.
    pub fn woken(&mut self) {
        self.waiting = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Time {
        Time::from_nanos(n * 1_000_000)
    }

    #[test]
    fn packets_leave_one_transmission_time_apart() {
        // 1000 B at 1 MB/s: 1 ms apart.
        let mut p = Pacer::new(1_000_000);
        assert!(p.may_send(ms(0)));
        p.on_sent(ms(0), 1000);
        assert!(!p.may_send(ms(0)));
        assert_eq!(p.wake_at(), Some(ms(1)));
        assert_eq!(p.wait(ms(0)), Duration::from_millis(1));
        p.woken();
        assert_eq!(p.wake_at(), None);
        assert!(p.may_send(ms(1)));
        p.on_sent(ms(1), 1000);
        // After a pause the send is late: the next one waits half a transmission time (the
        // credit is at most half), not the whole of the idle time.
        assert!(p.may_send(ms(10)));
        p.on_sent(ms(10), 1000);
        assert!(!p.may_send(ms(10)));
        assert_eq!(p.wake_at(), Some(Time::from_nanos(10_500_000)));
    }

    #[test]
    fn an_unpaced_send_moves_nothing_on_but_the_departure_time_to_now() {
        let mut p = Pacer::new(1_000_000);
        for _ in 0..3 {
            assert!(p.may_send(ms(5)));
            p.on_sent_unpaced(ms(5));
        }
        assert_eq!(p.wait(ms(5)), Duration::ZERO);
        // The first paced packet after them starts from now, with no credit from the unpaced
        // ones (they left on time).
        assert!(p.may_send(ms(5)));
        p.on_sent(ms(5), 1000);
        assert_eq!(p.wait(ms(5)), Duration::from_millis(1));
    }

    #[test]
    fn a_late_send_takes_its_lateness_off_the_next_gap() {
        let us = |n: u64| Time::from_nanos(n * 1000);
        let mut p = Pacer::new(1_000_000);
        p.on_sent(ms(0), 1000);
        // Sent 200 us after its departure time (held by the window, say): the next departure
        // comes 800 us later, not 1 ms.
        assert!(p.may_send(us(1_200)));
        p.on_sent(us(1_200), 1000);
        assert_eq!(p.wait(us(1_200)), Duration::from_micros(800));
        // On time: the whole transmission time, no credit left over.
        assert!(p.may_send(ms(2)));
        p.on_sent(ms(2), 1000);
        assert_eq!(p.wait(ms(2)), Duration::from_millis(1));
    }

    #[test]
    fn a_late_bursts_credit_is_shared_by_its_packets_up_to_half_the_burst() {
        let mut p = Pacer::new(1_000_000);
        p.set_rate(1_000_000, 2);
        p.on_sent(ms(0), 1000);
        p.on_sent(ms(0), 1000);
        // 0.3 ms late: the burst of two (2 ms at the rate) moves the time on by 1.7 ms.
        let late = Time::from_nanos(2_300_000);
        assert!(p.may_send(late));
        p.on_sent(late, 1000);
        assert!(p.may_send(late));
        p.on_sent(late, 1000);
        assert_eq!(p.wait(late), Duration::from_micros(1700));
        // 5 ms late: at most half the burst's time, 1 ms, comes off.
        let idle = Time::from_nanos(9_000_000);
        assert!(p.may_send(idle));
        p.on_sent(idle, 1000);
        p.on_sent(idle, 1000);
        assert_eq!(p.wait(idle), Duration::from_millis(1));
        // The 4 ms of credit left over is not banked: the next burst, on time, pays in full.
        let next = Time::from_nanos(10_000_000);
        assert!(p.may_send(next));
        p.on_sent(next, 1000);
        p.on_sent(next, 1000);
        assert_eq!(p.wait(next), Duration::from_millis(2));
    }

    #[test]
    fn a_burst_goes_at_once_and_pays_for_all_its_packets() {
        let mut p = Pacer::new(1_000_000);
        p.set_rate(1_000_000, 2);
        assert!(p.may_send(ms(0)));
        p.on_sent(ms(0), 1000);
        assert!(p.may_send(ms(0)), "the second segment of the burst");
        p.on_sent(ms(0), 1000);
        assert!(!p.may_send(ms(0)));
        assert_eq!(p.wake_at(), Some(ms(2)));
        // A burst cut short does not carry over to a later instant.
        assert!(p.may_send(ms(2)));
        p.on_sent(ms(2), 1000);
        assert!(!p.may_send(Time::from_nanos(2_500_000)));
    }
}
