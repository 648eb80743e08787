//! `action_msgs` and `unique_identifier_msgs`: what every ROS 2 action
//! carries around its own goal, result and feedback (design.ros2.org,
//! "Actions"), and the `simulation_interfaces/action/SimulateSteps` action's
//! messages as they travel: each goal request, result request and feedback
//! message leads with the goal's id.

use serde::{Deserialize, Serialize};

use super::builtin_interfaces::Time;
use super::simulation_interfaces::SimResult;
use super::RosMessage;

/// `unique_identifier_msgs/msg/UUID`: a goal's id, chosen by the client.
pub type Uuid = [u8; 16];

/// `action_msgs/msg/GoalInfo`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GoalInfo {
    /// The goal's id.
    pub goal_id: Uuid,
    /// When the server accepted it.
    pub stamp: Time,
}

/// `action_msgs/msg/GoalStatus` values.
pub mod goal_status {
    /// Not known (never accepted, or forgotten).
    pub const UNKNOWN: i8 = 0;
    /// Accepted, not yet executing.
    pub const ACCEPTED: i8 = 1;
    /// Executing.
    pub const EXECUTING: i8 = 2;
    /// Being canceled.
    pub const CANCELING: i8 = 3;
    /// Done.
    pub const SUCCEEDED: i8 = 4;
    /// Canceled.
    pub const CANCELED: i8 = 5;
    /// Ended by the server.
    pub const ABORTED: i8 = 6;
}

/// `action_msgs/msg/GoalStatus`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GoalStatus {
    /// Which goal.
    pub goal_info: GoalInfo,
    /// One of [`goal_status`].
    pub status: i8,
}

/// `action_msgs/msg/GoalStatusArray`: every goal the server knows, on the
/// action's `status` topic.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GoalStatusArray {
    /// The goals.
    pub status_list: Vec<GoalStatus>,
}
impl RosMessage for GoalStatusArray {
    const TYPE_NAME: &'static str = "action_msgs/msg/GoalStatusArray";
}

/// `action_msgs/srv/CancelGoal` request: a zero id means every goal, a
/// non-zero stamp every goal accepted at or before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CancelGoalRequest {
    /// Which goals.
    pub goal_info: GoalInfo,
}
impl RosMessage for CancelGoalRequest {
    const TYPE_NAME: &'static str = "action_msgs/srv/CancelGoal_Request";
}

/// `action_msgs/srv/CancelGoal` return codes.
pub mod cancel_code {
    /// Done (the goals are listed).
    pub const NONE: i8 = 0;
    /// Refused.
    pub const REJECTED: i8 = 1;
    /// No goal with that id.
    pub const UNKNOWN_GOAL_ID: i8 = 2;
    /// The goal has already ended.
    pub const GOAL_TERMINATED: i8 = 3;
}

/// `action_msgs/srv/CancelGoal` response.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CancelGoalResponse {
    /// One of [`cancel_code`].
    pub return_code: i8,
    /// The goals now canceling.
    pub goals_canceling: Vec<GoalInfo>,
}
impl RosMessage for CancelGoalResponse {
    const TYPE_NAME: &'static str = "action_msgs/srv/CancelGoal_Response";
}

/// `SimulateSteps_SendGoal` request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SimulateStepsGoalRequest {
    /// The goal's id.
    pub goal_id: Uuid,
    /// Steps to take.
    pub steps: u64,
}
impl RosMessage for SimulateStepsGoalRequest {
    const TYPE_NAME: &'static str = "simulation_interfaces/action/SimulateSteps_SendGoal_Request";
}

/// `*_SendGoal` response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SendGoalResponse {
    /// Whether the goal was accepted.
    pub accepted: bool,
    /// When.
    pub stamp: Time,
}
impl RosMessage for SendGoalResponse {
    const TYPE_NAME: &'static str = "simulation_interfaces/action/SimulateSteps_SendGoal_Response";
}

/// `*_GetResult` request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GetResultRequest {
    /// The goal's id.
    pub goal_id: Uuid,
}
impl RosMessage for GetResultRequest {
    const TYPE_NAME: &'static str = "simulation_interfaces/action/SimulateSteps_GetResult_Request";
}

/// `SimulateSteps_GetResult` response.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SimulateStepsResultResponse {
    /// The goal's final [`goal_status`].
    pub status: i8,
    /// The action's result.
    pub result: SimResult,
}
impl RosMessage for SimulateStepsResultResponse {
    const TYPE_NAME: &'static str = "simulation_interfaces/action/SimulateSteps_GetResult_Response";
}

/// `SimulateSteps_FeedbackMessage`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SimulateStepsFeedback {
    /// The goal's id.
    pub goal_id: Uuid,
    /// Steps taken so far.
    pub completed_steps: u64,
    /// Steps still to take.
    pub remaining_steps: u64,
}
impl RosMessage for SimulateStepsFeedback {
    const TYPE_NAME: &'static str = "simulation_interfaces/action/SimulateSteps_FeedbackMessage";
}
