//! A laser in a walled room: analytic ranges, and what it sees as models are
//! spawned, moved and deleted through the `flotilla` CLI.

mod common;

use std::f64::consts::PI;
use std::time::Duration;

use common::Sim;
use flotilla_messages::sensor_msgs::LaserScan;
use flotilla_messages::simulation_interfaces::{self as si, simulation_state};

const T: Duration = Duration::from_secs(20);

/// Distance from (x, y) along `angle` to the walls of the [0, 10]² room.
fn to_walls(x: f64, y: f64, angle: f64) -> f64 {
    let (s, c) = angle.sin_cos();
    let mut best = f64::INFINITY;
    if c.abs() > 1e-12 {
        best = best.min(if c > 0.0 { (10.0 - x) / c } else { -x / c });
    }
    if s.abs() > 1e-12 {
        best = best.min(if s > 0.0 { (10.0 - y) / s } else { -y / s });
    }
    best
}

/// Beam i of the test robot's laser points at −π + i·π/8.
fn beam(angle: f64) -> usize {
    ((angle + PI) / (PI / 8.0)).round() as usize
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scan_ranges_equal_the_distances_to_the_walls() {
    let world = common::config("tests/room/world.yaml");
    let sim = Sim::start("walls", &world, &["flotilla-laser"], &[]).await;
    let mut scans = sim.subscribe::<LaserScan>("/robot/scan").await;
    let scan = scans.next(T).await;
    assert_eq!(scan.header.frame_id, "robot_laser");
    assert_eq!(scan.ranges.len(), 16);
    assert_eq!(scan.range_max, 20.0);
    for (i, &r) in scan.ranges.iter().enumerate() {
        let angle = -PI + i as f64 * PI / 8.0;
        let expected = to_walls(5.0, 5.0, angle);
        assert!((f64::from(r) - expected).abs() < 1e-3, "beam {i} at {angle:.3} rad: {r} m, walls at {expected} m");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spawn_move_and_delete_change_what_the_laser_sees() {
    let world = common::config("tests/room/world.yaml");
    let sim = Sim::start("spawn", &world, &["flotilla-laser"], &[]).await;
    let mut scans = sim.subscribe::<LaserScan>("/robot/scan").await;
    let ahead = beam(0.0);
    let left = beam(PI / 2.0);
    scans.until(T, |s| (s.ranges[ahead] - 5.0).abs() < 1e-3).await;

    // A 0.5 m box 2 m ahead: its near face is 1.75 m away.
    let box_model = common::config("tests/room/box.model.yaml");
    let (ok, out) = sim.cli(&["spawn", &box_model, "--name", "box1", "--pose", "7", "5", "0"]);
    assert!(ok, "spawn failed: {out}");
    scans.until(T, |s| (s.ranges[ahead] - 1.75).abs() < 1e-3).await;

    // The same name again is refused and changes nothing.
    let (ok, out) = sim.cli(&["spawn", &box_model, "--name", "box1", "--pose", "3", "3", "0"]);
    assert!(!ok && out.contains("already exists"), "{out}");

    let (ok, out) = sim.cli(&["move", "box1", "5", "7", "0"]);
    assert!(ok, "move failed: {out}");
    let moved = scans.until(T, |s| (s.ranges[left] - 1.75).abs() < 1e-3).await;
    assert!((moved.ranges[ahead] - 5.0).abs() < 1e-3, "nothing ahead any more: {:?}", moved.ranges);

    let (ok, out) = sim.cli(&["delete", "box1"]);
    assert!(ok, "delete failed: {out}");
    scans.until(T, |s| (s.ranges[left] - 5.0).abs() < 1e-3).await;
    let (ok, out) = sim.cli(&["delete", "box1"]);
    assert!(!ok && out.contains("no model named"), "{out}");

    // A missing model file is a clear error.
    let (ok, out) = sim.cli(&["spawn", "/no/such/model.yaml", "--name", "ghost"]);
    assert!(!ok && out.contains("/no/such/model.yaml"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn load_world_replaces_what_the_laser_sees_once_played() {
    let world = common::config("tests/room/world.yaml");
    let sim = Sim::start("load_world", &world, &["flotilla-laser"], &[]).await;
    let mut scans = sim.subscribe::<LaserScan>("/robot/scan").await;
    let (ahead, back) = (beam(0.0), beam(-PI));
    scans.until(T, |s| (s.ranges[ahead] - 5.0).abs() < 1e-3).await;

    // The annex: the same room, the robot at (1, 1), and a crate.
    let request = si::LoadWorldRequest {
        world_resource: si::Resource { uri: "annex.world.yaml".into(), resource_string: String::new() },
        ..Default::default()
    };
    let loaded = sim.call_service::<si::LoadWorld>("/load_world", &request).await;
    assert_eq!(loaded.result, si::SimResult::ok());
    assert_eq!(loaded.world.name, "annex.world");
    let entities = sim.call_service::<si::GetEntities>("/get_entities", &Default::default()).await;
    assert_eq!(entities.entities, ["robot", "crate"]);

    // Stopped until played; then the laser follows the new world.
    let play = si::SetSimulationStateRequest { state: si::SimulationState { state: simulation_state::PLAYING } };
    let played = sim.call_service::<si::SetSimulationState>("/set_simulation_state", &play).await;
    assert_eq!(played.result, si::SimResult::ok());
    let scan = scans.until(T, |s| (s.ranges[ahead] - 9.0).abs() < 1e-3).await;
    assert!((scan.ranges[back] - 1.0).abs() < 1e-3, "1 m to the wall behind: {:?}", scan.ranges);
}
