//! What a run produces: per-flow and per-link records (binned counters, totals, state traces),
//! the optional packet trace, and what is needed to redo the run (scenario, seed, version).

use std::time::Duration;

use crate::monitor::{FlowRecord, LinkRecord, PacketRecord};
use crate::queue::{Queue, QueueConfig, QueueLimit, QueueStats};
use crate::topology::LinkId;

/// Everything a run measured. Equal scenarios and seeds give equal `Results`, bit for bit.
#[derive(Clone, Debug, PartialEq)]
pub struct Results {
    /// The scenario as TOML (empty when the run was built in code rather than from a file).
    pub scenario: String,
    /// The seed every random stream was derived from.
    pub seed: u64,
    /// The netsim version that produced the results.
    pub version: String,
    /// Simulated time covered.
    pub duration: Duration,
    /// Width of every bin in the records.
    pub bin: Duration,
    /// Events processed.
    pub events: u64,
    /// One entry per flow, in scenario order.
    pub flows: Vec<FlowResult>,
    /// One entry per simplex link, in topology order.
    pub links: Vec<LinkResult>,
    /// The per-packet trace, when it was asked for.
    pub packet_trace: Option<PacketTraceResult>,
    /// What each pcap and ns-2 trace wrote (empty when none was attached).
    pub traces: Vec<crate::trace::TraceSummary>,
}

/// One flow's identity and measurements.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowResult {
    /// The flow's name.
    pub name: String,
    /// Its protocol ("cbr", "tcp", "tfrc", ...).
    pub kind: String,
    /// Its variant or preset within the protocol ("" if none).
    pub variant: String,
    /// The source's node.
    pub from: String,
    /// The sink's node.
    pub to: String,
    /// When the flow started (drawn, if the scenario gave a distribution).
    pub start: Duration,
    /// When the flow stopped for good, if the scenario gave a stop (drawn, if a distribution);
    /// it may lie beyond the end of the run.
    pub stop: Option<Duration>,
    /// The links its data crosses, source to sink, as indices into [`Results::links`].
    pub path: Vec<LinkId>,
    /// Round-trip propagation plus serialization time of the flow's path (a data packet forward,
    /// a reply back); the loss-event grouping uses it unless the scenario overrides it.
    pub base_rtt: Duration,
    /// The RTT used to group losses into loss events.
    pub loss_event_rtt: Duration,
    /// Binned counters, totals and the state trace.
    pub record: FlowRecord,
}

/// One link's identity and measurements.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkResult {
    /// The link's name.
    pub name: String,
    /// The transmitting node.
    pub from: String,
    /// The receiving node.
    pub to: String,
    /// Rate in bits per second.
    pub rate_bps: u64,
    /// Propagation delay.
    pub delay: Duration,
    /// Binned queue, arrivals, drops and utilization, and totals.
    pub record: LinkRecord,
    /// The queue's own counters (early and forced drops, marks).
    pub queue: QueueStats,
    /// The queue as built: discipline, buffer and RED's thresholds.
    pub setup: QueueSetup,
    /// RED's average queue (ns-2 `ave_`) at the end of every bin, in the queue's units (see
    /// [`QueueSetup::red`]); empty for other queues and for links without per-bin series.
    pub red_average: Vec<f64>,
}

/// A link queue's discipline and buffer as built, for reports and figures.
#[derive(Clone, Debug, PartialEq)]
pub struct QueueSetup {
    /// `"droptail"` or `"red"`.
    pub kind: &'static str,
    /// The buffer: what may wait (docs/queues.md, "Buffer limits").
    pub limit: QueueLimit,
    /// RED's thresholds as they run (automatic ones resolved for the link).
    pub red: Option<RedSetup>,
}

/// RED's thresholds in the units its average queue is kept in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedSetup {
    /// min_th, in packets, or bytes when `in_bytes`.
    pub min_th: f64,
    /// max_th, in packets, or bytes when `in_bytes`.
    pub max_th: f64,
    /// Whether the queue (and its average) is measured in bytes (`queue_in_bytes_`).
    pub in_bytes: bool,
}

impl QueueSetup {
    /// The setup of a queue built from `config`.
    pub fn of(config: &QueueConfig, queue: &Queue) -> QueueSetup {
        match config {
            QueueConfig::DropTail { limit } => QueueSetup {
                kind: "droptail",
                limit: *limit,
                red: None,
            },
            QueueConfig::Red(red) => QueueSetup {
                kind: "red",
                limit: red.buffer,
                red: queue.as_red().map(|built| RedSetup {
                    min_th: built.params().min_th,
                    max_th: built.params().max_th,
                    in_bytes: built.config().queue_in_bytes,
                }),
            },
        }
    }
}

/// The per-packet trace and how many records did not fit its limit.
#[derive(Clone, Debug, PartialEq)]
pub struct PacketTraceResult {
    /// The records kept, in event order.
    pub records: Vec<PacketRecord>,
    /// Records that were not kept because the limit was reached.
    pub overflowed: u64,
}

impl Results {
    /// The flow named `name`.
    pub fn flow(&self, name: &str) -> Option<&FlowResult> {
        self.flows.iter().find(|f| f.name == name)
    }

    /// The link named `name`.
    pub fn link(&self, name: &str) -> Option<&LinkResult> {
        self.links.iter().find(|l| l.name == name)
    }
}
