//! Doors (`flotilla-building`): a closed door stops a robot until Open-RMF
//! asks it open (`rmf_door_msgs/DoorRequest` on `/door_requests`), an
//! automatic door opens for a robot coming near and closes after it, and
//! every door says what it does on `/door_states`.

mod common;

use std::time::Duration;

use common::Sim;
use flotilla_messages::builtin_interfaces::Time;
use flotilla_messages::geometry_msgs::Twist;
use flotilla_messages::rmf_door_msgs::{DoorMode, DoorRequest, DoorState};
use flotilla_wire::geometry::Pose2;
use flotilla_wire::world_to_nodes::WorldState;

const T: Duration = Duration::from_secs(30);

/// Keeps sending both robots forward at 0.5 m/s, 20 times a (wall) second.
fn keep_driving(sim: &Sim) -> tokio::task::JoinHandle<()> {
    let session = sim.session.clone();
    let keys = [sim.keys.ros("/r1/cmd_vel"), sim.keys.ros("/r2/cmd_vel")];
    let mut forward = Twist::default();
    forward.linear.x = 0.5;
    tokio::spawn(async move {
        loop {
            for key in &keys {
                let _ = session.put(key, flotilla_messages::encode(&forward)).await;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
}

/// The pose of body `body` in `state`.
fn pose(state: &WorldState, body: u32) -> Pose2 {
    state.bodies.iter().find(|b| b.id == body).map(|b| b.pose).expect("the body is in the state")
}

/// The modes a door went through, in order, repeats dropped.
fn modes(states: &[DoorState], door: &str) -> Vec<u32> {
    let mut out: Vec<u32> = Vec::new();
    for s in states.iter().filter(|s| s.door_name == door) {
        if out.last() != Some(&s.current_mode.value) {
            out.push(s.current_mode.value);
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_door_stops_a_robot_until_asked_open_and_an_automatic_one_lets_it_through() {
    let world = common::config("tests/doors/world.yaml");
    let sim = Sim::start("doors", &world, &["flotilla-drive", "flotilla-building"], &["--rate", "2"]).await;
    let description = flotilla_node_kit::client::wait_for_description(&sim.session, &sim.keys, T).await.unwrap();
    let body_of = |model: &str| description.models.iter().find(|m| m.name == model).unwrap().bodies[0].id;
    let (r1, r2, front) = (body_of("r1"), body_of("r2"), body_of("front"));
    let mut states = sim.subscribe_states().await;
    let mut door_states = sim.subscribe::<DoorState>("/door_states").await;
    let driving = keep_driving(&sim);

    // 8 s: r1 would be at x = 7 m without the door; it stands at the leaf
    // (x 4.95 m less its 0.3 m radius). r2's door opened as it came near.
    let state = states.until(T, |s| s.time.as_secs_f64() >= 8.0).await;
    let stopped = pose(&state, r1);
    assert!(stopped.x_m > 4.5 && stopped.x_m < 4.66, "r1 stands before the closed door: {stopped:?}");
    assert!(pose(&state, r2).x_m > 6.0, "r2 went through the automatic door: {:?}", pose(&state, r2));

    // Open-RMF asks the front door open: it slides 1.2 m along +y in 2 s,
    // and r1 drives through.
    let request = DoorRequest {
        request_time: Time { sec: 8, nanosec: 0 },
        requester_id: "fleet".into(),
        door_name: "front".into(),
        requested_mode: DoorMode { value: DoorMode::MODE_OPEN },
    };
    sim.publish("/door_requests", &request).await;
    let through = states.until(T, |s| pose(s, r1).x_m > 6.0).await;
    let leaf = pose(&through, front);
    assert!((leaf.x_m - 5.0).abs() < 1e-6 && (leaf.y_m - 6.2).abs() < 1e-6, "the leaf slid open: {leaf:?}");
    driving.abort();

    // Asked closed, it slides back to where it was.
    sim.publish(
        "/door_requests",
        &DoorRequest { requested_mode: DoorMode { value: DoorMode::MODE_CLOSED }, ..request },
    )
    .await;
    let t_closed = through.time.as_secs_f64() + 2.5;
    let shut = states.until(T, |s| s.time.as_secs_f64() >= t_closed).await;
    let leaf = pose(&shut, front);
    assert!((leaf.x_m - 5.0).abs() < 1e-6 && (leaf.y_m - 5.0).abs() < 1e-6, "closed again: {leaf:?}");

    // Both doors said what they did: closed, moving, open, moving, closed
    // (the side door closed 2 s after r2 went, by itself).
    let mut said = Vec::new();
    while let Some(s) = door_states.try_next() {
        said.push(s);
    }
    let cycle = [
        DoorMode::MODE_CLOSED,
        DoorMode::MODE_MOVING,
        DoorMode::MODE_OPEN,
        DoorMode::MODE_MOVING,
        DoorMode::MODE_CLOSED,
    ];
    assert_eq!(modes(&said, "front"), cycle, "{said:?}");
    assert_eq!(modes(&said, "side"), cycle, "{said:?}");
    let last = said.iter().rev().find(|s| s.door_name == "front").unwrap();
    assert!(f64::from(last.door_time.sec) >= 10.0, "stamped in sim time: {last:?}");
}

/// A building node killed while a door stands open, and started again,
/// reads the leaf as open (its closed pose comes from the model file, not
/// from where the leaf stands) and holds it open until asked to close.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_building_node_holds_an_open_door_open_until_asked_to_close() {
    let world = common::config("tests/doors/world.yaml");
    // In lockstep, where every command takes effect at the step it is for.
    let nodes = ["flotilla-drive", "flotilla-building"];
    let mut sim = Sim::start("doors-restart", &world, &nodes, &["--clock", "lockstep"]).await;
    let description = flotilla_node_kit::client::wait_for_description(&sim.session, &sim.keys, T).await.unwrap();
    let front = description.models.iter().find(|m| m.name == "front").unwrap().bodies[0].id;
    let mut states = sim.subscribe_states().await;
    let mut door_states = sim.subscribe::<DoorState>("/door_states").await;
    let open = DoorRequest {
        request_time: Time::default(),
        requester_id: "fleet".into(),
        door_name: "front".into(),
        requested_mode: DoorMode { value: DoorMode::MODE_OPEN },
    };
    // Asked again each second until it opens: the node may not have
    // subscribed yet.
    let said_open_s = loop {
        sim.publish("/door_requests", &open).await;
        let is_open = |s: &DoorState| s.door_name == "front" && s.current_mode.value == DoorMode::MODE_OPEN;
        if let Ok(said) = tokio::time::timeout(Duration::from_secs(1), door_states.until(T, is_open)).await {
            break f64::from(said.door_time.sec) + f64::from(said.door_time.nanosec) * 1e-9;
        }
    };
    // A state after the one the node said it at (the world's states and
    // the node's messages come by different ways: the state before may
    // arrive after it).
    let opened = pose(&states.until(T, |s| s.time.as_secs_f64() > said_open_s + 1e-6).await, front);
    assert!((opened.y_m - 6.2).abs() < 1e-6, "open: {opened:?}");

    sim.kill("flotilla-building");
    sim.spawn_node("flotilla-building-again", "flotilla-building", &[]);
    sim.wait_for_log("flotilla-building-again", "serving door front", T).await;
    // 3 s of sim time after it is back, nobody having asked anything: open.
    door_states.clear();
    states.clear();
    let back = states.next(T).await.time.as_secs_f64();
    let later = states.until(T, |s| s.time.as_secs_f64() >= back + 3.0).await;
    let held = pose(&later, front);
    assert!((held.x_m - opened.x_m).abs() < 1e-6 && (held.y_m - opened.y_m).abs() < 1e-6, "held open: {held:?}");
    let said = door_states.until(T, |s| s.door_name == "front").await;
    assert_eq!(said.current_mode.value, DoorMode::MODE_OPEN, "the new node says open: {said:?}");

    // Asked closed, it closes to the pose its model file gives.
    sim.publish("/door_requests", &DoorRequest { requested_mode: DoorMode { value: DoorMode::MODE_CLOSED }, ..open })
        .await;
    states.clear();
    let asked = states.next(T).await.time.as_secs_f64();
    let shut = pose(&states.until(T, |s| s.time.as_secs_f64() >= asked + 2.5).await, front);
    assert!((shut.x_m - 5.0).abs() < 1e-6 && (shut.y_m - 5.0).abs() < 1e-6, "closed where the file has it: {shut:?}");
}
