//! Exact transmission times on a link of a given rate.

use std::time::Duration;

/// The time to clock `size_bytes` onto a link of `rate_bps` bits per second, rounded up to the
/// next nanosecond (exact whenever it is a whole number of nanoseconds: 1000 bytes at 8 Mb/s is
/// exactly 1 ms). Computed in 128-bit integers, so it never loses precision. A rate of zero
/// gives `Duration::MAX` (the packet never finishes).
pub fn transmission_time(size_bytes: u32, rate_bps: u64) -> Duration {
    if rate_bps == 0 {
        return Duration::MAX;
    }
    let bit_nanos = u128::from(size_bytes) * 8 * 1_000_000_000;
    let nanos = bit_nanos.div_ceil(u128::from(rate_bps));
    Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousand_bytes_at_eight_megabits_is_one_millisecond() {
        assert_eq!(transmission_time(1000, 8_000_000), Duration::from_millis(1));
    }

    #[test]
    fn rounds_up_and_never_overflows() {
        // 40 bytes at 15 Mb/s = 21333.33... ns.
        assert_eq!(
            transmission_time(40, 15_000_000),
            Duration::from_nanos(21_334)
        );
        assert_eq!(
            transmission_time(1500, 10_000_000_000),
            Duration::from_nanos(1_200)
        );
        assert_eq!(
            transmission_time(u32::MAX, 1),
            Duration::from_nanos(u64::MAX)
        );
        assert_eq!(transmission_time(1, 0), Duration::MAX);
    }
}
