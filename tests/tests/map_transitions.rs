//! The map-transition manager end to end, on two floors of the 10 m room
//! (`configs/tests/transitions/`): an automatic transition and the loop
//! guard, a command transition with a new location, an unknown command, a
//! restart that fires nothing twice, and robots on two floors that neither
//! touch nor see each other; and each kind of transition taken while the
//! robot drives, landing where the file says.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::Sim;
use flotilla_messages::geometry_msgs::{Twist, Vector3};
use flotilla_messages::nav_msgs::OccupancyGrid;
use flotilla_messages::sensor_msgs::LaserScan;
use flotilla_messages::std_msgs::StdString;
use flotilla_messages::RosMessage;
use flotilla_wire::codec::decode;
use flotilla_wire::description::WorldDescription;
use flotilla_wire::geometry::Pose2;
use flotilla_wire::world_to_nodes::{WorldChange, WorldEvent};
use zenoh_ext::{AdvancedSubscriberBuilderExt, HistoryConfig};

const T: Duration = Duration::from_secs(20);
/// Beams of the room robot's laser: i points at −π + i·π/8.
const AHEAD: usize = 8;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn robots_change_floors_as_the_flat_file_says() {
    let world = common::config("tests/transitions/world.yaml");
    let nodes = ["flotilla-drive", "flotilla-laser", "flotilla-transitions"];
    let mut sim = Sim::start("transitions", &world, &nodes, &[]).await;
    let changes = map_changes(&sim).await;
    sim.wait_for_log("flotilla-transitions", "watching 4 robot(s) on 2 map(s), 4 transition(s)", T).await;

    let ghost_scans = sim.subscribe::<LaserScan>("/ghost/scan").await;
    automatic_transition_through_a_robot_of_the_other_floor(&sim, ghost_scans, &changes).await;
    command_transition_lands_where_it_says(&sim, &changes).await;
    a_restarted_manager_fires_nothing_twice(&mut sim, &changes).await;

    // c started inside an automatic circle: it never entered it
    assert_eq!(changes_of(&changes, "c"), Vec::<String>::new());
    assert_eq!(latched::<StdString>(&sim, "/c/map_name").await.data, "floor-1");
}

/// a drives +x at 1 m/s from (5, 5) on floor 1, through the ghost standing
/// at (6.5, 5) on floor 2, into the automatic circle at (8, 5): it goes to
/// floor 2 once, though floor 2 has a transition back at the same place;
/// there it stops at the wall, in the ghost's laser. (The room robot's
/// radius is 0.2 m.)
async fn automatic_transition_through_a_robot_of_the_other_floor(
    sim: &Sim,
    mut ghost_scans: common::Topic<LaserScan>,
    changes: &Changes,
) {
    let forward = Twist { linear: Vector3 { x: 1.0, y: 0.0, z: 0.0 }, angular: Vector3::default() };
    let driving = {
        let (session, key) = (sim.session.clone(), sim.keys.ros("/a/cmd_vel"));
        tokio::spawn(async move {
            loop {
                session.put(&key, flotilla_messages::encode(&forward)).await.unwrap();
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        })
    };
    // Until a changes floors, the ghost sees the wall 3.5 m ahead, never a.
    ghost_scans.clear();
    while changes_of(changes, "a").is_empty() {
        let scan = ghost_scans.next(T).await;
        if changes_of(changes, "a").is_empty() {
            assert!(scan.ranges[AHEAD] > 3.49, "the ghost saw a robot of the other floor: {:?}", scan.ranges);
        }
    }
    assert_eq!(changes_of(changes, "a"), ["floor-2"]);
    let a = model_pose(sim, "a").await;
    assert!(a.x_m > 7.3, "a drove through the ghost's place: {a:?}");
    let ghost = model_pose(sim, "ghost").await;
    assert!((ghost.x_m - 6.5).abs() < 1e-6 && (ghost.y_m - 5.0).abs() < 1e-6, "the ghost was not pushed: {ghost:?}");

    // On floor 2, a stops against the wall (centre at x = 9.8 m): its near
    // side 3.1 m ahead of the ghost, scan after scan.
    let mut still = 0;
    ghost_scans
        .until(T, |s| {
            still = if (s.ranges[AHEAD] - 3.1).abs() < 0.01 { still + 1 } else { 0 };
            still == 3
        })
        .await;
    driving.abort();
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(changes_of(changes, "a"), ["floor-2"], "no flip back at the transition back");
    latched_name_becomes(sim, "/a/map_name", "floor-2").await;
    let grid = latched::<OccupancyGrid>(sim, "/a/map").await;
    assert_eq!((grid.header.frame_id.as_str(), grid.info.resolution), ("map", 0.05));
    assert!(grid.data.iter().filter(|&&c| c == 100).count() > 4 * 190, "the room's four 10 m walls");
}

/// b stands in the UP circle: an unknown command is ignored and logged;
/// UP takes it to floor 2 at (5, 8) facing +y.
async fn command_transition_lands_where_it_says(sim: &Sim, changes: &Changes) {
    let (ok, out) = sim.cli(&["map-command", "b", "DOWN"]);
    assert!(ok, "{out}");
    sim.wait_for_log("flotilla-transitions", "b: map command \"DOWN\" ignored", T).await;
    assert_eq!(changes_of(changes, "b"), Vec::<String>::new());

    let (ok, out) = sim.cli(&["map-command", "b", "UP"]);
    assert!(ok, "{out}");
    wait_until(T, || changes_of(changes, "b") == ["floor-2"]).await;
    let b = model_pose(sim, "b").await;
    assert!((b.x_m - 5.0).abs() < 0.01 && (b.y_m - 8.0).abs() < 0.01, "{b:?}");
    assert!((b.theta_rad - std::f64::consts::FRAC_PI_2).abs() < 0.01, "{b:?}");
    latched_name_becomes(sim, "/b/map_name", "floor-2").await;
}

/// Killed and restarted, the manager rebuilds from the description and
/// fires nothing (c still stands in its circle).
async fn a_restarted_manager_fires_nothing_twice(sim: &mut Sim, changes: &Changes) {
    let before = changes.lock().unwrap().len();
    sim.kill("flotilla-transitions");
    sim.spawn_node("transitions-2", "flotilla-transitions", &[]);
    sim.wait_for_log("transitions-2", "watching 4 robot(s)", T).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(changes.lock().unwrap().len(), before, "{:?}", changes.lock().unwrap());
}

/// Each kind of transition of `configs/tests/transitions/moving.world`,
/// taken while the robot drives. Those with a new location land the robot
/// there, however far it drove since it was placed; those without leave it
/// where it was. The world used to keep each body's place in the model
/// frame as it was after driving, so a new location came out shifted by
/// the distance driven (p landed 1.1 m past (5, 2), s 0.6 m past (5, 8)).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kind_of_transition_lands_where_the_file_says_while_the_robot_drives() {
    let world = common::config("tests/transitions/moving.world.yaml");
    let nodes = ["flotilla-drive", "flotilla-transitions"];
    let sim = Sim::start("transitions-moving", &world, &nodes, &[]).await;
    let changes = map_changes(&sim).await;
    sim.wait_for_log("flotilla-transitions", "watching 4 robot(s) on 2 map(s), 4 transition(s)", T).await;

    // Automatic, with a new location: p drives +x at 0.5 m/s from (1, 1)
    // into the circle at (2.5, 1), 1.1 m; it lands at (5, 2) and drives on
    // until it is stopped.
    let driving = drive(&sim, "p", 0.5);
    wait_until(T, || changes_of(&changes, "p") == ["floor-2"]).await;
    stop(&sim, "p", driving).await;
    let p = model_pose(&sim, "p").await;
    assert!((5.0..5.35).contains(&p.x_m) && (p.y_m - 2.0).abs() < 0.01 && p.theta_rad.abs() < 0.01, "p: {p:?}");

    // Automatic, no new location: q stays where it entered the circle at
    // (2.5, 3), its edge 0.4 m before the centre.
    let driving = drive(&sim, "q", 0.5);
    wait_until(T, || changes_of(&changes, "q") == ["floor-2"]).await;
    stop(&sim, "q", driving).await;
    let q = model_pose(&sim, "q").await;
    assert!((2.05..2.45).contains(&q.x_m) && (q.y_m - 3.0).abs() < 0.01, "q: {q:?}");

    // On a command, with a new location: s creeps +x at 0.3 m/s inside the
    // GO circle at (1.5, 5) for 2 s (0.6 m), then GO lands it at (5, 8)
    // facing +y, where it creeps on along +y until it is stopped.
    let driving = drive(&sim, "s", 0.3);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (ok, out) = sim.cli(&["map-command", "s", "GO"]);
    assert!(ok, "{out}");
    wait_until(T, || changes_of(&changes, "s") == ["floor-2"]).await;
    stop(&sim, "s", driving).await;
    let s = model_pose(&sim, "s").await;
    assert!((s.x_m - 5.0).abs() < 0.01 && (8.0..8.25).contains(&s.y_m), "s: {s:?}");
    assert!((s.theta_rad - std::f64::consts::FRAC_PI_2).abs() < 0.01, "s: {s:?}");

    // On a command, no new location: u creeps inside the HOP circle at
    // (1.5, 7) and changes floor where it is.
    let driving = drive(&sim, "u", 0.3);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let before = model_pose(&sim, "u").await;
    let (ok, out) = sim.cli(&["map-command", "u", "HOP"]);
    assert!(ok, "{out}");
    wait_until(T, || changes_of(&changes, "u") == ["floor-2"]).await;
    stop(&sim, "u", driving).await;
    let u = model_pose(&sim, "u").await;
    assert!(u.x_m >= before.x_m && u.x_m < before.x_m + 0.3 && (u.y_m - 7.0).abs() < 0.01, "u: {u:?} after {before:?}");
}

/// Sends `ns`'s `cmd_vel` forward at `speed_mps` every 100 ms until stopped.
fn drive(sim: &Sim, ns: &str, speed_mps: f64) -> tokio::task::JoinHandle<()> {
    let forward = Twist { linear: Vector3 { x: speed_mps, y: 0.0, z: 0.0 }, angular: Vector3::default() };
    let (session, key) = (sim.session.clone(), sim.keys.ros(&format!("/{ns}/cmd_vel")));
    tokio::spawn(async move {
        loop {
            session.put(&key, flotilla_messages::encode(&forward)).await.unwrap();
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
}

/// Stops `driving` and the robot: a zero `cmd_vel`, then time for it to
/// take effect.
async fn stop(sim: &Sim, ns: &str, driving: tokio::task::JoinHandle<()>) {
    driving.abort();
    let key = sim.keys.ros(&format!("/{ns}/cmd_vel"));
    sim.session.put(&key, flotilla_messages::encode(&Twist::default())).await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
}

/// Every map change the world announces: (model, map).
type Changes = Arc<Mutex<Vec<(String, String)>>>;

async fn map_changes(sim: &Sim) -> Changes {
    let changes: Changes = Arc::default();
    let seen = changes.clone();
    let subscriber = sim
        .session
        .declare_subscriber(sim.keys.world_events())
        .callback(move |sample| {
            if let Ok(WorldEvent { change: WorldChange::MapChanged { model, map, .. }, .. }) =
                decode(&sample.payload().to_bytes())
            {
                seen.lock().unwrap().push((model, map));
            }
        })
        .await
        .unwrap();
    // Kept for the whole test.
    std::mem::forget(subscriber);
    changes
}

fn changes_of(changes: &Changes, model: &str) -> Vec<String> {
    changes.lock().unwrap().iter().filter(|(m, _)| m == model).map(|(_, map)| map.clone()).collect()
}

async fn wait_until(timeout: Duration, mut done: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + timeout;
    while !done() {
        assert!(tokio::time::Instant::now() < deadline, "timed out");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A model's pose, from the world's description.
async fn model_pose(sim: &Sim, model: &str) -> Pose2 {
    let description: WorldDescription =
        flotilla_node_kit::client::fetch_description(&sim.session, &sim.keys, T).await.unwrap();
    let m = description.model(model).unwrap();
    m.bodies[0].pose
}

/// Waits until a late subscriber to a robot's `map_name` gets `map` (the
/// manager republishes it once it has rebuilt from the world's new
/// description, a moment after the world announced the change).
async fn latched_name_becomes(sim: &Sim, ros_name: &str, map: &str) {
    let deadline = tokio::time::Instant::now() + T;
    loop {
        let name = latched::<StdString>(sim, ros_name).await.data;
        if name == map {
            return;
        }
        assert!(tokio::time::Instant::now() < deadline, "{ros_name} still says {name:?}, not {map:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The latched message of a topic, as a late subscriber gets it.
async fn latched<T: RosMessage>(sim: &Sim, ros_name: &str) -> T {
    let subscriber = sim
        .session
        .declare_subscriber(sim.keys.ros(ros_name))
        .history(HistoryConfig::default().detect_late_publishers())
        .await
        .unwrap();
    let sample = tokio::time::timeout(T, subscriber.recv_async())
        .await
        .unwrap_or_else(|_| panic!("nothing latched on {ros_name}"))
        .unwrap();
    flotilla_messages::decode(&sample.payload().to_bytes()).unwrap()
}
