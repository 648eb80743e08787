//! Which described models are robots, as the registry says, which map a
//! model starts on, and which of its bodies a plugin places.
//!
//! A robot is a model with a plugin whose registered type drives it
//! ([`PluginType::drives_robot`](crate::registry::PluginType::drives_robot)):
//! the world counts and categorises robots by it, the view draws them,
//! the Pioneer interface finds its drive by it, and a robot that names no
//! map starts on the first.

use flotilla_wire::description::{map_mask, LayerBits, MapDescription, ModelDescription, PluginDescription};

use crate::config::LoadError;
use crate::{entry_of, registry, PluginContext};

/// What the registry says of a described model.
pub trait RobotModel {
    /// Whether the model is a robot: one of its plugins is of a registered
    /// type that drives it (`DiffDrive`, `TricycleDrive`,
    /// `VehicleDynamics`). Types no node serves make no robot.
    fn is_robot(&self) -> bool;

    /// The model's first plugin entry of a type that drives it.
    fn drive_plugin(&self) -> Option<&PluginDescription>;
}

impl RobotModel for ModelDescription {
    fn is_robot(&self) -> bool {
        self.drive_plugin().is_some()
    }

    fn drive_plugin(&self) -> Option<&PluginDescription> {
        self.plugins.iter().find(|p| registry::plugin_type(&p.plugin_type).is_some_and(|t| t.drives_robot))
    }
}

/// Puts a model on its map: a robot that names no map goes on the first,
/// other models stay on none unless they name one (they live where their
/// footprints' layers say, as in Flatland); then sets the model's
/// [`ModelDescription::layer_mask`]. The map name must be one of `maps`
/// (checked by the caller, which knows the file to blame); `layers` are
/// the bits of every layer of the world (see
/// [`every_layer`](flotilla_wire::description::every_layer)).
pub fn assign_map(model: &mut ModelDescription, maps: &[MapDescription], layers: LayerBits) {
    if model.map.is_empty() && model.is_robot() {
        if let Some(first) = maps.first() {
            model.map = first.name.clone();
        }
    }
    model.layer_mask = map_mask(maps, &model.map, layers);
}

/// The names of `model`'s bodies that a plugin places along a path (see
/// [`PluginConfig::PLACES_BODY`](crate::PluginConfig::PLACES_BODY)),
/// `layer_names` being the world's. An entry that does not parse is
/// refused with its file, model and plugin named.
pub fn placed_bodies(model: &ModelDescription, layer_names: &[String]) -> Result<Vec<String>, LoadError> {
    let ctx = PluginContext::of(model, layer_names);
    let mut placed = Vec::new();
    for plugin in &model.plugins {
        let Some(placing) = registry::plugin_type(&plugin.plugin_type).filter(|t| t.places_body) else { continue };
        let entry = entry_of(plugin, ctx.model_file)?;
        placed.push(placing.body_of(&entry, &plugin.name, &ctx)?);
    }
    Ok(placed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::tests::robot;
    use flotilla_wire::description::every_layer;

    #[test]
    fn a_model_with_a_registered_drive_is_a_robot_and_starts_on_the_first_map() {
        let maps = [
            MapDescription { name: "lobby".into(), layers: 0b01 },
            MapDescription { name: "lab".into(), layers: 0b10 },
        ];
        let mut robot = robot("r1", &[("DiffDrive", "drive", "{type: DiffDrive, name: drive, body: base}")]);
        robot.map.clear();
        assert!(robot.is_robot());
        assign_map(&mut robot, &maps, every_layer(2));
        assert_eq!((robot.map.as_str(), robot.layer_mask), ("lobby", 0b01));

        let mut lamp = robot_without_drive();
        assert!(!lamp.is_robot());
        assign_map(&mut lamp, &maps, every_layer(2));
        assert_eq!((lamp.map.as_str(), lamp.layer_mask), ("", 0b11), "no map: every layer its footprints list");
    }

    #[test]
    fn a_tween_places_its_body_and_nothing_else_places_one() {
        let tween = "{type: Tween, name: door, body: base, delta: [1, 0, 0], duration: 2, mode: yoyo}";
        let door = robot("door", &[("Tween", "door", tween), ("Laser", "laser", "{}")]);
        assert_eq!(placed_bodies(&door, &[]).unwrap(), ["base"]);
        let r1 = robot("r1", &[("DiffDrive", "drive", "{type: DiffDrive, name: drive, body: base}")]);
        assert!(placed_bodies(&r1, &[]).unwrap().is_empty(), "a drive commands velocities");
        let broken = robot("door", &[("Tween", "door", "{type: Tween, name: door, body: leaf}")]);
        let error = placed_bodies(&broken, &[]).unwrap_err().to_string();
        assert!(error.contains("robot.model.yaml") && error.contains("door") && error.contains("leaf"), "{error}");
    }

    fn robot_without_drive() -> ModelDescription {
        let mut lamp = robot("lamp", &[("Laser", "laser", "{}"), ("SomeonesOwnDrive", "drive", "{}")]);
        lamp.map.clear();
        lamp
    }
}
