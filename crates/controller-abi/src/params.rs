//! A plugin's parameters: the text after `?` in `controller = "native:/path/lib.so?alpha=1&beta=0.5"`,
//! `key=value` pairs joined by `&` (`,` would clash with `tfrclab evaluate`'s ALGO syntax).

use std::collections::BTreeMap;

/// The parameters a scenario passes to a plugin controller, read by name; a name the
/// controller did not read is an error (a misspelt parameter must not pass silently).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Params {
    values: BTreeMap<String, String>,
}

impl Params {
    /// Parses `alpha=1&beta=0.5` (empty: no parameters); the error names the bad pair.
    pub fn parse(text: &str) -> Result<Params, String> {
        let mut values = BTreeMap::new();
        for pair in text.split('&').filter(|pair| !pair.is_empty()) {
            let Some((key, value)) = pair.split_once('=') else {
                return Err(format!("parameter {pair:?} is not key=value"));
            };
            if key.is_empty() {
                return Err(format!("parameter {pair:?} has no name"));
            }
            if values.insert(key.to_string(), value.to_string()).is_some() {
                return Err(format!("parameter {key:?} is given twice"));
            }
        }
        Ok(Params { values })
    }

    /// Takes the number `name`, or `default` when absent; an error if it is not a finite
    /// number.
    pub fn f64_or(&mut self, name: &str, default: f64) -> Result<f64, String> {
        match self.values.remove(name) {
            None => Ok(default),
            Some(text) => match text.parse::<f64>() {
                Ok(value) if value.is_finite() => Ok(value),
                _ => Err(format!(
                    "parameter {name} must be a finite number, got {text:?}"
                )),
            },
        }
    }

    /// Takes the text `name`, or `default` when absent.
    pub fn str_or(&mut self, name: &str, default: &str) -> String {
        self.values
            .remove(name)
            .unwrap_or_else(|| default.to_string())
    }

    /// Takes the boolean `name` (`true` or `false`), or `default` when absent.
    pub fn bool_or(&mut self, name: &str, default: bool) -> Result<bool, String> {
        match self.values.remove(name).as_deref() {
            None => Ok(default),
            Some("true") => Ok(true),
            Some("false") => Ok(false),
            Some(text) => Err(format!(
                "parameter {name} must be true or false, got {text:?}"
            )),
        }
    }

    /// Succeeds when every parameter was taken; else names those that were not.
    pub fn finish(self) -> Result<(), String> {
        if self.values.is_empty() {
            return Ok(());
        }
        let names: Vec<&str> = self.values.keys().map(String::as_str).collect();
        Err(format!("unknown parameter(s): {}", names.join(", ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_are_read_by_name_and_leftovers_refused() {
        let mut p = Params::parse("alpha=0.5&rule=paper").unwrap();
        assert_eq!(p.f64_or("alpha", 1.0), Ok(0.5));
        assert_eq!(p.f64_or("beta", 0.875), Ok(0.875));
        assert_eq!(p.str_or("rule", "ns2"), "paper");
        assert_eq!(p.finish(), Ok(()));
        let mut p = Params::parse("alpha=x&gamma=1").unwrap();
        assert!(p.f64_or("alpha", 1.0).unwrap_err().contains("alpha"));
        assert!(p.finish().unwrap_err().contains("gamma"));
        assert!(Params::parse("alpha").is_err());
        assert!(Params::parse("a=1&a=2").is_err());
        assert_eq!(Params::parse("").unwrap().finish(), Ok(()));
    }
}
