//! `flotilla.gym` (the Python package's Gymnasium and PettingZoo
//! environments) end to end: `tests/python/gym_envs.py` runs Gymnasium's
//! `check_env` and PettingZoo's `parallel_api_test` on environments that
//! start their own lockstep simulations, drives the GoToGoal task to its
//! goal, steps a vector env of two simulations and reads one simulation
//! through another's endpoint; and checks
//! that one seed gives one trajectory across resets.

mod common;

use std::process::{Command, Stdio};

/// Runs `tests/python/gym_envs.py` with `extra` arguments; `done` is the
/// line it prints when every check passed.
fn gym_envs(label: &str, extra: &[&str], done: &str) {
    let logs = common::log_dir(&common::unique_sim(label));
    let output = Command::new("python3")
        .arg(common::root().join("tests/python/gym_envs.py"))
        .arg("--room")
        .arg(common::config("tests/room/world.yaml"))
        .arg("--fleet")
        .arg(common::config("tests/determinism/world.yaml"))
        .args(extra)
        .env("FLOTILLA_BIN", common::bin("flotilla"))
        .env("TMPDIR", &logs)
        .stdin(Stdio::null())
        .output()
        .expect("python3");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains(done),
        "{stdout}\n{}\nthe simulations' logs are in {}",
        String::from_utf8_lossy(&output.stderr),
        logs.display()
    );
}

#[test]
fn gymnasium_and_pettingzoo_environments_pass_their_checks() {
    gym_envs("python-gym", &[], "vector env passed");
}

/// One seed, one trajectory across resets: episodes that end on an
/// aligned state are reset at once, while the drive's answer to that state
/// (the last action's velocity) is still on its way to the world, which
/// must drop it whenever it arrives.
#[test]
fn one_seed_gives_one_trajectory_across_resets() {
    gym_envs("python-gym-resets", &["--resets-only"], "resets passed");
}
