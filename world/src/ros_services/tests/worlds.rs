//! Whole worlds and named places: LoadWorld, UnloadWorld,
//! GetAvailableWorlds, GetCurrentWorld, GetNamedPoses, GetNamedPoseBounds,
//! starting from the test room.

use super::*;

fn load(sim: &mut Sim, uri: &str) -> Answer {
    let request = LoadWorldRequest {
        world_resource: Resource { uri: uri.into(), resource_string: String::new() },
        ..Default::default()
    };
    sim.call(Service::LoadWorld, &request)
}

fn simulation_state(sim: &mut Sim) -> u8 {
    let state: GetSimulationStateResponse = reply(&sim.call(Service::GetSimulationState, &EmptyMessage::default()));
    state.state.state
}

#[test]
fn load_world_replaces_layers_and_models_and_leaves_the_simulation_stopped() {
    let mut sim = Sim::new();
    for _ in 0..10 {
        sim.physics.step();
    }
    let (time, revision) = (sim.physics.time(), sim.physics.revision());
    let old_ids: Vec<u32> =
        sim.physics.description().models.iter().flat_map(|m| m.bodies.iter().map(|b| b.id)).collect();

    let loaded = load(&mut sim, "annex.world.yaml");
    let response: LoadWorldResponse = reply(&loaded);
    assert_eq!(response.result, SimResult::ok());
    assert_eq!(response.world.name, "annex.world");
    assert!(response.world.description.contains("2 models"), "{response:?}");
    let path = room().join("annex.world.yaml").canonicalize().unwrap();
    assert_eq!(loaded.changes, vec![WorldChange::WorldLoaded { path: path.to_string_lossy().into_owned() }]);

    assert_eq!(sim.models(), ["robot", "crate"]);
    assert_eq!(state_of(&mut sim, "robot").pose.position.x, 1.0, "the new world's robot, at its pose");
    assert_eq!(simulation_state(&mut sim), simulation_state::STOPPED);
    // Time goes on; the description moves on, with bodies no node has seen.
    assert_eq!(sim.physics.time(), time);
    assert!(sim.physics.revision() > revision);
    let description = sim.physics.description();
    let new_ids: Vec<u32> = description.models.iter().flat_map(|m| m.bodies.iter().map(|b| b.id)).collect();
    assert!(new_ids.iter().all(|id| !old_ids.contains(id)), "{old_ids:?} then {new_ids:?}");
    let current: GetCurrentWorldResponse = reply(&sim.call(Service::GetCurrentWorld, &EmptyMessage::default()));
    assert_eq!(current.world.name, "annex.world");
}

#[test]
fn a_world_that_cannot_be_loaded_is_refused_with_its_code_and_the_old_world_stays() {
    let mut sim = Sim::new();
    let outside = std::env::temp_dir().join(format!("flotilla-outside-{}.yaml", std::process::id()));
    std::fs::copy(room().join("world.yaml"), &outside).unwrap();
    let cases = [
        ("", world_result_code::NO_RESOURCE),
        ("http://example.com/world.yaml", world_result_code::UNSUPPORTED_FORMAT),
        ("room.dat", world_result_code::UNSUPPORTED_FORMAT),
        ("nope.yaml", world_result_code::RESOURCE_PARSE_ERROR),
        ("robot.model.yaml", world_result_code::RESOURCE_PARSE_ERROR),
        ("broken/missing_map.world.yaml", world_result_code::MISSING_ASSETS),
        ("broken/other_step.world.yaml", result_code::OPERATION_FAILED),
        (outside.to_str().unwrap(), result_code::OPERATION_FAILED),
    ];
    for (uri, code) in cases {
        let answer = load(&mut sim, uri);
        let response: LoadWorldResponse = reply(&answer);
        assert_eq!(response.result.result, code, "{uri:?}: {}", response.result.error_message);
        assert!(answer.changes.is_empty(), "{uri:?}");
        assert_eq!(sim.models(), ["robot"], "{uri:?}");
    }
    let _ = std::fs::remove_file(&outside);
    // the messages say what is wrong
    let mut message = |uri: &str| reply::<LoadWorldResponse>(&load(&mut sim, uri)).result.error_message;
    assert!(message("broken/missing_map.world.yaml").contains("nowhere.yaml"));
    assert!(message("broken/other_step.world.yaml").contains("step size"));
    let inline = LoadWorldRequest {
        world_resource: Resource { uri: String::new(), resource_string: "properties: {}".into() },
        ..Default::default()
    };
    let response: LoadWorldResponse = reply(&sim.call(Service::LoadWorld, &inline));
    assert_eq!(response.result.result, world_result_code::UNSUPPORTED_FORMAT);
}

#[test]
fn unload_world_empties_it_until_a_world_is_loaded_again() {
    let mut sim = Sim::new();
    let unloaded = sim.call(Service::UnloadWorld, &EmptyMessage::default());
    assert_eq!(reply::<ResultResponse>(&unloaded).result, SimResult::ok());
    assert_eq!(unloaded.changes, vec![WorldChange::WorldUnloaded]);
    assert!(sim.models().is_empty());
    assert!(sim.physics.description().layers.is_empty());
    assert_eq!(simulation_state(&mut sim), simulation_state::STOPPED);
    let current: GetCurrentWorldResponse = reply(&sim.call(Service::GetCurrentWorld, &EmptyMessage::default()));
    assert_eq!(current.result.result, world_result_code::NO_WORLD_LOADED);
    let again: ResultResponse = reply(&sim.call(Service::UnloadWorld, &EmptyMessage::default()));
    assert_eq!(again.result.result, world_result_code::NO_WORLD_LOADED);

    // With no world file to be relative to, a world is named by its path.
    let path = room().join("world.yaml");
    let loaded: LoadWorldResponse = reply(&load(&mut sim, path.to_str().unwrap()));
    assert_eq!(loaded.result, SimResult::ok());
    assert_eq!(sim.models(), ["robot"]);
}

#[test]
fn get_available_worlds_lists_the_world_files_in_the_allowed_directories() {
    let mut sim = Sim::new();
    let names = |response: &GetAvailableWorldsResponse| -> Vec<String> {
        response.worlds.iter().map(|w| w.name.clone()).collect()
    };
    let all: GetAvailableWorldsResponse =
        reply(&sim.call(Service::GetAvailableWorlds, &GetAvailableWorldsRequest::default()));
    assert_eq!(all.result, SimResult::ok());
    // world files only: not the models, the map or its data
    assert_eq!(names(&all), ["annex.world", "missing_map.world", "other_step.world", "ramp.world", "world"]);
    let annex = &all.worlds[0];
    assert!(annex.world_resource.uri.ends_with("room/annex.world.yaml"));
    assert_eq!(annex.description, "Flatland world file: layers walls; 2 models");

    // Each world it lists loads (or says why not).
    let loaded: LoadWorldResponse = reply(&load(&mut sim, &annex.world_resource.uri));
    assert_eq!(loaded.result, SimResult::ok());

    let outside = GetAvailableWorldsRequest { additional_sources: vec!["/etc".into()], ..Default::default() };
    let refused: GetAvailableWorldsResponse = reply(&sim.call(Service::GetAvailableWorlds, &outside));
    assert_eq!(refused.result.result, result_code::OPERATION_FAILED);
    assert!(refused.result.error_message.contains("outside the allowed directories"));
    let tolerant = GetAvailableWorldsRequest { continue_on_error: true, ..outside };
    let listed: GetAvailableWorldsResponse = reply(&sim.call(Service::GetAvailableWorlds, &tolerant));
    assert_eq!((listed.result.result, listed.worlds.len()), (result_code::OK, 5));
    assert!(listed.result.error_message.contains("/etc"));

    // Worlds carry no tags: a tag filter matches none of them.
    let tagged = GetAvailableWorldsRequest {
        filter: TagsFilter { tags: vec!["warehouse".into()], filter_mode: 0 },
        ..Default::default()
    };
    assert!(reply::<GetAvailableWorldsResponse>(&sim.call(Service::GetAvailableWorlds, &tagged)).worlds.is_empty());
}

#[test]
fn named_poses_come_from_the_world_file_with_their_tags_and_bounds() {
    let mut sim = Sim::new();
    let none: GetNamedPosesResponse = reply(&sim.call(Service::GetNamedPoses, &GetNamedPosesRequest::default()));
    assert_eq!((none.result, none.poses.len()), (SimResult::ok(), 0), "the room names no place");
    assert_eq!(reply::<LoadWorldResponse>(&load(&mut sim, "annex.world.yaml")).result, SimResult::ok());

    let poses = |sim: &mut Sim, tags: &[&str], filter_mode: u8| -> Vec<String> {
        let tags = TagsFilter { tags: tags.iter().map(|t| t.to_string()).collect(), filter_mode };
        let response: GetNamedPosesResponse = reply(&sim.call(Service::GetNamedPoses, &GetNamedPosesRequest { tags }));
        response.poses.iter().map(|p| p.name.clone()).collect()
    };
    assert_eq!(poses(&mut sim, &[], 0), ["dock", "middle", "goal"]);
    assert_eq!(poses(&mut sim, &["spawn", "navigation_goal"], tags_filter_mode::ANY), ["dock", "middle", "goal"]);
    assert_eq!(poses(&mut sim, &["spawn", "dock"], tags_filter_mode::ALL), ["dock"]);

    let all: GetNamedPosesResponse = reply(&sim.call(Service::GetNamedPoses, &GetNamedPosesRequest::default()));
    let dock = &all.poses[0];
    assert_eq!(
        (dock.description.as_str(), dock.tags.clone()),
        ("the charging dock", vec!["dock".into(), "spawn".into()])
    );
    assert_eq!((dock.pose.position.x, dock.pose.position.y), (1.0, 9.0));
    assert!((dock.pose.orientation.yaw() + std::f64::consts::FRAC_PI_2).abs() < 1e-12);

    let bounds = |sim: &mut Sim, name: &str| -> GetNamedPoseBoundsResponse {
        reply(&sim.call(Service::GetNamedPoseBounds, &GetNamedPoseBoundsRequest { name: name.into() }))
    };
    let xy = |b: &Bounds| -> Vec<(f64, f64)> { b.points.iter().map(|p| (p.x, p.y)).collect() };
    let dock = bounds(&mut sim, "dock").bounds;
    assert_eq!((dock.kind, xy(&dock)), (bounds_type::BOX, vec![(0.4, 0.3), (-0.4, -0.3)]), "upper right, lower left");
    let middle = bounds(&mut sim, "middle").bounds;
    assert_eq!((middle.kind, xy(&middle)), (bounds_type::SPHERE, vec![(0.0, 0.0), (1.5, 0.0)]), "centre, radius");
    assert_eq!(bounds(&mut sim, "goal").bounds.kind, bounds_type::EMPTY, "unbounded");
    assert_eq!(bounds(&mut sim, "ghost").result.result, result_code::NOT_FOUND);
}
