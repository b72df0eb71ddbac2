//! `monitor.drop_log`: the send times of the logged flows' dropped packets, on a short congested
//! dumbbell run (TCP SACK, TFRC, CBR). The log only records, holds one send time per drop up to
//! its cap, and regrouped with the monitor's RTT gives the monitor's loss event count.

use netsim::results::Results;
use netsim::scenario::Scenario;
use tfrc::Time;

const SCENARIO: &str = r#"
duration = "8s"
[monitor]
bin = "100ms"
[topology]
kind = "dumbbell"
hosts = 3
[topology.bottleneck]
rate = "2Mbps"
delay = "20ms"
queue = { kind = "droptail", limit = 15 }
[topology.access]
rate = "100Mbps"
delay = "2ms"
[[flows]]
kind = "tcp"
variant = "sack"
[[flows]]
kind = "tfrc"
[[flows]]
kind = "cbr"
rate = "300kbps"
"#;

fn with_monitor_keys(keys: &str) -> String {
    SCENARIO.replace("bin = \"100ms\"\n", &format!("bin = \"100ms\"\n{keys}\n"))
}

fn run(text: &str) -> Results {
    let scenario = Scenario::from_toml_str(text).unwrap();
    netsim::scenario::run(&scenario, scenario.seed).unwrap()
}

/// The loss events of `send_times` (in drop order) grouped with `rtt`: the monitor's rule.
fn regroup(send_times: &[Time], rtt: std::time::Duration) -> u64 {
    let mut start: Option<Time> = None;
    let mut events = 0;
    for &sent in send_times {
        if start.is_none_or(|first| sent > first + rtt) {
            start = Some(sent);
            events += 1;
        }
    }
    events
}

#[test]
fn the_log_records_every_drop_and_changes_nothing_else() {
    let plain = run(SCENARIO);
    let names: Vec<String> = plain.flows.iter().map(|f| f.name.clone()).collect();
    let logged = run(&with_monitor_keys(&format!(
        "drop_log = [{:?}, {:?}]",
        names[0], names[1]
    )));
    let mut stripped = logged.clone();
    for flow in &mut stripped.flows {
        flow.record.drop_log = None;
    }
    stripped.scenario.clone_from(&plain.scenario);
    assert_eq!(stripped, plain);
    for flow in &logged.flows[..2] {
        let log = flow.record.drop_log.as_ref().expect("logged");
        assert!(!log.overflowed);
        assert!(
            flow.record.totals.packets_dropped > 0,
            "{} saw no drops",
            flow.name
        );
        assert_eq!(
            log.send_times.len() as u64,
            flow.record.totals.packets_dropped
        );
        assert_eq!(
            regroup(&log.send_times, flow.loss_event_rtt),
            flow.record.totals.loss_events
        );
    }
    assert_eq!(logged.flows[2].record.drop_log, None);
}

#[test]
fn the_log_stops_at_its_limit_and_says_so() {
    let plain = run(SCENARIO);
    let name = plain.flows[0].name.clone();
    let logged = run(&with_monitor_keys(&format!(
        "drop_log = [{name:?}]\ndrop_log_limit = 3"
    )));
    let log = logged.flows[0].record.drop_log.as_ref().unwrap();
    assert_eq!(log.send_times.len(), 3);
    assert!(log.overflowed);
    assert_eq!(log.limit, 3);
}

#[test]
fn bad_keys_are_errors_naming_the_field() {
    let plain = run(SCENARIO);
    let name = plain.flows[0].name.clone();
    let err = Scenario::from_toml_str(&with_monitor_keys(&format!(
        "drop_log = [{name:?}, {name:?}, \"x\"]"
    )))
    .unwrap_err()
    .to_string();
    assert_eq!(
        err,
        "monitor.drop_log[2]: expected the name of a flow, found \"x\""
    );
    let err = Scenario::from_toml_str(&with_monitor_keys("drop_log_limit = 0"))
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("monitor.drop_log_limit:"), "{err}");
    let err = Scenario::from_toml_str(&with_monitor_keys("drop_log = \"tcp0\""))
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("monitor.drop_log:"), "{err}");
}
