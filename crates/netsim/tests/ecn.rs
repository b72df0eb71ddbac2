//! ECN for TCP (RFC 3168; docs/tcp.md, "ECN"): through a marking RED queue a flow with
//! `ecn = true` is held back by marks instead of drops, while the same flow without ECN loses
//! packets; a variant without ECN refuses the key.

mod common;

use common::{last, simulate, state};
use netsim::results::Results;
use netsim::scenario::Scenario;

/// Bins of slow start and its overshoot, left out of the comparisons (3 s).
const WARM_UP: usize = 30;

/// Two linux-preset flows of `variant` over a 10 Mb/s, 20 ms bottleneck with a marking RED
/// queue, for 20 s; `ecn` as given.
fn red_dumbbell(variant: &str, ecn: bool) -> Results {
    red_path(&format!(
        "variant = \"{variant}\"\npreset = \"linux\"\necn = {ecn}"
    ))
}

/// Two flows with `flow`'s keys over [`red_dumbbell`]'s path.
fn red_path(flow: &str) -> Results {
    let text = format!(
        r#"
duration = "20s"
[monitor]
bin = "100ms"
[topology]
kind = "dumbbell"
hosts = 2
bottleneck = {{ rate = "10Mbps", delay = "20ms", queue = {{ kind = "red", ecn = true, limit = 100, mean_packet_size = 1500 }} }}
access = {{ rate = "1Gbps", rtt = "40ms" }}
[[flows]]
kind = "tcp"
{flow}
count = 2
start = {{ uniform = ["0s", "1s"] }}
"#
    );
    simulate(&text, 1)
}

#[test]
fn marks_replace_drops_and_cut_the_window() {
    for variant in ["sack", "cubic", "newreno"] {
        let with = red_dumbbell(variant, true);
        let without = red_dumbbell(variant, false);
        let marks = with.link("bottleneck").unwrap().queue.marks;
        assert!(marks > 20, "{variant}: {marks} marks");
        assert_eq!(without.link("bottleneck").unwrap().queue.marks, 0);
        for (a, b) in with.flows.iter().zip(&without.flows) {
            // After slow start (whose overshoot RED drops, marking only while its p_b is at
            // most mark_p), the queue drops the flow's packets without ECN, and (almost)
            // none with it; nothing is retransmitted; the flow is as fast.
            let dropped = |f: &netsim::results::FlowResult| -> u32 {
                f.record.bins.dropped_packets.to_vec()[WARM_UP..]
                    .iter()
                    .sum()
            };
            let retransmitted = |f| last(f, "retransmits") - state(f, "retransmits")[WARM_UP - 1];
            assert!(dropped(b) > 10, "{variant} without: {}", dropped(b));
            assert!(dropped(a) <= 2, "{variant} with: {}", dropped(a));
            assert!(retransmitted(b) > 10.0, "{variant}");
            assert!(retransmitted(a) <= 2.0, "{variant}");
            let (ta, tb) = (&a.record.totals, &b.record.totals);
            assert!(ta.packets_received as f64 > 0.8 * tb.packets_received as f64);
            // The window falls between bins with no loss recovery and no timeout: the marks
            // cut it.
            let cwnd = state(a, "cwnd");
            let recoveries = state(a, "fast_retransmits");
            let timeouts = state(a, "timeouts");
            let cuts = (1..cwnd.len())
                .filter(|&i| {
                    cwnd[i] < 0.8 * cwnd[i - 1]
                        && recoveries[i] == recoveries[i - 1]
                        && timeouts[i] == timeouts[i - 1]
                })
                .count();
            assert!(cuts >= 5, "{variant}: {cuts} mark-driven cuts");
        }
    }
}

/// The built-in Reno and CUBIC controllers answer the `ecn` reduction as the built-in senders
/// answer ECN-Echo: the same run, bit for bit.
#[test]
fn the_built_in_controllers_reproduce_the_senders_ecn_response() {
    for (builtin, controlled) in [
        (
            "variant = \"sack\"",
            "variant = \"sack\"\ncontroller = \"reno\"",
        ),
        (
            "variant = \"newreno\"",
            "variant = \"newreno\"\ncontroller = \"reno\"",
        ),
        (
            "variant = \"cubic\"",
            "variant = \"sack\"\ncontroller = \"cubic\"",
        ),
    ] {
        let keys = |v: &str| format!("{v}\npreset = \"linux\"\necn = true");
        let a = red_path(&keys(builtin));
        let b = red_path(&keys(controlled));
        assert!(a.link("bottleneck").unwrap().queue.marks > 20, "{builtin}");
        let records = |r: &Results| -> Vec<String> {
            r.flows.iter().map(|f| format!("{:?}", f.record)).collect()
        };
        assert!(
            records(&a) == records(&b),
            "{builtin} and {controlled} differ"
        );
    }
}

#[test]
fn runs_with_ecn_are_deterministic() {
    let a = red_dumbbell("sack", true);
    let b = red_dumbbell("sack", true);
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
}

#[test]
fn variants_without_ecn_refuse_the_key() {
    for variant in ["bbr", "vegas", "tahoe"] {
        let text = format!(
            "duration = \"1s\"\n[topology]\nkind = \"dumbbell\"\nhosts = 1\nbottleneck = {{ rate = \"10Mbps\", delay = \"20ms\" }}\naccess = {{ rate = \"1Gbps\", rtt = \"80ms\" }}\n[[flows]]\nkind = \"tcp\"\nvariant = \"{variant}\"\npreset = \"linux\"\necn = true\n"
        );
        let message = match Scenario::from_toml_str(&text) {
            Ok(scenario) => netsim::scenario::run(&scenario, 1).unwrap_err().to_string(),
            Err(e) => e.to_string(),
        };
        assert!(message.contains("ecn"), "{variant}: {message}");
    }
}
