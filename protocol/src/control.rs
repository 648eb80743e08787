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
    /// Flatland's `move_model`.
    Move {
        /// The model to move.
        name: String,
        /// Its new pose.
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
