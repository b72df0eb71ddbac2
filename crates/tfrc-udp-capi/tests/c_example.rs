//! The C example built with `make` against this crate's static library and run over loopback:
//! media_receiver and media_sender stream 3 s of 30 fps frames at up to 8 Mb/s, and their JSON
//! summaries must show the frames delivered, nothing refused, and counts that agree with each
//! other. Skipped, saying so, where `cc` or `make` is missing.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// How long either program may run before the test gives up on it.
const LIMIT: Duration = Duration::from_secs(30);
/// The encoder's top bitrate, also given as the path's rate.
const MAX_RATE_BPS: f64 = 8e6;
const DATAGRAM: u64 = 1200;

/// A child process killed if the test ends before it does.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Running {
    /// Its standard output (what is left of it) once it exits, failing the test past `LIMIT`
    /// or on a non-zero exit.
    fn finish(mut self, what: &str) -> String {
        let start = Instant::now();
        let status = loop {
            if let Some(status) = self.0.try_wait().unwrap() {
                break status;
            }
            assert!(
                start.elapsed() < LIMIT,
                "{what} still running after {LIMIT:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut out = String::new();
        if let Some(mut stdout) = self.0.stdout.take() {
            stdout.read_to_string(&mut out).unwrap();
        }
        let mut err = String::new();
        self.0
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        assert!(status.success(), "{what} failed ({status}): {err}");
        out
    }
}

fn available(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The folder cargo built this crate's static library into for this test (target/…/deps).
fn library_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().to_path_buf();
    assert!(
        dir.join("libtfrc_udp_capi.a").exists(),
        "no libtfrc_udp_capi.a beside {}",
        exe.display()
    );
    dir
}

fn build(out: &Path) {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/c");
    let made = Command::new("make")
        .arg("-C")
        .arg(&example)
        .arg(format!("LIB_DIR={}", library_dir().display()))
        .arg(format!("BUILD={}", out.display()))
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "make failed:\n{}{}",
        String::from_utf8_lossy(&made.stdout),
        String::from_utf8_lossy(&made.stderr)
    );
}

fn json(line: &str) -> Value {
    serde_json::from_str(line).unwrap_or_else(|err| panic!("not JSON ({err}): {line}"))
}

fn u(v: &Value, key: &str) -> u64 {
    v[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key} missing in {v}"))
}

fn f(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} missing in {v}"))
}

#[test]
fn the_c_media_example_streams_frames_over_loopback() {
    if !available("cc") || !available("make") {
        eprintln!("SKIPPED the_c_media_example_streams_frames_over_loopback: cc or make missing");
        return;
    }
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("c-example");
    build(&out);

    let mut receiver = Running(
        Command::new(out.join("media_receiver"))
            .args(["--bind", "127.0.0.1:0", "--idle", "1", "--duration", "20"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut lines = BufReader::new(receiver.0.stdout.take().unwrap());
    let mut first = String::new();
    lines.read_line(&mut first).unwrap();
    let addr = json(&first)["listening"]
        .as_str()
        .unwrap_or_else(|| panic!("no address in {first:?}"))
        .to_owned();

    let sender = Running(
        Command::new(out.join("media_sender"))
            .args([
                "--peer",
                &addr,
                "--duration",
                "3",
                "--datagram",
                &DATAGRAM.to_string(),
            ])
            .args(["--max-rate", &MAX_RATE_BPS.to_string()])
            .args(["--path-rate", &MAX_RATE_BPS.to_string()])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let tx = json(sender.finish("media_sender").trim());
    receiver.finish("media_receiver");
    // The receiver's summary follows its first line on the same pipe.
    let mut rest = String::new();
    lines.read_to_string(&mut rest).unwrap();
    let rx = json(rest.trim());
    eprintln!("{tx}\n{rx}");

    // The sender: 3 s of 30 fps, a key frame every 30, nothing refused on loopback, and every
    // payload it queued accounted for.
    assert_eq!((u(&tx, "frames"), u(&tx, "key_frames")), (90, 3));
    assert_eq!(
        (u(&tx, "refused_full"), u(&tx, "too_large")),
        (0, 0),
        "{tx}"
    );
    let queued = u(&tx, "payloads_queued");
    assert!(queued >= 90, "at least one payload a frame: {tx}");
    assert_eq!(
        queued,
        u(&tx, "sent") + u(&tx, "expired") + u(&tx, "flushed") + u(&tx, "unsent"),
        "{tx}"
    );
    assert_eq!(
        u(&tx, "expired"),
        u(&tx, "expired_seen"),
        "every expiry announced: {tx}"
    );
    assert_eq!(
        u(&tx, "packets_sent"),
        u(&tx, "sent"),
        "one datagram a payload: {tx}"
    );
    assert_eq!(
        u(&tx, "bytes_sent"),
        u(&tx, "packets_sent") * DATAGRAM,
        "{tx}"
    );
    // The bitrate follows the allowed rate up to the encoder's cap (8 Mb/s on loopback).
    let steady = f(&tx, "steady_bps");
    assert!(
        steady > 0.5 * MAX_RATE_BPS && steady < 1.25 * MAX_RATE_BPS,
        "steady bitrate {steady}: {tx}"
    );
    let overshoot = f(&tx, "startup_overshoot");
    assert!(
        overshoot > 0.0 && overshoot < 2.5,
        "start-up overshoot {overshoot}: {tx}"
    );
    assert!(
        (f(&tx, "startup_peak_bps") / MAX_RATE_BPS - overshoot).abs() < 1e-3,
        "{tx}"
    );

    // The receiver: most frames whole, every payload one the sender sent, in full.
    let payloads = u(&rx, "payloads");
    assert!(payloads <= u(&tx, "sent"), "{rx}\n{tx}");
    assert!(payloads * 100 >= u(&tx, "sent") * 95, "{rx}\n{tx}");
    assert_eq!(u(&rx, "bytes"), payloads * (DATAGRAM - 34), "{rx}");
    assert_eq!(
        (u(&rx, "malformed"), u(&rx, "duplicates"), u(&rx, "stale")),
        (0, 0, 0),
        "{rx}"
    );
    let complete = u(&rx, "frames_complete");
    assert!(complete * 10 >= 90 * 9, "most frames complete: {rx}");
    let highest = rx["highest_frame"].as_i64().unwrap();
    assert!(highest < 90, "{rx}");
    assert_eq!(
        complete + u(&rx, "frames_incomplete") + u(&rx, "frames_missing"),
        (highest + 1) as u64,
        "{rx}"
    );
    let (mean, max) = (f(&rx, "owd_var_mean_ms"), f(&rx, "owd_var_max_ms"));
    assert!(mean >= 0.0 && max >= mean, "{rx}");
    let (mean, max) = (
        f(&rx, "frame_delay_var_mean_ms"),
        f(&rx, "frame_delay_var_max_ms"),
    );
    assert!(mean >= 0.0 && max >= mean, "{rx}");
}
