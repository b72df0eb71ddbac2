//! Host timing jitter (`host_jitter`) against DropTail phase effects (Floyd and Jacobson 1992):
//! two TCP flows whose RTTs differ by less than one packet's transmission time share a
//! DropTail bottleneck. With the simulator's exact clock the split depends on that difference
//! alone, and wildly; with each packet leaving its host U(0, one transmission time) late it
//! does not.

mod common;

use common::simulate;

/// Flow `a`'s share of the bytes delivered from 20 s to 100 s: two Reno flows (the ns2_2000
/// preset, window 100) from `s1` and `s2` to `d` over a 1.5 Mb/s bottleneck with 15 packets of
/// DropTail buffer, `s2`'s access link `delta_ms` longer than `s1`'s.
fn share_of_a(delta_ms: f64, jitter: &str, seed: u64) -> f64 {
    let flow = |name: &str, from: &str| {
        format!(
            "[[flows]]\nname = \"{name}\"\nfrom = \"{from}\"\nto = \"d\"\nkind = \"tcp\"\n\
             variant = \"reno\"\npreset = \"ns2_2000\"\nwindow = 100\nhost_jitter = \"{jitter}\"\n"
        )
    };
    let text = format!(
        r#"
duration = "100s"
[monitor]
bin = "1s"
[topology]
kind = "graph"
nodes = ["s1", "s2", "r", "d"]
[[topology.links]]
from = "s1"
to = "r"
rate = "100Mbps"
delay = "5ms"
duplex = true
[[topology.links]]
from = "s2"
to = "r"
rate = "100Mbps"
delay = "{}ms"
duplex = true
[[topology.links]]
from = "r"
to = "d"
name = "bottleneck"
rate = "1.5Mbps"
delay = "20ms"
duplex = true
queue = {{ kind = "droptail", limit = 15 }}
{}{}"#,
        5.0 + delta_ms,
        flow("a", "s1"),
        flow("b", "s2")
    );
    let results = simulate(&text, seed);
    let bytes = |name: &str| -> u64 {
        let bins = &results.flow(name).unwrap().record.bins.received_bytes;
        bins.to_vec()[20..].iter().sum()
    };
    let (a, b) = (bytes("a"), bytes("b"));
    a as f64 / (a + b) as f64
}

#[test]
fn jitter_of_one_transmission_time_removes_the_phase_effect() {
    // Differences of 3.9, 5.3 and 7.1 ms: all within one 1000-byte packet at 1.5 Mb/s (5.3 ms).
    let deltas = [3.9, 5.3, 7.1];
    let spread = |shares: &[f64]| {
        let (lo, hi) = shares
            .iter()
            .fold((f64::MAX, f64::MIN), |(lo, hi), &s| (lo.min(s), hi.max(s)));
        hi - lo
    };
    // Without jitter a's share swings from most of the link to almost none (measured: 0.74,
    // 0.14, 0.05; the seed only moves the TCP clocks' phase).
    let exact: Vec<f64> = deltas.iter().map(|&d| share_of_a(d, "0s", 1)).collect();
    assert!(spread(&exact) > 0.5, "{exact:?}");
    // With it (mean over 4 seeds) the share hardly depends on the difference (0.33-0.39).
    let jittered: Vec<f64> = deltas
        .iter()
        .map(|&d| {
            (1..=4)
                .map(|seed| share_of_a(d, "5.3ms", seed))
                .sum::<f64>()
                / 4.0
        })
        .collect();
    assert!(spread(&jittered) < 0.15, "{jittered:?}");
    // Seeds now matter: the host draws from its own stream.
    assert_ne!(share_of_a(5.3, "5.3ms", 1), share_of_a(5.3, "5.3ms", 2));
}

#[test]
fn host_jitter_is_checked() {
    let text = "duration = \"1s\"\n[topology]\nkind = \"dumbbell\"\nhosts = 1\n\
                bottleneck = { rate = \"1Mbps\", delay = \"1ms\" }\n\
                [[flows]]\nkind = \"cbr\"\nrate = \"100kbps\"\nhost_jitter = \"2s\"\n";
    let error = netsim::scenario::Scenario::from_toml_str(text).unwrap_err();
    assert!(
        error.to_string().contains("flows[0].host_jitter"),
        "{error}"
    );
}
