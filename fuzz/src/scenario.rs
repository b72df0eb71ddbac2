//! The scenario-file target: mutated TOML scenarios fed to `netsim::scenario`.
//!
//! [`fuzz_scenario`] is the target. Its property: [`Scenario::from_toml_str`] never panics; when
//! it accepts a file, [`Scenario::simulation`] never panics, and a short run of the simulation
//! (at most [`RUN_UNTIL_NS`] simulated, at most [`MAX_EVENTS`] events) never panics. Rejections
//! must be one-line messages that name a path (except syntax errors). [`ScenarioMutator`] mutates
//! at the byte, line and token level (bit flips, deleted, duplicated and swapped lines, swapped
//! values, inserted keys, table headers, units and numbers), starting from the example scenario
//! files ([`scenario_seed_corpus`]). [`run_scenarios`] drives it like [`crate::run`] drives the
//! wire target.

use std::collections::HashSet;
use std::fmt;
use std::panic::{self, AssertUnwindSafe};
use std::time::{Duration, Instant};

use netsim::scenario::{parse_document, Scenario, ScenarioError};
use netsim::Time;
use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::{Crash, FuzzConfig};

/// Longest scenario text the mutator builds; longer ones are cut.
pub const MAX_SCENARIO_LEN: usize = 8192;
/// Most inputs the scenario corpus holds; new entries replace earlier mutants once it is full.
pub const MAX_SCENARIO_CORPUS_LEN: usize = 2048;
/// How far an accepted scenario is simulated: 10 ms.
pub const RUN_UNTIL_NS: u64 = 10_000_000;
/// The run stops early after this many events (a 1 Tb/s flow of 1-byte packets would otherwise
/// take minutes to simulate 10 ms).
pub const MAX_EVENTS: u64 = 200_000;
/// Scenarios with more flows, hosts, hops or nodes than this are not built: building costs
/// nodes² memory for the routing table (a 100000-host dumbbell would need about 160 GB), so a
/// larger one is counted as skipped instead.
pub const MAX_ELEMENTS: u64 = 1000;

/// The step in which the short run advances, so the event budget is checked often.
const RUN_STEP_NS: u64 = 10_000;

/// The example scenario file of the repository.
const EXAMPLE_DUMBBELL: &str = include_str!("../../scenarios/examples/dumbbell.toml");
/// The scenario documentation, whose complete ```toml blocks are seeds too.
const SCENARIO_DOC: &str = include_str!("../../docs/scenario.md");

/// A parking lot with a loss list, RED hops and a stop time: covers what the other seeds do not.
const PARKING_LOT: &str = r#"
name = "parking"
duration = "2s"
seed = 3

[monitor]
bin = "20ms"
links = "all"

[topology]
kind = "parking_lot"
hops = 2
hop = { rate = "5Mbps", delay = "5ms", queue = { kind = "red", preset = "ns2_35", queue_in_bytes = false, w_q = "ten_packet_times", max_p = 0.2, use_mark_p = false, ecn = true, wait = false, byte_mode = false, target_delay = "2ms", mark_p = 0.05, adaptive = true } }
access = { rate = "50Mbps", delay = "1ms", queue = { kind = "droptail", bytes = "64KiB" } }

[[flows]]
kind = "cbr"
from = "long_src"
to = "long_dst"
rate = "2Mbps"
stop = { exponential = "1s" }

[[flows]]
kind = "cbr"
name = "x"
count = 2
from = "cross_src1"
to = "cross_dst1"
rate = "3Mbps"
size = 1500

[[losses]]
link = "hop0"
kind = "list"
indices = [0, 3, 7]

[[losses]]
link = "hop1"
kind = "periodic"
every = 5
phase = 2
"#;

/// A dumbbell with uneven sides, per-host random access rates and delays.
const UNEVEN_DUMBBELL: &str = r#"
duration = "1s"
[topology]
kind = "dumbbell"
left_hosts = 3
right_hosts = 2
bottleneck = { rate = "10Mbps", delay = "5ms", queue = { kind = "droptail", limit = 20 } }
bottleneck_reverse = { rate = "1Mbps", queue = { kind = "red", preset = "adaptive", adaptive = false, w_q = 0.01, min_th = 3, max_th = 9 } }
access = { rate = { uniform = ["5Mbps", "20Mbps"] }, delay = { uniform = ["1ms", "3ms"] } }
[[flows]]
kind = "cbr"
count = 4
rate = "1MBps"
start = { uniform = ["0s", "5ms"] }
on_off = { on = "2ms", off = { exponential = "1ms" } }
[[losses]]
link = "bottleneck"
kind = "gilbert_elliott"
p_good_to_bad = 0.1
p_bad_to_good = 0.5
loss_in_good = 0.01
loss_in_bad = 0.9
"#;

/// Keys worth inserting anywhere: every key the schema reads, a few near misses and table
/// headers.
const KEYS: &[&str] = &[
    "name",
    "description",
    "duration",
    "seed",
    "bin",
    "packet_trace",
    "links",
    "kind",
    "hosts",
    "left_hosts",
    "right_hosts",
    "rate",
    "delay",
    "queue",
    "rtt",
    "hops",
    "hop",
    "access",
    "nodes",
    "from",
    "to",
    "duplex",
    "path",
    "limit",
    "bytes",
    "ns2_limit",
    "preset",
    "mean_packet_size",
    "queue_in_bytes",
    "byte_mode",
    "min_th",
    "max_th",
    "target_delay",
    "w_q",
    "max_p",
    "gentle",
    "wait",
    "ecn",
    "use_mark_p",
    "mark_p",
    "adaptive",
    "uniform",
    "exponential",
    "count",
    "reverse",
    "start",
    "stop",
    "on_off",
    "on",
    "off",
    "loss_event_rtt",
    "size",
    "random",
    "max_packets",
    "model",
    "inter_page",
    "objects_per_page",
    "inter_object",
    "object_size",
    "pages",
    "inter_page_from",
    "load",
    "share",
    "packets",
    "interarrival",
    "link",
    "flow",
    "every",
    "phase",
    "p",
    "p_good_to_bad",
    "p_bad_to_good",
    "loss_in_good",
    "loss_in_bad",
    "indices",
    "steps",
    "at",
    "feedback_size",
    "app_rate",
    "segment_size",
    "b",
    "cap_rto_term",
    "rto",
    "rto_granularity",
    "rto_min",
    "rto_fixed",
    "rate_scale",
    "rate_before_feedback",
    "initial_window",
    "rtt_ewma_q",
    "initial_nofeedback",
    "nofeedback_rtts",
    "max_rate",
    "nofeedback_response",
    "congestion_avoidance",
    "max_backoff_interval",
    "oscillation_prevention",
    "sqrt_rtt_ewma_q",
    "scheduling_granularity",
    "dither_fraction",
    "ndupack",
    "loss_intervals",
    "discount_threshold",
    "short_history",
    "loss_event_round_check",
    "first_interval",
    "variant",
    "window",
    "syn",
    "delay_growth",
    "tick",
    "min_rto",
    "max_rto",
    "initial_rto",
    "rfc2988",
    "use_headers",
    "header_size",
    "limited_transmit",
    "precision_reduce",
    "overhead",
    "max_cwnd",
    "increase",
    "decrease",
    "decrease_rule",
    "numdupacks",
    "ack",
    "ack_interval",
    "ack_size",
    "max_sack_blocks",
    "sack_block_size",
    "sack_recovery",
    "partial_window_deflation",
    "newreno_impatient",
    "vegas_alpha",
    "vegas_beta",
    "vegas_gamma",
    "alpha",
    "beta",
    "rule",
    "recovery",
    "fine_grain",
    "ipg",
    "srtt",
    "delta",
    "mu",
    "phi",
    "kfrtt",
    "kxrtt",
    "dpthresh",
    "shared_first_sample",
    "shape",
    "interval",
    "timeout",
    "epochs",
    "dupthresh",
    "timeout_rtts",
    "min_timeout",
    "timeout_backoff",
    "feedback",
    "nofeedback_halving",
    "initial_rate",
    "open_epoch",
    "round",
    "hsots",
    "strat",
    "\"a.b\"",
    "topology.kind",
    "monitor.bin",
    "measure.from",
    "measure.to",
];

/// Table headers worth inserting as lines.
const HEADERS: &[&str] = &[
    "[monitor]",
    "[measure]",
    "[topology]",
    "[topology.bottleneck]",
    "[topology.bottleneck_reverse]",
    "[topology.access]",
    "[topology.hop]",
    "[topology.bottleneck.queue]",
    "[[topology.links]]",
    "[[topology.routes]]",
    "[[flows]]",
    "[flows.on_off]",
    "[[losses]]",
    "[[losses.steps]]",
    "[flows]",
    "[[topology]]",
];

/// Values worth putting after any key: every type the schema reads, edge numbers, every choice,
/// the random-value forms and their near misses.
const VALUES: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "50",
    "1000",
    "100000",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "-9223372036854775808",
    "0.0",
    "0.5",
    "1.0",
    "1.5",
    "-0.0",
    "1e300",
    "nan",
    "inf",
    "-inf",
    "true",
    "false",
    "\"\"",
    "\"0s\"",
    "\"1ns\"",
    "\"10ms\"",
    "\"1s\"",
    "\"18446744073.709551615s\"",
    "\"18446744073.709551616s\"",
    "\"1000000s\"",
    "\"1e-9s\"",
    "\"0.4ns\"",
    "\"1bps\"",
    "\"15Mbps\"",
    "\"1Tbps\"",
    "\"18446744073709551615bps\"",
    "\"2MBps\"",
    "\"0bps\"",
    "\"1B\"",
    "\"64KiB\"",
    "\"65537B\"",
    "\"4GB\"",
    "\"0.5B\"",
    "\"all\"",
    "\"dumbbell\"",
    "\"parking_lot\"",
    "\"graph\"",
    "\"droptail\"",
    "\"red\"",
    "\"ns2_35\"",
    "\"ns2_2000\"",
    "\"adaptive\"",
    "\"auto\"",
    "\"packet_time\"",
    "\"ten_packet_times\"",
    "\"cbr\"",
    "\"tfrc\"",
    "\"tcp\"",
    "\"gaimd\"",
    "\"rap\"",
    "\"hassan\"",
    "\"ns2_exact\"",
    "\"pareto\"",
    "\"exponential\"",
    "\"ping\"",
    "\"web\"",
    "\"short_tcp\"",
    "\"pareto2\"",
    "\"surge\"",
    "{ kind = \"pareto2\", mean = 12, shape = 1.2 }",
    "\"tear\"",
    "\"yang2001\"",
    "\"ncsu\"",
    "\"per_round\"",
    "\"closed_only\"",
    "\"rtt\"",
    "\"sack\"",
    "\"reno\"",
    "\"newreno\"",
    "\"tahoe\"",
    "\"vegas\"",
    "\"rfc\"",
    "\"ns2_2000\"",
    "\"delayed\"",
    "\"rfc6675\"",
    "\"paper\"",
    "\"rfc5348\"",
    "\"floyd2000\"",
    "\"none\"",
    "\"four_r\"",
    "\"tcp_like\"",
    "\"fixed\"",
    "\"one_packet_per_second\"",
    "\"halve_rate\"",
    "\"ns2_additive_increase\"",
    "\"current_receive_rate\"",
    "\"periodic\"",
    "\"periodic_time\"",
    "\"bernoulli\"",
    "\"gilbert_elliott\"",
    "\"list\"",
    "\"schedule\"",
    "\"bottleneck\"",
    "\"bottleneck_reverse\"",
    "\"left0\"",
    "\"right0\"",
    "\"router_left\"",
    "\"left0->router_left\"",
    "\"hop0\"",
    "\"long_src\"",
    "\"a\"",
    "\"cbr0\"",
    "{ uniform = [\"1ms\", \"3ms\"] }",
    "{ uniform = [\"3ms\", \"1ms\"] }",
    "{ uniform = [\"1ms\"] }",
    "{ exponential = \"1s\" }",
    "{ exponential = \"0s\" }",
    "{ uniform = [\"1Mbps\", \"10Mbps\"] }",
    "{ uniform = [\"0bps\", \"10Mbps\"] }",
    "{ kind = \"red\" }",
    "{ kind = \"droptail\", limit = 0 }",
    "{ kind = \"red\", preset = \"adaptive\", min_th = 20, max_th = 10 }",
    "{ on = \"1ms\", off = \"1ms\" }",
    "{ rate = \"1Mbps\", delay = \"1ms\" }",
    "{}",
    "[]",
    "[0, 0]",
    "[1, 2, 3]",
    "[\"a\", \"b\"]",
    "[\"a\", \"a\"]",
    "[{ at = \"0s\", kind = \"bernoulli\", p = 1.0 }]",
    "1979-05-27T07:32:00Z",
];

/// Units worth substituting for the unit of a quantity.
const UNITS: &[&str] = &[
    "ns", "us", "µs", "ms", "s", "min", "h", "bps", "kbps", "Mbps", "Gbps", "Tbps", "mbps", "b/s",
    "bit/s", "Bps", "kBps", "MBps", "B/s", "B", "kB", "KB", "MB", "GB", "KiB", "MiB", "GiB", "TiB",
    "bytes", "", " ", "x", "sec", "Kbps",
];

/// Numbers worth substituting for a number in the text.
const NUMBERS: &[&str] = &[
    "0",
    "1",
    "2",
    "9",
    "-1",
    "0.5",
    "1e3",
    "1e-3",
    "1e30",
    "1e-30",
    ".5",
    "5.",
    "18446744073709551615",
    "18446744073709551616",
    "4294967296",
    "100000",
    "100001",
    "10000",
    "999",
    "1001",
    "+3",
];

/// The seed corpus: the repository's example scenario, the complete examples of
/// docs/scenario.md, and a few inline files covering the other topologies and models.
pub fn scenario_seed_corpus() -> Vec<Vec<u8>> {
    let mut corpus = vec![EXAMPLE_DUMBBELL.as_bytes().to_vec()];
    corpus.extend(
        netsim::scenario::toml_blocks(SCENARIO_DOC)
            .into_iter()
            .filter(|block| block.contains("duration ="))
            .map(String::into_bytes),
    );
    corpus.push(PARKING_LOT.as_bytes().to_vec());
    corpus.push(UNEVEN_DUMBBELL.as_bytes().to_vec());
    corpus
}

/// What became of one scenario input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScenarioOutcome {
    /// Accepted, built and run for up to 10 ms simulated (or `MAX_EVENTS` events).
    Ran {
        /// Events the short run processed.
        events: u64,
    },
    /// Accepted and built, but not run: more than [`MAX_ELEMENTS`] flows or hosts, a cost
    /// estimate over the default budget (the product refuses those without `--force`), or
    /// monitors whose memory could not be reserved (an error, not an abort).
    NotRun,
    /// Not parsed: a TOML document whose topology or flow counts exceed [`MAX_ELEMENTS`].
    TooLarge,
    /// Refused, with the error's variant name and its path with indices dropped.
    Refused {
        /// `Syntax`, `Invalid`, `Missing`, `UnknownKey` or `Other`.
        variant: &'static str,
        /// The path with `[i]` indices removed (`flows.start`); empty for syntax errors.
        path: String,
    },
}

/// The variant of a [`ScenarioError`], by name.
fn variant_name(error: &ScenarioError) -> &'static str {
    match error {
        ScenarioError::Syntax { .. } => "Syntax",
        ScenarioError::Invalid { .. } => "Invalid",
        ScenarioError::Missing { .. } => "Missing",
        ScenarioError::UnknownKey { .. } => "UnknownKey",
        _ => "Other",
    }
}

/// `flows[2].steps[0].at` → `flows.steps.at`.
fn without_indices(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut depth = 0usize;
    for c in path.chars() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            c if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

/// An integer value at `key` of `table`, if it is one.
fn int_at(table: &toml::Table, key: &str) -> u64 {
    table
        .get(key)
        .and_then(toml::Value::as_integer)
        .map_or(0, |n| n.unsigned_abs())
}

/// The number of hosts, hops, graph nodes and flows the document asks for (their sum, saturating),
/// read without building anything.
fn size_of(document: &toml::Table) -> u64 {
    let mut total: u64 = 0;
    if let Some(topology) = document.get("topology").and_then(toml::Value::as_table) {
        for key in ["hosts", "left_hosts", "right_hosts"] {
            total = total.saturating_add(int_at(topology, key));
        }
        // A parking lot has four nodes per hop.
        total = total.saturating_add(int_at(topology, "hops").saturating_mul(4));
        if let Some(nodes) = topology.get("nodes").and_then(toml::Value::as_array) {
            total = total.saturating_add(nodes.len() as u64);
        }
    }
    if let Some(flows) = document.get("flows").and_then(toml::Value::as_array) {
        for flow in flows {
            let count = flow.as_table().map_or(1, |t| int_at(t, "count").max(1));
            total = total.saturating_add(count);
        }
    }
    total
}

/// The fuzz target for scenario files: parses `text`, and if it is accepted builds its simulation
/// with seed 1 and runs it for up to 10 ms simulated. Panics (from netsim or from the checks
/// here) are the findings:
/// - a refusal's message must be one line, and name a path unless it is a syntax error;
/// - a scenario `from_toml_str` accepted must also build with seed 1.
pub fn fuzz_scenario(text: &str) -> ScenarioOutcome {
    // Building costs nodes² memory, so huge networks are counted, not built. A document that is
    // not TOML goes on to `from_toml_str`, which refuses it the same way.
    if let Ok(document) = parse_document(text) {
        if size_of(&document) > MAX_ELEMENTS {
            return ScenarioOutcome::TooLarge;
        }
    }
    let scenario = match Scenario::from_toml_str(text) {
        Ok(scenario) => scenario,
        Err(error) => {
            let message = error.to_string();
            assert!(!message.contains('\n'), "a message on two lines: {message}");
            let variant = variant_name(&error);
            let path = error.path().map(without_indices).unwrap_or_default();
            assert!(
                variant == "Syntax" || error.path().is_some(),
                "no path: {message}"
            );
            return ScenarioOutcome::Refused { variant, path };
        }
    };
    let mut simulation = match scenario.simulation(1) {
        Ok(simulation) => simulation,
        Err(error) => panic!("accepted, but does not build with seed 1: {error}"),
    };
    let hosts = simulation.topology().nodes().len() as u64;
    if scenario.flows.len() as u64 > MAX_ELEMENTS || hosts > MAX_ELEMENTS {
        return ScenarioOutcome::NotRun;
    }
    // As a run of the product does: the cost check first, then the monitors reserved for the
    // whole run, so that memory is claimed (or refused) up front and never grows per bin.
    if netsim::scenario::check(&scenario, &netsim::scenario::Budget::DEFAULT).is_err()
        || simulation.try_reserve_monitors().is_err()
    {
        return ScenarioOutcome::NotRun;
    }
    let mut at = 0;
    while at < RUN_UNTIL_NS && simulation.events_processed() < MAX_EVENTS {
        at = (at + RUN_STEP_NS).min(RUN_UNTIL_NS);
        simulation.run_until(Time::from_nanos(at));
    }
    ScenarioOutcome::Ran {
        events: simulation.events_processed(),
    }
}

/// A deterministic text mutator for scenario files: the same seed and corpus give the same
/// inputs in the same order.
#[derive(Clone, Debug)]
pub struct ScenarioMutator {
    rng: Xoshiro256PlusPlus,
}

impl ScenarioMutator {
    /// A mutator whose choices all come from a `Xoshiro256PlusPlus` seeded with `seed`.
    pub fn new(seed: u64) -> ScenarioMutator {
        ScenarioMutator {
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
        }
    }

    /// A draw in `0..n` (`n` > 0; the modulo bias is irrelevant here).
    fn below(&mut self, n: usize) -> usize {
        (self.rng.next_u64() % n.max(1) as u64) as usize
    }

    fn choose<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }

    /// Replaces `out` with a mutant of a random corpus entry: one to four byte, line or token
    /// mutations. The result is at most [`MAX_SCENARIO_LEN`] bytes.
    pub fn mutate(&mut self, corpus: &[Vec<u8>], out: &mut Vec<u8>) {
        out.clear();
        if let Some(entry) = corpus.get(self.below(corpus.len())) {
            out.extend_from_slice(entry);
        }
        for _ in 0..=self.below(4) {
            self.mutate_once(corpus, out);
        }
        out.truncate(MAX_SCENARIO_LEN);
    }

    fn mutate_once(&mut self, corpus: &[Vec<u8>], out: &mut Vec<u8>) {
        let mut lines: Vec<Vec<u8>> = out.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
        let n = lines.len();
        match self.below(13) {
            0 if !out.is_empty() => {
                let at = self.below(out.len());
                out[at] ^= 1 << self.below(8);
                return;
            }
            1 if !out.is_empty() => {
                // Delete or insert a few bytes.
                let at = self.below(out.len());
                if self.below(2) == 0 {
                    let end = (at + 1 + self.below(8)).min(out.len());
                    out.drain(at..end);
                } else {
                    const BYTES: &[u8] = b"=[]{}\"',.#\n\\ 0a-_";
                    let byte = BYTES[self.below(BYTES.len())];
                    out.insert(at, byte);
                }
                return;
            }
            2 => {
                lines.remove(self.below(n));
            }
            3 => {
                let line = lines[self.below(n)].clone();
                lines.insert(self.below(n + 1), line);
            }
            4 => {
                let (a, b) = (self.below(n), self.below(n));
                lines.swap(a, b);
            }
            5 => {
                // Swap the values of two `key = value` lines.
                let (a, b) = (self.below(n), self.below(n));
                if let (Some(ea), Some(eb)) = (find_eq(&lines[a]), find_eq(&lines[b])) {
                    let va = lines[a].split_off(ea);
                    let vb = lines[b].split_off(eb);
                    lines[a].extend_from_slice(&vb);
                    lines[b].extend_from_slice(&va);
                }
            }
            6 => {
                let line = format!("{} = {}", self.choose(KEYS), self.choose(VALUES));
                lines.insert(self.below(n + 1), line.into_bytes());
            }
            7 => {
                let at = self.below(n);
                if let Some(eq) = find_eq(&lines[at]) {
                    lines[at].truncate(eq + 1);
                    lines[at].push(b' ');
                    let value = self.choose(VALUES);
                    lines[at].extend_from_slice(value.as_bytes());
                }
            }
            8 => {
                let header = self.choose(HEADERS);
                lines.insert(self.below(n + 1), header.as_bytes().to_vec());
            }
            9 => {
                let at = self.below(n);
                let number = self.choose(NUMBERS);
                replace_token(&mut lines[at], number.as_bytes(), TokenKind::Number);
            }
            10 => {
                let at = self.below(n);
                let unit = self.choose(UNITS);
                replace_token(&mut lines[at], unit.as_bytes(), TokenKind::Unit);
            }
            11 => {
                // Splice a run of lines from another entry.
                if let Some(other) = corpus.get(self.below(corpus.len())) {
                    let theirs: Vec<&[u8]> = other.split(|&b| b == b'\n').collect();
                    let from = self.below(theirs.len());
                    let take = 1 + self.below(6);
                    let at = self.below(n + 1);
                    for (k, line) in theirs.iter().skip(from).take(take).enumerate() {
                        lines.insert(at + k, line.to_vec());
                    }
                }
            }
            _ => {
                // Rename a key, keeping its value.
                let at = self.below(n);
                if let Some(eq) = find_eq(&lines[at]) {
                    let value = lines[at].split_off(eq);
                    lines[at] = self.choose(KEYS).as_bytes().to_vec();
                    lines[at].push(b' ');
                    lines[at].extend_from_slice(&value);
                }
            }
        }
        *out = lines.join(&b'\n');
    }
}

/// The position of the first `=` in a line, if any.
fn find_eq(line: &[u8]) -> Option<usize> {
    line.iter().position(|&b| b == b'=')
}

/// Which token [`replace_token`] looks for.
#[derive(Clone, Copy)]
enum TokenKind {
    /// A run of digits (with `.`, `e`, `-`, `+` inside).
    Number,
    /// A run of letters or `/` right after a digit (the unit of a quantity).
    Unit,
}

/// Replaces the first token of `kind` in `line` with `with`; does nothing if there is none.
fn replace_token(line: &mut Vec<u8>, with: &[u8], kind: TokenKind) {
    let is_number = |b: u8| b.is_ascii_digit() || b == b'.';
    let is_unit = |b: u8| b.is_ascii_alphabetic() || b == b'/' || b >= 0x80;
    let (start, body): (usize, fn(u8) -> bool) = match kind {
        TokenKind::Number => match line.iter().position(|&b| b.is_ascii_digit()) {
            Some(at) => (at, |b| b.is_ascii_digit() || b == b'.' || b == b'e'),
            None => return,
        },
        TokenKind::Unit => {
            // A unit character right after a digit, not the `e` of an exponent.
            let exponent = |j: usize| {
                matches!(line[j], b'e' | b'E')
                    && line
                        .get(j + 1)
                        .is_some_and(|&b| b.is_ascii_digit() || b == b'-' || b == b'+')
            };
            let found = (1..line.len())
                .find(|&j| is_number(line[j - 1]) && is_unit(line[j]) && !exponent(j));
            match found {
                Some(at) => (at, |b| b.is_ascii_alphabetic() || b == b'/' || b >= 0x80),
                None => return,
            }
        }
    };
    let len = line[start..].iter().take_while(|&&b| body(b)).count();
    line.splice(start..start + len, with.iter().copied());
}

/// What a scenario run that found no crash did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScenarioReport {
    /// Inputs tried.
    pub iterations: u64,
    /// Wall-clock time the run took.
    pub elapsed: Duration,
    /// Accepted inputs (run, or built and not run).
    pub accepted: u64,
    /// Of those, inputs that were built but had too many flows or hosts to run.
    pub not_run: u64,
    /// Inputs not parsed because they asked for more than [`MAX_ELEMENTS`] hosts, hops or flows.
    pub too_large: u64,
    /// Refusals by error variant: `Syntax`, `Invalid`, `Missing`, `UnknownKey`, `Other`.
    pub refused: [u64; 5],
    /// Events simulated over all short runs.
    pub events: u64,
    /// Distinct (variant, path without indices) refusals seen.
    pub distinct_refusals: usize,
    /// Inputs in the corpus at the end.
    pub corpus_len: usize,
}

/// The names of [`ScenarioReport::refused`]'s entries, in order.
pub const REFUSAL_VARIANTS: [&str; 5] = ["Syntax", "Invalid", "Missing", "UnknownKey", "Other"];

impl ScenarioReport {
    /// Inputs per second of wall-clock time.
    pub fn iterations_per_s(&self) -> f64 {
        self.iterations as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

impl fmt::Display for ScenarioReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} iterations in {:.1} s ({:.0} iterations/s), corpus {} inputs",
            self.iterations,
            self.elapsed.as_secs_f64(),
            self.iterations_per_s(),
            self.corpus_len
        )?;
        writeln!(
            f,
            "Ok           {:>12}  (run {}, built but not run {}; {} events simulated)",
            self.accepted,
            self.accepted - self.not_run,
            self.not_run,
            self.events
        )?;
        writeln!(
            f,
            "Err          {:>12}  ({} distinct variant/path pairs)",
            self.refused.iter().sum::<u64>(),
            self.distinct_refusals
        )?;
        for (name, count) in REFUSAL_VARIANTS.iter().zip(self.refused) {
            writeln!(f, "  {name:<11}{count:>12}")?;
        }
        writeln!(f, "too large    {:>12}  (not parsed)", self.too_large)
    }
}

/// Fuzzes [`fuzz_scenario`] as `config` says: the seed corpus first, then mutants, until the
/// iteration or time limit. Accepted mutants and mutants refused at a new (variant, path) join
/// the corpus. A panic stops the run and comes back as a [`Crash`] whose input is the text.
pub fn run_scenarios(config: &FuzzConfig) -> Result<ScenarioReport, Crash> {
    run_scenario_target(config, fuzz_scenario)
}

/// [`run_scenarios`] with another target (for testing the driver).
pub fn run_scenario_target(
    config: &FuzzConfig,
    target: fn(&str) -> ScenarioOutcome,
) -> Result<ScenarioReport, Crash> {
    let start = Instant::now();
    let mut corpus = scenario_seed_corpus();
    let seed_count = corpus.len();
    let mut mutator = ScenarioMutator::new(config.seed);
    let mut input = Vec::with_capacity(MAX_SCENARIO_LEN);
    let mut report = ScenarioReport::default();
    let mut seen: HashSet<(&'static str, String)> = HashSet::new();
    let limit = config.iterations.unwrap_or(u64::MAX);
    let deadline = config.duration.map(|d| start + d);
    let mut i = 0u64;
    while i < limit {
        if i % 16 == 0 && deadline.is_some_and(|deadline| Instant::now() >= deadline) {
            break;
        }
        if i < seed_count as u64 {
            input.clone_from(&corpus[i as usize]);
        } else if config.iterations.is_none() && config.duration.is_none() {
            break;
        } else {
            let pool = if mutator.below(4) == 0 {
                &corpus[..seed_count]
            } else {
                &corpus[..]
            };
            mutator.mutate(pool, &mut input);
        }
        let text = String::from_utf8_lossy(&input).into_owned();
        let outcome = match panic::catch_unwind(AssertUnwindSafe(|| target(&text))) {
            Ok(outcome) => outcome,
            Err(payload) => {
                let message = payload
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_owned())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "(non-string panic payload)".to_owned());
                return Err(Crash {
                    iteration: i,
                    input: text.into_bytes(),
                    message,
                });
            }
        };
        let keep = match outcome {
            ScenarioOutcome::Ran { events } => {
                report.accepted += 1;
                report.events += events;
                true
            }
            ScenarioOutcome::NotRun => {
                report.accepted += 1;
                report.not_run += 1;
                false
            }
            ScenarioOutcome::TooLarge => {
                report.too_large += 1;
                false
            }
            ScenarioOutcome::Refused { variant, path } => {
                let index = REFUSAL_VARIANTS
                    .iter()
                    .position(|&v| v == variant)
                    .unwrap_or(4);
                report.refused[index] += 1;
                variant != "Syntax" && seen.insert((variant, path))
            }
        };
        if keep && i >= seed_count as u64 {
            if corpus.len() < MAX_SCENARIO_CORPUS_LEN {
                corpus.push(text.into_bytes());
            } else {
                let slot = seed_count + mutator.below(MAX_SCENARIO_CORPUS_LEN - seed_count);
                corpus[slot] = text.into_bytes();
            }
        }
        i += 1;
    }
    report.iterations = i;
    report.elapsed = start.elapsed();
    report.distinct_refusals = seen.len();
    report.corpus_len = corpus.len();
    Ok(report)
}

/// Shrinks a scenario text that makes `still_fails` true: drops whole lines, then single
/// characters, as long as it keeps failing. For turning a crash into a short reproducer.
pub fn minimize(text: &str, still_fails: impl Fn(&str) -> bool) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let mut i = 0;
    while i < lines.len() {
        let mut candidate = lines.clone();
        candidate.remove(i);
        if still_fails(&candidate.join("\n")) {
            lines = candidate;
        } else {
            i += 1;
        }
    }
    let mut chars: Vec<char> = lines.join("\n").chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let mut candidate = chars.clone();
        candidate.remove(i);
        if still_fails(&candidate.iter().collect::<String>()) {
            chars = candidate;
        } else {
            i += 1;
        }
    }
    chars.into_iter().collect()
}

/// Whether `target` panics on `text` (with the panic message silenced).
pub fn panics(text: &str, target: fn(&str) -> ScenarioOutcome) -> bool {
    panic::catch_unwind(AssertUnwindSafe(|| target(text))).is_err()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_are_accepted_and_run() {
        let corpus = scenario_seed_corpus();
        assert!(corpus.len() >= 5, "{} seeds", corpus.len());
        for seed in &corpus {
            let text = std::str::from_utf8(seed).unwrap();
            assert!(
                matches!(fuzz_scenario(text), ScenarioOutcome::Ran { .. }),
                "{text}"
            );
        }
    }

    #[test]
    fn refusals_and_sizes_are_classified() {
        assert_eq!(
            fuzz_scenario("duration = ="),
            ScenarioOutcome::Refused {
                variant: "Syntax",
                path: String::new()
            }
        );
        assert_eq!(
            fuzz_scenario("duration = \"1s\"\n[[flows]]\nstrat = 1"),
            ScenarioOutcome::Refused {
                variant: "Missing",
                path: "topology".into()
            }
        );
        let huge = EXAMPLE_DUMBBELL.replacen("hosts = 16", "hosts = 100000", 1);
        assert_eq!(fuzz_scenario(&huge), ScenarioOutcome::TooLarge);
        assert_eq!(without_indices("flows[2].steps[10].at"), "flows.steps.at");
    }

    #[test]
    fn token_replacement() {
        let mut line = b"rate = \"15Mbps\"".to_vec();
        replace_token(&mut line, b"1e3", TokenKind::Number);
        assert_eq!(line, b"rate = \"1e3Mbps\"");
        replace_token(&mut line, b"KiB", TokenKind::Unit);
        assert_eq!(line, b"rate = \"1e3KiB\"");
        let mut line = b"kind = \"red\"".to_vec();
        replace_token(&mut line, b"7", TokenKind::Number);
        assert_eq!(line, b"kind = \"red\"");
    }

    #[test]
    fn mutator_is_deterministic_and_bounded() {
        let corpus = scenario_seed_corpus();
        let draw = |seed| {
            let mut mutator = ScenarioMutator::new(seed);
            let mut out = Vec::new();
            (0..300)
                .map(|_| {
                    mutator.mutate(&corpus, &mut out);
                    assert!(out.len() <= MAX_SCENARIO_LEN);
                    out.clone()
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(draw(5), draw(5));
        assert_ne!(draw(5), draw(6));
    }

    #[test]
    fn minimize_keeps_the_failure() {
        let text = "a = 1\nb = 2\nboom = 3\nc = 4";
        let small = minimize(text, |t| t.contains("boom"));
        assert_eq!(small, "boom");
    }

    #[test]
    fn a_panicking_scenario_target_is_reported_with_its_text() {
        fn picky(text: &str) -> ScenarioOutcome {
            assert!(!text.contains("phase"), "phase seen");
            ScenarioOutcome::NotRun
        }
        let config = FuzzConfig {
            seed: 1,
            iterations: Some(10_000),
            duration: None,
        };
        let crash = run_scenario_target(&config, picky).unwrap_err();
        assert_eq!(crash.message, "phase seen");
        assert!(String::from_utf8(crash.input).unwrap().contains("phase"));
    }

    /// The scenario fuzzer as part of `cargo test`: 2000 seeded inputs.
    #[test]
    fn fuzz_2000_scenarios() {
        let config = FuzzConfig {
            seed: 0x5ce7,
            iterations: Some(2000),
            duration: None,
        };
        let report = run_scenarios(&config).unwrap_or_else(|crash| {
            panic!(
                "{}\n--- input ---\n{}",
                crash.message,
                String::from_utf8_lossy(&crash.input)
            )
        });
        assert_eq!(report.iterations, 2000);
        assert!(report.accepted > 50, "{report}");
        for (name, count) in REFUSAL_VARIANTS.iter().zip(report.refused).take(4) {
            assert!(count > 10, "{name}: only {count}\n{report}");
        }
    }
}
