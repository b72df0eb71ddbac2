//! Property tests of the scenario value layer: the unit parsers and the document reader never
//! panic, whatever the text; rates, sizes and durations survive a trip through their text form;
//! decimal values are read exactly and rounded to the nearest base unit.

use std::time::Duration;

use netsim::scenario::{
    describe, format_duration, parse_document, parse_duration, parse_rate, parse_size, BitRate,
    ByteSize, Fields, UnitProblem,
};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;

/// Text that looks like a unit value often enough to reach every branch of the parsers: signs,
/// digits, points, exponents, spaces, real and almost-real units.
fn unit_like() -> impl Strategy<Value = String> {
    let number = "[-+]?[0-9]{0,25}(\\.[0-9]{0,25})?([eE][-+]?[0-9]{0,22})?";
    let unit = prop_oneof![
        Just(String::new()),
        prop::sample::select(vec![
            "ns", "us", "µs", "μs", "ms", "s", "min", "h", "bps", "kbps", "Mbps", "mbps", "Gbps",
            "Tbps", "b/s", "Mb/s", "bit/s", "Bps", "kBps", "KBps", "MBps", "B/s", "MB/s", "B",
            "byte", "bytes", "kB", "KB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB", "nan",
            "inf", "e", "m", "S", "µ",
        ])
        .prop_map(str::to_owned),
        "\\PC{0,4}",
    ];
    (number, "[ \t]{0,2}", unit).prop_map(|(n, space, u)| format!("{n}{space}{u}"))
}

proptest! {
    // A fixed seed: the same cases on every run and machine (determinism is a project rule);
    // PROPTEST_CASES raises the count for a longer local search.
    #![proptest_config(ProptestConfig {
        cases: 512,
        rng_seed: RngSeed::Fixed(0x5ce7_a210),
        ..ProptestConfig::default()
    })]

    #[test]
    fn parsers_never_panic_on_arbitrary_text(text in any::<String>()) {
        let _ = parse_duration(&text).map_err(|e| e.to_string());
        let _ = parse_rate(&text).map_err(|e| e.to_string());
        let _ = parse_size(&text).map_err(|e| e.to_string());
    }

    #[test]
    fn parsers_never_panic_on_unit_like_text(text in unit_like()) {
        // Whatever is accepted reads back unchanged from its own text form.
        if let Ok(d) = parse_duration(&text) {
            prop_assert_eq!(parse_duration(&format_duration(d)), Ok(d));
        }
        if let Ok(rate) = parse_rate(&text) {
            prop_assert_eq!(parse_rate(&rate.to_string()), Ok(rate));
        }
        if let Ok(size) = parse_size(&text) {
            prop_assert_eq!(parse_size(&size.to_string()), Ok(size));
        }
    }

    #[test]
    fn documents_never_panic(text in any::<String>()) {
        walk(&text);
    }

    #[test]
    fn toml_like_documents_never_panic(
        text in "([a-z\\[\\]\\.\"= \n{},0-9]|start|rate|\"1s\"|\"15Mbps\"|\\[\\[flows\\]\\]){0,40}",
    ) {
        walk(&text);
    }

    #[test]
    fn rates_round_trip(bps in any::<u64>()) {
        let rate = BitRate { bps };
        prop_assert_eq!(parse_rate(&rate.to_string()), Ok(rate));
        prop_assert_eq!(parse_rate(&format!("{bps} bps")), Ok(rate));
    }

    #[test]
    fn round_rates_round_trip(n in 0u64..18_446_744, power in 0u32..4) {
        let rate = BitRate { bps: n * 1000u64.pow(power) };
        prop_assert_eq!(parse_rate(&rate.to_string()), Ok(rate));
    }

    #[test]
    fn sizes_round_trip(bytes in any::<u64>()) {
        let size = ByteSize { bytes };
        prop_assert_eq!(parse_size(&size.to_string()), Ok(size));
        prop_assert_eq!(parse_size(&format!("{bytes} bytes")), Ok(size));
    }

    #[test]
    fn durations_round_trip(nanos in any::<u64>()) {
        let d = Duration::from_nanos(nanos);
        prop_assert_eq!(parse_duration(&format_duration(d)), Ok(d));
        prop_assert_eq!(parse_duration(&format!("{nanos}ns")), Ok(d));
        // The same duration in seconds, with all nine decimals.
        let secs = format!("{}.{:09}s", nanos / 1_000_000_000, nanos % 1_000_000_000);
        prop_assert_eq!(parse_duration(&secs), Ok(d));
    }

    #[test]
    fn round_durations_round_trip(n in 0u64..5_000_000, unit in 0usize..6) {
        let scale = [1, 1_000, 1_000_000, 1_000_000_000, 60_000_000_000, 3_600_000_000_000u64];
        let d = Duration::from_nanos(n * scale[unit]);
        prop_assert_eq!(parse_duration(&format_duration(d)), Ok(d));
    }

    #[test]
    fn decimals_round_to_the_nearest_nanosecond(whole in any::<u64>(), tenths in 0u64..10) {
        let expected = whole.checked_add(u64::from(tenths >= 5));
        let parsed = parse_duration(&format!("{whole}.{tenths}ns"));
        match expected {
            Some(n) => prop_assert_eq!(parsed, Ok(Duration::from_nanos(n))),
            None => prop_assert_eq!(parsed.unwrap_err().problem, UnitProblem::TooLarge),
        }
    }

    #[test]
    fn exponents_shift_the_decimal_point(mantissa in 0u64..1_000_000, shift in 0u32..=10) {
        // mantissa × 10^-shift seconds is mantissa × 10^(9 - shift) ns; at shift 10 it is
        // mantissa / 10 ns, rounded half up.
        let text = format!("{mantissa}e-{shift}s");
        let nanos = if shift <= 9 {
            mantissa * 10u64.pow(9 - shift)
        } else {
            (mantissa + 5) / 10
        };
        prop_assert_eq!(parse_duration(&text), Ok(Duration::from_nanos(nanos)));
    }

    #[test]
    fn sizes_scale_exactly_or_are_refused(whole in 0u64..1_000_000, thousandths in 0u64..1000) {
        let text = format!("{whole}.{thousandths:03}kB");
        prop_assert_eq!(parse_size(&text), Ok(ByteSize { bytes: whole * 1000 + thousandths }));
        let text = format!("{whole}.{thousandths:03}5kB");
        prop_assert_eq!(parse_size(&text).unwrap_err().problem, UnitProblem::NotWhole);
    }
}

/// Parses `text` and walks every table in it the way a schema would, reading a few typed keys
/// and finishing each view; the point is only that nothing panics and errors render.
fn walk(text: &str) {
    match parse_document(text) {
        Ok(table) => {
            let _ = walk_table(Fields::new(&table, ""), 0).map_err(|e| e.to_string());
            for value in table.values() {
                let _ = describe(value);
            }
        }
        Err(err) => {
            let _ = err.to_string();
        }
    }
}

fn walk_table(mut fields: Fields<'_>, depth: usize) -> Result<(), netsim::scenario::ScenarioError> {
    let _ = fields.optional::<Duration>("start");
    let _ = fields.optional::<BitRate>("rate");
    let _ = fields.optional::<ByteSize>("size");
    let _ = fields.optional::<Vec<u64>>("list");
    let _ = fields.optional::<f64>("p");
    let _ = fields.choice("queue", &["droptail", "red"]);
    if depth < 8 {
        if let Ok(Some(sub)) = fields.table("a") {
            let _ = walk_table(sub, depth + 1).map_err(|e| e.to_string());
        }
        if let Ok(flows) = fields.tables("flows") {
            for flow in flows {
                let _ = walk_table(flow, depth + 1).map_err(|e| e.to_string());
            }
        }
    }
    fields.finish()
}
