//! The relay's configuration: a TOML document read with netsim's scenario readers, so rates,
//! durations and queue tables are written exactly as in a scenario file (docs/scenario.md) and
//! every error names the key it is about.
//!
//! ```toml
//! tun_a = "tb1234a"          # the TUN device facing side a (created by the relay)
//! tun_b = "tb1234b"
//! seed = 1                   # Bernoulli loss and RED draw from streams of this seed
//! max_duration = "10min"     # the relay stops by itself after this long
//! log = "/tmp/relay.log"     # optional per-packet log (crate::log), capped at max_log_bytes
//! max_log_bytes = 268435456
//! tick = "0s"                # wake-ups rounded up to multiples of this (0: exact deadlines)
//! slack = "0s"               # a delivery may wait this long to leave with later ones
//! [forward]                  # a -> b
//! rate = "10Mbps"
//! delay = "25ms"
//! loss = 0.0
//! queue = { kind = "droptail", limit = 50 }
//! [reverse]                  # b -> a; keys left out are taken from [forward]
//! ```

use std::path::PathBuf;
use std::time::Duration;

use netsim::queue::{Queue, QueueConfig};
use netsim::scenario::{parse_document, parse_queue, queue_error, BitRate, Fields, ScenarioError};

/// The largest number of bytes the propagation delay line of one direction may hold
/// (rate·delay): the emulator keeps every packet "in flight" in memory.
pub const MAX_DELAY_LINE_BYTES: u64 = 256 << 20;

/// The longest a relay may be told to run.
pub const MAX_DURATION: Duration = Duration::from_secs(7 * 24 * 3600);

/// Linux interface names hold at most 15 bytes (IFNAMSIZ - 1).
const MAX_IFNAME: usize = 15;

/// One direction of the emulated link, the Dummynet "pipe": loss on arrival, a queue, a
/// transmitter at `rate` and a propagation `delay` (as a netsim link, docs/scenario.md).
#[derive(Clone, Debug, PartialEq)]
pub struct DirectionConfig {
    /// The transmitter's rate in bits per second (> 0).
    pub rate_bps: u64,
    /// One-way propagation delay added after transmission.
    pub delay: Duration,
    /// Probability in [0, 1) that an arriving packet is dropped before the queue (Bernoulli).
    pub loss: f64,
    /// The queue discipline, as a scenario file's `queue` table gives it.
    pub queue: QueueConfig,
}

/// Everything the relay needs.
#[derive(Clone, Debug, PartialEq)]
pub struct RelayConfig {
    /// Name of the TUN device of side a.
    pub tun_a: String,
    /// Name of the TUN device of side b.
    pub tun_b: String,
    /// Seed of the loss and queue random streams (same seed, same drop decisions for the same
    /// arrival sequence).
    pub seed: u64,
    /// The relay stops by itself after this long (a bound, so a forgotten relay ends).
    pub max_duration: Duration,
    /// Where to write the per-packet log, if anywhere.
    pub log: Option<PathBuf>,
    /// The log's size cap in bytes; records beyond it are counted, not written.
    pub max_log_bytes: u64,
    /// The relay's clock granularity: timer deadlines are rounded up to a multiple of it, so
    /// deliveries due within one tick leave together (fewer wake-ups, up to one tick late), as
    /// Dummynet's kernel ticks do. Zero (the default) wakes at every exact deadline.
    pub tick: Duration,
    /// How late a delivery may be made so that it leaves in one wake-up with deliveries due
    /// after it (docs/testbed.md, "slack"): the relay wakes at the last deadline within `slack`
    /// of the first one due, never later, and a delivery with none due within `slack` after
    /// it is exact. Zero (the default) wakes at every exact deadline.
    pub slack: Duration,
    /// Side a to side b.
    pub forward: DirectionConfig,
    /// Side b to side a.
    pub reverse: DirectionConfig,
}

impl RelayConfig {
    /// Reads and checks a configuration document; errors name the offending key.
    pub fn from_toml_str(text: &str) -> Result<RelayConfig, ScenarioError> {
        let table = parse_document(text)?;
        let mut root = Fields::new(&table, "");
        let tun_a = ifname(&mut root, "tun_a")?;
        let tun_b = ifname(&mut root, "tun_b")?;
        if tun_a == tun_b {
            return Err(ScenarioError::invalid_text(
                "tun_b",
                "a name different from tun_a",
                format!("{tun_b:?}"),
            ));
        }
        let seed: u64 = root.or("seed", 1)?;
        let max_duration: Duration = root.or("max_duration", Duration::from_secs(3600))?;
        if max_duration.is_zero() || max_duration > MAX_DURATION {
            return Err(ScenarioError::invalid_text(
                "max_duration",
                "a duration above 0 and at most 7 days",
                format!("{max_duration:?}"),
            ));
        }
        let log = match root.value("log") {
            None => None,
            Some(toml::Value::String(path)) if !path.is_empty() => Some(PathBuf::from(path)),
            Some(other) => {
                return Err(ScenarioError::invalid("log", "a file path", other));
            }
        };
        let max_log_bytes: u64 = root.or("max_log_bytes", 256 << 20)?;
        let tick: Duration = root.or("tick", Duration::ZERO)?;
        if tick > Duration::from_millis(10) {
            return Err(ScenarioError::invalid_text(
                "tick",
                "a duration of at most 10ms",
                format!("{tick:?}"),
            ));
        }
        let slack: Duration = root.or("slack", Duration::ZERO)?;
        if slack > Duration::from_millis(10) {
            return Err(ScenarioError::invalid_text(
                "slack",
                "a duration of at most 10ms",
                format!("{slack:?}"),
            ));
        }
        let forward_fields = root
            .table("forward")?
            .ok_or_else(|| root.missing("forward", "a table with rate and delay"))?;
        let forward = direction(forward_fields, None)?;
        let reverse = match root.table("reverse")? {
            Some(fields) => direction(fields, Some(&forward))?,
            None => forward.clone(),
        };
        root.finish()?;
        Ok(RelayConfig {
            tun_a,
            tun_b,
            seed,
            max_duration,
            log,
            max_log_bytes,
            tick,
            slack,
            forward,
            reverse,
        })
    }
}

/// A TUN device name: 1 to 15 bytes of ASCII letters, digits, `-` and `_`.
fn ifname(root: &mut Fields<'_>, key: &'static str) -> Result<String, ScenarioError> {
    let expected = "an interface name of 1 to 15 letters, digits, - or _";
    match root.value(key) {
        None => Err(root.missing(key, expected)),
        Some(toml::Value::String(name))
            if !name.is_empty()
                && name.len() <= MAX_IFNAME
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_') =>
        {
            Ok(name.clone())
        }
        Some(other) => Err(ScenarioError::invalid(key, expected, other)),
    }
}

/// Reads a `[forward]` or `[reverse]` table; `base` supplies the keys a reverse table leaves out.
fn direction(
    mut fields: Fields<'_>,
    base: Option<&DirectionConfig>,
) -> Result<DirectionConfig, ScenarioError> {
    let path = fields.path().to_string();
    let rate_bps = match (fields.optional::<BitRate>("rate")?, base) {
        (Some(rate), _) => rate.bps,
        (None, Some(base)) => base.rate_bps,
        (None, None) => return Err(fields.missing("rate", "a rate like \"10Mbps\"")),
    };
    if rate_bps == 0 {
        return Err(ScenarioError::invalid_text(
            fields.child_path("rate"),
            "a rate above 0 bps",
            "0bps",
        ));
    }
    let delay = match (fields.optional::<Duration>("delay")?, base) {
        (Some(delay), _) => delay,
        (None, Some(base)) => base.delay,
        (None, None) => return Err(fields.missing("delay", "a duration like \"25ms\"")),
    };
    let loss = match (fields.optional::<f64>("loss")?, base) {
        (Some(loss), _) => loss,
        (None, Some(base)) => base.loss,
        (None, None) => 0.0,
    };
    if !(0.0..1.0).contains(&loss) {
        return Err(ScenarioError::invalid_text(
            fields.child_path("loss"),
            "a probability in [0, 1)",
            loss.to_string(),
        ));
    }
    let queue = match (fields.table("queue")?, base) {
        (Some(table), _) => parse_queue(table)?,
        (None, Some(base)) => base.queue.clone(),
        (None, None) => QueueConfig::default(),
    };
    fields.finish()?;
    // Link-dependent queue checks (RED's automatic parameters need the rate), as a scenario's.
    Queue::try_new(&queue, rate_bps, delay)
        .map_err(|e| queue_error(&format!("{path}.queue"), e))?;
    let in_flight = u128::from(rate_bps) * delay.as_nanos() / 8_000_000_000;
    if in_flight > u128::from(MAX_DELAY_LINE_BYTES) {
        return Err(ScenarioError::invalid_text(
            path,
            format!(
                "rate x delay of at most {MAX_DELAY_LINE_BYTES} bytes (the packets in flight are \
                 held in memory)"
            ),
            format!("{in_flight} bytes"),
        ));
    }
    Ok(DirectionConfig {
        rate_bps,
        delay,
        loss,
        queue,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use netsim::queue::QueueLimit;

    const BASE: &str =
        "tun_a = \"ta\"\ntun_b = \"tb\"\n[forward]\nrate = \"10Mbps\"\ndelay = \"25ms\"\n";

    #[test]
    fn reverse_defaults_to_forward_key_by_key() {
        let text = format!(
            "{BASE}loss = 0.01\nqueue = {{ kind = \"droptail\", limit = 20 }}\n[reverse]\nloss = 0.0\n"
        );
        let config = RelayConfig::from_toml_str(&text).unwrap();
        assert_eq!(config.forward.rate_bps, 10_000_000);
        assert_eq!(config.forward.delay, Duration::from_millis(25));
        assert_eq!(
            config.forward.queue,
            QueueConfig::DropTail {
                limit: QueueLimit::Packets(20)
            }
        );
        assert_eq!(config.reverse.loss, 0.0);
        assert_eq!(config.reverse.queue, config.forward.queue);
        assert_eq!(config.seed, 1);
        assert_eq!(config.log, None);
        assert_eq!(
            (config.tick, config.slack),
            (Duration::ZERO, Duration::ZERO)
        );
        let slack = RelayConfig::from_toml_str(&format!("slack = \"50us\"\n{BASE}")).unwrap();
        assert_eq!(slack.slack, Duration::from_micros(50));
    }

    #[test]
    fn errors_name_the_key() {
        let cases = [
            (format!("{BASE}loss = 1.5\n"), "forward.loss"),
            (
                format!("{BASE}queue = {{ kind = \"fifo\" }}\n"),
                "forward.queue.kind",
            ),
            (
                format!("{BASE}rate = \"0bps\"\n").replace("rate = \"10Mbps\"\n", ""),
                "forward.rate",
            ),
            (
                BASE.replace("\"ta\"", "\"a-name-that-is-too-long\""),
                "tun_a",
            ),
            (BASE.replace("\"tb\"", "\"ta\""), "tun_b"),
            (
                format!("{BASE}[reverse]\ndelya = \"1ms\"\n"),
                "reverse.delya",
            ),
            (format!("max_duration = \"0s\"\n{BASE}"), "max_duration"),
            (format!("slack = \"11ms\"\n{BASE}"), "slack"),
            (
                format!("{BASE}queue = {{ kind = \"red\", min_th = 20.0, max_th = 10.0 }}\n"),
                "forward.queue.max_th",
            ),
        ];
        for (text, path) in cases {
            let err = RelayConfig::from_toml_str(&text).unwrap_err();
            assert_eq!(err.path(), Some(path), "{text}: {err}");
        }
    }

    #[test]
    fn huge_delay_line_is_refused() {
        let text = BASE
            .replace("\"25ms\"", "\"100s\"")
            .replace("10Mbps", "10Gbps");
        let err = RelayConfig::from_toml_str(&text).unwrap_err();
        assert_eq!(err.path(), Some("forward"));
    }
}
