//! The `[[losses]]` tables: loss models placed at a link's entry, optionally for one flow only
//! (docs/scenario.md, "Loss models"; docs/loss-models.md for the semantics).

use std::time::Duration;

use super::error::ScenarioError;
use super::fields::Fields;
use crate::loss::{LossModelConfig, LossModelError};
use crate::Time;

const KINDS: &[&str] = &[
    "periodic",
    "periodic_time",
    "bernoulli",
    "gilbert_elliott",
    "list",
    "schedule",
];

/// How a Gilbert-Elliott model's stays are counted: in packets (the chain stepped per packet) or
/// in time (ns-2's `ErrorModel/TwoState` with `unit time`).
const SOJOURNS: &[&str] = &["packet", "time"];
const SOJOURN_DIST: &str =
    r#"a stay length like "50ms", { uniform = ["10ms", "90ms"] } or { exponential = "1s" }"#;

/// A loss model as the scenario places it.
#[derive(Clone, Debug, PartialEq)]
pub struct LossSpec {
    /// The link's name.
    pub link: String,
    /// Only this flow's packets, if set.
    pub flow: Option<String>,
    /// The model.
    pub model: LossModelConfig,
    /// Where the model is in the file ("losses[0]").
    pub path: String,
}

/// Reads one `[[losses]]` table.
pub(super) fn parse_loss(mut fields: Fields<'_>) -> Result<LossSpec, ScenarioError> {
    let link: String = fields.required("link", "the name of a link")?;
    let flow: Option<String> = fields.optional("flow")?;
    let path = fields.path().to_string();
    let model = parse_model(&mut fields, true)?;
    fields.finish()?;
    model
        .validate()
        .map_err(|error| model_error(&path, &error))?;
    Ok(LossSpec {
        link,
        flow,
        model,
        path,
    })
}

/// Reads a model's `kind` and parameters (a schedule's steps may not be schedules).
fn parse_model(
    fields: &mut Fields<'_>,
    allow_schedule: bool,
) -> Result<LossModelConfig, ScenarioError> {
    let kinds = if allow_schedule {
        KINDS
    } else {
        &KINDS[..KINDS.len() - 1]
    };
    let kind = fields
        .choice("kind", kinds)?
        .ok_or_else(|| fields.missing("kind", &format!("one of {}", quoted(kinds))))?;
    Ok(match kind {
        "periodic" => LossModelConfig::Periodic {
            every: fields.required("every", "a period in packets")?,
            phase: fields.or("phase", 0)?,
        },
        "periodic_time" => {
            let interval: Duration = fields.required("interval", r#"a duration like "100ms""#)?;
            LossModelConfig::PeriodicTime {
                interval,
                offset: fields.or("offset", interval)?,
            }
        }
        "bernoulli" => LossModelConfig::Bernoulli {
            p: fields.required("p", "a drop probability in [0, 1]")?,
        },
        "gilbert_elliott" => parse_gilbert_elliott(fields)?,
        "list" => LossModelConfig::List {
            indices: fields.required("indices", "a list of arrival indices")?,
        },
        _ => {
            let mut steps = Vec::new();
            for mut step in fields.tables("steps")? {
                let at: Duration = step.required("at", r#"a start time like "6s""#)?;
                let model = parse_model(&mut step, false)?;
                step.finish()?;
                steps.push((Time::ZERO + at, model));
            }
            if steps.is_empty() {
                return Err(fields.missing("steps", "at least one [[losses.steps]] table"));
            }
            LossModelConfig::Schedule { steps }
        }
    })
}

/// A Gilbert-Elliott model: stepped per packet (`sojourn = "packet"`, the default: transition
/// probabilities) or with stays in time as ns-2's `ErrorModel/TwoState` (`sojourn = "time"`:
/// `good` and `bad` durations). The other form's keys are refused, naming the key.
fn parse_gilbert_elliott(fields: &mut Fields<'_>) -> Result<LossModelConfig, ScenarioError> {
    let sojourn = fields.choice("sojourn", SOJOURNS)?.unwrap_or("packet");
    let (ours, theirs): (&[&'static str], &[&'static str]) = if sojourn == "time" {
        (&["good", "bad"], &["p_good_to_bad", "p_bad_to_good"])
    } else {
        (&["p_good_to_bad", "p_bad_to_good"], &["good", "bad"])
    };
    for &key in theirs {
        if let Some(value) = fields.value(key) {
            return Err(ScenarioError::invalid(
                fields.child_path(key),
                format!(
                    "no {key} with sojourn = {sojourn:?}, which takes {} and {}",
                    ours[0], ours[1]
                ),
                value,
            ));
        }
    }
    let loss_in_good = fields.or("loss_in_good", 0.0)?;
    let loss_in_bad = fields.or("loss_in_bad", 1.0)?;
    Ok(if sojourn == "time" {
        LossModelConfig::GilbertElliottTime {
            good: fields.required("good", SOJOURN_DIST)?,
            bad: fields.required("bad", SOJOURN_DIST)?,
            loss_in_good,
            loss_in_bad,
        }
    } else {
        LossModelConfig::GilbertElliott {
            p_good_to_bad: fields.required("p_good_to_bad", "a probability in [0, 1]")?,
            p_bad_to_good: fields.required("p_bad_to_good", "a probability in [0, 1]")?,
            loss_in_good,
            loss_in_bad,
        }
    })
}

/// A model error at the key that holds the offending value.
fn model_error(path: &str, error: &LossModelError) -> ScenarioError {
    let at = match error {
        LossModelError::InvalidStep { step, source } => {
            format!("{path}.steps[{step}].{}", source.field())
        }
        LossModelError::StepsNotIncreasing { step, .. } => format!("{path}.steps[{step}].at"),
        other => format!("{path}.{}", other.field()),
    };
    ScenarioError::invalid_text(at, "valid loss-model parameters", error.to_string())
}

/// `"a", "b", "c"`.
pub(super) fn quoted(choices: &[&str]) -> String {
    choices
        .iter()
        .map(|c| format!("{c:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}
