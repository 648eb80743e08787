//! Flotilla's own world settings, read from the world file's `properties:`
//! and overridable on the command line.

use flotilla_plugins::config::{LoadError, Reader};

pub use flotilla_wire::control::ClockMode;

/// What the world does about a lockstep participant that stalls past the
/// timeout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StallPolicy {
    /// Keep waiting (and keep reporting): determinism over progress.
    #[default]
    Wait,
    /// Drop it from the barrier until it reports again: progress over determinism.
    Drop,
}

impl std::str::FromStr for StallPolicy {
    type Err = String;
    fn from_str(s: &str) -> Result<StallPolicy, String> {
        match s {
            "wait" => Ok(StallPolicy::Wait),
            "drop" => Ok(StallPolicy::Drop),
            other => Err(format!("unknown stall policy {other:?}; expected wait or drop")),
        }
    }
}

/// Settings of the world process.
#[derive(Debug, Clone, PartialEq)]
pub struct WorldSettings {
    /// Physics step, seconds (Flatland's `step_size`, default 0.005 = 200 Hz).
    pub step_size_s: f64,
    /// Sim seconds per wall second in realtime mode.
    pub real_time_factor: f64,
    /// Pacing.
    pub clock: ClockMode,
    /// Seed every random generator derives from.
    pub seed: u64,
    /// Prefix of every ROS-facing key (for several simulations on one network).
    pub ros_prefix: String,
    /// Wall seconds a lockstep participant may take for one step before it
    /// is reported (and dropped, with `on_stall: drop`).
    pub lockstep_timeout_s: f64,
    /// What to do about a participant that stalls: `wait` or `drop`.
    pub on_stall: StallPolicy,
    /// The ROS name of the clock followed in external mode.
    pub external_clock: String,
    /// Box2D velocity iterations (kept for compatibility; used as solver iterations).
    pub velocity_iterations: u64,
    /// Box2D position iterations (kept for compatibility).
    pub position_iterations: u64,
}

impl Default for WorldSettings {
    fn default() -> Self {
        WorldSettings {
            step_size_s: 0.005,
            real_time_factor: 1.0,
            clock: ClockMode::Realtime,
            seed: 0,
            ros_prefix: String::new(),
            lockstep_timeout_s: 5.0,
            on_stall: StallPolicy::Wait,
            external_clock: "/clock".to_string(),
            velocity_iterations: 10,
            position_iterations: 10,
        }
    }
}

impl WorldSettings {
    /// Reads the `properties:` map of a world file.
    pub fn parse(properties: &Reader) -> Result<WorldSettings, LoadError> {
        let d = WorldSettings::default();
        let clock_text: String = properties.opt("clock", "realtime".to_string())?;
        let settings = WorldSettings {
            step_size_s: properties.opt("step_size", d.step_size_s)?,
            real_time_factor: properties.opt("real_time_factor", d.real_time_factor)?,
            clock: clock_text.parse().map_err(|e: String| properties.error(format!("entry \"clock\": {e}")))?,
            seed: properties.opt("seed", d.seed)?,
            ros_prefix: properties.opt("ros_prefix", d.ros_prefix)?,
            lockstep_timeout_s: properties.opt("lockstep_timeout", d.lockstep_timeout_s)?,
            on_stall: properties
                .opt("on_stall", "wait".to_string())?
                .parse()
                .map_err(|e: String| properties.error(format!("entry \"on_stall\": {e}")))?,
            external_clock: properties.opt("external_clock", d.external_clock)?,
            velocity_iterations: properties.opt("velocity_iterations", d.velocity_iterations)?,
            position_iterations: properties.opt("position_iterations", d.position_iterations)?,
        };
        properties.finish()?;
        settings.validate().map_err(|e| properties.error(e))?;
        Ok(settings)
    }

    /// Checks ranges; the message names the setting and the value.
    pub fn validate(&self) -> Result<(), String> {
        flotilla_wire::time::step_size_ns(self.step_size_s).map_err(|e| format!("\"step_size\": {e}"))?;
        if !(self.real_time_factor.is_finite() && self.real_time_factor > 0.0) {
            return Err(format!("\"real_time_factor\" must be a positive number, got {}", self.real_time_factor));
        }
        if !self.ros_prefix.is_empty() {
            flotilla_wire::keys::check_key_chunk("\"ros_prefix\"", self.ros_prefix.trim_matches('/'))?;
        }
        if !(self.lockstep_timeout_s.is_finite() && self.lockstep_timeout_s > 0.0) {
            return Err(format!(
                "\"lockstep_timeout\" must be a positive number of seconds, got {}",
                self.lockstep_timeout_s
            ));
        }
        if self.velocity_iterations == 0 || self.velocity_iterations > 1000 {
            return Err(format!("\"velocity_iterations\" must be 1..1000, got {}", self.velocity_iterations));
        }
        Ok(())
    }
}
