//! Flatland's `DiffDrive` plugin parameters, plus Flotilla's stale-command
//! timeout.

use serde_yaml::Value;

use super::dynamics_limits::DynamicsLimitsConfig;
use super::registry::{Role, TopicSpec};
use super::{check_rate, check_topic, PluginContext};
use crate::config::{LoadError, Reader};
use crate::names::resolve_topic;
use crate::ros::geometry_msgs::{Twist, TwistWithCovarianceStamped};
use crate::ros::nav_msgs::Odometry;
use crate::ros::Covariance;

/// Default `cmd_vel_timeout`: a robot stops when it has heard no command for
/// half a simulated second (Nav2 and teleop publish at 10–20 Hz).
pub const DEFAULT_CMD_VEL_TIMEOUT_S: f64 = 0.5;

/// A validated `DiffDrive` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct DiffDriveConfig {
    /// Plugin name.
    pub name: String,
    /// The driven body.
    pub body: String,
    /// Frame of the noisy odometry.
    pub odom_frame_id: String,
    /// Frame of the ground truth.
    pub ground_truth_frame_id: String,
    /// Subscribed command topic.
    pub twist_sub: String,
    /// Noisy odometry topic.
    pub odom_pub: String,
    /// Ground truth topic.
    pub ground_truth_pub: String,
    /// Encoder-like twist topic.
    pub twist_pub: String,
    /// Publish odometry and ground truth.
    pub enable_odom_pub: bool,
    /// Broadcast odom → body on `tf`.
    pub enable_odom_tf_pub: bool,
    /// Publish the twist topic.
    pub enable_twist_pub: bool,
    /// Flotilla extension: publish `ground_truth_frame_id` → `odom_frame_id`
    /// (map → odom, the identity, since odometry is expressed in world
    /// coordinates as in Flatland) latched on `tf_static`, so that rviz2
    /// shows robots in the map frame without a localizer. Leave it off when
    /// a localizer (AMCL) publishes map → odom.
    pub enable_map_tf_pub: bool,
    /// Report ground-truth twist in the body frame (Flatland's default).
    pub twist_in_local_frame: bool,
    /// Variances of Gaussian noise on (x, y, yaw), m², m², rad².
    pub odom_pose_noise: [f64; 3],
    /// Variances of Gaussian noise on (vx, vy, ω).
    pub odom_twist_noise: [f64; 3],
    /// Reported pose covariance.
    pub odom_pose_covariance: Covariance,
    /// Reported twist covariance.
    pub odom_twist_covariance: Covariance,
    /// Odometry messages per sim second (∞ = every step).
    pub pub_rate_hz: f64,
    /// Limits on the forward velocity.
    pub linear_dynamics: DynamicsLimitsConfig,
    /// Limits on the yaw rate.
    pub angular_dynamics: DynamicsLimitsConfig,
    /// Sim seconds without a command after which the robot is stopped
    /// (0 = hold the last command forever, as Flatland does).
    pub cmd_vel_timeout_s: f64,
}

fn covariance(r: &Reader, key: &str, noise: [f64; 3]) -> Result<Covariance, LoadError> {
    let mut default = [0.0; 36];
    default[0] = noise[0];
    default[7] = noise[1];
    default[35] = noise[2];
    let values = r.opt_list(key, default.to_vec(), Some(36), Some(36))?;
    let mut out = [0.0; 36];
    out.copy_from_slice(&values);
    Ok(Covariance(out))
}

impl super::PluginConfig for DiffDriveConfig {
    const TYPE: &'static str = "DiffDrive";
    const ROLES: &'static [Role] = &[DiffDriveConfig::DRIVE_ROLE, DiffDriveConfig::ODOM_ROLE];
    const EXAMPLE: &'static str = "{type: DiffDrive, name: drive, body: base}";
    const DRIVES_ROBOT: bool = true;
    fn parse(entry: &Value, name: &str, ctx: &PluginContext) -> Result<DiffDriveConfig, LoadError> {
        DiffDriveConfig::parse(entry, name, ctx)
    }
    fn body(&self) -> &str {
        &self.body
    }
    fn topics(&self, namespace: &str) -> Vec<TopicSpec> {
        let name = |topic: &str| resolve_topic(namespace, topic);
        let mut topics = vec![TopicSpec::subscribe::<Twist>(name(&self.twist_sub))];
        if self.enable_odom_pub {
            topics.push(TopicSpec::publish::<Odometry>(name(&self.odom_pub)));
            topics.push(TopicSpec::publish::<Odometry>(name(&self.ground_truth_pub)));
        }
        if self.enable_twist_pub {
            topics.push(TopicSpec::publish::<TwistWithCovarianceStamped>(name(&self.twist_pub)));
        }
        if self.enable_odom_tf_pub {
            topics.push(TopicSpec::tf());
        }
        if self.enable_map_tf_pub {
            topics.push(TopicSpec::tf_static());
        }
        topics
    }
}

impl DiffDriveConfig {
    /// `flotilla-drive` turns `cmd_vel` into the body's velocity.
    pub const DRIVE_ROLE: Role = Role { plugin_type: "DiffDrive", binary: "flotilla-drive", aspect: "drive" };
    /// `flotilla-odom` publishes odometry, ground truth, twist and tf.
    pub const ODOM_ROLE: Role = Role { plugin_type: "DiffDrive", binary: "flotilla-odom", aspect: "odom" };

    /// Parses and validates a `DiffDrive` entry.
    pub fn parse(entry: &Value, name: &str, ctx: &PluginContext) -> Result<DiffDriveConfig, LoadError> {
        let r = ctx.reader(entry, name)?;
        let text = |key: &str, default: &str| r.opt(key, default.to_string());
        let odom_pose_noise = r.array::<3>("odom_pose_noise", Some([0.0; 3]))?;
        let odom_twist_noise = r.array::<3>("odom_twist_noise", Some([0.0; 3]))?;
        let config = DiffDriveConfig {
            name: name.to_string(),
            body: r.req("body")?,
            odom_frame_id: text("odom_frame_id", "odom")?,
            ground_truth_frame_id: text("ground_truth_frame_id", "map")?,
            twist_sub: text("twist_sub", "cmd_vel")?,
            odom_pub: text("odom_pub", "odometry/filtered")?,
            ground_truth_pub: text("ground_truth_pub", "odometry/ground_truth")?,
            twist_pub: text("twist_pub", "twist")?,
            enable_odom_pub: r.opt("enable_odom_pub", true)?,
            enable_odom_tf_pub: r.opt("enable_odom_tf_pub", true)?,
            enable_twist_pub: r.opt("enable_twist_pub", true)?,
            enable_map_tf_pub: r.opt("enable_map_tf_pub", false)?,
            twist_in_local_frame: r.opt("twist_in_local_frame", true)?,
            odom_pose_covariance: covariance(&r, "odom_pose_covariance", odom_pose_noise)?,
            odom_twist_covariance: covariance(&r, "odom_twist_covariance", odom_twist_noise)?,
            odom_pose_noise,
            odom_twist_noise,
            pub_rate_hz: r.opt("pub_rate", f64::INFINITY)?,
            linear_dynamics: DynamicsLimitsConfig::parse(&r, "linear_dynamics")?,
            angular_dynamics: DynamicsLimitsConfig::parse(&r, "angular_dynamics")?,
            cmd_vel_timeout_s: r.opt("cmd_vel_timeout", DEFAULT_CMD_VEL_TIMEOUT_S)?,
        };
        r.finish()?;
        ctx.check_body(&r, &config.body)?;
        for (key, topic) in [
            ("twist_sub", &config.twist_sub),
            ("odom_pub", &config.odom_pub),
            ("ground_truth_pub", &config.ground_truth_pub),
            ("twist_pub", &config.twist_pub),
        ] {
            check_topic(&r, key, topic)?;
        }
        check_rate(&r, "pub_rate", config.pub_rate_hz)?;
        for (key, noise) in [("odom_pose_noise", config.odom_pose_noise), ("odom_twist_noise", config.odom_twist_noise)]
        {
            if noise.iter().any(|v| !v.is_finite() || *v < 0.0) {
                return Err(r.error(format!("\"{key}\" holds variances, which must be finite and ≥ 0, got {noise:?}")));
            }
        }
        if !config.cmd_vel_timeout_s.is_finite() || config.cmd_vel_timeout_s < 0.0 {
            return Err(
                r.error(format!("\"cmd_vel_timeout\" must be ≥ 0 s (0 = never), got {}", config.cmd_vel_timeout_s))
            );
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn parse(text: &str) -> Result<DiffDriveConfig, LoadError> {
        let layers = vec!["l".to_string()];
        let ctx =
            PluginContext { model_file: Path::new("m.yaml"), model: "bot", bodies: vec!["base"], layer_names: &layers };
        DiffDriveConfig::parse(&serde_yaml::from_str(text).unwrap(), "drive", &ctx)
    }

    #[test]
    fn defaults_follow_flatland() {
        let c = parse("{type: DiffDrive, name: drive, body: base, odom_pose_noise: [0.1, 0.2, 0.3]}").unwrap();
        assert_eq!(c.twist_sub, "cmd_vel");
        assert_eq!(c.odom_pub, "odometry/filtered");
        assert_eq!((c.odom_frame_id.as_str(), c.ground_truth_frame_id.as_str()), ("odom", "map"));
        // the covariance defaults to the noise variances on its diagonal
        assert_eq!(
            (c.odom_pose_covariance.0[0], c.odom_pose_covariance.0[7], c.odom_pose_covariance.0[35]),
            (0.1, 0.2, 0.3)
        );
        assert_eq!(c.linear_dynamics, DynamicsLimitsConfig::default());
    }

    #[test]
    fn deceleration_defaults_to_acceleration() {
        let c = parse("{body: base, linear_dynamics: {acceleration_limit: 2.0, velocity_limit: 1.0}}").unwrap();
        assert_eq!(c.linear_dynamics.deceleration_limit, 2.0);
    }

    #[test]
    fn bad_values_are_named() {
        assert!(parse("{body: base, odom_pose_noise: [-1, 0, 0]}").unwrap_err().message.contains("odom_pose_noise"));
        assert!(parse("{body: base, odom_pose_covariance: [1, 2]}").unwrap_err().message.contains("exactly 36"));
        assert!(parse("{body: base, linear_dynamics: {acceleration_limt: 1}}")
            .unwrap_err()
            .message
            .contains("acceleration_limt"));
        assert!(parse("{body: base, twist_sub: 'bad topic'}").unwrap_err().message.contains("twist_sub"));
    }
}
