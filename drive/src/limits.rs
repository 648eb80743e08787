//! Flatland's `DynamicsLimits`: velocity saturation and acceleration /
//! deceleration limits that apply proportionally across a zero crossing.

use flotilla_plugins::dynamics_limits::DynamicsLimitsConfig;

/// Limits on one axis (m/s and m/s², or rad/s and rad/s²); 0 = unlimited.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct DynamicsLimits {
    /// The configured limits.
    pub config: DynamicsLimitsConfig,
}

/// Clamps `value` to `[lower, upper]`; an empty range leaves it unchanged.
pub fn saturate(value: f64, lower: f64, upper: f64) -> f64 {
    if lower > upper {
        value
    } else {
        value.max(lower).min(upper)
    }
}

impl DynamicsLimits {
    /// Limits from a validated configuration.
    pub fn new(config: DynamicsLimitsConfig) -> DynamicsLimits {
        DynamicsLimits { config }
    }

    /// Whether `target` is beyond the velocity limit (and so will be clamped).
    pub fn exceeds(&self, target: f64) -> bool {
        self.config.velocity_limit > 0.0 && target.abs() > self.config.velocity_limit
    }

    /// The velocity after one step of `dt_s` seconds from `velocity` towards
    /// `target`.
    pub fn step(&self, velocity: f64, target: f64, dt_s: f64) -> f64 {
        let DynamicsLimitsConfig { acceleration_limit: accel, deceleration_limit: decel, velocity_limit } = self.config;
        let mut velocity = velocity;
        let target = if velocity_limit != 0.0 { saturate(target, -velocity_limit, velocity_limit) } else { target };

        let limit = if target == 0.0 {
            decel
        } else if velocity == 0.0 {
            accel
        } else if velocity * target < 0.0 {
            // Opposite directions: decelerate first, perhaps through zero.
            if decel != 0.0 {
                let initial = saturate((target - velocity) / dt_s, -decel, decel);
                let next = velocity + initial * dt_s;
                if next * velocity > 0.0 && accel != 0.0 {
                    decel
                } else {
                    let decel_time = velocity.abs() / decel;
                    if accel == 0.0 {
                        0.0
                    } else {
                        decel * decel_time / dt_s + accel * (1.0 - decel_time / dt_s)
                    }
                }
            } else {
                velocity = 0.0;
                accel
            }
        } else if velocity.abs() < target.abs() {
            accel
        } else {
            decel
        };

        let mut acceleration = (target - velocity) / dt_s;
        if limit != 0.0 {
            acceleration = saturate(acceleration, -limit, limit);
        }
        velocity + acceleration * dt_s
    }
}

#[cfg(test)]
mod tests {
    //! Golden values from Flatland's `dynamics_limits_test.cpp`.
    use super::*;

    fn limits(accel: f64, decel: f64, vel: f64) -> DynamicsLimits {
        DynamicsLimits::new(DynamicsLimitsConfig {
            acceleration_limit: accel,
            deceleration_limit: decel,
            velocity_limit: vel,
        })
    }

    fn near(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-3, "{a} != {b}");
    }

    #[test]
    fn no_limits_reach_the_target_at_once() {
        let l = limits(0.0, 0.0, 0.0);
        near(l.step(0.0, 1.0, 0.05), 1.0);
        near(l.step(0.1, 1.0, 0.05), 1.0);
        near(l.step(-100.0, 1.0, 0.1), 1.0);
        near(l.step(-100.0, -21.0, 0.1), -21.0);
    }

    #[test]
    fn velocity_limit_saturates_the_target() {
        let l = limits(0.0, 0.0, 1.0);
        near(l.step(0.0, 2.0, 0.05), 1.0);
        near(l.step(0.0, -0.5, 0.1), -0.5);
        near(l.step(1.0, -0.5, 0.1), -0.5);
        near(l.step(-100.0, -1.0, 0.1), -1.0);
        near(l.step(0.0, -3.0, 0.1), -1.0);
    }

    #[test]
    fn acceleration_limit_shapes_speed_up_and_slow_down() {
        let l = limits(9.0, 9.0, 0.0);
        near(l.step(0.0, 1.0, 0.05), 0.45);
        near(l.step(1.0, 0.0, 0.05), 0.55);
        near(l.step(10.0, 0.0, 0.05), 9.55);
        near(l.step(-10.0, 0.0, 0.05), -9.55);
        near(l.step(5.0, -5.0, 0.05), 4.55);
        near(l.step(-3.0, -2.0, 0.05), -2.55);
    }

    #[test]
    fn deceleration_has_its_own_limit() {
        let l = limits(1.0, 9.0, 0.0);
        near(l.step(0.0, 1.0, 0.05), 0.05);
        near(l.step(0.97, 1.0, 0.05), 1.0);
        near(l.step(1.0, 0.0, 0.05), 0.55);
        near(l.step(-1.0, -2.0, 0.05), -1.05);
        near(l.step(-2.0, -1.0, 0.05), -1.55);
        near(l.step(-2.0, 1.0, 0.05), -1.55);
        near(l.step(-1.0, 2.0, 0.05), -0.55);
        near(l.step(1.0, 3.0, 0.05), 1.05);
        near(l.step(3.0, -1.0, 0.05), 2.55);
    }

    #[test]
    fn a_zero_crossing_decelerates_then_accelerates_in_the_same_step() {
        let l = limits(1.0, 2.0, 0.0);
        near(l.step(2.0, 0.0, 0.05), 1.9);
        // 0.08 → 0 at 2 m/s² takes 0.04 s, then 0.01 s at 1 m/s².
        near(l.step(0.08, -1.0, 0.05), -0.01);
        // No acceleration limit: the rest of the step reaches the target.
        let no_accel = limits(0.0, 2.0, 0.0);
        near(no_accel.step(2.0, 0.0, 0.05), 1.9);
        near(no_accel.step(0.08, -1.0, 0.05), -1.0);
        // No deceleration limit: stopped at once, then accelerating under its limit.
        let no_decel = limits(2.0, 0.0, 0.0);
        near(no_decel.step(2.0, 0.0, 0.05), 0.0);
        near(no_decel.step(1.0, -1.0, 0.05), -0.1);
    }

    #[test]
    fn beyond_the_velocity_limit_deceleration_wins() {
        let l = limits(1.0, 9.0, 0.5);
        near(l.step(0.0, 1.0, 0.05), 0.05);
        near(l.step(0.48, 1.48, 0.05), 0.5);
        // Already too fast: slowing at 9 m/s² leaves it above the limit for now.
        near(l.step(1.0, 2.0, 0.05), 0.55);
        near(l.step(0.55, 2.0, 0.05), 0.5);
    }

    #[test]
    fn saturate_ignores_an_empty_range() {
        near(saturate(3.0, -1.1, 2.2), 2.2);
        near(saturate(-3.0, -1.1, 2.2), -1.1);
        near(saturate(3.0, 1.1, -2.2), 3.0);
        near(saturate(1.0, 0.0, 0.0), 0.0);
        near(saturate(-3.0, 1.1, -2.2), -3.0);
    }
}
