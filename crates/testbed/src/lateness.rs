//! How late the relay delivers packets: actual write time minus the intended delivery time
//! (arrival + queueing + transmission + delay). A user-space emulator on a shared machine is late
//! whenever it is not scheduled in time (timer slack, other processes, a VM stall); keeping the
//! distribution makes such stalls visible instead of silently stretching the delay.

/// Lateness in whole microseconds, exact up to [`Lateness::RANGE_US`], counted above it.
#[derive(Clone, Debug)]
pub struct Lateness {
    counts: Vec<u64>,
    above: u64,
    total: u64,
    max_ns: u64,
}

impl Default for Lateness {
    fn default() -> Lateness {
        Lateness::new()
    }
}

impl Lateness {
    /// The histogram's range in µs (100 ms; 800 kB of counters).
    pub const RANGE_US: usize = 100_000;

    /// An empty histogram.
    pub fn new() -> Lateness {
        Lateness {
            counts: vec![0; Lateness::RANGE_US],
            above: 0,
            total: 0,
            max_ns: 0,
        }
    }

    /// Adds one delivery that was `late_ns` late (0 when on time).
    pub fn add(&mut self, late_ns: u64) {
        let us = (late_ns / 1000) as usize;
        match self.counts.get_mut(us) {
            Some(count) => *count += 1,
            None => self.above += 1,
        }
        self.total += 1;
        self.max_ns = self.max_ns.max(late_ns);
    }

    /// Deliveries counted.
    pub fn count(&self) -> u64 {
        self.total
    }

    /// The largest lateness seen, in ns.
    pub fn max_ns(&self) -> u64 {
        self.max_ns
    }

    /// The `q`-quantile (0..=1) in µs: the upper edge of the bucket holding it, so a result is
    /// never below the true quantile; `None` with no deliveries; the maximum when the quantile
    /// lies above the histogram's range.
    pub fn quantile_us(&self, q: f64) -> Option<f64> {
        if self.total == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (us, &count) in self.counts.iter().enumerate() {
            seen += count;
            if seen >= rank {
                return Some((us + 1) as f64);
            }
        }
        Some(self.max_ns as f64 / 1000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_bucket_upper_edges() {
        let mut l = Lateness::new();
        assert_eq!(l.quantile_us(0.5), None);
        for ns in [100, 1_500, 2_500, 3_500] {
            l.add(ns);
        }
        assert_eq!(l.quantile_us(0.5), Some(2.0));
        assert_eq!(l.quantile_us(1.0), Some(4.0));
        l.add(5_000_000_000);
        assert_eq!(l.quantile_us(1.0), Some(5_000_000.0));
        assert_eq!(l.max_ns(), 5_000_000_000);
        assert_eq!(l.count(), 5);
    }
}
