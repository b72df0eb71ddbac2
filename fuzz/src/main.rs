//! `tfrc-fuzz`: runs the seeded mutation fuzzer over the tfrc wire formats and netsim's scenario
//! files and prints, per target, the throughput and how the inputs parsed; exits 1 with the input
//! (hex for packets, minimized text for scenarios) if a target panics.
//!
//! ```text
//! cargo run --release -p tfrc-fuzz -- [--seconds N] [--iterations N] [--seed N]
//!                                     [--target wire|scenario|all]
//! ```

use std::process::ExitCode;
use std::time::Duration;

use tfrc_fuzz::scenario::{fuzz_scenario, minimize, panics, run_scenarios};
use tfrc_fuzz::{run, FuzzConfig};

const USAGE: &str = "usage: tfrc-fuzz [--seconds N] [--iterations N] [--seed N] [--target T]

Fuzzes tfrc's wire parsers with seeded mutations of valid packets, and netsim's scenario
parser with seeded mutations of example scenario files.
  --seconds N     stop after N seconds of wall-clock time (per target)
  --iterations N  stop after N inputs per target (alone, the run is reproducible from the seed)
  --seed N        seed for the mutators (default 0)
  --target T      wire, scenario or all (default all: wire, then scenario)
With neither limit each target runs 10 seconds; with both, it stops at the first.";

/// Which targets a run fuzzes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Target {
    /// The tfrc wire formats.
    Wire,
    /// netsim scenario files.
    Scenario,
    /// Both, wire first.
    All,
}

fn main() -> ExitCode {
    let (config, target) = match parse_args(std::env::args().skip(1)) {
        Ok(Some(parsed)) => parsed,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("tfrc-fuzz: {message}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let limits = match (config.iterations, config.duration) {
        (Some(n), Some(d)) => format!("{n} iterations or {} s", d.as_secs()),
        (Some(n), None) => format!("{n} iterations"),
        (None, Some(d)) => format!("{} s", d.as_secs()),
        (None, None) => "the seed corpus".to_owned(),
    };
    println!(
        "tfrc-fuzz: seed {}, running each target for {limits}",
        config.seed
    );
    if matches!(target, Target::Wire | Target::All) {
        println!("== target wire");
        match run(&config) {
            Ok(report) => print!("{report}"),
            Err(crash) => {
                eprintln!("tfrc-fuzz: CRASH (wire) {crash}");
                return ExitCode::FAILURE;
            }
        }
    }
    if matches!(target, Target::Scenario | Target::All) {
        println!("== target scenario");
        // Every caught panic would print its message; the crash report says it once.
        let hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let outcome = run_scenarios(&config);
        let outcome = outcome.map_err(|crash| {
            let text = String::from_utf8_lossy(&crash.input).into_owned();
            let small = minimize(&text, |t| panics(t, fuzz_scenario));
            (crash, text, small)
        });
        std::panic::set_hook(hook);
        match outcome {
            Ok(report) => print!("{report}"),
            Err((crash, text, small)) => {
                eprintln!(
                    "tfrc-fuzz: CRASH (scenario) panic at iteration {}: {}\n\
                     --- input ({} bytes) ---\n{text}\n--- minimized ---\n{small}",
                    crash.iteration,
                    crash.message,
                    text.len()
                );
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}

/// The configuration and target the arguments ask for, `None` for `--help`, or what is wrong
/// with them.
fn parse_args(
    args: impl IntoIterator<Item = String>,
) -> Result<Option<(FuzzConfig, Target)>, String> {
    let mut config = FuzzConfig {
        seed: 0,
        iterations: None,
        duration: None,
    };
    let mut target = Target::All;
    let mut args = args.into_iter();
    while let Some(flag) = args.next() {
        let mut value = || {
            let text = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
            text.parse::<u64>()
                .map_err(|err| format!("{flag} {text:?}: {err}"))
        };
        match flag.as_str() {
            "--seconds" => config.duration = Some(Duration::from_secs(value()?)),
            "--iterations" => config.iterations = Some(value()?),
            "--seed" => config.seed = value()?,
            "--target" => {
                target = match args.next().as_deref() {
                    Some("wire") => Target::Wire,
                    Some("scenario") => Target::Scenario,
                    Some("all") => Target::All,
                    Some(other) => {
                        return Err(format!("--target {other:?}: not wire, scenario or all"))
                    }
                    None => return Err("--target needs a value".into()),
                }
            }
            "-h" | "--help" => return Ok(None),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    if config.iterations.is_none() && config.duration.is_none() {
        config.duration = FuzzConfig::default().duration;
    }
    Ok(Some((config, target)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Option<FuzzConfig>, String> {
        parse_args(args.iter().map(|s| s.to_string())).map(|parsed| parsed.map(|(c, _)| c))
    }

    fn target(args: &[&str]) -> Result<Option<Target>, String> {
        parse_args(args.iter().map(|s| s.to_string())).map(|parsed| parsed.map(|(_, t)| t))
    }

    #[test]
    fn arguments() {
        assert_eq!(
            parse(&["--seconds", "600", "--seed", "9"]),
            Ok(Some(FuzzConfig {
                seed: 9,
                iterations: None,
                duration: Some(Duration::from_secs(600)),
            }))
        );
        assert_eq!(
            parse(&["--iterations", "1000"]),
            Ok(Some(FuzzConfig {
                seed: 0,
                iterations: Some(1000),
                duration: None,
            }))
        );
        assert_eq!(parse(&[]), Ok(Some(FuzzConfig::default())));
        assert_eq!(parse(&["--help"]), Ok(None));
        assert!(parse(&["--seconds"]).is_err());
        assert!(parse(&["--seed", "-1"]).is_err());
        assert!(parse(&["--fast"]).is_err());
    }

    #[test]
    fn targets() {
        assert_eq!(target(&[]), Ok(Some(Target::All)));
        assert_eq!(target(&["--target", "wire"]), Ok(Some(Target::Wire)));
        assert_eq!(
            target(&["--target", "scenario", "--seed", "2"]),
            Ok(Some(Target::Scenario))
        );
        assert_eq!(target(&["--target", "all"]), Ok(Some(Target::All)));
        assert!(target(&["--target", "toml"]).is_err());
        assert!(target(&["--target"]).is_err());
    }
}
