//! The reporting keys `group`, `background` and `[measure] reference_group`: read and checked
//! by the parser, never read by the simulation (a run is the same bit for bit with or without
//! them).

mod common;

use common::simulate;
use netsim::scenario::Scenario;

const BASE: &str = r#"
duration = "3s"
[topology]
kind = "dumbbell"
hosts = 4
bottleneck = { rate = "2Mbps", delay = "10ms" }
[[flows]]
kind = "tcp"
count = 2
[[flows]]
kind = "cbr"
rate = "200kbps"
[[flows]]
kind = "web"
count = 2
load = "300kbps"
[[flows]]
kind = "tfrc"
on_off = { on = "1s", off = "1s" }
"#;

/// `text` with `extra` lines added to its `n`-th `[[flows]]` table (0-based).
fn add_keys(text: &str, n: usize, extra: &str) -> String {
    let mut parts: Vec<String> = text.split("[[flows]]").map(str::to_owned).collect();
    parts[n + 1] = format!("\n{extra}{}", parts[n + 1]);
    parts.join("[[flows]]")
}

#[test]
fn background_defaults_by_kind_and_on_off_and_can_be_overridden() {
    let scenario = Scenario::from_toml_str(BASE).unwrap();
    let background: Vec<bool> = scenario.flows.iter().map(|f| f.background).collect();
    // tcp, tcp, cbr, web, web, tfrc with ON/OFF periods.
    assert_eq!(background, [false, false, true, true, true, true]);
    assert!(scenario.flows.iter().all(|f| f.group.is_none()));
    assert_eq!(scenario.reference_group, None);

    let text = add_keys(BASE, 1, "background = false\ngroup = \"steady cbr\"\n");
    let text = add_keys(&text, 0, "background = true\ngroup = \"tcp 20ms\"\n");
    let scenario = Scenario::from_toml_str(&text).unwrap();
    let labels: Vec<(Option<&str>, bool)> = scenario
        .flows
        .iter()
        .map(|f| (f.group.as_deref(), f.background))
        .collect();
    assert_eq!(
        labels[..3],
        [
            (Some("tcp 20ms"), true),
            (Some("tcp 20ms"), true),
            (Some("steady cbr"), false)
        ]
    );
}

#[test]
fn bad_reporting_keys_are_refused_naming_the_field() {
    for (text, expected) in [
        (
            add_keys(BASE, 0, "group = \"  \"\n"),
            "flows[0].group: expected a non-empty name",
        ),
        (add_keys(BASE, 1, "group = 3\n"), "flows[1].group"),
        (
            add_keys(BASE, 2, "background = \"yes\"\n"),
            "flows[2].background",
        ),
        (
            BASE.replacen(
                "[topology]",
                "[measure]\nreference_group = \"\"\n[topology]",
                1,
            ),
            "measure.reference_group: expected the name of a flow group",
        ),
        (
            BASE.replacen("[topology]", "[measure]\nreference = \"x\"\n[topology]", 1),
            "measure.reference",
        ),
        (
            // Refused when the file is read, listing the groups the flows have.
            BASE.replacen(
                "[topology]",
                "[measure]\nreference_group = \"tcp\"\n[topology]",
                1,
            ),
            "measure.reference_group: expected the group of a flow, one of \"tcp/",
        ),
    ] {
        let error = Scenario::from_toml_str(&text).unwrap_err().to_string();
        assert!(error.contains(expected), "{error} lacks {expected}");
    }
}

#[test]
fn the_reporting_keys_never_change_the_run() {
    let labelled = add_keys(BASE, 0, "group = \"tcp a\"\nbackground = true\n").replacen(
        "[topology]",
        "[measure]\nreference_group = \"tcp a\"\n[topology]",
        1,
    );
    let labelled = add_keys(&labelled, 2, "background = false\ngroup = \"pages\"\n");
    let scenario = Scenario::from_toml_str(&labelled).unwrap();
    assert_eq!(scenario.reference_group.as_deref(), Some("tcp a"));
    assert_eq!(scenario.flows[3].group.as_deref(), Some("pages"));
    let plain = simulate(BASE, 7);
    let mut marked = simulate(&labelled, 7);
    marked.scenario.clone_from(&plain.scenario);
    assert_eq!(format!("{plain:?}"), format!("{marked:?}"));
}

#[test]
fn an_unknown_reference_group_is_refused_before_the_run_listing_the_groups() {
    let text = add_keys(BASE, 1, "group = \"steady cbr\"\n").replacen(
        "[topology]",
        "[measure]\nreference_group = \"tcp/reno\"\n[topology]",
        1,
    );
    let error = Scenario::from_toml_str(&text).unwrap_err().to_string();
    let web = Scenario::from_toml_str(BASE).unwrap().flows[3].group_label();
    assert_eq!(
        error,
        format!(
            "measure.reference_group: expected the group of a flow, one of \"tcp/sack\", \
             \"steady cbr\", \"{web}\", \"tfrc/rfc5348\", found \"tcp/reno\""
        )
    );
    // A protocol class and a given group are both accepted.
    for group in ["tcp/sack", "steady cbr"] {
        let ok = text.replace("\"tcp/reno\"", &format!("{group:?}"));
        assert!(Scenario::from_toml_str(&ok).is_ok(), "{group}");
    }
}
