//! The `simulation_interfaces` services, with the standard result codes.

use flotilla_messages::geometry_msgs::{Point, Pose, Quaternion, Twist, Vector3};
use flotilla_messages::simulation_interfaces::{self as si, feature, reset_scope, result_code, simulation_state};
use flotilla_messages::std_msgs::Header;
use flotilla_messages::RosService;
use flotilla_plugins::robots::RobotModel;
use flotilla_wire::control::ControlRequest;
use flotilla_wire::geometry::{Pose2, Twist2};
use flotilla_wire::world_to_nodes::WorldChange;

use super::{request, tags_filter_check, tags_pass, worlds, Answer, Service, World};
use crate::control::{self, SpawnError};
use crate::physics::{EntityLabels, ResetScope};
use flotilla_wire::description::{BodyDescription, BodyKind, FootprintShape, ModelDescription};

/// The world frame, as replies name it; requests may also say "world" or
/// nothing, or give an entity's name (see `reference_frame`).
pub const WORLD_FRAME: &str = "map";

/// How far a quaternion may be from unit length, or tilted out of the plane.
const QUATERNION_TOLERANCE: f64 = 1e-3;

/// Entity categories (simulation_interfaces/msg/EntityCategory).
const CATEGORY_OBJECT: u8 = 0;
const CATEGORY_ROBOT: u8 = 1;
const CATEGORY_HUMAN: u8 = 2;
const CATEGORY_DYNAMIC_OBJECT: u8 = 4;
const CATEGORY_STATIC_OBJECT: u8 = 5;

pub(super) fn answer(service: Service, bytes: &[u8], world: World<'_>) -> Answer {
    match service {
        Service::GetSimulatorFeatures => {
            call::<si::GetSimulatorFeatures, _>(bytes, world, features, |_| si::GetSimulatorFeaturesResponse::default())
        }
        Service::SpawnEntity => call::<si::SpawnEntity, _>(bytes, world, spawn_entity, |e| si::SpawnEntityResponse {
            result: failed(e),
            entity_name: String::new(),
        }),
        Service::SpawnEntities => call::<si::SpawnEntities, _>(bytes, world, spawn_entities, |e| {
            si::SpawnEntitiesResponse { result: failed(e), results: vec![] }
        }),
        Service::DeleteEntity => call::<si::DeleteEntity, _>(bytes, world, delete_entity, result_only),
        Service::GetEntities => call::<si::GetEntities, _>(bytes, world, get_entities, |e| si::GetEntitiesResponse {
            result: failed(e),
            entities: vec![],
        }),
        Service::GetEntityState => call::<si::GetEntityState, _>(bytes, world, get_entity_state, |e| {
            si::GetEntityStateResponse { result: failed(e), state: Default::default() }
        }),
        Service::GetEntitiesStates => call::<si::GetEntitiesStates, _>(bytes, world, get_entities_states, |e| {
            si::GetEntitiesStatesResponse { result: failed(e), entities: vec![], states: vec![] }
        }),
        Service::GetEntityInfo => call::<si::GetEntityInfo, _>(bytes, world, get_entity_info, |e| {
            si::GetEntityInfoResponse { result: failed(e), info: Default::default() }
        }),
        Service::SetEntityInfo => call::<si::SetEntityInfo, _>(bytes, world, set_entity_info, result_only),
        Service::GetEntityBounds => call::<si::GetEntityBounds, _>(bytes, world, get_entity_bounds, |e| {
            si::GetEntityBoundsResponse { result: failed(e), bounds: Default::default() }
        }),
        Service::GetCurrentWorld => call::<si::GetCurrentWorld, _>(bytes, world, worlds::get_current_world, |e| {
            si::GetCurrentWorldResponse { result: failed(e), world: Default::default() }
        }),
        Service::GetAvailableWorlds => {
            call::<si::GetAvailableWorlds, _>(bytes, world, worlds::get_available_worlds, |e| {
                si::GetAvailableWorldsResponse { result: failed(e), worlds: vec![] }
            })
        }
        Service::LoadWorld => call::<si::LoadWorld, _>(bytes, world, worlds::load_world, |e| si::LoadWorldResponse {
            result: failed(e),
            world: Default::default(),
        }),
        Service::UnloadWorld => call::<si::UnloadWorld, _>(bytes, world, worlds::unload_world, result_only),
        Service::GetNamedPoses => call::<si::GetNamedPoses, _>(bytes, world, worlds::get_named_poses, |e| {
            si::GetNamedPosesResponse { result: failed(e), poses: vec![] }
        }),
        Service::GetNamedPoseBounds => {
            call::<si::GetNamedPoseBounds, _>(bytes, world, worlds::get_named_pose_bounds, |e| {
                si::GetNamedPoseBoundsResponse { result: failed(e), bounds: Default::default() }
            })
        }
        Service::GetSpawnables => call::<si::GetSpawnables, _>(bytes, world, get_spawnables, |e| {
            si::GetSpawnablesResponse { result: failed(e), spawnables: vec![] }
        }),
        Service::SetEntityState => call::<si::SetEntityState, _>(bytes, world, set_entity_state, result_only),
        Service::GetSimulationState => call::<si::GetSimulationState, _>(bytes, world, get_simulation_state, |e| {
            si::GetSimulationStateResponse { state: Default::default(), result: failed(e) }
        }),
        Service::SetSimulationState => {
            call::<si::SetSimulationState, _>(bytes, world, set_simulation_state, result_only)
        }
        Service::ResetSimulation => call::<si::ResetSimulation, _>(bytes, world, reset_simulation, result_only),
        Service::StepSimulation => step_simulation(bytes, world),
        _ => unreachable!("{service:?} is not a simulation_interfaces service"),
    }
}

/// Decodes, runs `handler`, encodes; an undecodable request gets
/// `on_bad_request`'s OPERATION_FAILED reply.
/// `handler` gives the response and the world changes to announce (none
/// or one, as an `Option`, or several).
fn call<S: RosService, C: IntoIterator<Item = WorldChange>>(
    bytes: &[u8],
    world: World<'_>,
    handler: impl FnOnce(S::Request, World<'_>) -> (S::Response, C),
    on_bad_request: impl FnOnce(String) -> S::Response,
) -> Answer {
    match request::<S>(bytes) {
        Ok(req) => {
            let (response, changes) = handler(req, world);
            Answer::reply(&response).with_changes(changes)
        }
        Err(message) => Answer::reply(&on_bad_request(message)),
    }
}

fn failed(message: String) -> si::SimResult {
    si::SimResult::fail(result_code::OPERATION_FAILED, message)
}

fn result_only(message: String) -> si::ResultResponse {
    si::ResultResponse { result: failed(message) }
}

fn done(result: si::SimResult) -> (si::ResultResponse, Option<WorldChange>) {
    (si::ResultResponse { result }, None)
}

fn features(
    _: flotilla_messages::std_srvs::EmptyMessage,
    _: World<'_>,
) -> (si::GetSimulatorFeaturesResponse, Option<WorldChange>) {
    let features = vec![
        feature::SPAWNING,
        feature::DELETING,
        feature::ENTITY_CATEGORIES,
        feature::ENTITY_STATE_GETTING,
        feature::ENTITY_STATE_SETTING,
        feature::ENTITY_INFO_GETTING,
        feature::ENTITY_INFO_SETTING,
        feature::ENTITY_TAGS,
        feature::ENTITY_BOUNDS,
        feature::WORLD_INFO_GETTING,
        feature::SPAWNABLES,
        feature::SPAWNING_ENTITIES,
        feature::SIMULATION_RESET,
        feature::SIMULATION_RESET_STATE,
        feature::SIMULATION_RESET_SPAWNED,
        feature::SIMULATION_STATE_GETTING,
        feature::SIMULATION_STATE_SETTING,
        feature::SIMULATION_STATE_PAUSE,
        feature::STEP_SIMULATION_SINGLE,
        feature::STEP_SIMULATION_MULTIPLE,
        feature::NAMED_POSES,
        feature::POSE_BOUNDS,
        feature::WORLD_LOADING,
        feature::WORLD_UNLOADING,
        feature::AVAILABLE_WORLDS,
        feature::STEP_SIMULATION_ACTION,
    ];
    let response = si::GetSimulatorFeaturesResponse {
        features: si::SimulatorFeatures {
            features,
            spawn_formats: vec!["yaml".into()],
            custom_info: "Flotilla: a 2D simulator of Flatland worlds. SpawnEntity takes a Flatland model YAML path \
                          (absolute, file://, or relative to the world file) inside the allowed model directories. \
                          Poses are in the \"map\" frame; sim time is never reset."
                .into(),
        },
    };
    (response, None)
}

fn spawn_entity(req: si::SpawnEntityRequest, world: World<'_>) -> (si::SpawnEntityResponse, Option<WorldChange>) {
    let fail = |code: u8, message: String| {
        (si::SpawnEntityResponse { result: si::SimResult::fail(code, message), entity_name: String::new() }, None)
    };
    let uri = req.entity_resource.uri.strip_prefix("file://").unwrap_or(&req.entity_resource.uri).to_string();
    if uri.is_empty() {
        return if req.entity_resource.resource_string.is_empty() {
            fail(result_code::NO_RESOURCE, "entity_resource has neither uri nor resource_string".into())
        } else {
            fail(
                result_code::UNSUPPORTED_FORMAT,
                "inline resource strings are not supported; give a Flatland model YAML path in entity_resource.uri"
                    .into(),
            )
        };
    }
    if !(uri.ends_with(".yaml") || uri.ends_with(".yml")) {
        return fail(result_code::UNSUPPORTED_FORMAT, format!("{uri}: only Flatland model YAML files can be spawned"));
    }
    if let Err(message) = check_namespace(&req.entity_namespace) {
        return fail(result_code::NAMESPACE_INVALID, message);
    }
    let pose = match pose_in_world(world.physics, &req.initial_pose.header.frame_id, &req.initial_pose.pose) {
        Ok(pose) => pose,
        Err(message) => return fail(result_code::INVALID_POSE, format!("initial_pose: {message}")),
    };
    let name = match (req.name.is_empty(), req.allow_renaming) {
        (true, true) => free_name(world.physics, &file_stem(&uri)),
        (false, true) if world.physics.has_model(&req.name) => free_name(world.physics, &req.name),
        _ => req.name,
    };
    let namespace = req.entity_namespace.trim_start_matches('/').to_string();
    match control::spawn(world.physics, &world.run.model_dirs, &uri, &name, &namespace, pose) {
        Ok(()) => (
            si::SpawnEntityResponse { result: si::SimResult::ok(), entity_name: name.clone() },
            Some(WorldChange::ModelSpawned { model: name }),
        ),
        Err(error) => {
            let code = match &error {
                SpawnError::NameInvalid(_) => result_code::NAME_INVALID,
                SpawnError::NameTaken(_) => result_code::NAME_NOT_UNIQUE,
                SpawnError::PoseInvalid(_) => result_code::INVALID_POSE,
                SpawnError::ModelInvalid(_) => result_code::RESOURCE_PARSE_ERROR,
                SpawnError::PathNotAllowed(_) | SpawnError::Refused(_) => result_code::OPERATION_FAILED,
            };
            fail(code, error.to_string())
        }
    }
}

/// Each request as SpawnEntity would, in order (an entity spawned earlier
/// in the list is a frame for the later ones); the ones that fail leave
/// the others spawned, and make the result ENTITIES_SPAWN_FAILED.
/// Spawns every request in order, or none: when one fails, those spawned
/// before it in the same call are removed again and their results say so
/// (the standard's per-request results, with the batch all-or-nothing).
/// An entity spawned earlier in the list is a frame for later ones.
fn spawn_entities(
    req: si::SpawnEntitiesRequest,
    mut world: World<'_>,
) -> (si::SpawnEntitiesResponse, Vec<WorldChange>) {
    let mut changes = Vec::new();
    let mut results = Vec::with_capacity(req.spawn_requests.len());
    for request in req.spawn_requests {
        let (response, change) = spawn_entity(request, world.reborrow());
        changes.extend(change);
        results.push(response);
    }
    let failed: Vec<usize> = (0..results.len()).filter(|&i| results[i].result.result != result_code::OK).collect();
    if failed.is_empty() {
        return (si::SpawnEntitiesResponse { result: si::SimResult::ok(), results }, changes);
    }
    let first = failed[0];
    for response in results.iter_mut().filter(|r| r.result.result == result_code::OK) {
        if let Err(e) = world.physics.remove_model(&response.entity_name) {
            tracing::error!("cannot take back {}: {e}", response.entity_name);
        }
        response.result = si::SimResult::fail(
            result_code::OPERATION_FAILED,
            format!("not spawned: request {first} failed, and SpawnEntities spawns all or none"),
        );
        response.entity_name.clear();
    }
    let result = si::SimResult::fail(
        si::ENTITIES_SPAWN_FAILED,
        format!(
            "{} of {} requests failed (the first: request {first}); nothing was spawned",
            failed.len(),
            results.len()
        ),
    );
    // Nothing to announce: the world is as it was (its revision moved on,
    // which nodes follow as after any change).
    (si::SpawnEntitiesResponse { result, results }, Vec::new())
}

fn delete_entity(req: si::EntityRequest, world: World<'_>) -> (si::ResultResponse, Option<WorldChange>) {
    if !world.physics.has_model(&req.entity) {
        return done(not_found(&req.entity));
    }
    let (reply, change) = control::handle(world.physics, world.run, ControlRequest::Delete { name: req.entity });
    let result = if reply.success {
        si::SimResult::ok()
    } else {
        si::SimResult::fail(result_code::OPERATION_FAILED, reply.message)
    };
    (si::ResultResponse { result }, change)
}

fn get_entities(req: si::GetEntitiesRequest, world: World<'_>) -> (si::GetEntitiesResponse, Option<WorldChange>) {
    let response = match matching(&req.filters, world.physics) {
        Ok(entities) => si::GetEntitiesResponse { result: si::SimResult::ok(), entities },
        Err(result) => si::GetEntitiesResponse { result, entities: vec![] },
    };
    (response, None)
}

fn get_entities_states(
    req: si::GetEntitiesStatesRequest,
    world: World<'_>,
) -> (si::GetEntitiesStatesResponse, Option<WorldChange>) {
    let entities = match matching(&req.filters, world.physics) {
        Ok(entities) => entities,
        Err(result) => return (si::GetEntitiesStatesResponse { result, entities: vec![], states: vec![] }, None),
    };
    let states = entities.iter().filter_map(|name| entity_state(world.physics, name)).collect();
    (si::GetEntitiesStatesResponse { result: si::SimResult::ok(), entities, states }, None)
}

/// The names of the entities `filters` select, in load / spawn order; the
/// filters Flotilla cannot apply are refused.
fn matching(filters: &si::EntityFilters, physics: &crate::physics::Physics) -> Result<Vec<String>, si::SimResult> {
    tags_filter_check(&filters.tags)?;
    if filters.bounds.kind != 0 {
        return Err(si::SimResult::fail(result_code::FEATURE_UNSUPPORTED, "bounds filters are not supported"));
    }
    let pattern = regex::Regex::new(&filters.filter)
        .map_err(|e| si::SimResult::fail(result_code::OPERATION_FAILED, format!("filter {:?}: {e}", filters.filter)))?;
    Ok(physics
        .models()
        .filter(|model| pattern.is_match(&model.name))
        .filter(|model| {
            let labels = physics.labels(&model.name).cloned().unwrap_or_default();
            let category = category(model, &labels);
            (filters.categories.is_empty() || filters.categories.iter().any(|c| c.category == category))
                && tags_pass(&filters.tags, &labels.tags)
        })
        .map(|model| model.name.clone())
        .collect())
}

fn get_entity_info(req: si::EntityRequest, world: World<'_>) -> (si::GetEntityInfoResponse, Option<WorldChange>) {
    let Some(model) = world.physics.models().find(|m| m.name == req.entity) else {
        return (si::GetEntityInfoResponse { result: not_found(&req.entity), info: Default::default() }, None);
    };
    let labels = world.physics.labels(&req.entity).cloned().unwrap_or_default();
    let description = labels.description.clone().unwrap_or_else(|| format!("{} from {}", model.name, describe(model)));
    let category = si::EntityCategory { category: category(model, &labels) };
    let info = si::EntityInfo { category, description, tags: labels.tags };
    (si::GetEntityInfoResponse { result: si::SimResult::ok(), info }, None)
}

/// Replaces an entity's category, description and tags (an empty
/// description puts back the one Flotilla gives).
fn set_entity_info(req: si::SetEntityInfoRequest, world: World<'_>) -> (si::ResultResponse, Option<WorldChange>) {
    const KNOWN: [u8; 5] =
        [CATEGORY_OBJECT, CATEGORY_ROBOT, CATEGORY_HUMAN, CATEGORY_DYNAMIC_OBJECT, CATEGORY_STATIC_OBJECT];
    if !world.physics.has_model(&req.entity) {
        return done(not_found(&req.entity));
    }
    let category = req.info.category.category;
    if !KNOWN.contains(&category) {
        return done(si::SimResult::fail(
            result_code::OPERATION_FAILED,
            format!("category {category} is not one of EntityCategory's (0, 1, 2, 4, 5)"),
        ));
    }
    let description = (!req.info.description.is_empty()).then_some(req.info.description);
    let labels = EntityLabels { category: Some(category), description, tags: req.info.tags };
    let result = match world.physics.set_labels(&req.entity, labels) {
        Ok(()) => si::SimResult::ok(),
        Err(e) => si::SimResult::fail(result_code::OPERATION_FAILED, e.to_string()),
    };
    done(result)
}

/// What a model is: its file, bodies and plugin types.
fn describe(model: &ModelDescription) -> String {
    let plugins: Vec<&str> = model.plugins.iter().map(|p| p.plugin_type.as_str()).collect();
    format!(
        "{}: {} bod{}{}",
        model.model_path,
        model.bodies.len(),
        if model.bodies.len() == 1 { "y" } else { "ies" },
        if plugins.is_empty() { String::new() } else { format!(", plugins {}", plugins.join(", ")) }
    )
}

/// The category a user set (SetEntityInfo), or else: a robot has a drive,
/// a person walks with social forces (a crowd's people), a model whose
/// bodies are all static is a static object, anything else moves.
fn category(model: &ModelDescription, labels: &EntityLabels) -> u8 {
    if let Some(category) = labels.category {
        category
    } else if model.is_robot() {
        CATEGORY_ROBOT
    } else if flotilla_plugins::pedestrian::is_person(model) {
        CATEGORY_HUMAN
    } else if model.bodies.iter().all(|b| b.kind == BodyKind::Static) {
        CATEGORY_STATIC_OBJECT
    } else {
        CATEGORY_DYNAMIC_OBJECT
    }
}

/// The entity's axis-aligned box in its first body's frame (REP 103's
/// canonical link), over every footprint but sensors (which detect, not
/// occupy), its bodies where they are now; empty bounds for an entity with
/// no such footprint.
fn get_entity_bounds(req: si::EntityRequest, world: World<'_>) -> (si::GetEntityBoundsResponse, Option<WorldChange>) {
    let (Some(model), Ok(poses)) =
        (world.physics.models().find(|m| m.name == req.entity), world.physics.body_poses(&req.entity))
    else {
        return (si::GetEntityBoundsResponse { result: not_found(&req.entity), bounds: Default::default() }, None);
    };
    let bounds = footprint_bounds(&model.bodies, &poses);
    (si::GetEntityBoundsResponse { result: si::SimResult::ok(), bounds }, None)
}

/// The axis-aligned box (upper right, then lower left corner) of every
/// footprint but sensors (which detect, not occupy) of `bodies` at `poses`
/// (world frame), in the frame of the first body (REP 103's canonical
/// link); empty bounds when there is no such footprint.
fn footprint_bounds(bodies: &[BodyDescription], poses: &[Pose2]) -> si::Bounds {
    let canonical = poses.first().copied().unwrap_or_default().inverse();
    let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
    let mut take = |[x, y]: [f64; 2], r: f64| {
        lo = [lo[0].min(x - r), lo[1].min(y - r)];
        hi = [hi[0].max(x + r), hi[1].max(y + r)];
    };
    for (body, pose) in bodies.iter().zip(poses) {
        let in_canonical = canonical.compose(pose);
        for footprint in body.footprints.iter().filter(|f| !f.sensor) {
            match &footprint.shape {
                FootprintShape::Circle { center, radius } => take(in_canonical.transform_point(*center), *radius),
                FootprintShape::Polygon { points } => {
                    points.iter().for_each(|p| take(in_canonical.transform_point(*p), 0.0));
                }
            }
        }
    }
    if lo[0].is_finite() {
        si::Bounds {
            kind: si::bounds_type::BOX,
            points: vec![Vector3 { x: hi[0], y: hi[1], z: 0.0 }, Vector3 { x: lo[0], y: lo[1], z: 0.0 }],
        }
    } else {
        si::Bounds { kind: si::bounds_type::EMPTY, points: vec![] }
    }
}

/// Every Flatland model file in the allowed model directories (and in the
/// `sources` directories inside them), with what it is and its bounds; a
/// YAML file that is not a model (a world, a map) is not listed, and a
/// source that is not such a directory is named in the result's message.
fn get_spawnables(req: si::GetSpawnablesRequest, world: World<'_>) -> (si::GetSpawnablesResponse, Option<WorldChange>) {
    let allowed = &world.run.model_dirs;
    let mut dirs: Vec<std::path::PathBuf> = allowed.dirs().to_vec();
    let mut unknown = Vec::new();
    for source in &req.sources {
        let path = flotilla_world_file::resolve_path(world.physics.world_path(), source);
        match allowed.check(&path) {
            Ok(dir) if dir.is_dir() => dirs.push(dir),
            _ => unknown.push(format!("{source:?}")),
        }
    }
    let mut files: Vec<std::path::PathBuf> = dirs
        .iter()
        .filter_map(|dir| std::fs::read_dir(dir).ok())
        .flat_map(|entries| entries.flatten().map(|entry| entry.path()))
        .filter(|path| path.is_file() && path.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .collect();
    files.sort();
    files.dedup();
    let layer_names = world.physics.layer_names().to_vec();
    let spawnables = files
        .iter()
        .filter_map(|path| {
            let model = flotilla_world_file::load_model(path, "spawnable", "", Pose2::default(), &layer_names).ok()?;
            let poses: Vec<Pose2> = model.bodies.iter().map(|b| b.pose).collect();
            Some(si::Spawnable {
                entity_resource: si::Resource {
                    uri: path.to_string_lossy().into_owned(),
                    resource_string: String::new(),
                },
                description: describe(&model),
                spawn_bounds: footprint_bounds(&model.bodies, &poses),
            })
        })
        .collect();
    let mut result = si::SimResult::ok();
    if !unknown.is_empty() {
        result.error_message = format!(
            "sources not searched (not directories inside the allowed model directories): {}",
            unknown.join(", ")
        );
    }
    (si::GetSpawnablesResponse { result, spawnables }, None)
}

fn get_entity_state(req: si::EntityRequest, world: World<'_>) -> (si::GetEntityStateResponse, Option<WorldChange>) {
    let response = match entity_state(world.physics, &req.entity) {
        Some(state) => si::GetEntityStateResponse { result: si::SimResult::ok(), state },
        None => si::GetEntityStateResponse { result: not_found(&req.entity), state: Default::default() },
    };
    (response, None)
}

/// An entity's ground truth now: its first body's pose and twist, in the
/// world frame; `None` for no such entity.
fn entity_state(physics: &crate::physics::Physics, entity: &str) -> Option<si::EntityState> {
    let (pose, twist) = physics.model_state(entity).ok()?;
    Some(si::EntityState {
        header: Header { stamp: physics.time().to_ros(), frame_id: WORLD_FRAME.into() },
        pose: Pose {
            position: Point { x: pose.x_m, y: pose.y_m, z: 0.0 },
            orientation: Quaternion::from_yaw(pose.theta_rad),
        },
        twist: Twist {
            linear: Vector3 { x: twist.vx_mps, y: twist.vy_mps, z: 0.0 },
            angular: Vector3 { x: 0.0, y: 0.0, z: twist.omega_radps },
        },
        acceleration: Default::default(),
    })
}

fn set_entity_state(req: si::SetEntityStateRequest, world: World<'_>) -> (si::ResultResponse, Option<WorldChange>) {
    if !world.physics.has_model(&req.entity) {
        return done(not_found(&req.entity));
    }
    if req.set_acceleration {
        return done(si::SimResult::fail(
            result_code::FEATURE_UNSUPPORTED,
            "accelerations cannot be set; set a twist instead",
        ));
    }
    let frame = &req.state.header.frame_id;
    let pose = if req.set_pose {
        match pose_in_world(world.physics, frame, &req.state.pose) {
            Ok(pose) => Some(pose),
            Err(message) => {
                return done(si::SimResult::fail(result_code::SET_STATE_INVALID_POSE, format!("state.pose: {message}")))
            }
        }
    } else {
        None
    };
    let twist = if req.set_twist {
        // At the pose it is being given, or where it is.
        let at = match pose {
            Some(pose) => pose,
            None => world.physics.model_state(&req.entity).map(|(pose, _)| pose).unwrap_or_default(),
        };
        match twist_in_world(world.physics, frame, &req.state.twist, at) {
            Ok(twist) => Some(twist),
            Err(message) => return done(si::SimResult::fail(result_code::OPERATION_FAILED, message)),
        }
    } else {
        None
    };
    let mut change = None;
    if let Some(pose) = pose {
        if let Err(message) = world.physics.place_model(&req.entity, pose) {
            return done(si::SimResult::fail(result_code::OPERATION_FAILED, message.to_string()));
        }
        let model_pose = world.physics.models().find(|m| m.name == req.entity).map(|m| m.pose);
        change = model_pose.map(|pose| WorldChange::ModelMoved { model: req.entity.clone(), pose });
    }
    if let Some(twist) = twist {
        if let Err(message) = world.physics.set_model_twist(&req.entity, twist) {
            return done(si::SimResult::fail(result_code::OPERATION_FAILED, message.to_string()));
        }
    }
    (si::ResultResponse { result: si::SimResult::ok() }, change)
}

fn get_simulation_state(
    _: flotilla_messages::std_srvs::EmptyMessage,
    world: World<'_>,
) -> (si::GetSimulationStateResponse, Option<WorldChange>) {
    let state = si::SimulationState { state: current_state(world.run) };
    (si::GetSimulationStateResponse { state, result: si::SimResult::ok() }, None)
}

fn current_state(run: &control::RunState) -> u8 {
    match (run.stopped, run.paused) {
        (true, _) => simulation_state::STOPPED,
        (false, true) => simulation_state::PAUSED,
        (false, false) => simulation_state::PLAYING,
    }
}

fn set_simulation_state(
    req: si::SetSimulationStateRequest,
    world: World<'_>,
) -> (si::ResultResponse, Option<WorldChange>) {
    let target = req.state.state;
    let current = current_state(world.run);
    if target == current {
        return done(si::SimResult::fail(result_code::ALREADY_IN_TARGET_STATE, "already in that state"));
    }
    match target {
        simulation_state::PLAYING => {
            control::handle(world.physics, world.run, ControlRequest::Resume);
            done(si::SimResult::ok())
        }
        simulation_state::PAUSED if current == simulation_state::STOPPED => {
            done(si::SimResult::fail(result_code::INCORRECT_TRANSITION, "the simulation is stopped; play it first"))
        }
        simulation_state::PAUSED => {
            control::handle(world.physics, world.run, ControlRequest::Pause);
            done(si::SimResult::ok())
        }
        simulation_state::STOPPED => {
            control::handle(world.physics, world.run, ControlRequest::Pause);
            if let Err(message) = world.physics.reset(ResetScope { state: true, spawned: true }) {
                return done(si::SimResult::fail(result_code::STATE_TRANSITION_ERROR, message.to_string()));
            }
            world.run.stopped = true;
            (si::ResultResponse { result: si::SimResult::ok() }, Some(WorldChange::WorldReset))
        }
        simulation_state::QUITTING => done(si::SimResult::fail(
            result_code::FEATURE_UNSUPPORTED,
            "the world cannot be quit through a service; stop `flotilla run` (Ctrl-C) instead",
        )),
        other => done(si::SimResult::fail(
            result_code::INCORRECT_TRANSITION,
            format!("{other} is not a state the simulation can be set to"),
        )),
    }
}

fn reset_simulation(req: si::ResetSimulationRequest, world: World<'_>) -> (si::ResultResponse, Option<WorldChange>) {
    let scope = match req.scope {
        reset_scope::DEFAULT | reset_scope::ALL => ResetScope { state: true, spawned: true },
        s if s & reset_scope::TIME != 0 => {
            return done(si::SimResult::fail(
                result_code::FEATURE_UNSUPPORTED,
                "sim time never goes back in Flotilla (TF buffers and sensor timers would break); \
                 reset STATE and/or SPAWNED",
            ))
        }
        s if s & !(reset_scope::STATE | reset_scope::SPAWNED) != 0 => {
            return done(si::SimResult::fail(result_code::OPERATION_FAILED, format!("unknown reset scope {s}")))
        }
        s => ResetScope { state: s & reset_scope::STATE != 0, spawned: s & reset_scope::SPAWNED != 0 },
    };
    match world.physics.reset(scope) {
        Ok(()) => (si::ResultResponse { result: si::SimResult::ok() }, Some(WorldChange::WorldReset)),
        Err(message) => done(si::SimResult::fail(result_code::OPERATION_FAILED, message.to_string())),
    }
}

fn step_simulation(bytes: &[u8], world: World<'_>) -> Answer {
    let reply = |result: si::SimResult| Answer::reply(&si::ResultResponse { result });
    let req = match request::<si::StepSimulation>(bytes) {
        Ok(req) => req,
        Err(message) => return reply(failed(message)),
    };
    if !world.run.paused {
        return reply(si::SimResult::fail(
            result_code::OPERATION_FAILED,
            "the simulation is playing; pause it before stepping",
        ));
    }
    let (control_reply, _) = control::handle(world.physics, world.run, ControlRequest::Step { steps: req.steps });
    if !control_reply.success {
        return reply(si::SimResult::fail(result_code::OPERATION_FAILED, control_reply.message));
    }
    let target = world.physics.step_count() + world.run.steps_pending;
    let mut answer = reply(si::SimResult::ok());
    answer.after_step = Some(target);
    answer
}

fn not_found(entity: &str) -> si::SimResult {
    si::SimResult::fail(result_code::NOT_FOUND, format!("no entity named {entity:?}"))
}

/// Names of the global frame in requests: the standard's default
/// ("world"), Flotilla's and Flatland's own ("map"), and none.
const GLOBAL_FRAMES: [&str; 3] = ["", "world", WORLD_FRAME];

/// Where a request's reference frame is, and how it moves: the global
/// frame, or an existing entity's (its first body, as GetEntityState
/// reports it): "must be known to the simulator, e.g. of an object
/// spawned earlier", says SpawnEntity.
fn reference_frame(physics: &crate::physics::Physics, frame: &str) -> Result<(Pose2, Twist2), String> {
    let name = frame.trim_start_matches('/');
    if GLOBAL_FRAMES.contains(&name) {
        return Ok((Pose2::new(0.0, 0.0, 0.0), Twist2::default()));
    }
    physics.model_state(name).map_err(|_| {
        format!(
            "frame {frame:?} is neither the world frame (\"world\", \"{WORLD_FRAME}\" or \"\") nor an entity's name"
        )
    })
}

/// A 2D pose from a ROS pose in `frame` (see [`reference_frame`]), in the
/// world frame: finite, a unit quaternion that only turns about z.
fn pose_in_world(physics: &crate::physics::Physics, frame: &str, pose: &Pose) -> Result<Pose2, String> {
    let (reference, _) = reference_frame(physics, frame)?;
    let (p, q) = (&pose.position, &pose.orientation);
    if ![p.x, p.y, p.z, q.x, q.y, q.z, q.w].iter().all(|v| v.is_finite()) {
        return Err(format!("must be finite, got position {p:?}, orientation {q:?}"));
    }
    let norm = (q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w).sqrt();
    if (norm - 1.0).abs() > QUATERNION_TOLERANCE {
        return Err(format!("the orientation must be a unit quaternion (its norm is {norm})"));
    }
    if q.x.abs() > QUATERNION_TOLERANCE || q.y.abs() > QUATERNION_TOLERANCE {
        return Err("the orientation must be a rotation about z only (a 2D world)".into());
    }
    Ok(reference.compose(&Pose2::new(p.x, p.y, q.yaw())))
}

/// A world-frame twist from one observed in `frame` (see
/// [`reference_frame`]) of a body at `at` (world frame): turned into the
/// world's axes, plus the frame's own motion at that point (REP 103's
/// "observed in the frame", common_interfaces PR 240).
fn twist_in_world(physics: &crate::physics::Physics, frame: &str, twist: &Twist, at: Pose2) -> Result<Twist2, String> {
    let (reference, moving) = reference_frame(physics, frame)?;
    let (l, a) = (&twist.linear, &twist.angular);
    if ![l.x, l.y, a.z].iter().all(|v| v.is_finite()) {
        return Err(format!("state.twist must be finite, got {twist:?}"));
    }
    let (sin, cos) = reference.theta_rad.sin_cos();
    let (rx, ry) = (at.x_m - reference.x_m, at.y_m - reference.y_m);
    Ok(Twist2 {
        vx_mps: moving.vx_mps + cos * l.x - sin * l.y - moving.omega_radps * ry,
        vy_mps: moving.vy_mps + sin * l.x + cos * l.y + moving.omega_radps * rx,
        omega_radps: moving.omega_radps + a.z,
    })
}

/// ROS namespace rules: `/`-separated tokens of letters, digits and `_`,
/// none starting with a digit.
fn check_namespace(namespace: &str) -> Result<(), String> {
    let body = namespace.trim_start_matches('/');
    if body.is_empty() {
        return Ok(());
    }
    for token in body.split('/') {
        let valid = !token.is_empty()
            && !token.starts_with(|c: char| c.is_ascii_digit())
            && token.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(format!("namespace {namespace:?}: {token:?} is not a valid ROS name token"));
        }
    }
    Ok(())
}

fn file_stem(uri: &str) -> String {
    let stem = std::path::Path::new(uri).file_stem().and_then(|s| s.to_str()).unwrap_or("entity");
    let clean: String = stem.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    if clean.is_empty() {
        "entity".into()
    } else {
        clean
    }
}

/// `base` if free, else the first free `base_N`.
fn free_name(physics: &crate::physics::Physics, base: &str) -> String {
    if !physics.has_model(base) {
        return base.to_string();
    }
    (1..).map(|n| format!("{base}_{n}")).find(|name| !physics.has_model(name)).unwrap_or_default()
}
