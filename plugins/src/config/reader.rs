//! [`Reader`]: typed access to one YAML mapping with access tracking.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::path::Path;

use serde_yaml::Value;

use super::LoadError;

/// Conversion of one YAML value to a Rust value, with a message on failure.
pub trait FromYaml: Sized {
    /// Converts, or says what was expected.
    fn from_yaml(value: &Value) -> Result<Self, String>;
}

impl FromYaml for f64 {
    fn from_yaml(value: &Value) -> Result<f64, String> {
        match value {
            Value::Number(n) => n.as_f64().ok_or_else(|| format!("{n} is not a number")),
            // Flatland writes infinite rates as `inf` too, which YAML reads as a string.
            Value::String(s) => match s.trim() {
                "inf" | ".inf" | "+inf" | "Inf" => Ok(f64::INFINITY),
                "-inf" | "-.inf" => Ok(f64::NEG_INFINITY),
                other => other.parse::<f64>().map_err(|_| format!("expected a number, got {s:?}")),
            },
            other => Err(format!("expected a number, got {}", describe(other))),
        }
    }
}

impl FromYaml for bool {
    fn from_yaml(value: &Value) -> Result<bool, String> {
        match value {
            Value::Bool(b) => Ok(*b),
            // `$eval` results and quoted flags arrive as strings.
            Value::String(s) if s.eq_ignore_ascii_case("true") => Ok(true),
            Value::String(s) if s.eq_ignore_ascii_case("false") => Ok(false),
            other => Err(format!("expected true or false, got {}", describe(other))),
        }
    }
}

impl FromYaml for String {
    fn from_yaml(value: &Value) -> Result<String, String> {
        match value {
            Value::String(s) => Ok(s.clone()),
            Value::Number(n) => Ok(n.to_string()),
            Value::Bool(b) => Ok(b.to_string()),
            other => Err(format!("expected a string, got {}", describe(other))),
        }
    }
}

impl FromYaml for u64 {
    fn from_yaml(value: &Value) -> Result<u64, String> {
        match value {
            Value::Number(n) => n.as_u64().ok_or_else(|| format!("expected a whole number ≥ 0, got {n}")),
            Value::String(s) => s.trim().parse().map_err(|_| format!("expected a whole number ≥ 0, got {s:?}")),
            other => Err(format!("expected a whole number, got {}", describe(other))),
        }
    }
}

impl FromYaml for Value {
    fn from_yaml(value: &Value) -> Result<Value, String> {
        Ok(value.clone())
    }
}

/// A short description of a YAML value for error messages.
pub fn describe(value: &Value) -> String {
    match value {
        Value::Null => "nothing (null)".into(),
        Value::Bool(b) => format!("{b}"),
        Value::Number(n) => format!("{n}"),
        Value::String(s) => format!("{s:?}"),
        Value::Sequence(s) => format!("a list of {} elements", s.len()),
        Value::Mapping(_) => "a map".into(),
        Value::Tagged(t) => format!("a value tagged {}", t.tag),
    }
}

/// Typed access to the entries of one YAML mapping.
///
/// Every getter records the key it read; [`Reader::finish`] then rejects the
/// entries nobody read, naming all of them.
pub struct Reader<'a> {
    map: &'a serde_yaml::Mapping,
    file: &'a Path,
    entity: String,
    accessed: RefCell<BTreeSet<String>>,
}

impl<'a> Reader<'a> {
    /// A reader over `value`, which must be a mapping; `what` says what the
    /// mapping is when it is not (e.g. `the world file`).
    pub fn new(value: &'a Value, file: &'a Path, entity: impl Into<String>) -> Result<Reader<'a>, LoadError> {
        let entity = entity.into();
        match value {
            Value::Mapping(map) => Ok(Reader { map, file, entity, accessed: RefCell::default() }),
            other => Err(LoadError::new(file, entity, format!("expected a map of entries, got {}", describe(other)))),
        }
    }

    /// The file being read.
    pub fn file(&self) -> &'a Path {
        self.file
    }

    /// The entity being read, for error messages.
    pub fn entity(&self) -> &str {
        &self.entity
    }

    /// An error about this entity.
    pub fn error(&self, message: impl Into<String>) -> LoadError {
        LoadError::new(self.file, self.entity.clone(), message)
    }

    /// The raw value of `key`, if present (records the access).
    pub fn raw(&self, key: &str) -> Option<&'a Value> {
        self.accessed.borrow_mut().insert(key.to_string());
        match self.map.get(key) {
            None | Some(Value::Null) => None,
            Some(v) => Some(v),
        }
    }

    /// Whether `key` is present (does not count as reading it).
    pub fn has(&self, key: &str) -> bool {
        !matches!(self.map.get(key), None | Some(Value::Null))
    }

    fn convert<T: FromYaml>(&self, key: &str, value: &Value) -> Result<T, LoadError> {
        T::from_yaml(value).map_err(|e| self.error(format!("entry \"{key}\": {e}")))
    }

    /// A required entry.
    pub fn req<T: FromYaml>(&self, key: &str) -> Result<T, LoadError> {
        match self.raw(key) {
            Some(v) => self.convert(key, v),
            None => Err(self.error(format!("entry \"{key}\" does not exist"))),
        }
    }

    /// An optional entry with a default.
    pub fn opt<T: FromYaml>(&self, key: &str, default: T) -> Result<T, LoadError> {
        match self.raw(key) {
            Some(v) => self.convert(key, v),
            None => Ok(default),
        }
    }

    /// An optional entry without a default.
    pub fn maybe<T: FromYaml>(&self, key: &str) -> Result<Option<T>, LoadError> {
        self.raw(key).map(|v| self.convert(key, v)).transpose()
    }

    /// A required list with `min..=max` elements (`None` = unbounded).
    pub fn list<T: FromYaml>(&self, key: &str, min: Option<usize>, max: Option<usize>) -> Result<Vec<T>, LoadError> {
        match self.raw(key) {
            Some(v) => self.convert_list(key, v, min, max),
            None => Err(self.error(format!("entry \"{key}\" does not exist"))),
        }
    }

    /// An optional list with a default.
    pub fn opt_list<T: FromYaml>(
        &self,
        key: &str,
        default: Vec<T>,
        min: Option<usize>,
        max: Option<usize>,
    ) -> Result<Vec<T>, LoadError> {
        match self.raw(key) {
            Some(v) => self.convert_list(key, v, min, max),
            None => Ok(default),
        }
    }

    fn convert_list<T: FromYaml>(
        &self,
        key: &str,
        value: &Value,
        min: Option<usize>,
        max: Option<usize>,
    ) -> Result<Vec<T>, LoadError> {
        let Value::Sequence(items) = value else {
            return Err(self.error(format!("\"{key}\" must be a list, got {}", describe(value))));
        };
        let n = items.len();
        match (min, max) {
            (Some(lo), Some(hi)) if lo == hi && n != lo => {
                return Err(self.error(format!("\"{key}\" must have exactly {lo} elements, got {n}")))
            }
            (Some(lo), _) if n < lo => {
                return Err(self.error(format!("\"{key}\" must have at least {lo} elements, got {n}")))
            }
            (_, Some(hi)) if n > hi => {
                return Err(self.error(format!("\"{key}\" must have at most {hi} elements, got {n}")))
            }
            _ => {}
        }
        items
            .iter()
            .enumerate()
            .map(|(i, item)| T::from_yaml(item).map_err(|e| self.error(format!("\"{key}\" index {i}: {e}"))))
            .collect()
    }

    /// A fixed-size array of numbers, e.g. a colour or an anchor.
    pub fn array<const N: usize>(&self, key: &str, default: Option<[f64; N]>) -> Result<[f64; N], LoadError> {
        if default.is_some() && !self.has(key) {
            self.raw(key);
            return Ok(default.unwrap_or([0.0; N]));
        }
        let list = self.list::<f64>(key, Some(N), Some(N))?;
        let mut out = [0.0; N];
        out.copy_from_slice(&list);
        Ok(out)
    }

    /// A list of points `[[x, y], ...]` with a bound on their number.
    pub fn points(&self, key: &str, min: usize, max: usize) -> Result<Vec<[f64; 2]>, LoadError> {
        let raw: Vec<Value> = self.list(key, Some(min), Some(max))?;
        raw.iter()
            .enumerate()
            .map(|(i, p)| match p {
                Value::Sequence(xy) if xy.len() == 2 => {
                    let x = f64::from_yaml(&xy[0]);
                    let y = f64::from_yaml(&xy[1]);
                    match (x, y) {
                        (Ok(x), Ok(y)) => Ok([x, y]),
                        (Err(e), _) | (_, Err(e)) => Err(self.error(format!("\"{key}\" index {i}: {e}"))),
                    }
                }
                other => {
                    Err(self.error(format!("\"{key}\" index {i} must be a point [x, y], got {}", describe(other))))
                }
            })
            .collect()
    }

    /// A required or optional sub-map, as a reader for `entity`.
    pub fn sub(&self, key: &str, entity: impl Into<String>) -> Result<Option<Reader<'a>>, LoadError> {
        match self.raw(key) {
            None => Ok(None),
            Some(v @ Value::Mapping(_)) => Reader::new(v, self.file, entity).map(Some),
            Some(other) => Err(self.error(format!("\"{key}\" must be a map, got {}", describe(other)))),
        }
    }

    /// A list of maps (e.g. `bodies`): `None` when absent.
    pub fn seq(&self, key: &str) -> Result<Option<&'a [Value]>, LoadError> {
        match self.raw(key) {
            None => Ok(None),
            Some(Value::Sequence(items)) => Ok(Some(items)),
            Some(other) => Err(self.error(format!("\"{key}\" must be a list, got {}", describe(other)))),
        }
    }

    /// Rejects every entry that was never read, naming them all.
    pub fn finish(&self) -> Result<(), LoadError> {
        let accessed = self.accessed.borrow();
        let unknown: Vec<String> = self
            .map
            .keys()
            .map(|k| match k {
                Value::String(s) => s.clone(),
                other => serde_yaml::to_string(other).unwrap_or_default().trim().to_string(),
            })
            .filter(|k| !accessed.contains(k))
            .collect();
        if unknown.is_empty() {
            Ok(())
        } else {
            Err(self.error(format!(
                "unrecognized {} {}",
                if unknown.len() == 1 { "entry" } else { "entries" },
                unknown.join(", ")
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yaml(text: &str) -> Value {
        serde_yaml::from_str(text).unwrap()
    }

    #[test]
    fn unknown_entries_are_all_named() {
        let v = yaml("{name: a, typo_1: 1, typo_2: 2}");
        let r = Reader::new(&v, Path::new("w.yaml"), "layers index 0").unwrap();
        assert_eq!(r.req::<String>("name").unwrap(), "a");
        let err = r.finish().unwrap_err();
        assert_eq!(err.to_string(), "w.yaml: layers index 0: unrecognized entries typo_1, typo_2");
    }

    #[test]
    fn list_lengths_are_checked_with_the_entry_name() {
        let v = yaml("{color: [1, 2, 3], points: [[0, 0], [1, 0]]}");
        let r = Reader::new(&v, Path::new("m.yaml"), "x").unwrap();
        assert!(r.array::<4>("color", None).unwrap_err().message.contains("\"color\" must have exactly 4 elements"));
        assert!(r.points("points", 3, 8).unwrap_err().message.contains("at least 3"));
    }

    #[test]
    fn numbers_accept_yaml_infinity_spellings() {
        let v = yaml("{a: .inf, b: inf, c: 5, d: '2.5'}");
        let r = Reader::new(&v, Path::new("m.yaml"), "x").unwrap();
        assert_eq!(r.req::<f64>("a").unwrap(), f64::INFINITY);
        assert_eq!(r.req::<f64>("b").unwrap(), f64::INFINITY);
        assert_eq!(r.req::<f64>("c").unwrap(), 5.0);
        assert_eq!(r.req::<f64>("d").unwrap(), 2.5);
        assert!(r.req::<f64>("missing").unwrap_err().message.contains("\"missing\" does not exist"));
    }
}
