//! Flotilla's own world settings, read from the world file's `properties:`
//! and overridable on the command line.

use flotilla_protocol::config::{LoadError, Reader};

/// How the world paces its steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClockMode {
    /// Steps paced to the wall clock times the real-time factor.
    #[default]
    Realtime,
    /// Step as fast as possible, waiting for no one.
    Fast,
}

impl std::str::FromStr for ClockMode {
    type Err = String;
    fn from_str(s: &str) -> Result<ClockMode, String> {
        match s {
            "realtime" => Ok(ClockMode::Realtime),
            "fast" => Ok(ClockMode::Fast),
            "lockstep" | "external" => Err(format!("clock mode {s:?} is not available yet; use realtime or fast")),
            other => Err(format!("unknown clock mode {other:?}; expected realtime or fast")),
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
            velocity_iterations: properties.opt("velocity_iterations", d.velocity_iterations)?,
            position_iterations: properties.opt("position_iterations", d.position_iterations)?,
        };
        properties.finish()?;
        settings.validate().map_err(|e| properties.error(e))?;
        Ok(settings)
    }

    /// Checks ranges; the message names the setting and the value.
    pub fn validate(&self) -> Result<(), String> {
        flotilla_protocol::time::step_size_ns(self.step_size_s).map_err(|e| format!("\"step_size\": {e}"))?;
        if !(self.real_time_factor.is_finite() && self.real_time_factor > 0.0) {
            return Err(format!("\"real_time_factor\" must be a positive number, got {}", self.real_time_factor));
        }
        if !self.ros_prefix.is_empty() {
            flotilla_protocol::keys::check_key_chunk("\"ros_prefix\"", self.ros_prefix.trim_matches('/'))?;
        }
        if self.velocity_iterations == 0 || self.velocity_iterations > 1000 {
            return Err(format!("\"velocity_iterations\" must be 1..1000, got {}", self.velocity_iterations));
        }
        Ok(())
    }
}
