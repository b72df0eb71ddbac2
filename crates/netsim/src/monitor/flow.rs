//! The per-flow monitor: what a flow sent, delivered and lost, per bin and in total, its loss
//! events, and its agent's state sampled once per bin.
//!
//! The send rate at timescale delta (Floyd 2000 eq. 3) and everything built on it (CoV,
//! equivalence, fairness, friendliness) are computed afterwards from [`FlowBins`]; the packet
//! loss rate and the loss event rate (Rhee & Xu 2005 §2) from [`FlowTotals`].
//!
//! # Loss events
//! Loss events are counted by the monitor, the same way for every protocol (Rhee & Xu 2005 §2:
//! "measured the same way for TCP, TFRC, CBR"), not taken from the agent. A drop opens a new
//! event when there is no event yet, or when its packet was sent more than one RTT
//! (`loss_event_rtt`) after the packet whose loss opened the current event: the rule RFC 5348
//! §5.2 uses to group losses. Send times (`sent_at`), not drop times, are compared, so drops on
//! different hops order by when their packets left the source; a drop whose packet was sent
//! before the current event's first lost packet joins the current event. An event is binned by
//! the time of the drop that opened it.

use std::time::Duration;

use tfrc::Time;

use super::bins::{BinSpan, Bins};
use super::counts::Counts;
use super::drop_log::{DropLog, DropLogRecord};
use super::state_trace::{decode_blob, StateSamples};

/// A flow's per-bin series, each exactly as long as the run has bins (`ceil(end / bin)`).
/// Bin k covers [k·bin, (k+1)·bin). Each is stored as narrow as its values allow ([`Counts`]);
/// `to_vec` reads one in its logical type.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FlowBins {
    /// Forward data packets that left the source in the bin (Floyd 2000 eq. 3's count).
    pub sent_packets: Counts<u32>,
    /// Their bytes.
    pub sent_bytes: Counts<u64>,
    /// Forward data packets that reached the receiver in the bin (throughput).
    pub received_packets: Counts<u32>,
    /// Their bytes.
    pub received_bytes: Counts<u64>,
    /// Forward data packets lost in the bin (binned by drop time), on any link.
    pub dropped_packets: Counts<u32>,
    /// Their bytes.
    pub dropped_bytes: Counts<u64>,
    /// Loss events opened in the bin (binned by the time of the drop that opened each).
    pub loss_events: Counts<u32>,
}

/// A flow's counters over the whole run (or so far, from [`FlowMonitor::totals`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowTotals {
    /// Forward data packets sent.
    pub packets_sent: u64,
    /// Forward data bytes sent.
    pub bytes_sent: u64,
    /// Forward data packets delivered to the receiver.
    pub packets_received: u64,
    /// Forward data bytes delivered to the receiver.
    pub bytes_received: u64,
    /// Forward data packets lost (queue drops and loss-model drops, any link).
    pub packets_dropped: u64,
    /// Forward data bytes lost.
    pub bytes_dropped: u64,
    /// Loss events (see the module documentation for the grouping rule).
    pub loss_events: u64,
    /// Reverse-direction packets (ACKs, feedback) sent by the receiver.
    pub reverse_packets_sent: u64,
    /// Reverse-direction packets that reached the sender.
    pub reverse_packets_received: u64,
    /// Reverse-direction packets lost.
    pub reverse_packets_dropped: u64,
}

impl FlowTotals {
    /// The packet loss rate: lost packets / packets sent (metrics reference, "packet loss
    /// rate"); 0.0 when nothing was sent.
    pub fn packet_loss_rate(&self) -> f64 {
        ratio(self.packets_dropped, self.packets_sent)
    }

    /// The loss event rate of the flow: loss events / packets sent (Rhee & Xu 2005 §2); 0.0
    /// when nothing was sent.
    pub fn loss_event_rate(&self) -> f64 {
        ratio(self.loss_events, self.packets_sent)
    }
}

/// `num / den`, or 0.0 when `den` is 0.
fn ratio(num: u64, den: u64) -> f64 {
    if den == 0 {
        0.0
    } else {
        num as f64 / den as f64
    }
}

/// The agent's state fields (e.g. TFRC's allowed rate, its loss event rate estimate, the RTT
/// estimate) sampled at the end of each bin, so protocol internals can be plotted against the
/// measured rates (e.g. Rhee & Xu 2005 §5's 1/theta_hat against the throughput). Kept
/// compressed ([`StateSamples`]): decode with [`values`](StateTrace::values).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StateTrace {
    /// The field names, in column order, as the agent declares them.
    pub fields: Vec<&'static str>,
    /// The samples as [`StateSamples::into_blob`] encodes them, exactly as many bins as the
    /// run has.
    pub blob: Vec<u8>,
    /// How many bins the run has.
    pub bins: usize,
}

impl StateTrace {
    /// One column per field, each exactly as long as the run has bins; NaN where the bin was
    /// never sampled.
    pub fn values(&self) -> Vec<Vec<f64>> {
        let mut flat = vec![0.0; self.fields.len() * self.bins];
        if decode_blob(&self.blob, self.fields.len(), &mut flat).is_err() {
            // The blob is made by the monitor; only a hand-edited trace can be corrupt.
            flat.fill(f64::NAN);
        }
        if self.bins == 0 {
            return vec![Vec::new(); self.fields.len()];
        }
        flat.chunks(self.bins).map(<[f64]>::to_vec).collect()
    }
}

/// Everything a flow's monitor recorded, returned by [`FlowMonitor::finish`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlowRecord {
    /// The per-bin series.
    pub bins: FlowBins,
    /// The run's totals.
    pub totals: FlowTotals,
    /// The agent's sampled state.
    pub state: StateTrace,
    /// The send times of the flow's dropped data packets, when the scenario logs the flow
    /// (`monitor.drop_log`).
    pub drop_log: Option<DropLogRecord>,
}

/// Records one flow while a run goes. Memory is one value per bin per series (grown lazily) plus
/// a constant; nothing is kept per packet, except by the opt-in, capped drop log.
#[derive(Clone, Debug)]
pub struct FlowMonitor {
    bins: Bins,
    loss_event_rtt: Duration,
    sent_packets: Counts<u32>,
    sent_bytes: Counts<u64>,
    received_packets: Counts<u32>,
    received_bytes: Counts<u64>,
    dropped_packets: Counts<u32>,
    dropped_bytes: Counts<u64>,
    loss_events: Counts<u32>,
    /// The bin of the latest send or receipt, with the counts not yet added to the series.
    open: OpenBin,
    totals: FlowTotals,
    /// Send time of the packet whose loss opened the current loss event, if any.
    event_start: Option<Time>,
    state_fields: Vec<&'static str>,
    state: StateSamples,
    drop_log: Option<DropLog>,
}

impl FlowMonitor {
    /// A monitor binning on `bin` (non-zero; see [`Bins::new`]), grouping losses into loss
    /// events with the RTT `loss_event_rtt` (the flow's nominal round-trip time), and sampling
    /// the agent's `state_fields`.
    pub fn new(
        bin: Duration,
        loss_event_rtt: Duration,
        state_fields: &[&'static str],
    ) -> FlowMonitor {
        FlowMonitor {
            bins: Bins::new(bin),
            loss_event_rtt,
            sent_packets: Counts::new(),
            sent_bytes: Counts::new(),
            received_packets: Counts::new(),
            received_bytes: Counts::new(),
            dropped_packets: Counts::new(),
            dropped_bytes: Counts::new(),
            loss_events: Counts::new(),
            open: OpenBin::default(),
            totals: FlowTotals::default(),
            event_start: None,
            state_fields: state_fields.to_vec(),
            state: StateSamples::new(state_fields.len()),
            drop_log: None,
        }
    }

    /// Reserves room for `n` bins in every series (the engine knows the run's length), so the
    /// monitor allocates nothing more while the run goes (see [`PerBin::try_reserve`]).
    pub fn try_reserve_bins(&mut self, n: usize) -> Result<(), std::collections::TryReserveError> {
        self.sent_packets.try_reserve(n)?;
        self.sent_bytes.try_reserve(n)?;
        self.received_packets.try_reserve(n)?;
        self.received_bytes.try_reserve(n)?;
        self.dropped_packets.try_reserve(n)?;
        self.dropped_bytes.try_reserve(n)?;
        self.loss_events.try_reserve(n)?;
        Ok(())
    }

    /// Keeps the send time of each dropped data packet from now on, at most `limit` of them
    /// ([`DropLog`]). Only records: counts and loss events are the same with or without it.
    pub fn log_drops(&mut self, limit: usize) {
        self.drop_log = Some(DropLog::new(limit));
    }

    /// The bin grid.
    pub fn bins(&self) -> Bins {
        self.bins
    }

    /// The RTT used to group losses into loss events.
    pub fn loss_event_rtt(&self) -> Duration {
        self.loss_event_rtt
    }

    /// A forward data packet of `size_bytes` left the flow's source at `now`.
    pub fn on_sent(&mut self, now: Time, size_bytes: u32) {
        let open = self.open_bin(now);
        open.sent_packets = open.sent_packets.saturating_add(1);
        open.sent_bytes = open.sent_bytes.saturating_add(u64::from(size_bytes));
        count(
            &mut self.totals.packets_sent,
            &mut self.totals.bytes_sent,
            size_bytes,
        );
    }

    /// A forward data packet of `size_bytes` reached the flow's receiver at `now`.
    pub fn on_received(&mut self, now: Time, size_bytes: u32) {
        let open = self.open_bin(now);
        open.received_packets = open.received_packets.saturating_add(1);
        open.received_bytes = open.received_bytes.saturating_add(u64::from(size_bytes));
        count(
            &mut self.totals.packets_received,
            &mut self.totals.bytes_received,
            size_bytes,
        );
    }

    /// A forward data packet of `size_bytes`, sent by the source at `sent_at`, was lost at `now`
    /// (by a queue or a loss model, on any link). Counts the drop in `now`'s bin and groups it
    /// into a loss event by `sent_at` (module documentation).
    pub fn on_dropped(&mut self, now: Time, sent_at: Time, size_bytes: u32) {
        let k = self.bins.index(now);
        bump(
            &mut self.dropped_packets,
            &mut self.dropped_bytes,
            k,
            size_bytes,
        );
        count(
            &mut self.totals.packets_dropped,
            &mut self.totals.bytes_dropped,
            size_bytes,
        );
        let opens_event = match self.event_start {
            None => true,
            Some(first) => sent_at > first + self.loss_event_rtt,
        };
        if opens_event {
            self.event_start = Some(sent_at);
            self.loss_events.add(k, 1);
            self.totals.loss_events = self.totals.loss_events.saturating_add(1);
        }
        if let Some(log) = &mut self.drop_log {
            log.record(sent_at);
        }
    }

    /// The open bin, made `now`'s first if `now` lies outside it (the counts of the one it
    /// replaces go to the series).
    #[inline]
    fn open_bin(&mut self, now: Time) -> &mut OpenBin {
        if !self.open.span.contains(now) {
            self.reopen(now);
        }
        &mut self.open
    }

    /// Adds the open bin's counts to the series and opens `now`'s bin.
    fn reopen(&mut self, now: Time) {
        self.close_open_bin();
        self.open = OpenBin {
            span: self.bins.span(self.bins.index(now)),
            ..OpenBin::default()
        };
    }

    /// Adds the open bin's counts to the series (each a saturating add, so adding a bin's
    /// packets at once gives what adding them one by one gives) and empties it.
    fn close_open_bin(&mut self) {
        let open = std::mem::take(&mut self.open);
        let k = open.span.index;
        if open.sent_packets > 0 {
            self.sent_packets.add(k, open.sent_packets);
            self.sent_bytes.add(k, open.sent_bytes);
        }
        if open.received_packets > 0 {
            self.received_packets.add(k, open.received_packets);
            self.received_bytes.add(k, open.received_bytes);
        }
    }

    /// A reverse-direction packet (ACK, feedback) left the receiver. Counted in the totals only.
    pub fn on_reverse_sent(&mut self, _now: Time, _size_bytes: u32) {
        self.totals.reverse_packets_sent = self.totals.reverse_packets_sent.saturating_add(1);
    }

    /// A reverse-direction packet reached the sender. Counted in the totals only.
    pub fn on_reverse_received(&mut self, _now: Time, _size_bytes: u32) {
        self.totals.reverse_packets_received =
            self.totals.reverse_packets_received.saturating_add(1);
    }

    /// A reverse-direction packet was lost. Counted in the totals only (reverse losses are not
    /// loss events of the flow: the data was delivered).
    pub fn on_reverse_dropped(&mut self, _now: Time, _size_bytes: u32) {
        self.totals.reverse_packets_dropped = self.totals.reverse_packets_dropped.saturating_add(1);
    }

    /// The agent's state fields sampled at the end of bin `bin`, in the order given to
    /// [`new`](FlowMonitor::new). Values beyond the declared fields are ignored; missing ones
    /// are recorded as NaN. A second sample of the same bin replaces the first.
    pub fn record_state(&mut self, bin: usize, values: &[f64]) {
        self.state.record(bin, values);
    }

    /// Asks for what recording the next state sample touches (see [`crate::prefetch`]).
    pub(crate) fn prefetch_state(&self) {
        self.state.prefetch_tail();
    }

    /// As [`record_state`](FlowMonitor::record_state), except that the bins between the last
    /// sample and `bin` had the last sample's state rather than none: a run's sampling pass
    /// skips a flow whose agents were not called since its last sample, so idle flows cost
    /// nothing per bin.
    pub fn record_state_after_idle(&mut self, bin: usize, values: &[f64]) {
        if let Some(before) = bin.checked_sub(1) {
            self.state.repeat_through(before);
        }
        self.state.record(bin, values);
    }

    /// The bins after the last sample, up to `bin` included, had the last sample's state (the
    /// agents were not called since): how a run closes the trace of a flow idle at its end.
    pub fn repeat_state_through(&mut self, bin: usize) {
        self.state.repeat_through(bin);
    }

    /// The totals so far.
    pub fn totals(&self) -> FlowTotals {
        self.totals
    }

    /// Ends the record at `end`: every per-bin series becomes exactly `ceil(end / bin)` long
    /// (padded with zeros, or NaN for state). The bins cover [0, end): an event at exactly
    /// `end` or later is cut from the bins but stays in the totals, so per-bin sums equal the
    /// totals only when every event was reported before `end`.
    pub fn finish(mut self, end: Time) -> FlowRecord {
        self.close_open_bin();
        let n = self.bins.count(end);
        FlowRecord {
            bins: FlowBins {
                sent_packets: self.sent_packets.finished(n),
                sent_bytes: self.sent_bytes.finished(n),
                received_packets: self.received_packets.finished(n),
                received_bytes: self.received_bytes.finished(n),
                dropped_packets: self.dropped_packets.finished(n),
                dropped_bytes: self.dropped_bytes.finished(n),
                loss_events: self.loss_events.finished(n),
            },
            totals: self.totals,
            state: StateTrace {
                fields: self.state_fields,
                blob: self.state.into_blob(n),
                bins: n,
            },
            drop_log: self.drop_log.map(DropLog::finish),
        }
    }
}

/// The bin a flow's latest sends and receipts fell in, and their counts not yet added to the
/// series (see [`BinSpan`]); no bin before the first.
#[derive(Clone, Copy, Debug, Default)]
struct OpenBin {
    span: BinSpan,
    sent_packets: u64,
    sent_bytes: u64,
    received_packets: u64,
    received_bytes: u64,
}

/// Adds one packet of `size_bytes` to bin `k` of a packet and a byte series (saturating).
fn bump(packets: &mut Counts<u32>, bytes: &mut Counts<u64>, k: usize, size_bytes: u32) {
    packets.add(k, 1);
    bytes.add(k, u64::from(size_bytes));
}

/// Adds one packet of `size_bytes` to a pair of total counters (saturating).
fn count(packets: &mut u64, bytes: &mut u64, size_bytes: u32) {
    *packets = packets.saturating_add(1);
    *bytes = bytes.saturating_add(u64::from(size_bytes));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Time {
        Time::from_nanos(n * 1_000_000)
    }

    /// 10 ms bins, 100 ms loss-event RTT, no state fields.
    fn monitor() -> FlowMonitor {
        FlowMonitor::new(Duration::from_millis(10), Duration::from_millis(100), &[])
    }

    #[test]
    fn sent_and_received_are_binned_by_time() {
        let mut m = monitor();
        m.on_sent(ms(0), 1000);
        m.on_sent(ms(9), 500);
        m.on_sent(ms(10), 1000);
        m.on_sent(ms(35), 40);
        m.on_received(ms(12), 1000);
        m.on_received(ms(20), 500);
        let r = m.finish(ms(40));
        assert_eq!(r.bins.sent_packets.to_vec(), vec![2, 1, 0, 1]);
        assert_eq!(r.bins.sent_bytes.to_vec(), vec![1500, 1000, 0, 40]);
        assert_eq!(r.bins.received_packets.to_vec(), vec![0, 1, 1, 0]);
        assert_eq!(r.bins.received_bytes.to_vec(), vec![0, 1000, 500, 0]);
        assert_eq!(r.totals.packets_sent, 4);
        assert_eq!(r.totals.bytes_sent, 2540);
        assert_eq!(r.totals.packets_received, 2);
        assert_eq!(r.totals.bytes_received, 1500);
    }

    #[test]
    fn drops_are_binned_by_drop_time() {
        let mut m = monitor();
        m.on_dropped(ms(15), ms(2), 1000);
        m.on_dropped(ms(16), ms(3), 200);
        let r = m.finish(ms(20));
        assert_eq!(r.bins.dropped_packets.to_vec(), vec![0, 2]);
        assert_eq!(r.bins.dropped_bytes.to_vec(), vec![0, 1200]);
        assert_eq!(r.totals.packets_dropped, 2);
        assert_eq!(r.totals.bytes_dropped, 1200);
    }

    #[test]
    fn the_drop_log_keeps_send_times_and_changes_nothing_else() {
        let drops = [(ms(15), ms(2)), (ms(16), ms(1)), (ms(250), ms(200))];
        let mut plain = monitor();
        let mut logged = monitor();
        logged.log_drops(2);
        for (now, sent_at) in drops {
            plain.on_dropped(now, sent_at, 1000);
            logged.on_dropped(now, sent_at, 1000);
        }
        let plain = plain.finish(ms(300));
        let mut logged = logged.finish(ms(300));
        let log = logged.drop_log.take().expect("the flow is logged");
        assert_eq!(log.send_times, vec![ms(2), ms(1)]);
        assert!(log.overflowed);
        assert_eq!(plain.drop_log, None);
        assert_eq!(logged, plain);
    }

    #[test]
    fn losses_within_one_rtt_of_the_first_form_one_event() {
        let mut m = monitor();
        m.on_dropped(ms(20), ms(10), 1000); // opens event 1, first loss sent at 10 ms
        m.on_dropped(ms(30), ms(50), 1000); // joins
        m.on_dropped(ms(40), ms(110), 1000); // sent exactly one RTT later: joins
        m.on_dropped(ms(50), Time::from_nanos(110_000_001), 1000); // just over: opens event 2
        m.on_dropped(ms(60), ms(200), 1000); // within 100 ms of 110.000001 ms: joins
        m.on_dropped(ms(70), ms(211), 1000); // opens event 3
        let r = m.finish(ms(80));
        assert_eq!(r.totals.loss_events, 3);
        assert_eq!(r.bins.loss_events.to_vec(), vec![0, 0, 1, 0, 0, 1, 0, 1]);
    }

    #[test]
    fn events_compare_send_times_not_drop_times() {
        let mut m = monitor();
        // Dropped 300 ms apart, but sent 50 ms apart: one event.
        m.on_dropped(ms(100), ms(0), 1000);
        m.on_dropped(ms(400), ms(50), 1000);
        assert_eq!(m.totals().loss_events, 1);
        // Dropped at the same instant, sent 150 ms after the event's first loss: a new event.
        m.on_dropped(ms(400), ms(150), 1000);
        assert_eq!(m.totals().loss_events, 2);
    }

    #[test]
    fn an_earlier_sent_at_joins_the_current_event_and_keeps_its_start() {
        let mut m = monitor();
        m.on_dropped(ms(300), ms(200), 1000); // event 1 starts at sent_at 200 ms
        m.on_dropped(ms(301), ms(20), 1000); // sent long before: joins
        m.on_dropped(ms(302), ms(300), 1000); // within 100 ms of 200 ms (not of 20 ms): joins
        assert_eq!(m.totals().loss_events, 1);
        m.on_dropped(ms(303), ms(301), 1000); // 101 ms after 200 ms: new event
        assert_eq!(m.totals().loss_events, 2);
    }

    #[test]
    fn a_zero_rtt_makes_every_later_send_time_a_new_event() {
        let mut m = FlowMonitor::new(Duration::from_millis(10), Duration::ZERO, &[]);
        m.on_dropped(ms(1), ms(1), 100);
        m.on_dropped(ms(1), ms(1), 100);
        m.on_dropped(ms(2), Time::from_nanos(1_000_001), 100);
        assert_eq!(m.totals().loss_events, 2);
    }

    #[test]
    fn reverse_traffic_counts_totals_only() {
        let mut m = monitor();
        m.on_reverse_sent(ms(1), 40);
        m.on_reverse_sent(ms(2), 40);
        m.on_reverse_received(ms(3), 40);
        m.on_reverse_dropped(ms(4), 40);
        let t = m.totals();
        assert_eq!(
            (
                t.reverse_packets_sent,
                t.reverse_packets_received,
                t.reverse_packets_dropped
            ),
            (2, 1, 1)
        );
        assert_eq!(
            (t.packets_sent, t.packets_dropped, t.loss_events),
            (0, 0, 0)
        );
        let r = m.finish(ms(10));
        assert_eq!(r.bins.sent_packets.to_vec(), vec![0]);
        assert_eq!(r.bins.dropped_packets.to_vec(), vec![0]);
    }

    #[test]
    fn rates_are_ratios_of_totals_and_zero_without_sends() {
        let t = FlowTotals::default();
        assert_eq!(t.packet_loss_rate(), 0.0);
        assert_eq!(t.loss_event_rate(), 0.0);
        let t = FlowTotals {
            packets_sent: 200,
            packets_dropped: 10,
            loss_events: 4,
            ..FlowTotals::default()
        };
        assert_eq!(t.packet_loss_rate(), 0.05);
        assert_eq!(t.loss_event_rate(), 0.02);
        // Drops without sends (should not happen) still do not divide by zero.
        let t = FlowTotals {
            packets_dropped: 3,
            loss_events: 1,
            ..FlowTotals::default()
        };
        assert_eq!(t.packet_loss_rate(), 0.0);
        assert_eq!(t.loss_event_rate(), 0.0);
    }

    #[test]
    fn state_is_sampled_per_bin_with_nan_gaps() {
        let mut m = FlowMonitor::new(
            Duration::from_millis(10),
            Duration::from_millis(100),
            &["rate", "p"],
        );
        m.record_state(0, &[1.0, 0.1]);
        m.record_state(2, &[3.0, 0.3, 99.0]); // the extra value is ignored
        m.record_state(3, &[4.0]); // the missing one is NaN
        m.record_state(0, &[1.5, 0.15]); // a second sample replaces the first
        let r = m.finish(ms(50));
        assert_eq!(r.state.fields, vec!["rate", "p"]);
        let values = r.state.values();
        let rate = &values[0];
        let p = &values[1];
        assert_eq!(rate.len(), 5);
        assert_eq!(p.len(), 5);
        assert_eq!((rate[0], rate[2], rate[3]), (1.5, 3.0, 4.0));
        assert!(rate[1].is_nan() && rate[4].is_nan());
        assert_eq!((p[0], p[2]), (0.15, 0.3));
        assert!(p[1].is_nan() && p[3].is_nan() && p[4].is_nan());
    }

    #[test]
    fn idle_bins_repeat_the_last_sample() {
        let mut m = FlowMonitor::new(
            Duration::from_millis(10),
            Duration::from_millis(100),
            &["x"],
        );
        m.record_state_after_idle(0, &[1.0]);
        m.record_state_after_idle(3, &[2.0]); // bins 1 and 2: idle, so 1.0
        m.repeat_state_through(5); // idle to the end
        let x = &m.finish(ms(70)).state.values()[0];
        assert_eq!(x[..6], [1.0, 1.0, 1.0, 2.0, 2.0, 2.0]);
        assert!(x[6].is_nan()); // never sampled
    }

    #[test]
    fn counts_held_for_the_open_bin_land_in_their_bins_in_any_order() {
        let mut m = monitor();
        m.on_sent(ms(15), 100);
        m.on_sent(ms(5), 100);
        m.on_sent(ms(16), 50);
        m.on_received(ms(5), 100);
        m.on_sent(ms(19), 10);
        let snapshot = m.clone().finish(ms(40));
        assert_eq!(snapshot.bins.sent_packets.to_vec(), vec![1, 3, 0, 0]);
        assert_eq!(snapshot.bins.sent_bytes.to_vec(), vec![100, 160, 0, 0]);
        assert_eq!(snapshot.bins.received_packets.to_vec(), vec![1, 0, 0, 0]);
        // The clone finished on its own; the monitor goes on counting.
        m.on_sent(ms(25), 1);
        assert_eq!(
            m.finish(ms(40)).bins.sent_packets.to_vec(),
            vec![1, 3, 1, 0]
        );
    }

    #[test]
    fn finish_pads_truncates_and_handles_an_empty_run() {
        let mut m = monitor();
        m.on_sent(ms(5), 100);
        let r = m.clone().finish(Time::from_nanos(30_000_001));
        assert_eq!(r.bins.sent_packets.to_vec(), vec![1, 0, 0, 0]);
        assert_eq!(r.bins.loss_events.to_vec(), vec![0, 0, 0, 0]);
        m.on_sent(ms(45), 100);
        let r = m.clone().finish(ms(20));
        assert_eq!(r.bins.sent_packets.to_vec(), vec![1, 0]);
        assert_eq!(r.totals.packets_sent, 2);
        let r = m.finish(Time::ZERO);
        assert!(r.bins.sent_packets.is_empty() && r.bins.received_bytes.is_empty());
        let empty = FlowMonitor::new(Duration::from_millis(10), Duration::ZERO, &["x"]);
        let r = empty.finish(Time::ZERO);
        assert_eq!(r.bins, FlowBins::default());
        assert_eq!(r.state.values(), vec![Vec::<f64>::new()]);
    }

    #[test]
    fn an_event_at_exactly_the_end_is_in_the_totals_only() {
        let mut m = monitor();
        m.on_sent(ms(19), 100);
        m.on_sent(ms(20), 100);
        let r = m.finish(ms(20));
        assert_eq!(r.bins.sent_packets.to_vec(), vec![0, 1]);
        assert_eq!(r.totals.packets_sent, 2);
    }

    #[test]
    fn live_totals_and_getters() {
        let mut m = monitor();
        assert_eq!(m.totals(), FlowTotals::default());
        m.on_sent(ms(1), 10);
        assert_eq!(m.totals().bytes_sent, 10);
        assert_eq!(m.bins().width(), Duration::from_millis(10));
        assert_eq!(m.loss_event_rtt(), Duration::from_millis(100));
    }
}
