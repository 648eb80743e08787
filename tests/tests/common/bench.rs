//! Running `flotilla bench` and reading its JSON report.

use std::process::Command;

/// Runs `flotilla bench` with `args` and `--json`, its logs in the log
/// directory of `sim`; its report. Fails the test, with both outputs and
/// where the logs are, unless the bench succeeds.
pub fn bench_json(args: &[&str], sim: &str) -> serde_json::Value {
    let dir = super::log_dir(sim);
    let out = Command::new(super::bin("flotilla"))
        .arg("bench")
        .args(args)
        .arg("--json")
        .arg("--dir")
        .arg(&dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}\nlogs in {}", dir.display());
    let json = stdout.lines().find(|line| line.starts_with('{')).expect("a JSON report");
    serde_json::from_str(json).unwrap()
}
