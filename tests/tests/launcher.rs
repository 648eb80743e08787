//! `flotilla run` and `flotilla check` as a user runs them.

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use flotilla_protocol::ros::sensor_msgs::LaserScan;

const T: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_laser_is_restarted_and_scans_resume() {
    let sim = common::unique_sim("restart");
    let endpoint = format!("tcp/127.0.0.1:{}", common::free_port());
    let log = common::log_dir(&sim).join("flotilla-run.log");
    let world = common::config("tests/room/world.yaml");
    let mut launcher =
        common::spawn(&common::bin("flotilla"), &["run", &world, "--sim", &sim, "--listen", &endpoint], &log);

    let session = common::connect(&endpoint).await;
    let keys = flotilla_protocol::Keys::new(&sim);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let _sub = session
        .declare_subscriber(keys.ros("/robot/scan"))
        .callback(move |s| {
            let _ = tx.send(flotilla_protocol::ros::decode::<LaserScan>(&s.payload().to_bytes()).unwrap());
        })
        .await
        .unwrap();
    tokio::time::timeout(T, rx.recv()).await.expect("first scan");

    let pattern = format!("flotilla-laser --sim {sim} ");
    let before = common::pids_of(&pattern);
    assert_eq!(before.len(), 1, "one laser process: {before:?}");
    common::signal(before[0], nix::sys::signal::Signal::SIGKILL);

    // A new laser process comes up...
    let deadline = Instant::now() + T;
    loop {
        let now = common::pids_of(&pattern);
        if now.len() == 1 && now[0] != before[0] {
            break;
        }
        assert!(Instant::now() < deadline, "no new laser process; see {}", log.display());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // ...and scans resume.
    while rx.try_recv().is_ok() {}
    tokio::time::timeout(T, rx.recv()).await.expect("scans after the restart");
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("laser exited"), "the launcher reports the crash:\n{text}");

    // SIGTERM stops everything cleanly.
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(launcher.id() as i32), nix::sys::signal::Signal::SIGTERM)
        .unwrap();
    let deadline = Instant::now() + T;
    let status = loop {
        if let Some(status) = launcher.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "launcher did not stop");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(status.success(), "clean exit: {status}");
    assert!(common::pids_of(&format!("--sim {sim} ")).is_empty(), "no child left behind");
}

#[test]
fn run_with_a_bad_world_exits_with_the_cause() {
    let world = common::root().join("../shared/fixtures/flatland/load_world_tests/model_invalid_E/world.yaml");
    let out = Command::new(common::bin("flotilla"))
        .args([
            "run",
            world.to_str().unwrap(),
            "--sim",
            &common::unique_sim("bad"),
            "--listen",
            &format!("tcp/127.0.0.1:{}", common::free_port()),
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("turtlebot.model.yaml") && err.contains("random_layer"), "{err}");
}

#[test]
fn check_validates_and_names_unimplemented_plugin_types() {
    let fixtures = common::root().join("../shared/fixtures/flatland");
    let ok = Command::new(common::bin("flotilla"))
        .args(["check"])
        .arg(fixtures.join("conestogo_office_test/world.yaml"))
        .output()
        .unwrap();
    assert!(ok.status.success());
    let text = String::from_utf8_lossy(&ok.stdout);
    assert!(
        text.contains("Laser: 1 instance(s)") && text.contains("no node implements plugin type TricycleDrive"),
        "{text}"
    );

    let bad = Command::new(common::bin("flotilla"))
        .args(["check"])
        .arg(fixtures.join("laser_tests/invalid_B/world.yaml"))
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("laser_center"));
}
