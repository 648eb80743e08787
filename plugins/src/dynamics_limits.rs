//! Flatland's `DynamicsLimits` parameters (`linear_dynamics`,
//! `angular_dynamics`).

use crate::config::{LoadError, Reader};

/// Acceleration, deceleration and velocity limits of one axis; 0 = unlimited.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct DynamicsLimitsConfig {
    /// Largest acceleration away from zero (units/s²); 0 = unlimited.
    pub acceleration_limit: f64,
    /// Largest deceleration towards zero (units/s²); 0 = unlimited. Defaults
    /// to the acceleration limit.
    pub deceleration_limit: f64,
    /// Largest absolute velocity (units/s); 0 = unlimited.
    pub velocity_limit: f64,
}

impl DynamicsLimitsConfig {
    /// Reads an optional `*_dynamics` sub-map.
    pub fn parse(parent: &Reader, key: &str) -> Result<DynamicsLimitsConfig, LoadError> {
        let entity = format!("{} \"{key}\"", parent.entity());
        let Some(reader) = parent.sub(key, entity)? else {
            return Ok(DynamicsLimitsConfig::default());
        };
        let acceleration_limit = reader.opt("acceleration_limit", 0.0)?;
        let deceleration_limit = reader.opt("deceleration_limit", acceleration_limit)?;
        let velocity_limit = reader.opt("velocity_limit", 0.0)?;
        reader.finish()?;
        for (name, value) in [
            ("acceleration_limit", acceleration_limit),
            ("deceleration_limit", deceleration_limit),
            ("velocity_limit", velocity_limit),
        ] {
            if !value.is_finite() || value < 0.0 {
                return Err(reader.error(format!("\"{name}\" must be a finite number ≥ 0 (0 = no limit), got {value}")));
            }
        }
        Ok(DynamicsLimitsConfig { acceleration_limit, deceleration_limit, velocity_limit })
    }
}
