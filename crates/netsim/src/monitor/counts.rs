//! A per-bin counter series stored in the narrowest integer width its values need.
//!
//! Most per-flow bins hold small counts: a flow of a 2048-flow run sends a few packets per 10 ms
//! bin, a few kilobytes. Stored as `u32`/`u64` the seven counters of a flow cost 40 bytes per
//! bin (1.2 GB for 2048 flows over 150 s); stored in `u8` until a value needs more, then `u16`,
//! `u32`, `u64` (the whole series widened once, at most three times), they cost about 10. The
//! values read back are the same: the width is storage only, and a count still saturates at the
//! maximum of its logical type `T` (`u32` for packets, `u64` for bytes), as before.

use std::marker::PhantomData;

/// The logical type of a counter series: what its values saturate at.
pub trait Count: Copy + Default + PartialEq + std::fmt::Debug + TryFrom<u64> + Into<u64> {
    /// The largest value a count may reach (it saturates there).
    const MAX: u64;
}

impl Count for u32 {
    const MAX: u64 = u32::MAX as u64;
}

impl Count for u64 {
    const MAX: u64 = u64::MAX;
}

/// The storage of a series, in one width.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Narrow {
    /// Every value fits in a byte.
    U8(Vec<u8>),
    /// Every value fits in 16 bits.
    U16(Vec<u16>),
    /// Every value fits in 32 bits.
    U32(Vec<u32>),
    /// Any value.
    U64(Vec<u64>),
}

impl Default for Narrow {
    fn default() -> Narrow {
        Narrow::U8(Vec::new())
    }
}

impl Narrow {
    /// How many values it holds.
    pub fn len(&self) -> usize {
        match self {
            Narrow::U8(v) => v.len(),
            Narrow::U16(v) => v.len(),
            Narrow::U32(v) => v.len(),
            Narrow::U64(v) => v.len(),
        }
    }

    /// Whether it holds no value.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Value `k` (0 past the end).
    pub fn get(&self, k: usize) -> u64 {
        match self {
            Narrow::U8(v) => v.get(k).map_or(0, |&x| u64::from(x)),
            Narrow::U16(v) => v.get(k).map_or(0, |&x| u64::from(x)),
            Narrow::U32(v) => v.get(k).map_or(0, |&x| u64::from(x)),
            Narrow::U64(v) => v.get(k).copied().unwrap_or(0),
        }
    }

    /// The largest value this width holds.
    fn max(&self) -> u64 {
        match self {
            Narrow::U8(_) => u64::from(u8::MAX),
            Narrow::U16(_) => u64::from(u16::MAX),
            Narrow::U32(_) => u64::from(u32::MAX),
            Narrow::U64(_) => u64::MAX,
        }
    }

    /// Sets value `k` (which must exist) to `value` (which must fit the width).
    fn set(&mut self, k: usize, value: u64) {
        // The casts cannot truncate: callers widen first (see `Counts::add`).
        match self {
            Narrow::U8(v) => v[k] = value as u8,
            Narrow::U16(v) => v[k] = value as u16,
            Narrow::U32(v) => v[k] = value as u32,
            Narrow::U64(v) => v[k] = value,
        }
    }

    /// Pads with zeros or truncates to `n` values.
    fn resize(&mut self, n: usize) {
        match self {
            Narrow::U8(v) => v.resize(n, 0),
            Narrow::U16(v) => v.resize(n, 0),
            Narrow::U32(v) => v.resize(n, 0),
            Narrow::U64(v) => v.resize(n, 0),
        }
    }

    /// The same values, one width wider, with room for `capacity` values.
    fn widened(&self, capacity: usize) -> Narrow {
        fn copy<A: Copy, B: From<A>>(from: &[A], capacity: usize) -> Vec<B> {
            let mut out = Vec::with_capacity(capacity.max(from.len()));
            out.extend(from.iter().map(|&x| B::from(x)));
            out
        }
        match self {
            Narrow::U8(v) => Narrow::U16(copy(v, capacity)),
            Narrow::U16(v) => Narrow::U32(copy(v, capacity)),
            Narrow::U32(v) => Narrow::U64(copy(v, capacity)),
            Narrow::U64(v) => Narrow::U64(v.clone()),
        }
    }

    /// Every value, widened to `u64`.
    pub fn to_u64(&self) -> Vec<u64> {
        (0..self.len()).map(|k| self.get(k)).collect()
    }
}

/// Adds `delta` to value `k` of `values` (padding with zeros up to it), saturating at `cap`,
/// if the sum fits the element type; `false`, with the value unchanged, if it does not.
fn add_within<W: Copy + Default + Into<u64> + TryFrom<u64>>(
    values: &mut Vec<W>,
    k: usize,
    delta: u64,
    cap: u64,
) -> bool {
    if k >= values.len() {
        values.resize(k + 1, W::default());
    }
    let sum = values[k].into().saturating_add(delta).min(cap);
    match W::try_from(sum) {
        Ok(value) => {
            values[k] = value;
            true
        }
        Err(_) => false,
    }
}

/// A counter series of logical type `T` (module documentation), grown lazily like
/// [`PerBin`](super::PerBin): writing bin k first extends it with zeros up to k, and after
/// [`try_reserve`](Counts::try_reserve)`(n)` writes to bins at or past `n` are dropped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Counts<T> {
    values: Narrow,
    /// Bins at or past this index are not kept (`usize::MAX` until a reservation).
    limit: usize,
    logical: PhantomData<T>,
}

impl<T: Count> Default for Counts<T> {
    fn default() -> Counts<T> {
        Counts::new()
    }
}

impl<T: Count> Counts<T> {
    /// An empty series (every bin reads 0).
    pub fn new() -> Counts<T> {
        Counts {
            values: Narrow::default(),
            limit: usize::MAX,
            logical: PhantomData,
        }
    }

    /// The series of `values`, stored as narrow as they allow.
    pub fn from_values(values: &[T]) -> Counts<T> {
        let mut out = Counts::new();
        for (k, &v) in values.iter().enumerate() {
            out.add(k, v.into());
        }
        out.values.resize(values.len());
        out
    }

    /// Reserves room for `n` bins at the narrowest width and keeps no bin at or past `n`.
    /// Widening later allocates the wider copy (at most three times per series). Fails,
    /// leaving the series as it was, when the memory cannot be had.
    pub fn try_reserve(&mut self, n: usize) -> Result<(), std::collections::TryReserveError> {
        let more = n.saturating_sub(self.values.len());
        match &mut self.values {
            Narrow::U8(v) => v.try_reserve_exact(more)?,
            Narrow::U16(v) => v.try_reserve_exact(more)?,
            Narrow::U32(v) => v.try_reserve_exact(more)?,
            Narrow::U64(v) => v.try_reserve_exact(more)?,
        }
        self.limit = n;
        Ok(())
    }

    /// Adds `delta` to bin `k`, saturating at `T::MAX`; bins at or past the reservation are
    /// dropped (past the run's end).
    pub fn add(&mut self, k: usize, delta: u64) {
        if k >= self.limit {
            return;
        }
        // The usual case, the sum fitting the current width, with one look at the width.
        let fits = match &mut self.values {
            Narrow::U8(v) => add_within(v, k, delta, T::MAX),
            Narrow::U16(v) => add_within(v, k, delta, T::MAX),
            Narrow::U32(v) => add_within(v, k, delta, T::MAX),
            Narrow::U64(v) => add_within(v, k, delta, T::MAX),
        };
        if fits {
            return;
        }
        // Wider values are needed; `add_within` already padded the series up to bin `k`.
        let value = self.values.get(k).saturating_add(delta).min(T::MAX);
        while value > self.values.max() {
            let capacity = if self.limit == usize::MAX {
                self.values.len()
            } else {
                self.limit
            };
            self.values = self.values.widened(capacity);
        }
        self.values.set(k, value);
    }

    /// Bin `k`'s value (0 beyond the end).
    pub fn get(&self, k: usize) -> T {
        // Values never exceed T::MAX (add saturates there).
        T::try_from(self.values.get(k)).unwrap_or_default()
    }

    /// How many bins have been touched (or the length the series was finished to).
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether no bin has been touched.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The series as exactly `n` bins: padded with zeros or truncated (bins at or after the
    /// run's end are dropped).
    pub fn finished(mut self, n: usize) -> Counts<T> {
        self.values.resize(n);
        self.limit = usize::MAX;
        self
    }

    /// The values in the logical type.
    pub fn to_vec(&self) -> Vec<T> {
        (0..self.len()).map(|k| self.get(k)).collect()
    }

    /// The sum of all bins, in `u64`, wrapping on overflow (as release builds always did), so
    /// debug and release builds give the same answer instead of debug panicking.
    pub fn sum(&self) -> u64 {
        (0..self.len()).fold(0u64, |total, k| total.wrapping_add(self.values.get(k)))
    }

    /// The storage, to hand over without copying (as the binding does to numpy).
    pub fn into_narrow(self) -> Narrow {
        self.values
    }

    /// Bytes the values take as stored (bins times the current width).
    pub fn stored_bytes(&self) -> usize {
        let width = match self.values {
            Narrow::U8(_) => 1,
            Narrow::U16(_) => 2,
            Narrow::U32(_) => 4,
            Narrow::U64(_) => 8,
        };
        width * self.len()
    }

    /// The storage, read-only.
    pub fn narrow(&self) -> &Narrow {
        &self.values
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_widen_as_needed_and_read_back_the_same() {
        let mut c: Counts<u64> = Counts::new();
        c.add(2, 5);
        assert!(matches!(c.narrow(), Narrow::U8(_)));
        c.add(0, 300);
        assert!(matches!(c.narrow(), Narrow::U16(_)));
        c.add(1, 70_000);
        assert!(matches!(c.narrow(), Narrow::U32(_)));
        c.add(3, 1 << 40);
        assert!(matches!(c.narrow(), Narrow::U64(_)));
        assert_eq!(c.to_vec(), vec![300, 70_000, 5, 1 << 40]);
        assert_eq!(c.stored_bytes(), 32);
        c.add(3, u64::MAX);
        assert_eq!(c.get(3), u64::MAX);
        assert_eq!(c.get(9), 0);
        assert_eq!(c.sum(), u64::MAX.wrapping_add(70_305));
    }

    proptest::proptest! {
        /// Any adds, to any bins, at any sizes, read back as a plain saturating series would,
        /// stored no wider than its largest value needs.
        #[test]
        fn adds_match_a_plain_series(
            adds in proptest::collection::vec(
                (0usize..40, proptest::prop_oneof![0u64..300, 0u64..70_000, proptest::num::u64::ANY]),
                0..120,
            ),
        ) {
            let mut c: Counts<u32> = Counts::new();
            let mut plain: Vec<u64> = Vec::new();
            for &(k, delta) in &adds {
                c.add(k, delta);
                if plain.len() <= k {
                    plain.resize(k + 1, 0);
                }
                plain[k] = plain[k].saturating_add(delta).min(u64::from(u32::MAX));
            }
            proptest::prop_assert_eq!(c.to_vec(), plain.iter().map(|&v| v as u32).collect::<Vec<_>>());
            let widest = plain.iter().copied().max().unwrap_or(0);
            let width = match c.narrow() {
                Narrow::U8(_) => u64::from(u8::MAX),
                Narrow::U16(_) => u64::from(u16::MAX),
                Narrow::U32(_) => u64::from(u32::MAX),
                Narrow::U64(_) => u64::MAX,
            };
            proptest::prop_assert!(widest <= width);
        }
    }

    #[test]
    fn logical_u32_saturates_like_before() {
        let mut c: Counts<u32> = Counts::new();
        c.add(0, u64::from(u32::MAX) - 1);
        c.add(0, 5);
        assert_eq!(c.get(0), u32::MAX);
        assert!(matches!(c.narrow(), Narrow::U32(_)));
    }

    #[test]
    fn reservation_drops_bins_past_it_and_finish_pads_or_truncates() {
        let mut c: Counts<u32> = Counts::new();
        c.try_reserve(3).unwrap();
        c.add(7, 1);
        c.add(1, 2);
        assert_eq!(c.len(), 2);
        c.add(2, 1000);
        assert_eq!(c.clone().finished(5).to_vec(), vec![0, 2, 1000, 0, 0]);
        assert_eq!(c.clone().finished(1).to_vec(), vec![0]);
        assert!(Counts::<u64>::new().try_reserve(usize::MAX / 2).is_err());
        let d = Counts::<u32>::from_values(&[1, 0, 65_536]);
        assert!(matches!(d.narrow(), Narrow::U32(_)));
        assert_eq!(d.to_vec(), vec![1, 0, 65_536]);
        assert_eq!(Counts::<u32>::from_values(&[0, 0]).to_vec(), vec![0, 0]);
    }
}
