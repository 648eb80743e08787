//! Flatland's YAML preprocessor: `$include FILE` replaces a scalar with the
//! contents of another YAML file; a `$[include] FILE` item in a sequence is
//! replaced by every document of a multi-document file. Paths are relative to
//! the file being processed. `$eval` runs a sandboxed Lua chunk as
//! Flatland does (see [`super::eval`]), with `param()` reading the file
//! named by `FLOTILLA_PARAMS`, if set.

use std::path::Path;

use serde_yaml::Value;

use super::{resolve_path, LoadError};

/// Includes can nest, but not forever: a file that includes itself is an error.
const MAX_DEPTH: usize = 16;

/// Applies `$include`, `$[include]` and `$eval` throughout `value`.
pub fn preprocess(value: Value, file: &Path) -> Result<Value, LoadError> {
    walk(value, file, 0)
}

fn walk(value: Value, file: &Path, depth: usize) -> Result<Value, LoadError> {
    match value {
        Value::String(s) => scalar(s, file, depth),
        Value::Sequence(items) => {
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                if let Value::String(s) = &item {
                    if let Some(rest) = s.trim_start().strip_prefix("$[include]") {
                        out.extend(include_documents(rest.trim(), file, depth)?);
                        continue;
                    }
                }
                out.push(walk(item, file, depth)?);
            }
            Ok(Value::Sequence(out))
        }
        Value::Mapping(map) => {
            let mut out = serde_yaml::Mapping::with_capacity(map.len());
            for (k, v) in map {
                out.insert(k, walk(v, file, depth)?);
            }
            Ok(Value::Mapping(out))
        }
        other => Ok(other),
    }
}

fn scalar(s: String, file: &Path, depth: usize) -> Result<Value, LoadError> {
    let trimmed = s.trim_start();
    if let Some(rest) = trimmed.strip_prefix("$include") {
        if rest.starts_with(char::is_whitespace) {
            return include_one(rest.trim(), file, depth);
        }
    }
    if let Some(rest) = trimmed.strip_prefix("$eval") {
        let params = eval::params_from_env().map_err(|e| LoadError::new(file, "", e))?;
        return eval::evaluate(rest.trim(), &params)
            .map_err(|e| LoadError::new(file, "", format!("$eval {:?}: {e}", rest.trim())));
    }
    Ok(Value::String(s))
}

fn included_path(written: &str, file: &Path, depth: usize) -> Result<std::path::PathBuf, LoadError> {
    if depth >= MAX_DEPTH {
        return Err(LoadError::new(
            file,
            "",
            format!("includes nested more than {MAX_DEPTH} deep (does {written} include itself?)"),
        ));
    }
    Ok(resolve_path(file, written.trim_matches('"').trim_matches('\'')))
}

fn read(path: &Path, file: &Path) -> Result<String, LoadError> {
    crate::sources::note(path);
    std::fs::read_to_string(path)
        .map_err(|e| LoadError::new(file, "", format!("cannot include {}: {e}", path.display())))
}

fn include_one(written: &str, file: &Path, depth: usize) -> Result<Value, LoadError> {
    let path = included_path(written, file, depth)?;
    let value: Value = serde_yaml::from_str(&read(&path, file)?)
        .map_err(|e| LoadError::new(&path, "", format!("invalid YAML: {e}")))?;
    walk(value, &path, depth + 1)
}

fn include_documents(written: &str, file: &Path, depth: usize) -> Result<Vec<Value>, LoadError> {
    use serde::Deserialize;
    let path = included_path(written, file, depth)?;
    let text = read(&path, file)?;
    let mut out = Vec::new();
    for document in serde_yaml::Deserializer::from_str(&text) {
        let value =
            Value::deserialize(document).map_err(|e| LoadError::new(&path, "", format!("invalid YAML: {e}")))?;
        out.push(walk(value, &path, depth + 1)?);
    }
    Ok(out)
}

#[path = "eval.rs"]
pub(crate) mod eval;

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/fixtures/flatland/yaml_preprocessor");

    fn run(parent: &str) -> Value {
        let dir = tempdir();
        let parent_path = dir.join("parent.yaml");
        std::fs::write(&parent_path, parent.replace("FIXTURES", FIXTURES)).unwrap();
        let value: Value = serde_yaml::from_str(&std::fs::read_to_string(&parent_path).unwrap()).unwrap();
        preprocess(value, &parent_path).unwrap()
    }

    fn tempdir() -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("flotilla-pre-{}-{}", std::process::id(), rand_suffix()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn rand_suffix() -> u64 {
        use std::sync::atomic::{AtomicU64, Ordering};
        static N: AtomicU64 = AtomicU64::new(0);
        N.fetch_add(1, Ordering::Relaxed)
    }

    #[test]
    fn include_replaces_a_scalar_with_a_child_document() {
        let out = run("foo: 123\nbar: $include FIXTURES/include.child.yaml\n");
        // the child includes a string document itself: includes nest
        assert_eq!(out["bar"]["foo"], Value::from("bar"));
        assert_eq!(out["bar"]["spam"], Value::from(2));
        assert_eq!(out["bar"]["eggs"], Value::from("this is a technically a YAML string."));
        assert_eq!(out["foo"], Value::from(123));
    }

    #[test]
    fn bracket_include_splices_every_document_into_a_sequence() {
        let out = run("foo:\n  - first\n  - $[include] FIXTURES/include.sequence.yaml\n  - last\n");
        let items = out["foo"].as_sequence().unwrap();
        assert_eq!(items.first(), Some(&Value::from("first")));
        assert_eq!(items.last(), Some(&Value::from("last")));
        let docs = std::fs::read_to_string(format!("{FIXTURES}/include.sequence.yaml")).unwrap();
        let n = serde_yaml::Deserializer::from_str(&docs).count();
        assert_eq!(items.len(), n + 2);
    }

    #[test]
    fn include_of_a_string_document() {
        let out = run("s: $include FIXTURES/include.string.yaml\n");
        assert!(matches!(out["s"], Value::String(_)), "{:?}", out["s"]);
    }

    #[test]
    fn missing_include_names_the_path() {
        let dir = tempdir();
        let parent = dir.join("parent.yaml");
        let err = preprocess(Value::from("$include nope.yaml"), &parent).unwrap_err();
        assert!(err.message.contains("nope.yaml"), "{err}");
    }
}
