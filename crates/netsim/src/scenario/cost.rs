//! What a scenario will cost before it runs: events per simulated second, memory, and the wall
//! time to expect on this machine (docs/scenario.md, "Cost and limits").
//!
//! The estimate is a fluid model of the run. Every flow asks for a rate: its configured rate
//! for CBR, ON/OFF, ping and application-limited sources, the offered load of web and short
//! TCP traffic, `window / RTT` for a TCP, and "as much as it can get" for a greedy TFRC, RAP or
//! TEAR flow. The links share their capacity among the flows crossing them max-min fairly
//! (progressive filling), which bounds every greedy flow by the bottleneck it crosses. Each
//! packet then costs the engine (see [`crate::sim`]): one timer event at the source if the
//! source is paced by a timer (not for ACK-clocked TCP), one arrival event per hop, and one
//! transmission-end event per hop when it had to wait, counted as the link's utilization; the
//! replies (ACKs, reports, echoes) likewise on the way back. ON/OFF toggles cost two events per
//! cycle. Memory is the monitors' per-bin series (one value per bin per series, kept twice at
//! the end: the run's results and their copy handed to the caller), the packet trace, and a
//! constant per flow for its agents and bookkeeping.
//!
//! [`Budget::DEFAULT`] is what a run may cost without being forced; over it, [`check`] refuses
//! with one line naming the parts of the scenario that dominate and how to lower them.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use super::flow_spec::FlowSpec;
use super::spec::Scenario;
use crate::agent::web::InterPageFrom;
use crate::agent::{AgentConfig, TfrcApplication};
use crate::packet::NodeId;
use crate::topology::{LinkId, Topology};

/// Events the engine processes per wall-clock second on this kind of machine: measured with
/// `cargo bench -p netsim --bench network` on floyd2000 Fig. 9 (16 SACK + 16 TFRC flows on a
/// 15 Mb/s RED bottleneck), about 7 million events per second on one core of the project's
/// 2-core build machine. The wall-time estimate divides by it.
pub const EVENTS_PER_WALL_SECOND: f64 = 7.0e6;

/// Memory per flow besides its per-bin series: two agents (a TCP or TFRC sender holds a few
/// KiB of state), the flow's monitor, setup and result: building 100000 TFRC flows costs about
/// 4.5 KiB each for the checked scenario and 1.5 KiB each for its simulation (resident memory
/// measured), rounded up.
pub const BYTES_PER_FLOW: u64 = 8 * 1024;

/// Memory per connection of a short-TCP or web flow that is open and waiting: its TCP sender
/// and receiver in their pools and their timers. Measured at 3.1 KiB per connection (resident
/// memory growing with the backlog of an overloaded `short_tcp` flow), rounded up.
pub const BYTES_PER_WAITING_CONNECTION: u64 = 4 * 1024;

/// How many times a flow's mean packets per bin its busiest bins hold (bursts: a window sent
/// back to back), for the width its per-bin counters need.
const BURST_FACTOR: f64 = 4.0;
/// Bytes a changed state field costs in a bin's sample (an XOR of a few bytes and its header;
/// see `monitor::state_trace`), measured at 1-2 on floyd2000 Fig. 9, rounded up.
const STATE_BYTES_PER_FIELD: f64 = 2.0;
/// Bytes per bin of a binned link's series: 4 × u32 + 4 × u64, plus the three f64 series
/// (mean queue in packets and bytes, utilization) made from them at the end.
const LINK_BIN_BYTES: u64 = 48 + 24;
/// Bytes per packet-trace record, as kept and as handed over.
const TRACE_RECORD_BYTES: u64 = 48;
/// Copies of the per-bin series alive at once at the end of a run: the results and the arrays
/// built from them for the caller.
const RESULT_COPIES: u64 = 2;
/// Write buffer per trace file (`trace::files`).
const TRACE_BUFFER_BYTES: u64 = 64 * 1024;
/// A typical ns-2 trace line (`r 12.345678 3 4 tcp 1040 ------- 0 0.0 5.0 1234 5678`).
const NS2_LINE_BYTES: f64 = 55.0;
/// Per-bin state samples cost about a quarter of an event each.
const SAMPLE_COST_EVENTS: f64 = 0.25;

/// Limits a run must stay within unless forced.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Budget {
    /// The longest expected wall time.
    pub wall: Duration,
    /// The most memory, in bytes.
    pub memory_bytes: u64,
}

impl Budget {
    /// The default budget: 10 minutes of expected wall time and 4 GiB of memory.
    pub const DEFAULT: Budget = Budget {
        wall: Duration::from_secs(600),
        memory_bytes: 4 << 30,
    };
}

impl Default for Budget {
    fn default() -> Budget {
        Budget::DEFAULT
    }
}

/// One part of a scenario and what it costs.
#[derive(Clone, Debug, PartialEq)]
pub struct CostPart {
    /// Where it is in the file: `flows[2]` (all the flows of that table), `monitor.bin` (the
    /// per-bin series), `monitor.packet_trace`, `topology` (the links).
    pub path: String,
    /// Events per simulated second it causes.
    pub events_per_s: f64,
    /// Bytes of memory it needs.
    pub memory_bytes: u64,
    /// How to make it cheaper, for the message.
    pub hint: String,
    /// Bytes it writes to disk (trace files; not part of the budget).
    pub disk_bytes: u64,
}

/// What a run of a scenario is expected to cost.
#[derive(Clone, Debug, PartialEq)]
pub struct CostEstimate {
    /// Events per simulated second, all parts together.
    pub events_per_s: f64,
    /// Events over the whole run.
    pub events: f64,
    /// Peak memory in bytes.
    pub memory_bytes: u64,
    /// Expected wall time in seconds on this machine ([`EVENTS_PER_WALL_SECOND`]).
    pub wall_s: f64,
    /// Bins per series.
    pub bins: u64,
    /// Flows, `count` expanded.
    pub flows: usize,
    /// Links whose per-bin series are kept (`monitor.links`).
    pub binned_links: u64,
    /// State fields traced, all flows together (each a per-bin series): with `bins`, `flows`
    /// and `binned_links`, how many values the results hold, for the cost of writing them.
    pub state_fields: u64,
    /// The parts, costliest first (by events, then memory).
    pub parts: Vec<CostPart>,
}

impl CostEstimate {
    /// Bytes the trace files named by `monitor.pcap` and `monitor.ns2_trace` will take on
    /// disk (0 without them); not part of the budget.
    pub fn disk_bytes(&self) -> u64 {
        self.parts.iter().map(|p| p.disk_bytes).sum()
    }

    /// Why the estimate is over `budget`, as one line naming the dominant parts and how to lower
    /// them; `None` when it fits.
    pub fn refusal(&self, budget: &Budget) -> Option<String> {
        let wall_over = self.wall_s > budget.wall.as_secs_f64();
        let memory_over = self.memory_bytes > budget.memory_bytes;
        if !wall_over && !memory_over {
            return None;
        }
        let mut reasons = Vec::new();
        if wall_over {
            let mut parts: Vec<&CostPart> =
                self.parts.iter().filter(|p| p.events_per_s > 0.0).collect();
            parts.sort_by(|a, b| b.events_per_s.total_cmp(&a.events_per_s));
            let named: Vec<String> = parts
                .iter()
                .take(2)
                .map(|p| {
                    format!(
                        "{} ({} events per simulated second: {})",
                        p.path,
                        sci(p.events_per_s),
                        p.hint
                    )
                })
                .collect();
            reasons.push(format!(
                "about {} of wall time expected ({} events; budget {}), mostly from {}; or \
                 shorten `duration`",
                human_secs(self.wall_s),
                sci(self.events),
                human_secs(budget.wall.as_secs_f64()),
                named.join(" and ")
            ));
        }
        if memory_over {
            let mut parts: Vec<&CostPart> =
                self.parts.iter().filter(|p| p.memory_bytes > 0).collect();
            parts.sort_by_key(|p| std::cmp::Reverse(p.memory_bytes));
            let named: Vec<String> = parts
                .iter()
                .take(2)
                .map(|p| format!("{} ({}: {})", p.path, gib(p.memory_bytes), p.hint))
                .collect();
            reasons.push(format!(
                "about {} of memory needed (budget {}), mostly for {}",
                gib(self.memory_bytes),
                gib(budget.memory_bytes),
                named.join(" and ")
            ));
        }
        Some(format!(
            "too costly to run: {}; force the run to go ahead anyway",
            reasons.join("; ")
        ))
    }
}

/// A scenario whose estimate is over the budget.
#[derive(Clone, Debug, PartialEq)]
pub struct CostError {
    /// The estimate (boxed: it is large for an error).
    pub estimate: Box<CostEstimate>,
    /// The one-line message ([`CostEstimate::refusal`]).
    pub message: String,
    /// The path of the costliest part (`flows[0]`, `monitor.bin`).
    pub path: String,
}

impl fmt::Display for CostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CostError {}

/// Estimates `scenario`'s run and refuses it if it is over `budget`.
pub fn check(scenario: &Scenario, budget: &Budget) -> Result<CostEstimate, CostError> {
    let estimate = scenario.estimate();
    match estimate.refusal(budget) {
        None => Ok(estimate),
        Some(message) => {
            let wall_over = estimate.wall_s > budget.wall.as_secs_f64();
            let costliest = estimate
                .parts
                .iter()
                .max_by(|a, b| {
                    if wall_over {
                        a.events_per_s.total_cmp(&b.events_per_s)
                    } else {
                        a.memory_bytes.cmp(&b.memory_bytes)
                    }
                })
                .map_or_else(String::new, |p| p.path.clone());
            Err(CostError {
                estimate: Box::new(estimate),
                message,
                path: costliest,
            })
        }
    }
}

/// One flow in the fluid model.
struct FluidFlow {
    /// Index of its `[[flows]]` table's part.
    part: usize,
    forward: Vec<LinkId>,
    backward: Vec<LinkId>,
    /// Data packet size in bits.
    data_bits: f64,
    /// Reply packet size in bits.
    reply_bits: f64,
    /// The rate it asks for while active, in bit/s (`INFINITY`: greedy).
    demand_bps: f64,
    /// The share of the run it is active (start to stop, times the ON share).
    active: f64,
    /// Whether a timer paces its packets (one event per packet at the source).
    paced: bool,
    /// Replies per data packet (ACKs), and replies per second regardless of rate (reports).
    replies_per_packet: f64,
    replies_per_rtt: f64,
    rtt_s: f64,
    /// ON/OFF toggles per second.
    toggles_per_s: f64,
    /// Connections it opens per second while active whatever the network does (short TCP,
    /// web pages started on a clock); 0 for the others.
    connections_per_s: f64,
    /// The rate it gets, bit/s averaged over the run.
    rate_bps: f64,
    /// The state fields its agents trace.
    state_fields: u64,
}

/// Estimates the cost of running `scenario` (see the module documentation). `topology` is the
/// built network; `binned` the links whose series are kept (`None`: all); `state_fields(flow)`
/// the number of state fields the flow's agents trace.
pub(super) fn estimate(
    scenario: &Scenario,
    topology: &Topology,
    binned: Option<&[LinkId]>,
    state_fields: impl Fn(&FlowSpec) -> usize,
) -> CostEstimate {
    let duration_s = scenario.duration.as_secs_f64();
    let bins = {
        let (d, b) = (scenario.duration.as_nanos(), scenario.bin.as_nanos().max(1));
        u64::try_from(d.div_ceil(b)).unwrap_or(u64::MAX)
    };
    let routes = topology.routes();
    let mut paths: BTreeMap<(NodeId, NodeId), Vec<LinkId>> = BTreeMap::new();
    let mut path = |from: NodeId, to: NodeId| -> Vec<LinkId> {
        paths
            .entry((from, to))
            .or_insert_with(|| routes.path(topology, from, to).unwrap_or_default())
            .clone()
    };
    let mut parts: Vec<CostPart> = Vec::new();
    let mut part_of: BTreeMap<&str, usize> = BTreeMap::new();
    let mut fluid = Vec::with_capacity(scenario.flows.len());
    let mut flow_bin_bytes: u64 = 0;
    for flow in &scenario.flows {
        let part = *part_of.entry(flow.path.as_str()).or_insert_with(|| {
            parts.push(CostPart {
                path: flow.path.clone(),
                events_per_s: 0.0,
                memory_bytes: 0,
                hint: hint(flow),
                disk_bytes: 0,
            });
            parts.len() - 1
        });
        let (Some(from), Some(to)) = (topology.node(&flow.from), topology.node(&flow.to)) else {
            continue;
        };
        let forward = path(from, to);
        let backward = path(to, from);
        let one_way = |links: &[LinkId], bits: f64| -> f64 {
            links
                .iter()
                .map(|&id| {
                    let link = topology.link(id);
                    link.delay.as_secs_f64() + bits / link.rate_bps as f64
                })
                .sum()
        };
        let data_bits = f64::from(flow.agent.data_size_bytes().max(1)) * 8.0;
        let reply_bits = f64::from(flow.agent.reply_size_bytes().max(40)) * 8.0;
        let rtt_s = (one_way(&forward, data_bits) + one_way(&backward, reply_bits)).max(1e-9);
        let (demand_bps, paced, replies_per_packet, replies_per_rtt) =
            demand(&flow.agent, rtt_s, duration_s);
        let start_s = flow.start.mean().as_secs_f64();
        let stop_s = flow
            .stop
            .map_or(duration_s, |s| s.mean().as_secs_f64())
            .min(duration_s);
        let mut active = ((stop_s - start_s) / duration_s).clamp(0.0, 1.0);
        let mut toggles_per_s = 0.0;
        if let Some(on_off) = flow.on_off {
            let (on, off) = (
                on_off.on.mean().as_secs_f64(),
                on_off.off.mean().as_secs_f64(),
            );
            let cycle = (on + off).max(1e-9);
            active *= on / cycle;
            toggles_per_s = 2.0 / cycle * ((stop_s - start_s) / duration_s).clamp(0.0, 1.0);
        }
        fluid.push(FluidFlow {
            part,
            forward,
            backward,
            data_bits,
            reply_bits,
            demand_bps: if active > 0.0 {
                demand_bps * active
            } else {
                0.0
            },
            active,
            paced,
            replies_per_packet,
            replies_per_rtt,
            rtt_s,
            toggles_per_s,
            connections_per_s: open_loop_connections_per_s(&flow.agent),
            rate_bps: 0.0,
            state_fields: 0,
        });
        if let Some(last) = fluid.last_mut() {
            last.state_fields = state_fields(flow) as u64;
        }
        parts[part].memory_bytes = parts[part].memory_bytes.saturating_add(BYTES_PER_FLOW);
    }
    let capacity: Vec<f64> = topology.links().iter().map(|l| l.rate_bps as f64).collect();
    share_max_min(&mut fluid, &capacity);

    // Load per link (data forward, replies backward), for the transmission-end events, and
    // packets per second per link, for the trace files.
    let mut load = vec![0.0; capacity.len()];
    let mut link_pps = vec![0.0; capacity.len()];
    for f in &fluid {
        let pps = f.rate_bps / f.data_bits;
        for &l in &f.forward {
            load[l.0 as usize] += f.rate_bps;
            link_pps[l.0 as usize] += pps;
        }
        let replies = pps * f.replies_per_packet + f.active * f.replies_per_rtt / f.rtt_s;
        for &l in &f.backward {
            load[l.0 as usize] += replies * f.reply_bits;
            link_pps[l.0 as usize] += replies;
        }
    }
    let utilization: Vec<f64> = load
        .iter()
        .zip(&capacity)
        .map(|(load, cap)| (load / cap).min(1.0))
        .collect();
    let hops =
        |links: &[LinkId]| -> f64 { links.iter().map(|l| 1.0 + utilization[l.0 as usize]).sum() };
    let bin_s = scenario.bin.as_secs_f64();
    for f in &fluid {
        let packets = f.rate_bps / f.data_bits * bin_s;
        let per_bin = flow_bin_bytes_of(packets, f.data_bits / 8.0);
        let state = state_bin_bytes(packets, f.state_fields);
        let bytes = (bins as f64 * (per_bin + state)).min(u64::MAX as f64) as u64;
        flow_bin_bytes = flow_bin_bytes.saturating_add(bytes);
    }
    for f in &fluid {
        let pps = f.rate_bps / f.data_bits;
        let sent_pps = if f.paced && f.demand_bps.is_finite() {
            // A paced source's timer fires for every packet it sends, whether or not the
            // network carries it.
            (f.demand_bps / f.data_bits).max(pps)
        } else if f.paced {
            pps
        } else {
            0.0
        };
        let replies = pps * f.replies_per_packet + f.active * f.replies_per_rtt / f.rtt_s;
        let events = sent_pps
            + pps * hops(&f.forward)
            + replies * (1.0 + hops(&f.backward))
            + f.toggles_per_s;
        parts[f.part].events_per_s += events;
    }

    let mut memory = BYTES_PER_FLOW.saturating_mul(scenario.flows.len() as u64);
    for f in &fluid {
        // Connections that arrive faster than the path carries them wait, open, to the end.
        if f.connections_per_s > 0.0 && f.demand_bps > f.rate_bps {
            let unserved = 1.0 - f.rate_bps / f.demand_bps;
            let waiting = f.connections_per_s * f.active * duration_s * unserved;
            let bytes = (waiting * BYTES_PER_WAITING_CONNECTION as f64).min(u64::MAX as f64) as u64;
            parts[f.part].memory_bytes = parts[f.part].memory_bytes.saturating_add(bytes);
            memory = memory.saturating_add(bytes);
        }
    }
    if flow_bin_bytes > 0 {
        // One copy: the flows' series and state traces are handed over, not copied.
        let bytes = flow_bin_bytes;
        parts.push(CostPart {
            path: "monitor.bin".into(),
            events_per_s: 0.0,
            memory_bytes: bytes,
            hint: format!(
                "{bins} bins × {} flows; a coarser `monitor.bin`, a shorter `duration` or fewer \
                 flows",
                scenario.flows.len()
            ),
            disk_bytes: 0,
        });
        memory = memory.saturating_add(bytes);
    }
    let binned_links = binned.map_or(capacity.len(), <[LinkId]>::len) as u64;
    let link_bytes = bins
        .saturating_mul(LINK_BIN_BYTES)
        .saturating_mul(binned_links)
        .saturating_mul(RESULT_COPIES);
    if link_bytes > 0 {
        parts.push(CostPart {
            path: "monitor.links".into(),
            events_per_s: 0.0,
            memory_bytes: link_bytes,
            hint: format!(
                "{bins} bins × {binned_links} links; a coarser `monitor.bin` or fewer \
                 `monitor.links`"
            ),
            disk_bytes: 0,
        });
        memory = memory.saturating_add(link_bytes);
    }
    let events_per_s: f64 = parts.iter().map(|p| p.events_per_s).sum();
    let events = events_per_s * duration_s;
    if let Some(limit) = scenario.packet_trace {
        // A packet is recorded a few times (sent, enqueued, started, delivered).
        let records = (events * 2.0).min(limit as f64);
        let bytes = (records * (TRACE_RECORD_BYTES * RESULT_COPIES) as f64) as u64;
        parts.push(CostPart {
            path: "monitor.packet_trace".into(),
            events_per_s: 0.0,
            memory_bytes: bytes,
            hint: "a lower `monitor.packet_trace`".into(),
            disk_bytes: 0,
        });
        memory = memory.saturating_add(bytes);
    }
    let buffers = trace_parts(scenario, topology, &load, &link_pps, duration_s, &mut parts);
    memory = memory.saturating_add(buffers);
    let traced_flows = scenario
        .flows
        .iter()
        .filter(|f| state_fields(f) > 0)
        .count();
    let samples = bins as f64 * traced_flows as f64;
    let wall_s = (events + samples * SAMPLE_COST_EVENTS) / EVENTS_PER_WALL_SECOND;
    parts.sort_by(|a, b| {
        b.events_per_s
            .total_cmp(&a.events_per_s)
            .then(b.memory_bytes.cmp(&a.memory_bytes))
    });
    CostEstimate {
        events_per_s,
        events,
        memory_bytes: memory,
        wall_s,
        bins,
        flows: scenario.flows.len(),
        binned_links,
        state_fields: fluid.iter().map(|f| f.state_fields).sum(),
        parts,
    }
}

/// The trace files the scenario's `monitor.pcap` and `monitor.ns2_trace` name (those written
/// when the caller gives a destination): a part each, with its write buffers as memory, and the
/// bytes they will take on disk: per pcap record its 16-byte header and the packet, per ns-2
/// line [`NS2_LINE_BYTES`], four lines per packet; every link capped at `trace_limit` records.
/// Returns the buffers' memory.
fn trace_parts(
    scenario: &Scenario,
    topology: &Topology,
    load_bps: &[f64],
    link_pps: &[f64],
    duration_s: f64,
    parts: &mut Vec<CostPart>,
) -> u64 {
    let limit = scenario.traces.limit as f64;
    let mut memory = 0;
    let mut add = |path: &str, links: &[LinkId], per_record: &dyn Fn(usize) -> (f64, f64)| {
        let mut bytes = 0.0;
        for link in links {
            let (records, size) = per_record(link.0 as usize);
            bytes += records.min(limit) * size;
        }
        let buffers = TRACE_BUFFER_BYTES * links.len() as u64;
        memory += buffers;
        parts.push(CostPart {
            path: path.into(),
            events_per_s: 0.0,
            memory_bytes: buffers,
            disk_bytes: bytes as u64,
            hint: format!(
                "about {} MB on disk; fewer links in `{path}` or a lower `monitor.trace_limit`",
                (bytes / 1e6).ceil()
            ),
        });
    };
    let pcap_record = |l: usize| {
        let pps = link_pps[l];
        let mean_size = if pps > 0.0 {
            load_bps[l] / 8.0 / pps
        } else {
            0.0
        };
        (pps * duration_s, 16.0 + mean_size)
    };
    let ns2_record = |l: usize| (4.0 * link_pps[l] * duration_s, NS2_LINE_BYTES);
    if scenario.traces.pcap.is_some() {
        if let Ok(links) = scenario.traces.pcap_links(topology) {
            add("monitor.pcap", &links, &pcap_record);
        }
    }
    if scenario.traces.ns2.is_some() {
        if let Ok(links) = scenario.traces.ns2_links(topology) {
            add("monitor.ns2_trace", &links, &ns2_record);
        }
    }
    memory
}

/// Connections per second a flow opens while active regardless of how fast the earlier ones
/// finish: a short-TCP flow's arrivals, a web session's objects when its pages start on a clock
/// (`inter_page_from = "start"`); 0 for closed-loop and other flows.
fn open_loop_connections_per_s(agent: &AgentConfig) -> f64 {
    match agent {
        AgentConfig::ShortTcp(c) => 1.0 / c.interarrival.mean().max(1e-9),
        AgentConfig::Web(c) if c.inter_page_from == InterPageFrom::Start => {
            c.objects_per_page.mean_ceil() / c.inter_page.mean().max(1e-9)
        }
        _ => 0.0,
    }
}

/// The rate a flow asks for while active (bit/s; infinite for greedy), whether a timer paces its
/// packets, its replies per data packet, and its replies per RTT.
fn demand(agent: &AgentConfig, rtt_s: f64, duration_s: f64) -> (f64, bool, f64, f64) {
    let capped = |rate: f64, max_packets: Option<u64>, size_bytes: u32| match max_packets {
        Some(n) => rate.min(n as f64 * f64::from(size_bytes) * 8.0 / duration_s),
        None => rate,
    };
    match agent {
        AgentConfig::Cbr(c) => (
            capped(c.rate_bps as f64, c.max_packets, c.size_bytes),
            true,
            0.0,
            0.0,
        ),
        AgentConfig::OnOff(c) => (c.mean_rate_bps(), true, 0.0, 0.0),
        AgentConfig::Ping(c) => (
            f64::from(c.size_bytes) * 8.0 / c.interval.as_secs_f64().max(1e-9),
            true,
            1.0,
            0.0,
        ),
        AgentConfig::Tfrc(c) => {
            let rate = match c.application {
                TfrcApplication::Greedy => f64::INFINITY,
                TfrcApplication::Limited { rate_bps } => rate_bps as f64,
            };
            // Feedback once per RTT, from the receiver's timer.
            (rate, true, 0.0, 2.0)
        }
        AgentConfig::Tcp(c) => {
            let window = f64::from(c.window.max(1)) * f64::from(c.data_packet_bytes()) * 8.0;
            (window / rtt_s, false, 1.0, 0.0)
        }
        AgentConfig::ControlledTcp(c) => {
            let window =
                f64::from(c.tcp.window.max(1)) * f64::from(c.tcp.data_packet_bytes()) * 8.0;
            (window / rtt_s, false, 1.0, 0.0)
        }
        AgentConfig::Gaimd(c) => {
            let tcp = c.tcp();
            let window = f64::from(tcp.window.max(1)) * f64::from(tcp.data_packet_bytes()) * 8.0;
            (window / rtt_s, false, 1.0, 0.0)
        }
        AgentConfig::Rap(_) => (f64::INFINITY, true, 1.0, 0.0),
        AgentConfig::Tear(_) => (f64::INFINITY, true, 0.0, 2.0),
        AgentConfig::ShortTcp(c) => (c.offered_load_bps(), false, 1.0, 0.0),
        AgentConfig::Web(c) => (c.offered_load_bps(), false, 1.0, 0.0),
    }
}

/// How to make a flow table cheaper, by kind.
fn hint(flow: &FlowSpec) -> String {
    let on_off = if flow.on_off.is_some() {
        ", longer `on_off` periods"
    } else {
        ""
    };
    let what = match &flow.agent {
        AgentConfig::Cbr(_) | AgentConfig::OnOff(_) => "a lower `rate`, a larger `size`",
        AgentConfig::Ping(_) => "a longer `interval`",
        AgentConfig::ShortTcp(_) | AgentConfig::Web(_) => "less load",
        _ => "slower links",
    };
    format!("{what}{on_off} or a lower `count`")
}

/// Max-min fair shares by progressive filling: every unsatisfied flow's rate rises together
/// until a flow gets its demand or a link fills (its flows are then bounded there). Rates are
/// averaged over the run (`demand_bps` already is), so a link's capacity is shared likewise.
fn share_max_min(flows: &mut [FluidFlow], capacity: &[f64]) {
    let mut remaining = capacity.to_vec();
    let mut frozen: Vec<bool> = flows
        .iter()
        .map(|f| f.demand_bps <= 0.0 || (!f.demand_bps.is_finite() && f.forward.is_empty()))
        .collect();
    // Flows with nowhere to go (an empty path) carry nothing through links but may still ask.
    for (f, done) in flows.iter_mut().zip(&frozen) {
        if *done && f.demand_bps.is_finite() {
            f.rate_bps = f.demand_bps.max(0.0);
        }
    }
    let mut crossing = vec![0usize; capacity.len()];
    for (f, done) in flows.iter().zip(&frozen) {
        if !done {
            for &l in &f.forward {
                crossing[l.0 as usize] += 1;
            }
        }
    }
    let mut order: Vec<usize> = (0..flows.len()).filter(|&i| !frozen[i]).collect();
    order.sort_by(|&a, &b| flows[a].demand_bps.total_cmp(&flows[b].demand_bps));
    let mut next = 0;
    let mut level = 0.0f64;
    let mut active = order.len();
    while active > 0 {
        // The next flow to be satisfied, and the tightest link.
        while next < order.len() && frozen[order[next]] {
            next += 1;
        }
        let by_demand = order
            .get(next)
            .map_or(f64::INFINITY, |&i| flows[i].demand_bps - level);
        let by_link = remaining
            .iter()
            .zip(&crossing)
            .filter(|(_, n)| **n > 0)
            .map(|(r, n)| r.max(0.0) / *n as f64)
            .fold(f64::INFINITY, f64::min);
        let step = by_demand.min(by_link);
        if !step.is_finite() {
            // Only flows with empty paths and infinite demands are left.
            break;
        }
        level += step;
        for (r, n) in remaining.iter_mut().zip(&crossing) {
            *r -= step * *n as f64;
        }
        let full: Vec<bool> = remaining
            .iter()
            .zip(&crossing)
            .map(|(r, n)| *n > 0 && *r <= 1e-9 * (1.0 + r.abs()))
            .collect();
        for (k, &i) in order.iter().enumerate().skip(next) {
            if frozen[i] {
                continue;
            }
            let satisfied = flows[i].demand_bps <= level * (1.0 + 1e-12);
            let bounded = flows[i].forward.iter().any(|l| full[l.0 as usize]);
            if satisfied || bounded {
                frozen[i] = true;
                flows[i].rate_bps = level;
                for &l in &flows[i].forward {
                    crossing[l.0 as usize] -= 1;
                }
                active -= 1;
            } else if !satisfied && by_link > by_demand && k > next {
                // Demands are sorted: no later flow is satisfied, and no link filled.
                break;
            }
        }
    }
}

/// `x` in scientific notation with two significant digits (`1.3e12`), or plain below 1000.
fn sci(x: f64) -> String {
    if x < 1000.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1e}")
    }
}

/// Seconds as a human duration (`45 s`, `12 min`, `7.0 h`, `3.2 days`).
fn human_secs(s: f64) -> String {
    if s < 120.0 {
        format!("{s:.0} s")
    } else if s < 7200.0 {
        format!("{:.0} min", s / 60.0)
    } else if s < 172_800.0 {
        format!("{:.1} h", s / 3600.0)
    } else {
        format!("{:.1} days", s / 86_400.0)
    }
}

/// Bytes in GiB (`7.5 GiB`), or MiB below 1 GiB.
fn gib(bytes: u64) -> String {
    let b = bytes as f64;
    if b < (1u64 << 30) as f64 {
        format!("{:.0} MiB", b / (1u64 << 20) as f64)
    } else {
        format!("{:.1} GiB", b / (1u64 << 30) as f64)
    }
}

/// The bytes one unsigned counter takes to hold `value` (`monitor::Counts` widths).
fn count_width(value: f64) -> f64 {
    if value < 256.0 {
        1.0
    } else if value < 65_536.0 {
        2.0
    } else if value < 4_294_967_296.0 {
        4.0
    } else {
        8.0
    }
}

/// Bytes per bin of a flow's seven counters (packets and bytes sent, received, dropped; loss
/// events) for a flow sending `packets` a bin on average, of `size` bytes: each counter in the
/// narrowest width its busiest bins need.
fn flow_bin_bytes_of(packets: f64, size: f64) -> f64 {
    let peak = (packets * BURST_FACTOR).max(1.0);
    4.0 * count_width(peak) + 3.0 * count_width(peak * size)
}

/// Bytes per bin of a flow's compressed state trace (`monitor::state_trace`): an unchanged
/// bin costs nothing; a bin in which the flow sent or got packets (about twice its data
/// packets, counting replies, at most every bin) a count, a mask and its changed fields.
fn state_bin_bytes(packets: f64, fields: u64) -> f64 {
    if fields == 0 {
        return 0.0;
    }
    let busy = (2.0 * packets).min(1.0);
    let fields = fields as f64;
    busy * (1.0 + (fields / 8.0).ceil() + STATE_BYTES_PER_FIELD * fields)
}
