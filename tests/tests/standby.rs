//! A standby world as a user meets it (docs/checkpoints.md): `flotilla run
//! --standby-world` runs a second world that follows the first; when the
//! first is killed, the standby takes over from its last state under the
//! same id, and the nodes carry on without a restart; the killed world,
//! started again by the launcher, stands by in turn.

mod common;

use std::time::{Duration, Instant};

use flotilla_messages::geometry_msgs::Twist;
use flotilla_wire::world_to_nodes::{BodyState, WorldState};

const T: Duration = Duration::from_secs(30);

/// The room's robot is body 1.
const ROBOT: u32 = 1;

/// The robot drives a circle: 0.3 m/s, 0.5 rad/s.
const V_MPS: f64 = 0.3;
const W_RADPS: f64 = 0.5;

fn robot(state: &WorldState) -> BodyState {
    *state.bodies.iter().find(|b| b.id == ROBOT).unwrap_or_else(|| panic!("no robot: {state:?}"))
}

/// Whether the robot drives at the command (the drive commands the world).
fn driving(state: &WorldState) -> bool {
    let t = robot(state).twist;
    (t.vx_mps.hypot(t.vy_mps) - V_MPS).abs() < 1e-6 && (t.omega_radps - W_RADPS).abs() < 1e-6
}

/// The pid of the world process listening on `listen`.
fn world_pid(sim: &str, listen: &str) -> u32 {
    let pids = common::pids_of(&format!("flotilla-world .* --sim {sim} --listen {listen} "));
    assert_eq!(pids.len(), 1, "one world listening on {listen}: {pids:?}");
    pids[0]
}

/// The states across a take-over: the last the killed world published,
/// the first of the world that took over, and that state as the killed
/// world had published it.
struct TakeOver {
    last_of_the_killed: WorldState,
    first_of_the_new: WorldState,
    same_step_before: Option<WorldState>,
    silent: Duration,
}

/// Kills the world listening on `listen` and follows the states until the
/// world that takes over publishes. It goes on from the last step it had
/// received, so its first state is of a step already seen (or an earlier
/// one, if the last states it was sent had not arrived).
async fn kill_and_watch(sim: &str, listen: &str, states: &mut common::Topic<WorldState>) -> TakeOver {
    states.clear();
    let mut seen = vec![states.next(T).await];
    common::signal(world_pid(sim, listen), nix::sys::signal::Signal::SIGKILL);
    let mut heard_last = Instant::now();
    let deadline = heard_last + T;
    loop {
        assert!(Instant::now() < deadline, "no world took over: states went on from step {}", seen[0].step);
        let state = states.next(T).await;
        let now = Instant::now();
        let last = seen.last().unwrap();
        if state.step <= last.step {
            let same_step_before = seen.iter().find(|s| s.step == state.step).cloned();
            return TakeOver {
                last_of_the_killed: last.clone(),
                first_of_the_new: state,
                same_step_before,
                silent: now.duration_since(heard_last),
            };
        }
        heard_last = now;
        seen.push(state);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_a_fast_run_a_standby_world_takes_over_from_a_killed_world_and_the_robot_drives_on() {
    killed_twice("fast").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_real_time_a_standby_world_takes_over_from_a_killed_world_and_the_robot_drives_on() {
    killed_twice("realtime").await;
}

/// Runs the room with a standby world in `clock` mode, drives the robot in
/// a circle, kills the world, then the world that took over.
async fn killed_twice(clock: &str) {
    let world = common::config("tests/room/world.yaml");
    let standby_listen = format!("tcp/127.0.0.1:{}", common::free_port());
    let run = common::Launched::start(
        &format!("standby-{clock}"),
        &world,
        &["--clock", clock, "--standby-world", "--standby-listen", &standby_listen],
    )
    .await;
    // This test's own session knows both worlds, as the launched nodes do.
    let session = common::connect_all(&[&run.endpoint, &standby_listen]).await;
    let mut states = common::subscribe_internal::<WorldState>(&session, run.keys.world_state()).await;
    let cmd_vel = run.keys.ros("/robot/cmd_vel");
    let commanding = {
        let session = session.clone();
        tokio::spawn(async move {
            let mut twist = Twist::default();
            (twist.linear.x, twist.angular.z) = (V_MPS, W_RADPS);
            loop {
                let _ = session.put(&cmd_vel, flotilla_messages::encode(&twist)).await;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
    };
    states.until(T, driving).await;
    // The standby has a checkpoint (it fetches one a second).
    let deadline = Instant::now() + T;
    while !run.output().contains("standing by for the running world") {
        assert!(Instant::now() < deadline, "no standby: {}", run.output());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let drive = run.node_pid("flotilla-drive");

    let first = kill_and_watch(&run.sim, &run.endpoint, &mut states).await;
    assert_goes_on(&first);
    eprintln!(
        "{clock}, take-over 1: silent for {:?}; step {} then {}",
        first.silent, first.last_of_the_killed.step, first.first_of_the_new.step
    );
    // The robot drives on: the drive, never restarted, commands the new world.
    states.until(T, |s| s.step > first.first_of_the_new.step + 200 && driving(s)).await;
    assert_eq!(run.node_pid("flotilla-drive"), drive, "the drive was not restarted");
    assert!(!run.output().contains("drive exited"), "{}", run.output());

    // The killed world, started again, stands by for the one that took over.
    let deadline = Instant::now() + T;
    while run.output().matches("standing by for the running world").count() < 2 {
        assert!(Instant::now() < deadline, "the restarted world does not stand by: {}", run.output());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let second = kill_and_watch(&run.sim, &standby_listen, &mut states).await;
    assert_goes_on(&second);
    eprintln!(
        "{clock}, take-over 2: silent for {:?}; step {} then {}",
        second.silent, second.last_of_the_killed.step, second.first_of_the_new.step
    );
    states.until(T, |s| s.step > second.first_of_the_new.step + 200 && driving(s)).await;
    assert_eq!(run.node_pid("flotilla-drive"), drive, "the drive was not restarted");
    assert!(!run.output().contains("ERROR"), "{}", run.output());
    commanding.abort();
}

/// The new world goes on from the killed one's last state it received:
/// sim time goes on (not from the world file's t = 0), at most a few steps
/// back, and the robot is exactly where the killed world had it at that step.
fn assert_goes_on(t: &TakeOver) {
    let (last, first) = (&t.last_of_the_killed, &t.first_of_the_new);
    let lost = last.step - first.step;
    assert!(lost <= 5, "sim time goes on: the killed world was at step {}, the new one at {}", last.step, first.step);
    let before = t.same_step_before.as_ref().expect("the state of the step taken over from was seen");
    assert_eq!(robot(first).pose, robot(before).pose, "the robot where it was at step {}", first.step);
}
