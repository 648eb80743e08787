//! `simulation_interfaces` (ros-simulation/simulation_interfaces 2.x): the
//! standard ROS 2 simulator control API, for the services that apply to a 2D
//! world. Field order follows the `.srv` / `.msg` files, which is the wire
//! order.

use serde::{Deserialize, Serialize};

use super::geometry_msgs::{Accel, Pose, PoseStamped, Twist, Vector3};
use super::std_msgs::Header;
use super::std_srvs::EmptyMessage;
use super::{RosMessage, RosService};

/// `simulation_interfaces/msg/Result` codes shared by every service.
pub mod result_code {
    /// The feature is not supported (see GetSimulatorFeatures).
    pub const FEATURE_UNSUPPORTED: u8 = 0;
    /// Done.
    pub const OK: u8 = 1;
    /// No match for the input, e.g. an unknown entity.
    pub const NOT_FOUND: u8 = 2;
    /// The simulator is in the wrong state for this call.
    pub const INCORRECT_STATE: u8 = 3;
    /// The request could not be carried out.
    pub const OPERATION_FAILED: u8 = 4;
    /// SpawnEntity: the name is taken and renaming is not allowed.
    pub const NAME_NOT_UNIQUE: u8 = 101;
    /// SpawnEntity: the name is not valid here.
    pub const NAME_INVALID: u8 = 102;
    /// SpawnEntity: the resource format is not supported.
    pub const UNSUPPORTED_FORMAT: u8 = 103;
    /// SpawnEntity: neither uri nor resource string was given.
    pub const NO_RESOURCE: u8 = 104;
    /// SpawnEntity: the namespace is not valid.
    pub const NAMESPACE_INVALID: u8 = 105;
    /// SpawnEntity: the resource failed to parse.
    pub const RESOURCE_PARSE_ERROR: u8 = 106;
    /// SpawnEntity: the pose is invalid.
    pub const INVALID_POSE: u8 = 109;
    /// SetEntityState: the pose is invalid.
    pub const SET_STATE_INVALID_POSE: u8 = 101;
    /// SetSimulationState: already in the target state.
    pub const ALREADY_IN_TARGET_STATE: u8 = 101;
    /// SetSimulationState: the transition failed.
    pub const STATE_TRANSITION_ERROR: u8 = 102;
    /// SetSimulationState: the transition is not allowed.
    pub const INCORRECT_TRANSITION: u8 = 103;
}

/// `simulation_interfaces/msg/Result`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SimResult {
    /// One of [`result_code`].
    pub result: u8,
    /// What went wrong, when useful.
    pub error_message: String,
}

impl SimResult {
    /// Success.
    pub fn ok() -> SimResult {
        SimResult { result: result_code::OK, error_message: String::new() }
    }

    /// A failure with `code` and a message.
    pub fn fail(code: u8, message: impl Into<String>) -> SimResult {
        SimResult { result: code, error_message: message.into() }
    }
}

/// `simulation_interfaces/msg/SimulatorFeatures` feature numbers.
pub mod feature {
    /// SpawnEntity.
    pub const SPAWNING: u16 = 0;
    /// DeleteEntity.
    pub const DELETING: u16 = 1;
    /// Category filters in GetEntities.
    pub const ENTITY_CATEGORIES: u16 = 8;
    /// GetEntityState.
    pub const ENTITY_STATE_GETTING: u16 = 10;
    /// SetEntityState.
    pub const ENTITY_STATE_SETTING: u16 = 11;
    /// GetEntityInfo.
    pub const ENTITY_INFO_GETTING: u16 = 12;
    /// SetEntityInfo.
    pub const ENTITY_INFO_SETTING: u16 = 13;
    /// Tags in EntityFilters.
    pub const ENTITY_TAGS: u16 = 4;
    /// GetEntityBounds.
    pub const ENTITY_BOUNDS: u16 = 5;
    /// GetCurrentWorld.
    pub const WORLD_INFO_GETTING: u16 = 44;
    /// GetSpawnables.
    pub const SPAWNABLES: u16 = 14;
    /// SpawnEntities.
    pub const SPAWNING_ENTITIES: u16 = 50;
    /// ResetSimulation.
    pub const SIMULATION_RESET: u16 = 20;
    /// ResetSimulation with SCOPE_TIME.
    pub const SIMULATION_RESET_TIME: u16 = 21;
    /// ResetSimulation with SCOPE_STATE.
    pub const SIMULATION_RESET_STATE: u16 = 22;
    /// ResetSimulation with SCOPE_SPAWNED.
    pub const SIMULATION_RESET_SPAWNED: u16 = 23;
    /// GetSimulationState.
    pub const SIMULATION_STATE_GETTING: u16 = 24;
    /// SetSimulationState.
    pub const SIMULATION_STATE_SETTING: u16 = 25;
    /// SetSimulationState to STATE_PAUSED.
    pub const SIMULATION_STATE_PAUSE: u16 = 26;
    /// StepSimulation with one step.
    pub const STEP_SIMULATION_SINGLE: u16 = 31;
    /// StepSimulation with several steps.
    pub const STEP_SIMULATION_MULTIPLE: u16 = 32;
    /// GetNamedPoses.
    pub const NAMED_POSES: u16 = 2;
    /// GetNamedPoseBounds.
    pub const POSE_BOUNDS: u16 = 3;
    /// LoadWorld.
    pub const WORLD_LOADING: u16 = 40;
    /// UnloadWorld.
    pub const WORLD_UNLOADING: u16 = 43;
    /// GetAvailableWorlds.
    pub const AVAILABLE_WORLDS: u16 = 45;
    /// The SimulateSteps action.
    pub const STEP_SIMULATION_ACTION: u16 = 33;
}

/// `simulation_interfaces/msg/SimulatorFeatures`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SimulatorFeatures {
    /// Supported [`feature`] numbers.
    pub features: Vec<u16>,
    /// Formats SpawnEntity accepts in `entity_resource.uri`.
    pub spawn_formats: Vec<String>,
    /// Free-form information.
    pub custom_info: String,
}

/// `simulation_interfaces/msg/SimulationState` values.
pub mod simulation_state {
    /// Stopped: paused and reset.
    pub const STOPPED: u8 = 0;
    /// Playing.
    pub const PLAYING: u8 = 1;
    /// Paused.
    pub const PAUSED: u8 = 2;
    /// Quitting.
    pub const QUITTING: u8 = 3;
    /// No world loaded.
    pub const NO_WORLD: u8 = 4;
    /// Loading a world.
    pub const LOADING_WORLD: u8 = 5;
}

/// `simulation_interfaces/msg/SimulationState`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SimulationState {
    /// One of [`simulation_state`].
    pub state: u8,
}

/// `simulation_interfaces/msg/Resource`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Resource {
    /// Where the entity definition is (for Flotilla: a Flatland model YAML path).
    pub uri: String,
    /// An entity definition passed inline (not supported by Flotilla).
    pub resource_string: String,
}

/// `simulation_interfaces/msg/EntityState`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct EntityState {
    /// Frame and stamp; an empty frame means the world frame.
    pub header: Header,
    /// Ground-truth pose.
    pub pose: Pose,
    /// Ground-truth twist.
    pub twist: Twist,
    /// Ground-truth acceleration.
    pub acceleration: Accel,
}

/// `simulation_interfaces/msg/EntityCategory`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct EntityCategory {
    /// The category number.
    pub category: u8,
}

/// `simulation_interfaces/msg/TagsFilter`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TagsFilter {
    /// Tags to match.
    pub tags: Vec<String>,
    /// 0: any tag matches, 1: all must.
    pub filter_mode: u8,
}

/// `Bounds` types.
pub mod bounds_type {
    /// No bounds: unbounded.
    pub const EMPTY: u8 = 0;
    /// An axis-aligned box: upper right and lower left corners.
    pub const BOX: u8 = 1;
    /// A convex hull: at least 3 points.
    pub const CONVEX_HULL: u8 = 2;
    /// A sphere: its centre, then a point whose x is the radius.
    pub const SPHERE: u8 = 3;
}

/// `simulation_interfaces/msg/Bounds`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Bounds {
    /// 0 empty, 1 box, 2 convex hull, 3 sphere.
    #[serde(rename = "type")]
    pub kind: u8,
    /// Points defining the bounds.
    pub points: Vec<Vector3>,
}

/// `simulation_interfaces/msg/EntityFilters`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct EntityFilters {
    /// A regular expression the names must match (empty: all).
    pub filter: String,
    /// Categories (empty: all).
    pub categories: Vec<EntityCategory>,
    /// Tags.
    pub tags: TagsFilter,
    /// Overlap bounds.
    pub bounds: Bounds,
}

macro_rules! service {
    ($(#[$doc:meta])* $service:ident, $name:literal, $request:ty, $response:ty) => {
        $(#[$doc])*
        pub struct $service;

        impl RosService for $service {
            const TYPE_NAME: &'static str = concat!("simulation_interfaces/srv/", $name);
            type Request = $request;
            type Response = $response;
        }
    };
}

macro_rules! message {
    ($type:ty, $name:literal) => {
        impl RosMessage for $type {
            const TYPE_NAME: &'static str = concat!("simulation_interfaces/", $name);
        }
    };
}

/// A response that carries only a [`SimResult`].
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ResultResponse {
    /// The outcome.
    pub result: SimResult,
}
message!(ResultResponse, "srv/*_Response (a Result only)");

/// `GetSimulatorFeatures` response.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GetSimulatorFeaturesResponse {
    /// What this simulator supports.
    pub features: SimulatorFeatures,
}
message!(GetSimulatorFeaturesResponse, "srv/GetSimulatorFeatures_Response");
service!(
    /// What the simulator supports.
    GetSimulatorFeatures, "GetSimulatorFeatures", EmptyMessage, GetSimulatorFeaturesResponse
);

/// `SpawnEntity` request.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SpawnEntityRequest {
    /// Name of the new entity.
    pub name: String,
    /// Whether a taken name may be changed to a free one.
    pub allow_renaming: bool,
    /// The model file.
    pub entity_resource: Resource,
    /// Namespace of the entity's topics and frames.
    pub entity_namespace: String,
    /// Initial pose; the frame must be empty or the world frame.
    pub initial_pose: PoseStamped,
}
message!(SpawnEntityRequest, "srv/SpawnEntity_Request");

/// `SpawnEntity` response.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SpawnEntityResponse {
    /// The outcome.
    pub result: SimResult,
    /// The name the entity got.
    pub entity_name: String,
}
message!(SpawnEntityResponse, "srv/SpawnEntity_Response");
service!(
    /// Spawns an entity.
    SpawnEntity, "SpawnEntity", SpawnEntityRequest, SpawnEntityResponse
);

/// `SpawnEntities` request: a `simulation_interfaces/msg/SpawnEntity` per
/// entity, the same fields as a SpawnEntity request.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SpawnEntitiesRequest {
    /// One request per entity, spawned in order.
    pub spawn_requests: Vec<SpawnEntityRequest>,
}
message!(SpawnEntitiesRequest, "srv/SpawnEntities_Request");

/// `SpawnEntities` response.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SpawnEntitiesResponse {
    /// OK, or ENTITIES_SPAWN_FAILED when any spawn failed.
    pub result: SimResult,
    /// Per request, a `simulation_interfaces/msg/SpawnResult` (the same
    /// fields as a SpawnEntity response).
    pub results: Vec<SpawnEntityResponse>,
}
message!(SpawnEntitiesResponse, "srv/SpawnEntities_Response");
service!(
    /// Spawns several entities.
    SpawnEntities, "SpawnEntities", SpawnEntitiesRequest, SpawnEntitiesResponse
);

/// `SpawnEntities`'s code when any of its spawns failed.
pub const ENTITIES_SPAWN_FAILED: u8 = 150;

/// A request naming one entity (`DeleteEntity`, `GetEntityState`,
/// `GetEntityInfo`: the same CDR).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct EntityRequest {
    /// The entity's unique name.
    pub entity: String,
}
message!(EntityRequest, "srv/DeleteEntity_Request (also GetEntityState_Request)");
service!(
    /// Deletes an entity.
    DeleteEntity, "DeleteEntity", EntityRequest, ResultResponse
);

/// `GetEntities` request.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct GetEntitiesRequest {
    /// Which entities.
    pub filters: EntityFilters,
}
message!(GetEntitiesRequest, "srv/GetEntities_Request");

/// `GetEntities` response.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GetEntitiesResponse {
    /// The outcome.
    pub result: SimResult,
    /// Names of the matching entities.
    pub entities: Vec<String>,
}
message!(GetEntitiesResponse, "srv/GetEntities_Response");
service!(
    /// Lists entities.
    GetEntities, "GetEntities", GetEntitiesRequest, GetEntitiesResponse
);

/// `GetEntitiesStates` request.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct GetEntitiesStatesRequest {
    /// Which entities.
    pub filters: EntityFilters,
}
message!(GetEntitiesStatesRequest, "srv/GetEntitiesStates_Request");

/// `GetEntitiesStates` response.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct GetEntitiesStatesResponse {
    /// The outcome.
    pub result: SimResult,
    /// Names of the matching entities.
    pub entities: Vec<String>,
    /// Their states, in the same order.
    pub states: Vec<EntityState>,
}
message!(GetEntitiesStatesResponse, "srv/GetEntitiesStates_Response");
service!(
    /// Lists entities with their states.
    GetEntitiesStates, "GetEntitiesStates", GetEntitiesStatesRequest, GetEntitiesStatesResponse
);

/// `simulation_interfaces/msg/EntityInfo`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct EntityInfo {
    /// Major category.
    pub category: EntityCategory,
    /// Human-readable description.
    pub description: String,
    /// Tags.
    pub tags: Vec<String>,
}

/// `GetEntityInfo` response.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GetEntityInfoResponse {
    /// The outcome.
    pub result: SimResult,
    /// Valid when the result is OK.
    pub info: EntityInfo,
}
message!(GetEntityInfoResponse, "srv/GetEntityInfo_Response");
service!(
    /// An entity's category and description.
    GetEntityInfo, "GetEntityInfo", EntityRequest, GetEntityInfoResponse
);

/// `SetEntityInfo` request.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SetEntityInfoRequest {
    /// The entity.
    pub entity: String,
    /// Its new info, replacing the current.
    pub info: EntityInfo,
}
message!(SetEntityInfoRequest, "srv/SetEntityInfo_Request");
service!(
    /// Sets an entity's category, description and tags.
    SetEntityInfo, "SetEntityInfo", SetEntityInfoRequest, ResultResponse
);

/// `TagsFilter` modes.
pub mod tags_filter_mode {
    /// Any of the tags.
    pub const ANY: u8 = 0;
    /// All of the tags.
    pub const ALL: u8 = 1;
}

/// `GetEntityBounds` response.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct GetEntityBoundsResponse {
    /// The outcome.
    pub result: SimResult,
    /// Valid when the result is OK.
    pub bounds: Bounds,
}
message!(GetEntityBoundsResponse, "srv/GetEntityBounds_Response");
service!(
    /// An entity's bounding box.
    GetEntityBounds, "GetEntityBounds", EntityRequest, GetEntityBoundsResponse
);

/// `simulation_interfaces/msg/WorldResource`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct WorldResource {
    /// World name.
    pub name: String,
    /// Where it was loaded from.
    pub world_resource: Resource,
    /// Description.
    pub description: String,
    /// Tags.
    pub tags: Vec<String>,
}

/// `GetCurrentWorld` response.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GetCurrentWorldResponse {
    /// The outcome.
    pub result: SimResult,
    /// The world loaded.
    pub world: WorldResource,
}
message!(GetCurrentWorldResponse, "srv/GetCurrentWorld_Response");
service!(
    /// The world loaded.
    GetCurrentWorld, "GetCurrentWorld", EmptyMessage, GetCurrentWorldResponse
);

/// `GetSpawnables` request.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GetSpawnablesRequest {
    /// More places to look (for Flotilla: directories inside the allowed
    /// model directories).
    pub sources: Vec<String>,
}
message!(GetSpawnablesRequest, "srv/GetSpawnables_Request");

/// `simulation_interfaces/msg/Spawnable`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Spawnable {
    /// What SpawnEntity takes to spawn it.
    pub entity_resource: Resource,
    /// What it is.
    pub description: String,
    /// A box around it, in its own frame.
    pub spawn_bounds: Bounds,
}

/// `GetSpawnables` response.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct GetSpawnablesResponse {
    /// The outcome.
    pub result: SimResult,
    /// What can be spawned.
    pub spawnables: Vec<Spawnable>,
}
message!(GetSpawnablesResponse, "srv/GetSpawnables_Response");
service!(
    /// What SpawnEntity can spawn.
    GetSpawnables, "GetSpawnables", GetSpawnablesRequest, GetSpawnablesResponse
);

/// `GetEntityState` response.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct GetEntityStateResponse {
    /// The outcome.
    pub result: SimResult,
    /// Ground truth, valid when the result is OK.
    pub state: EntityState,
}
message!(GetEntityStateResponse, "srv/GetEntityState_Response");
service!(
    /// Ground truth of one entity.
    GetEntityState, "GetEntityState", EntityRequest, GetEntityStateResponse
);

/// `SetEntityState` request.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SetEntityStateRequest {
    /// The entity.
    pub entity: String,
    /// The new state.
    pub state: EntityState,
    /// Set the pose.
    pub set_pose: bool,
    /// Set the twist.
    pub set_twist: bool,
    /// Set the acceleration.
    pub set_acceleration: bool,
}
message!(SetEntityStateRequest, "srv/SetEntityState_Request");
service!(
    /// Teleports an entity and/or sets its velocity.
    SetEntityState, "SetEntityState", SetEntityStateRequest, ResultResponse
);

/// `GetSimulationState` response (state first, as in the `.srv`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GetSimulationStateResponse {
    /// Playing or paused.
    pub state: SimulationState,
    /// The outcome.
    pub result: SimResult,
}
message!(GetSimulationStateResponse, "srv/GetSimulationState_Response");
service!(
    /// Whether the simulation is playing or paused.
    GetSimulationState, "GetSimulationState", EmptyMessage, GetSimulationStateResponse
);

/// `SetSimulationState` request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SetSimulationStateRequest {
    /// The target state.
    pub state: SimulationState,
}
message!(SetSimulationStateRequest, "srv/SetSimulationState_Request");
service!(
    /// Plays, pauses or stops the simulation.
    SetSimulationState, "SetSimulationState", SetSimulationStateRequest, ResultResponse
);

/// `ResetSimulation` scopes (bit flags).
pub mod reset_scope {
    /// Same as ALL.
    pub const DEFAULT: u8 = 0;
    /// Time back to zero.
    pub const TIME: u8 = 1;
    /// Poses and velocities back to the start.
    pub const STATE: u8 = 2;
    /// Spawned entities removed.
    pub const SPAWNED: u8 = 4;
    /// Everything.
    pub const ALL: u8 = 255;
}

/// `ResetSimulation` request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ResetSimulationRequest {
    /// One of [`reset_scope`].
    pub scope: u8,
}
message!(ResetSimulationRequest, "srv/ResetSimulation_Request");
service!(
    /// Resets the simulation to its start.
    ResetSimulation, "ResetSimulation", ResetSimulationRequest, ResultResponse
);

/// `StepSimulation` request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct StepSimulationRequest {
    /// How many steps.
    pub steps: u64,
}
message!(StepSimulationRequest, "srv/StepSimulation_Request");
service!(
    /// Steps a paused simulation.
    StepSimulation, "StepSimulation", StepSimulationRequest, ResultResponse
);

/// The result codes of the world services, beyond [`result_code`]'s.
pub mod world_result_code {
    /// LoadWorld: the resource's format is not supported.
    pub const UNSUPPORTED_FORMAT: u8 = 101;
    /// LoadWorld: neither uri nor resource string was given.
    pub const NO_RESOURCE: u8 = 102;
    /// LoadWorld: the world failed to parse.
    pub const RESOURCE_PARSE_ERROR: u8 = 103;
    /// LoadWorld: a file the world names is missing.
    pub const MISSING_ASSETS: u8 = 104;
    /// LoadWorld: an element of the world is not supported.
    pub const UNSUPPORTED_ELEMENTS: u8 = 106;
    /// UnloadWorld, GetCurrentWorld: no world is loaded.
    pub const NO_WORLD_LOADED: u8 = 101;
    /// GetAvailableWorlds: a default source could not be searched.
    pub const DEFAULT_SOURCES_FAILED: u8 = 101;
}

/// `GetAvailableWorlds` request.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GetAvailableWorldsRequest {
    /// More places to search (for Flotilla: directories or world files
    /// inside the allowed directories).
    pub additional_sources: Vec<String>,
    /// Only worlds whose tags match.
    pub filter: TagsFilter,
    /// Only offline sources (Flotilla's all are).
    pub offline_only: bool,
    /// Go on past sources that fail.
    pub continue_on_error: bool,
}
message!(GetAvailableWorldsRequest, "srv/GetAvailableWorlds_Request");

/// `GetAvailableWorlds` response.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GetAvailableWorldsResponse {
    /// The outcome.
    pub result: SimResult,
    /// The worlds LoadWorld can load.
    pub worlds: Vec<WorldResource>,
}
message!(GetAvailableWorldsResponse, "srv/GetAvailableWorlds_Response");
service!(
    /// The worlds LoadWorld can load.
    GetAvailableWorlds, "GetAvailableWorlds", GetAvailableWorldsRequest, GetAvailableWorldsResponse
);

/// `LoadWorld` request.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LoadWorldRequest {
    /// The world: a file's path or `file://` URI (a resource string is not supported).
    pub world_resource: Resource,
    /// Fail on elements the simulator does not support (Flatland world plugins).
    pub fail_on_unsupported_element: bool,
    /// Go on without missing assets (Flotilla cannot: a world with a
    /// missing map or model file is refused either way).
    pub ignore_missing_or_unsupported_assets: bool,
}
message!(LoadWorldRequest, "srv/LoadWorld_Request");

/// `LoadWorld` response.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LoadWorldResponse {
    /// The outcome.
    pub result: SimResult,
    /// The world loaded, when the result is OK.
    pub world: WorldResource,
}
message!(LoadWorldResponse, "srv/LoadWorld_Response");
service!(
    /// Replaces the world.
    LoadWorld, "LoadWorld", LoadWorldRequest, LoadWorldResponse
);

service!(
    /// Empties the world.
    UnloadWorld, "UnloadWorld", EmptyMessage, ResultResponse
);

/// `simulation_interfaces/msg/NamedPose`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct NamedPose {
    /// Unique name.
    pub name: String,
    /// For people.
    pub description: String,
    /// What it is for.
    pub tags: Vec<String>,
    /// The pose, in the world frame.
    pub pose: Pose,
}

/// `GetNamedPoses` request.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GetNamedPosesRequest {
    /// Only poses whose tags match.
    pub tags: TagsFilter,
}
message!(GetNamedPosesRequest, "srv/GetNamedPoses_Request");

/// `GetNamedPoses` response.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct GetNamedPosesResponse {
    /// The outcome.
    pub result: SimResult,
    /// The poses.
    pub poses: Vec<NamedPose>,
}
message!(GetNamedPosesResponse, "srv/GetNamedPoses_Response");
service!(
    /// The places the world names.
    GetNamedPoses, "GetNamedPoses", GetNamedPosesRequest, GetNamedPosesResponse
);

/// `GetNamedPoseBounds` request.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GetNamedPoseBoundsRequest {
    /// The pose's name.
    pub name: String,
}
message!(GetNamedPoseBoundsRequest, "srv/GetNamedPoseBounds_Request");

/// `GetNamedPoseBounds` response.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct GetNamedPoseBoundsResponse {
    /// The outcome.
    pub result: SimResult,
    /// The room at the pose.
    pub bounds: Bounds,
}
message!(GetNamedPoseBoundsResponse, "srv/GetNamedPoseBounds_Response");
service!(
    /// The room at a named pose.
    GetNamedPoseBounds, "GetNamedPoseBounds", GetNamedPoseBoundsRequest, GetNamedPoseBoundsResponse
);
