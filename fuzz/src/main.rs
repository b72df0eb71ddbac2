//! `tfrc-fuzz`: runs the seeded mutation fuzzer over the tfrc wire formats and prints the
//! throughput and how the inputs parsed; exits 1 with the input in hex if the target panics.
//!
//! ```text
//! cargo run --release -p tfrc-fuzz -- [--seconds N] [--iterations N] [--seed N]
//! ```

use std::process::ExitCode;
use std::time::Duration;

use tfrc_fuzz::{run, FuzzConfig};

const USAGE: &str = "usage: tfrc-fuzz [--seconds N] [--iterations N] [--seed N]

Fuzzes tfrc's wire parsers with seeded mutations of valid packets.
  --seconds N     stop after N seconds of wall-clock time
  --iterations N  stop after N inputs (alone, the run is reproducible from the seed)
  --seed N        seed for the mutator (default 0)
With neither limit the run lasts 10 seconds; with both, it stops at the first.";

fn main() -> ExitCode {
    let config = match parse_args(std::env::args().skip(1)) {
        Ok(Some(config)) => config,
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
    println!("tfrc-fuzz: seed {}, running for {limits}", config.seed);
    match run(&config) {
        Ok(report) => {
            print!("{report}");
            ExitCode::SUCCESS
        }
        Err(crash) => {
            eprintln!("tfrc-fuzz: CRASH {crash}");
            ExitCode::FAILURE
        }
    }
}

/// The configuration the arguments ask for, `None` for `--help`, or what is wrong with them.
fn parse_args(args: impl IntoIterator<Item = String>) -> Result<Option<FuzzConfig>, String> {
    let mut config = FuzzConfig {
        seed: 0,
        iterations: None,
        duration: None,
    };
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
            "-h" | "--help" => return Ok(None),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    if config.iterations.is_none() && config.duration.is_none() {
        config.duration = FuzzConfig::default().duration;
    }
    Ok(Some(config))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Option<FuzzConfig>, String> {
        parse_args(args.iter().map(|s| s.to_string()))
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
}
