//! ROS 2 sees the simulation through `flotilla run --ros`, as checked by a
//! ROS 2 node that no Flotilla code implements: `tests/ros2/ros2_peer.py`,
//! a DDS participant from the PyPI `cyclonedds` package that announces
//! itself on `ros_discovery_info` as rmw does. It sees clock, tf, the
//! latched tf_static, scan and odometry, drives the robot with cmd_vel, and
//! calls every simulation_interfaces service (and the SimulateSteps action),
//! each as it should work and with the failure codes of bad input.

mod common;

use std::process::{Command, Stdio};

/// CycloneDDS on loopback only, finding its peers by unicast: this machine's
/// `lo` has no multicast and no other interface may be used.
const CYCLONEDDS_URI: &str = "<CycloneDDS><Domain id=\"any\"><General><Interfaces>\
    <NetworkInterface address=\"127.0.0.1\"/></Interfaces><AllowMulticast>false</AllowMulticast></General>\
    <Discovery><ParticipantIndex>auto</ParticipantIndex><MaxAutoParticipantIndex>20</MaxAutoParticipantIndex>\
    <Peers><Peer address=\"127.0.0.1\"/></Peers></Discovery></Domain></CycloneDDS>";

#[tokio::test(flavor = "multi_thread")]
async fn a_ros2_node_drives_sees_and_spawns_through_the_bridge() {
    // A DDS domain of its own, so that parallel runs do not meet.
    let domain = (common::free_port() % 200 + 20).to_string();
    let world = common::config("tests/room/world.yaml");
    let sim = common::Launched::start_with_env(
        "ros2",
        &world,
        &["--ros", "--ros-domain", &domain],
        &[("CYCLONEDDS_URI", CYCLONEDDS_URI), ("ROS_DISTRO", "jazzy")],
    )
    .await;

    let peer = Command::new("python3")
        .arg(common::root().join("tests/ros2/ros2_peer.py"))
        .args(["--domain", &domain, "--timeout", "40"])
        .env("CYCLONEDDS_URI", CYCLONEDDS_URI)
        .stdin(Stdio::null())
        .output()
        .expect("python3 with the cyclonedds package (installed by scripts/ensure-deps.sh)");
    let report = String::from_utf8_lossy(&peer.stdout);
    assert!(
        peer.status.success(),
        "the ROS 2 peer failed:\n{report}\n{}\nlauncher log: {}",
        String::from_utf8_lossy(&peer.stderr),
        sim.log.display()
    );
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
    for check in checks {
        assert!(report.contains(&format!("ok: {check}")), "{check} missing from:\n{report}");
    }
    let status = sim.stop().await;
    assert!(status.success(), "flotilla run --ros stops cleanly: {status:?}");
}

/// rviz2 sees the people: an rclpy node (the ROS 2 Jazzy wheels from PyPI,
/// over Fast DDS, in the venv `scripts/ensure-deps.sh` makes) reads the
/// crowd's `visualization_msgs/MarkerArray` on `/crowd/markers` through the
/// bridge: a cylinder, a velocity arrow and a name per agent, in `map`, and a
/// walker that moves (`tests/ros2/crowd_markers_probe.py`).
#[tokio::test(flavor = "multi_thread")]
async fn rviz2_reads_the_crowd_markers_through_the_bridge() {
    let domain = (common::free_port() % 200 + 20).to_string();
    let world = common::config("tests/crowd/room.world.yaml");
    let sim = common::Launched::start_with_env(
        "ros2-crowd",
        &world,
        &["--ros", "--ros-domain", &domain],
        &[("CYCLONEDDS_URI", CYCLONEDDS_URI), ("ROS_DISTRO", "jazzy")],
    )
    .await;

    let venv = common::root().join(".venv/ros2-jazzy");
    let probe = Command::new(venv.join("bin/python"))
        .arg(common::root().join("tests/ros2/crowd_markers_probe.py"))
        .args(["--timeout", "40"])
        .env("LD_LIBRARY_PATH", venv.join("lib"))
        .env("ROS_DOMAIN_ID", &domain)
        .env("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
        .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        .stdin(Stdio::null())
        .output()
        .expect("rclpy in .venv/ros2-jazzy (made by scripts/ensure-deps.sh)");
    let report = String::from_utf8_lossy(&probe.stdout);
    assert!(
        probe.status.success(),
        "the rclpy probe failed:\n{report}\n{}\nlauncher log: {}",
        String::from_utf8_lossy(&probe.stderr),
        sim.log.display()
    );
    for check in ["a shape, an arrow and a name per agent, in map", "every agent is named", "alice walks"] {
        assert!(report.contains(&format!("ok: {check}")), "{check} missing from:\n{report}");
    }
    let status = sim.stop().await;
    assert!(status.success(), "flotilla run --ros stops cleanly: {status:?}");
}

/// Open-RMF's side of the doors: a DDS participant writing
/// `rmf_door_msgs/DoorRequest` on `/door_requests` and reading
/// `rmf_door_msgs/DoorState` on `/door_states` through the bridge, as the
/// fleet adapter and door supervisor do (`tests/ros2/door_peer.py`).
#[tokio::test(flavor = "multi_thread")]
async fn open_rmf_opens_and_closes_a_door_through_the_bridge() {
    let domain = (common::free_port() % 200 + 20).to_string();
    let world = common::config("tests/doors/world.yaml");
    let sim = common::Launched::start_with_env(
        "ros2-doors",
        &world,
        &["--ros", "--ros-domain", &domain],
        &[("CYCLONEDDS_URI", CYCLONEDDS_URI), ("ROS_DISTRO", "jazzy")],
    )
    .await;
    let peer = Command::new("python3")
        .arg(common::root().join("tests/ros2/door_peer.py"))
        .args(["--domain", &domain, "--timeout", "40"])
        .env("CYCLONEDDS_URI", CYCLONEDDS_URI)
        .stdin(Stdio::null())
        .output()
        .expect("python3 with the cyclonedds package (installed by scripts/ensure-deps.sh)");
    let report = String::from_utf8_lossy(&peer.stdout);
    assert!(
        peer.status.success(),
        "the door peer failed:\n{report}\n{}\nlauncher log: {}",
        String::from_utf8_lossy(&peer.stderr),
        sim.log.display()
    );
    for check in ["both doors report closed", "front opens when asked", "front closes when asked"] {
        assert!(report.contains(&format!("ok: {check}")), "{check} missing from:\n{report}");
    }
    let status = sim.stop().await;
    assert!(status.success(), "flotilla run --ros stops cleanly: {status:?}");
}
