//! vehicle_dynamics_sim's actuators, stepped in sim time.
//!
//! A drive actuator (a velocity-controlled motor): dead time, then velocity
//! saturation, a first-order low-pass filter and an acceleration limit. A
//! steering actuator (position-controlled): dead time, then position
//! saturation, a first-order low-pass filter (on the wrapped angle
//! difference) and an angular velocity limit. A limit of 0 is none.

use std::collections::VecDeque;

use flotilla_plugins::vehicle::ActuatorConfig;
use flotilla_wire::geometry::wrap_angle;

/// A pure transport delay: the value commanded `dead_time` ago.
#[derive(Debug, Clone, Default)]
struct DeadTime {
    delay_ns: u64,
    /// (time commanded, value), oldest first.
    history: VecDeque<(u64, f64)>,
    /// The value in force before the oldest kept.
    current: f64,
}

impl DeadTime {
    fn new(delay_s: f64) -> DeadTime {
        DeadTime { delay_ns: (delay_s * 1e9).round() as u64, ..DeadTime::default() }
    }

    /// Records `value` commanded at `now_ns`; the value commanded at or
    /// before `now_ns − dead_time`.
    fn step(&mut self, now_ns: u64, value: f64) -> f64 {
        self.history.push_back((now_ns, value));
        let due = now_ns.saturating_sub(self.delay_ns);
        while let Some(&(at, v)) = self.history.front() {
            if at > due {
                break;
            }
            self.current = v;
            self.history.pop_front();
        }
        self.current
    }
}

/// The fraction of the way a first-order filter of `time_constant_s` moves
/// in `dt_s` (1: no filter).
fn low_pass_gain(time_constant_s: f64, dt_s: f64) -> f64 {
    if time_constant_s > 0.0 {
        1.0 - (-dt_s / time_constant_s).exp()
    } else {
        1.0
    }
}

fn clamp_abs(value: f64, limit: f64) -> f64 {
    if limit > 0.0 {
        value.clamp(-limit, limit)
    } else {
        value
    }
}

/// A velocity-controlled motor.
#[derive(Debug, Clone)]
pub struct DriveActuator {
    config: ActuatorConfig,
    delay: DeadTime,
    filtered: f64,
    velocity: f64,
}

impl DriveActuator {
    /// At rest.
    pub fn new(config: ActuatorConfig) -> DriveActuator {
        DriveActuator { config, delay: DeadTime::new(config.dead_time_s), filtered: 0.0, velocity: 0.0 }
    }

    /// The velocity reached.
    pub fn velocity(&self) -> f64 {
        self.velocity
    }

    /// Whether `target` is beyond the velocity limit (and so will be clamped).
    pub fn exceeds(&self, target: f64) -> bool {
        self.config.max_velocity > 0.0 && target.abs() > self.config.max_velocity
    }

    /// The velocity after a step of `dt_s` ending at `now_ns`, commanded `target`.
    pub fn step(&mut self, now_ns: u64, dt_s: f64, target: f64) -> f64 {
        let c = self.config;
        let delayed = clamp_abs(self.delay.step(now_ns, target), c.max_velocity);
        self.filtered += (delayed - self.filtered) * low_pass_gain(c.time_constant_s, dt_s);
        let change = self.filtered - self.velocity;
        self.velocity += if c.max_acceleration > 0.0 { clamp_abs(change, c.max_acceleration * dt_s) } else { change };
        self.velocity
    }
}

/// A position-controlled steering.
#[derive(Debug, Clone)]
pub struct SteeringActuator {
    config: ActuatorConfig,
    delay: DeadTime,
    filtered: f64,
    angle: f64,
}

impl SteeringActuator {
    /// Straight ahead.
    pub fn new(config: ActuatorConfig) -> SteeringActuator {
        SteeringActuator { config, delay: DeadTime::new(config.dead_time_s), filtered: 0.0, angle: 0.0 }
    }

    /// The angle reached, rad.
    pub fn angle(&self) -> f64 {
        self.angle
    }

    /// Whether `target` is beyond the position limit (and so will be clamped).
    pub fn exceeds(&self, target: f64) -> bool {
        self.config.max_position_rad > 0.0 && target.abs() > self.config.max_position_rad
    }

    /// The angle after a step of `dt_s` ending at `now_ns`, commanded `target` rad.
    pub fn step(&mut self, now_ns: u64, dt_s: f64, target: f64) -> f64 {
        let c = self.config;
        let delayed = clamp_abs(self.delay.step(now_ns, target), c.max_position_rad);
        self.filtered =
            wrap_angle(self.filtered + wrap_angle(delayed - self.filtered) * low_pass_gain(c.time_constant_s, dt_s));
        let change = wrap_angle(self.filtered - self.angle);
        let change = if c.max_velocity > 0.0 { clamp_abs(change, c.max_velocity * dt_s) } else { change };
        self.angle = wrap_angle(self.angle + change);
        self.angle
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STEP_NS: u64 = 1_000_000;
    const DT_S: f64 = 0.001;

    fn actuator(dead_time: f64, time_constant: f64, max_velocity: f64, max_acceleration: f64) -> DriveActuator {
        DriveActuator::new(ActuatorConfig {
            dead_time_s: dead_time,
            time_constant_s: time_constant,
            max_velocity,
            max_acceleration,
            max_position_rad: 0.0,
        })
    }

    /// The velocities after each of `steps` 1 ms steps commanded `target`.
    fn respond(a: &mut DriveActuator, steps: u64, target: f64) -> Vec<f64> {
        (1..=steps).map(|k| a.step(k * STEP_NS, DT_S, target)).collect()
    }

    #[test]
    fn dead_time_delays_the_step_by_exactly_that_long() {
        let out = respond(&mut actuator(0.05, 0.0, 0.0, 0.0), 60, 1.0);
        // commanded from the step at 1 ms
        assert_eq!(out[49], 0.0, "at 50 ms, 49 ms after: nothing yet");
        assert_eq!(out[50], 1.0, "at 51 ms, 50 ms after");
    }

    #[test]
    fn the_low_pass_reaches_63_percent_at_its_time_constant() {
        let out = respond(&mut actuator(0.0, 0.2, 0.0, 0.0), 200, 1.0);
        assert!((out[199] - (1.0 - (-1.0f64).exp())).abs() < 1e-9, "{}", out[199]);
    }

    #[test]
    fn velocity_and_acceleration_are_limited() {
        let mut a = actuator(0.0, 0.0, 0.8, 1.0);
        let out = respond(&mut a, 2000, 5.0);
        assert!((out[99] - 0.1).abs() < 1e-9, "1 m/s² for 0.1 s: {}", out[99]);
        assert!((out[1999] - 0.8).abs() < 1e-12, "held at max_velocity");
    }

    #[test]
    fn steering_saturates_wraps_and_turns_at_its_rate() {
        let config = ActuatorConfig { max_position_rad: 0.5, max_velocity: 1.0, ..ActuatorConfig::default() };
        let mut s = SteeringActuator::new(config);
        let angles: Vec<f64> = (1..=1000).map(|k| s.step(k * STEP_NS, DT_S, 2.0)).collect();
        assert!((angles[99] - 0.1).abs() < 1e-9, "1 rad/s for 0.1 s: {}", angles[99]);
        assert!((angles[999] - 0.5).abs() < 1e-12, "held at max_position");
        // Unlimited, across ±π: the short way round.
        let mut free = SteeringActuator::new(ActuatorConfig::default());
        free.step(STEP_NS, DT_S, 3.1);
        let next = free.step(2 * STEP_NS, DT_S, -3.1);
        assert!((next + 3.1).abs() < 1e-12, "{next}");
    }
}
