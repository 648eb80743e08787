//! What each plugin type of Flotilla is, described once.
//!
//! * [`registry`]: every plugin type Flotilla serves — its type string, the
//!   roles (binaries and claim aspects) that serve it, whether it senses or
//!   actuates, whether it makes its model a robot, its model-level checks,
//!   and the topics an instance exposes. It is the only place that knows
//!   plugin types: the loader, `flotilla check`, the launcher, the world,
//!   the bridge and the nodes all ask it.
//! * [`role`] and [`topic`]: who serves a type and what an instance
//!   exposes to ROS, the vocabulary the type modules and the registry share;
//! * one module per type ([`laser`], [`diff_drive`], …): its typed
//!   parameters. Each parser reads one `plugins:` entry of a model with a
//!   [`Reader`], validates it against the model (bodies,
//!   joints, layers) and rejects unknown entries. The node that serves a
//!   type and `flotilla check` use the same parser, so a world that passes
//!   `check` starts.
//! * [`config`]: the Flatland YAML reader those parsers share, and its
//!   errors naming file, entity and field.
//! * [`channels`] and [`maps`]: the topics a world's recordings number and
//!   the map-transition manager's topics, both worked out from the registry.
//! * [`selection`]: which instances a node serves (`--models`, `--shard`).
//!
//! No Zenoh, tokio or clap, like `flotilla-wire` below it.

pub mod channels;
pub mod config;
pub mod maps;
pub mod selection;
pub mod surface;

pub mod battery;
pub mod bool_sensor;
pub mod bumper;
pub mod diff_drive;
pub mod door;
pub mod dynamics_limits;
pub mod gps;
pub mod imu;
pub mod laser;
pub mod lift;
pub mod model_tf_publisher;
pub mod odometry;
pub mod pedestrian;
pub mod pioneer;
pub mod registry;
pub mod robots;
pub mod role;
pub mod sonar;
#[rustfmt::skip] // generated: scripts/gen-sonar-rings.py
mod sonar_rings;
pub mod topic;
pub mod tricycle_drive;
pub mod tween;
pub mod vehicle;

use std::path::Path;

use serde_yaml::Value;

use crate::config::{LoadError, Reader};
use flotilla_wire::description::{JointDescription, ModelDescription, PluginDescription, WorldDescription};

/// What a plugin parser needs to know about the model it belongs to.
pub struct PluginContext<'a> {
    /// The model file the entry comes from.
    pub model_file: &'a Path,
    /// The model's name.
    pub model: &'a str,
    /// Names of the model's bodies.
    pub bodies: Vec<&'a str>,
    /// The model's joints.
    pub joints: &'a [JointDescription],
    /// Every layer name of the world (bit `i` = `layer_names[i]`).
    pub layer_names: &'a [String],
}

impl<'a> PluginContext<'a> {
    /// The context of a model from a world description.
    pub fn of(model: &'a ModelDescription, layer_names: &'a [String]) -> PluginContext<'a> {
        PluginContext {
            model_file: Path::new(&model.model_path),
            model: &model.name,
            bodies: model.bodies.iter().map(|b| b.name.as_str()).collect(),
            joints: &model.joints,
            layer_names,
        }
    }

    /// The context of a model of one body and no joints, in file
    /// `model_file` (what a plugin entry's tests parse in).
    pub fn single_body(
        model_file: &'a Path,
        model: &'a str,
        body: &'a str,
        layer_names: &'a [String],
    ) -> PluginContext<'a> {
        PluginContext { model_file, model, bodies: vec![body], joints: &[], layer_names }
    }

    /// The reader for one plugin entry, with `type`, `name` and `enabled`
    /// already accounted for.
    pub fn reader<'v>(&'v self, entry: &'v Value, plugin_name: &str) -> Result<Reader<'v>, LoadError> {
        let reader = Reader::new(entry, self.model_file, format!("model \"{}\" plugin \"{plugin_name}\"", self.model))?;
        reader.raw("type");
        reader.raw("name");
        reader.raw("enabled");
        Ok(reader)
    }

    /// Checks that `body` names a body of the model.
    pub fn check_body(&self, reader: &Reader, body: &str) -> Result<(), LoadError> {
        if self.bodies.contains(&body) {
            Ok(())
        } else {
            Err(reader.error(format!("body \"{body}\" does not exist in model \"{}\"", self.model)))
        }
    }
}

/// Parses a plugin entry stored in a description.
pub fn entry_of(plugin: &PluginDescription, model_file: &Path) -> Result<Value, LoadError> {
    serde_yaml::from_str(&plugin.params_yaml)
        .map_err(|e| LoadError::new(model_file, format!("plugin \"{}\"", plugin.name), e.to_string()))
}

/// A plugin type whose parameters Flotilla parses into `Self`; its
/// [`registry`] entry is made from this.
pub trait PluginConfig: Sized {
    /// The plugin type, e.g. `Laser`.
    const TYPE: &'static str;
    /// The processes that serve it, one per aspect.
    const ROLES: &'static [role::Role];
    /// Whether it makes a model a robot (something driven by `cmd_vel`).
    const DRIVES_ROBOT: bool = false;
    /// Whether its model's bodies are watched for contacts: the world
    /// publishes their contacts at every step (`world/contacts`).
    const WATCHES_CONTACTS: bool = false;
    /// Whether it places its body at every step along a path of its own,
    /// as Flatland's Tween sets its body's transform: the world then makes
    /// that body kinematic and position-based, so that it lands exactly
    /// where its commands take it (through walls), pushing the dynamic
    /// bodies it meets and pushed by none (see [`robots::placed_bodies`]).
    const PLACES_BODY: bool = false;
    /// The smallest valid entry, for a model whose one body is `base`
    /// (documentation, and the registry's tests).
    const EXAMPLE: &'static str;
    /// Parses and validates one entry.
    fn parse(entry: &Value, name: &str, ctx: &PluginContext) -> Result<Self, LoadError>;
    /// The body the plugin is attached to.
    fn body(&self) -> &str;
    /// The topics an instance exposes, its model's namespace being
    /// `namespace` (Flatland's rule: a name starting with `/` ignores it).
    fn topics(&self, namespace: &str) -> Vec<topic::TopicSpec>;
    /// Cuts the layers the plugin senses down to `mask`, those its model
    /// lives in on its map (`ModelDescription::layer_mask`): a laser on
    /// floor 2 sees nothing of floor 1. Plugins that sense no layer keep
    /// the default, which does nothing.
    fn restrict_layers(&mut self, _mask: flotilla_wire::description::LayerBits) {}
    /// Checks the entry against its model's other plugin entries, given as
    /// (name, type): a type that names its siblings (Pioneer: its drive,
    /// sonar and laser) refuses one that is missing or of another type.
    /// Types that name none keep the default, which accepts.
    fn check_siblings(&self, _ctx: &PluginContext, _plugins: &[(&str, &str)]) -> Result<(), LoadError> {
        Ok(())
    }
    /// What a type that drives a robot ([`PluginConfig::DRIVES_ROBOT`])
    /// shows an outside program; `None` for every other type.
    fn drive_interface(&self) -> Option<DriveInterface> {
        None
    }
}

/// What every plugin type that drives a robot shares, as a program that
/// speaks for the robot (the Pioneer interface) sees it: where the drive
/// takes its commands and the odometry it publishes.
#[derive(Debug, Clone, PartialEq)]
pub struct DriveInterface {
    /// The `geometry_msgs/Twist` topic it takes commands on, unresolved.
    pub twist_sub: String,
    /// The odometry it publishes, noise included.
    pub odometry: odometry::OdometryConfig,
}

/// One plugin instance of a description, with its parsed configuration.
pub struct Configured<'a, C> {
    /// Its model.
    pub model: &'a ModelDescription,
    /// Its entry.
    pub plugin: &'a PluginDescription,
    /// `<model>/<plugin>`.
    pub key: String,
    /// The id of the body it is attached to.
    pub body: flotilla_wire::world_to_nodes::BodyId,
    /// Its parameters.
    pub config: C,
}

/// Every plugin of type `C` for which `serves(model, plugin)` holds, parsed.
/// An entry that does not parse (the world validated it, so this means
/// another Flotilla version) is logged and skipped.
pub fn configured<'a, C: PluginConfig>(
    description: &'a WorldDescription,
    serves: &dyn Fn(&str, &str) -> bool,
) -> Vec<Configured<'a, C>> {
    let mut out = Vec::new();
    for model in &description.models {
        let ctx = PluginContext::of(model, &description.layer_names);
        for plugin in model.plugins.iter().filter(|p| p.plugin_type == C::TYPE && serves(&model.name, &p.name)) {
            let key = format!("{}/{}", model.name, plugin.name);
            match entry_of(plugin, ctx.model_file).and_then(|e| C::parse(&e, &plugin.name, &ctx)) {
                Ok(mut config) => {
                    config.restrict_layers(model.layer_mask);
                    if let Some(body) = model.body(config.body()) {
                        out.push(Configured { model, plugin, key, body: body.id, config });
                    }
                }
                Err(e) => tracing::error!("skipping {key}: {e}"),
            }
        }
    }
    out
}

/// Validates a model's plugin entries: each of a registered type on its
/// own, then against the model's other entries
/// ([`PluginConfig::check_siblings`]). Entries of types no node serves load
/// unchecked (`flotilla check` warns of them).
pub fn validate_model_plugins(entries: &[(PluginDescription, &Value)], ctx: &PluginContext) -> Result<(), LoadError> {
    let siblings: Vec<(&str, &str)> = entries.iter().map(|(p, _)| (p.name.as_str(), p.plugin_type.as_str())).collect();
    for (plugin, entry) in entries {
        if let Some(registered) = registry::plugin_type(&plugin.plugin_type) {
            registered.validate(entry, &plugin.name, ctx)?;
            registered.check_siblings(entry, &plugin.name, ctx, &siblings)?;
        }
    }
    Ok(())
}

/// Reads an `[x, y, theta]` pose entry.
pub(crate) fn read_pose(reader: &Reader, key: &str) -> Result<flotilla_wire::geometry::Pose2, LoadError> {
    let [x, y, t] = reader.array::<3>(key, Some([0.0; 3]))?;
    let pose = flotilla_wire::geometry::Pose2::new(x, y, t);
    if !pose.is_finite() {
        return Err(reader.error(format!("\"{key}\" must be finite, got [{x}, {y}, {t}]")));
    }
    Ok(pose)
}

/// Rejects a rate that is negative or NaN (∞ is allowed: every step).
pub(crate) fn check_rate(reader: &Reader, key: &str, rate_hz: f64) -> Result<(), LoadError> {
    if rate_hz.is_nan() || rate_hz < 0.0 {
        Err(reader.error(format!("\"{key}\" must be ≥ 0 Hz or inf, got {rate_hz}")))
    } else {
        Ok(())
    }
}

/// Rejects a topic name that cannot be a ROS name.
pub(crate) fn check_topic(reader: &Reader, key: &str, topic: &str) -> Result<(), LoadError> {
    let ok = !topic.is_empty()
        && topic.trim_start_matches('/').split('/').all(|part| {
            !part.is_empty()
                && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !part.starts_with(|c: char| c.is_ascii_digit())
        });
    if ok {
        Ok(())
    } else {
        Err(reader.error(format!("\"{key}\" is not a valid ROS topic name: {topic:?}")))
    }
}

/// Parses a plugin entry of model `robot1` (one body, `base`; file
/// `robot.model.yaml`) named `name`, in a world of `layer_names`: the
/// context every plugin config's tests parse in.
#[cfg(test)]
pub(crate) fn parse_in_test_model<C: PluginConfig>(
    yaml: &str,
    name: &str,
    layer_names: &[String],
) -> Result<C, LoadError> {
    let ctx = PluginContext::single_body(Path::new("robot.model.yaml"), "robot1", "base", layer_names);
    C::parse(&serde_yaml::from_str(yaml).expect("the test's YAML parses"), name, &ctx)
}
