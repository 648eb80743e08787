//! Reading Flatland YAML with errors that name the file, the entity and the
//! entry, in the manner of Flatland's `YamlReader`: every access is recorded so
//! that unrecognised entries (typos) are reported together instead of being
//! silently ignored.

mod error;
mod reader;

pub use error::LoadError;
pub use reader::{describe, FromYaml, Reader};
