//! The control services — spawn, delete, move, pause, resume, step — and
//! the run state they change besides the physics, free of Zenoh: the
//! world node's queryables and the ROS services both call into it.

use std::path::{Path, PathBuf};

use flotilla_wire::control::{ClockMode, ControlReply, ControlRequest};
use flotilla_wire::world_to_nodes::WorldChange;

use crate::physics::Physics;
use flotilla_world_file::{load_model, resolve_path};

/// Run state the control services change besides the physics.
#[derive(Debug)]
pub struct RunState {
    /// Stepping is paused.
    pub paused: bool,
    /// Steps still to take while paused (from `step N`).
    pub steps_pending: u64,
    /// How steps are paced.
    pub clock: ClockMode,
    /// Sim seconds per wall second in realtime mode.
    pub real_time_factor: f64,
    /// Set when the clock changed, so that the pacer restarts.
    pub clock_changed: bool,
    /// Stopped (simulation_interfaces' STATE_STOPPED): paused after a reset,
    /// until played again.
    pub stopped: bool,
    /// Directories spawn requests may load model files from.
    pub model_dirs: ModelDirs,
}

/// The directories spawn requests may load model files from: the world
/// file's directory and any given with `--model-dir`, with their
/// subdirectories. A service that loads any path a caller names would read
/// any file the world process can.
#[derive(Debug, Clone, Default)]
pub struct ModelDirs {
    dirs: Vec<PathBuf>,
}

/// A model directory that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ModelDirError {
    /// It does not exist or cannot be read.
    #[error("model directory {}: {cause}", dir.display())]
    Unreadable {
        /// The directory as given.
        dir: PathBuf,
        /// Why.
        cause: std::io::Error,
    },
    /// It is a file.
    #[error("model directory {} is not a directory", .0.display())]
    NotADirectory(PathBuf),
}

impl ModelDirs {
    /// The world file's directory plus `extra`; each must exist.
    pub fn new(world_path: &Path, extra: &[PathBuf]) -> Result<ModelDirs, ModelDirError> {
        let world_dir = world_path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let mut dirs = Vec::new();
        for dir in std::iter::once(world_dir).chain(extra.iter().map(PathBuf::as_path)) {
            let canonical =
                dir.canonicalize().map_err(|cause| ModelDirError::Unreadable { dir: dir.to_path_buf(), cause })?;
            if !canonical.is_dir() {
                return Err(ModelDirError::NotADirectory(dir.to_path_buf()));
            }
            dirs.push(canonical);
        }
        Ok(ModelDirs { dirs })
    }

    /// The allowed directories (canonical).
    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// The model file at `path` if it exists inside an allowed directory.
    pub fn check(&self, path: &Path) -> Result<PathBuf, SpawnError> {
        let canonical =
            path.canonicalize().map_err(|e| SpawnError::ModelInvalid(format!("model file {}: {e}", path.display())))?;
        if self.dirs.iter().any(|dir| canonical.starts_with(dir)) {
            Ok(canonical)
        } else {
            let allowed: Vec<String> = self.dirs.iter().map(|d| d.display().to_string()).collect();
            Err(SpawnError::PathNotAllowed(format!(
                "model file {} is outside the allowed model directories ({}); start the world with --model-dir to allow more",
                path.display(),
                allowed.join(", ")
            )))
        }
    }
}

/// Why a spawn was refused, so that each service can give its own code.
#[derive(Debug, Clone, PartialEq)]
pub enum SpawnError {
    /// Empty, or not usable in a key or frame name.
    NameInvalid(String),
    /// Another model has this name.
    NameTaken(String),
    /// Not finite.
    PoseInvalid(String),
    /// The file is outside the allowed model directories.
    PathNotAllowed(String),
    /// The file is missing or is not a valid model.
    ModelInvalid(String),
    /// The world is full.
    Refused(String),
}

impl std::fmt::Display for SpawnError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SpawnError::NameInvalid(m)
            | SpawnError::NameTaken(m)
            | SpawnError::PoseInvalid(m)
            | SpawnError::PathNotAllowed(m)
            | SpawnError::ModelInvalid(m)
            | SpawnError::Refused(m) => f.write_str(m),
        }
    }
}

impl RunState {
    /// Running (or paused) in `clock` mode at `real_time_factor`.
    pub fn new(clock: ClockMode, real_time_factor: f64, paused: bool, model_dirs: ModelDirs) -> RunState {
        RunState { paused, steps_pending: 0, clock, real_time_factor, clock_changed: false, stopped: false, model_dirs }
    }
}

/// The largest `step N` accepted in one request.
pub const MAX_STEPS_PER_REQUEST: u64 = 10_000_000;

/// Carries out a request; returns the reply and the world change to announce.
pub fn handle(
    physics: &mut Physics,
    run: &mut RunState,
    request: ControlRequest,
) -> (ControlReply, Option<WorldChange>) {
    let result = match request {
        ControlRequest::Spawn { yaml_path, name, namespace, pose } => {
            spawn(physics, &run.model_dirs, &yaml_path, &name, &namespace, pose)
                .map(|()| Some(WorldChange::ModelSpawned { model: name }))
                .map_err(|e| e.to_string())
        }
        ControlRequest::Delete { name } => physics
            .remove_model(&name)
            .map(|()| Some(WorldChange::ModelDeleted { model: name }))
            .map_err(|e| e.to_string()),
        ControlRequest::Move { name, pose } => physics
            .place_model(&name, pose)
            .map(|()| {
                // The event carries the model's pose, which places its first
                // body at `pose`.
                let pose = physics.models().find(|m| m.name == name).map_or(pose, |m| m.pose);
                Some(WorldChange::ModelMoved { model: name, pose })
            })
            .map_err(|e| e.to_string()),
        ControlRequest::Pause => {
            run.paused = true;
            run.steps_pending = 0;
            Ok(None)
        }
        ControlRequest::Resume => {
            run.paused = false;
            run.stopped = false;
            Ok(None)
        }
        ControlRequest::Step { steps } if steps == 0 || steps > MAX_STEPS_PER_REQUEST => {
            Err(format!("steps must be 1..={MAX_STEPS_PER_REQUEST}, got {steps}"))
        }
        ControlRequest::Step { steps } => {
            run.paused = true;
            run.stopped = false;
            run.steps_pending = run.steps_pending.saturating_add(steps);
            Ok(None)
        }
        ControlRequest::SetClock { real_time_factor: Some(f), .. } if !(f.is_finite() && f > 0.0) => {
            Err(format!("the real-time factor must be a positive number, got {f}"))
        }
        ControlRequest::SetClock { mode, real_time_factor } => {
            run.clock = mode;
            if let Some(f) = real_time_factor {
                run.real_time_factor = f;
            }
            run.clock_changed = true;
            Ok(None)
        }
        ControlRequest::SetMap { name, map, pose, only_from } => set_map(physics, name, map, pose, only_from),
    };
    match result {
        Ok(change) => (ControlReply { success: true, message: String::new(), revision: physics.revision() }, change),
        Err(message) => (ControlReply { success: false, message, revision: physics.revision() }, None),
    }
}

/// Puts a model on another map and moves it there, or says why not: the
/// pose is checked before anything changes, so a refused request changes
/// nothing. A request `only_from` a map the model has left already is
/// refused (a transition fires once, however often it is asked).
fn set_map(
    physics: &mut Physics,
    name: String,
    map: String,
    pose: Option<flotilla_wire::geometry::Pose2>,
    only_from: Option<String>,
) -> Result<Option<WorldChange>, String> {
    if let Some(pose) = pose.filter(|p| !p.is_finite()) {
        return Err(format!("pose must be finite, got {pose:?}"));
    }
    let changed = physics.set_map(&name, &map, only_from.as_deref()).map_err(|e| e.to_string())?;
    if !changed {
        return Err(format!(
            "model \"{name}\" is not on map \"{}\" (any more): nothing done",
            only_from.unwrap_or_default()
        ));
    }
    if let Some(pose) = pose {
        physics.place_model(&name, pose).map_err(|e| e.to_string())?;
    }
    tracing::info!("{name} is on map {map} now");
    Ok(Some(WorldChange::MapChanged { model: name, map, pose }))
}

/// Loads a model file and adds it to the world, or says why not.
pub fn spawn(
    physics: &mut Physics,
    model_dirs: &ModelDirs,
    yaml_path: &str,
    name: &str,
    namespace: &str,
    pose: flotilla_wire::geometry::Pose2,
) -> Result<(), SpawnError> {
    if name.is_empty() {
        return Err(SpawnError::NameInvalid("the model name must not be empty".into()));
    }
    flotilla_wire::keys::check_key_chunk("model name", name).map_err(SpawnError::NameInvalid)?;
    if physics.has_model(name) {
        return Err(SpawnError::NameTaken(format!("a model named \"{name}\" already exists")));
    }
    if !pose.is_finite() {
        return Err(SpawnError::PoseInvalid(format!("pose must be finite, got {pose:?}")));
    }
    let path = model_dirs.check(&resolve_path(physics.world_path(), yaml_path))?;
    let layer_names = physics.layer_names().to_vec();
    let model =
        load_model(&path, name, namespace, pose, &layer_names).map_err(|e| SpawnError::ModelInvalid(e.to_string()))?;
    physics.add_model(model).map_err(|e| SpawnError::Refused(e.to_string()))
}
