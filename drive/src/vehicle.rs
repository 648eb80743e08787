//! vehicle_dynamics_sim's vehicle models: a `cmd_vel` goes through the
//! vehicle's actuators (see [`crate::actuators`]) and its kinematics to the
//! velocity of the body origin.
//!
//! - **bicycle** (Ackermann): the command's yaw rate becomes a steering
//!   angle `δ = atan(ω·L / v)`; the drive actuator turns the fixed axle (or
//!   the steered wheel, `drive_on_steered_wheel`, whose speed is then
//!   `v / cos δ`), and the body turns at `v·tan δ / L` (`v` at the fixed
//!   axle). With `reverse` the steered axle is behind the fixed one.
//! - **differential**: each wheel's speed `v ∓ ω·track/2` goes through its
//!   own drive actuator; when a wheel would exceed `max_velocity`, the
//!   forward speed gives way so that the turn is kept.
//! - **omni**: x, y and yaw rate each through their own actuator.
//!
//! The body origin is `base_link_offset` ahead of the fixed axle (the
//! centre between the wheels): it moves at the axle's velocity plus
//! `ω × offset`.

use flotilla_plugins::vehicle::{VehicleConfig, VehicleModel};
use flotilla_wire::drive_to_world::BodyCommand;
use flotilla_wire::world_to_nodes::BodyId;

use crate::actuators::{DriveActuator, SteeringActuator};
use crate::commands::Commands;

/// Below this forward speed (m/s) a bicycle keeps its steering angle: a
/// yaw rate with no speed names no angle.
const STANDSTILL_MPS: f64 = 1e-6;

/// One vehicle's actuators and commands.
#[derive(Debug, Clone)]
pub struct Vehicle {
    model: Actuated,
    base_link_offset_m: f64,
    /// (linear.x, linear.y, angular.z) commands.
    commands: Commands<[f64; 3]>,
    /// The velocity reached at the last step, body origin, body frame.
    actual: [f64; 3],
    /// A bicycle's steering rate over the last step, rad/s.
    steering_rate_radps: f64,
}

#[derive(Debug, Clone)]
enum Actuated {
    Bicycle { wheel_base_m: f64, on_steered: bool, reverse: bool, drive: DriveActuator, steering: SteeringActuator },
    Differential { track_m: f64, max_velocity: f64, left: DriveActuator, right: DriveActuator },
    Omni { x: DriveActuator, y: DriveActuator, yaw: DriveActuator },
}

impl Vehicle {
    /// At rest.
    pub fn new(config: &VehicleConfig) -> Vehicle {
        let model = match config.model {
            VehicleModel::Bicycle { wheel_base_m, drive_on_steered_wheel, reverse, drive, steering } => {
                Actuated::Bicycle {
                    wheel_base_m,
                    on_steered: drive_on_steered_wheel,
                    reverse,
                    drive: DriveActuator::new(drive),
                    steering: SteeringActuator::new(steering),
                }
            }
            VehicleModel::Differential { track_m, drive } => Actuated::Differential {
                track_m,
                max_velocity: drive.max_velocity,
                left: DriveActuator::new(drive),
                right: DriveActuator::new(drive),
            },
            VehicleModel::Omni { drive, rotation } => Actuated::Omni {
                x: DriveActuator::new(drive),
                y: DriveActuator::new(drive),
                yaw: DriveActuator::new(rotation),
            },
        };
        Vehicle {
            model,
            base_link_offset_m: config.base_link_offset_m,
            commands: Commands::new(config.cmd_vel_timeout_s),
            actual: [0.0; 3],
            steering_rate_radps: 0.0,
        }
    }

    /// A `cmd_vel` (linear.x m/s, linear.y m/s, angular.z rad/s) in force
    /// after `apply_after_ns` (see `DiffDrive::command`).
    pub fn command(&mut self, twist: [f64; 3], apply_after_ns: u64) -> bool {
        self.commands.push(twist, apply_after_ns)
    }

    /// Whether a command asks for more than an actuator's limit allows (it
    /// is then clamped as the model says).
    pub fn beyond_limits(&self, [vx, vy, wz]: [f64; 3]) -> bool {
        match &self.model {
            Actuated::Bicycle { wheel_base_m, drive, steering, .. } => {
                let angle = if vx.abs() > STANDSTILL_MPS { (wz * *wheel_base_m / vx).atan() } else { 0.0 };
                drive.exceeds(vx) || steering.exceeds(angle)
            }
            Actuated::Differential { track_m, left, .. } => {
                left.exceeds(vx - wz * *track_m / 2.0) || left.exceeds(vx + wz * *track_m / 2.0)
            }
            Actuated::Omni { x, y, yaw } => x.exceeds(vx) || y.exceeds(vy) || yaw.exceeds(wz),
        }
    }

    /// The velocity reached: (forward, sideways, yaw rate) of the body origin.
    pub fn actual(&self) -> [f64; 3] {
        self.actual
    }

    /// The steering angle, rad, of a bicycle.
    pub fn steering_rad(&self) -> Option<f64> {
        match &self.model {
            Actuated::Bicycle { steering, .. } => Some(steering.angle()),
            _ => None,
        }
    }

    /// A bicycle's steering angle (rad) and its rate over the last step (rad/s).
    pub fn steering_state(&self) -> Option<(f64, f64)> {
        self.steering_rad().map(|angle| (angle, self.steering_rate_radps))
    }

    /// Advances by one step of `dt_s` ending at `now_ns`: the body's velocity
    /// for the next step.
    pub fn step(&mut self, body: BodyId, now_ns: u64, dt_s: f64) -> BodyCommand {
        self.commands.take_due(now_ns);
        let [vx, vy, wz] = self.commands.target(now_ns).unwrap_or_default();
        let (forward, sideways, omega) = match &mut self.model {
            Actuated::Bicycle { wheel_base_m, on_steered, reverse, drive, steering } => {
                let sign = if *reverse { -1.0 } else { 1.0 };
                let target_angle =
                    if vx.abs() > STANDSTILL_MPS { (sign * wz * *wheel_base_m / vx).atan() } else { steering.angle() };
                let before = steering.angle();
                let angle = steering.step(now_ns, dt_s, target_angle);
                self.steering_rate_radps = flotilla_wire::geometry::wrap_angle(angle - before) / dt_s;
                if *on_steered {
                    let cos = target_angle.cos();
                    let wheel = drive.step(now_ns, dt_s, if cos.abs() > 1e-9 { vx / cos } else { vx });
                    (wheel * angle.cos(), 0.0, sign * wheel * angle.sin() / *wheel_base_m)
                } else {
                    let v = drive.step(now_ns, dt_s, vx);
                    (v, 0.0, sign * v * angle.tan() / *wheel_base_m)
                }
            }
            Actuated::Differential { track_m, max_velocity, left, right } => {
                let turn = wz * *track_m / 2.0;
                let (mut linear, mut turn) = (vx, turn);
                if *max_velocity > 0.0 {
                    // Keep the turn; the forward speed gives way.
                    turn = turn.clamp(-*max_velocity, *max_velocity);
                    let room = *max_velocity - turn.abs();
                    linear = linear.clamp(-room, room);
                }
                let l = left.step(now_ns, dt_s, linear - turn);
                let r = right.step(now_ns, dt_s, linear + turn);
                ((l + r) / 2.0, 0.0, (r - l) / *track_m)
            }
            Actuated::Omni { x, y, yaw } => {
                (x.step(now_ns, dt_s, vx), y.step(now_ns, dt_s, vy), yaw.step(now_ns, dt_s, wz))
            }
        };
        // The fixed axle's velocity, moved to the body origin ahead of it.
        self.actual = [forward, sideways + omega * self.base_link_offset_m, omega];
        BodyCommand { body, local_vx_mps: self.actual[0], local_vy_mps: self.actual[1], omega_radps: self.actual[2] }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_plugins::PluginContext;
    use std::path::Path;

    const STEP_NS: u64 = 5_000_000;
    const DT_S: f64 = 0.005;

    fn vehicle(yaml: &str) -> Vehicle {
        let ctx = PluginContext::single_body(Path::new("car.model.yaml"), "car", "base", &[]);
        let entry = serde_yaml::from_str(&format!("{{body: base, cmd_vel_timeout: 0, {yaml}}}")).unwrap();
        Vehicle::new(&VehicleConfig::parse(&entry, "vehicle", &ctx).unwrap())
    }

    /// Steps `from + 1 ..= to` (5 ms each); the last output.
    fn run_between(v: &mut Vehicle, from: u64, to: u64) -> BodyCommand {
        let mut out = None;
        for k in from + 1..=to {
            out = Some(v.step(1, k * STEP_NS, DT_S));
        }
        out.unwrap()
    }

    fn run(v: &mut Vehicle, steps: u64) -> BodyCommand {
        run_between(v, 0, steps)
    }

    #[test]
    fn a_bicycle_turns_at_v_tan_delta_over_the_wheel_base() {
        let mut car = vehicle("model: bicycle, model_params: {bicycle: {wheel_base: 2.0}}");
        car.command([2.0, 0.0, 0.5], 0);
        let out = run(&mut car, 10);
        // no actuator limits: the angle atan(0.5·2/2) at once, and the yaw rate commanded
        assert!((car.steering_rad().unwrap() - 0.5f64.atan()).abs() < 1e-12);
        assert!((out.omega_radps - 0.5).abs() < 1e-12 && (out.local_vx_mps - 2.0).abs() < 1e-12, "{out:?}");
        // reversed (a forklift, steered wheel behind): the same turn needs the opposite angle
        let mut forklift = vehicle(
            "model: bicycle, model_params: {bicycle: {wheel_base: 2.0, reverse: true, drive_on_steered_wheel: true}}",
        );
        forklift.command([1.0, 0.0, 0.25], 0);
        let out = run(&mut forklift, 10);
        assert!(forklift.steering_rad().unwrap() < 0.0);
        assert!((out.omega_radps - 0.25).abs() < 1e-12 && (out.local_vx_mps - 1.0).abs() < 1e-12, "{out:?}");
    }

    #[test]
    fn a_bicycle_s_actuators_shape_its_response() {
        let mut car = vehicle(
            "model: bicycle, model_params: {bicycle: {wheel_base: 2.7, drive_actuator: {dead_time: 0.1, max_acceleration: 2}, \
             steering_actuator: {max_position: 0.3, max_velocity: 0.5}}}",
        );
        car.command([10.0, 0.0, 5.0], 0);
        let at_100ms = run(&mut car, 20);
        assert_eq!(at_100ms.local_vx_mps, 0.0, "still within the 0.1 s dead time");
        let at_1s = run_between(&mut car, 20, 200);
        // 0.9 s of 2 m/s² after the dead time (one step of it already)
        assert!((at_1s.local_vx_mps - 1.8).abs() < 0.011, "{at_1s:?}");
        assert!((car.steering_rad().unwrap() - 0.3).abs() < 1e-12, "held at max_position");
    }

    #[test]
    fn a_differential_drive_keeps_the_turn_when_a_wheel_saturates() {
        let mut robot = vehicle(
            "model: differential, model_params: {differential: {track: 0.5, drive_actuators: {max_velocity: 0.8}}}",
        );
        robot.command([1.0, 0.0, 2.0], 0);
        let out = run(&mut robot, 5);
        // the turn needs ±0.5 m/s at the wheels: 0.3 m/s is left for going forward
        assert!((out.omega_radps - 2.0).abs() < 1e-12 && (out.local_vx_mps - 0.3).abs() < 1e-12, "{out:?}");
    }

    #[test]
    fn commands_beyond_an_actuator_s_limits_are_told_apart() {
        let car = vehicle(
            "model: bicycle, model_params: {bicycle: {wheel_base: 2.0, drive_actuator: {max_velocity: 5}, \
             steering_actuator: {max_position: 0.5}}}",
        );
        assert!(!car.beyond_limits([4.0, 0.0, 0.5]));
        assert!(car.beyond_limits([6.0, 0.0, 0.0]), "too fast");
        assert!(car.beyond_limits([1.0, 0.0, 1.0]), "atan(1·2/1) > 0.5 rad: too sharp");
        let robot = vehicle(
            "model: differential, model_params: {differential: {track: 0.5, drive_actuators: {max_velocity: 0.8}}}",
        );
        assert!(robot.beyond_limits([0.5, 0.0, 2.0]) && !robot.beyond_limits([0.5, 0.0, 1.0]));
    }

    #[test]
    fn an_omni_vehicle_moves_sideways_and_the_offset_adds_the_turn() {
        let mut omni = vehicle("model: omni, base_link_offset: 0.5");
        omni.command([0.2, 0.3, 1.0], 0);
        let out = run(&mut omni, 5);
        assert_eq!((out.local_vx_mps, out.local_vy_mps, out.omega_radps), (0.2, 0.3 + 0.5, 1.0));
    }
}
