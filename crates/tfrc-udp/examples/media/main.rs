//! A media sender and receiver over tfrc-udp: a 30 fps encoder whose bitrate follows TFRC's
//! allowed rate (key frames first, every payload with a 100 ms deadline), and a player that
//! reassembles frames. Each prints a one-line JSON summary when it ends.
//!
//! ```text
//! cargo run --release -p tfrc-udp --example media -- recv --bind 0.0.0.0:5000 --duration 12
//! cargo run --release -p tfrc-udp --example media -- send --to HOST:5000 --duration 10 \
//!     [--size 1200] [--max-rate 8000000] [--path-rate 4000000]
//! ```
//!
//! The encoder's bitrate is the allowed rate X, at most `--max-rate` (bits/s, 8 Mb/s by
//! default: an encoder has a ceiling, and on an idle path X grows far beyond it). The sender's
//! summary: frames produced and refused, payloads queued, refused, expired and
//! sent, its highest 100 ms sending rate over the first 2 s and its rate over the second half
//! (with `--path-rate`, both as fractions of the path's rate: the start-up overshoot and the
//! steady share). The receiver's: frames complete, on time (within 200 ms of capture beyond the
//! path's base delay), incomplete and missing, and the one-way delay variation.

use std::process::ExitCode;
use std::time::Duration;

use tfrc::TfrcConfig;
use tfrc_udp::{ReceiverOptions, SenderOptions, UdpReceiver, UdpSender};

mod stream;

const USAGE: &str = "usage: media recv --bind ADDR [--duration S]\n       \
                     media send --to ADDR [--duration S] [--size BYTES] [--max-rate BPS] \
                     [--path-rate BPS]";

/// The command line, parsed.
struct Args {
    role: String,
    address: String,
    duration: Duration,
    size: u32,
    max_bps: f64,
    path_bps: Option<f64>,
}

fn parse(mut words: impl Iterator<Item = String>) -> Result<Args, String> {
    let role = words.next().ok_or("a command: send or recv")?;
    if role != "send" && role != "recv" {
        return Err(format!("command: expected send or recv, found {role:?}"));
    }
    let mut args = Args {
        role,
        address: String::new(),
        duration: Duration::from_secs(10),
        size: 1200,
        max_bps: 8e6,
        path_bps: None,
    };
    while let Some(flag) = words.next() {
        let value = words.next().ok_or(format!("{flag}: a value"))?;
        let number = || {
            value
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v > 0.0)
                .ok_or(format!(
                    "{flag}: expected a positive number, found {value:?}"
                ))
        };
        match flag.as_str() {
            "--bind" | "--to" => args.address = value.clone(),
            "--duration" => {
                let seconds = number()?;
                if seconds > 3600.0 {
                    return Err(format!(
                        "--duration: expected at most 3600 s, found {seconds}"
                    ));
                }
                args.duration = Duration::from_secs_f64(seconds);
            }
            "--size" => {
                args.size = value
                    .parse()
                    .ok()
                    .filter(|s| (100..=65_507).contains(s))
                    .ok_or(format!(
                        "--size: expected 100 to 65507 bytes, found {value:?}"
                    ))?
            }
            "--path-rate" => args.path_bps = Some(number()?),
            "--max-rate" => args.max_bps = number()?,
            other => return Err(format!("unknown option {other}")),
        }
    }
    if args.address.is_empty() {
        return Err(format!(
            "{}: an address",
            if args.role == "send" {
                "--to"
            } else {
                "--bind"
            }
        ));
    }
    Ok(args)
}

fn run(args: Args) -> Result<String, tfrc_udp::TransportError> {
    let mut config = TfrcConfig::rfc5348();
    config.segment_size_bytes = args.size;
    if args.role == "recv" {
        let receiver = UdpReceiver::bind(args.address.as_str(), ReceiverOptions::new(config))?;
        Ok(stream::receive(receiver, args.duration)?.json())
    } else {
        let options = SenderOptions::new(config);
        let sender = UdpSender::bind("0.0.0.0:0", args.address.as_str(), options)?;
        Ok(stream::send(
            sender,
            args.size as usize,
            args.duration,
            args.max_bps,
            args.path_bps,
        )?
        .json())
    }
}

fn main() -> ExitCode {
    let args = match parse(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(message) => {
            eprintln!("media: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(args) {
        Ok(summary) => {
            println!("{summary}");
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("media: {err}");
            ExitCode::FAILURE
        }
    }
}
