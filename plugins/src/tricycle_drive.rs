//! Flatland's `TricycleDrive` plugin parameters, and the drive geometry its
//! joints give.
//!
//! Flatland's assumptions, checked with its words: the body's origin is at
//! the front wheel; the front wheel hangs on a revolute joint anchored at the
//! origin of both the wheel and the body; each rear wheel is welded to the
//! body by a joint anchored at the wheel's origin; the perpendicular from the
//! front wheel to the rear axle (the segment between the rear anchors)
//! bisects it. `cmd_vel`'s `linear.x` is the speed of the front wheel and
//! its `angular.z` the front wheel's steering angle (not a yaw rate).

use serde_yaml::Value;

use super::diff_drive::DEFAULT_CMD_VEL_TIMEOUT_S;
use super::dynamics_limits::DynamicsLimitsConfig;
use super::odometry::OdometryConfig;
use super::{check_topic, PluginContext};
use crate::config::{LoadError, Reader};
use crate::role::Role;
use crate::topic::TopicSpec;
use flotilla_messages::geometry_msgs::Twist;
use flotilla_wire::description::{JointDescription, JointKind};
use flotilla_wire::names::resolve_topic;

/// How far an anchor may be from where Flatland wants it, m.
const ANCHOR_TOLERANCE_M: f64 = 1e-5;

/// A validated `TricycleDrive` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct TricycleDriveConfig {
    /// Plugin name.
    pub name: String,
    /// The driven body (its origin is the front wheel).
    pub body: String,
    /// The front wheel's revolute joint.
    pub front_wheel_joint: String,
    /// The rear left wheel's weld joint.
    pub rear_left_wheel_joint: String,
    /// The rear right wheel's weld joint.
    pub rear_right_wheel_joint: String,
    /// Subscribed command topic.
    pub twist_sub: String,
    /// What `flotilla-odom` publishes: odometry and ground truth as
    /// Flatland's tricycle does (the twist in the world frame, no twist
    /// topic, no tf), with Flatland's frames, topics, noise and rate.
    pub odometry: OdometryConfig,
    /// Largest steering angle either way, rad (0 = unlimited).
    pub max_steer_angle_rad: f64,
    /// Limits on the steering angle's rate of change (rad/s, rad/s²),
    /// with the deprecated `max_angular_velocity` and
    /// `max_steer_acceleration` filling in limits left at 0.
    pub angular_dynamics: DynamicsLimitsConfig,
    /// Limits on the front wheel's speed (m/s, m/s²).
    pub linear_dynamics: DynamicsLimitsConfig,
    /// Flotilla extension, as DiffDrive's: sim seconds without a command
    /// after which the front wheel stops (its steering stays); 0 = hold the
    /// last command forever, as Flatland does.
    pub cmd_vel_timeout_s: f64,
    /// The geometry the joints give.
    pub geometry: TricycleGeometry,
}

/// Where the wheels are, in the body frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TricycleGeometry {
    /// The middle of the rear axle, m.
    pub rear_center: [f64; 2],
    /// Distance from the front wheel to the rear axle, m.
    pub wheelbase_m: f64,
    /// Distance between the rear wheels, m.
    pub axle_track_m: f64,
}

impl super::PluginConfig for TricycleDriveConfig {
    const TYPE: &'static str = "TricycleDrive";
    const ROLES: &'static [Role] = &[TricycleDriveConfig::DRIVE_ROLE, TricycleDriveConfig::ODOM_ROLE];
    const EXAMPLE: &'static str = "{type: TricycleDrive, name: tricycle, body: base, front_wheel_joint: front_wheel, \
                                   rear_left_wheel_joint: rear_left_wheel, rear_right_wheel_joint: rear_right_wheel}";
    const DRIVES_ROBOT: bool = true;
    fn drive_interface(&self) -> Option<super::DriveInterface> {
        Some(super::DriveInterface { twist_sub: self.twist_sub.clone(), odometry: self.odometry.clone() })
    }
    fn parse(entry: &Value, name: &str, ctx: &PluginContext) -> Result<TricycleDriveConfig, LoadError> {
        TricycleDriveConfig::parse(entry, name, ctx)
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

impl TricycleDriveConfig {
    /// `flotilla-drive` turns `cmd_vel` into the body's velocity.
    pub const DRIVE_ROLE: Role = Role::actuator("TricycleDrive", "flotilla-drive", "drive");
    /// `flotilla-odom` publishes odometry and ground truth.
    pub const ODOM_ROLE: Role = Role::sensor("TricycleDrive", "flotilla-odom", "odom");

    /// Parses and validates a `TricycleDrive` entry against its model's
    /// bodies and joints.
    pub fn parse(entry: &Value, name: &str, ctx: &PluginContext) -> Result<TricycleDriveConfig, LoadError> {
        let r = ctx.reader(entry, name)?;
        let mut angular_dynamics = DynamicsLimitsConfig::parse(&r, "angular_dynamics")?;
        // Flatland's deprecated keys fill in the limits left at 0.
        let max_angular_velocity: f64 = r.opt("max_angular_velocity", 0.0)?;
        let max_steer_acceleration: f64 = r.opt("max_steer_acceleration", 0.0)?;
        if angular_dynamics.velocity_limit == 0.0 {
            angular_dynamics.velocity_limit = max_angular_velocity;
        }
        if angular_dynamics.acceleration_limit == 0.0 {
            angular_dynamics.acceleration_limit = max_steer_acceleration;
            angular_dynamics.deceleration_limit = max_steer_acceleration;
        }
        let body: String = r.req("body")?;
        let config = TricycleDriveConfig {
            name: name.to_string(),
            front_wheel_joint: r.req("front_wheel_joint")?,
            rear_left_wheel_joint: r.req("rear_left_wheel_joint")?,
            rear_right_wheel_joint: r.req("rear_right_wheel_joint")?,
            twist_sub: r.opt("twist_sub", "cmd_vel".to_string())?,
            odometry: OdometryConfig::read(&r, "TricycleDrive", &body, false)?,
            max_steer_angle_rad: r.opt("max_steer_angle", 0.0)?,
            angular_dynamics,
            linear_dynamics: DynamicsLimitsConfig::parse(&r, "linear_dynamics")?,
            cmd_vel_timeout_s: r.opt("cmd_vel_timeout", DEFAULT_CMD_VEL_TIMEOUT_S)?,
            geometry: TricycleGeometry { rear_center: [0.0; 2], wheelbase_m: 0.0, axle_track_m: 0.0 },
            body,
        };
        r.finish()?;
        ctx.check_body(&r, &config.body)?;
        check_topic(&r, "twist_sub", &config.twist_sub)?;
        config.odometry.check(&r)?;
        for (key, value) in [
            ("cmd_vel_timeout", config.cmd_vel_timeout_s),
            ("max_steer_angle", config.max_steer_angle_rad),
            ("max_angular_velocity", max_angular_velocity),
            ("max_steer_acceleration", max_steer_acceleration),
        ] {
            if !value.is_finite() || value < 0.0 {
                return Err(r.error(format!("\"{key}\" must be a finite number ≥ 0 (0 = no limit), got {value}")));
            }
        }
        let geometry = geometry(&r, ctx, &config)?;
        Ok(TricycleDriveConfig { geometry, ..config })
    }

    /// What `flotilla-odom` publishes for it.
    pub fn odometry(&self) -> OdometryConfig {
        self.odometry.clone()
    }
}

/// The joint named `name`, or Flatland's error.
fn joint<'a>(r: &Reader, ctx: &'a PluginContext, name: &str) -> Result<&'a JointDescription, LoadError> {
    ctx.joints
        .iter()
        .find(|j| j.name == name)
        .ok_or_else(|| r.error(format!("Joint with name \"{name}\" does not exist")))
}

/// The anchor of `joint` on `body`, in the body's frame, having checked
/// that its anchor on the other body (the wheel) is that wheel's origin.
fn body_anchor(r: &Reader, joint: &JointDescription, body: &str) -> Result<[f64; 2], LoadError> {
    let (on_body, on_wheel) = if joint.bodies[0] == body {
        (joint.anchors[0], joint.anchors[1])
    } else if joint.bodies[1] == body {
        (joint.anchors[1], joint.anchors[0])
    } else {
        return Err(r.error(format!("Joint \"{}\" does not anchor on body \"{body}\"", joint.name)));
    };
    if on_wheel[0].abs() > ANCHOR_TOLERANCE_M || on_wheel[1].abs() > ANCHOR_TOLERANCE_M {
        return Err(r.error(format!("Joint \"{}\" must be anchored at (0, 0) on the wheel", joint.name)));
    }
    Ok(on_body)
}

/// Flatland's checks of the joints, and the wheelbase, axle track and rear
/// centre they give.
fn geometry(r: &Reader, ctx: &PluginContext, config: &TricycleDriveConfig) -> Result<TricycleGeometry, LoadError> {
    let front = joint(r, ctx, &config.front_wheel_joint)?;
    let rear_left = joint(r, ctx, &config.rear_left_wheel_joint)?;
    let rear_right = joint(r, ctx, &config.rear_right_wheel_joint)?;
    if !matches!(front.kind, JointKind::Revolute { .. }) {
        return Err(r.error("Front wheel joint must be a revolute joint"));
    }
    if !matches!(rear_left.kind, JointKind::Weld { .. }) {
        return Err(r.error("Rear left wheel joint must be a weld joint"));
    }
    if !matches!(rear_right.kind, JointKind::Weld { .. }) {
        return Err(r.error("Rear right wheel joint must be a weld joint"));
    }
    let front_anchor = body_anchor(r, front, &config.body)?;
    let [x1, y1] = body_anchor(r, rear_left, &config.body)?;
    let [x2, y2] = body_anchor(r, rear_right, &config.body)?;
    if front_anchor[0].abs() > ANCHOR_TOLERANCE_M || front_anchor[1].abs() > ANCHOR_TOLERANCE_M {
        return Err(r.error("Front wheel joint must have its body anchored at (0, 0)"));
    }
    let rear_center = [0.5 * (x1 + x2), 0.5 * (y1 + y2)];
    let axle_track_m = (x1 - x2).hypot(y1 - y2);
    if axle_track_m <= ANCHOR_TOLERANCE_M {
        return Err(r.error("The rear wheel joints must be anchored apart on the body"));
    }
    // The foot of the perpendicular from the front wheel to the rear axle.
    let [x3, y3] = front_anchor;
    let k = ((y2 - y1) * (x3 - x1) - (x2 - x1) * (y3 - y1)) / ((y2 - y1).powi(2) + (x2 - x1).powi(2));
    let foot = [x3 - k * (y2 - y1), y3 + k * (x2 - x1)];
    if (foot[0] - rear_center[0]).abs() > ANCHOR_TOLERANCE_M || (foot[1] - rear_center[1]).abs() > ANCHOR_TOLERANCE_M {
        return Err(r.error(
            "The mid point between the rear wheel anchors on the body must equal the perpendicular intersection \
             between the rear axle (line segment between rear anchors) and the front wheel anchor",
        ));
    }
    let wheelbase_m = (foot[0] - x3).hypot(foot[1] - y3);
    if wheelbase_m <= ANCHOR_TOLERANCE_M {
        return Err(r.error("The front wheel must not be on the rear axle (the wheelbase is 0)"));
    }
    Ok(TricycleGeometry { rear_center, wheelbase_m, axle_track_m })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// Flatland's cleaner: front wheel at the origin, rear wheels 0.83 m
    /// behind, 0.58 m apart.
    fn joints(rear_right_anchor: [f64; 2]) -> Vec<JointDescription> {
        let joint = |name: &str, wheel: &str, kind: JointKind, on_body: [f64; 2]| JointDescription {
            name: name.into(),
            kind,
            bodies: [wheel.into(), "base".into()],
            anchors: [[0.0, 0.0], on_body],
            collide_connected: false,
        };
        let weld = JointKind::Weld { angle: 0.0, frequency: 0.0, damping: 0.0 };
        vec![
            joint("front_wheel", "front", JointKind::Revolute { limits: None }, [0.0, 0.0]),
            joint("rear_left_wheel", "rear_left", weld.clone(), [-0.83, 0.29]),
            joint("rear_right_wheel", "rear_right", weld, rear_right_anchor),
        ]
    }

    fn parse_with(text: &str, joints: &[JointDescription]) -> Result<TricycleDriveConfig, LoadError> {
        let layers = vec!["l".to_string()];
        let ctx = PluginContext {
            model_file: Path::new("cleaner.model.yaml"),
            model: "cleaner",
            bodies: vec!["base", "front", "rear_left", "rear_right"],
            joints,
            layer_names: &layers,
        };
        TricycleDriveConfig::parse(&serde_yaml::from_str(text).unwrap(), "drive", &ctx)
    }

    fn parse(text: &str) -> Result<TricycleDriveConfig, LoadError> {
        parse_with(text, &joints([-0.83, -0.29]))
    }

    const MINIMAL: &str = "{type: TricycleDrive, body: base, front_wheel_joint: front_wheel, \
                           rear_left_wheel_joint: rear_left_wheel, rear_right_wheel_joint: rear_right_wheel";

    #[test]
    fn the_joints_give_the_wheelbase_and_track_and_defaults_follow_flatland() {
        let c = parse(&format!("{MINIMAL}}}")).unwrap();
        assert!((c.geometry.wheelbase_m - 0.83).abs() < 1e-12);
        assert!((c.geometry.axle_track_m - 0.58).abs() < 1e-12);
        assert_eq!(c.geometry.rear_center, [-0.83, 0.0]);
        let o = &c.odometry;
        assert_eq!((c.twist_sub.as_str(), o.odom_pub.as_str()), ("cmd_vel", "odometry/filtered"));
        assert_eq!((o.odom_frame_id.as_str(), o.ground_truth_frame_id.as_str()), ("odom", "map"));
        assert_eq!((c.max_steer_angle_rad, o.pub_rate_hz), (0.0, f64::INFINITY));
        // as Flatland's tricycle: world-frame twist, no twist topic, no tf
        assert!(o.enable_odom_pub && !o.enable_twist_pub && !o.enable_odom_tf_pub && !o.twist_in_local_frame);
        assert_eq!(c.angular_dynamics, DynamicsLimitsConfig::default());
    }

    #[test]
    fn the_deprecated_steering_limits_fill_in_only_limits_left_at_zero() {
        let c = parse(&format!("{MINIMAL}, max_angular_velocity: 1.5, max_steer_acceleration: 3}}")).unwrap();
        assert_eq!(
            c.angular_dynamics,
            DynamicsLimitsConfig { acceleration_limit: 3.0, deceleration_limit: 3.0, velocity_limit: 1.5 }
        );
        let c = parse(&format!(
            "{MINIMAL}, angular_dynamics: {{velocity_limit: 0.5, acceleration_limit: 2}}, max_angular_velocity: 1.5, \
             max_steer_acceleration: 3}}"
        ))
        .unwrap();
        assert_eq!(
            c.angular_dynamics,
            DynamicsLimitsConfig { acceleration_limit: 2.0, deceleration_limit: 2.0, velocity_limit: 0.5 }
        );
    }

    #[test]
    fn bad_joints_are_refused_with_flatlands_words() {
        let error = |text: &str, joints: &[JointDescription]| parse_with(text, joints).unwrap_err().to_string();
        let ok = joints([-0.83, -0.29]);
        assert!(error(&(MINIMAL.replace("front_wheel_joint: front_wheel", "front_wheel_joint: nope") + "}"), &ok)
            .contains("Joint with name \"nope\" does not exist"));
        let swapped = MINIMAL.replace("front_wheel_joint: front_wheel", "front_wheel_joint: rear_left_wheel") + "}";
        assert!(error(&swapped, &ok).contains("Front wheel joint must be a revolute joint"));
        // the rear axle not bisected by the perpendicular from the front wheel
        assert!(error(&format!("{MINIMAL}}}"), &joints([-0.83, -0.35])).contains("perpendicular intersection"));
        let mut off_wheel = joints([-0.83, -0.29]);
        off_wheel[1].anchors[0] = [0.1, 0.0];
        assert!(error(&format!("{MINIMAL}}}"), &off_wheel).contains("must be anchored at (0, 0) on the wheel"));
        let mut front_off = joints([-0.83, -0.29]);
        front_off[0].anchors[1] = [0.2, 0.0];
        assert!(error(&format!("{MINIMAL}}}"), &front_off).contains("body anchored at (0, 0)"));
        let other_body = MINIMAL.replace("body: base", "body: front") + "}";
        assert!(error(&other_body, &ok).contains("does not anchor on body \"front\""));
        assert!(error(&format!("{MINIMAL}, max_steer_angle: -1}}"), &ok).contains("max_steer_angle"));
        assert!(error(&format!("{MINIMAL}, steer_lag: 1}}"), &ok).contains("steer_lag"));
        // DiffDrive's own entries are not a tricycle's
        assert!(error(&format!("{MINIMAL}, enable_twist_pub: true}}"), &ok).contains("enable_twist_pub"));
    }
}
