//! Human units in scenario files: durations (`"10s"`, `"1.5ms"`), bit rates (`"15Mbps"`,
//! `"2MBps"`) and sizes (`"1500B"`, `"64KiB"`).
//!
//! A value is a decimal number (optionally with a fraction and an exponent: `2e-3s`), optional
//! whitespace, then a unit. The number is converted exactly, in decimal, never through a float:
//! `"0.1s"` is exactly 100 000 000 ns and every integer count of the base unit is read back
//! unchanged. Durations and rates round to the nearest base unit (nanosecond, bit/s; halves
//! round up); sizes must come to a whole number of bytes. Negative, NaN and infinite values,
//! a missing or unknown unit and values over `u64::MAX` base units are refused with a
//! [`UnitError`].

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// Exponents beyond this are clamped: any non-zero value with such an exponent is out of range
/// or rounds to zero either way, and clamping keeps the arithmetic from overflowing.
const MAX_EXPONENT: i64 = 1_000_000_000_000_000;

/// A bit rate in bits per second (SI prefixes: 1 kbps = 1000 bps, as in ns-2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct BitRate {
    /// Bits per second.
    pub bps: u64,
}

/// A size in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ByteSize {
    /// Bytes.
    pub bytes: u64,
}

/// Which kind of value a [`UnitError`] is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Quantity {
    /// A duration ([`parse_duration`]).
    Duration,
    /// A bit rate ([`parse_rate`]).
    Rate,
    /// A size in bytes ([`parse_size`]).
    Size,
}

/// What was wrong with a unit value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum UnitProblem {
    /// The text does not start with a number (or is empty).
    NoNumber,
    /// The number is NaN or infinite.
    NotFinite,
    /// A number without a unit.
    MissingUnit,
    /// A unit this quantity does not know.
    UnknownUnit,
    /// A negative, non-zero value.
    Negative,
    /// More than `u64::MAX` base units (nanoseconds, bits per second, bytes).
    TooLarge,
    /// A size that is not a whole number of bytes.
    NotWhole,
}

/// A duration, rate or size that could not be read. Its `Display` text says what was expected,
/// phrased to follow "expected" in a [`ScenarioError`](super::error::ScenarioError):
/// `a duration like "10s"`, `a non-negative rate`, `a whole number of bytes`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnitError {
    /// The kind of value being read.
    pub quantity: Quantity,
    /// What was wrong with it.
    pub problem: UnitProblem,
}

impl UnitError {
    fn new(quantity: Quantity, problem: UnitProblem) -> Self {
        UnitError { quantity, problem }
    }
}

impl fmt::Display for UnitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (noun, example, units, max) = match self.quantity {
            Quantity::Duration => (
                "duration",
                "\"10s\"",
                "ns, us (or µs), ms, s, min or h",
                "18446744073.709551615s",
            ),
            Quantity::Rate => (
                "rate",
                "\"15Mbps\"",
                "bits per second (bps, kbps, Mbps, Gbps, Tbps; or b/s, kb/s, ...) \
                 or bytes per second (Bps, kBps, MBps, GBps, TBps; or B/s, kB/s, ...)",
                "18446744073709551615bps",
            ),
            Quantity::Size => (
                "size",
                "\"1500B\"",
                "B, kB, MB, GB, TB, KiB, MiB, GiB or TiB",
                "18446744073709551615B",
            ),
        };
        match self.problem {
            UnitProblem::NoNumber => write!(f, "a {noun} like {example}"),
            UnitProblem::NotFinite => write!(f, "a finite {noun} like {example}"),
            UnitProblem::MissingUnit => write!(f, "a {noun} with a unit, like {example}"),
            UnitProblem::UnknownUnit => write!(f, "a {noun} in {units}"),
            UnitProblem::Negative => write!(f, "a non-negative {noun}"),
            UnitProblem::TooLarge => write!(f, "a {noun} of at most {max}"),
            UnitProblem::NotWhole => write!(f, "a whole number of bytes"),
        }
    }
}

impl std::error::Error for UnitError {}

/// Reads a duration: a number, optional whitespace, then `ns`, `us` (or `µs`), `ms`, `s`,
/// `min` or `h`. Rounded to the nearest nanosecond; `"0s"` is allowed.
pub fn parse_duration(text: &str) -> Result<Duration, UnitError> {
    let nanos = parse_quantity(text, Quantity::Duration, duration_factor)?;
    Ok(Duration::from_nanos(nanos))
}

/// Reads a bit rate: a number, optional whitespace, then bits per second (`bps`, `kbps`,
/// `Mbps`, `Gbps`, `Tbps`, or `b/s`, `kb/s`, ..., or `bit/s`, `kbit/s`, ...; the prefix may also
/// be lower case, since milli-bits make no sense: `15mbps` is 15 Mbps) or bytes per second with
/// a capital `B` (`Bps`, `kBps` or `KBps`, `MBps`, `GBps`, `TBps`, or `B/s`, `kB/s`, ...; eight
/// bits each). Prefixes are SI (k = 1000). Rounded to the nearest bit per second.
pub fn parse_rate(text: &str) -> Result<BitRate, UnitError> {
    let bps = parse_quantity(text, Quantity::Rate, rate_factor)?;
    Ok(BitRate { bps })
}

/// Reads a size: a number, optional whitespace, then `B` (or `byte`, `bytes`), `kB` or `KB`,
/// `MB`, `GB`, `TB` (powers of 1000), or `KiB`, `MiB`, `GiB`, `TiB` (powers of 1024). The result
/// must be a whole number of bytes: `"1.5KB"` is 1500 bytes, `"0.5B"` is refused.
pub fn parse_size(text: &str) -> Result<ByteSize, UnitError> {
    let bytes = parse_quantity(text, Quantity::Size, size_factor)?;
    Ok(ByteSize { bytes })
}

/// Writes a duration in the largest unit that holds it exactly (`"10s"`, `"1500ms"`, `"2min"`,
/// `"0s"`), so that [`parse_duration`] reads it back unchanged (for durations up to `u64::MAX`
/// nanoseconds, the most `parse_duration` accepts).
pub fn format_duration(duration: Duration) -> String {
    let nanos = duration.as_nanos();
    if nanos == 0 {
        return "0s".to_owned();
    }
    const UNITS: [(u128, &str); 6] = [
        (3_600_000_000_000, "h"),
        (60_000_000_000, "min"),
        (1_000_000_000, "s"),
        (1_000_000, "ms"),
        (1_000, "us"),
        (1, "ns"),
    ];
    for (size, name) in UNITS {
        if nanos % size == 0 {
            return format!("{}{name}", nanos / size);
        }
    }
    // Unreachable: every count of nanoseconds is a whole number of nanoseconds.
    format!("{nanos}ns")
}

impl fmt::Display for BitRate {
    /// The largest SI prefix that holds the rate exactly: `15Mbps`, `1500kbps`, `7bps`, `0bps`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const PREFIXES: [(u64, &str); 4] = [
            (1_000_000_000_000, "T"),
            (1_000_000_000, "G"),
            (1_000_000, "M"),
            (1_000, "k"),
        ];
        if self.bps != 0 {
            for (size, prefix) in PREFIXES {
                if self.bps % size == 0 {
                    return write!(f, "{}{prefix}bps", self.bps / size);
                }
            }
        }
        write!(f, "{}bps", self.bps)
    }
}

impl fmt::Display for ByteSize {
    /// The count of bytes: `1000B`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}B", self.bytes)
    }
}

impl FromStr for BitRate {
    type Err = UnitError;

    /// The same as [`parse_rate`].
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        parse_rate(text)
    }
}

impl FromStr for ByteSize {
    type Err = UnitError;

    /// The same as [`parse_size`].
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        parse_size(text)
    }
}

/// Nanoseconds per duration unit.
fn duration_factor(unit: &str) -> Option<u64> {
    Some(match unit {
        "ns" => 1,
        // The micro sign (U+00B5) and the Greek small mu (U+03BC) look alike; accept both.
        "us" | "µs" | "μs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "min" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        _ => return None,
    })
}

/// Bits per second per rate unit.
fn rate_factor(unit: &str) -> Option<u64> {
    let bit_prefix = |prefix: &str| {
        Some(match prefix {
            "" => 1,
            "k" | "K" => 1_000,
            "M" | "m" => 1_000_000,
            "G" | "g" => 1_000_000_000,
            "T" | "t" => 1_000_000_000_000,
            _ => return None,
        })
    };
    let byte_prefix = |prefix: &str| {
        Some(match prefix {
            "" => 1,
            "k" | "K" => 1_000,
            "M" => 1_000_000,
            "G" => 1_000_000_000,
            "T" => 1_000_000_000_000,
            _ => return None,
        })
    };
    if let Some(prefix) = unit
        .strip_suffix("bit/s")
        .or_else(|| unit.strip_suffix("bps"))
        .or_else(|| unit.strip_suffix("b/s"))
    {
        bit_prefix(prefix)
    } else if let Some(prefix) = unit
        .strip_suffix("Bps")
        .or_else(|| unit.strip_suffix("B/s"))
    {
        byte_prefix(prefix).map(|f| 8 * f)
    } else {
        None
    }
}

/// Bytes per size unit.
fn size_factor(unit: &str) -> Option<u64> {
    Some(match unit {
        "B" | "byte" | "bytes" => 1,
        "kB" | "KB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "TB" => 1_000_000_000_000,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        "TiB" => 1 << 40,
        _ => return None,
    })
}

/// A non-negative decimal number: `digits` (most significant first, no leading zero; empty for
/// zero) times ten to the power `exponent`.
struct Decimal {
    digits: Vec<u8>,
    exponent: i64,
}

/// Reads `text` as a number and a unit of `quantity`, and returns it in base units, rounded to
/// the nearest (durations, rates) or required to be whole (sizes).
fn parse_quantity(
    text: &str,
    quantity: Quantity,
    factor_of: fn(&str) -> Option<u64>,
) -> Result<u64, UnitError> {
    let error = |problem| UnitError::new(quantity, problem);
    let text = text.trim();
    let (negative, unsigned) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let lower = unsigned.get(..3).map(str::to_ascii_lowercase);
    if matches!(lower.as_deref(), Some("nan" | "inf")) {
        return Err(error(UnitProblem::NotFinite));
    }
    let (number, unit) = split_number(unsigned).ok_or(error(UnitProblem::NoNumber))?;
    let unit = unit.trim_start();
    if unit.is_empty() {
        return Err(error(UnitProblem::MissingUnit));
    }
    let factor = factor_of(unit).ok_or(error(UnitProblem::UnknownUnit))?;
    if negative && !number.digits.is_empty() {
        return Err(error(UnitProblem::Negative));
    }
    let scaled = Decimal {
        digits: multiply(&number.digits, factor),
        exponent: number.exponent,
    };
    let exact = quantity == Quantity::Size;
    to_u64(&scaled, exact).map_err(error)
}

/// Splits `text` into a leading decimal number (`12`, `1.5`, `.5`, `3.`, `2e-3`, `1.5E+2`) and
/// the rest. `None` if it does not start with one.
fn split_number(text: &str) -> Option<(Decimal, &str)> {
    let bytes = text.as_bytes();
    let mut i = 0;
    let mut mantissa = Vec::new();
    while i < bytes.len() && bytes[i].is_ascii_digit() {
        mantissa.push(bytes[i] - b'0');
        i += 1;
    }
    let mut fraction_digits: i64 = 0;
    if i < bytes.len() && bytes[i] == b'.' {
        i += 1;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            mantissa.push(bytes[i] - b'0');
            fraction_digits = fraction_digits.saturating_add(1);
            i += 1;
        }
    }
    if mantissa.is_empty() {
        return None;
    }
    let mut exponent: i64 = 0;
    if i < bytes.len() && (bytes[i] == b'e' || bytes[i] == b'E') {
        let mut j = i + 1;
        let negative_exponent = match bytes.get(j) {
            Some(b'-') => {
                j += 1;
                true
            }
            Some(b'+') => {
                j += 1;
                false
            }
            _ => false,
        };
        let start = j;
        let mut magnitude: i64 = 0;
        while j < bytes.len() && bytes[j].is_ascii_digit() {
            magnitude = (magnitude * 10 + i64::from(bytes[j] - b'0')).min(MAX_EXPONENT);
            j += 1;
        }
        // An `e` not followed by digits is not an exponent; it is left to the unit (and refused
        // there, as no unit starts with `e`).
        if j > start {
            exponent = if negative_exponent {
                -magnitude
            } else {
                magnitude
            };
            i = j;
        }
    }
    let first_nonzero = mantissa
        .iter()
        .position(|&d| d != 0)
        .unwrap_or(mantissa.len());
    mantissa.drain(..first_nonzero);
    let number = Decimal {
        digits: mantissa,
        exponent: exponent.saturating_sub(fraction_digits),
    };
    // `i` only ever stops on an ASCII byte or the end, so it is a char boundary.
    Some((number, &text[i..]))
}

/// `digits` (most significant first) times `factor`, exactly, with no leading zero.
fn multiply(digits: &[u8], factor: u64) -> Vec<u8> {
    let mut product = Vec::with_capacity(digits.len() + 20);
    let mut carry: u128 = 0;
    for &d in digits.iter().rev() {
        let v = u128::from(d) * u128::from(factor) + carry;
        product.push((v % 10) as u8);
        carry = v / 10;
    }
    while carry > 0 {
        product.push((carry % 10) as u8);
        carry /= 10;
    }
    while product.last() == Some(&0) {
        product.pop();
    }
    product.reverse();
    product
}

/// The value of `number` as a `u64`: rounded to the nearest integer (halves up), or, if
/// `exact`, refused unless it is whole.
fn to_u64(number: &Decimal, exact: bool) -> Result<u64, UnitProblem> {
    let digits = &number.digits;
    if digits.is_empty() {
        return Ok(0);
    }
    let len = i64::try_from(digits.len()).unwrap_or(i64::MAX);
    // How many digits are left of the decimal point; the first is non-zero, so the value is at
    // least 10^(integer_digits - 1).
    let integer_digits = len.saturating_add(number.exponent);
    if integer_digits > 20 {
        return Err(UnitProblem::TooLarge);
    }
    let mut integer: u128 = 0;
    let mut round_up = false;
    let mut whole = true;
    if integer_digits > 0 {
        // At most 20 digits, so the u128 cannot overflow.
        let whole_digits = integer_digits as usize;
        for k in 0..whole_digits {
            integer = integer * 10 + u128::from(digits.get(k).copied().unwrap_or(0));
        }
        if whole_digits < digits.len() {
            round_up = digits[whole_digits] >= 5;
            whole = digits[whole_digits..].iter().all(|&d| d == 0);
        }
    } else {
        // 0.000ddd: the first fraction digit is the first of `digits` only if no zeros precede.
        round_up = integer_digits == 0 && digits[0] >= 5;
        whole = false;
    }
    if exact && !whole {
        return Err(UnitProblem::NotWhole);
    }
    if round_up && !exact {
        integer += 1;
    }
    u64::try_from(integer).map_err(|_| UnitProblem::TooLarge)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nanos(text: &str) -> u64 {
        parse_duration(text).unwrap().as_nanos() as u64
    }

    fn bps(text: &str) -> u64 {
        parse_rate(text).unwrap().bps
    }

    fn bytes(text: &str) -> u64 {
        parse_size(text).unwrap().bytes
    }

    fn duration_problem(text: &str) -> UnitProblem {
        parse_duration(text).unwrap_err().problem
    }

    fn rate_problem(text: &str) -> UnitProblem {
        parse_rate(text).unwrap_err().problem
    }

    fn size_problem(text: &str) -> UnitProblem {
        parse_size(text).unwrap_err().problem
    }

    #[test]
    fn every_duration_unit() {
        assert_eq!(nanos("7ns"), 7);
        assert_eq!(nanos("7us"), 7_000);
        assert_eq!(nanos("7µs"), 7_000);
        assert_eq!(nanos("7μs"), 7_000);
        assert_eq!(nanos("7ms"), 7_000_000);
        assert_eq!(nanos("7s"), 7_000_000_000);
        assert_eq!(nanos("7min"), 420_000_000_000);
        assert_eq!(nanos("7h"), 25_200_000_000_000);
        assert_eq!(nanos("0s"), 0);
        assert_eq!(nanos("0h"), 0);
    }

    #[test]
    fn durations_take_spaces_decimals_and_exponents() {
        assert_eq!(nanos("10 s"), 10_000_000_000);
        assert_eq!(nanos("  10 \t ms  "), 10_000_000);
        assert_eq!(nanos("1.5s"), 1_500_000_000);
        assert_eq!(nanos(".5s"), 500_000_000);
        assert_eq!(nanos("3.s"), 3_000_000_000);
        assert_eq!(nanos("0.1s"), 100_000_000);
        assert_eq!(nanos("2e-3s"), 2_000_000);
        assert_eq!(nanos("2E-3s"), 2_000_000);
        assert_eq!(nanos("1.5e+2ms"), 150_000_000);
        assert_eq!(nanos("1e3 ns"), 1_000);
        assert_eq!(nanos("+4s"), 4_000_000_000);
        assert_eq!(nanos("-0s"), 0);
        assert_eq!(nanos("000012.5000ms"), 12_500_000);
        assert_eq!(nanos("0e999999999999999999999s"), 0);
    }

    #[test]
    fn durations_round_to_the_nearest_nanosecond() {
        assert_eq!(nanos("1.4ns"), 1);
        assert_eq!(nanos("1.5ns"), 2);
        assert_eq!(nanos("1.49999999999999999999999ns"), 1);
        assert_eq!(nanos("0.5ns"), 1);
        assert_eq!(nanos("0.4999ns"), 0);
        assert_eq!(nanos("0.05ns"), 0);
        assert_eq!(nanos("1e-300s"), 0);
        assert_eq!(nanos("0.0000000015s"), 2);
        assert_eq!(nanos("1.0000000004s"), 1_000_000_000);
        assert_eq!(nanos("0.333333333333333h"), 1_200_000_000_000);
        assert_eq!(nanos("0.33333333333h"), 1_199_999_999_988);
    }

    #[test]
    fn the_largest_duration_is_u64_max_nanoseconds() {
        assert_eq!(nanos("18446744073709551615ns"), u64::MAX);
        assert_eq!(nanos("18446744073.709551615s"), u64::MAX);
        assert_eq!(nanos("18446744073.7095516154s"), u64::MAX);
        for too_large in [
            "18446744073709551616ns",
            "18446744073.7095516155s",
            "1e30s",
            "1e20ns",
            "100000000000000000000000000000000000ns",
            "1e999999999999999999999999s",
            "5124096h",
        ] {
            assert_eq!(
                duration_problem(too_large),
                UnitProblem::TooLarge,
                "{too_large}"
            );
        }
    }

    #[test]
    fn every_duration_error_class() {
        for (text, problem) in [
            ("", UnitProblem::NoNumber),
            ("   ", UnitProblem::NoNumber),
            ("ten", UnitProblem::NoNumber),
            ("s", UnitProblem::NoNumber),
            (".s", UnitProblem::NoNumber),
            ("-", UnitProblem::NoNumber),
            ("e3s", UnitProblem::NoNumber),
            ("NaN s", UnitProblem::NotFinite),
            ("nan", UnitProblem::NotFinite),
            ("inf s", UnitProblem::NotFinite),
            ("-Infinity s", UnitProblem::NotFinite),
            ("10", UnitProblem::MissingUnit),
            ("1.5e3  ", UnitProblem::MissingUnit),
            ("10 parsecs", UnitProblem::UnknownUnit),
            ("10 sec", UnitProblem::UnknownUnit),
            ("10m", UnitProblem::UnknownUnit),
            ("10S", UnitProblem::UnknownUnit),
            ("1e s", UnitProblem::UnknownUnit),
            ("1,5s", UnitProblem::UnknownUnit),
            ("1.2.3s", UnitProblem::UnknownUnit),
            ("-1s", UnitProblem::Negative),
            ("-0.0001ns", UnitProblem::Negative),
        ] {
            assert_eq!(duration_problem(text), problem, "{text:?}");
        }
    }

    #[test]
    fn every_rate_unit() {
        assert_eq!(bps("15bps"), 15);
        assert_eq!(bps("15kbps"), 15_000);
        assert_eq!(bps("15Kbps"), 15_000);
        assert_eq!(bps("15Mbps"), 15_000_000);
        assert_eq!(bps("15mbps"), 15_000_000);
        assert_eq!(bps("15Gbps"), 15_000_000_000);
        assert_eq!(bps("15gbps"), 15_000_000_000);
        assert_eq!(bps("15Tbps"), 15_000_000_000_000);
        assert_eq!(bps("15tbps"), 15_000_000_000_000);
        assert_eq!(bps("15b/s"), 15);
        assert_eq!(bps("15kb/s"), 15_000);
        assert_eq!(bps("15Mb/s"), 15_000_000);
        assert_eq!(bps("15Gb/s"), 15_000_000_000);
        assert_eq!(bps("15bit/s"), 15);
        assert_eq!(bps("15Mbit/s"), 15_000_000);
        assert_eq!(bps("15Bps"), 120);
        assert_eq!(bps("15kBps"), 120_000);
        assert_eq!(bps("15KBps"), 120_000);
        assert_eq!(bps("15MBps"), 120_000_000);
        assert_eq!(bps("15GBps"), 120_000_000_000);
        assert_eq!(bps("15TBps"), 120_000_000_000_000);
        assert_eq!(bps("15B/s"), 120);
        assert_eq!(bps("15kB/s"), 120_000);
        assert_eq!(bps("15MB/s"), 120_000_000);
        assert_eq!(bps("0bps"), 0);
    }

    #[test]
    fn rates_take_spaces_decimals_exponents_and_round() {
        assert_eq!(bps("1.5 Mbps"), 1_500_000);
        assert_eq!(bps("1e1Gbps"), 10_000_000_000);
        assert_eq!(bps("2.5e-3kbps"), 3);
        assert_eq!(bps("2.4e-3kbps"), 2);
        assert_eq!(bps("0.0625Bps"), 1);
        assert_eq!(bps("0.01Bps"), 0);
        assert_eq!(bps("18446744073709551615bps"), u64::MAX);
        assert_eq!(bps("18446744073709551615.4bps"), u64::MAX);
    }

    #[test]
    fn every_rate_error_class() {
        for (text, problem) in [
            ("fast", UnitProblem::NoNumber),
            ("inf Mbps", UnitProblem::NotFinite),
            ("15", UnitProblem::MissingUnit),
            ("15 Mbit", UnitProblem::UnknownUnit),
            ("15 mBps", UnitProblem::UnknownUnit),
            ("15 gBps", UnitProblem::UnknownUnit),
            ("15 Xbps", UnitProblem::UnknownUnit),
            ("15 MBPS", UnitProblem::UnknownUnit),
            ("15 Hz", UnitProblem::UnknownUnit),
            ("-15Mbps", UnitProblem::Negative),
            ("18446744073709551615.5bps", UnitProblem::TooLarge),
            ("3000000TBps", UnitProblem::TooLarge),
            ("1e30bps", UnitProblem::TooLarge),
        ] {
            assert_eq!(rate_problem(text), problem, "{text:?}");
        }
        assert_eq!(bps("2TBps"), 16_000_000_000_000);
    }

    #[test]
    fn every_size_unit() {
        assert_eq!(bytes("1500B"), 1500);
        assert_eq!(bytes("1500 bytes"), 1500);
        assert_eq!(bytes("1 byte"), 1);
        assert_eq!(bytes("2kB"), 2_000);
        assert_eq!(bytes("2KB"), 2_000);
        assert_eq!(bytes("2MB"), 2_000_000);
        assert_eq!(bytes("2GB"), 2_000_000_000);
        assert_eq!(bytes("2TB"), 2_000_000_000_000);
        assert_eq!(bytes("2KiB"), 2_048);
        assert_eq!(bytes("2MiB"), 2_097_152);
        assert_eq!(bytes("2GiB"), 2_147_483_648);
        assert_eq!(bytes("2TiB"), 2_199_023_255_552);
        assert_eq!(bytes("0B"), 0);
    }

    #[test]
    fn sizes_must_be_whole_bytes() {
        assert_eq!(bytes("1.5KB"), 1500);
        assert_eq!(bytes("1.5 KiB"), 1536);
        assert_eq!(bytes("1e3B"), 1000);
        assert_eq!(bytes("1.000B"), 1);
        assert_eq!(bytes("0.5KiB"), 512);
        assert_eq!(bytes("18446744073709551615B"), u64::MAX);
        for (text, problem) in [
            ("0.5B", UnitProblem::NotWhole),
            ("1.0001kB", UnitProblem::NotWhole),
            ("1e-30B", UnitProblem::NotWhole),
            ("0.0001B", UnitProblem::NotWhole),
            ("big", UnitProblem::NoNumber),
            ("nan B", UnitProblem::NotFinite),
            ("1500", UnitProblem::MissingUnit),
            ("1500 b", UnitProblem::UnknownUnit),
            ("1500 kiB", UnitProblem::UnknownUnit),
            ("1500 mB", UnitProblem::UnknownUnit),
            ("-1B", UnitProblem::Negative),
            ("18446744073709551616B", UnitProblem::TooLarge),
            ("17179869184GiB", UnitProblem::TooLarge),
        ] {
            assert_eq!(size_problem(text), problem, "{text:?}");
        }
    }

    #[test]
    fn errors_say_what_was_expected() {
        let text = |e: Result<Duration, UnitError>| e.unwrap_err().to_string();
        assert_eq!(text(parse_duration("ten")), "a duration like \"10s\"");
        assert_eq!(
            text(parse_duration("nan s")),
            "a finite duration like \"10s\""
        );
        assert_eq!(
            text(parse_duration("10")),
            "a duration with a unit, like \"10s\""
        );
        assert_eq!(
            text(parse_duration("10 parsecs")),
            "a duration in ns, us (or µs), ms, s, min or h"
        );
        assert_eq!(text(parse_duration("-1s")), "a non-negative duration");
        assert_eq!(
            text(parse_duration("1e30s")),
            "a duration of at most 18446744073.709551615s"
        );
        assert_eq!(
            parse_rate("fast").unwrap_err().to_string(),
            "a rate like \"15Mbps\""
        );
        assert!(parse_rate("15 Hz")
            .unwrap_err()
            .to_string()
            .starts_with("a rate in bits per second (bps, kbps,"));
        assert_eq!(
            parse_size("big").unwrap_err().to_string(),
            "a size like \"1500B\""
        );
        assert_eq!(
            parse_size("0.5B").unwrap_err().to_string(),
            "a whole number of bytes"
        );
        assert_eq!(
            parse_size("1e20B").unwrap_err().to_string(),
            "a size of at most 18446744073709551615B"
        );
        let err = parse_size("x").unwrap_err();
        assert_eq!(err.quantity, Quantity::Size);
    }

    #[test]
    fn the_largest_duration_text_is_the_limit() {
        assert_eq!(
            nanos("18446744073.709551615s"),
            Duration::from_nanos(u64::MAX).as_nanos() as u64
        );
    }

    #[test]
    fn rate_display_uses_the_largest_exact_prefix() {
        let show = |bps| BitRate { bps }.to_string();
        assert_eq!(show(0), "0bps");
        assert_eq!(show(7), "7bps");
        assert_eq!(show(1_500), "1500bps");
        assert_eq!(show(15_000), "15kbps");
        assert_eq!(show(1_500_000), "1500kbps");
        assert_eq!(show(15_000_000), "15Mbps");
        assert_eq!(show(10_000_000_000), "10Gbps");
        assert_eq!(show(3_000_000_000_000), "3Tbps");
        assert_eq!(show(u64::MAX), "18446744073709551615bps");
        assert_eq!(ByteSize { bytes: 1000 }.to_string(), "1000B");
    }

    #[test]
    fn display_round_trips_through_parse() {
        let mut values: Vec<u64> = vec![0, 1, 999, u64::MAX, u64::MAX - 1];
        for power in 0..20 {
            let p = 10u64.pow(power);
            values.extend([p, p.saturating_mul(7), p.saturating_mul(15), p + 1]);
        }
        for v in values {
            let rate = BitRate { bps: v };
            assert_eq!(parse_rate(&rate.to_string()), Ok(rate), "{rate}");
            assert_eq!(rate.to_string().parse::<BitRate>(), Ok(rate));
            let size = ByteSize { bytes: v };
            assert_eq!(parse_size(&size.to_string()), Ok(size), "{size}");
            assert_eq!(size.to_string().parse::<ByteSize>(), Ok(size));
            let duration = Duration::from_nanos(v);
            assert_eq!(
                parse_duration(&format_duration(duration)),
                Ok(duration),
                "{}",
                format_duration(duration)
            );
        }
    }

    #[test]
    fn durations_format_in_the_largest_exact_unit() {
        assert_eq!(format_duration(Duration::ZERO), "0s");
        assert_eq!(format_duration(Duration::from_secs(10)), "10s");
        assert_eq!(format_duration(Duration::from_millis(1500)), "1500ms");
        assert_eq!(format_duration(Duration::from_secs(120)), "2min");
        assert_eq!(format_duration(Duration::from_secs(7200)), "2h");
        assert_eq!(format_duration(Duration::from_micros(3)), "3us");
        assert_eq!(
            format_duration(Duration::from_nanos(1_000_001)),
            "1000001ns"
        );
    }
}
