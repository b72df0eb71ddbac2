//! What a sender or receiver session is told, the limits every option is checked against, and
//! the error that names an option out of range.

use std::fmt;
use std::time::Duration;

use tfrc::wire::DATA_HEADER_LEN;
use tfrc::{DataLimitedRule, TfrcConfig};

/// The largest UDP payload over IPv4 (65535 - 8 - 20): the most a data packet may hold.
pub const MAX_DATAGRAM: usize = 65_507;
/// The most payloads the application queue may be told to hold.
pub const MAX_QUEUE_PACKETS: usize = 1 << 16;
/// The most bytes the application queue may hold when full (queue_packets × s): 64 MiB.
pub const MAX_QUEUE_BYTES: usize = 64 << 20;
/// The most send times [`SenderOptions::send_log`] may keep (32 MiB of them).
pub const MAX_SEND_LOG: usize = 1 << 22;
/// The longest peer idle timeout (24 hours).
pub const MAX_PEER_IDLE_TIMEOUT: Duration = Duration::from_secs(24 * 3600);
/// The shortest and longest statistics interval.
pub const STATS_INTERVAL_RANGE: (Duration, Duration) =
    (Duration::from_millis(10), Duration::from_secs(3600));
/// The default cap on the pacing timer's early wake-up (see [`SenderOptions::spin`]).
pub const DEFAULT_SPIN: Duration = Duration::from_micros(50);
/// The longest busy-wait before a deadline.
pub const MAX_SPIN: Duration = Duration::from_millis(1);
/// The back-off floor t_mbi the transport uses when a preset has none (RFC 5348 §4.4: the
/// nofeedback timer never takes X below s/t_mbi, 64 s). ns-2's `Agent/TFRC` (the floyd2000
/// preset) has no floor; a real sender without one would wait ever longer for a receiver that
/// comes back, so the transport always keeps the RFC's.
pub const DEFAULT_T_MBI: Duration = Duration::from_secs(64);

/// Where a sender's data comes from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Source {
    /// Always data to send, full-size packets of zeros: a bulk transfer that sends at exactly the
    /// allowed rate (for tests and measurements).
    Greedy,
    /// Payloads the application queues through [`crate::SenderHandle::send`].
    Application,
    /// A built-in constant-rate application (an encoder at a fixed bit rate) that queues a
    /// full-size packet each time it has produced one, bytes per second counting whole
    /// datagrams.
    ConstantRate {
        /// The application's rate in bytes per second.
        bytes_per_s: f64,
    },
}

/// How a [`crate::UdpSender`] runs.
#[derive(Clone, Debug)]
pub struct SenderOptions {
    /// The TFRC configuration; its `segment_size_bytes` is the datagram size s (header
    /// included), between [`DATA_HEADER_LEN`] + 1 and [`MAX_DATAGRAM`].
    pub config: TfrcConfig,
    /// Where the data comes from.
    pub source: Source,
    /// The application queue's bound, in payloads; a payload queued while it is full is
    /// refused and counted as dropped. At most [`MAX_QUEUE_PACKETS`] and [`MAX_QUEUE_BYTES`] in all.
    pub queue_packets: usize,
    /// The period of the per-interval statistics (1 s by default).
    pub stats_interval: Duration,
    /// The most the pacing timer is armed early to make up for its measured wake-up lateness,
    /// the rest busy-waited ([`crate::waiter::Waiter`]); 50 µs by default, 0 to never spin.
    pub spin: Duration,
    /// How many send times to keep for [`crate::UdpSender::send_times`] (0: none), for pacing
    /// measurements.
    pub send_log: usize,
    /// The seed of the gap dither's random source, used when the configuration's
    /// `dither_fraction` is above 0 (0 by default).
    pub dither_seed: u64,
    /// The session identifier on every data packet (docs/wire-format.md); `None` (the default)
    /// draws an unpredictable one, which is what keeps off-path packets out. Set it only for
    /// tests and reproducible captures.
    pub session: Option<u64>,
}

impl SenderOptions {
    /// Defaults for `config`: application source, a 256-payload queue, 1 s statistics, at most
    /// 50 µs of spin (docs/transport.md, "Pacing", for what it buys and costs).
    ///
    /// The configuration's data-limited rule is set to [`DataLimitedRule::RecentOnly`]: on a
    /// real host RFC 5348's rule keeps one inflated receive rate (a start-up backlog, a batch
    /// read after a stall) for a whole data-limited session (docs/transport.md, "Real-host
    /// rules"). Set `options.config.data_limited` afterwards to choose otherwise.
    pub fn new(mut config: TfrcConfig) -> SenderOptions {
        config.data_limited = DataLimitedRule::RecentOnly;
        SenderOptions {
            config,
            source: Source::Application,
            queue_packets: 256,
            stats_interval: Duration::from_secs(1),
            spin: DEFAULT_SPIN,
            send_log: 0,
            dither_seed: 0,
            session: None,
        }
    }

    /// Checks every option, and the TFRC configuration, naming the first one out of range.
    pub(crate) fn validate(&self) -> Result<(), OptionError> {
        check_config(&self.config)?;
        let size = self.config.segment_size_bytes as usize;
        if size <= DATA_HEADER_LEN || size > MAX_DATAGRAM {
            return Err(OptionError::new(
                "segment_size_bytes",
                format!("{} to {MAX_DATAGRAM} bytes", DATA_HEADER_LEN + 1),
                size.to_string(),
            ));
        }
        if let Source::ConstantRate { bytes_per_s } = self.source {
            if !(bytes_per_s.is_finite() && bytes_per_s > 0.0 && bytes_per_s <= 1.25e10) {
                return Err(OptionError::new(
                    "app_rate",
                    "a positive rate up to 100 Gb/s".into(),
                    format!("{bytes_per_s} bytes/s"),
                ));
            }
        }
        if self.queue_packets == 0 || self.queue_packets > MAX_QUEUE_PACKETS {
            return Err(OptionError::new(
                "queue_packets",
                format!("1 to {MAX_QUEUE_PACKETS}"),
                self.queue_packets.to_string(),
            ));
        }
        if self.queue_packets.saturating_mul(size) > MAX_QUEUE_BYTES {
            return Err(OptionError::new(
                "queue_packets",
                format!(
                    "at most {} payloads of {size} bytes (64 MiB)",
                    MAX_QUEUE_BYTES / size
                ),
                self.queue_packets.to_string(),
            ));
        }
        check_interval(self.stats_interval)?;
        if self.spin > MAX_SPIN {
            return Err(OptionError::new(
                "spin",
                format!("at most {MAX_SPIN:?}"),
                format!("{:?}", self.spin),
            ));
        }
        if self.send_log > MAX_SEND_LOG {
            return Err(OptionError::new(
                "send_log",
                format!("at most {MAX_SEND_LOG} entries"),
                self.send_log.to_string(),
            ));
        }
        Ok(())
    }
}

/// How a [`crate::UdpReceiver`] runs.
#[derive(Clone, Debug)]
pub struct ReceiverOptions {
    /// The TFRC configuration (the receiver's loss-history settings).
    pub config: TfrcConfig,
    /// The period of the per-interval statistics (1 s by default).
    pub stats_interval: Duration,
    /// The most the current session must have been silent before data of another session
    /// (a new sender, or the same one restarted) opens a new one (5 s by default); the rule is
    /// max(4R, 250 ms) capped at this ([`crate::receiver::takeover_silence`]). Until then such
    /// data is counted (`other_session`) and dropped.
    pub peer_idle_timeout: Duration,
}

impl ReceiverOptions {
    /// Defaults for `config`: 1 s statistics, a 5 s peer idle timeout.
    pub fn new(config: TfrcConfig) -> ReceiverOptions {
        ReceiverOptions {
            config,
            stats_interval: Duration::from_secs(1),
            peer_idle_timeout: Duration::from_secs(5),
        }
    }

    pub(crate) fn validate(&self) -> Result<(), OptionError> {
        check_config(&self.config)?;
        check_interval(self.stats_interval)?;
        if self.peer_idle_timeout.is_zero() || self.peer_idle_timeout > MAX_PEER_IDLE_TIMEOUT {
            return Err(OptionError::new(
                "peer_idle_timeout",
                "a positive duration up to 24 h".into(),
                format!("{:?}", self.peer_idle_timeout),
            ));
        }
        Ok(())
    }
}

fn check_config(config: &TfrcConfig) -> Result<(), OptionError> {
    config.validate().map_err(|err| {
        OptionError::new(
            "config",
            "a valid TFRC configuration".into(),
            err.to_string(),
        )
    })
}

fn check_interval(interval: Duration) -> Result<(), OptionError> {
    let (lo, hi) = STATS_INTERVAL_RANGE;
    if interval < lo || interval > hi {
        return Err(OptionError::new(
            "stats_interval",
            format!("{lo:?} to {hi:?}"),
            format!("{interval:?}"),
        ));
    }
    Ok(())
}

/// An option out of range: which one, what it must be, what it was.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OptionError {
    /// The option's name, as the field of [`SenderOptions`] / [`ReceiverOptions`] (or `config`).
    pub field: &'static str,
    /// What it must be.
    pub expected: String,
    /// What it was.
    pub found: String,
}

impl OptionError {
    pub(crate) fn new(field: &'static str, expected: String, found: String) -> OptionError {
        OptionError {
            field,
            expected,
            found,
        }
    }
}

impl fmt::Display for OptionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: expected {}, found {}",
            self.field, self.expected, self.found
        )
    }
}

impl std::error::Error for OptionError {}

/// A configuration the TFRC crate refused, as an option error naming `config`.
pub(crate) fn config_error(err: &tfrc::ConfigError) -> crate::TransportError {
    OptionError::new(
        "config",
        "a valid TFRC configuration".into(),
        err.to_string(),
    )
    .into()
}

/// `config` with the RFC 5348 §4.4 back-off floor in place (see [`DEFAULT_T_MBI`]).
pub(crate) fn with_backoff_floor(mut config: TfrcConfig) -> TfrcConfig {
    if config.max_backoff_interval.is_none() {
        config.max_backoff_interval = Some(DEFAULT_T_MBI);
    }
    config
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_option() {
        let mut options = SenderOptions::new(TfrcConfig::rfc5348());
        assert!(options.validate().is_ok());
        options.queue_packets = 0;
        assert_eq!(options.validate().unwrap_err().field, "queue_packets");
        options.queue_packets = 8;
        options.config.segment_size_bytes = 10;
        let err = options.validate().unwrap_err();
        assert_eq!(err.field, "segment_size_bytes");
        assert_eq!(
            err.to_string(),
            "segment_size_bytes: expected 35 to 65507 bytes, found 10"
        );
        options.config.segment_size_bytes = 65_000;
        options.queue_packets = 2048;
        let err = options.validate().unwrap_err();
        assert_eq!(err.field, "queue_packets");
        assert!(err.expected.contains("at most 1032 payloads"), "{err}");
        options.config.segment_size_bytes = 1000;
        options.source = Source::ConstantRate {
            bytes_per_s: f64::NAN,
        };
        assert_eq!(options.validate().unwrap_err().field, "app_rate");
        let mut options = ReceiverOptions::new(TfrcConfig::rfc5348());
        options.stats_interval = Duration::ZERO;
        assert_eq!(options.validate().unwrap_err().field, "stats_interval");
    }

    #[test]
    fn the_floor_is_added_only_when_missing() {
        let floyd = with_backoff_floor(TfrcConfig::floyd2000());
        assert_eq!(floyd.max_backoff_interval, Some(DEFAULT_T_MBI));
        let mut rfc = TfrcConfig::rfc5348();
        rfc.max_backoff_interval = Some(Duration::from_secs(10));
        assert_eq!(
            with_backoff_floor(rfc).max_backoff_interval,
            Some(Duration::from_secs(10))
        );
    }
}
