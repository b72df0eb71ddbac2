//! Native controller plugins (docs/controllers.md, "Native plugins"): a shared library named
//! in a scenario as `controller = "native:PATH[?PARAMS]"`, loaded at run time with `libloading`
//! and driven through the C ABI of `tfrclab-controller-abi` (a `#[repr(C)]` vtable whose ABI
//! version is checked before anything else is read). This is the only module of netsim allowed
//! `unsafe`: loading a library runs its code, and its callbacks are foreign functions.
//!
//! What the host cannot check it states as the plugin's contract (the ABI crate's `Controller`
//! keeps it for Rust plugins): the callbacks do not unwind across the boundary (the Rust glue
//! catches panics and reports them as a failed outcome), do not keep the pointers they are
//! given, and return. That last one the watchdog bounds: every call into the library is
//! watched, and one that has not returned within the flow's `controller_limit` ends the
//! process with the error on stderr (`watchdog.rs`: a thread stuck in foreign code cannot be
//! stopped or reclaimed).

#![allow(unsafe_code)]

use std::ffi::c_void;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use libloading::Library;
use tfrclab_controller_abi::{
    Ack, AckFn, CaState as AbiCaState, Outcome, Reduction as AbiReduction, SignalFn, State, Vtable,
    ABI_VERSION, ENTRY_SYMBOL, OUTCOME_FAIL, OUTCOME_KEEP, OUTCOME_SET,
};

use super::watchdog::{Callback, Stop, Watch};
use super::{
    AckSample, CaState, CcResult, CcState, CcWindow, CongestionControl, ControllerFactory,
    Reduction,
};
use crate::agent::tcp::TcpConfig;
use tfrc::Time;

/// The prefix of a plugin's name in a scenario's `controller` key.
pub(super) const PREFIX: &str = "native:";

/// The environment variable listing (as `PATH` does) the directories of the scenario files
/// read in this process, where a relative plugin path is looked for first. `tfrclab.Scenario.load`
/// adds each file's directory (as it adds it to `sys.path` for Python controllers); a child
/// process, such as a sweep's worker, inherits it.
pub const PLUGIN_PATH_VAR: &str = "TFRCLAB_PLUGIN_PATH";

/// The entry point's type: `extern "C" fn() -> *const Vtable`.
type EntryFn = unsafe extern "C" fn() -> *const Vtable;

/// A loaded plugin: the library (kept loaded while any controller of it lives), its vtable and
/// the scenario's parameter text.
#[derive(Debug)]
struct Plugin {
    /// The scenario's name for it (`native:PATH?PARAMS`), for error messages.
    name: String,
    /// Kept loaded while the vtable's functions may be called.
    _library: Library,
    vtable: Vtable,
    params: String,
}

/// Makes one plugin controller per sender.
#[derive(Debug)]
pub(super) struct PluginFactory {
    plugin: Arc<Plugin>,
}

/// Loads the plugin `spec` names (`PATH[?PARAMS]`, the text after `native:`; a relative PATH
/// is looked for as [`locate`] says), checks its ABI version and vtable, and makes and frees
/// one controller with the parameters so that a bad parameter is refused with the scenario
/// (its `create` and `destroy` bounded to `limit`, as every call is). The error is phrased as
/// what was expected, as scenario errors are.
pub(super) fn load(name: &str, spec: &str, limit: Duration) -> Result<PluginFactory, String> {
    let (path, params) = spec.split_once('?').unwrap_or((spec, ""));
    if path.is_empty() {
        return Err("\"native:PATH\" naming a controller plugin's shared library".to_string());
    }
    let path = locate(path)?;
    let shown = path.display();
    // SAFETY: loading a library runs its initialisers. The user named this file as their
    // controller, so its code is trusted as a Python controller's module is when imported;
    // the ABI version check below keeps us from misreading a library built for another
    // interface.
    let library = unsafe { Library::new(&path) }
        .map_err(|err| format!("a shared library ({shown} cannot be loaded: {err})"))?;
    // SAFETY: the symbol's type is the ABI's entry point; a library that defines
    // `tfrclab_controller` with another type breaks the plugin contract (only the version
    // field it points at is read before the version is known).
    let entry = unsafe { library.get::<EntryFn>(ENTRY_SYMBOL) }.map_err(|_| {
        format!(
            "a controller plugin ({shown} exports no `tfrclab_controller`: build it with \
             tfrclab_controller_abi::export_controller!)"
        )
    })?;
    // SAFETY: the entry point takes nothing and returns a pointer to a static vtable.
    let table = unsafe { entry() };
    if table.is_null() {
        return Err(format!("a controller plugin ({shown} returned no vtable)"));
    }
    // SAFETY: every ABI version starts the vtable with its u32 version, in static memory of
    // the library, which stays loaded; nothing else is read before the version matches.
    let version = unsafe { table.cast::<u32>().read() };
    if version != ABI_VERSION {
        return Err(format!(
            "a controller plugin of ABI version {ABI_VERSION} ({shown} was built against \
             version {version}: rebuild it against this tfrclab's tfrclab-controller-abi)"
        ));
    }
    // SAFETY: the version matches, so the pointer is to a `Vtable` of this layout.
    let vtable = unsafe { table.read() };
    let required = [
        ("create", vtable.create.is_some()),
        ("destroy", vtable.destroy.is_some()),
        ("cong_avoid", vtable.cong_avoid.is_some()),
        ("ssthresh", vtable.ssthresh.is_some()),
    ];
    if let Some((missing, _)) = required.iter().find(|(_, present)| !present) {
        return Err(format!(
            "a controller plugin with every required callback ({shown}'s vtable has no \
             {missing})"
        ));
    }
    let plugin = Arc::new(Plugin {
        name: name.to_string(),
        _library: library,
        vtable,
        params: params.to_string(),
    });
    PluginController::new(&plugin, limit).map_err(|reason| {
        format!("parameters {params:?} the plugin accepts ({shown}: {reason})")
    })?;
    Ok(PluginFactory { plugin })
}

/// The file a plugin's `path` names: an absolute path as it is; a relative one in the
/// directories of [`PLUGIN_PATH_VAR`] (the scenario files' directories), in order, then in
/// the current directory (where a scenario given as text, or `tfrclab evaluate`'s ALGO, has
/// its only base). The error names every place looked in.
fn locate(path: &str) -> Result<PathBuf, String> {
    let given = Path::new(path);
    if given.is_absolute() {
        return if given.is_file() {
            Ok(given.to_path_buf())
        } else {
            Err(format!(
                "a controller plugin's shared library at {path} (no such file)"
            ))
        };
    }
    let mut places: Vec<(PathBuf, &str)> = std::env::var_os(PLUGIN_PATH_VAR)
        .map(|dirs| {
            std::env::split_paths(&dirs)
                .filter(|dir| !dir.as_os_str().is_empty())
                .map(|dir| (dir, "a scenario file's directory"))
                .collect()
        })
        .unwrap_or_default();
    if let Ok(dir) = std::env::current_dir() {
        places.push((dir, "the current directory"));
    }
    if let Some((dir, _)) = places.iter().find(|(dir, _)| dir.join(given).is_file()) {
        return Ok(dir.join(given));
    }
    let looked: Vec<String> = places
        .iter()
        .map(|(dir, what)| format!("{} ({what})", dir.display()))
        .collect();
    Err(format!(
        "a controller plugin's shared library {path} in the scenario file's directory or the \
         current directory (no such file in {})",
        looked.join(", nor in ")
    ))
}

impl ControllerFactory for PluginFactory {
    fn build(
        &self,
        _config: &TcpConfig,
        limit: Duration,
    ) -> Result<Box<dyn CongestionControl>, String> {
        Ok(Box::new(PluginController::new(&self.plugin, limit)?))
    }
}

/// One instance of a plugin's controller, for one sender.
#[derive(Debug)]
struct PluginController {
    plugin: Arc<Plugin>,
    /// The instance `create` returned; freed by `destroy` on drop.
    instance: *mut c_void,
    /// The outcome each call writes, reused (only its status and lengths are reset).
    outcome: Outcome,
    /// Bounds every call into the library (`None`: the limit is off).
    watch: Option<Watch>,
}

// SAFETY: the instance pointer is used only through `&mut self` (one call at a time) and on
// drop; the plugin contract says an instance holds no thread-bound state, so moving it to
// another thread (a sweep's worker) is sound.
unsafe impl Send for PluginController {}
// SAFETY: nothing reachable from `&self` touches the instance (only `name` is read).
unsafe impl Sync for PluginController {}

impl PluginController {
    /// A new instance with the plugin's parameters, or the plugin's reason for refusing; its
    /// calls bounded to `limit` of wall time.
    fn new(plugin: &Arc<Plugin>, limit: Duration) -> Result<PluginController, String> {
        let mut outcome = Outcome::keep();
        let create = plugin.vtable.create.ok_or("no create")?;
        let params = plugin.params.as_bytes();
        let watch = Watch::new(&plugin.name, limit, Stop::Exit);
        let call = watch
            .as_ref()
            .map(|w| w.begin(Callback::Create, Time::ZERO));
        // SAFETY: `create` comes from the checked vtable of a loaded library; the parameter
        // bytes and the outcome are valid for the call.
        let instance = unsafe { create(params.as_ptr(), params.len(), &mut outcome) };
        finish(watch.as_ref(), call)?;
        if instance.is_null() {
            return Err(if outcome.status == OUTCOME_FAIL {
                outcome.message()
            } else {
                "create returned no controller".to_string()
            });
        }
        Ok(PluginController {
            plugin: Arc::clone(plugin),
            instance,
            outcome,
            watch,
        })
    }

    /// Starts watching a call of `callback` at `now`.
    fn begin(&self, callback: Callback, now: Time) -> Option<u64> {
        self.watch.as_ref().map(|w| w.begin(callback, now))
    }

    /// Clears the outcome for the next call.
    fn reset(&mut self) -> &mut Outcome {
        self.outcome.status = OUTCOME_KEEP;
        self.outcome.has_pacing_rate = 0;
        self.outcome.message_len = 0;
        &mut self.outcome
    }

    /// What the last call decided.
    fn decision(&self) -> CcResult {
        let outcome = &self.outcome;
        match outcome.status {
            OUTCOME_KEEP => Ok(None),
            OUTCOME_SET => Ok(Some(CcWindow {
                cwnd: outcome.cwnd,
                ssthresh: outcome.ssthresh,
                pacing_rate: (outcome.has_pacing_rate != 0).then_some(outcome.pacing_rate),
            })),
            OUTCOME_FAIL => Err(outcome.message()),
            other => Err(format!("returned the unknown outcome status {other}")),
        }
    }

    /// Calls an ACK callback (a null one keeps the window), `name` for the watchdog.
    fn on_ack(
        &mut self,
        name: Callback,
        callback: Option<AckFn>,
        state: &CcState,
        ack: &AckSample,
    ) -> CcResult {
        let Some(callback) = callback else {
            return Ok(None);
        };
        let call = self.begin(name, state.now);
        let (state, ack) = (abi_state(state), abi_ack(ack));
        let instance = self.instance;
        let outcome: *mut Outcome = self.reset();
        // SAFETY: the callback comes from the checked vtable of the library `self.plugin`
        // keeps loaded; the instance is this library's and used by one call at a time; state,
        // ack and outcome are valid for the call.
        unsafe { callback(instance, &state, &ack, outcome) };
        finish(self.watch.as_ref(), call)?;
        self.decision()
    }

    /// Calls a signal callback (a null one keeps the window), `name` for the watchdog.
    fn on_signal(
        &mut self,
        name: Callback,
        callback: Option<SignalFn>,
        state: &CcState,
        code: u32,
    ) -> CcResult {
        let Some(callback) = callback else {
            return Ok(None);
        };
        let call = self.begin(name, state.now);
        let abi = abi_state(state);
        let instance = self.instance;
        let outcome: *mut Outcome = self.reset();
        // SAFETY: as in `on_ack`.
        unsafe { callback(instance, &abi, code, outcome) };
        finish(self.watch.as_ref(), call)?;
        self.decision()
    }
}

impl Drop for PluginController {
    fn drop(&mut self) {
        if let Some(destroy) = self.plugin.vtable.destroy {
            let call = self.begin(Callback::Destroy, Time::ZERO);
            // SAFETY: the instance came from this library's `create` and is freed once, here;
            // the library is still loaded (`self.plugin` holds it).
            unsafe { destroy(self.instance) };
            // A destroy that overran ended the process already; nothing is left to report.
            let _ = finish(self.watch.as_ref(), call);
        }
    }
}

impl CongestionControl for PluginController {
    fn name(&self) -> &str {
        &self.plugin.name
    }

    fn pkts_acked(&mut self, state: &CcState, ack: &AckSample) -> CcResult {
        self.on_ack(
            Callback::PktsAcked,
            self.plugin.vtable.pkts_acked,
            state,
            ack,
        )
    }

    fn cong_avoid(&mut self, state: &CcState, ack: &AckSample) -> CcResult {
        self.on_ack(
            Callback::CongAvoid,
            self.plugin.vtable.cong_avoid,
            state,
            ack,
        )
    }

    fn ssthresh(&mut self, state: &CcState, reduction: Reduction) -> CcResult {
        let code = match reduction {
            Reduction::Recovery => AbiReduction::Recovery,
            Reduction::GoBackN => AbiReduction::GoBackN,
            Reduction::Timeout => AbiReduction::Timeout,
            Reduction::Restart => AbiReduction::Restart,
            Reduction::Ecn => AbiReduction::Ecn,
        } as u32;
        self.on_signal(Callback::Ssthresh, self.plugin.vtable.ssthresh, state, code)
    }

    fn set_state(&mut self, state: &CcState, new_state: CaState) -> CcResult {
        let code = match new_state {
            CaState::Open => AbiCaState::Open,
        } as u32;
        self.on_signal(
            Callback::SetState,
            self.plugin.vtable.set_state,
            state,
            code,
        )
    }
}

/// Ends a watched call (`call` is `None` without a watch). For a plugin the watchdog ends the
/// process before an overrun could be reported, so `Err` is only the case of a call that
/// returned between the watchdog's decision and its exit.
fn finish(watch: Option<&Watch>, call: Option<u64>) -> Result<(), String> {
    match (watch, call) {
        (Some(watch), Some(call)) => watch.end(call),
        _ => Ok(()),
    }
}

/// The sender's state as the ABI lays it out.
fn abi_state(state: &CcState) -> State {
    State {
        now: state.now.as_secs_f64(),
        cwnd: state.cwnd,
        ssthresh: state.ssthresh,
        win: state.win,
        srtt: state.srtt,
        flight: state.flight,
        highest_ack: state.highest_ack,
        max_sent: state.max_sent,
        window: state.window,
        packet_bytes: state.packet_bytes,
        in_recovery: state.in_recovery,
        first_reduction: state.first_reduction,
        after_timeout: state.after_timeout,
        app_limited: state.app_limited,
    }
}

/// An ACK as the ABI lays it out.
fn abi_ack(ack: &AckSample) -> Ack {
    Ack {
        acked_bytes: ack.acked_bytes,
        rtt_seconds: ack.rtt.map_or(0.0, |rtt| rtt.as_secs_f64()),
        acked: ack.acked,
        has_rtt: ack.rtt.is_some(),
        ece: ack.ece,
    }
}
