//! The C example built with `make` against this crate's static library and run over loopback,
//! directly and through tfrc-udp's test relay emulating a 4 Mb/s path: media_receiver and
//! media_sender stream 30 fps frames at up to 8 Mb/s, and their JSON summaries must show the
//! frames delivered, the bitrate following the path, and counts that agree with each other.
//! Skipped, saying so, where `cc` or `make` is missing.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::Ordering;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;

// tfrc-udp's path emulator for its own tests, used as it is (a UDP relay with a bottleneck).
#[path = "../../tfrc-udp/tests/relay/mod.rs"]
mod relay;

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

/// The programs, built once for every test of this file (they run in parallel).
fn programs() -> Option<&'static Path> {
    static BUILT: OnceLock<Option<PathBuf>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            if !available("cc") || !available("make") {
                return None;
            }
            let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("c-example");
            build(&out);
            Some(out)
        })
        .as_deref()
}

/// Streams `duration_s` of frames from media_sender to media_receiver, through `path` if
/// given (the relay's address is the sender's peer), with `max_rate` and `path_rate` in bits
/// per second; the two summaries and the relay's drops.
fn stream(
    out: &Path,
    duration_s: f64,
    path: Option<relay::Path>,
    max_rate: f64,
    path_rate: f64,
) -> (Value, Value, u64) {
    let mut receiver = Running(
        Command::new(out.join("media_receiver"))
            .args(["--bind", "127.0.0.1:0", "--idle", "1", "--duration", "30"])
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
    let relay = path.map(|path| relay::Relay::spawn(addr.parse().unwrap(), path));
    let peer = relay.as_ref().map_or(addr, |r| r.addr.to_string());

    let sender = Running(
        Command::new(out.join("media_sender"))
            .args(["--peer", &peer, "--duration", &duration_s.to_string()])
            .args(["--datagram", &DATAGRAM.to_string()])
            .args(["--max-rate", &max_rate.to_string()])
            .args(["--path-rate", &path_rate.to_string()])
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
    let drops = relay.map_or(0, |r| r.drops.load(Ordering::Relaxed));
    eprintln!("{tx}\n{rx}\nrelay drops: {drops}");
    (tx, rx, drops)
}

/// The checks every run passes: the sender's payloads all accounted for, the receiver's
/// payloads whole and no more than were sent, the frame counts adding up.
fn check_consistent(tx: &Value, rx: &Value, frames: u64) {
    assert_eq!(u(tx, "frames"), frames, "{tx}");
    assert_eq!(u(tx, "key_frames"), frames.div_ceil(30), "{tx}");
    assert_eq!(u(tx, "too_large"), 0, "{tx}");
    let queued = u(tx, "payloads_queued");
    assert!(queued >= frames, "at least one payload a frame: {tx}");
    assert_eq!(
        queued + u(tx, "refused_full"),
        u(tx, "payloads_offered"),
        "{tx}"
    );
    assert_eq!(
        queued,
        u(tx, "sent") + u(tx, "expired") + u(tx, "flushed") + u(tx, "unsent"),
        "{tx}"
    );
    assert_eq!(
        u(tx, "expired"),
        u(tx, "expired_seen"),
        "every expiry announced: {tx}"
    );
    assert_eq!(
        u(tx, "packets_sent"),
        u(tx, "sent"),
        "one datagram a payload: {tx}"
    );
    assert_eq!(
        u(tx, "bytes_sent"),
        u(tx, "packets_sent") * DATAGRAM,
        "{tx}"
    );
    let overshoot = f(tx, "startup_overshoot");
    assert!(
        (f(tx, "startup_peak_bps") / f(tx, "path_rate_bps") - overshoot).abs() < 1e-3,
        "{tx}"
    );

    let payloads = u(rx, "payloads");
    assert!(payloads <= u(tx, "sent"), "{rx}\n{tx}");
    assert_eq!(u(rx, "bytes"), payloads * (DATAGRAM - 34), "{rx}");
    assert_eq!(
        (u(rx, "malformed"), u(rx, "duplicates"), u(rx, "stale")),
        (0, 0, 0),
        "{rx}"
    );
    let highest = rx["highest_frame"].as_i64().unwrap();
    assert!(highest < frames as i64, "{rx}");
    assert_eq!(
        u(rx, "frames_complete") + u(rx, "frames_incomplete") + u(rx, "frames_missing"),
        (highest + 1) as u64,
        "{rx}"
    );
    for what in ["owd_var", "frame_delay_var"] {
        let (mean, max) = (
            f(rx, &format!("{what}_mean_ms")),
            f(rx, &format!("{what}_max_ms")),
        );
        assert!(mean >= 0.0 && max >= mean, "{what}: {rx}");
    }
}

#[test]
fn the_c_media_example_streams_frames_over_loopback() {
    let Some(out) = programs() else {
        eprintln!("SKIPPED the_c_media_example_streams_frames_over_loopback: cc or make missing");
        return;
    };
    let (tx, rx, _) = stream(out, 3.0, None, MAX_RATE_BPS, MAX_RATE_BPS);
    check_consistent(&tx, &rx, 90);

    // Over loopback nothing is refused or lost, and the bitrate is the encoder's cap: the
    // allowed rate is far above it.
    assert_eq!(u(&tx, "refused_full"), 0, "{tx}");
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
    let payloads = u(&rx, "payloads");
    assert!(payloads * 100 >= u(&tx, "sent") * 95, "{rx}\n{tx}");
    let complete = u(&rx, "frames_complete");
    assert!(complete * 10 >= 90 * 9, "most frames complete: {rx}");
}

#[test]
fn the_c_media_example_follows_a_4_mbps_bottleneck() {
    let Some(out) = programs() else {
        eprintln!("SKIPPED the_c_media_example_follows_a_4_mbps_bottleneck: cc or make missing");
        return;
    };
    // 4 Mb/s, 25 ms each way, a DropTail queue of 25 packets; the encoder could do 8 Mb/s.
    let path = relay::Path {
        one_way: Duration::from_millis(25),
        drop_every: None,
        bottleneck: Some((4e6 / 8.0, 25)),
    };
    let (tx, rx, drops) = stream(out, 6.0, Some(path), MAX_RATE_BPS, 4e6);
    check_consistent(&tx, &rx, 180);
    // Every datagram sent was either delivered or dropped at the bottleneck, and the receiver
    // declared no more lost than were.
    assert_eq!(u(&rx, "payloads") + drops, u(&tx, "sent"), "{rx}\n{tx}");
    assert!(u(&rx, "packets_lost") <= drops, "{rx}");
    assert_eq!(u(&tx, "refused_full"), 0, "{tx}");
    // The encoder follows the allowed rate down to the path's, not its own 8 Mb/s cap.
    let steady = f(&tx, "steady_bps");
    assert!(
        steady > 0.5 * 4e6 && steady < 1.2 * 4e6,
        "steady bitrate {steady} against a 4 Mb/s path: {tx}"
    );
    let overshoot = f(&tx, "startup_overshoot");
    assert!(
        overshoot > 0.0 && overshoot < 3.0,
        "start-up overshoot {overshoot}: {tx}"
    );
    let complete = u(&rx, "frames_complete");
    assert!(complete * 10 >= 180 * 8, "most frames complete: {rx}");
}
