//! `flotilla bench SCENARIO --record-cost ROUNDS`: what recording costs,
//! measured in rounds of a run without a recorder and a run with one.

mod common;

use std::process::Command;

use common::bench::bench_json;

#[test]
fn each_round_runs_without_then_with_a_recorder_and_the_report_holds_both() {
    let sim = common::unique_sim("record-cost");
    let args = ["office-5", "--clock", "fast", "--duration", "2", "--warmup", "1"];
    let report = bench_json(&[&args[..], &["--record-cost", "2", "--record-compression", "none"]].concat(), &sim);
    assert_eq!((report["scenario"].as_str(), report["compression"].as_str()), (Some("office-5"), Some("none")));

    let process_names = |run: &serde_json::Value| -> Vec<String> {
        run["processes"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap().to_string()).collect()
    };
    let runs = report["runs"].as_array().unwrap();
    let rounds = report["rounds"].as_array().unwrap();
    assert_eq!((runs.len(), rounds.len()), (2, 2));
    for (pair, round) in runs.iter().zip(rounds) {
        let (without, with) = (&pair[0], &pair[1]);
        assert!(!process_names(without).contains(&"record".to_string()), "{:?}", process_names(without));
        assert!(process_names(with).contains(&"record".to_string()), "{:?}", process_names(with));
        // Each round's cost is its own two runs' speeds.
        let (a, b) = (without["rtf"].as_f64().unwrap(), with["rtf"].as_f64().unwrap());
        assert!(a > 0.0 && b > 0.0);
        let cost = round["cost_percent"].as_f64().unwrap();
        assert!((cost - 100.0 * (1.0 - b / a)).abs() < 1e-6, "{cost} from {a}× and {b}×");
    }
    let recorder = report["processes"].as_array().unwrap().iter().find(|p| p["name"] == "record").unwrap();
    assert!(recorder["cpu_s_without"].is_null());
    assert!(recorder["added_cpu_s"].as_f64().unwrap() > 0.0, "{recorder}");

    // The last round's recording is kept, a whole MCAP file.
    let recording = std::fs::read(common::log_dir(&sim).join("bench.mcap")).unwrap();
    assert!(recording.starts_with(b"\x89MCAP0\r\n") && recording.ends_with(b"\x89MCAP0\r\n"));
}

#[test]
fn a_compression_without_anything_to_record_is_refused() {
    let out = Command::new(common::bin("flotilla"))
        .args(["bench", "office-5", "--record-compression", "none"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("--record-compression needs --record or --record-cost"), "{stderr}");
}
