//! Scenario files end to end: the example runs, every field is reachable, and malformed files
//! give their specific error (never a panic).

use netsim::scenario::{run, Scenario, ScenarioError};

fn example() -> String {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/examples/dumbbell.toml"
    );
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn the_example_runs_and_is_deterministic() {
    let scenario = Scenario::from_toml_str(&example()).unwrap();
    assert_eq!(scenario.flows.len(), 16);
    assert_eq!(scenario.flows[3].name, "tcp3");
    assert_eq!(scenario.flows[11].name, "tfrc3");
    assert_eq!(scenario.flows[3].from, "left3");
    let a = run(&scenario, 1).unwrap();
    let b = run(&scenario, 1).unwrap();
    assert_eq!(a, b);
    assert_ne!(
        a.flows[0].record,
        run(&scenario, 2).unwrap().flows[0].record
    );
    assert_eq!(a.scenario, example());
    assert_eq!(a.seed, 1);
    assert!(!a.version.is_empty());
    let bottleneck = a.link("bottleneck").unwrap();
    assert!(bottleneck.record.totals.utilization > 0.9);
    assert!(bottleneck.queue.early_drops > 0, "RED dropped early");
    assert_eq!(bottleneck.record.bins.arrivals.len(), 600);
    // Access links keep totals only by default.
    let access = a.link("left0->router_left").unwrap();
    assert!(access.record.bins.arrivals.is_empty());
    assert!(access.record.totals.arrivals > 0);
    for flow in &a.flows {
        let rtt = flow.base_rtt.as_secs_f64();
        assert!((0.08..0.1225).contains(&rtt), "{rtt}");
        assert!(flow.start.as_secs_f64() <= 10.0);
    }
}

const GRAPH: &str = r#"
duration = "5s"
[topology]
kind = "graph"
nodes = ["a", "b", "c"]
[[topology.links]]
from = "a"
to = "b"
rate = "10Mbps"
delay = "5ms"
[[topology.links]]
from = "b"
to = "c"
rate = "2Mbps"
delay = "5ms"
name = "slow"
queue = { kind = "droptail", limit = 20 }
[[topology.routes]]
path = ["a", "b", "c"]
[[flows]]
kind = "cbr"
name = "probe"
from = "a"
to = "c"
rate = "4Mbps"
[[losses]]
link = "a->b"
flow = "probe"
kind = "schedule"
[[losses.steps]]
at = "1s"
kind = "periodic"
every = 10
[[losses.steps]]
at = "2s"
kind = "bernoulli"
p = 0.0
"#;

#[test]
fn a_graph_with_routes_and_a_loss_schedule_runs() {
    let scenario = Scenario::from_toml_str(GRAPH).unwrap();
    let results = run(&scenario, 3).unwrap();
    let probe = results.flow("probe").unwrap();
    // 500 packets/s offered; 1 in 10 dropped between 1 s and 2 s only.
    assert_eq!(probe.record.totals.packets_sent, 2500);
    let a_b = results.link("a->b").unwrap();
    assert_eq!(a_b.record.totals.loss_model_drops, 50);
    let slow = results.link("slow").unwrap();
    assert!(slow.record.totals.queue_drops > 0);
    assert!((slow.record.totals.utilization - 1.0).abs() < 0.01);
    assert!(results.link("slow_reverse").is_some());
}

/// Replaces the first occurrence of `from` in the example with `to`, parses, and returns the
/// error text.
fn error_of(base: &str, from: &str, to: &str) -> String {
    assert!(base.contains(from), "{from:?} not in the base scenario");
    let text = base.replacen(from, to, 1);
    match Scenario::from_toml_str(&text) {
        Ok(_) => panic!("accepted: {to}"),
        Err(error) => error.to_string(),
    }
}

#[test]
fn malformed_files_give_specific_errors() {
    let base = example();
    let cases: &[(&str, &str, &str)] = &[
        (
            r#"duration = "60s""#,
            r#"duration = "sixty""#,
            "duration: expected a duration like",
        ),
        (
            r#"rate = "15Mbps""#,
            r#"rate = "15 furlongs""#,
            "topology.bottleneck.rate",
        ),
        (
            r#"rate = "15Mbps""#,
            r#"rate = "-15Mbps""#,
            "topology.bottleneck.rate",
        ),
        (
            r#"rate = "15Mbps""#,
            r#"rate = "0Mbps""#,
            "topology.bottleneck.rate: expected a rate above 0",
        ),
        (r#"hosts = 16"#, r#"hosts = -2"#, "topology.hosts"),
        (r#"hosts = 16"#, r#"hsots = 16"#, "did you mean `hosts`?"),
        (
            r#"start = {"#,
            r#"strat = {"#,
            "flows[0].strat: unknown key; did you mean `start`?",
        ),
        (
            r#"start = { uniform = ["0s", "10s"] }"#,
            r#"start = "ten""#,
            r#"flows[0].start: expected a duration like "10s", found "ten""#,
        ),
        (
            r#"kind = "tcp""#,
            r#"kind = "tcpp""#,
            r#"did you mean "tcp"?"#,
        ),
        (
            r#"kind = "dumbbell""#,
            r#"kind = "dumbell""#,
            r#"did you mean "dumbbell"?"#,
        ),
        (
            r#"kind = "red""#,
            r#"kind = "blue""#,
            "topology.bottleneck.queue.kind",
        ),
        (
            r#"max_th = 50"#,
            r#"max_th = 5"#,
            "topology.bottleneck.queue.max_th",
        ),
        (
            r#"min_th = 10"#,
            r#"min_th = -1"#,
            "topology.bottleneck.queue.min_th",
        ),
        (
            r#"rtt = { uniform = ["80ms", "120ms"] }"#,
            r#"rtt = { uniform = ["10ms", "120ms"] }"#,
            "topology.access.rtt",
        ),
        (
            r#"rtt = { uniform = ["80ms", "120ms"] }"#,
            r#"rtt = { uniform = ["120ms", "80ms"] }"#,
            "topology.access.rtt.uniform",
        ),
        (
            r#"variant = "sack""#,
            r#"varaint = "sack""#,
            "flows[0].varaint: unknown key; did you mean `variant`?",
        ),
        (r#"window = 1000"#, r#"window = 0"#, "flows[0].window"),
        (r#"count = 8"#, r#"count = 0"#, "flows[0].count"),
        (
            r#"preset = "floyd2000""#,
            r#"preset = "floyd2001""#,
            r#"flows[1].preset: expected one of"#,
        ),
        (r#"bin = "100ms""#, r#"bin = "0s""#, "monitor.bin"),
        (
            r#"[monitor]"#,
            r#"[monitr]"#,
            "monitr: unknown key; did you mean `monitor`?",
        ),
        (
            r#"duration = "60s""#,
            r#"duration = "60s"
duration = "61s""#,
            "invalid TOML",
        ),
    ];
    for (from, to, expected) in cases {
        let message = error_of(&base, from, to);
        assert!(
            message.contains(expected),
            "{to:?}: expected {expected:?} in {message:?}"
        );
        assert!(!message.contains('\n'), "{message:?} is not one line");
    }
}

#[test]
fn references_to_missing_things_are_refused() {
    let cases: &[(&str, &str, &str)] = &[
        (
            r#"from = "a"
to = "c""#,
            r#"from = "a"
to = "nowhere""#,
            "flows[0].to: expected the name of a node of the topology, found \"nowhere\"",
        ),
        (r#"link = "a->b""#, r#"link = "b->a->c""#, "losses[0].link"),
        (r#"flow = "probe""#, r#"flow = "prob""#, "losses[0].flow"),
        (
            r#"path = ["a", "b", "c"]"#,
            r#"path = ["a", "c"]"#,
            "topology.routes[0].path",
        ),
        (
            r#"path = ["a", "b", "c"]"#,
            r#"path = ["a", "x"]"#,
            "topology.routes[0].path[1]",
        ),
        (r#"every = 10"#, r#"every = 0"#, "losses[0].steps[0].every"),
        (r#"p = 0.0"#, r#"p = 1.5"#, "losses[0].steps[1].p"),
        (r#"at = "2s""#, r#"at = "0.5s""#, "losses[0].steps[1].at"),
        (
            r#"nodes = ["a", "b", "c"]"#,
            r#"nodes = ["a", "b", "c", "a"]"#,
            "topology.nodes[3]",
        ),
    ];
    for (from, to, expected) in cases {
        let message = error_of(GRAPH, from, to);
        assert!(
            message.contains(expected),
            "{to:?}: expected {expected:?} in {message:?}"
        );
    }
    // A node with no route to the flow's sink.
    let island = GRAPH
        .replacen(
            r#"nodes = ["a", "b", "c"]"#,
            r#"nodes = ["a", "b", "c", "d"]"#,
            1,
        )
        .replacen("from = \"a\"\nto = \"c\"", "from = \"a\"\nto = \"d\"", 1);
    let message = Scenario::from_toml_str(&island).unwrap_err().to_string();
    assert!(
        message.contains("flows[0]") && message.contains("no route"),
        "{message}"
    );
}

#[test]
fn errors_carry_their_path() {
    let error = Scenario::from_toml_str("duration = 5").unwrap_err();
    assert_eq!(error.path(), Some("duration"));
    assert!(matches!(error, ScenarioError::Invalid { .. }));
    let error = Scenario::from_toml_str(r#"duration = "5s""#).unwrap_err();
    assert!(matches!(error, ScenarioError::Missing { .. }), "{error}");
}

#[test]
fn ns2_codes_link_selection_and_size_bounds() {
    let base = example();
    // ns-2's q_weight_ codes are accepted.
    let coded = base.replacen("gentle = true }", "gentle = true, w_q = -1 }", 1);
    Scenario::from_toml_str(&coded).unwrap();
    let zero = base.replacen("gentle = true }", "gentle = true, w_q = 1.5 }", 1);
    let message = Scenario::from_toml_str(&zero).unwrap_err().to_string();
    assert_eq!(
        message,
        "topology.bottleneck.queue.w_q: expected a value in (0, 1], found 1.5"
    );
    // An empty list bins no link; "all" bins every link.
    let none = base.replacen(r#"bin = "100ms""#, "bin = \"100ms\"\nlinks = []", 1);
    let none = Scenario::from_toml_str(&none).unwrap();
    let mut short = none.clone();
    short.duration = std::time::Duration::from_secs(1);
    let results = run(&short, 1).unwrap();
    assert!(results
        .links
        .iter()
        .all(|l| l.record.bins.arrivals.is_empty()));
    let all = base.replacen(r#"bin = "100ms""#, "bin = \"100ms\"\nlinks = \"all\"", 1);
    let mut all = Scenario::from_toml_str(&all).unwrap();
    all.duration = std::time::Duration::from_secs(1);
    let results = run(&all, 1).unwrap();
    assert!(results
        .links
        .iter()
        .all(|l| l.record.bins.arrivals.len() == 10));
    // Bounds that keep the routing table small.
    let huge = base.replacen("hosts = 16", "hosts = 3000", 1);
    let message = Scenario::from_toml_str(&huge).unwrap_err().to_string();
    assert!(
        message.starts_with("topology.hosts: expected between 1 and 2500"),
        "{message}"
    );
}

#[test]
fn the_measure_window_is_read_and_checked_against_the_duration() {
    let with = |table: &str| {
        GRAPH.replacen(
            "duration = \"5s\"",
            &format!("duration = \"5s\"\n{table}"),
            1,
        )
    };
    let whole = Scenario::from_toml_str(GRAPH).unwrap();
    assert_eq!(whole.measure.from, std::time::Duration::ZERO);
    assert_eq!(whole.measure.to, std::time::Duration::from_secs(5));
    let tail = Scenario::from_toml_str(&with("[measure]\nfrom = \"2s\"")).unwrap();
    assert_eq!(tail.measure.from, std::time::Duration::from_secs(2));
    assert_eq!(tail.measure.to, std::time::Duration::from_secs(5));
    let middle = Scenario::from_toml_str(&with("[measure]\nfrom = \"1s\"\nto = \"3s\"")).unwrap();
    assert_eq!(middle.measure.to, std::time::Duration::from_secs(3));
    for (table, expected) in [
        ("[measure]\nfrom = \"5s\"", "measure.from: expected a time before the end of the run (5s), found 5s"),
        ("[measure]\nto = \"6s\"", "measure.to: expected a time after measure.from (0s) and at most the run's duration (5s), found 6s"),
        ("[measure]\nfrom = \"2s\"\nto = \"2s\"", "measure.to: expected a time after measure.from (2s)"),
        ("[measure]\nfrom = \"soon\"", "measure.from: expected a duration"),
        ("[measure]\nstart = \"1s\"", "measure.start"),
    ] {
        let error = Scenario::from_toml_str(&with(table)).unwrap_err().to_string();
        assert!(error.starts_with(expected), "{table:?}: {error}");
    }
}

#[test]
fn results_carry_each_flows_stop_and_forward_path() {
    let stopped = GRAPH.replacen("rate = \"4Mbps\"", "rate = \"4Mbps\"\nstop = \"3s\"", 1);
    let results = run(&Scenario::from_toml_str(&stopped).unwrap(), 1).unwrap();
    let probe = results.flow("probe").unwrap();
    assert_eq!(probe.stop, Some(std::time::Duration::from_secs(3)));
    let names: Vec<&str> = probe
        .path
        .iter()
        .map(|link| results.links[link.0 as usize].name.as_str())
        .collect();
    assert_eq!(names, ["a->b", "slow"]);
    let open = run(&Scenario::from_toml_str(GRAPH).unwrap(), 1).unwrap();
    assert_eq!(open.flow("probe").unwrap().stop, None);
}
