//! A drive plugin's odometry side (DiffDrive's, TricycleDrive's) as a
//! model: ground truth from the world state, noisy odometry and an
//! encoder-like twist, as Flatland publishes them.

mod error;
mod localization;
pub mod node;

pub use error::OdomError;
pub use localization::{Estimates, Localization};

use flotilla_protocol::geometry::{Pose2, Twist2};
use flotilla_protocol::names::resolve_frame;
use flotilla_protocol::plugins::odometry::OdometryConfig;
use flotilla_protocol::ros::geometry_msgs::{
    Point, Pose, PoseWithCovariance, Quaternion, Transform, TransformStamped, Twist, TwistWithCovariance,
    TwistWithCovarianceStamped, Vector3,
};
use flotilla_protocol::ros::nav_msgs::Odometry;
use flotilla_protocol::ros::std_msgs::Header;
use flotilla_protocol::ros::Covariance;
use flotilla_protocol::time::SimTime;
use flotilla_protocol::update_timer::UpdateTimer;
use rand::SeedableRng;
use rand_distr::{Distribution, Normal};
use rand_xoshiro::Xoshiro256PlusPlus;

/// The messages of one odometry update.
#[derive(Debug, Clone, PartialEq)]
pub struct OdomOutput {
    /// Noise-free odometry in the ground-truth frame.
    pub ground_truth: Odometry,
    /// Noisy odometry in the odom frame.
    pub odometry: Odometry,
    /// Noisy body-frame velocity (encoders).
    pub twist: TwistWithCovarianceStamped,
    /// odom → body, from the noisy odometry.
    pub transform: TransformStamped,
    /// map → odom, the localizer's correction, with vehicle_dynamics_sim's
    /// localization noise on (else map → odom is fixed).
    pub map_to_odom: Option<TransformStamped>,
}

/// One drive instance's odometry.
pub struct Odom {
    config: OdometryConfig,
    timer: UpdateTimer,
    rng: Xoshiro256PlusPlus,
    /// Noise on x, y, yaw, vx, vy, ω (standard deviations from the variances).
    noise: [Normal<f64>; 6],
    body_frame: String,
    /// AMRISim's odometry error: the estimate the odometry reports.
    error: OdomError,
    /// vehicle_dynamics_sim's localization noise, when on.
    localization: Option<Localization>,
}

impl Odom {
    /// Odometry for a validated drive entry of a model in `namespace`.
    pub fn new(config: OdometryConfig, namespace: &str, seed: u64) -> Odom {
        let variances = [
            config.odom_pose_noise[0],
            config.odom_pose_noise[1],
            config.odom_pose_noise[2],
            config.odom_twist_noise[0],
            config.odom_twist_noise[1],
            config.odom_twist_noise[2],
        ];
        let noise = variances.map(|v| Normal::new(0.0, v.sqrt()).expect("validated finite and ≥ 0"));
        Odom {
            timer: UpdateTimer::new(config.pub_rate_hz),
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            noise,
            body_frame: resolve_frame(namespace, &config.body),
            error: OdomError::new(config.odom_error, seed),
            localization: config.localization.map(|l| Localization::new(l, seed)),
            config,
        }
    }

    /// The odometry error factors in use (x, y per metre; heading per radian).
    pub fn error_factors(&self) -> [f64; 3] {
        self.error.factors()
    }

    /// The configuration.
    pub fn config(&self) -> &OdometryConfig {
        &self.config
    }

    /// Steps after the one at `now_ns` until the next update is due.
    pub fn steps_until_due(&self, now_ns: u64, step_ns: u64) -> u64 {
        self.timer.steps_until_due(now_ns, step_ns)
    }

    /// Whether an update is due at this step (marks it taken).
    pub fn due(&mut self, now_ns: u64, step_ns: u64) -> bool {
        self.timer.check(now_ns, step_ns)
    }

    fn draw(&mut self, i: usize) -> f64 {
        self.noise[i].sample(&mut self.rng)
    }

    /// The messages for a body at `pose` moving at `twist` (world frame).
    pub fn update(&mut self, stamp: SimTime, pose: Pose2, twist: Twist2) -> OdomOutput {
        let (s, c) = pose.theta_rad.sin_cos();
        // body-frame velocity of the origin
        let local = [c * twist.vx_mps + s * twist.vy_mps, -s * twist.vx_mps + c * twist.vy_mps];
        let reported = if self.config.twist_in_local_frame { local } else { [twist.vx_mps, twist.vy_mps] };
        let header = |frame: &str| Header { stamp: stamp.to_ros(), frame_id: frame.to_string() };
        let pose_msg = |x: f64, y: f64, yaw: f64| Pose {
            position: Point { x, y, z: 0.0 },
            orientation: Quaternion::from_yaw(yaw),
        };
        let twist_msg = |vx: f64, vy: f64, w: f64| Twist {
            linear: Vector3 { x: vx, y: vy, z: 0.0 },
            angular: Vector3 { x: 0.0, y: 0.0, z: w },
        };

        let ground_truth = Odometry {
            header: header(&self.config.ground_truth_frame_id),
            child_frame_id: self.body_frame.clone(),
            pose: PoseWithCovariance {
                pose: pose_msg(pose.x_m, pose.y_m, pose.theta_rad),
                covariance: Covariance::default(),
            },
            twist: TwistWithCovariance {
                twist: twist_msg(reported[0], reported[1], twist.omega_radps),
                covariance: Covariance::default(),
            },
        };
        // What odometry believes: the truth, or a drifting estimate.
        let localized = self.localization.as_mut().map(|l| l.update(pose, stamp.nanos));
        let believed = match localized {
            Some(estimates) => estimates.odometry,
            None if self.error.is_on() => self.error.update(pose),
            None => pose,
        };
        let noisy = [0, 1, 2, 3, 4, 5].map(|i| self.draw(i));
        let odometry = Odometry {
            header: header(&self.config.odom_frame_id),
            child_frame_id: self.body_frame.clone(),
            pose: PoseWithCovariance {
                pose: pose_msg(believed.x_m + noisy[0], believed.y_m + noisy[1], believed.theta_rad + noisy[2]),
                covariance: self.config.odom_pose_covariance,
            },
            twist: TwistWithCovariance {
                twist: twist_msg(reported[0] + noisy[3], reported[1] + noisy[4], twist.omega_radps + noisy[5]),
                covariance: self.config.odom_twist_covariance,
            },
        };
        let encoder = [self.draw(3), self.draw(5)];
        let twist_out = TwistWithCovarianceStamped {
            header: header(&self.body_frame),
            twist: TwistWithCovariance {
                twist: twist_msg(local[0] + encoder[0], 0.0, twist.omega_radps + encoder[1]),
                covariance: self.config.odom_twist_covariance,
            },
        };
        let p = odometry.pose.pose;
        let transform = TransformStamped {
            header: odometry.header.clone(),
            child_frame_id: self.body_frame.clone(),
            transform: Transform {
                translation: Vector3 { x: p.position.x, y: p.position.y, z: 0.0 },
                rotation: p.orientation,
            },
        };
        let map_to_odom = localized.map(|e| TransformStamped {
            header: header(&self.config.ground_truth_frame_id),
            child_frame_id: self.config.odom_frame_id.clone(),
            transform: Transform {
                translation: Vector3 { x: e.map_to_odom.x_m, y: e.map_to_odom.y_m, z: 0.0 },
                rotation: Quaternion::from_yaw(e.map_to_odom.theta_rad),
            },
        });
        OdomOutput { ground_truth, odometry, twist: twist_out, transform, map_to_odom }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_protocol::plugins::diff_drive::DiffDriveConfig;
    use flotilla_protocol::plugins::PluginContext;

    fn odom(yaml: &str, seed: u64) -> Odom {
        let layers = vec![];
        let ctx = PluginContext {
            model_file: std::path::Path::new("m.yaml"),
            model: "bot",
            bodies: vec!["base"],
            joints: &[],
            layer_names: &layers,
        };
        let config = DiffDriveConfig::parse(&serde_yaml::from_str(yaml).unwrap(), "drive", &ctx).unwrap();
        Odom::new(config.odometry(), "r1", seed)
    }

    #[test]
    fn ground_truth_reports_body_frame_velocity() {
        let mut o = odom("{body: base}", 1);
        let pose = Pose2::new(1.0, 2.0, std::f64::consts::FRAC_PI_2);
        // moving along +y in the world while facing +y: forward in the body frame
        let out = o.update(SimTime { nanos: 5 }, pose, Twist2 { vx_mps: 0.0, vy_mps: 0.5, omega_radps: 0.1 });
        let t = out.ground_truth.twist.twist;
        assert!((t.linear.x - 0.5).abs() < 1e-12 && t.linear.y.abs() < 1e-12);
        assert_eq!(out.ground_truth.header.frame_id, "map");
        assert_eq!(out.odometry.header.frame_id, "odom");
        assert_eq!(out.ground_truth.child_frame_id, "r1_base");
        // zero noise: odometry equals ground truth
        assert_eq!(out.odometry.pose.pose, out.ground_truth.pose.pose);
        assert_eq!(out.transform.child_frame_id, "r1_base");
    }

    #[test]
    fn with_localization_noise_map_to_odom_follows_the_drifting_odometry() {
        let mut o = odom(
            "{body: base, pub_rate: 50, localization: {odom_walk_velocity_translation: 0.01, \
             odom_walk_velocity_rotation: 0.001, map_sample_noise_translation: 0.00001}}",
            3,
        );
        let mut last = None;
        for k in 0..500u64 {
            let truth = Pose2::new(k as f64 * 0.02, 0.0, 0.0);
            last = Some((truth, o.update(SimTime { nanos: k * 20_000_000 }, truth, Twist2::default())));
        }
        let (truth, out) = last.unwrap();
        let odom = &out.odometry.pose.pose;
        let drifted = (odom.position.x - truth.x_m).hypot(odom.position.y - truth.y_m);
        assert!(drifted > 1e-3, "10 m of travel drifts the odometry: {drifted} m");
        // map → odom ∘ odom → base is the localizer's estimate: near the truth
        let m = out.map_to_odom.expect("map → odom published");
        assert_eq!((m.header.frame_id.as_str(), m.child_frame_id.as_str()), ("map", "odom"));
        let map_to_odom = Pose2::new(m.transform.translation.x, m.transform.translation.y, m.transform.rotation.yaw());
        let base = map_to_odom.compose(&Pose2::new(odom.position.x, odom.position.y, odom.orientation.yaw()));
        assert!((base.x_m - truth.x_m).abs() < 0.1 && (base.y_m - truth.y_m).abs() < 0.1, "{base:?} vs {truth:?}");
    }

    #[test]
    fn noise_is_seeded_and_has_the_configured_variance() {
        let yaml = "{body: base, odom_pose_noise: [0.01, 0.04, 0.0]}";
        let run = |seed| {
            let mut o = odom(yaml, seed);
            (0..2000)
                .map(|_| o.update(SimTime::ZERO, Pose2::default(), Twist2::default()).odometry.pose.pose.position)
                .collect::<Vec<_>>()
        };
        assert_eq!(run(7), run(7), "same seed, same noise");
        assert_ne!(run(7), run(8));
        let xs = run(7);
        let var = |f: fn(&Point) -> f64| xs.iter().map(|p| f(p) * f(p)).sum::<f64>() / xs.len() as f64;
        assert!((var(|p| p.x) - 0.01).abs() < 0.002, "{}", var(|p| p.x));
        assert!((var(|p| p.y) - 0.04).abs() < 0.008, "{}", var(|p| p.y));
    }
}
