//! A lift (`flotilla-building`): called to floor 1 by Open-RMF's
//! `rmf_lift_msgs/LiftRequest`, it opens its door there; a robot drives in;
//! sent to floor 2, it closes the door, travels, puts the robot on floor
//! 2's map and opens the door there, and the robot drives out beside one
//! that waited on floor 2 all along. `LiftState` says each step of it.

mod common;

use std::time::Duration;

use common::Sim;
use flotilla_messages::geometry_msgs::Twist;
use flotilla_messages::rmf_lift_msgs::{LiftRequest, LiftState};
use flotilla_wire::geometry::Pose2;
use flotilla_wire::world_to_nodes::WorldState;

const T: Duration = Duration::from_secs(30);

fn to(floor: &str) -> LiftRequest {
    LiftRequest {
        lift_name: "lift".into(),
        session_id: "fleet".into(),
        request_type: LiftRequest::REQUEST_AGV_MODE,
        destination_floor: floor.into(),
        door_state: LiftRequest::DOOR_OPEN,
        ..LiftRequest::default()
    }
}

fn drive(v_mps: f64) -> Twist {
    let mut twist = Twist::default();
    twist.linear.x = v_mps;
    twist
}

fn pose(state: &WorldState, body: u32) -> Pose2 {
    state.bodies.iter().find(|b| b.id == body).expect("the body is in the state").pose
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_robot_calls_the_lift_rides_to_floor_2_and_drives_out_beside_the_one_waiting_there() {
    let world = common::config("tests/lift/world.yaml");
    let sim = Sim::start("lift", &world, &["flotilla-drive", "flotilla-building"], &["--rate", "2"]).await;
    let description = flotilla_node_kit::client::wait_for_description(&sim.session, &sim.keys, T).await.unwrap();
    let body_of = |model: &str| description.models.iter().find(|m| m.name == model).unwrap().bodies[0].id;
    let (rider, waiting) = (body_of("rider"), body_of("waiting"));
    let mut states = sim.subscribe_states().await;
    let mut lift_states = sim.subscribe::<LiftState>("/lift_states").await;

    // Called to floor 1, where it stands: the door opens. (Asked again
    // each second until then, as Open-RMF's lift supervisor does: the
    // building node may not have subscribed yet.)
    let deadline = tokio::time::Instant::now() + T;
    loop {
        sim.publish("/lift_requests", &to("L1")).await;
        let open = |s: &LiftState| s.current_floor == "L1" && s.door_state == LiftState::DOOR_OPEN;
        let waited = tokio::time::timeout(Duration::from_secs(1), lift_states.until(T, open)).await;
        if waited.is_ok() {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "the lift's door never opened on L1");
    }

    // The rider drives in (the waiting robot, on floor 2 at the same x, y,
    // is not in its way) and stops in the cabin.
    loop {
        let state = states.next(T).await;
        let at = pose(&state, rider);
        if at.x_m >= 7.9 {
            sim.publish("/rider/cmd_vel", &drive(0.0)).await;
            break;
        }
        if state.step.is_multiple_of(20) {
            sim.publish("/rider/cmd_vel", &drive(0.5)).await;
        }
    }

    // Sent to floor 2: door closes, the lift goes up, and arrives with the
    // door open; the rider is on floor 2's map now, where it stood.
    sim.publish("/lift_requests", &to("L2")).await;
    let mut said: Vec<LiftState> = Vec::new();
    let arrived = lift_states
        .until(T, |s| {
            said.push(s.clone());
            s.current_floor == "L2" && s.door_state == LiftState::DOOR_OPEN
        })
        .await;
    assert_eq!((arrived.motion_state, arrived.destination_floor.as_str()), (LiftState::MOTION_STOPPED, "L2"));
    let now = flotilla_node_kit::client::wait_for_description(&sim.session, &sim.keys, T).await.unwrap();
    let map_of = |model: &str| now.models.iter().find(|m| m.name == model).unwrap().map.clone();
    assert_eq!((map_of("rider").as_str(), map_of("waiting").as_str()), ("floor-2", "floor-2"));
    assert!(said.iter().any(|s| s.motion_state == LiftState::MOTION_UP), "it went up: {said:?}");
    assert!(said.iter().all(|s| s.available_floors == ["L1", "L2"] && s.current_mode == LiftState::MODE_AGV));

    // The rider drives out, back towards x = 6.5 m, and stops short of
    // the robot that waited on floor 2, which never moved.
    loop {
        let state = states.next(T).await;
        if pose(&state, rider).x_m <= 6.5 {
            sim.publish("/rider/cmd_vel", &drive(0.0)).await;
            break;
        }
        if state.step.is_multiple_of(20) {
            sim.publish("/rider/cmd_vel", &drive(-0.5)).await;
        }
    }
    let state = states.next(T).await;
    let (out, stayed) = (pose(&state, rider), pose(&state, waiting));
    assert!((out.y_m - 5.0).abs() < 0.05 && out.x_m < 6.6, "the rider is out on floor 2: {out:?}");
    assert!((stayed.x_m - 5.0).abs() < 1e-6 && (stayed.y_m - 5.0).abs() < 1e-6, "waiting never moved: {stayed:?}");
}

#[test]
fn a_lift_naming_a_map_the_world_does_not_have_is_refused() {
    let world = common::config("tests/lift/broken/unknown-map.world.yaml");
    let error = flotilla_world_file::load_world(world.as_ref()).unwrap_err().to_string();
    assert!(error.contains("lift-unknown-map.model.yaml"), "the file: {error}");
    assert!(error.contains("model \"lift\" plugin \"lift\""), "the model and plugin: {error}");
    assert!(error.contains("\"floors\" index 1: map \"floor-3\" is not one of the world's maps"), "{error}");
}

#[test]
fn a_door_on_no_map_of_a_world_of_several_is_refused() {
    let world = common::config("tests/lift/broken/door-on-no-map.world.yaml");
    let error = flotilla_world_file::load_world(world.as_ref()).unwrap_err().to_string();
    assert!(error.contains("lift-door.model.yaml") && error.contains("model \"door_2\" plugin \"door\""), "{error}");
    assert!(error.contains("must be on one: give the model a \"map\" (floor-1, floor-2)"), "{error}");
}

/// A building node killed with its lift at floor 2, and started again, finds
/// the lift at floor 2 (the world kept it), not at its `initial_floor`, and
/// takes it down from there when asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_building_node_finds_the_lift_where_it_was() {
    let world = common::config("tests/lift/world.yaml");
    let mut sim = Sim::start("lift-restart", &world, &["flotilla-building"], &["--rate", "4"]).await;
    let mut lift_states = sim.subscribe::<LiftState>("/lift_states").await;
    let at = |floor: &'static str| {
        move |s: &LiftState| s.current_floor == floor && s.motion_state == LiftState::MOTION_STOPPED
    };
    let deadline = tokio::time::Instant::now() + T;
    loop {
        sim.publish("/lift_requests", &to("L2")).await;
        if tokio::time::timeout(Duration::from_secs(1), lift_states.until(T, at("L2"))).await.is_ok() {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "the lift never reached L2");
    }

    sim.kill("flotilla-building");
    sim.spawn_node("flotilla-building-again", "flotilla-building", &[]);
    sim.wait_for_log("flotilla-building-again", "serving lift lift (lift/lift) at L2", T).await;
    lift_states.clear();
    let first = lift_states.next(T).await;
    assert_eq!((first.current_floor.as_str(), first.motion_state), ("L2", LiftState::MOTION_STOPPED), "{first:?}");

    sim.publish("/lift_requests", &to("L1")).await;
    let down = lift_states.until(T, |s| s.motion_state == LiftState::MOTION_DOWN).await;
    assert_eq!(down.destination_floor, "L1", "it goes down from L2: {down:?}");
}
