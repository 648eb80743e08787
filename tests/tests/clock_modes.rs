//! Clock modes switched at run time, with pause, resume and step N in each:
//! a 10 Hz laser gives exactly 10 scans per simulated second whatever the mode.

mod common;

use std::time::Duration;

use common::{Sim, Topic};
use flotilla_messages::rosgraph_msgs::Clock;
use flotilla_messages::sensor_msgs::LaserScan;
use flotilla_wire::world_to_nodes::{WorldState, WorldStatus};

const T: Duration = Duration::from_secs(30);
const SECOND_NS: u64 = 1_000_000_000;
const STEP_NS: u64 = 5_000_000;

fn ns(t: flotilla_messages::builtin_interfaces::Time) -> u64 {
    t.sec as u64 * SECOND_NS + u64::from(t.nanosec)
}

fn assert_ten_hz(mode: &str, stamps: &[u64]) {
    assert_eq!(stamps.len(), 10, "{mode}: {stamps:?}");
    for pair in stamps.windows(2) {
        assert_eq!(pair[1] - pair[0], 100_000_000, "{mode}: scans 100 ms apart in sim time: {stamps:?}");
    }
}

/// Scans stamped within one simulated second, starting at the next scan.
async fn one_sim_second(scans: &mut Topic<LaserScan>) -> Vec<u64> {
    scans.clear();
    let first = ns(scans.next(T).await.header.stamp);
    let mut stamps = vec![first];
    loop {
        let t = ns(scans.next(T).await.header.stamp);
        if t >= first + SECOND_NS {
            return stamps;
        }
        stamps.push(t);
    }
}

/// The time of the last state received before 200 ms of quiet (None if none came).
async fn settled_time(states: &mut Topic<WorldState>) -> Option<u64> {
    let mut last = None;
    while let Ok(Some(s)) = tokio::time::timeout(Duration::from_millis(200), states.next_opt()).await {
        last = Some(s.time.nanos);
    }
    last
}

/// The step a paused world rests at: two status messages in a row saying
/// paused at the same step (the first may predate a step still pending).
async fn paused_step(status: &mut Topic<WorldStatus>) -> u64 {
    status.clear();
    let mut last = None;
    loop {
        let s = status.next(T).await;
        if s.paused && last == Some(s.step) {
            return s.step;
        }
        last = s.paused.then_some(s.step);
    }
}

/// Pause stops time; `step 7` advances it by exactly seven steps; resume.
async fn pause_and_step(sim: &Sim, states: &mut Topic<WorldState>, status: &mut Topic<WorldStatus>, mode: &str) {
    let (ok, out) = sim.cli(&["pause"]);
    assert!(ok, "{out}");
    let (ok, out) = sim.cli(&["step", "1"]);
    assert!(ok, "{out}");
    // States arrive in order, so those published before the pause (which a
    // loaded machine may still be delivering) come before this one.
    let rest = paused_step(status).await;
    let paused_at = states.until(T, |s| s.step == rest).await.time.nanos;
    let (ok, out) = sim.cli(&["step", "7"]);
    assert!(ok, "{out}");
    let after = states.until(T, |s| s.time.nanos >= paused_at + 7 * STEP_NS).await;
    assert_eq!(after.time.nanos, paused_at + 7 * STEP_NS, "{mode}: step 7");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(settled_time(states).await, None, "{mode}: no step while paused");
    let (ok, out) = sim.cli(&["resume"]);
    assert!(ok, "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_mode_keeps_sim_time_rates_and_obeys_pause_and_step() {
    let world = common::config("tests/room/world.yaml");
    let sim = Sim::start("clock", &world, &["flotilla-laser"], &["--clock", "fast"]).await;
    let mut scans = sim.subscribe::<LaserScan>("/robot/scan").await;
    let mut states = sim.subscribe_states().await;
    let mut status = sim.subscribe_status().await;

    for (mode, extra) in [("fast", vec![]), ("realtime", vec!["--rate", "4"]), ("lockstep", vec![])] {
        let mut args = vec!["clock", mode];
        args.extend(extra);
        let (ok, out) = sim.cli(&args);
        assert!(ok, "{out}");
        assert_ten_hz(mode, &one_sim_second(&mut scans).await);
        pause_and_step(&sim, &mut states, &mut status, mode).await;
    }

    // External: the world follows a clock someone else publishes.
    let (ok, out) = sim.cli(&["clock", "external"]);
    assert!(ok, "{out}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let now = settled_time(&mut states).await.expect("states before the switch");
    let target = now + SECOND_NS;
    scans.clear();
    let mut external = now;
    while external < target {
        external += 50_000_000;
        sim.publish("/clock", &Clock { clock: flotilla_wire::time::SimTime { nanos: external }.to_ros() }).await;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let reached = states.until(T, |s| s.time.nanos >= target).await;
    assert_eq!(reached.time.nanos, target, "the world stops exactly at the external time");
    let mut stamps = Vec::new();
    while let Ok(Some(s)) = tokio::time::timeout(Duration::from_millis(300), scans.next_opt()).await {
        stamps.push(ns(s.header.stamp));
    }
    let in_window: Vec<u64> = stamps.into_iter().filter(|&t| t > now && t <= target).collect();
    assert_eq!(in_window.len(), 10, "external: {in_window:?}");
    pause_and_step(&sim, &mut states, &mut status, "external").await;
    // Resumed, it waits for the external clock again.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(settled_time(&mut states).await, None, "external: no clock, no steps");
}
