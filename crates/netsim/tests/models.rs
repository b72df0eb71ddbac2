//! The agents against the papers' models (issue 4, tests 2, 5 and 8): TCP Reno's throughput
//! against the PFTK model, the smoothness CoV_time of Reno, GAIMD and TFRC at 1% Bernoulli loss
//! against yang2001, and GAIMD(0.31, 7/8)'s throughput relative to Reno. Each runs a scenario
//! file through `netsim::scenario::run`, so the agents are exercised as users drive them.
//!
//! The measured figures are printed (`cargo test -p netsim --release --test models --
//! --nocapture`) and quoted in the issue note.

mod common;

use common::{cov_time, last, lossy_path, mean, simulate, state};
use netsim::results::FlowResult;
use tfrc::equation::pftk_full_packets_per_s;

/// The mean over bins from `from_bin` on of one state-trace field.
fn trace_mean(flow: &FlowResult, field: &str, from_bin: usize) -> f64 {
    let values: Vec<f64> = state(flow, field)[from_bin..]
        .iter()
        .copied()
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    mean(&values)
}

/// TCP Reno in the ns-2 2000 setting (immediate ACKs, 100 ms clock) with a window that never
/// binds: the conditions of the PFTK model with b = 1 and no W_max.
const RENO: &str = r#"kind = "tcp"
variant = "reno"
preset = "ns2_2000"
window = 100000"#;

/// GAIMD(0.31, 7/8) (yang2001) on the same machinery, ns-2's rules.
const GAIMD: &str = r#"kind = "gaimd"
alpha = 0.31
beta = 0.875
preset = "ns2_2000"
window = 100000"#;

/// TFRC as in the paper's ns-2 code.
const TFRC: &str = r#"kind = "tfrc"
preset = "floyd2000""#;

/// Issue 4, test 2: Reno's throughput under Bernoulli loss against the full PFTK model
/// evaluated with the measured RTT (the mean of the flow's RTT samples), the measured RTO (the
/// time-average of the sender's timeout), and the measured loss-indication rate (loss events
/// per packet sent, grouped by the monitor as for every protocol). The model's packets/s are
/// compared with the packets the sender sent per second; tolerance +-30%.
#[test]
fn reno_throughput_follows_the_pftk_model() {
    for (p, seconds) in [(0.005, 300), (0.01, 200), (0.02, 200), (0.05, 200)] {
        let results = simulate(&lossy_path(RENO, p, seconds, "1s"), 1);
        let flow = results.flow("f").expect("the flow");
        let totals = flow.record.totals;
        let rate = totals.packets_sent as f64 / seconds as f64;
        let rtt = last(flow, "rtt_sum") / last(flow, "rtt_samples");
        let rto = trace_mean(flow, "rto", 5);
        let loss_indications = totals.loss_event_rate();
        let model = pftk_full_packets_per_s(loss_indications, rtt, rto, 1.0, None);
        println!(
            "reno p={p}: {rate:.1} pkt/s sent; model {model:.1} pkt/s (ratio {:.3}) with RTT \
             {rtt:.4} s, RTO {rto:.3} s, loss indications {loss_indications:.5} per packet, \
             timeouts {}, fast retransmits {}",
            rate / model,
            last(flow, "timeouts"),
            last(flow, "fast_retransmits"),
        );
        assert!(
            (rate / model - 1.0).abs() <= 0.3,
            "p = {p}: simulated {rate:.1} pkt/s against PFTK's {model:.1}"
        );
    }
}

/// Issue 4, test 5: smoothness at 1% Bernoulli loss, against yang2001 Fig. 6 (TCP 0.51, GAIMD
/// 0.3, TFRC 0.23) and the AIMD formula sqrt((1-beta)/(1+beta)) (0.58, 0.26).
///
/// On the Reno machinery yang2001 states, GAIMD measures 0.44 (0.41 with the paper's rule) and
/// Reno 0.59: about one loss indication in eight is a second loss in a fast-retransmit window,
/// which Reno only repairs by a timeout, and each timeout leaves empty RTT samples and a window
/// GAIMD regrows slowly. With SACK recovery underneath, TCP measures 0.51 and GAIMD 0.31 (0.30
/// with the paper's rule): yang2001's figures. The test checks both machineries: SACK's within
/// the issue's bands (GAIMD 0.20-0.40), Reno's pinned at the measured values (GAIMD at most 0.48)
/// with the ordering, so a regression in either fails. docs/tcp.md ("GAIMD") has the table.
#[test]
fn cov_time_at_one_percent_loss_matches_yang2001() {
    let seeds = 1..=8;
    let reno = cov_time(RENO, seeds.clone());
    let gaimd = cov_time(GAIMD, seeds.clone());
    let gaimd_paper = cov_time(&format!("{GAIMD}\nrule = \"paper\""), seeds.clone());
    let sack = cov_time(&RENO.replace("\"reno\"", "\"sack\""), seeds.clone());
    let gaimd_sack = cov_time(&format!("{GAIMD}\nrecovery = \"sack\""), seeds.clone());
    let tfrc = cov_time(TFRC, seeds);
    println!(
        "CoV_time at 1% Bernoulli loss: Reno {reno:.3}, GAIMD on Reno {gaimd:.3} (paper rule \
         {gaimd_paper:.3}), SACK {sack:.3}, GAIMD on SACK {gaimd_sack:.3}, TFRC {tfrc:.3}"
    );
    // With SACK recovery: the issue's bands.
    assert!((0.40..=0.65).contains(&sack), "SACK {sack}");
    assert!(
        (0.20..=0.40).contains(&gaimd_sack),
        "GAIMD on SACK {gaimd_sack}"
    );
    assert!((0.15..=0.35).contains(&tfrc), "TFRC {tfrc}");
    // On Reno: the measured values, Reno's timeouts included.
    assert!((0.40..=0.65).contains(&reno), "Reno {reno}");
    assert!((0.20..=0.48).contains(&gaimd), "GAIMD {gaimd}");
    assert!(
        (0.20..=0.48).contains(&gaimd_paper),
        "GAIMD, paper rule {gaimd_paper}"
    );
    assert!(tfrc < gaimd_sack && gaimd_sack < sack && sack < reno);
    assert!(tfrc < gaimd_paper && gaimd_paper <= gaimd && gaimd < reno);
}

/// Issue 4, test 8: GAIMD(0.31, 7/8) against Reno under the same Bernoulli loss, each alone on
/// the path, over three seeds. yang2001 calls GAIMD TCP-friendly; the deterministic sawtooth
/// model predicts about 1.25 (protocols.md §2).
#[test]
fn gaimd_is_tcp_friendly_under_bernoulli_loss() {
    for p in [0.01, 0.02, 0.05] {
        let mean_rate = |agent: &str| {
            (1..=3)
                .map(|seed| {
                    let results = simulate(&lossy_path(agent, p, 200, "1s"), seed);
                    results
                        .flow("f")
                        .expect("the flow")
                        .record
                        .totals
                        .packets_sent as f64
                        / 200.0
                })
                .sum::<f64>()
                / 3.0
        };
        let (gaimd, reno) = (mean_rate(GAIMD), mean_rate(RENO));
        println!(
            "p={p}: GAIMD {gaimd:.1} pkt/s, Reno {reno:.1} pkt/s, ratio {:.3}",
            gaimd / reno
        );
        assert!(
            (0.7..=1.4).contains(&(gaimd / reno)),
            "p = {p}: GAIMD/Reno = {}",
            gaimd / reno
        );
    }
}
