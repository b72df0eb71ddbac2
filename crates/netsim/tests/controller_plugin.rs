//! Native controller plugins (docs/controllers.md, "Native plugins"): the example plugins are
//! built with cargo (into their own target directory under target/, so that this test never
//! waits on the cargo that runs it) and loaded with `controller = "native:PATH"`. The GAIMD
//! plugin gives the built-in GAIMD agent's results bit for bit (and, as GAIMD(1, 1/2), the
//! built-in Reno's); runs are deterministic; every misbehaviour of a plugin (NaN or negative
//! cwnd, an error, a panic, a failure to be made, a wrong ABI version, no entry point, a file
//! that is not a library) is refused with the scenario or ends the run naming the controller,
//! the callback and the simulated time. C plugins against the ABI's header (compiled with `cc`)
//! give Reno's results, and what only they can get wrong (a null callback, an undefined outcome
//! status) is an error too.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use common::{bernoulli_on_ab, two_nodes_over};
use netsim::results::Results;
use netsim::scenario::Scenario;

/// The workspace's root directory.
fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Builds the plugin packages with `features` into target/controller-plugins/`dir` and returns
/// that build's debug directory.
fn build(dir: &str, features: &str) -> PathBuf {
    let target = workspace().join("target/controller-plugins").join(dir);
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let mut command = Command::new(cargo);
    command
        .current_dir(workspace())
        .args(["build", "--locked", "--quiet", "--target-dir"])
        .arg(&target);
    if features.is_empty() {
        command.args([
            "-p",
            "controller-template",
            "-p",
            "controller-delay",
            "-p",
            "controller-misbehave",
        ]);
    } else {
        command.args(["-p", "controller-misbehave", "--features", features]);
    }
    let output = command.output().expect("cargo runs");
    assert!(
        output.status.success(),
        "building the plugins failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    target.join("debug")
}

/// The shared library `name` (e.g. "gaimd_controller") of the plain build, built once.
fn plugin(name: &str) -> String {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    let dir = DIR.get_or_init(|| build("plain", ""));
    library(dir, name)
}

/// The file name of library `name` in `dir`, as this platform spells it.
fn library(dir: &Path, name: &str) -> String {
    let file = dir.join(format!(
        "{}{name}{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ));
    assert!(file.is_file(), "no {}", file.display());
    file.to_str().unwrap().to_string()
}

/// One flow `f` with `flow`'s keys over a 10 Mb/s, 20 ms link with a 25-packet DropTail queue
/// and `loss` random loss, for `duration`.
fn scenario(flow: &str, duration: &str, loss: f64) -> String {
    two_nodes_over(
        "10Mbps",
        "20ms",
        25,
        duration,
        "1s",
        flow,
        &bernoulli_on_ab(loss),
    )
}

/// Everything a run measured but the flow's labels.
fn measured(results: &Results) -> String {
    let flows: Vec<String> = results
        .flows
        .iter()
        .map(|f| format!("{:?}", f.record))
        .collect();
    format!("{flows:?}\n{:?}\n{}", results.links, results.events)
}

/// A Reno-recovery TCP flow with `ns2_2000`'s arithmetic run by `controller`.
fn controlled(controller: &str) -> String {
    format!(
        "kind = \"tcp\"\nvariant = \"reno\"\npreset = \"ns2_2000\"\nwindow = 100\n\
         controller = \"{controller}\""
    )
}

#[test]
fn the_gaimd_plugin_gives_the_built_in_gaimd_and_reno_results_bit_for_bit() {
    let gaimd = plugin("gaimd_controller");
    for (i, (builtin, params)) in [
        ("kind = \"gaimd\"\nrule = \"ns2\"\nwindow = 100", ""),
        (
            "kind = \"gaimd\"\nrule = \"paper\"\nwindow = 100",
            "?rule=paper",
        ),
        (
            "kind = \"tcp\"\nvariant = \"reno\"\npreset = \"ns2_2000\"\nwindow = 100",
            "?alpha=1&beta=0.5",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let seed = i as u64 + 3;
        let a = common::simulate(&scenario(builtin, "60s", 0.01), seed);
        let b = common::simulate(
            &scenario(&controlled(&format!("native:{gaimd}{params}")), "60s", 0.01),
            seed,
        );
        assert!(a.flows[0].record.totals.packets_sent > 10_000);
        assert!(
            measured(&a) == measured(&b),
            "{builtin} and the plugin{params} differ"
        );
    }
}

#[test]
fn plugin_runs_are_deterministic_and_their_parameters_matter() {
    let delay = plugin("delay_controller");
    let run = |params: &str, seed: u64| {
        let flow = controlled(&format!("native:{delay}{params}"));
        measured(&common::simulate(&scenario(&flow, "20s", 0.001), seed))
    };
    assert!(run("", 9) == run("", 9));
    assert!(run("", 9) != run("?alpha=6&beta=12", 9));
    // The watchdog never touches a callback that returns: off, the run is the same.
    let off = measured(&common::simulate(
        &scenario(
            &format!(
                "{}\ncontroller_limit = \"0s\"",
                controlled(&format!("native:{delay}"))
            ),
            "20s",
            0.001,
        ),
        9,
    ));
    assert!(run("", 9) == off);
}

/// The child process of the test below (run only by it, with `TFRCLAB_HANG_PLUGIN` naming the
/// plugin): a run whose plugin never returns, which the watchdog must end.
#[test]
#[ignore = "the child process of a_plugin_that_never_returns_ends_the_process_naming_it"]
fn hanging_plugin_child() {
    let name = std::env::var("TFRCLAB_HANG_PLUGIN").expect("run by the parent test");
    let flow = format!("{}\ncontroller_limit = \"0.5s\"", controlled(&name));
    let (failure, _) = failure_of(&flow);
    panic!("the run ended without the watchdog: {failure:?}");
}

#[test]
fn a_plugin_that_never_returns_ends_the_process_naming_it() {
    let misbehave = plugin("misbehave_controller");
    let name = format!("native:{misbehave}?fail=hang&after=50");
    let started = Instant::now();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "hanging_plugin_child",
            "--ignored",
            "--nocapture",
        ])
        .env("TFRCLAB_HANG_PLUGIN", &name)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("the run still hangs after 60 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(3), "{stderr}");
    for part in [
        format!("congestion controller {name:?} did not return from cong_avoid (called at t = "),
        "within its limit of 0.5 s of wall time".to_string(),
        "exit status 3".to_string(),
    ] {
        assert!(stderr.contains(&part), "{part:?} not in {stderr}");
    }
    assert!(!stderr.contains("t = 0.000000 s"), "{stderr}");
}

/// Runs `flow` to its end and returns the run's failure, if any, and the packets delivered.
fn failure_of(flow: &str) -> (Option<String>, u64) {
    let text = scenario(flow, "30s", 0.01);
    let mut simulation = Scenario::from_toml_str(&text)
        .unwrap_or_else(|e| panic!("{e}"))
        .simulation(1)
        .unwrap();
    let end = simulation.end();
    simulation.run_until(end);
    let failure = simulation.agent_failure();
    let results = simulation.finish();
    (failure, results.flows[0].record.totals.packets_received)
}

#[test]
fn a_misbehaving_plugin_ends_the_run_naming_itself_the_callback_and_the_time() {
    let misbehave = plugin("misbehave_controller");
    let (failure, delivered) = failure_of(&controlled(&format!("native:{misbehave}")));
    assert_eq!(failure, None);
    assert!(delivered > 5000, "{delivered}");
    for (fail, callback, reason) in [
        (
            "nan",
            "cong_avoid",
            "cwnd must be a finite number of at least 1 packet, got NaN",
        ),
        ("negative", "cong_avoid", "got -1"),
        ("error", "cong_avoid", "gave up"),
        (
            "panic",
            "cong_avoid",
            "panicked: cong_avoid blew up after 100 calls",
        ),
        ("new_panic", "__init__", "panicked: cannot start"),
    ] {
        let name = format!("native:{misbehave}?fail={fail}");
        if fail == "new_panic" {
            // Refused with the scenario: netsim makes one controller while loading the plugin.
            let text = scenario(&controlled(&name), "30s", 0.01);
            let error = Scenario::from_toml_str(&text).unwrap_err().to_string();
            assert!(
                error.contains("controller") && error.contains(reason),
                "{error}"
            );
            continue;
        }
        let (failure, delivered) = failure_of(&controlled(&name));
        let failure = failure.expect("the run failed");
        for part in [
            format!("congestion controller {name:?}"),
            format!("failed in {callback} at t = "),
            reason.to_string(),
            "flow \"f\"".to_string(),
        ] {
            assert!(failure.contains(&part), "{part:?} not in {failure}");
        }
        // The 100th cong_avoid comes well inside the run, and the sender went silent.
        assert!(!failure.contains("t = 0.000000 s"), "{failure}");
        assert!(delivered < 1000, "{fail}: {delivered}");
    }
}

#[test]
fn a_library_that_is_no_plugin_of_this_abi_is_refused_with_the_scenario() {
    let refused = |controller: &str| {
        let text = scenario(&controlled(controller), "10s", 0.0);
        let error = Scenario::from_toml_str(&text).unwrap_err().to_string();
        assert!(error.contains("flows[0].controller"), "{error}");
        error
    };
    let wrong_abi = library(&build("wrong_abi", "wrong_abi"), "misbehave_controller");
    let error = refused(&format!("native:{wrong_abi}"));
    assert!(error.contains("built against version 3"), "{error}");
    let no_entry = library(&build("no_entry", "no_entry"), "misbehave_controller");
    let error = refused(&format!("native:{no_entry}"));
    assert!(error.contains("exports no `tfrclab_controller`"), "{error}");
    let not_a_library = workspace().join("Cargo.toml");
    let error = refused(&format!("native:{}", not_a_library.display()));
    assert!(error.contains("cannot be loaded"), "{error}");
    let error = refused("native:/no/such/libcc.so");
    assert!(error.contains("no such file"), "{error}");
    let misbehave = plugin("misbehave_controller");
    let error = refused(&format!("native:{misbehave}?fail=new"));
    assert!(error.contains("refuses to be made"), "{error}");
    let error = refused(&format!("native:{misbehave}?speed=3"));
    assert!(error.contains("unknown parameter(s): speed"), "{error}");
}

/// Compiles the C plugin `source` (a path in the workspace) with `defines` into
/// target/controller-plugins/c/ as library `name`; `None` (said on stderr) without a C compiler.
fn compile_c(source: &str, defines: &[&str], name: &str) -> Option<String> {
    let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let out = workspace().join("target/controller-plugins/c");
    std::fs::create_dir_all(&out).unwrap();
    let library = out.join(format!(
        "{}{name}{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ));
    let built = Command::new(&compiler)
        .args([
            "-std=c11", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", "-O2",
        ])
        .args(defines.iter().map(|d| format!("-D{d}")))
        .arg("-I")
        .arg(workspace().join("crates/controller-abi/include"))
        .arg("-o")
        .arg(&library)
        .arg(workspace().join(source))
        .arg("-lm")
        .output();
    let Ok(built) = built else {
        eprintln!("no C compiler ({compiler}): {source} is not checked");
        return None;
    };
    assert!(
        built.status.success(),
        "{compiler} failed on {source}:\n{}",
        String::from_utf8_lossy(&built.stderr)
    );
    Some(library.to_str().unwrap().to_string())
}

#[test]
fn a_plugin_written_in_c_against_the_header_gives_the_built_in_reno_results() {
    let Some(library) = compile_c("crates/controller-abi/examples/c/reno.c", &[], "reno_c") else {
        return;
    };
    let reno = "kind = \"tcp\"\nvariant = \"reno\"\npreset = \"ns2_2000\"\nwindow = 100";
    let a = common::simulate(&scenario(reno, "60s", 0.01), 11);
    let b = common::simulate(
        &scenario(&controlled(&format!("native:{library}")), "60s", 0.01),
        11,
    );
    assert!(a.flows[0].record.totals.packets_sent > 10_000);
    assert!(
        measured(&a) == measured(&b),
        "the C plugin differs from Reno"
    );
}

#[test]
fn a_c_plugin_without_ssthresh_or_with_an_undefined_status_is_an_error() {
    let source = "crates/controller-misbehave/c/broken.c";
    let Some(no_ssthresh) = compile_c(source, &["NULL_SSTHRESH"], "no_ssthresh") else {
        return;
    };
    let text = scenario(&controlled(&format!("native:{no_ssthresh}")), "10s", 0.0);
    let error = Scenario::from_toml_str(&text).unwrap_err().to_string();
    assert!(error.contains("vtable has no ssthresh"), "{error}");
    let bad_status = compile_c(source, &["BAD_STATUS"], "bad_status").unwrap();
    let (failure, _) = failure_of(&controlled(&format!("native:{bad_status}")));
    let failure = failure.expect("the run failed");
    assert!(
        failure.contains("failed in cong_avoid at t = ")
            && failure.contains("returned the unknown outcome status 7"),
        "{failure}"
    );
    let plain = compile_c(source, &[], "broken_plain").unwrap();
    assert_eq!(failure_of(&controlled(&format!("native:{plain}"))).0, None);
}
