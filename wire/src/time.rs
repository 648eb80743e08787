//! Simulation time: an integer number of nanoseconds, never an accumulated float.

use serde::{Deserialize, Serialize};

/// A point in simulation time, in nanoseconds since the world started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
pub struct SimTime {
    /// Nanoseconds since the start of the simulation.
    pub nanos: u64,
}

impl SimTime {
    /// The start of the simulation.
    pub const ZERO: SimTime = SimTime { nanos: 0 };

    /// Time at `step` for a fixed step size: `step × step_ns`, exact.
    pub fn at_step(step: u64, step_ns: u64) -> SimTime {
        SimTime { nanos: step.saturating_mul(step_ns) }
    }

    /// Seconds as a float, for display and for physics that wants `f64`.
    pub fn as_secs_f64(self) -> f64 {
        self.nanos as f64 * 1e-9
    }

    /// The ROS `builtin_interfaces/Time` for this instant.
    pub fn to_ros(self) -> flotilla_messages::builtin_interfaces::Time {
        flotilla_messages::builtin_interfaces::Time {
            sec: (self.nanos / 1_000_000_000) as i32,
            nanosec: (self.nanos % 1_000_000_000) as u32,
        }
    }
}

/// Converts a step size in seconds (as written in world files) to whole
/// nanoseconds. Rejects values that are not finite, not positive or that round
/// to zero nanoseconds.
pub fn step_size_ns(step_size_s: f64) -> Result<u64, String> {
    if !step_size_s.is_finite() || step_size_s <= 0.0 {
        return Err(format!("step size must be a positive number of seconds (got {step_size_s})"));
    }
    let ns = (step_size_s * 1e9).round();
    if !(1.0..=3.6e12).contains(&ns) {
        return Err(format!("step size must be between 1 ns and 1 hour (got {step_size_s} s)"));
    }
    Ok(ns as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_is_exact_after_many_steps() {
        let step = step_size_ns(0.005).unwrap();
        assert_eq!(step, 5_000_000);
        // 200 Hz for a simulated day: a float accumulator would have drifted.
        let t = SimTime::at_step(200 * 86_400, step);
        assert_eq!(t.nanos, 86_400_000_000_000);
        let ros = SimTime { nanos: 3_250_000_001 }.to_ros();
        assert_eq!((ros.sec, ros.nanosec), (3, 250_000_001));
    }

    #[test]
    fn absurd_step_sizes_are_rejected() {
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, 1e-12, 1e9] {
            assert!(step_size_ns(bad).is_err(), "{bad}");
        }
    }
}
