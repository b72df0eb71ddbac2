//! The keys of `kind = "web"` and `kind = "short_tcp"` flows (docs/scenario.md, "Web" and
//! "Short TCP flows"; docs/web.md for the models): the TCP keys of `kind = "tcp"`, the
//! distributions, and `load`, which sizes the arrival process to a target offered load.

use super::error::ScenarioError;
use super::fields::Fields;
use super::randvar_spec::{parse_randvar, Unit};
use super::tcp_spec::tcp_keys;
use super::units::BitRate;
use crate::agent::tcp::{TcpConfig, TcpVariant};
use crate::agent::web::{InterPageFrom, WebConfig};
use crate::agent::{AgentConfig, ShortTcpConfig};
use crate::randvar::RandomVariable;

const MODELS: &[&str] = &["ns2", "surge"];

/// `kind = "web"`: TCP keys (variant "reno", preset "ns2_2000": ns-2 WebTraf's `Agent/TCP/Reno`
/// and `TCPSink`), `model`, the four distributions, `pages`, `inter_page_from`, `load` or
/// `share` (of `bottleneck_bps`, the dumbbell bottleneck the responses cross).
pub(super) fn parse_web(
    fields: &mut Fields<'_>,
    bottleneck_bps: Option<u64>,
) -> Result<AgentConfig, ScenarioError> {
    let tcp = pool_tcp(fields, TcpVariant::Reno, "ns2_2000")?;
    let mut config = match fields.choice("model", MODELS)? {
        Some("surge") => WebConfig::surge(tcp),
        _ => WebConfig::ns2(tcp),
    };
    let packets = Unit::Packets(tcp.size_bytes);
    config.inter_page = randvar_or(fields, "inter_page", Unit::Time, config.inter_page)?;
    config.objects_per_page = randvar_or(
        fields,
        "objects_per_page",
        Unit::Count,
        config.objects_per_page,
    )?;
    config.inter_object = randvar_or(fields, "inter_object", Unit::Time, config.inter_object)?;
    config.object_size = randvar_or(fields, "object_size", packets, config.object_size)?;
    config.pages = fields.optional("pages")?;
    if config.pages == Some(0) {
        return Err(ScenarioError::invalid_text(
            fields.child_path("pages"),
            "at least 1 page",
            "0",
        ));
    }
    let load = flow_load(fields, bottleneck_bps)?;
    config.inter_page_from = match fields.choice("inter_page_from", InterPageFrom::NAMES)? {
        Some("end") => InterPageFrom::End,
        Some(_) => InterPageFrom::Start,
        None if load.is_some() => InterPageFrom::Start,
        None => InterPageFrom::End,
    };
    if let Some(load_bps) = load {
        let page_packets = config.mean_page_packets();
        if !page_packets.is_finite() {
            return Err(ScenarioError::invalid_text(
                fields.child_path("object_size"),
                "distributions of object size and objects per page with finite means when load is given",
                "an infinite mean",
            ));
        }
        let bits = page_packets * f64::from(tcp.data_packet_bytes()) * 8.0;
        config.inter_page = with_mean(fields, "inter_page", config.inter_page, bits / load_bps)?;
    }
    config.validate().map_err(|e| {
        ScenarioError::invalid_text(fields.path().to_string(), "a valid web session", e)
    })?;
    Ok(AgentConfig::Web(Box::new(config)))
}

/// `kind = "short_tcp"`: TCP keys (the defaults of `kind = "tcp"`; `size` is the packet size),
/// `packets` (per connection: uniform on [0, 20] rounded up), `interarrival` (exponential), and
/// `load` or `share` (of `bottleneck_bps`), of which at least one of `interarrival` and the load
/// is required.
pub(super) fn parse_short_tcp(
    fields: &mut Fields<'_>,
    bottleneck_bps: Option<u64>,
) -> Result<AgentConfig, ScenarioError> {
    let tcp = pool_tcp(fields, TcpVariant::Sack, "rfc")?;
    let size = randvar_or(
        fields,
        "packets",
        Unit::Packets(tcp.size_bytes),
        RandomVariable::Uniform {
            min: 0.0,
            max: 20.0,
        },
    )?;
    let given: Option<RandomVariable> = match fields.value("interarrival") {
        Some(value) => Some(parse_randvar(
            value,
            &fields.child_path("interarrival"),
            Unit::Time,
        )?),
        None => None,
    };
    let load = flow_load(fields, bottleneck_bps)?;
    let interarrival = match (given, load) {
        (rv, Some(load_bps)) => {
            let mean_size = size.mean_ceil();
            if !mean_size.is_finite() {
                return Err(ScenarioError::invalid_text(
                    fields.child_path("packets"),
                    "a distribution with a finite mean when load is given",
                    "an infinite mean",
                ));
            }
            let bits = mean_size * f64::from(tcp.data_packet_bytes()) * 8.0;
            let base = rv.unwrap_or(RandomVariable::Exponential { mean: 1.0 });
            with_mean(fields, "interarrival", base, bits / load_bps)?
        }
        (Some(rv), None) => rv,
        (None, None) => {
            return Err(fields.missing(
                "load",
                r#"a rate like "3Mbps" (or give share or interarrival)"#,
            ))
        }
    };
    let config = ShortTcpConfig {
        tcp,
        size,
        interarrival,
    };
    config.validate().map_err(|e| {
        ScenarioError::invalid_text(fields.path().to_string(), "a valid short-flow process", e)
    })?;
    Ok(AgentConfig::ShortTcp(Box::new(config)))
}

/// The TCP keys, refusing `max_packets` (each connection's size is drawn).
fn pool_tcp(
    fields: &mut Fields<'_>,
    variant: TcpVariant,
    preset: &'static str,
) -> Result<TcpConfig, ScenarioError> {
    if let Some(value) = fields.value("max_packets") {
        return Err(ScenarioError::invalid(
            fields.child_path("max_packets"),
            "no max_packets: each connection's size is drawn from its distribution",
            value,
        ));
    }
    tcp_keys(fields, variant, preset)
}

/// The variable at `key`, or `default`.
fn randvar_or(
    fields: &mut Fields<'_>,
    key: &'static str,
    unit: Unit,
    default: RandomVariable,
) -> Result<RandomVariable, ScenarioError> {
    match fields.value(key) {
        Some(value) => parse_randvar(value, &fields.child_path(key), unit),
        None => Ok(default),
    }
}

/// The offered load per flow in bit/s: `load` (the load of all `count` flows of the table
/// together), or `share`, the same as a fraction of the dumbbell bottleneck the data crosses
/// (`bottleneck_bps`; floyd2000 §4.2 sizes its background traffic this way).
fn flow_load(
    fields: &mut Fields<'_>,
    bottleneck_bps: Option<u64>,
) -> Result<Option<f64>, ScenarioError> {
    let load: Option<BitRate> = fields.optional("load")?;
    let share: Option<f64> = fields.optional("share")?;
    let total_bps = match (load, share) {
        (Some(_), Some(_)) => {
            return Err(ScenarioError::invalid_text(
                fields.child_path("share"),
                "either load or share, not both",
                "both",
            ))
        }
        (Some(load), None) => {
            if load.bps == 0 {
                return Err(ScenarioError::invalid_text(
                    fields.child_path("load"),
                    "a rate above 0",
                    "0bps",
                ));
            }
            load.bps as f64
        }
        (None, Some(share)) => {
            if !(share.is_finite() && share > 0.0) {
                return Err(ScenarioError::invalid_text(
                    fields.child_path("share"),
                    "a fraction of the bottleneck above 0",
                    share.to_string(),
                ));
            }
            let Some(rate) = bottleneck_bps else {
                return Err(ScenarioError::invalid_text(
                    fields.child_path("share"),
                    "share only on a dumbbell topology (give load on others)",
                    share.to_string(),
                ));
            };
            share * rate as f64
        }
        (None, None) => return Ok(None),
    };
    let count: usize = fields.or("count", 1)?;
    Ok(Some(total_bps / count.max(1) as f64))
}

/// `rv` scaled to mean `mean` seconds (the load sizing); the error names `key`.
fn with_mean(
    fields: &mut Fields<'_>,
    key: &'static str,
    rv: RandomVariable,
    mean: f64,
) -> Result<RandomVariable, ScenarioError> {
    let current = rv.mean();
    if !(current > 0.0 && current.is_finite() && mean.is_finite() && mean > 0.0) {
        return Err(ScenarioError::invalid_text(
            fields.child_path(key),
            "a distribution with a finite mean above 0, which load rescales",
            format!("mean {current}"),
        ));
    }
    Ok(rv.scaled(mean / current))
}
