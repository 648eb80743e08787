//! `VehicleDynamics`: vehicle_dynamics_sim's vehicle models as a Flotilla
//! plugin (its parameter names, under Flatland-style topic parameters).
//!
//! ```yaml
//! - type: VehicleDynamics
//!   name: vehicle
//!   body: base
//!   model: bicycle                      # bicycle | differential | omni
//!   base_link_offset: 0.0               # m, from the fixed axle to the body origin, along +x
//!   model_params:
//!     bicycle:
//!       wheel_base: 2.7                 # m
//!       drive_on_steered_wheel: false   # rear-wheel drive
//!       reverse: false                  # steered axle in front of the fixed one
//!       drive_actuator: {dead_time: 0.1, time_constant: 0.2, max_velocity: 15, max_acceleration: 3}
//!       steering_actuator: {dead_time: 0.05, time_constant: 0.1, max_position: 0.61, max_velocity: 1.0}
//! ```
//!
//! `differential` takes `track` and `drive_actuators` (both wheels);
//! `omni` takes `drive_actuators` (x and y) and `rotation_actuator`. The
//! `vis_*` parameters are read and unused (visualization only, as in
//! vehicle_dynamics_sim). Blocks of the models not chosen may be present, as
//! in vehicle_dynamics_sim's `all_vehicles.yaml`, and are checked too.

use serde_yaml::Value;

use super::diff_drive::DEFAULT_CMD_VEL_TIMEOUT_S;
use super::odometry::OdometryConfig;
use super::{check_topic, PluginContext};
use crate::config::{LoadError, Reader};
use crate::role::Role;
use crate::topic::TopicSpec;
use flotilla_messages::geometry_msgs::{Twist, TwistStamped};
use flotilla_messages::sensor_msgs::JointState;
use flotilla_wire::names::resolve_topic;

/// An actuator: dead time, saturation, first-order lag and a rate limit.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ActuatorConfig {
    /// Transport delay, s.
    pub dead_time_s: f64,
    /// First-order low-pass time constant, s (0: none).
    pub time_constant_s: f64,
    /// Velocity limit, m/s or rad/s (0: none).
    pub max_velocity: f64,
    /// Acceleration limit of a drive actuator, m/s² or rad/s² (0: none).
    pub max_acceleration: f64,
    /// Position limit of a steering actuator, rad (0: none).
    pub max_position_rad: f64,
}

/// The vehicle model and its geometry.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum VehicleModel {
    /// Ackermann steering, as a bicycle.
    Bicycle {
        /// Axle to axle, m.
        wheel_base_m: f64,
        /// Driven on the steered wheel (else on the fixed axle).
        drive_on_steered_wheel: bool,
        /// The steered axle is behind the fixed one (a forklift).
        reverse: bool,
        /// The drive motor.
        drive: ActuatorConfig,
        /// The steering.
        steering: ActuatorConfig,
    },
    /// Two driven wheels.
    Differential {
        /// Wheel to wheel, m.
        track_m: f64,
        /// Each wheel's motor.
        drive: ActuatorConfig,
    },
    /// Three independent axes.
    Omni {
        /// The x and y motors.
        drive: ActuatorConfig,
        /// The rotation.
        rotation: ActuatorConfig,
    },
}

/// A validated `VehicleDynamics` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct VehicleConfig {
    /// Plugin name.
    pub name: String,
    /// The driven body.
    pub body: String,
    /// The model chosen.
    pub model: VehicleModel,
    /// From the fixed axle (the axle's centre for a differential drive) to
    /// the body origin, along +x, m.
    pub base_link_offset_m: f64,
    /// Subscribed command topic (`Twist` or `TwistStamped`).
    pub twist_sub: String,
    /// The velocity reached, as `TwistStamped` in the body frame.
    pub twist_actual_pub: String,
    /// A bicycle's steering state, as `sensor_msgs/JointState` (joint
    /// `<namespace>_steering`, its angle and rate).
    pub joint_states_pub: String,
    /// Sim seconds without a command after which the command is zero.
    pub cmd_vel_timeout_s: f64,
    /// What `flotilla-odom` publishes.
    pub odometry: OdometryConfig,
}

impl super::PluginConfig for VehicleConfig {
    const TYPE: &'static str = "VehicleDynamics";
    const ROLES: &'static [Role] = &[VehicleConfig::DRIVE_ROLE, VehicleConfig::ODOM_ROLE];
    const EXAMPLE: &'static str = "{type: VehicleDynamics, name: vehicle, body: base, model: differential, \
                                   model_params: {differential: {track: 0.5}}}";
    const DRIVES_ROBOT: bool = true;
    fn drive_interface(&self) -> Option<super::DriveInterface> {
        Some(super::DriveInterface { twist_sub: self.twist_sub.clone(), odometry: self.odometry.clone() })
    }
    fn parse(entry: &Value, name: &str, ctx: &PluginContext) -> Result<VehicleConfig, LoadError> {
        VehicleConfig::parse(entry, name, ctx)
    }
    fn body(&self) -> &str {
        &self.body
    }
    fn topics(&self, namespace: &str) -> Vec<TopicSpec> {
        let name = |topic: &str| resolve_topic(namespace, topic);
        let mut topics = vec![
            TopicSpec::subscribe::<Twist>(name(&self.twist_sub)),
            TopicSpec::publish::<TwistStamped>(name(&self.twist_actual_pub)),
        ];
        if matches!(self.model, VehicleModel::Bicycle { .. }) {
            topics.push(TopicSpec::publish::<JointState>(name(&self.joint_states_pub)));
        }
        topics.extend(self.odometry.topics(namespace));
        topics
    }
}

fn actuator(parent: &Reader, key: &str, steering: bool) -> Result<ActuatorConfig, LoadError> {
    let Some(r) = parent.sub(key, format!("{} \"{key}\"", parent.entity()))? else {
        return Ok(ActuatorConfig::default());
    };
    let config = ActuatorConfig {
        dead_time_s: r.opt("dead_time", 0.0)?,
        time_constant_s: r.opt("time_constant", 0.0)?,
        max_velocity: r.opt("max_velocity", 0.0)?,
        max_acceleration: if steering { 0.0 } else { r.opt("max_acceleration", 0.0)? },
        max_position_rad: if steering { r.opt("max_position", 0.0)? } else { 0.0 },
    };
    r.finish()?;
    for (name, value) in [
        ("dead_time", config.dead_time_s),
        ("time_constant", config.time_constant_s),
        ("max_velocity", config.max_velocity),
        ("max_acceleration", config.max_acceleration),
        ("max_position", config.max_position_rad),
    ] {
        if !value.is_finite() || value < 0.0 {
            return Err(r.error(format!("\"{name}\" must be a finite number ≥ 0 (0 = none), got {value}")));
        }
    }
    if config.dead_time_s > 10.0 {
        return Err(r.error(format!("\"dead_time\" of {} s is beyond the 10 s Flotilla keeps", config.dead_time_s)));
    }
    Ok(config)
}

/// Reads `model_params.<kind>` (each present block is checked).
fn model_params(r: &Reader, model: &str) -> Result<VehicleModel, LoadError> {
    let entity = format!("{} \"model_params\"", r.entity());
    let params = r.sub("model_params", entity)?;
    let block = |kind: &str| -> Result<Option<Reader>, LoadError> {
        match &params {
            Some(p) => p.sub(kind, format!("{} \"{kind}\"", p.entity())),
            None => Ok(None),
        }
    };
    let positive = |b: &Reader, key: &str, value: f64| -> Result<f64, LoadError> {
        if value.is_finite() && value > 0.0 {
            Ok(value)
        } else {
            Err(b.error(format!("\"{key}\" must be a positive number of metres, got {value}")))
        }
    };
    let mut chosen = None;
    if let Some(b) = block("bicycle")? {
        let wheel_base_m: f64 = b.req("wheel_base")?;
        let bicycle = VehicleModel::Bicycle {
            wheel_base_m,
            drive_on_steered_wheel: b.opt("drive_on_steered_wheel", false)?,
            reverse: b.opt("reverse", false)?,
            drive: actuator(&b, "drive_actuator", false)?,
            steering: actuator(&b, "steering_actuator", true)?,
        };
        for key in ["vis_track_fixed", "vis_track_steered", "vis_tire_diameter", "track_steered"] {
            b.raw(key);
        }
        b.finish()?;
        positive(&b, "wheel_base", wheel_base_m)?;
        if model == "bicycle" {
            chosen = Some(bicycle);
        }
    }
    if let Some(b) = block("differential")? {
        let track_m: f64 = b.req("track")?;
        let differential = VehicleModel::Differential { track_m, drive: actuator(&b, "drive_actuators", false)? };
        b.raw("vis_tire_diameter");
        b.finish()?;
        positive(&b, "track", track_m)?;
        if model == "differential" {
            chosen = Some(differential);
        }
    }
    if let Some(b) = block("omni")? {
        let omni = VehicleModel::Omni {
            drive: actuator(&b, "drive_actuators", false)?,
            rotation: actuator(&b, "rotation_actuator", false)?,
        };
        b.raw("vis_tire_diameter");
        b.finish()?;
        if model == "omni" {
            chosen = Some(omni);
        }
    }
    if let Some(p) = &params {
        p.finish()?;
    }
    match (model, chosen) {
        (_, Some(chosen)) => Ok(chosen),
        // An omni vehicle needs no geometry: its axes may go unlimited.
        ("omni", None) => {
            Ok(VehicleModel::Omni { drive: ActuatorConfig::default(), rotation: ActuatorConfig::default() })
        }
        ("bicycle" | "differential", None) => {
            Err(r.error(format!("model {model:?} needs \"model_params\": {{{model}: {{...}}}} with its geometry")))
        }
        (other, None) => Err(r.error(format!("unknown \"model\" {other:?}; expected bicycle, differential or omni"))),
    }
}

impl VehicleConfig {
    /// `flotilla-drive` turns `cmd_vel` into the body's velocity.
    pub const DRIVE_ROLE: Role = Role::actuator("VehicleDynamics", "flotilla-drive", "drive");
    /// `flotilla-odom` publishes odometry and ground truth.
    pub const ODOM_ROLE: Role = Role::sensor("VehicleDynamics", "flotilla-odom", "odom");

    /// Parses and validates a `VehicleDynamics` entry.
    pub fn parse(entry: &Value, name: &str, ctx: &PluginContext) -> Result<VehicleConfig, LoadError> {
        let r = ctx.reader(entry, name)?;
        let body: String = r.req("body")?;
        let model_name: String = r.opt("model", "bicycle".to_string())?;
        let config = VehicleConfig {
            name: name.to_string(),
            model: model_params(&r, &model_name)?,
            base_link_offset_m: r.opt("base_link_offset", 0.0)?,
            twist_sub: r.opt("twist_sub", "cmd_vel".to_string())?,
            twist_actual_pub: r.opt("twist_actual_pub", "twist_actual".to_string())?,
            joint_states_pub: r.opt("joint_states_pub", "joint_states".to_string())?,
            cmd_vel_timeout_s: r.opt("cmd_vel_timeout", DEFAULT_CMD_VEL_TIMEOUT_S)?,
            odometry: OdometryConfig::read(&r, "VehicleDynamics", &body, true)?,
            body,
        };
        r.finish()?;
        ctx.check_body(&r, &config.body)?;
        check_topic(&r, "twist_sub", &config.twist_sub)?;
        check_topic(&r, "twist_actual_pub", &config.twist_actual_pub)?;
        check_topic(&r, "joint_states_pub", &config.joint_states_pub)?;
        config.odometry.check(&r)?;
        if !config.base_link_offset_m.is_finite() {
            return Err(r.error(format!("\"base_link_offset\" must be finite, got {}", config.base_link_offset_m)));
        }
        if !config.cmd_vel_timeout_s.is_finite() || config.cmd_vel_timeout_s < 0.0 {
            return Err(
                r.error(format!("\"cmd_vel_timeout\" must be ≥ 0 s (0 = never), got {}", config.cmd_vel_timeout_s))
            );
        }
        Ok(config)
    }

    /// What `flotilla-odom` publishes for it.
    pub fn odometry(&self) -> OdometryConfig {
        self.odometry.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<VehicleConfig, LoadError> {
        super::super::parse_in_test_model::<VehicleConfig>(text, "vehicle", &["l".to_string()])
    }

    #[test]
    fn vehicle_dynamics_sims_parameters_are_read() {
        let c = parse(
            "{body: base, model: bicycle, base_link_offset: 1.2, model_params: {bicycle: {wheel_base: 2.7, \
             drive_on_steered_wheel: true, reverse: true, vis_track_fixed: 1.5, \
             drive_actuator: {dead_time: 0.1, time_constant: 0.2, max_velocity: 15, max_acceleration: 3}, \
             steering_actuator: {max_position: 0.61, max_velocity: 1}}, differential: {track: 0.5}}}",
        )
        .unwrap();
        let VehicleModel::Bicycle { wheel_base_m, drive_on_steered_wheel, reverse, drive, steering } = c.model else {
            panic!("{c:?}")
        };
        assert_eq!((wheel_base_m, drive_on_steered_wheel, reverse), (2.7, true, true));
        assert_eq!(
            (drive.dead_time_s, drive.time_constant_s, drive.max_velocity, drive.max_acceleration),
            (0.1, 0.2, 15.0, 3.0)
        );
        assert_eq!((steering.max_position_rad, steering.max_velocity), (0.61, 1.0));
        assert_eq!(c.base_link_offset_m, 1.2);
        assert_eq!((c.twist_sub.as_str(), c.twist_actual_pub.as_str()), ("cmd_vel", "twist_actual"));
        let omni = parse("{body: base, model: omni}").unwrap();
        assert!(matches!(omni.model, VehicleModel::Omni { .. }));
    }

    #[test]
    fn bad_entries_are_refused_naming_them() {
        let error = |text: &str| parse(text).unwrap_err().to_string();
        assert!(error("{body: base, model: tank}").contains("unknown \"model\""));
        assert!(error("{body: base, model: bicycle}").contains("needs \"model_params\""));
        assert!(error("{body: base, model: differential, model_params: {differential: {track: 0}}}").contains("track"));
        assert!(error("{body: base, model: differential, model_params: {differential: {track: 1, drive_actuators: {max_position: 1}}}}")
            .contains("max_position"));
        assert!(error("{body: base, model: omni, model_params: {omni: {rotation_actuator: {dead_time: -1}}}}")
            .contains("dead_time"));
        assert!(error("{body: base, model: omni, model_params: {hovercraft: {}}}").contains("hovercraft"));
    }
}
