//! The engine: builds the running network from a topology, flows and loss models, then processes
//! events in (time, sequence) order until the run's end.
//!
//! Per packet and hop there are at most two events, its arrival at the far end and, only when
//! another packet waits behind it, the end of its transmission (see [`crate::link`]); an agent's timer is one event per deadline; flow starts, stops
//! and ON/OFF toggles are one event each. The state trace needs no events: before an event runs,
//! every bin that ended at or before its time is sampled (the state only changes at events). Randomness: each link's queue and each attached loss model, each agent,
//! each flow's start/stop draws and ON/OFF draws own a stream named after the link or flow, so
//! adding a flow or a link leaves every other component's draws unchanged.
//!
//! With thousands of flows the state the engine walks (a link and the packet at the head of its
//! pipe, an agent) is rarely in the cache when its event comes up, so before handling an event
//! the loop peeks at the next two and prefetches their state (`crate::prefetch`); a hint only,
//! which changes no result. Networks small enough to stay cached skip it: there the peeking
//! costs more than it saves (`PREFETCH_MIN_STATES`).

use std::fmt;
use std::time::Duration;

use tfrc::time::duration_nanos;
use tfrc::Time;

use crate::agent::{Agent, AgentConfig, AnyAgent, Outbox, Outgoing};
use crate::dist::DurationDist;
use crate::event_queue::EventQueue;
use crate::host_jitter::HostJitter;
use crate::link::{AttachedLoss, Link, LinkEvents, Offer};
use crate::loss::{LossModel, LossModelConfig, LossModelError};
use crate::monitor::{FlowMonitor, LinkMonitor, PacketEvent, PacketRecord, PacketTrace};
use crate::packet::{FlowId, NodeId, Packet};
use crate::prefetch::prefetch;
use crate::queue::{Queue, QueueConfigError};
use crate::results::{FlowResult, LinkResult, PacketTraceResult, QueueSetup, Results};
use crate::rng::stream;
use crate::serialization::transmission_time;
use crate::topology::{LinkId, Routes, Topology, TopologyError};
use crate::trace::Taps;

/// The size assumed for a reply packet when computing a flow's base RTT if its sink sends none
/// (a 40-byte ACK, as ns-2's TCP sinks send).
const DEFAULT_REPLY_BYTES: u32 = 40;

/// Run-wide settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimConfig {
    /// Simulated time to run: events before this time run, events at or after it do not (the
    /// monitors' bins cover [0, duration)).
    pub duration: Duration,
    /// Width of the monitors' bins (above 0).
    pub bin: Duration,
    /// Keep a per-packet trace of at most this many records (`None`: no trace).
    pub packet_trace: Option<usize>,
    /// The links whose per-bin series are kept (`None`: every link). The others keep totals
    /// only, so memory stays small on topologies with many access links.
    pub binned_links: Option<Vec<LinkId>>,
}

/// ON/OFF cycling of a flow's application (berumen's restarts): ON for a drawn time, then OFF
/// for a drawn time, from the flow's start until its stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OnOff {
    /// Length of each ON period.
    pub on: DurationDist,
    /// Length of each OFF period.
    pub off: DurationDist,
}

/// One flow to run: where, which protocol, and when.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowSetup {
    /// Unique name; also names the flow's random streams.
    pub name: String,
    /// The source's node.
    pub from: NodeId,
    /// The sink's node (different from `from`).
    pub to: NodeId,
    /// The protocol.
    pub agent: AgentConfig,
    /// When the application starts.
    pub start: DurationDist,
    /// When it stops for good (`None`: at the end of the run).
    pub stop: Option<DurationDist>,
    /// ON/OFF cycling between start and stop.
    pub on_off: Option<OnOff>,
    /// The RTT that groups losses into loss events; `None` for the path's base RTT.
    pub loss_event_rtt: Option<Duration>,
    /// Host timing jitter at both ends: each packet leaves U(0, this) after its agent sent it,
    /// in order (`host_jitter.rs`); zero for none.
    pub host_jitter: Duration,
}

/// A loss model on a link, for every packet or for one flow's packets only.
#[derive(Clone, Debug, PartialEq)]
pub struct LossSetup {
    /// The link whose entry the model sits at.
    pub link: LinkId,
    /// Only this flow's packets (both directions) meet the model.
    pub flow: Option<FlowId>,
    /// The model.
    pub model: LossModelConfig,
}

/// Why a simulation could not be built (a configuration error).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum BuildError {
    /// The topology or a flow's route.
    Topology(TopologyError),
    /// A link's queue parameters.
    Queue {
        /// The link's name.
        link: String,
        /// What is wrong.
        error: QueueConfigError,
    },
    /// A loss model's parameters or placement.
    Loss {
        /// Index of the loss model in the setup list.
        index: usize,
        /// What is wrong.
        error: LossModelError,
    },
    /// A flow's setup.
    Flow {
        /// The flow's name.
        flow: String,
        /// What is wrong.
        reason: String,
    },
    /// A run-wide setting.
    Config(String),
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::Topology(error) => error.fmt(f),
            BuildError::Queue { link, error } => write!(f, "link {link:?}: {error}"),
            BuildError::Loss { index, error } => write!(f, "loss model #{index}: {error}"),
            BuildError::Flow { flow, reason } => write!(f, "flow {flow:?}: {reason}"),
            BuildError::Config(reason) => f.write_str(reason),
        }
    }
}

impl std::error::Error for BuildError {}

/// Memory that could not be had (an allocation refused up front, instead of an abort).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutOfMemory {
    /// What the memory was for.
    pub what: &'static str,
}

impl fmt::Display for OutOfMemory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "out of memory reserving {}", self.what)
    }
}

impl std::error::Error for OutOfMemory {}

impl From<TopologyError> for BuildError {
    fn from(error: TopologyError) -> BuildError {
        BuildError::Topology(error)
    }
}

/// What happens at an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Event {
    /// A link's transmitter finishes its packet.
    TransmissionEnd(u32),
    /// The packet at the head of a link's pipe reaches the far end.
    Arrival(u32),
    /// An agent's deadline; stale unless `generation` is the agent's current one.
    Timer { agent: u32, generation: u32 },
    /// A flow's application starts.
    FlowStart(u32),
    /// A flow's application stops for good.
    FlowStop(u32),
    /// A flow's ON period ends or its OFF period ends.
    Toggle(u32),
    /// An agent's host lets its next held packets go.
    HostRelease(u32),
}

/// How many flows ahead the end-of-bin sampling pass asks for a flow's state (see
/// [`crate::prefetch`]): far enough for the loads to arrive, near enough to stay cached.
const SAMPLE_PREFETCH_AHEAD: usize = 4;

/// The smallest network, in links plus agents, for which the loop prefetches the state of the
/// next events (see `Simulation::prefetch_ahead`). A dumbbell of n flows has 6n + 2. Measured
/// on the 1 Gb/s scaling dumbbells (loop CPU, median of 5 alternating runs, prefetching off
/// against on; 2-core AMD EPYC, 512 KiB second-level cache): 64 flows 0.70x, 128 flows 1.01x,
/// 256 flows 1.07x, 2048 flows 1.23x; fig09 (32 flows) 0.86x.
const PREFETCH_MIN_STATES: usize = 1024;

/// When bin `k` of width `bin` ends, (k + 1)·bin (saturating).
fn bin_end(bin: Duration, k: u64) -> Time {
    Time::from_nanos(duration_nanos(bin).saturating_mul(k.saturating_add(1)))
}

/// One agent with its place in the network and its timer bookkeeping.
#[derive(Debug)]
struct AgentSlot {
    agent: AnyAgent,
    flow: FlowId,
    node: NodeId,
    peer: NodeId,
    reverse: bool,
    next_seq: u64,
    /// The agent's deadline as of its last callback.
    deadline: Option<Time>,
    /// When the agent's live timer event is due (`None`: no live event in the queue). Timers
    /// are lazy: a deadline that moves later (a retransmission timer restarted by every ACK)
    /// leaves the queued event alone, and the event re-queues itself at the new deadline when
    /// it comes due. Only a deadline earlier than the queued event needs a new event.
    scheduled: Option<Time>,
    /// Bumped whenever a new timer event replaces the live one; older events are stale.
    generation: u32,
    /// The host's timing jitter, when the flow has any.
    host: Option<Box<HostJitter>>,
}

/// Where a flow stands for the next end-of-bin state sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sampling {
    /// Its agents have no state fields: never sampled.
    Untraced,
    /// Neither agent was called since its last sample, so its state is that sample's: it is
    /// skipped, and its monitor repeats the sample when the flow is next sampled.
    Idle,
    /// An agent was called since its last sample (or it has none yet): the flow is in
    /// `Simulation::due_flows`, to be sampled at the end of the bin.
    Due,
}

/// A flow's lifecycle state and monitor.
#[derive(Debug)]
struct FlowSlot {
    monitor: FlowMonitor,
    on_off: Option<OnOff>,
    on_off_rng: crate::rng::SimRng,
    on: bool,
    stopped: bool,
    start: Duration,
    /// When it stops for good, if the scenario says (drawn, if a distribution).
    stop: Option<Duration>,
    /// How many state-trace fields the flow's two agents have (0: nothing to sample).
    trace_fields: usize,
}

/// A simulation being run.
#[derive(Debug)]
pub struct Simulation {
    topology: Topology,
    routes: Routes,
    links: Vec<Link>,
    agents: Vec<AgentSlot>,
    flows: Vec<FlowSlot>,
    setups: Vec<FlowSetup>,
    base_rtts: Vec<Duration>,
    loss_event_rtts: Vec<Duration>,
    /// Each flow's forward path: the links its data crosses, in order.
    forward_paths: Vec<Vec<LinkId>>,
    events: EventQueue<Event>,
    outbox: Outbox,
    trace: Option<PacketTrace>,
    /// The pcap and ns-2 traces written while the run goes (`None`: none asked for).
    taps: Option<Box<Taps>>,
    now: Time,
    end: Time,
    bin: Duration,
    processed: u64,
    seed: u64,
    traced_state: bool,
    /// Whether the loop prefetches the next events' state (`prefetch_upcoming`): only for
    /// networks of at least [`PREFETCH_MIN_STATES`] links and agents, whose state outgrows the
    /// caches. On smaller ones everything stays cached and the peeking is pure cost.
    prefetch_ahead: bool,
    /// RED's average queue at the end of each bin, for the binned links with a RED queue
    /// only (their index, in link order), so that a bin's sample visits those links alone.
    red_averages: Vec<(u32, Vec<f64>)>,
    /// The next bin whose end-of-bin state sample is due.
    next_sample: u64,
    /// When that bin ends (saturating): the loop compares each event's time with it.
    next_sample_end: Time,
    /// Room for one flow's state sample (one buffer for all flows: fewer cold cache lines per
    /// sample than one each).
    trace_buffer: Vec<f64>,
    /// Each flow's [`Sampling`] state, apart from the flows' records so that a callback and
    /// the end-of-bin pass read one dense byte per flow.
    sampling: Vec<Sampling>,
    /// The flows to sample at the end of the bin, in the order they became due: the pass
    /// visits only these, so a bin costs in proportion to the flows active in it, and idle
    /// flows (thousands, in a large run) are not touched.
    due_flows: Vec<u32>,
}

impl Simulation {
    /// Builds the network and schedules the flows. Every error that a run could meet is found
    /// here: bad queue or loss parameters, flows without a route, a zero bin.
    pub fn new(
        topology: Topology,
        flows: Vec<FlowSetup>,
        losses: Vec<LossSetup>,
        config: SimConfig,
        seed: u64,
    ) -> Result<Simulation, BuildError> {
        if config.bin.is_zero() {
            return Err(BuildError::Config("the bin width must be above 0".into()));
        }
        let routes = topology.routes();
        let mut links = Vec::with_capacity(topology.links().len());
        let mut red_averages = Vec::new();
        for (index, spec) in topology.links().iter().enumerate() {
            let binned = config
                .binned_links
                .as_ref()
                .is_none_or(|binned| binned.contains(&LinkId(index as u32)));
            let monitor = if binned {
                LinkMonitor::new(config.bin, spec.rate_bps)
            } else {
                LinkMonitor::totals_only(config.bin, spec.rate_bps)
            };
            let queue =
                Queue::try_new(&spec.queue, spec.rate_bps, spec.delay).map_err(|error| {
                    BuildError::Queue {
                        link: spec.name.clone(),
                        error,
                    }
                })?;
            if binned && queue.as_red().is_some() {
                red_averages.push((index as u32, Vec::new()));
            }
            links.push(Link::new(
                spec.to,
                spec.rate_bps,
                spec.delay,
                queue,
                stream(seed, &format!("link:{}:queue", spec.name)),
                Vec::new(),
                monitor,
            ));
        }
        for (index, setup) in losses.iter().enumerate() {
            let link = links
                .get_mut(setup.link.0 as usize)
                .ok_or_else(|| BuildError::Config(format!("loss model #{index}: no such link")))?;
            if setup.flow.is_some_and(|f| f.0 as usize >= flows.len()) {
                return Err(BuildError::Config(format!(
                    "loss model #{index}: no such flow"
                )));
            }
            let model = LossModel::try_new(&setup.model, setup.flow)
                .map_err(|error| BuildError::Loss { index, error })?;
            let name = &topology.link(setup.link).name;
            let k = link.loss_count();
            link.attach_loss(AttachedLoss {
                model,
                rng: stream(seed, &format!("link:{name}:loss:{k}")),
            });
        }

        let end = Time::ZERO + config.duration;
        let mut events = EventQueue::with_capacity(4 * links.len() + 4 * flows.len() + 16);
        let mut agents = Vec::with_capacity(2 * flows.len());
        let mut flow_slots = Vec::with_capacity(flows.len());
        let mut base_rtts = Vec::with_capacity(flows.len());
        let mut loss_event_rtts = Vec::with_capacity(flows.len());
        let mut forward_paths = Vec::with_capacity(flows.len());
        let mut traced_state = false;
        let mut most_fields = 0;
        let mut sampling = Vec::with_capacity(flows.len());
        let mut due_flows = Vec::with_capacity(flows.len());
        let mut names = std::collections::BTreeSet::new();
        for (index, setup) in flows.iter().enumerate() {
            let flow_error = |reason: String| BuildError::Flow {
                flow: setup.name.clone(),
                reason,
            };
            if !names.insert(setup.name.as_str()) {
                return Err(flow_error("two flows have this name".into()));
            }
            if setup.from == setup.to {
                return Err(flow_error("its source and sink are the same node".into()));
            }
            setup.agent.validate().map_err(&flow_error)?;
            let forward = routes
                .path(&topology, setup.from, setup.to)
                .map_err(|e| flow_error(e.to_string()))?;
            let backward = routes
                .path(&topology, setup.to, setup.from)
                .map_err(|e| flow_error(e.to_string()))?;
            let reply = match setup.agent.reply_size_bytes() {
                0 => DEFAULT_REPLY_BYTES,
                size => size,
            };
            let one_way = |path: &[LinkId], size: u32| -> Duration {
                path.iter()
                    .map(|&id| {
                        let spec = topology.link(id);
                        spec.delay + transmission_time(size, spec.rate_bps)
                    })
                    .sum()
            };
            let base_rtt =
                one_way(&forward, setup.agent.data_size_bytes()) + one_way(&backward, reply);
            let loss_event_rtt = setup.loss_event_rtt.unwrap_or(base_rtt);

            let flow = FlowId(index as u32);
            let (source, sink) = setup.agent.build(
                stream(seed, &format!("flow:{}:source", setup.name)),
                stream(seed, &format!("flow:{}:sink", setup.name)),
            );
            let mut fields: Vec<&'static str> = source.trace_fields().to_vec();
            fields.extend_from_slice(sink.trace_fields());
            traced_state |= !fields.is_empty();
            most_fields = most_fields.max(fields.len());
            // Every traced flow's state is sampled at the end of the first bin.
            if fields.is_empty() {
                sampling.push(Sampling::Untraced);
            } else {
                sampling.push(Sampling::Due);
                due_flows.push(index as u32);
            }
            for (agent, node, peer, reverse) in [
                (source, setup.from, setup.to, false),
                (sink, setup.to, setup.from, true),
            ] {
                let end = if reverse { "sink" } else { "source" };
                let host = (!setup.host_jitter.is_zero()).then(|| {
                    let rng = stream(seed, &format!("flow:{}:host:{end}", setup.name));
                    Box::new(HostJitter::new(setup.host_jitter, rng))
                });
                agents.push(AgentSlot {
                    agent,
                    flow,
                    node,
                    peer,
                    reverse,
                    next_seq: 0,
                    deadline: None,
                    scheduled: None,
                    generation: 0,
                    host,
                });
            }

            let mut lifecycle_rng = stream(seed, &format!("flow:{}:lifecycle", setup.name));
            let start = setup.start.sample(&mut lifecycle_rng);
            let stop = setup.stop.map(|stop| stop.sample(&mut lifecycle_rng));
            events.push(Time::ZERO + start, Event::FlowStart(index as u32));
            if let Some(stop) = stop {
                events.push(Time::ZERO + stop, Event::FlowStop(index as u32));
            }
            let monitor = FlowMonitor::new(config.bin, loss_event_rtt, &fields);
            flow_slots.push(FlowSlot {
                monitor,
                on_off: setup.on_off,
                on_off_rng: stream(seed, &format!("flow:{}:on_off", setup.name)),
                on: false,
                stopped: false,
                start,
                stop,
                trace_fields: fields.len(),
            });
            base_rtts.push(base_rtt);
            loss_event_rtts.push(loss_event_rtt);
            forward_paths.push(forward);
        }
        // State ns-2 shares between agents through C++ statics (RAP's first-sample flag).
        crate::agent::rap::share_first_sample(agents.iter_mut().map(|slot| &mut slot.agent));
        let prefetch_ahead = links.len() + agents.len() >= PREFETCH_MIN_STATES;
        Ok(Simulation {
            topology,
            routes,
            links,
            agents,
            flows: flow_slots,
            setups: flows,
            base_rtts,
            loss_event_rtts,
            forward_paths,
            events,
            outbox: Outbox::default(),
            trace: config.packet_trace.map(PacketTrace::new),
            taps: None,
            now: Time::ZERO,
            end,
            bin: config.bin,
            processed: 0,
            seed,
            traced_state: traced_state || !red_averages.is_empty(),
            prefetch_ahead,
            red_averages,
            next_sample: 0,
            next_sample_end: bin_end(config.bin, 0),
            trace_buffer: vec![0.0; most_fields],
            sampling,
            due_flows,
        })
    }

    /// Writes the pcap and ns-2 traces of `taps` from now on (before the run starts, for whole
    /// traces). Traces only observe: results are the same with or without them.
    pub fn attach_traces(&mut self, mut taps: Taps) {
        taps.set_flows(&self.setups);
        self.taps = Some(Box::new(taps));
    }

    /// Keeps the send times of flow `flow`'s dropped data packets, at most `limit` of them
    /// (`monitor.drop_log`; see [`crate::monitor::DropLog`]). The log only records: results
    /// are the same with or without it. An index out of range is ignored.
    pub fn log_drops(&mut self, flow: usize, limit: usize) {
        if let Some(slot) = self.flows.get_mut(flow) {
            slot.monitor.log_drops(limit);
        }
    }

    /// The time of the last event processed.
    pub fn now(&self) -> Time {
        self.now
    }

    /// When the run ends.
    pub fn end(&self) -> Time {
        self.end
    }

    /// Each flow's ON periods `(on, off)` as the run will switch them, in flow order (empty for a
    /// flow without `on_off`): from the drawn start, ON and OFF lengths drawn in turn from the
    /// flow's own ON/OFF stream, until the drawn stop or the end of the run; the last period may
    /// run past either (the run cuts it). The draws depend on nothing the network does, so this
    /// replays them from a copy of the stream without running: what an exporter needs to give
    /// another simulator the same schedule (docs/crosscheck.md).
    pub fn on_off_schedules(&self) -> Vec<Vec<(Duration, Duration)>> {
        let end = self.end.saturating_since(Time::ZERO);
        self.flows
            .iter()
            .map(|slot| {
                let Some(on_off) = slot.on_off else {
                    return Vec::new();
                };
                let until = slot.stop.map_or(end, |stop| stop.min(end));
                let mut rng = slot.on_off_rng.clone();
                let mut periods = Vec::new();
                let mut at = slot.start;
                // Periods are at least 1 ns each (zero lengths are refused when parsed), and
                // the run's cost estimate bounds how many fit before the end.
                while at < until {
                    let on = on_off.on.sample(&mut rng);
                    periods.push((at, at + on));
                    if at + on >= until {
                        break;
                    }
                    at += on + on_off.off.sample(&mut rng);
                }
                periods
            })
            .collect()
    }

    /// The flows as built (in flow order): each one's resolved agent configuration, such as a
    /// web session's inter-page distribution after `load` rescaled it.
    pub fn flow_setups(&self) -> &[FlowSetup] {
        &self.setups
    }

    /// Why the run cannot go on, if an agent failed (a user's congestion controller raised an
    /// error, say): the flow's name and the agent's reason. A failed agent goes silent, so the
    /// rest of the run is meaningless; callers check this after each run step and refuse the
    /// results.
    pub fn agent_failure(&self) -> Option<String> {
        self.agents.iter().find_map(|slot| {
            let reason = slot.agent.failure()?;
            let flow = self.setups.get(slot.flow.0 as usize).map_or_else(
                || format!("#{}", slot.flow.0),
                |setup| format!("{:?}", setup.name),
            );
            Some(format!("flow {flow}: {reason}"))
        })
    }

    /// Events processed so far.
    pub fn events_processed(&self) -> u64 {
        self.processed
    }

    /// The topology being simulated.
    pub fn topology(&self) -> &Topology {
        &self.topology
    }

    /// Each link's queue as built (in topology order), and the mean data packet size of the
    /// flows whose data crosses it (`None` when none does): what a reader needs to see a byte
    /// buffer in packets.
    pub fn queue_setups(&self) -> Vec<(QueueSetup, Option<f64>)> {
        let mut sizes = vec![(0.0_f64, 0_u32); self.links.len()];
        for (path, setup) in self.forward_paths.iter().zip(&self.setups) {
            for link in path {
                let entry = &mut sizes[link.0 as usize];
                entry.0 += f64::from(setup.agent.data_size_bytes());
                entry.1 += 1;
            }
        }
        self.links
            .iter()
            .zip(self.topology.links())
            .zip(sizes)
            .map(|((link, spec), (sum, count))| {
                let mean = (count > 0).then(|| sum / f64::from(count));
                (QueueSetup::of(&spec.queue, &link.queue), mean)
            })
            .collect()
    }

    /// Reserves every monitor's per-bin series for the whole run, so that the run allocates
    /// nothing per bin as it goes: if the memory cannot be had, this fails (and the run can be
    /// refused) instead of the process aborting half-way. A simulation that is never reserved
    /// grows its series as bins are reached. Results are the same either way.
    pub fn try_reserve_monitors(&mut self) -> Result<(), OutOfMemory> {
        let bins = crate::monitor::Bins::new(self.bin).count(self.end);
        let failed = |_| OutOfMemory {
            what: "the monitors' per-bin series",
        };
        for link in &mut self.links {
            link.monitor.try_reserve_bins(bins).map_err(failed)?;
        }
        for flow in &mut self.flows {
            flow.monitor.try_reserve_bins(bins).map_err(failed)?;
        }
        for (_, series) in &mut self.red_averages {
            series.try_reserve(bins).map_err(failed)?;
        }
        Ok(())
    }

    /// Processes every event due at or before `until` and before the end of the run. Call it
    /// repeatedly with growing times to report progress on long runs.
    pub fn run_until(&mut self, until: Time) {
        while !self.run_until_at_most(until, u64::MAX) {}
    }

    /// Like [`run_until`](Simulation::run_until), but returns after at most `max_events` events
    /// so that a caller can look up between slices (to be interrupted, say): `true` once every
    /// event due at or before `until` has run. Slicing a run this way gives the same events in
    /// the same order, hence the same results, as one call.
    ///
    /// Never inlined: called once per slice, it costs nothing to call, and it keeps the loop one
    /// function that a profiler can measure alone (callgrind's `--toggle-collect`) in every build.
    #[inline(never)]
    pub fn run_until_at_most(&mut self, until: Time, max_events: u64) -> bool {
        let limit = until.min(self.end);
        let mut budget = max_events;
        while let Some(time) = self.events.peek_time() {
            if time > limit || time >= self.end {
                break;
            }
            if budget == 0 {
                return false;
            }
            budget -= 1;
            if self.traced_state && time >= self.next_sample_end {
                self.sample_bins_ending_by(time);
            }
            let (time, event) = self.events.pop().expect("peeked");
            if self.prefetch_ahead {
                self.prefetch_upcoming();
            }
            self.now = time;
            self.processed += 1;
            self.handle(event);
        }
        self.now = self.now.max(limit);
        true
    }

    /// Runs to the end and returns the results.
    pub fn run(mut self) -> Results {
        self.run_until(self.end);
        self.finish()
    }

    /// Closes the monitors at the end of the run (whatever was processed so far) and returns the
    /// results. The state trace's last bin is sampled here, with the state at the end.
    pub fn finish(mut self) -> Results {
        let end = self.end;
        if self.traced_state {
            // Every bin not sampled yet ends at or after the last event processed: the state
            // there is the final state.
            let bins = crate::monitor::Bins::new(self.bin).count(end) as u64;
            while self.next_sample < bins {
                self.sample_next_bin();
            }
            // Flows idle since their last sample have that sample's state in every bin after.
            if let Some(last) = self.next_sample.checked_sub(1) {
                for (flow, sampling) in self.flows.iter_mut().zip(&self.sampling) {
                    if *sampling != Sampling::Untraced {
                        flow.monitor.repeat_state_through(last as usize);
                    }
                }
            }
        }
        let topology = &self.topology;
        let flows = self
            .flows
            .into_iter()
            .zip(&self.setups)
            .enumerate()
            .map(|(i, (slot, setup))| FlowResult {
                name: setup.name.clone(),
                kind: setup.agent.kind().to_string(),
                variant: setup.agent.variant().to_string(),
                from: topology.node_name(setup.from).to_string(),
                to: topology.node_name(setup.to).to_string(),
                start: slot.start,
                stop: slot.stop,
                path: std::mem::take(&mut self.forward_paths[i]),
                base_rtt: self.base_rtts[i],
                loss_event_rtt: self.loss_event_rtts[i],
                record: slot.monitor.finish(end),
            })
            .collect();
        let mut red_averages = vec![Vec::new(); self.links.len()];
        for (link, series) in std::mem::take(&mut self.red_averages) {
            red_averages[link as usize] = series;
        }
        let links = self
            .links
            .into_iter()
            .zip(topology.links())
            .zip(red_averages)
            .map(|((link, spec), red_average)| LinkResult {
                name: spec.name.clone(),
                from: topology.node_name(spec.from).to_string(),
                to: topology.node_name(spec.to).to_string(),
                rate_bps: spec.rate_bps,
                delay: spec.delay,
                queue: link.queue.stats(),
                setup: QueueSetup::of(&spec.queue, &link.queue),
                red_average,
                record: link.monitor.finish(end),
            })
            .collect();
        Results {
            scenario: String::new(),
            seed: self.seed,
            version: env!("CARGO_PKG_VERSION").to_string(),
            duration: end.saturating_since(Time::ZERO),
            bin: self.bin,
            events: self.processed,
            flows,
            links,
            packet_trace: self.trace.map(|trace| PacketTraceResult {
                overflowed: trace.overflowed(),
                records: trace.into_records(),
            }),
            traces: self.taps.map(|taps| taps.finish()).unwrap_or_default(),
        }
    }

    /// Asks for the state of the next two events ahead of handling the current one (see
    /// [`crate::prefetch`]): the head of the pipe of the next arrival's link (whose link was
    /// asked for one event earlier), and the link or agent of the event after it.
    fn prefetch_upcoming(&self) {
        let (next, after) = self.events.peek_two();
        if let Some(&Event::Arrival(link)) = next {
            self.links[link as usize].prefetch_pipe_head();
        }
        match after {
            Some(&Event::Arrival(link) | &Event::TransmissionEnd(link)) => {
                self.links[link as usize].prefetch();
            }
            Some(&Event::Timer { agent, .. }) => prefetch(&self.agents[agent as usize]),
            _ => {}
        }
    }

    fn handle(&mut self, event: Event) {
        match event {
            Event::TransmissionEnd(link) => {
                let events = self.links[link as usize].finish_transmission(self.now);
                self.transmission_started(link, events);
            }
            Event::Arrival(link) => {
                let node = self.links[link as usize].to;
                if let Some((packet, next)) = self.links[link as usize].take_arrival() {
                    if let Some(at) = next {
                        self.events.push(at, Event::Arrival(link));
                    }
                    if let Some(taps) = &mut self.taps {
                        taps.on_receive(self.now, link as usize, &packet);
                    }
                    self.at_node(node, packet);
                }
            }
            Event::Timer { agent, generation } => {
                let slot = &mut self.agents[agent as usize];
                if slot.generation == generation {
                    slot.scheduled = None;
                    match slot.deadline {
                        Some(at) if at > self.now => {
                            // The deadline moved later since this event was queued.
                            slot.scheduled = Some(at);
                            self.events.push(at, Event::Timer { agent, generation });
                        }
                        Some(_) => {
                            slot.deadline = None;
                            slot.agent.handle_timeout(self.now, &mut self.outbox);
                            self.after_callback(agent as usize);
                        }
                        None => {}
                    }
                }
            }
            Event::FlowStart(flow) => {
                let slot = &mut self.flows[flow as usize];
                if !slot.stopped && !slot.on {
                    self.switch_on(flow);
                }
            }
            Event::FlowStop(flow) => {
                let slot = &mut self.flows[flow as usize];
                slot.stopped = true;
                if slot.on {
                    slot.on = false;
                    self.source_stop(flow);
                }
            }
            Event::HostRelease(agent) => self.host_release(agent as usize),
            Event::Toggle(flow) => {
                let slot = &mut self.flows[flow as usize];
                if slot.stopped {
                    return;
                }
                if slot.on {
                    slot.on = false;
                    if let Some(on_off) = slot.on_off {
                        let off = on_off.off.sample(&mut slot.on_off_rng);
                        self.events.push(self.now + off, Event::Toggle(flow));
                    }
                    self.source_stop(flow);
                } else {
                    self.switch_on(flow);
                }
            }
        }
    }

    /// Starts a flow's application and, with ON/OFF, schedules the end of the ON period.
    fn switch_on(&mut self, flow: u32) {
        let slot = &mut self.flows[flow as usize];
        slot.on = true;
        if let Some(on_off) = slot.on_off {
            let on = on_off.on.sample(&mut slot.on_off_rng);
            self.events.push(self.now + on, Event::Toggle(flow));
        }
        let source = 2 * flow as usize;
        self.agents[source]
            .agent
            .on_start(self.now, &mut self.outbox);
        self.after_callback(source);
        self.agents[source + 1]
            .agent
            .on_flow_start(self.now, &mut self.outbox);
        self.after_callback(source + 1);
    }

    fn source_stop(&mut self, flow: u32) {
        let source = 2 * flow as usize;
        self.agents[source]
            .agent
            .on_stop(self.now, &mut self.outbox);
        self.after_callback(source);
        self.agents[source + 1]
            .agent
            .on_flow_stop(self.now, &mut self.outbox);
        self.after_callback(source + 1);
    }

    /// Sends what the agent queued, then records its deadline, queueing a timer event only when
    /// the deadline is earlier than the one already queued (see `AgentSlot::scheduled`).
    fn after_callback(&mut self, agent: usize) {
        // A flow's agents are its source and sink, 2·flow and 2·flow + 1.
        let flow = agent / 2;
        if self.sampling[flow] == Sampling::Idle {
            self.sampling[flow] = Sampling::Due;
            self.due_flows.push(flow as u32);
        }
        if !self.outbox.packets().is_empty() {
            let mut outbox = std::mem::take(&mut self.outbox);
            for outgoing in outbox.drain() {
                self.emit(agent, outgoing);
            }
            self.outbox = outbox;
        }
        let slot = &mut self.agents[agent];
        slot.deadline = slot.agent.poll_timeout();
        if let Some(at) = slot.deadline {
            // A deadline in the past fires now: time never runs backwards.
            let at = at.max(self.now);
            if slot.scheduled.is_none_or(|queued| at < queued) {
                slot.generation = slot.generation.wrapping_add(1);
                slot.scheduled = Some(at);
                self.events.push(
                    at,
                    Event::Timer {
                        agent: agent as u32,
                        generation: slot.generation,
                    },
                );
            }
        }
    }

    /// Stamps an agent's packet and puts it on the network at the agent's node.
    fn emit(&mut self, agent: usize, outgoing: Outgoing) {
        let slot = &mut self.agents[agent];
        let packet = Packet {
            flow: slot.flow,
            seq: slot.next_seq,
            size_bytes: outgoing.size_bytes,
            dst: slot.peer,
            sent_at: self.now,
            reverse: slot.reverse,
            ecn_capable: outgoing.ecn_capable,
            ecn_ce: false,
            payload: outgoing.payload,
        };
        slot.next_seq += 1;
        let node = slot.node;
        let monitor = &mut self.flows[packet.flow.0 as usize].monitor;
        if packet.reverse {
            monitor.on_reverse_sent(self.now, packet.size_bytes);
        } else {
            monitor.on_sent(self.now, packet.size_bytes);
        }
        self.record(PacketEvent::Sent, None, node, &packet);
        let packet = match self.agents[agent].host.as_mut() {
            Some(host) => {
                let mut wake = None;
                let ready = host.hand_over(self.now, packet, &mut wake);
                if let Some(at) = wake {
                    self.events.push(at, Event::HostRelease(agent as u32));
                }
                match ready {
                    Some(packet) => packet,
                    None => return,
                }
            }
            None => packet,
        };
        self.at_node(node, packet);
    }

    /// An agent's host lets go the packets due now, in order, and waits for the next.
    fn host_release(&mut self, agent: usize) {
        let slot = &mut self.agents[agent];
        let node = slot.node;
        let Some(host) = slot.host.as_mut() else {
            return;
        };
        let mut due = Vec::new();
        if let Some(next) = host.release(self.now, &mut due) {
            self.events.push(next, Event::HostRelease(agent as u32));
        }
        for packet in due {
            self.at_node(node, packet);
        }
    }

    /// A packet is at `node`: deliver it, or forward it on the next link of its route.
    fn at_node(&mut self, node: NodeId, packet: Packet) {
        if packet.dst == node {
            self.deliver(node, packet);
            return;
        }
        let Some(link) = self.routes.next_hop(node, packet.dst) else {
            // Routes to every flow's peer were checked when the simulation was built.
            unreachable!("no route from node {} to {}", node.0, packet.dst.0);
        };
        let link = link.0;
        if let Some(taps) = &mut self.taps {
            taps.on_offer(self.now, link as usize, &packet);
        }
        match self.links[link as usize].offer(self.now, packet) {
            Offer::Queued { started, events } => {
                self.record(PacketEvent::Enqueued, Some(link), node, &packet);
                if started {
                    self.transmission_started(link, events);
                } else {
                    self.schedule_link_events(link, events);
                }
            }
            Offer::Dropped(packet, cause) => {
                let monitor = &mut self.flows[packet.flow.0 as usize].monitor;
                if packet.reverse {
                    monitor.on_reverse_dropped(self.now, packet.size_bytes);
                } else {
                    monitor.on_dropped(self.now, packet.sent_at, packet.size_bytes);
                }
                self.record(PacketEvent::Dropped(cause), Some(link), node, &packet);
                if let Some(taps) = &mut self.taps {
                    taps.on_drop(self.now, link as usize, &packet);
                }
            }
        }
    }

    /// A packet went on the wire of `link` now: schedules what the link asks for and records
    /// the start in the packet trace.
    #[inline(always)]
    fn transmission_started(&mut self, link: u32, events: LinkEvents) {
        self.links[link as usize].end_seq = self.events.reserve_seq();
        self.schedule_link_events(link, events);
        let tapped = self
            .taps
            .as_ref()
            .is_some_and(|taps| taps.traces(link as usize));
        if self.trace.is_some() || tapped {
            if let Some(packet) = self.links[link as usize].last_started().copied() {
                let node = self.topology.link(LinkId(link)).from;
                self.record(PacketEvent::TransmissionStart, Some(link), node, &packet);
                if let Some(taps) = &mut self.taps {
                    taps.on_transmit(self.now, link as usize, &packet);
                }
            }
        }
    }

    fn schedule_link_events(&mut self, link: u32, events: LinkEvents) {
        if let Some(at) = events.transmission_end {
            let seq = self.links[link as usize].end_seq;
            self.events
                .push_reserved(at, seq, Event::TransmissionEnd(link));
        }
        if let Some(at) = events.arrival {
            self.events.push(at, Event::Arrival(link));
        }
    }

    /// Hands a packet to the agent at its destination.
    fn deliver(&mut self, node: NodeId, packet: Packet) {
        let monitor = &mut self.flows[packet.flow.0 as usize].monitor;
        if packet.reverse {
            monitor.on_reverse_received(self.now, packet.size_bytes);
        } else {
            monitor.on_received(self.now, packet.size_bytes);
        }
        self.record(PacketEvent::Delivered, None, node, &packet);
        let agent = 2 * packet.flow.0 as usize + usize::from(!packet.reverse);
        self.agents[agent]
            .agent
            .handle_packet(self.now, &packet, &mut self.outbox);
        self.after_callback(agent);
    }

    /// Samples the state at the end of every bin that ends at or before `time`, before any event
    /// at `time` runs: bin k covers [k·bin, (k+1)·bin), so its sample must not see events at
    /// (k+1)·bin. The state only changes at events, so sampling late is exact.
    fn sample_bins_ending_by(&mut self, time: Time) {
        while self.next_sample_end <= time {
            self.sample_next_bin();
        }
    }

    /// Samples the state as that at the end of bin `next_sample`, and moves on to the next bin.
    fn sample_next_bin(&mut self) {
        self.sample_state(self.next_sample);
        self.next_sample += 1;
        self.next_sample_end = bin_end(self.bin, self.next_sample);
    }

    /// Samples the agent state of every flow due (one of its agents was called since its last
    /// sample), and every sampled RED queue's average, as the state at the end of bin `bin`.
    /// The other flows' state is their last sample's, which their monitors repeat.
    #[inline(never)]
    fn sample_state(&mut self, bin: u64) {
        for (link, series) in &mut self.red_averages {
            if let Some(red) = self.links[*link as usize].queue.as_red() {
                series.push(red.average_queue());
            }
        }
        let due = std::mem::take(&mut self.due_flows);
        for (k, &index) in due.iter().enumerate() {
            // With thousands of flows their agents are not cached when the bin ends; ask for
            // those a few flows ahead, to overlap the loads with this flow's sample.
            if self.prefetch_ahead {
                if let Some(&ahead) = due.get(k + SAMPLE_PREFETCH_AHEAD) {
                    let ahead = ahead as usize;
                    self.agents[2 * ahead].agent.prefetch_state();
                    self.agents[2 * ahead + 1].agent.prefetch_state();
                    self.flows[ahead].monitor.prefetch_state();
                }
            }
            let index = index as usize;
            self.sampling[index] = Sampling::Idle;
            let flow = &mut self.flows[index];
            let source = &self.agents[2 * index].agent;
            let sink = &self.agents[2 * index + 1].agent;
            let split = source.trace_fields().len();
            let values = &mut self.trace_buffer[..flow.trace_fields];
            let (head, tail) = values.split_at_mut(split);
            source.trace(head);
            sink.trace(tail);
            flow.monitor.record_state_after_idle(bin as usize, values);
        }
        // Kept for its capacity: the flows due next bin go in the same buffer.
        self.due_flows = due;
        self.due_flows.clear();
    }

    fn record(&mut self, event: PacketEvent, link: Option<u32>, node: NodeId, packet: &Packet) {
        if let Some(trace) = &mut self.trace {
            trace.record(PacketRecord {
                time: self.now,
                event,
                link,
                node: node.0,
                flow: packet.flow.0,
                seq: packet.seq,
                size_bytes: packet.size_bytes,
                reverse: packet.reverse,
            });
        }
    }
}
