//! The keys of `kind = "tcp"` and `kind = "gaimd"` flows (docs/scenario.md, "TCP" and "GAIMD";
//! docs/tcp.md for the protocols): a preset, then any knob of [`TcpConfig`] by its own key.

use std::time::Duration;

use super::error::{describe, ScenarioError};
use super::fields::Fields;
use super::flow_spec::packet_size;
use crate::agent::tcp::controller::watchdog::DEFAULT_LIMIT;
use crate::agent::tcp::controller::{resolve_controller, ControlledTcpConfig};
use crate::agent::tcp::{
    AckCounting, AckPolicy, DecreaseRule, GaimdConfig, GaimdRule, RtoFormula, SackRecovery,
    SsthreshBase, TcpConfig, TcpConfigError, TcpVariant,
};
use crate::agent::AgentConfig;

const ACK_POLICIES: &[&str] = &["immediate", "delayed"];
const DECREASE_RULES: &[&str] = &["ns2", "paper"];

/// `kind = "tcp"`: `variant` (default "sack"), `preset` (default "rfc"), then overrides; with
/// `controller`, a sender whose window that controller decides (docs/controllers.md), each of
/// its callbacks bounded to `controller_limit` of wall time.
pub(super) fn parse_tcp(fields: &mut Fields<'_>) -> Result<AgentConfig, ScenarioError> {
    let controller: Option<String> = fields.optional("controller")?;
    let limit: Option<Duration> = fields.optional("controller_limit")?;
    let tcp = tcp_keys(fields, TcpVariant::Sack, "rfc")?;
    let Some(name) = controller else {
        if let Some(limit) = limit {
            return Err(ScenarioError::invalid_text(
                fields.child_path("controller_limit"),
                "a `controller` on this flow (controller_limit bounds its callbacks)",
                format!("{:?}", super::units::format_duration(limit)),
            ));
        }
        return Ok(AgentConfig::Tcp(tcp));
    };
    let limit = limit.unwrap_or(DEFAULT_LIMIT);
    let controller = resolve_controller(&name, limit).map_err(|reason| {
        ScenarioError::invalid_text(fields.child_path("controller"), reason, format!("{name:?}"))
    })?;
    tcp.validate_controlled()
        .map_err(|error| validation_error(fields, error))?;
    Ok(AgentConfig::ControlledTcp(Box::new(ControlledTcpConfig {
        tcp,
        controller,
    })))
}

/// Every key of `kind = "tcp"`: `variant` and `preset` (with these defaults), then the
/// overrides; also the TCP of the kinds built on many TCP connections (`web`, `short_tcp`).
pub(super) fn tcp_keys(
    fields: &mut Fields<'_>,
    default_variant: TcpVariant,
    default_preset: &'static str,
) -> Result<TcpConfig, ScenarioError> {
    let variant = fields
        .choice("variant", TcpVariant::NAMES)?
        .and_then(TcpVariant::from_name)
        .unwrap_or(default_variant);
    let preset = fields
        .choice("preset", TcpConfig::PRESETS)?
        .unwrap_or(default_preset);
    let base = TcpConfig::preset(preset, variant).unwrap_or_else(|| TcpConfig::rfc(variant));
    let mut config = parse_common(fields, base)?;
    config.increase_num = fields.or("increase", config.increase_num)?;
    config.decrease_num = fields.or("decrease", config.decrease_num)?;
    if let Some(rule) = fields.choice("decrease_rule", DECREASE_RULES)? {
        config.decrease_rule = if rule == "paper" {
            DecreaseRule::Paper
        } else {
            DecreaseRule::Ns2
        };
    }
    if let Some(name) = fields.choice("sack_recovery", SackRecovery::NAMES)? {
        config.sack_recovery = if name == "rfc6675" {
            SackRecovery::Rfc6675
        } else {
            SackRecovery::Sack1
        };
    }
    config.rack = fields.or("rack", config.rack)?;
    if let Some(name) = fields.choice("rto_formula", RtoFormula::NAMES)? {
        config.rto_formula = if name == "linux" {
            RtoFormula::Linux
        } else {
            RtoFormula::Rfc6298
        };
    }
    config.tlp = fields.or("tlp", config.tlp)?;
    config.prr = fields.or("prr", config.prr)?;
    config.sacked_out_of_flight = fields.or("sacked_out_of_flight", config.sacked_out_of_flight)?;
    config.ecn = fields.or("ecn", config.ecn)?;
    if let Some(name) = fields.choice("ssthresh_base", SsthreshBase::NAMES)? {
        config.ssthresh_base = if name == "cwnd" {
            SsthreshBase::Cwnd
        } else {
            SsthreshBase::FlightSize
        };
    }
    let blocks: u32 = fields.or("max_sack_blocks", u32::from(config.max_sack_blocks))?;
    config.max_sack_blocks = blocks.min(255) as u8;
    config.sack_block_bytes = fields.or("sack_block_size", config.sack_block_bytes)?;
    config.partial_window_deflation =
        fields.or("partial_window_deflation", config.partial_window_deflation)?;
    config.newreno_impatient = fields.or("newreno_impatient", config.newreno_impatient)?;
    config.vegas.alpha = fields.or("vegas_alpha", config.vegas.alpha)?;
    config.vegas.beta = fields.or("vegas_beta", config.vegas.beta)?;
    config.vegas.gamma = fields.or("vegas_gamma", config.vegas.gamma)?;
    config.cubic.hystart = fields.or("cubic_hystart", config.cubic.hystart)?;
    config.cubic.hystart_rounds_any_cwnd = fields.or(
        "cubic_hystart_rounds_any_cwnd",
        config.cubic.hystart_rounds_any_cwnd,
    )?;
    config.cubic.fast_convergence =
        fields.or("cubic_fast_convergence", config.cubic.fast_convergence)?;
    config.cubic.tcp_friendliness =
        fields.or("cubic_friendliness", config.cubic.tcp_friendliness)?;
    config.cubic.hz = fields.or("cubic_hz", config.cubic.hz)?;
    check(fields, &config)?;
    Ok(config)
}

/// `kind = "gaimd"`: `alpha` (0.31), `beta` (0.875), `rule` ("ns2"), `preset` ("ns2_2000"),
/// then the overrides every TCP flow has.
pub(super) fn parse_gaimd(fields: &mut Fields<'_>) -> Result<AgentConfig, ScenarioError> {
    let defaults = GaimdConfig::yang2001();
    let alpha: f64 = fields.or("alpha", defaults.alpha)?;
    let beta: f64 = fields.or("beta", defaults.beta)?;
    let rule = match fields.choice("rule", GaimdRule::NAMES)? {
        Some("paper") => GaimdRule::Paper,
        _ => GaimdRule::Ns2,
    };
    let recovery = fields
        .choice("recovery", GaimdConfig::RECOVERIES)?
        .and_then(TcpVariant::from_name)
        .unwrap_or(defaults.recovery);
    let preset = fields
        .choice("preset", TcpConfig::PRESETS)?
        .unwrap_or("ns2_2000");
    let base = TcpConfig::preset(preset, recovery).unwrap_or_else(|| TcpConfig::ns2_2000(recovery));
    let base = parse_common(fields, base)?;
    let gaimd = GaimdConfig {
        alpha,
        beta,
        rule,
        recovery,
        base,
    };
    if let Err(mut error) = gaimd.tcp().validate() {
        // The increase and decrease are alpha and beta here.
        error.field = match error.field {
            "increase" => "alpha",
            "decrease" => "beta",
            other => other,
        };
        return Err(validation_error(fields, error));
    }
    Ok(AgentConfig::Gaimd(gaimd))
}

/// The knobs every TCP-family flow has.
fn parse_common(fields: &mut Fields<'_>, base: TcpConfig) -> Result<TcpConfig, ScenarioError> {
    let mut c = base;
    c.size_bytes = packet_size(fields, "size", c.size_bytes)?;
    c.window = fields.or("window", c.window)?;
    c.initial_window = fields.or("initial_window", c.initial_window)?;
    c.syn = fields.or("syn", c.syn)?;
    c.delay_growth = fields.or("delay_growth", c.delay_growth)?;
    c.tick = fields.or("tick", c.tick)?;
    c.min_rto = fields.or("min_rto", c.min_rto)?;
    c.max_rto = fields.or("max_rto", c.max_rto)?;
    c.initial_rto = fields.or("initial_rto", c.initial_rto)?;
    c.rfc2988 = fields.or("rfc2988", c.rfc2988)?;
    c.use_headers = fields.or("use_headers", c.use_headers)?;
    c.header_bytes = fields.or("header_size", c.header_bytes)?;
    c.limited_transmit = fields.or("limited_transmit", c.limited_transmit)?;
    c.precision_reduce = fields.or("precision_reduce", c.precision_reduce)?;
    c.overhead = fields.or("overhead", c.overhead)?;
    c.max_cwnd = fields.or("max_cwnd", c.max_cwnd)?;
    c.numdupacks = fields.or("numdupacks", c.numdupacks)?;
    c.ack_bytes = fields.or("ack_size", c.ack_bytes)?;
    let default_interval = match c.ack {
        AckPolicy::Delayed { interval } => interval,
        AckPolicy::Immediate => Duration::from_millis(100),
    };
    let interval: Duration = fields.or("ack_interval", default_interval)?;
    c.ack = match fields.choice("ack", ACK_POLICIES)? {
        Some("immediate") => AckPolicy::Immediate,
        Some(_) => AckPolicy::Delayed { interval },
        None => match c.ack {
            AckPolicy::Immediate => AckPolicy::Immediate,
            AckPolicy::Delayed { .. } => AckPolicy::Delayed { interval },
        },
    };
    c.quick_acks = fields.or("quick_acks", c.quick_acks)?;
    c.rcv_window_growth = fields.or("rcv_window_growth", c.rcv_window_growth)?;
    c.sack_compression = fields.or("sack_compression", c.sack_compression)?;
    if let Some(name) = fields.choice("ack_counting", AckCounting::NAMES)? {
        c.ack_counting = if name == "segments" {
            AckCounting::Segments
        } else {
            AckCounting::PerAck
        };
    }
    c.max_packets = match fields.optional::<u64>("max_packets")? {
        Some(n) => Some(n),
        None => c.max_packets,
    };
    Ok(c)
}

/// Refuses a configuration outside the documented ranges, naming the key.
fn check(fields: &mut Fields<'_>, config: &TcpConfig) -> Result<(), ScenarioError> {
    config
        .validate()
        .map_err(|error| validation_error(fields, error))
}

/// A [`TcpConfigError`] as an error at its key, showing the value given (or saying that the
/// preset's value was kept).
fn validation_error(fields: &mut Fields<'_>, error: TcpConfigError) -> ScenarioError {
    let found = fields
        .value(error.field)
        .map_or_else(|| "the preset's value".to_string(), describe);
    ScenarioError::invalid_text(fields.child_path(error.field), error.reason, found)
}
