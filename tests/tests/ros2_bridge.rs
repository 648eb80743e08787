//! ROS 2 sees the simulation through `flotilla run --ros`, as checked by
//! ROS 2 nodes that no Flotilla code implements:
//!
//! - `tests/ros2/ros2_peer.py`, a DDS participant from the PyPI `cyclonedds`
//!   package that announces itself on `ros_discovery_info` as rmw does. It
//!   sees clock, tf, the latched tf_static, scan and odometry, drives the
//!   robot with cmd_vel, and calls every simulation_interfaces service (and
//!   the SimulateSteps action), each as it should work and with the failure
//!   codes of bad input;
//! - `tests/ros2/crowd_markers_probe.py`, in rclpy (the ROS 2 Jazzy wheels,
//!   Fast DDS), reading the crowd's markers as rviz2 would;
//! - `tests/ros2/people_peer.py`, a people-aware node reading the crowd on
//!   `/people` (`people_msgs`, from `cyclonedds` with the IDL written out);
//! - `tests/ros2/door_peer.py`, Open-RMF's side of the doors.

mod common;

use std::process::{Command, Stdio};

/// CycloneDDS on loopback only, finding its peers by unicast: this machine's
/// `lo` has no multicast and no other interface may be used.
const CYCLONEDDS_URI: &str = "<CycloneDDS><Domain id=\"any\"><General><Interfaces>\
    <NetworkInterface address=\"127.0.0.1\"/></Interfaces><AllowMulticast>false</AllowMulticast></General>\
    <Discovery><ParticipantIndex>auto</ParticipantIndex><MaxAutoParticipantIndex>20</MaxAutoParticipantIndex>\
    <Peers><Peer address=\"127.0.0.1\"/></Peers></Discovery></Domain></CycloneDDS>";

/// Runs `world` with `--ros` on a DDS domain of its own, then the ROS 2
/// peer `make_peer(domain)` makes; asserts the peer succeeds and reports
/// `ok: <check>` for every one of `checks`, and that the launcher stops
/// cleanly.
async fn peer_passes(test: &str, world: &str, make_peer: impl FnOnce(&str) -> Command, checks: &[&str]) {
    // A DDS domain of its own, so that parallel runs do not meet.
    let domain = (common::free_port() % 200 + 20).to_string();
    let sim = common::Launched::start_with_env(
        test,
        &common::config(world),
        &["--ros", "--ros-domain", &domain],
        &[("CYCLONEDDS_URI", CYCLONEDDS_URI), ("ROS_DISTRO", "jazzy")],
    )
    .await;
    let mut peer = make_peer(&domain);
    let run = peer.stdin(Stdio::null()).output().unwrap_or_else(|e| {
        panic!("cannot start the peer {peer:?} (scripts/ensure-deps.sh installs what it needs): {e}")
    });
    let report = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "the peer failed:\n{report}\n{}\nlauncher log: {}",
        String::from_utf8_lossy(&run.stderr),
        sim.log.display()
    );
    for check in checks {
        assert!(report.contains(&format!("ok: {check}")), "{check} missing from:\n{report}");
    }
    let status = sim.stop().await;
    assert!(status.success(), "flotilla run --ros stops cleanly: {status:?}");
}

/// A peer speaking DDS through the PyPI `cyclonedds` package.
fn cyclonedds_peer(script: &str, domain: &str) -> Command {
    let mut peer = Command::new("python3");
    peer.arg(common::root().join("tests/ros2").join(script))
        .args(["--domain", domain, "--timeout", "40"])
        .env("CYCLONEDDS_URI", CYCLONEDDS_URI);
    peer
}

/// A peer in rclpy: the ROS 2 Jazzy wheels in `.venv/ros2-jazzy`, over
/// Fast DDS.
fn rclpy_peer(script: &str, domain: &str) -> Command {
    let venv = common::root().join(".venv/ros2-jazzy");
    let mut peer = Command::new(venv.join("bin/python"));
    peer.arg(common::root().join("tests/ros2").join(script))
        .args(["--timeout", "40"])
        .env("LD_LIBRARY_PATH", venv.join("lib"))
        .env("ROS_DOMAIN_ID", domain)
        .env("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
        .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST");
    peer
}

#[tokio::test(flavor = "multi_thread")]
async fn a_ros2_node_drives_sees_and_spawns_through_the_bridge() {
    let checks = [
        "clock advances",
        "tf_static is latched",
        "cmd_vel drives the robot",
        "get_entities lists it",
        "simulate_steps ends it while playing",
        "get_simulator_features lists what works",
        "spawn_entities: all or none, ENTITIES_SPAWN_FAILED",
        "set_entity_state: an unknown frame is INVALID_POSE",
        "get_named_pose_bounds: NOT_FOUND",
        "get_named_poses",
        "set_simulation_state: ALREADY_IN_TARGET_STATE",
        "reset_simulation: time alone is FEATURE_UNSUPPORTED",
        "get_current_world: NO_WORLD_LOADED",
        "the loaded world has its robot",
    ];
    peer_passes("ros2", "tests/room/world.yaml", |domain| cyclonedds_peer("ros2_peer.py", domain), &checks).await;
}

/// rviz2 sees the people: an rclpy node reads the crowd's
/// `visualization_msgs/MarkerArray` on `/crowd/markers` through the bridge:
/// a shape, a velocity arrow and a name per agent, in `map`, and a walker
/// that moves (`tests/ros2/crowd_markers_probe.py`).
#[tokio::test(flavor = "multi_thread")]
async fn rviz2_reads_the_crowd_markers_through_the_bridge() {
    let checks = ["a shape, an arrow and a name per agent, in map", "every agent is named", "alice walks"];
    let probe = |domain: &str| rclpy_peer("crowd_markers_probe.py", domain);
    peer_passes("ros2-crowd", "tests/crowd/room.world.yaml", probe, &checks).await;
}

/// A people-aware node (Nav2's social layers read the same) sees the crowd:
/// `people_msgs/People` on `/people` through the bridge, everyone named and
/// tagged, moving as the world moves them (`tests/ros2/people_peer.py`).
#[tokio::test(flavor = "multi_thread")]
async fn a_people_aware_node_reads_the_crowd_through_the_bridge() {
    let checks = ["everyone is listed in map", "the trolley runs its line", "alice walks"];
    let peer = |domain: &str| cyclonedds_peer("people_peer.py", domain);
    peer_passes("ros2-people", "tests/crowd/room.world.yaml", peer, &checks).await;
}

/// Open-RMF's side of the doors: a DDS participant writing
/// `rmf_door_msgs/DoorRequest` on `/door_requests` and reading
/// `rmf_door_msgs/DoorState` on `/door_states` through the bridge, as the
/// fleet adapter and door supervisor do (`tests/ros2/door_peer.py`).
#[tokio::test(flavor = "multi_thread")]
async fn open_rmf_opens_and_closes_a_door_through_the_bridge() {
    let checks = ["both doors report closed", "front opens when asked", "front closes when asked"];
    peer_passes("ros2-doors", "tests/doors/world.yaml", |domain| cyclonedds_peer("door_peer.py", domain), &checks)
        .await;
}
