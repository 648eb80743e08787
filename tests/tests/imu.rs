//! `flotilla-imu` serves Flatland's Imu: a robot at rest reads gravity up
//! (REP 145), and driven forward with its acceleration limited to
//! 0.5 m/s² it reads 0.5 m/s² along its own x axis while it speeds up, then
//! nothing once at speed, whatever its heading in the world.

mod common;

use std::time::Duration;

use common::Sim;
use flotilla_messages::geometry_msgs::Twist;
use flotilla_messages::sensor_msgs::Imu;
use flotilla_messages::tf2_msgs::TFMessage;

const T: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_imu_reads_gravity_at_rest_and_the_drive_s_acceleration_limit() {
    let world = common::config("tests/imu/world.yaml");
    // At half speed: a step every 10 ms of wall time, so that a busy
    // machine's late actuation (which reads as a step without acceleration)
    // stays rare; at full speed one run in several read too few samples at
    // the limit.
    let mut sim = Sim::start("imu", &world, &["flotilla-drive"], &["--rate", "0.5"]).await;
    let mut latched = sim.subscribe::<TFMessage>("/tf_static").await;
    let mut samples = sim.subscribe::<Imu>("/robot/imu/ground_truth").await;
    let mut measured = sim.subscribe::<Imu>("/robot/imu/filtered").await;
    sim.spawn_node("flotilla-imu", "flotilla-imu", &[]);

    let rest = samples.until(T, |s| s.header.stamp.sec >= 1).await;
    assert_eq!(rest.header.frame_id, "robot_imu");
    let a = rest.linear_acceleration;
    assert!(a.x.abs() < 1e-9 && a.y.abs() < 1e-9 && (a.z - 9.80665).abs() < 1e-12, "at rest: {a:?}");
    // The robot faces 1 rad in the world: the orientation says so.
    let yaw = 2.0 * rest.orientation.z.atan2(rest.orientation.w);
    assert!((yaw - 1.0).abs() < 1e-9, "yaw {yaw}");
    assert_eq!(measured.next(T).await.linear_acceleration.z, 9.80665, "no noise configured");

    // Forward at 0.4 m/s: 0.8 s of 0.5 m/s², then steady.
    let mut forward = Twist::default();
    forward.linear.x = 0.4;
    samples.clear();
    let (mut speeding_up, mut steady) = (0, 0);
    let deadline = tokio::time::Instant::now() + T;
    while steady < 10 {
        assert!(tokio::time::Instant::now() < deadline, "{speeding_up} samples speeding up, {steady} steady");
        sim.publish("/robot/cmd_vel", &forward).await;
        while let Some(sample) = samples.try_next() {
            let a = sample.linear_acceleration;
            assert!(a.y.abs() < 1e-6, "no sideways acceleration driving straight: {a:?}");
            if (a.x - 0.5).abs() < 1e-6 {
                speeding_up += 1;
            } else if a.x.abs() < 1e-6 && speeding_up > 0 {
                steady += 1;
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // 0.8 s at 50 Hz: 40 samples, less those that straddle the start and
    // the end, and any where a realtime actuation came a step late.
    assert!(speeding_up >= 25, "{speeding_up} samples at 0.5 m/s²");

    let mount = latched.next(T).await;
    let t = &mount.transforms[0];
    assert_eq!((t.header.frame_id.as_str(), t.child_frame_id.as_str()), ("robot_base", "robot_imu"));
}
