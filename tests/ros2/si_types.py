"""simulation_interfaces' messages and services as rosidl generates them for DDS.

Written from the definitions in ../shared/ros2-interfaces/simulation_interfaces:
each service's request and response carry rmw_cyclonedds's request header
(client_guid, sequence_number) first; an empty request has rosidl's
`structure_needs_at_least_one_member` byte.
"""

from dataclasses import dataclass, field

from cyclonedds.idl import IdlStruct
from cyclonedds.idl.types import int64, sequence, uint8, uint16, uint64

from ros2_types import Header, Pose, PoseStamped, Twist, Vector3

# --- messages ---------------------------------------------------------------


@dataclass
class SimResult(IdlStruct, typename="simulation_interfaces::msg::dds_::Result_"):
    result: uint8 = 0
    error_message: str = ""


@dataclass
class Resource(IdlStruct, typename="simulation_interfaces::msg::dds_::Resource_"):
    uri: str = ""
    resource_string: str = ""


@dataclass
class EntityCategory(IdlStruct, typename="simulation_interfaces::msg::dds_::EntityCategory_"):
    category: uint8 = 0


@dataclass
class TagsFilter(IdlStruct, typename="simulation_interfaces::msg::dds_::TagsFilter_"):
    tags: sequence[str] = field(default_factory=list)
    filter_mode: uint8 = 0


@dataclass
class Bounds(IdlStruct, typename="simulation_interfaces::msg::dds_::Bounds_"):
    type: uint8 = 0
    points: sequence[Vector3] = field(default_factory=list)


@dataclass
class EntityFilters(IdlStruct, typename="simulation_interfaces::msg::dds_::EntityFilters_"):
    filter: str = ""
    categories: sequence[EntityCategory] = field(default_factory=list)
    tags: TagsFilter = field(default_factory=TagsFilter)
    bounds: Bounds = field(default_factory=Bounds)


@dataclass
class Accel(IdlStruct, typename="geometry_msgs::msg::dds_::Accel_"):
    linear: Vector3 = field(default_factory=Vector3)
    angular: Vector3 = field(default_factory=Vector3)


@dataclass
class EntityState(IdlStruct, typename="simulation_interfaces::msg::dds_::EntityState_"):
    header: Header = field(default_factory=Header)
    pose: Pose = field(default_factory=Pose)
    twist: Twist = field(default_factory=Twist)
    acceleration: Accel = field(default_factory=Accel)


@dataclass
class EntityInfo(IdlStruct, typename="simulation_interfaces::msg::dds_::EntityInfo_"):
    category: EntityCategory = field(default_factory=EntityCategory)
    description: str = ""
    tags: sequence[str] = field(default_factory=list)


@dataclass
class NamedPose(IdlStruct, typename="simulation_interfaces::msg::dds_::NamedPose_"):
    name: str = ""
    description: str = ""
    tags: sequence[str] = field(default_factory=list)
    pose: Pose = field(default_factory=Pose)


@dataclass
class SimulationState(IdlStruct, typename="simulation_interfaces::msg::dds_::SimulationState_"):
    state: uint8 = 0


@dataclass
class SimulatorFeatures(IdlStruct, typename="simulation_interfaces::msg::dds_::SimulatorFeatures_"):
    features: sequence[uint16] = field(default_factory=list)
    spawn_formats: sequence[str] = field(default_factory=list)
    custom_info: str = ""


@dataclass
class SpawnEntityMsg(IdlStruct, typename="simulation_interfaces::msg::dds_::SpawnEntity_"):
    name: str = ""
    allow_renaming: bool = False
    entity_resource: Resource = field(default_factory=Resource)
    entity_namespace: str = ""
    initial_pose: PoseStamped = field(default_factory=PoseStamped)


@dataclass
class SpawnResult(IdlStruct, typename="simulation_interfaces::msg::dds_::SpawnResult_"):
    result: SimResult = field(default_factory=SimResult)
    entity_name: str = ""


@dataclass
class Spawnable(IdlStruct, typename="simulation_interfaces::msg::dds_::Spawnable_"):
    entity_resource: Resource = field(default_factory=Resource)
    description: str = ""
    spawn_bounds: Bounds = field(default_factory=Bounds)


@dataclass
class WorldResource(IdlStruct, typename="simulation_interfaces::msg::dds_::WorldResource_"):
    name: str = ""
    world_resource: Resource = field(default_factory=Resource)
    description: str = ""
    tags: sequence[str] = field(default_factory=list)


# --- services: <Name>Request / <Name>Reply ------------------------------------

SRV = "simulation_interfaces::srv::dds_::"


@dataclass
class GetSimulatorFeaturesRequest(IdlStruct, typename=SRV + "GetSimulatorFeatures_Request_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    structure_needs_at_least_one_member: uint8 = 0


@dataclass
class GetSimulatorFeaturesReply(IdlStruct, typename=SRV + "GetSimulatorFeatures_Response_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    features: SimulatorFeatures = field(default_factory=SimulatorFeatures)


@dataclass
class SpawnEntityRequest(IdlStruct, typename=SRV + "SpawnEntity_Request_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    name: str = ""
    allow_renaming: bool = False
    entity_resource: Resource = field(default_factory=Resource)
    entity_namespace: str = ""
    initial_pose: PoseStamped = field(default_factory=PoseStamped)


@dataclass
class SpawnEntityReply(IdlStruct, typename=SRV + "SpawnEntity_Response_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    result: SimResult = field(default_factory=SimResult)
    entity_name: str = ""


@dataclass
class SpawnEntitiesRequest(IdlStruct, typename=SRV + "SpawnEntities_Request_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    spawn_requests: sequence[SpawnEntityMsg] = field(default_factory=list)


@dataclass
class SpawnEntitiesReply(IdlStruct, typename=SRV + "SpawnEntities_Response_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    result: SimResult = field(default_factory=SimResult)
    results: sequence[SpawnResult] = field(default_factory=list)


@dataclass
class GetEntitiesRequest(IdlStruct, typename=SRV + "GetEntities_Request_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    filters: EntityFilters = field(default_factory=EntityFilters)


@dataclass
class GetEntitiesReply(IdlStruct, typename=SRV + "GetEntities_Response_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    result: SimResult = field(default_factory=SimResult)
    entities: sequence[str] = field(default_factory=list)


@dataclass
class GetEntitiesStatesRequest(IdlStruct, typename=SRV + "GetEntitiesStates_Request_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    filters: EntityFilters = field(default_factory=EntityFilters)


@dataclass
class GetEntitiesStatesReply(IdlStruct, typename=SRV + "GetEntitiesStates_Response_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    result: SimResult = field(default_factory=SimResult)
    entities: sequence[str] = field(default_factory=list)
    states: sequence[EntityState] = field(default_factory=list)


@dataclass
class DeleteEntityRequest(IdlStruct, typename=SRV + "DeleteEntity_Request_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    entity: str = ""


@dataclass
class DeleteEntityReply(IdlStruct, typename=SRV + "DeleteEntity_Response_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    result: SimResult = field(default_factory=SimResult)


@dataclass
class GetEntityStateRequest(IdlStruct, typename=SRV + "GetEntityState_Request_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    entity: str = ""


@dataclass
class GetEntityStateReply(IdlStruct, typename=SRV + "GetEntityState_Response_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    result: SimResult = field(default_factory=SimResult)
    state: EntityState = field(default_factory=EntityState)


@dataclass
class SetEntityStateRequest(IdlStruct, typename=SRV + "SetEntityState_Request_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    entity: str = ""
    state: EntityState = field(default_factory=EntityState)
    set_pose: bool = False
    set_twist: bool = False
    set_acceleration: bool = False


@dataclass
class SetEntityStateReply(IdlStruct, typename=SRV + "SetEntityState_Response_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    result: SimResult = field(default_factory=SimResult)


@dataclass
class GetEntityInfoRequest(IdlStruct, typename=SRV + "GetEntityInfo_Request_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    entity: str = ""


@dataclass
class GetEntityInfoReply(IdlStruct, typename=SRV + "GetEntityInfo_Response_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    result: SimResult = field(default_factory=SimResult)
    info: EntityInfo = field(default_factory=EntityInfo)


@dataclass
class SetEntityInfoRequest(IdlStruct, typename=SRV + "SetEntityInfo_Request_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    entity: str = ""
    info: EntityInfo = field(default_factory=EntityInfo)


@dataclass
class SetEntityInfoReply(IdlStruct, typename=SRV + "SetEntityInfo_Response_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    result: SimResult = field(default_factory=SimResult)


@dataclass
class GetEntityBoundsRequest(IdlStruct, typename=SRV + "GetEntityBounds_Request_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    entity: str = ""


@dataclass
class GetEntityBoundsReply(IdlStruct, typename=SRV + "GetEntityBounds_Response_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    result: SimResult = field(default_factory=SimResult)
    bounds: Bounds = field(default_factory=Bounds)


@dataclass
class GetSpawnablesRequest(IdlStruct, typename=SRV + "GetSpawnables_Request_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    sources: sequence[str] = field(default_factory=list)


@dataclass
class GetSpawnablesReply(IdlStruct, typename=SRV + "GetSpawnables_Response_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    result: SimResult = field(default_factory=SimResult)
    spawnables: sequence[Spawnable] = field(default_factory=list)


@dataclass
class GetSimulationStateRequest(IdlStruct, typename=SRV + "GetSimulationState_Request_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    structure_needs_at_least_one_member: uint8 = 0


@dataclass
class GetSimulationStateReply(IdlStruct, typename=SRV + "GetSimulationState_Response_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    state: SimulationState = field(default_factory=SimulationState)
    result: SimResult = field(default_factory=SimResult)


@dataclass
class SetSimulationStateRequest(IdlStruct, typename=SRV + "SetSimulationState_Request_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    state: SimulationState = field(default_factory=SimulationState)


@dataclass
class SetSimulationStateReply(IdlStruct, typename=SRV + "SetSimulationState_Response_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    result: SimResult = field(default_factory=SimResult)


@dataclass
class ResetSimulationRequest(IdlStruct, typename=SRV + "ResetSimulation_Request_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    scope: uint8 = 0


@dataclass
class ResetSimulationReply(IdlStruct, typename=SRV + "ResetSimulation_Response_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    result: SimResult = field(default_factory=SimResult)


@dataclass
class StepSimulationRequest(IdlStruct, typename=SRV + "StepSimulation_Request_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    steps: uint64 = 1


@dataclass
class StepSimulationReply(IdlStruct, typename=SRV + "StepSimulation_Response_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    result: SimResult = field(default_factory=SimResult)


@dataclass
class GetCurrentWorldRequest(IdlStruct, typename=SRV + "GetCurrentWorld_Request_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    structure_needs_at_least_one_member: uint8 = 0


@dataclass
class GetCurrentWorldReply(IdlStruct, typename=SRV + "GetCurrentWorld_Response_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    result: SimResult = field(default_factory=SimResult)
    world: WorldResource = field(default_factory=WorldResource)


@dataclass
class GetAvailableWorldsRequest(IdlStruct, typename=SRV + "GetAvailableWorlds_Request_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    additional_sources: sequence[str] = field(default_factory=list)
    filter: TagsFilter = field(default_factory=TagsFilter)
    offline_only: bool = False
    continue_on_error: bool = False


@dataclass
class GetAvailableWorldsReply(IdlStruct, typename=SRV + "GetAvailableWorlds_Response_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    result: SimResult = field(default_factory=SimResult)
    worlds: sequence[WorldResource] = field(default_factory=list)


@dataclass
class LoadWorldRequest(IdlStruct, typename=SRV + "LoadWorld_Request_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    world_resource: Resource = field(default_factory=Resource)
    fail_on_unsupported_element: bool = False
    ignore_missing_or_unsupported_assets: bool = False


@dataclass
class LoadWorldReply(IdlStruct, typename=SRV + "LoadWorld_Response_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    result: SimResult = field(default_factory=SimResult)
    world: WorldResource = field(default_factory=WorldResource)


@dataclass
class UnloadWorldRequest(IdlStruct, typename=SRV + "UnloadWorld_Request_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    structure_needs_at_least_one_member: uint8 = 0


@dataclass
class UnloadWorldReply(IdlStruct, typename=SRV + "UnloadWorld_Response_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    result: SimResult = field(default_factory=SimResult)


@dataclass
class GetNamedPosesRequest(IdlStruct, typename=SRV + "GetNamedPoses_Request_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    tags: TagsFilter = field(default_factory=TagsFilter)


@dataclass
class GetNamedPosesReply(IdlStruct, typename=SRV + "GetNamedPoses_Response_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    result: SimResult = field(default_factory=SimResult)
    poses: sequence[NamedPose] = field(default_factory=list)


@dataclass
class GetNamedPoseBoundsRequest(IdlStruct, typename=SRV + "GetNamedPoseBounds_Request_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    name: str = ""


@dataclass
class GetNamedPoseBoundsReply(IdlStruct, typename=SRV + "GetNamedPoseBounds_Response_"):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    result: SimResult = field(default_factory=SimResult)
    bounds: Bounds = field(default_factory=Bounds)


# Result codes (Result.msg and the services' own).
FEATURE_UNSUPPORTED = 0
OK = 1
NOT_FOUND = 2
OPERATION_FAILED = 4
NAME_NOT_UNIQUE = 101
NO_RESOURCE = 104
SET_STATE_INVALID_POSE = 101
ALREADY_IN_TARGET_STATE = 101
ENTITIES_SPAWN_FAILED = 150
NO_WORLD_LOADED = 101
WORLD_UNSUPPORTED_FORMAT = 101
WORLD_NO_RESOURCE = 102
# SimulationState.msg
PLAYING = 1
PAUSED = 2
# Bounds.msg
TYPE_BOX = 1
