//! The ROS 2 services a Flotilla world serves, with their names and types:
//! Flatland's and the standard `simulation_interfaces` ones. The world
//! answers them; the bridge announces them to DDS.

use super::simulation_interfaces as si;
use super::{flatland_msgs, std_srvs, RosService};

/// Every ROS service the world serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Service {
    /// Flatland's `spawn_model`.
    SpawnModel,
    /// Flatland's `delete_model`.
    DeleteModel,
    /// Flatland's `move_model`.
    MoveModel,
    /// Flatland's `pause`.
    Pause,
    /// Flatland's `resume`.
    Resume,
    /// Flatland's `toggle_pause`.
    TogglePause,
    /// `get_simulator_features`.
    GetSimulatorFeatures,
    /// `spawn_entity`.
    SpawnEntity,
    /// `spawn_entities`.
    SpawnEntities,
    /// `delete_entity`.
    DeleteEntity,
    /// `get_entities`.
    GetEntities,
    /// `get_entity_state`.
    GetEntityState,
    /// `get_entities_states`.
    GetEntitiesStates,
    /// `get_entity_info`.
    GetEntityInfo,
    /// `set_entity_info`.
    SetEntityInfo,
    /// `get_entity_bounds`.
    GetEntityBounds,
    /// `get_current_world`.
    GetCurrentWorld,
    /// `get_spawnables`.
    GetSpawnables,
    /// `set_entity_state`.
    SetEntityState,
    /// `get_simulation_state`.
    GetSimulationState,
    /// `set_simulation_state`.
    SetSimulationState,
    /// `reset_simulation`.
    ResetSimulation,
    /// `step_simulation`.
    StepSimulation,
    /// `get_available_worlds`.
    GetAvailableWorlds,
    /// `load_world`.
    LoadWorld,
    /// `unload_world`.
    UnloadWorld,
    /// `get_named_poses`.
    GetNamedPoses,
    /// `get_named_pose_bounds`.
    GetNamedPoseBounds,
}

impl Service {
    /// Every service.
    pub const ALL: [Service; 28] = [
        Service::SpawnModel,
        Service::DeleteModel,
        Service::MoveModel,
        Service::Pause,
        Service::Resume,
        Service::TogglePause,
        Service::GetSimulatorFeatures,
        Service::SpawnEntity,
        Service::SpawnEntities,
        Service::DeleteEntity,
        Service::GetEntities,
        Service::GetEntityState,
        Service::GetEntitiesStates,
        Service::GetEntityInfo,
        Service::SetEntityInfo,
        Service::GetEntityBounds,
        Service::GetCurrentWorld,
        Service::GetSpawnables,
        Service::SetEntityState,
        Service::GetSimulationState,
        Service::SetSimulationState,
        Service::ResetSimulation,
        Service::StepSimulation,
        Service::GetAvailableWorlds,
        Service::LoadWorld,
        Service::UnloadWorld,
        Service::GetNamedPoses,
        Service::GetNamedPoseBounds,
    ];

    /// The ROS service name (absolute; the world's ROS prefix goes in front).
    pub fn ros_name(self) -> &'static str {
        match self {
            Service::SpawnModel => "/spawn_model",
            Service::DeleteModel => "/delete_model",
            Service::MoveModel => "/move_model",
            Service::Pause => "/pause",
            Service::Resume => "/resume",
            Service::TogglePause => "/toggle_pause",
            Service::GetSimulatorFeatures => "/get_simulator_features",
            Service::SpawnEntity => "/spawn_entity",
            Service::SpawnEntities => "/spawn_entities",
            Service::DeleteEntity => "/delete_entity",
            Service::GetEntities => "/get_entities",
            Service::GetEntityState => "/get_entity_state",
            Service::GetEntitiesStates => "/get_entities_states",
            Service::GetEntityInfo => "/get_entity_info",
            Service::SetEntityInfo => "/set_entity_info",
            Service::GetEntityBounds => "/get_entity_bounds",
            Service::GetCurrentWorld => "/get_current_world",
            Service::GetSpawnables => "/get_spawnables",
            Service::SetEntityState => "/set_entity_state",
            Service::GetSimulationState => "/get_simulation_state",
            Service::SetSimulationState => "/set_simulation_state",
            Service::ResetSimulation => "/reset_simulation",
            Service::StepSimulation => "/step_simulation",
            Service::GetAvailableWorlds => "/get_available_worlds",
            Service::LoadWorld => "/load_world",
            Service::UnloadWorld => "/unload_world",
            Service::GetNamedPoses => "/get_named_poses",
            Service::GetNamedPoseBounds => "/get_named_pose_bounds",
        }
    }

    /// The ROS service type, e.g. `flatland_msgs/srv/SpawnModel`.
    pub fn type_name(self) -> &'static str {
        match self {
            Service::SpawnModel => flatland_msgs::SpawnModel::TYPE_NAME,
            Service::DeleteModel => flatland_msgs::DeleteModel::TYPE_NAME,
            Service::MoveModel => flatland_msgs::MoveModel::TYPE_NAME,
            Service::Pause | Service::Resume | Service::TogglePause => std_srvs::Empty::TYPE_NAME,
            Service::GetSimulatorFeatures => si::GetSimulatorFeatures::TYPE_NAME,
            Service::SpawnEntity => si::SpawnEntity::TYPE_NAME,
            Service::SpawnEntities => si::SpawnEntities::TYPE_NAME,
            Service::DeleteEntity => si::DeleteEntity::TYPE_NAME,
            Service::GetEntities => si::GetEntities::TYPE_NAME,
            Service::GetEntityState => si::GetEntityState::TYPE_NAME,
            Service::GetEntitiesStates => si::GetEntitiesStates::TYPE_NAME,
            Service::GetEntityInfo => si::GetEntityInfo::TYPE_NAME,
            Service::SetEntityInfo => si::SetEntityInfo::TYPE_NAME,
            Service::GetEntityBounds => si::GetEntityBounds::TYPE_NAME,
            Service::GetCurrentWorld => si::GetCurrentWorld::TYPE_NAME,
            Service::GetSpawnables => si::GetSpawnables::TYPE_NAME,
            Service::SetEntityState => si::SetEntityState::TYPE_NAME,
            Service::GetSimulationState => si::GetSimulationState::TYPE_NAME,
            Service::SetSimulationState => si::SetSimulationState::TYPE_NAME,
            Service::ResetSimulation => si::ResetSimulation::TYPE_NAME,
            Service::StepSimulation => si::StepSimulation::TYPE_NAME,
            Service::GetAvailableWorlds => si::GetAvailableWorlds::TYPE_NAME,
            Service::LoadWorld => si::LoadWorld::TYPE_NAME,
            Service::UnloadWorld => si::UnloadWorld::TYPE_NAME,
            Service::GetNamedPoses => si::GetNamedPoses::TYPE_NAME,
            Service::GetNamedPoseBounds => si::GetNamedPoseBounds::TYPE_NAME,
        }
    }
}

/// An action the world serves (on the keys zenoh-plugin-ros2dds routes an
/// action on: `<name>/_action/send_goal`, `cancel_goal`, `get_result`,
/// `feedback`, `status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Action {
    /// The ROS name (absolute; the world's ROS prefix goes in front).
    pub ros_name: &'static str,
    /// The ROS type.
    pub type_name: &'static str,
}

/// `simulation_interfaces/action/SimulateSteps`.
pub const SIMULATE_STEPS: Action =
    Action { ros_name: "/simulate_steps", type_name: "simulation_interfaces/action/SimulateSteps" };

/// Every action the world serves.
pub const ACTIONS: [Action; 1] = [SIMULATE_STEPS];
