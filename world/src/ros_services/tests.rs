//! The ROS services against the test room: one diff-drive robot at (5, 5).

use std::path::{Path, PathBuf};

use flotilla_messages::flatland_msgs::{DeleteModelRequest, ModelServiceResponse, SpawnModelRequest};
use flotilla_messages::geometry_msgs::{Point, Pose, Pose2D, PoseStamped, Quaternion};
use flotilla_messages::simulation_interfaces::*;
use flotilla_messages::std_srvs::EmptyMessage;
use flotilla_messages::{decode, encode, RosMessage};
use flotilla_wire::control::ClockMode;
use flotilla_wire::world_to_nodes::WorldChange;

use super::{answer, Answer, Service, World};
use crate::control::{ModelDirs, RunState};
use crate::physics::Physics;
use flotilla_world_file::load_world;

fn room() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/tests/room")
}

struct Sim {
    physics: Physics,
    run: RunState,
}

impl Sim {
    fn new() -> Sim {
        let world = room().join("world.yaml");
        let physics = Physics::new(&load_world(&world).unwrap()).unwrap();
        let run = RunState::new(ClockMode::Fast, 1.0, false, ModelDirs::new(&world, &[]).unwrap());
        Sim { physics, run }
    }

    fn call(&mut self, service: Service, request: &impl RosMessage) -> Answer {
        self.call_bytes(service, &encode(request))
    }

    fn call_bytes(&mut self, service: Service, request: &[u8]) -> Answer {
        answer(service, request, World { physics: &mut self.physics, run: &mut self.run })
    }

    fn models(&self) -> Vec<String> {
        self.physics.model_names().map(str::to_string).collect()
    }
}

fn reply<T: RosMessage>(answer: &Answer) -> T {
    decode(answer.reply.as_ref().expect("a CDR reply")).expect("a well-formed reply")
}

fn spawn_request(name: &str, uri: &str, x: f64) -> SpawnEntityRequest {
    SpawnEntityRequest {
        name: name.into(),
        allow_renaming: false,
        entity_resource: Resource { uri: uri.into(), resource_string: String::new() },
        entity_namespace: String::new(),
        initial_pose: PoseStamped {
            header: Default::default(),
            pose: Pose { position: Point { x, y: 2.0, z: 0.0 }, orientation: Quaternion::from_yaw(0.5) },
        },
    }
}

#[test]
fn spawn_entity_then_get_entities_finds_it_and_delete_entity_removes_it() {
    let mut sim = Sim::new();
    let spawned = sim.call(Service::SpawnEntity, &spawn_request("crate1", "box.model.yaml", 3.0));
    let response: SpawnEntityResponse = reply(&spawned);
    assert_eq!(response.result, SimResult::ok());
    assert_eq!(response.entity_name, "crate1");
    assert_eq!(spawned.changes, vec![WorldChange::ModelSpawned { model: "crate1".into() }]);

    let listed: GetEntitiesResponse = reply(&sim.call(Service::GetEntities, &GetEntitiesRequest::default()));
    assert_eq!(listed.entities, vec!["robot", "crate1"]);

    let state: GetEntityStateResponse =
        reply(&sim.call(Service::GetEntityState, &EntityRequest { entity: "crate1".into() }));
    assert_eq!(state.result.result, result_code::OK);
    assert_eq!(state.state.header.frame_id, "map");
    assert!((state.state.pose.position.x - 3.0).abs() < 1e-9);
    assert!((state.state.pose.orientation.yaw() - 0.5).abs() < 1e-9);

    let deleted: ResultResponse = reply(&sim.call(Service::DeleteEntity, &EntityRequest { entity: "crate1".into() }));
    assert_eq!(deleted.result, SimResult::ok());
    assert_eq!(sim.models(), vec!["robot"]);
}

#[test]
fn every_failure_has_its_standard_code_and_changes_nothing() {
    let mut sim = Sim::new();
    let spawn_code = |sim: &mut Sim, request: SpawnEntityRequest| {
        let answer = sim.call(Service::SpawnEntity, &request);
        assert!(answer.changes.is_empty());
        reply::<SpawnEntityResponse>(&answer).result.result
    };
    assert_eq!(spawn_code(&mut sim, spawn_request("robot", "box.model.yaml", 3.0)), result_code::NAME_NOT_UNIQUE);
    assert_eq!(spawn_code(&mut sim, spawn_request("a b", "box.model.yaml", 3.0)), result_code::NAME_INVALID);
    assert_eq!(spawn_code(&mut sim, spawn_request("x", "", 3.0)), result_code::NO_RESOURCE);
    assert_eq!(spawn_code(&mut sim, spawn_request("x", "robot.urdf", 3.0)), result_code::UNSUPPORTED_FORMAT);
    assert_eq!(spawn_code(&mut sim, spawn_request("x", "missing.yaml", 3.0)), result_code::RESOURCE_PARSE_ERROR);
    assert_eq!(spawn_code(&mut sim, spawn_request("x", "room.yaml", 3.0)), result_code::RESOURCE_PARSE_ERROR);
    assert_eq!(spawn_code(&mut sim, spawn_request("x", "box.model.yaml", f64::NAN)), result_code::INVALID_POSE);
    let mut tilted = spawn_request("x", "box.model.yaml", 3.0);
    tilted.initial_pose.pose.orientation = Quaternion::from_rpy(0.3, 0.0, 0.0);
    assert_eq!(spawn_code(&mut sim, tilted), result_code::INVALID_POSE);
    let mut elsewhere = spawn_request("x", "box.model.yaml", 3.0);
    elsewhere.initial_pose.header.frame_id = "robot/base".into();
    assert_eq!(spawn_code(&mut sim, elsewhere), result_code::INVALID_POSE);
    let mut bad_namespace = spawn_request("x", "box.model.yaml", 3.0);
    bad_namespace.entity_namespace = "9lives".into();
    assert_eq!(spawn_code(&mut sim, bad_namespace), result_code::NAMESPACE_INVALID);
    let escape = spawn_request("x", room().join("../../office/robot.model.yaml").to_str().unwrap(), 3.0);
    let answer = sim.call(Service::SpawnEntity, &escape);
    let response: SpawnEntityResponse = reply(&answer);
    assert_eq!(response.result.result, result_code::OPERATION_FAILED);
    assert!(response.result.error_message.contains("outside the allowed model directories"), "{response:?}");

    let unknown = EntityRequest { entity: "ghost".into() };
    assert_eq!(
        reply::<ResultResponse>(&sim.call(Service::DeleteEntity, &unknown)).result.result,
        result_code::NOT_FOUND
    );
    let state: GetEntityStateResponse = reply(&sim.call(Service::GetEntityState, &unknown));
    assert_eq!(state.result.result, result_code::NOT_FOUND);

    let garbage: SpawnEntityResponse = reply(&sim.call_bytes(Service::SpawnEntity, &[0x00, 0x01, 0x00, 0x00, 0xff]));
    assert_eq!(garbage.result.result, result_code::OPERATION_FAILED);
    assert!(sim.call_bytes(Service::Pause, b"junk").reply.is_err(), "std_srvs/Empty cannot say failed");
    assert!(!sim.run.paused);
    assert_eq!(sim.models(), vec!["robot"], "nothing changed");
}

#[test]
fn renaming_picks_a_free_name_when_allowed() {
    let mut sim = Sim::new();
    let mut request = spawn_request("robot", "box.model.yaml", 3.0);
    request.allow_renaming = true;
    let response: SpawnEntityResponse = reply(&sim.call(Service::SpawnEntity, &request));
    assert_eq!(response.entity_name, "robot_1");
    request.name.clear();
    let response: SpawnEntityResponse = reply(&sim.call(Service::SpawnEntity, &request));
    assert_eq!(response.entity_name, "box_model");
}

#[test]
fn flatland_spawn_and_delete_answer_success_and_message() {
    let mut sim = Sim::new();
    let spawn = SpawnModelRequest {
        yaml_path: "box.model.yaml".into(),
        name: "box1".into(),
        ns: String::new(),
        pose: Pose2D { x: 7.0, y: 5.0, theta: 0.0 },
    };
    let ok: ModelServiceResponse = reply(&sim.call(Service::SpawnModel, &spawn));
    assert_eq!(ok, ModelServiceResponse { success: true, message: String::new() });
    let again: ModelServiceResponse = reply(&sim.call(Service::SpawnModel, &spawn));
    assert!(!again.success && again.message.contains("already exists"), "{again:?}");
    let gone: ModelServiceResponse =
        reply(&sim.call(Service::DeleteModel, &DeleteModelRequest { name: "box1".into() }));
    assert!(gone.success);
}

#[test]
fn pause_step_and_play_follow_the_simulation_state_machine() {
    let mut sim = Sim::new();
    let state = |sim: &mut Sim| {
        reply::<GetSimulationStateResponse>(&sim.call(Service::GetSimulationState, &EmptyMessage::default()))
            .state
            .state
    };
    assert_eq!(state(&mut sim), simulation_state::PLAYING);

    let step = StepSimulationRequest { steps: 5 };
    let refused: ResultResponse = reply(&sim.call(Service::StepSimulation, &step));
    assert_eq!(refused.result.result, result_code::OPERATION_FAILED, "stepping needs a paused simulation");

    sim.call(Service::TogglePause, &EmptyMessage::default());
    assert_eq!(state(&mut sim), simulation_state::PAUSED);
    let stepping = sim.call(Service::StepSimulation, &step);
    assert_eq!(stepping.after_step, Some(5), "the reply waits until step 5 is published");
    assert_eq!(sim.run.steps_pending, 5);

    let set = |sim: &mut Sim, state: u8| {
        reply::<ResultResponse>(
            &sim.call(Service::SetSimulationState, &SetSimulationStateRequest { state: SimulationState { state } }),
        )
        .result
        .result
    };
    assert_eq!(set(&mut sim, simulation_state::PAUSED), result_code::ALREADY_IN_TARGET_STATE);
    assert_eq!(set(&mut sim, simulation_state::STOPPED), result_code::OK);
    assert_eq!(set(&mut sim, simulation_state::PAUSED), result_code::INCORRECT_TRANSITION);
    assert_eq!(set(&mut sim, simulation_state::PLAYING), result_code::OK);
    assert!(!sim.run.paused);
}

#[test]
fn set_entity_state_teleports_and_reset_puts_everything_back() {
    let mut sim = Sim::new();
    sim.call(Service::SpawnEntity, &spawn_request("crate1", "box.model.yaml", 3.0));
    let mut request = SetEntityStateRequest { entity: "robot".into(), set_pose: true, ..Default::default() };
    request.state.pose = Pose { position: Point { x: 2.0, y: 8.0, z: 0.0 }, orientation: Quaternion::from_yaw(1.0) };
    let moved = sim.call(Service::SetEntityState, &request);
    assert_eq!(reply::<ResultResponse>(&moved).result, SimResult::ok());
    assert!(matches!(moved.changes[..], [WorldChange::ModelMoved { .. }]));
    let (pose, _) = sim.physics.model_state("robot").unwrap();
    assert!((pose.x_m - 2.0).abs() < 1e-9 && (pose.y_m - 8.0).abs() < 1e-9 && (pose.theta_rad - 1.0).abs() < 1e-9);

    request.set_acceleration = true;
    let refused: ResultResponse = reply(&sim.call(Service::SetEntityState, &request));
    assert_eq!(refused.result.result, result_code::FEATURE_UNSUPPORTED);

    let time_only: ResultResponse =
        reply(&sim.call(Service::ResetSimulation, &ResetSimulationRequest { scope: reset_scope::TIME }));
    assert_eq!(time_only.result.result, result_code::FEATURE_UNSUPPORTED);
    let reset = sim.call(Service::ResetSimulation, &ResetSimulationRequest { scope: reset_scope::ALL });
    assert_eq!(reply::<ResultResponse>(&reset).result, SimResult::ok());
    assert_eq!(reset.changes, vec![WorldChange::WorldReset]);
    assert_eq!(sim.models(), vec!["robot"]);
    let (pose, _) = sim.physics.model_state("robot").unwrap();
    assert!((pose.x_m - 5.0).abs() < 1e-9 && (pose.y_m - 5.0).abs() < 1e-9 && pose.theta_rad.abs() < 1e-9);
}

#[test]
fn features_list_what_is_served() {
    let mut sim = Sim::new();
    let features: GetSimulatorFeaturesResponse =
        reply(&sim.call(Service::GetSimulatorFeatures, &EmptyMessage::default()));
    for f in [feature::SPAWNING, feature::DELETING, feature::ENTITY_STATE_GETTING, feature::STEP_SIMULATION_MULTIPLE] {
        assert!(features.features.features.contains(&f), "{f}");
    }
    assert!(!features.features.features.contains(&feature::SIMULATION_RESET_TIME));
    assert_eq!(features.features.spawn_formats, vec!["yaml"]);
}

fn state_of(sim: &mut Sim, entity: &str) -> EntityState {
    let got: GetEntityStateResponse =
        reply(&sim.call(Service::GetEntityState, &EntityRequest { entity: entity.into() }));
    assert_eq!(got.result, SimResult::ok());
    got.state
}

#[test]
fn the_global_frame_is_world_map_or_nothing_everywhere_a_request_takes_a_frame() {
    let mut sim = Sim::new();
    for (i, frame) in ["world", "/world", "map", "/map", ""].into_iter().enumerate() {
        let name = format!("crate{i}");
        let mut request = spawn_request(&name, "box.model.yaml", 1.0 + i as f64);
        request.initial_pose.header.frame_id = frame.into();
        let response: SpawnEntityResponse = reply(&sim.call(Service::SpawnEntity, &request));
        assert_eq!(response.result, SimResult::ok(), "spawn in {frame:?}");
        assert!((state_of(&mut sim, &name).pose.position.x - (1.0 + i as f64)).abs() < 1e-9, "{frame:?}");

        let mut set = SetEntityStateRequest { entity: "robot".into(), set_pose: true, ..Default::default() };
        set.state.header.frame_id = frame.into();
        set.state.pose.position = Point { x: 4.0, y: 3.0 + i as f64, z: 0.0 };
        set.state.pose.orientation = Quaternion::from_yaw(0.25);
        assert_eq!(reply::<ResultResponse>(&sim.call(Service::SetEntityState, &set)).result, SimResult::ok());
        let now = state_of(&mut sim, "robot");
        assert!((now.pose.position.y - (3.0 + i as f64)).abs() < 1e-9, "set in {frame:?}: {now:?}");
        assert_eq!(now.header.frame_id, "map");
    }
}

#[test]
fn an_entity_s_name_is_a_frame_for_spawning_and_setting_state() {
    let mut sim = Sim::new();
    // The robot stands at (5, 5) facing +x; turn it to face +y.
    let mut face_north = SetEntityStateRequest { entity: "robot".into(), set_pose: true, ..Default::default() };
    face_north.state.pose.position = Point { x: 5.0, y: 5.0, z: 0.0 };
    face_north.state.pose.orientation = Quaternion::from_yaw(std::f64::consts::FRAC_PI_2);
    assert_eq!(reply::<ResultResponse>(&sim.call(Service::SetEntityState, &face_north)).result, SimResult::ok());

    // 1 m ahead of the robot, turned 0.5 rad further: (5, 6) facing π/2 + 0.5.
    let mut ahead = spawn_request("crate", "box.model.yaml", 1.0);
    ahead.initial_pose.header.frame_id = "robot".into();
    ahead.initial_pose.pose.position.y = 0.0;
    let response: SpawnEntityResponse = reply(&sim.call(Service::SpawnEntity, &ahead));
    assert_eq!(response.result, SimResult::ok());
    let placed = state_of(&mut sim, "crate");
    assert!((placed.pose.position.x - 5.0).abs() < 1e-9 && (placed.pose.position.y - 6.0).abs() < 1e-9, "{placed:?}");
    assert!((placed.pose.orientation.yaw() - (std::f64::consts::FRAC_PI_2 + 0.5)).abs() < 1e-9);

    // The robot 2 m to the crate's left, moving at 1 m/s along the crate's x axis.
    let mut beside =
        SetEntityStateRequest { entity: "robot".into(), set_pose: true, set_twist: true, ..Default::default() };
    beside.state.header.frame_id = "crate".into();
    beside.state.pose.position = Point { x: 0.0, y: 2.0, z: 0.0 };
    beside.state.pose.orientation = Quaternion::from_yaw(0.0);
    beside.state.twist.linear.x = 1.0;
    assert_eq!(reply::<ResultResponse>(&sim.call(Service::SetEntityState, &beside)).result, SimResult::ok());
    let moved = state_of(&mut sim, "robot");
    let heading = std::f64::consts::FRAC_PI_2 + 0.5;
    let (sin, cos) = heading.sin_cos();
    assert!((moved.pose.position.x - (5.0 - 2.0 * sin)).abs() < 1e-9, "{moved:?}");
    assert!((moved.pose.position.y - (6.0 + 2.0 * cos)).abs() < 1e-9, "{moved:?}");
    assert!((moved.twist.linear.x - cos).abs() < 1e-9 && (moved.twist.linear.y - sin).abs() < 1e-9, "{moved:?}");

    // A frame that is neither the world's nor an entity's is refused.
    let mut nowhere = spawn_request("x", "box.model.yaml", 1.0);
    nowhere.initial_pose.header.frame_id = "odom".into();
    let refused: SpawnEntityResponse = reply(&sim.call(Service::SpawnEntity, &nowhere));
    assert_eq!(refused.result.result, result_code::INVALID_POSE);
    assert!(refused.result.error_message.contains("\"odom\""), "{refused:?}");
    beside.state.header.frame_id = "odom".into();
    let refused: ResultResponse = reply(&sim.call(Service::SetEntityState, &beside));
    assert_eq!(refused.result.result, result_code::SET_STATE_INVALID_POSE);
}

#[test]
fn get_entities_states_lists_the_matching_entities_with_their_states() {
    let mut sim = Sim::new();
    let spawned: SpawnEntityResponse =
        reply(&sim.call(Service::SpawnEntity, &spawn_request("crate1", "box.model.yaml", 3.0)));
    assert_eq!(spawned.result, SimResult::ok());

    let all: GetEntitiesStatesResponse =
        reply(&sim.call(Service::GetEntitiesStates, &GetEntitiesStatesRequest::default()));
    assert_eq!(all.result, SimResult::ok());
    assert_eq!(all.entities, vec!["robot", "crate1"]);
    assert_eq!(all.states.len(), 2);
    assert_eq!((all.states[0].pose.position.x, all.states[0].pose.position.y), (5.0, 5.0));
    assert_eq!(all.states[1], state_of(&mut sim, "crate1"), "as GetEntityState says");

    let mut robots = GetEntitiesStatesRequest::default();
    robots.filters.categories = vec![EntityCategory { category: 1 }];
    let robots: GetEntitiesStatesResponse = reply(&sim.call(Service::GetEntitiesStates, &robots));
    assert_eq!(robots.entities, vec!["robot"]);

    let mut bad = GetEntitiesStatesRequest::default();
    bad.filters.filter = "(".into();
    let bad: GetEntitiesStatesResponse = reply(&sim.call(Service::GetEntitiesStates, &bad));
    assert_eq!(bad.result.result, result_code::OPERATION_FAILED);
    assert!(bad.entities.is_empty() && bad.states.is_empty());
}

#[test]
fn get_entity_info_gives_the_category_and_what_the_model_is() {
    let mut sim = Sim::new();
    let info: GetEntityInfoResponse =
        reply(&sim.call(Service::GetEntityInfo, &EntityRequest { entity: "robot".into() }));
    assert_eq!(info.result, SimResult::ok());
    assert_eq!(info.info.category.category, 1, "a robot: it has a drive");
    assert!(info.info.description.contains("robot.model.yaml") && info.info.description.contains("DiffDrive"));
    assert!(info.info.tags.is_empty());
    let spawned: SpawnEntityResponse =
        reply(&sim.call(Service::SpawnEntity, &spawn_request("crate1", "box.model.yaml", 3.0)));
    assert_eq!(spawned.result, SimResult::ok());
    let info: GetEntityInfoResponse =
        reply(&sim.call(Service::GetEntityInfo, &EntityRequest { entity: "crate1".into() }));
    assert_eq!(info.info.category.category, 5, "a static object");
    let missing: GetEntityInfoResponse =
        reply(&sim.call(Service::GetEntityInfo, &EntityRequest { entity: "ghost".into() }));
    assert_eq!(missing.result.result, result_code::NOT_FOUND);

    let features: GetSimulatorFeaturesResponse =
        reply(&sim.call(Service::GetSimulatorFeatures, &EmptyMessage::default()));
    assert!(features.features.features.contains(&feature::ENTITY_INFO_GETTING));
}

#[test]
fn get_entity_bounds_is_the_box_of_the_footprints_in_the_entity_s_own_frame() {
    let mut sim = Sim::new();
    let bounds_of = |sim: &mut Sim, entity: &str| -> GetEntityBoundsResponse {
        reply(&sim.call(Service::GetEntityBounds, &EntityRequest { entity: entity.into() }))
    };
    let robot = bounds_of(&mut sim, "robot");
    assert_eq!(robot.result, SimResult::ok());
    assert_eq!(robot.bounds.kind, bounds_type::BOX);
    let corners: Vec<(f64, f64)> = robot.bounds.points.iter().map(|p| (p.x, p.y)).collect();
    assert_eq!(corners, vec![(0.2, 0.2), (-0.2, -0.2)], "upper right, then lower left: a 0.2 m circle");

    // A 0.5 m crate turned 0.5 rad: still ±0.25 m in its own frame.
    let spawned: SpawnEntityResponse =
        reply(&sim.call(Service::SpawnEntity, &spawn_request("crate1", "box.model.yaml", 3.0)));
    assert_eq!(spawned.result, SimResult::ok());
    let crate_bounds = bounds_of(&mut sim, "crate1");
    let corners: Vec<(f64, f64)> = crate_bounds.bounds.points.iter().map(|p| (p.x, p.y)).collect();
    for ((x, y), (ex, ey)) in corners.into_iter().zip([(0.25, 0.25), (-0.25, -0.25)]) {
        assert!((x - ex).abs() < 1e-9 && (y - ey).abs() < 1e-9, "{crate_bounds:?}");
    }
    assert_eq!(bounds_of(&mut sim, "ghost").result.result, result_code::NOT_FOUND);
}

#[test]
fn get_current_world_names_the_world_file() {
    let mut sim = Sim::new();
    let current: GetCurrentWorldResponse = reply(&sim.call(Service::GetCurrentWorld, &EmptyMessage::default()));
    assert_eq!(current.result, SimResult::ok());
    assert_eq!(current.world.name, "world");
    assert!(current.world.world_resource.uri.ends_with("room/world.yaml"), "{current:?}");
    assert!(current.world.description.contains("walls") && current.world.description.contains("1 model"));
}

#[test]
fn get_spawnables_lists_the_model_files_spawn_entity_takes() {
    let mut sim = Sim::new();
    let request = GetSpawnablesRequest { sources: vec![".".into(), "../bumper".into()] };
    let found: GetSpawnablesResponse = reply(&sim.call(Service::GetSpawnables, &request));
    assert_eq!(found.result.result, result_code::OK);
    assert!(found.result.error_message.contains("\"../bumper\""), "outside the allowed directories: {found:?}");
    let files: Vec<&str> =
        found.spawnables.iter().map(|s| s.entity_resource.uri.rsplit('/').next().unwrap_or_default()).collect();
    assert_eq!(files, ["box.model.yaml", "ramp.model.yaml", "robot.model.yaml"], "no world, no map, no repeats");
    let crate_box = &found.spawnables[0];
    assert!(crate_box.description.contains("1 body"), "{crate_box:?}");
    let corners: Vec<(f64, f64)> = crate_box.spawn_bounds.points.iter().map(|p| (p.x, p.y)).collect();
    assert_eq!(corners, vec![(0.25, 0.25), (-0.25, -0.25)]);

    // What it lists, SpawnEntity spawns.
    let spawn = spawn_request("from_list", &crate_box.entity_resource.uri, 3.0);
    let spawned: SpawnEntityResponse = reply(&sim.call(Service::SpawnEntity, &spawn));
    assert_eq!(spawned.result, SimResult::ok());
}

#[test]
fn spawn_entities_spawns_all_in_order_or_none() {
    let mut sim = Sim::new();
    let mut second = spawn_request("crate2", "box.model.yaml", 1.0);
    second.initial_pose.header.frame_id = "crate1".into(); // spawned just before, in the same call
    second.initial_pose.pose.position.y = 0.0;
    let batch = |third: SpawnEntityRequest| SpawnEntitiesRequest {
        spawn_requests: vec![spawn_request("crate1", "box.model.yaml", 3.0), second.clone(), third],
    };

    // One bad request: nothing is spawned, and each result says why.
    let answer = sim.call(Service::SpawnEntities, &batch(spawn_request("robot", "box.model.yaml", 3.0))); // taken
    let response: SpawnEntitiesResponse = reply(&answer);
    assert_eq!(response.result.result, ENTITIES_SPAWN_FAILED);
    let codes: Vec<u8> = response.results.iter().map(|r| r.result.result).collect();
    assert_eq!(codes, [result_code::OPERATION_FAILED, result_code::OPERATION_FAILED, result_code::NAME_NOT_UNIQUE]);
    assert!(response.results[0].result.error_message.contains("request 2 failed"), "{response:?}");
    assert!(answer.changes.is_empty());
    assert_eq!(sim.models(), ["robot"], "all or none");

    // All good: all spawned, in order.
    let answer = sim.call(Service::SpawnEntities, &batch(spawn_request("crate3", "box.model.yaml", 7.0)));
    let response: SpawnEntitiesResponse = reply(&answer);
    assert_eq!(response.result, SimResult::ok());
    assert_eq!(sim.models(), ["robot", "crate1", "crate2", "crate3"]);
    assert_eq!(answer.changes.len(), 3);
    // crate1 at (3, 2) facing 0.5 rad; crate2 1 m ahead of it.
    let placed = state_of(&mut sim, "crate2");
    assert!((placed.pose.position.x - (3.0 + 0.5f64.cos())).abs() < 1e-9, "{placed:?}");
    assert!((placed.pose.position.y - (2.0 + 0.5f64.sin())).abs() < 1e-9, "{placed:?}");

    let one = SpawnEntitiesRequest { spawn_requests: vec![spawn_request("crate4", "box.model.yaml", 7.0)] };
    let response: SpawnEntitiesResponse = reply(&sim.call(Service::SpawnEntities, &one));
    assert_eq!(response.result, SimResult::ok());
}

#[test]
fn set_entity_info_labels_an_entity_and_get_entities_filters_on_its_tags() {
    let mut sim = Sim::new();
    for name in ["crate1", "crate2"] {
        let spawned: SpawnEntityResponse =
            reply(&sim.call(Service::SpawnEntity, &spawn_request(name, "box.model.yaml", 3.0)));
        assert_eq!(spawned.result, SimResult::ok());
    }
    let label = |entity: &str, category: u8, tags: &[&str]| SetEntityInfoRequest {
        entity: entity.into(),
        info: EntityInfo {
            category: EntityCategory { category },
            description: format!("{entity}, labelled"),
            tags: tags.iter().map(|t| t.to_string()).collect(),
        },
    };
    let set = |sim: &mut Sim, request: SetEntityInfoRequest| -> SimResult {
        reply::<ResultResponse>(&sim.call(Service::SetEntityInfo, &request)).result
    };
    assert_eq!(set(&mut sim, label("crate1", 2, &["pallet", "red"])), SimResult::ok());
    assert_eq!(set(&mut sim, label("crate2", 5, &["pallet"])), SimResult::ok());
    assert_eq!(set(&mut sim, label("ghost", 5, &[])).result, result_code::NOT_FOUND);
    assert_eq!(set(&mut sim, label("crate2", 3, &[])).result, result_code::OPERATION_FAILED, "no category 3");

    let info: GetEntityInfoResponse =
        reply(&sim.call(Service::GetEntityInfo, &EntityRequest { entity: "crate1".into() }));
    assert_eq!(info.info.category.category, 2, "a human now, as set");
    assert_eq!(info.info.description, "crate1, labelled");
    assert_eq!(info.info.tags, ["pallet", "red"]);

    let entities = |sim: &mut Sim, tags: &[&str], filter_mode: u8, categories: Vec<u8>| -> Vec<String> {
        let mut request = GetEntitiesRequest::default();
        request.filters.tags = TagsFilter { tags: tags.iter().map(|t| t.to_string()).collect(), filter_mode };
        request.filters.categories = categories.into_iter().map(|category| EntityCategory { category }).collect();
        let response: GetEntitiesResponse = reply(&sim.call(Service::GetEntities, &request));
        assert_eq!(response.result, SimResult::ok());
        response.entities
    };
    assert_eq!(entities(&mut sim, &["pallet"], tags_filter_mode::ANY, vec![]), ["crate1", "crate2"]);
    assert_eq!(entities(&mut sim, &["pallet", "red"], tags_filter_mode::ALL, vec![]), ["crate1"]);
    assert_eq!(entities(&mut sim, &["red", "blue"], tags_filter_mode::ANY, vec![]), ["crate1"]);
    assert_eq!(entities(&mut sim, &[], tags_filter_mode::ANY, vec![2]), ["crate1"], "the category set");
    assert_eq!(entities(&mut sim, &[], tags_filter_mode::ANY, vec![1]), ["robot"], "the category derived");
}

mod simulate_steps;
mod worlds;

#[test]
fn a_crowd_s_people_are_humans_and_its_scripted_agents_moving_objects() {
    let world = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/tests/crowd/room.world.yaml");
    let physics = Physics::new(&load_world(&world).unwrap()).unwrap();
    let run = RunState::new(ClockMode::Fast, 1.0, false, ModelDirs::new(&world, &[]).unwrap());
    let mut sim = Sim { physics, run };
    let category = |sim: &mut Sim, entity: &str| {
        let info: GetEntityInfoResponse =
            reply(&sim.call(Service::GetEntityInfo, &EntityRequest { entity: entity.into() }));
        info.info.category.category
    };
    assert_eq!(category(&mut sim, "robot"), 1);
    assert_eq!(category(&mut sim, "alice"), 2, "a person: HUMAN");
    assert_eq!(category(&mut sim, "couple_2"), 2);
    assert_eq!(category(&mut sim, "trolley"), 4, "a scripted agent: DYNAMIC_OBJECT");
    let mut humans = GetEntitiesRequest::default();
    humans.filters.categories = vec![EntityCategory { category: 2 }];
    let listed: GetEntitiesResponse = reply(&sim.call(Service::GetEntities, &humans));
    assert_eq!(listed.entities, ["alice", "bob", "couple_1", "couple_2"]);
}
