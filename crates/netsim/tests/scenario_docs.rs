//! docs/scenario.md stays in step with the schema: its complete examples parse and run, and every
//! key the schema source reads is documented there.

use std::path::PathBuf;

use netsim::scenario::{run, Scenario};

/// Methods of `Fields` (and the schema's helpers) whose first string argument is a key.
const KEY_METHODS: &[&str] = &[
    "required",
    "optional",
    "or",
    "value",
    "table",
    "tables",
    "choice",
    "missing",
    "declare",
    "required_table",
    "packet_size",
];

/// The schema's source files, relative to the crate.
const SCHEMA_FILES: &[&str] = &[
    "src/scenario/spec.rs",
    "src/scenario/topology_spec.rs",
    "src/scenario/queue_spec.rs",
    "src/scenario/flow_spec.rs",
    "src/scenario/loss_spec.rs",
    "src/scenario/tcp_spec.rs",
    "src/scenario/dists.rs",
    "src/scenario/tfrc_spec.rs",
    "src/scenario/rap_spec.rs",
    "src/scenario/onoff_spec.rs",
    "src/scenario/ping_spec.rs",
    "src/scenario/web_spec.rs",
    "src/scenario/randvar_spec.rs",
    "src/scenario/tear_spec.rs",
    "src/scenario/measure_spec.rs",
];

fn crate_path(relative: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(relative)
}

fn doc() -> String {
    std::fs::read_to_string(crate_path("../../docs/scenario.md")).unwrap()
}

#[test]
fn every_complete_example_parses_and_runs() {
    let complete: Vec<String> = netsim::scenario::toml_blocks(&doc())
        .into_iter()
        .filter(|block| block.lines().any(|l| l.starts_with("duration =")))
        .collect();
    assert!(complete.len() >= 2, "only {} examples", complete.len());
    for (i, text) in complete.iter().enumerate() {
        let scenario = Scenario::from_toml_str(text)
            .unwrap_or_else(|error| panic!("example {i} does not parse: {error}\n{text}"));
        assert!(
            scenario.duration.as_secs() <= 10,
            "example {i}: keep doc examples short"
        );
        let results =
            run(&scenario, 1).unwrap_or_else(|error| panic!("example {i} does not run: {error}"));
        assert_eq!(results.duration, scenario.duration);
        assert_eq!(results.flows.len(), scenario.flows.len());
        for flow in &results.flows {
            assert!(
                flow.record.totals.packets_sent > 0,
                "example {i}: flow {} sent nothing",
                flow.name
            );
        }
    }
}

#[test]
fn the_examples_say_what_the_prose_says() {
    let blocks = netsim::scenario::toml_blocks(&doc());
    // The two complete examples the prose walks through, found by what they hold (other
    // sections' fragments may come before them).
    let example = |needle: &str| {
        blocks
            .iter()
            .find(|b| b.lines().any(|l| l.starts_with("duration =")) && b.contains(needle))
            .unwrap_or_else(|| panic!("no complete example holds {needle:?}"))
    };
    let dumbbell = Scenario::from_toml_str(example("name = \"bursty\"")).unwrap();
    let names: Vec<(&str, &str, &str)> = dumbbell
        .flows
        .iter()
        .map(|f| (f.name.as_str(), f.from.as_str(), f.to.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            ("cbr0", "left0", "right0"),
            ("cbr1", "left1", "right1"),
            ("cbr2", "left2", "right2"),
            ("bursty", "left3", "right3"),
            ("back", "right0", "left0"),
        ]
    );
    let graph = Scenario::from_toml_str(example("name = \"core\"")).unwrap();
    let results = run(&graph, 1).unwrap();
    let links: Vec<&str> = results.links.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(
        links,
        [
            "src->r1",
            "r1->src",
            "core",
            "core_reverse",
            "r1->dst",
            "r2->dst",
            "dst->r2"
        ]
    );
    // The explicit route sends the probe across the core, where the schedule drops.
    assert!(results.link("core").unwrap().record.totals.loss_model_drops > 0);
    assert_eq!(results.link("r1->dst").unwrap().record.totals.arrivals, 0);
    assert!(results
        .links
        .iter()
        .all(|l| !l.record.bins.arrivals.is_empty()));
}

/// The string literal starting right after `text`'s leading whitespace, if it starts with one.
fn leading_literal(text: &str) -> Option<&str> {
    let rest = text.trim_start().strip_prefix('"')?;
    rest.find('"').map(|end| &rest[..end])
}

/// The keys named in one schema source file: the string literals passed as the key argument of
/// the [`KEY_METHODS`] (after an optional turbofish; for the helpers taking `fields` first, the
/// second argument; for `declare`, every literal in its slice).
fn keys_in_source(source: &str) -> Vec<String> {
    let mut keys = Vec::new();
    for method in KEY_METHODS {
        let mut from = 0;
        while let Some(found) = source[from..].find(method) {
            let start = from + found;
            from = start + method.len();
            let before = source[..start].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let mut rest = &source[from..];
            if let Some(generic) = rest.strip_prefix("::<") {
                let Some(close) = generic.find(">(") else {
                    continue;
                };
                rest = &generic[close + 1..];
            }
            let Some(arguments) = rest.strip_prefix('(') else {
                continue;
            };
            if *method == "declare" {
                let list = &arguments[..arguments.find(')').unwrap_or(arguments.len())];
                keys.extend(list.split('"').skip(1).step_by(2).map(str::to_owned));
                continue;
            }
            let key_argument = if matches!(*method, "required_table" | "packet_size") {
                match arguments.find(',') {
                    Some(comma) => &arguments[comma + 1..],
                    None => continue,
                }
            } else {
                arguments
            };
            if let Some(key) = leading_literal(key_argument).filter(|k| !k.is_empty()) {
                keys.push(key.to_owned());
            }
        }
    }
    keys
}

#[test]
fn the_key_scanner_finds_keys_in_every_call_form() {
    let source = r#"
        let a: u64 = fields.required("alpha", "x")?;
        let b = fields.optional::<ByteSize>("beta")?;
        let c = fields.or("gamma", 1)?;
        root.declare(&["delta", "epsilon"]);
        let d = required_table(fields, "zeta", "a table")?;
        let e = packet_size(fields, "eta", 1000)?;
        let f = fields.tables("theta")?;
        let g = Fields::new(table, "");
        let h = self.value(key);
        let i = fields.choice("kind", KINDS)?;
        let j = fields.missing("iota", "x");
        let k = options("not_a_key");
    "#;
    let mut keys = keys_in_source(source);
    keys.sort();
    assert_eq!(
        keys,
        ["alpha", "beta", "delta", "epsilon", "eta", "gamma", "iota", "kind", "theta", "zeta"]
    );
}

#[test]
fn every_schema_key_is_documented() {
    let doc = doc();
    let mut all = Vec::new();
    for file in SCHEMA_FILES {
        let source = std::fs::read_to_string(crate_path(file)).unwrap();
        let keys = keys_in_source(&source);
        assert!(!keys.is_empty(), "no keys found in {file}");
        all.extend(keys);
    }
    all.sort();
    all.dedup();
    // A sanity check on the scan itself: keys from every level are found.
    for key in [
        "duration",
        "monitor",
        "max_th",
        "w_q",
        "loss_event_rtt",
        "steps",
        "uniform",
    ] {
        assert!(all.iter().any(|k| k == key), "the scan missed {key}");
    }
    let undocumented: Vec<&String> = all
        .iter()
        .filter(|key| !doc.contains(&format!("`{key}`")))
        .collect();
    assert!(
        undocumented.is_empty(),
        "keys read by the schema but not documented in docs/scenario.md as `key`: {undocumented:?}"
    );
}
