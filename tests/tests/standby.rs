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

/// A take-over as seen from outside: the step the new world took over at
/// (its log says), the last step seen before it, and every state seen from
/// the kill until the new world was well under way.
struct TakeOver {
    at_step: u64,
    last_seen_before: u64,
    seen: Vec<WorldState>,
    /// Wall time from the kill to the take-over's log line.
    took: Duration,
}

/// The most steps a take-over may go back from the last state seen: a
/// quarter of a sim second.
const MAX_LOST_STEPS: u64 = 50;

/// What the launcher logs when a standby takes over at a step.
const TAKING_OVER: &str = "gone: taking over at step ";

/// Kills the world listening on `listen` and follows the states until the
/// world that took over (the launcher's log says at which step) is 100
/// steps on.
async fn kill_and_watch(run: &common::Launched, listen: &str, states: &mut common::Topic<WorldState>) -> TakeOver {
    let before = run.output().matches(TAKING_OVER).count();
    states.clear();
    let mut seen = vec![states.next(T).await];
    common::signal(world_pid(&run.sim, listen), nix::sys::signal::Signal::SIGKILL);
    let killed = Instant::now();
    let (at_step, last_seen_before, took) = loop {
        assert!(killed.elapsed() < T, "no world took over: {}", run.output());
        let output = run.output();
        if output.matches(TAKING_OVER).count() > before {
            let line = output.rsplit(TAKING_OVER).next().unwrap();
            let step = line.split_whitespace().next().unwrap().parse().unwrap();
            break (step, seen.iter().map(|s| s.step).max().unwrap(), killed.elapsed());
        }
        if let Ok(state) = tokio::time::timeout(Duration::from_millis(10), states.next(T)).await {
            seen.push(state);
        }
    };
    loop {
        let state = states.next(T).await;
        let far = state.step > at_step + 100;
        seen.push(state);
        if far {
            return TakeOver { at_step, last_seen_before, seen, took };
        }
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

/// In lockstep the world that takes over re-runs the steps since its last
/// checkpoint with the drives' answers it kept, which gives the killed
/// world's last state bit for bit, and goes on from there with the answers
/// to it (tests/tests/lockstep_determinism.rs kills a world at a random
/// step of a scripted run).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_lockstep_a_standby_world_takes_over_from_a_killed_world_and_the_robot_drives_on() {
    killed_twice("lockstep").await;
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

    survives_a_kill(&run, &run.endpoint, &mut states, &format!("{clock}, take-over 1"), drive).await;
    // The killed world, started again, stands by for the one that took over.
    let deadline = Instant::now() + T;
    while run.output().matches("standing by for the running world").count() < 2 {
        assert!(Instant::now() < deadline, "the restarted world does not stand by: {}", run.output());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    survives_a_kill(&run, &standby_listen, &mut states, &format!("{clock}, take-over 2"), drive).await;
    // Zenoh 1.10's router sometimes logs, in a world taking over, that its
    // own session used a key expression it had not declared ("Declare
    // keyexpr interest with unknown scope", then "Unknown wire expr"; as in
    // eclipse-zenoh/zenoh#2106); what it may cost, the robot driving on
    // above would show. Every other error is Flotilla's.
    let zenoh_s_own = |line: &str| line.contains("with unknown scope") || line.contains("Unknown wire expr");
    let output = run.output();
    let errors: Vec<&str> = output.lines().filter(|line| line.contains("ERROR") && !zenoh_s_own(line)).collect();
    assert!(errors.is_empty(), "{errors:#?}\n{output}");
    if clock == "lockstep" {
        let rerun = run.output().matches("giving its last state bit for bit").count();
        assert_eq!(rerun, 2, "both take-overs re-ran the steps since the checkpoint: {}", run.output());
    }
    commanding.abort();
}

/// Kills the world listening on `listen`: another takes over, and the
/// robot drives on, commanded by the drive `drive`, never restarted.
async fn survives_a_kill(
    run: &common::Launched,
    listen: &str,
    states: &mut common::Topic<WorldState>,
    name: &str,
    drive: u32,
) {
    let t = kill_and_watch(run, listen, states).await;
    assert_goes_on(&t);
    eprintln!("{name} after {:?}: at step {}, {} seen", t.took, t.at_step, t.last_seen_before);
    states.until(T, |s| s.step > t.at_step + 200 && driving(s)).await;
    assert_eq!(run.node_pid("flotilla-drive"), drive, "the drive was not restarted");
    assert!(!run.output().contains("drive exited"), "{}", run.output());
}

/// The new world goes on from the killed one's last state it received:
/// sim time goes on (not from the world file's t = 0), at most
/// [`MAX_LOST_STEPS`] back from the last state seen, and the robot is where the killed world
/// had it: every state of the step taken over at (the killed world's and
/// the new world's) has it at the same pose, and it is within one step's
/// motion of where it was a step before.
fn assert_goes_on(t: &TakeOver) {
    // In lockstep and real time the standby has every state the nodes
    // have; in fast mode, where the world runs ahead of anyone reading, the
    // states still on their way to it when the world died are lost with it.
    let lost = t.last_seen_before.saturating_sub(t.at_step);
    assert!(lost <= MAX_LOST_STEPS, "sim time goes on: step {} seen, taken over at {}", t.last_seen_before, t.at_step);
    let at: Vec<_> = t.seen.iter().filter(|s| s.step == t.at_step).map(|s| robot(s).pose).collect();
    assert!(!at.is_empty(), "the state of step {} seen", t.at_step);
    // The same but for the last bit of the heading: the world keeps it as
    // a rotation, which the angle published is turned into and back.
    for pose in &at[1..] {
        let off = (pose.x_m - at[0].x_m).hypot(pose.y_m - at[0].y_m).max((pose.theta_rad - at[0].theta_rad).abs());
        assert!(off < 1e-12, "step {} twice: {:?} and {pose:?}", t.at_step, at[0]);
    }
    let dt_s = t.seen[0].step_ns as f64 * 1e-9;
    let mut steps: Vec<_> = t.seen.iter().map(|s| (s.step, robot(s).pose)).collect();
    steps.sort_by_key(|(step, _)| *step);
    steps.dedup_by_key(|(step, _)| *step);
    for pair in steps.windows(2).filter(|p| p[1].0 == p[0].0 + 1) {
        let ((_, a), (step, b)) = (pair[0], pair[1]);
        let moved = (b.x_m - a.x_m).hypot(b.y_m - a.y_m);
        assert!(moved <= V_MPS * dt_s + 1e-9, "at step {step} the robot moved {moved} m in one step");
    }
}
