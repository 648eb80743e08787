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
//! one with `--wait-on-drives` give the same streams.

mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use flotilla_messages::geometry_msgs::TwistStamped;
use flotilla_messages::std_msgs::Header;
use flotilla_node_kit::lockstep::LockstepReporter;
use flotilla_wire::codec::decode;
use flotilla_wire::control::ControlRequest;
use flotilla_wire::world_to_nodes::WorldState;
use flotilla_wire::Keys;

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

/// Every message received, per key, in arrival order (one publisher per key).
type Streams = BTreeMap<String, Vec<Vec<u8>>>;

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

/// The streams of a run, and the world's log.
async fn run(layout: &[&[&str]], controller: Controller, world_args: &[&str]) -> (Streams, String) {
    let sim = common::unique_sim("determinism");
    let endpoint = format!("tcp/127.0.0.1:{}", common::free_port());
    let logs = common::log_dir(&sim);
    let world = common::config("tests/determinism/world.yaml");
    let mut args = vec![world.as_str(), "--sim", &sim, "--listen", &endpoint, "--start-paused"];
    args.extend_from_slice(world_args);
    let mut children =
        common::Processes(vec![common::spawn(&common::bin("flotilla-world"), &args, &logs.join("world.log"))]);
    let session = common::connect(&endpoint).await;
    let keys = Keys::new(&sim);
    flotilla_node_kit::client::wait_for_description(&session, &keys, Duration::from_secs(30)).await.unwrap();

    // Record every odometry and scan message.
    let streams = Arc::new(Mutex::new(Streams::new()));
    let mut recorders = Vec::new();
    for key in [
        "*/odometry/filtered",
        "*/scan",
        "*/gps/fix",
        "*/imu/filtered",
        "*/sonar/*",
        "*/collisions",
        "*/bool_sensor",
        "*/battery_state",
        "door_states",
    ] {
        let streams = streams.clone();
        recorders.push(
            session
                .declare_subscriber(key)
                .callback(move |s| {
                    let mut m = streams.lock().unwrap();
                    m.entry(s.key_expr().to_string()).or_default().push(s.payload().to_bytes().into_owned());
                })
                .await
                .unwrap(),
        );
    }

    // Nodes start only now, so the recorder cannot miss their first outputs.
    for (i, node) in layout.iter().enumerate() {
        let mut args = vec!["--sim", sim.as_str(), "--connect", endpoint.as_str()];
        args.extend_from_slice(&node[1..]);
        children.0.push(common::spawn(&common::bin(node[0]), &args, &logs.join(format!("{i}-{}.log", node[0]))));
    }

    // The scripted controller takes part in the barrier like any external program.
    let reporter = LockstepReporter::join(&session, &keys, "controller").await.unwrap();
    let (tx, mut states) = tokio::sync::mpsc::unbounded_channel();
    let _state_sub = session
        .declare_subscriber(keys.world_state())
        .callback(move |s| {
            let _ = tx.send(decode::<WorldState>(&s.payload().to_bytes()).unwrap());
        })
        .await
        .unwrap();

    // Step once every participant is in.
    let expected = layout.len() + 1;
    common::wait_for_participants(&session, &keys, expected, &logs).await;
    flotilla_node_kit::client::call_control(
        &session,
        &keys,
        "resume",
        &ControlRequest::Resume,
        Duration::from_secs(10),
    )
    .await
    .unwrap();

    let mut last = None;
    loop {
        let state = tokio::time::timeout(Duration::from_secs(30), states.recv())
            .await
            .unwrap_or_else(|_| panic!("the world stalled after step {last:?}; logs in {}", logs.display()))
            .unwrap();
        if last == Some(state.step) {
            continue;
        }
        last = Some(state.step);
        // every body's pose, the crowd's people included
        streams
            .lock()
            .unwrap()
            .entry("world/bodies".into())
            .or_default()
            .push(format!("{:?}", state.bodies).into_bytes());
        if state.step >= STEPS {
            break; // no report: the world waits here
        }
        if state.step.is_multiple_of(20) {
            for (r, robot) in ROBOTS.iter().enumerate() {
                let (v, w) = script(r, state.step);
                let ahead = if controller == Controller::Every20th { 7 * r as u64 } else { 0 };
                let stamp = flotilla_wire::time::SimTime::at_step(state.step + ahead, state.step_ns);
                let mut cmd = TwistStamped {
                    header: Header { stamp: stamp.to_ros(), frame_id: String::new() },
                    ..Default::default()
                };
                cmd.twist.linear.x = v;
                cmd.twist.angular.z = w;
                session.put(format!("{robot}/cmd_vel"), flotilla_messages::encode(&cmd)).await.unwrap();
            }
        }
        match controller {
            Controller::EveryStep => reporter.done(state.step, true).await,
            Controller::Every20th if state.step.is_multiple_of(20) => reporter.done(state.step + 19, true).await,
            Controller::Every20th => {}
        }
    }
    // Outputs for every step up to STEPS are published before their nodes
    // report; give the last ones time to arrive.
    tokio::time::sleep(Duration::from_millis(1000)).await;
    drop(children);
    let result = streams.lock().unwrap().clone();
    (result, std::fs::read_to_string(logs.join("world.log")).unwrap_or_default())
}

/// Panics at the first message that differs between two runs.
fn assert_same(a: &Streams, b: &Streams, what: &str) {
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (key, stream) in a {
        let other = &b[key];
        assert_eq!(stream.len(), other.len(), "{key}: message count");
        if let Some(i) = stream.iter().zip(other).position(|(x, y)| x != y) {
            panic!("{key}: message {i} differs between {what}");
        }
    }
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
    let (waited, log) = run(ONE_EACH, Controller::Every20th, &["--wait-on-drives"]).await;
    assert!(!log.contains("is not waited for"), "--wait-on-drives:\n{log}");
    assert_eq!(promised["robot1/odometry/filtered"].len(), 501);
    assert_same(&promised, &waited, "a run with the drives' promises and one without");
    // The commands queued ahead took effect: the robots moved.
    for robot in ROBOTS {
        let odom = &promised[&format!("{robot}/odometry/filtered")];
        assert_ne!(odom[0], odom[odom.len() - 1], "{robot}");
    }
}
