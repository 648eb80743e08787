//! The live view in a real browser: headless Chromium (Debian's package)
//! loads `flotilla view`'s page for the annex room (a robot and a crate),
//! draws the walls and the robot where they are, and a user's drag and click
//! reach the world — checked in the world's own description.
//! (`tests/view/drive_view.py` drives the browser over the DevTools
//! protocol.)

mod common;

use std::process::Command;
use std::time::Duration;

use common::Sim;
use serde_json::Value;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_browser_sees_the_room_and_moves_and_spawns_models() {
    let world = common::config("tests/room/annex.world.yaml");
    let mut sim = Sim::start("view", &world, &["flotilla-drive", "flotilla-laser"], &[]).await;
    let addr = format!("127.0.0.1:{}", common::free_port());
    sim.spawn_node_program("view", &common::bin("flotilla"), &["view", "--addr", &addr]);
    sim.wait_for_log("view", "open http://", Duration::from_secs(30)).await;

    let screenshot = sim.logs().join("view.png");
    let out = Command::new("python3")
        .arg(common::root().join("tests/view/drive_view.py"))
        .args([&format!("http://{addr}/"), "--spawn-at", "3", "7", "--screenshot", screenshot.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the browser run failed: {}{}\nview log:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
        sim.log("view")
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();

    // Loaded cleanly, drawn where the world says.
    assert_eq!(report["console_errors"], serde_json::json!([]), "{report}");
    assert_eq!(report["walls"], 4, "the room's four walls");
    assert_eq!((report["wall_drawn"].as_bool(), report["robot_drawn"].as_bool()), (Some(true), Some(true)), "{report}");
    assert_eq!(report["model"], "robot");
    let drawn_at: Vec<f64> = report["model_pose"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    assert_eq!(drawn_at, [1.0, 1.0, 0.0], "the robot drawn at its world-file pose");

    // The drag moved the robot in the world.
    let description =
        flotilla_node_kit::client::fetch_description(&sim.session, &sim.keys, Duration::from_secs(10)).await.unwrap();
    let robot = description.model("robot").unwrap().bodies[0].pose;
    let to = &report["dragged_to"];
    let (x, y) = (to[0].as_f64().unwrap(), to[1].as_f64().unwrap());
    assert!((robot.x_m - x).abs() < 0.01 && (robot.y_m - y).abs() < 0.01, "robot at {robot:?}, dropped at ({x}, {y})");
    assert!(((robot.x_m - 1.0).hypot(robot.y_m - 1.0)) > 1.0, "it moved: {robot:?}");

    // The click spawned the first model file of the world's directory there.
    assert_eq!(report["spawnable"][0], "box.model.yaml");
    let spawned = description.model("box_1").expect("the clicked spawn");
    let at = spawned.bodies[0].pose;
    assert!((at.x_m - 3.0).abs() < 0.05 && (at.y_m - 7.0).abs() < 0.05, "spawned at {at:?}");
    assert!(screenshot.exists());
}
