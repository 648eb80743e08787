//! `examples/lockstep-controller` (the Rust twin of `flotilla.gym`'s loop,
//! and its benchmark's baseline) joins the barrier of a lockstep run of the
//! room world, drives its robot for 400 states reading its scan and
//! odometry every 10th, and says so.

mod common;

use std::process::{Command, Stdio};

use common::Sim;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rust_lockstep_controller_drives_the_room_robot_for_400_states() {
    let world = common::config("tests/room/world.yaml");
    let nodes = ["flotilla-drive", "flotilla-odom", "flotilla-laser"];
    let sim = Sim::start("rust-controller", &world, &nodes, &["--clock", "lockstep"]).await;
    common::wait_for_participants(&sim.session, &sim.keys, nodes.len(), sim.logs()).await;
    let controller = common::bin("flotilla-lockstep-controller");
    let sim_name = sim.sim.clone();
    let endpoint = sim.endpoint.clone();
    let output = tokio::task::spawn_blocking(move || {
        Command::new(controller)
            .args(["--connect", &endpoint, "--sim", &sim_name, "--steps", "400", "--speed", "0.4"])
            .stdin(Stdio::null())
            .output()
            .expect("the controller runs")
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    let figures: serde_json::Value = serde_json::from_str(stdout.trim()).expect("one JSON line");
    assert_eq!(figures["robots"], 1, "{figures}");
    assert_eq!(figures["states"], 400, "{figures}");
    // Every 10th state once the first scan (10 Hz: 20 states) is in.
    let observations = figures["observations"].as_u64().unwrap();
    assert!((37..=40).contains(&observations), "{figures}");
    assert!(figures["range_sum_m"].as_f64().unwrap() > 0.0, "{figures}");
}
