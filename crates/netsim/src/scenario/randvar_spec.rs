//! Random variables in scenario files (docs/scenario.md, "Random variables"; `randvar.rs`): a
//! number (a constant) or a table `{ kind = "pareto2", mean = 12, shape = 1.2 }`. Sizes are in
//! packets, times in seconds (a number) or a duration string (`"10ms"`).

use std::time::Duration;

use super::error::{describe, ScenarioError};
use super::fields::{Fields, FromToml};
use crate::randvar::RandomVariable;

const KINDS: &[&str] = &[
    "constant",
    "uniform",
    "exponential",
    "pareto",
    "pareto2",
    "lognormal",
    "weibull",
    "surge",
];

/// What a variable measures: the unit of its numbers, and whether SURGE's file size may be used.
#[derive(Clone, Copy, Debug)]
pub(super) enum Unit {
    /// Seconds (numbers) or durations (strings).
    Time,
    /// A count (objects per page).
    Count,
    /// Packets of this many bytes (SURGE's size is given in bytes and converted).
    Packets(u32),
}

/// The variable at `path`.
pub(super) fn parse_randvar(
    value: &toml::Value,
    path: &str,
    unit: Unit,
) -> Result<RandomVariable, ScenarioError> {
    let rv = match value {
        toml::Value::Table(table) => {
            let mut fields = Fields::new(table, path);
            let rv = parse_table(&mut fields, unit)?;
            fields.finish()?;
            rv
        }
        _ => RandomVariable::Constant {
            value: number(value, path, unit).map_err(|_| {
                ScenarioError::invalid(
                    path,
                    r#"a number or a table like { kind = "exponential", mean = 1 }"#,
                    value,
                )
            })?,
        },
    };
    rv.validate().map_err(|(key, what)| {
        let (at, found) = match value {
            toml::Value::Table(table) => (
                format!("{path}.{key}"),
                table
                    .get(key)
                    .map_or_else(|| "a derived value".to_string(), describe),
            ),
            other => (path.to_string(), describe(other)),
        };
        ScenarioError::invalid_text(at, what, found)
    })?;
    Ok(rv)
}

fn parse_table(fields: &mut Fields<'_>, unit: Unit) -> Result<RandomVariable, ScenarioError> {
    let kind = fields
        .choice("kind", KINDS)?
        .ok_or_else(|| fields.missing("kind", "one of the random variable kinds"))?;
    let num = |key: &'static str, fields: &mut Fields<'_>| -> Result<f64, ScenarioError> {
        match fields.value(key) {
            Some(v) => number(v, &fields.child_path(key), unit),
            None => Err(fields.missing(key, "a number")),
        }
    };
    Ok(match kind {
        "constant" => RandomVariable::Constant {
            value: num("value", fields)?,
        },
        "uniform" => RandomVariable::Uniform {
            min: num("min", fields)?,
            max: num("max", fields)?,
        },
        "exponential" => RandomVariable::Exponential {
            mean: num("mean", fields)?,
        },
        "pareto" | "pareto2" => {
            let shape: f64 = fields.required("shape", "a number above 0")?;
            let has_mean = fields.value("mean").is_some();
            let has_scale = fields.value("scale").is_some();
            match (has_mean, has_scale) {
                (true, false) => {
                    let mean = num("mean", fields)?;
                    if shape <= 1.0 {
                        return Err(ScenarioError::invalid_text(
                            fields.child_path("shape"),
                            "a shape above 1 when the mean is given",
                            shape.to_string(),
                        ));
                    }
                    if kind == "pareto" {
                        RandomVariable::pareto_with_mean(mean, shape)
                    } else {
                        RandomVariable::pareto2_with_mean(mean, shape)
                    }
                }
                (false, true) => {
                    let scale = num("scale", fields)?;
                    if kind == "pareto" {
                        RandomVariable::Pareto { scale, shape }
                    } else {
                        RandomVariable::ParetoII { scale, shape }
                    }
                }
                _ => {
                    return Err(ScenarioError::invalid_text(
                        fields.path().to_string(),
                        "either mean or scale (not both)",
                        if has_mean { "both" } else { "neither" },
                    ))
                }
            }
        }
        "lognormal" => RandomVariable::LogNormal {
            mu: fields.required("mu", "the mean of ln X")?,
            sigma: fields.required("sigma", "the standard deviation of ln X")?,
        },
        "weibull" => RandomVariable::Weibull {
            scale: num("scale", fields)?,
            shape: fields.required("shape", "a number above 0")?,
        },
        _ => match unit {
            Unit::Packets(bytes) => RandomVariable::surge_file_size(f64::from(bytes)),
            _ => {
                return Err(ScenarioError::invalid_text(
                    fields.child_path("kind"),
                    "a kind other than \"surge\" (SURGE's file size is for object sizes)",
                    "\"surge\"",
                ))
            }
        },
    })
}

/// A number in the variable's unit: for times, seconds or a duration string.
fn number(value: &toml::Value, path: &str, unit: Unit) -> Result<f64, ScenarioError> {
    match (value, unit) {
        (toml::Value::String(_), Unit::Time) => Ok(Duration::from_toml(value, path)?.as_secs_f64()),
        _ => f64::from_toml(value, path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str, unit: Unit) -> Result<RandomVariable, ScenarioError> {
        let table: toml::Table = toml::from_str(&format!("v = {text}")).unwrap();
        parse_randvar(&table["v"], "flows[0].x", unit)
    }

    #[test]
    fn every_kind_parses() {
        assert_eq!(
            parse("3", Unit::Count).unwrap(),
            RandomVariable::Constant { value: 3.0 }
        );
        assert_eq!(
            parse(r#""10ms""#, Unit::Time).unwrap(),
            RandomVariable::Constant { value: 0.01 }
        );
        assert_eq!(
            parse(r#"{ kind = "exponential", mean = "500ms" }"#, Unit::Time).unwrap(),
            RandomVariable::Exponential { mean: 0.5 }
        );
        assert_eq!(
            parse(
                r#"{ kind = "pareto2", mean = 12, shape = 1.2 }"#,
                Unit::Count
            )
            .unwrap(),
            RandomVariable::pareto2_with_mean(12.0, 1.2)
        );
        assert_eq!(
            parse(r#"{ kind = "pareto", scale = 1, shape = 1.5 }"#, Unit::Time).unwrap(),
            RandomVariable::Pareto {
                scale: 1.0,
                shape: 1.5
            }
        );
        assert!(parse(r#"{ kind = "uniform", min = 0, max = 20 }"#, Unit::Count).is_ok());
        assert!(parse(
            r#"{ kind = "lognormal", mu = 1, sigma = 0.5 }"#,
            Unit::Count
        )
        .is_ok());
        assert!(parse(
            r#"{ kind = "weibull", scale = 1.46, shape = 0.382 }"#,
            Unit::Time
        )
        .is_ok());
        assert_eq!(
            parse(r#"{ kind = "surge" }"#, Unit::Packets(1000)).unwrap(),
            RandomVariable::surge_file_size(1000.0)
        );
        assert!(parse(r#"{ kind = "constant", value = 2 }"#, Unit::Count).is_ok());
    }

    #[test]
    fn errors_name_the_key() {
        let path = |text: &str, unit| parse(text, unit).unwrap_err().path().unwrap().to_string();
        assert_eq!(
            path(
                r#"{ kind = "pareto2", mean = 12, shape = 0.5 }"#,
                Unit::Count
            ),
            "flows[0].x.shape"
        );
        assert_eq!(
            path(r#"{ kind = "uniform", min = 5, max = 1 }"#, Unit::Count),
            "flows[0].x.max"
        );
        assert_eq!(
            path(
                r#"{ kind = "exponential", mean = 1, shape = 2 }"#,
                Unit::Count
            ),
            "flows[0].x.shape"
        );
        assert_eq!(path(r#"{ kind = "surge" }"#, Unit::Time), "flows[0].x.kind");
        assert_eq!(
            path(r#"{ kind = "paretto" }"#, Unit::Time),
            "flows[0].x.kind"
        );
        assert_eq!(
            path(r#"{ kind = "exponential" }"#, Unit::Time),
            "flows[0].x.mean"
        );
        assert_eq!(path(r#"-1"#, Unit::Count), "flows[0].x");
        assert_eq!(path(r#"true"#, Unit::Count), "flows[0].x");
        let both = parse(
            r#"{ kind = "pareto", mean = 2, scale = 1, shape = 2 }"#,
            Unit::Count,
        );
        assert!(both.unwrap_err().to_string().contains("not both"));
    }
}
