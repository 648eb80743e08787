//! `flotilla.gym` (the Python package's Gymnasium and PettingZoo
//! environments) end to end: `tests/python/gym_envs.py` runs Gymnasium's
//! `check_env` and PettingZoo's `parallel_api_test` on environments that
//! start their own lockstep simulations, checks that one seed gives one
//! trajectory, drives the GoToGoal task to its goal and steps a vector env
//! of two simulations.

mod common;

use std::process::{Command, Stdio};

#[test]
fn gymnasium_and_pettingzoo_environments_pass_their_checks() {
    let logs = common::log_dir(&common::unique_sim("python-gym"));
    let output = Command::new("python3")
        .arg(common::root().join("tests/python/gym_envs.py"))
        .arg("--room")
        .arg(common::config("tests/room/world.yaml"))
        .arg("--fleet")
        .arg(common::config("tests/determinism/world.yaml"))
        .env("FLOTILLA_BIN", common::bin("flotilla"))
        .env("TMPDIR", &logs)
        .stdin(Stdio::null())
        .output()
        .expect("python3");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("vector env passed"),
        "{stdout}\n{}\nthe simulations' logs are in {}",
        String::from_utf8_lossy(&output.stderr),
        logs.display()
    );
}
