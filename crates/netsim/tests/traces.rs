//! pcap and ns-2 traces of a short dumbbell run (TCP SACK, TFRC, CBR): the traces leave the
//! results unchanged, their records agree with the flows' counters, and the caps hold.

use std::fs;
use std::path::PathBuf;

use netsim::results::Results;
use netsim::scenario::{Scenario, TraceOpenError};
use netsim::trace::TraceKind;

const SCENARIO: &str = r#"
duration = "8s"
[monitor]
bin = "100ms"
pcap = ["bottleneck", "left0->router_left"]
ns2_trace = ["bottleneck"]
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

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("netsim-traces-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn run(text: &str, pcap: Option<&PathBuf>, ns2: Option<&PathBuf>) -> Results {
    let scenario = Scenario::from_toml_str(text).unwrap();
    let mut sim = scenario.simulation(scenario.seed).unwrap();
    scenario
        .traces
        .open(
            &mut sim,
            pcap.map(PathBuf::as_path),
            ns2.map(PathBuf::as_path),
        )
        .unwrap();
    sim.run()
}

/// The pcap records of a file: (timestamp ns, captured bytes).
fn pcap_records(path: &PathBuf) -> Vec<(u64, Vec<u8>)> {
    let bytes = fs::read(path).unwrap();
    assert_eq!(&bytes[..4], &0xA1B2_3C4Du32.to_le_bytes());
    let mut at = 24;
    let mut out = Vec::new();
    let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    while at < bytes.len() {
        let time = u64::from(word(at)) * 1_000_000_000 + u64::from(word(at + 4));
        let len = word(at + 8) as usize;
        out.push((time, bytes[at + 16..at + 16 + len].to_vec()));
        at += 16 + len;
    }
    out
}

#[test]
fn traces_observe_without_changing_the_run_and_agree_with_the_counters() {
    let dir = scratch("agree");
    let ns2 = dir.join("run.tr");
    let mut traced = run(SCENARIO, Some(&dir), Some(&ns2));
    let plain = run(SCENARIO, None, None);
    let summaries = std::mem::take(&mut traced.traces);
    assert_eq!(traced, plain, "traces must not change the results");
    assert_eq!(summaries.len(), 3);
    assert!(summaries
        .iter()
        .all(|s| s.error.is_none() && s.over_limit == 0));

    let text = fs::read_to_string(&ns2).unwrap();
    let lines: Vec<Vec<&str>> = text.lines().map(|l| l.split(' ').collect()).collect();
    assert!(lines.iter().all(|l| l.len() == 12), "ns-2's 12 columns");
    let count = |event: &str, fid: usize, kinds: &[&str]| {
        lines
            .iter()
            .filter(|l| l[0] == event && l[7] == fid.to_string() && kinds.contains(&l[4]))
            .count() as u64
    };
    let kinds: [&[&str]; 3] = [&["tcp"], &["tcpFriend"], &["cbr"]];
    for (fid, flow) in traced.flows.iter().enumerate() {
        let totals = flow.record.totals;
        // Every drop of this run is at the bottleneck, and every delivered packet crossed it.
        assert!(
            totals.packets_dropped > 0 || fid == 2,
            "{}: no drops",
            flow.name
        );
        assert_eq!(count("d", fid, kinds[fid]), totals.packets_dropped);
        // A received packet crossed the bottleneck; a few that crossed it were still on the
        // last access link at the end.
        let received = count("r", fid, kinds[fid]);
        assert!((totals.packets_received..=totals.packets_received + 5).contains(&received));
        // Every packet offered to the bottleneck was dropped, received, or was still queued or
        // in flight at the end (at most the queue and the pipe).
        let offered = count("+", fid, kinds[fid]);
        let settled = received + totals.packets_dropped;
        assert!(
            (settled..=settled + 30).contains(&offered),
            "{offered} vs {settled}"
        );
    }
    // The times are nondecreasing.
    let times: Vec<f64> = lines.iter().map(|l| l[1].parse().unwrap()).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]));

    let bottleneck = pcap_records(&dir.join("bottleneck.pcap"));
    let dequeues = lines.iter().filter(|l| l[0] == "-").count();
    assert_eq!(
        bottleneck.len(),
        dequeues,
        "one capture per transmission start"
    );
    assert!(bottleneck.windows(2).all(|w| w[0].0 <= w[1].0));
    for (_, frame) in &bottleneck {
        assert_eq!(frame[0], 0x45);
        assert_eq!(
            usize::from(u16::from_be_bytes([frame[2], frame[3]])),
            frame.len()
        );
    }
    // The source's access link carries every TCP packet sent, retransmissions included.
    let access = pcap_records(&dir.join("left0-_router_left.pcap"));
    assert_eq!(
        access.len() as u64,
        traced.flows[0].record.totals.packets_sent
    );
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_cap_stops_writing_and_counts_the_rest() {
    let dir = scratch("cap");
    let text = SCENARIO.replace("[monitor]", "[monitor]\ntrace_limit = 50");
    let results = run(&text, Some(&dir), None);
    let summary = results
        .traces
        .iter()
        .find(|s| s.kind == TraceKind::Pcap && s.link == "bottleneck")
        .unwrap();
    assert_eq!((summary.written, summary.limit), (50, 50));
    assert!(summary.over_limit > 0);
    assert_eq!(pcap_records(&dir.join("bottleneck.pcap")).len(), 50);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn unknown_links_and_bad_limits_name_the_field() {
    let text = SCENARIO.replace(
        r#"ns2_trace = ["bottleneck"]"#,
        r#"ns2_trace = ["botleneck"]"#,
    );
    let err = Scenario::from_toml_str(&text).unwrap_err().to_string();
    assert!(err.contains("monitor.ns2_trace[0]"), "{err}");
    assert!(
        err.contains("bottleneck_reverse"),
        "lists the valid links: {err}"
    );
    let text = SCENARIO.replace("[monitor]", "[monitor]\ntrace_limit = 0");
    let err = Scenario::from_toml_str(&text).unwrap_err().to_string();
    assert!(err.contains("monitor.trace_limit"), "{err}");
}

#[test]
fn an_unwritable_trace_file_is_refused_before_the_run() {
    let scenario = Scenario::from_toml_str(SCENARIO).unwrap();
    let mut sim = scenario.simulation(1).unwrap();
    let missing = PathBuf::from("/nonexistent-dir/run.tr");
    match scenario.traces.open(&mut sim, None, Some(&missing)) {
        Err(TraceOpenError::File(e)) => assert_eq!(e.path, missing),
        other => panic!("expected a file error, got {other:?}"),
    }
}

#[test]
fn the_cost_estimate_counts_the_trace_files_on_disk() {
    let text = r#"
duration = "10s"
[monitor]
pcap = ["bottleneck"]
ns2_trace = ["bottleneck"]
[topology]
kind = "dumbbell"
hosts = 1
[topology.bottleneck]
rate = "10Mbps"
delay = "10ms"
[[flows]]
kind = "cbr"
rate = "1Mbps"
"#;
    // 1 Mb/s of 1000-byte packets for 10 s: 1250 packets, each a 16-byte record header and
    // 1000 bytes in the pcap, and four ns-2 lines.
    let estimate = Scenario::from_toml_str(text).unwrap().estimate();
    let pcap = 1250.0 * 1016.0;
    let ns2 = 4.0 * 1250.0 * 55.0;
    let disk = estimate.disk_bytes() as f64;
    assert!((disk - (pcap + ns2)).abs() < 0.01 * disk, "{disk}");
    assert!(estimate.parts.iter().any(|p| p.path == "monitor.pcap"));
    let capped =
        Scenario::from_toml_str(&text.replace("[monitor]", "[monitor]\ntrace_limit = 100"))
            .unwrap()
            .estimate();
    assert!((capped.disk_bytes() as f64 - 100.0 * (1016.0 + 55.0)).abs() < 10.0);
    let untraced = text.replace(
        "pcap = [\"bottleneck\"]\nns2_trace = [\"bottleneck\"]\n",
        "",
    );
    assert_eq!(
        Scenario::from_toml_str(&untraced)
            .unwrap()
            .estimate()
            .disk_bytes(),
        0
    );
}

#[test]
fn the_same_seed_writes_the_same_bytes() {
    let (a, b) = (scratch("same-a"), scratch("same-b"));
    run(SCENARIO, Some(&a), Some(&a.join("run.tr")));
    run(SCENARIO, Some(&b), Some(&b.join("run.tr")));
    for name in ["bottleneck.pcap", "left0-_router_left.pcap", "run.tr"] {
        let (x, y) = (
            fs::read(a.join(name)).unwrap(),
            fs::read(b.join(name)).unwrap(),
        );
        assert!(!x.is_empty());
        assert!(x == y, "{name} differs between two runs of one seed");
    }
    fs::remove_dir_all(&a).unwrap();
    fs::remove_dir_all(&b).unwrap();
}

/// A writer whose disk fills up after `room` bytes.
struct FullDisk {
    room: usize,
}

impl std::io::Write for FullDisk {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.room < buf.len() {
            return Err(std::io::Error::other("no space left on device"));
        }
        self.room -= buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_write_error_is_reported_and_the_run_goes_on_unchanged() {
    use netsim::trace::Taps;
    let scenario = Scenario::from_toml_str(SCENARIO).unwrap();
    let mut sim = scenario.simulation(1).unwrap();
    let topology = sim.topology();
    let link = topology.link_named("bottleneck").unwrap().0 as usize;
    let spec = topology.link(topology.link_named("bottleneck").unwrap());
    let (from, to) = (spec.from.0, spec.to.0);
    let mut taps = Taps::new(topology.links().len(), 1_000_000);
    taps.add_pcap(
        link,
        "bottleneck",
        "full.pcap".into(),
        Box::new(FullDisk { room: 5000 }),
    )
    .unwrap();
    taps.set_ns2(
        "full.tr".into(),
        Box::new(FullDisk { room: 5000 }),
        &[(link, "bottleneck", from, to)],
    );
    sim.attach_traces(taps);
    let mut traced = sim.run();
    let summaries = std::mem::take(&mut traced.traces);
    assert_eq!(traced, run(SCENARIO, None, None));
    assert_eq!(summaries.len(), 2);
    for summary in summaries {
        let error = summary.error.expect("the full disk is reported");
        assert!(error.contains("no space left"), "{error}");
    }
}
