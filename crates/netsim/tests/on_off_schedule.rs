//! `Simulation::on_off_schedules` replays the ON/OFF draws without running: the periods it
//! returns are the ones the run switches (the ns-2 export writes them as start/stop events).

mod common;

use std::time::Duration;

use common::simulate;
use netsim::scenario::Scenario;

/// Three CBR flows of 1 Mb/s (a 1000-byte packet every 8 ms while ON) with exponential ON/OFF
/// periods, random starts and one random stop, binned at 10 ms.
const TEXT: &str = r#"
duration = "120s"
[monitor]
bin = "10ms"
[topology]
kind = "dumbbell"
hosts = 1
bottleneck = { rate = "100Mbps", delay = "10ms", queue = { kind = "droptail", limit = 100000 } }
access = { queue = { kind = "droptail", limit = 100000 } }
[[flows]]
name = "plain"
kind = "cbr"
rate = "1Mbps"
[[flows]]
name = "cycling"
count = 2
kind = "cbr"
rate = "1Mbps"
start = { uniform = ["0s", "5s"] }
on_off = { on = { exponential = "2s" }, off = { exponential = "3s" } }
[[flows]]
name = "stopping"
kind = "cbr"
rate = "1Mbps"
start = { uniform = ["0s", "5s"] }
stop = { uniform = ["40s", "80s"] }
on_off = { on = { exponential = "2s" }, off = { exponential = "3s" } }
"#;

#[test]
fn the_schedule_is_what_the_run_switches() {
    let seed = 7;
    let scenario = Scenario::from_toml_str(TEXT).unwrap();
    let schedules = scenario.simulation(seed).unwrap().on_off_schedules();
    let results = simulate(TEXT, seed);
    assert_eq!(schedules.len(), 4);
    assert!(
        schedules[0].is_empty(),
        "a flow without on_off has no schedule"
    );
    let bin = Duration::from_millis(10);
    for (flow, periods) in results.flows.iter().zip(&schedules).skip(1) {
        assert!(
            periods.len() >= 5,
            "{}: {} periods",
            flow.name,
            periods.len()
        );
        assert_eq!(
            periods[0].0, flow.start,
            "{}: starts at its drawn start",
            flow.name
        );
        let stop = flow.stop.unwrap_or(results.duration).min(results.duration);
        assert!(periods.last().unwrap().0 < stop);
        let sent = flow.record.bins.sent_bytes.to_vec();
        for (k, &bytes) in sent.iter().enumerate() {
            let (lo, hi) = (bin * k as u32, bin * (k as u32 + 1));
            let on = periods
                .iter()
                .any(|&(a, b)| a < hi && lo < b.min(stop) + Duration::from_micros(1));
            assert!(
                bytes == 0 || on,
                "{}: sent in bin {k}, outside every ON period",
                flow.name
            );
            let inside = periods
                .iter()
                .any(|&(a, b)| a + bin <= lo && hi + bin <= b.min(stop));
            assert!(
                bytes > 0 || !inside,
                "{}: silent in bin {k} of an ON period",
                flow.name
            );
        }
    }
}
