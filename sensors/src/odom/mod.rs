//! A drive plugin's odometry side (DiffDrive's, TricycleDrive's) as a
//! model: ground truth from the world state, noisy odometry and an
//! encoder-like twist, as Flatland publishes them.

mod error;
mod localization;
pub mod node;

pub use error::OdomError;
pub use localization::{Estimates, Localization};

use flotilla_messages::geometry_msgs::{
    Point, Pose, PoseWithCovariance, Quaternion, Transform, TransformStamped, Twist, TwistWithCovariance,
    TwistWithCovarianceStamped, Vector3,
};
use flotilla_messages::nav_msgs::Odometry;
use flotilla_messages::std_msgs::Header;
use flotilla_messages::Covariance;
use flotilla_plugins::odometry::OdometryConfig;
use flotilla_wire::geometry::{Pose2, Twist2};
use flotilla_wire::names::resolve_frame;
use flotilla_wire::time::SimTime;
use flotilla_wire::update_timer::UpdateTimer;
use rand::SeedableRng;
use rand_distr::{Distribution, Normal};
use rand_xoshiro::Xoshiro256PlusPlus;

/// One odometry update in figures, before any message is built: the
/// messages ([`Odom::odometry`], [`Odom::ground_truth`], [`Odom::twist`],
/// [`Odom::transform`], [`Odom::map_to_odom`]) are made from it only for the topics
/// someone listens to, while the noise and error streams advance at every
/// update regardless.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OdomReading {
    stamp: SimTime,
    /// The body's true pose.
    truth: Pose2,
    /// Its true velocity (m/s), in the body frame or the world's as configured.
    reported: [f64; 2],
    /// Its true turn rate, rad/s.
    omega_radps: f64,
    /// Its velocity in the body frame, m/s.
    local: [f64; 2],
    /// What odometry believes (the truth, or a drifting estimate).
    believed: Pose2,
    /// Noise on x, y, yaw, vx, vy, ω.
    noise: [f64; 6],
    /// The encoders' noise on vx and ω.
    encoder: [f64; 2],
    /// The localizer's map → odom correction, when localization noise is on.
    map_to_odom: Option<Pose2>,
}

fn header(frame: &str) -> Header {
    Header { stamp: Default::default(), frame_id: frame.to_string() }
}

fn ros_pose(x: f64, y: f64, yaw: f64) -> Pose {
    Pose { position: Point { x, y, z: 0.0 }, orientation: Quaternion::from_yaw(yaw) }
}

fn ros_twist(vx: f64, vy: f64, w: f64) -> Twist {
    Twist { linear: Vector3 { x: vx, y: vy, z: 0.0 }, angular: Vector3 { x: 0.0, y: 0.0, z: w } }
}

/// One drive instance's odometry.
pub struct Odom {
    config: OdometryConfig,
    timer: UpdateTimer,
    rng: Xoshiro256PlusPlus,
    /// Noise on x, y, yaw, vx, vy, ω (standard deviations from the variances).
    noise: [Normal<f64>; 6],
    /// AMRISim's odometry error: the estimate the odometry reports.
    error: OdomError,
    /// vehicle_dynamics_sim's localization noise, when on.
    localization: Option<Localization>,
    /// The messages of the latest update.
    messages: Messages,
}

/// The messages an update is published as, kept from update to update:
/// an update changes their stamps and figures only, so their frames'
/// strings are made once. Made afresh, they were about a million
/// allocations and releases per minute of office-50 while a recorder took
/// every message, a sixth of the odometry node's CPU.
struct Messages {
    ground_truth: Odometry,
    odometry: Odometry,
    twist: TwistWithCovarianceStamped,
    transform: TransformStamped,
    map_to_odom: TransformStamped,
}

impl Messages {
    /// The messages of `config`'s frames (the body's is `body_frame`) and
    /// covariances, before any update.
    fn new(config: &OdometryConfig, body_frame: &str) -> Messages {
        let odometry = |frame: &str, pose_covariance: Covariance, twist_covariance: Covariance| Odometry {
            header: header(frame),
            child_frame_id: body_frame.to_string(),
            pose: PoseWithCovariance { pose: Pose::default(), covariance: pose_covariance },
            twist: TwistWithCovariance { twist: Twist::default(), covariance: twist_covariance },
        };
        let transform = |parent: &str, child: &str| TransformStamped {
            header: header(parent),
            child_frame_id: child.to_string(),
            transform: Transform::default(),
        };
        Messages {
            ground_truth: odometry(&config.ground_truth_frame_id, Covariance::default(), Covariance::default()),
            odometry: odometry(&config.odom_frame_id, config.odom_pose_covariance, config.odom_twist_covariance),
            twist: TwistWithCovarianceStamped {
                header: header(body_frame),
                twist: TwistWithCovariance { twist: Twist::default(), covariance: config.odom_twist_covariance },
            },
            transform: transform(&config.odom_frame_id, body_frame),
            map_to_odom: transform(&config.ground_truth_frame_id, &config.odom_frame_id),
        }
    }
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
        let body_frame = resolve_frame(namespace, &config.body);
        Odom {
            timer: UpdateTimer::new(config.pub_rate_hz),
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            noise,
            error: OdomError::new(config.odom_error, seed),
            localization: config.localization.map(|l| Localization::new(l, seed)),
            messages: Messages::new(&config, &body_frame),
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

    /// The update period, ns (see [`UpdateTimer::period_ns`]).
    pub fn period_ns(&self) -> Option<u64> {
        self.timer.period_ns()
    }

    /// Whether an update is due at this step (marks it taken).
    pub fn due(&mut self, now_ns: u64, step_ns: u64) -> bool {
        self.timer.check(now_ns, step_ns)
    }

    fn draw(&mut self, i: usize) -> f64 {
        self.noise[i].sample(&mut self.rng)
    }

    /// Updates the odometry of a body at `pose` moving at `twist` (world
    /// frame): advances the error model and draws the noise.
    pub fn update(&mut self, stamp: SimTime, pose: Pose2, twist: Twist2) -> OdomReading {
        let (s, c) = pose.theta_rad.sin_cos();
        // body-frame velocity of the origin
        let local = [c * twist.vx_mps + s * twist.vy_mps, -s * twist.vx_mps + c * twist.vy_mps];
        let reported = if self.config.twist_in_local_frame { local } else { [twist.vx_mps, twist.vy_mps] };
        // What odometry believes: the truth, or a drifting estimate.
        let localized = self.localization.as_mut().map(|l| l.update(pose, stamp.nanos));
        let believed = match localized {
            Some(estimates) => estimates.odometry,
            None if self.error.is_on() => self.error.update(pose),
            None => pose,
        };
        // The draws' order is the noise stream's: six, then the encoders'.
        let noise = [0, 1, 2, 3, 4, 5].map(|i| self.draw(i));
        let encoder = [self.draw(3), self.draw(5)];
        OdomReading {
            stamp,
            truth: pose,
            reported,
            omega_radps: twist.omega_radps,
            local,
            believed,
            noise,
            encoder,
            map_to_odom: localized.map(|e| e.map_to_odom),
        }
    }

    /// Noise-free odometry in the ground-truth frame.
    pub fn ground_truth(&mut self, r: &OdomReading) -> &Odometry {
        let message = &mut self.messages.ground_truth;
        message.header.stamp = r.stamp.to_ros();
        message.pose.pose = ros_pose(r.truth.x_m, r.truth.y_m, r.truth.theta_rad);
        message.twist.twist = ros_twist(r.reported[0], r.reported[1], r.omega_radps);
        message
    }

    /// The noisy pose in the odom frame: x, y (m) and yaw (rad).
    fn noisy_pose(r: &OdomReading) -> [f64; 3] {
        [r.believed.x_m + r.noise[0], r.believed.y_m + r.noise[1], r.believed.theta_rad + r.noise[2]]
    }

    /// Noisy odometry in the odom frame.
    pub fn odometry(&mut self, r: &OdomReading) -> &Odometry {
        let [x, y, yaw] = Odom::noisy_pose(r);
        let message = &mut self.messages.odometry;
        message.header.stamp = r.stamp.to_ros();
        message.pose.pose = ros_pose(x, y, yaw);
        message.twist.twist =
            ros_twist(r.reported[0] + r.noise[3], r.reported[1] + r.noise[4], r.omega_radps + r.noise[5]);
        message
    }

    /// Noisy body-frame velocity (encoders).
    pub fn twist(&mut self, r: &OdomReading) -> &TwistWithCovarianceStamped {
        let message = &mut self.messages.twist;
        message.header.stamp = r.stamp.to_ros();
        message.twist.twist = ros_twist(r.local[0] + r.encoder[0], 0.0, r.omega_radps + r.encoder[1]);
        message
    }

    /// odom → body, from the noisy odometry.
    pub fn transform(&mut self, r: &OdomReading) -> &TransformStamped {
        let [x, y, yaw] = Odom::noisy_pose(r);
        let message = &mut self.messages.transform;
        message.header.stamp = r.stamp.to_ros();
        message.transform = Transform { translation: Vector3 { x, y, z: 0.0 }, rotation: Quaternion::from_yaw(yaw) };
        message
    }

    /// map → odom, the localizer's correction, when localization noise is on.
    pub fn map_to_odom(&mut self, r: &OdomReading) -> Option<&TransformStamped> {
        let m = r.map_to_odom?;
        let message = &mut self.messages.map_to_odom;
        message.header.stamp = r.stamp.to_ros();
        message.transform = Transform {
            translation: Vector3 { x: m.x_m, y: m.y_m, z: 0.0 },
            rotation: Quaternion::from_yaw(m.theta_rad),
        };
        Some(message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_plugins::diff_drive::DiffDriveConfig;
    use flotilla_plugins::PluginContext;
    use std::path::Path;

    fn odom(yaml: &str, seed: u64) -> Odom {
        let ctx = PluginContext::single_body(Path::new("m.yaml"), "bot", "base", &[]);
        let config = DiffDriveConfig::parse(&serde_yaml::from_str(yaml).unwrap(), "drive", &ctx).unwrap();
        Odom::new(config.odometry(), "r1", seed)
    }

    #[test]
    fn ground_truth_reports_body_frame_velocity() {
        let mut o = odom("{body: base}", 1);
        let pose = Pose2::new(1.0, 2.0, std::f64::consts::FRAC_PI_2);
        // moving along +y in the world while facing +y: forward in the body frame
        let reading = o.update(SimTime { nanos: 5 }, pose, Twist2 { vx_mps: 0.0, vy_mps: 0.5, omega_radps: 0.1 });
        let (ground_truth, odometry) = (o.ground_truth(&reading).clone(), o.odometry(&reading).clone());
        let t = ground_truth.twist.twist;
        assert!((t.linear.x - 0.5).abs() < 1e-12 && t.linear.y.abs() < 1e-12);
        assert_eq!(ground_truth.header.frame_id, "map");
        assert_eq!(odometry.header.frame_id, "odom");
        assert_eq!(ground_truth.child_frame_id, "r1_base");
        // zero noise: odometry equals ground truth
        assert_eq!(odometry.pose.pose, ground_truth.pose.pose);
        assert_eq!(o.transform(&reading).child_frame_id, "r1_base");
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
            let reading = o.update(SimTime { nanos: k * 20_000_000 }, truth, Twist2::default());
            last = Some((truth, o.odometry(&reading).clone(), o.map_to_odom(&reading).cloned()));
        }
        let (truth, odometry, map_to_odom) = last.unwrap();
        let odom = &odometry.pose.pose;
        let drifted = (odom.position.x - truth.x_m).hypot(odom.position.y - truth.y_m);
        assert!(drifted > 1e-3, "10 m of travel drifts the odometry: {drifted} m");
        // map → odom ∘ odom → base is the localizer's estimate: near the truth
        let m = map_to_odom.expect("map → odom published");
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
                .map(|_| {
                    let reading = o.update(SimTime::ZERO, Pose2::default(), Twist2::default());
                    o.odometry(&reading).pose.pose.position
                })
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
