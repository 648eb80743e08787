//! Flatland's `BoolSensor` plugin parameters, served by
//! `flotilla-bool-sensor`.

use serde_yaml::Value;

use super::bumper::first_body;
use super::{check_rate, check_topic, PluginContext};
use crate::config::LoadError;
use crate::role::Role;
use crate::topic::TopicSpec;
use flotilla_messages::std_msgs::Bool;
use flotilla_wire::names::resolve_topic;

/// A validated `BoolSensor` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct BoolSensorConfig {
    /// Plugin name.
    pub name: String,
    /// Topic, before namespacing (default `bool_sensor`).
    pub topic: String,
    /// Messages per sim second (default ∞: every step).
    pub update_rate_hz: f64,
    /// The body whose contacts count (default: the model's first).
    pub body: String,
}

impl super::PluginConfig for BoolSensorConfig {
    const TYPE: &'static str = "BoolSensor";
    const ROLES: &'static [Role] = &[BoolSensorConfig::ROLE];
    const WATCHES_CONTACTS: bool = true;
    const EXAMPLE: &'static str = "{type: BoolSensor, name: detector}";
    fn parse(entry: &Value, name: &str, ctx: &PluginContext) -> Result<BoolSensorConfig, LoadError> {
        BoolSensorConfig::parse(entry, name, ctx)
    }
    fn body(&self) -> &str {
        &self.body
    }
    fn topics(&self, namespace: &str) -> Vec<TopicSpec> {
        vec![TopicSpec::publish::<Bool>(resolve_topic(namespace, &self.topic))]
    }
}

impl BoolSensorConfig {
    /// `flotilla-bool-sensor` publishes whether the body touches anything.
    pub const ROLE: Role = Role::sensor("BoolSensor", "flotilla-bool-sensor", "bool_sensor");

    /// Parses and validates a `BoolSensor` entry.
    pub fn parse(entry: &Value, name: &str, ctx: &PluginContext) -> Result<BoolSensorConfig, LoadError> {
        let r = ctx.reader(entry, name)?;
        let first = first_body(&r, ctx)?;
        let config = BoolSensorConfig {
            name: name.to_string(),
            topic: r.opt("topic", "bool_sensor".to_string())?,
            update_rate_hz: r.opt("update_rate", f64::INFINITY)?,
            body: r.opt("body", first)?,
        };
        r.finish()?;
        check_topic(&r, "topic", &config.topic)?;
        check_rate(&r, "update_rate", config.update_rate_hz)?;
        if !ctx.bodies.contains(&config.body.as_str()) {
            // Flatland's words.
            return Err(r.error(format!("Body with name \"{}\" does not exist (in \"body\")", config.body)));
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(yaml: &str) -> Result<BoolSensorConfig, LoadError> {
        super::super::parse_in_test_model(yaml, "detector", &[])
    }

    #[test]
    fn flatland_s_defaults() {
        let c = parse("{}").unwrap();
        assert_eq!((c.topic.as_str(), c.update_rate_hz, c.body.as_str()), ("bool_sensor", f64::INFINITY, "base"));
        let c = parse("{topic: detector_out, update_rate: 10, body: base}").unwrap();
        assert_eq!((c.topic.as_str(), c.update_rate_hz), ("detector_out", 10.0));
    }

    #[test]
    fn bad_entries_are_refused_by_name() {
        for (yaml, says) in [
            ("{body: detector}", "Body with name \"detector\" does not exist"),
            ("{update_rate: .nan}", "update_rate"),
            ("{topic: \"1x\"}", "topic"),
            ("{bdoy: base}", "bdoy"),
        ] {
            let error = parse(yaml).unwrap_err().to_string();
            assert!(error.contains(says), "{yaml}: {error}");
            assert!(error.contains("robot.model.yaml") && error.contains("detector"), "{yaml}: {error}");
        }
    }
}
