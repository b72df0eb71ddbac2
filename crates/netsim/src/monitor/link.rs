//! The per-link monitor: arrivals, drops and departures per bin, the time-weighted queue length
//! and the transmitter's utilization.
//!
//! Link utilization and drop rate are Floyd 2000 Table 25's figures (delivered bits over
//! capacity·time; drops over arrivals at the bottleneck); the queue length as a time series and
//! its time-weighted mean, in packets, is what Floyd 2000 Figs. 14 and 24-28 and Yang 2001 plot.
//!
//! # Time-weighted queue
//! The queue length is a step function of time: the engine reports each new level with
//! [`LinkMonitor::on_queue_change`], and the previous level held since the previous change
//! (from 0 at time 0). Each level's span is split across the bins it covers exactly, in integer
//! nanoseconds (`level × ns` summed in a `u128`), so a bin's mean is the exact integral of the
//! queue over the bin divided by the bin width. The last, partial bin is divided by the full
//! width too, so that `sum(bin means) × width = integral over [0, end]`.
//!
//! The per-bin maximum is the largest level held for a positive time in the bin: a level replaced
//! at the very instant it was reached (a packet arriving to an idle link, enqueued and dequeued
//! at once) never waited and is not counted. So a bin's mean never exceeds its maximum.
//!
//! # Busy time
//! [`LinkMonitor::on_transmission`] reports each packet's transmission interval [start, end); it
//! is split across bins exactly, and whatever lies after the run's end is clipped by
//! [`LinkMonitor::finish`]. Utilization is busy time over elapsed time (for a single
//! transmitter, the same as delivered bits over capacity·time up to the clipped transmission).

use std::time::Duration;

use tfrc::Time;

use super::bins::{BinSpan, Bins, PerBin};
use super::DropCause;

/// A link's per-bin series, each exactly as long as the run has bins (`ceil(end / bin)`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinkBins {
    /// Time-weighted mean of the waiting queue over the bin, in packets (integral / bin width).
    pub mean_queue_packets: Vec<f64>,
    /// Time-weighted mean of the waiting queue over the bin, in bytes (integral / bin width).
    pub mean_queue_bytes: Vec<f64>,
    /// Largest waiting queue held for a positive time in the bin, in packets.
    pub max_queue_packets: Vec<u32>,
    /// Packets offered to the link (before its loss model and queue).
    pub arrivals: Vec<u32>,
    /// Packets dropped, by the queue or by the loss model.
    pub drops: Vec<u32>,
    /// Packets whose transmission started in the bin.
    pub departures: Vec<u32>,
    /// Their bytes.
    pub departed_bytes: Vec<u64>,
    /// Transmitter busy time in the bin / bin width (the last, partial bin is divided by the full
    /// width too, so it reads low).
    pub utilization: Vec<f64>,
}

/// A link's figures over the whole run (or so far, from [`LinkMonitor::totals`]).
///
/// In declaration order (`repr(C)`), so that the counters a monitor updates per packet come
/// first, in the monitor's second cache line (see [`LinkMonitor`]).
#[derive(Clone, Debug, Default, PartialEq)]
#[repr(C)]
pub struct LinkTotals {
    /// Packets offered to the link.
    pub arrivals: u64,
    /// Packets dropped by the queue (DropTail overflow, RED early and forced drops).
    pub queue_drops: u64,
    /// Packets dropped by the link's loss model.
    pub loss_model_drops: u64,
    /// Packets whose transmission started.
    pub departures: u64,
    /// Their bytes.
    pub bytes_departed: u64,
    /// Transmitter busy time, clipped at the end of the run.
    pub busy: Duration,
    /// Time-weighted mean of the waiting queue over [0, end], in packets (Floyd 2000 Figs. 24-28).
    pub mean_queue_packets: f64,
    /// Largest waiting queue held for a positive time, in packets.
    pub max_queue_packets: u32,
    /// Busy time / elapsed time (Floyd 2000 Table 25's link utilization); 0.0 for an empty run.
    pub utilization: f64,
}

impl LinkTotals {
    /// The link's drop rate: (queue drops + loss-model drops) / arrivals (Floyd 2000 Table 25);
    /// 0.0 without arrivals.
    pub fn drop_rate(&self) -> f64 {
        if self.arrivals == 0 {
            0.0
        } else {
            self.queue_drops.saturating_add(self.loss_model_drops) as f64 / self.arrivals as f64
        }
    }
}

/// Everything a link's monitor recorded, returned by [`LinkMonitor::finish`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinkRecord {
    /// The per-bin series.
    pub bins: LinkBins,
    /// The run's totals.
    pub totals: LinkTotals,
}

/// Records one link while a run goes. Memory is one value per bin per series (grown lazily) plus
/// the transmissions still in progress at the latest call (at most one on a link with a single
/// transmitter); nothing is kept per packet.
///
/// Laid out by hand (`repr(C)`, from a cache-line boundary): what every call on a totals-only
/// monitor reads and writes (the transmission in progress, the latest time, the busy time, the
/// queue level, whether it bins, and the first counters of the totals) fills its first two cache
/// lines, ahead of the level's integral, the open bin and the series. With thousands of links
/// a monitor is rarely cached when its link's packet comes, and the compiler's own order had
/// spread these fields over four lines.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct LinkMonitor {
    /// Transmissions that end after `latest`: (start, end).
    in_progress: InProgress,
    /// The latest time any call reported.
    latest: Time,
    /// Busy nanoseconds in total, transmissions counted in full.
    total_busy_ns: u64,
    /// The current queue level and when it was reached.
    level_packets: usize,
    level_bytes: u64,
    /// Whether the per-bin series are kept (totals are always kept).
    binned: bool,
    totals: LinkTotals,
    level_since: Time,
    /// Integral of the queue length in packet·ns over [0, level_since).
    total_queue_pkt_ns: u128,
    /// The bin of the latest binned call, with its counts not yet in the series.
    open: OpenBin,
    bins: Bins,
    rate_bps: u64,
    arrivals: PerBin<u32>,
    drops: PerBin<u32>,
    departures: PerBin<u32>,
    departed_bytes: PerBin<u64>,
    /// Busy nanoseconds per bin, transmissions counted in full (clipped at `finish`).
    busy_ns: PerBin<u64>,
    /// Integral of the queue length in packet·ns per bin.
    queue_pkt_ns: PerBin<u64>,
    /// Integral of the queue length in byte·ns per bin.
    queue_byte_ns: PerBin<u64>,
    max_queue: PerBin<u32>,
}

/// The bin of a binned link monitor's latest call (a bottleneck's: several calls per packet),
/// with what the calls added to it, not yet in the series (see [`BinSpan`]); no bin before
/// the first call.
#[derive(Clone, Copy, Debug, Default)]
struct OpenBin {
    span: BinSpan,
    arrivals: u64,
    drops: u64,
    departures: u64,
    departed_bytes: u64,
    busy_ns: u64,
    /// Whether a queue level was integrated over part of the bin (its maximum counts then,
    /// even at level 0, as the series' own maximum would).
    queue_held: bool,
    queue_pkt_ns: u64,
    queue_byte_ns: u64,
    max_queue: u32,
}

/// The transmissions that end after the latest time reported. A link has one transmitter, so
/// the engine's transmissions never overlap and at most one is in progress: it is kept in the
/// monitor itself (every transmission updates it), and only overlapping ones, which a caller
/// of the monitor alone may report, go to a list.
#[derive(Clone, Debug, Default)]
struct InProgress {
    latest: Option<(Time, Time)>,
    overlapping: Vec<(Time, Time)>,
}

impl InProgress {
    /// A transmission over [start, end) was reported, `latest` being the latest time reported
    /// (at least `start`): forgets those that ended by `latest`.
    fn start(&mut self, start: Time, end: Time, latest: Time) {
        if let Some(previous) = self.latest.take() {
            if previous.1 > latest {
                self.overlapping.push(previous);
            }
        }
        if !self.overlapping.is_empty() {
            self.overlapping.retain(|&(_, e)| e > latest);
        }
        self.latest = (end > latest).then_some((start, end));
    }

    /// Every transmission kept: (start, end).
    fn iter(&self) -> impl Iterator<Item = (Time, Time)> + '_ {
        self.overlapping.iter().copied().chain(self.latest)
    }
}

impl LinkMonitor {
    /// A monitor binning on `bin` (non-zero; see [`Bins::new`]) for a link of `rate_bps` bits
    /// per second (kept for [`rate_bps`](LinkMonitor::rate_bps), to turn byte counts into the
    /// capacity share of Floyd 2000 Table 25).
    pub fn new(bin: Duration, rate_bps: u64) -> LinkMonitor {
        LinkMonitor {
            bins: Bins::new(bin),
            rate_bps,
            arrivals: PerBin::new(0),
            drops: PerBin::new(0),
            departures: PerBin::new(0),
            departed_bytes: PerBin::new(0),
            busy_ns: PerBin::new(0),
            queue_pkt_ns: PerBin::new(0),
            queue_byte_ns: PerBin::new(0),
            max_queue: PerBin::new(0),
            totals: LinkTotals::default(),
            total_busy_ns: 0,
            total_queue_pkt_ns: 0,
            level_packets: 0,
            level_bytes: 0,
            level_since: Time::ZERO,
            latest: Time::ZERO,
            in_progress: InProgress::default(),
            binned: true,
            open: OpenBin::default(),
        }
    }

    /// A monitor that keeps the totals only: every per-bin series of its record is empty. For
    /// links nobody plots (a dumbbell's access links), so memory does not grow with the run.
    pub fn totals_only(bin: Duration, rate_bps: u64) -> LinkMonitor {
        LinkMonitor {
            binned: false,
            ..LinkMonitor::new(bin, rate_bps)
        }
    }

    /// Reserves room for `n` bins in every series (nothing when the monitor keeps totals only),
    /// so the monitor allocates nothing more while the run goes (see [`PerBin::try_reserve`]).
    pub fn try_reserve_bins(&mut self, n: usize) -> Result<(), std::collections::TryReserveError> {
        if !self.binned {
            return Ok(());
        }
        self.arrivals.try_reserve(n)?;
        self.drops.try_reserve(n)?;
        self.departures.try_reserve(n)?;
        self.departed_bytes.try_reserve(n)?;
        self.busy_ns.try_reserve(n)?;
        self.queue_pkt_ns.try_reserve(n)?;
        self.queue_byte_ns.try_reserve(n)?;
        self.max_queue.try_reserve(n)?;
        Ok(())
    }

    /// Whether the per-bin series are kept.
    pub fn is_binned(&self) -> bool {
        self.binned
    }

    /// The bin grid.
    pub fn bins(&self) -> Bins {
        self.bins
    }

    /// The link rate given at construction, in bits per second.
    pub fn rate_bps(&self) -> u64 {
        self.rate_bps
    }

    /// A packet was offered to the link at `now`, before its loss model and queue.
    pub fn on_arrival(&mut self, now: Time, _size_bytes: u32) {
        self.saw(now);
        if self.binned {
            let open = self.open_at(now);
            open.arrivals = open.arrivals.saturating_add(1);
        }
        self.totals.arrivals = self.totals.arrivals.saturating_add(1);
    }

    /// A packet was dropped at `now` by the queue or by the loss model (`cause`). Only the packet
    /// is counted, not its size (the per-flow monitor keeps lost bytes).
    pub fn on_drop(&mut self, now: Time, _size_bytes: u32, cause: DropCause) {
        self.saw(now);
        if self.binned {
            let open = self.open_at(now);
            open.drops = open.drops.saturating_add(1);
        }
        let total = match cause {
            DropCause::Queue => &mut self.totals.queue_drops,
            DropCause::LossModel => &mut self.totals.loss_model_drops,
        };
        *total = total.saturating_add(1);
    }

    /// The open bin for a call at `now` (see [`OpenBin`]).
    #[inline]
    fn open_at(&mut self, now: Time) -> &mut OpenBin {
        if !self.open.span.contains(now) {
            self.open_bin(self.bins.index(now));
        }
        &mut self.open
    }

    /// Makes bin `k` the open one, adding the counts of the one it replaces to the series.
    fn open_bin(&mut self, k: usize) {
        self.close_open_bin();
        self.open = OpenBin {
            span: self.bins.span(k),
            ..OpenBin::default()
        };
    }

    /// Adds the open bin's counts to the series (saturating adds, and a maximum, so adding them
    /// at once gives what adding each call's gives) and empties it.
    fn close_open_bin(&mut self) {
        let open = std::mem::take(&mut self.open);
        if !open.span.is_bin() {
            return;
        }
        let k = open.span.index;
        let narrow = |x: u64| u32::try_from(x).unwrap_or(u32::MAX);
        if open.arrivals > 0 {
            let a = self.arrivals.at(k);
            *a = a.saturating_add(narrow(open.arrivals));
        }
        if open.drops > 0 {
            let d = self.drops.at(k);
            *d = d.saturating_add(narrow(open.drops));
        }
        if open.departures > 0 {
            let d = self.departures.at(k);
            *d = d.saturating_add(narrow(open.departures));
            let b = self.departed_bytes.at(k);
            *b = b.saturating_add(open.departed_bytes);
        }
        if open.busy_ns > 0 {
            let v = self.busy_ns.at(k);
            *v = v.saturating_add(open.busy_ns);
        }
        if open.queue_held {
            let p = self.queue_pkt_ns.at(k);
            *p = p.saturating_add(open.queue_pkt_ns);
            let b = self.queue_byte_ns.at(k);
            *b = b.saturating_add(open.queue_byte_ns);
            let m = self.max_queue.at(k);
            *m = (*m).max(open.max_queue);
        }
    }

    /// The waiting queue changed at `now` to `len_packets` packets, `len_bytes` bytes (the packet
    /// on the wire excluded). The previous level is integrated over [previous change, now).
    /// Calls come in time order, as the engine makes them: a `now` earlier than the previous
    /// change integrates nothing, and an unbinned monitor, which counts a call that leaves the
    /// level as it was as no change, measures "previous change" from the last call that changed
    /// the level.
    pub fn on_queue_change(&mut self, now: Time, len_packets: usize, len_bytes: u64) {
        self.saw(now);
        if !self.binned && (len_packets, len_bytes) == (self.level_packets, self.level_bytes) {
            // Integrating a level in two spans gives what one span gives (integers), so an
            // unbinned monitor leaves the span open while the level holds: most calls on an
            // access link, where packets pass an empty queue.
            return;
        }
        self.integrate_queue(now);
        self.level_packets = len_packets;
        self.level_bytes = len_bytes;
    }

    /// The transmitter is busy over [start, end) sending one packet of `size_bytes`. The
    /// departure counts in `start`'s bin; the busy time is split across the bins it covers.
    pub fn on_transmission(&mut self, start: Time, end: Time, size_bytes: u32) {
        self.saw(start);
        if self.binned {
            let open = self.open_at(start);
            open.departures = open.departures.saturating_add(1);
            open.departed_bytes = open.departed_bytes.saturating_add(u64::from(size_bytes));
            if end.as_nanos() <= open.span.end_ns {
                open.busy_ns = open
                    .busy_ns
                    .saturating_add(end.as_nanos().saturating_sub(start.as_nanos()));
            } else {
                // Into later bins: the part in this bin here, the rest straight to the series.
                let (open, busy) = (&mut self.open, &mut self.busy_ns);
                self.bins.split(start, end, |k, ns| {
                    if k == open.span.index {
                        open.busy_ns = open.busy_ns.saturating_add(ns);
                    } else {
                        let v = busy.at(k);
                        *v = v.saturating_add(ns);
                    }
                });
            }
        }
        self.totals.departures = self.totals.departures.saturating_add(1);
        self.totals.bytes_departed = self
            .totals
            .bytes_departed
            .saturating_add(u64::from(size_bytes));
        self.total_busy_ns = self
            .total_busy_ns
            .saturating_add(end.as_nanos().saturating_sub(start.as_nanos()));
        self.in_progress.start(start, end, self.latest);
    }

    /// The totals so far, over [0, t] where t is the latest time reported: the current queue
    /// level counts up to t, and transmissions still in progress count up to t.
    pub fn totals(&self) -> LinkTotals {
        let t = self.latest;
        let open_ns = t.as_nanos().saturating_sub(self.level_since.as_nanos());
        let integral = self.total_queue_pkt_ns + self.level_packets as u128 * u128::from(open_ns);
        let mut max = self.totals.max_queue_packets;
        if open_ns > 0 {
            max = max.max(clamp_u32(self.level_packets));
        }
        self.totals_over(t, integral, self.busy_clipped_at(t), max)
    }

    /// Ends the record at `end`: integrates the current queue level up to `end`, clips the busy
    /// time of transmissions still in progress at `end`, and makes every per-bin series exactly
    /// `ceil(end / bin)` long (padded with zeros). The bins cover [0, end): an arrival, drop or
    /// departure at exactly `end` or later is cut from the bins but stays in the totals. The
    /// engine should call this with an `end` no earlier than any time it reported: then the
    /// queue integral and the busy time are over [0, end] exactly (an earlier `end` cannot
    /// un-count what was integrated past it).
    pub fn finish(mut self, end: Time) -> LinkRecord {
        self.integrate_queue(end);
        self.close_open_bin();
        let n = if self.binned { self.bins.count(end) } else { 0 };
        let grid_end = self.bins.start(n);
        let busy_total = self.busy_clipped_at(end);
        for (start, stop) in self.in_progress.iter() {
            let busy = &mut self.busy_ns;
            self.bins
                .split(start.max(end), stop.min(grid_end), |k, ns| {
                    let v = busy.at(k);
                    *v = v.saturating_sub(ns);
                });
        }
        let totals = self.totals_over(
            end,
            self.total_queue_pkt_ns,
            busy_total,
            self.totals.max_queue_packets,
        );
        let width = self.bins.width_nanos() as f64;
        LinkRecord {
            bins: LinkBins {
                mean_queue_packets: self.queue_pkt_ns.map_into_vec(n, |x| x as f64 / width),
                mean_queue_bytes: self.queue_byte_ns.map_into_vec(n, |x| x as f64 / width),
                max_queue_packets: self.max_queue.into_vec(n),
                arrivals: self.arrivals.into_vec(n),
                drops: self.drops.into_vec(n),
                departures: self.departures.into_vec(n),
                departed_bytes: self.departed_bytes.into_vec(n),
                utilization: self.busy_ns.map_into_vec(n, |x| x as f64 / width),
            },
            totals,
        }
    }

    /// Notes that a call reported time `now`.
    fn saw(&mut self, now: Time) {
        self.latest = self.latest.max(now);
    }

    /// Integrates the current level over [level_since, to) into the bins and the total, and
    /// moves `level_since` to `to` (never backwards). Never inlined: inlined, it made its
    /// callers heavier than the call it saved (fig09: 8 M more instructions).
    #[inline(never)]
    fn integrate_queue(&mut self, to: Time) {
        if to <= self.level_since {
            return;
        }
        let (pkts, bytes) = (self.level_packets as u128, u128::from(self.level_bytes));
        let level = clamp_u32(self.level_packets);
        let span = u128::from(to.as_nanos() - self.level_since.as_nanos());
        self.total_queue_pkt_ns += pkts * span;
        self.totals.max_queue_packets = self.totals.max_queue_packets.max(level);
        if !self.binned {
            self.level_since = to;
            return;
        }
        let open = &mut self.open;
        if open.span.is_bin()
            && self.level_since.as_nanos() >= open.span.start_ns
            && to.as_nanos() <= open.span.end_ns
        {
            // Within the open bin, as most spans are.
            open.queue_held = true;
            open.queue_pkt_ns = open
                .queue_pkt_ns
                .saturating_add(saturating_u64(pkts * span));
            open.queue_byte_ns = open
                .queue_byte_ns
                .saturating_add(saturating_u64(bytes * span));
            open.max_queue = open.max_queue.max(level);
            self.level_since = to;
            return;
        }
        self.integrate_across_bins(to, pkts, bytes, level);
    }

    /// The rest of [`LinkMonitor::integrate_queue`] for a span that does not lie within the
    /// open bin: split across the bins it covers. Out of line, so that the common case above
    /// saves and restores no registers (on fig09, about 6 k of its 861 k calls come here).
    #[cold]
    #[inline(never)]
    fn integrate_across_bins(&mut self, to: Time, pkts: u128, bytes: u128, level: u32) {
        // The open bin takes its part; other bins go straight to the series.
        let (open, q_pkt, q_byte, q_max) = (
            &mut self.open,
            &mut self.queue_pkt_ns,
            &mut self.queue_byte_ns,
            &mut self.max_queue,
        );
        self.bins.split(self.level_since, to, |k, ns| {
            // One bin's integral fits a u64 for any realistic level (2^64 ns·bytes is 18 GB held
            // for 1 s); saturate rather than wrap beyond that.
            let (p, b) = (
                saturating_u64(pkts * u128::from(ns)),
                saturating_u64(bytes * u128::from(ns)),
            );
            if k == open.span.index && open.span.is_bin() {
                open.queue_held = true;
                open.queue_pkt_ns = open.queue_pkt_ns.saturating_add(p);
                open.queue_byte_ns = open.queue_byte_ns.saturating_add(b);
                open.max_queue = open.max_queue.max(level);
            } else {
                let at = q_pkt.at(k);
                *at = at.saturating_add(p);
                let at = q_byte.at(k);
                *at = at.saturating_add(b);
                let m = q_max.at(k);
                *m = (*m).max(level);
            }
        });
        self.level_since = to;
    }

    /// Total busy nanoseconds with every transmission cut at `t`.
    fn busy_clipped_at(&self, t: Time) -> u64 {
        let after: u64 = self
            .in_progress
            .iter()
            .filter(|&(_, stop)| stop > t)
            .map(|(start, stop)| stop.as_nanos() - start.max(t).as_nanos())
            .sum();
        self.total_busy_ns.saturating_sub(after)
    }

    /// The totals over [0, t], given the queue integral (packet·ns), busy ns and maximum there.
    fn totals_over(&self, t: Time, queue_pkt_ns: u128, busy_ns: u64, max: u32) -> LinkTotals {
        let t_ns = t.as_nanos();
        let per_t = |x: f64| if t_ns == 0 { 0.0 } else { x / t_ns as f64 };
        LinkTotals {
            busy: Duration::from_nanos(busy_ns),
            mean_queue_packets: per_t(queue_pkt_ns as f64),
            max_queue_packets: max,
            utilization: per_t(busy_ns as f64),
            ..self.totals.clone()
        }
    }
}

/// A 128-bit product as a `u64`, saturating.
fn saturating_u64(x: u128) -> u64 {
    u64::try_from(x).unwrap_or(u64::MAX)
}

/// A queue length as a `u32`, saturating.
fn clamp_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What every call on a totals-only monitor touches stays within its first two cache lines,
    /// and the monitor starts on a line (see the layout note on [`LinkMonitor`]).
    #[test]
    fn the_hot_fields_share_the_first_two_cache_lines() {
        use std::mem::{align_of, offset_of, size_of};
        assert_eq!(align_of::<LinkMonitor>(), 64);
        let end = |offset: usize, size: usize| offset + size;
        assert!(
            end(
                offset_of!(LinkMonitor, in_progress),
                size_of::<InProgress>()
            ) <= 64
        );
        assert!(end(offset_of!(LinkMonitor, latest), size_of::<Time>()) <= 64);
        assert!(end(offset_of!(LinkMonitor, total_busy_ns), size_of::<u64>()) <= 64);
        for offset in [
            offset_of!(LinkMonitor, level_packets),
            offset_of!(LinkMonitor, level_bytes),
            offset_of!(LinkMonitor, binned),
        ] {
            assert!((64..128).contains(&offset));
        }
        let totals = offset_of!(LinkMonitor, totals);
        assert!(totals >= 64);
        assert!(end(totals + offset_of!(LinkTotals, arrivals), 8) <= 128);
        assert!(end(totals + offset_of!(LinkTotals, departures), 8) <= 128);
        assert!(end(totals + offset_of!(LinkTotals, bytes_departed), 8) <= 128);
    }

    fn ns(n: u64) -> Time {
        Time::from_nanos(n)
    }

    /// 10 ns bins (so hand-computed integrals stay small), 1 Mb/s.
    fn monitor() -> LinkMonitor {
        LinkMonitor::new(Duration::from_nanos(10), 1_000_000)
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1.0)
    }

    #[test]
    fn arrivals_and_drops_per_bin_and_by_cause() {
        let mut m = monitor();
        m.on_arrival(ns(1), 100);
        m.on_arrival(ns(12), 100);
        m.on_arrival(ns(19), 100);
        m.on_arrival(ns(25), 100);
        m.on_drop(ns(12), 100, DropCause::LossModel);
        m.on_drop(ns(19), 100, DropCause::Queue);
        m.on_drop(ns(25), 100, DropCause::Queue);
        let r = m.finish(ns(30));
        assert_eq!(r.bins.arrivals, vec![1, 2, 1]);
        assert_eq!(r.bins.drops, vec![0, 2, 1]);
        assert_eq!(r.totals.arrivals, 4);
        assert_eq!(r.totals.queue_drops, 2);
        assert_eq!(r.totals.loss_model_drops, 1);
        assert_eq!(r.totals.drop_rate(), 0.75);
    }

    #[test]
    fn drop_rate_without_arrivals_is_zero() {
        assert_eq!(LinkTotals::default().drop_rate(), 0.0);
    }

    #[test]
    fn queue_mean_is_exact_across_bin_boundaries() {
        let mut m = monitor();
        // 0 over [0, 4); 3 pkts / 3000 B over [4, 17); 1 pkt / 500 B over [17, 25); 0 after.
        m.on_queue_change(ns(4), 3, 3000);
        m.on_queue_change(ns(17), 1, 500);
        m.on_queue_change(ns(25), 0, 0);
        let r = m.finish(ns(30));
        // Bin 0: 3·6 = 18 → 1.8; bin 1: 3·7 + 1·3 = 24 → 2.4; bin 2: 1·5 = 5 → 0.5.
        assert_eq!(r.bins.mean_queue_packets, vec![1.8, 2.4, 0.5]);
        assert_eq!(r.bins.mean_queue_bytes, vec![1800.0, 2100.0 + 150.0, 250.0]);
        assert_eq!(r.bins.max_queue_packets, vec![3, 3, 1]);
        // (18 + 24 + 5) / 30.
        assert!(close(r.totals.mean_queue_packets, 47.0 / 30.0));
        assert_eq!(r.totals.max_queue_packets, 3);
    }

    #[test]
    fn a_level_spanning_several_bins_feeds_each_and_runs_to_the_end() {
        let mut m = monitor();
        m.on_queue_change(ns(5), 2, 200);
        // Held until finish at 35: bins 0..=3 get 2·5, 2·10, 2·10, 2·5.
        let r = m.finish(ns(35));
        assert_eq!(r.bins.mean_queue_packets, vec![1.0, 2.0, 2.0, 1.0]);
        assert_eq!(r.bins.max_queue_packets, vec![2, 2, 2, 2]);
        assert!(close(r.totals.mean_queue_packets, 60.0 / 35.0));
    }

    #[test]
    fn a_level_held_for_no_time_is_not_a_maximum() {
        let mut m = monitor();
        m.on_queue_change(ns(12), 1, 100);
        m.on_queue_change(ns(12), 0, 0); // enqueued and dequeued at once
        m.on_queue_change(ns(14), 2, 200);
        m.on_queue_change(ns(15), 0, 0);
        let r = m.finish(ns(20));
        assert_eq!(r.bins.max_queue_packets, vec![0, 2]);
        assert_eq!(r.bins.mean_queue_packets, vec![0.0, 0.2]);
        assert_eq!(r.totals.max_queue_packets, 2);
    }

    #[test]
    fn a_queue_change_back_in_time_integrates_nothing() {
        let mut m = monitor();
        m.on_queue_change(ns(10), 1, 100);
        m.on_queue_change(ns(5), 4, 400); // not produced by the engine; must not panic
        let r = m.finish(ns(20));
        assert_eq!(r.bins.mean_queue_packets, vec![0.0, 4.0]);
    }

    #[test]
    fn busy_time_splits_across_three_bins() {
        let mut m = monitor();
        m.on_transmission(ns(7), ns(24), 1500);
        let r = m.finish(ns(30));
        assert_eq!(r.bins.departures, vec![1, 0, 0]);
        assert_eq!(r.bins.departed_bytes, vec![1500, 0, 0]);
        assert_eq!(r.bins.utilization, vec![0.3, 1.0, 0.4]);
        assert_eq!(r.totals.busy, Duration::from_nanos(17));
        assert!(close(r.totals.utilization, 17.0 / 30.0));
        assert_eq!(r.totals.departures, 1);
        assert_eq!(r.totals.bytes_departed, 1500);
    }

    #[test]
    fn busy_time_after_the_end_is_clipped_and_the_last_bin_uses_the_full_width() {
        let mut m = monitor();
        m.on_transmission(ns(0), ns(10), 100);
        m.on_transmission(ns(18), ns(40), 100); // still on the wire at the end (25)
        let r = m.finish(ns(25));
        assert_eq!(r.bins.utilization, vec![1.0, 0.2, 0.5]);
        assert_eq!(r.bins.departures, vec![1, 1, 0]);
        assert_eq!(r.totals.busy, Duration::from_nanos(17));
        assert!(close(r.totals.utilization, 17.0 / 25.0));
    }

    #[test]
    fn zero_length_transmissions_and_empty_runs() {
        let mut m = monitor();
        m.on_transmission(ns(5), ns(5), 0);
        let r = m.clone().finish(ns(10));
        assert_eq!(r.bins.departures, vec![1]);
        assert_eq!(r.bins.utilization, vec![0.0]);
        assert_eq!(r.totals.busy, Duration::ZERO);
        let r = m.finish(Time::ZERO);
        assert!(r.bins.utilization.is_empty() && r.bins.mean_queue_packets.is_empty());
        assert_eq!(r.totals.utilization, 0.0);
        assert_eq!(r.totals.mean_queue_packets, 0.0);
        let r = monitor().finish(Time::ZERO);
        assert_eq!(r.bins, LinkBins::default());
        assert_eq!(r.totals, LinkTotals::default());
    }

    #[test]
    fn finish_pads_and_truncates() {
        let mut m = monitor();
        m.on_arrival(ns(3), 100);
        let r = m.clone().finish(ns(41));
        assert_eq!(r.bins.arrivals, vec![1, 0, 0, 0, 0]);
        assert_eq!(r.bins.mean_queue_packets, vec![0.0; 5]);
        assert_eq!(r.bins.utilization, vec![0.0; 5]);
        m.on_arrival(ns(55), 100);
        let r = m.finish(ns(20));
        assert_eq!(r.bins.arrivals, vec![1, 0]);
        assert_eq!(r.totals.arrivals, 2);
    }

    #[test]
    fn live_totals_count_up_to_the_latest_time() {
        let mut m = monitor();
        m.on_queue_change(ns(0), 2, 200);
        m.on_transmission(ns(0), ns(30), 100);
        m.on_arrival(ns(10), 100);
        let t = m.totals();
        // Queue 2 over [0, 10]; busy [0, 10] of a transmission still in progress.
        assert!(close(t.mean_queue_packets, 2.0));
        assert_eq!(t.max_queue_packets, 2);
        assert_eq!(t.busy, Duration::from_nanos(10));
        assert!(close(t.utilization, 1.0));
        assert_eq!(t.departures, 1);
        let r = m.finish(ns(40));
        assert_eq!(r.totals.busy, Duration::from_nanos(30));
        assert!(close(r.totals.mean_queue_packets, 2.0));
        assert_eq!(monitor().totals(), LinkTotals::default());
    }

    #[test]
    fn overlapping_transmissions_are_each_clipped() {
        // Not what one transmitter does, but the monitor alone accepts it: both count until
        // they end.
        let mut m = monitor();
        m.on_transmission(ns(0), ns(100), 100);
        m.on_transmission(ns(10), ns(50), 100);
        assert_eq!(m.in_progress.iter().count(), 2);
        assert_eq!(m.finish(ns(30)).totals.busy, Duration::from_nanos(30 + 20));
        let mut m = monitor();
        m.on_transmission(ns(0), ns(100), 100);
        m.on_transmission(ns(10), ns(50), 100);
        m.on_transmission(ns(60), ns(70), 100);
        assert_eq!(
            m.in_progress.iter().count(),
            2,
            "the one that ended at 50 is gone"
        );
        assert_eq!(
            m.finish(ns(65)).totals.busy,
            Duration::from_nanos(65 + 40 + 5)
        );
    }

    #[test]
    fn finished_transmissions_are_forgotten() {
        let mut m = monitor();
        for i in 0..100 {
            m.on_transmission(ns(10 * i), ns(10 * i + 10), 100);
        }
        assert_eq!(m.in_progress.iter().count(), 1);
        assert_eq!(m.rate_bps(), 1_000_000);
        assert_eq!(m.bins().width_nanos(), 10);
        let r = m.finish(ns(1000));
        assert!(r.bins.utilization.iter().all(|&u| u == 1.0));
        assert_eq!(r.totals.utilization, 1.0);
    }

    #[test]
    fn totals_only_keeps_totals_and_no_bins() {
        let mut binned = monitor();
        let mut bare = LinkMonitor::totals_only(Duration::from_nanos(10), 1_000_000);
        assert!(!bare.is_binned());
        for m in [&mut binned, &mut bare] {
            m.on_arrival(ns(1), 100);
            m.on_queue_change(ns(1), 1, 100);
            m.on_transmission(ns(2), ns(25), 100);
            m.on_queue_change(ns(2), 0, 0);
            // Unchanged levels, which the bare monitor does not integrate at once.
            m.on_queue_change(ns(3), 0, 0);
            m.on_queue_change(ns(5), 2, 200);
            m.on_queue_change(ns(7), 2, 200);
            m.on_drop(ns(12), 100, DropCause::Queue);
            m.on_queue_change(ns(14), 2, 200);
        }
        assert_eq!(bare.totals(), binned.totals());
        for m in [&mut binned, &mut bare] {
            m.on_queue_change(ns(21), 0, 0);
        }
        let (binned, bare) = (binned.finish(ns(30)), bare.finish(ns(30)));
        assert_eq!(bare.totals.mean_queue_packets, (1.0 + 2.0 * 16.0) / 30.0);
        assert_eq!(bare.totals, binned.totals);
        assert_eq!(binned.bins.arrivals.len(), 3);
        assert_eq!(bare.bins, LinkBins::default());
    }
}
