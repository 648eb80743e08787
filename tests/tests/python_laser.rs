//! A sensor written in Python takes over a robot's built-in laser
//! (`examples/python/laser_takeover.py`, through the `flotilla` package's
//! claims and lockstep participant): the built-in laser stands by while it
//! lives, takes over when it is killed, and stands by again when it comes
//! back; a lockstep run with it gives the same scans, to the bit, twice.

mod common;

use std::time::Duration;

use common::Sim;
use flotilla_messages::sensor_msgs::LaserScan;
use flotilla_wire::control::ControlRequest;

const T: Duration = Duration::from_secs(60);

fn python_laser(sim: &mut Sim, label: &str) {
    let script = common::root().join("examples/python/laser_takeover.py");
    sim.spawn_node_program(label, std::path::Path::new("python3"), &[&script.to_string_lossy(), "--model", "robot"]);
}

/// Whether a scan is the built-in laser's: the room's laser has no noise,
/// the Python one's noise moves every beam.
fn exact(scan: &LaserScan, reference: &LaserScan) -> bool {
    scan.ranges == reference.ranges
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_laser_takes_over_and_hands_back_both_ways() {
    let world = common::config("tests/room/world.yaml");
    let nodes = ["flotilla-drive", "flotilla-odom", "flotilla-laser"];
    let mut sim = Sim::start("py-laser", &world, &nodes, &["--clock", "lockstep"]).await;
    let mut scans = sim.subscribe::<LaserScan>("/robot/scan").await;
    let reference = scans.next(T).await;

    python_laser(&mut sim, "py-laser");
    sim.wait_for_log("flotilla-laser", "leaving it to them and standing by", T).await;
    let first = scans.until(T, |s| !exact(s, &reference)).await;
    for _ in 0..5 {
        let scan = scans.next(T).await;
        assert!(!exact(&scan, &reference), "only the Python laser scans while it lives");
        for (python, builtin) in scan.ranges.iter().zip(&reference.ranges) {
            assert!((python - builtin).abs() < 0.1, "the two models see the same room: {python} vs {builtin} m");
        }
        assert_ne!(scan.ranges, first.ranges, "its noise is drawn anew at every scan");
    }

    sim.kill("py-laser");
    sim.wait_for_log("flotilla-laser", "taking over robot/laser/laser", T).await;
    scans.until(T, |s| exact(s, &reference)).await;
    for _ in 0..5 {
        assert!(exact(&scans.next(T).await, &reference), "the built-in laser scans again");
    }

    python_laser(&mut sim, "py-laser-again");
    let deadline = tokio::time::Instant::now() + T;
    while sim.log("flotilla-laser").matches("leaving it to them").count() < 2 {
        assert!(tokio::time::Instant::now() < deadline, "{}", sim.log("flotilla-laser"));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    scans.until(T, |s| !exact(s, &reference)).await;
    for _ in 0..5 {
        assert!(!exact(&scans.next(T).await, &reference), "the Python laser is back");
    }
}

/// The scans of 0.1 s to 2 s of a lockstep run served by the Python laser.
/// (Step 0's scan is left out: the built-in laser answered that state
/// before the Python one joined, and either may be heard first.)
async fn python_run() -> Vec<LaserScan> {
    let world = common::config("tests/room/world.yaml");
    let nodes = ["flotilla-drive", "flotilla-odom", "flotilla-laser"];
    let mut sim = Sim::start("py-laser-det", &world, &nodes, &["--clock", "lockstep", "--start-paused"]).await;
    let mut scans = sim.subscribe::<LaserScan>("/robot/scan").await;
    common::wait_for_participants(&sim.session, &sim.keys, 3, sim.logs()).await;
    python_laser(&mut sim, "py-laser");
    sim.wait_for_log("flotilla-laser", "standing by", T).await;
    common::wait_for_participants(&sim.session, &sim.keys, 4, sim.logs()).await;
    flotilla_node_kit::client::call_control(&sim.session, &sim.keys, "resume", &ControlRequest::Resume, T)
        .await
        .unwrap();
    let mut got = Vec::new();
    while got.len() < 20 {
        let scan = scans.next(T).await;
        if (scan.header.stamp.sec, scan.header.stamp.nanosec) != (0, 0) {
            got.push(scan);
        }
    }
    got
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lockstep_run_with_the_python_laser_repeats_to_the_bit() {
    let first = python_run().await;
    let second = python_run().await;
    let stamps: Vec<(i32, u32)> = first.iter().map(|s| (s.header.stamp.sec, s.header.stamp.nanosec)).collect();
    assert_eq!(stamps[0], (0, 100_000_000), "every scan from 0.1 s, at 10 Hz: {stamps:?}");
    assert_eq!(stamps[19], (2, 0), "every scan from 0.1 s, at 10 Hz: {stamps:?}");
    let bytes = |scans: &[LaserScan]| scans.iter().map(flotilla_messages::encode).collect::<Vec<_>>();
    assert_eq!(bytes(&first), bytes(&second), "the same scans, byte for byte");
}
