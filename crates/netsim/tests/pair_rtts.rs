//! Per-pair RTT lists on the dumbbell (`access.rtt = ["20ms", "200ms"]`): pair i gets the i-th
//! RTT, every flow between `left{i}` and `right{i}` reports it as its base RTT, and a list that
//! does not fit the pairs is refused naming the key.

use std::time::Duration;

use netsim::scenario::{run, Scenario};

fn scenario(hosts: usize, rtt: &str) -> String {
    format!(
        r#"
duration = "1s"
[topology]
kind = "dumbbell"
hosts = {hosts}
bottleneck = {{ rate = "10Mbps", delay = "5ms" }}
access = {{ rtt = {rtt} }}
[[flows]]
kind = "cbr"
rate = "1Mbps"
count = {hosts}
"#
    )
}

fn error_of(text: &str) -> String {
    Scenario::from_toml_str(text).unwrap_err().to_string()
}

#[test]
fn pair_i_gets_the_ith_rtt() {
    let text = scenario(3, r#"["20ms", "200ms", { uniform = ["60ms", "80ms"] }]"#);
    let result = run(&Scenario::from_toml_str(&text).unwrap(), 1).unwrap();
    let rtts: Vec<Duration> = result.flows.iter().map(|f| f.base_rtt).collect();
    // base_rtt is propagation plus the transmission times on the way (the same for every
    // pair here: 1 ms); the four access delays are each rounded down to the nanosecond.
    let transmission = rtts[0].saturating_sub(Duration::from_millis(20));
    assert!(transmission < Duration::from_millis(2), "{rtts:?}");
    let close = |a: Duration, b: Duration| a.abs_diff(b) <= Duration::from_nanos(4);
    assert!(
        close(rtts[1] - transmission, Duration::from_millis(200)),
        "{rtts:?}"
    );
    let third = rtts[2] - transmission;
    assert!(third >= Duration::from_nanos(59_999_996) && third <= Duration::from_millis(80));
    let access = result.link("left1->router_left").unwrap();
    assert_eq!(access.delay, Duration::from_micros(47_500));
}

#[test]
fn a_list_of_equal_rtts_draws_as_one_rtt_does() {
    // Pair i draws from the same stream either way, so the runs are identical.
    let list = scenario(
        2,
        r#"[{ uniform = ["40ms", "90ms"] }, { uniform = ["40ms", "90ms"] }]"#,
    );
    let one = scenario(2, r#"{ uniform = ["40ms", "90ms"] }"#);
    let a = run(&Scenario::from_toml_str(&list).unwrap(), 5).unwrap();
    let b = run(&Scenario::from_toml_str(&one).unwrap(), 5).unwrap();
    assert_eq!(a.flows, b.flows);
    assert_eq!(a.links, b.links);
}

#[test]
fn a_list_that_does_not_fit_the_pairs_is_refused() {
    assert_eq!(
        error_of(&scenario(3, r#"["20ms", "200ms"]"#)),
        "topology.access.rtt: expected one RTT per host pair (3 pairs), found 2 RTTs"
    );
    assert_eq!(
        error_of(&scenario(1, r#"["20ms", "200ms"]"#)),
        "topology.access.rtt: expected one RTT per host pair (1 pair), found 2 RTTs"
    );
    assert_eq!(
        error_of(&scenario(2, "[]")),
        "topology.access.rtt: expected one RTT per host pair (2 pairs), found 0 RTTs"
    );
    assert!(error_of(&scenario(2, r#"["20ms", "5ms"]"#)).starts_with(
        "topology.access.rtt[1]: expected at least the bottleneck's round-trip delay (10ms)"
    ));
    assert!(error_of(&scenario(2, r#"["20ms", "fast"]"#)).starts_with("topology.access.rtt[1]:"));
    let lopsided =
        scenario(2, r#"["20ms", "200ms"]"#).replace("hosts = 2", "left_hosts = 2\nright_hosts = 3");
    assert!(error_of(&lopsided).starts_with("topology.access.rtt:"));
}
