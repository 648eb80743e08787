//! Loading Flatland worlds unchanged, without the physics engine: `flotilla
//! check`, the launcher, the bridge's tests and the sensors' tests and
//! benches read worlds through this crate alone: world file, layers (map_server images
//! and line-segment files), model files and the YAML preprocessor.
//!
//! Loading is all-or-nothing: the first problem stops it with a [`LoadError`]
//! naming the file, the entity and the entry, and nothing is half-built.

mod building;
mod crowd;
mod crowd_pedsim;
mod flat_world;
mod map_armap;
mod map_image;
mod map_lines;
mod model_file;
mod named_poses;
mod preprocess;
mod settings;
mod sources;
mod world_file;

use std::path::{Path, PathBuf};

pub use crowd::{AGENT_BODY, AGENT_PLUGIN};
pub use crowd_pedsim::QUEUE_PAUSE_S;
pub use flotilla_plugins::config::LoadError;
pub use map_armap::ArMapLayer;
pub use map_image::vectorize_occupancy;
pub use model_file::load_model;
pub use named_poses::{NamedPose, PoseBounds};
pub use settings::{ClockMode, StallPolicy, WorldSettings};
pub use world_file::{load_world, load_world_with_sources, WorldSpec, FIRST_BODY_ID};

/// Resolves a path written in `relative_to`: absolute paths stay, relative
/// ones are taken from the directory of `relative_to` (Flatland's rule).
pub fn resolve_path(relative_to: &Path, written: &str) -> PathBuf {
    let written = Path::new(written);
    if written.is_absolute() {
        written.to_path_buf()
    } else {
        relative_to.parent().unwrap_or_else(|| Path::new(".")).join(written)
    }
}

/// Reads and preprocesses a YAML file.
pub(crate) fn read_yaml(path: &Path, entity: &str) -> Result<serde_yaml::Value, LoadError> {
    sources::note(path);
    let text = std::fs::read_to_string(path).map_err(|e| {
        let why =
            if e.kind() == std::io::ErrorKind::NotFound { "file does not exist".to_string() } else { e.to_string() };
        LoadError::new(path, entity, format!("cannot read {}: {why}", path.display()))
    })?;
    let value: serde_yaml::Value =
        serde_yaml::from_str(&text).map_err(|e| LoadError::new(path, entity, format!("invalid YAML: {e}")))?;
    preprocess::preprocess(value, path)
}

/// What a glance at a world file shows, without loading its maps and models.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorldGlance {
    /// Its layer names, in order.
    pub layer_names: Vec<String>,
    /// How many models it places.
    pub models: usize,
}

/// A glance at the YAML file at `path`: `None` unless it is a YAML map with
/// `properties` and a `layers` list, as a Flatland world file is (for
/// listing worlds; [`load_world`] is what checks one).
pub fn glance_at_world(path: &Path) -> Option<WorldGlance> {
    let yaml: serde_yaml::Value = serde_yaml::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    let map = yaml.as_mapping()?;
    map.get("properties")?;
    let layer_names = map
        .get("layers")?
        .as_sequence()?
        .iter()
        .flat_map(|layer| match layer.get("name") {
            Some(serde_yaml::Value::Sequence(names)) => {
                names.iter().filter_map(|n| n.as_str()).map(str::to_string).collect()
            }
            Some(name) => name.as_str().map(str::to_string).into_iter().collect(),
            None => Vec::new(),
        })
        .collect();
    let models = map.get("models").and_then(|m| m.as_sequence()).map_or(0, Vec::len);
    Some(WorldGlance { layer_names, models })
}
