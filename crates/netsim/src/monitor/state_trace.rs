//! A flow's agent state sampled once per bin, kept compressed while the run goes.
//!
//! A TCP flow declares 16 state fields; kept as one `f64` each per bin, 2048 flows over 150 s of
//! 10 ms bins need 3.9 GB, most of a large run's memory. Consecutive samples are mostly equal (a
//! flow that sent nothing in a bin has the state it had) or close (counters grow by a few, a
//! window by one), so each sample is stored as its difference from the previous one, losslessly:
//!
//! - a run of samples equal to the previous one, in every field, is one count;
//! - a sample that differs is the count of equal samples before it (a LEB128 varint), a bit mask
//!   of the fields that changed (`ceil(fields / 8)` bytes), and per changed field the XOR of its
//!   bits with the previous value's (the idea of Gorilla, Pelkonen et al., VLDB 2015, at byte
//!   granularity): one byte giving the XOR's leading and trailing zero bytes, then its middle
//!   bytes.
//!
//! Decoding gives the exact bits back (NaN payloads included), so results stay bit-identical.
//! Before the first sample, and in bins never sampled, every field reads NaN, as before.

/// The sampled state of one flow: `fields` values per bin, bins `0..len()`, compressed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StateSamples {
    fields: usize,
    /// The encoded samples (module documentation), up to the last one that differed.
    bytes: Vec<u8>,
    /// The last sample's bits per field (NaN's before any sample).
    last: Vec<u64>,
    /// Samples equal to `last` after the encoded ones, not yet written.
    repeats: u64,
    /// Bins covered so far.
    len: usize,
}

/// The least a trace's encoding grows by, in bytes (see `StateSamples::reserve_sample`): at
/// most this much unused per flow while a trace is small (8 MiB at 2048 flows), and below 32 KiB
/// a trace is moved at most eight times. Measured on 2048 flows (3 s, callgrind): against a
/// least growth of 64 bytes, 3.4% fewer loop instructions and 8.7% fewer second-level read
/// misses; over 150 s, peak RSS 839 MiB against 824 MiB.
const MIN_GROWTH: usize = 4096;

/// The bits every field has before the first sample: NaN.
const FILL: u64 = 0x7ff8_0000_0000_0000;

impl StateSamples {
    /// An empty trace of `fields` fields.
    pub fn new(fields: usize) -> StateSamples {
        StateSamples {
            fields,
            bytes: Vec::new(),
            last: vec![FILL; fields],
            repeats: 0,
            len: 0,
        }
    }

    /// Asks for what the next sample reads and writes: the last sample and the end of the
    /// encoding (see [`crate::prefetch`]); a hint only.
    pub(crate) fn prefetch_tail(&self) {
        if let Some(last) = self.last.first() {
            crate::prefetch::prefetch(last);
        }
        if let Some(end) = self.bytes.last() {
            crate::prefetch::prefetch(end);
        }
    }

    /// How many fields each sample has.
    pub fn fields(&self) -> usize {
        self.fields
    }

    /// Bins covered so far (the last bin recorded plus one).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no bin was recorded.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The encoded size in bytes (what the trace costs, beside a constant).
    pub fn encoded_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// Records the sample of bin `bin`: `values` in field order, NaN for missing ones, extra
    /// ones ignored. Bins skipped since the last one read NaN. Bins come in increasing order in
    /// a run; recording an earlier bin again (replacing its sample) is allowed but re-encodes
    /// the trace.
    pub fn record(&mut self, bin: usize, values: &[f64]) {
        if bin < self.len {
            let mut dense = self.decode(self.len);
            for (field, column) in dense.iter_mut().enumerate() {
                column[bin] = values.get(field).copied().unwrap_or(f64::NAN);
            }
            *self = StateSamples::encode(self.fields, &dense, self.len);
            return;
        }
        if bin > self.len {
            self.push_fill(bin - self.len);
        }
        // Without collecting the bits first: this runs once per flow and bin.
        self.push_with(|i| values.get(i).copied().unwrap_or(f64::NAN).to_bits());
    }

    /// Records that bins `len()` through `bin` have the state of the last bin recorded (the
    /// agents were not called since), in one step however many bins: the cheap path of a
    /// run's sampling. Nothing changes for bins already covered.
    pub fn repeat_through(&mut self, bin: usize) {
        if bin >= self.len {
            self.repeats += (bin + 1 - self.len) as u64;
            self.len = bin + 1;
        }
    }

    /// Appends `n` bins of NaN in every field.
    fn push_fill(&mut self, n: usize) {
        let fill = vec![FILL; self.fields];
        self.push_bits(&fill);
        let more = n.saturating_sub(1);
        self.repeats += more as u64;
        self.len += more;
    }

    /// Appends one sample given as bits.
    fn push_bits(&mut self, bits: &[u64]) {
        self.push_with(|i| bits[i]);
    }

    /// Appends one sample whose field `i` has the bits `bit(i)`, for `i` below `fields`.
    fn push_with(&mut self, bit: impl Fn(usize) -> u64) {
        self.len += 1;
        if self.last.iter().enumerate().all(|(i, &old)| bit(i) == old) {
            self.repeats += 1;
            return;
        }
        let most = self.reserve_sample();
        // Written into a zeroed stretch as long as the largest sample, with whole 8-byte stores
        // for the middle bytes, then cut to what was written.
        let start = self.bytes.len();
        self.bytes.resize(start + most, 0);
        let out = &mut self.bytes[start..];
        let mut at = write_varint_at(out, self.repeats);
        self.repeats = 0;
        let mask_at = at;
        at += self.fields.div_ceil(8);
        for (i, old) in self.last.iter_mut().enumerate() {
            let new = bit(i);
            let xor = new ^ *old;
            if xor == 0 {
                continue;
            }
            out[mask_at + i / 8] |= 1 << (i % 8);
            let lead = xor.leading_zeros() / 8;
            let trail = xor.trailing_zeros() / 8;
            out[at] = ((lead as u8) << 4) | trail as u8;
            // The middle bytes first, big-endian; the zero bytes after them are overwritten by
            // the next field or cut.
            out[at + 1..at + 9].copy_from_slice(&(xor << (8 * lead)).to_be_bytes());
            at += 9 - (lead + trail) as usize;
            *old = new;
        }
        self.bytes.truncate(start + at);
    }

    /// Makes room for one more encoded sample, growing by an eighth rather than doubling: the
    /// traces of a large run are most of its memory, and doubling leaves up to half of each
    /// unused (a third on average). But by at least [`MIN_GROWTH`] bytes: a small trace that
    /// grew by an eighth was moved every few samples, and at 2048 flows those copies were a
    /// tenth of the loop's cache misses. Returns the largest size of one sample.
    fn reserve_sample(&mut self) -> usize {
        // A count (at most 10 bytes), the mask, and at most 9 bytes per field.
        let most = 10 + self.fields.div_ceil(8) + 9 * self.fields;
        if self.bytes.capacity() - self.bytes.len() < most {
            self.bytes
                .reserve_exact(most.max(self.bytes.len() / 8).max(MIN_GROWTH));
        }
        most
    }

    /// The trace as `fields` columns of exactly `n` bins: padded with NaN or truncated.
    pub fn decode(&self, n: usize) -> Vec<Vec<f64>> {
        let mut columns = vec![Vec::with_capacity(n); self.fields];
        // Bins come in order, so pushing fills each column in bin order.
        self.decode_into(n, |field, _bin, value| columns[field].push(value));
        columns
    }

    /// Writes the trace, exactly `n` bins of each field (NaN past the recorded bins), into
    /// `out` laid out field-major (`out[field * n + bin]`), as a (fields x bins) array.
    ///
    /// # Panics
    /// If `out` is not `fields * n` long.
    pub fn decode_field_major(&self, n: usize, out: &mut [f64]) {
        assert_eq!(out.len(), self.fields * n, "output of the wrong size");
        self.decode_into(n, |field, bin, value| out[field * n + bin] = value);
    }

    /// Calls `put(field, bin, value)` for every field of bins `0..n`, in bin order.
    fn decode_into(&self, n: usize, mut put: impl FnMut(usize, usize, f64)) {
        let mut last = vec![FILL; self.fields];
        let mut bin = 0usize;
        let mut emit = |last: &[u64], count: u64, bin: &mut usize| {
            for _ in 0..count {
                if *bin >= n {
                    return;
                }
                for (field, &bits) in last.iter().enumerate() {
                    put(field, *bin, f64::from_bits(bits));
                }
                *bin += 1;
            }
        };
        let mut at = 0usize;
        let bytes = &self.bytes;
        while at < bytes.len() {
            let repeats = read_varint(bytes, &mut at);
            emit(&last, repeats, &mut bin);
            let mask_at = at;
            at += self.fields.div_ceil(8);
            for (i, old) in last.iter_mut().enumerate() {
                if bytes[mask_at + i / 8] & (1 << (i % 8)) == 0 {
                    continue;
                }
                let header = bytes[at];
                at += 1;
                let lead = usize::from(header >> 4);
                let trail = usize::from(header & 0x0f);
                let mut xor = [0u8; 8];
                let width = 8 - lead - trail;
                xor[lead..8 - trail].copy_from_slice(&bytes[at..at + width]);
                at += width;
                *old ^= u64::from_be_bytes(xor);
            }
            emit(&last, 1, &mut bin);
        }
        emit(&last, self.repeats, &mut bin);
        let fill = vec![FILL; self.fields];
        emit(&fill, (n - bin.min(n)) as u64, &mut bin);
    }

    /// Encodes `n` bins of dense columns (the slow path of re-recording a bin).
    fn encode(fields: usize, columns: &[Vec<f64>], n: usize) -> StateSamples {
        let mut out = StateSamples::new(fields);
        let mut bits = vec![0u64; fields];
        for bin in 0..n {
            for (field, column) in columns.iter().enumerate() {
                bits[field] = column[bin].to_bits();
            }
            out.push_bits(&bits);
        }
        out
    }

    /// The trace resized to exactly `n` bins (padded with NaN, or truncated), as one byte
    /// string: the count of trailing repeats (a varint), then the encoded samples. This is the
    /// form results carry to Python; [`decode_blob`] reads it back.
    pub fn into_blob(self, n: usize) -> Vec<u8> {
        let fields = self.fields;
        let mut trace = if n >= self.len {
            let mut padded = self;
            if n > padded.len {
                padded.push_fill(n - padded.len);
            }
            padded
        } else {
            StateSamples::encode(fields, &self.decode(n), n)
        };
        let mut blob = Vec::with_capacity(trace.bytes.len() + 10);
        write_varint(&mut blob, trace.repeats);
        blob.append(&mut trace.bytes);
        blob
    }
}

/// Decodes a byte string of [`StateSamples::into_blob`] with `fields` fields into `out`, laid
/// out field-major (`out[field * n + bin]`), `n` being `out.len() / fields`. Bins the blob does
/// not cover read NaN.
///
/// # Errors
/// A message when the blob is not a trace of `fields` fields (truncated or corrupt).
pub fn decode_blob(blob: &[u8], fields: usize, out: &mut [f64]) -> Result<(), String> {
    let n = out.len().checked_div(fields).unwrap_or(0);
    if n * fields != out.len() {
        return Err(format!(
            "{} values are not whole bins of {fields} fields",
            out.len()
        ));
    }
    let mut at = 0;
    let repeats = try_varint(blob, &mut at).ok_or("truncated state trace")?;
    let bytes = blob[at..].to_vec();
    check_stream(&bytes, fields)?;
    let trace = StateSamples {
        fields,
        bytes,
        last: vec![FILL; fields],
        repeats,
        len: 0,
    };
    trace.decode_field_major(n, out);
    Ok(())
}

/// Walks an encoded stream of `fields` fields without decoding it, so a corrupt one is an
/// error rather than an out-of-bounds read.
fn check_stream(bytes: &[u8], fields: usize) -> Result<(), String> {
    let corrupt = || "corrupt state trace".to_string();
    let mask_len = fields.div_ceil(8);
    let mut at = 0;
    while at < bytes.len() {
        try_varint(bytes, &mut at).ok_or_else(corrupt)?;
        let mask = bytes.get(at..at + mask_len).ok_or_else(corrupt)?;
        at += mask_len;
        for i in 0..fields {
            if mask[i / 8] & (1 << (i % 8)) != 0 {
                let header = *bytes.get(at).ok_or_else(corrupt)?;
                let (lead, trail) = (usize::from(header >> 4), usize::from(header & 0x0f));
                if lead + trail > 7 {
                    return Err(corrupt());
                }
                at += 1 + 8 - lead - trail;
            }
        }
        if at > bytes.len() {
            return Err(corrupt());
        }
    }
    Ok(())
}

/// Reads a LEB128 varint at `*at` like [`read_varint`], or `None` past the end or when it
/// overflows 64 bits.
fn try_varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut value = 0u64;
    let mut shift = 0;
    loop {
        let byte = *bytes.get(*at)?;
        *at += 1;
        if shift > 63 {
            return None;
        }
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(value);
        }
        shift += 7;
    }
}

/// Appends `value` as a LEB128 varint.
fn write_varint(out: &mut Vec<u8>, value: u64) {
    let mut bytes = [0u8; 10];
    let len = write_varint_at(&mut bytes, value);
    out.extend_from_slice(&bytes[..len]);
}

/// Writes `value` as a LEB128 varint at the start of `out` (at least 10 bytes long); returns
/// its length.
fn write_varint_at(out: &mut [u8], mut value: u64) -> usize {
    let mut at = 0;
    while value >= 0x80 {
        out[at] = (value as u8) | 0x80;
        value >>= 7;
        at += 1;
    }
    out[at] = value as u8;
    at + 1
}

/// Reads a LEB128 varint at `*at`, advancing it.
fn read_varint(bytes: &[u8], at: &mut usize) -> u64 {
    let mut value = 0u64;
    let mut shift = 0;
    loop {
        let byte = bytes[*at];
        *at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return value;
        }
        shift += 7;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::any;

    fn same_bits(a: &[f64], b: &[f64]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
    }

    #[test]
    fn round_trips_bit_for_bit_with_gaps_repeats_and_odd_values() {
        let odd = [
            0.0,
            -0.0,
            f64::INFINITY,
            f64::from_bits(0x7ff8_0000_dead_beef),
            1e-310,
            f64::MAX,
        ];
        let mut s = StateSamples::new(10);
        let mut expect = vec![vec![f64::NAN; 40]; 10];
        for bin in 0..40 {
            if bin % 7 == 3 {
                continue; // never sampled: NaN
            }
            let values: Vec<f64> = (0..10)
                .map(|f| match (bin / 4, f) {
                    (_, 9) => odd[bin % odd.len()],
                    (k, f) => (k * f) as f64 + 0.1 * f as f64,
                })
                .collect();
            if bin % 5 == 1 && bin > 0 && bin % 7 != 4 {
                s.repeat_through(bin);
                for column in expect.iter_mut() {
                    column[bin] = column[bin - 1];
                }
            } else {
                s.record(bin, &values);
                for (column, &value) in expect.iter_mut().zip(&values) {
                    column[bin] = value;
                }
            }
        }
        assert_eq!(s.len(), 40);
        let got = s.decode(40);
        for f in 0..10 {
            assert!(same_bits(&got[f], &expect[f]), "field {f}");
        }
        let mut flat = vec![0.0; 10 * 45];
        s.decode_field_major(45, &mut flat);
        for f in 0..10 {
            assert!(same_bits(&flat[f * 45..f * 45 + 40], &expect[f]));
            assert!(flat[f * 45 + 40..f * 45 + 45].iter().all(|v| v.is_nan()));
        }
        assert!(same_bits(&s.decode(3)[2], &expect[2][..3]));
    }

    proptest::proptest! {
        /// Any bits in any field, changed in any bytes (runs of equal samples included), read
        /// back exactly, through the trace and through its blob.
        #[test]
        fn any_samples_round_trip(
            fields in 1usize..20,
            steps in proptest::collection::vec(
                (proptest::collection::vec(any::<u64>(), 20), any::<u64>(), 0u8..3),
                1..60,
            ),
        ) {
            let mut s = StateSamples::new(fields);
            let mut bits = vec![0u64; fields];
            let mut expect: Vec<Vec<u64>> = Vec::new();
            for (bin, (values, masks, kind)) in steps.iter().enumerate() {
                for (f, b) in bits.iter_mut().enumerate() {
                    // Keep, flip a few bytes, or replace, field by field.
                    let mask = masks.rotate_left(8 * f as u32);
                    *b = match kind {
                        0 => *b,
                        1 => *b ^ (values[f] & mask),
                        _ => values[f],
                    };
                }
                let row: Vec<f64> = bits.iter().map(|&b| f64::from_bits(b)).collect();
                s.record(bin, &row);
                expect.push(bits.clone());
            }
            let n = expect.len();
            let got = s.decode(n);
            for (f, column) in got.iter().enumerate() {
                let want: Vec<u64> = expect.iter().map(|row| row[f]).collect();
                let have: Vec<u64> = column.iter().map(|v| v.to_bits()).collect();
                proptest::prop_assert_eq!(have, want, "field {}", f);
            }
            let mut flat = vec![0.0; fields * n];
            decode_blob(&s.clone().into_blob(n), fields, &mut flat).unwrap();
            for (f, column) in got.iter().enumerate() {
                proptest::prop_assert!(same_bits(&flat[f * n..(f + 1) * n], column));
            }
        }
    }

    #[test]
    fn repeated_state_costs_nothing_per_bin() {
        let mut s = StateSamples::new(16);
        s.record(0, &[1.0; 16]);
        let after_first = s.encoded_bytes();
        for bin in 1..100_000 {
            s.repeat_through(bin);
        }
        assert_eq!(s.encoded_bytes(), after_first);
        // A counter growing by one changes few bytes of one field.
        let mut values = [1.0; 16];
        values[3] = 2.0;
        s.record(100_000, &values);
        assert!(s.encoded_bytes() - after_first <= 3 + 2 + 1 + 8);
        let got = s.decode(100_001);
        assert_eq!(got[3][99_999], 1.0);
        assert_eq!(got[3][100_000], 2.0);
    }

    #[test]
    fn rerecording_a_bin_replaces_it_and_missing_fields_are_nan() {
        let mut s = StateSamples::new(2);
        s.record(0, &[1.0, 0.1]);
        s.record(2, &[3.0, 0.3, 99.0]);
        s.record(3, &[4.0]);
        s.record(0, &[1.5, 0.15]);
        let got = s.decode(5);
        assert_eq!((got[0][0], got[0][2], got[0][3]), (1.5, 3.0, 4.0));
        assert!(got[0][1].is_nan() && got[0][4].is_nan());
        assert_eq!((got[1][0], got[1][2]), (0.15, 0.3));
        assert!(got[1][1].is_nan() && got[1][3].is_nan() && got[1][4].is_nan());
        // Repeats through a later bin fill every bin up to it with the last state, in the
        // same encoding as repeating bin by bin; bins already covered are left alone.
        let mut r = StateSamples::new(1);
        r.record(0, &[7.0]);
        r.repeat_through(3);
        r.repeat_through(2);
        let mut one_by_one = StateSamples::new(1);
        one_by_one.record(0, &[7.0]);
        for bin in 1..=3 {
            one_by_one.repeat_through(bin);
        }
        assert_eq!(r, one_by_one);
        assert_eq!(r.len(), 4);
        assert_eq!(r.decode(5)[0][..4], [7.0; 4]);
        assert!(r.decode(5)[0][4].is_nan());
        let empty = StateSamples::new(0);
        assert_eq!(empty.decode(3), Vec::<Vec<f64>>::new());
    }

    #[test]
    fn blobs_round_trip_pad_truncate_and_refuse_corruption() {
        let mut s = StateSamples::new(3);
        for bin in 0..20 {
            if bin % 3 == 0 {
                s.record(bin, &[bin as f64, 0.5, -(bin as f64) / 7.0]);
            } else {
                s.repeat_through(bin);
            }
        }
        let dense = s.decode(25);
        for n in [25, 20, 7, 0] {
            let blob = s.clone().into_blob(n);
            let mut out = vec![0.0; 3 * n];
            decode_blob(&blob, 3, &mut out).unwrap();
            for f in 0..3 {
                assert!(same_bits(&out[f * n..(f + 1) * n], &dense[f][..n]));
            }
        }
        let blob = s.into_blob(20);
        let mut out = vec![0.0; 60];
        assert!(decode_blob(&blob[..blob.len() - 1], 3, &mut out).is_err());
        assert!(decode_blob(&[], 3, &mut out).is_err());
        assert!(decode_blob(&blob, 3, &mut [0.0; 5]).is_err());
    }

    #[test]
    fn a_long_trace_reads_back_whole() {
        let fields = 3;
        let mut trace = StateSamples::new(fields);
        let mut rng = crate::rng::stream(7, "long");
        let samples: Vec<Vec<f64>> = (0..20_000)
            .map(|bin| {
                let noise = (rand_core::RngCore::next_u32(&mut rng) % 1000) as f64;
                vec![
                    bin as f64,
                    noise / 7.0,
                    if bin % 3 == 0 { 1.0 } else { 2.0 },
                ]
            })
            .collect();
        for (bin, values) in samples.iter().enumerate() {
            trace.record(bin, values);
        }
        let columns = trace.decode(samples.len());
        for (bin, values) in samples.iter().enumerate() {
            for field in 0..fields {
                assert_eq!(columns[field][bin].to_bits(), values[field].to_bits());
            }
        }
        let n = samples.len();
        let blob = trace.into_blob(n);
        let mut out = vec![0.0; fields * n];
        decode_blob(&blob, fields, &mut out).unwrap();
        assert!((0..n).all(|bin| out[n + bin].to_bits() == samples[bin][1].to_bits()));
    }

    #[test]
    fn varints_round_trip() {
        for value in [0, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX] {
            let mut out = Vec::new();
            write_varint(&mut out, value);
            let mut at = 0;
            assert_eq!(read_varint(&out, &mut at), value);
            assert_eq!(at, out.len());
        }
    }
}
