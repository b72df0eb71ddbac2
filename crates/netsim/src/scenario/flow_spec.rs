//! The `[[flows]]` tables: which protocol runs between which nodes, and when (docs/scenario.md,
//! "Flows").

use std::time::Duration;

use super::error::ScenarioError;
use super::fields::Fields;
use super::loss_spec::quoted;
use super::units::{BitRate, ByteSize};
use crate::agent::{AgentConfig, CbrConfig};
use crate::dist::DurationDist;
use crate::sim::OnOff;

const KINDS: &[&str] = &[
    "cbr",
    "tcp",
    "gaimd",
    "tfrc",
    "rap",
    "pareto",
    "exponential",
    "ping",
    "web",
    "short_tcp",
    "tear",
];
const MAX_COUNT: usize = 100_000;
/// The largest host jitter a flow may have: hosts delay packets by microseconds to
/// milliseconds; a second is already a broken host.
const MAX_HOST_JITTER: Duration = Duration::from_secs(1);
/// The most flows a scenario may hold in all, `count` expanded (bounds the memory spent checking
/// and building it: every flow owns two agents and a monitor). Checked before each table's
/// `count` is expanded.
pub const MAX_FLOWS: usize = 100_000;

/// One flow as the scenario describes it (after `count` is expanded).
#[derive(Clone, Debug, PartialEq)]
pub struct FlowSpec {
    /// Unique name.
    pub name: String,
    /// The source's node name.
    pub from: String,
    /// The sink's node name.
    pub to: String,
    /// The protocol and its parameters.
    pub agent: AgentConfig,
    /// When the application starts.
    pub start: DurationDist,
    /// When it stops for good.
    pub stop: Option<DurationDist>,
    /// ON/OFF cycling.
    pub on_off: Option<OnOff>,
    /// Override of the RTT that groups losses into loss events.
    pub loss_event_rtt: Option<Duration>,
    /// Host timing jitter at both ends (zero: none).
    pub host_jitter: Duration,
    /// Where the flow is in the file ("flows[2]").
    pub path: String,
    /// The group the analysis pools the flow in (`group`); `None`: its protocol class. Reporting
    /// only: the simulation never reads it.
    pub group: Option<String>,
    /// Whether the analysis treats the flow as background traffic (`background`; by default web
    /// sessions, short-TCP aggregates, ON/OFF sources and CBR). Reporting only.
    pub background: bool,
}

impl FlowSpec {
    /// The group the analysis pools the flow in: its `group`, else its protocol class as the
    /// tables print it (`kind/variant`, or `kind` alone without a variant: `"tcp/sack"`,
    /// `"cbr"`; Python's `tfrclab.summary.class_label`). Lets `[measure] reference_group` be
    /// checked against the flows before a run.
    pub fn group_label(&self) -> String {
        if let Some(group) = &self.group {
            return group.clone();
        }
        match self.agent.variant() {
            "" => self.agent.kind().to_string(),
            variant => format!("{}/{variant}", self.agent.kind()),
        }
    }
}

/// The kinds that are background traffic unless a flow says `background = false`: they do not
/// take a share of the link like a long-lived flow (web sessions, short-TCP aggregates, ON/OFF
/// and CBR sources).
const BACKGROUND_KINDS: &[&str] = &["web", "short_tcp", "pareto", "exponential", "cbr"];

/// The longest `group` name (a label for tables and figures).
const MAX_GROUP_CHARS: usize = 200;

/// How flows without `from`/`to` get their endpoints: the k-th flow of a dumbbell runs from
/// `left{k mod left}` to `right{k mod right}` (or back, with `reverse = true`). The dumbbell's
/// bottleneck rates also turn a background source's `share` into a load.
#[derive(Clone, Copy, Debug)]
pub(super) enum DefaultEndpoints {
    /// Dumbbell host pairs.
    Dumbbell {
        /// Hosts on the left.
        left: usize,
        /// Hosts on the right.
        right: usize,
        /// The bottleneck's rate, left to right, in bit/s.
        forward_bps: u64,
        /// The reverse bottleneck's rate, right to left, in bit/s.
        reverse_bps: u64,
    },
    /// No default: `from` and `to` are required.
    None,
}

/// Reads every `[[flows]]` table, expanding `count`.
pub(super) fn parse_flows(
    tables: Vec<Fields<'_>>,
    endpoints: DefaultEndpoints,
) -> Result<Vec<FlowSpec>, ScenarioError> {
    let mut flows: Vec<FlowSpec> = Vec::new();
    let mut per_kind: Vec<(&'static str, usize)> = Vec::new();
    let mut names = std::collections::BTreeSet::new();
    for mut fields in tables {
        let path = fields.path().to_string();
        let kind = fields
            .choice("kind", KINDS)?
            .ok_or_else(|| fields.missing("kind", &format!("one of {}", quoted(KINDS))))?;
        let name: Option<String> = fields.optional("name")?;
        let count: usize = fields.or("count", 1)?;
        if count == 0 || count > MAX_COUNT {
            return Err(ScenarioError::invalid_text(
                fields.child_path("count"),
                format!("between 1 and {MAX_COUNT}"),
                count.to_string(),
            ));
        }
        if count > MAX_FLOWS - flows.len() {
            return Err(ScenarioError::invalid_text(
                fields.child_path("count"),
                format!(
                    "at most {MAX_FLOWS} flows in the whole file ({} before this table)",
                    flows.len()
                ),
                count.to_string(),
            ));
        }
        let from: Option<String> = fields.optional("from")?;
        let to: Option<String> = fields.optional("to")?;
        let reverse: bool = fields.or("reverse", false)?;
        let start: DurationDist = fields.or("start", DurationDist::Fixed(Duration::ZERO))?;
        let stop: Option<DurationDist> = fields.optional("stop")?;
        let on_off = match fields.table("on_off")? {
            Some(mut table) => {
                let expected = r#"a duration like "1s" or { exponential = "1s" }"#;
                let on: DurationDist = table.required("on", expected)?;
                let off: DurationDist = table.required("off", expected)?;
                table.finish()?;
                // ON and OFF periods that are both always 0 toggle the flow forever at one
                // instant: simulated time would never advance.
                if on.is_always_zero() && off.is_always_zero() {
                    return Err(ScenarioError::invalid_text(
                        format!("{path}.on_off"),
                        "ON and OFF periods that are not both always 0s (simulated time could \
                         not advance)",
                        "both always 0s",
                    ));
                }
                Some(OnOff { on, off })
            }
            None => None,
        };
        let loss_event_rtt: Option<Duration> = fields.optional("loss_event_rtt")?;
        let host_jitter: Duration = fields.or("host_jitter", Duration::ZERO)?;
        let group: Option<String> = fields.optional("group")?;
        if let Some(label) = &group {
            if label.trim().is_empty() || label.chars().count() > MAX_GROUP_CHARS {
                return Err(ScenarioError::invalid_text(
                    format!("{path}.group"),
                    format!("a non-empty name of at most {MAX_GROUP_CHARS} characters"),
                    format!("{label:?}"),
                ));
            }
        }
        let background: bool = fields.or(
            "background",
            BACKGROUND_KINDS.contains(&kind) || on_off.is_some(),
        )?;
        if host_jitter > MAX_HOST_JITTER {
            return Err(ScenarioError::invalid_text(
                format!("{path}.host_jitter"),
                "a duration of at most 1s",
                format!("{host_jitter:?}"),
            ));
        }
        let bottleneck_bps = match endpoints {
            DefaultEndpoints::Dumbbell {
                forward_bps,
                reverse_bps,
                ..
            } => {
                // The data crosses the reverse bottleneck when the source is on the right.
                let right_to_left = match &from {
                    Some(node) => node.starts_with("right") || node == "router_right",
                    None => reverse,
                };
                Some(if right_to_left {
                    reverse_bps
                } else {
                    forward_bps
                })
            }
            DefaultEndpoints::None => None,
        };
        let agent = parse_agent(kind, &mut fields, bottleneck_bps)?;
        fields.finish()?;

        let numbered = match per_kind.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, n)) => n,
            None => {
                per_kind.push((kind, 0));
                &mut per_kind.last_mut().expect("just pushed").1
            }
        };
        for j in 0..count {
            let flow_name = match &name {
                Some(base) if count == 1 => base.clone(),
                Some(base) => format!("{base}{j}"),
                None => {
                    *numbered += 1;
                    format!("{kind}{}", *numbered - 1)
                }
            };
            if !names.insert(flow_name.clone()) {
                return Err(ScenarioError::invalid_text(
                    format!("{path}.name"),
                    "a name no other flow has",
                    format!("{flow_name:?}"),
                ));
            }
            let k = flows.len();
            let (default_from, default_to) = match endpoints {
                DefaultEndpoints::Dumbbell { left, right, .. } if reverse => {
                    (format!("right{}", k % right), format!("left{}", k % left))
                }
                DefaultEndpoints::Dumbbell { left, right, .. } => {
                    (format!("left{}", k % left), format!("right{}", k % right))
                }
                DefaultEndpoints::None => (String::new(), String::new()),
            };
            let endpoint = |given: &Option<String>, default: String, key: &str| match (
                given,
                default.is_empty(),
            ) {
                (Some(node), _) => Ok(node.clone()),
                (None, false) => Ok(default),
                (None, true) => Err(ScenarioError::Missing {
                    path: format!("{path}.{key}"),
                    expected: "a node name".into(),
                }),
            };
            flows.push(FlowSpec {
                name: flow_name,
                from: endpoint(&from, default_from, "from")?,
                to: endpoint(&to, default_to, "to")?,
                agent: agent.clone(),
                start,
                stop,
                on_off,
                loss_event_rtt,
                host_jitter,
                path: path.clone(),
                group: group.clone(),
                background,
            });
        }
    }
    Ok(flows)
}

/// The protocol's own keys. `bottleneck_bps` is the rate of the dumbbell bottleneck the flow's
/// data crosses (`None` on other topologies), for the background sources' `share`.
fn parse_agent(
    kind: &str,
    fields: &mut Fields<'_>,
    bottleneck_bps: Option<u64>,
) -> Result<AgentConfig, ScenarioError> {
    match kind {
        "cbr" => parse_cbr(fields),
        "tfrc" => super::tfrc_spec::parse_tfrc(fields),
        "tcp" => super::tcp_spec::parse_tcp(fields),
        "gaimd" => super::tcp_spec::parse_gaimd(fields),
        "rap" => super::rap_spec::parse_rap(fields),
        "pareto" => super::onoff_spec::parse_pareto(fields),
        "exponential" => super::onoff_spec::parse_exponential(fields),
        "ping" => super::ping_spec::parse_ping(fields),
        "web" => super::web_spec::parse_web(fields, bottleneck_bps),
        "short_tcp" => super::web_spec::parse_short_tcp(fields, bottleneck_bps),
        "tear" => super::tear_spec::parse_tear(fields),
        other => Err(ScenarioError::invalid_text(
            fields.child_path("kind"),
            format!("one of {}", quoted(KINDS)),
            format!("{other:?}"),
        )),
    }
}

/// `rate` (required), `size` (1000 B, the papers' packet size; ns-2's CBR default is 210 B),
/// `random` (false) and `max_packets`.
fn parse_cbr(fields: &mut Fields<'_>) -> Result<AgentConfig, ScenarioError> {
    let rate: BitRate = fields.required("rate", r#"a rate like "1Mbps""#)?;
    if rate.bps == 0 {
        return Err(ScenarioError::invalid_text(
            fields.child_path("rate"),
            "a rate above 0",
            "0bps",
        ));
    }
    let size = packet_size(fields, "size", 1000)?;
    Ok(AgentConfig::Cbr(CbrConfig {
        rate_bps: rate.bps,
        size_bytes: size,
        random: fields.or("random", false)?,
        max_packets: fields.optional("max_packets")?,
    }))
}

/// A packet size in bytes between 1 B and 64 KiB.
pub(super) fn packet_size(
    fields: &mut Fields<'_>,
    key: &'static str,
    default_bytes: u32,
) -> Result<u32, ScenarioError> {
    let size: ByteSize = fields.or(
        key,
        ByteSize {
            bytes: u64::from(default_bytes),
        },
    )?;
    if size.bytes == 0 || size.bytes > 65_536 {
        return Err(ScenarioError::invalid_text(
            fields.child_path(key),
            "a packet size between 1B and 64KiB",
            size.to_string(),
        ));
    }
    Ok(size.bytes as u32)
}
