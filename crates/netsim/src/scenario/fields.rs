//! Walking a parsed scenario document: typed conversion of single values ([`FromToml`]) and a
//! view of one table ([`Fields`]) that records the keys the schema reads, so that any other key
//! is refused with a "did you mean". Every error names the path of the value it is about.

use std::time::Duration;

use super::error::{key_segment, ScenarioError};
use super::units::{parse_duration, parse_rate, parse_size, BitRate, ByteSize};

/// Converts one TOML value at `path` into a typed value, or a [`ScenarioError::Invalid`] naming
/// the path.
pub trait FromToml: Sized {
    /// Reads `value`, found at `path` (used only in the error).
    fn from_toml(value: &toml::Value, path: &str) -> Result<Self, ScenarioError>;
}

impl FromToml for Duration {
    /// A string with a unit (`"10s"`, see [`parse_duration`]); a bare number is refused, since
    /// its unit would be a guess.
    fn from_toml(value: &toml::Value, path: &str) -> Result<Self, ScenarioError> {
        match value {
            toml::Value::String(text) => {
                parse_duration(text).map_err(|e| ScenarioError::invalid(path, e.to_string(), value))
            }
            _ => Err(ScenarioError::invalid(
                path,
                "a duration like \"10s\"",
                value,
            )),
        }
    }
}

impl FromToml for BitRate {
    /// A string with a unit (`"15Mbps"`, see [`parse_rate`]); a bare number is refused.
    fn from_toml(value: &toml::Value, path: &str) -> Result<Self, ScenarioError> {
        match value {
            toml::Value::String(text) => {
                parse_rate(text).map_err(|e| ScenarioError::invalid(path, e.to_string(), value))
            }
            _ => Err(ScenarioError::invalid(
                path,
                "a rate like \"15Mbps\"",
                value,
            )),
        }
    }
}

impl FromToml for ByteSize {
    /// A string with a unit (`"1500B"`, `"64KiB"`, see [`parse_size`]) or a bare non-negative
    /// integer, meaning bytes.
    fn from_toml(value: &toml::Value, path: &str) -> Result<Self, ScenarioError> {
        match value {
            toml::Value::String(text) => {
                parse_size(text).map_err(|e| ScenarioError::invalid(path, e.to_string(), value))
            }
            toml::Value::Integer(n) => match u64::try_from(*n) {
                Ok(bytes) => Ok(ByteSize { bytes }),
                Err(_) => Err(ScenarioError::invalid(path, "a non-negative size", value)),
            },
            _ => Err(ScenarioError::invalid(
                path,
                "a size like \"1500B\" or a whole number of bytes",
                value,
            )),
        }
    }
}

impl FromToml for f64 {
    /// A finite float or an integer.
    fn from_toml(value: &toml::Value, path: &str) -> Result<Self, ScenarioError> {
        match value {
            toml::Value::Float(x) if x.is_finite() => Ok(*x),
            toml::Value::Float(_) => Err(ScenarioError::invalid(path, "a finite number", value)),
            toml::Value::Integer(n) => Ok(*n as f64),
            _ => Err(ScenarioError::invalid(path, "a number", value)),
        }
    }
}

/// A non-negative integer no larger than `max`; floats (even `3.0`) are refused.
fn whole_number(value: &toml::Value, path: &str, max: u64) -> Result<u64, ScenarioError> {
    match value {
        toml::Value::Integer(n) if *n < 0 => Err(ScenarioError::invalid(
            path,
            "a non-negative whole number",
            value,
        )),
        toml::Value::Integer(n) => {
            // Non-negative, so it fits a u64.
            let n = n.unsigned_abs();
            if n <= max {
                Ok(n)
            } else {
                Err(ScenarioError::invalid(
                    path,
                    format!("a whole number of at most {max}"),
                    value,
                ))
            }
        }
        _ => Err(ScenarioError::invalid(path, "a whole number", value)),
    }
}

impl FromToml for u64 {
    /// A non-negative integer.
    fn from_toml(value: &toml::Value, path: &str) -> Result<Self, ScenarioError> {
        whole_number(value, path, u64::MAX)
    }
}

impl FromToml for u32 {
    /// A non-negative integer of at most `u32::MAX`.
    fn from_toml(value: &toml::Value, path: &str) -> Result<Self, ScenarioError> {
        let n = whole_number(value, path, u64::from(u32::MAX))?;
        // Checked against the maximum above.
        Ok(u32::try_from(n).unwrap_or(u32::MAX))
    }
}

impl FromToml for usize {
    /// A non-negative integer of at most `usize::MAX`.
    fn from_toml(value: &toml::Value, path: &str) -> Result<Self, ScenarioError> {
        let max = u64::try_from(usize::MAX).unwrap_or(u64::MAX);
        let n = whole_number(value, path, max)?;
        // Checked against the maximum above.
        Ok(usize::try_from(n).unwrap_or(usize::MAX))
    }
}

impl FromToml for bool {
    /// `true` or `false`.
    fn from_toml(value: &toml::Value, path: &str) -> Result<Self, ScenarioError> {
        value
            .as_bool()
            .ok_or_else(|| ScenarioError::invalid(path, "true or false", value))
    }
}

impl FromToml for String {
    /// A string.
    fn from_toml(value: &toml::Value, path: &str) -> Result<Self, ScenarioError> {
        value
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| ScenarioError::invalid(path, "a string", value))
    }
}

impl<T: FromToml> FromToml for Vec<T> {
    /// An array whose items each convert to `T`; item `i` has the path `path[i]`.
    fn from_toml(value: &toml::Value, path: &str) -> Result<Self, ScenarioError> {
        let items = value
            .as_array()
            .ok_or_else(|| ScenarioError::invalid(path, "an array", value))?;
        items
            .iter()
            .enumerate()
            .map(|(i, item)| T::from_toml(item, &format!("{path}[{i}]")))
            .collect()
    }
}

/// A view of one TOML table that records which keys the schema asked for, so `finish` can reject
/// the rest.
///
/// Asking for a key (with any method taking a key) counts as knowing it even when it is absent,
/// so the did-you-mean candidates are all the keys the schema reads at that level.
#[derive(Debug)]
#[must_use = "call `finish` to reject unknown keys"]
pub struct Fields<'a> {
    table: &'a toml::Table,
    path: String,
    known: Vec<&'static str>,
}

impl<'a> Fields<'a> {
    /// A view of `table`, found at `path` (`""` for the document root).
    pub fn new(table: &'a toml::Table, path: impl Into<String>) -> Fields<'a> {
        Fields {
            table,
            path: path.into(),
            known: Vec::new(),
        }
    }

    /// This table's path (`""` for the document root).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The path of `key` in this table: `a.b` under `a`, just `b` at the root. A key that TOML
    /// could not write bare is quoted (`a."x.y"`).
    pub fn child_path(&self, key: &str) -> String {
        if self.path.is_empty() {
            key_segment(key)
        } else {
            format!("{}.{}", self.path, key_segment(key))
        }
    }

    /// Records `key` as known (once, in the order asked).
    fn know(&mut self, key: &'static str) {
        if !self.known.contains(&key) {
            self.known.push(key);
        }
    }

    /// The value of `key`, converted; [`ScenarioError::Missing`] (with `expected`) if absent.
    pub fn required<T: FromToml>(
        &mut self,
        key: &'static str,
        expected: &str,
    ) -> Result<T, ScenarioError> {
        match self.value(key) {
            Some(value) => T::from_toml(value, &self.child_path(key)),
            None => Err(self.missing(key, expected)),
        }
    }

    /// The error for an absent `key` the schema needs: if the table holds an unknown key that
    /// looks like a misspelling of it (`hsots` for `hosts`), [`ScenarioError::UnknownKey`]
    /// suggesting `key`, which says what to fix; otherwise [`ScenarioError::Missing`].
    pub fn missing(&mut self, key: &'static str, expected: &str) -> ScenarioError {
        self.know(key);
        let misspelt = self
            .table
            .keys()
            .filter(|k| !self.known.contains(&k.as_str()))
            .find(|k| closest(k, [key]).is_some());
        match misspelt {
            Some(unknown) => ScenarioError::UnknownKey {
                path: self.child_path(unknown),
                suggestion: Some(key.to_owned()),
                allowed: self.known.iter().map(|&k| k.to_owned()).collect(),
            },
            None => ScenarioError::Missing {
                path: self.child_path(key),
                expected: expected.to_owned(),
            },
        }
    }

    /// The value of `key`, converted, or `None` if absent.
    pub fn optional<T: FromToml>(&mut self, key: &'static str) -> Result<Option<T>, ScenarioError> {
        match self.value(key) {
            Some(value) => T::from_toml(value, &self.child_path(key)).map(Some),
            None => Ok(None),
        }
    }

    /// The value of `key`, converted, or `default` if absent.
    pub fn or<T: FromToml>(&mut self, key: &'static str, default: T) -> Result<T, ScenarioError> {
        Ok(self.optional(key)?.unwrap_or(default))
    }

    /// The raw value of `key`, if present; marks the key as known.
    pub fn value(&mut self, key: &'static str) -> Option<&'a toml::Value> {
        self.know(key);
        self.table.get(key)
    }

    /// The sub-table `key` as a view of its own (to be finished by the caller), or `None` if
    /// absent; [`ScenarioError::Invalid`] if `key` holds something else.
    pub fn table(&mut self, key: &'static str) -> Result<Option<Fields<'a>>, ScenarioError> {
        match self.value(key) {
            Some(toml::Value::Table(table)) => Ok(Some(Fields::new(table, self.child_path(key)))),
            Some(other) => Err(ScenarioError::invalid(
                self.child_path(key),
                "a table",
                other,
            )),
            None => Ok(None),
        }
    }

    /// The array of tables `key` (`[[key]]` in the file), one view per element with the paths
    /// `key[0]`, `key[1]`, ...; empty if absent. [`ScenarioError::Invalid`] if `key` is not an
    /// array, or for the first element that is not a table.
    pub fn tables(&mut self, key: &'static str) -> Result<Vec<Fields<'a>>, ScenarioError> {
        let Some(value) = self.value(key) else {
            return Ok(Vec::new());
        };
        let path = self.child_path(key);
        let items = value
            .as_array()
            .ok_or_else(|| ScenarioError::invalid(&path, "an array of tables", value))?;
        items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let item_path = format!("{path}[{i}]");
                match item {
                    toml::Value::Table(table) => Ok(Fields::new(table, item_path)),
                    other => Err(ScenarioError::invalid(item_path, "a table", other)),
                }
            })
            .collect()
    }

    /// The string `key`, which must be one of `choices`, or `None` if absent. The error lists
    /// the choices and suggests the closest one if any is close: `expected one of "red",
    /// "droptail" (did you mean "red"?)`.
    pub fn choice(
        &mut self,
        key: &'static str,
        choices: &[&'static str],
    ) -> Result<Option<&'static str>, ScenarioError> {
        let Some(value) = self.value(key) else {
            return Ok(None);
        };
        let listed = choices
            .iter()
            .map(|c| format!("\"{c}\""))
            .collect::<Vec<_>>()
            .join(", ");
        let mut expected = format!("one of {listed}");
        if let toml::Value::String(text) = value {
            if let Some(&choice) = choices.iter().find(|&&c| c == text) {
                return Ok(Some(choice));
            }
            if let Some(close) = closest(text, choices.iter().copied()) {
                expected.push_str(&format!(" (did you mean \"{close}\"?)"));
            }
        }
        Err(ScenarioError::invalid(
            self.child_path(key),
            expected,
            value,
        ))
    }

    /// Marks `keys` as known without reading them (for keys read elsewhere, e.g. by another
    /// pass over the same table).
    pub fn declare(&mut self, keys: &[&'static str]) {
        for &key in keys {
            self.know(key);
        }
    }

    /// `Ok` if every key of the table was asked for or declared; otherwise
    /// [`ScenarioError::UnknownKey`] for the first other key in file order, with the closest
    /// known key as a suggestion if one is close, and all known keys in the order asked.
    pub fn finish(self) -> Result<(), ScenarioError> {
        let Some(unknown) = self
            .table
            .keys()
            .find(|key| !self.known.contains(&key.as_str()))
        else {
            return Ok(());
        };
        Err(ScenarioError::UnknownKey {
            path: self.child_path(unknown),
            suggestion: closest(unknown, self.known.iter().copied()).map(str::to_owned),
            allowed: self.known.iter().map(|&k| k.to_owned()).collect(),
        })
    }
}

/// Parses a scenario document; [`ScenarioError::Syntax`] (with line and column) if it is not
/// valid TOML.
pub fn parse_document(text: &str) -> Result<toml::Table, ScenarioError> {
    text.parse::<toml::Table>()
        .map_err(|err| ScenarioError::Syntax {
            message: syntax_message(text, &err),
        })
}

/// toml's report on one line: `line 3, column 7: <what was wrong>`.
fn syntax_message(text: &str, err: &toml::de::Error) -> String {
    let what = err
        .message()
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join("; ");
    let Some(span) = err.span() else {
        return what;
    };
    let mut start = span.start.min(text.len());
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let before = &text[..start];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    format!("line {line}, column {column}: {what}")
}

/// The smallest normalized Damerau-Levenshtein similarity for a suggestion.
const MIN_SIMILARITY: f64 = 0.6;

/// The candidate closest to `word`, if it is close: the same once case, `_` and `-` are
/// ignored, or with a normalized Damerau-Levenshtein similarity of at least 0.6. Ties go to the
/// earlier candidate.
pub(crate) fn closest<'k>(
    word: &str,
    candidates: impl IntoIterator<Item = &'k str>,
) -> Option<&'k str> {
    let loose = |s: &str| -> String {
        s.chars()
            .filter(|&c| c != '_' && c != '-')
            .flat_map(char::to_lowercase)
            .collect()
    };
    let word_len = word.chars().count();
    let mut best: Option<(f64, &'k str)> = None;
    for candidate in candidates {
        let candidate_len = candidate.chars().count();
        let longer = word_len.max(candidate_len);
        // The distance is at least the difference in length; skip (cheaply, whatever the size of
        // `word`) candidates that cannot reach the threshold.
        let length_gap = word_len.abs_diff(candidate_len) as f64;
        let score = if longer < 64 && loose(word) == loose(candidate) {
            1.0
        } else if longer == 0 || length_gap > (1.0 - MIN_SIMILARITY) * longer as f64 {
            continue;
        } else {
            strsim::normalized_damerau_levenshtein(word, candidate)
        };
        if score >= MIN_SIMILARITY && best.is_none_or(|(b, _)| score > b) {
            best = Some((score, candidate));
        }
    }
    best.map(|(_, candidate)| candidate)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> toml::Table {
        parse_document(text).unwrap()
    }

    fn value(toml_text: &str) -> toml::Value {
        doc(&format!("v = {toml_text}"))["v"].clone()
    }

    fn convert<T: FromToml>(toml_text: &str) -> Result<T, String> {
        T::from_toml(&value(toml_text), "x").map_err(|e| e.to_string())
    }

    #[test]
    fn durations_rates_and_sizes_convert_from_strings() {
        assert_eq!(
            convert::<Duration>("\"1.5s\""),
            Ok(Duration::from_millis(1500))
        );
        assert_eq!(
            convert::<BitRate>("\"15Mbps\""),
            Ok(BitRate { bps: 15_000_000 })
        );
        assert_eq!(
            convert::<ByteSize>("\"1.5KB\""),
            Ok(ByteSize { bytes: 1500 })
        );
        assert_eq!(convert::<ByteSize>("1500"), Ok(ByteSize { bytes: 1500 }));
        assert_eq!(convert::<ByteSize>("0"), Ok(ByteSize { bytes: 0 }));
    }

    #[test]
    fn unit_errors_name_the_path_and_what_was_found() {
        assert_eq!(
            convert::<Duration>("\"ten\""),
            Err("x: expected a duration like \"10s\", found \"ten\"".into())
        );
        assert_eq!(
            convert::<Duration>("10"),
            Err("x: expected a duration like \"10s\", found 10".into())
        );
        assert_eq!(
            convert::<Duration>("1.5"),
            Err("x: expected a duration like \"10s\", found 1.5".into())
        );
        assert_eq!(
            convert::<Duration>("\"-1s\""),
            Err("x: expected a non-negative duration, found \"-1s\"".into())
        );
        assert_eq!(
            convert::<BitRate>("15000000"),
            Err("x: expected a rate like \"15Mbps\", found 15000000".into())
        );
        assert_eq!(
            convert::<BitRate>("\"1e30bps\""),
            Err("x: expected a rate of at most 18446744073709551615bps, found \"1e30bps\"".into())
        );
        assert_eq!(
            convert::<ByteSize>("-1"),
            Err("x: expected a non-negative size, found -1".into())
        );
        assert_eq!(
            convert::<ByteSize>("1.5"),
            Err("x: expected a size like \"1500B\" or a whole number of bytes, found 1.5".into())
        );
        assert_eq!(
            convert::<ByteSize>("\"0.5B\""),
            Err("x: expected a whole number of bytes, found \"0.5B\"".into())
        );
    }

    #[test]
    fn numbers_booleans_and_strings() {
        assert_eq!(convert::<f64>("0.25"), Ok(0.25));
        assert_eq!(convert::<f64>("3"), Ok(3.0));
        assert_eq!(
            convert::<f64>("nan"),
            Err("x: expected a finite number, found nan".into())
        );
        assert_eq!(
            convert::<f64>("-inf"),
            Err("x: expected a finite number, found -inf".into())
        );
        assert_eq!(
            convert::<f64>("\"3\""),
            Err("x: expected a number, found \"3\"".into())
        );
        assert_eq!(convert::<u64>("9223372036854775807"), Ok(i64::MAX as u64));
        assert_eq!(convert::<u64>("0"), Ok(0));
        assert_eq!(
            convert::<u64>("3.0"),
            Err("x: expected a whole number, found 3.0".into())
        );
        assert_eq!(
            convert::<u64>("-3"),
            Err("x: expected a non-negative whole number, found -3".into())
        );
        assert_eq!(convert::<u32>("4294967295"), Ok(u32::MAX));
        assert_eq!(
            convert::<u32>("4294967296"),
            Err("x: expected a whole number of at most 4294967295, found 4294967296".into())
        );
        assert_eq!(convert::<usize>("12"), Ok(12));
        assert_eq!(
            convert::<usize>("true"),
            Err("x: expected a whole number, found true".into())
        );
        assert_eq!(convert::<bool>("true"), Ok(true));
        assert_eq!(
            convert::<bool>("\"yes\""),
            Err("x: expected true or false, found \"yes\"".into())
        );
        assert_eq!(convert::<String>("\"red\""), Ok("red".to_owned()));
        assert_eq!(
            convert::<String>("{ a = 1 }"),
            Err("x: expected a string, found a table".into())
        );
    }

    #[test]
    fn arrays_convert_item_by_item_with_indexed_paths() {
        assert_eq!(convert::<Vec<u64>>("[1, 2, 3]"), Ok(vec![1, 2, 3]));
        assert_eq!(convert::<Vec<u64>>("[]"), Ok(vec![]));
        assert_eq!(
            convert::<Vec<u64>>("[1, 2, \"3\"]"),
            Err("x[2]: expected a whole number, found \"3\"".into())
        );
        assert_eq!(
            convert::<Vec<Vec<Duration>>>("[[\"1s\"], [\"2s\", \"two\"]]"),
            Err("x[1][1]: expected a duration like \"10s\", found \"two\"".into())
        );
        assert_eq!(
            convert::<Vec<u64>>("5"),
            Err("x: expected an array, found 5".into())
        );
    }

    const FLOWS: &str = r#"
        seed = 7
        [network]
        rate = "15Mbps"
        [network.queue]
        limit = "100KB"
        [[flows]]
        start = "0s"
        [[flows]]
        start = "1s"
        [[flows]]
        start = "ten"
    "#;

    #[test]
    fn paths_follow_nested_tables_and_arrays_of_tables() {
        let table = doc(FLOWS);
        let mut root = Fields::new(&table, "");
        assert_eq!(root.path(), "");
        assert_eq!(root.child_path("seed"), "seed");
        assert_eq!(root.required::<u64>("seed", "a whole number"), Ok(7));
        let mut network = root.table("network").unwrap().unwrap();
        assert_eq!(network.path(), "network");
        assert_eq!(network.child_path("rate"), "network.rate");
        let mut queue = network.table("queue").unwrap().unwrap();
        assert_eq!(queue.path(), "network.queue");
        assert_eq!(
            queue
                .required::<Duration>("limit", "a duration")
                .unwrap_err()
                .to_string(),
            "network.queue.limit: expected a duration in ns, us (or µs), ms, s, min or h, \
             found \"100KB\""
        );
        assert_eq!(
            queue.optional::<ByteSize>("limit"),
            Ok(Some(ByteSize { bytes: 100_000 }))
        );
        queue.finish().unwrap();
        assert_eq!(
            network.required::<BitRate>("rate", "a rate"),
            Ok(BitRate { bps: 15_000_000 })
        );
        network.finish().unwrap();
        let mut flows = root.tables("flows").unwrap();
        assert_eq!(flows.len(), 3);
        let paths: Vec<&str> = flows.iter().map(Fields::path).collect();
        assert_eq!(paths, ["flows[0]", "flows[1]", "flows[2]"]);
        assert_eq!(flows[1].child_path("start"), "flows[1].start");
        assert_eq!(
            flows[1].required::<Duration>("start", "a duration"),
            Ok(Duration::from_secs(1))
        );
        assert_eq!(
            flows[2]
                .required::<Duration>("start", "a duration")
                .unwrap_err()
                .to_string(),
            "flows[2].start: expected a duration like \"10s\", found \"ten\""
        );
        assert_eq!(root.tables("links").unwrap().len(), 0);
        assert!(root.table("absent").unwrap().is_none());
        root.finish().unwrap();
    }

    #[test]
    fn missing_optional_and_default() {
        let table = doc("present = 3");
        let mut f = Fields::new(&table, "node");
        assert_eq!(f.optional::<u64>("absent"), Ok(None));
        assert_eq!(f.or::<u64>("absent", 9), Ok(9));
        assert_eq!(f.or::<u64>("present", 9), Ok(3));
        let err = f.required::<u64>("needed", "a whole number").unwrap_err();
        assert_eq!(
            err,
            ScenarioError::Missing {
                path: "node.needed".into(),
                expected: "a whole number".into()
            }
        );
        assert_eq!(
            err.to_string(),
            "node.needed: missing; expected a whole number"
        );
        f.finish().unwrap();
        let table = doc("");
        let err = Fields::new(&table, "")
            .required::<u64>("seed", "a whole number")
            .unwrap_err();
        assert_eq!(err.to_string(), "seed: missing; expected a whole number");
    }

    #[test]
    fn tables_refuse_other_types() {
        let table = doc("a = 1\nb = [1, {x = 1}]\nc = [{x = 1}, 2]\nd = {x = 1}");
        let mut f = Fields::new(&table, "");
        assert_eq!(
            f.table("a").unwrap_err().to_string(),
            "a: expected a table, found 1"
        );
        assert_eq!(
            f.tables("b").unwrap_err().to_string(),
            "b[0]: expected a table, found 1"
        );
        assert_eq!(
            f.tables("c").unwrap_err().to_string(),
            "c[1]: expected a table, found 2"
        );
        assert_eq!(
            f.tables("d").unwrap_err().to_string(),
            "d: expected an array of tables, found a table"
        );
        // An inline array of inline tables is an array of tables too.
        let table = doc("flows = [{start = \"1s\"}, {start = \"2s\"}]");
        let mut f = Fields::new(&table, "");
        let flows = f.tables("flows").unwrap();
        assert_eq!(flows[1].path(), "flows[1]");
    }

    #[test]
    fn value_gives_raw_access_and_marks_the_key() {
        let table = doc("raw = [1, \"a\"]");
        let mut f = Fields::new(&table, "");
        assert!(f.value("raw").unwrap().is_array());
        assert!(f.value("other").is_none());
        f.finish().unwrap();
    }

    #[test]
    fn choices() {
        let table = doc("queue = \"red\"\nbad = \"droptial\"\nfar = \"zzzzzz\"\nnum = 3");
        let mut f = Fields::new(&table, "link");
        const QUEUES: &[&str] = &["droptail", "red", "adaptive_red"];
        assert_eq!(f.choice("queue", QUEUES), Ok(Some("red")));
        assert_eq!(f.choice("absent", QUEUES), Ok(None));
        assert_eq!(
            f.choice("bad", QUEUES).unwrap_err().to_string(),
            "link.bad: expected one of \"droptail\", \"red\", \"adaptive_red\" \
             (did you mean \"droptail\"?), found \"droptial\""
        );
        assert_eq!(
            f.choice("far", QUEUES).unwrap_err().to_string(),
            "link.far: expected one of \"droptail\", \"red\", \"adaptive_red\", found \"zzzzzz\""
        );
        assert_eq!(
            f.choice("num", QUEUES).unwrap_err().to_string(),
            "link.num: expected one of \"droptail\", \"red\", \"adaptive_red\", found 3"
        );
    }

    #[test]
    fn finish_suggests_the_closest_known_key() {
        let table = doc("strat = \"1s\"");
        let mut f = Fields::new(&table, "flows[0]");
        let _ = f.optional::<Duration>("start");
        let _ = f.optional::<BitRate>("rate");
        let err = f.finish().unwrap_err();
        assert_eq!(
            err,
            ScenarioError::UnknownKey {
                path: "flows[0].strat".into(),
                suggestion: Some("start".into()),
                allowed: vec!["start".into(), "rate".into()],
            }
        );
        assert_eq!(
            err.to_string(),
            "flows[0].strat: unknown key; did you mean `start`?"
        );

        let table = doc("rtae = \"1Mbps\"");
        let mut f = Fields::new(&table, "");
        f.declare(&["start", "rate"]);
        assert_eq!(
            f.finish().unwrap_err().to_string(),
            "rtae: unknown key; did you mean `rate`?"
        );

        let table = doc("zzzzzz = 1");
        let mut f = Fields::new(&table, "");
        f.declare(&["start", "rate", "start"]);
        assert_eq!(
            f.finish().unwrap_err().to_string(),
            "zzzzzz: unknown key; expected one of: start, rate"
        );

        let table = doc("x = 1");
        assert_eq!(
            Fields::new(&table, "empty")
                .finish()
                .unwrap_err()
                .to_string(),
            "empty.x: unknown key; no keys are allowed here"
        );
    }

    #[test]
    fn finish_reports_the_first_unknown_key_in_file_order() {
        let table = doc("b = 1\nzeta = 2\nalpha = 3\na = 4");
        let mut f = Fields::new(&table, "");
        let _ = f.value("a");
        let _ = f.value("b");
        let err = f.finish().unwrap_err();
        assert_eq!(err.path(), Some("zeta"));
        let ScenarioError::UnknownKey { allowed, .. } = err else {
            panic!("not an unknown key: {err}");
        };
        assert_eq!(allowed, ["a", "b"]);
    }

    #[test]
    fn unknown_keys_that_toml_quotes_stay_quoted_in_the_path() {
        let table = doc("\"start.time\" = 1\n\"new\\nline\" = 2");
        let f = Fields::new(&table, "flows[1]");
        assert_eq!(
            f.finish().unwrap_err().path(),
            Some("flows[1].\"start.time\"")
        );
    }

    #[test]
    fn suggestions() {
        let keys = ["start", "rate", "packet_size", "seed", "stop"];
        assert_eq!(closest("strat", keys), Some("start"));
        assert_eq!(closest("rtae", keys), Some("rate"));
        assert_eq!(closest("packetsize", keys), Some("packet_size"));
        assert_eq!(closest("Packet-Size", keys), Some("packet_size"));
        assert_eq!(closest("packet_sise", keys), Some("packet_size"));
        assert_eq!(closest("sed", keys), Some("seed"));
        assert_eq!(closest("zzzzzz", keys), None);
        assert_eq!(closest("", keys), None);
        assert_eq!(closest("x", keys), None);
        assert_eq!(closest(&"start".repeat(10_000), keys), None);
        assert_eq!(closest("start", []), None);
        // One edit from "start", two from "stop": the closer wins.
        assert_eq!(closest("stat", keys), Some("start"));
    }

    #[test]
    fn syntax_errors_carry_line_and_column_on_one_line() {
        let err = parse_document("a = 1\nb = = 2\n").unwrap_err();
        let ScenarioError::Syntax { message } = &err else {
            panic!("not a syntax error: {err}");
        };
        assert!(message.starts_with("line 2, column 5: "), "{message}");
        assert!(!message.contains('\n'), "{message}");
        assert!(err
            .to_string()
            .starts_with("invalid TOML: line 2, column 5: "));
        let err = parse_document("a = 1\na = 2").unwrap_err();
        assert!(err.to_string().starts_with("invalid TOML: line 2"), "{err}");
        let err = parse_document("é = \"unterminated").unwrap_err();
        assert!(
            err.to_string().starts_with("invalid TOML: line 1, column "),
            "{err}"
        );
    }

    #[test]
    fn deeply_nested_documents_are_refused_without_a_crash() {
        let deep = format!("a = {}", "[".repeat(100_000));
        assert!(matches!(
            parse_document(&deep),
            Err(ScenarioError::Syntax { .. })
        ));
        let deep = format!("a = {}", "{b = ".repeat(100_000));
        assert!(matches!(
            parse_document(&deep),
            Err(ScenarioError::Syntax { .. })
        ));
    }
}
