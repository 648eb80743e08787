//! Flatland's `Bumper` plugin parameters, served by `flotilla-bumper`.

use serde_yaml::Value;

use super::{check_rate, check_topic, PluginContext};
use crate::config::LoadError;
use crate::role::Role;
use crate::topic::TopicSpec;
use flotilla_messages::flatland_msgs::Collisions;
use flotilla_wire::names::resolve_topic;

/// A validated `Bumper` entry: every body of the model is watched, those
/// in `exclude` are left out of the messages.
#[derive(Debug, Clone, PartialEq)]
pub struct BumperConfig {
    /// Plugin name.
    pub name: String,
    /// The frame of the contact points and normals (default `map`).
    pub world_frame_id: String,
    /// Topic, before namespacing (default `collisions`).
    pub topic: String,
    /// Messages per sim second (default ∞: every step). With
    /// `publish_all_collisions` it paces only the empty messages.
    pub update_rate_hz: f64,
    /// Publish at every step while anything touches, whatever the rate
    /// (default true).
    pub publish_all_collisions: bool,
    /// Bodies whose contacts are left out.
    pub exclude: Vec<String>,
    /// The model's first body: what the plugin is attached to (Flatland's
    /// bumper watches the whole model).
    pub first_body: String,
}

impl super::PluginConfig for BumperConfig {
    const TYPE: &'static str = "Bumper";
    const ROLES: &'static [Role] = &[BumperConfig::ROLE];
    const WATCHES_CONTACTS: bool = true;
    const EXAMPLE: &'static str = "{type: Bumper, name: bumper}";
    fn parse(entry: &Value, name: &str, ctx: &PluginContext) -> Result<BumperConfig, LoadError> {
        BumperConfig::parse(entry, name, ctx)
    }
    fn body(&self) -> &str {
        &self.first_body
    }
    fn topics(&self, namespace: &str) -> Vec<TopicSpec> {
        vec![TopicSpec::publish::<Collisions>(resolve_topic(namespace, &self.topic))]
    }
}

impl BumperConfig {
    /// `flotilla-bumper` publishes the model's collisions.
    pub const ROLE: Role = Role::sensor("Bumper", "flotilla-bumper", "bumper");

    /// Parses and validates a `Bumper` entry.
    pub fn parse(entry: &Value, name: &str, ctx: &PluginContext) -> Result<BumperConfig, LoadError> {
        let r = ctx.reader(entry, name)?;
        let config = BumperConfig {
            name: name.to_string(),
            world_frame_id: r.opt("world_frame_id", "map".to_string())?,
            topic: r.opt("topic", "collisions".to_string())?,
            update_rate_hz: r.opt("update_rate", f64::INFINITY)?,
            publish_all_collisions: r.opt("publish_all_collisions", true)?,
            exclude: r.opt_list("exclude", Vec::new(), None, None)?,
            first_body: first_body(&r, ctx)?,
        };
        r.finish()?;
        check_topic(&r, "topic", &config.topic)?;
        check_rate(&r, "update_rate", config.update_rate_hz)?;
        if config.world_frame_id.is_empty() {
            return Err(r.error("\"world_frame_id\" must not be empty"));
        }
        for body in &config.exclude {
            if !ctx.bodies.contains(&body.as_str()) {
                // Flatland's words, which its own tests look for.
                return Err(r.error(format!("Body with name \"{body}\" does not exist (in \"exclude\")")));
            }
        }
        Ok(config)
    }
}

/// The model's first body, or the error Flatland gives a model without one.
pub(crate) fn first_body(r: &crate::config::Reader, ctx: &PluginContext) -> Result<String, LoadError> {
    match ctx.bodies.first() {
        Some(body) => Ok(body.to_string()),
        None => Err(r.error(format!("model \"{}\" has no bodies to detect contacts on", ctx.model))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(yaml: &str) -> Result<BumperConfig, LoadError> {
        super::super::parse_in_test_model(yaml, "bumper", &[])
    }

    #[test]
    fn flatland_s_defaults() {
        let c = parse("{}").unwrap();
        assert_eq!((c.world_frame_id.as_str(), c.topic.as_str()), ("map", "collisions"));
        assert_eq!((c.update_rate_hz, c.publish_all_collisions), (f64::INFINITY, true));
        assert!(c.exclude.is_empty());
        assert_eq!(c.first_body, "base");
    }

    #[test]
    fn every_parameter_is_read() {
        let c = parse(
            "{world_frame_id: world, topic: collisions_B, publish_all_collisions: false, update_rate: 10, \
             exclude: [base]}",
        )
        .unwrap();
        assert_eq!((c.world_frame_id.as_str(), c.topic.as_str()), ("world", "collisions_B"));
        assert_eq!((c.update_rate_hz, c.publish_all_collisions), (10.0, false));
        assert_eq!(c.exclude, vec!["base".to_string()]);
    }

    #[test]
    fn bad_entries_are_refused_by_name() {
        for (yaml, says) in [
            ("{exclude: [random_body]}", "Body with name \"random_body\" does not exist"),
            ("{exclude: base}", "exclude"),
            ("{update_rate: -1}", "update_rate"),
            ("{topic: \"a b\"}", "topic"),
            ("{world_frame_id: \"\"}", "world_frame_id"),
            ("{publish_all_collisions: maybe}", "publish_all_collisions"),
            ("{exlcude: [base]}", "exlcude"),
        ] {
            let error = parse(yaml).unwrap_err().to_string();
            assert!(error.contains(says), "{yaml}: {error}");
            assert!(error.contains("robot.model.yaml") && error.contains("bumper"), "{yaml}: {error}");
        }
    }
}
