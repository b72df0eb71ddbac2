//! TCP receivers (ns-2 `tcp/tcp-sink.cc`; protocols.md §1.9): `Agent/TCPSink` (an ACK per data
//! packet), `Agent/TCPSink/DelAck` (an ACK per two in-order packets or after `interval`), and
//! their `Sack1` forms, which add up to 3 SACK blocks, the most recent first (RFC 2018 §4).
//!
//! An ACK carries the highest in-order sequence number received (next expected - 1). The
//! receive state is a ring of "seen" flags from the next expected packet to the highest seen.
//! With [`TcpConfig::rcv_window_growth`] the delayed-ACK receiver also grows Linux's receive
//! window ([`RcvWindow`]) and acks each segment that grows it at once; with
//! [`TcpConfig::sack_compression`] the delayed-ACK SACK receiver holds most ACKs for
//! out-of-order data briefly, as Linux does ([`SackCompression`]).

use std::collections::VecDeque;

use tfrc::Time;

use super::header::{SackBlock, TcpAck, TcpData, MAX_SACK_BLOCKS};
use super::rcv_rtt::RcvRtt;
use super::rcv_window::RcvWindow;
use super::sack_compress::{sends_held_ack_first, SackCompression};
use super::{AckPolicy, TcpConfig};
use crate::agent::{Agent, Outbox};
use crate::packet::{Packet, Payload};

/// The receiving end of a TCP flow.
#[derive(Clone, Debug)]
pub struct TcpSink {
    policy: AckPolicy,
    /// SACK blocks per ACK (0 for a non-SACK sink).
    max_blocks: usize,
    ack_bytes: u32,
    sack_block_bytes: u32,
    /// Whether packet 0 is a SYN (not data).
    syn: bool,
    /// The next in-order packet expected (`Acker::next_`).
    next: i64,
    /// The highest packet seen (`maxseen_`), -1 before any.
    maxseen: i64,
    /// Seen flags for packets `next ..= maxseen` (index 0 is `next`, never seen).
    seen: VecDeque<bool>,
    /// The last packet was a duplicate.
    is_dup: bool,
    /// Earlier SACK blocks, most recent first (ns-2's `SackStack`).
    history: [(i64, i64); MAX_SACK_BLOCKS],
    history_len: usize,
    /// A held ACK: when the delayed-ACK timer (or SACK compression's) fires, and the packet
    /// it is for.
    held: Option<(Time, i64)>,
    /// Data packets still to be acked at once under delayed ACKs (quick-ACK mode).
    quick_acks: u32,
    /// Linux's receive window, with [`TcpConfig::rcv_window_growth`].
    rcv_window: Option<RcvWindow>,
    /// The receiver's RTT estimate (for the receive window and SACK compression).
    rcv_rtt: RcvRtt,
    /// Linux's SACK compression, with [`TcpConfig::sack_compression`], delayed ACKs and SACK.
    compression: Option<SackCompression>,
    /// The next expected packet when the last ACK was sent (Linux's `rcv_wup`).
    acked_next: i64,
    /// Payload bytes per data packet (the receive window counts bytes).
    payload_bytes: u64,
    /// Distinct packets received (the SYN included): those above `next` are out of order.
    received: i64,
    /// Packets delivered in order by the packet being handled and not yet read by the
    /// application (which reads right after the ACK decision).
    unread: i64,
    /// ECN is on ([`TcpConfig::ecn`]).
    ecn: bool,
    /// A CE mark was seen and the sender's CWR not yet: every ACK carries ECE (RFC 3168
    /// §6.1.3; Linux's `TCP_ECN_DEMAND_CWR`).
    demand_cwr: bool,
    /// CE-marked data packets received.
    ce_marks: u64,
    acks_sent: u64,
    duplicates: u64,
}

impl TcpSink {
    /// The receiver a flow with `config` uses: SACK blocks for the SACK variant only.
    pub fn new(config: &TcpConfig) -> TcpSink {
        let max_blocks = if config.variant.uses_sack() {
            usize::from(config.max_sack_blocks).min(MAX_SACK_BLOCKS)
        } else {
            0
        };
        TcpSink {
            policy: config.ack,
            max_blocks,
            ack_bytes: config.ack_bytes,
            sack_block_bytes: config.sack_block_bytes,
            syn: config.syn,
            next: 0,
            maxseen: -1,
            seen: VecDeque::new(),
            is_dup: false,
            history: [(-1, -1); MAX_SACK_BLOCKS],
            history_len: 0,
            held: None,
            quick_acks: config.quick_acks,
            rcv_window: config
                .rcv_window_growth
                .then(|| RcvWindow::new(config.size_bytes)),
            rcv_rtt: RcvRtt::new(),
            compression: (config.sack_compression
                && max_blocks > 0
                && matches!(config.ack, AckPolicy::Delayed { .. }))
            .then(SackCompression::new),
            acked_next: 0,
            payload_bytes: u64::from(config.size_bytes),
            received: 0,
            unread: 0,
            ecn: config.ecn,
            demand_cwr: false,
            ce_marks: 0,
            acks_sent: 0,
            duplicates: 0,
        }
    }

    /// The cumulative ACK: the highest in-order packet received.
    pub fn cumulative_ack(&self) -> i64 {
        self.next - 1
    }

    /// Data packets delivered in order to the application (the SYN excluded).
    pub fn delivered(&self) -> u64 {
        let first_data = i64::from(self.syn);
        (self.next - first_data).max(0) as u64
    }

    /// ACKs sent so far.
    pub fn acks_sent(&self) -> u64 {
        self.acks_sent
    }

    /// Linux's receive window, with [`TcpConfig::rcv_window_growth`].
    pub fn rcv_window(&self) -> Option<&RcvWindow> {
        self.rcv_window.as_ref()
    }

    /// CE-marked data packets received (0 without ECN).
    pub fn ce_marks(&self) -> u64 {
        self.ce_marks
    }

    /// RFC 3168's receiver (§6.1.3) as Linux runs it (`tcp_ecn_accept_cwr`, then
    /// `__tcp_ecn_check_ce`): a CWR stops the echo, a CE mark (re)starts it. Returns whether
    /// the packet must be acked at once: a data packet with CWR (Linux sets `ICSK_ACK_NOW`),
    /// or the first CE mark of an echo, which starts two quick ACKs, its own included
    /// (`tcp_enter_quickack_mode(sk, 2)`: the sender's window may be small).
    fn ecn_on_data(&mut self, data: &TcpData, ce: bool) -> bool {
        if !self.ecn {
            return false;
        }
        let mut now = false;
        if data.cwr {
            self.demand_cwr = false;
            now = true;
        }
        if ce {
            self.ce_marks += 1;
            if !self.demand_cwr {
                self.demand_cwr = true;
                self.quick_acks = self.quick_acks.max(2);
                now = true;
            }
        }
        now
    }

    /// Duplicate data packets received (already delivered or already held).
    pub fn duplicates(&self) -> u64 {
        self.duplicates
    }

    fn is_seen(&self, seq: i64) -> bool {
        seq < self.next
            || (seq <= self.maxseen && self.seen.get((seq - self.next) as usize) == Some(&true))
    }

    /// Records packet `seq` (ns-2 `Acker::update`).
    fn receive(&mut self, seq: i64) {
        self.is_dup = self.is_seen(seq);
        if self.is_dup {
            self.duplicates += 1;
            return;
        }
        self.received += 1;
        if seq > self.maxseen {
            self.maxseen = seq;
        }
        let index = (seq - self.next) as usize;
        while self.seen.len() <= index {
            self.seen.push_back(false);
        }
        self.seen[index] = true;
        while self.seen.front() == Some(&true) {
            self.seen.pop_front();
            self.next += 1;
        }
    }

    /// Builds the SACK blocks for an ACK sent in response to packet `seq` (ns-2
    /// `Sacker::append_ack`, without D-SACK). Blocks wholly below the cumulative ACK are not
    /// reported (RFC 2018 §4; ns-2 can repeat such stale blocks).
    fn sack_blocks(&mut self, seq: i64) -> ([SackBlock; MAX_SACK_BLOCKS], u8) {
        let mut blocks = [SackBlock::default(); MAX_SACK_BLOCKS];
        let mut count = 0;
        let cum = self.cumulative_ack();
        if self.max_blocks == 0 {
            return (blocks, 0);
        }
        if cum >= self.maxseen {
            self.history_len = 0;
            return (blocks, 0);
        }
        // The block around the packet just received: right edge at the first hole at or
        // after it, left edge one past the first hole below that.
        let mut right = self.maxseen + 1;
        let mut probe = seq.max(self.next);
        while probe <= self.maxseen {
            if !self.is_seen(probe) {
                right = probe;
                break;
            }
            probe += 1;
        }
        let recent = if seq <= cum {
            (0, right)
        } else {
            let mut left = cum + 1;
            let mut i = right - 1;
            while i > cum {
                if !self.is_seen(i) {
                    left = i + 1;
                    break;
                }
                i -= 1;
            }
            blocks[0] = to_block(left, right);
            count = 1;
            (left, right)
        };
        let mut k = 0;
        while count < self.max_blocks && k < self.history_len {
            let (left, right) = self.history[k];
            let covered = recent.0 <= left && recent.1 >= right;
            if covered || right <= cum + 1 || right > self.maxseen + 1 {
                // Covered by the newest block, or stale: drop it from the history.
                self.history.copy_within(k + 1..self.history_len, k);
                self.history_len -= 1;
                continue;
            }
            blocks[count] = to_block(left, right);
            count += 1;
            k += 1;
        }
        if seq > cum {
            let keep = self.history_len.min(MAX_SACK_BLOCKS - 1);
            self.history.copy_within(0..keep, 1);
            self.history[0] = recent;
            self.history_len = keep + 1;
        }
        (blocks, count as u8)
    }

    /// The receiver's RTT and window side of a packet's arrival: the SYN starts the
    /// handshake's clock; a data packet is an RTT sample and, if new, may grow the window,
    /// which sets quick-ACK mode for it (`icsk_ack.quick |= 1`).
    fn grow_window(&mut self, now: Time, packet: &Packet, seqno: i64) {
        if self.syn && seqno == 0 {
            self.rcv_rtt.on_syn_acked(now);
            return;
        }
        self.rcv_rtt.on_data_arrival(now, packet.sent_at);
        let buffered = self.buffered_bytes();
        let Some(window) = self.rcv_window.as_mut() else {
            return;
        };
        window.on_data(now);
        if !self.is_dup && window.on_segment(self.payload_bytes, buffered) {
            self.quick_acks |= 1;
        }
    }

    /// Bytes in the receive buffer: out-of-order packets, and those just delivered in order
    /// and not yet read.
    fn buffered_bytes(&self) -> u64 {
        let out_of_order = self.received - self.next;
        (out_of_order + self.unread).max(0) as u64 * self.payload_bytes
    }

    /// The application reads what the packet just handled delivered in order (the SYN is
    /// not data), which may right-size the receive window.
    fn read(&mut self, now: Time) {
        let unread = std::mem::take(&mut self.unread);
        let syn_delivered = self.syn && unread > 0 && self.next - unread == 0;
        let data = unread - i64::from(syn_delivered);
        if let Some(window) = self.rcv_window.as_mut() {
            if data > 0 {
                window.on_read(now, data as u64 * self.payload_bytes, self.rcv_rtt.rtt_ns());
            }
        }
    }

    fn send_ack(&mut self, seq: i64, out: &mut Outbox) {
        if let Some(window) = &self.rcv_window {
            // `__tcp_select_window` leaves quick-ACK mode once less than half the buffer is
            // free.
            if window.buffer_half_full(self.buffered_bytes()) {
                self.quick_acks = 0;
            }
        }
        let (sack, sack_len) = self.sack_blocks(seq);
        let mut header = TcpAck {
            sack,
            sack_len,
            ..TcpAck::cumulative(self.cumulative_ack())
        };
        header.set_ece(self.demand_cwr);
        let size = self
            .ack_bytes
            .saturating_add(u32::from(sack_len) * self.sack_block_bytes);
        out.send(size, Payload::TcpAck(header));
        self.acks_sent += 1;
        self.acked_next = self.next;
        if let Some(compression) = self.compression.as_mut() {
            compression.on_ack_sent();
        }
    }

    /// `tcp_sack_new_ofo_skb`'s rule, before out-of-order packet `seqno` is recorded: a held
    /// compressed ACK is sent at once when the packet changes a SACK block beyond the first
    /// two or starts a new one while two exist, so the sender hears of the blocks it would
    /// push out. The blocks are the sink's SACK history (the kernel's list, most recent first),
    /// less those already below the cumulative ACK.
    fn send_held_before_new_block(&mut self, seqno: i64, out: &mut Outbox) {
        let held = self.compression.as_ref().map_or(0, SackCompression::held);
        if held == 0 || seqno <= self.next {
            return;
        }
        let cum = self.cumulative_ack();
        let mut live = [(0, 0); MAX_SACK_BLOCKS];
        let mut n = 0;
        for &(left, right) in &self.history[..self.history_len] {
            if right > cum + 1 {
                live[n] = (left, right);
                n += 1;
            }
        }
        if sends_held_ack_first(&live[..n], seqno) {
            if let Some((_, seq)) = self.held.take() {
                self.send_ack(seq, out);
            }
        }
    }

    /// SACK compression's decision for the ACK of packet `seqno`, once no immediate-ACK rule
    /// applies (`__tcp_ack_snd_check`): with out-of-order data held and no more than one
    /// in-order packet delivered since the last ACK, [`SackCompression::hold`] decides; a held
    /// ACK waits for the compression timer, started by the first one held. A duplicate of
    /// delivered data is acked at once (Linux enters quick-ACK mode for it). Returns whether
    /// the ACK is held.
    fn compress(&mut self, now: Time, seqno: i64) -> bool {
        let out_of_order = self.maxseen > self.cumulative_ack();
        let old_duplicate = self.is_dup && seqno < self.next;
        let more_than_one = self.next - self.acked_next > 1;
        let Some(compression) = self.compression.as_mut() else {
            return false;
        };
        if !out_of_order || old_duplicate || more_than_one || !compression.hold(self.next) {
            return false;
        }
        let at = match self.held {
            Some((at, _)) if compression.held() > 1 => at,
            _ => {
                let delay =
                    SackCompression::delay(self.rcv_rtt.rtt_ns(), self.rcv_rtt.handshake_rtt_ns());
                now + delay
            }
        };
        self.held = Some((at, seqno));
        // The kernel's SACK list takes every out-of-order segment, acked or not.
        self.sack_blocks(seqno);
        true
    }
}

fn to_block(left: i64, right: i64) -> SackBlock {
    SackBlock {
        left: left.clamp(0, i64::from(u32::MAX)) as u32,
        right: right.clamp(0, i64::from(u32::MAX)) as u32,
    }
}

impl Agent for TcpSink {
    /// `delivered`: data packets delivered in order so far; `acks_sent`: ACKs sent so far.
    fn trace_fields(&self) -> &'static [&'static str] {
        &["delivered", "acks_sent"]
    }

    fn on_start(&mut self, _now: Time, _out: &mut Outbox) {}

    fn on_stop(&mut self, _now: Time, _out: &mut Outbox) {}

    fn handle_packet(&mut self, now: Time, packet: &Packet, out: &mut Outbox) {
        let Payload::TcpData(data) = packet.payload else {
            return;
        };
        let seqno = data.seqno;
        if seqno < 0 {
            return;
        }
        let ack_now = self.ecn_on_data(&data, packet.ecn_ce);
        self.send_held_before_new_block(seqno, out);
        let next_before = self.next;
        self.receive(seqno);
        self.unread = self.next - next_before;
        self.grow_window(now, packet, seqno);
        self.acknowledge(now, seqno, ack_now, out);
        self.read(now);
    }

    fn poll_timeout(&self) -> Option<Time> {
        self.held.map(|(at, _)| at)
    }

    fn handle_timeout(&mut self, now: Time, out: &mut Outbox) {
        if let Some((at, seq)) = self.held {
            if at <= now {
                self.held = None;
                self.send_ack(seq, out);
            }
        }
    }

    fn trace(&self, values: &mut [f64]) {
        if let [delivered, acks, ..] = values {
            *delivered = self.delivered() as f64;
            *acks = self.acks_sent as f64;
        }
    }
}

impl TcpSink {
    /// Acknowledges data packet `seqno` at once or holds the ACK, per the policy; `ack_now`:
    /// ECN requires an ACK at once.
    fn acknowledge(&mut self, now: Time, seqno: i64, ack_now: bool, out: &mut Outbox) {
        match self.policy {
            AckPolicy::Immediate => self.send_ack(seqno, out),
            AckPolicy::Delayed { interval } => {
                // Hold an in-order packet that completes the cumulative ACK when nothing is
                // held, unless it fills a hole (RFC2581_immediate_ack_) or is the SYN
                // (SYN_immediate_ack_).
                let in_order = seqno == self.cumulative_ack();
                let quick = self.quick_acks > 0 && !(self.syn && seqno == 0);
                if quick {
                    self.quick_acks -= 1;
                }
                if !quick
                    && !ack_now
                    && self.held.is_none()
                    && in_order
                    && seqno >= self.maxseen
                    && seqno != 0
                {
                    self.held = Some((now + interval, seqno));
                    return;
                }
                if !quick && !ack_now && self.compress(now, seqno) {
                    return;
                }
                self.held = None;
                self.send_ack(seqno, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::super::TcpVariant;
    use super::*;
    use crate::packet::{FlowId, NodeId};

    fn data(seqno: i64) -> Packet {
        Packet::new(
            FlowId(0),
            0,
            1000,
            NodeId(1),
            Time::ZERO,
            Payload::TcpData(TcpData::plain(seqno)),
        )
    }

    fn acks(out: &mut Outbox) -> Vec<TcpAck> {
        out.drain()
            .map(|o| match o.payload {
                Payload::TcpAck(a) => a,
                other => panic!("{other:?}"),
            })
            .collect()
    }

    fn sink(variant: TcpVariant, ack: AckPolicy) -> TcpSink {
        TcpSink::new(&TcpConfig {
            ack,
            ..TcpConfig::ns2_2000(variant)
        })
    }

    fn ms(n: u64) -> Time {
        Time::from_nanos(n * 1_000_000)
    }

    #[test]
    fn immediate_acks_carry_the_highest_in_order_packet() {
        let mut sink = sink(TcpVariant::Reno, AckPolicy::Immediate);
        let mut out = Outbox::default();
        for seq in [0, 1, 3, 4, 2] {
            sink.handle_packet(Time::ZERO, &data(seq), &mut out);
        }
        let got: Vec<i64> = acks(&mut out).iter().map(|a| a.seqno()).collect();
        assert_eq!(got, vec![0, 1, 1, 1, 4]);
        assert_eq!(sink.delivered(), 5);
        // A duplicate is acked again and counted.
        sink.handle_packet(Time::ZERO, &data(2), &mut out);
        assert_eq!(acks(&mut out)[0].ack, 4);
        assert_eq!(sink.duplicates(), 1);
        // Only the SACK sink sends blocks.
        sink.handle_packet(Time::ZERO, &data(6), &mut out);
        assert_eq!(acks(&mut out)[0].sack_len, 0);
    }

    #[test]
    fn delayed_acks_every_second_packet_or_after_the_interval() {
        let policy = AckPolicy::Delayed {
            interval: Duration::from_millis(100),
        };
        let mut sink = sink(TcpVariant::Reno, policy);
        let mut out = Outbox::default();
        // Packet 0 (the SYN position) is acked at once.
        sink.handle_packet(ms(0), &data(0), &mut out);
        assert_eq!(acks(&mut out).len(), 1);
        sink.handle_packet(ms(10), &data(1), &mut out);
        assert!(out.packets().is_empty());
        assert_eq!(sink.poll_timeout(), Some(ms(110)));
        sink.handle_packet(ms(20), &data(2), &mut out);
        assert_eq!(acks(&mut out)[0].ack, 2, "second packet releases the ACK");
        assert_eq!(sink.poll_timeout(), None);
        sink.handle_packet(ms(30), &data(3), &mut out);
        assert!(out.packets().is_empty());
        sink.handle_timeout(ms(130), &mut out);
        assert_eq!(acks(&mut out)[0].ack, 3, "the timer releases a lone packet");
        // Out of order: at once; the hole-filling packet too.
        sink.handle_packet(ms(200), &data(5), &mut out);
        assert_eq!(acks(&mut out)[0].ack, 3);
        sink.handle_packet(ms(210), &data(4), &mut out);
        assert_eq!(acks(&mut out)[0].ack, 5);
    }

    #[test]
    fn segments_that_grow_the_receive_window_are_acked_at_once() {
        // Linux's receiver without the 16 quick ACKs of the start: 1448-byte segments, each
        // 50 ms on the way (no SYN: the ACK path is taken as long, so the RTT is 100 ms).
        let mut sink = TcpSink::new(&TcpConfig {
            quick_acks: 0,
            syn: false,
            ..TcpConfig::linux(TcpVariant::Sack)
        });
        let mut out = Outbox::default();
        let mut arrive = |sink: &mut TcpSink, seq: i64, at_ms: u64| {
            let packet = Packet::new(
                FlowId(0),
                0,
                1500,
                NodeId(1),
                ms(at_ms - 50),
                Payload::TcpData(TcpData::plain(seq)),
            );
            sink.handle_packet(ms(at_ms), &packet, &mut out);
            !acks(&mut out).is_empty()
        };
        // The first RTT, 22 segments 1 ms apart from 50 ms: rcv_ssthresh grows from 64088 to
        // 80480 - 1448 in six segments, each acked at once; then every second segment is.
        let first: Vec<bool> = (0..22)
            .map(|seq| arrive(&mut sink, seq, 50 + seq as u64))
            .collect();
        assert!(first[..6].iter().all(|&a| a), "{first:?}");
        for (seq, &acked) in first.iter().enumerate().skip(6) {
            assert_eq!(acked, seq % 2 == 1, "packet {seq}: {first:?}");
        }
        // The next RTT's first segment, at 150 ms, is read an RTT after the first: 23
        // segments against 10 raise the clamp to 2 x 33304 plus twice 66608 x 18824 / 14480,
        // 239788, and the next 56 segments each grow the window and are acked at once.
        let at = |seq: i64| 150 + (seq - 22) as u64;
        assert!(!arrive(&mut sink, 22, at(22)));
        let window = sink.rcv_window().unwrap();
        assert_eq!(
            (window.window_clamp(), window.rcv_ssthresh()),
            (239_788, 79_032)
        );
        assert!((23..79).all(|seq| arrive(&mut sink, seq, at(seq))));
        // At a steady 100 segments per RTT the clamp stops rising, rcv_ssthresh catches up and
        // delayed ACKs return: every second segment.
        let tail: Vec<bool> = (79..2000)
            .map(|seq| arrive(&mut sink, seq, at(seq)))
            .collect();
        let window = sink.rcv_window().unwrap();
        assert_eq!(window.rcv_ssthresh(), window.window_clamp() - 1448);
        let last = &tail[tail.len() - 200..];
        assert_eq!(last.iter().filter(|&&a| a).count(), 100);
    }

    /// A linux-preset SACK sink without quick ACKs or window growth, `compression` on or off;
    /// packets take 20 ms each way (no SYN), so the receiver's RTT is 40 ms and the
    /// compression timer 1 ms.
    fn linux_sink(compression: bool) -> TcpSink {
        TcpSink::new(&TcpConfig {
            quick_acks: 0,
            rcv_window_growth: false,
            sack_compression: compression,
            syn: false,
            ..TcpConfig::linux(TcpVariant::Sack)
        })
    }

    fn us(n: u64) -> Time {
        Time::from_nanos(n * 1000)
    }

    /// An ACK seen by [`drive`]: when it left, its cumulative ACK and its SACK blocks.
    type SeenAck = (Time, i64, Vec<(u32, u32)>);

    /// Delivers `arrivals` (arrival time, packet) in order, firing the sink's timer whenever it
    /// is due first; returns the ACKs sent.
    fn drive(sink: &mut TcpSink, arrivals: &[(Time, i64)]) -> Vec<SeenAck> {
        let mut got = Vec::new();
        let mut out = Outbox::default();
        let mut record = |at: Time, out: &mut Outbox| {
            for a in acks(out) {
                let blocks = a.blocks().iter().map(|b| (b.left, b.right)).collect();
                got.push((at, a.seqno(), blocks));
            }
        };
        for &(at, seq) in arrivals {
            while let Some(due) = sink.poll_timeout().filter(|&due| due <= at) {
                sink.handle_timeout(due, &mut out);
                record(due, &mut out);
            }
            let packet = Packet::new(
                FlowId(0),
                0,
                1500,
                NodeId(1),
                at - Duration::from_millis(20),
                Payload::TcpData(TcpData::plain(seq)),
            );
            sink.handle_packet(at, &packet, &mut out);
            record(at, &mut out);
        }
        if let Some(due) = sink.poll_timeout() {
            sink.handle_timeout(due, &mut out);
            record(due, &mut out);
        }
        got
    }

    /// Packets 0-3 in order from 20 ms, 4 lost, then 5.. every 250 us from 30 ms.
    fn hole_at_4(last: i64) -> Vec<(Time, i64)> {
        let mut arrivals: Vec<(Time, i64)> = (0..4).map(|s| (ms(20 + s as u64), s)).collect();
        arrivals.extend((5..=last).map(|s| (us(30_000 + 250 * (s as u64 - 5)), s)));
        arrivals
    }

    #[test]
    fn sack_compression_sends_three_acks_per_hole_then_one_per_timer() {
        let got = drive(&mut linux_sink(true), &hole_at_4(16));
        // Packet 0 at once, 2 releases 1's ACK, 3's ACK is held and 5's goes at once.
        let times: Vec<Time> = got.iter().map(|a| a.0).collect();
        assert_eq!(
            &times[..5],
            &[ms(20), ms(22), ms(30), us(30_250), us(30_500)]
        );
        // 5, 6 and 7: the three ACKs for rcv_nxt 4 at once; 8 starts the timer, 1 ms (5% of
        // 40 ms is 2 ms) and its 100 us slack, and 9-12 wait with it; 13 starts the next.
        assert!(got[2..].iter().all(|a| a.1 == 3));
        assert_eq!(got[4].2, vec![(5, 8)]);
        assert_eq!((got[5].0, &got[5].2), (us(31_850), &vec![(5, 13)]));
        assert_eq!((got[6].0, &got[6].2), (us(33_100), &vec![(5, 17)]));
        assert_eq!(got.len(), 7);
        // Without compression every out-of-order packet is acked at once.
        let plain = drive(&mut linux_sink(false), &hole_at_4(16));
        assert_eq!(plain.len(), 2 + 12);
        assert!(plain[2..]
            .iter()
            .zip(5..)
            .all(|(a, s)| a.0 == us(30_000 + 250 * (s - 5))));
    }

    #[test]
    fn quick_acks_take_precedence_over_sack_compression() {
        // 14 quick ACKs: packets 0-3 and out-of-order 5-14 are each acked at once, without
        // counting toward compression; 15-17 then get the three immediate ACKs for rcv_nxt 4
        // and 18 starts the timer.
        let mut sink = TcpSink::new(&TcpConfig {
            quick_acks: 14,
            rcv_window_growth: false,
            syn: false,
            ..TcpConfig::linux(TcpVariant::Sack)
        });
        let got = drive(&mut sink, &hole_at_4(20));
        let times: Vec<Time> = got[4..].iter().map(|a| a.0).collect();
        let at = |s: u64| us(30_000 + 250 * (s - 5));
        let mut expected: Vec<Time> = (5..=17).map(at).collect();
        expected.push(at(18) + Duration::from_micros(1100));
        assert_eq!(times, expected);
    }

    #[test]
    fn sack_compression_holds_at_most_44_acks() {
        // 60 out-of-order packets 1 us apart: 3 ACKs at once, then the 48th packet's (44
        // held before it), then the timer's for the rest.
        let mut arrivals: Vec<(Time, i64)> = (0..4).map(|s| (ms(20 + s as u64), s)).collect();
        arrivals.extend((5..65).map(|s| (us(30_000 + s as u64 - 5), s)));
        let got = drive(&mut linux_sink(true), &arrivals);
        let times: Vec<Time> = got[2..].iter().map(|a| a.0).collect();
        assert_eq!(
            times,
            [us(30_000), us(30_001), us(30_002), us(30_047), us(31_148)]
        );
        assert_eq!(got.last().unwrap().2, vec![(5, 65)]);
    }

    #[test]
    fn sack_compression_acks_a_filled_hole_at_once() {
        let mut arrivals = hole_at_4(10);
        // The retransmission of 4 arrives 350 us after 10, inside 8's timer period.
        arrivals.push((us(31_600), 4));
        let got = drive(&mut linux_sink(true), &arrivals);
        let last = got.last().unwrap();
        assert_eq!((last.0, last.1, last.2.len()), (us(31_600), 10, 0));
        // The held ACK for 8-10 never left: the filled hole's ACK replaced it.
        assert_eq!(got.len(), 2 + 3 + 1);
    }

    #[test]
    fn sack_compression_sends_the_held_ack_before_a_third_block() {
        // 4 lost, 5-7 (three ACKs at once), 8 lost, 9 held, 10 lost, 11: a third block, so
        // the ACK held for 9 goes at once and 11's is held in its turn.
        let mut arrivals: Vec<(Time, i64)> = (0..4).map(|s| (ms(20 + s as u64), s)).collect();
        arrivals.extend(
            [5, 6, 7, 9, 11]
                .iter()
                .enumerate()
                .map(|(i, &s)| (us(30_000 + 100 * i as u64), s)),
        );
        let got = drive(&mut linux_sink(true), &arrivals);
        let tail: Vec<(Time, Vec<(u32, u32)>)> =
            got[5..].iter().map(|a| (a.0, a.2.clone())).collect();
        assert_eq!(
            tail,
            vec![
                (us(30_400), vec![(9, 10), (5, 8)]),
                (us(31_500), vec![(11, 12), (9, 10), (5, 8)]),
            ]
        );
    }

    #[test]
    fn sack_blocks_most_recent_first() {
        let mut sink = sink(TcpVariant::Sack, AckPolicy::Immediate);
        let mut out = Outbox::default();
        for seq in 0..3 {
            sink.handle_packet(Time::ZERO, &data(seq), &mut out);
        }
        acks(&mut out);
        // 3 lost; 4, 5 arrive; 6 lost; 7 arrives; 8 lost; 9 arrives.
        let blocks = |a: &TcpAck| -> Vec<(u32, u32)> {
            a.blocks().iter().map(|b| (b.left, b.right)).collect()
        };
        sink.handle_packet(Time::ZERO, &data(4), &mut out);
        sink.handle_packet(Time::ZERO, &data(5), &mut out);
        sink.handle_packet(Time::ZERO, &data(7), &mut out);
        sink.handle_packet(Time::ZERO, &data(9), &mut out);
        let got = acks(&mut out);
        assert!(got.iter().all(|a| a.ack == 2));
        assert_eq!(blocks(&got[0]), vec![(4, 5)]);
        assert_eq!(blocks(&got[1]), vec![(4, 6)]);
        assert_eq!(blocks(&got[2]), vec![(7, 8), (4, 6)]);
        assert_eq!(blocks(&got[3]), vec![(9, 10), (7, 8), (4, 6)]);
        // ACK size grows by 8 bytes per block, as in ns-2.
        // The retransmission of 3 fills the first hole: ACK 5, the others remain.
        sink.handle_packet(Time::ZERO, &data(3), &mut out);
        let filled = out.packets()[0];
        assert_eq!(filled.size_bytes, 40 + 2 * 8);
        let got = acks(&mut out);
        assert_eq!(got[0].ack, 5);
        assert_eq!(blocks(&got[0]), vec![(9, 10), (7, 8)]);
        for seq in [6, 8] {
            sink.handle_packet(Time::ZERO, &data(seq), &mut out);
        }
        let got = acks(&mut out);
        assert_eq!(got[1].ack, 9);
        assert_eq!(got[1].sack_len, 0);
    }
}
