//! Determinism of the building and of batteries: a lift ride (called to
//! floor 1, a robot drives in, sent to floor 2, the robot drives out there)
//! and a battery running empty (the robot waiting on floor 2 drives in
//! circles until it stops), run in lockstep once with the drive in one
//! process and once in two shards, give bit-identical lift and door states,
//! battery states, odometry and every body's pose.

mod common;

use common::lockstep::{assert_same, Outcome, Run, Script};
use flotilla_messages::geometry_msgs::TwistStamped;
use flotilla_messages::rmf_door_msgs::DoorState;
use flotilla_messages::rmf_lift_msgs::{LiftRequest, LiftState};
use flotilla_messages::sensor_msgs::BatteryState;
use flotilla_messages::std_msgs::Header;
use flotilla_wire::geometry::Pose2;
use flotilla_wire::world_to_nodes::{BodyId, WorldState};

/// 17 s of sim time at 5 ms.
const STEPS: u64 = 3400;
/// The cabin's door opens in 1 s: the rider starts at 1.5 s.
const DRIVE_IN_AT: u64 = 300;
/// From the request for floor 2 until the rider drives out: the door
/// closes (1 s), the lift travels (3 s), the door opens (1 s), and 0.5 s.
const RIDE_STEPS: u64 = 1100;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Phase {
    /// The lift is called to floor 1; the rider drives in from DRIVE_IN_AT.
    DrivingIn,
    /// Sent to floor 2 at this step.
    Riding {
        since: u64,
    },
    /// Driving out on floor 2.
    DrivingOut,
    Done,
}

/// The controller: decides on world states only, so both runs decide alike.
struct LiftRide {
    rider: BodyId,
    waiting: BodyId,
    phase: Phase,
    /// The waiting robot's pose at each state.
    waiting_poses: Vec<Pose2>,
}

/// A request for the lift to go to `floor`, taking effect at the state
/// after `state` (stamped, as a command is: the building's node may be
/// states behind when it arrives).
fn request(floor: &str, state: &WorldState) -> (String, Vec<u8>) {
    let request = LiftRequest {
        lift_name: "lift".into(),
        request_time: state.time.to_ros(),
        session_id: "fleet".into(),
        request_type: LiftRequest::REQUEST_AGV_MODE,
        destination_floor: floor.into(),
        door_state: LiftRequest::DOOR_OPEN,
    };
    ("lift_requests".into(), flotilla_messages::encode(&request))
}

/// A command for `robot` taking effect at the state after `state`.
fn drive(robot: &str, state: &WorldState, v_mps: f64, w_radps: f64) -> (String, Vec<u8>) {
    let stamp = state.time.to_ros();
    let mut cmd = TwistStamped { header: Header { stamp, frame_id: String::new() }, ..Default::default() };
    cmd.twist.linear.x = v_mps;
    cmd.twist.angular.z = w_radps;
    (format!("{robot}/cmd_vel"), flotilla_messages::encode(&cmd))
}

impl Script for LiftRide {
    fn at(&mut self, state: &WorldState) -> Vec<(String, Vec<u8>)> {
        let pose = |id: BodyId| state.bodies.iter().find(|b| b.id == id).expect("in every state").pose;
        let (rider, k) = (pose(self.rider), state.step);
        self.waiting_poses.push(pose(self.waiting));
        let mut out = Vec::new();
        if k.is_multiple_of(20) {
            out.push(drive("waiting", state, 0.3, 0.6)); // circles of 0.5 m about (5, 5.5)
        }
        match self.phase {
            Phase::DrivingIn if k == 0 => out.push(request("L1", state)),
            Phase::DrivingIn if rider.x_m >= 7.9 => {
                out.push(drive("rider", state, 0.0, 0.0));
                out.push(request("L2", state));
                self.phase = Phase::Riding { since: k };
            }
            Phase::DrivingIn if k >= DRIVE_IN_AT && k.is_multiple_of(20) => out.push(drive("rider", state, 0.5, 0.0)),
            Phase::Riding { since } if k >= since + RIDE_STEPS => self.phase = Phase::DrivingOut,
            Phase::DrivingOut if rider.x_m <= 6.5 => {
                out.push(drive("rider", state, 0.0, 0.0));
                self.phase = Phase::Done;
            }
            Phase::DrivingOut if k.is_multiple_of(20) => out.push(drive("rider", state, -0.5, 0.0)),
            _ => {}
        }
        out
    }
}

async fn ride(layout: &[&[&str]]) -> (Outcome, LiftRide) {
    let world = common::config("tests/lift/world.yaml");
    let loaded = flotilla_world_file::load_world(world.as_ref()).unwrap().initial_description().unwrap();
    let body_of = |model: &str| loaded.model(model).unwrap().bodies[0].id;
    let mut script = LiftRide {
        rider: body_of("rider"),
        waiting: body_of("waiting"),
        phase: Phase::DrivingIn,
        waiting_poses: vec![],
    };
    let record = ["lift_states", "door_states", "*/battery_state", "*/odometry/*"];
    let world_args = ["--clock", "lockstep"];
    let run = Run {
        label: "lockstep-building",
        world: &world,
        layout,
        record: &record,
        world_args: &world_args,
        steps: STEPS,
        standby: None,
    };
    (run.go(&mut script).await, script)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lift_ride_and_an_empty_battery_repeat_bit_for_bit_across_process_layouts() {
    let (a, script) = ride(&[&["flotilla-drive"], &["flotilla-odom"], &["flotilla-building"]]).await;
    let sharded: &[&[&str]] = &[
        &["flotilla-drive", "--shard", "0/2"],
        &["flotilla-drive", "--shard", "1/2"],
        &["flotilla-odom"],
        &["flotilla-building"],
    ];
    let (b, _) = ride(sharded).await;

    let keys: Vec<&str> = a.streams.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "door_states",
            "lift_states",
            "rider/odometry/filtered",
            "rider/odometry/ground_truth",
            "waiting/battery_state",
            "waiting/odometry/filtered",
            "waiting/odometry/ground_truth",
            "world/bodies"
        ]
    );

    // The ride happened: the rider is on floor 2, out of the cabin.
    assert_eq!(script.phase, Phase::Done, "the rider drove in, rode and drove out");
    let map_of = |model: &str| a.description.model(model).unwrap().map.clone();
    assert_eq!(map_of("rider"), "floor-2");
    let lift: Vec<LiftState> = a.streams["lift_states"].iter().map(|m| flotilla_messages::decode(m).unwrap()).collect();
    assert!(lift.iter().any(|s| s.motion_state == LiftState::MOTION_UP), "it went up");
    let last = lift.last().unwrap();
    assert_eq!((last.current_floor.as_str(), last.door_state), ("L2", LiftState::DOOR_OPEN));

    // The waiting robot drove until its battery ran empty, then stood.
    let battery: Vec<BatteryState> =
        a.streams["waiting/battery_state"].iter().map(|m| flotilla_messages::decode(m).unwrap()).collect();
    let empty_at = battery.iter().position(|s| s.percentage == 0.0).expect("the battery ran empty");
    assert!(battery[0].percentage > 0.9, "full at the start: {}", battery[0].percentage);
    let empty_s = empty_at as f64 * 0.1; // 10 Hz
    assert!((8.0..13.0).contains(&empty_s), "empty after {empty_s} s, planned about 10 s");
    let poses = &script.waiting_poses;
    let moved = (poses[0].x_m - poses[1000].x_m).hypot(poses[0].y_m - poses[1000].y_m);
    assert!(moved > 0.1, "it drove: {moved} m in 5 s");
    let tail = &poses[poses.len() - 200..];
    assert!(tail.iter().all(|p| p == &tail[0]), "stopped for the last 1 s: {:?} .. {:?}", tail[0], tail[199]);

    // Readable first: each door's and lift's states as (sim time, name, mode).
    assert_eq!(door_states(&a), door_states(&b), "door states, the drive in one process and in two shards");
    assert_eq!(lift_states(&a), lift_states(&b), "lift states, the drive in one process and in two shards");
    assert_same(&a.streams, &b.streams, "the drive in one process and in two shards");
}

/// Every `DoorState` received: (sim time ns, door, mode).
fn door_states(run: &Outcome) -> Vec<(u64, String, u32)> {
    let decoded = run.streams["door_states"].iter().map(|m| flotilla_messages::decode::<DoorState>(m).unwrap());
    decoded.map(|s| (nanos(s.door_time), s.door_name, s.current_mode.value)).collect()
}

/// Every `LiftState` received: (sim time ns, floor, door, motion).
fn lift_states(run: &Outcome) -> Vec<(u64, String, u8, u8)> {
    let decoded = run.streams["lift_states"].iter().map(|m| flotilla_messages::decode::<LiftState>(m).unwrap());
    decoded.map(|s| (nanos(s.lift_time), s.current_floor, s.door_state, s.motion_state)).collect()
}

fn nanos(t: flotilla_messages::builtin_interfaces::Time) -> u64 {
    t.sec as u64 * 1_000_000_000 + u64::from(t.nanosec)
}
