//! Linux's receive-window growth at the receiver ([`super::TcpConfig::rcv_window_growth`];
//! docs/tcp.md, "The receive window"), modelled for the ACKs it makes the receiver send at once.
//!
//! The kernel (6.18, `net/ipv4/tcp_input.c`) grows the window it offers, `rcv_ssthresh`, by two
//! segments for each full segment received while it is under the room the buffer allows
//! (`tcp_grow_window`), and each time it grows it sets `icsk_ack.quick |= 1`, so that segment is
//! acked at once (`__tcp_ack_snd_check`). The room is `window_clamp`, which dynamic right-sizing
//! (`tcp_rcv_space_adjust` and `tcp_rcvbuf_grow`, once per receiver RTT) raises to twice the data
//! the application read in the last RTT, plus four times that data's growth: while the data per
//! RTT doubles (slow start) the clamp stays ahead and every segment is acked at once; once it
//! levels off `rcv_ssthresh` catches up and delayed ACKs return.
//!
//! Named approximations: everything is counted in window bytes (the kernel converts buffer
//! space to window with the measured payload/truesize ratio, `tcp_win_from_space`; here the
//! initial clamp is the measured window of the 131072-byte default buffer and later clamps are
//! the right-sized windows themselves); the application reads in-order data as it arrives (a
//! bulk reader), so the buffer holds only out-of-order data and the segments just delivered;
//! the receiver's RTT is [`super::rcv_rtt::RcvRtt`]'s (its own approximations). The advertised
//! window itself is not enforced on the sender.

use tfrc::Time;

/// `tcp_rmem[1]`: the receive buffer a connection starts with (bytes of buffer space).
pub const INITIAL_RCVBUF: u64 = 131_072;
/// `tcp_rmem[2]`'s default: the most that right-sizing raises the buffer to.
pub const MAX_RCVBUF: u64 = 6 * 1024 * 1024;
/// The window the initial buffer gives once the first data segment has set the payload/truesize
/// ratio (`tcp_measure_rcv_mss` re-clamps with it): measured on the testbed (veth, 1448-byte
/// segments), 80480 bytes of window for 131072 bytes of buffer.
pub const INITIAL_CLAMP: u64 = 80_480;
/// `TCP_INIT_CWND`: the first right-sizing measure compares against this many segments.
const INIT_CWND: u64 = 10;
/// `tcp_event_data_recv` grows the window only for segments of at least this many bytes.
const MIN_GROW_LEN: u64 = 128;

/// The receiver's window state: Linux's `rcv_ssthresh`, `window_clamp` and `rcvq_space`, in
/// bytes (the RTT that paces right-sizing comes from the sink's [`super::rcv_rtt::RcvRtt`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RcvWindow {
    /// The receiver's MSS (`advmss`): the flow's payload bytes per packet.
    advmss: u64,
    /// The window the receiver offers at most for now (`rcv_ssthresh`).
    rcv_ssthresh: u64,
    /// The most it may grow to (`window_clamp`), raised by right-sizing.
    window_clamp: u64,
    /// Bytes read in the last measured RTT (`rcvq_space.space`).
    space: u64,
    /// Bytes read when the current measure began (`rcvq_space.seq`).
    space_seq: u64,
    /// When the current measure began (`rcvq_space.time`); `None` before the first data.
    space_time: Option<Time>,
    /// Bytes the application has read (`copied_seq`).
    read: u64,
}

impl RcvWindow {
    /// A receiver with the kernel's initial values for segments of `advmss` bytes
    /// (`tcp_init_buffer_space`): `rcv_ssthresh` is the default buffer's window at the default
    /// ratio of one half, less one reserved segment (64088 bytes for 1448-byte segments, as
    /// measured); the clamp is [`INITIAL_CLAMP`]; the first measure compares against
    /// min(`rcv_ssthresh`, 10 segments).
    pub fn new(advmss: u32) -> RcvWindow {
        let advmss = u64::from(advmss.max(1));
        let window_clamp = INITIAL_CLAMP.max(2 * advmss);
        let rcv_ssthresh = (INITIAL_RCVBUF / 2)
            .saturating_sub(advmss)
            .max(2 * advmss)
            .min(window_clamp);
        RcvWindow {
            advmss,
            rcv_ssthresh,
            window_clamp,
            space: rcv_ssthresh.min(INIT_CWND * advmss),
            space_seq: 0,
            space_time: None,
            read: 0,
        }
    }

    /// The window offered at most for now (`rcv_ssthresh`), bytes.
    pub fn rcv_ssthresh(&self) -> u64 {
        self.rcv_ssthresh
    }

    /// The window's ceiling (`window_clamp`), bytes.
    pub fn window_clamp(&self) -> u64 {
        self.window_clamp
    }

    /// A data packet arrived at `now`: the first starts the first right-sizing measure (the
    /// kernel starts it when the connection is established).
    pub fn on_data(&mut self, now: Time) {
        if self.space_time.is_none() {
            self.space_time = Some(now);
        }
    }

    /// `tcp_grow_window` for a new data segment of `len` bytes, with `held` bytes in the buffer
    /// (out-of-order data and data delivered but not yet read, this segment included): while
    /// `rcv_ssthresh` is under the room, it grows by max(2 `advmss`, 2 `len`), capped by the
    /// room. Returns whether it grew, that is whether the kernel sets `icsk_ack.quick |= 1`.
    pub fn on_segment(&mut self, len: u64, held: u64) -> bool {
        if len < MIN_GROW_LEN {
            return false;
        }
        let room = self
            .window_clamp
            .saturating_sub(held)
            .saturating_sub(self.rcv_ssthresh);
        if room == 0 {
            return false;
        }
        let incr = (2 * self.advmss).max(2 * len);
        self.rcv_ssthresh += room.min(incr);
        true
    }

    /// Whether an ACK sent with `held` bytes in the buffer leaves quick-ACK mode
    /// (`__tcp_select_window`: `icsk_ack.quick = 0` once less than half the window is free).
    pub fn buffer_half_full(&self, held: u64) -> bool {
        2 * self.window_clamp.saturating_sub(held) < self.window_clamp
    }

    /// The application read `bytes` at `now` (`tcp_rcv_space_adjust`) with the receiver's RTT
    /// at `rtt_ns` (0: no sample yet): once an RTT has passed since the measure began, if more
    /// was read in it than in the last one the clamp rises to follow (`tcp_rcvbuf_grow`), and a
    /// new measure begins.
    pub fn on_read(&mut self, now: Time, bytes: u64, rtt_ns: u64) {
        self.read += bytes;
        let Some(since) = self.space_time else {
            return;
        };
        let elapsed = now.saturating_since(since).as_nanos() as u64;
        if rtt_ns == 0 || elapsed < rtt_ns {
            return;
        }
        let copied = self.read - self.space_seq;
        if copied > self.space {
            self.grow_clamp(copied);
        }
        self.space_seq = self.read;
        self.space_time = Some(now);
    }

    /// `tcp_rcvbuf_grow(sk, copied)`: the window right-sized for `copied` bytes per RTT,
    /// 2 `copied` ("DRS is always one RTT late") plus twice 2 `copied` times the relative
    /// growth over the last measure ("slow start: allow the sender to double its rate"),
    /// capped by [`MAX_RCVBUF`]'s window; the clamp only ever rises.
    fn grow_clamp(&mut self, copied: u64) {
        let old = self.space.max(1);
        self.space = copied;
        let mut rcvwin = 2 * copied;
        let grow = rcvwin * (copied - old.min(copied)) / old;
        rcvwin += 2 * grow;
        let cap = MAX_RCVBUF * INITIAL_CLAMP / INITIAL_RCVBUF;
        let rcvwin = rcvwin.min(cap);
        if rcvwin > self.window_clamp {
            self.window_clamp = rcvwin;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Time {
        Time::from_nanos(n * 1_000_000)
    }

    #[test]
    fn initial_values_are_the_kernels() {
        let w = RcvWindow::new(1448);
        // 131072 / 2 - 1448 (measured 64088 at the first segments), the measured clamp, and
        // the first measure against min(64088, 10 x 1448).
        assert_eq!((w.rcv_ssthresh(), w.window_clamp()), (64_088, 80_480));
        assert_eq!(w.space, 14_480);
    }

    #[test]
    fn each_segment_grows_the_window_by_two_segments_until_the_room_is_used() {
        let mut w = RcvWindow::new(1448);
        // Room 80480 - 1448 (the segment itself) - 64088 = 14944: five growths of 2896, then
        // one of the 464 left, then none.
        let grew: Vec<bool> = (0..8).map(|_| w.on_segment(1448, 1448)).collect();
        assert_eq!(grew, [true, true, true, true, true, true, false, false]);
        assert_eq!(w.rcv_ssthresh(), 80_480 - 1448);
        // Small segments never grow it, and held out-of-order data takes room.
        let mut w = RcvWindow::new(1448);
        assert!(!w.on_segment(100, 100));
        assert!(!w.on_segment(1448, 80_480 - 64_088));
        assert!(w.buffer_half_full(40_241) && !w.buffer_half_full(40_240));
    }

    #[test]
    fn right_sizing_follows_the_kernels_arithmetic() {
        let mut w = RcvWindow::new(1448);
        // The first data packet arrives at 100 ms; the receiver's RTT is 90 ms.
        w.on_data(ms(100));
        let rtt = 90_000_000;
        // No RTT sample yet, or under an RTT since the measure began: nothing.
        w.on_read(ms(195), 0, 0);
        w.on_read(ms(150), 14_480, rtt);
        assert_eq!(w.window_clamp(), 80_480);
        // At 190 ms, 28960 bytes read against 14480: rcvwin = 2 x 28960 = 57920, grow =
        // 57920 x (28960 - 14480) / 14480 = 57920, rcvwin += 2 x 57920: 173760.
        w.on_read(ms(190), 14_480, rtt);
        assert_eq!(w.window_clamp(), 173_760);
        assert_eq!(w.space, 28_960);
        // The next RTT reads 43440 (1.5x): 86880 + 2 x 86880 x 14480 / 28960 = 173760, no
        // higher than the clamp, which never shrinks; the measure still moves on.
        w.on_read(ms(280), 43_440, rtt);
        assert_eq!(w.window_clamp(), 173_760);
        assert_eq!(w.space, 43_440);
        // Reading less than the last RTT changes nothing but the measure.
        w.on_read(ms(370), 10_000, rtt);
        assert_eq!((w.window_clamp(), w.space), (173_760, 43_440));
        // Then 86880 (twice 43440): 173760 + 2 x 173760 = 521280.
        w.on_read(ms(460), 86_880, rtt);
        assert_eq!(w.window_clamp(), 521_280);
    }
}
