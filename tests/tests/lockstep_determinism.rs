//! Determinism: the same world, seed and scripted commands, run in lockstep
//! once with every plugin type in its own process and once with every
//! sensor but odometry in two shards and the drive, the crowd (people
//! walking among the robots, with random pushes) and the building (a door
//! opening for a robot) split in two, give
//! bit-identical odometry, scan, GPS, IMU and sonar streams (all with
//! seeded noise), bumper, bool sensor, battery and door streams and every
//! body's pose over 2000 steps. And the
//! drives' promises of their next answers, which spare the world waits,
//! change no bit:
//! with a controller that works only every 20th step (so that the world
//! has steps at which it need not wait for the drive), a run with them and
//! one with `--wait-on-drives` give the same streams, and so does one
//! whose sensors may not run behind the world between the controller's
//! states (`--lockstep-sensor-lag 0`). A world killed at a
//! random step is taken over by its standby at the killed world's last
//! state, bit for bit, and the run goes on to its end, every stream the
//! same as without the kill, with drives keeping promises or not; a
//! standby that only follows changes no bit either.

mod common;

use common::lockstep::{assert_same, Outcome, Run, Script, StandbyWorld, Streams};
use flotilla_messages::geometry_msgs::TwistStamped;
use flotilla_messages::std_msgs::Header;
use flotilla_wire::world_to_nodes::WorldState;

const STEPS: u64 = 2000;
const ROBOTS: [&str; 4] = ["robot1", "robot2", "robot3", "robot4"];

/// Every plugin type in a process of its own.
const ONE_EACH: &[&[&str]] = &[
    &["flotilla-drive"],
    &["flotilla-odom"],
    &["flotilla-laser"],
    &["flotilla-gps"],
    &["flotilla-imu"],
    &["flotilla-sonar"],
    &["flotilla-bumper"],
    &["flotilla-bool-sensor"],
    &["flotilla-crowd"],
    &["flotilla-building"],
];

/// The scripted command of robot `r` from step `k` on (changes every 20 steps).
fn script(r: usize, k: u64) -> (f64, f64) {
    let phase = k / 400;
    let v = if phase.is_multiple_of(2) { 0.3 + 0.1 * r as f64 } else { 0.2 };
    let w = ((k / 250) % 3) as f64 * 0.4 - 0.4 + 0.05 * r as f64;
    (v, w)
}

/// How the scripted controller takes part in the barrier.
#[derive(Clone, Copy, PartialEq)]
enum Controller {
    /// Reports every step; commands take effect at the state after.
    EveryStep,
    /// Works every 20th step only, reporting the 19 after at once; robot r's
    /// command is stamped 7·r steps ahead, so that drives hold commands
    /// queued for later steps.
    Every20th,
}

impl Script for Controller {
    fn at(&mut self, state: &WorldState) -> Vec<(String, Vec<u8>)> {
        if !state.step.is_multiple_of(20) {
            return Vec::new();
        }
        let command = |(r, robot): (usize, &&str)| {
            let (v, w) = script(r, state.step);
            let ahead = if *self == Controller::Every20th { 7 * r as u64 } else { 0 };
            let stamp = flotilla_wire::time::SimTime::at_step(state.step + ahead, state.step_ns);
            let mut cmd = TwistStamped {
                header: Header { stamp: stamp.to_ros(), frame_id: String::new() },
                ..Default::default()
            };
            cmd.twist.linear.x = v;
            cmd.twist.angular.z = w;
            (format!("{robot}/cmd_vel"), flotilla_messages::encode(&cmd))
        };
        ROBOTS.iter().enumerate().map(command).collect()
    }

    fn report(&self, state: &WorldState) -> Option<u64> {
        match self {
            Controller::EveryStep => Some(state.step),
            Controller::Every20th if state.step.is_multiple_of(20) => Some(state.step + 19),
            Controller::Every20th => None,
        }
    }
}

/// The streams of a run, and the world's log.
async fn run(layout: &[&[&str]], controller: Controller, world_args: &[&str]) -> (Streams, String) {
    let outcome = run_with(layout, controller, world_args, None).await;
    (outcome.streams, outcome.world_log)
}

/// A run, with a standby world beside the world or not.
async fn run_with(
    layout: &[&[&str]],
    mut controller: Controller,
    world_args: &[&str],
    standby: Option<StandbyWorld>,
) -> Outcome {
    let world = common::config("tests/determinism/world.yaml");
    let record = [
        "*/odometry/filtered",
        "*/scan",
        "*/gps/fix",
        "*/imu/filtered",
        "*/sonar/*",
        "*/collisions",
        "*/bool_sensor",
        "*/battery_state",
        "door_states",
    ];
    let run = Run { label: "determinism", world: &world, layout, record: &record, world_args, steps: STEPS, standby };
    run.go(&mut controller).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn process_layout_does_not_change_a_single_bit() {
    let sharded: &[&[&str]] = &[
        &["flotilla-drive", "--shard", "0/2"],
        &["flotilla-drive", "--shard", "1/2"],
        &["flotilla-odom"],
        &["flotilla-laser", "--shard", "0/2"],
        &["flotilla-laser", "--shard", "1/2"],
        &["flotilla-gps", "--shard", "0/2"],
        &["flotilla-gps", "--shard", "1/2"],
        &["flotilla-imu", "--shard", "0/2"],
        &["flotilla-imu", "--shard", "1/2"],
        &["flotilla-sonar", "--shard", "0/2"],
        &["flotilla-sonar", "--shard", "1/2"],
        &["flotilla-bumper", "--shard", "0/2"],
        &["flotilla-bumper", "--shard", "1/2"],
        &["flotilla-bool-sensor", "--shard", "0/2"],
        &["flotilla-bool-sensor", "--shard", "1/2"],
        &["flotilla-crowd", "--shard", "0/2"],
        &["flotilla-crowd", "--shard", "1/2"],
        &["flotilla-building", "--shard", "0/2"],
        &["flotilla-building", "--shard", "1/2"],
    ];
    let (a, _) = run(ONE_EACH, Controller::EveryStep, &[]).await;
    let (b, _) = run(sharded, Controller::EveryStep, &[]).await;

    let keys: Vec<&String> = a.keys().collect();
    assert_eq!(
        keys.len(),
        4 * (4 + 8 + 2 + 1) + 2,
        "odometry, scan, GPS, IMU, 8 sonar ranges, collisions, bool sensor and battery of four robots, the \
         door's states and the bodies: {keys:?}"
    );
    // The people walked.
    let bodies = &a["world/bodies"];
    assert_eq!(bodies.len() as u64, STEPS + 1);
    let world = flotilla_world_file::load_world(common::config("tests/determinism/world.yaml").as_ref()).unwrap();
    let walker1 = world.initial_description().unwrap().model("walker1").unwrap().bodies[0].id;
    let pose_of_walker1 = |k: usize| {
        let text = String::from_utf8_lossy(&bodies[k]).into_owned();
        let at = text.find(&format!("id: {walker1},")).expect("walker1 is in every state");
        text[at..at + 80].to_string()
    };
    assert_ne!(pose_of_walker1(0), pose_of_walker1(bodies.len() - 1), "walker1 stood still");
    // The door opened for robot1, and shut after it left.
    let door_modes: Vec<u32> = a["door_states"]
        .iter()
        .map(|m| {
            flotilla_messages::decode::<flotilla_messages::rmf_door_msgs::DoorState>(m).unwrap().current_mode.value
        })
        .collect();
    assert!(door_modes.contains(&2) && door_modes.last() == Some(&0), "the door's modes: {door_modes:?}");
    // The batteries drained with the robots' driving, each its own way.
    let charges: Vec<f32> = ROBOTS
        .iter()
        .map(|robot| {
            let last = a[&format!("{robot}/battery_state")].last().unwrap();
            flotilla_messages::decode::<flotilla_messages::sensor_msgs::BatteryState>(last).unwrap().charge
        })
        .collect();
    assert!(charges.iter().all(|&c| c > 0.0 && c < 0.05), "charges left, Ah: {charges:?}");
    assert!(charges.windows(2).any(|w| w[0] != w[1]), "each drained by its own path: {charges:?}");
    for robot in ROBOTS {
        let scans = &a[&format!("{robot}/scan")];
        let odom = &a[&format!("{robot}/odometry/filtered")];
        // 10 Hz scans and 50 Hz odometry over 10 s of sim time, both ends included
        assert_eq!(scans.len(), 101, "{robot} scans");
        assert_eq!(odom.len(), 501, "{robot} odometry");
        assert_eq!(a[&format!("{robot}/gps/fix")].len(), 201, "{robot} GPS fixes at 20 Hz");
        assert_eq!(a[&format!("{robot}/imu/filtered")].len(), 501, "{robot} IMU samples at 50 Hz");
        assert_eq!(a[&format!("{robot}/sonar/7")].len(), 101, "{robot} sonar readings at 10 Hz");
        assert_eq!(a[&format!("{robot}/collisions")].len(), 101, "{robot} bumper messages at 10 Hz");
        assert_eq!(a[&format!("{robot}/bool_sensor")].len(), 201, "{robot} bool sensor readings at 20 Hz");
        assert_eq!(a[&format!("{robot}/battery_state")].len(), 101, "{robot} battery states at 10 Hz");
    }
    assert_same(&a, &b, "the two process layouts");
    let bumps: Vec<usize> =
        ROBOTS.iter().map(|r| a[&format!("{r}/bool_sensor")].iter().filter(|m| m.get(4) == Some(&1)).count()).collect();
    assert!(bumps[0] > 0, "robot1 drives into the crate ahead of it: {bumps:?}");
    // The robots really moved, and noise is on: the runs are not trivially equal.
    let first = &a["robot1/odometry/filtered"];
    assert_ne!(first[0], first[first.len() - 1]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drives_promises_spare_waits_and_not_a_single_bit() {
    let (promised, log) = run(ONE_EACH, Controller::Every20th, &[]).await;
    assert!(log.contains("is not waited for"), "the drive's promises were used:\n{log}");
    assert!(log.contains("with the changes it planned"), "and its planned ramps:\n{log}");
    assert!(log.contains("may run up to 100 states behind"), "sensors ran behind between its states:\n{log}");
    let (waited, log) = run(ONE_EACH, Controller::Every20th, &["--wait-on-drives"]).await;
    assert!(!log.contains("is not waited for"), "--wait-on-drives:\n{log}");
    assert_eq!(promised["robot1/odometry/filtered"].len(), 501);
    assert_same(&promised, &waited, "a run with the drives' promises and one without");
    let (in_step, log) = run(ONE_EACH, Controller::Every20th, &["--lockstep-sensor-lag", "0"]).await;
    assert!(!log.contains("states behind"), "--lockstep-sensor-lag 0:\n{log}");
    assert_same(&promised, &in_step, "a run with sensors behind and one with every report of every state");
    // The commands queued ahead took effect: the robots moved.
    for robot in ROBOTS {
        let odom = &promised[&format!("{robot}/odometry/filtered")];
        assert_ne!(odom[0], odom[odom.len() - 1], "{robot}");
    }
}

/// A standby world following the world changes no bit, with drives keeping
/// promises (the controller works every 20th step). The nodes are linked to
/// both worlds, and Zenoh brought the world every drive's answer twice in
/// about half such runs, once through the standby, a step or more late:
/// applied again then, a late copy undid the answer after it, and 1 run in
/// 4 differed. The world now takes each node's answer to a state once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_standby_beside_the_world_changes_no_bit() {
    let alone = run_with(ONE_EACH, Controller::Every20th, &[], None).await;
    let followed = run_with(ONE_EACH, Controller::Every20th, &[], Some(StandbyWorld { kill_world_at: None })).await;
    assert!(followed.standby_log.contains("standing by for the running world"), "{}", followed.standby_log);
    assert_same(&once_each(alone.streams), &once_each(followed.streams), "a run without a standby and one with");
}

/// The world killed with SIGKILL at a random step (`FLOTILLA_KILL_AT` sets
/// it), a standby takes over: it re-runs the steps since its last
/// checkpoint with the drives' answers it kept, which gives the killed
/// world's last state bit for bit (the standby checks it, and says so), and
/// the run goes on to its end with every participant: no state lost, none
/// answered twice, no participant waited for in vain, and every stream the
/// same, bit for bit, as a run's without the kill.
///
/// The controller is a client of the world, as `flotilla run --exec` starts
/// one: its commands go the way its report goes, through the world, so each
/// reaches its drive before the next state. (As a peer connected to both
/// worlds, its commands could go by another way than its report, and one
/// run in three took one a step late, with a standby or without a kill.)
/// Its answer to the state the world was killed at went nowhere; it gives it
/// again through the standby, to which its session connects then.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_world_killed_at_a_random_step_is_taken_over_bit_for_bit_and_the_run_goes_on() {
    killed_and_taken_over_bit_for_bit(Controller::EveryStep).await;
}

/// The same with a controller working every 20th step, so that the drives
/// keep promises: the re-run follows them where the killed world did.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_world_killed_while_drives_keep_promises_is_taken_over_bit_for_bit() {
    killed_and_taken_over_bit_for_bit(Controller::Every20th).await;
}

async fn killed_and_taken_over_bit_for_bit(controller: Controller) {
    let kill_at = std::env::var("FLOTILLA_KILL_AT").ok().and_then(|k| k.parse().ok()).unwrap_or_else(|| {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos();
        600 + u64::from(nanos) % 1000
    });
    eprintln!("the world is killed at step {kill_at} or, if the run is there sooner, at the first state after 3 s");
    let standby = Some(StandbyWorld { kill_world_at: Some(kill_at) });
    let killed = run_with(ONE_EACH, controller, &[], standby).await;
    let at = killed.killed_at.expect("the world was killed");
    let log = &killed.standby_log;
    assert!(
        log.contains("re-run with the drives' answers, giving its last state bit for bit"),
        "the standby re-ran the steps since its checkpoint (killed at step {at}):\n{log}"
    );
    assert!(!log.contains("dropping"), "no participant was dropped:\n{log}");
    let streams = once_each(killed.streams);
    assert_eq!(streams["world/bodies"].len() as u64, STEPS + 1, "every state, once");
    for robot in ROBOTS {
        assert_eq!(streams[&format!("{robot}/odometry/filtered")].len(), 501, "{robot} odometry, at 50 Hz");
        assert_eq!(streams[&format!("{robot}/scan")].len(), 101, "{robot} scans, at 10 Hz");
    }
    let uncrashed = once_each(run_with(ONE_EACH, controller, &[], None).await.streams);
    assert_same(&uncrashed, &streams, &format!("a run without the kill and one killed at step {at}"));
}

/// `streams` with each message repeated at once counted once: a peer
/// connected to two worlds was seen to be given the first messages twice.
/// Every odometry message and scan differs from the one before (its
/// stamp), so their counts stay exact.
fn once_each(mut streams: Streams) -> Streams {
    for stream in streams.values_mut() {
        stream.dedup();
    }
    streams
}
