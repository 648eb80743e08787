//! Checkpoints as a user meets them (docs/checkpoints.md): a world killed
//! mid-run comes back where its last checkpoint left it, not at its world
//! file's start; `flotilla checkpoint save` and `flotilla run
//! --from-checkpoint` carry a run over to another launch; a checkpoint
//! that does not fit the world is refused before anything starts.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use flotilla_wire::checkpoint_file::{self, CheckpointHeader};
use flotilla_wire::geometry::Pose2;
use flotilla_wire::world_to_nodes::WorldState;

const T: Duration = Duration::from_secs(30);

fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(common::unique_sim(test));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The header of the checkpoint at `path`, once there is a whole one.
fn header(path: &Path) -> Option<CheckpointHeader> {
    let bytes = std::fs::read(path).ok()?;
    checkpoint_file::open(&bytes).ok().map(|(header, _)| header)
}

fn pose_of(state: &WorldState, body: u32) -> Pose2 {
    state.bodies.iter().find(|b| b.id == body).unwrap_or_else(|| panic!("no body {body}: {state:?}")).pose
}

fn assert_near(pose: Pose2, x_m: f64, y_m: f64, theta_rad: f64) {
    let off = (pose.x_m - x_m).hypot(pose.y_m - y_m);
    assert!(off < 1e-6 && (pose.theta_rad - theta_rad).abs() < 1e-6, "{pose:?}, wanted ({x_m}, {y_m}, {theta_rad})");
}

/// The room's robot is body 1, at (5, 5, 0) in the world file.
const ROBOT: u32 = 1;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_world_killed_mid_run_resumes_from_its_last_checkpoint() {
    let world = common::config("tests/room/world.yaml");
    let file = scratch("ckpt-crash").join("room.ckpt");
    let file_arg = file.to_string_lossy().into_owned();
    let run =
        common::Launched::start("ckpt-crash", &world, &["--checkpoint", &file_arg, "--checkpoint-every", "0.2"]).await;
    let mut states = run.subscribe_states().await;
    states.next(T).await;

    let (moved, out) = run.cli(&["move", "robot", "3", "3", "0.5"]);
    assert!(moved, "{out}");
    let after_move = states.until(T, |s| (pose_of(s, ROBOT).x_m - 3.0).abs() < 1e-9).await.step;
    let deadline = tokio::time::Instant::now() + T;
    let saved = loop {
        match header(&file) {
            Some(h) if h.step > after_move => break h,
            _ => assert!(tokio::time::Instant::now() < deadline, "no checkpoint after the move"),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };

    let world_pid = common::pids_of(&format!("flotilla-world {world} --sim {} ", run.sim));
    assert_eq!(world_pid.len(), 1, "one world: {world_pid:?}");
    common::signal(world_pid[0], nix::sys::signal::Signal::SIGKILL);
    let resumed =
        states.until(T, |s| s.step < saved.step + 200 && run.output().contains("resuming from checkpoint")).await;

    // The new world goes on from the checkpoint (at or after it, as later
    // checkpoints may have been written before the kill), with the robot
    // where it was moved, not back at (5, 5).
    assert!(resumed.step >= saved.step, "step {} after a checkpoint at {}", resumed.step, saved.step);
    assert_near(pose_of(&resumed, ROBOT), 3.0, 3.0, 0.5);
    assert!(run.output().contains("world exited"), "the launcher saw the crash:\n{}", run.output());
    let status = run.stop().await;
    assert!(status.success(), "{status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_saved_run_goes_on_in_another_launch_and_a_checkpoint_of_another_world_is_refused() {
    let world = common::config("tests/room/world.yaml");
    let robot_model = common::config("tests/room/robot.model.yaml");
    let file = scratch("ckpt-save").join("saved.ckpt");
    let file_arg = file.to_string_lossy().into_owned();

    let run = common::Launched::start("ckpt-save", &world, &[]).await;
    let mut states = run.subscribe_states().await;
    states.next(T).await;
    let (spawned, out) = run.cli(&["spawn", &robot_model, "--name", "bob", "--ns", "bob", "--pose", "7", "7", "1"]);
    assert!(spawned, "{out}");
    let (moved, out) = run.cli(&["move", "robot", "2", "8", "-0.5"]);
    assert!(moved, "{out}");
    let (saved, out) = run.cli(&["checkpoint", "save", &file_arg]);
    assert!(saved && out.contains("saved to"), "{out}");
    let header = header(&file).expect("a whole checkpoint");
    assert!(header.step > 0, "{header:?}");
    assert!(run.stop().await.success());

    // Another launch, from the checkpoint: bob is there, the robot where it
    // was moved, and sim time goes on from the checkpoint's.
    let again = common::Launched::start("ckpt-resume", &world, &["--from-checkpoint", &file_arg]).await;
    let mut states = again.subscribe_states().await;
    let first = states.next(T).await;
    assert!(first.step >= header.step, "step {} after a checkpoint at {}", first.step, header.step);
    assert_near(pose_of(&first, ROBOT), 2.0, 8.0, -0.5);
    assert_near(pose_of(&first, 2), 7.0, 7.0, 1.0);
    assert!(again.output().contains("resuming from checkpoint"), "{}", again.output());
    assert!(again.stop().await.success());

    // What the file says about itself.
    let shown = Command::new(common::bin("flotilla")).args(["checkpoint", "show", &file_arg]).output().unwrap();
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert!(shown.contains(&format!("saved at: step {} ", header.step)) && shown.contains("seed: 0"), "{shown}");

    // Refused before anything starts, with the reason: another world, another
    // seed, a file cut short.
    let refusal = |world: &str, file: &str, extra: &[&str]| {
        let out = Command::new(common::bin("flotilla"))
            .args(["run", world, "--from-checkpoint", file, "--sim", &common::unique_sim("ckpt-bad")])
            .args(["--listen", &format!("tcp/127.0.0.1:{}", common::free_port())])
            .args(extra)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(!out.status.success(), "{world} with {file} started");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let crowd = common::config("tests/crowd/room.world.yaml");
    let err = refusal(&crowd, &file_arg, &[]);
    assert!(err.contains(&format!("checkpoint {file_arg}: saved from world file")) && err.contains("differs"), "{err}");
    let err = refusal(&world, &file_arg, &["--seed", "7"]);
    assert!(err.contains("saved with seed 0; the world now has seed 7"), "{err}");
    let bytes = std::fs::read(&file).unwrap();
    let cut = file.with_extension("cut");
    std::fs::write(&cut, &bytes[..bytes.len() - 100]).unwrap();
    let err = refusal(&world, &cut.to_string_lossy(), &[]);
    assert!(err.contains("truncated:"), "{err}");
}
