//! vehicle_dynamics_sim's bicycle model (`VehicleDynamics`) in the room:
//! a command goes through the actuators to a turn of `v·tan δ / L`, and the
//! velocity reached comes back on `twist_actual`.

mod common;

use std::time::Duration;

use common::Sim;
use flotilla_protocol::ros::geometry_msgs::{Twist, TwistStamped};
use flotilla_protocol::ros::nav_msgs::Odometry;
use flotilla_protocol::ros::sensor_msgs::JointState;

const T: Duration = Duration::from_secs(20);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bicycle_reaches_the_commanded_speed_and_turn_through_its_actuators() {
    let world = common::config("tests/vehicle/world.yaml");
    let sim = Sim::start("vehicle", &world, &["flotilla-drive", "flotilla-odom"], &[]).await;
    let mut truth = sim.subscribe::<Odometry>("/car/odometry/ground_truth").await;
    let mut actual = sim.subscribe::<TwistStamped>("/car/twist_actual").await;
    let mut joints = sim.subscribe::<JointState>("/car/joint_states").await;

    let (speed, yaw_rate) = (0.5, 0.4);
    let (session, key) = (sim.session.clone(), sim.keys.ros("/car/cmd_vel"));
    let commanding = tokio::spawn(async move {
        let mut twist = Twist::default();
        (twist.linear.x, twist.angular.z) = (speed, yaw_rate);
        loop {
            let _ = session.put(&key, flotilla_protocol::ros::encode(&twist)).await;
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    });
    // The lagging drive settles within a second or two; the steering angle
    // atan(ω·L/v) gives the commanded turn once it does.
    let settled = truth
        .until(T, |o| {
            let t = &o.twist.twist;
            (t.angular.z - yaw_rate).abs() < 1e-3 && (t.linear.x.hypot(t.linear.y) - speed).abs() < 1e-3
        })
        .await;
    assert_eq!(settled.child_frame_id, "car_base");
    let reached = actual.until(T, |t| (t.twist.linear.x - speed).abs() < 1e-3).await;
    assert_eq!(reached.header.frame_id, "car_base");
    assert!((reached.twist.angular.z - yaw_rate).abs() < 1e-3, "{reached:?}");
    // the steering state: atan(ω·L / v) = atan(0.4 · 0.6 / 0.5)
    let steering = joints.until(T, |j| (j.position[0] - (0.48f64).atan()).abs() < 1e-6).await;
    assert_eq!(steering.name, ["car_steering"]);
    let rate = common::yaw_rate_from(&mut truth, &settled, 1.0).await;
    commanding.abort();
    assert!((rate - yaw_rate).abs() < 0.01 * yaw_rate, "yaw rate {rate} rad/s over 1 s, commanded {yaw_rate}");
}
