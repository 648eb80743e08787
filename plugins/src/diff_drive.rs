//! Flatland's `DiffDrive` plugin parameters, plus Flotilla's stale-command
//! timeout.

use serde_yaml::Value;

use super::dynamics_limits::DynamicsLimitsConfig;
use super::odometry::OdometryConfig;
use super::{check_topic, PluginContext};
use crate::config::LoadError;
use crate::role::Role;
use crate::topic::TopicSpec;
use flotilla_messages::geometry_msgs::Twist;
use flotilla_wire::names::resolve_topic;

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
    /// Subscribed command topic.
    pub twist_sub: String,
    /// What `flotilla-odom` publishes: frames, topics, noise, rate, and
    /// which of odometry, ground truth, twist, tf and map → odom go out.
    /// (`enable_map_tf_pub` is a Flotilla extension: map → odom, the
    /// identity since odometry is in world coordinates as in Flatland,
    /// latched on `tf_static`, so that rviz2 shows robots in the map frame
    /// without a localizer; leave it off when AMCL publishes map → odom.)
    pub odometry: OdometryConfig,
    /// Limits on the forward velocity.
    pub linear_dynamics: DynamicsLimitsConfig,
    /// Limits on the yaw rate.
    pub angular_dynamics: DynamicsLimitsConfig,
    /// Sim seconds without a command after which the robot is stopped
    /// (0 = hold the last command forever, as Flatland does).
    pub cmd_vel_timeout_s: f64,
}

impl super::PluginConfig for DiffDriveConfig {
    const TYPE: &'static str = "DiffDrive";
    const ROLES: &'static [Role] = &[DiffDriveConfig::DRIVE_ROLE, DiffDriveConfig::ODOM_ROLE];
    const EXAMPLE: &'static str = "{type: DiffDrive, name: drive, body: base}";
    const DRIVES_ROBOT: bool = true;
    fn drive_interface(&self) -> Option<super::DriveInterface> {
        Some(super::DriveInterface { twist_sub: self.twist_sub.clone(), odometry: self.odometry.clone() })
    }
    fn parse(entry: &Value, name: &str, ctx: &PluginContext) -> Result<DiffDriveConfig, LoadError> {
        DiffDriveConfig::parse(entry, name, ctx)
    }
    fn body(&self) -> &str {
        &self.body
    }
    fn topics(&self, namespace: &str) -> Vec<TopicSpec> {
        let mut topics = vec![TopicSpec::subscribe::<Twist>(resolve_topic(namespace, &self.twist_sub))];
        topics.extend(self.odometry.topics(namespace));
        topics
    }
}

impl DiffDriveConfig {
    /// What `flotilla-odom` publishes for it.
    pub fn odometry(&self) -> OdometryConfig {
        self.odometry.clone()
    }

    /// `flotilla-drive` turns `cmd_vel` into the body's velocity.
    pub const DRIVE_ROLE: Role = Role::actuator("DiffDrive", "flotilla-drive", "drive");
    /// `flotilla-odom` publishes odometry, ground truth, twist and tf.
    pub const ODOM_ROLE: Role = Role::sensor("DiffDrive", "flotilla-odom", "odom");

    /// Parses and validates a `DiffDrive` entry.
    pub fn parse(entry: &Value, name: &str, ctx: &PluginContext) -> Result<DiffDriveConfig, LoadError> {
        let r = ctx.reader(entry, name)?;
        let body: String = r.req("body")?;
        let config = DiffDriveConfig {
            name: name.to_string(),
            twist_sub: r.opt("twist_sub", "cmd_vel".to_string())?,
            odometry: OdometryConfig::read(&r, "DiffDrive", &body, true)?,
            linear_dynamics: DynamicsLimitsConfig::parse(&r, "linear_dynamics")?,
            angular_dynamics: DynamicsLimitsConfig::parse(&r, "angular_dynamics")?,
            cmd_vel_timeout_s: r.opt("cmd_vel_timeout", DEFAULT_CMD_VEL_TIMEOUT_S)?,
            body,
        };
        r.finish()?;
        ctx.check_body(&r, &config.body)?;
        check_topic(&r, "twist_sub", &config.twist_sub)?;
        config.odometry.check(&r)?;
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
        let ctx = PluginContext::single_body(Path::new("m.yaml"), "bot", "base", &layers);
        DiffDriveConfig::parse(&serde_yaml::from_str(text).unwrap(), "drive", &ctx)
    }

    #[test]
    fn defaults_follow_flatland() {
        let c = parse("{type: DiffDrive, name: drive, body: base, odom_pose_noise: [0.1, 0.2, 0.3]}").unwrap();
        assert_eq!(c.twist_sub, "cmd_vel");
        let o = &c.odometry;
        assert_eq!(o.odom_pub, "odometry/filtered");
        assert_eq!((o.odom_frame_id.as_str(), o.ground_truth_frame_id.as_str()), ("odom", "map"));
        assert!(o.enable_odom_pub && o.enable_odom_tf_pub && o.enable_twist_pub && o.twist_in_local_frame);
        assert!(!o.enable_map_tf_pub);
        // the covariance defaults to the noise variances on its diagonal
        assert_eq!(
            (o.odom_pose_covariance.0[0], o.odom_pose_covariance.0[7], o.odom_pose_covariance.0[35]),
            (0.1, 0.2, 0.3)
        );
        assert_eq!(c.linear_dynamics, DynamicsLimitsConfig::default());
    }

    #[test]
    fn amrisim_odometry_error_keys_follow_amrisim_rules() {
        use crate::odometry::OdomErrorMode;
        let none = parse("{body: base}").unwrap().odometry.odom_error;
        assert_eq!(none.mode, OdomErrorMode::None);
        let e = parse(
            "{body: base, odom_error_mode: constant, odom_error: [0.01, 0.02, 0.03], odom_error_range_a: [0, 0.1]}",
        )
        .unwrap()
        .odometry
        .odom_error;
        // constant: odom_error, or the middle of a range given
        assert_eq!((e.mode, e.constant), (OdomErrorMode::Constant, [0.01, 0.02, 0.05]));
        // random: the range given, or ± odom_error
        assert_eq!(e.ranges, [[-0.01, 0.01], [-0.02, 0.02], [0.0, 0.1]]);
        let error = |text: &str| parse(text).unwrap_err().message;
        assert!(error("{body: base, odom_error: [0.01, 0.01, 0.01]}").contains("name a mode"));
        assert!(error("{body: base, odom_error_mode: random_init}").contains("needs odom_error"));
        assert!(error("{body: base, odom_error_mode: sometimes, odom_error: [0, 0, 0]}").contains("random_each_update"));
        assert!(error("{body: base, odom_error_mode: random_init, odom_error_range_x: [1, 0]}").contains("min ≤ max"));
    }

    #[test]
    fn localization_noise_takes_vehicle_dynamics_sims_variances() {
        let c = parse(
            "{body: base, enable_odom_tf_pub: false, \
             localization: {odom_walk_velocity_translation: 0.0025, map_sample_noise_rotation: 0.001}}",
        )
        .unwrap();
        let l = c.odometry.localization.unwrap();
        assert_eq!((l.odom_walk_velocity_translation, l.odom_walk_velocity_rotation), (0.0025, 0.0));
        assert_eq!((l.map_sample_noise_translation, l.map_sample_noise_rotation), (0.0, 0.001));
        let topics = crate::PluginConfig::topics(&c, "r");
        assert!(topics.iter().any(|t| t.name == "/tf"), "map → odom goes on tf");
        let error = |text: &str| parse(text).unwrap_err().message;
        assert!(error("{body: base, localization: {odom_walk_velocity: 1}}").contains("odom_walk_velocity"));
        assert!(error("{body: base, localization: {map_sample_noise_rotation: -1}}").contains("variance"));
        assert!(error("{body: base, localization: {}, enable_map_tf_pub: true}").contains("enable_map_tf_pub"));
        assert!(error("{body: base, localization: {}, odom_error_mode: constant, odom_error: [0, 0, 0]}")
            .contains("choose one"));
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
