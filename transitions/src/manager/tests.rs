use std::path::Path;

use flotilla_wire::description::{MapTransition, WorldDescription};
use flotilla_wire::geometry::{Pose2, Twist2};
use flotilla_wire::time::SimTime;
use flotilla_wire::world_to_nodes::{BodyState, WorldState};

use super::*;

/// The demo building (rider on taylor-1, resident on taylor-2, bodies 1
/// and 2) with `transitions` instead of its own.
fn building(transitions: Vec<MapTransition>) -> WorldDescription {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/building/building.world.yaml");
    let mut description = flotilla_world_file::load_world(&path).unwrap().initial_description().unwrap();
    description.transitions = transitions;
    description
}

fn transition(from: &str, to: &str, center: [f64; 2], command: Option<&str>, pose: Option<Pose2>) -> MapTransition {
    MapTransition {
        from_map: from.into(),
        center_m: center,
        radius_m: 0.5,
        command: command.map(str::to_string),
        to_map: to.into(),
        pose,
        source: "test.world:1".into(),
    }
}

/// A state at `step` (5 ms steps) with the rider at `rider` and the
/// resident far away.
fn state(step: u64, rider: [f64; 2]) -> WorldState {
    let body = |id, [x, y]: [f64; 2]| BodyState { id, pose: Pose2::new(x, y, 0.0), twist: Twist2::default() };
    WorldState {
        revision: 1,
        step,
        time: SimTime::at_step(step, 5_000_000),
        step_ns: 5_000_000,
        bodies: vec![body(1, rider), body(2, [1.0, 1.0])],
    }
}

fn on_map(mut description: WorldDescription, robot: &str, map: &str) -> WorldDescription {
    description.models.iter_mut().find(|m| m.name == robot).unwrap().map = map.into();
    description
}

const OUTSIDE: [f64; 2] = [5.0, 5.0];
const HERE: [f64; 2] = [10.0, 5.0];

#[test]
fn an_automatic_transition_fires_when_the_robot_enters_its_circle() {
    let description = building(vec![transition("taylor-1", "taylor-2", HERE, None, None)]);
    let mut manager = Manager::default();
    manager.follow(&description);
    assert_eq!(manager.on_state(&state(0, OUTSIDE)), []);
    assert_eq!(manager.on_state(&state(1, [9.4, 5.0])), [], "outside the 0.5 m circle");
    let fired = manager.on_state(&state(2, [9.6, 5.0]));
    assert_eq!(fired.len(), 1);
    assert_eq!(
        fired[0].request(),
        ControlRequest::SetMap {
            name: "rider".into(),
            map: "taylor-2".into(),
            pose: None,
            only_from: Some("taylor-1".into())
        }
    );
    assert_eq!(manager.on_state(&state(3, HERE)), [], "asked once");
}

#[test]
fn a_robot_that_starts_inside_a_circle_has_not_entered_it() {
    // also what a restarted manager sees: it must not fire a second time
    let description = building(vec![transition("taylor-1", "taylor-2", HERE, None, None)]);
    let mut manager = Manager::default();
    manager.follow(&description);
    assert_eq!(manager.on_state(&state(0, HERE)), []);
    assert_eq!(manager.on_state(&state(1, HERE)), []);
    manager.on_state(&state(2, OUTSIDE));
    assert_eq!(manager.on_state(&state(3, HERE)).len(), 1, "leaving and coming back is entering");
}

#[test]
fn two_automatic_transitions_at_one_place_fire_once_not_back_and_forth() {
    let description = building(vec![
        transition("taylor-1", "taylor-2", HERE, None, None),
        transition("taylor-2", "taylor-1", HERE, None, None),
    ]);
    let mut manager = Manager::default();
    manager.follow(&description);
    manager.on_state(&state(0, OUTSIDE));
    assert_eq!(manager.on_state(&state(1, HERE)).len(), 1);
    // the world applied it: the rider is on taylor-2, standing in the circle back
    manager.follow(&on_map(description.clone(), "rider", "taylor-2"));
    for step in 2..400 {
        assert_eq!(manager.on_state(&state(step, HERE)), [], "step {step}");
    }
    manager.on_state(&state(400, OUTSIDE));
    let back = manager.on_state(&state(401, HERE));
    assert_eq!((back.len(), back[0].to_map.as_str()), (1, "taylor-1"));
}

#[test]
fn a_command_transition_fires_only_inside_its_circle_and_only_for_its_command() {
    let landing = Pose2::new(1.0, 2.0, 0.5);
    let description = building(vec![
        transition("taylor-1", "taylor-elevator", HERE, Some("CLOSE-DOOR"), Some(landing)),
        transition("taylor-2", "taylor-elevator", HERE, Some("OPEN"), None),
    ]);
    let mut manager = Manager::default();
    manager.follow(&description);
    assert_eq!(manager.on_command("rider", "CLOSE-DOOR", 0), Err(Ignored::NoPosition));
    manager.on_state(&state(0, [10.0, 6.0]));
    assert_eq!(manager.on_state(&state(1, HERE)), [], "a command transition waits for its command");
    manager.on_state(&state(2, [10.0, 6.0]));
    let not_there = manager.on_command("rider", "CLOSE-DOOR", 10);
    assert!(matches!(not_there, Err(Ignored::NotThere { distance_m, .. }) if (distance_m - 0.5).abs() < 1e-9));
    manager.on_state(&state(3, HERE));
    assert_eq!(
        manager.on_command("rider", "close-door", 15),
        Err(Ignored::UnknownCommand { map: "taylor-1".into() }),
        "commands are case-sensitive"
    );
    assert_eq!(
        manager.on_command("rider", "OPEN", 15),
        Err(Ignored::UnknownCommand { map: "taylor-1".into() }),
        "another map's command"
    );
    assert_eq!(manager.on_command("nobody", "CLOSE-DOOR", 15), Err(Ignored::UnknownRobot));
    let fired = manager.on_command("rider", "CLOSE-DOOR", 20).unwrap();
    assert_eq!((fired.to_map.as_str(), fired.pose), ("taylor-elevator", Some(landing)));
    assert_eq!(manager.on_command("rider", "CLOSE-DOOR", 25), Err(Ignored::Changing));
}

#[test]
fn a_change_the_world_has_not_shown_is_asked_again_after_a_second() {
    let description = building(vec![transition("taylor-1", "taylor-2", HERE, None, None)]);
    let mut manager = Manager::default();
    manager.follow(&description);
    manager.on_state(&state(0, OUTSIDE));
    assert_eq!(manager.on_state(&state(1, HERE)).len(), 1);
    // 200 steps of 5 ms: one second after the request at step 1
    assert_eq!(manager.on_state(&state(200, HERE)), []);
    assert_eq!(manager.on_state(&state(201, HERE)).len(), 1, "asked again");
    // the world has it now: nothing pending
    manager.follow(&on_map(description, "rider", "taylor-2"));
    assert_eq!(manager.on_state(&state(401, HERE)), []);
}

#[test]
fn robots_on_no_map_are_not_watched() {
    let mut description = building(vec![]);
    description.models.iter_mut().for_each(|m| m.map.clear());
    let mut manager = Manager::default();
    manager.follow(&description);
    assert_eq!(manager.robots().count(), 0);
}
