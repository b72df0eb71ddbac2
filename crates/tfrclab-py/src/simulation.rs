//! netsim runs: a scenario's text in, its results out as numpy arrays.
//!
//! [`Simulation`] wraps `netsim::sim::Simulation` so that Python can step a run in simulated time
//! (`run_until`, the GIL released for each step) and report progress; stepping gives the same
//! results, bit for bit, as one call. [`Simulation::finish`] hands back every record as columns:
//! one numpy array per per-flow or per-link figure, one 2-D array (links x bins) per binned link
//! series, and per flow one array per binned series and its state trace as its field names plus
//! one float64 array per field, so agents with any fields cross the boundary unchanged. The flows'
//! series and traces, most of a run's records, are moved into their arrays, not copied (peak
//! memory). Durations cross as integer nanoseconds.
//!
//! Every run is estimated first and refused with `CostError` over netsim's default budget unless
//! forced; its monitors are then reserved for the whole run, so memory that cannot be had is a
//! `MemoryError`, not an abort. Stepping hands back to Python at least every
//! [`SIGNAL_CHECK_INTERVAL`] of wall time to let Ctrl-C interrupt it, whatever the step size.

use std::time::{Duration, Instant};

use numpy::ndarray::Array2;
use numpy::{Element, IntoPyArray, PyArray1, PyArray2};
use pyo3::exceptions::{PyMemoryError, PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use netsim::agent::AgentConfig;
use netsim::monitor::{
    Count, Counts, DropCause, FlowBins, LinkBins, Narrow, PacketEvent, PacketRecord,
};
use netsim::queue::QueueLimit;
use netsim::randvar::RandomVariable;
use netsim::results::{FlowResult, LinkResult, RedSetup, Results};
use netsim::scenario::{Budget, CostEstimate, Scenario, TraceOpenError};
use netsim::trace::{TraceKind, TraceSummary};
use netsim::Time;

use crate::errors::{cost_error, scenario_error, ControllerError};

/// How long a step runs with the GIL released before it looks for signals (Ctrl-C).
const SIGNAL_CHECK_INTERVAL: Duration = Duration::from_millis(20);
/// Events processed between two looks at the wall clock (a few milliseconds' worth).
const EVENTS_PER_SLICE: u64 = 10_000;

/// The packet-trace event codes, in code order (index = code in the `event` column).
const PACKET_EVENTS: [&str; 6] = [
    "sent",
    "enqueued",
    "dropped_queue",
    "dropped_loss_model",
    "transmission_start",
    "delivered",
];

/// The code of a packet event in [`PACKET_EVENTS`].
fn event_code(event: PacketEvent) -> u8 {
    match event {
        PacketEvent::Sent => 0,
        PacketEvent::Enqueued => 1,
        PacketEvent::Dropped(DropCause::Queue) => 2,
        PacketEvent::Dropped(DropCause::LossModel) => 3,
        PacketEvent::TransmissionStart => 4,
        PacketEvent::Delivered => 5,
    }
}

/// Parses and checks scenario text, or raises `ScenarioError` naming the field at fault.
fn parse(py: Python<'_>, scenario_toml: &str) -> PyResult<Scenario> {
    Scenario::from_toml_str(scenario_toml).map_err(|err| scenario_error(py, &err))
}

/// Nanoseconds of a duration, saturating (netsim bounds durations far below u64::MAX ns).
fn nanos(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Checks a scenario's TOML text the way a run would (parse, schema, building the network once)
/// and returns its headline values: `name`, `duration_ns`, `bin_ns`, `seed`, `flows` (the
/// number of flows, `count` expanded) and `flow_names`. Raises `ScenarioError` naming the field
/// at fault. Also `measure_from_ns` and `measure_to_ns`, the `[measure]` window.
#[pyfunction]
pub(crate) fn check_scenario<'py>(
    py: Python<'py>,
    scenario_toml: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let scenario = parse(py, scenario_toml)?;
    let info = PyDict::new(py);
    info.set_item("name", &scenario.name)?;
    info.set_item("duration_ns", nanos(scenario.duration))?;
    info.set_item("bin_ns", nanos(scenario.bin))?;
    info.set_item("seed", scenario.seed)?;
    info.set_item("measure_from_ns", nanos(scenario.measure.from))?;
    info.set_item("measure_to_ns", nanos(scenario.measure.to))?;
    info.set_item("flows", scenario.flows.len())?;
    let names: Vec<&str> = scenario.flows.iter().map(|f| f.name.as_str()).collect();
    info.set_item("flow_names", names)?;
    Ok(info)
}

/// What running a scenario will cost, before running it: `events_per_s` (events per simulated
/// second), `events`, `memory_bytes`, `wall_s` (expected on this machine), `bins`, `flows`,
/// `binned_links`, `state_fields` (all flows' traced fields), `parts` (costliest first, each `path`, `events_per_s`, `memory_bytes`, `hint`), the
/// `budget` (`wall_s`, `memory_bytes`), `events_per_wall_s` (the calibration) and `refusal`
/// (the one-line reason a run would be refused, or None). Raises `ScenarioError` like
/// `check_scenario`.
#[pyfunction]
pub(crate) fn estimate<'py>(py: Python<'py>, scenario_toml: &str) -> PyResult<Bound<'py, PyDict>> {
    let scenario = parse(py, scenario_toml)?;
    estimate_dict(py, &scenario.estimate())
}

/// An estimate as the dict `estimate` returns.
fn estimate_dict<'py>(py: Python<'py>, estimate: &CostEstimate) -> PyResult<Bound<'py, PyDict>> {
    let budget = Budget::DEFAULT;
    let out = PyDict::new(py);
    out.set_item("events_per_s", estimate.events_per_s)?;
    out.set_item("events", estimate.events)?;
    out.set_item("memory_bytes", estimate.memory_bytes)?;
    out.set_item("disk_bytes", estimate.disk_bytes())?;
    out.set_item("wall_s", estimate.wall_s)?;
    out.set_item("bins", estimate.bins)?;
    out.set_item("flows", estimate.flows)?;
    out.set_item("binned_links", estimate.binned_links)?;
    out.set_item("state_fields", estimate.state_fields)?;
    let parts = PyList::empty(py);
    for part in &estimate.parts {
        let d = PyDict::new(py);
        d.set_item("path", &part.path)?;
        d.set_item("events_per_s", part.events_per_s)?;
        d.set_item("memory_bytes", part.memory_bytes)?;
        d.set_item("disk_bytes", part.disk_bytes)?;
        d.set_item("hint", &part.hint)?;
        parts.append(d)?;
    }
    out.set_item("parts", parts)?;
    let limits = PyDict::new(py);
    limits.set_item("wall_s", budget.wall.as_secs_f64())?;
    limits.set_item("memory_bytes", budget.memory_bytes)?;
    out.set_item("budget", limits)?;
    out.set_item(
        "events_per_wall_s",
        netsim::scenario::cost::EVENTS_PER_WALL_SECOND,
    )?;
    out.set_item("refusal", estimate.refusal(&budget))?;
    Ok(out)
}

/// One netsim run of a scenario, stepped in simulated time.
#[pyclass(module = "tfrclab._native")]
pub(crate) struct Simulation {
    /// The run; `None` once [`Simulation::finish`] took it.
    inner: Option<netsim::sim::Simulation>,
    /// The scenario text, kept for the results.
    scenario_toml: String,
    seed: u64,
    end_ns: u64,
    /// The `[measure]` window, `[from, to)` in nanoseconds, handed back with the results.
    measure_ns: (u64, u64),
    /// How the analysis reports the flows, handed back with the results.
    labels: FlowLabels,
}

/// What the scenario says about reporting its flows, which the simulation itself never reads:
/// each flow's `group` ("" for its protocol class) and `background`, in scenario order, and
/// `[measure] reference_group` ("" for the long-lived TCP flows).
struct FlowLabels {
    groups: Vec<String>,
    background: Vec<bool>,
    reference_group: String,
}

impl FlowLabels {
    /// The labels of `scenario`'s flows.
    fn of(scenario: &Scenario) -> FlowLabels {
        FlowLabels {
            groups: scenario
                .flows
                .iter()
                .map(|f| f.group.clone().unwrap_or_default())
                .collect(),
            background: scenario.flows.iter().map(|f| f.background).collect(),
            reference_group: scenario.reference_group.clone().unwrap_or_default(),
        }
    }
}

impl Simulation {
    /// The run, or a RuntimeError once it was finished.
    fn running(&mut self) -> PyResult<&mut netsim::sim::Simulation> {
        self.inner
            .as_mut()
            .ok_or_else(|| PyRuntimeError::new_err("the simulation was already finished"))
    }
}

#[pymethods]
impl Simulation {
    /// Checks `scenario_toml`, estimates its cost and builds its network, seeded with `seed`
    /// (the scenario's own seed when None). Raises `ScenarioError` naming the field at fault,
    /// `CostError` when the run would cost more than the budget (unless `force`), and
    /// `MemoryError` when the monitors' series for the whole run cannot be reserved. With
    /// `pcap_dir`, writes a pcap file per link of `monitor.pcap` (every link without it) into
    /// that directory; with `ns2_trace`, an ns-2 trace of the links of `monitor.ns2_trace`
    /// into that file; `OSError` when one cannot be created.
    #[new]
    #[pyo3(signature = (scenario_toml, seed = None, force = false, pcap_dir = None, ns2_trace = None))]
    fn new(
        py: Python<'_>,
        scenario_toml: &str,
        seed: Option<u64>,
        force: bool,
        pcap_dir: Option<std::path::PathBuf>,
        ns2_trace: Option<std::path::PathBuf>,
    ) -> PyResult<Self> {
        let scenario = parse(py, scenario_toml)?;
        if !force {
            if let Err(err) = netsim::scenario::check(&scenario, &Budget::DEFAULT) {
                let estimate = estimate_dict(py, &err.estimate)?.into_any().unbind();
                return Err(cost_error(py, &err, estimate));
            }
        }
        let seed = seed.unwrap_or(scenario.seed);
        let measure_ns = (nanos(scenario.measure.from), nanos(scenario.measure.to));
        let labels = FlowLabels::of(&scenario);
        let mut inner = scenario
            .simulation(seed)
            .map_err(|err| scenario_error(py, &err))?;
        if inner.try_reserve_monitors().is_err() {
            let error = netsim::scenario::out_of_memory(
                &scenario,
                netsim::sim::OutOfMemory {
                    what: "the monitors' per-bin series",
                },
            );
            return Err(PyMemoryError::new_err(error.to_string()));
        }
        scenario
            .traces
            .open(&mut inner, pcap_dir.as_deref(), ns2_trace.as_deref())
            .map_err(|err| match err {
                TraceOpenError::Scenario(err) => scenario_error(py, &err),
                TraceOpenError::File(err) => PyOSError::new_err(err.to_string()),
            })?;
        Ok(Simulation {
            end_ns: inner.end().as_nanos(),
            inner: Some(inner),
            scenario_toml: scenario_toml.to_owned(),
            seed,
            measure_ns,
            labels,
        })
    }

    /// The seed the run's random streams derive from.
    #[getter]
    fn seed(&self) -> u64 {
        self.seed
    }

    /// When the run ends, in simulated nanoseconds.
    #[getter]
    fn end_ns(&self) -> u64 {
        self.end_ns
    }

    /// How far the run has got, in simulated nanoseconds.
    #[getter]
    fn now_ns(&mut self) -> PyResult<u64> {
        Ok(self.running()?.now().as_nanos())
    }

    /// Events processed so far.
    #[getter]
    fn events(&mut self) -> PyResult<u64> {
        Ok(self.running()?.events_processed())
    }

    /// Processes every event due at or before `t_ns` (and before the end), with the GIL
    /// released. Steps of any size give the same results as one step to the end. Every
    /// [`SIGNAL_CHECK_INTERVAL`] of wall time it takes the GIL back to run Python's signal
    /// handlers, so Ctrl-C raises `KeyboardInterrupt` here promptly (the run can be resumed).
    fn run_until(&mut self, py: Python<'_>, t_ns: u64) -> PyResult<()> {
        let until = Time::from_nanos(t_ns);
        loop {
            let inner = self.running()?;
            let done = py.detach(|| {
                let started = Instant::now();
                loop {
                    if inner.run_until_at_most(until, EVENTS_PER_SLICE) {
                        return true;
                    }
                    if started.elapsed() >= SIGNAL_CHECK_INTERVAL {
                        return false;
                    }
                }
            });
            py.check_signals()?;
            if let Some(failure) = self.running()?.agent_failure() {
                return Err(ControllerError::new_err(failure));
            }
            if done {
                return Ok(());
            }
        }
    }

    /// Closes the monitors (at the end of the run, whatever was processed) and returns the
    /// results as a dict of columns (see the stub for the layout). The simulation cannot be
    /// stepped afterwards.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        if let Some(failure) = self.running()?.agent_failure() {
            return Err(ControllerError::new_err(failure));
        }
        let inner = self
            .inner
            .take()
            .ok_or_else(|| PyRuntimeError::new_err("the simulation was already finished"))?;
        let mut results = py.detach(move || inner.finish());
        results.scenario = std::mem::take(&mut self.scenario_toml);
        let out = results_dict(py, &mut results)?;
        out.set_item("measure_from_ns", self.measure_ns.0)?;
        out.set_item("measure_to_ns", self.measure_ns.1)?;
        let flows = out
            .get_item("flows")?
            .ok_or_else(|| PyRuntimeError::new_err("the results hold no flows"))?;
        flows.set_item("group", &self.labels.groups)?;
        flows.set_item("background", &self.labels.background)?;
        out.set_item("reference_group", &self.labels.reference_group)?;
        Ok(out)
    }
}

/// A named binned series of a flow record, and how to move it out.
type FlowSeries<T> = (&'static str, fn(&mut FlowBins) -> &mut Counts<T>);

/// A named binned series of a link record, and how to read it.
type LinkSeries<T> = (&'static str, fn(&LinkBins) -> &Vec<T>);

/// A 1-D array of `f` over `rows`.
fn column<'py, R, T: Element>(
    py: Python<'py>,
    rows: &[R],
    f: impl Fn(&R) -> T,
) -> Bound<'py, PyArray1<T>> {
    rows.iter().map(f).collect::<Vec<T>>().into_pyarray(py)
}

/// A 2-D array with one row per item of `rows`, each `n` long.
fn matrix<'py, T: Element + Clone>(
    py: Python<'py>,
    rows: &[&Vec<T>],
    n: usize,
) -> PyResult<Bound<'py, PyArray2<T>>> {
    let mut flat = Vec::with_capacity(rows.len() * n);
    for row in rows {
        flat.extend_from_slice(row);
    }
    let array = Array2::from_shape_vec((rows.len(), n), flat)
        .map_err(|err| PyRuntimeError::new_err(format!("ragged binned series: {err}")))?;
    Ok(array.into_pyarray(py))
}

/// A flow's state trace, as `Simulation.finish` hands it over compressed (`blob`, with
/// `fields` fields), decoded into a (fields x bins) float64 array. Traces stay compressed until
/// one is asked for: dense, a 2048-flow run's would need gigabytes. Raises ValueError when the
/// blob is not a trace of that many fields.
#[pyfunction]
pub(crate) fn decode_state<'py>(
    py: Python<'py>,
    blob: &[u8],
    fields: usize,
    bins: usize,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let size = fields
        .checked_mul(bins)
        .filter(|&size| size <= isize::MAX as usize / 8)
        .ok_or_else(|| PyValueError::new_err("fields x bins is too large"))?;
    let mut flat = Vec::new();
    flat.try_reserve_exact(size)
        .map_err(|_| PyMemoryError::new_err("no memory for the decoded state trace"))?;
    flat.resize(size, 0.0);
    netsim::monitor::decode_blob(blob, fields, &mut flat).map_err(PyValueError::new_err)?;
    let array = Array2::from_shape_vec((fields, bins), flat)
        .map_err(|err| PyRuntimeError::new_err(format!("state trace shape: {err}")))?;
    Ok(array.into_pyarray(py))
}

/// The results as the dict `Simulation.finish` returns.
fn results_dict<'py>(py: Python<'py>, results: &mut Results) -> PyResult<Bound<'py, PyDict>> {
    let n = netsim::monitor::Bins::new(results.bin).count(Time::ZERO + results.duration);
    let out = PyDict::new(py);
    out.set_item("scenario", &results.scenario)?;
    out.set_item("seed", results.seed)?;
    out.set_item("version", &results.version)?;
    out.set_item("duration_ns", nanos(results.duration))?;
    out.set_item("bin_ns", nanos(results.bin))?;
    out.set_item("bins", n)?;
    out.set_item("events", results.events)?;
    out.set_item("flows", flows_dict(py, &results.flows)?)?;
    out.set_item("flow_bins", flow_bins_dict(py, &mut results.flows, n)?)?;
    let states = PyList::empty(py);
    for flow in &mut results.flows {
        let state = &mut flow.record.state;
        if state.bins != n {
            return Err(PyRuntimeError::new_err(format!(
                "ragged state trace: {} bins for {n}",
                state.bins
            )));
        }
        let blob = PyBytes::new(py, &std::mem::take(&mut state.blob));
        states.append((state.fields.clone(), blob))?;
    }
    out.set_item("flow_states", states)?;
    out.set_item("links", links_dict(py, &results.links, n)?)?;
    out.set_item("link_bins", link_bins_dict(py, &results.links, n)?)?;
    match &results.packet_trace {
        Some(trace) => {
            let dict = packet_trace_dict(py, &trace.records)?;
            dict.set_item("overflowed", trace.overflowed)?;
            out.set_item("packet_trace", dict)?;
        }
        None => out.set_item("packet_trace", py.None())?,
    }
    out.set_item("traces", traces_list(py, &results.traces)?)?;
    out.set_item("drop_logs", drop_logs_dict(py, &mut results.flows)?)?;
    Ok(out)
}

/// The drop logs of the flows the scenario logs (`monitor.drop_log`), by flow name: a dict of
/// the uint64 array `send_ns` (send times of the dropped packets, in drop order), `limit` and
/// `overflowed`.
fn drop_logs_dict<'py>(py: Python<'py>, flows: &mut [FlowResult]) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    for flow in flows {
        let Some(log) = flow.record.drop_log.take() else {
            continue;
        };
        let d = PyDict::new(py);
        let send_ns: Vec<u64> = log.send_times.iter().map(|t| t.as_nanos()).collect();
        d.set_item("send_ns", send_ns.into_pyarray(py))?;
        d.set_item("limit", log.limit)?;
        d.set_item("overflowed", log.overflowed)?;
        out.set_item(&flow.name, d)?;
    }
    Ok(out)
}

/// What each pcap and ns-2 trace wrote, one dict per traced link.
fn traces_list<'py>(py: Python<'py>, traces: &[TraceSummary]) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for trace in traces {
        let d = PyDict::new(py);
        let kind = match trace.kind {
            TraceKind::Pcap => "pcap",
            TraceKind::Ns2 => "ns2",
        };
        d.set_item("kind", kind)?;
        d.set_item("path", &trace.path)?;
        d.set_item("link", &trace.link)?;
        d.set_item("written", trace.written)?;
        d.set_item("over_limit", trace.over_limit)?;
        d.set_item("limit", trace.limit)?;
        d.set_item("error", trace.error.as_deref())?;
        list.append(d)?;
    }
    Ok(list)
}

/// One entry per flow: identity and totals.
fn flows_dict<'py>(py: Python<'py>, flows: &[FlowResult]) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let text = |f: fn(&FlowResult) -> &str| flows.iter().map(f).collect::<Vec<&str>>();
    d.set_item("name", text(|f| &f.name))?;
    d.set_item("kind", text(|f| &f.kind))?;
    d.set_item("variant", text(|f| &f.variant))?;
    d.set_item("from", text(|f| &f.from))?;
    d.set_item("to", text(|f| &f.to))?;
    d.set_item("start_ns", column(py, flows, |f| nanos(f.start)))?;
    // -1: the flow has no stop and runs to the end.
    d.set_item(
        "stop_ns",
        column(py, flows, |f| {
            f.stop
                .map_or(-1, |stop| i64::try_from(nanos(stop)).unwrap_or(i64::MAX))
        }),
    )?;
    let paths: Vec<Vec<u32>> = flows
        .iter()
        .map(|f| f.path.iter().map(|link| link.0).collect())
        .collect();
    d.set_item("path", paths)?;
    d.set_item("base_rtt_ns", column(py, flows, |f| nanos(f.base_rtt)))?;
    d.set_item(
        "loss_event_rtt_ns",
        column(py, flows, |f| nanos(f.loss_event_rtt)),
    )?;
    let totals: Vec<_> = flows.iter().map(|f| f.record.totals).collect();
    d.set_item("packets_sent", column(py, &totals, |t| t.packets_sent))?;
    d.set_item("bytes_sent", column(py, &totals, |t| t.bytes_sent))?;
    d.set_item(
        "packets_received",
        column(py, &totals, |t| t.packets_received),
    )?;
    d.set_item("bytes_received", column(py, &totals, |t| t.bytes_received))?;
    d.set_item(
        "packets_dropped",
        column(py, &totals, |t| t.packets_dropped),
    )?;
    d.set_item("bytes_dropped", column(py, &totals, |t| t.bytes_dropped))?;
    d.set_item("loss_events", column(py, &totals, |t| t.loss_events))?;
    d.set_item(
        "reverse_packets_sent",
        column(py, &totals, |t| t.reverse_packets_sent),
    )?;
    d.set_item(
        "reverse_packets_received",
        column(py, &totals, |t| t.reverse_packets_received),
    )?;
    d.set_item(
        "reverse_packets_dropped",
        column(py, &totals, |t| t.reverse_packets_dropped),
    )?;
    Ok(d)
}

/// The flows' binned series, each a list of one array per flow (moved, not copied: with the
/// state traces these are most of a run's records).
fn flow_bins_dict<'py>(
    py: Python<'py>,
    flows: &mut [FlowResult],
    n: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let u32s: [FlowSeries<u32>; 4] = [
        ("sent_packets", |b| &mut b.sent_packets),
        ("received_packets", |b| &mut b.received_packets),
        ("dropped_packets", |b| &mut b.dropped_packets),
        ("loss_events", |b| &mut b.loss_events),
    ];
    for (name, series) in u32s {
        d.set_item(name, moved_rows(py, flows, series, n)?)?;
    }
    let u64s: [FlowSeries<u64>; 3] = [
        ("sent_bytes", |b| &mut b.sent_bytes),
        ("received_bytes", |b| &mut b.received_bytes),
        ("dropped_bytes", |b| &mut b.dropped_bytes),
    ];
    for (name, series) in u64s {
        d.set_item(name, moved_rows(py, flows, series, n)?)?;
    }
    Ok(d)
}

/// One array per flow of the series `series`, each moved out of the flow's record without a
/// copy, in the narrowest unsigned dtype its values fit (uint8 to uint64; see
/// `netsim::monitor::Counts`): the flows' series are most of a large run's records.
fn moved_rows<'py, T: Count>(
    py: Python<'py>,
    flows: &mut [FlowResult],
    series: fn(&mut FlowBins) -> &mut Counts<T>,
    n: usize,
) -> PyResult<Bound<'py, PyList>> {
    let rows = PyList::empty(py);
    for flow in flows {
        let row = std::mem::take(series(&mut flow.record.bins));
        if row.len() != n {
            return Err(PyRuntimeError::new_err(format!(
                "ragged binned series: {} bins instead of {n}",
                row.len()
            )));
        }
        match row.into_narrow() {
            Narrow::U8(v) => rows.append(v.into_pyarray(py))?,
            Narrow::U16(v) => rows.append(v.into_pyarray(py))?,
            Narrow::U32(v) => rows.append(v.into_pyarray(py))?,
            Narrow::U64(v) => rows.append(v.into_pyarray(py))?,
        }
    }
    Ok(rows)
}

/// Whether a link kept its per-bin series (links not asked for keep totals only).
fn is_binned(link: &LinkResult, n: usize) -> bool {
    link.record.bins.utilization.len() == n
}

/// One entry per link: identity, totals and the queue's own counters.
fn links_dict<'py>(
    py: Python<'py>,
    links: &[LinkResult],
    n: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let text = |f: fn(&LinkResult) -> &str| links.iter().map(f).collect::<Vec<&str>>();
    d.set_item("name", text(|l| &l.name))?;
    d.set_item("from", text(|l| &l.from))?;
    d.set_item("to", text(|l| &l.to))?;
    d.set_item("rate_bps", column(py, links, |l| l.rate_bps))?;
    d.set_item("delay_ns", column(py, links, |l| nanos(l.delay)))?;
    d.set_item("binned", column(py, links, |l| is_binned(l, n)))?;
    d.set_item("queue_kind", text(|l| l.setup.kind))?;
    // -1: the buffer is counted in the other unit.
    d.set_item(
        "limit_packets",
        column(py, links, |l| match l.setup.limit {
            QueueLimit::Packets(n) => i64::from(n),
            QueueLimit::Bytes(_) => -1,
        }),
    )?;
    d.set_item(
        "limit_bytes",
        column(py, links, |l| match l.setup.limit {
            QueueLimit::Bytes(n) => i64::try_from(n).unwrap_or(i64::MAX),
            QueueLimit::Packets(_) => -1,
        }),
    )?;
    let red = |f: fn(&RedSetup) -> f64| {
        column(py, links, move |l| l.setup.red.map_or(f64::NAN, |r| f(&r)))
    };
    d.set_item("red_min_th", red(|r| r.min_th))?;
    d.set_item("red_max_th", red(|r| r.max_th))?;
    d.set_item(
        "red_in_bytes",
        column(py, links, |l| l.setup.red.is_some_and(|r| r.in_bytes)),
    )?;
    d.set_item("arrivals", column(py, links, |l| l.record.totals.arrivals))?;
    d.set_item(
        "queue_drops",
        column(py, links, |l| l.record.totals.queue_drops),
    )?;
    d.set_item(
        "loss_model_drops",
        column(py, links, |l| l.record.totals.loss_model_drops),
    )?;
    d.set_item(
        "departures",
        column(py, links, |l| l.record.totals.departures),
    )?;
    d.set_item(
        "bytes_departed",
        column(py, links, |l| l.record.totals.bytes_departed),
    )?;
    d.set_item(
        "busy_ns",
        column(py, links, |l| nanos(l.record.totals.busy)),
    )?;
    d.set_item(
        "mean_queue_packets",
        column(py, links, |l| l.record.totals.mean_queue_packets),
    )?;
    d.set_item(
        "max_queue_packets",
        column(py, links, |l| l.record.totals.max_queue_packets),
    )?;
    d.set_item(
        "utilization",
        column(py, links, |l| l.record.totals.utilization),
    )?;
    d.set_item(
        "drop_rate",
        column(py, links, |l| l.record.totals.drop_rate()),
    )?;
    d.set_item("early_drops", column(py, links, |l| l.queue.early_drops))?;
    d.set_item("forced_drops", column(py, links, |l| l.queue.forced_drops))?;
    d.set_item("marks", column(py, links, |l| l.queue.marks))?;
    Ok(d)
}

/// The binned links' series, each a (binned links x bins) array, rows in topology order of the
/// links whose `binned` flag is set.
fn link_bins_dict<'py>(
    py: Python<'py>,
    links: &[LinkResult],
    n: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let bins: Vec<_> = links
        .iter()
        .filter(|l| is_binned(l, n))
        .map(|l| &l.record.bins)
        .collect();
    let f64s: [LinkSeries<f64>; 3] = [
        ("mean_queue_packets", |b| &b.mean_queue_packets),
        ("mean_queue_bytes", |b| &b.mean_queue_bytes),
        ("utilization", |b| &b.utilization),
    ];
    for (name, series) in f64s {
        let rows: Vec<_> = bins.iter().map(|b| series(b)).collect();
        d.set_item(name, matrix(py, &rows, n)?)?;
    }
    let u32s: [LinkSeries<u32>; 4] = [
        ("max_queue_packets", |b| &b.max_queue_packets),
        ("arrivals", |b| &b.arrivals),
        ("drops", |b| &b.drops),
        ("departures", |b| &b.departures),
    ];
    for (name, series) in u32s {
        let rows: Vec<_> = bins.iter().map(|b| series(b)).collect();
        d.set_item(name, matrix(py, &rows, n)?)?;
    }
    let rows: Vec<_> = bins.iter().map(|b| &b.departed_bytes).collect();
    d.set_item("departed_bytes", matrix(py, &rows, n)?)?;
    // RED's average queue per bin; NaN rows for binned links without RED.
    let missing = vec![f64::NAN; n];
    let rows: Vec<&Vec<f64>> = links
        .iter()
        .filter(|l| is_binned(l, n))
        .map(|l| {
            if l.red_average.len() == n {
                &l.red_average
            } else {
                &missing
            }
        })
        .collect();
    d.set_item("red_average", matrix(py, &rows, n)?)?;
    Ok(d)
}

/// The packet trace as columns; `event` codes index `event_names`, `link` is -1 where the event
/// is not on a link.
fn packet_trace_dict<'py>(
    py: Python<'py>,
    records: &[PacketRecord],
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("event_names", PACKET_EVENTS.to_vec())?;
    d.set_item("time_ns", column(py, records, |r| r.time.as_nanos()))?;
    d.set_item("event", column(py, records, |r| event_code(r.event)))?;
    d.set_item(
        "link",
        column(py, records, |r| r.link.map_or(-1, i64::from)),
    )?;
    d.set_item("node", column(py, records, |r| r.node))?;
    d.set_item("flow", column(py, records, |r| r.flow))?;
    d.set_item("seq", column(py, records, |r| r.seq))?;
    d.set_item("size_bytes", column(py, records, |r| r.size_bytes))?;
    d.set_item("reverse", column(py, records, |r| r.reverse))?;
    Ok(d)
}

/// One link's queue for Python: name, discipline, buffer in packets and in bytes (-1 for the
/// unit it is not counted in), and the mean data packet size crossing it (NaN if none).
type QueueBuffer = (String, &'static str, i64, i64, f64);

/// Each link's queue as the scenario builds it, without running: `(name, kind, limit_packets,
/// limit_bytes, data_bytes)` with -1 for the unit the buffer is not counted in and NaN when no
/// flow's data crosses the link (`data_bytes` is the mean data packet size of those that do).
/// Raises `ScenarioError` naming the field at fault.
#[pyfunction]
pub(crate) fn queue_buffers(py: Python<'_>, scenario_toml: &str) -> PyResult<Vec<QueueBuffer>> {
    let scenario = parse(py, scenario_toml)?;
    let simulation = scenario
        .simulation(scenario.seed)
        .map_err(|err| scenario_error(py, &err))?;
    let names = simulation
        .topology()
        .links()
        .iter()
        .map(|spec| spec.name.clone());
    Ok(names
        .zip(simulation.queue_setups())
        .map(|(name, (setup, size))| {
            let (packets, bytes) = match setup.limit {
                QueueLimit::Packets(n) => (i64::from(n), -1),
                QueueLimit::Bytes(n) => (-1, i64::try_from(n).unwrap_or(i64::MAX)),
            };
            (name, setup.kind, packets, bytes, size.unwrap_or(f64::NAN))
        })
        .collect())
}

/// Each flow's ON periods for `seed` as `(on_ns, off_ns)` pairs, in flow order (`count`
/// expanded; empty for a flow without `on_off`), replayed from the flow's ON/OFF stream without
/// running (netsim `Simulation::on_off_schedules`): the ns-2 export writes them as start/stop
/// events. Raises `ScenarioError` naming the field at fault.
#[pyfunction]
pub(crate) fn on_off_schedules(
    py: Python<'_>,
    scenario_toml: &str,
    seed: u64,
) -> PyResult<Vec<Vec<(u64, u64)>>> {
    let scenario = parse(py, scenario_toml)?;
    let simulation = scenario
        .simulation(seed)
        .map_err(|err| scenario_error(py, &err))?;
    Ok(simulation
        .on_off_schedules()
        .into_iter()
        .map(|periods| {
            periods
                .into_iter()
                .map(|(on, off)| (nanos(on), nanos(off)))
                .collect()
        })
        .collect())
}

/// A random variable as `(kind, parameters)`: constant (value), uniform (min, max), exponential
/// (mean), pareto and pareto2 (scale, shape), lognormal (mu, sigma), weibull (scale, shape),
/// surge (body share, mu, sigma, cut, alpha).
fn randvar_parts(rv: &RandomVariable) -> (&'static str, Vec<f64>) {
    match *rv {
        RandomVariable::Constant { value } => ("constant", vec![value]),
        RandomVariable::Uniform { min, max } => ("uniform", vec![min, max]),
        RandomVariable::Exponential { mean } => ("exponential", vec![mean]),
        RandomVariable::Pareto { scale, shape } => ("pareto", vec![scale, shape]),
        RandomVariable::ParetoII { scale, shape } => ("pareto2", vec![scale, shape]),
        RandomVariable::LogNormal { mu, sigma } => ("lognormal", vec![mu, sigma]),
        RandomVariable::Weibull { scale, shape } => ("weibull", vec![scale, shape]),
        RandomVariable::SurgeFileSize {
            body_share,
            mu,
            sigma,
            cut,
            alpha,
        } => ("surge", vec![body_share, mu, sigma, cut, alpha]),
    }
}

/// A web session's resolved random variables, as the ns-2 export needs them.
type WebVariables = Vec<(&'static str, (&'static str, Vec<f64>))>;

/// Each web flow's random variables as built for `seed` (`load` or `share` resolved into the
/// inter-page mean), in flow order, `None` for other flows: `[(name, (kind, parameters))]` for
/// `inter_page`, `objects_per_page`, `inter_object` and `object_size` (see `randvar_parts`);
/// for a short-TCP flow `packets` and `interarrival` (`load` or `share` resolved into its
/// mean), so that the ns-2 export draws what netsim draws. Raises `ScenarioError` naming the
/// field at fault.
#[pyfunction]
pub(crate) fn web_variables(
    py: Python<'_>,
    scenario_toml: &str,
    seed: u64,
) -> PyResult<Vec<Option<WebVariables>>> {
    let scenario = parse(py, scenario_toml)?;
    let simulation = scenario
        .simulation(seed)
        .map_err(|err| scenario_error(py, &err))?;
    Ok(simulation
        .flow_setups()
        .iter()
        .map(|setup| match &setup.agent {
            AgentConfig::Web(web) => Some(vec![
                ("inter_page", randvar_parts(&web.inter_page)),
                ("objects_per_page", randvar_parts(&web.objects_per_page)),
                ("inter_object", randvar_parts(&web.inter_object)),
                ("object_size", randvar_parts(&web.object_size)),
            ]),
            AgentConfig::ShortTcp(short) => Some(vec![
                ("packets", randvar_parts(&short.size)),
                ("interarrival", randvar_parts(&short.interarrival)),
            ]),
            _ => None,
        })
        .collect())
}
