//! Flatland's TricycleDrive as a model: `cmd_vel`'s `linear.x` is the front
//! wheel's speed and `angular.z` its steering angle. The steering angle
//! follows its command within the steering rate and acceleration limits
//! (`angular_dynamics`) and `max_steer_angle`; the speed within
//! `linear_dynamics`. The body then moves as a bicycle about the rear axle:
//! the rear centre along the body's x axis at `v·cos δ`, the body turning at
//! `v·sin δ / wheelbase`.

use flotilla_plugins::tricycle_drive::{TricycleDriveConfig, TricycleGeometry};
use flotilla_wire::drive_to_world::BodyCommand;
use flotilla_wire::world_to_nodes::BodyId;

use crate::commands::Commands;
use crate::limits::{saturate, DynamicsLimits};

/// One tricycle's drive state.
#[derive(Debug, Clone)]
pub struct Tricycle {
    geometry: TricycleGeometry,
    max_steer_angle_rad: f64,
    /// Limits on the steering rate.
    steering: DynamicsLimits,
    /// Limits on the front wheel's speed.
    speed: DynamicsLimits,
    /// (front wheel speed m/s, steering angle rad) commands.
    commands: Commands,
    state: Wheel,
    /// The last step, with the state before it, so that a command arriving
    /// before the world takes that step can be folded into it.
    last_step: Option<(u64, f64, Wheel)>,
}

/// The front wheel: how it is steered and how fast it rolls.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Wheel {
    /// Steering angle, rad (positive: to the left).
    pub steer_rad: f64,
    /// Steering rate, rad/s.
    pub steer_rate_radps: f64,
    /// Rolling speed, m/s.
    pub speed_mps: f64,
}

impl Tricycle {
    /// A tricycle at rest, steered straight ahead.
    pub fn new(config: &TricycleDriveConfig) -> Tricycle {
        Tricycle {
            geometry: config.geometry,
            max_steer_angle_rad: config.max_steer_angle_rad,
            steering: DynamicsLimits::new(config.angular_dynamics),
            speed: DynamicsLimits::new(config.linear_dynamics),
            commands: Commands::new(config.cmd_vel_timeout_s),
            state: Wheel::default(),
            last_step: None,
        }
    }

    /// The front wheel now.
    pub fn wheel(&self) -> Wheel {
        self.state
    }

    /// Whether a command asks for more speed or steering than the limits
    /// allow (it is then clamped to them).
    pub fn beyond_limits(&self, speed_mps: f64, steer_rad: f64) -> bool {
        self.speed.exceeds(speed_mps) || (self.max_steer_angle_rad > 0.0 && steer_rad.abs() > self.max_steer_angle_rad)
    }

    /// A `cmd_vel` (speed m/s, steering angle rad) that takes effect at the
    /// first step after `apply_after_ns` (see `DiffDrive::command`).
    pub fn command(&mut self, speed_mps: f64, steer_rad: f64, apply_after_ns: u64) -> bool {
        self.commands.push((speed_mps, steer_rad), apply_after_ns)
    }

    /// Advances by one step of `dt_s` at sim time `now_ns`: the body's
    /// velocity for the next step.
    pub fn step(&mut self, body: BodyId, now_ns: u64, dt_s: f64) -> BodyCommand {
        self.commands.take_due(now_ns);
        self.last_step = Some((now_ns, dt_s, self.state));
        self.advance(body, now_ns, dt_s)
    }

    /// A plain command taking effect at once, outside lockstep: the last
    /// step is redone from the state before it (see `DiffDrive::command_now`).
    pub fn command_now(&mut self, body: BodyId, speed_mps: f64, steer_rad: f64) -> Option<BodyCommand> {
        if !(speed_mps.is_finite() && steer_rad.is_finite()) {
            return None;
        }
        let Some((now_ns, dt_s, before)) = self.last_step else {
            self.command(speed_mps, steer_rad, 0);
            return None;
        };
        self.commands.set((speed_mps, steer_rad), now_ns);
        self.state = before;
        Some(self.advance(body, now_ns, dt_s))
    }

    fn advance(&mut self, body: BodyId, now_ns: u64, dt_s: f64) -> BodyCommand {
        // A stale command stops the wheel and leaves the steering where it is.
        let (speed_target, steer_target) = self.commands.target(now_ns).unwrap_or((0.0, self.state.steer_rad));
        let wheel = &mut self.state;
        // Flatland's steering: full rate towards the commanded angle unless
        // the angle left is within the distance needed to stop turning, in
        // which case the rate is brought to zero.
        let gap = steer_target - wheel.steer_rad;
        let acceleration = self.steering.config.acceleration_limit;
        let stopping_rad = if acceleration == 0.0 {
            gap.abs()
        } else {
            wheel.steer_rate_radps * wheel.steer_rate_radps / 2.0 / acceleration
        };
        let rate_target = if gap.abs() >= stopping_rad { gap / dt_s } else { 0.0 };
        wheel.steer_rate_radps = self.steering.step(wheel.steer_rate_radps, rate_target, dt_s);
        wheel.steer_rad += wheel.steer_rate_radps * dt_s;
        if self.max_steer_angle_rad != 0.0 {
            wheel.steer_rad = saturate(wheel.steer_rad, -self.max_steer_angle_rad, self.max_steer_angle_rad);
        }
        wheel.speed_mps = self.speed.step(wheel.speed_mps, speed_target, dt_s);
        body_velocity(body, &self.geometry, *wheel)
    }
}

/// The velocity of the body origin (in the body frame) and the yaw rate of
/// a tricycle whose front wheel is `wheel`.
pub fn body_velocity(body: BodyId, geometry: &TricycleGeometry, wheel: Wheel) -> BodyCommand {
    let (sin, cos) = wheel.steer_rad.sin_cos();
    let omega = wheel.speed_mps * sin / geometry.wheelbase_m;
    // The rear centre moves along the body's x axis; the origin, r away
    // from it, adds ω × r.
    let [rx, ry] = geometry.rear_center;
    BodyCommand {
        body,
        local_vx_mps: wheel.speed_mps * cos + omega * ry,
        local_vy_mps: -omega * rx,
        omega_radps: omega,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_plugins::PluginContext;
    use flotilla_wire::description::{JointDescription, JointKind};

    const STEP_NS: u64 = 5_000_000;
    const DT_S: f64 = 0.005;

    /// Flatland's cleaner geometry (wheelbase 0.83 m) with `extra` entries.
    fn tricycle(extra: &str) -> Tricycle {
        let weld = JointKind::Weld { angle: 0.0, frequency: 0.0, damping: 0.0 };
        let joints: Vec<JointDescription> = [
            ("front_wheel", JointKind::Revolute { limits: None }, [0.0, 0.0]),
            ("rear_left_wheel", weld.clone(), [-0.83, 0.29]),
            ("rear_right_wheel", weld, [-0.83, -0.29]),
        ]
        .into_iter()
        .map(|(name, kind, on_base)| JointDescription {
            name: name.into(),
            kind,
            bodies: ["wheel".into(), "base".into()],
            anchors: [[0.0, 0.0], on_base],
            collide_connected: false,
        })
        .collect();
        let layers = vec![];
        let ctx = PluginContext {
            model_file: std::path::Path::new("cleaner.model.yaml"),
            model: "cleaner",
            bodies: vec!["base", "wheel"],
            joints: &joints,
            layer_names: &layers,
        };
        let yaml = format!(
            "{{body: base, front_wheel_joint: front_wheel, rear_left_wheel_joint: rear_left_wheel, \
             rear_right_wheel_joint: rear_right_wheel, cmd_vel_timeout: 0{extra}}}"
        );
        Tricycle::new(&TricycleDriveConfig::parse(&serde_yaml::from_str(&yaml).unwrap(), "drive", &ctx).unwrap())
    }

    fn run(t: &mut Tricycle, steps: u64) -> BodyCommand {
        let mut out = None;
        for k in 1..=steps {
            out = Some(t.step(1, k * STEP_NS, DT_S));
        }
        out.unwrap()
    }

    #[test]
    fn without_limits_it_steers_at_once_and_turns_as_a_bicycle() {
        let mut t = tricycle("");
        t.command(0.5, 0.3, 0);
        let out = t.step(1, STEP_NS, DT_S);
        assert!((t.wheel().steer_rad - 0.3).abs() < 1e-12);
        let omega = 0.5 * 0.3f64.sin() / 0.83;
        assert!((out.omega_radps - omega).abs() < 1e-12);
        // The origin is the front wheel: it rolls along its own heading.
        assert!((out.local_vx_mps - 0.5 * 0.3f64.cos()).abs() < 1e-12);
        assert!((out.local_vy_mps - 0.5 * 0.3f64.sin()).abs() < 1e-12);
    }

    #[test]
    fn the_steering_rate_and_angle_are_limited() {
        let mut t = tricycle(", max_steer_angle: 0.4, angular_dynamics: {velocity_limit: 1.0}");
        t.command(0.0, 1.0, 0);
        run(&mut t, 20); // 0.1 s at 1 rad/s
        assert!((t.wheel().steer_rad - 0.1).abs() < 1e-9, "{:?}", t.wheel());
        run(&mut t, 200);
        assert_eq!(t.wheel().steer_rad, 0.4, "held at max_steer_angle");
    }

    #[test]
    fn with_an_acceleration_limit_the_steering_settles_on_the_command_without_overshoot() {
        let mut t = tricycle(", angular_dynamics: {acceleration_limit: 2.0, velocity_limit: 1.0}");
        t.command(0.0, 0.5, 0);
        let mut peak: f64 = 0.0;
        for k in 1..=400 {
            t.step(1, k * STEP_NS, DT_S);
            peak = peak.max(t.wheel().steer_rad);
            assert!(t.wheel().steer_rate_radps.abs() <= 1.0 + 1e-12);
        }
        assert!((t.wheel().steer_rad - 0.5).abs() < 0.01, "{:?}", t.wheel());
        assert!(peak < 0.5 + 0.01, "overshoot to {peak}");
        // the first step accelerates at 2 rad/s² only
        let mut fresh = tricycle(", angular_dynamics: {acceleration_limit: 2.0}");
        fresh.command(0.0, 0.5, 0);
        fresh.step(1, STEP_NS, DT_S);
        assert!((fresh.wheel().steer_rate_radps - 2.0 * DT_S).abs() < 1e-12);
    }

    #[test]
    fn the_speed_ramps_within_the_linear_limits() {
        let mut t = tricycle(", linear_dynamics: {acceleration_limit: 1.0}");
        t.command(1.0, 0.0, 0);
        let out = run(&mut t, 100);
        assert!((out.local_vx_mps - 0.5).abs() < 1e-9, "half a second at 1 m/s²: {out:?}");
        assert_eq!(out.omega_radps, 0.0);
    }

    #[test]
    fn a_stale_command_stops_the_wheel_and_keeps_the_steering() {
        let mut t = tricycle("").clone();
        t.commands = Commands::new(0.5);
        t.command(0.8, 0.2, 0);
        run(&mut t, 10);
        let out = t.step(1, 200 * STEP_NS, DT_S);
        assert_eq!((out.local_vx_mps, out.omega_radps), (0.0, 0.0));
        assert!((t.wheel().steer_rad - 0.2).abs() < 1e-12);
    }

    #[test]
    fn a_rear_centre_off_the_x_axis_adds_the_turn_to_the_origin_velocity() {
        let geometry = TricycleGeometry { rear_center: [-1.0, 0.0], wheelbase_m: 1.0, axle_track_m: 0.5 };
        let straight = body_velocity(7, &geometry, Wheel { steer_rad: 0.0, steer_rate_radps: 0.0, speed_mps: 2.0 });
        assert_eq!(straight, BodyCommand { body: 7, local_vx_mps: 2.0, local_vy_mps: 0.0, omega_radps: 0.0 });
        let turning =
            body_velocity(7, &geometry, Wheel { steer_rad: std::f64::consts::FRAC_PI_2, ..Default::default() });
        assert_eq!(turning.omega_radps, 0.0, "no speed, no turn");
    }
}
