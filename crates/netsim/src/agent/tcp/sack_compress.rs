//! Linux's SACK compression at the receiver ([`super::TcpConfig::sack_compression`]; docs/tcp.md,
//! "SACK compression"), since 4.20 (commit 5d9f4262b7ea, "tcp: add SACK compression") with its
//! later rules, as `net/ipv4/tcp_input.c` runs it in 6.x.
//!
//! A delayed-ACK receiver holding out-of-order data would ack every segment at once (RFC 5681
//! §4.2); under steady loss that is nearly every segment. Linux's `__tcp_ack_snd_check`, once its
//! immediate-ACK conditions (more than one full segment since the last ACK, quick-ACK mode,
//! `ICSK_ACK_NOW`) do not hold and out-of-order data is queued, sends at once only the first
//! [`FASTRETRANS_THRESH`] ACKs for a given `rcv_nxt` (`dup_ack_counter`, so a sender counting
//! duplicate ACKs still sees three) and any ACK after [`COMP_SACK_NR`] held ones
//! (`tcp_comp_sack_nr`); otherwise it holds the ACK (`compressed_ack`) and starts a timer, if
//! none runs, for min(`tcp_comp_sack_delay_ns`, 5% of the RTT) ([`SackCompression::delay`]).
//! Any ACK sent clears the count and the timer (`tcp_event_ack_sent`); the timer sends the ACK
//! (`tcp_compressed_ack_kick`). `tcp_sack_new_ofo_skb` sends a held ACK at once before a
//! segment changes a SACK block beyond the first [`SACK_BLOCKS_EXPECTED`] ones
//! ([`sends_held_ack_first`]), so no block goes unreported.

use std::time::Duration;

/// `net.ipv4.tcp_comp_sack_nr`'s default: an ACK is sent at once after this many were held.
pub const COMP_SACK_NR: u32 = 44;
/// `net.ipv4.tcp_comp_sack_delay_ns`'s default: the longest a held ACK waits.
pub const COMP_SACK_DELAY: Duration = Duration::from_millis(1);
/// `net.ipv4.tcp_comp_sack_slack_ns`'s default in the testbed's Linux 6.18 (later kernels use
/// 10 µs): the timer is an hrtimer armed for the range [delay, delay + slack]
/// (`hrtimer_start_range_ns`), and with no other timer due on its CPU in that range it fires at
/// the range's end. Measured on the testbed (6.18, 20 Mb/s, 40 ms): a held ACK leaves about
/// 1.13 ms after the first segment it holds.
pub const COMP_SACK_SLACK: Duration = Duration::from_micros(100);
/// `TCP_FASTRETRANS_THRESH`: ACKs for one `rcv_nxt` sent at once before compression begins.
pub const FASTRETRANS_THRESH: u32 = 3;
/// `TCP_SACK_BLOCKS_EXPECTED`: the SACK blocks an ACK is counted on to deliver ("the max is 4,
/// but this becomes 3 if TCP timestamps are there... be conservative and use 2").
pub const SACK_BLOCKS_EXPECTED: usize = 2;

/// The compression state: Linux's `compressed_ack`, `compressed_ack_rcv_nxt` and
/// `dup_ack_counter` (the timer is the sink's held ACK).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SackCompression {
    /// ACKs held since the last one sent (`compressed_ack`).
    compressed: u32,
    /// The `rcv_nxt` whose ACKs `dup_acks` counts (`compressed_ack_rcv_nxt`); -1 before any.
    counted_rcv_nxt: i64,
    /// ACKs sent at once for `counted_rcv_nxt` (`dup_ack_counter`).
    dup_acks: u32,
}

impl Default for SackCompression {
    fn default() -> Self {
        SackCompression::new()
    }
}

impl SackCompression {
    /// Nothing held or counted yet.
    pub fn new() -> SackCompression {
        SackCompression {
            compressed: 0,
            counted_rcv_nxt: -1,
            dup_acks: 0,
        }
    }

    /// ACKs held since the last one sent.
    pub fn held(&self) -> u32 {
        self.compressed
    }

    /// The decision of `__tcp_ack_snd_check` for an ACK due with out-of-order data queued and
    /// none of the immediate-ACK conditions, the next expected packet being `rcv_nxt`: whether
    /// to hold it (true) or send it at once (false). Sends at once after [`COMP_SACK_NR`] held
    /// ACKs, and the first [`FASTRETRANS_THRESH`] for each `rcv_nxt`.
    pub fn hold(&mut self, rcv_nxt: i64) -> bool {
        if self.compressed >= COMP_SACK_NR {
            return false;
        }
        if self.counted_rcv_nxt != rcv_nxt {
            self.counted_rcv_nxt = rcv_nxt;
            self.dup_acks = 0;
        }
        if self.dup_acks < FASTRETRANS_THRESH {
            self.dup_acks += 1;
            return false;
        }
        self.compressed += 1;
        true
    }

    /// An ACK was sent: nothing is held any longer (`tcp_event_ack_sent`).
    pub fn on_ack_sent(&mut self) {
        self.compressed = 0;
    }

    /// When the timer fires after it is armed: 5% of the RTT, at most [`COMP_SACK_DELAY`], plus
    /// the timer's slack [`COMP_SACK_SLACK`]. The RTT is the receiver's estimate
    /// (`rcv_rtt_est`), or `srtt_ns` (the kernel's `srtt_us`, at a receiver the handshake's
    /// RTT) where that is known and smaller; 0 when neither is known, as in the kernel.
    /// Nanoseconds where the kernel counts microseconds.
    pub fn delay(rcv_rtt_ns: u64, srtt_ns: u64) -> Duration {
        let rtt = if srtt_ns != 0 && srtt_ns < rcv_rtt_ns {
            srtt_ns
        } else {
            rcv_rtt_ns
        };
        COMP_SACK_DELAY.min(Duration::from_nanos(rtt / 20)) + COMP_SACK_SLACK
    }
}

/// Whether out-of-order packet `seq` sends a held ACK before it is added to the SACK blocks,
/// `blocks` (half-open packet ranges, most recent first, as the receiver keeps them): when it
/// extends or joins a block at index [`SACK_BLOCKS_EXPECTED`] or beyond, or starts a new block
/// while that many exist (`tcp_sack_new_ofo_skb`, with `tcp_sack_extend`'s test: the packet
/// overlaps or touches the block).
pub fn sends_held_ack_first(blocks: &[(i64, i64)], seq: i64) -> bool {
    let touches = |&(left, right): &(i64, i64)| seq <= right && left <= seq + 1;
    match blocks.iter().position(touches) {
        Some(index) => index >= SACK_BLOCKS_EXPECTED,
        None => blocks.len() >= SACK_BLOCKS_EXPECTED,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_acks_per_rcv_nxt_then_held_until_the_cap() {
        let mut c = SackCompression::new();
        let decisions: Vec<bool> = (0..5).map(|_| c.hold(7)).collect();
        assert_eq!(decisions, [false, false, false, true, true]);
        assert_eq!(c.held(), 2);
        // A sent ACK clears the count, not the duplicate-ACK count for this rcv_nxt.
        c.on_ack_sent();
        assert!(c.hold(7));
        // A new rcv_nxt starts the count of immediate ACKs again.
        assert_eq!(
            [c.hold(9), c.hold(9), c.hold(9), c.hold(9)],
            [false, false, false, true]
        );
        // At most 44 held: the 45th ACK goes at once.
        let mut c = SackCompression::new();
        let held = (0..60).filter(|_| c.hold(1)).count();
        assert_eq!(held, 44);
    }

    #[test]
    fn the_delay_is_five_percent_of_the_smaller_rtt_at_most_a_millisecond_plus_the_slack() {
        let ms = |n: u64| n * 1_000_000;
        let us = Duration::from_micros;
        assert_eq!(SackCompression::delay(ms(40), ms(45)), us(1100));
        assert_eq!(SackCompression::delay(ms(10), ms(0)), us(600));
        assert_eq!(SackCompression::delay(ms(10), ms(4)), us(300));
        assert_eq!(SackCompression::delay(0, 0), us(100));
    }

    #[test]
    fn a_block_beyond_the_second_sends_the_held_ack_first() {
        // Blocks [20, 25), [10, 12), [5, 6), most recent first.
        let blocks = [(20, 25), (10, 12), (5, 6)];
        // Extending the first two (or touching them) does not; the third does.
        assert!(!sends_held_ack_first(&blocks, 25));
        assert!(!sends_held_ack_first(&blocks, 9));
        assert!(sends_held_ack_first(&blocks, 6));
        // A new block with two or more present does; with one it does not.
        assert!(sends_held_ack_first(&blocks, 30));
        assert!(!sends_held_ack_first(&blocks[..1], 30));
        assert!(!sends_held_ack_first(&[], 30));
    }
}
