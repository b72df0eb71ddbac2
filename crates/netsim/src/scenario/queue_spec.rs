//! The `queue` table of a link: DropTail or RED with ns-2's parameters (docs/scenario.md,
//! "Queues"; docs/queues.md for the semantics).

use super::error::ScenarioError;
use super::fields::Fields;
use super::units::ByteSize;
use crate::queue::{
    AdaptiveRedConfig, QueueConfig, QueueConfigError, QueueLimit, QueueWeight, RedConfig,
};

const KINDS: &[&str] = &["droptail", "red"];
const PRESETS: &[&str] = &["ns2_35", "ns2_2000", "adaptive"];

/// Reads a `queue` table (public so that other front ends, such as the testbed's link
/// emulator, accept exactly the queues a scenario file does).
pub fn parse_queue(mut fields: Fields<'_>) -> Result<QueueConfig, ScenarioError> {
    let path = fields.path().to_string();
    let kind = fields
        .choice("kind", KINDS)?
        .ok_or_else(|| fields.missing("kind", r#"one of "droptail", "red""#))?;
    let config = match kind {
        "droptail" => parse_droptail(&mut fields)?,
        _ => parse_red(&mut fields)?,
    };
    fields.finish()?;
    config
        .validate()
        .map_err(|error| queue_error(&path, error))?;
    Ok(config)
}

/// `limit` (waiting packets), `bytes` (a byte buffer) or `ns2_limit` (ns-2's `limit_`, which
/// holds one packet less); at most one of them; ns-2's default `limit_` 50 when none is given.
fn parse_droptail(fields: &mut Fields<'_>) -> Result<QueueConfig, ScenarioError> {
    let packets: Option<u32> = fields.optional("limit")?;
    let bytes: Option<ByteSize> = fields.optional("bytes")?;
    let ns2: Option<u32> = fields.optional("ns2_limit")?;
    let limit = match (packets, bytes, ns2) {
        (None, None, None) => QueueLimit::ns2_droptail(50),
        (Some(n), None, None) => QueueLimit::Packets(n),
        (None, Some(b), None) => QueueLimit::Bytes(b.bytes),
        (None, None, Some(n)) => QueueLimit::ns2_droptail(n),
        _ => {
            return Err(ScenarioError::invalid_text(
                fields.path(),
                "at most one of limit, bytes, ns2_limit",
                "several",
            ))
        }
    };
    Ok(QueueConfig::DropTail { limit })
}

fn parse_red(fields: &mut Fields<'_>) -> Result<QueueConfig, ScenarioError> {
    let mut red = match fields.choice("preset", PRESETS)?.unwrap_or("ns2_35") {
        "ns2_2000" => RedConfig::ns2_2000(),
        "adaptive" => RedConfig::adaptive(),
        _ => RedConfig::ns2_35(),
    };
    if let Some(size) = fields.optional::<ByteSize>("mean_packet_size")? {
        let size = u32::try_from(size.bytes).map_err(|_| {
            ScenarioError::invalid_text(
                fields.child_path("mean_packet_size"),
                "a size below 4GB",
                size.to_string(),
            )
        })?;
        red = red.with_mean_packet_size(size);
    }
    if let Some(in_bytes) = fields.optional::<bool>("queue_in_bytes")? {
        let pkts = match red.buffer {
            QueueLimit::Packets(n) => n,
            QueueLimit::Bytes(b) => (b / u64::from(red.mean_packet_size_bytes.max(1))) as u32,
        };
        red.queue_in_bytes = in_bytes;
        red = red.with_ns2_limit(pkts);
    }
    if let Some(limit) = fields.optional::<u32>("limit")? {
        red = red.with_ns2_limit(limit);
    }
    if let Some(byte_mode) = fields.optional("byte_mode")? {
        red.byte_mode = byte_mode;
    }
    if let Some(min_th) = fields.optional("min_th")? {
        red.min_th_pkts = Some(min_th);
    }
    if let Some(max_th) = fields.optional("max_th")? {
        red.max_th_pkts = Some(max_th);
    }
    if let Some(target) = fields.optional("target_delay")? {
        red.target_delay = target;
    }
    if let Some(w_q) = fields.value("w_q") {
        red.queue_weight = match w_q {
            toml::Value::String(s) if s == "auto" => QueueWeight::AutoRtt,
            toml::Value::String(s) if s == "packet_time" => QueueWeight::AutoPacketTime,
            toml::Value::String(s) if s == "ten_packet_times" => QueueWeight::AutoTenPacketTimes,
            // ns-2's codes for the automatic weights (`q_weight_` 0, -1, -2).
            toml::Value::Integer(0) => QueueWeight::AutoPacketTime,
            toml::Value::Integer(-1) => QueueWeight::AutoRtt,
            toml::Value::Integer(-2) => QueueWeight::AutoTenPacketTimes,
            toml::Value::Float(w) => QueueWeight::Fixed(*w),
            toml::Value::Integer(w) => QueueWeight::Fixed(*w as f64),
            other => {
                return Err(ScenarioError::invalid(
                    fields.child_path("w_q"),
                    r#"a weight in (0, 1], one of "auto", "packet_time", "ten_packet_times", or ns-2's code 0, -1, -2"#,
                    other,
                ))
            }
        };
    }
    if let Some(max_p) = fields.optional("max_p")? {
        red.max_p = max_p;
    }
    if let Some(gentle) = fields.optional("gentle")? {
        red.gentle = gentle;
    }
    if let Some(wait) = fields.optional("wait")? {
        red.wait = wait;
    }
    if let Some(ecn) = fields.optional("ecn")? {
        red.ecn = ecn;
    }
    if let Some(use_mark_p) = fields.optional("use_mark_p")? {
        red.use_mark_p = use_mark_p;
    }
    if let Some(mark_p) = fields.optional("mark_p")? {
        red.mark_p = mark_p;
    }
    if let Some(adaptive) = fields.optional::<bool>("adaptive")? {
        red.adaptive = match (adaptive, red.adaptive) {
            (false, _) => None,
            (true, Some(existing)) => Some(existing),
            (true, None) => Some(AdaptiveRedConfig::default()),
        };
    }
    Ok(QueueConfig::Red(red))
}

/// A queue error as a scenario error at the scenario key that holds the offending value.
pub fn queue_error(path: &str, error: QueueConfigError) -> ScenarioError {
    let key = match &error {
        QueueConfigError::OutOfRange { field, .. } => match *field {
            "queue_weight" | "q_weight" => "w_q",
            "min_th_pkts" => "min_th",
            "max_th_pkts" => "max_th",
            "mean_packet_size_bytes" => "mean_packet_size",
            other => other,
        },
        QueueConfigError::ZeroMeanPacketSize => "mean_packet_size",
        QueueConfigError::Thresholds { .. } => "max_th",
        _ => "",
    };
    let at = if key.is_empty() {
        path.to_string()
    } else {
        format!("{path}.{key}")
    };
    match error {
        QueueConfigError::OutOfRange { value, rule, .. } => {
            ScenarioError::invalid_text(at, format!("a value {rule}"), value.to_string())
        }
        other => ScenarioError::invalid_text(at, "valid queue parameters", other.to_string()),
    }
}
