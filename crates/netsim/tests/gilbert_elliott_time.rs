//! The time-based Gilbert-Elliott model (`kind = "gilbert_elliott"`, `sojourn = "time"`) as a
//! scenario uses it: stays in time as ns-2's `ErrorModel/TwoState` with `unit time`, every
//! packet of a Bad stay dropped, deterministic per seed, and its keys checked by name.

use std::time::Duration;

use netsim::loss::{LossModel, LossModelConfig};
use netsim::packet::{FlowId, NodeId, Packet, Payload};
use netsim::rng::stream;
use netsim::scenario::{run, Scenario};
use netsim::Time;

fn scenario(loss: &str) -> String {
    format!(
        r#"
duration = "10s"
[topology]
kind = "dumbbell"
hosts = 1
bottleneck = {{ rate = "10Mbps", delay = "5ms" }}
[[flows]]
kind = "cbr"
rate = "800kbps"
[[losses]]
link = "bottleneck"
kind = "gilbert_elliott"
{loss}
"#
    )
}

fn error_of(loss: &str) -> String {
    Scenario::from_toml_str(&scenario(loss))
        .unwrap_err()
        .to_string()
}

#[test]
fn fixed_stays_drop_exactly_the_packets_of_the_bad_stays() {
    // 100 packets/s from t = 0; Good 1 s, Bad 250 ms: Bad over [1, 1.25), [2.25, 2.5), ...
    // eight stays in 10 s, each holding 25 packets.
    let text = scenario(
        r#"sojourn = "time"
good = "1s"
bad = "250ms""#,
    );
    let result = run(&Scenario::from_toml_str(&text).unwrap(), 1).unwrap();
    let flow = &result.flows[0];
    assert_eq!(flow.record.totals.packets_sent, 1000);
    assert_eq!(flow.record.totals.packets_dropped, 8 * 25);
    assert_eq!(
        run(&Scenario::from_toml_str(&text).unwrap(), 2)
            .unwrap()
            .flows[0]
            .record
            .totals
            .packets_dropped,
        200
    );
}

#[test]
fn random_stays_are_deterministic_per_seed() {
    let text = scenario(
        r#"sojourn = "time"
good = { exponential = "500ms" }
bad = { uniform = ["20ms", "80ms"] }"#,
    );
    let scenario = Scenario::from_toml_str(&text).unwrap();
    let a = run(&scenario, 3).unwrap();
    assert_eq!(a, run(&scenario, 3).unwrap());
    let drops = |seed| {
        run(&scenario, seed).unwrap().flows[0]
            .record
            .totals
            .packets_dropped
    };
    assert_ne!(drops(3), drops(4));
    // About a tenth of the time in Bad (50 of 550 ms): between 2% and 25% of 1000 packets.
    assert!((20..250).contains(&drops(3)), "{}", drops(3));
}

#[test]
fn a_silent_spell_does_not_hold_the_channel_in_bad() {
    // Per packet, a chain in Bad stays there until packets come; in time, a sender silent
    // through the Bad stay finds Good again. Good 100 ms, Bad 100 ms: a packet at 150 ms is
    // dropped, the next at 10.05 s (in a Good stay, [10.0, 10.1)) is not.
    let config = LossModelConfig::GilbertElliottTime {
        good: netsim::dist::DurationDist::Fixed(Duration::from_millis(100)),
        bad: netsim::dist::DurationDist::Fixed(Duration::from_millis(100)),
        loss_in_good: 0.0,
        loss_in_bad: 1.0,
    };
    let mut model = LossModel::new(&config, None);
    let mut rng = stream(1, "test");
    let packet = Packet::new(FlowId(0), 0, 1000, NodeId(0), Time::ZERO, Payload::Cbr);
    assert!(model.should_drop(Time::from_secs_f64(0.15), &packet, &mut rng));
    assert!(!model.should_drop(Time::from_secs_f64(10.05), &packet, &mut rng));
    assert_eq!(config.expected_loss_rate(), Some(0.5));
}

#[test]
fn keys_are_checked_by_name() {
    assert_eq!(
        error_of(
            r#"sojourn = "time"
good = "1s""#
        ),
        r#"losses[0].bad: missing; expected a stay length like "50ms", { uniform = ["10ms", "90ms"] } or { exponential = "1s" }"#
    );
    assert!(error_of(
        r#"sojourn = "time"
good = "1s"
bad = "1s"
p_good_to_bad = 0.1"#
    )
    .starts_with(
        r#"losses[0].p_good_to_bad: expected no p_good_to_bad with sojourn = "time", which takes good and bad"#
    ));
    assert!(error_of(
        r#"p_good_to_bad = 0.1
p_bad_to_good = 0.5
good = "1s""#
    )
    .starts_with("losses[0].good: expected no good with sojourn = \"packet\""));
    assert!(error_of(r#"sojourn = "bytes""#).starts_with("losses[0].sojourn: expected one of"));
    assert!(error_of(
        r#"sojourn = "time"
good = "100ns"
bad = "1s""#
    )
    .starts_with("losses[0].good: expected valid loss-model parameters, found good has a mean"));
    assert!(error_of(
        r#"sojourn = "time"
good = "1s"
bad = "1s"
loss_in_bad = 2.0"#
    )
    .starts_with("losses[0].loss_in_bad:"));
}
