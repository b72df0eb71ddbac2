//! Bounded work: scenarios that cannot advance time, that hold too many flows, or that would cost
//! hours or gigabytes are refused before they run, and the cost estimate stays close to what a
//! run really does.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use netsim::scenario::{check, run, Budget, Scenario, ScenarioError, MAX_FLOWS};
use netsim::Time;

mod common;

/// A one-flow dumbbell around `flow` (the keys of one `[[flows]]` table) running `duration`:
/// 10 Mb/s, 10 ms, ns-2's default DropTail (49 waiting packets).
fn dumbbell(duration: &str, bin: &str, flow: &str) -> String {
    common::one_flow("10Mbps", "10ms", 49, duration, bin, flow)
}

fn refused(text: &str) -> ScenarioError {
    match Scenario::from_toml_str(text) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(error) => error,
    }
}

#[test]
fn zero_length_on_off_periods_are_refused_at_the_field() {
    for periods in [
        r#"{ on = "0s", off = "0s" }"#,
        r#"{ on = { exponential = "0s" }, off = "0s" }"#,
        r#"{ on = { uniform = ["0s", "0s"] }, off = { exponential = "0s" } }"#,
    ] {
        for kind in [r#"kind = "cbr""#, r#"kind = "tfrc""#] {
            let flow = format!("{kind}\nrate = \"1Mbps\"\non_off = {periods}");
            let flow = flow.replace("kind = \"tfrc\"\nrate = \"1Mbps\"", "kind = \"tfrc\"");
            let error = refused(&dumbbell("1ms", "1ms", &flow));
            assert_eq!(error.path(), Some("flows[0].on_off"), "{error}");
            assert!(error.to_string().contains("not both always 0s"), "{error}");
        }
    }
    // One period of 0 is fine: time advances by the other.
    let text = dumbbell(
        "1s",
        "10ms",
        "kind = \"cbr\"\nrate = \"1Mbps\"\non_off = { on = \"0s\", off = \"10ms\" }",
    );
    let scenario = Scenario::from_toml_str(&text).unwrap();
    run(&scenario, 1).unwrap();
}

#[test]
fn the_total_flow_count_is_capped_before_count_is_expanded() {
    let table = "[[flows]]\nkind = \"cbr\"\nrate = \"1kbps\"\ncount = 100000\n";
    let text = format!(
        "duration = \"1s\"\n[topology]\nkind = \"dumbbell\"\nhosts = 1\n\
         bottleneck = {{ rate = \"10Mbps\", delay = \"10ms\" }}\n{}",
        table.repeat(20)
    );
    let started = Instant::now();
    let error = refused(&text);
    assert_eq!(error.path(), Some("flows[1].count"), "{error}");
    assert!(
        error
            .to_string()
            .contains(&format!("at most {MAX_FLOWS} flows")),
        "{error}"
    );
    assert!(started.elapsed() < Duration::from_secs(20));
    // Many one-flow tables count too.
    let one = "[[flows]]\nkind = \"cbr\"\nrate = \"1kbps\"\n";
    let text = format!(
        "duration = \"1s\"\n[topology]\nkind = \"dumbbell\"\nhosts = 1\n\
         bottleneck = {{ rate = \"10Mbps\", delay = \"10ms\" }}\n{}",
        one.repeat(MAX_FLOWS + 1)
    );
    let error = refused(&text);
    assert_eq!(
        error.path(),
        Some(format!("flows[{MAX_FLOWS}].count").as_str()),
        "{error}"
    );
}

#[test]
fn runs_whose_monitors_need_gigabytes_are_refused_before_reserving() {
    // One TFRC flow over 100000 s at 2 ms bins: 5e7 bins (within the bin limit), several GiB of
    // series. Checking it reserves nothing; the estimate refuses it, naming the bins.
    let text = dumbbell("100000s", "2ms", "kind = \"tfrc\"");
    let scenario = Scenario::from_toml_str(&text).unwrap();
    let estimate = scenario.estimate();
    assert!(estimate.memory_bytes > 4 << 30, "{estimate:?}");
    let error = check(&scenario, &Budget::DEFAULT).unwrap_err();
    assert!(error.message.contains("monitor.bin"), "{error}");
    assert!(error.message.contains("coarser `monitor.bin`"), "{error}");
    assert!(!error.message.contains('\n'));

    // 100000 idle CBR flows with 10000 bins each: at a byte per bin for each of a flow's seven
    // counters (idle counts fit in a byte), 7 GB.
    let text = format!(
        "duration = \"100s\"\n[topology]\nkind = \"dumbbell\"\nhosts = 1\n\
         bottleneck = {{ rate = \"10Mbps\", delay = \"10ms\" }}\n\
         [[flows]]\nkind = \"cbr\"\nrate = \"1kbps\"\nstart = \"200s\"\ncount = {MAX_FLOWS}\n"
    );
    let scenario = Scenario::from_toml_str(&text).unwrap();
    let error = check(&scenario, &Budget::DEFAULT).unwrap_err();
    assert!(error.message.contains("memory"), "{error}");
    assert!(error.message.contains("monitor.bin"), "{error}");
}

#[test]
fn connections_arriving_faster_than_the_path_carries_them_are_refused_for_memory() {
    // 2 Gb/s of short connections into a 10 Mb/s bottleneck: about 23000 a second arrive and
    // 100 finish, and the rest wait, open, to the end (once 24 GB resident, for 30 s of a
    // floyd2000 scenario with a 100 Gb/s bottleneck).
    let flow = "kind = \"short_tcp\"\nload = \"2Gbps\"";
    let scenario = Scenario::from_toml_str(&dumbbell("60s", "1s", flow)).unwrap();
    let error = check(&scenario, &Budget::DEFAULT).unwrap_err();
    assert_eq!(error.path, "flows[0]", "{error}");
    assert!(error.message.contains("memory"), "{error}");
    // Within what the path carries, the connections cost nothing of the kind.
    let light = dumbbell("60s", "1s", "kind = \"short_tcp\"\nload = \"2Mbps\"");
    let estimate = Scenario::from_toml_str(&light).unwrap().estimate();
    assert!(estimate.memory_bytes < 1 << 20, "{estimate:?}");
}

#[test]
fn event_explosions_are_refused_naming_the_flow() {
    let cases = [
        (
            "kind = \"cbr\"\nrate = \"10Tbps\"\nsize = \"1B\"",
            "flows[0]",
            "`rate`",
        ),
        (
            "kind = \"cbr\"\nrate = \"1Mbps\"\non_off = { on = \"1ns\", off = \"1ns\" }",
            "flows[0]",
            "`on_off`",
        ),
        (
            "kind = \"ping\"\ninterval = \"1ns\"",
            "flows[0]",
            "`interval`",
        ),
    ];
    for (flow, path, hint) in cases {
        let scenario = Scenario::from_toml_str(&dumbbell("1000s", "1s", flow)).unwrap();
        let estimate = scenario.estimate();
        assert!(estimate.events_per_s > 1e8, "{flow}: {estimate:?}");
        let error = check(&scenario, &Budget::DEFAULT).unwrap_err();
        assert_eq!(error.path, path, "{error}");
        assert!(error.message.contains("wall time"), "{error}");
        assert!(error.message.contains(hint), "{error}");
    }
    // The example dumbbell at the longest duration allowed would take most of an hour or more.
    let text = std::fs::read_to_string(repo().join("scenarios/examples/dumbbell.toml")).unwrap();
    let long = text.replace("duration = \"60s\"", "duration = \"1000000s\"");
    let scenario = Scenario::from_toml_str(&long).unwrap();
    let error = check(&scenario, &Budget::DEFAULT).unwrap_err();
    assert!(error.estimate.wall_s > 1200.0, "{error}");
    assert!(
        error.message.starts_with("too costly to run: about"),
        "{error}"
    );
    // And as written it is well within budget.
    let scenario = Scenario::from_toml_str(&text).unwrap();
    let estimate = check(&scenario, &Budget::DEFAULT).unwrap();
    assert!(estimate.wall_s < 60.0, "{estimate:?}");
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every scenario file of the repository, examples and papers.
fn scenario_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
        entries.sort_by_key(|e| e.path());
        for entry in entries {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "toml") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(&repo().join("scenarios/examples"), &mut files);
    walk(&repo().join("scenarios/papers"), &mut files);
    files
}

/// The estimate against the events a run processes: within a factor of 2 either way.
fn assert_estimate_close(name: &str, scenario: &Scenario) {
    let estimate = scenario.estimate();
    let results = run(scenario, scenario.seed).unwrap();
    let ratio = estimate.events / results.events as f64;
    assert!(
        (0.5..=2.0).contains(&ratio),
        "{name}: estimated {:.3e} events, ran {} (ratio {ratio:.2})",
        estimate.events,
        results.events
    );
}

#[test]
fn the_estimate_is_within_a_factor_of_2_of_the_events_run() {
    let files = scenario_files();
    assert!(files.len() >= 2, "{files:?}");
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let scenario = Scenario::from_toml_str(&text).unwrap();
        // At most 30 s simulated keeps the test quick; the flows' starts stay as they are.
        let mut short = scenario.clone();
        short.duration = short.duration.min(Duration::from_secs(30));
        assert_estimate_close(&file.display().to_string(), &short);
    }
    for flow in [
        "kind = \"cbr\"\nrate = \"2Mbps\"",
        "kind = \"cbr\"\nrate = \"50Mbps\"",
        "kind = \"cbr\"\nrate = \"5Mbps\"\non_off = { on = \"100ms\", off = { exponential = \"100ms\" } }",
        "kind = \"ping\"\ninterval = \"1ms\"",
        "kind = \"tcp\"\nvariant = \"reno\"",
        "kind = \"tfrc\"",
        "kind = \"exponential\"\nrate = \"4Mbps\"",
    ] {
        let scenario = Scenario::from_toml_str(&dumbbell("20s", "100ms", flow)).unwrap();
        assert_estimate_close(flow, &scenario);
    }
}

#[test]
fn slicing_a_run_by_event_count_changes_nothing() {
    let text = std::fs::read_to_string(repo().join("scenarios/examples/dumbbell.toml")).unwrap();
    let mut scenario = Scenario::from_toml_str(&text).unwrap();
    scenario.duration = Duration::from_secs(15);
    let whole = run(&scenario, 3).unwrap();
    let mut sliced = scenario.simulation(3).unwrap();
    sliced.try_reserve_monitors().unwrap();
    let end = sliced.end();
    let mut calls = 0;
    while !sliced.run_until_at_most(end, 997) {
        calls += 1;
    }
    assert!(calls > 100, "{calls}");
    assert_eq!(sliced.now(), end.min(Time::MAX));
    let mut sliced = sliced.finish();
    sliced.scenario = whole.scenario.clone();
    assert_eq!(format!("{sliced:?}"), format!("{whole:?}"));
}
