//! `flatland_msgs`: Flatland's model spawning, deleting and moving
//! services, and its bumper's collision messages.

use serde::{Deserialize, Serialize};

use super::geometry_msgs::Pose2D;
use super::std_msgs::Header;
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

/// `flatland_msgs/msg/Vector2`: a point or direction in the plane, m.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Vector2 {
    /// x.
    pub x: f64,
    /// y.
    pub y: f64,
}

impl RosMessage for Vector2 {
    const TYPE_NAME: &'static str = "flatland_msgs/msg/Vector2";
}

/// `flatland_msgs/msg/Collision`: one body of a model touching something.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Collision {
    /// The bumper's model.
    pub entity_a: String,
    /// The model's body.
    pub body_a: String,
    /// What it touches: a model's name, or a layer's.
    pub entity_b: String,
    /// The body touched (a layer's name for a layer).
    pub body_b: String,
    /// Force at each contact point, N (a ball-park figure).
    pub magnitude_forces: Vec<f64>,
    /// Contact points in the bumper's world frame, m.
    pub contact_positions: Vec<Vector2>,
    /// Contact normals, from body A towards body B.
    pub contact_normals: Vec<Vector2>,
}

impl RosMessage for Collision {
    const TYPE_NAME: &'static str = "flatland_msgs/msg/Collision";
}

/// `flatland_msgs/msg/Collisions`: what a bumper's model touches.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Collisions {
    /// Sim time, and the bumper's `world_frame_id`.
    pub header: Header,
    /// One entry per touching pair of shapes.
    pub collisions: Vec<Collision>,
}

impl RosMessage for Collisions {
    const TYPE_NAME: &'static str = "flatland_msgs/msg/Collisions";
}
