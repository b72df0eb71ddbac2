//! Delivery-rate sampling as Linux's `net/ipv4/tcp_rate.c` does it (draft-cheng-iccrg-
//! delivery-rate-estimation): each packet sent remembers how much had been delivered and when;
//! an ACK that delivers packets (cumulatively or by SACK) yields one sample, the packets
//! delivered since the most recently sent of them left, over the longer of its send and ACK
//! intervals. Samples shorter than the least RTT are discarded, and a sample is marked
//! application-limited when its packet was sent while the application had nothing more to
//! send. The log also counts packets lost (RFC 6675 `IsLost`, or all outstanding ones at a
//! timeout) and gives the ACK's RTT sample (the newest packet delivered that was never
//! retransmitted; SACKed ones first, as `ca_rtt_us`).
//!
//! Deviations, named: the least RTT is the least sample of the whole connection (Linux keeps a
//! 5-minute window, longer than the runs this serves); with no TCP timestamps an ACK covering
//! a retransmitted packet gives no RTT sample (Karn), where Linux would use the echoed
//! timestamp.

use std::collections::VecDeque;

use tfrc::Time;

use super::header::SackBlock;

/// What one packet remembered when it was (last) sent.
#[derive(Clone, Copy, Debug)]
struct TxRecord {
    sent: Time,
    /// `tx.delivered`: packets delivered when it was sent.
    delivered: u64,
    /// `tx.delivered_mstamp`: when the last of those was delivered.
    delivered_at: Time,
    /// `tx.first_tx_mstamp`: when the flight it belongs to started.
    first_tx: Time,
    app_limited: bool,
    retransmitted: bool,
    /// Delivered by a SACK already.
    sacked: bool,
    /// Counted lost already (for this transmission).
    lost: bool,
}

/// One ACK's rate sample (`struct rate_sample`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RateSample {
    /// `tx.delivered` of the packet the sample is taken from.
    pub prior_delivered: u64,
    /// Packets delivered over the interval, or `None` for no valid sample.
    pub delivered: Option<u64>,
    /// The sample's interval in µs, `None` when invalid (shorter than the least RTT).
    pub interval_us: Option<u64>,
    /// The ACK's RTT sample in µs.
    pub rtt_us: Option<u64>,
    /// Packets this ACK delivered (cumulatively or by SACK).
    pub acked_sacked: u32,
    /// Packets newly counted lost at this ACK.
    pub losses: u32,
    /// The packet was sent while application-limited.
    pub is_app_limited: bool,
    /// The ACK acknowledged one packet only and may have been delayed by the receiver.
    pub is_ack_delayed: bool,
}

impl RateSample {
    /// The sample's delivery rate in packets per µs scaled by 2^`scale`, when valid.
    pub fn rate(&self, scale: u32) -> Option<u64> {
        let delivered = self.delivered?;
        let interval = self.interval_us.filter(|&i| i > 0)?;
        Some(((u128::from(delivered) << scale) / u128::from(interval)) as u64)
    }
}

/// The packet chosen for this ACK's sample.
#[derive(Clone, Copy, Debug)]
struct Chosen {
    seq: i64,
    /// When it was (last) sent, and whether that was a retransmission.
    sent: Time,
    retransmitted: bool,
    prior_delivered: u64,
    prior_at: Time,
    app_limited: bool,
    /// Its send time minus its flight's start (`interval_us` before the ACK interval).
    send_interval: u64,
}

/// The send log and the connection's delivery counters.
#[derive(Clone, Debug)]
pub struct DeliveryRate {
    /// Sequence number of `records[0]`.
    base: i64,
    records: VecDeque<TxRecord>,
    /// `tp->delivered`.
    delivered: u64,
    /// `tp->delivered_mstamp`.
    delivered_at: Time,
    /// `tp->first_tx_mstamp`.
    first_tx: Time,
    /// `tp->app_limited`: application-limited until more than this many are delivered.
    app_limited: Option<u64>,
    /// `tp->lost`.
    lost: u64,
    /// Packets below this have been checked for loss.
    lost_scan: i64,
    min_rtt_us: Option<u64>,
    // This ACK's accumulation.
    chosen: Option<Chosen>,
    acked: u32,
    cum_acked: u32,
    newest_cum_sent: Option<Time>,
    cum_retransmitted: bool,
    newest_sack_sent: Option<Time>,
}

fn micros(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

impl DeliveryRate {
    /// An empty log whose first packet will be `first_seq` (packets before it, a SYN, are
    /// not sampled). The first flight is application-limited, as Linux starts.
    pub fn new(first_seq: i64) -> DeliveryRate {
        DeliveryRate {
            base: first_seq,
            records: VecDeque::new(),
            delivered: 0,
            delivered_at: Time::ZERO,
            first_tx: Time::ZERO,
            app_limited: Some(0),
            lost: 0,
            lost_scan: first_seq,
            min_rtt_us: None,
            chosen: None,
            acked: 0,
            cum_acked: 0,
            newest_cum_sent: None,
            cum_retransmitted: false,
            newest_sack_sent: None,
        }
    }

    /// Packets delivered so far (`tp->delivered`).
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// When the last packet was delivered (`tp->delivered_mstamp`).
    pub fn delivered_at(&self) -> Time {
        self.delivered_at
    }

    /// Packets counted lost so far (`tp->lost`).
    pub fn lost(&self) -> u64 {
        self.lost
    }

    /// The least RTT sample so far in µs (`tcp_min_rtt`).
    pub fn min_rtt_us(&self) -> Option<u64> {
        self.min_rtt_us
    }

    /// `tcp_rate_skb_sent`: packet `seq` leaves at `now`; `nothing_outstanding` when no packet
    /// was unacknowledged (a new flight starts).
    pub fn on_sent(&mut self, now: Time, seq: i64, nothing_outstanding: bool) {
        if seq < self.base {
            return;
        }
        if nothing_outstanding {
            self.first_tx = now;
            self.delivered_at = now;
        }
        let record = TxRecord {
            sent: now,
            delivered: self.delivered,
            delivered_at: self.delivered_at,
            first_tx: self.first_tx,
            app_limited: self.app_limited.is_some(),
            retransmitted: false,
            sacked: false,
            lost: false,
        };
        let index = (seq - self.base) as usize;
        if let Some(slot) = self.records.get_mut(index) {
            // A retransmission of a packet SACKed already delivers nothing new.
            *slot = TxRecord {
                retransmitted: true,
                sacked: slot.sacked,
                ..record
            };
        } else {
            // Sequence numbers are sent in order the first time: the log has no gaps.
            while self.records.len() < index {
                self.records.push_back(TxRecord {
                    sacked: true,
                    ..record
                });
            }
            self.records.push_back(record);
        }
    }

    /// `tcp_rate_skb_delivered`: takes `record` (packet `seq`) into this ACK's sample.
    fn deliver(&mut self, seq: i64, record: TxRecord) {
        self.delivered += 1;
        self.acked += 1;
        let newer = self.chosen.is_none_or(|c| {
            record.sent > self.first_tx || (record.sent == self.first_tx && seq > c.seq)
        });
        if newer {
            self.chosen = Some(Chosen {
                seq,
                sent: record.sent,
                retransmitted: record.retransmitted,
                prior_delivered: record.delivered,
                prior_at: record.delivered_at,
                app_limited: record.app_limited,
                send_interval: micros(record.sent.saturating_since(record.first_tx)),
            });
            self.first_tx = record.sent;
        }
    }

    /// An ACK: cumulative up to `cum_ack`, SACKing `blocks`. Delivers what is new.
    pub fn on_ack(&mut self, cum_ack: i64, blocks: &[SackBlock]) {
        self.chosen = None;
        self.acked = 0;
        self.cum_acked = 0;
        self.newest_cum_sent = None;
        self.cum_retransmitted = false;
        self.newest_sack_sent = None;
        while self.base <= cum_ack {
            let seq = self.base;
            self.base += 1;
            let Some(record) = self.records.pop_front() else {
                continue;
            };
            if record.sacked {
                continue;
            }
            self.cum_acked += 1;
            if record.retransmitted {
                self.cum_retransmitted = true;
            } else {
                self.newest_cum_sent = Some(record.sent);
            }
            self.deliver(seq, record);
        }
        self.lost_scan = self.lost_scan.max(self.base);
        for block in blocks {
            let left = i64::from(block.left).max(self.base);
            let right = i64::from(block.right).min(self.base + self.records.len() as i64);
            for seq in left..right {
                let index = (seq - self.base) as usize;
                let record = self.records[index];
                if record.sacked {
                    continue;
                }
                self.records[index].sacked = true;
                if !record.retransmitted {
                    self.newest_sack_sent = Some(
                        self.newest_sack_sent
                            .map_or(record.sent, |t| t.max(record.sent)),
                    );
                }
                self.deliver(seq, record);
            }
        }
    }

    /// The most recently sent packet this ACK delivered: its sequence number, when it was sent
    /// and whether that was a retransmission (RACK's candidate, RFC 8985 §6.2 step 2).
    pub fn newest_delivered(&self) -> Option<(i64, Time, bool)> {
        self.chosen.map(|c| (c.seq, c.sent, c.retransmitted))
    }

    /// The packets sent and not yet cumulatively acknowledged: sequence number, when each was
    /// last sent, and whether it is SACKed.
    pub fn outstanding(&self) -> impl Iterator<Item = (i64, Time, bool)> + '_ {
        self.records
            .iter()
            .enumerate()
            .map(|(i, r)| (self.base + i as i64, r.sent, r.sacked))
    }

    /// Counts packet `seq`'s last transmission lost (RACK); whether it was not counted yet.
    pub fn mark_lost(&mut self, seq: i64) -> bool {
        if seq < self.base {
            return false;
        }
        match self.records.get_mut((seq - self.base) as usize) {
            Some(record) if !record.sacked && !record.lost => {
                record.lost = true;
                self.lost += 1;
                true
            }
            _ => false,
        }
    }

    /// Counts as lost the packets below `lost_below` that are neither SACKed nor counted
    /// already (RFC 6675 `IsLost`); returns how many were new.
    pub fn mark_lost_below(&mut self, lost_below: i64) -> u32 {
        let mut newly = 0;
        let end = lost_below.min(self.base + self.records.len() as i64);
        while self.lost_scan < end {
            let record = &mut self.records[(self.lost_scan - self.base) as usize];
            if !record.sacked && !record.lost {
                record.lost = true;
                newly += 1;
            }
            self.lost_scan += 1;
        }
        self.lost += u64::from(newly);
        newly
    }

    /// A retransmission timeout: every outstanding packet not SACKed is lost
    /// (`tcp_enter_loss`); loss scanning starts again from the cumulative ACK.
    pub fn on_timeout(&mut self) {
        for record in self.records.iter_mut().filter(|r| !r.sacked && !r.lost) {
            record.lost = true;
            self.lost += 1;
        }
        self.lost_scan = self.base + self.records.len() as i64;
    }

    /// `tcp_rate_check_app_limited`: the application has nothing more to send while
    /// `in_flight` packets are in flight and the window has room.
    pub fn set_app_limited(&mut self, in_flight: u64) {
        self.app_limited = Some((self.delivered + in_flight).max(1));
    }

    /// `tcp_rate_gen`: this ACK's sample, at `now`, with `losses` newly counted lost.
    pub fn generate(&mut self, now: Time, losses: u32) -> RateSample {
        if self.app_limited.is_some_and(|until| self.delivered > until) {
            self.app_limited = None;
        }
        if self.acked > 0 {
            self.delivered_at = now;
        }
        let rtt_us = match (self.newest_sack_sent, self.newest_cum_sent) {
            (Some(sent), _) => Some(sent),
            (None, Some(sent)) if !self.cum_retransmitted => Some(sent),
            _ => None,
        }
        .map(|sent| micros(now.saturating_since(sent)));
        if let Some(rtt) = rtt_us {
            self.min_rtt_us = Some(self.min_rtt_us.map_or(rtt, |m| m.min(rtt)));
        }
        let mut sample = RateSample {
            rtt_us,
            acked_sacked: self.acked,
            losses,
            is_ack_delayed: self.acked == 1 && self.cum_acked == 1,
            ..RateSample::default()
        };
        let Some(chosen) = self.chosen else {
            return sample;
        };
        sample.prior_delivered = chosen.prior_delivered;
        sample.is_app_limited = chosen.app_limited;
        sample.delivered = Some(self.delivered - chosen.prior_delivered);
        let ack_interval = micros(now.saturating_since(chosen.prior_at));
        let interval = chosen.send_interval.max(ack_interval);
        if self.min_rtt_us.is_none_or(|m| interval >= m) {
            sample.interval_us = Some(interval);
        }
        sample
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Time {
        Time::from_nanos(n * 1_000_000)
    }

    #[test]
    fn a_paced_flight_samples_its_rate() {
        // Ten packets, one per ms, acked one by one 100 ms later.
        let mut log = DeliveryRate::new(0);
        for i in 0..10 {
            log.on_sent(ms(i), i as i64, i == 0);
        }
        log.on_ack(0, &[]);
        let first = log.generate(ms(100), 0);
        assert_eq!(first.acked_sacked, 1);
        assert_eq!(first.rtt_us, Some(100_000));
        assert!(first.is_app_limited, "the first flight is app-limited");
        assert_eq!(first.delivered, Some(1));
        for i in 1..10 {
            log.on_ack(i, &[]);
            let s = log.generate(ms(100 + i as u64), 0);
            assert_eq!(s.delivered, Some(i as u64 + 1));
            // Over max(send interval i ms, ack interval 100 + i ms).
            assert_eq!(s.interval_us, Some(100_000 + i as u64 * 1000));
        }
        // A new packet sent now starts from the delivered count and its time.
        log.on_sent(ms(110), 10, true);
        log.on_ack(10, &[]);
        let s = log.generate(ms(210), 0);
        assert_eq!((s.prior_delivered, s.delivered), (10, Some(1)));
        assert!(
            !s.is_app_limited,
            "cleared once the first flight was delivered"
        );
    }

    #[test]
    fn sacks_deliver_once_and_losses_are_counted_once() {
        let mut log = DeliveryRate::new(0);
        for i in 0..6 {
            log.on_sent(ms(0), i, i == 0);
        }
        // 0 lost; 1..=4 SACKed.
        log.on_ack(-1, &[SackBlock { left: 1, right: 5 }]);
        assert_eq!(log.mark_lost_below(2), 1);
        assert_eq!(log.mark_lost_below(2), 0);
        let s = log.generate(ms(50), 1);
        assert_eq!((s.acked_sacked, s.losses, s.rtt_us), (4, 1, Some(50_000)));
        // The same blocks again deliver nothing.
        log.on_ack(-1, &[SackBlock { left: 1, right: 5 }]);
        assert_eq!(log.generate(ms(51), 0).acked_sacked, 0);
        // The retransmission of 0 fills the hole: 0 and 5 delivered, no RTT (Karn).
        log.on_sent(ms(60), 0, false);
        log.on_ack(5, &[]);
        let s = log.generate(ms(110), 0);
        assert_eq!(s.acked_sacked, 2);
        assert_eq!(s.rtt_us, None);
        assert_eq!(log.delivered(), 6);
        assert_eq!(log.lost(), 1);
    }

    #[test]
    fn retransmissions_give_no_rtt_and_timeouts_lose_everything() {
        let mut log = DeliveryRate::new(1);
        log.on_sent(ms(0), 0, true); // the SYN: not logged
        log.on_sent(ms(10), 1, true);
        log.on_sent(ms(10), 2, false);
        log.on_ack(1, &[]);
        let s = log.generate(ms(30), 0);
        assert_eq!(s.rtt_us, Some(20_000));
        // Packet 2 retransmitted and acked 1 ms later (the original arrived): no RTT from a
        // retransmission, and the interval is the send interval since the flight's last
        // delivered packet left (20 ms), not the 1 ms ACK interval.
        log.on_sent(ms(30), 2, false);
        log.on_sent(ms(30), 3, false);
        log.on_ack(2, &[]);
        let s = log.generate(ms(31), 0);
        assert_eq!(
            (s.delivered, s.interval_us, s.rtt_us),
            (Some(1), Some(20_000), None)
        );
        log.on_timeout();
        assert_eq!(log.lost(), 1);
        assert_eq!(log.mark_lost_below(10), 0);
    }
}
