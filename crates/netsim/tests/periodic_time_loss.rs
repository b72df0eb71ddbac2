//! The time-periodic loss model in a scenario (docs/loss-models.md, "PeriodicTime"): one drop
//! per interval whatever the flow's rate, steps counted from their own start, and parse errors
//! that name the key.

mod common;

use common::{simulate, two_nodes};
use netsim::results::FlowResult;
use netsim::scenario::Scenario;

/// The bins (indices) in which the flow lost a packet; each must hold exactly one drop.
fn drop_bins(flow: &FlowResult) -> Vec<usize> {
    let drops = flow.record.bins.dropped_packets.to_vec();
    assert!(drops.iter().all(|&d| d <= 1), "{drops:?}");
    (0..drops.len()).filter(|&i| drops[i] == 1).collect()
}

/// A CBR flow of 100 packets/s (800 kb/s of 1000-byte packets) on `two_nodes`'s link `ab`.
const CBR: &str = "kind = \"cbr\"\nrate = \"800kbps\"";

#[test]
fn one_drop_per_interval_at_any_rate() {
    // Deadlines at 0.5, 1.5, ..., 9.5 s: ten drops in 10 s, at 100 packets/s and at 400.
    let loss = "[[losses]]\nlink = \"ab\"\nkind = \"periodic_time\"\ninterval = \"1s\"\noffset = \"500ms\"\n";
    for rate in ["800kbps", "3200kbps"] {
        let flow = format!("kind = \"cbr\"\nrate = \"{rate}\"");
        let results = simulate(&two_nodes("10s", "100ms", &flow, loss), 1);
        let f = results.flow("f").unwrap();
        assert_eq!(f.record.totals.packets_dropped, 10, "at {rate}");
        // Exactly one drop in each bin holding a deadline ([0.5, 0.6), [1.5, 1.6) ... s).
        let expected: Vec<usize> = (0..10).map(|k| 5 + 10 * k).collect();
        assert_eq!(drop_bins(f), expected, "at {rate}");
    }
}

#[test]
fn the_offset_defaults_to_one_interval_and_steps_count_from_their_start() {
    // Default offset: deadlines at 2, 4, 6, 8 s (four drops in 10 s; 10 s itself is the end).
    let loss = "[[losses]]\nlink = \"ab\"\nkind = \"periodic_time\"\ninterval = \"2s\"\n";
    let results = simulate(&two_nodes("10s", "100ms", CBR, loss), 1);
    assert_eq!(drop_bins(results.flow("f").unwrap()), vec![20, 40, 60, 80]);
    // As a schedule step from 5.3 s with a 1 s interval and no offset: 5.3, 6.3, ..., 9.3 s.
    let step = "[[losses]]\nlink = \"ab\"\nkind = \"schedule\"\n[[losses.steps]]\nat = \"5300ms\"\nkind = \"periodic_time\"\ninterval = \"1s\"\noffset = \"0s\"\n";
    let results = simulate(&two_nodes("10s", "100ms", CBR, step), 1);
    assert_eq!(
        drop_bins(results.flow("f").unwrap()),
        vec![53, 63, 73, 83, 93]
    );
}

#[test]
fn parse_errors_name_the_key() {
    let zero = two_nodes(
        "1s",
        "100ms",
        CBR,
        "[[losses]]\nlink = \"ab\"\nkind = \"periodic_time\"\ninterval = \"0s\"\n",
    );
    let err = Scenario::from_toml_str(&zero).unwrap_err().to_string();
    assert!(err.contains("losses[0].interval"), "{err}");
    assert!(err.contains("must be positive"), "{err}");
    let missing = two_nodes(
        "1s",
        "100ms",
        CBR,
        "[[losses]]\nlink = \"ab\"\nkind = \"periodic_time\"\n",
    );
    let err = Scenario::from_toml_str(&missing).unwrap_err().to_string();
    assert!(err.contains("losses[0].interval"), "{err}");
}
