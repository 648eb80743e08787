//! Every plugin type Flotilla serves, described once.
//!
//! An entry names the type, the roles that serve it (a binary and the claim
//! aspect it serves under), how to parse and validate an entry, and the
//! topics an instance exposes for its configuration and namespace. The
//! loader and `flotilla check` validate through it, the launcher picks
//! binaries from it, the world lists servable instances from it, the bridge
//! announces its topics, and each node finds its own role in it. Adding a
//! plugin type is its config (with [`PluginConfig`]), one line in
//! [`REGISTRY`], its model, its server and its binary.

use serde_yaml::Value;

use super::{entry_of, DriveInterface, PluginConfig, PluginContext};
use std::collections::BTreeSet;

use crate::config::LoadError;
pub use crate::role::{Role, RoleKind};
pub use crate::topic::{Direction, Durability, TopicSpec, DEFAULT_DEPTH, TF_DEPTH, TF_STATIC_DEPTH};
use flotilla_wire::description::{ModelDescription, WorldDescription};

/// One plugin type, as every part of Flotilla sees it.
#[derive(Debug, Clone, Copy)]
pub struct PluginType {
    /// The type string of model files, e.g. `Laser`.
    pub name: &'static str,
    /// The processes that serve it, one per aspect.
    pub roles: &'static [Role],
    /// Whether it makes a model a robot (something driven by `cmd_vel`).
    pub drives_robot: bool,
    /// Whether its model's bodies are watched for contacts (see
    /// [`PluginConfig::WATCHES_CONTACTS`]).
    pub watches_contacts: bool,
    /// Whether it places its body along a path (see
    /// [`PluginConfig::PLACES_BODY`]).
    pub places_body: bool,
    /// The smallest valid entry (see [`PluginConfig::EXAMPLE`]).
    pub example: &'static str,
    validate: ValidateFn,
    check_siblings: CheckSiblingsFn,
    drive_interface: DriveInterfaceFn,
    topics: TopicsFn,
    body: BodyFn,
}

/// Parses and validates an entry: (entry, plugin name, model context).
type ValidateFn = fn(&Value, &str, &PluginContext) -> Result<(), LoadError>;
/// Checks an entry against its model's other entries: (entry, plugin
/// name, model context, the model's plugins as (name, type)).
type CheckSiblingsFn = fn(&Value, &str, &PluginContext, &[(&str, &str)]) -> Result<(), LoadError>;
/// A drive's interface: (entry, plugin name, model context).
type DriveInterfaceFn = fn(&Value, &str, &PluginContext) -> Result<Option<DriveInterface>, LoadError>;
/// The body an entry is attached to: (entry, plugin name, model context).
type BodyFn = fn(&Value, &str, &PluginContext) -> Result<String, LoadError>;
/// An entry's topics: (entry, plugin name, model context, namespace).
type TopicsFn = fn(&Value, &str, &PluginContext, &str) -> Result<Vec<TopicSpec>, LoadError>;

impl PluginType {
    /// The entry of config type `C`.
    pub const fn of<C: PluginConfig>() -> PluginType {
        PluginType {
            name: C::TYPE,
            roles: C::ROLES,
            drives_robot: C::DRIVES_ROBOT,
            watches_contacts: C::WATCHES_CONTACTS,
            places_body: C::PLACES_BODY,
            example: C::EXAMPLE,
            validate: validate_as::<C>,
            check_siblings: check_siblings_as::<C>,
            drive_interface: drive_interface_as::<C>,
            topics: topics_as::<C>,
            body: body_as::<C>,
        }
    }

    /// Parses and validates one entry of this type.
    pub fn validate(&self, entry: &Value, name: &str, ctx: &PluginContext) -> Result<(), LoadError> {
        (self.validate)(entry, name, ctx)
    }

    /// Checks one entry of this type against its model's other plugin
    /// entries, given as (name, type) (see [`PluginConfig::check_siblings`]).
    pub fn check_siblings(
        &self,
        entry: &Value,
        name: &str,
        ctx: &PluginContext,
        plugins: &[(&str, &str)],
    ) -> Result<(), LoadError> {
        (self.check_siblings)(entry, name, ctx, plugins)
    }

    /// What an entry of this type shows as a robot's drive (see
    /// [`PluginConfig::drive_interface`]); `None` unless it drives a robot.
    pub fn drive_interface(
        &self,
        entry: &Value,
        name: &str,
        ctx: &PluginContext,
    ) -> Result<Option<DriveInterface>, LoadError> {
        (self.drive_interface)(entry, name, ctx)
    }

    /// The topics an instance exposes, its model's namespace being
    /// `namespace`.
    pub fn topics(
        &self,
        entry: &Value,
        name: &str,
        ctx: &PluginContext,
        namespace: &str,
    ) -> Result<Vec<TopicSpec>, LoadError> {
        (self.topics)(entry, name, ctx, namespace)
    }

    /// The body an entry of this type is attached to.
    pub fn body_of(&self, entry: &Value, name: &str, ctx: &PluginContext) -> Result<String, LoadError> {
        (self.body)(entry, name, ctx)
    }

    /// The role of this type served under `aspect`.
    pub fn role(&self, aspect: &str) -> Option<&'static Role> {
        self.roles.iter().find(|r| r.aspect == aspect)
    }
}

fn validate_as<C: PluginConfig>(entry: &Value, name: &str, ctx: &PluginContext) -> Result<(), LoadError> {
    C::parse(entry, name, ctx).map(|_| ())
}

fn check_siblings_as<C: PluginConfig>(
    entry: &Value,
    name: &str,
    ctx: &PluginContext,
    plugins: &[(&str, &str)],
) -> Result<(), LoadError> {
    C::parse(entry, name, ctx)?.check_siblings(ctx, plugins)
}

fn drive_interface_as<C: PluginConfig>(
    entry: &Value,
    name: &str,
    ctx: &PluginContext,
) -> Result<Option<DriveInterface>, LoadError> {
    Ok(C::parse(entry, name, ctx)?.drive_interface())
}

fn body_as<C: PluginConfig>(entry: &Value, name: &str, ctx: &PluginContext) -> Result<String, LoadError> {
    Ok(C::parse(entry, name, ctx)?.body().to_string())
}

fn topics_as<C: PluginConfig>(
    entry: &Value,
    name: &str,
    ctx: &PluginContext,
    namespace: &str,
) -> Result<Vec<TopicSpec>, LoadError> {
    Ok(C::parse(entry, name, ctx)?.topics(namespace))
}

/// Every plugin type Flotilla serves.
pub const REGISTRY: &[PluginType] = &[
    PluginType::of::<super::battery::BatteryConfig>(),
    PluginType::of::<super::bool_sensor::BoolSensorConfig>(),
    PluginType::of::<super::bumper::BumperConfig>(),
    PluginType::of::<super::diff_drive::DiffDriveConfig>(),
    PluginType::of::<super::door::DoorConfig>(),
    PluginType::of::<super::gps::GpsConfig>(),
    PluginType::of::<super::imu::ImuConfig>(),
    PluginType::of::<super::laser::LaserConfig>(),
    PluginType::of::<super::lift::LiftConfig>(),
    PluginType::of::<super::model_tf_publisher::ModelTfPublisherConfig>(),
    PluginType::of::<super::pedestrian::PedestrianConfig>(),
    PluginType::of::<super::pioneer::PioneerConfig>(),
    PluginType::of::<super::sonar::SonarConfig>(),
    PluginType::of::<super::tricycle_drive::TricycleDriveConfig>(),
    PluginType::of::<super::tween::TweenConfig>(),
    PluginType::of::<super::vehicle::VehicleConfig>(),
];

/// A model every registered type's example entry is valid in (the
/// registry's and the bridge's tests): the body `base`, and the wheels and
/// joints of a tricycle (`TricycleDrive`'s example names them).
pub const EXAMPLE_MODEL: &str = "\
bodies:
  - {name: base, type: dynamic, footprints: [{type: circle, radius: 0.2, density: 1}]}
  - {name: front, type: dynamic, footprints: [{type: circle, radius: 0.05, density: 1}]}
  - {name: rear_left, type: dynamic, footprints: [{type: circle, radius: 0.05, density: 1}]}
  - {name: rear_right, type: dynamic, footprints: [{type: circle, radius: 0.05, density: 1}]}
joints:
  - {type: revolute, name: front_wheel, bodies: [{name: front, anchor: [0, 0]}, {name: base, anchor: [0, 0]}]}
  - {type: weld, name: rear_left_wheel, bodies: [{name: rear_left, anchor: [0, 0]}, {name: base, anchor: [-0.5, 0.2]}]}
  - {type: weld, name: rear_right_wheel, bodies: [{name: rear_right, anchor: [0, 0]}, {name: base, anchor: [-0.5, -0.2]}]}
";

/// The registered plugin type of that name; `None` for types no node serves.
pub fn plugin_type(name: &str) -> Option<&'static PluginType> {
    REGISTRY.iter().find(|t| t.name == name)
}

/// Whether a plugin of that type has its model's bodies watched for
/// contacts (Bumper, BoolSensor).
pub fn watches_contacts(plugin_type: &str) -> bool {
    self::plugin_type(plugin_type).is_some_and(|t| t.watches_contacts)
}

/// The registered types that make a model a robot (see
/// [`crate::robots::RobotModel::is_robot`]).
pub fn drive_types() -> Vec<&'static str> {
    REGISTRY.iter().filter(|t| t.drives_robot).map(|t| t.name).collect()
}

/// Every role of every registered type.
pub fn roles() -> impl Iterator<Item = &'static Role> {
    REGISTRY.iter().flat_map(|t| t.roles)
}

/// The role a binary serves, e.g. `flotilla-laser` → (`Laser`, `laser`).
/// A binary may serve several roles (none does yet): the first is given.
pub fn role_of_binary(binary: &str) -> Option<&'static Role> {
    roles().find(|r| r.binary == binary)
}

/// The binaries that serve a plugin type, or `None` if no node serves it.
pub fn binaries_for(plugin_type: &str) -> Option<Vec<&'static str>> {
    self::plugin_type(plugin_type).map(|t| t.roles.iter().map(|r| r.binary).collect())
}

/// The topics some plugin instance of `description` subscribes to.
pub fn inputs_of(description: &WorldDescription) -> BTreeSet<String> {
    topics_of(description).into_iter().filter(|t| t.direction == Direction::Subscribe).map(|t| t.name).collect()
}

/// Whether a node serving `roles`, the instances for which `serves(model,
/// plugin)` holds, commands no robot whatever it publishes: every role is a
/// sensor's, and none of the topics its instances publish is one of
/// `inputs` (the description's [`inputs_of`]: a `cmd_vel` remapped onto a
/// sensor's output would be). Such a node's lockstep work cannot change a
/// drive's next answer.
pub fn commands_nothing(
    description: &WorldDescription,
    inputs: &BTreeSet<String>,
    roles: &[&Role],
    serves: &dyn Fn(&str, &str) -> bool,
) -> bool {
    if !roles.iter().all(|role| role.kind == RoleKind::Sensor) {
        return false;
    }
    for model in &description.models {
        let ctx = PluginContext::of(model, &description.layer_names);
        for plugin in &model.plugins {
            let served = roles.iter().any(|role| role.plugin_type == plugin.plugin_type);
            if !served || !serves(&model.name, &plugin.name) {
                continue;
            }
            let Some(registered) = plugin_type(&plugin.plugin_type) else { return false };
            let topics = entry_of(plugin, ctx.model_file)
                .and_then(|entry| registered.topics(&entry, &plugin.name, &ctx, &model.namespace));
            match topics {
                Ok(topics)
                    if topics.iter().all(|t| t.direction == Direction::Subscribe || !inputs.contains(&t.name)) => {}
                // Unreadable (another Flotilla version) or feeding an input.
                _ => return false,
            }
        }
    }
    true
}

/// Every topic the registered plugin instances of `description` expose, in
/// model and plugin order (repeats, such as `/tf`, included). An entry that
/// does not parse (the world validated it, so this means another Flotilla
/// version) is logged and left out.
pub fn topics_of(description: &WorldDescription) -> Vec<TopicSpec> {
    let mut topics = Vec::new();
    for model in &description.models {
        topics.extend(topics_of_model(model, &description.layer_names));
    }
    topics
}

/// [`topics_of`] for one model of a world whose layers are `layer_names`.
pub fn topics_of_model(model: &ModelDescription, layer_names: &[String]) -> Vec<TopicSpec> {
    let mut topics = Vec::new();
    let ctx = PluginContext::of(model, layer_names);
    for plugin in &model.plugins {
        let Some(registered) = plugin_type(&plugin.plugin_type) else { continue };
        match entry_of(plugin, ctx.model_file)
            .and_then(|entry| registered.topics(&entry, &plugin.name, &ctx, &model.namespace))
        {
            Ok(found) => topics.extend(found),
            Err(e) => tracing::error!("leaving out the topics of {}/{}: {e}", model.name, plugin.name),
        }
    }
    topics
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use flotilla_wire::description::{BodyDescription, BodyKind, ModelDescription, PluginDescription};

    /// A world of one robot, `robot1`, with these plugin entries.
    fn robot_world(plugins: &[(&str, &str, &str)]) -> WorldDescription {
        WorldDescription::of_models(vec![robot("robot1", plugins)])
    }

    /// A model `name` (its namespace too) of one dynamic body, `base`,
    /// with these plugin entries (type, name, YAML).
    pub(crate) fn robot(name: &str, plugins: &[(&str, &str, &str)]) -> ModelDescription {
        let base = BodyDescription {
            id: 1,
            name: "base".into(),
            kind: BodyKind::Dynamic,
            pose: Default::default(),
            pose_in_model: Default::default(),
            color: [1.0; 4],
            linear_damping: 0.0,
            angular_damping: 0.0,
            footprints: vec![],
        };
        let plugins = plugins
            .iter()
            .map(|(plugin_type, name, yaml)| PluginDescription {
                plugin_type: plugin_type.to_string(),
                name: name.to_string(),
                params_yaml: yaml.to_string(),
            })
            .collect();
        ModelDescription {
            name: name.into(),
            namespace: name.into(),
            pose: Default::default(),
            model_path: "robot.model.yaml".into(),
            bodies: vec![base],
            joints: vec![],
            plugins,
            map: String::new(),
            layer_mask: flotilla_wire::description::LayerBits::MAX,
        }
    }

    #[test]
    fn a_sensor_commands_nothing_unless_it_publishes_onto_an_input() {
        let drive = ("DiffDrive", "drive", "{type: DiffDrive, name: drive, body: base}");
        let laser = (
            "Laser",
            "laser",
            "{type: Laser, name: laser, body: base, range: 20, angle: {min: -1.0, max: 1.0, increment: 0.5}}",
        );
        let everything = |_: &str, _: &str| true;
        let world = robot_world(&[drive, laser]);
        let inputs = inputs_of(&world);
        assert!(inputs.contains("/robot1/cmd_vel"), "{inputs:?}");
        let laser_role = &crate::laser::LaserConfig::ROLE;
        let odom_role = &crate::diff_drive::DiffDriveConfig::ODOM_ROLE;
        assert!(commands_nothing(&world, &inputs, &[laser_role], &everything));
        assert!(commands_nothing(&world, &inputs, &[odom_role], &everything), "odometry, twist and tf");
        let drive_role = &crate::diff_drive::DiffDriveConfig::DRIVE_ROLE;
        assert!(!commands_nothing(&world, &inputs, &[drive_role], &everything), "a drive actuates");
        let pioneer_role = &crate::pioneer::PioneerConfig::ROLE;
        assert!(!commands_nothing(&world, &inputs, &[pioneer_role], &everything), "it publishes cmd_vel");
        // A laser whose scans go out on the robot's cmd_vel.
        let remapped = ("Laser", "laser", "{type: Laser, name: laser, body: base, range: 20, angle: {min: -1.0, max: 1.0, increment: 0.5}, topic: cmd_vel}");
        let world = robot_world(&[drive, remapped]);
        let inputs = inputs_of(&world);
        assert!(!commands_nothing(&world, &inputs, &[laser_role], &everything));
        assert!(commands_nothing(&world, &inputs, &[laser_role], &|_, _| false), "unless it does not serve that laser");
    }

    #[test]
    fn every_type_is_registered_once_with_roles_named_after_their_binaries() {
        for (i, t) in REGISTRY.iter().enumerate() {
            assert!(REGISTRY[..i].iter().all(|other| other.name != t.name), "{} registered twice", t.name);
            assert!(!t.roles.is_empty(), "{} has no role", t.name);
            for role in t.roles {
                assert_eq!(role.plugin_type, t.name, "a role of {} names another type", t.name);
                assert!(role.binary.starts_with("flotilla-"), "{role:?}");
                assert!(!role.aspect.is_empty() && !role.aspect.contains('/'), "{role:?}: the aspect is one key chunk");
            }
            let aspects: Vec<&str> = t.roles.iter().map(|r| r.aspect).collect();
            let mut unique = aspects.clone();
            unique.dedup();
            assert_eq!(aspects, unique, "{}: one role per aspect", t.name);
        }
    }

    /// The joints of [`EXAMPLE_MODEL`], as its loader makes them.
    fn example_joints() -> Vec<flotilla_wire::description::JointDescription> {
        use flotilla_wire::description::{JointDescription, JointKind};
        let weld = JointKind::Weld { angle: 0.0, frequency: 0.0, damping: 0.0 };
        [
            ("front_wheel", "front", JointKind::Revolute { limits: None }, [0.0, 0.0]),
            ("rear_left_wheel", "rear_left", weld.clone(), [-0.5, 0.2]),
            ("rear_right_wheel", "rear_right", weld, [-0.5, -0.2]),
        ]
        .into_iter()
        .map(|(name, wheel, kind, on_base)| JointDescription {
            name: name.into(),
            kind,
            bodies: [wheel.into(), "base".into()],
            anchors: [[0.0, 0.0], on_base],
            collide_connected: false,
        })
        .collect()
    }

    /// The context of [`EXAMPLE_MODEL`].
    fn example_context<'a>(
        joints: &'a [flotilla_wire::description::JointDescription],
        layers: &'a [String],
    ) -> PluginContext<'a> {
        PluginContext {
            model_file: std::path::Path::new("robot.model.yaml"),
            model: "robot",
            bodies: vec!["base", "front", "rear_left", "rear_right"],
            joints,
            layer_names: layers,
        }
    }

    #[test]
    fn every_example_is_valid_and_exposes_a_topic() {
        let layers = vec!["walls".to_string()];
        let joints = example_joints();
        let ctx = example_context(&joints, &layers);
        for t in REGISTRY {
            let entry: Value = serde_yaml::from_str(t.example).unwrap();
            assert_eq!(entry["type"].as_str(), Some(t.name), "{}'s example is of another type", t.name);
            t.validate(&entry, "example", &ctx).unwrap_or_else(|e| panic!("{}: {e}", t.name));
            let topics = t.topics(&entry, "example", &ctx, "robot").unwrap();
            // The Pioneer interface is a TCP port: it commands its drive's
            // cmd_vel and reads its siblings' topics, listed by them.
            if t.name == "Pioneer" {
                assert!(topics.is_empty(), "Pioneer lists its siblings' topics");
                continue;
            }
            // Every other type but a pure actuator (Tween: it only moves
            // its body) publishes something.
            let publishes = topics.iter().any(|s| s.direction == Direction::Publish);
            assert!(publishes || t.name == "Tween", "{} publishes nothing", t.name);
            assert!(!topics.is_empty(), "{}'s example exposes no topic", t.name);
        }
    }

    #[test]
    fn every_registered_drive_makes_a_robot() {
        assert_eq!(drive_types(), ["DiffDrive", "TricycleDrive", "VehicleDynamics"]);
        for t in REGISTRY {
            let actuates = t.roles.iter().any(|r| r.kind == RoleKind::Actuator);
            assert!(actuates || !t.drives_robot, "{} drives a robot but has no actuator role", t.name);
            let entry: Value = serde_yaml::from_str(t.example).unwrap();
            let joints = example_joints();
            let layers = vec!["walls".to_string()];
            let ctx = example_context(&joints, &layers);
            let interface = t.drive_interface(&entry, "example", &ctx).unwrap();
            assert_eq!(
                interface.is_some(),
                t.drives_robot,
                "{}: a drive interface exactly when it drives a robot",
                t.name
            );
        }
    }

    #[test]
    fn binaries_find_their_roles() {
        assert_eq!(role_of_binary("flotilla-odom").map(|r| (r.plugin_type, r.aspect)), Some(("DiffDrive", "odom")));
        assert_eq!(binaries_for("DiffDrive"), Some(vec!["flotilla-drive", "flotilla-odom"]));
        assert_eq!(binaries_for("TricycleDrive"), Some(vec!["flotilla-drive", "flotilla-odom"]));
        assert_eq!(binaries_for("Bumper"), Some(vec!["flotilla-bumper"]));
        assert_eq!(binaries_for("Tween"), Some(vec!["flotilla-drive"]));
        assert_eq!(binaries_for("RandomWall"), None);
        assert!(watches_contacts("Bumper") && watches_contacts("BoolSensor") && !watches_contacts("Laser"));
    }
}
