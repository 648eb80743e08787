//! A lockstep participant that stops answering: after the timeout it is
//! reported, and then dropped (`--on-stall drop`) or waited for (`wait`).

mod common;

use std::time::Duration;

use common::Sim;
use flotilla_messages::sensor_msgs::LaserScan;

const T: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_participant_is_dropped_with_the_drop_policy() {
    let world = common::config("tests/room/world.yaml");
    let args = ["--clock", "lockstep", "--lockstep-timeout", "0.5", "--on-stall", "drop"];
    let sim = Sim::start("stall-drop", &world, &["flotilla-laser"], &args).await;
    let mut scans = sim.subscribe::<LaserScan>("/robot/scan").await;
    scans.next(T).await;

    // Join the barrier and never report.
    let _token = sim.session.liveliness().declare_token(sim.keys.lockstep("staller")).await.unwrap();
    sim.wait_for_log("world", "dropping staller from the barrier", T).await;
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
    sim.wait_for_log("world", "still waiting for staller", T).await;
    // The world is blocked: no scan for a while.
    scans.clear();
    assert!(tokio::time::timeout(Duration::from_millis(700), scans.next_opt()).await.is_err(), "blocked while waiting");
    // When the staller leaves (its token goes), the world goes on.
    token.undeclare().await.unwrap();
    scans.next(T).await;
}
