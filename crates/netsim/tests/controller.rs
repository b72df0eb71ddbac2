//! The congestion-controller interface (docs/controllers.md) against the built-in senders: the
//! native Reno and CUBIC controllers, run through the interface, give bit-identical results to
//! the variants they re-express, across loss recoveries, presets, GAIMD's parameters, random
//! loss, a shallow queue and idle restarts; and a controller's misbehaviour ends the run with
//! an error naming it, the callback and the time.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{bernoulli_on_ab, two_nodes_over};
use netsim::agent::tcp::controller::{
    set_controller_resolver, AckSample, CcResult, CcState, CcWindow, CongestionControl,
    ControllerFactory, ControllerResolver, Reduction, RenoController,
};
use netsim::agent::TcpConfig;
use netsim::results::Results;
use netsim::scenario::Scenario;

/// One flow `f` with `flow`'s keys over a 10 Mb/s, 20 ms link with a 25-packet DropTail queue
/// and 1% random loss, for 30 s, optionally cycling ON 4 s / OFF 2 s (idle restarts).
fn scenario(flow: &str, on_off: bool) -> String {
    let flow = if on_off {
        format!("{flow}\non_off = {{ on = \"4s\", off = \"2s\" }}")
    } else {
        flow.to_string()
    };
    two_nodes_over(
        "10Mbps",
        "20ms",
        25,
        "30s",
        "500ms",
        &flow,
        &bernoulli_on_ab(0.01),
    )
}

/// Everything a run measured, but the flow's labels (a controlled flow's variant is its loss
/// recovery, "sack" for CUBIC).
fn measured(results: &Results) -> String {
    let flows: Vec<String> = results
        .flows
        .iter()
        .map(|f| format!("{:?}", f.record))
        .collect();
    format!("{flows:?}\n{:?}\n{}", results.links, results.events)
}

/// Runs `builtin` and `controlled` (flow keys) on the same path and seed; both must measure
/// exactly the same.
fn assert_identical(builtin: &str, controlled: &str, on_off: bool, seed: u64) {
    let a = common::simulate(&scenario(builtin, on_off), seed);
    let b = common::simulate(&scenario(controlled, on_off), seed);
    assert!(
        a.flows[0].record.totals.packets_received > 500,
        "{builtin}: the flow barely ran"
    );
    assert!(
        measured(&a) == measured(&b),
        "{builtin} and {controlled} differ (seed {seed}, on_off {on_off})"
    );
}

#[test]
fn the_reno_controller_reproduces_every_reno_family_sender_bit_for_bit() {
    let cases = [
        ("tahoe", "ns2_2000", ""),
        ("reno", "ns2_2000", "window = 100"),
        ("newreno", "ns2_35", "window = 100"),
        ("sack", "ns2_35", "window = 100"),
        ("sack", "rfc", ""),
        ("sack", "linux", ""),
        ("newreno", "linux", ""),
        // GAIMD(0.31, 7/8) with both decrease rules, on Reno and on SACK.
        (
            "reno",
            "ns2_2000",
            "window = 100\nincrease = 0.31\ndecrease = 0.875",
        ),
        (
            "sack",
            "rfc",
            "increase = 0.31\ndecrease = 0.875\ndecrease_rule = \"paper\"",
        ),
        ("reno", "ns2_35", "precision_reduce = false\nmax_cwnd = 12"),
    ];
    for (i, (variant, preset, extra)) in cases.into_iter().enumerate() {
        let builtin =
            format!("kind = \"tcp\"\nvariant = \"{variant}\"\npreset = \"{preset}\"\n{extra}");
        let controlled = format!("{builtin}\ncontroller = \"reno\"");
        assert_identical(&builtin, &controlled, i % 3 == 2, i as u64 + 1);
    }
}

#[test]
fn the_cubic_controller_on_sack_reproduces_the_cubic_variant_bit_for_bit() {
    for (i, (preset, extra)) in [
        ("linux", ""),
        ("rfc", ""),
        ("linux", "sack_recovery = \"sack1\"\nrack = false"),
    ]
    .into_iter()
    .enumerate()
    {
        let builtin =
            format!("kind = \"tcp\"\nvariant = \"cubic\"\npreset = \"{preset}\"\n{extra}");
        let controlled = format!(
            "kind = \"tcp\"\nvariant = \"sack\"\npreset = \"{preset}\"\n{extra}\ncontroller = \"cubic\""
        );
        assert_identical(&builtin, &controlled, i == 1, i as u64 + 7);
    }
}

#[test]
fn a_controller_runs_only_on_a_loss_recovery_variant_and_must_exist() {
    for variant in ["cubic", "bbr", "vegas"] {
        let text = scenario(
            &format!("kind = \"tcp\"\nvariant = \"{variant}\"\ncontroller = \"reno\""),
            false,
        );
        let error = Scenario::from_toml_str(&text).unwrap_err().to_string();
        assert!(error.contains("variant"), "{error}");
    }
    let text = scenario("kind = \"tcp\"\ncontroller = \"nosuch\"", false);
    let error = Scenario::from_toml_str(&text).unwrap_err().to_string();
    assert!(
        error.contains("controller") && error.contains("nosuch"),
        "{error}"
    );
}

/// Test controllers that misbehave: Reno until the first loss, then a NaN window
/// (`test:nan`), an error (`test:error`), or a failure to be made at all (`test:unmade`).
#[derive(Debug)]
struct Misbehaving {
    reno: RenoController,
    error: bool,
}

impl CongestionControl for Misbehaving {
    fn name(&self) -> &str {
        if self.error {
            "test:error"
        } else {
            "test:nan"
        }
    }

    fn cong_avoid(&mut self, state: &CcState, ack: &AckSample) -> CcResult {
        self.reno.cong_avoid(state, ack)
    }

    fn ssthresh(&mut self, state: &CcState, _reduction: Reduction) -> CcResult {
        if self.error {
            Err("no idea what to do".to_string())
        } else {
            Ok(Some(CcWindow::new(f64::NAN, state.ssthresh)))
        }
    }
}

#[derive(Debug)]
struct TestControllers(&'static str);

impl ControllerFactory for TestControllers {
    fn build(
        &self,
        config: &TcpConfig,
        _limit: Duration,
    ) -> Result<Box<dyn CongestionControl>, String> {
        match self.0 {
            "test:unmade" => Err("cannot be made".to_string()),
            name => Ok(Box::new(Misbehaving {
                reno: RenoController::new(config),
                error: name == "test:error",
            })),
        }
    }
}

struct TestResolver;

impl ControllerResolver for TestResolver {
    fn resolve(&self, name: &str) -> Result<Arc<dyn ControllerFactory>, String> {
        match name {
            "test:nan" => Ok(Arc::new(TestControllers("test:nan"))),
            "test:error" => Ok(Arc::new(TestControllers("test:error"))),
            "test:unmade" => Ok(Arc::new(TestControllers("test:unmade"))),
            _ => Err("a test controller".to_string()),
        }
    }
}

#[test]
fn a_misbehaving_controller_fails_the_run_naming_itself_the_callback_and_the_time() {
    set_controller_resolver(Box::new(TestResolver));
    for (name, callback, reason) in [
        ("test:nan", "ssthresh", "cwnd must be a finite number"),
        ("test:error", "ssthresh", "no idea what to do"),
        ("test:unmade", "__init__", "cannot be made"),
    ] {
        let text = scenario(&format!("kind = \"tcp\"\ncontroller = \"{name}\""), false);
        let scenario = Scenario::from_toml_str(&text).unwrap();
        let mut simulation = scenario.simulation(1).unwrap();
        let end = simulation.end();
        simulation.run_until(end);
        let failure = simulation.agent_failure().expect("the run failed");
        assert!(
            failure.contains(&format!("{name:?}"))
                && failure.contains(callback)
                && failure.contains(reason)
                && failure.contains("flow \"f\"")
                && failure.contains(" s: "),
            "{failure}"
        );
        if name != "test:unmade" {
            // The failure came at the first loss, well inside the run, and the sender went
            // silent: far fewer packets than a working flow sends.
            assert!(!failure.contains("t = 0.000000 s"), "{failure}");
        }
        let results = simulation.finish();
        assert!(results.flows[0].record.totals.packets_received < 3000);
    }
    // A native controller never fails.
    let text = scenario("kind = \"tcp\"\ncontroller = \"reno\"", false);
    let mut simulation = Scenario::from_toml_str(&text)
        .unwrap()
        .simulation(1)
        .unwrap();
    let end = simulation.end();
    simulation.run_until(end);
    assert_eq!(simulation.agent_failure(), None);
}
