//! vehicle_dynamics_sim's models (`VehicleDynamics`) in the room: a
//! bicycle's command goes through the actuators to a turn of `v·tan δ / L`
//! and the velocity reached comes back on `twist_actual`; an omnidirectional
//! base moves sideways; a differential base keeps its turn when a wheel
//! saturates.

mod common;

use std::time::Duration;

use common::Sim;
use flotilla_messages::geometry_msgs::{Twist, TwistStamped};
use flotilla_messages::nav_msgs::Odometry;
use flotilla_messages::sensor_msgs::JointState;

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
            let _ = session.put(&key, flotilla_messages::encode(&twist)).await;
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

/// Keeps sending `twist` on `ros_name` at 20 Hz until aborted.
fn keep_sending(sim: &Sim, ros_name: &str, twist: Twist) -> tokio::task::JoinHandle<()> {
    let (session, key) = (sim.session.clone(), sim.keys.ros(ros_name));
    tokio::spawn(async move {
        loop {
            let _ = session.put(&key, flotilla_messages::encode(&twist)).await;
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_omni_base_moves_sideways_and_a_differential_one_keeps_its_turn() {
    let world = common::config("tests/vehicle/world.yaml");
    let sim = Sim::start("vehicle_kinds", &world, &["flotilla-drive", "flotilla-odom"], &[]).await;
    let mut omni = sim.subscribe::<TwistStamped>("/omni/twist_actual").await;
    let mut tank = sim.subscribe::<TwistStamped>("/tank/twist_actual").await;
    let mut tank_truth = sim.subscribe::<Odometry>("/tank/odometry/ground_truth").await;

    // Sideways at 0.4 m/s: only an omnidirectional base can.
    let mut sideways = Twist::default();
    sideways.linear.y = 0.4;
    let omni_cmd = keep_sending(&sim, "/omni/cmd_vel", sideways);
    let reached = omni.until(T, |t| (t.twist.linear.y - 0.4).abs() < 1e-3).await;
    assert!(reached.twist.linear.x.abs() < 1e-9 && reached.twist.angular.z.abs() < 1e-9, "{reached:?}");

    // 1 m/s and 2 rad/s: the turn needs ±0.5 m/s at the wheels, which leaves
    // 0.3 m/s for going forward within their 0.8 m/s.
    let mut turning = Twist::default();
    (turning.linear.x, turning.angular.z) = (1.0, 2.0);
    let tank_cmd = keep_sending(&sim, "/tank/cmd_vel", turning);
    let reached = tank.until(T, |t| (t.twist.angular.z - 2.0).abs() < 1e-3).await;
    assert!((reached.twist.linear.x - 0.3).abs() < 1e-3, "{reached:?}");
    let truth = tank_truth.until(T, |o| (o.twist.twist.angular.z - 2.0).abs() < 1e-3).await;
    assert!((truth.twist.twist.linear.x.hypot(truth.twist.twist.linear.y) - 0.3).abs() < 1e-3, "{truth:?}");
    omni_cmd.abort();
    tank_cmd.abort();
}
