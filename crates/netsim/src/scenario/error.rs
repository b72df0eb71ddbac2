//! Why a scenario file was refused (design.md convention 4: one `#[non_exhaustive]` error enum
//! per domain). Every error but a syntax error names the path of the offending value, written as
//! in the file: `flows[2].start`, `links.bottleneck.rate`; the empty path is the document root.

use std::fmt;

/// How long a quoted string may get in [`describe`] before it is cut short, in characters.
const MAX_DESCRIBED_CHARS: usize = 40;

/// A scenario file that could not be read. The `Display` text is one line of the form
/// `flows[2].start: expected a duration like "10s", found "ten"`.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ScenarioError {
    /// The text is not valid TOML.
    Syntax {
        /// The parser's report: line, column and what was wrong, on one line.
        message: String,
    },
    /// A value is present but wrong.
    Invalid {
        /// Where the value is (`flows[2].start`); empty for the document root.
        path: String,
        /// What the value should have been (`a duration like "10s"`).
        expected: String,
        /// What it was (`"ten"`, `3`, `a table`), as [`describe`] writes it.
        found: String,
    },
    /// A required key is absent.
    Missing {
        /// Where the key should be (`flows[2].start`).
        path: String,
        /// What its value should be.
        expected: String,
    },
    /// A key the schema does not know.
    UnknownKey {
        /// The unknown key's path (`flows[2].strat`).
        path: String,
        /// The known key it most resembles, if any is close.
        suggestion: Option<String>,
        /// Every key known at that level, in the order the schema asks for them.
        allowed: Vec<String>,
    },
}

impl ScenarioError {
    /// The path of the offending value or key; `None` for a syntax error. The document root is
    /// `Some("")`.
    pub fn path(&self) -> Option<&str> {
        match self {
            ScenarioError::Syntax { .. } => None,
            ScenarioError::Invalid { path, .. }
            | ScenarioError::Missing { path, .. }
            | ScenarioError::UnknownKey { path, .. } => Some(path),
        }
    }

    /// An [`Invalid`](ScenarioError::Invalid) error for the value `found` at `path`, which
    /// should have been `expected`; `found` is written by [`describe`].
    pub fn invalid(
        path: impl Into<String>,
        expected: impl Into<String>,
        found: &toml::Value,
    ) -> Self {
        ScenarioError::Invalid {
            path: path.into(),
            expected: expected.into(),
            found: describe(found),
        }
    }

    /// An [`Invalid`](ScenarioError::Invalid) error whose `found` text is given as is.
    pub fn invalid_text(
        path: impl Into<String>,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> Self {
        ScenarioError::Invalid {
            path: path.into(),
            expected: expected.into(),
            found: found.into(),
        }
    }
}

/// The path as written in messages: the root is `(top level)`.
fn shown(path: &str) -> &str {
    if path.is_empty() {
        "(top level)"
    } else {
        path
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScenarioError::Syntax { message } => write!(f, "invalid TOML: {message}"),
            ScenarioError::Invalid {
                path,
                expected,
                found,
            } => write!(f, "{}: expected {expected}, found {found}", shown(path)),
            ScenarioError::Missing { path, expected } => {
                write!(f, "{}: missing; expected {expected}", shown(path))
            }
            ScenarioError::UnknownKey {
                path,
                suggestion,
                allowed,
            } => {
                write!(f, "{}: unknown key; ", shown(path))?;
                match suggestion {
                    Some(s) => write!(f, "did you mean `{s}`?"),
                    None if allowed.is_empty() => write!(f, "no keys are allowed here"),
                    None => write!(f, "expected one of: {}", allowed.join(", ")),
                }
            }
        }
    }
}

impl std::error::Error for ScenarioError {}

/// A short description of a TOML value for error messages: strings quoted with TOML escapes
/// (`"ten"`, cut to about 40 characters with an ellipsis), numbers, booleans and datetimes as
/// TOML writes them (`3`, `3.0`, `1e30`, `nan`, `true`), `a table`, `an array of 3 items`.
pub fn describe(value: &toml::Value) -> String {
    match value {
        toml::Value::String(s) => quote_truncated(s, MAX_DESCRIBED_CHARS),
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::Float(x) => format_float(*x),
        toml::Value::Boolean(b) => b.to_string(),
        toml::Value::Datetime(d) => d.to_string(),
        toml::Value::Array(items) => match items.len() {
            0 => "an empty array".to_owned(),
            1 => "an array of 1 item".to_owned(),
            n => format!("an array of {n} items"),
        },
        toml::Value::Table(_) => "a table".to_owned(),
    }
}

/// A float as TOML writes it: always with a fraction or exponent, `nan`, `inf`, `-inf`.
fn format_float(x: f64) -> String {
    if x.is_nan() {
        "nan".to_owned()
    } else if x.is_infinite() {
        if x > 0.0 { "inf" } else { "-inf" }.to_owned()
    } else {
        // Debug keeps a ".0" on whole numbers and switches to an exponent for extreme
        // magnitudes ("1e30"), both valid TOML.
        format!("{x:?}")
    }
}

/// `s` in double quotes with TOML basic-string escapes; past `max_chars` characters the rest is
/// replaced by an ellipsis inside the quotes.
pub(crate) fn quote_truncated(s: &str, max_chars: usize) -> String {
    let mut out = String::with_capacity(s.len().min(max_chars.saturating_mul(4)) + 8);
    out.push('"');
    for (i, c) in s.chars().enumerate() {
        if i == max_chars {
            out.push('…');
            break;
        }
        push_escaped(&mut out, c);
    }
    out.push('"');
    out
}

/// Appends `c` as it would appear inside a TOML basic string.
fn push_escaped(out: &mut String, c: char) {
    match c {
        '"' => out.push_str("\\\""),
        '\\' => out.push_str("\\\\"),
        '\u{8}' => out.push_str("\\b"),
        '\t' => out.push_str("\\t"),
        '\n' => out.push_str("\\n"),
        '\u{c}' => out.push_str("\\f"),
        '\r' => out.push_str("\\r"),
        c if c.is_control() => {
            // Control characters are all in the Basic Multilingual Plane.
            out.push_str(&format!("\\u{:04X}", c as u32));
        }
        c => out.push(c),
    }
}

/// Whether `key` can be written bare in TOML (`A-Za-z0-9_-`, not empty).
fn is_bare_key(key: &str) -> bool {
    !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// `key` as one path segment: bare if TOML allows it, else quoted with escapes (so a path stays
/// on one line whatever the key holds).
pub(crate) fn key_segment(key: &str) -> String {
    if is_bare_key(key) {
        key.to_owned()
    } else {
        quote_truncated(key, usize::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(toml_text: &str) -> toml::Value {
        let table: toml::Table = format!("v = {toml_text}").parse().unwrap();
        table["v"].clone()
    }

    #[test]
    fn describe_writes_scalars_as_toml_does() {
        assert_eq!(describe(&value("\"ten\"")), "\"ten\"");
        assert_eq!(describe(&value("3")), "3");
        assert_eq!(describe(&value("-7")), "-7");
        assert_eq!(describe(&value("3.0")), "3.0");
        assert_eq!(describe(&value("0.25")), "0.25");
        assert_eq!(describe(&value("1e30")), "1e30");
        assert_eq!(describe(&value("nan")), "nan");
        assert_eq!(describe(&value("inf")), "inf");
        assert_eq!(describe(&value("-inf")), "-inf");
        assert_eq!(describe(&value("true")), "true");
        assert_eq!(describe(&value("1979-05-27")), "1979-05-27");
        assert_eq!(
            describe(&value("1979-05-27T07:32:00Z")),
            "1979-05-27T07:32:00Z"
        );
    }

    #[test]
    fn describe_names_tables_and_arrays_by_shape() {
        assert_eq!(describe(&value("{ a = 1 }")), "a table");
        assert_eq!(describe(&value("[]")), "an empty array");
        assert_eq!(describe(&value("[1]")), "an array of 1 item");
        assert_eq!(describe(&value("[1, 2, 3]")), "an array of 3 items");
    }

    #[test]
    fn describe_escapes_and_truncates_strings() {
        assert_eq!(
            describe(&toml::Value::String("a\"b\\c\nd\te\u{1}\u{7f}".into())),
            "\"a\\\"b\\\\c\\nd\\te\\u0001\\u007F\""
        );
        let long = "x".repeat(100);
        let described = describe(&toml::Value::String(long));
        assert_eq!(described, format!("\"{}…\"", "x".repeat(40)));
        // Exactly at the limit: nothing is cut.
        let forty = "é".repeat(40);
        assert_eq!(
            describe(&toml::Value::String(forty.clone())),
            format!("\"{forty}\"")
        );
    }

    #[test]
    fn display_texts() {
        let err = ScenarioError::invalid(
            "flows[2].start",
            "a duration like \"10s\"",
            &value("\"ten\""),
        );
        assert_eq!(
            err.to_string(),
            "flows[2].start: expected a duration like \"10s\", found \"ten\""
        );
        assert_eq!(err.path(), Some("flows[2].start"));
        let err = ScenarioError::Missing {
            path: "seed".into(),
            expected: "a whole number".into(),
        };
        assert_eq!(err.to_string(), "seed: missing; expected a whole number");
        let err = ScenarioError::UnknownKey {
            path: "flows[0].strat".into(),
            suggestion: Some("start".into()),
            allowed: vec!["start".into(), "rate".into()],
        };
        assert_eq!(
            err.to_string(),
            "flows[0].strat: unknown key; did you mean `start`?"
        );
        let err = ScenarioError::UnknownKey {
            path: "zzz".into(),
            suggestion: None,
            allowed: vec!["a".into(), "b".into(), "c".into()],
        };
        assert_eq!(
            err.to_string(),
            "zzz: unknown key; expected one of: a, b, c"
        );
        let err = ScenarioError::UnknownKey {
            path: "x.y".into(),
            suggestion: None,
            allowed: vec![],
        };
        assert_eq!(
            err.to_string(),
            "x.y: unknown key; no keys are allowed here"
        );
        let err = ScenarioError::Syntax {
            message: "line 1, column 3: bad".into(),
        };
        assert_eq!(err.to_string(), "invalid TOML: line 1, column 3: bad");
        assert_eq!(err.path(), None);
    }

    #[test]
    fn the_root_is_called_top_level() {
        let err = ScenarioError::invalid_text("", "a table", "an array of 2 items");
        assert_eq!(
            err.to_string(),
            "(top level): expected a table, found an array of 2 items"
        );
        assert_eq!(err.path(), Some(""));
        let err = ScenarioError::Missing {
            path: String::new(),
            expected: "x".into(),
        };
        assert_eq!(err.to_string(), "(top level): missing; expected x");
    }

    #[test]
    fn key_segments_are_bare_or_quoted() {
        assert_eq!(key_segment("start_time"), "start_time");
        assert_eq!(key_segment("a-b9"), "a-b9");
        assert_eq!(key_segment("a.b"), "\"a.b\"");
        assert_eq!(key_segment(""), "\"\"");
        assert_eq!(key_segment("new\nline"), "\"new\\nline\"");
    }
}
