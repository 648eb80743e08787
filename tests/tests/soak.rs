//! The soak, short: `flotilla bench warehouse-20 --clock lockstep --soak 30`
//! drives every robot at 100 Hz from outside for 30 wall seconds and checks
//! every odometry reply, the nodes' liveliness and every process's memory.
//! The 10-minute soak of warehouse-1000 is a benchmark (BENCHMARKS.md).

mod common;

use std::process::Command;

#[test]
fn a_thirty_second_soak_loses_nothing_restarts_nothing_and_keeps_memory_flat() {
    let sim = common::unique_sim("soak");
    let dir = common::log_dir(&sim);
    let out = Command::new(common::bin("flotilla"))
        .args(["bench", "warehouse-20", "--clock", "lockstep", "--soak", "30", "--json", "--dir"])
        .arg(&dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let json = stdout.lines().find(|line| line.starts_with('{'));
    let report: serde_json::Value = json
        .map(|line| serde_json::from_str(line).unwrap())
        .unwrap_or_else(|| panic!("no report; stdout:\n{stdout}\nstderr:\n{stderr}\nlogs in {}", dir.display()));
    let failures = report["failures"].as_array().unwrap();
    assert!(failures.is_empty(), "the soak failed: {failures:?}; logs in {}", dir.display());
    assert!(out.status.success(), "{stderr}");

    // What passing means, checked again from the report.
    assert_eq!(report["robots"], 20);
    assert_eq!(report["odometry_lost"], 0);
    assert_eq!(report["odometry_out_of_order"], 0);
    assert_eq!(report["restarts"].as_array().unwrap().len(), 0);
    let sim_s = report["sim_seconds"].as_f64().unwrap();
    // 20 robots' odometry at 50 Hz: every reply came (by their stamps).
    let expected = 20.0 * 50.0 * sim_s;
    let received = report["odometry_received"].as_f64().unwrap();
    assert!(received >= 0.95 * expected, "{received} replies in {sim_s} sim s, {expected} expected");
    assert!(report["command_rate_hz"].as_f64().unwrap() >= 90.0);
    let processes: Vec<&str> =
        report["memory"].as_array().unwrap().iter().map(|m| m["name"].as_str().unwrap()).collect();
    assert_eq!(processes, ["world", "drive", "odom", "laser", "bench"]);
}
