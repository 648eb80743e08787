//! Control services of the world (`flotilla/<sim>/control/<verb>`).
//!
//! Each is a Zenoh queryable: the request is the query payload, and exactly one
//! [`ControlReply`] comes back.

use serde::{Deserialize, Serialize};

use crate::codec::WireMessage;
use crate::geometry::Pose2;

/// The control verbs, i.e. the last chunk of the control key.
pub mod verbs {
    /// Spawn a model from a model YAML file.
    pub const SPAWN: &str = "spawn";
    /// Delete a model.
    pub const DELETE: &str = "delete";
    /// Teleport a model.
    pub const MOVE: &str = "move";
    /// Stop stepping.
    pub const PAUSE: &str = "pause";
    /// Resume stepping.
    pub const RESUME: &str = "resume";
    /// Step N times while paused.
    pub const STEP: &str = "step";
    /// Change the clock mode.
    pub const CLOCK: &str = "clock";
    /// Put a robot on another map.
    pub const SET_MAP: &str = "set_map";
}

/// How the world paces its steps (ARCHITECTURE.md, "Rules every process follows").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum ClockMode {
    /// Steps paced to the wall clock times the real-time factor.
    #[default]
    Realtime,
    /// Step as fast as possible, waiting for no one.
    Fast,
    /// Deterministic: after each state, wait until every live lockstep
    /// participant has reported that it is done with that step.
    Lockstep,
    /// Follow a `clock` published by someone else.
    External,
}

impl ClockMode {
    /// The name used in world files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            ClockMode::Realtime => "realtime",
            ClockMode::Fast => "fast",
            ClockMode::Lockstep => "lockstep",
            ClockMode::External => "external",
        }
    }
}

impl std::fmt::Display for ClockMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for ClockMode {
    type Err = String;
    fn from_str(s: &str) -> Result<ClockMode, String> {
        match s {
            "realtime" => Ok(ClockMode::Realtime),
            "fast" => Ok(ClockMode::Fast),
            "lockstep" => Ok(ClockMode::Lockstep),
            "external" => Ok(ClockMode::External),
            other => Err(format!("unknown clock mode {other:?}; expected realtime, fast, lockstep or external")),
        }
    }
}

/// A request to a control service.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ControlRequest {
    /// Flatland's `spawn_model`.
    Spawn {
        /// Path of the model YAML file (absolute, or relative to the world file).
        yaml_path: String,
        /// Name of the new model, unique in the world.
        name: String,
        /// Namespace of the model's topics and frames (`""` for none).
        namespace: String,
        /// Initial pose of the model.
        pose: Pose2,
    },
    /// Flatland's `delete_model`.
    Delete {
        /// The model to delete.
        name: String,
    },
    /// Flatland's `move_model`: the model's first body lands at `pose`,
    /// the others where they are relative to it, velocities zeroed.
    Move {
        /// The model to move.
        name: String,
        /// Where its first body goes.
        pose: Pose2,
    },
    /// Stop stepping.
    Pause,
    /// Resume stepping.
    Resume,
    /// Step `steps` times, then stay paused.
    Step {
        /// How many steps.
        steps: u64,
    },
    /// Switch the clock mode (and, for realtime, the real-time factor).
    SetClock {
        /// The new mode.
        mode: ClockMode,
        /// New real-time factor, if it changes.
        real_time_factor: Option<f64>,
    },
    /// Put a model on another map (see `MapDescription`), between two
    /// steps, and teleport it there if `pose` is given.
    SetMap {
        /// The model.
        name: String,
        /// The map it goes to.
        map: String,
        /// Where its first body lands, if it moves (as for `Move`).
        pose: Option<Pose2>,
        /// Only if the model is on this map now: a transition fires once
        /// even when it is asked twice (a restarted manager, two managers).
        only_from: Option<String>,
    },
}

impl ControlRequest {
    /// The control verb (last key chunk) that carries this request.
    pub fn verb(&self) -> &'static str {
        match self {
            ControlRequest::Spawn { .. } => verbs::SPAWN,
            ControlRequest::Delete { .. } => verbs::DELETE,
            ControlRequest::Move { .. } => verbs::MOVE,
            ControlRequest::Pause => verbs::PAUSE,
            ControlRequest::Resume => verbs::RESUME,
            ControlRequest::Step { .. } => verbs::STEP,
            ControlRequest::SetClock { .. } => verbs::CLOCK,
            ControlRequest::SetMap { .. } => verbs::SET_MAP,
        }
    }
}

impl WireMessage for ControlRequest {
    const KIND: &'static str = "ControlRequest";
}

/// The answer of a control service.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ControlReply {
    /// Whether the request was carried out.
    pub success: bool,
    /// Empty on success, otherwise what was wrong.
    pub message: String,
    /// Description revision after the request.
    pub revision: u64,
}

impl WireMessage for ControlReply {
    const KIND: &'static str = "ControlReply";
}
