//! What `flotilla bench` says about lockstep's cost: `--barrier-floor`
//! (the least a barrier over the scenario's participants costs) and
//! `--compare-clocks` across a link with latency (`--link-latency`).

mod common;

use common::bench::bench_json;

/// The floor's barrier has one answering process per lockstep participant
/// of the scenario (two drive shards, odometry, one laser) and takes
/// `--duration`'s steps of 5 ms.
#[test]
fn the_barrier_floor_answers_with_one_process_per_participant() {
    let sim = common::unique_sim("floor");
    let report = bench_json(&["office-5", "--barrier-floor", "--duration", "1", "--drive-shards", "2"], &sim);
    assert_eq!(report["participants"], 4, "{report}");
    assert_eq!(report["steps"], 200, "{report}");
    let answers = report["answer_cpu_us_per_step"].as_array().unwrap();
    assert_eq!(answers.len(), 4, "{report}");
    let leader = report["leader_cpu_us_per_step"].as_f64().unwrap();
    let all = report["all_cpu_us_per_step"].as_f64().unwrap();
    let sum = leader + answers.iter().map(|a| a.as_f64().unwrap()).sum::<f64>();
    assert!((all - sum).abs() < 1e-6, "all is the sum: {report}");
    assert!(report["wall_us_per_step"].as_f64().unwrap() > 0.0, "{report}");
}

/// Across a link that delays each direction by 50 ms, every state the
/// world waits on costs at least a 100 ms round trip, and it waits on every
/// sensor at least once per 100 states (0.5 sim s: the most a sensor may
/// run behind), so lockstep runs at most 5× real time there.
#[test]
fn lockstep_across_a_link_with_latency_waits_a_round_trip_per_awaited_state() {
    let sim = common::unique_sim("link");
    let args = ["office-5", "--duration", "1", "--warmup", "1", "--compare-clocks", "1", "--link-latency", "50"];
    let report = bench_json(&args, &sim);
    assert_eq!(report["link_latency_ms"], 50.0, "{report}");
    let lockstep = report["rtf_lockstep"]["median"].as_f64().unwrap();
    assert!(lockstep < 5.0, "lockstep {lockstep}× real time across 2 × 50 ms: {report}");
    let lockstep_us = report["wall_us_per_step"][1].as_f64().unwrap();
    assert!((lockstep_us - 5000.0 / lockstep).abs() < 1e-3 * lockstep_us, "wall per step is step / rtf: {report}");
}
