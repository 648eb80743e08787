//! Flatland's IMU as a model: a body's orientation, angular velocity and
//! linear acceleration, true and with Gaussian noise.
//!
//! The acceleration is the body's mean acceleration since the previous
//! sample, from the world's states (the change of its velocity over the sim
//! time between them), turned into the body frame, plus gravity's reaction
//! on z: a resting IMU reads +9.80665 m/s² up, as REP 145 says.
//!
//! Where Flotilla differs from Flatland's plugin, which has three slips: it
//! divides the velocity change by `pub_rate` (infinite by default, so every
//! acceleration is infinite) instead of the time between samples; its
//! rotation into the body frame has the sign of one term wrong (y comes out
//! as `sin θ ax + cos θ ay`); and it computes the orientation noise but
//! publishes the true orientation. It also reads gravity as −9.81 m/s².

pub mod node;

use flotilla_messages::geometry_msgs::{Quaternion, Transform, TransformStamped, Vector3};
use flotilla_messages::sensor_msgs::Imu as ImuMessage;
use flotilla_messages::std_msgs::Header;
use flotilla_plugins::imu::ImuConfig;
use flotilla_wire::geometry::Twist2;
use flotilla_wire::names::resolve_frame;
use flotilla_wire::time::SimTime;
use flotilla_wire::update_timer::UpdateTimer;
use rand::SeedableRng;
use rand_distr::{Distribution, Normal};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Standard gravity, m/s² (exact by definition).
pub const STANDARD_GRAVITY_MPS2: f64 = 9.806_65;

/// One IMU.
#[derive(Debug, Clone)]
pub struct Imu {
    config: ImuConfig,
    timer: UpdateTimer,
    rng: Xoshiro256PlusPlus,
    /// Orientation (roll, pitch, yaw), angular velocity (x, y, z), linear
    /// acceleration (x, y, z): nine streams, drawn in that order every
    /// sample whatever their variance, so that one setting does not shift
    /// the others' noise.
    noise: [Normal<f64>; 9],
    /// The sim time (ns) and world-frame velocity of the previous sample.
    previous: Option<(u64, Twist2)>,
    ground_truth: ImuMessage,
    measured: ImuMessage,
}

impl Imu {
    /// An IMU of a model in `namespace`, its noise drawn from `seed`.
    pub fn new(config: ImuConfig, namespace: &str, seed: u64) -> Imu {
        let variances = [config.orientation_noise, config.angular_velocity_noise, config.linear_acceleration_noise];
        let mut noise = [Normal::new(0.0, 0.0).expect("zero is a valid deviation"); 9];
        for (k, variance) in variances.iter().flatten().enumerate() {
            noise[k] = Normal::new(0.0, variance.sqrt()).expect("validated finite and ≥ 0");
        }
        let ground_truth = ImuMessage {
            header: Header { stamp: Default::default(), frame_id: resolve_frame(namespace, &config.imu_frame_id) },
            ..Default::default()
        };
        let measured = ImuMessage {
            orientation_covariance: config.orientation_covariance,
            angular_velocity_covariance: config.angular_velocity_covariance,
            linear_acceleration_covariance: config.linear_acceleration_covariance,
            ..ground_truth.clone()
        };
        Imu {
            timer: UpdateTimer::new(config.pub_rate_hz),
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            noise,
            previous: None,
            ground_truth,
            measured,
            config,
        }
    }

    /// Its parameters.
    pub fn config(&self) -> &ImuConfig {
        &self.config
    }

    /// Whether a sample is due at `now_ns` (and if so, the timer moves on).
    pub fn due(&mut self, now_ns: u64, step_ns: u64) -> bool {
        self.timer.check(now_ns, step_ns)
    }

    /// Steps after `now_ns` until the next sample is due (1: the next step).
    pub fn steps_until_due(&self, now_ns: u64, step_ns: u64) -> u64 {
        self.timer.steps_until_due(now_ns, step_ns)
    }

    /// The sample at `stamp`, the body at heading `yaw_rad` moving at
    /// `twist` (world frame): (ground truth, measured). The first sample's
    /// acceleration is zero (there is no earlier velocity to go by).
    pub fn sample(&mut self, stamp: SimTime, yaw_rad: f64, twist: Twist2) -> (&ImuMessage, &ImuMessage) {
        let [ax, ay] = match self.previous {
            Some((t_ns, v)) if stamp.nanos > t_ns => {
                let dt_s = (stamp.nanos - t_ns) as f64 * 1e-9;
                [(twist.vx_mps - v.vx_mps) / dt_s, (twist.vy_mps - v.vy_mps) / dt_s]
            }
            _ => [0.0, 0.0],
        };
        self.previous = Some((stamp.nanos, twist));
        let (s, c) = yaw_rad.sin_cos();
        let truth = &mut self.ground_truth;
        truth.header.stamp = stamp.to_ros();
        truth.orientation = Quaternion::from_yaw(yaw_rad);
        truth.angular_velocity = Vector3 { x: 0.0, y: 0.0, z: twist.omega_radps };
        let gravity = if self.config.enable_imu_gravity { STANDARD_GRAVITY_MPS2 } else { 0.0 };
        truth.linear_acceleration = Vector3 { x: c * ax + s * ay, y: -s * ax + c * ay, z: gravity };

        let mut e = [0.0; 9];
        for (value, noise) in e.iter_mut().zip(&self.noise) {
            *value = noise.sample(&mut self.rng);
        }
        let measured = &mut self.measured;
        measured.header.stamp = truth.header.stamp;
        measured.orientation = Quaternion::from_rpy(e[0], e[1], yaw_rad + e[2]);
        let (w, a) = (&truth.angular_velocity, &truth.linear_acceleration);
        measured.angular_velocity = Vector3 { x: w.x + e[3], y: w.y + e[4], z: w.z + e[5] };
        measured.linear_acceleration = Vector3 { x: a.x + e[6], y: a.y + e[7], z: a.z + e[8] };
        (&self.ground_truth, &self.measured)
    }

    /// The IMU's mount on its body (body → IMU frame, identity), for `tf_static`.
    pub fn mount_transform(&self, namespace: &str) -> TransformStamped {
        TransformStamped {
            header: Header { stamp: Default::default(), frame_id: resolve_frame(namespace, &self.config.body) },
            child_frame_id: resolve_frame(namespace, &self.config.imu_frame_id),
            transform: Transform { translation: Vector3::default(), rotation: Quaternion::from_yaw(0.0) },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_plugins::PluginContext;
    use std::f64::consts::FRAC_PI_2;
    use std::path::Path;

    fn config(yaml: &str) -> ImuConfig {
        let ctx = PluginContext::single_body(Path::new("m.yaml"), "robot1", "base", &[]);
        ImuConfig::parse(&serde_yaml::from_str(yaml).unwrap(), "imu", &ctx).unwrap()
    }

    fn at(ms: u64) -> SimTime {
        SimTime { nanos: ms * 1_000_000 }
    }

    #[test]
    fn at_rest_it_reads_gravity_up_and_nothing_else() {
        let mut imu = Imu::new(config("{body: base}"), "robot1", 1);
        let still = Twist2::default();
        imu.sample(at(0), 0.3, still);
        let (truth, measured) = imu.sample(at(5), 0.3, still);
        assert_eq!(truth.linear_acceleration, Vector3 { x: 0.0, y: 0.0, z: STANDARD_GRAVITY_MPS2 });
        assert_eq!(truth.orientation, Quaternion::from_yaw(0.3));
        assert_eq!(measured.linear_acceleration, truth.linear_acceleration, "no noise configured");
        assert_eq!(truth.header.frame_id, "robot1_imu");
        let mut weightless = Imu::new(config("{body: base, enable_imu_gravity: false}"), "", 1);
        assert_eq!(weightless.sample(at(0), 0.0, still).0.linear_acceleration.z, 0.0);
    }

    #[test]
    fn acceleration_is_the_velocity_change_over_the_time_between_samples_in_the_body_frame() {
        let mut imu = Imu::new(config("{body: base, enable_imu_gravity: false}"), "", 1);
        // Facing +y (yaw π/2), speeding up along world +y by 0.5 m/s in 100 ms:
        // 5 m/s² forward, i.e. along body x.
        imu.sample(at(1000), FRAC_PI_2, Twist2 { vx_mps: 0.0, vy_mps: 1.0, omega_radps: 0.0 });
        let (truth, _) = imu.sample(at(1100), FRAC_PI_2, Twist2 { vx_mps: 0.0, vy_mps: 1.5, omega_radps: 0.2 });
        let a = truth.linear_acceleration;
        assert!((a.x - 5.0).abs() < 1e-9 && a.y.abs() < 1e-9, "{a:?}");
        assert_eq!(truth.angular_velocity.z, 0.2);
        // Velocity gained along world +x while facing +y: to the body's right, −y.
        let (truth, _) = imu.sample(at(1200), FRAC_PI_2, Twist2 { vx_mps: 1.0, vy_mps: 1.5, omega_radps: 0.2 });
        let a = truth.linear_acceleration;
        assert!(a.x.abs() < 1e-9 && (a.y + 10.0).abs() < 1e-9, "{a:?}");
    }

    #[test]
    fn noise_is_seeded_per_axis_and_the_orientation_noise_is_applied() {
        let noisy = || {
            Imu::new(
                config("{body: base, orientation_noise: [0, 0, 0.01], linear_acceleration_noise: [1, 1, 1]}"),
                "",
                9,
            )
        };
        let (mut a, mut b) = (noisy(), noisy());
        let mut yaw_sq = 0.0;
        for k in 0..2000 {
            let (truth, ma) = a.sample(at(k * 10), 0.0, Twist2::default());
            let truth_z = truth.linear_acceleration.z;
            let ma = ma.clone();
            let mb = b.sample(at(k * 10), 0.0, Twist2::default()).1.clone();
            assert_eq!(ma, mb, "same seed, same stream");
            assert_ne!(ma.linear_acceleration.z, truth_z);
            yaw_sq += (2.0 * ma.orientation.z.atan2(ma.orientation.w)).powi(2);
            assert_eq!(ma.linear_acceleration_covariance[8], 1.0);
        }
        let yaw_std_rad = (yaw_sq / 2000.0).sqrt();
        assert!((yaw_std_rad - 0.1).abs() < 0.01, "yaw noise {yaw_std_rad} rad");
    }
}
