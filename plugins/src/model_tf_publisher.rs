//! Flatland's `ModelTfPublisher` parameters, served by `flotilla-tf`.

use serde_yaml::Value;

use super::{check_rate, PluginContext};
use crate::config::LoadError;
use crate::role::Role;
use crate::topic::TopicSpec;

/// A validated `ModelTfPublisher` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelTfPublisherConfig {
    /// Plugin name.
    pub name: String,
    /// Also broadcast world → reference body.
    pub publish_tf_world: bool,
    /// The world frame id.
    pub world_frame_id: String,
    /// Broadcasts per sim second (∞ = every step).
    pub update_rate_hz: f64,
    /// The body every other body's transform is relative to (default: the first).
    pub reference: String,
    /// Bodies not broadcast.
    pub exclude: Vec<String>,
}

impl super::PluginConfig for ModelTfPublisherConfig {
    const TYPE: &'static str = "ModelTfPublisher";
    const ROLES: &'static [Role] = &[ModelTfPublisherConfig::ROLE];
    const EXAMPLE: &'static str = "{type: ModelTfPublisher, name: tf}";
    fn parse(entry: &Value, name: &str, ctx: &PluginContext) -> Result<ModelTfPublisherConfig, LoadError> {
        ModelTfPublisherConfig::parse(entry, name, ctx)
    }
    fn body(&self) -> &str {
        &self.reference
    }
    /// Moving joints on `tf`, fixed ones latched on `tf_static`.
    fn topics(&self, _namespace: &str) -> Vec<TopicSpec> {
        vec![TopicSpec::tf(), TopicSpec::tf_static()]
    }
}

impl ModelTfPublisherConfig {
    /// `flotilla-tf` broadcasts the model's body transforms.
    pub const ROLE: Role = Role::sensor("ModelTfPublisher", "flotilla-tf", "tf");

    /// Parses and validates a `ModelTfPublisher` entry.
    pub fn parse(entry: &Value, name: &str, ctx: &PluginContext) -> Result<ModelTfPublisherConfig, LoadError> {
        let r = ctx.reader(entry, name)?;
        let first_body = ctx.bodies.first().copied().unwrap_or_default().to_string();
        let config = ModelTfPublisherConfig {
            name: name.to_string(),
            publish_tf_world: r.opt("publish_tf_world", false)?,
            world_frame_id: r.opt("world_frame_id", "map".to_string())?,
            update_rate_hz: r.opt("update_rate", f64::INFINITY)?,
            reference: r.opt("reference", first_body)?,
            exclude: r.opt_list("exclude", Vec::new(), None, None)?,
        };
        r.finish()?;
        check_rate(&r, "update_rate", config.update_rate_hz)?;
        ctx.check_body(&r, &config.reference)?;
        for body in &config.exclude {
            ctx.check_body(&r, body)?;
        }
        Ok(config)
    }
}
