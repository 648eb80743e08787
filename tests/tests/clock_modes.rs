//! Clock modes switched at run time, with pause, resume and step N in each:
//! a 10 Hz laser gives exactly 10 scans per simulated second whatever the mode.

mod common;

use std::time::Duration;

use common::{Sim, Topic};
use flotilla_protocol::ros::rosgraph_msgs::Clock;
use flotilla_protocol::ros::sensor_msgs::LaserScan;

const T: Duration = Duration::from_secs(30);
const SECOND_NS: u64 = 1_000_000_000;

fn ns(t: flotilla_protocol::ros::builtin_interfaces::Time) -> u64 {
    t.sec as u64 * SECOND_NS + u64::from(t.nanosec)
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

fn assert_ten_hz(mode: &str, stamps: &[u64]) {
    assert_eq!(stamps.len(), 10, "{mode}: {stamps:?}");
    for pair in stamps.windows(2) {
        assert_eq!(pair[1] - pair[0], 100_000_000, "{mode}: scans 100 ms apart in sim time: {stamps:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_mode_keeps_sim_time_rates_and_obeys_pause_and_step() {
    let world = common::config("tests/room/world.yaml");
    let sim = Sim::start("clock", &world, &["flotilla-laser"], &["--clock", "fast"]).await;
    let mut scans = sim.subscribe::<LaserScan>("/robot/scan").await;
    let mut clock = sim.subscribe::<Clock>("/clock").await;

    assert_ten_hz("fast", &one_sim_second(&mut scans).await);

    for (mode, extra) in [("realtime", vec!["--rate", "4"]), ("lockstep", vec![])] {
        let mut args = vec!["clock", mode];
        args.extend(extra);
        let (ok, out) = sim.cli(&args);
        assert!(ok, "{out}");
        assert_ten_hz(mode, &one_sim_second(&mut scans).await);

        // pause: time stands still; step 7: exactly 7 steps of 5 ms
        let (ok, out) = sim.cli(&["pause"]);
        assert!(ok, "{out}");
        tokio::time::sleep(Duration::from_millis(300)).await;
        clock.clear();
        let (ok, out) = sim.cli(&["step", "1"]);
        assert!(ok, "{out}");
        let paused_at = ns(clock.next(T).await.clock);
        let (ok, out) = sim.cli(&["step", "7"]);
        assert!(ok, "{out}");
        let after = clock.until(T, |c| ns(c.clock) >= paused_at + 7 * 5_000_000).await;
        assert_eq!(ns(after.clock), paused_at + 35_000_000, "{mode}: step 7 from {paused_at}");
        tokio::time::sleep(Duration::from_millis(300)).await;
        let mut later = None;
        while let Ok(Some(c)) = tokio::time::timeout(Duration::from_millis(50), clock.next_opt()).await {
            later = Some(ns(c.clock));
        }
        assert!(later.is_none_or(|t| t == paused_at + 35_000_000), "{mode}: still paused, clock at {later:?}");
        let (ok, out) = sim.cli(&["resume"]);
        assert!(ok, "{out}");
    }

    // External: the world follows a clock someone else publishes, step by step.
    let mut states = sim.subscribe_states().await;
    let (ok, out) = sim.cli(&["clock", "external"]);
    assert!(ok, "{out}");
    // The world stops where it is until the external clock moves.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut now = states.next(T).await.time.nanos;
    while let Ok(Some(s)) = tokio::time::timeout(Duration::from_millis(100), states.next_opt()).await {
        now = s.time.nanos;
    }
    let target = now + SECOND_NS;
    let mut external = now;
    let stamps_task = {
        let mut scans_stamps = Vec::new();
        scans.clear();
        while external < target {
            external += 50_000_000;
            let t = flotilla_protocol::time::SimTime { nanos: external }.to_ros();
            sim.publish("/clock", &Clock { clock: t }).await;
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let reached = states.until(T, |s| s.time.nanos >= target).await;
        assert_eq!(reached.time.nanos, target, "the world stops exactly at the external time");
        while let Ok(Some(s)) = tokio::time::timeout(Duration::from_millis(300), scans.next_opt()).await {
            scans_stamps.push(ns(s.header.stamp));
        }
        scans_stamps
    };
    let in_window: Vec<u64> = stamps_task.into_iter().filter(|&t| t > now && t <= target).collect();
    assert_eq!(in_window.len(), 10, "external: {in_window:?}");
}
