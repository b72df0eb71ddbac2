//! A seeded mutation fuzzer for `tfrc::wire` and for netsim's scenario files that runs on the
//! stable toolchain (no nightly, no libFuzzer): design convention 3 says every parser has a fuzz
//! target, and these are the wire formats' and the scenario parser's ([`scenario`]).
//!
//! [`fuzz_one`] is the target: it parses bytes as every packet kind, through every entry point,
//! and checks that they agree with each other and with an independent reading of
//! `docs/wire-format.md`, and that anything accepted re-emits to the same bytes. It panics only
//! on such an invariant violation. [`run`] drives it from a corpus of valid packets through a
//! deterministic [`Mutator`] seeded with a `Xoshiro256PlusPlus`, catching panics and returning
//! the input that caused one. The `tfrc-fuzz` binary is a command line around [`run`]:
//!
//! ```text
//! cargo run --release -p tfrc-fuzz -- --seconds 600 --seed 1 --target all
//! ```

pub mod scenario;

use std::fmt::{self, Write as _};
use std::panic::{self, AssertUnwindSafe};
use std::time::{Duration, Instant};

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use tfrc::wire::{
    DataPacket, FeedbackPacket, Packet, PacketKind, WireError, WireStats, DATA_HEADER_LEN,
    FEEDBACK_LEN, VERSION,
};
use tfrc::{DataHeader, FeedbackHeader, Time};

/// Longest input the mutator builds; longer ones are cut (payload bytes past the header add
/// nothing the parser looks at).
pub const MAX_INPUT_LEN: usize = 512;
/// Most inputs the corpus holds; accepted mutants replace earlier ones once it is full.
pub const MAX_CORPUS_LEN: usize = 4096;

/// The fuzz target: parses `data` through every entry point, checks the invariants below, and
/// returns what a driver would get from [`Packet::parse`] (the kind, or why it was rejected).
///
/// Panics only when an invariant fails:
/// - [`PacketKind::peek`], [`Packet::parse`], both `Header::parse`s and both `new_checked`
///   views agree, and at most one kind accepts the bytes;
/// - the result matches an independent decoder written from `docs/wire-format.md`;
/// - an accepted packet re-emits to exactly the input bytes and parses back to an equal value;
/// - emitting into a buffer one byte short fails with `BufferTooSmall`;
/// - formatting any error succeeds.
pub fn fuzz_one(data: &[u8]) -> Result<PacketKind, WireError> {
    let peeked = PacketKind::peek(data);
    let as_data = DataHeader::parse(data);
    let as_feedback = FeedbackHeader::parse(data);
    let any = Packet::parse(data);

    // The borrowed views accept exactly what the owned parsers accept, with the same values.
    let data_view = DataPacket::new_checked(data)
        .map(|view| (DataHeader::from_packet(&view), view.payload().to_vec()));
    assert_eq!(
        data_view,
        as_data.map(|(header, payload)| (header, payload.to_vec())),
        "DataPacket view and DataHeader::parse disagree"
    );
    let feedback_view =
        FeedbackPacket::new_checked(data).map(|view| FeedbackHeader::from_packet(&view));
    assert_eq!(
        feedback_view, as_feedback,
        "FeedbackPacket view and FeedbackHeader::parse disagree"
    );

    // Dispatch agrees with the kind-specific parsers, and the session is bytes 2-9.
    let session = reference_session(data);
    let expected_any = match peeked {
        Err(err) => Err(err),
        Ok(PacketKind::Data) => as_data.map(|(header, payload)| Packet::Data {
            session,
            header,
            payload,
        }),
        Ok(PacketKind::Feedback) => as_feedback.map(|header| Packet::Feedback { session, header }),
    };
    assert_eq!(
        any, expected_any,
        "Packet::parse disagrees with peek + parse"
    );
    let result = any.map(|packet| packet.kind());
    assert_eq!(result, reference_decode(data), "disagrees with the spec");

    match (as_data, as_feedback) {
        (Ok(_), Ok(_)) => panic!("accepted as both a data and a feedback packet"),
        (Ok((header, payload)), Err(err)) => {
            assert_eq!(
                err,
                WireError::WrongType {
                    expected: PacketKind::Feedback,
                    found: PacketKind::Data
                }
            );
            check_data_round_trip(data, session, header, payload);
        }
        (Err(err), Ok(feedback)) => {
            assert_eq!(
                err,
                WireError::WrongType {
                    expected: PacketKind::Data,
                    found: PacketKind::Feedback
                }
            );
            check_feedback_round_trip(data, session, feedback);
        }
        (Err(data_err), Err(feedback_err)) => {
            assert_formats(&data_err);
            assert_formats(&feedback_err);
        }
    }
    if let Err(err) = &result {
        assert_formats(err);
    }
    result
}

fn check_data_round_trip(data: &[u8], session: u64, header: DataHeader, payload: &[u8]) {
    assert_eq!(payload, data.get(DATA_HEADER_LEN..).unwrap_or_default());
    let mut out = vec![0u8; data.len()];
    assert_eq!(
        header.emit_with_payload(session, payload, &mut out),
        Ok(data.len())
    );
    assert_eq!(out, data, "data packet did not re-emit to the same bytes");
    assert_eq!(DataHeader::parse(&out), Ok((header, payload)));
    out.pop();
    assert_eq!(
        header.emit_with_payload(session, payload, &mut out),
        Err(WireError::BufferTooSmall {
            needed: data.len(),
            available: data.len() - 1
        })
    );
}

fn check_feedback_round_trip(data: &[u8], session: u64, feedback: FeedbackHeader) {
    let mut out = [0u8; FEEDBACK_LEN];
    assert_eq!(feedback.emit(session, &mut out), Ok(FEEDBACK_LEN));
    assert_eq!(
        out, data,
        "feedback packet did not re-emit to the same bytes"
    );
    let reparsed = FeedbackHeader::parse(&out);
    assert_eq!(reparsed, Ok(feedback));
    // Compare bits too: PartialEq treats 0.0 and -0.0 as equal.
    let bits = |f: FeedbackHeader| (f.x_recv_bytes_per_s.to_bits(), f.p.to_bits());
    assert_eq!(reparsed.map(bits), Ok(bits(feedback)));
    assert_eq!(
        feedback.emit(session, &mut out[..FEEDBACK_LEN - 1]),
        Err(WireError::BufferTooSmall {
            needed: FEEDBACK_LEN,
            available: FEEDBACK_LEN - 1
        })
    );
}

/// An fmt sink that discards everything: formatting errors must work, not be stored.
struct Discard;

impl fmt::Write for Discard {
    fn write_str(&mut self, _: &str) -> fmt::Result {
        Ok(())
    }
}

fn assert_formats(err: &WireError) {
    assert!(write!(Discard, "{err} {err:?}").is_ok());
}

/// The session field as `docs/wire-format.md` places it: bytes 2 to 9, big-endian (0 when the
/// input is shorter; only accepted packets' sessions are compared).
fn reference_session(data: &[u8]) -> u64 {
    data.get(2..10).map_or(0, |bytes| {
        bytes.iter().fold(0, |acc, &b| (acc << 8) | u64::from(b))
    })
}

/// A second, deliberately naive reading of `docs/wire-format.md`, for differential checking.
fn reference_decode(data: &[u8]) -> Result<PacketKind, WireError> {
    let len = data.len();
    let version = data.first().copied().unwrap_or(VERSION);
    if version != VERSION {
        return Err(WireError::UnknownVersion(version));
    }
    if len < 2 {
        return Err(WireError::Truncated {
            needed: 2,
            found: len,
        });
    }
    let (kind, needed) = match data[1] {
        1 => (PacketKind::Data, 34),
        2 => (PacketKind::Feedback, 42),
        other => return Err(WireError::UnknownType(other)),
    };
    if len < needed {
        return Err(WireError::Truncated { needed, found: len });
    }
    if kind == PacketKind::Data {
        return Ok(kind);
    }
    if len > 42 {
        return Err(WireError::TrailingBytes {
            expected: 42,
            found: len,
        });
    }
    let float_at = |at: usize| {
        let mut bits = 0u64;
        for &byte in &data[at..at + 8] {
            bits = (bits << 8) | u64::from(byte);
        }
        f64::from_bits(bits)
    };
    for (field, value, max) in [
        ("x_recv", float_at(26), f64::INFINITY),
        ("p", float_at(34), 1.0),
    ] {
        let reason = if value.is_nan() {
            "NaN"
        } else if value.is_infinite() {
            "infinite"
        } else if value < 0.0 {
            "negative"
        } else if value > max {
            "greater than 1"
        } else {
            continue;
        };
        return Err(WireError::InvalidField { field, reason });
    }
    Ok(kind)
}

/// Valid packets with edge values in every field, emitted by the crate, plus a few near misses:
/// the fuzzer's starting corpus.
pub fn seed_corpus() -> Vec<Vec<u8>> {
    let mut corpus = Vec::new();
    for (seq, nanos) in [(0, 0), (1, 1_000_000_000), (u64::MAX, u64::MAX)] {
        let header = DataHeader {
            seq,
            timestamp: Time::from_nanos(nanos),
            rtt: Duration::from_nanos(nanos / 3),
        };
        for payload in [&b""[..], b"x", &[0xa5; 40]] {
            let mut buf = vec![0u8; DATA_HEADER_LEN + payload.len()];
            if header
                .emit_with_payload(seq ^ nanos, payload, &mut buf)
                .is_ok()
            {
                corpus.push(buf);
            }
        }
    }
    let rates = [
        (0.0, 0.0),
        (125_000.0, 0.5),
        (f64::MAX, 1.0),
        (f64::MIN_POSITIVE, f64::MIN_POSITIVE),
        (-0.0, -0.0),
    ];
    for (i, (x_recv, p)) in (0u64..).zip(rates) {
        let feedback = FeedbackHeader {
            timestamp_echo: Time::from_nanos(i.wrapping_mul(0x0123_4567_89ab_cdef)),
            t_delay: Duration::from_nanos(i * 250_000),
            x_recv_bytes_per_s: x_recv,
            p,
        };
        let mut buf = vec![0u8; FEEDBACK_LEN];
        if feedback.emit(i.wrapping_mul(0x9e37_79b9), &mut buf).is_ok() {
            corpus.push(buf);
        }
    }
    corpus.push(vec![VERSION, PacketKind::Feedback.type_byte()]);
    corpus.push(vec![VERSION]);
    corpus.push(Vec::new());
    corpus
}

/// Bytes worth trying in any position: the brief's boundary values plus the format's own
/// version and type bytes and the leading bytes of interesting floats.
const INTERESTING_BYTES: [u8; 10] = [0x00, 0xff, 0x7f, 0x80, 0x01, 0x02, 0x03, 0x3f, 0xf0, 0xbf];

/// Whole 8-byte fields worth trying: integer boundaries and the float values at the edges of
/// X_recv's and p's domains (NaNs of both signs, infinities, zeros, just past 1, just below 0).
const INTERESTING_WORDS: [u64; 20] = [
    0,
    1,
    u64::MAX,
    i64::MAX as u64,
    1 << 63,
    0x7ff8_0000_0000_0000, // quiet NaN
    0x7ff0_0000_0000_0001, // signalling NaN
    0xfff8_0000_0000_0000, // negative NaN
    0x7ff0_0000_0000_0000, // +inf
    0xfff0_0000_0000_0000, // -inf
    0x7fef_ffff_ffff_ffff, // f64::MAX
    0x3ff0_0000_0000_0000, // 1.0
    0x3ff0_0000_0000_0001, // the next float above 1.0
    0x3fef_ffff_ffff_ffff, // the float just below 1.0
    0x3fe0_0000_0000_0000, // 0.5
    0x8000_0000_0000_0000, // -0.0
    0x8000_0000_0000_0001, // the negative subnormal closest to 0
    0x0000_0000_0000_0001, // the smallest subnormal
    0x0010_0000_0000_0000, // f64::MIN_POSITIVE
    0xbff0_0000_0000_0000, // -1.0
];

/// Offsets of the 8-byte fields in both layouts.
const FIELD_OFFSETS: [usize; 4] = [2, 10, 18, 26];

/// A deterministic mutator: the same seed and corpus give the same inputs in the same order.
#[derive(Clone, Debug)]
pub struct Mutator {
    rng: Xoshiro256PlusPlus,
}

impl Mutator {
    /// A mutator whose choices all come from a `Xoshiro256PlusPlus` seeded with `seed`.
    pub fn new(seed: u64) -> Mutator {
        Mutator {
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
        }
    }

    /// A uniform-ish draw in `0..n` (`n` > 0; the modulo bias is irrelevant here).
    fn below(&mut self, n: usize) -> usize {
        (self.rng.next_u64() % n.max(1) as u64) as usize
    }

    fn pick<'c>(&mut self, corpus: &'c [Vec<u8>]) -> &'c [u8] {
        corpus
            .get(self.below(corpus.len()))
            .map_or(&[], Vec::as_slice)
    }

    /// Replaces `out` with a mutant of a random corpus entry: one to four of bit flips,
    /// interesting bytes, interesting 8-byte fields, random bytes, truncation, extension and
    /// splicing with another entry. The result is at most [`MAX_INPUT_LEN`] bytes.
    pub fn mutate(&mut self, corpus: &[Vec<u8>], out: &mut Vec<u8>) {
        out.clear();
        out.extend_from_slice(self.pick(corpus));
        for _ in 0..=self.below(4) {
            self.mutate_once(corpus, out);
        }
        out.truncate(MAX_INPUT_LEN);
    }

    fn mutate_once(&mut self, corpus: &[Vec<u8>], out: &mut Vec<u8>) {
        let len = out.len();
        match self.below(8) {
            0 if len > 0 => {
                let at = self.below(len);
                out[at] ^= 1 << self.below(8);
            }
            1 if len > 0 => {
                let at = self.below(len);
                out[at] = INTERESTING_BYTES[self.below(INTERESTING_BYTES.len())];
            }
            2 => {
                // Half the time a real field, otherwise anywhere.
                let at = if self.below(2) == 0 {
                    FIELD_OFFSETS[self.below(FIELD_OFFSETS.len())]
                } else {
                    self.below(len + 1)
                };
                let word = INTERESTING_WORDS[self.below(INTERESTING_WORDS.len())];
                if let Some(field) = out.get_mut(at..).and_then(<[u8]>::first_chunk_mut::<8>) {
                    *field = word.to_be_bytes();
                }
            }
            3 if len > 0 => {
                let at = self.below(len);
                out[at] = self.rng.next_u64() as u8;
            }
            4 => {
                let keep = self.below(len + 1);
                out.truncate(keep);
            }
            5 => {
                for _ in 0..=self.below(16) {
                    out.push(self.rng.next_u64() as u8);
                }
            }
            6 => {
                let other = self.pick(corpus);
                let cut = self.below(len + 1);
                let from = self.below(other.len() + 1);
                out.truncate(cut);
                out.extend_from_slice(other.get(from..).unwrap_or_default());
            }
            7 if len > 0 => {
                // Drop one byte from the middle, shifting the fields after it.
                let at = self.below(len);
                out.remove(at);
            }
            _ => {
                let byte = self.rng.next_u64() as u8;
                out.push(byte);
            }
        }
    }
}

/// When a run stops and how it draws its inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FuzzConfig {
    /// Seeds the mutator; with `iterations` and no `duration` a run is fully reproducible.
    pub seed: u64,
    /// Stop after this many inputs.
    pub iterations: Option<u64>,
    /// Stop after this much wall-clock time (checked every 1024 inputs).
    pub duration: Option<Duration>,
}

impl Default for FuzzConfig {
    fn default() -> FuzzConfig {
        FuzzConfig {
            seed: 0,
            iterations: None,
            duration: Some(Duration::from_secs(10)),
        }
    }
}

/// What a run that found no crash did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FuzzReport {
    /// Inputs tried.
    pub iterations: u64,
    /// Wall-clock time the run took.
    pub elapsed: Duration,
    /// How the inputs parsed: accepted, or rejected by reason.
    pub stats: WireStats,
    /// Of the accepted inputs, how many were data packets.
    pub accepted_data: u64,
    /// Of the accepted inputs, how many were feedback packets.
    pub accepted_feedback: u64,
    /// Inputs in the corpus at the end (seeds plus kept mutants).
    pub corpus_len: usize,
}

impl FuzzReport {
    /// Inputs per second of wall-clock time.
    pub fn iterations_per_s(&self) -> f64 {
        self.iterations as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

impl fmt::Display for FuzzReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.stats;
        writeln!(
            f,
            "{} iterations in {:.1} s ({:.0} iterations/s), corpus {} inputs",
            self.iterations,
            self.elapsed.as_secs_f64(),
            self.iterations_per_s(),
            self.corpus_len
        )?;
        writeln!(
            f,
            "accepted     {:>12}  (data {}, feedback {})",
            s.accepted, self.accepted_data, self.accepted_feedback
        )?;
        writeln!(f, "rejected     {:>12}", s.rejected())?;
        for (name, count) in [
            ("truncated", s.truncated),
            ("bad_version", s.bad_version),
            ("bad_type", s.bad_type),
            ("bad_field", s.bad_field),
            ("bad_length", s.bad_length),
            ("other", s.other),
        ] {
            writeln!(f, "  {name:<11}{count:>12}")?;
        }
        Ok(())
    }
}

/// An input that made the target panic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Crash {
    /// The 0-based index of the input in the run.
    pub iteration: u64,
    /// The input's bytes.
    pub input: Vec<u8>,
    /// The panic message.
    pub message: String,
}

impl fmt::Display for Crash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "panic at iteration {}: {}\ninput ({} bytes): {}",
            self.iteration,
            self.message,
            self.input.len(),
            hex(&self.input)
        )
    }
}

/// Lower-case hex, two digits per byte, no separators.
pub fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        let _ = write!(out, "{byte:02x}");
    }
    out
}

/// Fuzzes [`fuzz_one`] as `config` says; see [`run_target`].
pub fn run(config: &FuzzConfig) -> Result<FuzzReport, Crash> {
    run_target(config, fuzz_one)
}

/// Feeds `target` the seed corpus, then mutants, until `config`'s iteration or time limit (the
/// first reached; with neither, it stops after the seeds). Accepted mutants join the corpus.
/// A panic stops the run and comes back as a [`Crash`]; the default panic hook has already
/// printed its message and location.
pub fn run_target(
    config: &FuzzConfig,
    target: fn(&[u8]) -> Result<PacketKind, WireError>,
) -> Result<FuzzReport, Crash> {
    let start = Instant::now();
    let seeds = seed_corpus();
    let seed_count = seeds.len();
    let mut corpus = seeds;
    let mut mutator = Mutator::new(config.seed);
    let mut input = Vec::with_capacity(MAX_INPUT_LEN);
    let mut report = FuzzReport {
        iterations: 0,
        elapsed: Duration::ZERO,
        stats: WireStats::default(),
        accepted_data: 0,
        accepted_feedback: 0,
        corpus_len: 0,
    };
    let limit = config.iterations.unwrap_or(u64::MAX);
    let deadline = config.duration.map(|d| start + d);
    let mut i = 0u64;
    while i < limit {
        if i % 1024 == 0 && deadline.is_some_and(|deadline| Instant::now() >= deadline) {
            break;
        }
        if let Some(seed) = corpus.get(i as usize).filter(|_| i < seed_count as u64) {
            input.clone_from(seed);
        } else if config.iterations.is_none() && config.duration.is_none() {
            break;
        } else {
            // Half the time start from a seed, so both packet kinds stay in play as
            // accepted (mostly data) mutants fill the corpus.
            let pool = if mutator.below(2) == 0 {
                &corpus[..seed_count]
            } else {
                &corpus[..]
            };
            mutator.mutate(pool, &mut input);
        }
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| target(&input)));
        let result = match outcome {
            Ok(result) => result,
            Err(payload) => {
                let message = payload
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_owned())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "(non-string panic payload)".to_owned());
                return Err(Crash {
                    iteration: i,
                    input,
                    message,
                });
            }
        };
        report.stats.record(&result);
        match result {
            Ok(PacketKind::Data) => report.accepted_data += 1,
            Ok(PacketKind::Feedback) => report.accepted_feedback += 1,
            Err(_) => {}
        }
        if result.is_ok() && i >= seed_count as u64 {
            if corpus.len() < MAX_CORPUS_LEN {
                corpus.push(input.clone());
            } else {
                let slot = seed_count + mutator.below(MAX_CORPUS_LEN - seed_count);
                corpus[slot].clone_from(&input);
            }
        }
        i += 1;
    }
    report.iterations = i;
    report.elapsed = start.elapsed();
    report.corpus_len = corpus.len();
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_parse_as_expected() {
        let corpus = seed_corpus();
        let accepted = corpus.iter().filter(|s| fuzz_one(s).is_ok()).count();
        assert_eq!(accepted, corpus.len() - 3);
    }

    #[test]
    fn reference_decoder_matches_on_handmade_cases() {
        let feedback = &seed_corpus()[9];
        let mut nan_p = feedback.clone();
        nan_p[26..34].copy_from_slice(&f64::NAN.to_bits().to_be_bytes());
        let mut long = feedback.clone();
        long.push(0);
        for input in [
            &[][..],
            &[1],
            &[9],
            &[1, 9],
            &[1, 1, 0],
            feedback,
            &nan_p,
            &long,
        ] {
            assert_eq!(
                Packet::parse(input).map(|p| p.kind()),
                reference_decode(input)
            );
        }
    }

    #[test]
    fn mutator_is_deterministic_and_bounded() {
        let corpus = seed_corpus();
        let draw = |seed| {
            let mut mutator = Mutator::new(seed);
            let mut out = Vec::new();
            (0..500)
                .map(|_| {
                    mutator.mutate(&corpus, &mut out);
                    assert!(out.len() <= MAX_INPUT_LEN);
                    out.clone()
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(draw(7), draw(7));
        assert_ne!(draw(7), draw(8));
    }

    #[test]
    fn a_panicking_target_is_reported_with_its_input() {
        fn picky(data: &[u8]) -> Result<PacketKind, WireError> {
            assert!(data.len() != 27, "27 bytes");
            PacketKind::peek(data)
        }
        let config = FuzzConfig {
            seed: 3,
            iterations: Some(100_000),
            duration: None,
        };
        let crash = run_target(&config, picky).unwrap_err();
        assert_eq!(crash.input.len(), 27);
        assert_eq!(crash.message, "27 bytes");
        assert!(crash.to_string().contains(&hex(&crash.input)));
    }

    /// The fuzzer as part of `cargo test`: 200,000 seeded inputs (a few seconds unoptimized).
    #[test]
    fn fuzz_200k_inputs() {
        let config = FuzzConfig {
            seed: 0x7f3c,
            iterations: Some(200_000),
            duration: None,
        };
        let report = run(&config).unwrap_or_else(|crash| panic!("{crash}"));
        assert_eq!(report.iterations, 200_000);
        let s = report.stats;
        // Every rejection reason and both kinds are actually reached.
        for (name, count) in [
            ("data", report.accepted_data),
            ("feedback", report.accepted_feedback),
            ("truncated", s.truncated),
            ("bad_version", s.bad_version),
            ("bad_type", s.bad_type),
            ("bad_field", s.bad_field),
            ("bad_length", s.bad_length),
        ] {
            assert!(count > 100, "{name}: only {count}\n{report}");
        }
        assert_eq!(s.other, 0);
        assert_eq!(s.total(), 200_000);
    }
}
