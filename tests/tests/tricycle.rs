//! A tricycle (Flatland's TricycleDrive) in the room, driven over Zenoh:
//! `cmd_vel`'s `linear.x` is the front wheel's speed and `angular.z` its
//! steering angle. `flotilla-drive` drives it and `flotilla-odom` publishes
//! its odometry, as for a diff drive.

mod common;

use std::time::Duration;

use common::{stamp_s, Sim};
use flotilla_messages::geometry_msgs::Twist;
use flotilla_messages::nav_msgs::Odometry;

const T: Duration = Duration::from_secs(20);

/// The tricycle model's wheelbase, m (configs/tests/tricycle).
const WHEELBASE_M: f64 = 0.83;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_front_wheel_steers_and_the_body_turns_as_a_bicycle() {
    let world = common::config("tests/tricycle/world.yaml");
    let sim = Sim::start("tricycle", &world, &["flotilla-drive", "flotilla-odom"], &[]).await;
    let mut truth = sim.subscribe::<Odometry>("/cleaner/odometry/ground_truth").await;
    let mut odometry = sim.subscribe::<Odometry>("/cleaner/odometry/filtered").await;

    // 0.5 m/s at the front wheel, steered 0.3 rad to the left, at 20 Hz as
    // a controller would send it.
    let (speed, steer) = (0.5, 0.3);
    let (session, key) = (sim.session.clone(), sim.keys.ros("/cleaner/cmd_vel"));
    let commanding = tokio::spawn(async move {
        let mut twist = Twist::default();
        (twist.linear.x, twist.angular.z) = (speed, steer);
        loop {
            let _ = session.put(&key, flotilla_messages::encode(&twist)).await;
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    });

    // Once the wheel has reached its speed (1 m/s²) and angle (1 rad/s):
    // the front wheel, at the body's origin, rolls at 0.5 m/s, and the body
    // turns at v·sin δ / wheelbase.
    let omega = speed * steer.sin() / WHEELBASE_M;
    let settled = |o: &Odometry| {
        let t = &o.twist.twist;
        (t.angular.z - omega).abs() < 1e-4 && (t.linear.x.hypot(t.linear.y) - speed).abs() < 1e-4
    };
    let a = truth.until(T, settled).await;
    assert_eq!(a.header.frame_id, "map");
    assert_eq!(a.child_frame_id, "cleaner_base");
    let measured = common::yaw_rate_from(&mut truth, &a, 2.0).await;
    commanding.abort();
    assert!((measured - omega).abs() < 1e-3 * omega, "yaw rate {measured} rad/s, expected {omega}");

    // Odometry at its 50 Hz, in the odom frame (from the messages arriving
    // now: the first ones may have gone out before the node saw this
    // subscriber).
    odometry.clear();
    let first = odometry.next(T).await;
    let second = odometry.next(T).await;
    assert_eq!(first.header.frame_id, "odom");
    let period = stamp_s(&second) - stamp_s(&first);
    assert!((period - 0.02).abs() < 1e-6, "50 Hz: {} then {} s", stamp_s(&first), stamp_s(&second));
}
