//! `flatland_msgs` services: Flatland's model spawning, deleting and moving.

use serde::{Deserialize, Serialize};

use super::geometry_msgs::Pose2D;
use super::{RosMessage, RosService};

/// The reply of every Flatland model service.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ModelServiceResponse {
    /// Whether the request was carried out.
    pub success: bool,
    /// Empty on success, otherwise what was wrong.
    pub message: String,
}

impl ModelServiceResponse {
    /// The reply for `result`.
    pub fn from_result(result: Result<(), String>) -> ModelServiceResponse {
        match result {
            Ok(()) => ModelServiceResponse { success: true, message: String::new() },
            Err(message) => ModelServiceResponse { success: false, message },
        }
    }
}

impl RosMessage for ModelServiceResponse {
    const TYPE_NAME: &'static str = "flatland_msgs/srv/SpawnModel_Response";
}

/// `flatland_msgs/srv/SpawnModel` request.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SpawnModelRequest {
    /// Path of the model YAML file.
    pub yaml_path: String,
    /// Name of the new model.
    pub name: String,
    /// Namespace of its topics and frames.
    pub ns: String,
    /// Initial pose in the map frame.
    pub pose: Pose2D,
}

impl RosMessage for SpawnModelRequest {
    const TYPE_NAME: &'static str = "flatland_msgs/srv/SpawnModel_Request";
}

/// `flatland_msgs/srv/SpawnModel`.
pub struct SpawnModel;

impl RosService for SpawnModel {
    const TYPE_NAME: &'static str = "flatland_msgs/srv/SpawnModel";
    type Request = SpawnModelRequest;
    type Response = ModelServiceResponse;
}

/// `flatland_msgs/srv/DeleteModel` request.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DeleteModelRequest {
    /// The model to delete.
    pub name: String,
}

impl RosMessage for DeleteModelRequest {
    const TYPE_NAME: &'static str = "flatland_msgs/srv/DeleteModel_Request";
}

/// `flatland_msgs/srv/DeleteModel`.
pub struct DeleteModel;

impl RosService for DeleteModel {
    const TYPE_NAME: &'static str = "flatland_msgs/srv/DeleteModel";
    type Request = DeleteModelRequest;
    type Response = ModelServiceResponse;
}

/// `flatland_msgs/srv/MoveModel` request.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct MoveModelRequest {
    /// The model to move.
    pub name: String,
    /// Its new pose in the map frame.
    pub pose: Pose2D,
}

impl RosMessage for MoveModelRequest {
    const TYPE_NAME: &'static str = "flatland_msgs/srv/MoveModel_Request";
}

/// `flatland_msgs/srv/MoveModel`.
pub struct MoveModel;

impl RosService for MoveModel {
    const TYPE_NAME: &'static str = "flatland_msgs/srv/MoveModel";
    type Request = MoveModelRequest;
    type Response = ModelServiceResponse;
}
