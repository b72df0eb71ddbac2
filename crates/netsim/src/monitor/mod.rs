//! Monitors recorded while a run goes: per flow, per link, and an optional per-packet trace.
//!
//! The engine feeds each monitor as events happen, in nondecreasing time order per monitor, and
//! calls `finish(end)` once at the end of the run. Every time series is binned on one fixed
//! width: bin k covers [k·bin, (k+1)·bin), and a finished series has exactly `ceil(end / bin)`
//! values. Memory grows only with the number of bins, never with the number of packets or events
//! (the [`PacketTrace`], off by default, keeps at most its limit of records).
//!
//! What is recorded is what the metrics of the papers need (the metrics reference in the shared
//! reference notes): per-bin send counts for the send rate at timescale delta and its CoV, the
//! equivalence and fairness figures (Floyd 2000 eq. 3-4, §4.1.1; Yang 2001 §III-A), loss events
//! counted the same way for every protocol (Rhee & Xu 2005 §2), link utilization and drop rate
//! (Floyd 2000 Table 25) and the time-weighted queue length (Floyd 2000 Figs. 14, 24-28).
//!
//! - [`bins`]: the bin grid and the lazily grown per-bin series both monitors share;
//! - [`counts`]: [`Counts`], a per-bin counter stored as narrow as its values allow;
//! - [`flow`]: [`FlowMonitor`], one per flow;
//! - [`drop_log`]: [`DropLog`], the opt-in send times of a flow's dropped packets;
//! - [`link`]: [`LinkMonitor`], one per link;
//! - [`packet_trace`]: [`PacketTrace`], the opt-in per-packet event log;
//! - [`state_trace`]: [`StateSamples`], the agents' sampled state, compressed.

pub mod bins;
pub mod counts;
pub mod drop_log;
pub mod flow;
pub mod link;
pub mod packet_trace;
pub mod state_trace;

pub use bins::{BinSpan, Bins, PerBin};
pub use counts::{Count, Counts, Narrow};
pub use drop_log::{DropLog, DropLogRecord, DEFAULT_DROP_LOG_LIMIT};
pub use flow::{FlowBins, FlowMonitor, FlowRecord, FlowTotals, StateTrace};
pub use link::{LinkBins, LinkMonitor, LinkRecord, LinkTotals};
pub use packet_trace::{PacketEvent, PacketRecord, PacketTrace};
pub use state_trace::{decode_blob, StateSamples};

/// Where a packet was lost: kept apart because a queue drop is congestion the flows caused and
/// a loss-model drop is loss imposed on them (the figures of Floyd 2000 and Rhee & Xu 2005 run
/// under both).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DropCause {
    /// The link's output queue refused the packet (DropTail overflow, RED early or forced drop).
    Queue,
    /// The link's loss model dropped the packet before the queue.
    LossModel,
}
