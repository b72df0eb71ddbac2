//! Fixed-width time bins, shared by the flow and link monitors.
//!
//! Bin k covers the half-open interval [k·w, (k+1)·w) of simulated time, w being the bin width.
//! Every time series the monitors record is one value per bin: the send rate at timescale delta
//! of Floyd 2000 eq. 3 is `s · packets(bin) / delta`, and the queue-length time series of Floyd
//! 2000 Figs. 14 and 24-28 (Yang 2001) is the time-weighted mean per bin. Bin arithmetic is
//! integer nanoseconds, so an interval is split across bins exactly.

use std::time::Duration;

use tfrc::time::duration_nanos;
use tfrc::Time;

/// The bin grid: a width in nanoseconds and the arithmetic that maps times to bins.
///
/// The monitors map a time to its bin several times per event, so the division by the width
/// is done as a multiplication by its precomputed reciprocal (`floor((2^64 - 1) / w)`), which
/// gives the quotient or up to two less, and a correction that makes it exact.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Bins {
    width_ns: u64,
    reciprocal: u64,
}

impl Bins {
    /// A grid of bins `width` wide.
    ///
    /// # Panics
    /// If `width` is zero (every time would fall in infinitely many bins). The engine validates
    /// the scenario's bin width before building monitors, so this is a programming error.
    pub fn new(width: Duration) -> Bins {
        let width_ns = duration_nanos(width);
        assert!(width_ns > 0, "monitor bin width must be positive");
        Bins {
            width_ns,
            reciprocal: u64::MAX / width_ns,
        }
    }

    /// floor(ns / w), exactly: the reciprocal's estimate is at most two short (the estimate
    /// errs by less than ns / 2^64 + 1 < 2), and each correction step adds one.
    fn quotient(&self, ns: u64) -> u64 {
        let mut q = ((u128::from(ns) * u128::from(self.reciprocal)) >> 64) as u64;
        let mut rest = ns - q * self.width_ns;
        while rest >= self.width_ns {
            q += 1;
            rest -= self.width_ns;
        }
        q
    }

    /// The bin width.
    pub fn width(&self) -> Duration {
        Duration::from_nanos(self.width_ns)
    }

    /// The bin width in nanoseconds (never zero).
    pub fn width_nanos(&self) -> u64 {
        self.width_ns
    }

    /// The index of the bin holding `t`: floor(t / w).
    pub fn index(&self, t: Time) -> usize {
        usize::try_from(self.quotient(t.as_nanos())).unwrap_or(usize::MAX)
    }

    /// How many bins a run over [0, end) has: ceil(end / w), so 0 when `end` is zero and a last,
    /// partial bin when `end` is not a multiple of the width.
    pub fn count(&self, end: Time) -> usize {
        let ns = end.as_nanos();
        let full = ns / self.width_ns;
        let n = if ns % self.width_ns == 0 {
            full
        } else {
            full + 1
        };
        usize::try_from(n).unwrap_or(usize::MAX)
    }

    /// When bin `k` starts: k·w (saturating at [`Time::MAX`]).
    pub fn start(&self, k: usize) -> Time {
        let k = u64::try_from(k).unwrap_or(u64::MAX);
        Time::from_nanos(k.saturating_mul(self.width_ns))
    }

    /// Bin `k` as a span of nanoseconds.
    pub fn span(&self, k: usize) -> BinSpan {
        let start_ns = self.start(k).as_nanos();
        BinSpan {
            index: k,
            start_ns,
            end_ns: start_ns.saturating_add(self.width_ns),
        }
    }

    /// Splits the interval [from, to) across the bins it overlaps: calls `f(k, ns)` once per bin
    /// k, in increasing order, with the `ns` > 0 nanoseconds of the interval that lie in bin k.
    /// The `ns` add up to `to - from` exactly; an empty or reversed interval calls nothing.
    pub fn split(&self, from: Time, to: Time, mut f: impl FnMut(usize, u64)) {
        let (mut t, to) = (from.as_nanos(), to.as_nanos());
        while t < to {
            let k = self.quotient(t);
            let bin_end = k.saturating_add(1).saturating_mul(self.width_ns);
            // bin_end > t always (it only saturates at u64::MAX, and t < to <= u64::MAX).
            let seg_end = bin_end.min(to);
            f(usize::try_from(k).unwrap_or(usize::MAX), seg_end - t);
            t = seg_end;
        }
    }
}

/// One bin of a grid as the half-open span `[start_ns, end_ns)`: the bin a monitor counts into
/// while its calls stay in it, adding to its series only when a later bin comes (a lookup and a
/// width check per counter and call cost more than the counting). The default is no bin: an
/// empty span that holds no time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BinSpan {
    /// The bin's index.
    pub index: usize,
    /// Where it starts (ns).
    pub start_ns: u64,
    /// Where the next starts (ns); 0 for no bin.
    pub end_ns: u64,
}

impl BinSpan {
    /// Whether `t` lies in the bin.
    pub fn contains(&self, t: Time) -> bool {
        let t = t.as_nanos();
        self.start_ns <= t && t < self.end_ns
    }

    /// Whether this is a bin (not the default, empty span).
    pub fn is_bin(&self) -> bool {
        self.end_ns > 0
    }
}

/// A per-bin time series that grows lazily: reading or writing bin k first extends it with the
/// fill value up to k. Shared by the flow and link monitors so the grow-pad-truncate logic exists
/// once. Memory is one value per bin touched so far, never per event.
///
/// After [`try_reserve`](PerBin::try_reserve)`(n)` the series never allocates again: bins 0..n
/// fit in the room reserved, and writes to bins at or past `n` (past the run's end, which
/// [`into_vec`](PerBin::into_vec) drops anyway) land in a scratch value that is never read. So
/// running out of memory is an error at reservation time, never an abort half-way.
#[derive(Clone, Debug, PartialEq)]
pub struct PerBin<T> {
    values: Vec<T>,
    fill: T,
    /// Bins at or past this index are not kept (`usize::MAX` until a reservation).
    limit: usize,
    /// Where writes to bins at or past `limit` go.
    spill: T,
}

impl<T: Copy> PerBin<T> {
    /// An empty series whose untouched bins read as `fill` (0 for counters, NaN for samples).
    pub fn new(fill: T) -> PerBin<T> {
        PerBin {
            values: Vec::new(),
            fill,
            limit: usize::MAX,
            spill: fill,
        }
    }

    /// Reserves room for `n` bins in all and keeps no bin at or past `n`: growing to `n` never
    /// reallocates (nor copies, nor leaves the up-to-2x slack of doubling), and pages are
    /// touched only as bins are reached. Fails, leaving the series as it was, when the memory
    /// cannot be had.
    pub fn try_reserve(&mut self, n: usize) -> Result<(), std::collections::TryReserveError> {
        self.values
            .try_reserve_exact(n.saturating_sub(self.values.len()))?;
        self.limit = n;
        Ok(())
    }

    /// Bin `k`'s value, for update in place; extends the series with the fill value up to `k`.
    /// Past the reserved bins it is a scratch value, reset to the fill value, that no reader
    /// sees.
    pub fn at(&mut self, k: usize) -> &mut T {
        if k >= self.limit {
            self.spill = self.fill;
            return &mut self.spill;
        }
        if k >= self.values.len() {
            self.values.resize(k + 1, self.fill);
        }
        &mut self.values[k]
    }

    /// Bin `k`'s value without growing the series (the fill value beyond its end).
    pub fn get(&self, k: usize) -> T {
        self.values.get(k).copied().unwrap_or(self.fill)
    }

    /// How many bins have been touched (the highest index touched plus one).
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether no bin has been touched.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The values so far.
    pub fn as_slice(&self) -> &[T] {
        &self.values
    }

    /// The series as exactly `n` values: padded with the fill value, or truncated (bins at or
    /// after the run's end are dropped).
    pub fn into_vec(self, n: usize) -> Vec<T> {
        let mut values = self.values;
        values.resize(n, self.fill);
        values
    }

    /// The series as exactly `n` values, each mapped by `f` (e.g. an integral to a mean).
    pub fn map_into_vec<U>(self, n: usize, f: impl FnMut(T) -> U) -> Vec<U> {
        self.into_vec(n).into_iter().map(f).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The reciprocal's quotient is the division's, for any time and width.
        #[test]
        fn quotient_is_exact_division(ns in any::<u64>(), width in 1..=u64::MAX) {
            let b = Bins::new(Duration::from_nanos(width));
            prop_assert_eq!(b.quotient(ns), ns / width);
        }
    }

    #[test]
    fn a_span_holds_its_bin_and_the_default_holds_nothing() {
        let b = Bins::new(Duration::from_millis(10));
        let span = b.span(2);
        assert_eq!(
            (span.index, span.start_ns, span.end_ns),
            (2, 20_000_000, 30_000_000)
        );
        assert!(span.is_bin() && span.contains(ms(20)) && span.contains(ms(29)));
        assert!(!span.contains(ms(30)) && !span.contains(ms(19)));
        let none = BinSpan::default();
        assert!(!none.is_bin() && !none.contains(ms(0)));
        assert_eq!(
            b.span(usize::MAX).end_ns,
            u64::MAX,
            "saturates at the end of time"
        );
    }

    #[test]
    fn quotient_is_exact_at_the_edges() {
        for width in [
            1,
            2,
            3,
            7,
            1_000_000,
            10_000_000,
            u64::MAX / 2,
            u64::MAX - 1,
            u64::MAX,
        ] {
            let b = Bins::new(Duration::from_nanos(width));
            for ns in [
                0,
                1,
                width - 1,
                width,
                width.saturating_add(1),
                u64::MAX - 1,
                u64::MAX,
            ] {
                assert_eq!(b.quotient(ns), ns / width, "{ns} / {width}");
            }
            for k in [1_u64, 2, 1000, 123_456_789] {
                let ns = k.saturating_mul(width);
                assert_eq!(b.quotient(ns), ns / width, "{ns} / {width}");
                assert_eq!(b.quotient(ns - 1), (ns - 1) / width, "{ns}-1 / {width}");
            }
        }
    }

    fn ms(n: u64) -> Time {
        Time::from_nanos(n * 1_000_000)
    }

    #[test]
    fn index_is_floor_and_bins_are_half_open() {
        let b = Bins::new(Duration::from_millis(10));
        assert_eq!(b.index(Time::ZERO), 0);
        assert_eq!(b.index(Time::from_nanos(9_999_999)), 0);
        assert_eq!(b.index(ms(10)), 1);
        assert_eq!(b.index(ms(25)), 2);
    }

    #[test]
    fn count_is_ceil_and_zero_for_an_empty_run() {
        let b = Bins::new(Duration::from_millis(10));
        assert_eq!(b.count(Time::ZERO), 0);
        assert_eq!(b.count(Time::from_nanos(1)), 1);
        assert_eq!(b.count(ms(10)), 1);
        assert_eq!(b.count(Time::from_nanos(10_000_001)), 2);
        assert_eq!(b.count(ms(100)), 10);
    }

    #[test]
    fn width_and_start() {
        let b = Bins::new(Duration::from_millis(10));
        assert_eq!(b.width(), Duration::from_millis(10));
        assert_eq!(b.width_nanos(), 10_000_000);
        assert_eq!(b.start(0), Time::ZERO);
        assert_eq!(b.start(3), ms(30));
        assert_eq!(b.start(usize::MAX), Time::MAX);
    }

    #[test]
    #[should_panic(expected = "bin width must be positive")]
    fn zero_width_is_refused() {
        let _ = Bins::new(Duration::ZERO);
    }

    #[test]
    fn split_covers_the_interval_exactly() {
        let b = Bins::new(Duration::from_nanos(10));
        let mut parts = Vec::new();
        b.split(Time::from_nanos(7), Time::from_nanos(32), |k, ns| {
            parts.push((k, ns))
        });
        assert_eq!(parts, vec![(0, 3), (1, 10), (2, 10), (3, 2)]);

        parts.clear();
        b.split(Time::from_nanos(10), Time::from_nanos(20), |k, ns| {
            parts.push((k, ns))
        });
        assert_eq!(parts, vec![(1, 10)]);

        parts.clear();
        b.split(Time::from_nanos(5), Time::from_nanos(5), |k, ns| {
            parts.push((k, ns))
        });
        b.split(Time::from_nanos(9), Time::from_nanos(5), |k, ns| {
            parts.push((k, ns))
        });
        assert!(parts.is_empty());
    }

    #[test]
    fn split_reaches_the_end_of_time() {
        let b = Bins::new(Duration::from_nanos(u64::MAX / 2 + 1));
        let mut total = 0;
        b.split(Time::from_nanos(1), Time::MAX, |_, ns| total += ns);
        assert_eq!(total, u64::MAX - 1);
    }

    #[test]
    fn per_bin_grows_lazily_and_pads_or_truncates() {
        let mut v = PerBin::new(0u32);
        assert!(v.is_empty());
        *v.at(3) += 2;
        *v.at(1) += 1;
        assert_eq!(v.len(), 4);
        assert_eq!(v.as_slice(), &[0, 1, 0, 2]);
        assert_eq!(v.get(3), 2);
        assert_eq!(v.get(10), 0);
        assert_eq!(v.clone().into_vec(6), vec![0, 1, 0, 2, 0, 0]);
        assert_eq!(v.clone().into_vec(2), vec![0, 1]);
        assert_eq!(v.into_vec(0), Vec::<u32>::new());
    }

    #[test]
    fn a_reserved_series_never_grows_past_its_bins() {
        let mut v = PerBin::new(0u64);
        v.try_reserve(3).unwrap();
        let capacity = v.values.capacity();
        *v.at(2) += 5;
        *v.at(7) += 9;
        *v.at(3) += 1;
        assert_eq!(v.len(), 3);
        assert_eq!(v.values.capacity(), capacity);
        assert_eq!(v.get(7), 0);
        assert_eq!(v.into_vec(3), vec![0, 0, 5]);
        let mut huge = PerBin::new(0u64);
        assert!(huge.try_reserve(usize::MAX / 4).is_err());
        *huge.at(1) = 1;
        assert_eq!(huge.into_vec(2), vec![0, 1]);
    }

    #[test]
    fn per_bin_fill_and_map() {
        let mut v = PerBin::new(f64::NAN);
        *v.at(1) = 2.0;
        let out = v.clone().into_vec(3);
        assert!(out[0].is_nan() && out[2].is_nan());
        assert_eq!(out[1], 2.0);
        let mut w = PerBin::new(0u64);
        *w.at(0) = 5;
        assert_eq!(w.map_into_vec(2, |x| x as f64 / 10.0), vec![0.5, 0.0]);
    }
}
