//! The error of every loader: which file, which entity, what is wrong.

use std::fmt;
use std::path::{Path, PathBuf};

/// A world, model, map or plugin configuration that cannot be loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError {
    /// The file that holds the problem.
    pub file: PathBuf,
    /// The entity in it, e.g. `model "turtlebot" body "base" footprints index 1`
    /// (empty for the file as a whole).
    pub entity: String,
    /// What is wrong, naming the entry and the value.
    pub message: String,
}

impl LoadError {
    /// An error about an entity of a file.
    pub fn new(file: &Path, entity: impl Into<String>, message: impl Into<String>) -> LoadError {
        LoadError { file: file.to_path_buf(), entity: entity.into(), message: message.into() }
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.entity.is_empty() {
            write!(f, "{}: {}", self.file.display(), self.message)
        } else {
            write!(f, "{}: {}: {}", self.file.display(), self.entity, self.message)
        }
    }
}

impl std::error::Error for LoadError {}
