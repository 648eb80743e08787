//! Fast mode is flow-controlled: the world runs as fast as it can, but never
//! more than `FAST_MAX_LEAD_STEPS` ahead of the slowest lockstep
//! participant, and it drops (never waits for) one that stops answering.

mod common;

use std::time::Duration;

use common::{Sim, Topic};
use flotilla_wire::codec::encode;
use flotilla_wire::lockstep::{StepDone, FAST_MAX_LEAD_STEPS};
use flotilla_wire::world_to_nodes::WorldState;

const T: Duration = Duration::from_secs(30);

/// The step of the newest state received (draining the queue), if any came
/// within 10 ms.
async fn newest(states: &mut Topic<WorldState>) -> Option<u64> {
    let mut step = None;
    while let Ok(Some(s)) = tokio::time::timeout(Duration::from_millis(10), states.next_opt()).await {
        step = Some(s.step);
    }
    step
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_participant_holds_a_fast_world_within_the_lead() {
    let world = common::config("tests/room/world.yaml");
    let sim = Sim::start("fast-lead", &world, &[], &["--clock", "fast", "--lockstep-timeout", "10"]).await;
    let mut states = sim.subscribe_states().await;
    let key = sim.keys.lockstep("slow");
    let _token = sim.session.liveliness().declare_token(&key).await.unwrap();
    sim.wait_for_log("world", "lockstep: slow joined", T).await;

    // Report the newest state seen every 20 ms or so: far slower than the
    // world could step on its own, yet it keeps going.
    let mut first_report = None;
    let mut done = 0;
    for _ in 0..50 {
        if let Some(step) = newest(&mut states).await {
            sim.session.put(&key, encode(&StepDone { step })).await.unwrap();
            first_report.get_or_insert(step);
            done = step;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let first_report = first_report.expect("states came");
    assert!(
        done >= first_report + 2 * FAST_MAX_LEAD_STEPS,
        "the world moved on with the reports: {first_report} → {done}"
    );

    // Reports stop: stepping from step S needs a report of S - lead, so the
    // last state is at most the last report + lead + 1.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let last = newest(&mut states).await.unwrap_or(done);
    assert!(last <= done + FAST_MAX_LEAD_STEPS + 1, "state {last} with the participant done only with {done}");
    assert!(last >= done + FAST_MAX_LEAD_STEPS, "the world used its lead: state {last}, participant done with {done}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_participant_is_dropped_not_waited_for() {
    let world = common::config("tests/room/world.yaml");
    // `wait` is the lockstep stall policy; fast mode never waits.
    let args = ["--clock", "fast", "--lockstep-timeout", "0.5", "--on-stall", "wait"];
    let sim = Sim::start("fast-silent", &world, &[], &args).await;
    let mut states = sim.subscribe_states().await;
    let _token = sim.session.liveliness().declare_token(sim.keys.lockstep("silent")).await.unwrap();
    sim.wait_for_log("world", "lockstep: silent joined", T).await;
    states.clear();
    let joined = states.next(T).await.step;
    // Held for the timeout, then dropped: the world goes far past its lead.
    states.until(T, |s| s.step > joined + 20 * FAST_MAX_LEAD_STEPS).await;
    sim.wait_for_log("world", "dropping silent from the barrier", T).await;
}
