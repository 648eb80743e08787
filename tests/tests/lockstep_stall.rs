//! A lockstep participant that stops answering: after the timeout it is
//! reported, and then dropped (`--on-stall drop`) or waited for (`wait`).

mod common;

use std::time::Duration;

use common::Sim;
use flotilla_protocol::ros::sensor_msgs::LaserScan;

const T: Duration = Duration::from_secs(30);

async fn log_says(sim: &Sim, text: &str) {
    let deadline = tokio::time::Instant::now() + T;
    while !sim.log("world").contains(text) {
        assert!(tokio::time::Instant::now() < deadline, "the world never logged {text:?}:\n{}", sim.log("world"));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_participant_is_dropped_with_the_drop_policy() {
    let world = common::config("tests/room/world.yaml");
    let args = ["--clock", "lockstep", "--lockstep-timeout", "0.5", "--on-stall", "drop"];
    let sim = Sim::start("stall-drop", &world, &["flotilla-laser"], &args).await;
    let mut scans = sim.subscribe::<LaserScan>("/robot/scan").await;
    scans.next(T).await;

    // Join the barrier and never report.
    let _token = sim.session.liveliness().declare_token(sim.keys.lockstep("staller")).await.unwrap();
    log_says(&sim, "dropping staller from the barrier").await;
    scans.clear();
    scans.next(T).await; // the world goes on without it
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_participant_is_waited_for_with_the_wait_policy() {
    let world = common::config("tests/room/world.yaml");
    let args = ["--clock", "lockstep", "--lockstep-timeout", "0.5", "--on-stall", "wait"];
    let sim = Sim::start("stall-wait", &world, &["flotilla-laser"], &args).await;
    let mut scans = sim.subscribe::<LaserScan>("/robot/scan").await;
    scans.next(T).await;

    let token = sim.session.liveliness().declare_token(sim.keys.lockstep("staller")).await.unwrap();
    log_says(&sim, "still waiting for staller").await;
    // The world is blocked: no scan for a while.
    scans.clear();
    assert!(tokio::time::timeout(Duration::from_millis(700), scans.next_opt()).await.is_err(), "blocked while waiting");
    // When the staller leaves (its token goes), the world goes on.
    token.undeclare().await.unwrap();
    scans.next(T).await;
}
