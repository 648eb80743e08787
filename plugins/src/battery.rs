//! The `Battery` plugin: a robot's battery, drained by its motion and by
//! time, charged at the world's chargers, published as
//! `sensor_msgs/BatteryState`; a robot whose battery is empty stops.
//!
//! `flotilla-drive` keeps it, beside the robot's drive: it sees every step
//! of the robot's actual motion (what it drove, not what it was told), and
//! it is the one that stops an empty robot, at the step the battery says so.

use serde_yaml::Value;

use super::{check_rate, check_topic, PluginContext};
use crate::config::{describe, FromYaml, LoadError, Reader};
use crate::role::Role;
use crate::topic::TopicSpec;
use flotilla_messages::sensor_msgs::BatteryState;
use flotilla_wire::names::resolve_topic;

/// The chemistries `technology` names, in `BatteryState`'s order
/// (`POWER_SUPPLY_TECHNOLOGY_*`).
pub const TECHNOLOGIES: [&str; 9] = ["unknown", "nimh", "lion", "lipo", "life", "nicd", "limn", "ternary", "vrla"];

/// A validated `Battery` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct BatteryConfig {
    /// Plugin name.
    pub name: String,
    /// The body whose motion drains it (the robot's).
    pub body: String,
    /// Where its state goes (`sensor_msgs/BatteryState`), namespaced.
    pub topic: String,
    /// Charge when full, Ah.
    pub capacity_ah: f64,
    /// Charge at the start, a fraction of `capacity`.
    pub initial_charge: f64,
    /// Drawn all the time (electronics, sensors), A.
    pub idle_current_a: f64,
    /// Drawn per metre the body travels, Ah/m.
    pub per_metre_ah: f64,
    /// Drawn per radian the body turns, Ah/rad.
    pub per_radian_ah: f64,
    /// Terminal voltage by state of charge: (fraction, V) points from 0 to
    /// 1, linear in between.
    pub voltage_curve: Vec<(f64, f64)>,
    /// `POWER_SUPPLY_TECHNOLOGY_*`.
    pub technology: u8,
    /// The named places (by name or tag) it charges at.
    pub chargers: Vec<String>,
    /// How near a charger's pose the body must be to charge, m.
    pub charger_tolerance_m: f64,
    /// What a charger gives, A.
    pub charge_current_a: f64,
    /// How often the state is published and an empty battery stops the
    /// robot, Hz.
    pub update_rate_hz: f64,
}

/// A Pioneer's three 12 V, 7.2 Ah sealed lead-acid batteries side by side,
/// Ah.
pub const PIONEER_CAPACITY_AH: f64 = 21.6;

/// A 12 V valve-regulated lead-acid battery's resting voltage by state of
/// charge (fraction, V): ARIA warns of a low battery at about 11.5 V and a
/// Pioneer reports about 12.9 V fully charged.
pub const VRLA_12V_CURVE: [(f64, f64); 5] = [(0.0, 11.0), (0.1, 11.6), (0.5, 12.2), (0.9, 12.6), (1.0, 12.9)];

impl super::PluginConfig for BatteryConfig {
    const TYPE: &'static str = "Battery";
    const ROLES: &'static [Role] = &[BatteryConfig::ROLE];
    const EXAMPLE: &'static str = "{type: Battery, name: battery, body: base, capacity: 10}";
    fn parse(entry: &Value, name: &str, ctx: &PluginContext) -> Result<BatteryConfig, LoadError> {
        BatteryConfig::parse(entry, name, ctx)
    }
    fn body(&self) -> &str {
        &self.body
    }
    fn topics(&self, namespace: &str) -> Vec<TopicSpec> {
        vec![TopicSpec::publish::<BatteryState>(resolve_topic(namespace, &self.topic))]
    }
    /// A battery powers a drive: its model must have one.
    fn check_siblings(&self, ctx: &PluginContext, plugins: &[(&str, &str)]) -> Result<(), LoadError> {
        let drives = |t: &str| crate::registry::plugin_type(t).is_some_and(|t| t.drives_robot);
        if plugins.iter().any(|(_, t)| drives(t)) {
            Ok(())
        } else {
            Err(LoadError::new(
                ctx.model_file,
                format!("model \"{}\" plugin \"{}\"", ctx.model, self.name),
                "a Battery powers a drive, and this model has none (DiffDrive, TricycleDrive or VehicleDynamics)",
            ))
        }
    }
}

impl BatteryConfig {
    /// `flotilla-drive` keeps every battery beside the drive it powers.
    pub const ROLE: Role = Role::actuator("Battery", "flotilla-drive", "drive");

    /// Parses and validates a `Battery` entry (defaults: a Pioneer's
    /// batteries; see docs/batteries.md).
    pub fn parse(entry: &Value, name: &str, ctx: &PluginContext) -> Result<BatteryConfig, LoadError> {
        let r = ctx.reader(entry, name)?;
        let technology: String = r.opt("technology", "vrla".to_string())?;
        let config = BatteryConfig {
            name: name.to_string(),
            body: r.req("body")?,
            topic: r.opt("topic", "battery_state".to_string())?,
            capacity_ah: r.opt("capacity", PIONEER_CAPACITY_AH)?,
            initial_charge: r.opt("initial_charge", 1.0)?,
            idle_current_a: r.opt("idle_current", 1.0)?,
            per_metre_ah: r.opt("per_metre", 0.00078)?,
            per_radian_ah: r.opt("per_radian", 0.00028)?,
            voltage_curve: voltage_curve(&r)?,
            technology: match TECHNOLOGIES.iter().position(|t| *t == technology) {
                Some(i) => i as u8,
                None => {
                    return Err(r.error(format!(
                        "\"technology\" must be one of {}, got \"{technology}\"",
                        TECHNOLOGIES.join(", ")
                    )))
                }
            },
            chargers: r.opt_list("chargers", vec!["dock".to_string()], None, None)?,
            charger_tolerance_m: r.opt("charger_tolerance", 0.3)?,
            charge_current_a: r.opt("charge_current", 1.8)?,
            update_rate_hz: r.opt("update_rate", 10.0)?,
        };
        r.finish()?;
        ctx.check_body(&r, &config.body)?;
        config.check(&r)?;
        Ok(config)
    }

    fn check(&self, r: &Reader) -> Result<(), LoadError> {
        if !(self.capacity_ah.is_finite() && self.capacity_ah > 0.0) {
            return Err(r.error(format!("\"capacity\" must be a positive number of Ah, got {}", self.capacity_ah)));
        }
        if !(0.0..=1.0).contains(&self.initial_charge) {
            return Err(r.error(format!(
                "\"initial_charge\" must be a fraction of the capacity, 0 to 1, got {}",
                self.initial_charge
            )));
        }
        let not_negative = [
            ("idle_current", self.idle_current_a, "A"),
            ("per_metre", self.per_metre_ah, "Ah/m"),
            ("per_radian", self.per_radian_ah, "Ah/rad"),
            ("charger_tolerance", self.charger_tolerance_m, "m"),
            ("charge_current", self.charge_current_a, "A"),
        ];
        for (key, value, unit) in not_negative {
            if !(value.is_finite() && value >= 0.0) {
                return Err(r.error(format!("\"{key}\" must be a number of {unit} at least 0, got {value}")));
            }
        }
        check_topic(r, "topic", &self.topic)?;
        check_rate(r, "update_rate", self.update_rate_hz)?;
        if self.update_rate_hz == 0.0 {
            return Err(r.error("\"update_rate\" must be above 0 Hz: the battery would never be looked at"));
        }
        Ok(())
    }

    /// The terminal voltage at a state of charge (fraction), V.
    pub fn voltage_at(&self, soc: f64) -> f64 {
        let soc = soc.clamp(0.0, 1.0);
        let curve = &self.voltage_curve;
        let i = curve.partition_point(|&(s, _)| s < soc).clamp(1, curve.len() - 1);
        let ((s0, v0), (s1, v1)) = (curve[i - 1], curve[i]);
        if s1 > s0 {
            v0 + (v1 - v0) * (soc - s0) / (s1 - s0)
        } else {
            v1
        }
    }
}

/// `voltage_curve: [[0, 11.0], …, [1, 12.9]]`: fractions from 0 to 1 in
/// rising order, volts positive and never falling.
fn voltage_curve(r: &Reader) -> Result<Vec<(f64, f64)>, LoadError> {
    let Some(raw) = r.raw("voltage_curve") else { return Ok(VRLA_12V_CURVE.to_vec()) };
    let bad = |why: String| r.error(format!("\"voltage_curve\" {why}"));
    let Value::Sequence(points) = raw else {
        return Err(bad(format!("must be a list of [fraction, V] points, got {}", describe(raw))));
    };
    let mut curve = Vec::with_capacity(points.len());
    for (i, point) in points.iter().enumerate() {
        let pair = match point {
            Value::Sequence(items) if items.len() == 2 => {
                items.iter().map(f64::from_yaml).collect::<Result<Vec<f64>, String>>()
            }
            other => Err(format!("must be [fraction, V], got {}", describe(other))),
        };
        match pair {
            Ok(p) if p.iter().all(|v| v.is_finite()) => curve.push((p[0], p[1])),
            Ok(p) => return Err(bad(format!("index {i}: must be finite, got {p:?}"))),
            Err(e) => return Err(bad(format!("index {i} {e}"))),
        }
    }
    let ends = curve.first().map(|p| p.0) == Some(0.0) && curve.last().map(|p| p.0) == Some(1.0);
    if curve.len() < 2 || !ends {
        return Err(bad("must run from fraction 0 to fraction 1, with at least two points".into()));
    }
    if curve.windows(2).any(|w| w[1].0 <= w[0].0 || w[1].1 < w[0].1) || curve[0].1 <= 0.0 {
        return Err(bad("fractions must rise and volts be positive and never fall".into()));
    }
    Ok(curve)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<BatteryConfig, LoadError> {
        super::super::parse_in_test_model::<BatteryConfig>(text, "battery", &["l".to_string()])
    }

    #[test]
    fn a_pioneer_s_batteries_are_the_defaults() {
        let b = parse("{body: base}").unwrap();
        assert_eq!((b.capacity_ah, b.initial_charge, b.topic.as_str()), (21.6, 1.0, "battery_state"));
        assert_eq!((b.idle_current_a, b.charge_current_a, b.update_rate_hz), (1.0, 1.8, 10.0));
        assert_eq!(b.technology, BatteryState::POWER_SUPPLY_TECHNOLOGY_VRLA);
        assert_eq!(b.chargers, ["dock"]);
        assert_eq!((b.voltage_at(1.0), b.voltage_at(0.0)), (12.9, 11.0));
        assert!((b.voltage_at(0.3) - 11.9).abs() < 1e-12, "halfway between 11.6 V at 0.1 and 12.2 V at 0.5");
    }

    #[test]
    fn a_curve_of_its_own() {
        let b = parse("{body: base, voltage_curve: [[0, 20], [1, 25.2]], technology: lion}").unwrap();
        assert!((b.voltage_at(0.5) - 22.6).abs() < 1e-12);
        assert_eq!(b.technology, BatteryState::POWER_SUPPLY_TECHNOLOGY_LION);
    }

    #[test]
    fn bad_entries_are_refused_naming_the_field() {
        let error = |text: &str| parse(text).unwrap_err().to_string();
        assert!(error("{body: base, capacity: -2}").contains("\"capacity\" must be a positive number of Ah"));
        assert!(error("{body: base, initial_charge: 1.5}").contains("initial_charge"));
        assert!(error("{body: base, per_metre: -1}").contains("per_metre"));
        assert!(error("{body: base, technology: steam}").contains("technology"));
        assert!(error("{body: base, voltage_curve: [[0, 12], [0.5, 11], [1, 13]]}").contains("never fall"));
        assert!(error("{body: base, voltage_curve: [[0.1, 12], [1, 13]]}").contains("from fraction 0"));
        assert!(error("{body: base, voltage_curve: [[0, 12, 1], [1, 13]]}").contains("index 0"));
        assert!(error("{body: base, update_rate: 0}").contains("update_rate"));
        assert!(error("{body: nobody}").contains("nobody"));
        assert!(error("{body: base, volts: 12}").contains("volts"));
    }
}
