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
        "gilbert_elliott" => LossModelConfig::GilbertElliott {
            p_good_to_bad: fields.required("p_good_to_bad", "a probability in [0, 1]")?,
            p_bad_to_good: fields.required("p_bad_to_good", "a probability in [0, 1]")?,
            loss_in_good: fields.or("loss_in_good", 0.0)?,
            loss_in_bad: fields.or("loss_in_bad", 1.0)?,
        },
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
